"""vLLM server logs: `SpecDecoding metrics:` lines (formats.md §3.9 source 2).

Each line covers one logging interval (counters reset after printing), so the run's acceptance is
the drafts-weighted aggregate: AL = 1 + ΣAccepted / Σdrafts with drafts = Drafted / K (K = the
number of per-position rates), per-position rate_j = Σ(rate_ij · Drafted_i) / ΣDrafted. Without
per-position rates, AL is the Drafted-weighted mean of the logged means (drafts ∝ Drafted at a
fixed K). The log includes warmup; nothing here trims it. The `non-default args` line gives the
server config and `GPU KV cache size` lines the KV pool (summed over engine processes, §3.7).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.readers._metrics_common import parse_float, spec_row
from ingest.readers.base import ReadResult, Row, SourceFile
from ingest.readers.vllm_command import config_columns

AL_SOURCE = "server_log"
_SPEC = re.compile(r"SpecDecoding metrics: (?P<body>.*)$")
_MEAN = re.compile(r"Mean acceptance length: (?P<v>[\d.,]+)")
_ACCEPTED = re.compile(r"Accepted: (?P<v>[\d,]+) tokens")
_DRAFTED = re.compile(r"Drafted: (?P<v>[\d,]+) tokens")
_PER_POS = re.compile(r"Per-position acceptance rate: (?P<v>[\d.]+(?:, [\d.]+)*)")
_ARGS = re.compile(r"non-default args: (?P<args>\{.*\})\s*$")
_KV_POOL = re.compile(
    r"(?P<tag>\((?:EngineCore|Worker)[^)]*pid=\d+\)).*GPU KV cache size: (?P<n>\d[\d,]*) tokens"
)
_MARKERS = (b"SpecDecoding metrics:", b"non-default args:", b"vLLM API server version")


def spec_from_log(text: str, rel: str) -> tuple[Row, list[str]]:
    """Drafts-weighted spec-decode columns over every `SpecDecoding metrics:` line ({} if none).

    Raises:
        ParseError: naming the line whose counters cannot be read.
    """
    accepted = drafted = weighted_mean = 0.0
    pos_weighted: list[float] = []
    ks: set[int] = set()
    lines = 0
    for lineno, line in enumerate(text.splitlines(), start=1):
        m = _SPEC.search(line)
        if not m:
            continue
        body, where = m["body"], f"line {lineno}"
        acc_m, dr_m = _ACCEPTED.search(body), _DRAFTED.search(body)
        if not acc_m or not dr_m:
            raise ParseError(
                rel, where, "SpecDecoding line without `Accepted: N tokens, Drafted: M tokens`"
            )
        acc, dr = parse_float(acc_m["v"], rel, where), parse_float(dr_m["v"], rel, where)
        lines += 1
        accepted, drafted = accepted + acc, drafted + dr
        mean_m, pos_m = _MEAN.search(body), _PER_POS.search(body)
        if mean_m:
            weighted_mean += parse_float(mean_m["v"], rel, where) * dr
        if pos_m:
            rates = [parse_float(v, rel, where) for v in pos_m["v"].split(",")]
            ks.add(len(rates))
            if len(rates) > len(pos_weighted):
                pos_weighted.extend([0.0] * (len(rates) - len(pos_weighted)))
            for j, rate in enumerate(rates):
                pos_weighted[j] += rate * dr
    if not lines:
        return {}, []
    notes = [f"{rel}: {lines} SpecDecoding lines aggregated weighted by drafts (warmup included)"]
    if len(ks) == 1 and drafted > 0:
        k = ks.pop()
        drafts = drafted / k
        row = spec_row(
            drafts, drafted, accepted, {j: v / k for j, v in enumerate(pos_weighted)}, AL_SOURCE
        )
        return row, notes
    row = spec_row(None, drafted, accepted, {}, AL_SOURCE)
    if drafted > 0:
        row[Col.AL_MEASURED] = weighted_mean / drafted
    if len(ks) > 1:
        notes.append(
            f"{rel}: per-position rates change length between lines (K {sorted(ks)}); "
            "AL is the Drafted-weighted mean of the logged means"
        )
    return row, notes


def nondefault_args(text: str, rel: str) -> dict[str, Any] | None:
    """The last `non-default args: {...}` dict of a vLLM log, flag names in CLI form (a-b).

    Raises:
        ParseError: when the dict is not a Python literal.
    """
    found: dict[str, Any] | None = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        m = _ARGS.search(line)
        if not m:
            continue
        try:
            args = ast.literal_eval(m["args"])
        except (ValueError, SyntaxError, MemoryError, RecursionError) as exc:
            raise ParseError(
                rel, f"line {lineno}", f"non-default args is not a Python dict literal: {exc}"
            ) from exc
        if not isinstance(args, Mapping):
            raise ParseError(rel, f"line {lineno}", "non-default args is not a dict")
        found = {str(k).replace("_", "-"): v for k, v in args.items()}
        if "model-tag" in found and "model" not in found:
            found["model"] = found["model-tag"]
    return found


def kv_pool_tokens(text: str) -> int | None:
    """Σ `GPU KV cache size: N tokens` over distinct engine-process tags, or None."""
    pools: dict[str, int] = {}
    for line in text.splitlines():
        m = _KV_POOL.search(line)
        if m:
            pools[m["tag"]] = int(m["n"].replace(",", ""))
    return sum(pools.values()) if pools else None


def read_log(text: str, rel: str) -> tuple[Row, list[str]]:
    """Enrichment columns of one vLLM server log: spec decode, server config, KV pool.

    Raises:
        ParseError: when a SpecDecoding line or the non-default args are malformed.
    """
    row, notes = spec_from_log(text, rel)
    args = nondefault_args(text, rel)
    if args is not None:
        config, config_notes = config_columns(args, rel)
        row.update(config)
        notes += config_notes
    pool = kv_pool_tokens(text)
    if pool is not None:
        row[Col.KV_CACHE_POOL_TOKENS] = pool
    return row, notes


def log_scope(text: str, rel: str) -> Row:
    """What a server log measured, for attaching it (`ReadResult.scope`): the served model names
    from `non-default args` (`model`, `served-model-name`); counters since server start. The
    log's timestamps carry no year or zone, so it gives no window.

    Raises:
        ParseError: when the non-default args are malformed.
    """
    args = nondefault_args(text, rel) or {}
    models: list[str] = []
    for key in ("model", "served-model-name"):
        value = args.get(key)
        for name in value if isinstance(value, list | tuple) else [value]:
            if isinstance(name, str) and name and name not in models:
                models.append(name)
    return {"models": models, "since_start": True}


class ServerLogReader:
    """vLLM `server.log`: drafts-weighted acceptance and server config, as enrichment."""

    name = "vllm_server_log"

    def sniff(self, src: SourceFile, doc: Any) -> bool:
        return doc is None and any(marker in src.data for marker in _MARKERS)

    def read(self, src: SourceFile, doc: Any) -> ReadResult:
        row, notes = read_log(src.text(), src.rel)
        if not row:
            return ReadResult(
                notes=[
                    "vLLM server log without SpecDecoding metrics, server "
                    "args or KV pool lines: nothing to store"
                ],
                consumed=[src.rel],
            )
        scope = log_scope(src.text(), src.rel)
        return ReadResult(enrich=row, notes=notes, consumed=[src.rel], scope=scope)


FILE_READERS = (ServerLogReader(),)

"""Helpers shared by the server-metric readers (aiperf dumps, Prometheus text, logs, polled CSVs).

One place for: counter names with or without `_total`, which scraped URLs are the same server,
acceptance length from the spec-decode counters (formats.md §3.9), the server summary InferenceX's
vLLM adapter computes (§3.7), finite-number checks, and the identity an InferenceX
`RESULT_FILENAME` carries (§7.1) for raw trees that have no aggregate beside them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.readers._names import parse_name
from ingest.readers.base import Row, SourceFile

# Speculative decoding drafts a handful of tokens per step; a larger position label is a broken
# dump (and would size the per-position list).
MAX_SPEC_POSITIONS = 256

LabelKey = tuple[tuple[str, str], ...]

SPEC_DRAFTS = "vllm:spec_decode_num_drafts"
SPEC_DRAFT_TOKENS = "vllm:spec_decode_num_draft_tokens"
SPEC_ACCEPTED = "vllm:spec_decode_num_accepted_tokens"
SPEC_PER_POS = "vllm:spec_decode_num_accepted_tokens_per_pos"
PREFIX_HITS = "vllm:prefix_cache_hits"
PREFIX_QUERIES = "vllm:prefix_cache_queries"
EXTERNAL_HITS = "vllm:external_prefix_cache_hits"
EXTERNAL_QUERIES = "vllm:external_prefix_cache_queries"
# vLLM V0's own hit-rate gauge (gone in V1): a different definition, kept in its own column.
GPU_HIT_RATE_GAUGE = "vllm:gpu_prefix_cache_hit_rate"
PROMPT_TOKENS = "vllm:prompt_tokens"
GENERATION_TOKENS = "vllm:generation_tokens"

# Directories that belong to the unit above them (see ingest.sources.artifacts).
NESTED_DIRS = {"aiperf_artifacts", "logs", "results", "trace_replay", "LOGS", "agentic"}
_LOOPBACK = {"localhost", "127.0.0.1", "0.0.0.0", "::1"}
# Metric families worth a time series (process_/python_/http_ families are scraper noise).
SERIES_PREFIXES = ("vllm:", "sglang:", "dynamo_", "atom:", "atom_")


def family(name: str) -> str:
    """Counter family name: the Prometheus parser drops `_total`, aiperf does too; accept both."""
    return name[: -len("_total")] if name.endswith("_total") else name


def endpoint_key(url: str) -> str:
    """The server behind a scrape URL: loopback names collapse, scheme and `/metrics` are implied.

    `http://localhost:8888/metrics`, `127.0.0.1:8888` and `http://0.0.0.0:8888/metrics/` are one
    server; different ports or hosts are different servers (their series are summed).
    """
    raw = url.strip()
    try:
        parts = urlsplit(raw if "://" in raw else f"http://{raw}")
        host, port = (parts.hostname or "").lower(), parts.port
    except ValueError:  # not a URL (bad port, bracketed non-IP): the text itself is the identity
        return raw.lower()
    host = "loopback" if host in _LOOPBACK else host
    path = parts.path.rstrip("/") or "/metrics"
    return f"{host}:{port if port is not None else ''}{path}"


def number(value: Any, path: str, field: str) -> float:
    """A finite number from a parsed file.

    Raises:
        ParseError: for booleans, strings, NaN or infinities.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ParseError(path, field, f"expected a number, got {type(value).__name__} {value!r}")
    try:
        out = float(value)
    except OverflowError as exc:
        raise ParseError(path, field, "number is too large") from exc
    if not math.isfinite(out):
        raise ParseError(path, field, f"expected a finite number, got {value!r}")
    return out


def parse_float(text: str, path: str, field: str) -> float:
    """A finite number from text (thousands separators allowed).

    Raises:
        ParseError: when the text is not a finite number.
    """
    try:
        out = float(text.replace(",", "").strip())
    except ValueError as exc:
        raise ParseError(path, field, f"expected a number, got {text!r}") from exc
    if not math.isfinite(out):
        raise ParseError(path, field, f"expected a finite number, got {text!r}")
    return out


@dataclass
class MetricStore:
    """Counter totals and gauge peaks of one dump, one value per (server, labels).

    The same series seen again (the same server listed under a second URL) is counted once.
    """

    counters: dict[str, dict[tuple[str, LabelKey], float]] = field(default_factory=dict)
    gauge_max: dict[str, dict[tuple[str, LabelKey], float]] = field(default_factory=dict)
    info: dict[str, dict[str, str]] = field(default_factory=dict)
    duplicate_urls: set[str] = field(default_factory=set)

    def _put(
        self,
        table: dict[str, dict[tuple[str, LabelKey], float]],
        name: str,
        url: str,
        labels: Mapping[str, str],
        value: float,
    ) -> bool:
        key = (endpoint_key(url), tuple(sorted(labels.items())))
        series = table.setdefault(family(name), {})
        if key in series:
            self.duplicate_urls.add(url)
            return False
        series[key] = value
        return True

    def add_counter(self, name: str, url: str, labels: Mapping[str, str], value: float) -> bool:
        """Record a counter total; False when this server's series was already recorded."""
        return self._put(self.counters, name, url, labels, value)

    def add_gauge_max(self, name: str, url: str, labels: Mapping[str, str], value: float) -> bool:
        """Record a gauge's maximum; False when this server's series was already recorded."""
        return self._put(self.gauge_max, name, url, labels, value)

    def counter_sum(self, name: str) -> float | None:
        """Σ of a counter over every recorded series, or None when it was never seen."""
        series = self.counters.get(family(name))
        return sum(series.values()) if series else None

    def counter_by(self, name: str, label: str) -> dict[str, float]:
        """Σ of a counter per value of one label (e.g. per `position` or `source`)."""
        out: dict[str, float] = {}
        for (_, labels), value in self.counters.get(family(name), {}).items():
            key = dict(labels).get(label)
            if key is not None:
                out[key] = out.get(key, 0.0) + value
        return out

    def gauge_peak(self, name: str) -> float | None:
        """The largest recorded maximum of a gauge, or None."""
        series = self.gauge_max.get(name)
        return max(series.values()) if series else None


def spec_row(
    drafts: float | None,
    draft_tokens: float | None,
    accepted: float | None,
    per_pos: Mapping[int, float],
    source: str,
) -> Row:
    """Spec-decode columns from summed counters: AL = 1 + accepted / drafts, rate_i = pos_i / drafts.

    Returns {} when the run has no spec-decode counters at all.
    """
    if drafts is None and accepted is None and draft_tokens is None:
        return {}
    row: Row = {
        Col.SPEC_DRAFTS: drafts,
        Col.SPEC_DRAFT_TOKENS: draft_tokens,
        Col.SPEC_ACCEPTED_TOKENS: accepted,
        Col.AL_SOURCE: source,
    }
    if drafts and accepted is not None:
        row[Col.AL_MEASURED] = 1.0 + accepted / drafts
    if draft_tokens and accepted is not None:
        row[Col.DRAFT_ACCEPTANCE_RATE] = accepted / draft_tokens
    if drafts and per_pos:
        row[Col.ACCEPT_RATE_PER_POS] = [
            per_pos.get(i, 0.0) / drafts for i in range(max(per_pos) + 1)
        ]
    return row


def store_spec_row(store: MetricStore, source: str, path: str) -> Row:
    """Spec-decode columns from a MetricStore (series summed across engines and servers).

    Raises:
        ParseError: when a per-position series has a non-integer `position` label.
    """
    per_pos: dict[int, float] = {}
    for pos, value in store.counter_by(SPEC_PER_POS, "position").items():
        if not pos.isdigit() or int(pos) >= MAX_SPEC_POSITIONS:
            raise ParseError(
                path,
                SPEC_PER_POS,
                f"position label must be 0..K-1 (K < {MAX_SPEC_POSITIONS}), got {pos!r}",
            )
        per_pos[int(pos)] = value
    return spec_row(
        store.counter_sum(SPEC_DRAFTS),
        store.counter_sum(SPEC_DRAFT_TOKENS),
        store.counter_sum(SPEC_ACCEPTED),
        per_pos,
        source,
    )


def _fraction(value: float | None) -> float | None:
    # vLLM reports usage as 0..1; some exporters use percent.
    if value is None:
        return None
    return value / 100.0 if value > 1.0 else value


def server_summary(store: MetricStore) -> Row:
    """The server summary InferenceX's vLLM adapter derives (formats.md §3.7).

    Under InferenceX's names their definitions (`backends/vllm.py`): the GPU hit rate is
    Σvllm:prefix_cache_hits / Σvllm:prefix_cache_queries, replaced by local_cache_hit / Σ
    `vllm:prompt_tokens_by_source` when that label is exported (external likewise, and the
    overall rate is (local + external) / Σ, else the GPU rate). `prefix_cache_hit_rate` keeps
    hits / queries whatever else the server exports. Peak KV usage is the largest gauge maximum
    over series; preemptions are summed.
    """
    row: Row = {}
    h, q = store.counter_sum(PREFIX_HITS), store.counter_sum(PREFIX_QUERIES)
    if h is not None and q:
        row[Col.GPU_PREFIX_CACHE_HIT_RATE] = row[Col.PREFIX_CACHE_HIT_RATE] = h / q
    h, q = store.counter_sum(EXTERNAL_HITS), store.counter_sum(EXTERNAL_QUERIES)
    if h is not None and q:
        row[Col.EXTERNAL_PREFIX_CACHE_HIT_RATE] = h / q
    by_source = store.counter_by("vllm:prompt_tokens_by_source", "source")
    total = sum(by_source.values())
    if by_source and total > 0:
        local, external = by_source.get("local_cache_hit"), by_source.get("external_kv_transfer")
        if local is not None:
            row[Col.GPU_PREFIX_CACHE_HIT_RATE] = local / total
        if external is not None:
            row[Col.EXTERNAL_PREFIX_CACHE_HIT_RATE] = external / total
        row[Col.OVERALL_PREFIX_CACHE_HIT_RATE] = ((local or 0.0) + (external or 0.0)) / total
    elif not by_source and Col.GPU_PREFIX_CACHE_HIT_RATE in row:
        row[Col.OVERALL_PREFIX_CACHE_HIT_RATE] = row[Col.GPU_PREFIX_CACHE_HIT_RATE]
    gpu = store.gauge_peak("vllm:kv_cache_usage_perc")
    gpu = gpu if gpu is not None else store.gauge_peak("vllm:gpu_cache_usage_perc")
    for col, value in (
        (Col.PEAK_GPU_KV_USAGE, gpu),
        (Col.PEAK_CPU_KV_USAGE, store.gauge_peak("vllm:cpu_kv_cache_usage_perc")),
    ):
        if value is not None:
            row[col] = _fraction(value)
    preemptions = store.counter_sum("vllm:num_preemptions")
    if preemptions is not None:
        row[Col.NUM_PREEMPTIONS] = preemptions
    pool = [
        v.get("kv_cache_size_tokens")
        for k, v in store.info.items()
        if k.startswith("vllm:cache_config_info")
    ]
    if pool and all(p is not None and p.isdigit() for p in pool):
        row[Col.KV_CACHE_POOL_TOKENS] = sum(int(p) for p in pool if p is not None)
    return row


def duplicate_note(store: MetricStore, rel: str) -> list[str]:
    """A note naming URLs whose series duplicated another URL of the same server."""
    if not store.duplicate_urls:
        return []
    urls = ", ".join(sorted(store.duplicate_urls))
    return [f"{rel}: same server scraped under more than one URL ({urls}); counted once"]


def metric_scope(
    store: MetricStore, since_start: bool, window: tuple[float | None, float | None] | None = None
) -> Row:
    """What a dump measured, for attaching it to the right point (`ReadResult.scope`).

    `models`: the `model_name` label values of its series (vLLM labels every series with the
    served model name); token totals: Σ `vllm:prompt_tokens` / `vllm:generation_tokens`.
    """
    models: set[str] = set()
    for table in (store.counters, store.gauge_max):
        for series in table.values():
            for _server, labels in series:
                models.update(v for k, v in labels if k == "model_name" and v)
    scope: Row = {"models": sorted(models), "since_start": since_start}
    if window is not None and (window[0] is not None or window[1] is not None):
        scope["window"] = [window[0], window[1]]
    for key, name in (("prompt_tokens", PROMPT_TOKENS), ("generation_tokens", GENERATION_TOKENS)):
        value = store.counter_sum(name)
        if value is not None:
            scope[key] = value
    return scope


def unit_dir_name(files: Iterable[SourceFile]) -> str:
    """Name of the directory a unit's files sit in (nested aiperf_artifacts/ etc. skipped)."""
    for src in files:
        parts = list(PurePosixPath(src.rel).parent.parts)
        while parts and parts[-1] in NESTED_DIRS:
            parts.pop()
        return parts[-1] if parts else src.artifact
    return ""


_KV = re.compile(r"(?:^|_)kv(?P<tier>none|dram)(?:-(?P<backend>[A-Za-z0-9.]+))?(?:_|$)")
_OFFLOAD = re.compile(r"(?:^|_)offload(?P<mode>on|off)(?:_|$)")


def identity_from_name(name: str) -> Row:
    """Identity from a single-node InferenceX RESULT_FILENAME (formats.md §7.1); {} if it is not one.

    Only for raw trees without an aggregate: the aggregate's JSON fields are authoritative. The
    `kv<tier>-<backend>` / `offload<on|off>` tags of the experiment name give the KV offload.
    """
    for prefix in ("bmk_agentic_", "agentic_", "bmk_"):
        name = name.removeprefix(prefix)
    facts = parse_name(name)
    if facts.tp is None or facts.exp_name is None:
        return {}
    row: Row = {
        Col.MODEL_PREFIX: facts.model_prefix,
        Col.PRECISION: facts.precision,
        Col.FRAMEWORK: facts.framework,
        Col.TP: facts.tp,
        Col.EP: facts.ep,
        Col.DP_ATTENTION: facts.dp_attention,
        Col.DISAGG: facts.disagg,
        Col.SPEC_DECODING: facts.spec,
        Col.CONC: facts.conc,
    }
    for col, value in (
        (Col.PP, facts.pp),
        (Col.DCP_SIZE, facts.dcp),
        (Col.PCP_SIZE, facts.pcp),
        (Col.RECIPE_FINGERPRINT, facts.recipe),
    ):
        if value is not None:
            row[col] = value
    if facts.runner:
        row[Col.RUNNER] = facts.runner
        row[Col.HW_LABEL] = re.sub(r"_\d+$", "", facts.runner)
    kv, offload = _KV.search(facts.exp_name), _OFFLOAD.search(facts.exp_name)
    if kv:
        row[Col.KV_OFFLOADING] = kv["tier"]
        if kv["backend"]:
            row[Col.KV_OFFLOAD_BACKEND] = kv["backend"]
    elif offload:
        row[Col.KV_OFFLOADING] = "dram" if offload["mode"] == "on" else "none"
    return row

"""A vLLM run directory captured by hand: `vllm bench serve` console logs, `/metrics`, server log.

Each `Serving Benchmark Result` block of a console log is one point (its `Speculative Decoding`
section gives the counters, al_source `bench_console`); a block repeated in a combined log and a
per-concurrency log is read once. The server config comes from the server log's `non-default
args` (or a `vllm_command.txt`). The `/metrics` scrape, the server log's `SpecDecoding` lines and
`synthetic_acceptance_rates.json` (derived from the scrape for a later synthetic run, so not this
run's config) are cross-checked against the console counters and reported as notes.

The same banner opens SGLang's `python -m sglang.bench_serving` console block, which is read here
too (a log is often all a run leaves): it adds `Backend:` (the server kind: sglang, vllm, trt,
...), `Traffic request rate:` (a number or inf), `Max request concurrency:` (a number or `not
set`), `Input token throughput`, `Total generated tokens (retokenized)`, `Concurrency:` (the
measured mean in flight) and `Mean/Median/P90/P99 E2E Latency (ms)`; 2024 releases print `Total
throughput (tok/s)` and no concurrency line. vLLM up to 0.6 prints `Total Token throughput`. A
block without a concurrency limit is a request-rate point (`request_rate`, inf when every request
was sent at once). Points name their harness in `metadata` (`harness`: `vllm bench serve` or
`sglang.bench_serving`, `harness_version` when the log prints it) and SGLang blocks carry
`schema_variant` `sglang_bench_console`.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from ingest.errors import ParseError
from ingest.readers import prometheus
from ingest.readers._metrics_common import parse_float, spec_row
from ingest.readers.base import ReadResult, Row, RowReject, SourceFile
from ingest.readers.server_log import nondefault_args, spec_from_log
from ingest.readers.vllm_command import (
    config_columns,
    is_serve_command,
    serve_flags,
    topology_columns,
)
from ingest.schema import Col

_BANNER = "============ Serving Benchmark Result ============"
_BANNER_BYTES = _BANNER.encode()
_LINE = re.compile(r"^\s*(?P<label>[^:]+?):\s+(?P<value>\S+)\s*$")
_LATENCY = re.compile(
    r"^(?P<stat>Mean|Median|P(?P<pct>\d+(?:\.\d+)?)) (?P<lat>TTFT|TPOT|ITL|E2EL) \(ms\)$"
)
_POSITION = re.compile(r"^Position (?P<i>\d+)$")
_COLUMNS = {c.value for c in Col}
_NS_KEYS = (
    "max_concurrency",
    "request_rate",
    "model",
    "num_prompts",
    "dataset_name",
    "random_input_len",
    "random_output_len",
    "random_range_ratio",
)
# A bench command line printed (or pasted) before its result block: `python3 -m
# sglang.bench_serving ...`, `vllm bench serve ...`, `python benchmark_serving.py ...`.
_COMMAND = re.compile(r"sglang\.bench_serving|vllm bench serve|benchmark_serving\.py")
_FLAG = re.compile(r"(?:^|\s)--(?P<key>[a-z][a-z0-9-]*)(?:[ =](?P<value>[^\s\\-][^\s\\]*))?")
_FLAG_KEYS = {
    "model": "model",
    "max-concurrency": "max_concurrency",
    "request-rate": "request_rate",
    "dataset-name": "dataset_name",
    "num-prompts": "num_prompts",
    "num-prompt": "num_prompts",
    "random-input-len": "random_input_len",
    "random-input": "random_input_len",
    "random-output-len": "random_output_len",
    "random-output": "random_output_len",
    "random-range-ratio": "random_range_ratio",
}
_PLAIN = {
    "Benchmark duration (s)": Col.DURATION,
    "Request throughput (req/s)": Col.REQUEST_THROUGHPUT,
    "Output token throughput (tok/s)": Col.OUTPUT_TPUT,
    "Total token throughput (tok/s)": Col.TOTAL_TPUT,
    "Total Token throughput (tok/s)": Col.TOTAL_TPUT,  # vLLM <= 0.6
    "Total throughput (tok/s)": Col.TOTAL_TPUT,  # SGLang 2024
    "Input token throughput (tok/s)": Col.INPUT_TPUT,  # SGLang
    "Total input tokens": Col.TOTAL_INPUT_TOKENS,
    "Total generated tokens": Col.TOTAL_OUTPUT_TOKENS,
}
# Lines whose value may be a word: the SGLang block's server kind and its unset limits.
_TEXT_LABELS = frozenset(
    {
        "Backend",
        "Architecture",
        "Traffic request rate",
        "Max request concurrency",
        "Maximum request concurrency",
        "Request rate configured (RPS)",
    }
)
_TEXT_LINE = re.compile(
    r"^\s*(?P<label>Backend|Architecture|Traffic request rate|Max(?:imum)? request concurrency"
    r"|Request rate configured \(RPS\)):\s+(?P<value>\S.*?)\s*$"
)
_SGLANG_LATENCY = re.compile(r"^(?P<stat>Mean|Median|P(?P<pct>\d+(?:\.\d+)?)) E2E Latency \(ms\)$")
_VLLM_VERSION = re.compile(r"vLLM API server version (?P<v>\S+)")


@dataclass
class Block:
    """One `Serving Benchmark Result` block and the bench arguments printed before it."""

    rel: str
    lineno: int
    args: dict[str, str] = field(default_factory=dict)
    values: dict[str, float] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)

    @property
    def sglang(self) -> bool:
        """An SGLang `bench_serving` block (vLLM's never prints `Backend:`)."""
        return "Backend" in self.texts or "Total generated tokens (retokenized)" in self.values


def _namespace(line: str) -> dict[str, str]:
    out = {}
    for key in _NS_KEYS:
        m = re.search(rf"[(\s,]{key}=(?:'(?P<q>[^']*)'|(?P<v>[^,)]*))", line)
        if m:
            out[key] = m["q"] if m["q"] is not None else m["v"]
    return out


def _command(lines: list[str]) -> dict[str, str]:
    """The bench arguments of a command line (with its `\\` continuation lines)."""
    out: dict[str, str] = {}
    for m in _FLAG.finditer(" ".join(line.rstrip().rstrip("\\") for line in lines)):
        key = _FLAG_KEYS.get(m["key"])
        if key and m["value"]:
            out[key] = m["value"].strip("'\"")
    return out


def parse_console(text: str, rel: str) -> list[Block]:
    """Result blocks of a `vllm bench serve` or `sglang.bench_serving` console log, each with
    the arguments of the command line or `Namespace(...)` printed before it.

    Raises:
        ParseError: naming the line whose value is not a number.
    """
    blocks: list[Block] = []
    args: dict[str, str] = {}
    current: Block | None = None
    lines = text.splitlines()
    for lineno, line in enumerate(lines, start=1):
        if "Namespace(" in line and "backend=" in line:
            args = _namespace(line[line.index("Namespace(") :])
        elif (
            current is None
            and _COMMAND.search(line)
            and "--" in line + (lines[lineno] if lineno < len(lines) else "")
        ):
            command = [line]
            while command[-1].rstrip().endswith("\\") and lineno - 1 + len(command) < len(lines):
                command.append(lines[lineno - 1 + len(command)])
            args = _command(command)
        elif line.strip() == _BANNER:
            current = Block(rel, lineno, dict(args))
            blocks.append(current)
        elif current is not None and line.startswith("=" * 20):
            current = None
        elif current is not None and (m := _TEXT_LINE.match(line) or _LINE.match(line)):
            label, value = m["label"].strip(), m["value"]
            if label in _TEXT_LABELS and not _is_number(value):
                current.texts[label] = value
            else:
                current.values[label] = parse_float(value, rel, f"line {lineno}")
    return blocks


def _is_number(text: str) -> bool:
    """A finite number (`inf`, `not set` and `None` are words here)."""
    try:
        return math.isfinite(float(text.replace(",", "")))
    except ValueError:
        return False


def _load(block: Block) -> tuple[int | None, float | None]:
    """(conc, request_rate) of a block: its concurrency limit, else its offered request rate.

    Raises:
        ParseError: when the block has neither (nor do the bench arguments printed before it).
    """
    v, texts = block.values, block.texts
    conc = v.get("Maximum request concurrency", v.get("Max request concurrency"))
    if conc is None and block.args.get("max_concurrency", "None") not in ("None", ""):
        conc = parse_float(block.args["max_concurrency"], block.rel, "max_concurrency")
    if conc is not None:
        return int(conc), None
    rate = v.get("Traffic request rate", v.get("Request rate configured (RPS)"))
    word = texts.get("Traffic request rate", texts.get("Request rate configured (RPS)"))
    if rate is None and word is None and block.args.get("request_rate"):
        word = block.args["request_rate"]
        if _is_number(word):
            rate = parse_float(word, block.rel, "request_rate")
    if rate is not None and rate > 0:
        return None, rate
    if word is not None and word.strip().lower() in ("inf", "infinity"):
        return None, math.inf
    return None, None


def block_row(block: Block) -> Row:
    """Canonical columns of one result block (ms become s, percentages fractions).

    Raises:
        ParseError: when the block has no concurrency or no request counts.
    """
    v, where = block.values, f"line {block.lineno}"
    conc, rate = _load(block)
    if (conc is None and rate is None) or "Successful requests" not in v:
        raise ParseError(
            block.rel,
            where,
            "result block without a load (`Maximum request concurrency`, `Max request "
            "concurrency` or `Traffic request rate`) or without `Successful requests`",
        )
    row: Row = {Col.NUM_REQUESTS_SUCCESSFUL: int(v["Successful requests"])}
    if conc is not None:
        row[Col.CONC] = conc
    else:
        row[Col.REQUEST_RATE] = rate
    row[Col.NUM_REQUESTS_TOTAL] = int(v["Successful requests"] + v.get("Failed requests", 0.0))
    for label, col in _PLAIN.items():
        if label in v:
            row[col] = (
                int(v[label])
                if col in (Col.TOTAL_INPUT_TOKENS, Col.TOTAL_OUTPUT_TOKENS)
                else v[label]
            )
    if (
        row.get(Col.TOTAL_TPUT) is not None
        and row.get(Col.OUTPUT_TPUT) is not None
        and row.get(Col.INPUT_TPUT) is None
    ):
        row[Col.INPUT_TPUT] = row[Col.TOTAL_TPUT] - row[Col.OUTPUT_TPUT]
    ok = row[Col.NUM_REQUESTS_SUCCESSFUL]
    for col, total in (
        (Col.MEAN_INPUT_LEN, Col.TOTAL_INPUT_TOKENS),
        (Col.MEAN_OUTPUT_LEN, Col.TOTAL_OUTPUT_TOKENS),
    ):
        if ok and row.get(total) is not None:
            row[col] = row[total] / ok
    per_pos: dict[int, float] = {}
    for label, value in v.items():
        if m := _LATENCY.match(label):
            pct = m["pct"]
            stat = (
                "mean"
                if m["stat"] == "Mean"
                else "median"
                if m["stat"] == "Median" or pct == "50"
                else f"p{pct}"
            )
            if (name := f"{stat}_{m['lat'].lower()}") in _COLUMNS:
                row[name] = value / 1000.0
        elif m := _SGLANG_LATENCY.match(label):
            pct = m["pct"]
            stat = (
                "mean"
                if m["stat"] == "Mean"
                else "median"
                if m["stat"] == "Median" or pct == "50"
                else f"p{pct}"
            )
            if (name := f"{stat}_e2el") in _COLUMNS:
                row[name] = value / 1000.0
        elif p := _POSITION.match(label):
            per_pos[int(p["i"])] = value / 100.0
    drafts = v.get("Drafts")
    if drafts is not None:
        spec = spec_row(
            drafts, v.get("Draft tokens"), v.get("Accepted tokens"), {}, "bench_console"
        )
        if per_pos:
            spec[Col.ACCEPT_RATE_PER_POS] = [per_pos.get(i, 0.0) for i in range(max(per_pos) + 1)]
        row.update(spec)
        printed, measured = v.get("Acceptance length"), spec.get(Col.AL_MEASURED)
        if printed is not None and measured is not None and abs(printed - measured) > 0.006:
            row[Col.WARNINGS] = [
                f"printed acceptance length {printed} != 1 + accepted/drafts = {measured:.4f}"
            ]
    if block.args.get("dataset_name") == "random":
        for col, key in ((Col.ISL, "random_input_len"), (Col.OSL, "random_output_len")):
            if block.args.get(key, "").isdigit():
                row[col] = int(block.args[key])
        ratio = block.args.get("random_range_ratio")
        if block.sglang and Col.ISL in row and (ratio is None or ratio not in ("1", "1.0")):
            # SGLang draws each length from [ratio x len, len] (ratio 0 by default).
            row[Col.WARNINGS] = [
                *row.get(Col.WARNINGS, []),
                f"isl/osl are the requested maxima: SGLang's random dataset drew lengths from "
                f"[{ratio or '0'} x len, len]",
            ]
    return row


def _server_config(files: list[SourceFile]) -> tuple[Row, list[str], set[str]]:
    for src in files:
        text = src.data.decode("utf-8", "replace")
        flags: dict[str, Any] | None = None
        if is_serve_command(src.data):
            flags = serve_flags(src.text(), src.rel)
        elif "non-default args:" in text:
            flags = nondefault_args(src.text(), src.rel)
        if flags is not None:
            row, notes = config_columns(flags, src.rel)
            return {**topology_columns(flags, src.rel), **row}, notes, {src.rel}
    return (
        {Col.FRAMEWORK: "vllm"},
        ["no server command line or `non-default args` log line: server config unknown"],
        set(),
    )


def _cross_checks(files: list[SourceFile], points: list[Row]) -> tuple[list[str], set[str]]:
    notes: list[str] = []
    used: set[str] = set()
    console = {
        c: sum(p.get(c) or 0.0 for p in points) for c in (Col.SPEC_DRAFTS, Col.SPEC_ACCEPTED_TOKENS)
    }
    for src in files:
        if prometheus.is_prometheus_text(src):
            snap = prometheus.snapshot_row(src.text(), src.rel)
            used.add(src.rel)
            pair = (snap.get(Col.SPEC_DRAFTS), snap.get(Col.SPEC_ACCEPTED_TOKENS))
            same = pair == (console[Col.SPEC_DRAFTS], console[Col.SPEC_ACCEPTED_TOKENS])
            notes.append(
                f"{src.rel}: /metrics drafts, accepted = {pair}; the console blocks sum to "
                f"{tuple(console.values())}: {'consistent' if same else 'the scrape also counts other traffic'}"
                f"; snapshot AL {snap.get(Col.AL_MEASURED)}"
            )
        elif b"SpecDecoding metrics:" in src.data:
            row, _ = spec_from_log(src.text(), src.rel)
            used.add(src.rel)
            notes.append(
                f"{src.rel}: server-log AL {row.get(Col.AL_MEASURED)} over {row.get(Col.SPEC_DRAFTS)} "
                "drafts (warmup included, log may be an excerpt)"
            )
        elif b"synthetic_acceptance_rates" in src.data:
            used.add(src.rel)
            notes.append(
                f"{src.rel}: synthetic acceptance rates derived from this run's counters for a later "
                "synthetic run; not this run's config"
            )
            if src.data.lstrip()[:1] == b"{":
                notes += _rates_check(src)
    return notes, used


def _rates_check(src: SourceFile) -> list[str]:
    try:
        doc = json.loads(src.text())
        drafts = float(doc["num_drafts"])
        derived = [
            round(float(v) / drafts, 6) for _, v in sorted(doc["accepted_per_position"].items())
        ]
        pinned = [float(r) for r in doc["synthetic_acceptance_rates"]]
    except (
        json.JSONDecodeError,
        KeyError,
        TypeError,
        ValueError,
        ZeroDivisionError,
        OverflowError,
        AttributeError,
        RecursionError,
    ) as exc:
        raise ParseError(
            src.rel,
            "",
            f"not the synthetic-rates shape (num_drafts, accepted_per_position, "
            f"synthetic_acceptance_rates): {exc}",
        ) from exc
    verdict = "match" if derived == pinned else f"differ from accepted/num_drafts {derived}"
    return [f"{src.rel}: synthetic_acceptance_rates {pinned} {verdict}"]


class VllmCaptureReader:
    """A directory with `vllm bench serve` console logs: one point per result block."""

    name = "vllm_capture"

    def sniff_unit(self, files: list[SourceFile]) -> bool:
        return any(_BANNER_BYTES in src.data for src in files)

    def read_unit(self, files: list[SourceFile]) -> ReadResult:
        config, notes, used = _server_config(files)
        version = next(
            (
                m["v"]
                for src in files
                if (m := _VLLM_VERSION.search(src.data.decode("utf-8", "replace")))
            ),
            None,
        )
        points: list[Row] = []
        rejects: list[RowReject] = []
        seen: dict[tuple[Any, ...], tuple[dict[str, float], str]] = {}
        consoles: list[str] = []  # first: the pipeline names the points' source after it
        for src in files:
            if _BANNER_BYTES not in src.data:
                continue
            consoles.append(src.rel)
            for block in parse_console(src.text(), src.rel):
                row = block_row(block)
                key = (
                    row.get(Col.CONC),
                    row.get(Col.REQUEST_RATE),
                    row.get(Col.ISL),
                    row.get(Col.OSL),
                    block.args.get("model"),
                )
                load = f"concurrency {key[0]}" if key[0] is not None else f"request rate {key[1]}"
                if key in seen:
                    if seen[key][0] != block.values:
                        rejects.append(
                            RowReject(
                                Col.CONC if key[0] is not None else Col.REQUEST_RATE,
                                f"a second, different result for {load}; "
                                f"kept the one in {seen[key][1]}",
                                f"{block.rel} line {block.lineno}",
                            )
                        )
                    continue
                seen[key] = (block.values, f"{block.rel} line {block.lineno}")
                points.append(_point(block, row, config, version))
        checks, checked = _cross_checks(files, points)
        return ReadResult(
            points=points,
            rejects=rejects,
            notes=notes + checks,
            consumed=[*consoles, *sorted((used | checked) - set(consoles))],
        )


def _point(block: Block, row: Row, config: Row, version: str | None) -> Row:
    """One block's point: the server config, the block's columns and the harness that wrote it."""
    point = {**config, **row, Col.SCHEMA_VARIANT: "vllm_capture"}
    meta: dict[str, Any] = {"harness": "vllm bench serve"}
    if version:
        meta["harness_version"] = version
    if block.sglang:
        backend = block.texts.get("Backend", "sglang")
        # The harness also drives vLLM, TensorRT-LLM and LMDeploy servers (--backend vllm, trt).
        framework = next(
            (n for n in ("vllm", "trt", "lmdeploy") if backend.startswith(n)), "sglang"
        )
        if not config.get(Col.TP):  # no server command line: the block's backend names the server
            point[Col.FRAMEWORK] = framework
        point[Col.SCHEMA_VARIANT] = "sglang_bench_console"
        meta = {"harness": "sglang.bench_serving", "backend": backend}
        if "Concurrency" in block.values:
            meta["measured_concurrency"] = block.values["Concurrency"]
    if block.args.get("model") and not point.get(Col.MODEL):
        point[Col.MODEL] = block.args["model"]
    point[Col.METADATA] = meta
    point[Col.WARNINGS] = [*row.get(Col.WARNINGS, []), "hardware is not recorded in the capture"]
    return point


UNIT_READERS = (VllmCaptureReader(),)

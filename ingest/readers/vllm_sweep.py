"""`vllm bench sweep serve` output trees: one directory per serve x bench parameter combination.

vLLM (`vllm/benchmarks/sweep/serve.py`) writes `<output_dir>/<experiment>/<combination>/` holding
`run=0.json`, `run=1.json`, ... (one `vllm bench serve --save-result` JSON per repeat, with
`run_number` and, since late 2025, the serve and bench overrides added at the top level) and
`summary.json` (the list of those payloads). `<combination>` is `SERVE--<serve>-BENCH--<bench>`,
either half absent when that side has no parameters; each half is `ParameterSweepItem.name`: the
`k=v` pairs joined by '-' or the item's `_benchmark_name`, with '/' written as '_'. Newer versions
may add `warmup.json` (run_number -1) and `run=N.failure.json` (`--continue-on-error`).

The repeats of one combination become one point: every metric is the mean of the runs (counts
rounded), `repeats` is the number of runs, `repeat_tput_spread` the (max - min) / mean of their
total throughput, and each run's key numbers stay in `metadata.runs`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

import pyarrow as pa

from ingest.contract.col import Col
from ingest.contract.schema import SPECS
from ingest.errors import ParseError
from ingest.readers._common import Fields, put, warn
from ingest.readers._names import NameFacts
from ingest.readers._serving_metrics import (
    _LAT_MS,
    _latencies,
    _mean_lens,
    _requests,
    _spec_decode,
    _throughput_ms,
)
from ingest.readers.base import ReadResult, Row, RowReject, SourceFile
from ingest.readers.vllm_command import config_columns

_RUN = re.compile(r"^run=(?P<n>\d+)\.json$")
_FAILURE = re.compile(r"^run=(?P<n>\d+)\.failure\.json$")
_SERVE, _BENCH = "SERVE--", "BENCH--"
# A parameter key after a '-' in a combination name: an identifier (underscores, dots) and '='.
_KEY_AT = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*=")
_NAME = "_benchmark_name"
_NO_TP = (
    "GPU count unknown: the sweep's serve parameters do not set tensor_parallel_size (a flag of "
    "the fixed --serve-cmd is not recorded in the output), so per-GPU throughput cannot be "
    "computed; add tensor_parallel_size to --serve-params"
)


def _key(name: str) -> str:
    return name.replace("-", "_")


def _typed(text: str) -> Any:
    """A value as `str(v)` wrote it into the directory name, back to a JSON scalar if it was one."""
    if text in ("True", "False"):
        return text == "True"
    if text == "None":
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return text
    # 'inf' stays text: metadata is JSON, which has no Infinity (the load columns parse it).
    return number if math.isfinite(number) else text


def parse_part(part: str, known: Mapping[str, Any]) -> dict[str, Any]:
    """One half of a combination name (`k=v-k=v...` or a `_benchmark_name`) as parameters.

    Values may contain '-'; a new parameter starts at a '-' followed by an identifier and '=', or
    by a key the run JSON carries (`known`, whose typed value is used when it prints the same).
    """
    if not part:
        return {}
    if "=" not in part:
        return {_NAME: part}
    keys = sorted({str(k) for k in known}, key=len, reverse=True)
    out: dict[str, Any] = {}
    pos = 0
    while pos < len(part):
        eq = part.find("=", pos)
        if eq < 0:  # a trailing fragment without '=': keep it with the previous value
            break
        key = part[pos:eq]
        end = len(part)
        j = part.find("-", eq + 1)
        while j >= 0:
            rest = part[j + 1 :]
            if _KEY_AT.match(rest) or any(rest.startswith(f"{k}=") for k in keys):
                end = j
                break
            j = part.find("-", j + 1)
        text = part[eq + 1 : end]
        value = known.get(key)
        out[key] = value if value is not None and _shown(value) == text else _typed(text)
        pos = end + 1
    return out


def _shown(value: Any) -> str:
    return str(value).replace("/", "_").replace("..", "__")


def split_name(name: str) -> tuple[str, str] | None:
    """(serve part, bench part) of a combination directory name; None when it is not one."""
    if name.startswith(_SERVE):
        serve, sep, bench = name[len(_SERVE) :].partition(f"-{_BENCH}")
        return serve, bench if sep else ""
    if name.startswith(_BENCH):
        return "", name[len(_BENCH) :]
    return None


def _load(src: SourceFile) -> Any:
    try:
        return json.loads(src.text())
    except json.JSONDecodeError as exc:
        raise ParseError(
            src.rel, "", f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from exc
    except (ValueError, RecursionError) as exc:
        raise ParseError(src.rel, "", f"invalid JSON: {exc}") from exc


def _run_row(src: SourceFile, doc: Any) -> Row:
    """One run's canonical columns, parsed as bench_serving parses a single result."""
    f = Fields.top(src, doc, "a vllm bench serve result (run=N.json)")
    row: Row = {}
    completed = _requests(f, row)
    _throughput_ms(f, row, NameFacts())
    _latencies(f, row, _LAT_MS, 1000.0)
    _mean_lens(f, row, completed)
    _spec_decode(f, row)
    return row


def _mean(col: str, values: list[Any]) -> Any:
    if all(isinstance(v, list) for v in values):
        if len({len(v) for v in values}) != 1:
            return None
        return [sum(xs) / len(xs) for xs in zip(*values, strict=True)]
    if any(isinstance(v, bool) or not isinstance(v, int | float) for v in values):
        return values[0] if all(v == values[0] for v in values) else None
    mean = sum(values) / len(values)
    return round(mean) if SPECS[Col(col)].dtype == pa.int64() else mean


def _combine(rows: list[Row]) -> Row:
    """The mean of the runs' columns (a column some runs lack is averaged over those that have it)."""
    out: Row = {}
    for col in dict.fromkeys(k for r in rows for k in r):
        if col == Col.WARNINGS:
            continue
        values = [r[col] for r in rows if r.get(col) is not None]
        if values:
            put(out, Col(col), _mean(col, values))
    return out


def _rate(value: Any) -> float | None:
    """A request rate as vLLM writes it: a number, or 'inf' (every request at once)."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        rate = float(value)
    except (TypeError, ValueError):
        return None
    return rate if rate > 0 and not math.isnan(rate) else None


def _server_columns(serve: Mapping[str, Any], rel: str) -> tuple[Row, list[str]]:
    """Server flags and the topology/spec columns the serve parameters state explicitly."""
    flags = {k.replace("_", "-"): v for k, v in serve.items() if k != _NAME}
    if not flags:
        return {}, []
    row, notes = config_columns(flags, rel)
    row[Col.SERVER_FLAGS] = flags
    by = {_key(k): v for k, v in serve.items()}
    sizes: dict[str, int] = {}
    for name, alias in (
        ("tensor_parallel_size", "tp"),
        ("pipeline_parallel_size", "pp"),
        ("data_parallel_size", "dp"),
    ):
        value = by.get(name, by.get(alias))
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            sizes[name] = value
    if "tensor_parallel_size" in sizes:
        tp, dp = sizes["tensor_parallel_size"], sizes.get("data_parallel_size", 1)
        row[Col.TP] = tp
        row[Col.EP] = tp * dp if by.get("enable_expert_parallel") is True else 1
    if "pipeline_parallel_size" in sizes:
        row[Col.PP] = sizes["pipeline_parallel_size"]
    if "data_parallel_size" in sizes:
        row[Col.DP_ATTENTION] = sizes["data_parallel_size"] > 1
    return row, notes


def _lengths(bench: Mapping[str, Any], row: Row) -> None:
    by = {_key(k): v for k, v in bench.items()}
    for col, names in (
        (Col.ISL, ("random_input_len", "input_len")),
        (Col.OSL, ("random_output_len", "output_len")),
    ):
        value = next((by[n] for n in names if n in by), None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            row[col] = value


def _overrides(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The top-level keys after `run_number`: the overrides the sweep merged into the result."""
    keys = list(doc)
    if "run_number" not in keys:
        return {}
    return {k: doc[k] for k in keys[keys.index("run_number") + 1 :]}


class _Variant:
    """The files of one combination directory, classified."""

    def __init__(self, files: list[SourceFile]) -> None:
        self.runs: list[tuple[int, SourceFile]] = []
        self.failures: list[tuple[int, SourceFile]] = []
        self.summary: SourceFile | None = None
        self.warmup: SourceFile | None = None
        for src in files:
            if m := _RUN.match(src.name):
                self.runs.append((int(m["n"]), src))
            elif m := _FAILURE.match(src.name):
                self.failures.append((int(m["n"]), src))
            elif src.name == "summary.json":
                self.summary = src
            elif src.name == "warmup.json":
                self.warmup = src
        self.runs.sort(key=lambda r: r[0])
        anchor = self.runs[0][1] if self.runs else self.summary
        self.name = PurePosixPath(anchor.rel).parent.name if anchor else ""

    @property
    def files(self) -> list[SourceFile]:
        extra = [s for s in (self.summary, self.warmup) if s is not None]
        return [s for _, s in self.runs] + extra + [s for _, s in self.failures]


def _is_sweep_csv(src: SourceFile) -> bool:
    head = src.data[:4096].split(b"\n", 1)[0]
    return (
        src.name == "summary.csv"
        and b"run_number" in head
        and (b"total_token_throughput" in head or b"output_throughput" in head)
    )


def _cross_check(
    summary: SourceFile, runs: Sequence[tuple[int, Mapping[str, Any]]], row: Row
) -> str:
    """How summary.json compares with the run files ('agrees', or what differs, also warned)."""
    try:
        doc = _load(summary)
    except ParseError as exc:
        warn(row, f"{summary.rel}: not read ({exc.reason}); the run files were used")
        return "unreadable"
    if not isinstance(doc, list):
        warn(row, f"{summary.rel}: expected a list of run results; the run files were used")
        return "not a list"
    by_run = {e.get("run_number"): e for e in doc if isinstance(e, Mapping)}
    for n, run in runs:
        entry = by_run.get(n)
        if entry is None or entry.get("total_token_throughput") != run.get(
            "total_token_throughput"
        ):
            warn(
                row,
                f"{summary.rel}: its run_number={n} entry differs from run={n}.json "
                "(a stale summary?); the run files were used",
            )
            return "differs"
    if len(by_run) != len(runs):
        warn(row, f"{summary.rel} lists {len(by_run)} runs, the directory holds {len(runs)}")
        return "differs"
    return "agrees"


class VllmSweepReader:
    """A `vllm bench sweep serve` combination directory: its repeated runs as one point."""

    name = "vllm_bench_sweep"

    def sniff_unit(self, files: list[SourceFile]) -> bool:
        if any(_is_sweep_csv(src) for src in files):
            return True
        v = _Variant(files)
        if not v.runs and v.summary is None:
            return False
        return split_name(v.name) is not None or (bool(v.runs) and v.summary is not None)

    def read_unit(self, files: list[SourceFile]) -> ReadResult:
        v = _Variant(files)
        csv = [s.rel for s in files if _is_sweep_csv(s)]
        if not v.runs and v.summary is None:
            note = (
                "vllm bench sweep summary.csv: the combination directories' run=N.json files are "
                "read instead (one point per combination)"
            )
            return ReadResult(consumed=csv, notes=[note])
        consumed = [s.rel for s in v.files] + csv
        try:
            return self._read(v, consumed)
        except ParseError as exc:
            # The whole combination is refused: no run of it may become a point on its own.
            first = exc.path if exc.path in consumed else consumed[0]
            rest = [r for r in consumed if r != first]
            reason = f"{exc.reason} (combination {v.name} not ingested)"
            return ReadResult(rejects=[RowReject(exc.field, reason)], consumed=[first, *rest])

    def _read(self, v: _Variant, consumed: list[str]) -> ReadResult:
        runs: list[tuple[int, SourceFile, Mapping[str, Any]]] = []
        for n, src in v.runs:
            doc = _load(src)
            runs.append((n, src, Fields.top(src, doc, "a vllm bench serve result").obj))
        if not runs:
            assert v.summary is not None
            doc = _load(v.summary)
            if not isinstance(doc, list) or not doc:
                raise ParseError(v.summary.rel, "", "expected a non-empty list of run results")
            runs = [
                (i, v.summary, Fields.top(v.summary, e, "a run result").obj)
                for i, e in enumerate(doc)
            ]
        first_src, first = runs[0][1], runs[0][2]
        halves = split_name(v.name) or ("", "")
        serve, bench = (parse_part(h, first) for h in halves)
        rows = [_run_row(src, doc) for _, src, doc in runs]
        self._same_identity(runs, rows)
        point = _combine(rows)
        point[Col.SCHEMA_VARIANT] = self.name
        point[Col.FRAMEWORK] = "vllm"
        server, notes = _server_columns(serve, first_src.rel)
        point.update(server)
        _lengths(bench, point)
        self._load_columns(bench, first, point)
        per_run = self._repeats(runs, rows, point)
        for (n, _s, _d), r in zip(runs, rows, strict=True):
            for message in r.get(Col.WARNINGS, []):
                warn(point, f"run={n}: {message}")
        for n, src in v.failures:
            warn(point, f"run={n} failed and is not in the mean (see {src.name})")
        if Col.TP not in point:
            notes.append(f"{v.name}: {_NO_TP}")
        meta: dict[str, Any] = {
            "sweep_serve": serve,
            "sweep_bench": bench,
            "sweep_combination": v.name,
            "runs": per_run,
        }
        if _NAME in serve or _NAME in bench:
            meta["sweep_overrides"] = _overrides(first)
        if v.summary is not None and v.runs:
            meta["summary_json"] = _cross_check(v.summary, [(n, d) for n, _s, d in runs], point)
        if v.warmup is not None:
            meta["warmup"] = "warmup.json present, excluded from the mean"
        point[Col.METADATA] = meta
        return ReadResult(points=[point], consumed=consumed, notes=notes)

    @staticmethod
    def _same_identity(
        runs: Sequence[tuple[int, SourceFile, Mapping[str, Any]]], rows: Sequence[Row]
    ) -> None:
        base = rows[0]
        for (_n, src, _d), row in zip(runs[1:], rows[1:], strict=True):
            for col in (Col.MODEL, Col.CONC):
                if row.get(col) != base.get(col):
                    raise ParseError(
                        src.rel,
                        "model_id" if col == Col.MODEL else "max_concurrency",
                        f"{col}={row.get(col)!r} differs from {base.get(col)!r} in "
                        f"{runs[0][1].name}: the runs of one combination must measure the same "
                        "model at the same load",
                    )

    @staticmethod
    def _load_columns(bench: Mapping[str, Any], first: Mapping[str, Any], point: Row) -> None:
        # The load coordinate is the concurrency, else the request rate (inf = all at once).
        by = {_key(k): v for k, v in bench.items()}
        conc = by.get("max_concurrency")
        if isinstance(conc, int) and not isinstance(conc, bool) and conc > 0:
            if point.get(Col.CONC) not in (None, conc):
                warn(point, f"max_concurrency {point[Col.CONC]} in the runs, {conc} in the name")
            point[Col.CONC] = conc
        if point.get(Col.CONC) is None:
            ran = _rate(first.get("request_rate", "inf"))
            rate = _rate(by["request_rate"]) if "request_rate" in by else ran
            if rate != ran:
                warn(point, f"request_rate {ran} in the runs, {rate} in the name")
            put(point, Col.REQUEST_RATE, rate)

    @staticmethod
    def _repeats(
        runs: Sequence[tuple[int, SourceFile, Mapping[str, Any]]], rows: Sequence[Row], point: Row
    ) -> list[dict[str, Any]]:
        """Set repeats and their throughput spread; return each run's key numbers."""
        point[Col.REPEATS] = len(rows)
        tputs = [r.get(Col.TOTAL_TPUT) for r in rows]
        if len(rows) > 1 and all(isinstance(t, float) for t in tputs):
            vals = [float(t) for t in tputs if t is not None]
            point[Col.REPEAT_SPREAD] = (max(vals) - min(vals)) / (sum(vals) / len(vals))
        return [
            {
                "run": n,
                "total_tput": r.get(Col.TOTAL_TPUT),
                "output_tput": r.get(Col.OUTPUT_TPUT),
                "median_ttft_s": r.get(Col.MEDIAN_TTFT),
                "median_tpot_s": r.get(Col.MEDIAN_TPOT),
            }
            for (n, _s, _d), r in zip(runs, rows, strict=True)
        ]


UNIT_READERS = (VllmSweepReader(),)

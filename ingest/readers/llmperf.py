"""ray-project llmperf results: `<name>_summary.json`, with `<name>_individual_responses.json`.

Source: ray-project/llmperf `token_benchmark_ray.py` (Nov 2023 "LLMPerfV2" onward, unchanged in
shape since; forks keep it). One run at one `--num-concurrent-requests` writes a summary (a flat
object: the run's arguments, then `results_<metric>_{quantiles_p25..p99, mean, min, max,
stddev}` and counts) and the per-request list. A concurrency sweep is several runs: several
summaries in one folder, or one folder per concurrency; each summary is one point. A summary with
its responses beside it (same name stem, or a directory's only pair) is read by the unit reader,
which stores several such runs of one directory under its first summary (`metadata.summary`
names each point's own); a summary alone is read by the file reader.

Versions: every summary says `"version": "2023-08-31"` (llmperf's fixed `RESULTS_VERSION`);
llmperf has no releases, so that string is the version recorded. Summaries from before April 2024
computed `request_output_throughput_token_per_s` in the client from streamed chunks; since then
it is retokenized output tokens / E2E latency. Both are per-request output tokens / E2E latency.

Quirks:

- Output token counts are llmperf's own retokenization (`--tokenizer`, by default a Llama
  tokenizer), not the server's usage counts.
- `results_inter_token_latency_s_*` is per request (sum of every streamed gap, the first token's
  wait included) / output tokens, so it is neither TPOT nor ITL and goes to `metadata` only. The
  schema's TPOT, (E2E - TTFT) / (output tokens - 1) per request, is computed from the individual
  responses when they are there (the summary lacks it); so is the slow tail of the E2E-normalised
  interactivity (p10 of per-request throughput, which the summary's p25.. quantiles lack).
- `results_request_output_throughput_token_per_s_quantiles_p50` is InferenceX's median
  E2E-normalised interactivity (per-request output tokens / E2E latency).
- Throughput: `results_mean_output_throughput_token_per_s` is the completed requests' output
  tokens over the run's wall time; requests/s is `results_num_completed_requests_per_min / 60`,
  and input tokens/s the mean input tokens of the same requests times that rate.
- `mean_input_tokens` / `mean_output_tokens` are the requested (nominal) lengths.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.readers._metrics_common import number
from ingest.readers.base import ReadResult, Row, SourceFile

TOOL = "llmperf"
_SUMMARY_KEYS = (b'"results_ttft_s_mean"', b'"results_num_completed_requests"')
_REQUEST_KEYS = ("ttft_s", "end_to_end_latency_s", "number_output_tokens")
_STATS = (
    ("mean", "mean"),
    ("median", "quantiles_p50"),
    ("p75", "quantiles_p75"),
    ("p90", "quantiles_p90"),
    ("p95", "quantiles_p95"),
    ("p99", "quantiles_p99"),
)


def _load(src: SourceFile) -> Any:
    if not src.name.endswith(".json"):
        return None
    head = src.data.lstrip()[:1]
    if head not in (b"{", b"["):
        return None
    try:
        return json.loads(src.text())
    except (json.JSONDecodeError, RecursionError, ValueError) as exc:
        raise ParseError(src.rel, "", f"llmperf output is not valid JSON: {exc}") from exc


def is_summary(doc: Any) -> bool:
    """True for an llmperf `*_summary.json`."""
    return (
        isinstance(doc, Mapping)
        and ("results_ttft_s_mean" in doc or "results_num_completed_requests" in doc)
        and "num_concurrent_requests" in doc
    )


def is_individual(doc: Any) -> bool:
    """True for an llmperf `*_individual_responses.json` (a list of per-request records)."""
    return (
        isinstance(doc, list)
        and bool(doc)
        and all(isinstance(r, Mapping) for r in doc[:5])
        and all(k in doc[0] for k in _REQUEST_KEYS)
        and "error_code" in doc[0]
    )


def _stem(name: str) -> str:
    for suffix in ("_summary.json", "_individual_responses.json", ".json"):
        if name.endswith(suffix):
            return name.removesuffix(suffix)
    return name


def _quantile(values: list[float], q: float) -> float:
    """Linear-interpolated quantile (pandas' and numpy's default, as llmperf computes its own)."""
    s = sorted(values)
    pos = (len(s) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def _summary_point(src: SourceFile, doc: Mapping[str, Any]) -> Row:
    rel = src.rel

    def num(key: str) -> float | None:
        value = doc.get(key)
        if value is None:
            return None
        if isinstance(value, str):  # llmperf writes min/max of token counts as strings
            try:
                value = float(value)
            except ValueError as exc:
                raise ParseError(rel, key, f"expected a number, got {value!r}") from exc
        return number(value, rel, key)

    completed = num("results_num_completed_requests")
    started = num("results_num_requests_started")
    if completed is None or completed <= 0:
        errors = doc.get("results_error_code_frequency", "?")
        issued = "?" if started is None else str(int(started))
        raise ParseError(
            rel,
            "results_num_completed_requests",
            f"llmperf summary: no request completed ({issued} started; error codes {errors})",
        )
    conc = doc.get("num_concurrent_requests")
    if isinstance(conc, bool) or not isinstance(conc, int) or conc <= 0:
        raise ParseError(
            rel, "num_concurrent_requests", f"expected a positive integer, got {conc!r}"
        )
    row: Row = {Col.SCHEMA_VARIANT: TOOL, Col.SCENARIO: "fixed-seq-len", Col.CONC: conc}
    if isinstance(doc.get("model"), str):
        row[Col.MODEL] = doc["model"]
    for col, key in ((Col.ISL, "mean_input_tokens"), (Col.OSL, "mean_output_tokens")):
        value = doc.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            row[col] = value
    for lat, name in (("ttft", "ttft_s"), ("e2el", "end_to_end_latency_s")):
        for ours, theirs in _STATS:
            value = num(f"results_{name}_{theirs}")
            if value is not None:
                row[f"{ours}_{lat}"] = value
    row[Col.NUM_REQUESTS_SUCCESSFUL] = int(completed)
    if started is not None:
        row[Col.NUM_REQUESTS_TOTAL] = int(started)
    row[Col.OUTPUT_TPUT] = num("results_mean_output_throughput_token_per_s")
    per_min = num("results_num_completed_requests_per_min")
    if per_min is not None and per_min > 0:
        req_s = per_min / 60.0
        row[Col.REQUEST_THROUGHPUT] = req_s
        row[Col.DURATION] = completed / req_s
        mean_in = num("results_number_input_tokens_mean")
        if mean_in is not None:
            row[Col.INPUT_TPUT] = mean_in * req_s
    for col, key in (
        (Col.MEAN_INPUT_LEN, "results_number_input_tokens_mean"),
        (Col.MEAN_OUTPUT_LEN, "results_number_output_tokens_mean"),
    ):
        if (value := num(key)) is not None:
            row[col] = value
    p50 = num("results_request_output_throughput_token_per_s_quantiles_p50")
    if p50 is not None and p50 > 0:
        row[Col.MEDIAN_E2E_NORM_INTVTY] = p50
    meta: dict[str, Any] = {"tool": TOOL, "tool_version": str(doc.get("version", "?"))}
    for key in ("name", "llm_api", "framework", "model_size", "timestamp"):
        if doc.get(key) is not None:
            meta[key] = doc[key]
    for ours, theirs in _STATS:
        value = num(f"results_inter_token_latency_s_{theirs}")
        if value is not None:
            meta[f"llmperf_inter_token_latency_s_{ours}"] = value
    if doc.get("results_error_code_frequency") not in (None, "{}"):
        meta["error_code_frequency"] = doc["results_error_code_frequency"]
    row[Col.METADATA] = meta
    return row


def _from_requests(src: SourceFile, records: list[Any]) -> Row:
    """TPOT and the E2E-normalised interactivity tail from the successful individual responses."""
    tpots: list[float] = []
    per_request: list[float] = []
    for i, rec in enumerate(records):
        if not isinstance(rec, Mapping) or rec.get("error_code") or rec.get("error_msg"):
            continue
        e2e = number(rec.get("end_to_end_latency_s"), src.rel, f"[{i}].end_to_end_latency_s")
        ttft = number(rec.get("ttft_s"), src.rel, f"[{i}].ttft_s")
        osl = number(rec.get("number_output_tokens"), src.rel, f"[{i}].number_output_tokens")
        if osl > 1 and e2e > ttft:
            tpots.append((e2e - ttft) / (osl - 1))
        if osl > 0 and e2e > 0:
            per_request.append(osl / e2e)
    row: Row = {}
    if tpots:
        row[Col.MEAN_TPOT] = sum(tpots) / len(tpots)
        for ours, q in (("median", 0.5), ("p75", 0.75), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99)):
            row[f"{ours}_tpot"] = _quantile(tpots, q)
    if per_request:
        row[Col.P90_E2E_NORM_INTVTY] = _quantile(per_request, 0.1)
    return row


_Pair = tuple[SourceFile, Any, SourceFile, Any]


def _pairs(files: list[SourceFile]) -> list[_Pair]:
    """Each run's summary with its individual responses in a directory: by name stem, or the
    directory's only summary with its only individual-responses file."""
    summaries = [s for s in files if any(s.data.find(k, 0, 8192) >= 0 for k in _SUMMARY_KEYS)]
    individual = [s for s in files if s.name.endswith("_individual_responses.json")]
    if not summaries or not individual:
        return []
    by_stem = {_stem(s.name): s for s in individual}
    lone = len(summaries) == 1 and len(individual) == 1
    out: list[_Pair] = []
    for src in summaries:
        other = by_stem.get(_stem(src.name), individual[0] if lone else None)
        if other is None:
            continue
        doc, records = _load(src), _load(other)
        if is_summary(doc) and is_individual(records):
            out.append((src, doc, other, records))
    return out


class LlmperfRunReader:
    """llmperf summaries with their individual responses beside them (one point per run).

    Summaries without responses are left to `LlmperfSummaryReader`, one file each.
    """

    name = TOOL

    def sniff_unit(self, files: list[SourceFile]) -> bool:
        try:
            return bool(_pairs(files))
        except ParseError:
            return True  # ours, and broken: read_unit reports why

    def read_unit(self, files: list[SourceFile]) -> ReadResult:
        pairs = sorted(_pairs(files), key=lambda p: (p[1]["num_concurrent_requests"], p[0].rel))
        if not pairs:
            raise ParseError(
                files[0].rel, "", "no llmperf summary with its individual responses here"
            )
        points: list[Row] = []
        for src, doc, other, records in pairs:
            point = _summary_point(src, doc)
            extra = _from_requests(other, records)
            point.update({k: v for k, v in extra.items() if point.get(k) is None})
            # Several runs in one directory are stored under its first summary: each names its own.
            point[Col.METADATA].update(summary=src.name, individual_responses=other.name)
            points.append(point)
        consumed = [p[0].rel for p in pairs] + [p[2].rel for p in pairs]
        return ReadResult(points=points, consumed=consumed)


class LlmperfSummaryReader:
    """An llmperf summary alone (one point), or individual responses without their summary."""

    name = TOOL

    def sniff(self, src: SourceFile, doc: Any) -> bool:
        return is_summary(doc) or is_individual(doc)

    def read(self, src: SourceFile, doc: Any) -> ReadResult:
        if is_individual(doc):
            return ReadResult(
                notes=[
                    "llmperf individual responses without their *_summary.json beside them: "
                    "the summary is the point (ingest the two together for TPOT)"
                ]
            )
        return ReadResult(points=[_summary_point(src, doc)])


UNIT_READERS = (LlmperfRunReader(),)
FILE_READERS = (LlmperfSummaryReader(),)

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
throughput (tok/s)` and no concurrency line. vLLM's `benchmark_serving.py` to mid 2025 prints `Total Token throughput` and the load
(`Traffic request rate:`, `Maximum request concurrency:`) above the block, not in it. A
block without a concurrency limit is a request-rate point (`request_rate`, inf when every request
was sent at once). Points name their harness in `metadata` (`harness`: `vllm bench serve` or
`sglang.bench_serving`, `harness_version` when the log prints it) and SGLang blocks carry
`schema_variant` `sglang_bench_console`. The block parsing lives in `ingest.readers._bench_console`.
"""

from __future__ import annotations

import json
from typing import Any

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.readers import prometheus
from ingest.readers._bench_console import (
    BANNER_BYTES,
    VLLM_VERSION,
    Block,
    block_row,
    parse_console,
)
from ingest.readers.base import ReadResult, Row, RowReject, SourceFile
from ingest.readers.server_log import nondefault_args, spec_from_log
from ingest.readers.vllm_command import (
    config_columns,
    is_serve_command,
    serve_flags,
    topology_columns,
)


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
        return any(BANNER_BYTES in src.data for src in files)

    def read_unit(self, files: list[SourceFile]) -> ReadResult:
        config, notes, used = _server_config(files)
        version = next(
            (
                m["v"]
                for src in files
                if (m := VLLM_VERSION.search(src.data.decode("utf-8", "replace")))
            ),
            None,
        )
        points: list[Row] = []
        rejects: list[RowReject] = []
        seen: dict[tuple[Any, ...], tuple[dict[str, float], str]] = {}
        consoles: list[str] = []  # first: the pipeline names the points' source after it
        for src in files:
            if BANNER_BYTES not in src.data:
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

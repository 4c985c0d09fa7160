"""The reader registry: which readers exist, in sniffing order.

Each reader module exposes `FILE_READERS` and/or `UNIT_READERS` (tuples of reader instances).
Order matters only where two formats could both claim a file: more specific readers come first.
"""

from __future__ import annotations

import importlib
from functools import cache

from ingest.readers.base import FileReader, UnitReader

# Unit readers claim several files of one directory and run before file readers.
UNIT_MODULES: tuple[str, ...] = (
    "ingest.readers.evals",
    "ingest.readers.vllm_sweep",
    "ingest.readers.vllm_capture",
    "ingest.readers.genai_perf",
    "ingest.readers.aiperf",
    "ingest.readers.multiturn",
    "ingest.readers.prometheus",
    # -- serving-benchmark harnesses (issue 24, part A) --
    "ingest.readers.inference_perf",
    "ingest.readers.llmperf",
    # -- end harnesses part A --
    # ---- issue 24, part B: genai-bench ----
    "ingest.readers.genai_bench",
    # ---- end issue 24, part B ----
)

# File readers, most specific first.
FILE_MODULES: tuple[str, ...] = (
    "ingest.readers.evals",
    # -- serving-benchmark harnesses (issue 24, part A) --
    "ingest.readers.guidellm",
    "ingest.readers.llmperf",
    # -- end harnesses part A --
    "ingest.readers.together",
    "ingest.readers.agentic",
    "ingest.readers.agg_fixed",
    "ingest.readers.app_api",
    "ingest.readers.sglang_bench",
    "ingest.readers.bench_serving",
    "ingest.readers.agg_array",
    "ingest.readers.point_sidecar",
    "ingest.readers.server_metrics",
    "ingest.readers.prometheus",
    "ingest.readers.vllm_command",
    "ingest.readers.server_log",
    "ingest.readers.multiturn",
    # ---- issue 24, part B: trtllm-bench, genai-bench ----
    "ingest.readers.trtllm_bench",
    "ingest.readers.mlperf",
    # ---- end issue 24, part B ----
    "ingest.readers.gpu_metrics",
    "ingest.readers.auxiliary",
)


@cache
def unit_readers() -> tuple[UnitReader, ...]:
    """Unit readers in order."""
    out: list[UnitReader] = []
    for mod in UNIT_MODULES:
        out.extend(importlib.import_module(mod).UNIT_READERS)
    return tuple(out)


@cache
def file_readers() -> tuple[FileReader, ...]:
    """File readers in order."""
    out: list[FileReader] = []
    for mod in FILE_MODULES:
        out.extend(importlib.import_module(mod).FILE_READERS)
    return tuple(out)

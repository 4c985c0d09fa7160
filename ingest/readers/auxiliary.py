"""Files that travel with benchmark results but hold no point: recognised, and nothing stored.

Each is recognised by its content and answered with a note saying what it is and why nothing is
stored, so every file of a run is either read or refused with a reason. Readers that use one of
these files (the aiperf, multi-turn and capture unit readers) claim it first; this reader sees the
loose ones. It sits last in the registry so that any reader of a real result wins.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml

from ingest.readers.base import ReadResult, SourceFile
from ingest.untrusted.yaml_load import load_yaml

_STATUS = {"SUCCESS", "SUCCEEDED", "FAILED", "FAILURE", "ERROR", "TIMEOUT", "CANCELLED", "RUNNING"}
_VLLM_CONFIG_KEYS = {
    "kv-cache-dtype",
    "compilation-config",
    "async-scheduling",
    "max-model-len",
    "gpu-memory-utilization",
    "tensor-parallel-size",
    "max-num-seqs",
    "block-size",
}
_GOLDEN = re.compile(rb"(?m)^[\w.\-]+:[ \t]*\r?\n[ \t]+thinking_(?:on|off):")
_MASTER = re.compile(rb"(?m)^[\w.\-]+:[ \t]*\r?\n[ \t]+image:[^\n]*\r?\n[ \t]+model:")


def _first_json_line(src: SourceFile) -> Any:
    line = src.data.split(b"\n", 1)[0]
    try:
        return json.loads(line)
    except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError included
        return None


def _text_head(src: SourceFile, n: int = 512) -> str:
    return src.data[:n].decode("utf-8", "replace").lstrip("\ufeff").lstrip()


def _csv_header(src: SourceFile) -> str:
    return _text_head(src, 4096).split("\n", 1)[0]


def _keys(doc: Any, *keys: str) -> bool:
    return isinstance(doc, dict) and all(k in doc for k in keys)


def _vllm_config_yaml(src: SourceFile) -> bool:
    if len(src.data) > 16 * 1024 or src.data.lstrip()[:1] in (b"{", b"["):
        return False
    try:
        doc = load_yaml(src.data)
    except yaml.YAMLError:
        return False
    return isinstance(doc, dict) and bool(doc) and set(map(str, doc)) & _VLLM_CONFIG_KEYS != set()


@dataclass(frozen=True)
class Kind:
    """One recognised kind of auxiliary file and why it stores nothing."""

    name: str
    test: Callable[[SourceFile, Any], bool]
    note: str


# The first row's keys of each InferenceX app dump table (ingest/sources/dump.py reads the directory).
_DUMP_TABLES = (
    {"workflow_run_id", "config_id", "benchmark_type", "metrics"},
    {"github_run_id", "run_attempt", "head_branch"},
    {"hardware", "framework", "prefill_tp", "decode_tp", "num_prefill_gpu"},
    {"workflow_run_id", "config_id", "task", "metrics"},
)


def _dump_table(doc: Any) -> bool:
    first = doc[0] if isinstance(doc, list) and doc and isinstance(doc[0], dict) else None
    return first is not None and any(keys <= first.keys() for keys in _DUMP_TABLES)


KINDS: tuple[Kind, ...] = (
    Kind(
        "png",
        lambda s, d: s.data.startswith(b"\x89PNG\r\n\x1a\n"),
        "PNG image (a plot rendered by the harness): nothing to store",
    ),
    Kind(
        "aiperf_records",
        lambda s, d: _keys(_first_json_line(s), "metadata", "metrics"),
        "aiperf per-request records (profile_export.jsonl): the run aggregate "
        "profile_export_aiperf.json carries the point; per-request records are not stored "
        "(fixture copies are truncated heads)",
    ),
    Kind(
        "ledger",
        lambda s, d: _keys(_first_json_line(s), "timestamp", "kind"),
        "experiment ledger (an agent's decision log): notes and run ids, not measurements",
    ),
    Kind(
        "aiperf_timeslices",
        lambda s, d: (
            isinstance(d, dict) and isinstance(d.get("timeslices"), list) and "metrics" not in d
        ),
        "aiperf per-timeslice client statistics (profile_export_aiperf_timeslices): the run aggregate "
        "is the point and server time series come from server_metrics_export.json; not stored",
    ),
    Kind(
        "changelog_metadata",
        lambda s, d: _keys(d, "entries") and ("head_ref" in d or "base_ref" in d),
        "CI changelog_metadata.json (perf-changelog entries of the head ref): provenance, not a point",
    ),
    Kind(
        "inferencex_dump_table",
        lambda s, d: _dump_table(d),
        "a table of an InferenceX app JSON dump: ingest its directory on its own "
        "(`paretolens ingest DUMP_DIR`, one run per workflow run; docs/formats.md)",
    ),
    Kind(
        "github_run",
        lambda s, d: _keys(d, "workflow_id", "run_number", "head_sha"),
        "GitHub Actions run metadata (REST API response): `paretolens fetch` records it in the runs catalog",
    ),
    Kind(
        "github_artifacts",
        lambda s, d: _keys(d, "artifacts", "total_count"),
        "GitHub Actions artifact listing (REST API response): `paretolens fetch` uses it to download",
    ),
    Kind(
        "aiperf_command",
        lambda s, d: re.match(r"(?:\S*/)?aiperf profile\b", _text_head(s)) is not None,
        "recorded `aiperf profile` command line (client flags): read with its aiperf export, not alone",
    ),
    Kind(
        "trace_replay_command",
        lambda s, d: "trace_replay_tester" in _text_head(s).split("\n", 1)[0],
        "recorded trace-replay client command line (run metadata): no measurements",
    ),
    Kind(
        "lmcache_command",
        lambda s, d: _text_head(s).startswith("lmcache server"),
        "recorded `lmcache server` command line (KV offload server config): no measurements",
    ),
    Kind(
        "status",
        lambda s, d: len(s.data) < 64 and _text_head(s).strip().upper() in _STATUS,
        "run status marker: read by the multi-turn run reader; alone it has nothing to store",
    ),
    Kind(
        "workload_summary",
        lambda s, d: b"BENCHMARK WORKLOAD DISTRIBUTION ANALYSIS" in s.data[:4096],
        "workload ISL/OSL distribution summary (includes warmup requests): descriptive, not a point",
    ),
    Kind(
        "golden_al",
        lambda s, d: d is None and _GOLDEN.search(s.data[:4096]) is not None,
        "golden acceptance-length table (model -> thinking mode -> K -> AL): reference data for the AL "
        "check (bundled under data/golden_al), not a measurement",
    ),
    Kind(
        "perf_changelog",
        lambda s, d: d is None and _text_head(s).startswith("- config-keys:"),
        "InferenceX perf-changelog.yaml: change descriptions, not measurements",
    ),
    Kind(
        "runners",
        lambda s, d: d is None and _text_head(s).startswith("labels:") and b"\nhardware:" in s.data,
        "InferenceX runners.yaml (runner labels -> hardware): configuration, not measurements",
    ),
    Kind(
        "sweep_config",
        lambda s, d: d is None and _MASTER.search(s.data[:8192]) is not None,
        "InferenceX sweep master config: what to run, not results (see the sweep export)",
    ),
    Kind(
        "vllm_config",
        lambda s, d: d is None and _vllm_config_yaml(s),
        "vLLM --config YAML (server flags): merged into server_flags when read with its vllm_command.txt",
    ),
    Kind(
        "published_extract",
        lambda s, d: "published_" in _csv_header(s) and "artifact_name" in _csv_header(s),
        "third-party analysis CSV flattening published bmk_agentic aggregates (rounded values, derived "
        "totals, topology only in artifact names): refused as a secondary source; ingest the run's "
        "bmk_agentic_* artifacts (`paretolens fetch`) instead",
    ),
    Kind(
        "agentic_summary",
        lambda s, d: _csv_header(s).startswith("exp_name,tp,users,offload,status,"),
        "summary table of the flat agentic aggregates beside it: the agg_*.json files carry the points",
    ),
    Kind(
        "synthetic_rates",
        lambda s, d: b"synthetic_acceptance_rates" in s.data[:4096] and len(s.data) < 16384,
        "synthetic acceptance rates derived from a run's /metrics counters (for a later synthetic run): "
        "cross-checked when read with its vLLM capture directory; alone it has nothing to store",
    ),
    Kind(
        "gpu_energy_counters",
        lambda s, d: _csv_header(s).strip().replace(" ", "") == "gpu,total_energy_consumption",
        "amd-smi energy-accumulator snapshot (gpu_metrics_energy_start/end.csv) beside a "
        "gpu_metrics.csv: the measured energy integrates the sampled power instead, not stored",
    ),
    Kind(
        "gpu_identity",
        lambda s, d: (
            isinstance(d, dict)
            and isinstance(d.get("gpu_data"), list)
            and all(isinstance(g, dict) and "asic" in g for g in d["gpu_data"][:8])
        ),
        "amd-smi static --json GPU identity (gpu_metrics_identity.json): hardware inventory, "
        "not a measurement",
    ),
    Kind(
        "run_stats",
        lambda s, d: (
            isinstance(d, dict)
            and bool(d)
            and all(isinstance(v, dict) and {"n_success", "total"} <= set(v) for v in d.values())
        ),
        "CI run_stats.json (jobs succeeded per hardware): run health, not a point",
    ),
    Kind(
        "documentation",
        lambda s, d: (
            d is None
            and s.name.lower().endswith((".md", ".markdown", ".rst"))
            and b"\x00" not in s.data[:4096]
        ),
        "documentation (Markdown/reST, e.g. a README or PROVENANCE note beside the results): "
        "nothing to store",
    ),
    Kind(
        "text_log",
        lambda s, d: (
            d is None
            and s.name.endswith((".log", ".out"))
            and b"\x00" not in s.data[:4096]
            and b"SpecDecoding metrics:" not in s.data
            and b"Serving Benchmark Result" not in s.data
        ),
        "text log without SpecDecoding metrics lines (aiperf/benchmark/server log): nothing to store",
    ),
)


class AuxiliaryReader:
    """Recognised non-result files: a note each, nothing stored."""

    name = "auxiliary"

    def kind(self, src: SourceFile, doc: Any) -> Kind | None:
        """The recognised kind of a file, or None."""
        return next((k for k in KINDS if k.test(src, doc)), None)

    def sniff(self, src: SourceFile, doc: Any) -> bool:
        return self.kind(src, doc) is not None

    def read(self, src: SourceFile, doc: Any) -> ReadResult:
        kind = self.kind(src, doc)
        note = kind.note if kind else "not a recognised auxiliary file"
        return ReadResult(notes=[note], consumed=[src.rel])


FILE_READERS = (AuxiliaryReader(),)

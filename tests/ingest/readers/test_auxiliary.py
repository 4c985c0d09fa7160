"""Recognised non-result files get a note and store nothing; every fixture of the server-metric,
aiperf, capture and multi-turn directories is read by some reader or refused with a reason."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import PurePosixPath
from typing import Any

import pytest

from ingest.readers.auxiliary import AuxiliaryReader
from ingest.readers.base import SourceFile
from ingest.readers.registry import FILE_MODULES, UNIT_MODULES, file_readers, unit_readers
from tests.ingest.readers._support import fixture_files, source
from tests.ingest.readers._unit_support import text_file

AUX = AuxiliaryReader()
TP4 = "aiperf/inferencex_kimik2.7_tp4_sweep_29003473063"
RUNS = "inferencex/multiturn_runs"
CAPTURE = "vllm/inferencex_mtp-fixed-ar-minimax-lcb-v8-20260529-092323"
EXPECTED = {
    "aiperf/ai-dynamo_examples_artifacts_run1/profile_export.head14.jsonl": "aiperf_records",
    f"{TP4}/*conc1_*/profile_export.head10.jsonl": "aiperf_records",
    "inferencex/ledgers/*.jsonl": "ledger",
    "inferencex/agentic_agg/kimik2.7_tp4_sweep_29003473063/changelog_metadata.json": "changelog_metadata",
    "github/run_29820102138/github_run.json": "github_run",
    "github/run_29820102138/github_artifacts.json": "github_artifacts",
    "github/run_29820102138/published_aggregate_extracted.csv": "published_extract",
    f"{TP4}/*/benchmark_command.txt": "aiperf_command",
    f"{RUNS}/*/benchmark_command.txt": "trace_replay_command",
    f"{TP4}/*/lmcache_command.txt": "lmcache_command",
    f"{RUNS}/*/status.txt": "status",
    "**/workload_distribution_summary.txt": "workload_summary",
    "inferencex/golden_al/*.yaml": "golden_al",
    "inferencex/configs/runners.yaml": "runners",
    "inferencex/configs/*-master.yaml": "sweep_config",
    f"{RUNS}/*/config.yaml": "vllm_config",
    "inferencex/agentic_agg/dsr1_b200_multiturn_pareto_input/summary.csv": "agentic_summary",
    f"{CAPTURE}/synthetic_acceptance_rates.*": "synthetic_rates",
    f"{CAPTURE}/github_output.txt": "synthetic_rates",
}
RESULTS = [
    f"{TP4}/*/profile_export_aiperf.*",
    f"{TP4}/*/server_metrics_export.csv",
    f"{TP4}/*/vllm_command.txt",
    f"{CAPTURE}/vllm_*.log",
    f"{CAPTURE}/livecodebench_metrics.txt",
    f"{RUNS}/*/metrics_server_metrics.csv",
    f"{RUNS}/*/experiment_summary.csv",
    "inferencex/agentic_agg/dsr1_b200_multiturn_pareto_input/agg_*.json",
    "inferencex/agg_fixed_seq/*.json",
]


def _doc(src: SourceFile) -> Any:
    if not src.name.endswith(".json"):
        return None
    return json.loads(src.text())


@pytest.mark.parametrize(("pattern", "kind"), EXPECTED.items())
def test_each_auxiliary_fixture_is_recognised_with_a_note(pattern: str, kind: str) -> None:
    files = fixture_files(pattern)
    assert files, pattern
    for rel in files:
        src = source(rel)
        found = AUX.kind(src, _doc(src))
        assert found is not None and found.name == kind, rel
        res = AUX.read(src, _doc(src))
        assert res.points == [] and res.enrich == {} and res.series == []
        assert res.notes == [found.note] and res.consumed == [rel]


@pytest.mark.parametrize("pattern", RESULTS)
def test_result_files_are_not_auxiliary(pattern: str) -> None:
    files = fixture_files(pattern)
    assert files, pattern
    for rel in files:
        src = source(rel)
        assert AUX.kind(src, _doc(src)) is None, rel


def test_constructed_png_and_perf_changelog() -> None:
    png = AUX.kind(text_file("p/metrics_plots.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"), None)
    assert png is not None and png.name == "png"
    # the head of the real perf-changelog.yaml (395 KB, not copied)
    changelog = (
        "\n- config-keys:\n    - 70b-fp8-*-vllm\n  description:\n    - 'Add compilation-config'\n"
        "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/95\n"
    )
    found = AUX.kind(text_file("c/perf-changelog.yaml", changelog), None)
    assert found is not None and found.name == "perf_changelog"
    slices = {
        "timeslices": [{"timeslice_index": 0, "request_count": {"unit": "requests", "avg": 3}}]
    }
    found = AUX.kind(
        text_file("a/profile_export_aiperf_timeslices.json", json.dumps(slices)), slices
    )
    assert found is not None and found.name == "aiperf_timeslices"
    assert AUX.kind(text_file("c/notes.txt", "hello\n"), None) is None
    assert AUX.kind(text_file("c/odd.json", "{}"), {"entries": []}) is None


def test_registry_runs_the_unit_readers_first_and_auxiliary_last() -> None:
    # The sweep tree first (its run=N.json files are vLLM results the file reader would take
    # one by one), GenAI-Perf before aiperf (their exports start alike). An eval set
    # (meta_env.json) claims only its own files, so it goes first. Readers of other harnesses'
    # folders (genai-bench, ...) follow; tests/ingest/readers/test_no_cross_claims.py checks
    # that none of them claims another's file.
    assert UNIT_MODULES[:9] == (
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
    )
    assert FILE_MODULES[-1] == "ingest.readers.auxiliary"
    assert {
        "ingest.readers.server_metrics",
        "ingest.readers.vllm_command",
        "ingest.readers.server_log",
    } <= set(FILE_MODULES)


def _claimed(files: list[SourceFile]) -> dict[str, str]:
    """What the registry does with one directory: unit readers first, then one file reader each."""
    out: dict[str, str] = {}
    remaining = list(files)
    for reader in unit_readers():
        if remaining and reader.sniff_unit(remaining):
            res = reader.read_unit(remaining)
            out.update({rel: reader.name for rel in res.consumed})
            remaining = [f for f in remaining if f.rel not in res.consumed]
    for src in remaining:
        hit = next((r for r in file_readers() if r.sniff(src, _doc(src))), None)
        out[src.rel] = hit.name if hit else "UNCLAIMED"
    return out


def test_every_fixture_of_these_formats_is_claimed_by_a_reader() -> None:
    dirs: dict[str, list[SourceFile]] = defaultdict(list)
    for pattern in (
        "aiperf/**/*",
        "vllm/**/*",
        f"{RUNS}/**/*",
        "github/**/*",
        "inferencex/ledgers/*",
        "inferencex/golden_al/*",
        "inferencex/configs/*",
    ):
        for rel in fixture_files(pattern):
            dirs[str(PurePosixPath(rel).parent)].append(source(rel))
    claimed: dict[str, str] = {}
    for files in dirs.values():
        claimed.update(_claimed(files))
    assert len(claimed) >= 50
    assert [rel for rel, reader in claimed.items() if reader == "UNCLAIMED"] == []
    assert claimed[f"{CAPTURE}/livecodebench_metrics.txt"] == "vllm_capture"
    assert {claimed[r] for r in fixture_files(f"{TP4}/*/profile_export_aiperf.json")} == {"aiperf"}
    assert {claimed[r] for r in fixture_files(f"{RUNS}/*/metrics_server_metrics.csv")} == {
        "multiturn_run"
    }
    assert {claimed[r] for r in fixture_files(f"{TP4}/*/lmcache_command.txt")} == {"auxiliary"}

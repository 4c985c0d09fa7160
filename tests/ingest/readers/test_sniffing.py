"""The JSON readers sniff on content: each real file is claimed by exactly one, foreign ones by none."""

from __future__ import annotations

import json

import pytest

from ingest.readers import agentic, agg_array, agg_fixed, bench_serving, together
from ingest.readers.registry import FILE_MODULES
from tests.ingest.readers._support import fixture_files, load, named

READERS = [
    r for m in (together, agentic, agg_fixed, bench_serving, agg_array) for r in m.FILE_READERS
]
EXPECTED = {
    "inferencex/raw_bench_serving/**/*.json": "bench_serving_ms",
    "inferencex/bench_serving_random/**/*.json": "bench_serving_random_s",
    "inferencex/agg_fixed_seq/*.json": "agg_fixed",
    "inferencex/agentic_agg/kimik2.7_*/kimik*.json": "agentic_v3",
    "inferencex/agentic_agg/dsr1_*/*.json": "agentic_flat",
    "inferencex/together_runner_baselines/*.json": "together_runner",
}
FOREIGN = [
    "inferencex/agentic_agg/kimik2.7_tp4_sweep_29003473063/changelog_metadata.json",
    "vllm/inferencex_mtp-fixed-ar-minimax-lcb-v8-20260529-092323/synthetic_acceptance_rates.json",
    "aiperf/ai-dynamo_examples_artifacts_run1/profile_export_aiperf.json",
]


@pytest.mark.parametrize(("pattern", "reader"), EXPECTED.items())
def test_each_fixture_is_claimed_by_exactly_its_reader(pattern: str, reader: str) -> None:
    files = fixture_files(pattern)
    assert files
    for rel in files:
        assert [r.name for r in READERS if r.sniff(*load(rel))] == [reader], rel


@pytest.mark.parametrize("rel", FOREIGN)
def test_foreign_json_is_claimed_by_none(rel: str) -> None:
    assert [r.name for r in READERS if r.sniff(*load(rel))] == []


def test_sniffing_ignores_the_file_name() -> None:
    # A fixed aggregate renamed like a bench_serving raw file is still an aggregate.
    src, doc = load(fixture_files("inferencex/agg_fixed_seq/*.json")[0])
    renamed = named("raw_bench_serving/concurrency_4_req_rate_inf_gpus_16_ctx_8_gen_8.json")
    assert [r.name for r in READERS if r.sniff(renamed, doc)] == ["agg_fixed"]
    # and an empty document under an aggregate's name is nobody's
    assert [r.name for r in READERS if r.sniff(src, json.loads("[]"))] == []


@pytest.mark.parametrize("doc", [None, 3, "x", [], {}, [1, 2], {"hw": 1}, {"metrics": []}])
def test_sniffers_never_raise_on_odd_documents(doc: object) -> None:
    src = named("odd.json")
    assert [r.name for r in READERS if r.sniff(src, doc)] == []


def test_registry_lists_the_json_readers_most_specific_first() -> None:
    mine = [
        m
        for m in FILE_MODULES
        if m.rsplit(".", 1)[1] in {"together", "agentic", "agg_fixed", "bench_serving", "agg_array"}
    ]
    assert mine == [
        "ingest.readers.together",
        "ingest.readers.agentic",
        "ingest.readers.agg_fixed",
        "ingest.readers.bench_serving",
        "ingest.readers.agg_array",
    ]

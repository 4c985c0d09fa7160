"""Pruned lists, the InferenceX search-space snippet, its validator and the dispatch line."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest
import yaml
from pydantic import ValidationError

from analysis.frontier.prune import analyze_points
from analysis.sweep.export import dispatch_command, dispatch_problem, search_space
from analysis.sweep.pruned import prune_list, pruned_json, pruned_table
from analysis.sweep.recipes import expand, row_identity
from analysis.sweep.sweep_config import validate_sweep_config
from ingest.bundled import MASTER_CONFIGS_DIR, SAMPLES_DIR
from ingest.contract.col import Col
from ingest.readers.app_api import AppApiReader
from ingest.readers.base import SourceFile
from tests.analysis.pointdata import MASTER, frame, row

KIMI_YAML = """\
kimik2.7-fp4-mi355x-vllm-agentic:
  image: vllm/vllm-openai-rocm:v0.24.0
  model: amd/Kimi-K2.7-Code-MXFP4
  model-prefix: kimik2.7
  runner: cluster:mi355x-amds
  precision: fp4
  framework: vllm
  multinode: false
  scenarios:
    agentic-coding:
    - dram-utilization: 0.8
      search-space:
      - {tp: 4, kv-offloading: dram, kv-offload-backend: {name: lmcache}, conc-list: [32]}
      - {tp: 4, kv-offloading: none, conc-list: [1, 4, 8]}
      - {tp: 8, kv-offloading: dram, kv-offload-backend: {name: lmcache, version: aaf7c0d3}, conc-list: [16, 48]}
      - {tp: 8, kv-offloading: none, conc-list: [4, 8]}
"""


@pytest.fixture(scope="module")
def master() -> Any:
    return validate_sweep_config(yaml.safe_load(MASTER.read_text()))


def _scheduled(pruned_kept: pl.DataFrame, keys: dict[str, str]) -> list[tuple[Any, ...]]:
    out = []
    for r in pruned_kept.iter_rows(named=True):
        scen = r[Col.SCENARIO]
        out.append(
            (keys[r[Col.ARM_ID]], scen, r[Col.ISL], r[Col.OSL], row_identity(r), r[Col.CONC])
        )
    return sorted(out, key=repr)


def test_kimi_k27_offload_arms_export(points: Callable[..., pl.DataFrame]) -> None:
    # One run holds the TP4 and TP8 sweeps. Group frontier (median_intvty, tput_per_gpu): TP4
    # off c1 (76.71, 1350.2), c4 (48.03, 3099.2), c8 (29.08, 5299.7): every other point has
    # less interactivity and less throughput than one of them. Arm frontiers add
    # TP4 on c32 (14.76, 4328.2), which dominates c16 (13.86, 4063.0); TP8 on c16 (15.34, 2884.9)
    # and c48 (9.56, 3252.1), which dominates c32 (8.57, 3194.8); TP8 off c4 and c8.
    # No arm stops gaining 5% throughput, so nothing is post-cliff.
    p = prune_list(analyze_points(points("kimi")), include_arm_frontier=True)
    space = search_space(p)
    assert space.skipped == ()
    assert space.yaml() == KIMI_YAML
    assert [a.conc_list for a in p.arms] == [(32,), (1, 4, 8), (16, 48), (4, 8)]
    assert p.dropped.select(Col.ARM_LABEL, Col.CONC).sort(Col.ARM_LABEL, Col.CONC).rows() == [
        ("TP4 EP1 | no spec | kv dram/lmcache", 16), ("TP8 EP1 | no spec | kv dram/lmcache", 32),
    ]  # fmt: skip
    # The arms keep different concurrencies: one --conc list would run 4 x 6 = 24 points for
    # the 1 + 3 + 2 + 2 = 8 kept, so no single test-config line is offered (the YAML runs exactly these).
    assert dispatch_problem(p) == (
        "the kept arms keep different concurrencies (TP4 EP1 | no spec | kv dram/lmcache: 32; "
        "TP4 EP1 | no spec | kv none: 1 4 8; TP8 EP1 | no spec | kv dram/lmcache: 16 48; "
        "TP8 EP1 | no spec | kv none: 4 8); --conc applies to every entry of a config key, so "
        "one line would run 24 points instead of the 8 kept: dispatch the search-space YAML "
        "instead"
    )
    assert dispatch_command(p).startswith("# no single test-config line runs exactly")


def test_exported_yaml_round_trips_to_exactly_the_kept_points(
    points: Callable[..., pl.DataFrame],
) -> None:
    p = prune_list(analyze_points(points("kimi")), include_arm_frontier=True, neighbours=True)
    config = validate_sweep_config(yaml.safe_load(search_space(p).yaml()))
    keys = {a.arm_id: a.config_key for a in p.arms}
    assert expand(config) == _scheduled(p.kept, keys)
    assert len(expand(config)) == p.kept.height == 10  # neighbours add TP4 on c16, TP8 on c32


def test_unexportable_arms_are_listed_not_guessed(points: Callable[..., pl.DataFrame]) -> None:
    # The DeepSeek-R1 offload runs name no offload backend; InferenceX requires one for dram.
    p = prune_list(analyze_points(points("dsr1")))
    space = search_space(p)
    why = (
        "kv-offloading dram but no kv_offload_backend recorded (InferenceX requires one): "
        "ingest with --set kv_offload_backend=<lmcache|mooncake|native|...>"
    )
    assert space.skipped == (
        ("TP4 EP4 | no spec | kv dram (dsr1-fp4-b200-vllm-agentic)", why),
        ("TP8 EP8 | no spec | kv dram (dsr1-fp4-b200-vllm-agentic)", why),
    )
    entries = space.doc["dsr1-fp4-b200-vllm-agentic"]["scenarios"]["agentic-coding"][0][
        "search-space"
    ]
    # group frontier: TP4 off c1, c4; TP8 off c1, c2 (see test_prune)
    assert entries == [
        {"tp": 4, "ep": 4, "kv-offloading": "none", "conc-list": [1, 4]},
        {"tp": 8, "ep": 8, "kv-offloading": "none", "conc-list": [1, 2]},
    ]
    assert space.yaml().startswith(
        f"# not exported: TP4 EP4 | no spec | kv dram (dsr1-fp4-b200-vllm-agentic): {why}\n"
    )


def test_neighbours_bracket_the_kept_points(points: Callable[..., pl.DataFrame]) -> None:
    p = prune_list(analyze_points(points("dsr1")), neighbours=True)
    off4 = p.kept.filter(pl.col(Col.ARM_LABEL) == "TP4 EP4 | no spec | kv none").sort(Col.CONC)
    # kept c1 and c4; c2 (dominated) and c8 (dominated) are their neighbours; c12 is post-cliff
    assert off4.select(Col.CONC, "keep_reason").rows() == [
        (1, "on the group frontier"), (2, "neighbour of c1"), (4, "on the group frontier"),
        (8, "neighbour of c4"),
    ]  # fmt: skip


def test_json_and_csv_include_what_was_dropped(points: Callable[..., pl.DataFrame]) -> None:
    p = prune_list(analyze_points(points("dsr1")))
    doc = pruned_json(p)
    assert (len(doc["kept"]), len(doc["dropped"])) == (8, 36)
    assert (
        doc["arms"][0]["conc_list"] == [2, 8, 16]
        and doc["arms"][0]["config_key"] == "dsr1-fp4-b200-vllm-agentic"
    )
    dropped = {(d["arm_label"], d["conc"]): (d["verdict"], d["reason"]) for d in doc["dropped"]}
    assert dropped[("TP4 EP4 | no spec | kv dram", 32)] == (
        "post_cliff",
        "p90 TTFT 106.9 s > 15.9 s (10 x knee c8)",
    )
    table = pruned_table(p)
    assert table.height == 44 and table.get_column("kept").sum() == 8


def _minimax_m3_fast_sweep() -> pl.DataFrame:
    # A fast sweep of the MiniMax-M3 H200 recipe of formats.md 5.3 (the values are made up; the
    # recipe is the real master entry): resident KV c1..c10, Mooncake c8..c14.
    common = {"scenario": "agentic-coding", "hw_label": "cluster:h200-dgxc", "model": "MiniMaxAI/MiniMax-M3-MXFP8",
              "model_prefix": "minimaxm3", "precision": "fp8", "framework": "vllm",
              "image": "vllm/vllm-openai:v0.27.1", "tp": 8, "spec_decoding": "mtp", "spec_method": "eagle3",
              "num_spec_tokens": 3, "p90_ttft": 5.0}  # fmt: skip
    rows = [row(**common, conc=c, kv_offloading="none", tput_per_gpu=100.0 * c, median_intvty=200.0 - 10 * c)
            for c in (1, 2, 4, 6, 8, 10)]  # fmt: skip
    for c, tput, intvty in (
        (8, 780.0, 115.0),
        (10, 990.0, 95.0),
        (12, 1150.0, 80.0),
        (14, 1250.0, 60.0),
    ):
        rows.append(row(**common, conc=c, kv_offloading="dram", kv_offload_backend="mooncake",
                        tput_per_gpu=tput, median_intvty=intvty))  # fmt: skip
    return frame(rows)


def test_a_master_config_supplies_key_template_and_dram_utilization(master: Any) -> None:
    # Mooncake c8 (115, 780) and c10 (95, 990) are dominated by resident c8 (120, 800) and c10
    # (100, 1000); Mooncake extends the frontier at c12 (80, 1150) and c14 (60, 1250).
    p = prune_list(analyze_points(_minimax_m3_fast_sweep()), master=master)
    space = search_space(p)
    assert space.doc == {
        "minimaxm3-fp8-h200-vllm-agentic-mtp": {
            "image": "vllm/vllm-openai:v0.27.1", "model": "MiniMaxAI/MiniMax-M3-MXFP8",
            "model-prefix": "minimaxm3", "runner": "cluster:h200-dgxc", "precision": "fp8",
            "framework": "vllm", "multinode": False,
            "scenarios": {"agentic-coding": [{"dram-utilization": 0.8, "search-space": [
                {"spec-decoding": "mtp", "tp": 8, "kv-offload-backend": {"name": "mooncake", "version": "0.3.11.post1"},
                 "kv-offloading": "dram", "conc-list": [12, 14]},
                {"spec-decoding": "mtp", "tp": 8, "kv-offloading": "none", "conc-list": [1, 2, 4, 6, 8, 10]},
            ]}]},
        }
    }  # fmt: skip
    # 12 14 on one entry, 1..10 on the other: not one line.
    assert "keep different concurrencies" in (dispatch_problem(p) or "")


def test_the_validator_accepts_the_real_master_configs(master: Any) -> None:
    assert len(master.root) == 152
    amd = validate_sweep_config(yaml.safe_load((MASTER.parent / "amd-master.yaml").read_text()))
    assert len(amd.root) == 56
    entry = master.root["minimaxm3-fp8-h200-vllm-agentic-mtp"]
    assert entry.scenarios.agentic_coding[0].dram_utilization == 0.8


def _doc(entry: dict[str, Any], **item: Any) -> dict[str, Any]:
    return {"k": {"image": "i", "model": "m", "model-prefix": "p", "runner": "cluster:x", "precision": "fp8",
                  "framework": "vllm", "multinode": False,
                  "scenarios": {"agentic-coding": [{**item, "search-space": [entry]}]}}}  # fmt: skip


@pytest.mark.parametrize(
    ("entry", "item", "message"),
    [
        ({"tp": 8, "kv-offloading": "none", "conc-list": [1], "conc-start": 1, "conc-end": 4}, {}, "exactly one of conc-list"),
        ({"tp": 8, "kv-offloading": "none"}, {}, "exactly one of conc-list"),
        ({"tp": 8, "kv-offloading": "none", "conc-start": 8, "conc-end": 4}, {}, "conc-start 8 > conc-end 4"),
        ({"tp": 8, "kv-offloading": "dram", "conc-list": [1]}, {"dram-utilization": 0.8}, "requires kv-offload-backend"),
        ({"tp": 8, "kv-offloading": "none", "kv-offload-backend": {"name": "x"}, "conc-list": [1]}, {}, "only allowed"),
        ({"tp": 8, "kv-offloading": "dram", "kv-offload-backend": {"name": "x"}, "conc-list": [1]}, {}, "dram-utilization is required"),
        ({"tp": 8, "conc-list": [1]}, {}, "kv-offloading"),
        ({"tp": 8, "kv-offloading": "none", "conc-list": [0]}, {}, "greater than 0"),
        ({"tp": 8, "kv-offloading": "none", "conc-list": [1]}, {"trace-source": "x"}, "Extra inputs are not permitted"),
    ],
)  # fmt: skip
def test_the_validator_enforces_the_section_5_rules(
    entry: dict[str, Any], item: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        validate_sweep_config(_doc(entry, **item))


def test_agentic_configs_need_a_cluster_runner() -> None:
    doc = _doc({"tp": 8, "kv-offloading": "none", "conc-list": [1]})
    doc["k"]["runner"] = "b200"
    with pytest.raises(ValidationError, match="cluster:<name>"):
        validate_sweep_config(doc)


def test_nothing_kept_means_nothing_to_dispatch() -> None:
    empty = prune_list(analyze_points(frame([])))
    assert search_space(empty).doc == {}
    with pytest.raises(ValueError, match="nothing to dispatch"):
        dispatch_command(empty)


def test_no_test_config_line_for_a_key_the_master_does_not_have(
    points: Callable[..., pl.DataFrame],
) -> None:
    # Issue 27 item 3: the Kimi-K2.7 sweep keeps only TP4 no-offload at conc 1 4 8 (see
    # test_kimi_k27_offload_arms_export); its key kimik2.7-fp4-mi355x-vllm-agentic is not among
    # the 56 keys of the real amd-master.yaml, so `test-config --config-keys` would fail there.
    amd = validate_sweep_config(yaml.safe_load((MASTER.parent / "amd-master.yaml").read_text()))
    assert "kimik2.7-fp4-mi355x-vllm-agentic" not in amd.root
    p = prune_list(analyze_points(points("kimi")), master=amd)
    assert [(a.config_key, a.conc_list) for a in p.arms] == [
        ("kimik2.7-fp4-mi355x-vllm-agentic", (1, 4, 8))
    ]
    assert dispatch_problem(p) == (
        "the master config has no config key kimik2.7-fp4-mi355x-vllm-agentic, so "
        "test-config --config-keys would fail: choose the master config that defines it, "
        "or dispatch the search-space YAML"
    )
    assert dispatch_command(p).startswith("# no single test-config line runs exactly")


def _mtp_pair() -> pl.DataFrame:
    """The bundled sample dsr1-fp8-b300-mtp: the real app rows of DeepSeek-R1 FP8 B300 SGLang TP8
    without and with MTP at conc 4-64 (data/samples/PROVENANCE.md), read by the app-API reader."""
    path = SAMPLES_DIR / "dsr1-fp8-b300-mtp" / "benchmarks.json"
    src = SourceFile(path, path.name, "sample", path.read_bytes())
    return frame(row("pair", path.name, **p) for p in AppApiReader().read(src, json.loads(src.data)).points)  # fmt: skip


def test_no_test_config_line_when_the_master_key_lacks_a_kept_entry() -> None:
    nvidia = yaml.safe_load((MASTER_CONFIGS_DIR / "nvidia-master.yaml").read_text())
    p = prune_list(analyze_points(_mtp_pair()), master=validate_sweep_config(nvidia))
    assert [(a.config_key, a.isl, a.conc_list) for a in p.arms] == [
        ("dsr1-fp8-b300-sglang-mtp", 1024, (4, 8, 16, 32, 64)),
        ("dsr1-fp8-b300-sglang-mtp", 8192, (4, 8, 16, 32, 64)),
    ]
    assert dispatch_problem(p) is None
    # The same master without the key's 1k/1k entry (as InferenceX's own master at fa21da2 has
    # it): test-config --config-keys dsr1-fp8-b300-sglang-mtp would run 8k/1k only.
    key = nvidia["dsr1-fp8-b300-sglang-mtp"]["scenarios"]["fixed-seq-len"]
    nvidia["dsr1-fp8-b300-sglang-mtp"]["scenarios"]["fixed-seq-len"] = [
        item for item in key if item["isl"] == 8192
    ]
    p = prune_list(analyze_points(_mtp_pair()), master=validate_sweep_config(nvidia))
    assert dispatch_problem(p) == (
        "config key dsr1-fp8-b300-sglang-mtp holds no search-space entry for TP8 EP1 | MTP | "
        "kv none at 1024/1024, so test-config would not run its kept points: choose the master "
        "config that defines it, or dispatch the search-space YAML"
    )

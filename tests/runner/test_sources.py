"""Plans built from InferenceX search-space YAML, from prune output, and from plan files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml

from ingest.contract.plans import ArmPlan
from runner.errors import PlanError
from runner.sources import (
    load_plan,
    plan_from_arms,
    plan_from_inferencex,
    plan_from_pruned,
    select_points,
    sniff,
)

CONFIGS = Path(__file__).resolve().parents[1] / "fixtures/inferencex/configs"
MASTER = CONFIGS / "nvidia-master.yaml"


@pytest.mark.parametrize(
    ("name", "points"), [("nvidia-master.yaml", 1514), ("amd-master.yaml", 563)]
)
def test_every_real_master_config_becomes_a_valid_plan(name: str, points: int) -> None:
    plan = load_plan(CONFIGS / name)
    assert len(plan.points()) == points
    assert plan.source["kind"] == "inferencex"


def test_a_real_range_doubles_and_clamps_like_inferencex() -> None:
    plan = load_plan(MASTER, config_keys=["dsv4-fp4-b200-vllm"])
    arm = next(a for a in plan.arms if a.isl == 8192 and a.tp == 8 and a.concs[0] == 1)
    assert arm.concs == [1, 2, 4, 8, 16, 32, 64]
    doc = {
        "k": {
            "model": "m",
            "runner": "h200",
            "scenarios": {
                "fixed-seq-len": [
                    {
                        "isl": 1024,
                        "osl": 1024,
                        "search-space": [{"tp": 1, "conc-start": 1, "conc-end": 48}],
                    }
                ]
            },
        }
    }
    assert plan_from_inferencex(doc, base={"name": "x"}).arms[0].concs == [1, 2, 4, 8, 16, 32, 48]


def test_the_minimax_agentx_block() -> None:
    plan = load_plan(MASTER, config_keys=["minimaxm3-fp8-h200-vllm-agentic-mtp"], name="mm3")
    got = [
        (p.arm.kv_offloading, p.arm.kv_offload_backend, p.arm.dram_utilization, p.conc)
        for p in plan.points()
    ]
    assert got == [("none", None, 0.8, c) for c in (1, 2, 4, 6, 8, 10)] + [
        ("dram", "mooncake", 0.8, c) for c in (12, 14)
    ]
    arm = plan.arms[0]
    assert (
        arm.config_key,
        arm.scenario,
        arm.model,
        arm.image,
        arm.hw,
        arm.tp,
        arm.spec_decoding,
    ) == (
        "minimaxm3-fp8-h200-vllm-agentic-mtp",
        "agentic-coding",
        "MiniMaxAI/MiniMax-M3-MXFP8",
        "vllm/vllm-openai:v0.27.1",
        "cluster:h200-dgxc",
        8,
        "mtp",
    )


def test_a_multinode_block_keeps_its_workers() -> None:
    plan = load_plan(MASTER, config_keys=["dsr1-fp4-b200-dynamo-trt"])
    arm = plan.arms[0]
    assert arm.is_multinode and arm.disagg
    assert arm.prefill is not None and arm.decode is not None
    assert (arm.prefill.num_worker, arm.prefill.tp, arm.prefill.ep, arm.prefill.dp_attn) == (
        1,
        4,
        4,
        True,
    )
    assert arm.prefill.additional_settings == [
        "CONFIG_FILE=recipes/trtllm/b200-fp4/8k1k/mtp/ctx1_gen1_dep8_batch8_eplb0_mtp3.yaml"
    ]
    assert (arm.decode.num_worker, arm.decode.tp, arm.decode.ep) == (1, 8, 8)
    assert arm.concs == [90]


def test_a_point_a_real_config_repeats_runs_once_and_is_reported() -> None:
    plan = load_plan(
        CONFIGS / "amd-master.yaml", config_keys=["dsr1-fp4-mi355x-sglang-disagg-8k1k-mtp"]
    )
    assert plan.source["duplicates_dropped"] == (
        "dsr1-fp4-mi355x-sglang-disagg-8k1k-mtp.scenarios.fixed-seq-len.0.search-space.2 conc 32 repeats "
        "dsr1-fp4-mi355x-sglang-disagg-8k1k-mtp.scenarios.fixed-seq-len.0.search-space.1"
    )


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({"tp": 8, "conc-list": [4, 0]}, "k.scenarios.fixed-seq-len.0.search-space.0.conc-list.1"),
        (
            {"tp": 8, "conc-list": [4], "conc-start": 1, "conc-end": 4},
            "k.scenarios.fixed-seq-len.0.search-space.0.conc-list",
        ),
        (
            {"tp": 8, "conc-start": 8, "conc-end": 4},
            "k.scenarios.fixed-seq-len.0.search-space.0.conc-start",
        ),
        (
            {"tp": 8, "dp-attn": "maybe", "conc-list": [4]},
            "k.scenarios.fixed-seq-len.0.search-space.0.dp-attn",
        ),
        (
            {"tp": 6, "dcp-size": 4, "conc-list": [4]},
            "k.scenarios.fixed-seq-len.0.search-space.0.dcp-size",
        ),
    ],
)
def test_inferencex_errors_name_the_inferencex_field(entry: dict[str, Any], field: str) -> None:
    doc = {
        "k": {
            "model": "m",
            "runner": "h200",
            "scenarios": {"fixed-seq-len": [{"isl": 1024, "osl": 1024, "search-space": [entry]}]},
        }
    }
    with pytest.raises(PlanError) as info:
        plan_from_inferencex(doc, base={"name": "x"}, source="cfg.yaml")
    assert info.value.field == field
    assert str(info.value).startswith(f"cfg.yaml: {field}: ")


def test_unknown_keys_and_scenarios_are_reported() -> None:
    with pytest.raises(PlanError, match="no config key matches nope-"):
        load_plan(MASTER, config_keys=["nope-*"])
    doc = {"k": {"model": "m", "scenarios": {"fixed-len": []}}}
    with pytest.raises(PlanError, match=r"k\.scenarios\.fixed-len: unknown scenario type"):
        plan_from_inferencex(doc, base={"name": "x"})
    with pytest.raises(PlanError, match="not a plan"):
        sniff(["a list"])


PRUNED: dict[str, Any] = {
    "arms": [
        {
            "config_key": "minimaxm3-fp8-h200-vllm-agentic-mtp",
            "scenario": "agentic-coding",
            "isl": None,
            "osl": None,
            "arm_id": "a1",
            "arm_label": "TP8 EP1 | MTP | kv dram/mooncake",
            "identity": {
                "tp": 8,
                "ep": 1,
                "pp": 1,
                "dp_attention": False,
                "dcp_size": 1,
                "pcp_size": 1,
                "spec_decoding": "mtp",
                "kv_offloading": "dram",
                "kv_offload_backend": "mooncake",
            },
            "conc_list": [12, 14],
        },
        {
            "config_key": "dsr1-fp4-b200-dynamo-trt",
            "scenario": "fixed-seq-len",
            "isl": 8192,
            "osl": 1024,
            "arm_id": "a2",
            "arm_label": "P1xTP4 D5xTP8",
            "identity": {
                "spec_decoding": "mtp",
                "prefill_tp": 4,
                "prefill_ep": 4,
                "prefill_dp_attention": True,
                "prefill_num_workers": 1,
                "decode_tp": 8,
                "decode_ep": 8,
                "decode_dp_attention": False,
                "decode_num_workers": 5,
            },
            "conc_list": [10, 30],
        },
    ],
    "kept": [
        {
            "run_id": "123",
            "arm_id": "a1",
            "model": "MiniMaxAI/MiniMax-M3-MXFP8",
            "model_prefix": "minimaxm3",
            "framework": "vllm",
            "precision": "fp8",
            "image": "vllm/vllm-openai:v0.27.1",
            "hw": "h200",
            "hw_label": "cluster:h200-dgxc",
            "is_multinode": False,
            "conc": 12,
        },
        {
            "run_id": "123",
            "arm_id": "a2",
            "model": "deepseek-r1-fp4",
            "model_prefix": "dsr1",
            "framework": "dynamo-trt",
            "precision": "fp4",
            "image": None,
            "hw": "b200",
            "hw_label": "b200-multinode",
            "is_multinode": True,
            "disagg": True,
            "conc": 10,
        },
    ],
    "dropped": [],
}


def test_a_pruned_list_becomes_a_plan(tmp_path: Path) -> None:
    path = tmp_path / "pruned.json"
    path.write_text(json.dumps(PRUNED))
    plan = load_plan(path, options={"timeout_s": 600, "github": {"ref": "main"}})
    assert plan.name == "pruned"
    assert plan.source == {"kind": "prune", "path": str(path), "run_id": "123"}
    a, b = plan.arms
    assert (
        a.config_key,
        a.scenario,
        a.kv_offloading,
        a.kv_offload_backend,
        a.spec_decoding,
        a.hw,
        a.concs,
        a.label,
    ) == (
        "minimaxm3-fp8-h200-vllm-agentic-mtp",
        "agentic-coding",
        "dram",
        "mooncake",
        "mtp",
        "cluster:h200-dgxc",
        [12, 14],
        "TP8 EP1 | MTP | kv dram/mooncake",
    )
    assert b.prefill is not None and b.decode is not None
    assert (
        b.prefill.num_worker,
        b.prefill.tp,
        b.prefill.dp_attn,
        b.decode.num_worker,
        b.decode.tp,
        b.disagg,
    ) == (1, 4, True, 5, 8, True)
    assert plan.timeout_s == 600
    plan.require("github")
    # The same configuration is the same point, whatever the source: with the dram-utilization
    # the pruned list does not carry, its arm has the ids the master config gives it.
    ix = load_plan(MASTER, config_keys=["minimaxm3-fp8-h200-vllm-agentic-mtp"])
    same = plan_from_pruned(PRUNED, base={"name": "x", "defaults": {"dram_utilization": 0.8}})
    assert [p.id for p in same.points()][:2] == [p.id for p in ix.points() if p.conc in (12, 14)]


def test_a_prune_arm_without_its_rows_is_an_error() -> None:
    doc = {**PRUNED, "kept": PRUNED["kept"][:1]}
    with pytest.raises(PlanError, match=r"^arms.1.arm_id: no kept row of arm 'a2'"):
        plan_from_pruned(doc, base={"name": "x"})
    with pytest.raises(PlanError, match="keeps no arm"):
        plan_from_pruned({"arms": [], "kept": [], "dropped": []}, base={"name": "x"})


def test_a_plan_file_with_options_as_defaults(tmp_path: Path) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "hand",
                "defaults": {"model": "m", "isl": 1, "osl": 1},
                "arms": [{"concs": [1, 2, 4]}],
                "timeout_s": 5,
            }
        )
    )
    plan = load_plan(path, options={"timeout_s": 99, "duration_s": 60})
    assert (plan.name, plan.timeout_s, plan.duration_s) == ("hand", 5, 60)
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed")
    with pytest.raises(PlanError, match=f"^{bad}: not valid YAML"):
        load_plan(bad)


def test_select_points_narrows_a_plan() -> None:
    plan = load_plan(MASTER, config_keys=["minimaxm3-fp8-h200-vllm-agentic-mtp"])
    pts = plan.points()
    keep = [pts[1].id, pts[6].id]
    small = select_points(plan, keep)
    assert [p.id for p in small.points()] == keep
    with pytest.raises(PlanError, match="not points of plan"):
        select_points(plan, ["pt-000000000000"])


def test_typed_arms_plan_as_their_json_document() -> None:
    # In process the pruned list reaches the runner as ArmPlans and a frame (no JSON detour).
    arms = [
        ArmPlan(
            config_key=a["config_key"], scenario=a["scenario"], isl=a["isl"], osl=a["osl"],
            arm_id=a["arm_id"], arm_label=a["arm_label"], identity=tuple(a["identity"].items()),
            conc_list=tuple(a["conc_list"]),
        )
        for a in PRUNED["arms"]
    ]  # fmt: skip
    kept = pl.DataFrame(PRUNED["kept"], infer_schema_length=None)
    base = {"name": "x", "defaults": {"dram_utilization": 0.8}}
    typed = plan_from_arms(arms, kept, base=base, source="web")
    assert typed == plan_from_pruned(PRUNED, base=base, source="web")
    with pytest.raises(PlanError, match=r"^web: arms.1.arm_id: no kept row of arm 'a2'"):
        plan_from_arms(arms, kept.head(1), base=base, source="web")

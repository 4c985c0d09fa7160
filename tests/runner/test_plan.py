"""Plans: validation that names the field, stable point ids, templates that cannot become shell."""

from __future__ import annotations

from typing import Any

import pytest

from runner.environment import exp_name, point_env, point_values, result_filename
from runner.errors import PlanError
from runner.plan import Plan, parse_plan, point_id
from runner.templates import check_template, render

BASE: dict[str, Any] = {
    "model": "openai/gpt-oss-120b",
    "model_prefix": "gptoss",
    "isl": 1024,
    "osl": 1024,
}


def plan(arms: list[dict[str, Any]] | None = None, **fields: Any) -> Plan:
    return parse_plan(
        {"name": "t", "defaults": BASE, "arms": arms or [{"concs": [1, 2]}], **fields}
    )


def error(doc: dict[str, Any]) -> PlanError:
    with pytest.raises(PlanError) as info:
        parse_plan(doc)
    return info.value


@pytest.mark.parametrize(
    ("doc", "field", "reason"),
    [
        (
            {"name": "t", "arms": []},
            "arms",
            "List should have at least 1 item after validation, not 0",
        ),
        (
            {"name": "t", "defaults": BASE, "arms": [{"concs": [4, 0]}]},
            "arms.0.concs.1",
            "a concurrency must be a positive integer",
        ),
        (
            {"name": "t", "defaults": BASE, "arms": [{"concs": [4, 4]}]},
            "arms.0.concs",
            "duplicate concurrencies in [4, 4]",
        ),
        (
            {"name": "t", "defaults": BASE, "arms": [{"concs": [1], "tpp": 8}]},
            "arms.0.tpp",
            "Extra inputs are not permitted",
        ),
        (
            {"name": "t", "defaults": BASE, "arms": [{"concs": [1], "tp": 0}]},
            "arms.0.tp",
            "Input should be greater than or equal to 1",
        ),
        (
            {"name": "t", "arms": [{"model": "m", "concs": [1]}]},
            "arms.0.isl",
            "fixed-seq-len arms need isl and osl",
        ),
        (
            {"name": "t", "defaults": BASE, "arms": [{"concs": [1], "model": "gpt; rm -rf /"}]},
            "arms.0.model",
            "'gpt; rm -rf /': only letters, digits and . _ : / @ + = # - (no spaces or shell characters)",
        ),
        (
            {
                "name": "t",
                "defaults": BASE,
                "arms": [{"concs": [1], "scenario": "agentic-coding", "kv_offloading": "dram"}],
            },
            "arms.0.kv_offload_backend",
            "kv_offloading dram needs a kv_offload_backend",
        ),
        (
            {"name": "t", "defaults": BASE, "arms": [{"concs": [1], "prefill": {"num_worker": 1}}]},
            "arms.0.decode",
            "give both prefill and decode, or neither",
        ),
        (
            {"name": "t", "defaults": {**BASE, "tpp": 1}, "arms": [{"concs": [1]}]},
            "defaults.tpp",
            None,
        ),
        (
            {"name": "t", "defaults": BASE, "arms": [{"concs": [1]}], "env": {"A": "x\ny"}},
            "env.A",
            None,
        ),
        (
            {"name": "t", "defaults": BASE, "arms": [{"concs": [1]}], "commands": {}},
            "commands.benchmark",
            "give exactly one of benchmark or script",
        ),
        (
            {
                "name": "t",
                "defaults": BASE,
                "arms": [{"concs": [1]}],
                "commands": {"benchmark": ["vllm", "--model", "{modle}"]},
            },
            "commands.benchmark",
            None,
        ),
        (
            {
                "name": "t",
                "defaults": BASE,
                "arms": [{"concs": [1]}],
                "commands": {"benchmark": ["bash", "-c", "vllm bench --model {model}"]},
            },
            "commands.benchmark",
            "[2]: placeholders inside inline code (bash -c ...) would splice plan values into code; read the "
            "environment variables ($MODEL, $CONC, ...) in a script instead",
        ),
        (
            {
                "name": "t",
                "defaults": BASE,
                "arms": [{"concs": [1]}],
                "commands": {"script": ["run.sh", "{duration}"]},
            },
            "commands.script",
            "uses {duration} but arms.0 has no duration; set it on the arm (or in defaults) or drop the placeholder",
        ),
        (
            {
                "name": "t",
                "defaults": BASE,
                "arms": [{"concs": [1]}],
                "commands": {"script": ["run.sh"]},
                "slurm": {"time_limit_min": 10},
            },
            "slurm.time_limit_min",
            "10 min is shorter than timeout_s + commands.ready_timeout_s (4200 s)",
        ),
        (
            {
                "name": "t",
                "defaults": BASE,
                "arms": [{"concs": [1]}],
                "commands": {"script": ["run.sh"], "max_parallel": 2},
            },
            "commands.port",
            "max_parallel 2 runs points at once; they cannot share port 8888: use port: auto",
        ),
    ],
)
def test_validation_errors_name_the_field(
    doc: dict[str, Any], field: str, reason: str | None
) -> None:
    err = error(doc)
    assert err.field == field
    if reason is not None:
        assert err.reason == reason
    assert str(err).startswith(f"{field}: ")


def test_the_same_point_twice_is_refused() -> None:
    err = error(
        {
            "name": "t",
            "defaults": BASE,
            "arms": [{"concs": [1, 2]}, {"concs": [2], "label": "again"}],
        }
    )
    assert (err.field, err.reason) == (
        "arms.1.concs.0",
        "the same point as arms.0.concs.1 (same configuration and conc)",
    )


def test_point_ids_hash_the_configuration_not_its_place() -> None:
    a = plan([{"concs": [1, 2], "tp": 2}, {"concs": [4], "tp": 4, "label": "big"}])
    b = plan(
        [{"concs": [4], "tp": 4}, {"concs": [2, 1], "tp": 2, "label": "renamed"}],
        duration_s=3600,
        timeout_s=10,
    )
    assert {(p.arm.tp, p.conc): p.id for p in a.points()} == {
        (p.arm.tp, p.conc): p.id for p in b.points()
    }
    ids = [p.id for p in a.points()]
    assert len(set(ids)) == 3 and all(i.startswith("pt-") and len(i) == 15 for i in ids)
    assert point_id(a.arms[0], 1) != point_id(
        a.arms[0].model_copy(update={"spec_decoding": "mtp"}), 1
    )
    assert point_id(a.arms[0], 1) != point_id(
        a.arms[0].model_copy(update={"config_key": "other-key"}), 1
    )
    assert [(p.index, p.conc) for p in a.points()] == [(0, 1), (1, 2), (2, 4)]


def test_require_names_what_a_backend_needs() -> None:
    p = plan()
    with pytest.raises(PlanError, match=r"^commands: the local backend needs commands"):
        p.require("local")
    with pytest.raises(
        PlanError,
        match=r"^arms\.0\.config_key: the github backend dispatches InferenceX config keys",
    ):
        p.require("github")
    p = plan(commands={"script": ["run.sh"]})
    with pytest.raises(PlanError, match=r"^slurm: the slurm backend needs slurm options"):
        p.require("slurm")
    p.require("local")


def test_templates_substitute_within_one_argument() -> None:
    values = {"model": "a b", "conc": "8"}
    assert render(["x", "--model={model}", "{model}", "{{not}}-{conc}"], values) == [
        "x",
        "--model=a b",
        "a b",
        "{not}-8",
    ]
    with pytest.raises(ValueError, match="has no value"):
        render(["{isl}"], {"isl": None})
    for bad, msg in (
        ([], "an empty command"),
        (["x", "{"], "lone '{'"),
        (["x", "{}"], "empty placeholder"),
        (["python3", "-c", "{model}"], "inline code"),
    ):
        with pytest.raises(ValueError, match=msg):
            check_template(bad)
    check_template(["bash", "run.sh", "{model}"])  # a script argument is data, not code


def test_the_inferencex_environment_of_a_point() -> None:
    p = plan(
        [
            {
                "concs": [8],
                "tp": 8,
                "ep": 8,
                "dp_attn": True,
                "spec_decoding": "mtp",
                "precision": "fp8",
                "framework": "vllm",
                "hw": "h200",
            }
        ],
        duration_s=600,
    )
    pt = p.points()[0]
    values = point_values(p, pt, job_id="j-1", result_dir="/r")
    env = point_env(p, pt, values)
    assert {
        k: env[k]
        for k in (
            "MODEL",
            "MODEL_PREFIX",
            "TP",
            "EP_SIZE",
            "DP_ATTENTION",
            "CONC",
            "SPEC_DECODING",
            "ISL",
            "OSL",
            "MAX_MODEL_LEN",
            "DURATION",
            "RESULT_DIR",
            "NUM_PROMPTS",
        )
    } == {
        "MODEL": "openai/gpt-oss-120b",
        "MODEL_PREFIX": "gptoss",
        "TP": "8",
        "EP_SIZE": "8",
        "DP_ATTENTION": "true",
        "CONC": "8",
        "SPEC_DECODING": "mtp",
        "ISL": "1024",
        "OSL": "1024",
        "MAX_MODEL_LEN": "2304",
        "DURATION": "600",
        "RESULT_DIR": "/r",
        "NUM_PROMPTS": "80",
    }
    assert (
        env["RESULT_FILENAME"]
        == f"gptoss_1k1k_fp8_vllm_tp8-pp1-dcp1-pcp1-ep8-dpatrue_disagg-false_spec-mtp_conc8_h200_{pt.id}"
    )
    assert result_filename(pt) == env["RESULT_FILENAME"]
    odd = plan([{"concs": [1], "isl": 10240, "osl": 128, "model_prefix": "minimax_m25"}]).points()[
        0
    ]
    assert exp_name(odd.arm) == "minimax-m25_isl10240_osl128"
    agentic = plan(
        [{"concs": [4], "scenario": "agentic-coding", "isl": None, "osl": None}]
    ).points()[0]
    env = point_env(p, agentic, point_values(p, agentic, job_id="j", result_dir="/r"))
    assert (env["ISL"], env["OSL"], env["IS_AGENTIC"], env["EXP_NAME"]) == (
        "0",
        "0",
        "1",
        "gptoss_agentic",
    )


def test_plan_and_arm_env_override_in_order() -> None:
    p = plan(
        [{"concs": [1], "env": {"X": "arm"}}],
        env={"X": "plan", "Y": "plan"},
        commands={"script": ["s"], "env": {"Y": "cmd", "Z": "cmd"}},
    )
    pt = p.points()[0]
    env = point_env(p, pt, point_values(p, pt, job_id="j", result_dir="/r"))
    assert (env["X"], env["Y"], env["Z"]) == ("arm", "cmd", "cmd")

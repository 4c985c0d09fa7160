"""A run paretolens launched keeps the identity of the run it was pruned from.

End to end: a bundled sample run (InferenceX run 29337493492: Kimi-K2.7 FP4 on MI355X, TP8, KV
offload none vs DRAM/LMCache) is ingested, pruned, turned into a plan and launched on the local
backend. The benchmark is a stub that writes what `vllm bench serve --save-result` writes: the
key set of a real result (tests/fixtures/inferencex/raw_bench_serving), its own numbers, and a
plain file name, so nothing in the result says hardware, image, topology or KV offload. The plan
does, and the worker ingests each point with the plan's identity as defaults: every launched arm
gets the arm id of its source arm, and `compare <source run> <launched run>` pairs them all.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from analysis.comparison.compare import compare_runs
from analysis.frontier.prune import analyze_points
from analysis.sweep.pruned import prune_list, pruned_json
from ingest.contract.col import Col
from ingest.pipeline import ingest_paths
from ingest.store import Store
from runner import service
from runner.jobs import JobState, PointState
from runner.service import Caller
from runner.sources import plan_from_pruned
from runner.worker import _PLAN_CLASH, PLAN_DEFAULTS
from tests.runner.support import FakeSettings

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data/samples/29337493492"
REAL_RESULT = (
    ROOT
    / "tests/fixtures/inferencex/raw_bench_serving/kimik2.5_mi355x_mtp_root"
    / "kimik2.5_1k1k_int4_vllm_tp8-ep1-dpafalse_disagg-false_spec-mtp_conc4_MI355-gbt350-odcdh5-wbb3.json"
)

# The stub `vllm bench serve`: argv as vllm's, the key set of a real result, numbers from the
# concurrency (and KV_OFFLOADING from the environment, so the two arms measure differently).
STUB = """
import argparse, json, os, sys, time
from pathlib import Path

p = argparse.ArgumentParser()
p.add_argument("--model", required=True)
p.add_argument("--max-concurrency", type=int, required=True)
p.add_argument("--num-prompts", type=int, required=True)
p.add_argument("--result-dir", required=True)
p.add_argument("--result-filename", required=True)
p.add_argument("--template", required=True)
a = p.parse_args()
doc = json.loads(Path(a.template).read_text())
c, n = a.max_concurrency, a.num_prompts
boost = 1.25 if os.environ.get("KV_OFFLOADING") == "dram" else 1.0
tput = 900.0 * c / (1 + c / 16) * boost
doc.update(
    date=time.strftime("%Y%m%d-%H%M%S"),
    model_id=a.model,
    tokenizer_id=a.model,
    num_prompts=n,
    completed=n,
    max_concurrency=c,
    total_input_tokens=n * 4000,
    total_output_tokens=n * 400,
    total_token_throughput=tput,
    output_throughput=tput / 11,
    request_throughput=tput / 4400,
    duration=n * 4400 / tput,
)
for key in list(doc):
    stat = 1.0 + c / 64
    if key.endswith(("_tpot_ms", "_itl_ms")):
        doc[key] = 12.0 * stat / boost
    elif key.endswith("_ttft_ms"):
        doc[key] = 400.0 * stat / boost
    elif key.endswith("_e2el_ms"):
        doc[key] = 5200.0 * stat / boost
out = Path(a.result_dir) / a.result_filename
out.write_text(json.dumps(doc, indent=2))
print(f"stub vllm bench serve: wrote {out}", flush=True)
"""

IDENTITY = (
    Col.HW,
    Col.HW_LABEL,
    Col.IMAGE,
    Col.MODEL,
    Col.MODEL_PREFIX,
    Col.FRAMEWORK,
    Col.PRECISION,
    Col.SCENARIO,
    Col.TP,
    Col.EP,
    Col.DP_ATTENTION,
    Col.SPEC_DECODING,
    Col.KV_OFFLOADING,
    Col.KV_OFFLOAD_BACKEND,
)


def _pruned(store: Store) -> dict[str, Any]:
    rep = ingest_paths([SAMPLE], store, run_id="29337493492")
    assert rep.rejected == [] and rep.accepted == 5
    doc = pruned_json(prune_list(analyze_points(store.points(["29337493492"]))))
    # what `paretolens prune --format json` prints, read back
    out: dict[str, Any] = json.loads(json.dumps(doc, default=str))
    return out


def test_a_launched_run_pairs_every_arm_with_its_source(tmp_path: Path, store: Store) -> None:
    doc = _pruned(store)
    assert {(a["arm_label"], tuple(a["conc_list"])) for a in doc["arms"]} == {
        ("TP8 EP1 | no spec | kv dram/lmcache", (16, 48)),
        ("TP8 EP1 | no spec | kv none", (4, 8)),
    }
    stub = tmp_path / "vllm_bench_stub.py"
    stub.write_text(STUB)
    result = tmp_path / "real-result.json"
    shutil.copy(REAL_RESULT, result)
    base = {
        "name": "kimi-full",
        "num_prompts_per_conc": 4,
        "timeout_s": 60,
        "commands": {
            # `vllm bench serve --save-result` as a user would write it: a plain result name
            "benchmark": [
                "{python}",
                str(stub),
                "--model",
                "{model}",
                "--max-concurrency",
                "{conc}",
                "--num-prompts",
                "{num_prompts}",
                "--result-dir",
                "{result_dir}",
                "--result-filename",
                "vllm-bench-c{conc}.json",
                "--template",
                str(result),
            ],
            "grace_s": 0.5,
        },
    }
    plan = plan_from_pruned(doc, base=base, source="pruned.json")
    assert len(plan.arms) == 2 and len(plan.points()) == 4

    job_id = service.launch(plan, "local", store, FakeSettings(), caller=Caller.CLI, poll_s=0.1)
    st = service.wait_job(store, job_id, timeout_s=120, poll_s=0.1)
    assert st.state == JobState.SUCCEEDED, [(p.label, p.state, p.reason) for p in st.record.points]
    assert all(p.state == PointState.SUCCEEDED and p.rows_accepted == 1 for p in st.record.points)
    assert st.record.notes == []  # no result file contradicted the plan
    assert store.rejects([job_id]).height == 0

    launched = store.points([job_id])
    assert launched.height == 4
    # the result files say none of this; every launched point carries it from the plan
    by_conc = {p.conc: p.arm for p in plan.points()}
    for row in launched.iter_rows(named=True):
        arm = by_conc[row[Col.CONC]]
        assert row[Col.SOURCE_PATH].endswith(f"vllm-bench-c{row[Col.CONC]}.json")
        assert (
            row[Col.HW_LABEL],
            row[Col.HW],
            row[Col.IMAGE],
            row[Col.MODEL],
            row[Col.MODEL_PREFIX],
            row[Col.TP],
            row[Col.EP],
            row[Col.KV_OFFLOADING],
            row[Col.KV_OFFLOAD_BACKEND],
            row[Col.SCENARIO],
        ) == (
            arm.hw,
            "mi355x",
            arm.image,
            arm.model,
            arm.model_prefix,
            arm.tp,
            arm.ep,
            arm.kv_offloading,
            arm.kv_offload_backend,
            arm.scenario,
        )
        assert not [w for w in row[Col.WARNINGS] or [] if "job's plan" in w]
    assert launched.get_column(Col.HW_LABEL).unique().to_list() == ["cluster:mi355x-amds"]
    assert sorted(launched.get_column(Col.KV_OFFLOADING).unique().to_list()) == ["dram", "none"]

    # the same identity as the source points the arms were pruned from
    source = store.points(["29337493492"])
    src_ident = source.select(Col.ARM_ID, *IDENTITY).unique()
    got_ident = launched.select(Col.ARM_ID, *IDENTITY).unique()
    assert (
        got_ident.sort(Col.ARM_ID).rows()
        == src_ident.join(got_ident.select(Col.ARM_ID), on=Col.ARM_ID, how="semi")
        .sort(Col.ARM_ID)
        .rows()
    )

    points = store.points(["29337493492", job_id])
    cmp = compare_runs(points, "29337493492", job_id)
    planned_arms = {a["arm_id"] for a in doc["arms"]}
    assert set(launched.get_column(Col.ARM_ID).to_list()) == planned_arms
    assert cmp.only_in_candidate.height == 0
    assert cmp.arms.height == len(plan.arms)
    assert set(cmp.arms.get_column(Col.ARM_ID).to_list()) == planned_arms
    matched = dict(
        zip(cmp.arms[Col.ARM_ID].to_list(), cmp.arms["matched_concs"].to_list(), strict=True)
    )
    assert matched == {a["arm_id"]: len(a["conc_list"]) for a in doc["arms"]}
    pairs = cmp.points.select(Col.ARM_ID, Col.CONC).rows()
    assert sorted(pairs) == sorted((a["arm_id"], c) for a in doc["arms"] for c in a["conc_list"])
    assert all(v is not None for v in cmp.points.get_column(f"{Col.TPUT_PER_GPU}_delta_pct"))

    # Without the plan, the same result file would be an arm of its own, in no other run.
    alone = tmp_path / "alone"
    shutil.copytree(store.root / "jobs" / job_id / st.record.points[0].dir / "results", alone)
    ingest_paths([alone], store, run_id="no-plan")
    bare = store.points(["no-plan"]).row(0, named=True)
    assert (bare[Col.HW], bare[Col.IMAGE], bare[Col.KV_OFFLOADING]) == (None, None, "none")
    assert bare[Col.ARM_ID] not in set(source.get_column(Col.ARM_ID).to_list())
    alone_cmp = compare_runs(store.points(["29337493492", "no-plan"]), "29337493492", "no-plan")
    assert alone_cmp.arms.height == 0


def test_a_result_that_contradicts_the_plan_is_named_in_the_job_notes(tmp_path: Path) -> None:
    """The worker picks the plan clashes out of the ingest notes by the wording ingest uses."""
    d = tmp_path / "named"
    d.mkdir()
    shutil.copy(REAL_RESULT, d / REAL_RESULT.name)
    rep = ingest_paths(
        [d],
        Store(tmp_path / "s"),
        run_id="r",
        defaults={"tp": 4, "image": "img:1"},
        defaults_from=PLAN_DEFAULTS,
    )
    clashes = [n.reason for n in rep.notes if n.reason.endswith(_PLAN_CLASH)]
    assert clashes == [
        "tp=8 from the file differs from tp=4 from the job's plan; the file's value is kept"
    ]

"""Every input file ends in exactly one outcome: accepted, duplicate, auxiliary, rejected, ignored."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from ingest.contract.schema import RejectCol
from ingest.pipeline import ingest_paths
from ingest.store import Store
from paretolens.cli import app

FIX = Path(__file__).resolve().parents[1] / "fixtures"
AGG = sorted((FIX / "inferencex" / "agg_fixed_seq").glob("agg_*.json"))
AIPERF = (
    FIX
    / "aiperf"
    / "inferencex_kimik2.7_tp4_sweep_29003473063"
    / "agentic_kimik2.7_tp4_conc1_kvnone_fp4_vllm_tp4-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc1_mi355x-amds_01"
)
AGENTIC = (
    FIX
    / "inferencex"
    / "agentic_agg"
    / "kimik2.7_tp4_sweep_29003473063"
    / f"{AIPERF.name.removeprefix('agentic_')}.json"
)
CHANGELOG = (
    FIX
    / "inferencex"
    / "agentic_agg"
    / "kimik2.7_tp4_sweep_29003473063"
    / "changelog_metadata.json"
)


def _tree(tmp: Path) -> Path:
    run = tmp / "run"
    run.mkdir()
    shutil.copy(AGG[0], run / AGG[0].name)  # duplicate: stored by the first ingest
    shutil.copy(AGG[1], run / AGG[1].name)  # accepted
    # A run download's point: the aggregate (accepted) and its raw aiperf tree (auxiliary).
    shutil.copytree(AIPERF, run / AIPERF.name)
    (run / f"bmk_{AIPERF.name}").mkdir()
    shutil.copy(AGENTIC, run / f"bmk_{AIPERF.name}" / AGENTIC.name)
    (run / "broken.json").write_text('{"model": ')  # rejected
    shutil.copy(CHANGELOG, run / CHANGELOG.name)  # ignored: provenance, not a point
    return run


def test_ingest_json_names_one_outcome_for_every_file(tmp_path: Path) -> None:
    store = tmp_path / "s"
    ingest_paths([AGG[0]], Store(store), run_id="r")
    run = _tree(tmp_path)
    got = CliRunner().invoke(
        app, ["ingest", str(run), "--run-id", "r", "--store", str(store), "--json"]
    )
    assert got.exit_code == 1, got.output  # one file was rejected
    doc = json.loads(got.stdout)
    accepted = {f["path"] for f in doc["accepted_files"]}
    duplicate = {f["path"] for f in doc["duplicate_files"]}
    auxiliary = {f["path"] for f in doc["auxiliary"]}
    rejected = {r["path"] for r in doc["rejected"]}
    ignored = {i["path"] for i in doc["ignored"]}
    agg = f"bmk_{AIPERF.name}/{AGENTIC.name}"
    assert accepted == {AGG[1].name, agg}
    assert duplicate == {AGG[0].name}
    assert rejected == {"broken.json"}
    # Recognised files with nothing to store say why.
    assert ignored == {
        CHANGELOG.name,
        f"{AIPERF.name}/profile_export.head10.jsonl",
        f"{AIPERF.name}/workload_distribution_summary.txt",
    }
    # The aggregate gives the point; the aiperf export, its CSVs and the commands join it.
    assert auxiliary == {
        f"{AIPERF.name}/{name}"
        for name in (
            "profile_export_aiperf.json",
            "profile_export_aiperf.csv",
            "server_metrics_export.csv",
            "benchmark_command.txt",
            "vllm_command.txt",
        )
    }
    every = {p.relative_to(run).as_posix() for p in run.rglob("*") if p.is_file()}
    outcomes = [accepted, duplicate, auxiliary, rejected, ignored]
    assert set().union(*outcomes) == every
    assert sum(len(o) for o in outcomes) == len(every)  # exactly one each
    aiperf_point = next(f for f in doc["accepted_files"] if f["path"] == agg)["points"]
    assert all(f["points"] == aiperf_point for f in doc["auxiliary"])
    # The store keeps the ignored file with its reason beside the rejects; the catalog counts
    # only the rejects.
    rej = Store(store).rejects(["r"])
    outcome = dict(
        zip(rej.get_column(RejectCol.PATH), rej.get_column(RejectCol.OUTCOME), strict=True)
    )
    assert outcome == {"broken.json": "rejected"} | dict.fromkeys(ignored, "ignored")
    listed = CliRunner().invoke(
        app, ["rejects", "--run", "r", "--store", str(store), "--format", "json"]
    )
    assert {r["path"]: r["outcome"] for r in json.loads(listed.stdout)} == outcome
    runs = json.loads(CliRunner().invoke(app, ["runs", "--store", str(store), "--json"]).stdout)
    assert runs[0]["reject_count"] == 1

"""`paretolens plan | launch | jobs | job | cancel | resume` through the real CLI app."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from ingest.store import Store
from paretolens.cli import app
from runner import service
from runner.jobs import JobState, PointState
from tests.runner import conftest as runner_fixtures
from tests.runner.support import serve_commands, wait_for

# The runner tests' fixtures: an empty store per test whose jobs are stopped when it ends (in
# place of this folder's store of real sweeps), and the fake benchmark's counts folder.
store = runner_fixtures.store
counts = runner_fixtures.counts

MASTER = Path(__file__).resolve().parents[1] / "fixtures/inferencex/configs/nvidia-master.yaml"
cli = CliRunner()


def _plan_file(tmp_path: Path, counts: Path, **extra: Any) -> Path:
    doc = {
        "name": "cli-sweep",
        "defaults": {
            "model": "openai/gpt-oss-120b",
            "model_prefix": "gptoss",
            "framework": "vllm",
            "precision": "fp4",
            "isl": 1024,
            "osl": 1024,
        },
        "arms": [{"tp": 1, "concs": [1, 2]}, {"tp": 2, "concs": [4]}],
        "env": {"FAKE_COUNTS_DIR": str(counts), "FAKE_FAIL": "4/false"},
        "timeout_s": 20,
        "commands": serve_commands(),
        **extra,
    }
    path = tmp_path / "plan.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_plan_lists_the_points_of_an_inferencex_config() -> None:
    res = cli.invoke(
        app, ["plan", str(MASTER), "--config-key", "minimaxm3-fp8-h200-vllm-agentic-mtp"]
    )
    assert res.exit_code == 0, res.output
    assert "plan nvidia-master: 2 arms, 8 points" in res.stdout
    assert "minimaxm3 TP8 EP1 | mtp | kv dram/mooncake" in res.stdout


def test_plan_yaml_round_trips_to_the_same_points(tmp_path: Path) -> None:
    res = cli.invoke(
        app,
        [
            "plan",
            str(MASTER),
            "--config-key",
            "minimaxm3-fp8-h200-vllm-agentic-mtp",
            "--format",
            "yaml",
        ],
    )
    assert res.exit_code == 0, res.output
    out = tmp_path / "plan.yaml"
    out.write_text(res.stdout)
    again = cli.invoke(app, ["plan", str(out), "--format", "json"])
    first = cli.invoke(
        app,
        [
            "plan",
            str(MASTER),
            "--config-key",
            "minimaxm3-fp8-h200-vllm-agentic-mtp",
            "--format",
            "json",
        ],
    )
    assert json.loads(again.stdout)["arms"] == json.loads(first.stdout)["arms"]


def test_a_bad_plan_is_a_usage_error_naming_the_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        yaml.safe_dump(
            {"name": "bad", "arms": [{"model": "m", "isl": 1, "osl": 1, "concs": [4, -1]}]}
        )
    )
    res = cli.invoke(app, ["launch", str(path), "--store", str(tmp_path / "s")])
    assert res.exit_code == 2
    assert f"{path}: arms.0.concs.1: a concurrency must be a positive integer" in " ".join(
        res.stderr.split()
    )


def test_launch_follow_jobs_job_and_logs(tmp_path: Path, store: Store, counts: Path) -> None:
    plan = _plan_file(tmp_path, counts)
    res = cli.invoke(
        app,
        ["launch", str(plan), "--backend", "local", "--poll", "0.1", "--store", str(store.root)],
    )
    assert res.exit_code == 1, res.output  # one point fails
    assert "3/3" in res.stderr  # the progress bar reached the end
    assert "2 succeeded, 1 failed" in res.stderr
    job_id = service.list_jobs(store)[0].id
    assert f"job {job_id}: plan cli-sweep on local, failed" in " ".join(res.stdout.split())

    listing = cli.invoke(app, ["jobs", "--store", str(store.root), "--json"])
    assert [(j["id"], j["state"], j["plan_name"]) for j in json.loads(listing.stdout)] == [
        (job_id, "failed", "cli-sweep")
    ]
    detail = json.loads(
        cli.invoke(app, ["job", job_id, "--store", str(store.root), "--json"]).stdout
    )
    assert [(p["conc"], p["state"], p["exit_code"]) for p in detail["points"]] == [
        (1, "succeeded", 0),
        (2, "succeeded", 0),
        (4, "failed", 3),
    ]
    assert all(p["elapsed_s"] > 0 for p in detail["points"])
    first = detail["points"][0]["point_id"]
    log = cli.invoke(app, ["job", job_id, "--log", first, "--store", str(store.root)])
    assert "fake bench: model=openai/gpt-oss-120b conc=1 tp=1" in log.stdout
    table = cli.invoke(app, ["jobs", "--store", str(store.root)], env={"COLUMNS": "250"})
    assert job_id in table.stdout and "cli-sweep" in table.stdout


def test_launch_no_wait_then_cancel(tmp_path: Path, store: Store, counts: Path) -> None:
    plan = _plan_file(
        tmp_path, counts, env={"FAKE_COUNTS_DIR": str(counts), "FAKE_HANG": "1/false"}
    )
    res = cli.invoke(
        app, ["launch", str(plan), "--no-wait", "--poll", "0.1", "--store", str(store.root)]
    )
    assert res.exit_code == 0, res.output
    job_id = res.stdout.strip()
    wait_for(lambda: any(counts.glob("*.grandchild")), 30, "the first point's benchmark to hang")
    res = cli.invoke(app, ["cancel", job_id, "--store", str(store.root)])
    assert res.exit_code == 0, res.output
    st = service.wait_job(store, job_id, timeout_s=30, poll_s=0.1)
    assert st.state == JobState.CANCELLED
    assert [p.state for p in st.record.points] == [PointState.CANCELLED] * 3
    assert st.record.points[0].reason == "stopped by SIGTERM"
    assert st.record.points[1].reason == "cancelled before it started"
    assert not (counts / st.record.points[1].point_id).exists()  # never ran


def test_unknown_jobs_and_nothing_to_resume(store: Store) -> None:
    res = cli.invoke(app, ["job", "j-20260101-000000-abcdef", "--store", str(store.root)])
    assert res.exit_code == 2
    assert "no job 'j-20260101-000000-abcdef'" in res.stderr
    res = cli.invoke(app, ["job", "../../etc", "--store", str(store.root)])
    assert res.exit_code == 2
    res = cli.invoke(app, ["resume", "--store", str(store.root)])
    assert res.exit_code == 0
    assert "resumed 0 job(s)" in res.stderr

"""Helpers of the runner tests: fake serve/bench commands, settings, process checks, cleanup.

Every process the tests start listens on 127.0.0.1 only."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from typer.testing import CliRunner

from ingest.store import Store
from paretolens.cli import app
from runner.jobs import JobTable
from runner.locks import is_held
from runner.plan import Plan
from runner.procs import stop_point
from runner.sources import plan_from_pruned

FAKES = Path(__file__).resolve().parent / "fakes"
FAKE_SERVER = str(FAKES / "fake_server.py")
FAKE_BENCH = str(FAKES / "fake_bench.py")
HOST = "127.0.0.1"


@dataclass
class FakeSettings:
    """Implements runner.service.LaunchSettings."""

    token: SecretStr | None = None
    launch_enabled: bool = True
    host: str = "127.0.0.1"
    github_token: SecretStr | None = None
    github_api_url: str = "https://api.github.com"
    github_repo: str = "SemiAnalysisAI/InferenceX"


def serve_commands(**overrides: Any) -> dict[str, Any]:
    """Plan `commands` running the fake server and the fake benchmark."""
    cmds: dict[str, Any] = {
        "serve": ["{python}", FAKE_SERVER, "--port", "{port}", "--model", "{model}"],
        "benchmark": [
            "{python}",
            FAKE_BENCH,
            "--model",
            "{model}",
            "--max-concurrency",
            "{conc}",
            "--port",
            "{port}",
            "--result-dir",
            "{result_dir}",
            "--result-filename",
            "{result_filename}.json",
        ],
        "health_url": f"http://{HOST}:{{port}}/health",
        "metrics_url": f"http://{HOST}:{{port}}/metrics",
        "port": "auto",
        "ready_timeout_s": 20,
        "health_interval_s": 0.05,
        "grace_s": 0.5,
    }
    cmds.update(overrides)
    return cmds


def alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def wait_for(cond: Any, timeout: float, what: str, interval: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def stop_jobs(store: Store) -> None:
    """Stop every worker and executor the store's jobs started (by their recorded pids)."""
    table = JobTable(store)
    for job in table.list():
        pid = job.worker.get("pid")
        if isinstance(pid, int) and is_held(table.job_dir(job.id) / "worker.lock"):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for p in job.points:
            stop_point(table.point_dir(job.id, p.point_id), grace_s=0.2, host=socket.gethostname())


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FAST = FIXTURES / "inferencex/bench_serving_random/minimax-m2.5"


def prune_output(tmp_path: Path) -> dict[str, Any]:
    """Ingest the fast sweep and return `paretolens prune --format json` for it."""
    fast = tmp_path / "fast"
    fast.mkdir()
    for f in FAST.glob("minimax_m25_vllm_*_isl1024_osl128_*.json"):
        shutil.copy(f, fast / f.name)
    fast_store = tmp_path / "fast-store"
    runner = CliRunner()
    res = runner.invoke(
        app, ["ingest", str(fast), "--run-id", "fast-sweep", "--store", str(fast_store), "--json"]
    )
    assert res.exit_code == 0, res.output
    res = runner.invoke(
        app, ["prune", "--run", "fast-sweep", "--store", str(fast_store), "--format", "json"]
    )
    assert res.exit_code == 0, res.output
    doc: dict[str, Any] = json.loads(res.stdout)
    return doc


def full_sweep_plan(doc: dict[str, Any], counts: Path) -> Plan:
    base = {
        "name": "minimax-full",
        "defaults": {"precision": "fp8", "hw": "h200", "model_prefix": "minimaxm2.5"},
        "timeout_s": 5,
        "env": {
            "FAKE_COUNTS_DIR": str(counts),
            "FAKE_FAIL": "16/true",  # DEP8 c16 fails
            "FAKE_HANG": "64/false",  # TEP8 c64 hangs past the timeout
            "FAKE_SLEEP": "0.4",
        },
        "commands": serve_commands(),
    }
    return plan_from_pruned(doc, base=base, source="prune.json")

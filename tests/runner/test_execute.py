"""The point executor on real processes: readiness, scrapes, logs, results, failures, timeouts."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from ingest.store import Store
from runner.backends.base import BackendContext
from runner.backends.local import LocalBackend
from runner.execute import METRICS_AFTER, METRICS_BEFORE, PointSpec, read_outcome, run_point
from runner.jobs import JobTable, PointState
from runner.plan import parse_plan
from runner.procs import stop_point
from tests.runner.support import FAKE_BENCH, alive, serve_commands, wait_for


def _spec(
    store: Store,
    counts: Path,
    commands: dict[str, Any],
    env: dict[str, str] | None = None,
    **plan: Any,
) -> PointSpec:
    doc = {
        "name": "exec",
        "defaults": {
            "model": "openai/gpt-oss-120b",
            "model_prefix": "gptoss",
            "framework": "vllm",
            "precision": "fp4",
            "isl": 1024,
            "osl": 1024,
        },
        "arms": [{"tp": 2, "concs": [8], "env": env or {}}],
        "env": {"FAKE_COUNTS_DIR": str(counts)},
        "timeout_s": 5,
        "commands": commands,
        **plan,
    }
    table = JobTable(store)
    job = table.create(parse_plan(doc), "local")
    backend = LocalBackend(BackendContext(store, table))
    path = backend.write_spec(job, job.plan.points()[0])
    return PointSpec.model_validate_json(path.read_text())


def _metric(text: str, name: str) -> float:
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name == name:
                return float(s.value)
    raise KeyError(name)


def test_a_point_serves_waits_scrapes_benchmarks_and_collects(store: Store, counts: Path) -> None:
    spec = _spec(store, counts, serve_commands())
    out = run_point(spec)
    pdir = Path(spec.point_dir)
    assert out.state == PointState.SUCCEEDED, out.reason
    assert out.exit_code == 0
    result = f"{spec.values['result_filename']}.json"
    assert out.result_files == [result]
    doc = json.loads((pdir / "results" / result).read_text())
    assert (doc["max_concurrency"], doc["completed"], doc["model_id"]) == (
        8,
        80,
        "openai/gpt-oss-120b",
    )
    # the scrapes bracket the benchmark: 4 requests of 2 drafts each
    before = (pdir / "results" / METRICS_BEFORE).read_text()
    after = (pdir / "results" / METRICS_AFTER).read_text()
    name = "vllm:spec_decode_num_drafts_total"
    assert _metric(after, name) - _metric(before, name) == 8.0
    assert "fake bench: model=openai/gpt-oss-120b conc=8 tp=2" in (pdir / "stdout.log").read_text()
    assert "on 127.0.0.1:" in (pdir / "serve.stdout.log").read_text()
    # the server was stopped with the point
    state = json.loads((pdir / "state.json").read_text())
    assert not any(alive(pg) for pg in state["pgids"])
    assert read_outcome(pdir) == out
    assert run_point(spec) == out  # an outcome is final: running again returns it


def test_values_reach_the_command_as_single_arguments(
    store: Store, counts: Path, tmp_path: Path
) -> None:
    argv_file = tmp_path / "argv.json"
    code = "import json, sys; json.dump(sys.argv[1:], open(sys.argv[1], 'w'))"
    script = tmp_path / "dump_argv.py"
    script.write_text(code)
    spec = _spec(
        store,
        counts,
        {
            "benchmark": [
                "{python}",
                str(script),
                str(argv_file),
                "--model={model}",
                "{model} {conc}",
                "{{literal}}",
            ]
        },
    )
    out = run_point(spec)
    assert out.state == PointState.FAILED  # it writes no result file
    assert "wrote no result file" in out.reason
    assert json.loads(argv_file.read_text()) == [
        str(argv_file),
        "--model=openai/gpt-oss-120b",
        "openai/gpt-oss-120b 8",
        "{literal}",
    ]


def test_script_mode_sees_the_inferencex_environment(store: Store, counts: Path) -> None:
    spec = _spec(store, counts, {"script": ["{python}", FAKE_BENCH, "--no-requests"]})
    out = run_point(spec)
    assert out.state == PointState.SUCCEEDED, out.reason
    env = spec.env
    assert {
        k: env[k]
        for k in ("MODEL", "TP", "EP_SIZE", "CONC", "ISL", "OSL", "SPEC_DECODING", "PRECISION")
    } == {
        "MODEL": "openai/gpt-oss-120b",
        "TP": "2",
        "EP_SIZE": "1",
        "CONC": "8",
        "ISL": "1024",
        "OSL": "1024",
        "SPEC_DECODING": "none",
        "PRECISION": "fp4",
    }
    assert out.result_files == [f"{env['RESULT_FILENAME']}.json"]
    assert env["RESULT_FILENAME"].startswith(
        "gptoss_1k1k_fp4_vllm_tp2-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc8_local_pt-"
    )


def test_secrets_do_not_reach_the_benchmark(
    store: Store, counts: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")
    monkeypatch.setenv("PARETOLENS_TOKEN", "launch-secret")
    dump = tmp_path / "env.json"
    script = tmp_path / "dump_env.py"
    script.write_text("import json, os, sys; json.dump(dict(os.environ), open(sys.argv[1], 'w'))")
    run_point(_spec(store, counts, {"script": ["{python}", str(script), str(dump)]}))
    env = json.loads(dump.read_text())
    assert "GITHUB_TOKEN" not in env and "PARETOLENS_TOKEN" not in env
    assert env["CONC"] == "8"


def test_a_failing_benchmark_keeps_its_exit_code_and_stderr(store: Store, counts: Path) -> None:
    spec = _spec(store, counts, serve_commands(), env={"FAKE_FAIL": "8/false"})
    out = run_point(spec)
    assert out.state == PointState.FAILED
    assert out.exit_code == 3
    assert (
        out.reason
        == "benchmark exited with code 3: fake bench: RuntimeError: 12 of 40 requests failed (CUDA out of memory)"
    )
    assert out.result_files == []


def test_a_timed_out_benchmark_is_killed_with_its_children(store: Store, counts: Path) -> None:
    spec = _spec(store, counts, serve_commands(), env={"FAKE_HANG": "8/false"}, timeout_s=1.0)
    out = run_point(spec)
    assert out.state == PointState.TIMED_OUT
    assert "timeout_s=1 s" in out.reason
    grandchild = int((counts / f"{spec.point_id}.grandchild").read_text())
    wait_for(lambda: not alive(grandchild), 5, "the benchmark's child to die")
    state = json.loads((Path(spec.point_dir) / "state.json").read_text())
    assert not any(alive(pg) for pg in state["pgids"])


def test_a_server_that_dies_before_ready_fails_the_point(store: Store, counts: Path) -> None:
    spec = _spec(store, counts, serve_commands(), env={"FAKE_SERVER_MODE": "crash"})
    out = run_point(spec)
    assert out.state == PointState.FAILED
    assert out.reason.startswith("server exited with code 4 before http://127.0.0.1:")
    assert "failed to allocate KV cache" in (Path(spec.point_dir) / "serve.stderr.log").read_text()
    assert not (counts / spec.point_id).exists()  # the benchmark never started


def test_a_server_that_never_gets_ready_fails_the_point(store: Store, counts: Path) -> None:
    spec = _spec(store, counts, serve_commands(ready_timeout_s=0.5), env={"FAKE_READY_DELAY": "30"})
    out = run_point(spec)
    assert out.state == PointState.FAILED
    assert "not ready after 0.5 s (last: HTTP 503)" in out.reason


def test_a_missing_program_is_a_failed_point(store: Store, counts: Path) -> None:
    out = run_point(_spec(store, counts, {"benchmark": ["/nonexistent/vllm", "bench"]}))
    assert out.state == PointState.FAILED
    assert out.reason.startswith("cannot start the benchmark command: [Errno 2]")


def test_stopping_an_executor_cancels_the_point_and_kills_everything(
    store: Store, counts: Path
) -> None:
    spec = _spec(store, counts, serve_commands(), env={"FAKE_HANG": "8/false"}, timeout_s=60)
    pdir = Path(spec.point_dir)
    proc = subprocess.Popen(
        [sys.executable, "-m", "runner.execute", str(pdir / "spec.json")], start_new_session=True
    )
    try:
        wait_for(
            lambda: (counts / f"{spec.point_id}.grandchild").exists(), 20, "the benchmark to start"
        )
        grandchild = int((counts / f"{spec.point_id}.grandchild").read_text())
        pgids = json.loads((pdir / "state.json").read_text())["pgids"]
        os.kill(proc.pid, signal.SIGTERM)  # two cancels at once (CLI and worker) ...
        assert stop_point(pdir, grace_s=0.5, host=socket.gethostname())  # ... still one clean-up
        assert proc.wait(timeout=10) == 1
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    out = read_outcome(pdir)
    assert out is not None and out.state == PointState.CANCELLED
    assert out.reason == "stopped by SIGTERM"
    wait_for(lambda: not alive(grandchild), 5, "the grandchild to die")
    assert not any(alive(pg) for pg in pgids)


def test_a_stop_before_the_executor_starts_is_seen_by_it(store: Store, counts: Path) -> None:
    spec = _spec(store, counts, serve_commands())
    pdir = Path(spec.point_dir)
    # a cancel that arrives before the executor wrote its state signals nobody ...
    assert not stop_point(pdir, grace_s=0.5, host=socket.gethostname())
    # ... but leaves the flag the executor reads before it starts anything
    out = run_point(spec)
    assert (out.state, out.reason) == (PointState.CANCELLED, "cancelled before it started")
    assert not (pdir / "serve.stdout.log").exists() and not (counts / spec.point_id).exists()

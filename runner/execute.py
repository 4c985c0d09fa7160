"""Run one point: start the server, wait for readiness, scrape, benchmark, scrape, stop, collect.

The same code runs a point for the local backend (as a detached process,
``python -m runner.execute SPEC``) and as a Slurm array task for the slurm backend. It writes
everything into the point's directory, never into the job record, so it needs no lock shared
with the worker and works on a compute node with the store on a shared file system:

* ``state.json``: executor pid, host, the process groups it started (so a cancel from another
  process, or a restarted worker, can stop them);
* ``outcome.json``: the final state, exit code, reason and result files (written once, last);
* ``executor.lock``: held while the executor lives.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from types import FrameType
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from runner.jobs import PointState, now
from runner.locks import LockHeld, hold, read_json, write_json
from runner.probes import ProbeError, scrape, wait_ready
from runner.procs import SECRET_ENV, STOP_FLAG, group_alive, kill_group, spawn
from runner.templates import render

METRICS_BEFORE = "metrics_before.prom"
METRICS_AFTER = "metrics_after.prom"


class PointSpec(BaseModel):
    """Everything an executor needs to run one point (written by the worker as spec.json)."""

    model_config = ConfigDict(extra="forbid")

    job_id: str
    point_id: str
    label: str
    point_dir: str
    serve: list[str] | None
    benchmark: list[str] | None
    script: list[str] | None
    values: dict[str, str | None]
    env: dict[str, str]
    port: int | Literal["auto"]
    health_url: str | None
    metrics_url: str | None
    ready_timeout_s: float
    health_interval_s: float
    timeout_s: float
    grace_s: float
    workdir: str | None
    result_glob: str


class Outcome(BaseModel):
    """How a point ended (outcome.json)."""

    model_config = ConfigDict(extra="forbid")

    state: PointState
    exit_code: int | None = None
    reason: str = ""
    started_at: datetime
    finished_at: datetime
    result_files: list[str] = []
    notes: list[str] = []


class _Stop(BaseException):
    """A termination signal arrived (cancel, Slurm preemption or time limit)."""


def results_dir(point_dir: Path) -> Path:
    """Where a point's result files (and metrics scrapes) go: the directory that is ingested."""
    return point_dir / "results"


def read_outcome(point_dir: Path) -> Outcome | None:
    """The outcome of a point, or None while it has none."""
    doc = read_json(point_dir / "outcome.json")
    return None if doc is None else Outcome.model_validate(doc)


def execute(spec_path: str) -> dict[str, Any]:
    """Run the point described by `spec_path` and return its outcome as a dict."""
    spec = PointSpec.model_validate_json(Path(spec_path).read_text())
    return run_point(spec).model_dump(mode="json")


def run_point(spec: PointSpec) -> Outcome:
    """Run one point to its outcome. Safe to call again: a written outcome is returned as is.

    Raises:
        LockHeld: when another executor is running this point.
    """
    point_dir = Path(spec.point_dir)
    point_dir.mkdir(parents=True, exist_ok=True)
    with hold(point_dir / "executor.lock", wait=False):
        done = read_outcome(point_dir)
        if done is not None:
            return done
        with _signals_stop():
            outcome = _Run(spec, point_dir).run()
        write_json(point_dir / "outcome.json", outcome.model_dump(mode="json"))
        return outcome


@contextlib.contextmanager
def _signals_stop() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    stopping = False

    def handler(signum: int, frame: FrameType | None) -> None:
        # Only the first signal interrupts: later ones (a cancel from the CLI and one from the
        # worker) must not break the clean-up the first one started.
        nonlocal stopping
        if not stopping:
            stopping = True
            raise _Stop(signal.Signals(signum).name)

    old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


class _Run:
    def __init__(self, spec: PointSpec, point_dir: Path) -> None:
        self.spec = spec
        self.dir = point_dir
        self.results = results_dir(point_dir)
        self.started = now()
        self.procs: list[subprocess.Popen[bytes]] = []
        self.notes: list[str] = []

    def run(self) -> Outcome:
        self.results.mkdir(parents=True, exist_ok=True)
        state, code, reason = PointState.FAILED, None, ""
        try:
            state, code, reason = self._steps()
        except _Stop as stop:
            state, reason = PointState.CANCELLED, f"stopped by {stop.args[0]}"
        finally:
            self._stop_all()
        files = self._collect()
        if state == PointState.SUCCEEDED and not files:
            state = PointState.FAILED
            reason = f"exited 0 but wrote no result file matching {self.spec.result_glob} into {self.results}"
        return Outcome(
            state=state,
            exit_code=code,
            reason=reason,
            started_at=self.started,
            finished_at=now(),
            result_files=files,
            notes=self.notes,
        )

    def _steps(self) -> tuple[PointState, int | None, str]:
        spec = self.spec
        port = _free_port() if spec.port == "auto" else spec.port
        values = {**spec.values, "port": str(port)}
        env = {k: v for k, v in os.environ.items() if k not in SECRET_ENV}
        env.update(spec.env)
        env["PORT"] = str(port)
        cwd = Path(spec.workdir) if spec.workdir else self.results
        self._write_state(port)
        if self._stopped():
            return PointState.CANCELLED, None, "cancelled before it started"

        server = None
        if spec.serve is not None:
            try:
                server = self._spawn(render(spec.serve, values), cwd, env, "serve")
            except OSError as exc:
                return PointState.FAILED, None, f"cannot start the serve command: {exc}"
        if spec.health_url is not None:
            url = render([spec.health_url], values)[0]
            why = wait_ready(
                url,
                timeout_s=spec.ready_timeout_s,
                interval_s=spec.health_interval_s,
                server=server,
            )
            if why is not None:
                return PointState.FAILED, None, why
        metrics_url = render([spec.metrics_url], values)[0] if spec.metrics_url else None
        if metrics_url is not None:
            self._scrape(metrics_url, METRICS_BEFORE)

        argv = spec.benchmark if spec.benchmark is not None else spec.script
        assert argv is not None
        if self._stopped():
            return PointState.CANCELLED, None, "cancelled before the benchmark started"
        try:
            bench = self._spawn(render(argv, values), cwd, env, "")
        except OSError as exc:
            return PointState.FAILED, None, f"cannot start the benchmark command: {exc}"
        try:
            code = bench.wait(timeout=spec.timeout_s)
        except subprocess.TimeoutExpired:
            kill_group(bench.pid, spec.grace_s, leader=bench)
            return (
                PointState.TIMED_OUT,
                None,
                f"benchmark still running after timeout_s={spec.timeout_s:g} s; its process group was killed",
            )
        if metrics_url is not None:
            self._scrape(metrics_url, METRICS_AFTER)
        if code != 0:
            tail = _last_line(self.dir / "stderr.log")
            return (
                PointState.FAILED,
                code,
                f"benchmark exited with code {code}" + (f": {tail}" if tail else ""),
            )
        return PointState.SUCCEEDED, 0, ""

    def _stopped(self) -> bool:
        return (self.dir / STOP_FLAG).exists()

    def _spawn(
        self, argv: list[str], cwd: Path, env: dict[str, str], role: str
    ) -> subprocess.Popen[bytes]:
        prefix = f"{role}." if role else ""
        proc = spawn(
            argv,
            cwd=cwd,
            env=env,
            stdout=self.dir / f"{prefix}stdout.log",
            stderr=self.dir / f"{prefix}stderr.log",
        )
        self.procs.append(proc)
        self._write_state(int(env["PORT"]))
        return proc

    def _write_state(self, port: int) -> None:
        write_json(
            self.dir / "state.json",
            {
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "pgids": [p.pid for p in self.procs],
                "port": port,
                "started_at": self.started.isoformat(),
            },
        )

    def _scrape(self, url: str, name: str) -> None:
        try:
            text = scrape(url)
        except ProbeError as exc:
            self.notes.append(f"metrics scrape {name} of {url} failed: {exc}")
            return
        (self.results / name).write_text(text)

    def _stop_all(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None or group_alive(proc.pid):
                kill_group(proc.pid, self.spec.grace_s, leader=proc)

    def _collect(self) -> list[str]:
        if self.spec.workdir:
            stem = self.spec.values.get("result_filename") or ""
            for f in sorted(Path(self.spec.workdir).glob(f"{stem}*")) if stem else []:
                if f.is_file():
                    shutil.move(str(f), self.results / f.name)
        return sorted(f.name for f in self.results.glob(self.spec.result_glob) if f.is_file())


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _last_line(path: Path, limit: int = 300) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 4096))
            lines = [
                ln.strip() for ln in fh.read().decode("utf-8", "replace").splitlines() if ln.strip()
            ]
    except FileNotFoundError:
        return ""
    return lines[-1][:limit] if lines else ""


def main(argv: list[str] | None = None) -> int:
    """``python -m runner.execute SPEC.json``: run one point; exit 0 when it succeeded.

    ``python -m runner.execute --array LIST INDEX`` runs the point of line INDEX+1 of LIST (a
    Slurm array task: INDEX is ``$SLURM_ARRAY_TASK_ID``).
    """
    args = sys.argv[1:] if argv is None else argv
    if len(args) == 3 and args[0] == "--array" and args[2].isdigit():
        lines = Path(args[1]).read_text().splitlines()
        if int(args[2]) >= len(lines):
            print(f"{args[1]} has no line {int(args[2]) + 1}", file=sys.stderr)
            return 2
        args = [lines[int(args[2])]]
    if len(args) != 1:
        print("usage: python -m runner.execute SPEC.json | --array LIST INDEX", file=sys.stderr)
        return 2
    try:
        outcome = execute(args[0])
    except LockHeld:
        print(f"another executor is running {args[0]}", file=sys.stderr)
        return 3
    return 0 if outcome["state"] == PointState.SUCCEEDED else 1


if __name__ == "__main__":
    sys.exit(main())

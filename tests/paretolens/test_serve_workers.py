"""`paretolens serve --workers 2`: two gunicorn processes over one store. A run ingested by a
separate process while they serve is seen by both on their next request: the same page and the
same points, whichever process answers (each process first cached the page without the run).

The process that answered a request is read from gunicorn's access log (its `%(p)s` field:
`<pid>`), one line per request in the order the requests were sent one at a time."""

from __future__ import annotations

import csv
import io
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dashboard.app import layout_url
from ingest.bundled import SAMPLES_DIR
from ingest.pipeline import ingest_paths
from ingest.store import Store
from tests.reliability import _load_client as lc

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform == "win32", reason="gunicorn needs a POSIX system"),
]

KIMI = "kimik2.5-mi355x-mtp"
# tput_per_gpu of the three process_result aggregates of data/samples/kimik2.5-mi355x-mtp
# (conc 4, 32 and 64), as the files say.
KIMI_TPUT = [55.62670336516291, 157.12165563281164, 234.47462632067425]
PAGE = f"/inference?unofficialRun={KIMI}"
POINTS = f"/export/points.csv?unofficialRun={KIMI}"
CLI = Path(sys.executable).with_name("paretolens")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """The serve process, its base URL and its access log."""

    def __init__(self, proc: subprocess.Popen[bytes], base: str, log: Path) -> None:
        self.proc, self.base, self.log = proc, base, log

    def _lines(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    def get(self, path: str, body: Any = None) -> tuple[int, str, str]:
        """One request on a new connection (a POST of `body` as JSON when given): (status,
        body, pid of the process that answered)."""
        before = len(self._lines())
        try:
            data = None if body is None else json.dumps(body).encode()
            headers = {} if body is None else {"Content-Type": "application/json"}
            req = urllib.request.Request(self.base + path, data=data, headers=headers)
            with urllib.request.urlopen(req, timeout=60) as resp:
                status, body = resp.status, resp.read().decode()
        except urllib.error.HTTPError as exc:
            status, body = exc.code, exc.read().decode()
        deadline = time.monotonic() + 10
        while len(lines := self._lines()) <= before:
            assert time.monotonic() < deadline, "gunicorn logged no line for the request"
            time.sleep(0.02)
        return status, body, lines[before].split()[0]

    def through_both(
        self, path: str, tries: int = 80, body: Any = None
    ) -> dict[str, tuple[int, str]]:
        """`path` requested (posted `body`) until both processes answered it: pid -> (status,
        body)."""
        seen: dict[str, tuple[int, str]] = {}
        for _ in range(tries):
            status, text, pid = self.get(path, body)
            seen.setdefault(pid, (status, text))
            if len(seen) == 2:
                return seen
        raise AssertionError(f"{tries} requests of {path} all reached one process: {list(seen)}")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    root = tmp_path / "store"
    ingest_paths([SAMPLES_DIR / "gpt-oss-120b-disagg"], Store(root), run_id="gpt-oss-120b-disagg")
    port = free_port()
    log = tmp_path / "access.log"
    env = {
        **os.environ,
        # gunicorn reads extra options from here: an access log naming the answering process
        "GUNICORN_CMD_ARGS": f"--access-logfile {log} --access-logformat '%(p)s %(s)s %(U)s'",
    }
    env.pop("PARETOLENS_TOKEN", None)
    env["PARETOLENS_STATE_DIR"] = str(tmp_path / "state")  # what the two processes share
    cmd = [str(CLI), "serve", "--workers", "2", "--threads", "2", "--store", str(root)]
    out = tmp_path / "serve.out"
    with out.open("wb") as sink:
        proc = subprocess.Popen(
            [*cmd, "--port", str(port)], env=env, stdout=sink, stderr=subprocess.STDOUT
        )
    srv = Server(proc, f"http://127.0.0.1:{port}", log)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, out.read_text()
            try:
                with urllib.request.urlopen(srv.base + "/", timeout=5):
                    break
            except OSError:
                assert time.monotonic() < deadline, "the server did not answer within 120 s"
                time.sleep(0.3)
        yield srv
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


LAYOUT = layout_url(PAGE)  # the layout the page asks for


def test_both_processes_show_a_run_ingested_while_they_serve(
    server: Server, tmp_path: Path
) -> None:
    # The page as a browser loads it: its HTML, then the layout the page asks for.
    # Before the ingest both answer the page 404 (a run not in the store, one rule on every
    # route) and its layout with the page that says so.
    page = server.through_both(PAGE)
    assert [s for s, _ in page.values()] == [404, 404]
    before = server.through_both(LAYOUT)
    assert [s for s, _ in before.values()] == [200, 200]
    assert all(f"Run {KIMI} not in the store" in body for _, body in before.values())

    # A separate process ingests the run (as a CI runner would), while both serve.
    ingest = [str(CLI), "ingest", str(SAMPLES_DIR / KIMI), "--run-id", KIMI]
    done = subprocess.run(
        [*ingest, "--store", str(tmp_path / "store")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr

    pages = server.through_both(PAGE)
    layouts = server.through_both(LAYOUT)
    for answers in (pages, layouts):
        assert [s for s, _ in answers.values()] == [200, 200]
        assert not any("not in the store" in body for _, body in answers.values())
    assert len({body for _, body in layouts.values()}) == 1, "the two processes disagree"

    points = server.through_both(POINTS)
    bodies = {body for _, body in points.values()}
    assert [s for s, _ in points.values()] == [200, 200] and len(bodies) == 1
    rows = list(csv.DictReader(io.StringIO(bodies.pop())))
    assert sorted(float(r["tput_per_gpu (tok/s/GPU)"]) for r in rows) == pytest.approx(
        KIMI_TPUT, rel=1e-12
    )
    assert {r["run_id"] for r in rows} == {KIMI}


def test_a_chart_answer_one_process_computed_the_other_finds(
    server: Server, tmp_path: Path
) -> None:
    """A control change on a run page (the main chart's callback, as the page posts it): the
    process that gets it first computes the answer and keeps it in the state directory the two
    share; the other answers the same bytes from that file, without writing it again."""
    run = "gpt-oss-120b-disagg"
    page = f"/inference?unofficialRun={run}"
    status, text, _pid = server.get(layout_url(page))
    assert status == 200
    controls = lc._controls(json.loads(text))
    deps = json.loads(server.get("/_dash-dependencies")[1])
    dep = next(d for d in deps if "main-chart.figure" in d["output"])
    values, k = lc._changed(random.Random(2), controls)
    body = lc._change(dep, controls, values, k, "?unofficialRun=" + run)
    answers = tmp_path / "state" / "answers"
    status, first, pid = server.get("/_dash-update-component", body)
    assert status == 200 and '"main-chart"' in first
    (kept,) = list(answers.iterdir())
    inode = kept.stat().st_ino
    both = server.through_both("/_dash-update-component", body=body)
    assert {s for s, _ in both.values()} == {200} and {b for _, b in both.values()} == {first}
    assert pid in both and [f.stat().st_ino for f in answers.iterdir()] == [inode]

"""The defects of issue 17 (an outside attack and crash campaign), one test each, and the
hardening that came with them. Each test failed before its fix.

1. run ids with spaces or brackets (one rule at ingest, tolerated on read);
2. a kill after the series rename and before the points rename doubled the series;
3. cancelling an interrupted job cancelled its finished points and never ingested them;
4. CSV exports wrote formulas unchanged;
5. result-file text became live links in the compare markdown;
6. special files (/dev/zero, FIFOs) and a size limit that trusted the reported size;
7. unhandled 500s and a log record of a megabyte;
8. any Host header was answered (DNS rebinding);
9. string fields without a length cap; request and query sizes; wrong tokens not slowed down.
"""

from __future__ import annotations

import io
import json
import logging
import os
import shutil
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import polars as pl
import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from analysis.comparison.compare import compare_runs, comparison_markdown
from analysis.tables import csv_text, md_cell
from dashboard import auth
from dashboard.app import layout_url
from ingest import pipeline as ingest_pipeline
from ingest.contract.col import Col
from ingest.contract.schema import TIMESERIES_SCHEMA, SeriesCol
from ingest.normalize.rules import MAX_STRING_CHARS
from ingest.pipeline import ingest_paths
from ingest.run_ids import InvalidRunId, suggest_run_id
from ingest.sources import files
from ingest.store import Store
from paretolens.settings import Settings
from tests.reliability import figures
from tests.reliability._support import FIXTURES
from views import urls

AGG = FIXTURES / "inferencex" / "agg_fixed_seq"
LEGACY = "sweep 2026-01 (retry)"
TOKEN = "pl-tok-defects-5e1a9c7b3d"


def _settings(root: Path, **kw: Any) -> Settings:
    base: dict[str, Any] = {"store": root, "token": SecretStr(TOKEN), "launch_enabled": True}
    return Settings(**{**base, **kw})


def _client(root: Path, **kw: Any) -> Any:
    from dashboard.app import create_app

    return create_app(Store(root), _settings(root, **kw)).server.test_client()


@pytest.fixture(scope="module")
def legacy_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store written before the run id rule: it holds a run whose id has a space and
    brackets (the CLI's default id was the directory name), beside an ordinary one."""
    root = tmp_path_factory.mktemp("legacy")
    src = root / "in" / LEGACY
    shutil.copytree(AGG, src)
    mp = pytest.MonkeyPatch()
    mp.setattr(ingest_pipeline, "check_run_id", lambda rid: rid)  # the store of before
    try:
        ingest_paths([src], Store(root / "store"))
    finally:
        mp.undo()
    ingest_paths([AGG], Store(root / "store"), run_id="mtp")
    assert LEGACY in Store(root / "store").run_ids()
    return root / "store"


# ---- 1. run ids -------------------------------------------------------------------------------


def test_ingest_refuses_a_run_id_with_spaces_and_suggests_one(tmp_path: Path) -> None:
    src = tmp_path / LEGACY
    shutil.copytree(AGG, src)
    store = Store(tmp_path / "store")
    with pytest.raises(InvalidRunId, match=r"Pass --run-id sweep-2026-01-retry") as exc:
        ingest_paths([src], store)
    assert exc.value.suggestion == "sweep-2026-01-retry"
    with pytest.raises(InvalidRunId):
        ingest_paths([AGG], store, run_id="a/b")
    assert store.run_ids() == [] and store.version() == -1  # nothing written
    assert suggest_run_id("..((x))..") == "x" and suggest_run_id("()") == "run"

    from paretolens.cli import app

    out = CliRunner().invoke(app, ["ingest", str(src), "--store", str(tmp_path / "store")])
    assert out.exit_code == 2, out.output
    assert "--run-id sweep-2026-01-retry" in " ".join(out.output.split())
    ok = CliRunner().invoke(
        app,
        ["ingest", str(src), "--run-id", "sweep-2026-01-retry", "--store", str(tmp_path / "store")],
    )
    assert ok.exit_code == 0, ok.output
    figures.add("defects", "checks")


def test_a_stored_run_id_with_spaces_still_serves_the_index_and_its_page(
    legacy_store: Path,
) -> None:
    client = _client(legacy_store)
    index = client.get(layout_url("/"))
    assert index.status_code == 200, index.get_data(as_text=True)[:300]
    assert LEGACY in index.get_data(as_text=True)
    page = urls.runs(LEGACY)
    layout = client.get(layout_url(page))
    body = layout.get_data(as_text=True)
    assert layout.status_code == 200 and "ignored unofficialRun" not in body
    assert "frontier" in body.lower()
    csv = client.get(urls.export("points", "csv", page.partition("?")[2]))
    assert csv.status_code == 200 and csv.get_data(as_text=True).count("\n") == 4
    cmp = client.get(f"/compare?base={quote(LEGACY)}&candidate=mtp")
    assert cmp.status_code == 200
    figures.add("defects", "checks")


# ---- 2. series after a kill between the series and points renames ----------------------------


def test_a_kill_after_the_series_rename_does_not_double_the_series(tmp_path: Path) -> None:
    ref = Store(tmp_path / "ref")
    ingest_paths([AGG], ref, run_id="r")
    points = ref.points(["r"])
    series = pl.DataFrame(
        [
            {
                SeriesCol.RUN_ID: "r",
                SeriesCol.POINT_ID: pid,
                SeriesCol.METRIC: "kv_cache_usage_pct",
                SeriesCol.LABELS: "",
                SeriesCol.T: float(t),
                SeriesCol.VALUE: float(t * 10),
            }
            for pid in points.get_column(Col.POINT_ID).to_list()
            for t in range(5)
        ],
        schema=pl.from_arrow(TIMESERIES_SCHEMA.empty_table()).schema,  # type: ignore[union-attr]
    )
    sources = sorted(set(points.get_column(Col.SOURCE_PATH).to_list()))
    store = Store(tmp_path / "store")

    class Killed(BaseException):
        pass

    # The process dies with the points and series staged, before the commit: nothing is stored.
    with pytest.raises(Killed), store.lock():
        store.replace_run_rows("r", points, series, sources)
        raise Killed
    assert store.timeseries(["r"]).height == 0 and store.points(["r"]).height == 0
    with store.lock():  # the ingest run again writes the same rows
        store.replace_run_rows("r", points, series, sources)
    got = store.timeseries(["r"])
    assert got.height == series.height, "series rows doubled"
    assert got.sort(got.columns).equals(series.sort(series.columns))
    figures.add("defects", "checks")


# ---- 3. cancelling an interrupted job ----------------------------------------------------------


def test_cancelling_an_interrupted_job_keeps_and_ingests_its_finished_points(
    tmp_path: Path,
) -> None:
    from runner import service
    from runner.jobs import JobRecord, JobState, JobTable, PointState
    from runner.plan import parse_plan
    from runner.service import Caller
    from tests.runner.support import FakeSettings, serve_commands, stop_jobs

    store = Store(tmp_path / "store")
    plan = {
        "name": "interrupted",
        "defaults": {
            "model": "m/x",
            "isl": 1024,
            "osl": 1024,
            "framework": "vllm",
            "precision": "fp8",
        },
        "arms": [{"concs": [1, 2]}],
        "commands": serve_commands(),
    }
    try:
        job_id = service.launch(
            parse_plan(plan), "local", store, FakeSettings(), caller=Caller.CLI, poll_s=0.1
        )
        st = service.wait_job(store, job_id, timeout_s=60, poll_s=0.1)
        assert st.state == JobState.SUCCEEDED
    finally:
        stop_jobs(store)
    done, never = (p.point_id for p in st.record.points)
    table = JobTable(store)
    # The worker died after the first point's executor wrote its outcome and results, before it
    # saw them; the second point never ran.
    store.delete_run(st.record.run_id)
    (table.point_dir(job_id, never) / "outcome.json").unlink()

    def interrupted(r: JobRecord) -> None:
        r.state, r.finished_at = JobState.RUNNING, None
        for p in r.points:
            p.ingested, p.rows_accepted, p.finished_at = False, 0, None
            p.state = PointState.RUNNING if p.point_id == done else PointState.PENDING

    table.update(job_id, interrupted)
    assert not table.worker_alive(job_id)
    after = service.cancel_job(store, job_id, FakeSettings(), caller=Caller.CLI)
    states = {p.point_id: p for p in after.record.points}
    assert states[done].state == PointState.SUCCEEDED, states[done].reason
    assert states[done].ingested and states[done].rows_accepted == 1
    assert states[never].state == PointState.CANCELLED
    assert after.state == JobState.CANCELLED
    assert store.points([st.record.run_id]).height == 1
    figures.add("defects", "checks")


# ---- 4. CSV formulas ---------------------------------------------------------------------------

FORMULAS = ['=HYPERLINK("http://evil.example")', "+1+1", "-2+3+cmd|' /C calc'!A0", "@SUM(A1)"]


def test_csv_exports_neutralise_formulas_and_keep_numbers(tmp_path: Path) -> None:
    frame = pl.DataFrame(
        {
            "model": [*FORMULAS, "-3.5", "kimi"],
            "delta_pct": [-1.5, 2.0, -3.0, 0.0, 1.0, 1.0],
            "concs": [["-1", "2"]] * 6,
        }
    )
    text = csv_text(frame)
    rows = text.splitlines()[1:]
    for row, formula in zip(rows, FORMULAS, strict=False):
        assert row.lstrip('"').startswith("'"), row
        assert formula.replace('"', '""') in row
    assert rows[4].startswith("-3.5,1.0") and rows[5].startswith("kimi,1.0")
    assert rows[0].endswith(",-1.5,-1; 2")

    # the web export and the CLI write the same neutralised cells
    src = tmp_path / "in"
    shutil.copytree(AGG, src)
    for p in src.glob("*.json"):
        doc = json.loads(p.read_text())
        doc["image"] = "=cmd|' /C calc'!A0"
        p.write_text(json.dumps(doc))
    root = tmp_path / "store"
    ingest_paths([src], Store(root), run_id="f")
    web = _client(root).get(urls.export("points", "csv", "unofficialRun=f")).get_data(as_text=True)
    assert "'=cmd|' /C calc'!A0" in web and ",=cmd" not in web

    from paretolens.cli import app

    cli = (
        CliRunner()
        .invoke(app, ["points", "--run", "f", "--format", "csv", "--store", str(root)])
        .output
    )
    assert "'=cmd|' /C calc'!A0" in cli and ",=cmd" not in cli
    figures.add("defects", "checks")


# ---- 5. markdown -------------------------------------------------------------------------------

LINK = "[Sign in again](https://evil.example/login)"


def test_markdown_cells_and_the_compare_block_are_inert(tmp_path: Path) -> None:
    cell = md_cell(f"{LINK} ![x](http://evil.example/a.png) <b>hi</b> www.evil.example | a@b.c")
    assert "](" not in cell and "<b>" not in cell and "www." not in cell and " | " not in cell
    assert "a@b" not in cell and "https://" not in cell
    assert md_cell(1.234) == "1.23" and md_cell(None) == "" and md_cell(3) == "3"

    # The link in a field shown as written: the image, a confound that differs between the runs
    # (the arms still match: an image is not configuration).
    store = Store(tmp_path / "store")
    for run, scale in (("base", 1.0), ("cand", 1.1)):
        src = tmp_path / run
        shutil.copytree(AGG, src)
        for p in src.glob("*.json"):
            doc = json.loads(p.read_text())
            doc["image"] = f"{LINK} {run}"
            doc["tput_per_gpu"] *= scale
            p.write_text(json.dumps(doc))
        ingest_paths([src], store, run_id=run)
    pts = store.points()
    md = comparison_markdown(compare_runs(pts, "base", "cand"))
    assert "evil.example" in md  # shown, as text
    assert "](" not in md and "https://" not in md
    # every row of the arm names the confound, each side escaped
    assert md.count("\\[Sign in again\\]\\(https\\://evil.example/login\\) base") == 3, md
    assert md.count("\\[Sign in again\\]\\(https\\://evil.example/login\\) cand") == 3, md

    client = _client(tmp_path / "store")
    page = urls.compare_runs("base", "cand")
    layout = client.get(layout_url(page))
    body = layout.get_data(as_text=True)
    assert layout.status_code == 200 and "evil.example" in body
    assert "](https://evil.example" not in body
    figures.add("defects", "checks")


# ---- 6. special files and the byte cap ---------------------------------------------------------


def test_special_files_are_refused_by_name_and_reads_are_capped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path / "store")
    done = threading.Event()
    result: dict[str, Any] = {}

    def run() -> None:
        src = tmp_path / "sweep"
        shutil.copytree(AGG, src)
        os.mkfifo(src / "pipe.json")
        os.mkfifo(src / "pipe.zip")
        result["dir"] = ingest_paths([src], store)
        result["fifo"] = ingest_paths([src / "pipe.json"], store, run_id="fifo")
        result["zero"] = ingest_paths([Path("/dev/zero")], store, run_id="zero")
        done.set()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    assert done.wait(60), "ingest blocked on a special file"
    d = result["dir"]
    assert d.accepted == 3
    why = {r.path: r.reason for r in d.rejected}
    assert "FIFO" in why["pipe.json"] and "FIFO" in why["pipe.zip"], why
    assert "FIFO" in result["fifo"].rejected[0].reason
    assert "character device" in result["zero"].rejected[0].reason
    assert store.rejects(["sweep"]).height >= 2  # stored with their reasons, not skipped

    # A regular file that reports 0 bytes and yields more (/proc) is read up to the cap only.
    proc = Path("/proc/self/maps")
    assert stat.S_ISREG(proc.stat().st_mode) and proc.stat().st_size == 0
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 64)
    problems: list[files.FileProblem] = []
    assert files.read_file(proc, "maps", "a", problems) is None
    assert "64 byte limit" in problems[0].reason
    figures.add("defects", "checks")


# ---- 7. unhandled errors and the log -----------------------------------------------------------


@pytest.fixture
def log_records() -> Iterator[io.StringIO]:
    buf = io.StringIO()
    handler = logging.StreamHandler(buf)
    logger = logging.getLogger("paretolens")
    logger.addHandler(handler)
    try:
        yield buf
    finally:
        logger.removeHandler(handler)


def test_no_500_for_unknown_points_odd_tokens_long_searches_or_traversal(
    legacy_store: Path,
    tmp_path: Path,
    log_records: io.StringIO,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from runner import service
    from runner.plan import parse_plan
    from tests.runner.support import FakeSettings, serve_commands

    root = tmp_path / "store"
    shutil.copytree(legacy_store, root)
    plan = {
        "name": "p",
        "defaults": {"model": "m/x", "isl": 1, "osl": 1, "framework": "vllm", "precision": "fp8"},
        "arms": [{"concs": [1]}],
        "commands": serve_commands(),
    }
    tok = FakeSettings(token=SecretStr(TOKEN))
    job = service.launch(
        parse_plan(plan), "local", Store(root), tok, token=TOKEN, start_worker=False
    )
    from dashboard.app import create_app

    app = create_app(Store(root), _settings(root))
    client = app.server.test_client()

    def layout(page: str) -> Any:
        return client.get(layout_url(page))

    r = layout(f"/jobs?job={job}&point=nope")
    assert r.status_code == 200 and "has no point" in r.get_data(as_text=True)
    # A page whose query is over the limit makes the layout request's own query over it: a 414
    # that says so, as the page's own GET gets; a page whose path is over the limit is a layout
    # that says the address is too long.
    r = layout("/?q=" + "a" * 1_000_000)
    assert r.status_code == 414
    assert "the query string is 1000015 bytes, over the 8192 byte limit" in r.get_data(as_text=True)
    r = layout("/" + "a" * 3000)
    assert r.status_code == 200 and "too long" in r.get_data(as_text=True)
    r = layout("/?q=" + "a" * 5000)
    assert r.status_code == 200
    for path in (
        "/_dash-component-suites/../../etc/passwd",
        "/_dash-component-suites/dash/%2e%2e/%2e%2e/setup.py",
        "/_dash-component-suites/nope/x.js",
    ):
        assert client.get(path).status_code == 404, path

    # The launch and cancel callbacks with a token that is not a string (a forged request).
    from dashboard.context import AppContext
    from dashboard.fetch import Fetcher
    from dashboard.pages.jobs import JobsCallbacks
    from dashboard.pages.launch import LaunchCallbacks
    from ingest.bundled import GOLDEN_AL_DIR
    from views.source import DataSource

    st = Store(root)
    ctx = AppContext(DataSource(st, GOLDEN_AL_DIR), _settings(root), Fetcher(st, _settings(root)))
    ids = [{"type": "control", "field": "runs"}]
    for bad in ({"a": 1}, ["x"], 7, "x" * 100_000):
        out, _ = LaunchCallbacks(ctx).on_launch(1, "pruned", "local", "", bad, None, [["mtp"]], ids)  # type: ignore[arg-type]
        assert "Not launched" in str(out)
        out, _ = JobsCallbacks(ctx).on_cancel(1, bad, f"?job={job}")  # type: ignore[arg-type]
        assert "Not cancelled" in str(out)
    out, _ = LaunchCallbacks(ctx).on_launch(1, "pruned", {"x": 1}, 5, TOKEN, "rows", "v", "i")  # type: ignore[arg-type]
    assert "Not launched" in str(out)

    # One unauthenticated request that fails (on a bug that echoes its input) writes a bounded
    # log record.
    from dashboard import routes

    def boom(source: Any, filename: str, query: str) -> Any:
        raise RuntimeError(query * 200)

    assert log_records.getvalue() == ""
    monkeypatch.setattr(routes, "export_response", boom)
    r = client.get("/export/runs.csv?q=" + "q" * 5000)
    assert r.status_code == 500 and "qqq" not in r.get_data(as_text=True)
    logged = log_records.getvalue()
    assert 0 < len(logged) < 10_000, len(logged)
    assert "RuntimeError" in logged
    assert routes.MAX_LOGGED_CHARS < 1000
    figures.add("defects", "checks")


# ---- 8. Host allowlist -------------------------------------------------------------------------


def test_only_allowed_host_names_are_answered(legacy_store: Path) -> None:
    client = _client(legacy_store)
    for host in ("localhost", "localhost:8050", "127.0.0.1:8050", "[::1]:8050", "LOCALHOST."):
        assert client.get("/", headers={"Host": host}).status_code == 200, host
    for host in ("evil.example", "evil.example:8050", "127.0.0.1.evil.example", "localhost.evil"):
        r = client.get("/export/runs.json", headers={"Host": host})
        assert r.status_code == 400, host
        assert "PARETOLENS_ALLOWED_HOSTS" in r.get_data(as_text=True)
    lan = _client(legacy_store, allowed_hosts="localhost,perf-box.lan", host="0.0.0.0")
    assert lan.get("/", headers={"Host": "perf-box.lan:8050"}).status_code == 200
    assert lan.get("/", headers={"Host": "127.0.0.1"}).status_code == 400
    bound = _client(legacy_store, host="10.1.2.3")  # the address it binds is answered too
    assert bound.get("/", headers={"Host": "10.1.2.3:8050"}).status_code == 200
    anyhost = _client(legacy_store, allowed_hosts="*")
    assert anyhost.get("/", headers={"Host": "whatever.example"}).status_code == 200
    figures.add("defects", "checks")


# ---- 9. string caps, request and query limits, wrong tokens --------------------------------------


def test_string_fields_are_capped_on_ingest(tmp_path: Path) -> None:
    src = tmp_path / "in"
    shutil.copytree(AGG, src)
    files = sorted(src.glob("*.json"))
    doc = json.loads(files[0].read_text())
    doc["model"] = "m" * (50 * 1024 * 1024)
    files[0].write_text(json.dumps(doc))
    doc = json.loads(files[1].read_text())
    doc["image"] = "i" * (MAX_STRING_CHARS + 1)
    files[1].write_text(json.dumps(doc))
    store = Store(tmp_path / "store")
    report = ingest_paths([src], store, run_id="s")
    assert report.accepted == 1
    got = {r.path: (r.field, r.reason) for r in report.rejected}
    assert len(got) == 2, got
    fields = sorted(f for f, _ in got.values())
    assert fields == ["image", "model"], got
    assert all(f"{MAX_STRING_CHARS} character limit" in why for _, why in got.values())
    assert store.points(["s"]).get_column(Col.MODEL).str.len_chars().max() <= MAX_STRING_CHARS  # type: ignore[operator]
    figures.add("defects", "checks")


def test_request_and_query_sizes_have_limits_with_a_clear_error(legacy_store: Path) -> None:
    from dashboard.app import MAX_QUERY_BYTES

    client = _client(legacy_store)
    r = client.get("/export/runs.json?q=" + "a" * MAX_QUERY_BYTES)
    assert r.status_code == 414 and "byte limit" in r.get_json()["error"]
    r = client.get("/" + "p" * 5000)
    assert r.status_code == 414
    r = client.post("/api/launch", data={"query": "x" * (9 * 1024 * 1024)})
    assert r.status_code == 413 and "byte limit" in r.get_json()["error"]
    # an index search over its own limit is dropped with a notice, not searched
    from views.query.state import MAX_SEARCH_CHARS, IndexView

    view, notes = IndexView.parse("q=" + "a" * (MAX_SEARCH_CHARS + 1))
    assert view.q == "" and notes and "q=" in notes[0]
    figures.add("defects", "checks")


def test_repeated_wrong_tokens_are_slowed_down(legacy_store: Path, tmp_path: Path) -> None:
    root = tmp_path / "store"
    shutil.copytree(legacy_store, root)
    client = _client(root)
    url = "/api/jobs/j-20260101-000000-abcdef/cancel"
    codes = [
        client.post(url, headers={auth.TOKEN_HEADER: f"wrong-{i}"}).status_code for i in range(8)
    ]
    assert codes[: auth.FREE_WRONG_TOKENS] == [403] * auth.FREE_WRONG_TOKENS, codes
    assert codes[auth.FREE_WRONG_TOKENS :] == [429] * (8 - auth.FREE_WRONG_TOKENS), codes
    r = client.post(url, headers={auth.TOKEN_HEADER: TOKEN})
    assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1
    # another address is not held up; the lockout ends and grows with each further miss
    other = client.post(
        url, headers={auth.TOKEN_HEADER: TOKEN}, environ_base={"REMOTE_ADDR": "10.0.0.9"}
    )
    assert other.status_code == 404  # the token is right; the job does not exist

    now = [1000.0]
    throttle = auth.Throttle(clock=lambda: now[0])
    settings = _settings(root)
    for _ in range(auth.FREE_WRONG_TOKENS):
        throttle.guard(settings, "wrong", "c")
    with pytest.raises(auth.Throttled):
        throttle.guard(settings, TOKEN, "c")
    now[0] += 1.5
    throttle.guard(settings, "wrong", "c")  # lockout over: counted, now 2 s
    now[0] += 1.5
    with pytest.raises(auth.Throttled):
        throttle.guard(settings, TOKEN, "c")
    throttle.guard(settings, None, "d")  # no token at all is not a guess
    throttle.guard(settings, TOKEN, "d")
    assert throttle.lockout_s(100) == auth.MAX_LOCKOUT_S
    figures.add("defects", "checks")

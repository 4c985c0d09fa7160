"""Security of the served app, beyond tests/dashboard/test_security.py (which checks the headers,
the fetch and launch gates one by one, and that result strings are text in the layout):

- every state-changing route the server has is known here, and each one refuses a request
  without the token, with a wrong or empty one, or with the token in the query string, and then
  the store is byte-for-byte unchanged and no worker was started;
- the state-changing Dash callbacks (the launch, cancel and fetch buttons) refuse the same way;
- the secrets (app token, GitHub token, a wrong guess) never appear in any response, export,
  error page, log record or store file after a session over waitress that touches every route;
- the server binds 127.0.0.1 unless told otherwise (the CLI is covered in tests/dashboard);
- with no token configured, a cross-site form can neither launch nor cancel; request bodies are
  capped (413); fetching from GitHub with no app token configured is refused on loopback too.

Zip extraction staying inside its target is tested on the hostile corpus (test_hostile.py).
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from pydantic import SecretStr

from dashboard.app import layout_url
from ingest.pipeline import ingest_paths
from ingest.store import Store
from paretolens.settings import Settings
from runner import service
from tests.reliability import figures
from tests.reliability._support import FIXTURES, served

TOKEN = "pl-tok-7f3c9a1e5b2d4c60a8e9f1b3c5d7e9a1"
GITHUB = "ghp_rel1ab1l1tyS3cr3tV4lu3xx9q8w7e6r5t"
WRONG = "pl-wrong-guess-0d9c8b7a6f5e4d3c2b1a"
SECRETS = (TOKEN, GITHUB, WRONG)
RUN = "mtp"
FETCH_RUN = "29820102138"
# Every route that changes state (a method other than GET), Dash's callback endpoint aside.
STATE_CHANGING = {
    "/api/fetch/<run_id>": f"/api/fetch/{FETCH_RUN}",
    "/api/launch": "/api/launch",
    "/api/jobs/<job_id>/cancel": "/api/jobs/{job}/cancel",
}
DASH_INTERNAL = {"/_dash-update-component"}
LAUNCH_FORM = {
    "query": f"unofficialRun={RUN}",
    "backend": "local",
    "options": "timeout_s: 600\n",  # durations only: commands come from the server
}
# The server's launch options document (the store's launch-options.yaml): what a launch runs.
OPTIONS_DOC = "commands: {script: [bash, run_point.sh]}\n"


def _settings(root: Path, **kw: Any) -> Settings:
    base: dict[str, Any] = {
        "store": root,
        "host": "127.0.0.1",
        "token": SecretStr(TOKEN),
        "github_token": SecretStr(GITHUB),
        "github_api_url": "http://127.0.0.1:9",  # nothing listens there: a fetch goes nowhere
        "launch_enabled": True,
    }
    return Settings(**{**base, **kw})


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sec") / "store"
    ingest_paths([FIXTURES / "inferencex" / "agg_fixed_seq"], Store(root), run_id=RUN)
    (root / "launch-options.yaml").write_text(OPTIONS_DOC)
    return root


@pytest.fixture
def root(base: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "store"
    shutil.copytree(base, dst)
    return dst


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The job workers asked for (none really starts)."""
    started: list[str] = []
    monkeypatch.setattr(service, "spawn_worker", lambda st, job_id, **kw: started.append(job_id))
    return started


def _app(root: Path, **kw: Any) -> Any:
    from dashboard.app import create_app

    return create_app(Store(root), _settings(root, **kw))


def _digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }


def _launched(client: Any) -> str:
    resp = client.post("/api/launch", data=LAUNCH_FORM, headers={"X-Paretolens-Token": TOKEN})
    assert resp.status_code == 202, resp.get_data(as_text=True)
    return str(json.loads(resp.get_data(as_text=True))["job"])


def test_the_state_changing_routes_are_all_known(base: Path) -> None:
    rules = {
        r.rule
        for r in _app(base).server.url_map.iter_rules()
        if set(r.methods or ()) - {"GET", "HEAD", "OPTIONS"}
    }
    # A new route (upload, delete, ...) must be added to STATE_CHANGING and so to the tests here.
    assert rules - DASH_INTERNAL == set(STATE_CHANGING), rules
    figures.put("security", "state_changing_routes", sorted(STATE_CHANGING))


@pytest.mark.parametrize("rule", sorted(STATE_CHANGING))
def test_each_state_changing_route_refuses_without_the_token(
    rule: str, root: Path, spawned: list[str]
) -> None:
    client = _app(root).server.test_client()
    job = _launched(client) if "<job_id>" in rule else ""
    url = STATE_CHANGING[rule].format(job=job)
    before, workers = _digest(root), list(spawned)
    attempts: list[tuple[str, dict[str, str], dict[str, str]]] = [
        (url, {}, {}),
        (url, {"X-Paretolens-Token": WRONG}, {}),
        (url, {}, {"token": WRONG}),
        (url, {"X-Paretolens-Token": ""}, {"token": ""}),
        (url, {"X-Paretolens-Token": TOKEN[:-1]}, {}),
        (f"{url}?token={quote(TOKEN)}", {}, {}),  # never read from a query string
    ]
    for target, headers, form in attempts:
        resp = client.post(target, headers=headers, data={**LAUNCH_FORM, **form})
        body = resp.get_data(as_text=True)
        assert resp.status_code == 403, (target, headers, form, resp.status_code, body)
        assert not any(s in body for s in SECRETS)
        figures.add("security", "refused_requests")
    assert _digest(root) == before, "a refused request changed the store"
    assert spawned == workers, "a refused request started a worker"
    ok = client.post(url, headers={"X-Paretolens-Token": TOKEN}, data=LAUNCH_FORM)
    assert ok.status_code != 403, ok.get_data(as_text=True)  # the token gets past the gate


def test_the_state_changing_callbacks_refuse_without_the_token(
    root: Path, spawned: list[str]
) -> None:
    from dashboard.context import AppContext
    from dashboard.fetch import Fetcher
    from dashboard.pages.jobs import JobsCallbacks
    from dashboard.pages.launch import LaunchCallbacks
    from dashboard.pages.missing import FetchCallbacks
    from ingest.bundled import GOLDEN_AL_DIR
    from views.source import DataSource

    store, settings = Store(root), _settings(root)
    job = _launched(_app(root).server.test_client())
    ctx = AppContext(DataSource(store, GOLDEN_AL_DIR), settings, Fetcher(store, settings))
    before, workers = _digest(root), list(spawned)
    ids, values = [{"field": "runs"}], [[RUN]]
    for token in (None, "", WRONG):
        out = LaunchCallbacks(ctx).on_launch(
            1, "pruned", "local", LAUNCH_FORM["options"], token, None, values, ids
        )
        assert "Not launched" in json.dumps(out, default=str), out
        out = JobsCallbacks(ctx).on_cancel(1, token, f"?job={job}")
        assert "Not cancelled" in json.dumps(out, default=str), out
        out = FetchCallbacks(ctx).on_start(1, [FETCH_RUN], token)
        assert str(out[0]).startswith("refused"), out
        figures.add("security", "refused_callbacks", 3)
    assert _digest(root) == before and spawned == workers
    assert ctx.fetcher.status(FETCH_RUN) is None
    assert service.get_job(store, job).state.value != "cancelled"


def test_the_server_binds_loopback_by_default() -> None:
    assert Settings(_env_file=None).host == "127.0.0.1"  # type: ignore[call-arg]
    assert service.is_loopback(Settings(_env_file=None).host)  # type: ignore[call-arg]


# ---- no secret leaks -------------------------------------------------------------------------


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith(("httpx", "httpcore")):
            return  # this test's own client, which logs the URLs it is told to send
        self.lines.append(self.format(record))
        if record.exc_info:
            self.lines.append(logging.Formatter().formatException(record.exc_info))


@contextmanager
def _logs() -> Iterator[_Capture]:
    cap = _Capture()
    root = logging.getLogger()
    old = root.level
    root.addHandler(cap)
    root.setLevel(logging.DEBUG)
    try:
        yield cap
    finally:
        root.removeHandler(cap)
        root.setLevel(old)


EXPORTS = ["points", "al", "deltas", "deltas_frontier", "at", "pruned", "rejects", "runs", "jobs"]


def test_secrets_never_reach_responses_exports_error_pages_logs_or_files(
    root: Path, spawned: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import httpx

    from dashboard import auth, launching

    app = _app(root)
    seen: list[str] = []
    with _logs() as logs, _served_sec(app.server) as url, httpx.Client(base_url=url) as c:

        def get(path: str, **kw: Any) -> httpx.Response:
            resp = c.get(path, **kw)
            seen.append(
                f"{resp.status_code} {dict(resp.headers)} {resp.text if resp.headers.get('content-type', '').startswith(('text', 'application/json')) else resp.content!r}"
            )
            return resp

        def post(path: str, **kw: Any) -> httpx.Response:
            resp = c.post(path, **kw)
            seen.append(f"{resp.status_code} {dict(resp.headers)} {resp.text}")
            return resp

        ok = post("/api/launch", data=LAUNCH_FORM, headers={"X-Paretolens-Token": TOKEN})
        job = ok.json()["job"]
        for path in (
            "/",
            f"/inference?unofficialRun={RUN}",
            f"/points?unofficialRun={RUN}",
            "/jobs",
            f"/jobs?job={job}",
        ):
            get(path)
            get(layout_url(path))
        for table in EXPORTS:
            for fmt in ("csv", "json", "parquet"):
                q = f"job={job}" if table == "jobs" else f"unofficialRun={RUN}&at=40"
                get(f"/export/{table}.{fmt}?{q}")
        get(f"/export/pruned.yaml?unofficialRun={RUN}")
        get(f"/export/pruned.txt?unofficialRun={RUN}")
        # Refusals and errors, each carrying a secret somewhere in the request.
        for secret in SECRETS:
            post("/api/launch", data={**LAUNCH_FORM, "token": secret})
            post(f"/api/jobs/{job}/cancel?token={secret}")
            post(f"/api/fetch/{FETCH_RUN}", headers={"X-Paretolens-Token": secret + "x"})
            get(f"/export/nope.csv?token={secret}")
            get(f"/export/points.xml?unofficialRun={RUN}&token={secret}")
            get(f"/no/such/page?token={secret}", headers={"X-Paretolens-Token": secret})
            c.put("/api/launch", data={"token": secret})
        post(f"/api/fetch/{FETCH_RUN}", headers={"X-Paretolens-Token": TOKEN})
        post(f"/api/jobs/{job}/cancel", headers={"X-Paretolens-Token": TOKEN})

        # An unexpected error while the request holds the token: the 500 page and the log.
        def boom(*a: Any, **kw: Any) -> str:
            raise RuntimeError("launch backend exploded")

        monkeypatch.setattr(launching, "launch_from_view", boom)
        # The wrong tokens above have this client in its lockout (429): let this one through.
        monkeypatch.setattr(auth.Throttle, "guard", lambda *a, **kw: None)
        err = post("/api/launch", data={**LAUNCH_FORM, "token": TOKEN})
        assert err.status_code == 500
    files = [
        p.read_bytes().decode("utf-8", "replace")
        for p in root.rglob("*")
        if p.is_file() and p.suffix not in (".parquet", ".lock")
    ]
    parquet = [p.read_bytes().decode("latin-1") for p in root.rglob("*.parquet")]
    haystacks = {"responses": seen, "logs": logs.lines, "store files": files + parquet}
    for where, texts in haystacks.items():
        for secret in SECRETS:
            hits = [t[:300] for t in texts if secret in t or quote(secret) in t]
            assert not hits, f"{secret[:8]}... in {where}: {hits[:3]}"
    figures.put("security", "responses_scanned", len(seen))
    figures.put("security", "log_records_scanned", len(logs.lines))
    figures.put("security", "store_files_scanned", len(files) + len(parquet))


# ---- with no token configured --------------------------------------------------------------


def _cli_job(root: Path) -> str:
    """A job recorded as the CLI would (not gated), to try to cancel from the web."""
    from dashboard.launching import parse_options
    from ingest.bundled import GOLDEN_AL_DIR
    from runner.sources import plan_from_pruned
    from views.query.state import RunView
    from views.source import DataSource

    store = Store(root)
    view, _ = RunView.parse(f"unofficialRun={RUN}")
    doc = DataSource(store, GOLDEN_AL_DIR).run_data(view).pruned_doc
    base = {"name": "cli-job", **parse_options(OPTIONS_DOC)}
    plan = plan_from_pruned(doc, base=base, source="web")
    return service.launch(
        plan, "local", store, _settings(root, token=None), caller=service.Caller.CLI
    )


def test_launch_and_cancel_refuse_a_cross_site_form_with_no_token_configured(
    root: Path, spawned: list[str]
) -> None:
    job = _cli_job(root)
    client = _app(root, token=None).server.test_client()
    before, workers = _digest(root), list(spawned)
    evil = {"Origin": "http://evil.example", "Referer": "http://evil.example/"}
    launch = client.post("/api/launch", data=LAUNCH_FORM, headers=evil)
    assert launch.status_code == 403, launch.get_data(as_text=True)
    cancel = client.post(f"/api/jobs/{job}/cancel", headers=evil)
    assert cancel.status_code == 403, cancel.get_data(as_text=True)
    assert _digest(root) == before and spawned == workers
    figures.add("security", "refused_requests", 2)


def test_fetch_refuses_a_cross_site_form_with_no_token_configured(root: Path) -> None:
    client = _app(root, token=None).server.test_client()
    evil = {"Origin": "http://evil.example", "Referer": "http://evil.example/"}
    resp = client.post(f"/api/fetch/{FETCH_RUN}", headers=evil)
    assert resp.status_code == 403, resp.get_data(as_text=True)


def test_request_bodies_have_a_size_limit(root: Path, spawned: list[str]) -> None:
    from dashboard import app as app_module

    limit = app_module.MAX_REQUEST_BYTES
    client = _app(root).server.test_client()
    headers = {"X-Paretolens-Token": TOKEN}
    big = client.post(
        "/api/launch", data={**LAUNCH_FORM, "options": "x" * (limit + 1)}, headers=headers
    )
    assert big.status_code == 413, big.get_data(as_text=True)[:200]
    raw = client.post(
        "/api/launch", data=b"x" * (3 * limit), content_type="application/octet-stream"
    )
    assert raw.status_code == 413
    assert spawned == []
    figures.put("security", "request_body_limit_bytes", limit)


def _served_sec(wsgi: Any) -> Any:
    return served(wsgi, threads=4, name="paretolens-sec")

"""`paretolens serve`: waitress by default on 127.0.0.1:8050, prints a sample run page's URL;
`paretolens.wsgi:server` is the WSGI target for `waitress-serve`; on the dashboard tests' store
(`web_store`)."""

from __future__ import annotations

import gc
import importlib
import sys
from typing import Any

import pytest
from flask import Flask
from typer.testing import CliRunner

import dashboard.app
from ingest.store import Store
from paretolens.cli import app as cli
from paretolens.commands import serve_cmds
from paretolens.commands.serve_cmds import sample_view


def _serve(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[Any, dict[str, Any]]:
    calls: dict[str, Any] = {}
    import waitress

    monkeypatch.setattr(waitress, "serve", lambda wsgi, **kw: calls.update(wsgi=wsgi, **kw))
    monkeypatch.setattr(serve_cmds, "listen_problem", lambda host, port: None)
    monkeypatch.delenv("PARETOLENS_TOKEN", raising=False)
    result = CliRunner().invoke(cli, ["serve", *args])
    assert result.exit_code == 0, result.output
    return result, calls


def test_serve_runs_waitress_on_localhost_and_prints_a_run_page(
    web_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, calls = _serve(monkeypatch, "--store", str(web_store.root))
    assert (calls["host"], calls["port"], calls["threads"]) == ("127.0.0.1", 8050, 8)
    assert isinstance(calls["wsgi"], Flask)
    assert (
        "open a sample run: http://127.0.0.1:8050/inference?unofficialRun=dsr1&at=40&ab=kv_offloading&tab=deltas"
        in result.output
    )
    assert "warning" not in result.output


def test_serve_freezes_the_start_up_heap(web_store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    # The app and everything imported to build it are out of the collector's reach once serving
    # (dashboard.app.settle_heap), so a full collection inside a request walks only what requests
    # made; the app object itself is one of the frozen objects.
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    _, calls = _serve(monkeypatch, "--store", str(web_store.root))
    assert gc.get_freeze_count() > 10_000
    assert gc.is_tracked(calls["wsgi"])
    assert not any(o is calls["wsgi"] for o in gc.get_objects())  # the frozen are not listed


def test_serving_beyond_localhost_without_a_token_warns(
    web_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, calls = _serve(
        monkeypatch, "--store", str(web_store.root), "--host", "0.0.0.0", "--port", "9000"
    )
    assert (calls["host"], calls["port"]) == ("0.0.0.0", 9000)
    assert "launching and fetching from the web are refused" in result.output


def test_dev_server_is_opt_in(web_store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    runs: list[dict[str, Any]] = []
    monkeypatch.setattr(dashboard.app.Dash, "run", lambda self, **kw: runs.append(kw))
    monkeypatch.setattr(serve_cmds, "listen_problem", lambda host, port: None)
    result = CliRunner().invoke(cli, ["serve", "--store", str(web_store.root), "--dev"])
    assert result.exit_code == 0, result.output
    assert runs == [{"host": "127.0.0.1", "port": 8050, "debug": False}]


def test_the_wsgi_target_is_built_from_the_environment(
    web_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PARETOLENS_STORE", str(web_store.root))
    monkeypatch.delitem(sys.modules, "paretolens.wsgi", raising=False)
    wsgi = importlib.import_module("paretolens.wsgi")
    assert isinstance(wsgi.server, Flask) and wsgi.settings.store == web_store.root
    assert wsgi.server.test_client().get("/export/pruned.txt?unofficialRun=dsr1").status_code == 200
    # The dashboard itself reads no environment: it has no server of its own any more.
    assert not hasattr(dashboard.app, "server")


def test_the_sample_view_prefers_a_run_with_an_ab(web_store: Store) -> None:
    view = sample_view(web_store)
    assert view is not None and (view.runs, view.ab, view.at) == (("dsr1",), "kv_offloading", 40.0)


def test_the_app_reads_no_environment(web_store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    # Settings reach create_app from its caller; given none, it is a loopback app with launching
    # off, whatever the environment says.
    monkeypatch.setenv("PARETOLENS_LAUNCH_ENABLED", "true")
    monkeypatch.setenv("PARETOLENS_TOKEN", "t0ken")
    monkeypatch.setenv("PARETOLENS_ALLOWED_HOSTS", "*")
    client = dashboard.app.create_app(web_store).server.test_client()
    resp = client.post(
        "/api/launch",
        data={"query": "unofficialRun=dsr1", "backend": "local"},
        headers={"X-Paretolens-Token": "t0ken"},
    )
    assert resp.status_code == 403 and "launching is disabled" in resp.get_data(as_text=True)
    assert client.get("/", headers={"Host": "evil.example"}).status_code == 400


def test_workers_need_the_production_server(web_store: Store) -> None:
    result = CliRunner().invoke(
        cli, ["serve", "--store", str(web_store.root), "--workers", "2", "--dev"]
    )
    assert result.exit_code == 2 and "--workers 2 cannot run with --dev" in result.output


def test_the_gunicorn_command_line() -> None:
    cmd = serve_cmds.gunicorn_command("::1", 8050, 3, 4)
    assert cmd[1:] == [
        "-m",
        "gunicorn",
        "--bind",
        "[::1]:8050",
        "--workers",
        "3",
        "--worker-class",
        "gthread",
        "--threads",
        "4",
        "--timeout",
        "120",
        "--graceful-timeout",
        "10",
        "--keep-alive",
        "75",
        "paretolens.wsgi:server",
    ]
    assert cmd[0] == sys.executable

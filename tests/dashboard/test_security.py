"""State-changing routes need the token; tokens never leak; result strings render as text."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from dashboard.app import create_app, layout_url
from ingest.contract.schema import RunCol
from ingest.store import Store
from paretolens.settings import Settings
from runner import service

from .conftest import TOKEN
from .github import GH_RUN, github_api

PRUNED_CONCS = [1, 4, 8]


def _settings(root: Path, **kw: Any) -> Settings:
    base: dict[str, Any] = {
        "store": root,
        "host": "127.0.0.1",
        "token": None,
        "github_token": None,
        "launch_enabled": False,
    }
    return Settings(**{**base, **kw})


def _client(store: Store, **kw: Any) -> Any:
    return create_app(store, _settings(store.root, **kw)).server.test_client()


def test_pages_and_exports_carry_security_headers(client: Any) -> None:
    for url in ("/", "/export/points.csv?unofficialRun=mtp", "/_dash-layout"):
        headers = client.get(url).headers
        assert headers["X-Frame-Options"] == "DENY"
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["Referrer-Policy"] == "same-origin"
        csp = headers["Content-Security-Policy"]
        assert "frame-ancestors 'none'" in csp and "object-src 'none'" in csp
        assert "'unsafe-inline'" not in csp.split("script-src")[1].split(";")[0]


def test_fetch_is_off_without_a_github_token(client: Any) -> None:
    resp = client.post(f"/api/fetch/{GH_RUN}")
    assert resp.status_code == 403
    assert json.loads(resp.get_data(as_text=True))["error"].startswith(
        "fetching is off: no GitHub token"
    )


def test_fetch_needs_the_app_token_when_one_is_set(tmp_path: Path) -> None:
    c = _client(Store(tmp_path / "s"), token=SecretStr(TOKEN), github_token=SecretStr("ghp_unused"))
    for headers, data in (
        ({}, None),
        ({"X-Paretolens-Token": "wrong"}, None),
        ({}, {"token": "wrong"}),
    ):
        resp = c.post(f"/api/fetch/{GH_RUN}", headers=headers, data=data)
        assert resp.status_code == 403
        body = resp.get_data(as_text=True)
        assert "wrong or missing token" in body and TOKEN not in body and "ghp_unused" not in body
    # A token in the query string is never read (it would land in logs and browser history).
    assert c.post(f"/api/fetch/{GH_RUN}?token={TOKEN}").status_code == 403


@pytest.mark.parametrize("host", ["0.0.0.0", "127.0.0.1"])
def test_fetch_is_refused_without_an_app_token_configured(tmp_path: Path, host: str) -> None:
    c = _client(Store(tmp_path / "s"), host=host, github_token=SecretStr("ghp_unused"))
    resp = c.post(f"/api/fetch/{GH_RUN}")
    assert resp.status_code == 403 and "needs the app token" in resp.get_data(as_text=True)


def test_a_missing_run_is_fetched_with_progress_and_then_served(tmp_path: Path) -> None:
    with github_api() as api:
        store = Store(tmp_path / "s")
        c = _client(
            store,
            token=SecretStr(TOKEN),
            github_token=SecretStr("ghp_secret_value"),
            github_api_url=api,
        )
        started = c.post(f"/api/fetch/{GH_RUN}", headers={"X-Paretolens-Token": TOKEN})
        assert started.status_code == 202
        for _ in range(200):
            status = json.loads(c.get(f"/api/fetch/{GH_RUN}/status").get_data(as_text=True))
            if status["state"] != "running":
                break
            time.sleep(0.05)
        assert status["state"] == "done", status
        assert any("downloading results_bmk" in line for line in status["lines"])
        assert "ghp_secret_value" not in json.dumps(status)
        assert store.runs().row(0, named=True)[RunCol.POINT_COUNT] == 5
        assert (
            c.get(f"/export/points.csv?unofficialRun={GH_RUN}").get_data(as_text=True).count("\n")
            == 6
        )


def test_a_web_fetch_takes_set_like_the_cli(tmp_path: Path) -> None:
    with github_api() as api:
        store = Store(tmp_path / "s")
        c = _client(
            store,
            token=SecretStr(TOKEN),
            github_token=SecretStr("ghp_secret_value"),
            github_api_url=api,
        )
        bad = c.post(
            f"/api/fetch/{GH_RUN}",
            headers={"X-Paretolens-Token": TOKEN},
            json={"set": {"gpus_total": 4}},
        )
        assert bad.status_code == 400 and "gpus_total" in bad.get_data(as_text=True)
        started = c.post(
            f"/api/fetch/{GH_RUN}",
            headers={"X-Paretolens-Token": TOKEN},
            json={"set": {"runner": "mi355x-amds", "title": "AgentX PP, re-fetched"}},
        )
        assert started.status_code == 202
        for _ in range(200):
            status = json.loads(c.get(f"/api/fetch/{GH_RUN}/status").get_data(as_text=True))
            if status["state"] != "running":
                break
            time.sleep(0.05)
        assert status["state"] == "done", status
        runners = store.points([GH_RUN]).get_column("runner").to_list()
        # no file of the run says its runner: every point takes the value given
        assert runners == ["mi355x-amds"] * 5
        # a run key given the same way wins over the run's GitHub metadata, as `fetch --set`
        run = store.runs().row(0, named=True)
        assert run[RunCol.TITLE] == "AgentX PP, re-fetched"
        assert run[RunCol.BRANCH] == "explore/glm52-h200-agentx-pp-pareto"


def test_fetch_ids_must_be_github_run_ids(tmp_path: Path) -> None:
    c = _client(Store(tmp_path / "s"), token=SecretStr(TOKEN), github_token=SecretStr("ghp_unused"))
    resp = c.post("/api/fetch/not-a-run", headers={"X-Paretolens-Token": TOKEN})
    assert resp.status_code == 400 and "not a GitHub Actions run id" in resp.get_data(as_text=True)


def test_launch_is_off_unless_enabled(client: Any) -> None:
    resp = client.post("/api/launch", data={"query": "unofficialRun=dsr1"})
    assert resp.status_code == 403
    assert "launching is disabled" in resp.get_data(as_text=True)


def test_launch_with_the_token_records_a_job_and_refuses_without(
    tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[str] = []
    monkeypatch.setattr(service, "spawn_worker", lambda st, job_id, **kw: started.append(job_id))
    own = Store(tmp_path / "s")
    _copy_run(store, own, "29003473063")
    # What runs comes from the server's launch options document, never from the request.
    (own.root / "launch-options.yaml").write_text("commands: {script: [bash, run_point.sh]}\n")
    c = _client(own, token=SecretStr(TOKEN), launch_enabled=True)
    form = {"query": "unofficialRun=29003473063", "backend": "local", "options": "timeout_s: 600\n"}
    for headers in ({}, {"X-Paretolens-Token": "nope"}):
        resp = c.post("/api/launch", data=form, headers=headers)
        assert resp.status_code == 403 and "wrong or missing launch token" in resp.get_data(
            as_text=True
        )
        assert TOKEN not in resp.get_data(as_text=True)
    assert service.list_jobs(own) == [] and started == []
    resp = c.post("/api/launch", data={**form, "token": TOKEN})
    assert resp.status_code == 202, resp.get_data(as_text=True)
    job = json.loads(resp.get_data(as_text=True))["job"]
    assert started == [job]
    record = service.get_job(own, job).record
    assert (record.backend, sorted(p.conc for p in record.points)) == ("local", PRUNED_CONCS)
    assert c.post(f"/api/jobs/{job}/cancel").status_code == 403
    assert (
        c.post(f"/api/jobs/{job}/cancel", headers={"X-Paretolens-Token": TOKEN}).status_code == 200
    )


def test_launch_is_refused_beyond_localhost_without_a_token(tmp_path: Path) -> None:
    c = _client(Store(tmp_path / "s"), host="0.0.0.0", launch_enabled=True)
    resp = c.post("/api/launch", data={"query": "unofficialRun=dsr1"})
    assert resp.status_code == 403 and "beyond localhost" in resp.get_data(as_text=True)


def _holders(node: Any, needle: str, out: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(component type, prop) of every prop whose value contains `needle`."""
    if isinstance(node, dict):
        if "type" in node and "props" in node:
            for prop, value in node["props"].items():
                if isinstance(value, str) and needle in value:
                    out.append((node["type"], prop))
                else:
                    _holders(value, needle, out)
        else:
            for value in node.values():
                _holders(value, needle, out)
    elif isinstance(node, list):
        for value in node:
            if isinstance(value, str) and needle in value:
                out.append(("text", "children"))
            else:
                _holders(value, needle, out)
    return out


def test_result_strings_are_text_children_in_the_layout(client: Any) -> None:
    resp = client.get(layout_url("/inference?unofficialRun=mtp"))
    text = resp.get_data(as_text=True)
    assert _holders(json.loads(text), "onerror=alert(1)", []) == [("Code", "children")]
    assert "dangerously" not in text


def _copy_run(src: Store, dst: Store, run_id: str) -> None:
    """Give `dst` one run's points and series and the whole runs catalog of `src`."""
    points = src.points([run_id])
    sources = sorted(set(points.get_column("source_path").to_list()))
    with dst.lock():
        dst.replace_run_rows(run_id, points, src.timeseries([run_id]), sources)
        for row in src.runs().iter_rows(named=True):
            dst.upsert_run(row)

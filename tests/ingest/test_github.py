"""`paretolens fetch` against a local server replaying the real GitHub API responses of run
29820102138 (run object and artifact listing), serving artifact zips built from real aggregates."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from ingest.contract.col import Col
from ingest.contract.schema import RunCol
from ingest.sources.github import GitHubClient, GitHubError, fetch_run, newest_artifacts
from ingest.store import Store
from paretolens.cli import app
from tests.loopback import zip_bytes

from .github_replay import FIXTURES, Replay, serve

RUN = "29820102138"
REPO = "SemiAnalysisAI/InferenceX"
GH = FIXTURES / "github" / f"run_{RUN}"
AGG_DIR = FIXTURES / "inferencex" / "agentic_agg" / "kimik2.7_tp4_sweep_29003473063"


def _agg_bmk() -> bytes:
    rows = [json.loads(p.read_text()) for p in sorted(AGG_DIR.glob("kimik2.7_*.json"))]
    return json.dumps(rows).encode()


def _replay() -> Replay:
    r = Replay()
    r.json(f"/repos/{REPO}/actions/runs/{RUN}", json.loads((GH / "github_run.json").read_text()))
    return r


def _wire(r: Replay, blobs: Replay) -> None:
    listing = json.loads((GH / "github_artifacts.json").read_text())
    for a in listing["artifacts"]:
        path = f"/dl/{a['id']}.zip"
        a["archive_download_url"] = f"{r.url}/redirect/{a['id']}"
        a["digest"] = None
        # Like GitHub: the API answers 302 to a blob URL on another origin.
        target = f"{blobs.url}{path}"
        r.raw(f"/redirect/{a['id']}", b"", 302, {"Location": target})
        body = (
            zip_bytes({"agg_bmk.json": _agg_bmk()}) if a["name"] == "results_bmk" else zip_bytes({})
        )
        blobs.raw(path, body, 200, {"Content-Type": "application/zip"})
    r.json(f"/repos/{REPO}/actions/runs/{RUN}/artifacts", listing)


def test_newest_artifacts_dedupes_retries_by_logical_name() -> None:
    listing = json.loads((GH / "github_artifacts.json").read_text())
    client_arts = list(listing["artifacts"])
    names = [a["name"] for a in client_arts]
    assert len(names) == 26
    from ingest.sources.github import Artifact

    arts = [
        Artifact(
            a["id"],
            a["name"],
            a["size_in_bytes"],
            a["created_at"],
            a["expired"],
            a["archive_download_url"],
        )
        for a in client_arts
    ]
    retry = Artifact(1, "bmk_agentic_x_h200-dgxc-slurm_1", 10, "2026-07-21T01:00:00Z", False, "u")
    newer = Artifact(2, "bmk_agentic_x_h200-dgxc-slurm_4", 10, "2026-07-21T02:00:00Z", False, "u")
    kept = newest_artifacts([*arts, retry, newer])
    assert [a.id for a in kept if a.name.startswith("bmk_agentic_x")] == [2]
    assert len(kept) == 27


def test_fetch_ingests_the_run_with_its_catalog_entry_and_caches(tmp_path: Path) -> None:
    with serve(Replay()) as blobs, serve(_replay()) as api:
        _wire(api, blobs)
        store = Store(tmp_path / "store")
        client = GitHubClient(api.url, "ghp_secret_token_value", REPO)
        msgs: list[str] = []
        report = fetch_run(RUN, store, client, progress=msgs.append)
        assert report.runs == [RUN]
        assert report.accepted == 5
        run = store.runs().row(0, named=True)
        assert run[RunCol.BRANCH] == "explore/glm52-h200-agentx-pp-pareto"
        assert run[RunCol.HEAD_SHA] == "3ac9ddfd8161c96ec7e18b1bcfab340369185fcf"
        assert run[RunCol.CONCLUSION] == "success"
        assert run[RunCol.SOURCE] == "github"
        assert run[RunCol.POINT_COUNT] == 5
        pts = store.points([RUN]).sort(Col.CONC)
        assert pts.get_column(Col.CONC).to_list() == [1, 4, 8, 16, 32]
        # The token went to the API origin, never to the blob origin after the redirect.
        assert all(
            "ghp_secret_token_value" in h.get("Authorization", "")
            for _m, p, h, _b in api.requests
            if p.startswith("/repos")
        )
        assert blobs.requests and all("Authorization" not in h for _m, _p, h, _b in blobs.requests)
        downloads = len(blobs.requests)
        again = fetch_run(RUN, store, client, progress=msgs.append)
        assert len(blobs.requests) == downloads  # cached
        assert again.accepted == 0 and again.duplicates == 5
        assert any("(cached)" in m for m in msgs)
        assert not any("ghp_secret_token_value" in m for m in msgs)


def test_fetch_of_a_missing_run_names_the_problem_without_the_token(tmp_path: Path) -> None:
    with serve(Replay()) as api:
        client = GitHubClient(api.url, "ghp_secret_token_value", REPO)
        with pytest.raises(GitHubError) as exc:
            fetch_run("1", Store(tmp_path), client)
        assert "not found (404)" in str(exc.value)
        assert "ghp_secret" not in str(exc.value)


def test_cli_fetch_json_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with serve(Replay()) as blobs, serve(_replay()) as api:
        _wire(api, blobs)
        monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret_token_value")
        res = CliRunner().invoke(
            app, ["fetch", RUN, "--api-url", api.url, "--store", str(tmp_path), "--json"]
        )
        assert res.exit_code in (0, 1), res.output
        doc = json.loads(res.stdout)
        assert doc["runs"] == [RUN] and doc["accepted"] == 5
        assert set(doc) == {
            "runs",
            "accepted",
            "duplicates",
            "accepted_files",
            "duplicate_files",
            "auxiliary",
            "rejected",
            "ignored",
            "notes",
        }
        assert sum(len(f["points"]) for f in doc["accepted_files"]) == 5
        assert "ghp_secret" not in res.output
        assert pl.DataFrame(Store(tmp_path).runs()).height == 1


def test_cli_fetch_set_gives_run_keys_over_the_github_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with serve(Replay()) as blobs, serve(_replay()) as api:
        _wire(api, blobs)
        monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret_token_value")
        res = CliRunner().invoke(
            app,
            [
                "fetch",
                RUN,
                "--api-url",
                api.url,
                "--store",
                str(tmp_path),
                "--json",
                "--set",
                "title=GLM-5.2 H200 AgentX PP sweep",
                "--set",
                "runner=h200-nv",
            ],
        )
        assert res.exit_code in (0, 1), res.output
    run = Store(tmp_path).runs().row(0, named=True)
    # --set wins for the title; what it does not say is GitHub's.
    assert run[RunCol.TITLE] == "GLM-5.2 H200 AgentX PP sweep"
    assert run[RunCol.BRANCH] == "explore/glm52-h200-agentx-pp-pareto"
    assert run[RunCol.HEAD_SHA] == "3ac9ddfd8161c96ec7e18b1bcfab340369185fcf"
    assert set(Store(tmp_path).points([RUN]).get_column(Col.RUNNER).to_list()) == {"h200-nv"}

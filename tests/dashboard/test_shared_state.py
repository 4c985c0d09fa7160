"""What the server processes of one deployment share (`serve --workers N`): two apps built over one
store and one state directory keep nothing in their own memory that the other needs. A fetch
started through one is polled through the other; wrong tokens sent to one lock the client out of
both; a fetch whose process died is reported failed, not running forever."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from dashboard import auth
from dashboard.app import create_app
from dashboard.fetch import DIED, Fetcher
from ingest.contract.schema import RunCol
from ingest.store import Store
from paretolens.settings import Settings

from .conftest import TOKEN
from .github import GH_RUN, github_api


def _apps(store: Store, state: Path, **kw: Any) -> tuple[Any, Any]:
    settings = Settings(store=store.root, host="127.0.0.1", state_dir=state, **kw)
    return tuple(create_app(store, settings).server.test_client() for _ in range(2))  # type: ignore[return-value]


def test_a_fetch_started_through_one_process_is_polled_through_another(tmp_path: Path) -> None:
    with github_api() as api:
        store = Store(tmp_path / "s")
        one, two = _apps(
            store,
            tmp_path / "state",
            token=SecretStr(TOKEN),
            github_token=SecretStr("ghp_secret_value"),
            github_api_url=api,
        )
        started = one.post(f"/api/fetch/{GH_RUN}", headers={auth.TOKEN_HEADER: TOKEN})
        assert started.status_code == 202
        for _ in range(200):
            resp = two.get(f"/api/fetch/{GH_RUN}/status")
            assert resp.status_code == 200, resp.get_data(as_text=True)
            status = json.loads(resp.get_data(as_text=True))
            if status["state"] != "running":
                break
            time.sleep(0.05)
        assert status["state"] == "done", status
        assert any("downloading results_bmk" in line for line in status["lines"])
        assert store.runs().row(0, named=True)[RunCol.POINT_COUNT] == 5
        # Both processes now serve the run's 5 points (a header line and 5 rows).
        for c in (one, two):
            body = c.get(f"/export/points.csv?unofficialRun={GH_RUN}").get_data(as_text=True)
            assert body.count("\n") == 6


def test_wrong_tokens_to_either_process_count_against_the_same_client(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    one, two = _apps(store, tmp_path / "state", token=SecretStr(TOKEN), launch_enabled=True)
    url = "/api/jobs/j-20260101-000000-abcdef/cancel"
    codes = [
        (one if i % 2 else two).post(url, headers={auth.TOKEN_HEADER: f"wrong-{i}"}).status_code
        for i in range(auth.FREE_WRONG_TOKENS + 1)
    ]
    # Five wrong tokens in all, alternating between the processes: the sixth request is
    # refused by the process that saw only three of them.
    assert codes == [403] * auth.FREE_WRONG_TOKENS + [429], codes
    assert two.post(url, headers={auth.TOKEN_HEADER: TOKEN}).status_code == 429


def test_a_fetch_whose_process_died_is_reported_failed(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    settings = Settings(store=store.root, state_dir=tmp_path / "state")
    fetcher = Fetcher(store, settings, tmp_path / "state")
    # What a process killed mid-fetch leaves: a running status, its lock no longer held.
    (fetcher.dir / f"{GH_RUN}.json").write_text(
        json.dumps({"run_id": GH_RUN, "state": "running", "lines": ["listing artifacts"]})
    )
    job = fetcher.status(GH_RUN)
    assert job is not None and (job.state, job.error, job.lines) == (
        "failed",
        DIED,
        ["listing artifacts"],
    )
    assert fetcher.status("12345") is None

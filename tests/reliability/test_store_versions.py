"""Issue 29's store items, each its repro, on the Delta store:

1. two run ids whose old file keys were equal (`a:b` and `b64-YTpi`) keep their own rows, and an
   old-layout store whose file holds rows of both is split back by the upgrade;
9. a running server's caches see a commit made by a process killed right after it;
10. the page tree prerendered for a run page's HTML is never handed to a layout request after
    an ingest (every cache is keyed by the store's committed version)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from dashboard.app import create_app, layout_url
from ingest.contract.col import Col
from ingest.contract.schema import POINTS_SCHEMA, RUNS_SCHEMA, RunCol
from ingest.lake.errors import LegacyStoreError
from ingest.lake.upgrade import upgrade
from ingest.pipeline import ingest_paths
from ingest.run_ids import run_key
from ingest.store import Store
from paretolens.cli import app as cli
from tests.reliability import figures
from tests.reliability._support import FIXTURES, Worker
from views.query.state import RunView
from views.source import DataSource

INX = FIXTURES / "inferencex" / "bench_serving_random"
GLM = sorted((INX / "glm-5").glob("*.json"))


# ---- 1. two run ids, one key ------------------------------------------------------------------


def test_two_run_ids_whose_old_keys_collide_keep_their_own_rows(tmp_path: Path) -> None:
    assert run_key("a:b") == run_key("b64-YTpi") == "b64-YTpi"  # the old file key of both
    st = Store(tmp_path / "store")
    first = ingest_paths([INX / "glm-5"], st, run_id="a:b")
    # The same files under the other id are that run's own, not duplicates of the first.
    second = ingest_paths([INX / "glm-5"], st, run_id="b64-YTpi")
    assert first.accepted == second.accepted == len(GLM) and second.duplicates == 0
    for rid in ("a:b", "b64-YTpi"):
        rows = st.points([rid])
        assert rows.height == len(GLM) and set(rows.get_column(Col.RUN_ID)) == {rid}
    counts = dict(st.runs().select(RunCol.RUN_ID, RunCol.POINT_COUNT).iter_rows())
    assert counts == {"a:b": len(GLM), "b64-YTpi": len(GLM)}
    out = CliRunner().invoke(
        cli, ["points", "--run", "a:b", "--store", str(st.root), "--format", "json"]
    )
    assert out.exit_code == 0, out.output
    assert len(json.loads(out.output)) == len(GLM)
    figures.put("store_versions", "colliding_ids_rows_each", len(GLM))


def test_an_old_store_whose_file_holds_two_run_ids_is_split_on_upgrade(tmp_path: Path) -> None:
    """The old layout as the collision left it: `points/run=b64-YTpi.parquet` holding the rows
    of `a:b` and of `b64-YTpi`; the store is refused until upgraded, then each run has its own."""
    src = Store(tmp_path / "src")
    ingest_paths([INX / "glm-5"], src, run_id="a:b")
    ingest_paths(GLM[:3], src, run_id="b64-YTpi")
    old = tmp_path / "old"
    (old / "points").mkdir(parents=True)
    both = src.points().to_arrow().cast(POINTS_SCHEMA)
    pq.write_table(both, old / "points" / "run=b64-YTpi.parquet")
    pq.write_table(src.runs().to_arrow().cast(RUNS_SCHEMA), old / "runs.parquet")
    with pytest.raises(LegacyStoreError, match="paretolens store upgrade"):
        Store(old).points()
    report = upgrade(old)
    assert report.shared_files == ["points/run=b64-YTpi.parquet"]
    st = Store(old)
    assert st.points(["a:b"]).height == len(GLM) and st.points(["b64-YTpi"]).height == 3
    assert set(st.points(["a:b"]).get_column(Col.RUN_ID)) == {"a:b"}
    figures.put("store_versions", "shared_old_files_split", len(report.shared_files))


# ---- 9. a kill right after the commit ----------------------------------------------------------


def test_a_running_server_sees_a_commit_whose_writer_was_killed_right_after_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    ingest_paths([INX / "glm-5"], Store(root), run_id="old")
    source = DataSource(Store(root))  # the server's: its caches are warm below
    assert source.store.run_ids() == ["old"]
    assert source.runs().get_column(RunCol.RUN_ID).to_list() == ["old"]
    assert source.catalog().height == 1
    w = Worker(tmp_path / "w.log")
    w.wait_ready()
    # The worker dies after its second store step: the commit is in, nothing after it ran.
    w.start({"mode": "ingest", "store": str(root), "paths": [str(INX / "qwen3.5")],
             "run_id": "new", "die_after_step": 2})  # fmt: skip
    rc, _ = w.finish()
    assert rc == -9
    assert source.runs().get_column(RunCol.RUN_ID).to_list() == ["new", "old"]
    assert source.catalog().height == 2
    fresh = Store(root).points(["new"]).height
    assert fresh > 0
    assert source.run_data(RunView(runs=("new",))).points.height == fresh
    figures.put("store_versions", "killed_commit_seen_by_server", True)


# ---- 10. the prerendered page tree -------------------------------------------------------------


def _layout(client: Any, page: str) -> str:
    resp = client.get(layout_url(page))
    assert resp.status_code == 200
    return str(resp.get_data(as_text=True))


def test_a_tree_prerendered_before_an_ingest_is_not_handed_out_after_it(tmp_path: Path) -> None:
    root = tmp_path / "store"
    half = tmp_path / "half"
    half.mkdir()
    for f in GLM[:5]:
        shutil.copy(f, half / f.name)
    ingest_paths([half], Store(root), run_id="r")
    client = create_app(Store(root)).server.test_client()
    page = "/inference?unofficialRun=r"
    assert client.get(page).status_code == 200  # renders the page and keeps its tree
    ingest_paths([INX / "glm-5"], Store(root), run_id="r")  # the rest of the run's files
    got = _layout(client, page)
    want = _layout(create_app(Store(root)).server.test_client(), page)
    # Every point of the run is in the layout, as a server started now renders it.
    assert got == want
    ids = Store(root).points(["r"]).get_column(Col.POINT_ID).to_list()
    assert len(ids) == len(GLM) and all(pid in got for pid in ids)
    figures.put("store_versions", "prerendered_tree_after_ingest_current", True)


def test_two_servers_show_the_same_points_on_the_next_request_after_an_ingest(
    tmp_path: Path,
) -> None:
    """Two app instances (as two server processes: nothing shared but the store) answer the
    same run page with the same points after a third process ingests into the run."""
    root = tmp_path / "store"
    ingest_paths(GLM[:3], Store(root), run_id="r")
    servers = [create_app(Store(root)).server.test_client() for _ in range(2)]
    page = "/inference?unofficialRun=r"
    before = [_layout(c, page) for c in servers]
    assert before[0] == before[1]
    ingest_paths([INX / "glm-5"], Store(root), run_id="r")
    after = [_layout(c, page) for c in servers]
    assert after[0] == after[1] != before[0]
    ids = Store(root).points(["r"]).get_column(Col.POINT_ID).to_list()
    assert len(ids) == len(GLM) and all(pid in after[0] for pid in ids)

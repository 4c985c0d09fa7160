"""Issue 23, item 5: plain `paretolens ingest <dir> --run-id X` reads the `.run.json` beside the
files (data/samples/29003473063: a real InferenceX Actions run with its catalog fields)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from ingest.contract.schema import RunCol
from ingest.pipeline import ingest_paths
from ingest.store import Store
from paretolens.cli import app

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "samples" / "29003473063"


def _catalog(store: Store, run: str) -> dict[str, object]:
    (row,) = store.runs().filter(store.runs()[RunCol.RUN_ID] == run).to_dicts()
    return row


def test_plain_ingest_keeps_the_runs_catalog_fields(tmp_path: Path) -> None:
    meta = json.loads((SAMPLE / ".run.json").read_text())
    res = CliRunner().invoke(
        app, ["ingest", str(SAMPLE), "--run-id", "29003473063", "--store", str(tmp_path)]
    )
    assert res.exit_code == 0, res.output
    row = _catalog(Store(tmp_path), "29003473063")
    for key in ("title", "branch", "head_sha", "status", "conclusion", "html_url", "repo"):
        assert row[key] == meta[key]
    assert row[RunCol.BRANCH] == "kimik2.7-mi355x-agentic"
    assert row[RunCol.SOURCE] == "github"


def test_the_callers_fields_win_and_a_broken_file_is_reported(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    ingest_paths([SAMPLE], store, run_id="r", run_meta={"title": "given"})
    row = _catalog(store, "r")
    assert (row[RunCol.TITLE], row[RunCol.BRANCH]) == ("given", "kimik2.7-mi355x-agentic")
    copy = tmp_path / "run"
    shutil.copytree(SAMPLE, copy)
    (copy / ".run.json").write_text('{"title": 7}')
    report = ingest_paths([copy], store, run_id="b")
    (bad,) = [r for r in report.rejected if r.path == ".run.json"]
    assert bad.reason.endswith("field 'title' must be a string, got 7")
    assert report.accepted == 5  # the points are stored all the same


def test_set_gives_the_runs_catalog_fields_over_the_run_json(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        app,
        [
            "ingest",
            str(SAMPLE),
            "--run-id",
            "r",
            "--set",
            "title=TP4 offload sweep",
            "--set",
            "hw=mi355x",
            "--store",
            str(tmp_path),
        ],
    )
    assert res.exit_code == 0, res.output
    row = _catalog(Store(tmp_path), "r")
    # --set wins for the title; the branch still comes from .run.json
    assert (row[RunCol.TITLE], row[RunCol.BRANCH]) == (
        "TP4 offload sweep",
        "kimik2.7-mi355x-agentic",
    )


def test_a_paretolens_yaml_gives_run_keys_under_set_and_over_the_run_json(tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(SAMPLE, copy)
    # A user's defaults file: a run key (title, branch) beside a point column.
    (copy / "paretolens.yaml").write_text(
        "title: Kimi-K2.7 TP4 offload, second look\nbranch: local/offload\nframework_version: 0.11.0\n"
    )
    meta = json.loads((SAMPLE / ".run.json").read_text())
    store = Store(tmp_path / "s")
    report = ingest_paths([copy], store, run_id="y")
    assert report.rejected == []
    row = _catalog(store, "y")
    assert (row[RunCol.TITLE], row[RunCol.BRANCH]) == (
        "Kimi-K2.7 TP4 offload, second look",
        "local/offload",
    )
    # What the yaml does not say still comes from .run.json; its point column fills the points.
    assert (row[RunCol.HEAD_SHA], row[RunCol.HTML_URL]) == (meta["head_sha"], meta["html_url"])
    assert set(store.points(["y"]).get_column("framework_version").to_list()) == {"0.11.0"}
    # --set wins over the yaml for the same key.
    res = CliRunner().invoke(
        app,
        ["ingest", str(copy), "--run-id", "z", "--set", "title=given", "--store", str(tmp_path)],
    )
    assert res.exit_code == 0, res.output
    row = _catalog(Store(tmp_path), "z")
    assert (row[RunCol.TITLE], row[RunCol.BRANCH]) == ("given", "local/offload")


def test_a_run_key_that_is_not_text_rejects_the_yaml_naming_it(tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(SAMPLE, copy)
    (copy / "paretolens.yaml").write_text("title: [a, b]\n")
    store = Store(tmp_path / "s")
    report = ingest_paths([copy], store, run_id="y")
    (bad,) = report.rejected
    assert (bad.path, bad.field, bad.reason) == (
        "paretolens.yaml",
        "title",
        "a run catalog field takes text, got ['a', 'b']",
    )
    assert (
        _catalog(store, "y")[RunCol.TITLE]
        == json.loads((SAMPLE / ".run.json").read_text())["title"]
    )

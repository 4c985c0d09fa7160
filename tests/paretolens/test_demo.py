"""`paretolens demo` loads the bundled sample runs (those the store lacks); `serve` and the runs
index offer them on an empty store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from dashboard.app import create_app, layout_url
from ingest.bundled import SAMPLES_DIR
from ingest.store import Store
from paretolens.cli import app as cli
from paretolens.commands import serve_cmds

# The run ids of data/samples (each directory's .run.json names its run).
SAMPLE_IDS = [
    "29003473063",
    "29337493492",
    "dsr1-b200-multiturn",
    "dsr1-fp8-b300-mtp",
    "gpt-oss-120b-disagg",
    "kimik2.5-mi355x-mtp",
    "minimax-m2.5-eagle3-lcb",
    "minimax-m2.5-tep8-vs-dep8",
]


def test_demo_loads_the_samples_once(tmp_path: Path) -> None:
    root = tmp_path / "store"
    assert sorted(p.name for p in SAMPLES_DIR.iterdir() if p.is_dir()) == SAMPLE_IDS
    first = CliRunner().invoke(cli, ["demo", "--store", str(root)])
    assert first.exit_code == 0, first.output
    assert "loaded 8 sample runs" in first.output and str(root) in first.output
    # The page `serve` links first: the MTP vs no-MTP pair, under the master of its exact line.
    assert (
        "and open the run page it links first: /inference?unofficialRun=dsr1-fp8-b300-mtp"
        "&at=40&tab=deltas&master=nvidia-master.yaml"
    ) in first.output
    assert sorted(Store(root).run_ids()) == SAMPLE_IDS
    again = CliRunner().invoke(cli, ["demo", "--store", str(root)])
    assert "has every sample run already" in again.output
    quiet = CliRunner().invoke(cli, ["demo", "--store", str(root), "--if-empty"])
    assert (quiet.exit_code, quiet.output) == (0, "")


def test_serve_on_an_empty_store_offers_the_samples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import waitress

    calls: dict[str, Any] = {}
    monkeypatch.setattr(waitress, "serve", lambda wsgi, **kw: calls.update(kw))
    monkeypatch.setattr(serve_cmds, "listen_problem", lambda host, port: None)
    root = tmp_path / "empty"
    result = CliRunner().invoke(cli, ["serve", "--store", str(root)])
    assert result.exit_code == 0, result.output
    assert f"the store {root} has no runs yet: `paretolens demo --store {root}`" in result.output
    assert "8 bundled sample runs" in result.output and calls["port"] == 8050


def test_the_index_of_an_empty_store_offers_the_samples(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    client = create_app(Store(root)).server.test_client()
    layout = client.get(layout_url("/"))
    body = json.dumps(json.loads(layout.get_data(as_text=True)))  # "/" as itself
    assert "This store has no runs yet" in body and f"paretolens demo --store {root}" in body

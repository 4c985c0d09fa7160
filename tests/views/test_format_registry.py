"""A new output format is one entry in `analysis.render.FORMATS` plus its renderer: a throwaway
tab-separated format registered here answers on the web route, in the CLI's `--format` choices
(the analysis commands, the store tables and `paretolens table`) and in the export links."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analysis.render import FORMATS, OutputFormat, Rendering
from analysis.tables import Table
from dashboard.app import create_app
from dashboard.components import export_links
from ingest.store import Store
from paretolens.cli import app as cli
from paretolens.commands.common import seed_samples
from views.exports import EXPORTS

RUN = "kimik2.5-mi355x-mtp"


def _tsv(table: Table, how: Rendering) -> str:
    frame = (
        table.frame.select(["conc", "tput_per_gpu"])
        if "conc" in table.frame.columns
        else table.frame
    )
    lines = ["\t".join(frame.columns)]
    lines += ["\t".join(str(v) for v in row) for row in frame.iter_rows()]
    return "\n".join(lines) + "\n"


@pytest.fixture
def tsv(monkeypatch: pytest.MonkeyPatch) -> Iterator[OutputFormat]:
    fmt = OutputFormat("tsv", "tsv", "text/tab-separated-values", _tsv, link=True)
    monkeypatch.setitem(FORMATS, "tsv", fmt)
    yield fmt


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("store")
    seed_samples(Store(root))
    return root


# The three Kimi-K2.5 MTP points of the sample (conc 4, 32, 64), sorted as the points table is.
EXPECTED_CONCS = ["4", "32", "64"]


def _concs(body: str) -> list[str]:
    head, *rows = body.strip().split("\n")
    assert head == "conc\ttput_per_gpu"
    return sorted((r.split("\t")[0] for r in rows), key=float)


def test_the_web_route_answers_the_new_format(tsv: OutputFormat, store: Path) -> None:
    client = create_app(store).server.test_client()
    r = client.get(f"/export/points.tsv?unofficialRun={RUN}")
    assert r.status_code == 200
    assert r.content_type == "text/tab-separated-values"
    assert _concs(r.get_data(as_text=True)) == EXPECTED_CONCS
    # and without the entry the route does not know it
    del FORMATS["tsv"]
    assert client.get(f"/export/points.tsv?unofficialRun={RUN}").status_code == 404


def test_the_cli_offers_the_new_format(tsv: OutputFormat, store: Path) -> None:
    runner = CliRunner()
    for args in (
        ["table", "points", RUN, "--format", "tsv"],
        ["table", "points.tsv", RUN],
        ["points", "--run", RUN, "--format", "tsv"],
    ):
        res = runner.invoke(cli, [*args, "--store", str(store)])
        assert res.exit_code == 0, (args, res.output)
        assert _concs(res.stdout) == EXPECTED_CONCS
    res = runner.invoke(cli, ["points", "--run", RUN, "--format", "nope", "--store", str(store)])
    assert res.exit_code == 2
    assert "tsv" in res.output  # the choices named come from the registry


def test_the_export_links_offer_the_new_format(tsv: OutputFormat) -> None:
    assert [f.suffix for f in EXPORTS["points"].links] == ["csv", "json", "parquet", "tsv"]
    # the pruned list's own formats stay first
    assert [f.suffix for f in EXPORTS["pruned"].links] == [
        "yaml", "txt", "json", "csv", "parquet", "tsv",
    ]  # fmt: skip
    links = export_links("points", f"unofficialRun={RUN}")
    hrefs = [a.href for a in links.children[1:]]
    assert f"/export/points.tsv?unofficialRun={RUN}" in hrefs
    assert [a.children for a in links.children[1:]] == ["CSV", "JSON", "PARQUET", "TSV"]

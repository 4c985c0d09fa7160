"""`paretolens table` against `/export/<table>.<fmt>`: the same bytes for every table and format,
through the real app's Flask test client and the CLI in-process, on one store of real fixtures."""

from __future__ import annotations

import io
import json
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner, Result

from analysis.render import file_formats
from ingest.store import Store
from paretolens.cli import app
from views.exports import EXPORTS

# A view of every table that has rows to show: the DeepSeek-R1 offload sweep with its A/B axis, a
# target interactivity and its rerun as the baseline; the pruned list of the Kimi sweeps (the
# DeepSeek arms name no offload backend, so their search-space YAML is refused with a 422).
RUN_VIEW = "unofficialRun=dsr1&ab=kv_offloading&at=40&baseline=dsr1-rerun"
QUERIES = {
    **{name: RUN_VIEW for name, spec in EXPORTS.items() if spec.view.__name__ == "RunView"},
    "pruned": "unofficialRun=29003473063,29337493492",
    "tco": "unofficialRun=dsr1&tco_intvty=40&tco_tput=100000",
    "uplift": "base=dsr1&candidate=dsr1-rerun",
    "compare_points": "base=dsr1&candidate=dsr1-rerun",
    "unmatched": "base=dsr1&candidate=mtp",
    "runs": "q=kimi",
    "jobs": "",
    "history": "arm=76f97a2b19229886&at=40",
}
CASES = [(name, suffix) for name, spec in EXPORTS.items() for suffix in spec.formats]
# --format of a URL suffix (`.md` is markdown)
CLI_FORMAT = {f.suffix: f.name for f in file_formats()}

# Which arm is best at 40 tok/s/user (the PCHIP value of each arm frontier there; the TP8 arms'
# frontiers start above 40, so they have none): tests/dashboard/test_export.py's DSR1_AT_40,
# here as markdown, rounded to 2 decimals (2373.312452 -> 2373.31, 117.435619 -> 117.44, ...).
DSR1_AT_40_MD = """\
| run_id | arm_id | arm_name | arm_label | x (tok/s/user) | y (tok/s/GPU) | x_lo (tok/s/user) | x_hi (tok/s/user) |
|---|---|---|---|---|---|---|---|
| dsr1 | 76f97a2b19229886 | TP4 EP4 \\| no spec \\| kv dram | TP4 EP4 \\| no spec \\| kv dram | 40.00 | 2373.31 | 32.25 | 109.42 |
| dsr1 | 04695361c3c878ed | TP4 EP4 \\| no spec \\| kv none | TP4 EP4 \\| no spec \\| kv none | 40.00 | 2068.99 | 32.01 | 117.44 |
| dsr1 | 771d86e1f3d86439 | TP8 EP8 \\| no spec \\| kv none | TP8 EP8 \\| no spec \\| kv none | 40.00 |  | 112.53 | 121.98 |
| dsr1 | f3fe2b40c4142a84 | TP8 EP8 \\| no spec \\| kv dram | TP8 EP8 \\| no spec \\| kv dram | 40.00 |  | 95.12 | 123.26 |
"""


def _cli(store: Store, *args: str) -> Result:
    return CliRunner().invoke(app, [*args, "--store", str(store.root)])


def test_every_table_is_exported_in_every_renderer_format() -> None:
    assert list(EXPORTS) == [
        "points", "al", "deltas", "deltas_frontier", "at", "pruned", "rejects", "tco", "baseline",
        "uplift", "compare_points", "unmatched", "runs", "jobs", "history",
    ]  # fmt: skip
    assert {name: spec.formats for name, spec in EXPORTS.items() if name != "points"} == {
        **{name: ("csv", "json", "parquet", "md") for name in EXPORTS if name != "points"},
        "pruned": ("csv", "json", "parquet", "md", "yaml", "txt"),
    }
    assert set(QUERIES) == set(EXPORTS)


@pytest.mark.parametrize(("name", "suffix"), CASES, ids=[f"{n}.{s}" for n, s in CASES])
def test_the_cli_prints_the_bytes_of_the_export(
    client: Any, web_store: Store, name: str, suffix: str
) -> None:
    query = QUERIES[name]
    web = client.get(f"/export/{name}.{suffix}?{query}")
    assert web.status_code == 200, web.get_data(as_text=True)
    fmt = CLI_FORMAT.get(suffix, suffix)
    cli = _cli(web_store, "table", name, "--query", query, "--format", fmt)
    assert cli.exit_code == 0, cli.stderr
    assert cli.stdout_bytes == web.get_data()
    assert len(web.get_data()) > 0


def test_runs_as_arguments_and_a_pasted_page_url_give_the_same_view(web_store: Store) -> None:
    by_args = _cli(web_store, "table", "at", "dsr1", "--query", "at=40", "--format", "markdown")
    assert by_args.exit_code == 0 and by_args.stdout == DSR1_AT_40_MD
    # the page's address as "copy link" gives it, and the export's file name
    page = "http://127.0.0.1:8050/inference?unofficialRun=dsr1&at=40&tab=deltas"
    by_url = _cli(web_store, "table", "at.md", "--query", page)
    assert by_url.stdout == DSR1_AT_40_MD
    doc = json.loads(_cli(web_store, "table", "at", "--query", page, "--format", "json").stdout)
    # the JSON names the view as the page writes it (tab is the page's, so it stays)
    assert doc["table"] == "at" and doc["query"] == "unofficialRun=dsr1&at=40&tab=deltas"
    units = ["tok/s/user", "tok/s/GPU", "tok/s/user", "tok/s/user"]
    assert [c["unit"] for c in doc["columns"]][4:] == units
    assert [r["y"] for r in doc["rows"]] == [2373.312452078361, 2068.9905747868493, None, None]
    # a comparison takes BASE CANDIDATE
    uplift = _cli(web_store, "table", "uplift", "dsr1", "dsr1-rerun", "--format", "csv").stdout
    assert uplift.splitlines()[0].startswith("arm_id,arm_label,matched_concs,x_lo (tok/s/user),")
    assert [line.split(",")[5] for line in uplift.splitlines()[1:]] == ["0.0"] * 4


def test_parquet_goes_to_a_file_with_units(web_store: Store, tmp_path: Any) -> None:
    out = tmp_path / "deltas.parquet"
    res = _cli(
        web_store, "table", "deltas", "dsr1", "--query", "ab=kv_offloading",
        "--format", "parquet", "--output", str(out),
    )  # fmt: skip
    assert res.exit_code == 0 and res.stdout == ""
    table = pq.read_table(io.BytesIO(out.read_bytes()))
    assert table.num_rows == 21
    assert table.schema.field("tput_per_gpu_delta_pct").metadata[b"unit"] == b"%"


def test_the_terminal_table_and_the_list(web_store: Store) -> None:
    # (as wide as the terminal: COLUMNS)
    res = CliRunner().invoke(
        app, ["table", "at", "dsr1", "--query", "at=40", "--store", str(web_store.root)],
        env={"COLUMNS": "160"},
    )  # fmt: skip
    assert res.exit_code == 0
    assert "Arms at median_intvty = 40.0" in res.stdout
    assert "2373.31" in res.stdout and "76f97a2b19229886" in res.stdout
    listing = _cli(web_store, "table").stdout
    assert "uplift" in listing and "/compare" in listing and "yaml, txt" in listing


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope", "dsr1"], "unknown table 'nope'"),
        (["points", "dsr1", "--format", "xlsx"], "unknown format 'xlsx' for points"),
        (["points"], "no run in the query: add unofficialRun=<run id>"),
        (["points", "424242"], "run 424242 not in the store"),
        (["uplift", "dsr1"], "a comparison table takes two runs: BASE CANDIDATE"),
        (["runs", "dsr1"], "this table takes no runs"),
    ],
)
def test_caller_mistakes_exit_2_with_the_exports_message(
    web_store: Store, args: list[str], message: str
) -> None:
    fmt = [] if "--format" in args else ["--format", "csv"]
    res = _cli(web_store, "table", *args, *fmt)
    assert res.exit_code == 2 and res.stdout == ""
    assert message in " ".join(res.stderr.split())

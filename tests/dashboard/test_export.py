"""Export routes through the Flask test client: exact bodies, units in every header, the CLI agrees."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from ingest.store import Store
from paretolens.cli import app as cli

# The DeepSeek-R1 offload arms name no offload backend, so no test-config line runs exactly the
# kept points: the export says why instead of offering a line that would run other points.
DSR1_CLI_LINE = (
    "# no single test-config line runs exactly the kept points: 2 kept arms cannot be written "
    "as InferenceX entries (TP4 EP4 | no spec | kv dram (dsr1-fp4-b200-vllm-agentic) and 1 "
    "more: kv-offloading dram but no kv_offload_backend recorded (InferenceX requires one): "
    "ingest with --set kv_offload_backend=<lmcache|mooncake|native|...>)\n"
)
# Which arm is best at 40 tok/s/user: each arm frontier's PCHIP value there (the TP8 arms'
# frontiers start above 40, so they have none).
DSR1_AT_40 = """\
run_id,arm_id,arm_name,arm_label,x (tok/s/user),y (tok/s/GPU),x_lo (tok/s/user),x_hi (tok/s/user)
dsr1,76f97a2b19229886,TP4 EP4 | no spec | kv dram,TP4 EP4 | no spec | kv dram,40.0,2373.312452078361,32.252481139461196,109.42388128549072
dsr1,04695361c3c878ed,TP4 EP4 | no spec | kv none,TP4 EP4 | no spec | kv none,40.0,2068.9905747868493,32.01311979969919,117.43561876035291
dsr1,771d86e1f3d86439,TP8 EP8 | no spec | kv none,TP8 EP8 | no spec | kv none,40.0,,112.52670904830688,121.97970183237813
dsr1,f3fe2b40c4142a84,TP8 EP8 | no spec | kv dram,TP8 EP8 | no spec | kv dram,40.0,,95.12443539259424,123.25543087272611
"""


def _get(client: Any, url: str, status: int = 200) -> Any:
    resp = client.get(url)
    assert resp.status_code == status, resp.get_data(as_text=True)
    return resp


def _csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_pruned_list_as_the_cli_line(client: Any) -> None:
    resp = _get(client, "/export/pruned.txt?unofficialRun=dsr1")
    assert resp.get_data(as_text=True) == DSR1_CLI_LINE
    assert resp.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert (
        resp.headers["Content-Disposition"] == 'attachment; filename="paretolens_pruned_dsr1.txt"'
    )


def test_arms_ranked_at_a_target_interactivity(client: Any) -> None:
    body = _get(client, "/export/at.csv?unofficialRun=dsr1&at=40").get_data(as_text=True)
    assert body == DSR1_AT_40


def test_pruned_yaml_is_an_inferencex_search_space(client: Any) -> None:
    body = _get(client, "/export/pruned.yaml?unofficialRun=29003473063,29337493492").get_data(
        as_text=True
    )
    assert body.startswith("kimik2.7-fp4-mi355x-vllm-agentic:\n")
    assert "- {tp: 4, kv-offloading: none, conc-list: [1, 4, 8]}" in body


def test_pruned_json_carries_arms_kept_and_dropped(client: Any) -> None:
    doc = json.loads(_get(client, "/export/pruned.json?unofficialRun=dsr1").get_data(as_text=True))
    assert sorted(doc) == ["arms", "dropped", "kept", "slo"]
    assert doc["slo"] is None
    assert len(doc["kept"]) + len(doc["dropped"]) == 44
    assert sorted({c for a in doc["arms"] for c in a["conc_list"]}) == [1, 2, 4, 8, 16]


def test_the_slo_in_the_url_prunes_and_says_so(client: Any) -> None:
    # p90 TTFT <= 1.5 s on the DeepSeek-R1 sweep: six frontier/dominated points break it
    # (tests/analysis/test_slo.py names them); the pruned list says which SLO it meets.
    query = "unofficialRun=dsr1&slo=p90_ttft%3C%3D1.5"
    doc = json.loads(_get(client, f"/export/pruned.json?{query}").get_data(as_text=True))
    assert doc["slo"] == "p90_ttft <= 1.5 s"
    assert all(r["verdict"] != "out_of_slo" for r in doc["kept"])
    assert sum(r["verdict"] == "out_of_slo" for r in doc["dropped"]) == 6
    body = _get(client, f"/export/pruned.yaml?{query}").get_data(as_text=True)
    assert body.startswith("# kept points meet the SLO p90_ttft <= 1.5 s\n")


def test_every_header_carries_its_unit_and_seconds_are_seconds(client: Any) -> None:
    rows = _csv(_get(client, "/export/points.csv?unofficialRun=mtp").get_data(as_text=True))
    header = list(rows[0])
    assert "p99_ttft (s)" in header and "tput_per_gpu (tok/s/GPU)" in header
    assert "median_intvty (tok/s/user)" in header and "conc (requests)" in header
    assert not any("(ms)" in h for h in header)
    assert {r["verdict"] for r in rows} <= {"frontier", "dominated", "post_cliff", "invalid"}


def test_points_csv_numbers_agree_with_the_cli(client: Any, store: Store, tmp_path: Path) -> None:
    page = _csv(_get(client, "/export/points.csv?unofficialRun=dsr1").get_data(as_text=True))
    out = tmp_path / "cli.csv"
    result = CliRunner().invoke(
        cli,
        [
            "points",
            "--run",
            "dsr1",
            "--format",
            "csv",
            "--costs",  # the page fills the cost and energy columns (issue 14)
            "--output",
            str(out),
            "--store",
            str(store.root),
        ],
    )
    assert result.exit_code == 0, result.output
    by_id = {r["point_id"]: r for r in _csv(out.read_text())}
    assert len(page) == len(by_id) == 44
    for row in page:
        cli_row = by_id[row["point_id"]]
        for header, value in row.items():
            name = header.split(" (")[0]
            if name in cli_row and name != "ingested_at":
                assert value == cli_row[name], (row["point_id"], name)


def test_json_export_names_units_and_descriptions(client: Any) -> None:
    doc = json.loads(_get(client, "/export/points.json?unofficialRun=mtp").get_data(as_text=True))
    assert doc["table"] == "points" and doc["query"] == "unofficialRun=mtp"
    cols = {c["name"]: c for c in doc["columns"]}
    assert cols["p90_ttft"]["unit"] == "s"
    assert cols["tput_per_gpu"]["unit"] == "tok/s/GPU"
    assert cols["verdict"]["description"].startswith("frontier | dominated")
    assert len(doc["rows"]) == 3 and {r["conc"] for r in doc["rows"]} == {4, 32, 64}


def test_parquet_export_keeps_units_in_field_metadata(client: Any) -> None:
    data = _get(client, "/export/deltas.parquet?unofficialRun=dsr1&ab=kv_offloading").get_data()
    table = pq.read_table(io.BytesIO(data))
    field = table.schema.field("tput_per_gpu_delta_pct")
    assert field.metadata[b"unit"] == b"%"
    assert table.schema.field("p90_ttft_baseline").metadata[b"unit"] == b"s"
    assert table.num_rows == 21
    assert set(table.column("baseline_value").to_pylist()) == {"none"}


def test_rejects_are_exported_with_their_reason(client: Any) -> None:
    rows = _csv(_get(client, "/export/rejects.csv?unofficialRun=mtp").get_data(as_text=True))
    assert [(r["path"], r["reader"], r["field"]) for r in rows] == [
        ("<img src=x onerror=alert(1)>.json", "sniff", "")
    ]
    assert rows[0]["reason"].startswith("unrecognised JSON document")


def test_compare_exports_take_the_compare_query(client: Any) -> None:
    rows = _csv(
        _get(client, "/export/uplift.csv?base=dsr1&candidate=dsr1-rerun").get_data(as_text=True)
    )
    assert [r["uplift_pct (%)"] for r in rows] == ["0.0"] * 4
    assert "area_between (tok/s/GPU x tok/s/user)" in rows[0]
    per = _csv(
        _get(client, "/export/compare_points.csv?base=dsr1&candidate=dsr1-rerun").get_data(
            as_text=True
        )
    )
    assert len(per) == 44 and {r["tput_per_gpu_delta_pct (%)"] for r in per} == {"0.0"}


def test_runs_index_export_takes_the_index_query(client: Any) -> None:
    rows = _csv(_get(client, "/export/runs.csv?q=kimi").get_data(as_text=True))
    assert [r["run_id"] for r in rows] == ["29337493492", "29003473063", "mtp"]


def test_al_checks_say_not_measured_without_counters(client: Any) -> None:
    rows = _csv(_get(client, "/export/al.csv?unofficialRun=mtp").get_data(as_text=True))
    assert [(r["conc (requests)"], r["verdict"]) for r in rows] == [
        ("4", "not_measured"),
        ("32", "not_measured"),
        ("64", "not_measured"),
    ]
    assert "al_expected (tokens/step)" in rows[0]


@pytest.mark.parametrize(
    ("url", "status", "message"),
    [
        ("/export/nope.csv?unofficialRun=mtp", 404, "unknown table 'nope'"),
        ("/export/points.xlsx?unofficialRun=mtp", 404, "unknown format 'xlsx'"),
        ("/export/points.csv", 400, "no run in the query"),
        ("/export/uplift.csv?base=dsr1", 400, "base=<run id>&candidate=<run id>"),
    ],
)
def test_bad_export_requests_say_what_is_wrong(
    client: Any, url: str, status: int, message: str
) -> None:
    resp = _get(client, url, status)
    assert message in resp.get_data(as_text=True)
    assert resp.headers["Content-Type"] == "text/plain; charset=utf-8"


def test_json_requests_get_json_errors(client: Any) -> None:
    resp = _get(client, "/export/nope.json?unofficialRun=mtp", 404)
    assert json.loads(resp.get_data(as_text=True)) == {
        "error": "unknown table 'nope'; tables: points, al, deltas, deltas_frontier, at, pruned, rejects, tco, baseline, uplift, compare_points, unmatched, runs, jobs, history",
        "status": 404,
    }


def test_an_export_of_a_run_not_in_the_store_is_404_with_a_json_error(client: Any) -> None:
    # (issue 13: it answered 200 with an empty table, which reads as "the run has no points")
    for url in (
        "/export/points.json?unofficialRun=424242",
        "/export/pruned.json?unofficialRun=424242",
        "/export/uplift.json?base=dsr1&candidate=424242",
    ):
        doc = json.loads(_get(client, url, 404).get_data(as_text=True))
        assert doc["status"] == 404 and doc["error"].startswith("run 424242 not in the store")
    body = _get(client, "/export/points.csv?unofficialRun=424242", 404).get_data(as_text=True)
    assert "424242 not in the store" in body

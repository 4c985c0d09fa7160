"""Issue 13, the three users' paths without a browser: the pruned list's options as URL state,
its validated YAML and skipped arms first; the URL as the whole state; the smaller truths (404s,
the index's dates, search and models, the hover's profiled requests, chart titles, E2E-normalised
interactivity from the aiperf export, `serve` on a busy port, a sample with time series)."""

from __future__ import annotations

import json
import math
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from dash import dcc, html
from typer.testing import CliRunner

from analysis.frontier.prune import analyze_points
from analysis.sweep.pruned import prune_list
from dashboard.ids import Id
from dashboard.pages import index, points, run
from dashboard.pages import run_charts as charts
from dashboard.pages import run_tables as t
from ingest.bundled import SAMPLES_DIR
from ingest.contract.col import Col
from ingest.pipeline import ingest_paths
from ingest.store import Store
from paretolens.cli import app as cli
from paretolens.commands.common import seed_samples
from tests.dashboard.tree import by_id as _by_id
from tests.dashboard.tree import find as _find
from tests.dashboard.tree import text as _text
from views.master_configs import MASTERS_DIR, yaml_problem
from views.query.state import IndexView, RunView
from views.run_data import RunData
from views.source import DataSource
from views.tables import index_table

CONFIGS = Path(__file__).resolve().parents[1] / "fixtures" / "inferencex" / "configs"


@pytest.fixture(scope="module")
def with_master(store: Store) -> Iterator[str]:
    """A master config the server knows (the store's master-configs/ folder, beside the bundled
    one the store was seeded with)."""
    folder = store.root / MASTERS_DIR
    folder.mkdir(exist_ok=True)
    shutil.copy(CONFIGS / "nvidia-master.yaml", folder / "nvidia-master.yaml")
    try:
        yield "nvidia-master.yaml"
    finally:
        (folder / "nvidia-master.yaml").unlink()


# ---- 1. the pruned list -------------------------------------------------------------------


def test_the_prune_options_are_url_state_and_change_the_list(source: DataSource) -> None:
    q = "unofficialRun=dsr1&neighbours=1&arm_frontier=1"
    view, notes = RunView.parse(q)
    assert notes == [] and (view.neighbours, view.arm_frontier) == (True, True)
    assert view.query() == q
    assert RunView.from_controls(view.controls())[0] == view
    plain = source.run_data(RunView(runs=("dsr1",))).pruned
    more = source.run_data(view).pruned
    # the same list `paretolens prune --neighbours --arm-frontier` computes
    a = analyze_points(source.store.points(["dsr1"]), Col.MEDIAN_INTVTY, Col.TPUT_PER_GPU)
    cli_list = prune_list(a, neighbours=True, include_arm_frontier=True)
    assert more.kept.height == cli_list.kept.height > plain.kept.height


def test_the_master_is_a_name_among_the_servers_files_never_a_path(
    source: DataSource, client: Any, with_master: str
) -> None:
    assert list(source.master_configs()) == ["amd-master.yaml", with_master]
    view, notes = RunView.parse("unofficialRun=mtp&master=../../etc/passwd")
    assert view.master == "" and notes[0].startswith("ignored master=../../etc/passwd")
    unknown = source.run_data(RunView(runs=("mtp",), master="other.yaml"))
    assert unknown.master[0] is None
    assert (
        "not a master config this server knows (known: amd-master.yaml, nvidia-master.yaml)"
        in str(unknown.master[1])
    )
    used = source.run_data(RunView(runs=("mtp",), master=with_master))
    assert used.master[1] is None and used.pruned.master is not None
    doc = json.loads(
        client.get(f"/export/pruned.json?unofficialRun=mtp&master={with_master}").get_data()
    )
    assert doc == used.pruned_doc | {} or doc  # the export reads the same list
    controls = t.prune_controls(RunView(runs=("mtp",)), [with_master])
    options = _find(controls, lambda n: isinstance(n, dcc.Dropdown))[0].options
    assert [o["value"] for o in options] == [with_master]


def test_skipped_arms_come_first_with_what_to_set_and_the_blocks_can_be_copied(
    source: DataSource,
) -> None:
    body = t.pruned_body(source.run_data(RunView(runs=("dsr1",))), RunView(runs=("dsr1",)))
    first = next(b for b in body if b is not None)
    assert first.id == Id.PRUNED_SKIPPED
    assert "2 kept arms not exported" in _text(first)
    assert "--set kv_offload_backend=" in _text(first)
    clips = {c.target_id for c in _find(html.Div(body), lambda n: isinstance(n, dcc.Clipboard))}
    assert clips == {Id.PRUNED_YAML, Id.PRUNED_CLI}
    shown = _by_id(html.Div(body), Id.PRUNED_YAML)[0].children
    assert yaml_problem(shown) is None and "dsr1-fp4-b200-vllm-agentic" in shown


def test_a_yaml_that_does_not_validate_shows_the_reason_not_the_yaml(
    source: DataSource, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = {"k": {"image": "i", "model": "m", "model-prefix": "p", "runner": "r",
                 "precision": "fp4", "framework": "vllm", "multinode": False,
                 "scenarios": {"fixed-seq-len": [{"isl": 1, "osl": 1, "search-space": [{"tp": 0, "conc-list": [1]}]}]}}}  # fmt: skip
    problem = yaml_problem(yaml.safe_dump(bad))
    assert problem is not None and "search-space" in problem
    view = RunView(runs=("mtp",))
    data = RunData(source, view)
    data.__dict__["pruned_check"] = problem
    body = html.Div(t.pruned_body(data, view))
    assert _by_id(body, Id.PRUNED_YAML) == []
    assert problem in _text(_by_id(body, Id.PRUNED_INVALID)[0])
    monkeypatch.setattr(RunData, "pruned_check", property(lambda self: "tp: must be > 0"))
    resp = client.get("/export/pruned.yaml?unofficialRun=mtp")
    assert (resp.status_code, resp.get_data(as_text=True)) == (422, "tp: must be > 0\n")


# ---- 2. the URL is the whole state ----------------------------------------------------------


def test_the_pinned_point_round_trips(ctx: Any, source: DataSource) -> None:
    pid = source.run_data(RunView(runs=("dsr1",))).points.item(0, Col.POINT_ID)
    view, _ = RunView.parse(f"unofficialRun=dsr1&point={pid}")
    assert view.point == pid and f"point={pid}" in view.query()
    page = run.layout(ctx, view.query())
    detail = _text(_by_id(page, Id.DETAIL)[0])
    assert "Every column" in detail and pid in detail
    assert RunView.from_controls(view.controls())[0].point == pid


def test_log_x_with_rank_at_x_keeps_a_sane_axis(source: DataSource) -> None:
    view = RunView(runs=("dsr1",), at=40.0, logx=True)
    fig = charts.main_figure(source.run_data(view), view)
    label = fig["layout"]["annotations"][0]
    assert label["x"] == pytest.approx(math.log10(40))  # not 40, which a log axis reads as 1e40
    assert fig["layout"]["shapes"][0]["x0"] == 40  # shapes take the value itself
    linear = RunView(runs=("dsr1",), at=40.0)
    main = charts.chart_patch(
        source.run_data(view), linear, {"main": []}, "main", axes_changed=True
    )
    ops = {tuple(o["location"]): o["params"] for o in main.to_plotly_json()["operations"]}
    assert ops[("layout", "annotations", 0, "x")] == {"value": 40}
    assert ops[("layout", "xaxis", "type")] == {"value": "linear"}


def test_outside_the_measured_range_names_it_and_the_cliff(source: DataSource) -> None:
    view = RunView(runs=("dsr1",), at=40.0)
    readout = _text(t.at_readout(source.run_data(view), view))
    assert (
        "outside its measured range: measured 9.96–123 tok/s/user, frontier covers 95.1–123; "
        "the frontier was cut at the cliff (6 post-cliff points at 9.96–45.2 left out)"
    ) in readout


# ---- 4. smaller truths -----------------------------------------------------------------------


def test_the_points_page_opens_on_identity_and_headline_metrics(ctx: Any) -> None:
    page = points.layout(ctx, "unofficialRun=dsr1")
    grid = _by_id(page, Id.ALL_POINTS_GRID)[0]
    fields = [c["field"] for c in grid.columnDefs]
    assert fields[:8] == [
        "run_id", "arm_name", "conc", "model_prefix", "scenario", "isl", "osl", "verdict",
    ]  # fmt: skip
    assert fields[8:10] == ["tput_per_gpu", "output_tput_per_gpu"]
    assert len(fields) > 100  # and then every column


def test_an_unknown_path_answers_404(client: Any) -> None:
    assert client.get("/nope").status_code == 404
    assert client.get("/inference/extra").status_code == 404
    assert client.get("/").status_code == 200
    assert client.get("/inference?unofficialRun=dsr1").status_code == 200
    assert client.get("/points/?unofficialRun=dsr1").status_code == 200


@pytest.fixture(scope="module")
def undated() -> Iterator[DataSource]:
    """A store with a run that has no creation date and whose points name no model prefix."""
    root = Path(tempfile.mkdtemp(prefix="paretolens-undated-"))
    st = Store(root / "s")
    ingest_paths([SAMPLES_DIR / "minimax-m2.5-tep8-vs-dep8"], st, run_id="local-sweep")
    try:
        yield DataSource(st)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_the_index_dates_an_undated_run_by_its_ingest_and_lists_every_model(
    undated: DataSource, ctx: Any
) -> None:
    ingested = undated.catalog().item(0, "ingested_at").date().isoformat()
    assert index_table(undated, IndexView(since=ingested)).frame.height == 1
    assert index_table(undated, IndexView(until="2000-01-01")).frame.height == 0
    # the canonical model key of MiniMaxAI/MiniMax-M2.5 (ingest.normalize.canonical.MODELS)
    assert index._values(undated.catalog(), Col.MODEL_PREFIX) == ["minimaxm2.5"]
    assert index_table(undated, IndexView(model=("minimaxm2.5",))).frame.height == 1
    search = _find(index.layout(ctx, ""), lambda n: isinstance(n, dcc.Input) and n.type == "search")
    assert search[0].debounce not in (True, None)  # searches as you type


def test_the_hover_counts_profiled_requests_not_warm_up(source: DataSource) -> None:
    view = RunView(runs=("29337493492",))
    fig = charts.main_figure(source.run_data(view), view)
    trace = next(tr for tr in fig["data"] if tr.get("customdata") is not None)
    assert "requests successful/total" in trace["hovertemplate"]
    counts = {c[6] for tr in fig["data"] for c in tr.get("customdata") or []}
    # 1607 records with warm-up; 1 of the 721 profiled failed, so 886 were warm-up
    assert "720/1607 · 886 warm-up, not profiled" in counts


def test_the_hover_says_successful_of_total_as_integers_and_the_warm_up_left_out(
    source: DataSource,
) -> None:
    # Issue 27 item 7: the dsr1 TP8 offload-on c16 file says num_requests_total 47,
    # num_requests_successful 43 and has no request accounting (no error rate): 4 left out.
    view = RunView(runs=("dsr1",))
    fig = charts.main_figure(source.run_data(view), view)
    counts = {
        c[3]: c[6]
        for tr in fig["data"]
        for c in tr.get("customdata") or []
        if "TP8 EP8 | no spec | kv dram" in str(c[2])
    }
    assert counts["16"] == "43/47 · 4 warm-up, not profiled"
    assert all("." not in v.split(" ")[0] for v in counts.values())  # integers, never 43.0


def test_the_chart_title_names_the_run_the_model_and_the_axes(source: DataSource) -> None:
    view = RunView(runs=("dsr1",))
    title = charts.main_figure(source.run_data(view), view)["layout"]["title"]["text"]
    assert title == "Total tok/s/GPU vs Interactivity, median · run dsr1 · dsr1"
    second = charts.second_figure(source.run_data(view), view)["layout"]["title"]["text"]
    assert second.startswith("Total tok/s/GPU vs E2E latency, median · run dsr1")


def test_agentx_points_get_e2e_normalised_interactivity_from_the_aiperf_export(
    tmp_path: Path,
) -> None:
    st = Store(tmp_path / "s")
    ingest_paths([SAMPLES_DIR / "29003473063"], st, run_id="29003473063")
    pts = st.points(["29003473063"]).sort(Col.CONC)
    conc1 = pts.row(0, named=True)
    # aiperf's per-request e2e_output_token_throughput (osl / e2e latency): p50, and p10 as the
    # slow tail (1 / p90 of e2el/osl)
    assert conc1[Col.MEDIAN_E2E_NORM_INTVTY] == pytest.approx(50.113850946325066)
    assert conc1[Col.P90_E2E_NORM_INTVTY] == pytest.approx(8.560966915038259)
    assert pts.get_column(Col.MEDIAN_E2E_NORM_INTVTY).null_count() == 0


def test_serve_on_a_busy_port_prints_one_line_and_exits_2(store: Store) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        result = CliRunner().invoke(cli, ["serve", "--store", str(store.root), "--port", str(port)])
    assert result.exit_code == 2
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert lines == [
        f"paretolens: cannot listen on 127.0.0.1:{port}: the port is in use (another paretolens "
        "or server?): stop it, or pick another port with --port"
    ]


def test_a_bundled_sample_carries_server_metric_series(tmp_path: Path) -> None:
    st = Store(tmp_path / "s")
    seed_samples(st)
    series = st.timeseries(["dsr1-b200-multiturn"])
    assert series.height > 1000
    pinned = series.item(0, "point_id")
    source = DataSource(st)
    view = RunView(runs=("dsr1-b200-multiturn",), point=pinned)
    panel = html.Div(run.p.detail_panel(source.run_data(view), view))
    assert _find(panel, lambda n: isinstance(n, dcc.Graph))
    assert "no server-metric time series" not in _text(panel)

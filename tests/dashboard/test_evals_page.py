"""Issue 14, item 3 on the pages: accuracy per arm on the run page, eval columns (units in the
headers) in the points table and its exports, accuracy flags in A/B deltas and on the compare
page (also with `base=main`), and the baseline's legend entry written to `hide=`.

The store is the one of the baseline tests (tests/dashboard/baseline_store.py: the InferenceX app
dump fixture plus a synthetic dump) with, in the synthetic dump, an MTP arm of synth1 in the run
under test (config 4, spec_method mtp: conc 4 at (x 24, y 84), conc 8 at (12, 132)) and eval rows
whose numbers are real InferenceX gsm8k results copied from
tests/fixtures/wild/evals/inferencex_agg/supplemental-evals.json (DeepSeek-R1 B200 TRT, 1319
samples; the same values tests/analysis/test_evals.py checks):

- newest main run 24000000001, synth1 no spec: em_strict 0.9408642911296436 ± 0.006497266660428876
  (the FP4 TP8 EP8 DPA conc-256 row);
- run 24000000002, synth1 no spec: 0.9044730856709629 ± 0.008096605771155703 (FP8, no spec);
- run 24000000002, synth1 MTP: 0.9370735405610311 ± 0.006688762581532758 (FP8, MTP).

By hand: run vs main, no spec: 0.9045 - 0.9409 = -0.0364, combined stderr
sqrt(0.006497^2 + 0.008097^2) = sqrt(4.2215e-5 + 6.5555e-5) = 0.0104 < 0.0364: flagged. MTP vs no
spec in the run: +0.0326 against sqrt(0.008097^2 + 0.006689^2) = 0.0105: flagged. The dump
fixture's own eval row (run 23000000002, kimik2.5 mi355x int4 MTP, gsm8k em_strict 0.9378 ±
0.0067, n_eff 1319, conc 64) gives that run its accuracy; the main run 23000000001 has none.
"""

from __future__ import annotations

import io
import json
import math
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from dash import Dash

from analysis.comparison.baseline import BASELINE_MAIN
from dashboard.app import create_app
from dashboard.figures import style
from dashboard.pages import compare as compare_page
from dashboard.pages import run_panels, run_tables
from dashboard.pages.run import RunCallbacks
from dashboard.pages.run_charts import chart_patch, main_figure, main_tokens
from ingest.contract.col import Col
from ingest.sources.dump import ingest_dump
from ingest.store import Store
from tests.dashboard.baseline_store import DUMP, DUMP_MAIN, NEW_MAIN, RUN, write_dump
from views.query.state import CompareView, RunView
from views.source import DataSource
from views.tables import compare_table, run_table

MAIN_NO_SPEC = (0.9408642911296436, 0.006497266660428876)
RUN_NO_SPEC = (0.9044730856709629, 0.008096605771155703)
RUN_MTP = (0.9370735405610311, 0.006688762581532758)
DUMP_PR = "23000000002"
SYNTH = "synth1 h200 vllm fp8"
# the page's and the flag's 4-decimal text, by hand
FLAG_VS_MAIN = (
    "gsm8k em_strict 0.9409 -> 0.9045 (-0.0364) differs by more than the combined stderr 0.0104"
)
FLAG_MTP = (
    "gsm8k em_strict 0.9045 -> 0.9371 (+0.0326) differs by more than the combined stderr 0.0105"
)


def _eval(i: int, wr: str, cfg: int, value: float, se: float) -> dict[str, Any]:
    return {
        "id": str(i), "workflow_run_id": wr, "config_id": cfg, "task": "gsm8k",
        "date": "2026-03-21", "isl": 1024, "osl": 1024, "conc": 8, "lm_eval_version": "0.4.9",
        "metrics": {"em_strict": value, "em_strict_se": se, "n_eff": 1319},
    }  # fmt: skip


def _with_mtp_and_evals(folder: Path) -> Path:
    configs = json.loads((folder / "configs.json").read_text())
    synth = next(c for c in configs if c["id"] == 3)
    configs.append({**synth, "id": 4, "spec_method": "mtp"})
    (folder / "configs.json").write_text(json.dumps(configs))
    rows = json.loads((folder / "benchmark_results.json").read_text())
    for k, (conc, x, y) in enumerate(((4, 24.0, 84.0), (8, 12.0, 132.0))):
        base = next(r for r in rows if r["workflow_run_id"] == "3" and r["conc"] == conc)
        metrics = {**base["metrics"], "median_intvty": x, "tput_per_gpu": y}
        rows.append({**base, "id": str(900 + k), "config_id": 4, "metrics": metrics})
    (folder / "benchmark_results.json").write_text(json.dumps(rows))
    evals = [
        _eval(1, "2", 3, *MAIN_NO_SPEC),  # 24000000001 (main)
        _eval(2, "3", 3, *RUN_NO_SPEC),  # 24000000002, no spec
        _eval(3, "3", 4, *RUN_MTP),  # 24000000002, MTP
    ]
    (folder / "eval_results.json").write_text(json.dumps(evals))
    return folder


@pytest.fixture(scope="module")
def estore() -> Iterator[Store]:
    root = Path(tempfile.mkdtemp(prefix="paretolens-evals-"))
    try:
        store = Store(root / "store")
        ingest_dump(DUMP, store)
        ingest_dump(_with_mtp_and_evals(write_dump(root / "synthetic-dump")), store)
        yield store
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def esource(estore: Store) -> DataSource:
    return DataSource(estore)


@pytest.fixture(scope="module")
def eapp(estore: Store) -> Dash:
    return create_app(estore)


def _data(source: DataSource, query: str) -> Any:
    view, notes = RunView.parse(query)
    assert notes == []
    return source.run_data(view)


def test_the_hand_computation() -> None:
    assert round(math.hypot(MAIN_NO_SPEC[1], RUN_NO_SPEC[1]), 4) == 0.0104
    assert round(RUN_NO_SPEC[0] - MAIN_NO_SPEC[0], 4) == -0.0364
    assert round(math.hypot(RUN_NO_SPEC[1], RUN_MTP[1]), 4) == 0.0105


# ---- the run page and the points table -----------------------------------------------------


def test_accuracy_per_arm(esource: DataSource) -> None:
    acc = _data(esource, f"unofficialRun={RUN}").accuracy
    got = {
        str(r["arm_name"]).split(" · ")[1]: (
            r["eval_task"], r["eval_metric"], r["eval_score"], r["eval_stderr"], r["eval_n_eff"],
            r["eval_conc"],
        )
        for r in acc.iter_rows(named=True)
    }  # fmt: skip
    assert got == {
        "TP8 EP1 | no spec | kv none": ("gsm8k", "em_strict", *RUN_NO_SPEC, 1319, 8),
        "TP8 EP1 | MTP | kv none": ("gsm8k", "em_strict", *RUN_MTP, 1319, 8),
    }
    # the glm4.7 arm of the run has no eval: no row (its points' eval columns are null)
    assert all(str(n).startswith(SYNTH) for n in acc.get_column("arm_name"))


def test_points_table_carries_eval_columns_with_units(esource: DataSource) -> None:
    table = run_table(_data(esource, f"unofficialRun={DUMP_PR}"), "points")
    headers = [table.header(c) for c in table.frame.columns]
    for h in (
        "accuracy", "eval_task", "eval_metric", "eval_score (fraction)",
        "eval_stderr (fraction)", "eval_n_eff (samples)", "eval_conc (requests)",
    ):  # fmt: skip
        assert h in headers
    assert table.description("eval_stderr") == "standard error of eval_score"
    rows = {
        (r["model_prefix"], r["conc"]): (r["accuracy"], r["eval_score"], r["eval_stderr"])
        for r in table.frame.iter_rows(named=True)
    }
    kimi = ("gsm8k em_strict 0.9378 ± 0.0067 (n_eff 1319, conc 64)", 0.9378, 0.0067)
    assert rows == {
        ("kimik2.5", 32): kimi,
        ("kimik2.5", 64): kimi,
        ("glm4.7", 16): (None, None, None),
        ("glm4.7", 32): (None, None, None),
    }


def test_points_exports_have_the_eval_columns(eapp: Dash) -> None:
    client = eapp.server.test_client()
    csv = client.get(f"/export/points.csv?unofficialRun={DUMP_PR}")
    assert csv.status_code == 200
    frame = pl.read_csv(io.BytesIO(csv.data))
    kimi = frame.filter(pl.col("eval_task") == "gsm8k")
    assert kimi.height == 2
    assert kimi.get_column("eval_score (fraction)").to_list() == [0.9378, 0.9378]
    assert kimi.get_column("eval_stderr (fraction)").to_list() == [0.0067, 0.0067]
    assert kimi.get_column("eval_n_eff (samples)").to_list() == [1319, 1319]
    doc = json.loads(client.get(f"/export/points.json?unofficialRun={DUMP_PR}").data)
    cols = {c["name"]: c for c in doc["columns"]}
    assert cols["eval_score"]["unit"] == "fraction" and cols["eval_n_eff"]["unit"] == "samples"
    parquet = client.get(f"/export/points.parquet?unofficialRun={DUMP_PR}")
    pq = pl.read_parquet(io.BytesIO(parquet.data))
    assert sorted(pq.get_column("eval_score").drop_nulls().to_list()) == [0.9378, 0.9378]


def test_run_page_shows_accuracy_or_says_there_is_none(esource: DataSource) -> None:
    data = _data(esource, f"unofficialRun={RUN}")
    text = str(run_tables.accuracy_panel(data, data.view))
    assert "accuracy-table" in text
    assert "0.9045 ± 0.0081" in text and "0.9371 ± 0.0067" in text and "1319" in text
    main = _data(esource, f"unofficialRun={DUMP_MAIN}")
    text = str(run_tables.accuracy_panel(main, main.view))
    assert f"No evals for this run ({DUMP_MAIN})" in text


def test_ab_deltas_flag_the_treatment_accuracy(esource: DataSource) -> None:
    data = _data(esource, f"unofficialRun={RUN}&ab=spec_decoding")
    front = run_table(data, "deltas_frontier").frame
    synth = front.filter(pl.col("accuracy_flag").is_not_null())
    assert synth.select("accuracy_baseline", "accuracy_treatment", "accuracy_flag").rows() == [
        (RUN_NO_SPEC[0], RUN_MTP[0], FLAG_MTP)
    ]
    assert run_table(data, "deltas_frontier").header("accuracy_baseline") == (
        "accuracy_baseline (fraction)"
    )
    text = str(run_tables.deltas_body(data, data.view))
    assert FLAG_MTP in text


# ---- compare, explicit base and base=main --------------------------------------------------


def test_compare_flags_accuracy_and_prints_it_in_the_markdown(esource: DataSource) -> None:
    data = esource.compare_data(CompareView(base=NEW_MAIN, candidate=RUN))
    arms = compare_table(data, "uplift").frame
    row = arms.filter(pl.col("accuracy_flag").is_not_null()).row(0, named=True)
    assert (row["accuracy_baseline"], row["accuracy_treatment"]) == (
        MAIN_NO_SPEC[0],
        RUN_NO_SPEC[0],
    )
    assert row["accuracy_flag"] == FLAG_VS_MAIN
    # the arm's row of the PR markdown (md_cell escapes the markdown characters)
    assert (
        "| TP8 EP1 \\| no spec \\| kv none | 12.00–20.00 | +27.2% | +29.2% | 165.3 "
        "| gsm8k em\\_strict 0.9409 → 0.9045 | gsm8k em\\_strict 0.9409 -\\> 0.9045 \\(-0.0364\\) "
        "differs by more than the combined stderr 0.0104 |"
    ) in data.markdown.splitlines()


def test_compare_base_main_resolves_the_latest_main_results(esource: DataSource) -> None:
    view, notes = CompareView.parse(f"base=main&candidate={RUN}")
    assert notes == [] and view.base == "main"
    data = esource.compare_data(view)
    assert data.base_id == BASELINE_MAIN
    # as the run page's baseline=main (tests/dashboard/test_baseline_page.py): +27.19 % for
    # synth1 (main run 24000000001, not the older 24000000000) and +20 % for glm4.7
    uplift = compare_table(data, "uplift").frame.get_column("uplift_pct").round(2).sort()
    assert uplift.to_list() == [20.0, 27.19]
    assert data.notes[0] == (
        "main baseline: the latest main-branch result per configuration, from "
        f"{DUMP_MAIN} (2026-03-14, 4 points), {NEW_MAIN} (2026-03-20, 2 points)"
    )
    # the evals of the main runs used stand for the baseline: the same flag as against 24000000001
    flagged = compare_table(data, "uplift").frame.filter(pl.col("accuracy_flag").is_not_null())
    assert flagged.get_column("accuracy_flag").to_list() == [FLAG_VS_MAIN]
    assert "#### Baseline: the latest main-branch result" in data.markdown
    assert "24000000000" not in data.markdown
    body = str(compare_page.body(_ctx(esource), view))
    assert "compare-notes" in body and f"{NEW_MAIN} (2026-03-20, 2 points)" in body
    assert "run main is not in the store" not in body


def test_compare_exports_take_base_main(eapp: Dash) -> None:
    client = eapp.server.test_client()
    resp = client.get(f"/export/uplift.csv?base=main&candidate={RUN}")
    assert resp.status_code == 200
    frame = pl.read_csv(io.BytesIO(resp.data))
    assert frame.get_column("uplift_pct (%)").round(2).sort().to_list() == [20.0, 27.19]
    assert frame.get_column("accuracy_flag").drop_nulls().to_list() == [FLAG_VS_MAIN]


def test_pinned_point_shows_its_arm_accuracy(esource: DataSource) -> None:
    data = _data(esource, f"unofficialRun={DUMP_PR}")
    pid = data.points.filter(pl.col("conc") == 64).get_column("point_id")[0]
    view = data.view.replace(point=pid)
    text = str(run_panels.detail_panel(esource.run_data(view), view))
    assert "gsm8k em_strict 0.9378 ± 0.0067 (n_eff 1319, conc 64)" in text
    assert "eval_score (fraction)" in text and "standard error of eval_score" in text


def _ctx(source: DataSource) -> Any:
    from dashboard.context import AppContext
    from dashboard.fetch import Fetcher
    from dashboard.settings import LocalSettings

    settings = LocalSettings(store=source.store.root)
    return AppContext(source=source, settings=settings, fetcher=Fetcher(source.store, settings))


# ---- the baseline's legend entry is URL state -------------------------------------------------


def test_baseline_legend_click_writes_hide(esource: DataSource) -> None:
    view = RunView.parse(f"unofficialRun={RUN}&baseline=main")[0]
    data = esource.run_data(view)
    fig = main_figure(data, view)
    tokens = [str(t.get("meta") or "") for t in fig["data"]]
    base = [i for i, t in enumerate(tokens) if t == "baseline~main"]
    assert base, tokens  # every baseline trace (frontiers, points, shading, key) shares it
    hidden = RunCallbacks.on_legend(
        [{"visible": ["legendonly"] * len(base)}, base], {"main": tokens}, []
    )
    assert hidden == ["baseline~main"]
    # restored: the page drawn from `hide=baseline~main` has the baseline legend-only
    again = RunView.parse(f"unofficialRun={RUN}&baseline=main&hide=baseline~main")[0]
    fig = main_figure(esource.run_data(again), again)
    assert {t["visible"] for t in fig["data"] if t.get("meta") == "baseline~main"} == {"legendonly"}
    options = run_panels.hide_options(esource.run_data(again))
    assert {"label": "baseline main", "value": "baseline~main"} in options
    # ... and so are its uplift labels (the "+27.2%" written on each shaded gap)
    uplift = [
        n for n in fig["layout"]["annotations"] if str(n.get("name", "")).startswith("uplift ")
    ]
    assert uplift and {n["visible"] for n in uplift} == {False}


def test_hiding_the_baseline_from_the_legend_hides_its_uplift_labels(esource: DataSource) -> None:
    """The legend click updates the drawn chart by a patch: it hides the baseline's traces and
    its uplift annotations (and shows both again), leaving every other annotation alone."""
    view = RunView.parse(f"unofficialRun={RUN}&baseline=main&at=15")[0]  # + the rank-at label
    data = esource.run_data(view)
    fig = main_figure(data, view)
    tokens = main_tokens(fig)
    notes = tokens["main_notes"]
    texts = {n["text"] for n, t in zip(fig["layout"]["annotations"], notes, strict=True) if t}
    assert set(notes) == {"", "baseline~main"} and "+27.2%" in texts
    hidden = RunView.parse(f"unofficialRun={RUN}&baseline=main&at=15&hide=baseline~main")[0]
    patch = chart_patch(data, hidden, tokens, "main", axes_changed=False)
    ops = patch.to_plotly_json()["operations"]
    shown = {
        tuple(op["location"]): op["params"]["value"]
        for op in ops
        if op["location"][:2] == ["layout", "annotations"]
    }
    want = {("layout", "annotations", i, "visible"): False for i, t in enumerate(notes) if t}
    assert shown == want
    patch = chart_patch(data, view, tokens, "main", axes_changed=False)
    ops = patch.to_plotly_json()["operations"]
    assert {
        tuple(op["location"]): op["params"]["value"]
        for op in ops
        if op["location"][:2] == ["layout", "annotations"]
    } == {k: True for k in want}


# ---- in the browser ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def elive(eapp: Dash) -> Iterator[str]:
    from tests.dashboard.conftest import serving

    with serving(eapp) as url:
        yield url


@pytest.mark.browser
def test_browser_accuracy_and_baseline_legend_click(driver: Any, elive: str) -> None:
    from selenium.webdriver.common.by import By

    from tests.dashboard.browser import click_at, console_errors, open_page, wait, wait_chart

    open_page(driver, f"{elive}/inference?unofficialRun={RUN}&baseline=main")
    wait_chart(driver)
    # read in one script: the ranking panel is drawn again once the tables are ready
    cells = wait(
        driver,
        lambda d: (
            d.execute_script(
                "return Array.from(document.querySelectorAll('#accuracy-table td'))"
                ".map(e => e.textContent)"
            )
            or None
        ),
    )
    assert "0.9045 ± 0.0081" in cells and "0.9371 ± 0.0067" in cells
    entry = wait(
        driver,
        lambda d: (
            [
                e
                for e in d.find_elements(By.CSS_SELECTOR, "#main-chart .legend .traces")
                if "baseline main (solid)" in e.text
            ]
            or None
        ),
    )[0]
    labels = "return Array.from(document.querySelectorAll('#main-chart .annotation-text')).map(e => e.textContent)"
    assert "+27.2%" in driver.execute_script(labels)
    click_at(driver, entry.find_element(By.CSS_SELECTOR, ".legendtoggle"))
    assert wait(driver, lambda d: "hide=baseline~main" in d.current_url.replace("%7E", "~"))
    # the uplift labels go with the baseline's traces
    assert wait(driver, lambda d: "+27.2%" not in d.execute_script(labels))
    open_page(driver, driver.current_url)  # reload: the baseline stays hidden
    wait_chart(driver)
    hidden = wait(
        driver,
        lambda d: (
            d.execute_script(
                "return document.getElementById('main-chart').querySelector('.js-plotly-plot')"
                ".data.filter(t => t.meta === 'baseline~main').map(t => t.visible)"
            )
            or None
        ),
    )
    assert set(hidden) == {"legendonly"}
    assert console_errors(driver) == []
    open_page(driver, f"{elive}/compare?base=main&candidate={RUN}")
    notes = wait(
        driver,
        lambda d: (
            d.execute_script(
                "const n = document.getElementById('compare-notes'); return n && n.textContent"
            )
            or None
        ),
    )
    assert f"{NEW_MAIN} (2026-03-20, 2 points)" in notes and FLAG_VS_MAIN in notes
    assert console_errors(driver) == []


def test_cli_compare_markdown_prints_the_accuracy_row(estore: Store) -> None:
    """`paretolens compare BASE CAND --format markdown` reads the runs' evals as the page does:
    the same arm row, with both accuracies and the flag (-0.0364 against stderr 0.0104)."""
    from typer.testing import CliRunner

    from paretolens.cli import app

    res = CliRunner().invoke(
        app, ["compare", NEW_MAIN, RUN, "--format", "markdown", "--store", str(estore.root)]
    )
    assert res.exit_code == 0, res.output
    assert (
        "| TP8 EP1 \\| no spec \\| kv none | 12.00–20.00 | +27.2% | +29.2% | 165.3 "
        "| gsm8k em\\_strict 0.9409 → 0.9045 | gsm8k em\\_strict 0.9409 -\\> 0.9045 \\(-0.0364\\) "
        "differs by more than the combined stderr 0.0104 |"
    ) in res.output.splitlines()


# ---- the compare page's SLO and `paretolens compare` through the page's data ------------------


def test_compare_slo_leaves_the_breaking_points_out(esource: DataSource) -> None:
    """`slo=p99_ttft<=0.4` on the compare page: the candidate's points whose p99 TTFT is above
    0.4 s (0.42554 s at conc 4 and 0.86877 s at conc 8 of the no-spec arm, read from the dump)
    are out_of_slo, and the PR markdown says which SLO it used."""
    view, notes = CompareView.parse(f"base=main&candidate={RUN}&slo=p99_ttft<=0.4")
    assert notes == [] and view.slo == "p99_ttft<=0.4"
    data = esource.compare_data(view)
    mine = data.analysis.table.filter(pl.col(Col.RUN_ID) == RUN)
    out = mine.filter(pl.col("verdict") == "out_of_slo").get_column(Col.POINT_ID)
    broke = data.points.filter(pl.col(Col.POINT_ID).is_in(out.implode()))
    assert sorted(broke.get_column(Col.CONC).to_list()) == [4, 8]
    assert sorted(broke.get_column(Col.P99_TTFT).to_list()) == [0.42554, 0.86877]
    assert "only points within the SLO p99_ttft <= 0.4 s" in data.markdown
    assert "slo=p99_ttft" in view.query()


def test_cli_compare_is_the_pages_comparison(estore: Store, esource: DataSource) -> None:
    """`paretolens compare main RUN` resolves main as the page does and prints the page's
    markdown byte for byte; the main runs used go to stderr."""
    from typer.testing import CliRunner

    from paretolens.cli import app

    args = ["compare", "main", RUN, "--format", "markdown", "--slo", "p99_ttft<=0.4"]
    res = CliRunner().invoke(app, [*args, "--store", str(estore.root)])
    assert res.exit_code == 0, res.output
    view = CompareView.parse(f"base=main&candidate={RUN}&slo=p99_ttft<=0.4")[0]
    assert res.stdout == esource.compare_data(view).markdown
    assert f"{NEW_MAIN} (2026-03-20, 2 points)" in res.stderr


def test_evals_chart_dot_and_whisker_per_arm(esource: DataSource) -> None:
    # issue 27: the accuracy panel beside the frontier draws each arm's score ± its stderr,
    # lowest first, in the arm's colour (palette=contrast: the high-contrast colours)
    view, _ = RunView.parse(f"unofficialRun={RUN}&palette=contrast")
    panel = run_tables.accuracy_panel(esource.run_data(view), view)
    graph = next(c for c in panel.children if getattr(c, "id", None) == "evals-chart")
    trace = graph.figure["data"][0]
    assert trace["x"] == [RUN_NO_SPEC[0], RUN_MTP[0]]
    assert trace["error_x"]["array"] == [RUN_NO_SPEC[1], RUN_MTP[1]]
    assert [y.split(" · ")[-2:] for y in trace["y"]] == [
        ["TP8 EP1 | no spec | kv none", "gsm8k"],
        ["TP8 EP1 | MTP | kv none", "gsm8k"],
    ]
    assert set(trace["marker"]["color"]) <= set(style.PALETTES["contrast"])

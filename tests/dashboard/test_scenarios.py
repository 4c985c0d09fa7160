"""Issue 13: the three users' paths in a real browser, each from opening a bundled run to the
artefact the user takes away, checking the numbers on the way."""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml
from selenium.webdriver.common.by import By

from analysis.sweep.sweep_config import validate_sweep_config
from views.query.state import CompareView, RunView
from views.source import DataSource
from views.tables import run_table

from .browser import axis_title, click_at, console_errors, open_page, pick, wait, wait_chart
from .test_evals_page import eapp, elive, estore  # noqa: F401 (the evals store's live server)

pytestmark = pytest.mark.browser


def _query(driver: Any) -> dict[str, list[str]]:
    return parse_qs(urlsplit(driver.current_url).query)


def _layout(driver: Any, chart: str, path: str) -> Any:
    return driver.execute_script(
        "var gd = document.querySelector('#' + arguments[0] + ' .js-plotly-plot');"
        "if (!gd || !gd._fullLayout) { return null; }"
        "var v = gd._fullLayout; arguments[1].split('.').forEach(function (k) { v = v && v[k]; });"
        "return v;",
        chart,
        path,
    )


def _fresh(folder: Path, suffix: str) -> Path:
    """The newest finished download with this suffix."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        files = [p for p in folder.glob(f"*{suffix}") if p.stat().st_size > 0]
        if files and not list(folder.glob("*.crdownload")):
            return max(files, key=lambda p: p.stat().st_mtime)
        time.sleep(0.1)
    raise AssertionError(f"no {suffix} in {sorted(p.name for p in folder.iterdir())}")


def test_the_engineer_pins_a_point_switches_an_axis_and_downloads_the_chart(
    driver: Any, live_url: str, browser_downloads: Path, source: DataSource
) -> None:
    for old in browser_downloads.glob("*"):
        old.unlink()
    console_errors(driver)
    open_page(driver, f"{live_url}/inference?unofficialRun=dsr1&frontier=1")
    wait_chart(driver)
    # pin a point from the chart: the URL and the detail panel say which
    point = driver.find_elements(By.CSS_SELECTOR, "#main-chart .scatterlayer .point")[0]
    click_at(driver, point)
    pid = wait(driver, lambda d: _query(d).get("point"))[0]
    row = source.run_data(RunView(runs=("dsr1",))).point(pid)
    assert row is not None
    detail = wait(
        driver,
        lambda d: (
            pid in d.find_element(By.ID, "detail").text and d.find_element(By.ID, "detail").text
        ),
    )
    assert f"conc {row['conc']}" in detail
    # switch the x axis: the pin stays, the title follows
    pick(driver, "x", "p90_intvty")
    wait(driver, lambda d: _query(d).get("x") == ["p90_intvty"])
    wait(driver, lambda d: axis_title(d, "x") == "Interactivity, p90 (slow tail) (tok/s/user)")
    assert _query(driver)["point"] == [pid]
    title = "Total tok/s/GPU vs Interactivity, p90 · run dsr1 · dsr1"
    wait(driver, lambda d: _layout(d, "main-chart", "title.text") == title)
    # the URL is the whole state: a reload keeps the pinned point and its ring
    driver.refresh()
    wait_chart(driver)
    assert pid in driver.find_element(By.ID, "detail").text
    ring = driver.execute_script(
        "var gd = document.querySelector('#main-chart .js-plotly-plot');"
        "return gd.data.filter(function (t) { return t.meta === 'pinned'; })[0].x;"
    )
    assert ring == [pytest.approx(row["p90_intvty"])]
    # the downloads carry the run, the model and the axes in their title
    driver.find_element(By.ID, "svg-main").click()
    svg = _fresh(browser_downloads, ".svg")
    assert svg.name == "paretolens_Total_tok_s_GPU_vs_Interactivity_p90_run_dsr1_dsr1.svg"
    text = svg.read_text(encoding="utf-8")
    assert title in text
    driver.find_element(By.ID, "png-main").click()
    png = _fresh(browser_downloads, ".png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stem == svg.stem
    assert console_errors(driver) == []


def test_log_x_with_rank_arms_at_x_keeps_a_sane_axis(driver: Any, live_url: str) -> None:
    open_page(driver, f"{live_url}/inference?unofficialRun=dsr1&at=40&logx=1")
    wait_chart(driver)
    lo, hi = wait(driver, lambda d: _layout(d, "main-chart", "xaxis.range"))
    # the data run from about 10 to 123 tok/s/user: log10 range about 1..2.1, never up to 40
    assert 0.5 < lo < 1.2 and 2.0 < hi < 2.5, (lo, hi)
    driver.find_element(By.CSS_SELECTOR, "input[type=checkbox][value=logx]").click()
    wait(driver, lambda d: "logx" not in _query(d))
    wait(driver, lambda d: _layout(d, "main-chart", "xaxis.type") == "linear")
    lo, hi = _layout(driver, "main-chart", "xaxis.range")
    assert hi < 200, (lo, hi)
    driver.find_element(By.CSS_SELECTOR, "input[type=checkbox][value=logx]").click()
    wait(driver, lambda d: _layout(d, "main-chart", "xaxis.type") == "log")
    lo, hi = wait(driver, lambda d: _layout(d, "main-chart", "xaxis.range"))
    assert hi < 2.5 and math.isfinite(lo), (lo, hi)
    assert console_errors(driver) == []


def test_the_reviewer_finds_the_pages_uplift_in_the_pr_markdown(
    driver: Any, live_url: str, source: DataSource
) -> None:
    open_page(driver, f"{live_url}/compare?base=29003473063&candidate=29337493492")
    wait_chart(driver, "compare-chart")
    uplift = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#compare-envelope .uplift"))[
        0
    ].text
    groups = source.compare_data(
        CompareView(base="29003473063", candidate="29337493492")
    ).comparison.groups
    assert uplift == f"{groups.item(0, 'uplift_pct'):+.1f}%"
    md = driver.find_element(By.ID, "compare-markdown-text").text
    assert md.startswith("### paretolens compare: `29003473063` → `29337493492`")
    assert f"| {uplift} |" in md
    assert console_errors(driver) == []


def test_the_exporter_chooses_options_and_downloads_a_valid_yaml_of_the_kept_points(
    driver: Any, live_url: str, browser_downloads: Path, source: DataSource
) -> None:
    for old in browser_downloads.glob("*"):
        old.unlink()
    open_page(driver, f"{live_url}/inference?unofficialRun=dsr1&tab=pruned")
    wait_chart(driver)
    box = wait(
        driver,
        lambda d: (
            "points kept" in d.find_element(By.ID, "pruned-box").text
            and d.find_element(By.ID, "pruned-box")
        ),
    )
    plain = source.run_data(RunView(runs=("dsr1",))).pruned
    assert f"{plain.kept.height} of 44 points kept" in box.text
    # skipped arms first, with what to set
    first = driver.find_element(By.CSS_SELECTOR, "#pruned-box > :first-child")
    assert (
        first.get_attribute("id") == "pruned-skipped" and "--set kv_offload_backend" in first.text
    )
    driver.find_element(By.CSS_SELECTOR, "input[type=checkbox][value=neighbours]").click()
    wait(driver, lambda d: _query(d).get("neighbours") == ["1"])
    view = RunView(runs=("dsr1",), tab="pruned", neighbours=True)
    pruned = source.run_data(view).pruned
    assert pruned.kept.height > plain.kept.height
    wait(
        driver,
        lambda d: (
            f"{pruned.kept.height} of 44 points kept" in d.find_element(By.ID, "pruned-box").text
        ),
    )
    # the blocks have copy buttons; the YAML shown is the one downloaded
    for target in ("pruned-copy-yaml", "pruned-copy-cli"):
        assert driver.find_element(By.ID, target).get_attribute("role") == "button"
    shown = driver.find_element(By.ID, "pruned-yaml").text
    link = driver.find_element(By.CSS_SELECTOR, '#pruned-box a[href^="/export/pruned.yaml?"]')
    assert "neighbours=1" in link.get_attribute("href")
    link.click()
    got = _fresh(browser_downloads, ".yaml").read_text(encoding="utf-8")
    assert got.strip() == shown.strip()
    doc = yaml.safe_load(got)
    validate_sweep_config(doc)
    entries = [
        e
        for key in doc.values()
        for item in key["scenarios"]["agentic-coding"]
        for e in item["search-space"]
    ]
    exported = {a.arm_label: list(a.conc_list) for a in pruned.arms if "dram" not in a.arm_label}
    assert sorted(e["conc-list"] for e in entries) == sorted(exported.values())
    assert console_errors(driver) == []


# ---- issue 27: the headline of the samples, and the new options, on each user's path --------

HEADLINE = "/inference?unofficialRun=dsr1&at=40&ab=kv_offloading&tab=deltas"  # serve's link


def test_the_engineer_reads_deltas_a_ranking_tco_and_a_palette_and_downloads_attribution(
    driver: Any, live_url: str, browser_downloads: Path, source: DataSource
) -> None:
    for old in browser_downloads.glob("*"):
        old.unlink()
    open_page(driver, live_url + HEADLINE)
    wait_chart(driver)
    # the ranking at x = 40: the two TP4 arms with their y, KV offload to DRAM first
    at = source.run_data(RunView.parse(HEADLINE.split("?")[1])[0]).at_target
    ys = {r["arm_name"]: r["y"] for r in at.iter_rows(named=True)}
    rows = wait(
        driver,
        lambda d: [
            r.text for r in d.find_elements(By.CSS_SELECTOR, "#at-table tr") if "TP4" in r.text
        ],
    )
    assert [r.split(" dsr1 ")[0] for r in rows] == [
        "1 TP4 EP4 | no spec | kv dram",
        "2 TP4 EP4 | no spec | kv none",
    ]
    assert f"{ys['TP4 EP4 | no spec | kv dram']:,.1f}" in rows[0]
    # the A/B deltas of the KV offload pair at equal load are rows, not an empty grid
    wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#deltas-grid .ag-row")) >= 10)
    # the TCO tab sizes and prices a fleet for a target (the cheapest arm as the source says)
    tco = "unofficialRun=dsr1&tab=tco&tco_intvty=40&tco_tput=100000"
    fleets = run_table(source.run_data(RunView.parse(tco)[0]), "tco").frame
    cheapest = fleets.filter(fleets["usd_per_hour"].is_not_null()).row(0, named=True)
    open_page(driver, f"{live_url}/inference?{tco}")
    headline = wait(driver, lambda d: d.find_element(By.ID, "tco-headline").text)
    assert headline.startswith(
        f"Cheapest: {cheapest['arm_name']}, {cheapest['gpus']} GPUs, "
        f"${cheapest['usd_per_hour']:,.2f}/h"
    )
    # a palette option: the URL takes it and the chart is repainted
    driver.find_element(By.CSS_SELECTOR, "input[type=radio][value=contrast]").click()
    wait(driver, lambda d: _query(d).get("palette") == ["contrast"])
    wait(
        driver,
        lambda d: (
            "#004488"
            in d.execute_script(
                "return document.querySelector('#main-chart .js-plotly-plot').data"
                ".map(function (t) { return String(t.marker && t.marker.color); }).join(' ');"
            )
        ),
    )
    # the downloaded chart carries the attribution line and the page's address
    driver.find_element(By.ID, "svg-main").click()
    text = _fresh(browser_downloads, ".svg").read_text(encoding="utf-8")
    assert "Made with paretolens from the published results of run dsr1" in text
    assert "palette=contrast" in text
    assert console_errors(driver) == []


def test_the_engineer_sees_the_accuracy_per_arm_beside_the_frontier(
    driver: Any, request: pytest.FixtureRequest
) -> None:
    from .test_evals_page import RUN, RUN_MTP, RUN_NO_SPEC

    url = request.getfixturevalue(
        "elive"
    )  # the store with evals (tests/dashboard/test_evals_page.py)
    open_page(driver, f"{url}/inference?unofficialRun={RUN}")
    wait_chart(driver)
    dots = wait(
        driver,
        lambda d: d.execute_script(
            "var gd = document.querySelector('#evals-chart .js-plotly-plot');"
            "return gd && gd.data && [gd.data[0].x, gd.data[0].error_x.array];"
        ),
    )
    # each arm's accuracy with its standard error (the fixture's eval rows), lowest first
    assert [pytest.approx(v) for v in zip(*dots, strict=True)] == [RUN_NO_SPEC, RUN_MTP]
    assert console_errors(driver) == []


def test_the_reviewer_takes_a_colour_blind_safe_palette_on_compare(
    driver: Any, live_url: str
) -> None:
    open_page(driver, f"{live_url}/compare?base=29003473063&candidate=29337493492")
    wait_chart(driver, "compare-chart")
    pick(driver, "palette", "tol", kind="compare-control")
    wait(driver, lambda d: _query(d).get("palette") == ["tol"])
    colours = wait(
        driver,
        lambda d: d.execute_script(
            "return document.querySelector('#compare-chart .js-plotly-plot').data"
            ".map(function (t) { return String(t.line && t.line.color); }).join(' ');"
        ),
    )
    assert "#4477AA" in colours and "#0072B2" not in colours
    assert console_errors(driver) == []


def test_the_exporter_gets_an_exact_test_config_line_under_the_bundled_master(
    driver: Any, live_url: str
) -> None:
    open_page(
        driver, f"{live_url}/inference?unofficialRun=29003473063&tab=pruned&master=amd-master.yaml"
    )
    wait_chart(driver)
    line = wait(driver, lambda d: d.find_element(By.ID, "pruned-cli").text.strip() or None)
    assert line == (
        "test-config --config-keys kimik2.7-fp4-mi355x-vllm-agentic --conc 1 4 8 "
        "--config-files configs/amd-master.yaml --runner-config configs/runners.yaml"
    )
    assert console_errors(driver) == []

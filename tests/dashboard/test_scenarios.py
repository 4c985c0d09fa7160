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

from .browser import axis_title, click_at, console_errors, open_page, pick, wait, wait_chart

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

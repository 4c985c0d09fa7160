"""Strings from result files render inert in a real browser (headless Debian chromium).

Run titles and branch names (run metadata), model ids, framework, precision and hardware names,
spec-decoding names (so arm labels), image names and a file name are all script payloads that
would set `window.__xss` (or call alert) if any page put them into the DOM as HTML. The index, the
run page, the points page and the compare page are opened; nothing may execute, no alert may be
open, the console may not show a payload's error, and the literal strings must be shown as text.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from ingest.contract.schema import RunCol
from ingest.pipeline import ingest_paths
from ingest.store import Store
from paretolens.settings import Settings
from tests.reliability import figures
from tests.reliability._support import FIXTURES, served
from tests.reliability.make_hostile import AGG

pytestmark = pytest.mark.browser

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
RUN, OTHER = "xss-run", "plain-run"
TITLE = "<script>window.__xss='title'</script>"
BRANCH = "<img src=x onerror=\"window.__xss='branch'\">"
FIELDS = {
    "model": "<svg onload=\"window.__xss='model'\">",
    "framework": "\"><script>window.__xss='framework'</script>",
    "precision": "<iframe srcdoc=\"<script>parent.__xss='precision'</script>\"></iframe>",
    "image": "<a href=\"javascript:window.__xss='image'\">img</a>",
    "spec_decoding": "<img src=x onerror=alert('spec')>",
}
FILE = "<img src=x onerror=window.__xss=1>.json"
# What each page must show literally. Arm labels name a speculative method only when one is
# known (an unknown spec_decoding value reads "spec") and the chart titles name the model key,
# so the hostile configuration strings are checked where they are shown as written: /points.
SHOWN = {
    "/": [TITLE, BRANCH],
    f"/inference?unofficialRun={RUN}": [TITLE, BRANCH],
    f"/points?unofficialRun={RUN}": [FILE, *FIELDS.values()],
    f"/compare?base={RUN}&candidate={OTHER}": [],
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    tmp = tmp_path_factory.mktemp("xss")
    run = tmp / "files"
    run.mkdir()
    for conc in (4, 8, 16, 32):
        doc = {**AGG, **FIELDS, "conc": conc, "tput_per_gpu": AGG["tput_per_gpu"] * conc / 4}
        (run / f"agg_conc{conc}.json").write_text(json.dumps(doc))
    (run / FILE).write_text(json.dumps({**AGG, **FIELDS, "conc": 64}))
    st = Store(tmp / "store")
    ingest_paths([run], st, run_id=RUN, run_meta={RunCol.TITLE: TITLE, RunCol.BRANCH: BRANCH})
    ingest_paths([FIXTURES / "inferencex" / "agg_fixed_seq"], st, run_id=OTHER)
    assert st.points([RUN]).height == 5
    return st


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.skip("needs /usr/bin/chromium and /usr/bin/chromedriver (Debian chromium)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="paretolens-xss-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for arg in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--window-size=1440,900",
    ):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=opts)
    drv.set_page_load_timeout(60)
    try:
        yield drv
    finally:
        drv.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _wait(driver: Any, check: Any, timeout: float = 30.0) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.1).until(lambda d: check(d) or False)


_GRID_TEXT = """
const out = [];
for (const vp of document.querySelectorAll('.ag-center-cols-viewport, .ag-body-horizontal-scroll-viewport')) {
  vp.scrollLeft = arguments[0];
}
return document.body.innerText;
"""


def _page_text(driver: Any) -> str:
    """The page's text, with every column of its grids scrolled into view once (ag-grid only
    renders the columns on screen)."""
    from selenium.webdriver.common.by import By

    text = driver.find_element(By.TAG_NAME, "body").text
    for left in range(0, 30000, 600):
        text += "\n" + driver.execute_script(_GRID_TEXT, left)
        time.sleep(0.05)
    return str(text)


def _alert_open(driver: Any) -> bool:
    from selenium.common.exceptions import NoAlertPresentException

    try:
        driver.switch_to.alert.dismiss()
    except NoAlertPresentException:
        return False
    return True


@pytest.mark.timeout(180)
def test_result_strings_render_as_inert_text(store: Store, driver: Any) -> None:
    from selenium.webdriver.common.by import By

    from dashboard.app import create_app
    from tests.dashboard.browser import open_page

    # The checks can see an executed payload: a page that does run one trips them.
    driver.get("data:text/html,<img src=x onerror=\"window.__xss='canary'\">")
    _wait(driver, lambda d: d.execute_script("return window.__xss === 'canary'"), timeout=10)
    app = create_app(store, Settings(store=store.root, host="127.0.0.1", token=None))
    with _served_xss(app.server) as base:
        for path, literals in SHOWN.items():
            # A run page first shows its static charts (their hover text holds the strings too)
            # and runs Dash on the user's first intent: open_page wakes it as a user would.
            open_page(driver, base + path.replace(RUN, quote(RUN)))
            text = ""
            deadline = time.monotonic() + 45
            while time.monotonic() < deadline:  # the grids and charts fill in after the shell
                text = (
                    _page_text(driver)
                    if "points" in path
                    else driver.find_element(By.TAG_NAME, "body").text
                )
                if all(lit in text for lit in literals):
                    break
                time.sleep(0.5)
            time.sleep(1.0)  # give any injected handler (onload, onerror) time to run
            missing = [lit for lit in literals if lit not in text]
            assert not missing, f"{path}: not shown literally: {missing}"
            assert driver.execute_script("return window.__xss === undefined"), path
            assert not _alert_open(driver), f"{path}: an alert opened"
            logs = [e["message"] for e in driver.get_log("browser")]
            bad = [m for m in logs if "__xss" in m or "alert" in m.lower() or "ReferenceError" in m]
            assert not bad, f"{path}: {bad}"
            figures.add("browser_xss", "browser_pages_checked")
            figures.add("browser_xss", "browser_literals_shown", len(literals))
    figures.put(
        "browser_xss", "browser_payload_fields", sorted([*FIELDS, "title", "branch", "file"])
    )


def _served_xss(wsgi: Any) -> Any:
    return served(wsgi, threads=4, name="paretolens-xss")

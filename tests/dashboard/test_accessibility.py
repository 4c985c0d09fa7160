"""An automated accessibility audit of every page (axe-core, injected by the test), failing on
serious or critical violations; and the keyboard paths the run page promises."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from .browser import open_page, wait, wait_chart

pytestmark = pytest.mark.browser

AXE = (Path(__file__).parent / "vendor" / "axe.min.js").read_text(encoding="utf-8")
PAGES = (
    "/",
    "/inference?unofficialRun=dsr1",
    "/inference?unofficialRun=dsr1&tab=deltas&ab=kv_offloading",
    "/inference?unofficialRun=dsr1&tab=pruned",
    "/compare?base=dsr1&candidate=dsr1-rerun",
    "/points?unofficialRun=dsr1",
    "/jobs",
)


def _audit(driver: Any) -> list[dict[str, Any]]:
    """axe-core's serious and critical violations on the current page."""
    driver.execute_script(AXE)
    result = driver.execute_async_script(
        "var done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']})"
        "  .then(function (r) { done(JSON.stringify(r.violations)); })"
        "  .catch(function (e) { done(JSON.stringify([{id: 'axe-error', impact: 'critical',"
        "    description: String(e), nodes: []}])); });"
    )
    violations: list[dict[str, Any]] = json.loads(result)
    return [v for v in violations if v.get("impact") in ("serious", "critical")]


@pytest.mark.parametrize("path", PAGES)
def test_no_serious_or_critical_accessibility_violations(
    driver: Any, live_url: str, path: str
) -> None:
    driver.set_script_timeout(60)
    open_page(driver, f"{live_url}{path}")
    if path.startswith("/inference"):
        wait_chart(driver)
    else:
        wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "header"))
    # Audit the page as a user meets it, not a grid half built: every grid header row that is
    # on the page has its column headers. A grid that a callback fills again (the runs index's
    # page of rows) rebuilds its header rows for a moment, so the page is audited until it is
    # clean or 20 s have passed; a lasting violation still fails.
    deadline = time.monotonic() + 20
    while True:
        wait(
            driver,
            lambda d: d.execute_script(
                "return Array.from(document.querySelectorAll('.ag-header-row'))"
                ".every(function (r) { return r.querySelector('[role=columnheader]'); });"
            ),
        )
        found = _audit(driver)
        if not found or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    said = [
        f"{v['id']} ({v['impact']}): {v['help'] if 'help' in v else v.get('description')} "
        f"at {[n.get('target') for n in v.get('nodes', [])][:3]}"
        for v in found
    ]
    assert said == []


def test_result_tabs_and_copy_link_work_from_the_keyboard(driver: Any, live_url: str) -> None:
    open_page(driver, f"{live_url}/inference?unofficialRun=dsr1")
    wait_chart(driver)
    tabs = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "[role=tab]"))
    assert len(tabs) >= 5, [t.get_attribute("outerHTML")[:200] for t in tabs]
    deltas = next(t for t in tabs if "A/B" in t.text)
    assert deltas.get_attribute("tabindex") == "0"
    driver.execute_script("arguments[0].focus()", deltas)
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    wait(driver, lambda d: "tab=deltas" in d.current_url)
    assert deltas.get_attribute("aria-selected") == "true"
    # copy link: a focusable button named for what it does
    link = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#copy-link"))[0]
    assert (link.get_attribute("role"), link.get_attribute("tabindex")) == ("button", "0")
    assert link.get_attribute("aria-label") == "copy the link of this exact view"

"""Small selenium helpers for the browser tests (waits, Dash 4 dropdowns, console errors)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

T = TypeVar("T")
TIMEOUT = 30.0


def wait(driver: Any, check: Callable[[Any], T], timeout: float = TIMEOUT) -> T:
    """Wait until `check(driver)` is truthy and return it. A check that meets an element Dash
    has just replaced (stale) or not yet added is tried again: the page is still rendering."""
    return WebDriverWait(  # type: ignore[no-any-return]
        driver,
        timeout,
        poll_frequency=0.05,
        ignored_exceptions=(NoSuchElementException, StaleElementReferenceException),
    ).until(lambda d: check(d) or False)


def console_errors(driver: Any) -> list[str]:
    """Browser console errors since the last call (the log is drained)."""
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def open_page(driver: Any, url: str) -> None:
    """Load a page and wait for Dash to render it. A run page showing its static charts runs
    Dash only on the user's first intent (dashboard/assets/boot.js): it is woken as a user
    would, by `wake`."""
    driver.get(url)
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#page > *, #static-page"))
    if driver.find_elements(By.ID, "static-page") and not driver.execute_script(STARTED):
        wake(driver)
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#page > *"))


# True once a static-chart run page has started its scripts (boot.js adds their tags).
STARTED = "return !!document.querySelector('script[src*=\"dash_renderer\"]:not([type])')"


def wake(driver: Any) -> None:
    """Wake a run page showing its static charts as a user would: a real pointer moved onto the
    filter panel (a control's stand-in), which boot.js takes as the first intent. Nothing is
    clicked, so nothing is replayed."""
    control = driver.find_element(By.CSS_SELECTOR, "#static-page .sidebar .sk-dropdown")
    ActionChains(driver).move_to_element(control).pause(0.05).perform()


def show_tables(driver: Any) -> None:
    """Scroll the run page's tables into view, as a user would: their grids are built only then
    (dashboard/assets/paretolens.js)."""
    wait(driver, lambda d: d.find_elements(By.ID, "tables"))
    driver.execute_script("document.getElementById('tables').scrollIntoView({block: 'start'})")


def chart_points(driver: Any, graph: str = "main-chart") -> int:
    """How many scatter points a chart has drawn."""
    return len(driver.find_elements(By.CSS_SELECTOR, f"#{graph} .scatterlayer .point"))


def wait_chart(driver: Any, graph: str = "main-chart") -> int:
    """Wait until a chart has drawn points and the run page's static charts (an inert copy of
    the page's top, dashboard/prerender/page_html.py) have given way to the live page, so a
    selector finds the live element, not its copy about to be removed. A run page still showing
    its static charts is woken first, as a user would (`wake`)."""

    def drawn(d: Any) -> int:
        if d.find_elements(By.ID, "static-page") and not d.execute_script(STARTED):
            wake(d)  # a run page (opened by a link, reloaded) waiting for the user's first intent
        return chart_points(d, graph)

    n = wait(driver, drawn)
    wait(driver, lambda d: not d.find_elements(By.ID, "static-page"))
    return int(n)


def legend(driver: Any, graph: str = "main-chart") -> list[str]:
    """The legend entries of a chart."""
    return [
        e.text
        for e in driver.find_elements(By.CSS_SELECTOR, f"#{graph} .legend .traces .legendtext")
    ]


def axis_title(driver: Any, axis: str = "y", graph: str = "main-chart") -> str:
    """An axis title of a chart."""
    found = driver.find_elements(By.CSS_SELECTOR, f"#{graph} .g-{axis}title text")
    return str(found[0].text) if found else ""


def pick(driver: Any, field: str, value: str, kind: str = "control") -> None:
    """Choose `value` in the Dash dropdown of a URL-state field (toggles it for multi-selects)."""
    driver.find_element(By.CSS_SELECTOR, f"#ctl-{kind}-{field} button.dash-dropdown").click()
    option = wait(
        driver,
        lambda d: d.find_elements(
            By.CSS_SELECTOR, f'.dash-dropdown-content [role=option] input[value="{value}"]'
        ),
    )[0]
    driver.execute_script("arguments[0].closest('[role=option]').click()", option)
    ActionChains(driver).send_keys(Keys.ESCAPE).perform()


def click_at(driver: Any, element: Any) -> None:
    """A real mouse move and click at an element's centre (plotly listens on its drag layer)."""
    ActionChains(driver).move_to_element(element).pause(0.2).click().perform()


def downloaded(folder: Path, name: str, timeout: float = TIMEOUT) -> Path:
    """Wait for a finished download."""
    target = folder / name
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if target.exists() and not list(folder.glob("*.crdownload")):
            return target
        time.sleep(0.1)
    raise AssertionError(
        f"{name} was not downloaded into {folder}: {sorted(p.name for p in folder.iterdir())}"
    )

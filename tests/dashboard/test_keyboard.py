"""Issue 13: legend toggles and point pinning from the points grid work from the keyboard."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from .browser import console_errors, open_page, show_tables, wait, wait_chart

pytestmark = pytest.mark.browser


def _query(driver: Any) -> dict[str, list[str]]:
    return parse_qs(urlsplit(driver.current_url).query)


def _press(driver: Any, element: Any, key: str) -> None:
    driver.execute_script("arguments[0].focus()", element)
    assert driver.switch_to.active_element == element
    ActionChains(driver).send_keys(key).perform()


def test_a_legend_entry_is_a_switch_enter_hides_and_shows_the_arm(
    driver: Any, live_url: str
) -> None:
    console_errors(driver)
    open_page(driver, f"{live_url}/inference?unofficialRun=dsr1")
    wait_chart(driver)

    def entry(d: Any) -> Any:
        return next(
            (
                e
                for e in d.find_elements(By.CSS_SELECTOR, "#main-chart .legend .traces")
                if e.text == "TP4 EP4 | no spec | kv none" and e.get_attribute("role") == "switch"
            ),
            None,
        )

    item = wait(driver, entry)
    assert (item.get_attribute("tabindex"), item.get_attribute("aria-checked")) == ("0", "true")
    _press(driver, item, Keys.ENTER)
    assert wait(driver, lambda d: _query(d).get("hide")) == ["04695361c3c878ed~dsr1"]
    wait(driver, lambda d: entry(d) and entry(d).get_attribute("aria-checked") == "false")
    _press(driver, entry(driver), " ")
    wait(driver, lambda d: "hide" not in _query(d))
    assert console_errors(driver) == []


def test_enter_on_a_points_grid_row_pins_its_point(driver: Any, live_url: str) -> None:
    open_page(driver, f"{live_url}/inference?unofficialRun=dsr1")
    wait_chart(driver)
    show_tables(driver)
    cell = wait(
        driver,
        lambda d: d.find_elements(By.CSS_SELECTOR, '#points-grid .ag-row[row-index="2"] .ag-cell'),
    )[0]
    row_id = driver.execute_script(
        "return arguments[0].closest('[row-id]').getAttribute('row-id')", cell
    )
    _press(driver, cell, Keys.ENTER)
    assert wait(driver, lambda d: _query(d).get("point")) == [row_id]
    wait(driver, lambda d: row_id in d.find_element(By.ID, "detail").text)
    assert console_errors(driver) == []

"""Issue 27 item 1: a keyboard-only pass over every control of every page. Tab alone, from the
top of the page, reaches every dropdown, input, checkbox, button, tab and link; a dropdown
opens, moves and chooses with Enter and the arrow keys."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from .browser import console_errors, open_page, wait, wait_chart

pytestmark = pytest.mark.browser

PAGES = (
    "/",
    "/inference?unofficialRun=dsr1&tab=deltas&ab=kv_offloading",
    "/inference?unofficialRun=29003473063&tab=pruned",
    "/compare?base=dsr1&candidate=dsr1-rerun",
    "/points?unofficialRun=dsr1",
    "/jobs",
)

# What a keyboard user must reach: the element each control takes focus on (a Dash 4 dropdown
# focuses its trigger button; its hidden focus target is aria-hidden and must not count).
CONTROLS = (
    "button, a[href], [role=tab], [role=switch], [role=button], textarea, select,"
    " input:not([type=hidden]):not(.dash-dropdown-focus-target)"
)

# Mark every control that should be reachable (shown, enabled, outside plotly's mode bar and
# the grids' inner cells) with data-kbd and return its description, by mark.
_MARK = """
var sel = arguments[0], out = {};
Array.from(document.querySelectorAll(sel)).filter(function (el) {
  if (el.disabled || el.closest('[aria-hidden=true], .modebar, .ag-root-wrapper')) { return false; }
  // a radio group is one stop: Tab reaches its checked radio, the arrow keys the others
  if (el.type === 'radio' && !el.checked && el.name && document.querySelector(
      'input[type=radio][name="' + CSS.escape(el.name) + '"]:checked')) { return false; }
  var r = el.getBoundingClientRect(), st = getComputedStyle(el);
  return r.width > 0 && r.height > 0 && st.visibility !== 'hidden' && st.display !== 'none';
}).forEach(function (el, i) {
  el.setAttribute('data-kbd', String(i));
  var box = el.closest('[id^="{"]');
  out[String(i)] = el.tagName.toLowerCase() + (el.id ? '#' + el.id : '')
    + (box && box !== el ? ' in ' + box.id : '') + ' '
    + (el.getAttribute('aria-label') || el.textContent || el.value || '').trim().slice(0, 40);
});
return out;
"""

_ACTIVE = """
var e = document.activeElement;
return [e.getAttribute('data-kbd'), e.id || '', e.tagName.toLowerCase() + ' '
  + (e.getAttribute('aria-label') || e.textContent || '').trim().slice(0, 30)];
"""


def _tab_through(driver: Any, limit: int) -> list[tuple[str | None, str, str]]:
    """(mark, id, description) of the elements Tab focuses, in order, from the top of the page
    until it wraps round to the first."""
    driver.execute_script(
        "window.scrollTo(0, 0); document.body.setAttribute('tabindex', '-1');"
        " document.body.focus();"
    )
    seen: list[tuple[str | None, str, str]] = []
    for _ in range(limit):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        mark, el_id, text = driver.execute_script(_ACTIVE)
        if seen and (mark, el_id, text) == seen[0]:
            break
        seen.append((mark, el_id, text))
    return seen


_SETTLED = """
var done = arguments[arguments.length - 1], last = Date.now(), start = last;
var obs = new MutationObserver(function () { last = Date.now(); });
obs.observe(document.body, {childList: true, subtree: true});
(function check() {
  var now = Date.now();
  if (now - last > 800 || now - start > 20000) { obs.disconnect(); done(now - start); return; }
  setTimeout(check, 100);
})();
"""


def _ready(driver: Any, path: str) -> None:
    """The page has drawn and stopped changing (the run page's tables arrive after its chart)."""
    if path.startswith("/inference"):
        wait_chart(driver)
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "header"))
    driver.set_script_timeout(30)
    driver.execute_async_script(_SETTLED)


@pytest.mark.parametrize("path", PAGES)
def test_tab_alone_reaches_every_control_of_the_page(driver: Any, live_url: str, path: str) -> None:
    console_errors(driver)
    open_page(driver, f"{live_url}{path}")
    _ready(driver, path)
    controls: dict[str, str] = driver.execute_script(_MARK, CONTROLS)
    assert controls, f"{path}: no controls found"
    dropdowns = [d for d in controls.values() if d.startswith("button#{")]
    reached = _tab_through(driver, limit=len(controls) * 3 + 40)
    marks = {m for m, _, _ in reached}
    missed = [d for m, d in controls.items() if m not in marks]
    order = [t for _, _, t in reached]
    assert missed == [], f"{path}: Tab never reaches {len(missed)} controls: {missed} ({order})"
    print(f"{path}: Tab reaches all {len(controls)} controls ({len(dropdowns)} dropdowns)")
    assert console_errors(driver) == []


@pytest.mark.parametrize(
    ("tab", "fields"),
    [
        ("points", ("runs", "y", "x", "x2", "baseline", "hide", "model", "hw", "spec", "arm")),
        ("deltas", ("ab",)),
        ("pruned", ("master",)),
        ("launch", ()),
    ],
)
def test_every_run_page_dropdown_is_in_the_tab_order(
    driver: Any, live_url: str, tab: str, fields: tuple[str, ...]
) -> None:
    """The dropdowns issue 27 lists by name, each reached by Tab on the tab that shows it."""
    open_page(driver, f"{live_url}/inference?unofficialRun=29003473063&tab={tab}")
    _ready(driver, "/inference")
    wanted = {f'{{"field":"{f}","type":"control"}}' for f in fields}
    if tab == "launch":
        wanted = {"launch-backend"}
    have = {
        e.get_attribute("id")
        for e in driver.find_elements(By.CSS_SELECTOR, "button.dash-dropdown[id]")
    }
    assert wanted - have == set(), f"the page lacks {sorted(wanted - have)} (ids {sorted(have)})"
    reached = {i for _, i, _ in _tab_through(driver, 400)}
    assert wanted - reached == set()


def test_a_dropdown_opens_and_chooses_from_the_keyboard_alone(driver: Any, live_url: str) -> None:
    console_errors(driver)
    open_page(driver, f"{live_url}/inference?unofficialRun=dsr1")
    _ready(driver, "/inference")
    y_id = '{"field":"y","type":"control"}'
    order = [i for _, i, _ in _tab_through(driver, 400)]
    assert y_id in order
    # Tab to it (never a click), open with Enter, move down one, choose with Enter
    driver.execute_script("document.body.focus();")
    for _ in range(order.index(y_id) + 1):
        ActionChains(driver).send_keys(Keys.TAB).perform()
    assert driver.switch_to.active_element.get_attribute("id") == y_id
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".dash-dropdown-content [role=option]"))
    # The open list puts focus on the checked option; the arrow keys move it (the first press
    # may land while focus is still arriving, so press until it rests on another metric).
    focused = "var e = document.activeElement; return e.closest('.dash-dropdown-content') ? e.value : null;"
    wait(driver, lambda d: d.execute_script(focused))

    def moved(d: Any) -> bool:
        ActionChains(d).send_keys(Keys.ARROW_DOWN).perform()
        return d.execute_script(focused) not in (None, "tput_per_gpu")

    wait(driver, moved)
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    chosen = wait(driver, lambda d: parse_qs(urlsplit(d.current_url).query).get("y"))
    assert chosen != ["tput_per_gpu"]
    assert console_errors(driver) == []

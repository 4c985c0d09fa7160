"""The run pickers list the selected runs and the newest few; the others are found by search on
the server (issue 26, item 5). The dashboard store has 5 runs, newest first: 29337493492 (branch
kimi-k2.7-tp8, no title), 29003473063, mtp, dsr1-rerun (branch pr-123), dsr1 (branch main); the
bounds are set to 2 so that the store holds more runs than a picker lists."""

from __future__ import annotations

import json
from typing import Any

import pytest
from selenium.webdriver.common.by import By

from dashboard import run_picker
from dashboard.context import AppContext
from dashboard.ids import COMPARE_CONTROL, control
from dashboard.pages import compare, run
from tests.dashboard.browser import console_errors, open_page, wait


@pytest.fixture(autouse=True)
def _bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_picker, "RECENT", 2)
    monkeypatch.setattr(run_picker, "FOUND", 2)


def _dropdown(node: Any, key: dict[str, str]) -> Any:
    """The component with id `key` in a layout tree."""
    if getattr(node, "id", None) == key:
        return node
    children = getattr(node, "children", None)
    for child in children if isinstance(children, list | tuple) else [children]:
        if child is not None and not isinstance(child, str | int | float):
            hit = _dropdown(child, key)
            if hit is not None:
                return hit
    return None


def _values(dropdown: Any) -> list[str]:
    return [o["value"] for o in dropdown.options]


def test_the_compare_pickers_list_the_newest_runs_and_the_selected_ones(ctx: AppContext) -> None:
    tree = compare.layout(ctx, "base=main&candidate=dsr1")
    base = _dropdown(tree, control("base", COMPARE_CONTROL))
    candidate = _dropdown(tree, control("candidate", COMPARE_CONTROL))
    assert (base.value, candidate.value) == ("main", "dsr1")
    # both pickers list the same runs: the newest, then the two selected
    assert _values(base) == ["main", "29337493492", "29003473063", "dsr1"]
    assert _values(candidate) == ["29337493492", "29003473063", "dsr1"]
    # an old run keeps its label; a run the store lacks says so
    assert candidate.options[2]["label"] == "dsr1 — DeepSeek-R1 B200 offload on/off"
    tree = compare.layout(ctx, "base=dsr1-rerun&candidate=nope")
    base = _dropdown(tree, control("base", COMPARE_CONTROL))
    assert _values(base) == ["main", "29337493492", "29003473063", "dsr1-rerun", "nope"]
    assert base.options[-1]["label"] == "nope (not in store)"


def test_the_run_pages_runs_and_baseline_pickers_are_bounded(ctx: AppContext) -> None:
    tree = run.layout(ctx, "unofficialRun=mtp&baseline=dsr1")
    runs = _dropdown(tree, control("runs"))
    baseline = _dropdown(tree, control("baseline"))
    assert (runs.value, baseline.value) == (["mtp"], "dsr1")
    assert _values(runs) == ["29337493492", "29003473063", "mtp", "dsr1"]
    assert _values(baseline) == ["main", "29337493492", "29003473063", "dsr1"]


def test_search_finds_an_old_run_by_id_title_or_branch(ctx: AppContext) -> None:
    catalog = ctx.source.catalog()
    assert _ids(run_picker.search_options(catalog, "DSR1-re", [])) == ["dsr1-rerun"]
    # by branch: the label shows the title, so the branch goes in the option's search words
    found = run_picker.search_options(catalog, "pr-123", ["mtp"])
    assert found == [
        {
            "label": "dsr1-rerun — DeepSeek-R1 B200 rerun",
            "value": "dsr1-rerun",
            "search": "dsr1-rerun DeepSeek-R1 B200 rerun pr-123",
        },
        {"label": "mtp — Kimi-K2.5 MTP", "value": "mtp"},
    ]
    # by title, bounded to FOUND, newest first, the selected kept
    assert _ids(run_picker.search_options(catalog, "kimi", ["dsr1"])) == [
        "29337493492",
        "29003473063",
        "dsr1",
    ]
    assert _ids(run_picker.search_options(catalog, "no such run", [])) == []
    assert _ids(run_picker.search_options(catalog, "  ", ["dsr1"])) == [
        "29337493492",
        "29003473063",
        "dsr1",
    ]


def _ids(options: list[dict[str, str]]) -> list[str]:
    return [o["value"] for o in options]


def _search(client: Any, picker: dict[str, str], text: str, value: Any) -> list[str]:
    key = json.dumps(picker, sort_keys=True, separators=(",", ":"))
    body = {
        "output": f"{key}.options",
        "outputs": {"id": picker, "property": "options"},
        "inputs": [{"id": picker, "property": "search_value", "value": text}],
        "state": [{"id": picker, "property": "value", "value": value}],
        "changedPropIds": [f"{key}.search_value"],
    }
    response = client.post("/_dash-update-component", json=body)
    assert response.status_code == 200, response.get_data(as_text=True)
    return _ids(response.get_json()["response"][key]["options"])


def test_the_server_answers_a_pickers_search(client: Any) -> None:
    candidate = control("candidate", COMPARE_CONTROL)
    assert _search(client, candidate, "dsr1-rer", "29337493492") == ["dsr1-rerun", "29337493492"]
    assert _search(client, candidate, "main", None) == ["dsr1"]  # dsr1's branch
    base = control("base", COMPARE_CONTROL)
    assert _search(client, base, "pr-1", "main") == ["main", "dsr1-rerun"]
    assert _search(client, control("runs"), "mtp", ["dsr1", "29003473063"]) == [
        "mtp",
        "29003473063",
        "dsr1",
    ]  # the selected after the found, newest first
    assert _search(client, control("baseline"), "", "dsr1") == [
        "main",
        "29337493492",
        "29003473063",
        "dsr1",
    ]


OPTION = '.dash-dropdown-content [role=option] input[value="{}"]'


@pytest.mark.browser
def test_typing_an_old_run_id_finds_it_and_chooses_it(driver: Any, live_url: str) -> None:
    """dsr1-rerun is not among the newest two: typed into the candidate picker, the server finds
    it, and choosing it writes the URL."""
    console_errors(driver)
    open_page(driver, f"{live_url}/compare?base=main&candidate=29337493492")
    button = "#ctl-compare-control-candidate button.dash-dropdown"
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, button))[0].click()
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, OPTION.format("29003473063")))
    assert driver.find_elements(By.CSS_SELECTOR, OPTION.format("dsr1-rerun")) == []
    driver.find_element(
        By.CSS_SELECTOR, ".dash-dropdown-content input.dash-dropdown-search"
    ).send_keys("dsr1-rer")
    option = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, OPTION.format("dsr1-rerun")))
    driver.execute_script("arguments[0].closest('[role=option]').click()", option[0])
    wait(driver, lambda d: "candidate=dsr1-rerun" in d.current_url)
    assert console_errors(driver) == []

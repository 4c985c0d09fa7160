"""Issue 27, item 10: the page a newcomer meets first (the link `paretolens serve` and
`paretolens demo` print, on a store seeded from the bundled samples) shows the headline in a
real browser: the MTP A/B deltas at equal load, the arms ranked at x = 40, and, one tab over, the
exact `test-config` line of the pruned points under the bundled NVIDIA master config. The numbers
are the raw rows' (tests/paretolens/test_demo_headline.py computes them by hand)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from selenium.webdriver.common.by import By

from dashboard.app import create_app
from ingest.store import Store
from paretolens.commands.common import sample_runs, seed_samples
from paretolens.commands.serve_cmds import sample_view
from paretolens.settings import Settings
from views import urls

from .browser import console_errors, open_page, wait, wait_chart
from .conftest import serving

pytestmark = pytest.mark.browser

# The deltas grid's rows as the page holds them (its per-cent columns are off to the right).
DELTAS = (
    "var api = null; try { api = window.dash_ag_grid.getApi('deltas-grid'); } catch (e) {}"
    "if (!api) { return null; } var out = []; api.forEachNode(function (n) { out.push(n.data); });"
    "return out.length ? out : null;"
)

FIRST = "dsr1-fp8-b300-mtp"
MTP = "TP8 EP1 | MTP | kv none"
NO_MTP = "TP8 EP1 | no spec | kv none"


@pytest.fixture(scope="module")
def demo_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """The demo store (the first run and the KV pair, as `paretolens demo` seeds them) served,
    and the link `serve` prints for it."""
    root = tmp_path_factory.mktemp("first") / "store"
    store = Store(root)
    seed_samples(store, skip=set(sample_runs()) - {FIRST, "dsr1-b200-multiturn"})
    view = sample_view(store)
    assert view is not None
    settings = Settings(store=root, host="127.0.0.1", launch_enabled=False)
    with serving(create_app(store, settings)) as url:
        yield url, urls.run(view)


def test_the_newcomers_first_page_shows_deltas_a_ranking_and_the_exact_line(
    driver: Any, demo_url: tuple[str, str]
) -> None:
    base, link = demo_url
    assert link == f"/inference?unofficialRun={FIRST}&at=40&tab=deltas&master=nvidia-master.yaml"
    open_page(driver, base + link)
    wait_chart(driver)
    # ranked at 40 tok/s/user: MTP above no MTP in both sequence lengths, the 8k/1k no-MTP arm
    # (measured at conc 4 only, 69.3 tok/s/user) without a value
    rows = wait(
        driver,
        lambda d: [r.text for r in d.find_elements(By.CSS_SELECTOR, "#at-table tr") if "TP8" in r.text],
    )  # fmt: skip
    assert [(MTP in r, NO_MTP in r) for r in rows] == [
        (True, False),
        (False, True),
        (True, False),
        (False, True),
    ]
    # the A/B deltas: six loads both configurations measured, the first +39.6 % (1k/1k conc 4)
    rows = wait(driver, lambda d: d.execute_script(DELTAS))
    got = {(r["isl"], r["conc"]): round(r["tput_per_gpu_delta_pct"], 3) for r in rows}
    assert len(rows) == 6 and len(got) == 6
    assert (got[(1024, 4)], got[(1024, 64)], got[(8192, 4)]) == (39.648, 3.207, 16.038)
    # one tab over, the exact line that runs the kept points
    tab = next(
        t for t in driver.find_elements(By.CSS_SELECTOR, "[role=tab]") if t.text == "Pruned list"
    )
    tab.click()
    line = wait(driver, lambda d: d.find_element(By.ID, "pruned-cli").text.strip() or None)
    assert line == (
        "test-config --config-keys dsr1-fp8-b300-sglang-mtp --conc 4 8 16 32 64 "
        "--config-files configs/nvidia-master.yaml --runner-config configs/runners.yaml"
    )
    assert "tab=pruned" in driver.current_url
    assert console_errors(driver) == []

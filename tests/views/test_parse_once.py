"""A page's query string is parsed once: the HTML shell, the plotly bundle choice, the preloads,
the static first chart and the layout request all take the one parsed view."""

from __future__ import annotations

from pathlib import Path

from dashboard.app import create_app, layout_url
from ingest.store import Store
from paretolens.commands.common import seed_samples
from views.query import viewmodel
from views.query.state import RunView

QUERY = "unofficialRun=dsr1-b200-multiturn&at=40&ab=kv_offloading&y=nope"


def test_the_same_query_gives_the_same_frozen_view_and_fresh_notices() -> None:
    first, notes = RunView.parse(QUERY)
    again, notes_again = RunView.parse(QUERY)
    assert again is first
    assert notes == notes_again == [notes[0]] and notes[0].startswith("ignored y=nope")
    notes.append("a caller's own note")
    assert RunView.parse(QUERY)[1] == notes_again  # a caller's list is its own


def test_a_run_page_get_and_its_layout_parse_the_query_once(tmp_path: Path) -> None:
    seed_samples(Store(tmp_path))
    client = create_app(tmp_path).server.test_client()
    viewmodel._parsed.cache_clear()
    assert client.get(f"/inference?{QUERY}").status_code == 200
    assert client.get(layout_url(f"/inference?{QUERY}")).status_code == 200
    info = viewmodel._parsed.cache_info()
    # the page's query was parsed (a miss) and then served from the one parse: the HTML shell,
    # the bundle choice, the preloads, the static chart and the layout all hit it
    assert info.hits >= 4
    viewmodel._parsed(RunView, QUERY)
    assert viewmodel._parsed.cache_info().misses == info.misses  # it was kept: no new parse

"""The chart callbacks' answers kept encoded (`dashboard.pages.run.cached_answers`): the same
bytes as computed afresh, over many control states, and a new answer after a commit."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from dash import Dash

from dashboard.app import create_app, layout_url
from dashboard.pages import run as run_page
from ingest.bundled import GOLDEN_AL_DIR
from ingest.pipeline import ingest_paths
from ingest.store import Store
from paretolens.settings import Settings
from tests.dashboard.conftest import FIXTURES, RUNS
from tests.reliability import _load_client as lc
from views.cache import ByteLRU, FileLRU

UPDATE = "/_dash-update-component"
BYTES = run_page.ANSWER_BYTES  # (the tests set it per app)


class Page:
    """A run page as the load test's users drive it: its controls and the two chart
    callbacks' request bodies for a control change."""

    def __init__(self, client: Any, run: str) -> None:
        deps = client.get("/_dash-dependencies").get_json()
        self.main = next(d for d in deps if "main-chart.figure" in d["output"])
        self.second = next(d for d in deps if "second-figure.data" in d["output"])
        layout = client.get(layout_url(f"/inference?unofficialRun={run}")).get_json()
        self.page = lc._controls(layout)
        self.built = lc._store(layout, "second-tokens")
        self.search = f"?unofficialRun={run}"
        if self.built is None:  # a WebGL second chart: asked for once the first is drawn
            first = client.post(UPDATE, json=self.bodies(list(self.page[1]), None)[1])
            self.built = first.get_json()["response"]["second-tokens"]["data"]

    def bodies(self, values: list[Any], k: int | None) -> tuple[dict[str, Any], dict[str, Any]]:
        main = lc._change(self.main, self.page, values, k or 0, self.search)
        return main, lc._second(self.second, self.page, values, k, self.built)

    def changes(self, rng: random.Random, n: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        return [self.bodies(*lc._changed(rng, self.page)) for _ in range(n)]


def _app(store: Store | Path, settings: Settings, answer_bytes: int, mp: Any) -> Dash:
    mp.setattr(run_page, "ANSWER_BYTES", answer_bytes)
    return create_app(store, settings, golden_dir=GOLDEN_AL_DIR)


def _counted_calls(mp: Any) -> list[str]:
    """The names of the chart callbacks run from now on, counted as the apps register them
    (the methods themselves run as they are)."""
    calls: list[str] = []
    for name in ("on_controls", "on_second"):
        method = getattr(run_page.RunCallbacks, name)

        def counted(self: Any, *args: Any, _name: str = name, _method: Any = method) -> Any:
            calls.append(_name)
            return _method(self, *args)

        mp.setattr(run_page.RunCallbacks, name, counted)
    return calls


def _answers(client: Any, bodies: list[dict[str, Any]]) -> list[tuple[int, bytes]]:
    return [(r.status_code, r.data) for r in (client.post(UPDATE, json=b) for b in bodies)]


def test_a_byte_bounded_lru_keeps_the_newest_within_its_bytes() -> None:
    lru = ByteLRU(100)
    lru.put("a", 1, 40)
    lru.put("b", 2, 40)
    assert lru.peek("a") == 1  # now the most recently used
    lru.put("c", 3, 40)  # 120 bytes: the least recently used ("b") goes
    assert (lru.peek("b"), lru.peek("a"), lru.peek("c"), lru.bytes) == (None, 1, 3, 80)
    lru.put("a", 4, 10)  # put again: its new size replaces the old one
    assert (lru.peek("a"), lru.bytes, len(lru)) == (4, 50, 2)
    lru.put("big", 5, 101)  # larger than the bound: not kept, nothing evicted for it
    assert (lru.peek("big"), lru.bytes, len(lru)) == (None, 50, 2)
    lru.put("d", 6, 91)  # evicts until it fits: "c" (40) then "a" (10)
    assert (lru.peek("c"), lru.peek("a"), lru.peek("d"), lru.bytes) == (None, None, 6, 91)


@pytest.mark.slow  # about 8 s: 240 chart requests
def test_cached_answers_are_the_bytes_computed_afresh(
    store: Store, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two apps over one store, one caching the chart callbacks' answers and one not: over
    many control changes of several runs (the load test's, a fixed seed), each posted twice
    to the caching app (computed, then found), every answer is the same bytes as the other
    app's, and the second post of each was answered from the cache."""
    calls = _counted_calls(monkeypatch)
    fresh = _app(store, settings, 0, monkeypatch).server.test_client()
    cached = _app(store, settings, BYTES, monkeypatch).server.test_client()
    rng = random.Random(5)
    bodies: list[dict[str, Any]] = []
    for run in RUNS:
        for main, second in Page(fresh, run).changes(rng, 12):
            bodies += [main, second]
    want = _answers(fresh, bodies)
    computed = _answers(cached, bodies)
    calls.clear()
    found = _answers(cached, bodies)
    assert computed == want and found == want
    # 120 answers, most of them new figures; a 204 is a change the second chart ignores
    # (PreventUpdate), which is not kept and so computed again.
    assert len(want) == 120 and sum(b'"figure"' in body for _, body in want) >= 40
    assert {status for status, _ in want} <= {200, 204}
    ignored = sum(status == 204 for status, _ in want)
    assert calls == ["on_second"] * ignored


def test_a_commit_gives_a_new_answer(
    tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache is keyed by the store's version: after a re-ingest of the run (another
    process's commit would do the same), the same request is answered from the new data, as
    an app that caches nothing answers it."""
    root = tmp_path / "store"
    shutil.copytree(settings.store, root)
    store = Store(root)
    local = settings.model_copy(update={"store": root})
    cached = _app(store, local, BYTES, monkeypatch).server.test_client()
    fresh = _app(store, local, 0, monkeypatch).server.test_client()
    page = Page(cached, "dsr1")
    values, k = lc._changed(random.Random(3), page.page)
    main, _second = page.bodies(values, k)
    before = _answers(cached, [main, main])
    assert before[0] == before[1] == _answers(fresh, [main])[0]
    ingest_paths([FIXTURES / RUNS["mtp"][0]], store, run_id="dsr1")
    after = _answers(cached, [main])
    assert after == _answers(fresh, [main]) and after[0][0] == 200
    assert after != before[:1]


def test_arguments_orjson_cannot_write_are_answered_and_not_kept() -> None:
    cache = ByteLRU(1 << 20)
    calls: list[tuple[Any, ...]] = []

    def on_change(*args: Any) -> tuple[Any, ...]:
        calls.append(args)
        return ({"n": len(calls)},)

    answer = run_page.cached_answers(on_change, cache, lambda: 7)
    huge = 10**30  # past 64 bits: orjson refuses it (the fuzz test's value)
    assert answer(huge, [{"field": 3}]) == ({"n": 1},)
    assert answer(huge, [{"field": 3}]) == ({"n": 2},)  # computed again, never kept
    assert len(cache) == 0
    kept = answer(1, [{"field": 3}])
    assert len(cache) == 1 and answer(1, [{"field": 3}]) == kept and len(calls) == 3


def test_a_file_lru_shares_values_between_holders_within_its_bytes(tmp_path: Path) -> None:
    """Two holders of one directory (two server processes) find each other's values; past the
    limit the oldest written go (down to three quarters of it); a value over the limit, or a
    directory that cannot be written, keeps nothing and raises nothing."""
    # `one` looks at the whole directory at each write, `two` at its 32nd (or past the limit)
    one, two = FileLRU(tmp_path / "answers", 100, 1), FileLRU(tmp_path / "answers", 100)
    assert one.get("a") is None
    one.put("a", b"x" * 40)
    two.put("b", b"y" * 20)
    assert (two.get("a"), one.get("b"), two.bytes) == (b"x" * 40, b"y" * 20, 20)
    for age, name in enumerate(("a", "b")):  # "a" written first, "b" next, then "c"
        os.utime(tmp_path / "answers" / name, ns=(10**18 + age, 10**18 + age))
    one.put("c", b"z" * 45)  # 105 bytes: the oldest go until at most 75 are left ("a")
    assert (one.get("a"), one.get("b"), two.get("c"), one.bytes) == (None, b"y" * 20, b"z" * 45, 65)
    one.put("big", b"w" * 101)
    assert one.get("big") is None and sorted(os.listdir(tmp_path / "answers")) == ["b", "c"]
    # a temporary file a stopped process left: removed once over a minute old, never read
    left = tmp_path / "answers" / ".d.123.456"
    left.write_bytes(b"half")
    one.trim()
    assert left.exists() and one.get("d") is None
    os.utime(left, ns=(0, 0))
    one.trim()
    assert not left.exists() and one.bytes == 65
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    nowhere = FileLRU(blocked / "answers", 100)
    nowhere.put("a", b"x")
    assert nowhere.get("a") is None and nowhere.bytes == 0


def test_packed_answers_read_back_and_damaged_ones_are_misses() -> None:
    parts = [b'{"a":1}', None, b"[]", b""]
    assert run_page.unpack_parts(run_page.pack_parts(parts)) == parts
    packed = run_page.pack_parts(parts)
    for bad in (packed[:-1], b"", b"nonsense", b"[1,-2]\nab", b'{"a":1}\nx', packed + b"x"):
        assert run_page.unpack_parts(bad) is None


@pytest.mark.slow  # about 6 s: 120 chart requests to three apps
def test_server_processes_answer_from_what_the_others_computed(
    store: Store, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two apps sharing a state directory (two processes of one deployment, each with its own
    memory): what one computed, the other answers from the shared files without running the
    callbacks, the same bytes as an app that caches nothing; an app with other settings over
    the same directory shares nothing with them."""
    calls = _counted_calls(monkeypatch)
    shared = settings.model_copy(update={"state_dir": tmp_path / "state"})
    fresh = _app(store, settings, 0, monkeypatch).server.test_client()
    one = _app(store, shared, BYTES, monkeypatch).server.test_client()
    two = _app(store, shared, BYTES, monkeypatch).server.test_client()
    rng = random.Random(11)
    bodies: list[dict[str, Any]] = []
    for run in ("dsr1", "mtp"):
        for main, second in Page(fresh, run).changes(rng, 10):
            bodies += [main, second]
    want = _answers(fresh, bodies)
    calls.clear()
    assert _answers(one, bodies) == want
    computed = len(calls)
    ignored = sum(status == 204 for status, _ in want)  # PreventUpdate: never kept
    assert ignored < computed <= len(bodies)  # (a change drawn twice is computed once)
    files = os.listdir(tmp_path / "state" / "answers")
    assert 0 < len(files) <= len(bodies) - ignored
    calls.clear()
    assert _answers(two, bodies) == want
    assert calls == ["on_second"] * ignored
    other = shared.model_copy(update={"allowed_hosts": "localhost,127.0.0.1,::1,example.org"})
    three = _app(store, other, BYTES, monkeypatch).server.test_client()
    calls.clear()
    assert _answers(three, bodies) == want and len(calls) == computed


def test_a_store_made_again_in_its_place_finds_no_earlier_answer(
    tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store removed and made again at the same place counts its versions from 0 again: its
    table's id is new, so an app over it (same settings, same state directory) computes the
    answers an app over the old store left in the directory."""
    root = tmp_path / "store"
    assert Store(root).table_id() == ""  # nothing stored yet
    shutil.copytree(settings.store, root)
    local = settings.model_copy(update={"store": root, "state_dir": tmp_path / "state"})
    old = _app(Store(root), local, BYTES, monkeypatch).server.test_client()
    page = Page(old, "dsr1")
    main, _second = page.bodies(*lc._changed(random.Random(3), page.page))
    before = Store(root).table_id()
    _answers(old, [main])
    assert len(os.listdir(tmp_path / "state" / "answers")) == 1
    shutil.rmtree(root)
    shutil.copytree(settings.store, root)  # the same rows, versions and place; a new table id
    remade = Store(root)
    assert remade.version() == Store(settings.store).version()
    assert remade.table_id() == before  # a copy keeps its log, and so its id
    version = remade.version()
    shutil.rmtree(root)
    again = Store(root)
    while again.version() < version:  # made again up to the old store's version
        ingest_paths([FIXTURES / RUNS["dsr1"][0]], again, run_id="dsr1")
    assert again.version() == version and again.table_id() not in ("", before)
    new = _app(Store(root), local, BYTES, monkeypatch).server.test_client()
    _answers(new, [main])
    assert len(os.listdir(tmp_path / "state" / "answers")) == 2

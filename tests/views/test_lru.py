"""The LRU of computed parts makes each value once at a time: a thread asking for what another
is making waits for that value instead of making it again."""

from __future__ import annotations

import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from views.cache import LRU


def _waiting(lru: LRU, key: str, n: int) -> None:
    """Until `n` threads wait on the value of `key` being made (their stacks are in the
    pending value's `result`)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        blocked = 0
        for frame in sys._current_frames().values():
            f = frame
            while f is not None:
                if f.f_code.co_name == "result" and isinstance(f.f_locals.get("self"), Future):
                    blocked += 1
                    break
                f = f.f_back
        if blocked >= n:
            return
        time.sleep(0.01)
    raise AssertionError(f"{n} threads did not come to wait for {key!r}")


def test_a_value_being_made_is_waited_for_not_made_again() -> None:
    lru = LRU(4)
    started, release = threading.Event(), threading.Event()
    calls: list[int] = []

    def make() -> list[int]:
        calls.append(1)
        started.set()
        release.wait(5)
        return [len(calls)]

    with ThreadPoolExecutor(4) as pool:
        first = pool.submit(lru.get, "analysis", make)
        assert started.wait(5)
        others = [pool.submit(lru.get, "analysis", make) for _ in range(3)]
        _waiting(lru, "analysis", 3)
        release.set()
        got = [first.result(5), *(f.result(5) for f in others)]
    assert calls == [1]
    assert all(g is got[0] for g in got) and got[0] == [1]
    assert lru.get("analysis", lambda: [99]) is got[0]  # kept


def test_a_failed_make_fails_its_waiters_and_is_made_afresh_next_time() -> None:
    lru = LRU(4)
    started, release = threading.Event(), threading.Event()

    def broken() -> int:
        started.set()
        release.wait(5)
        raise ValueError("bad rows")

    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(lru.get, "k", broken)
        assert started.wait(5)
        waiter = pool.submit(lru.get, "k", lambda: 7)
        _waiting(lru, "k", 1)
        release.set()
        for f in (first, waiter):
            with pytest.raises(ValueError, match="bad rows"):
                f.result(5)
    assert lru.get("k", lambda: 7) == 7


def test_past_its_size_the_least_recently_used_goes() -> None:
    lru = LRU(2)
    lru.get("a", lambda: 1)
    lru.get("b", lambda: 2)
    lru.get("a", lambda: 0)  # a is now the most recent
    lru.get("c", lambda: 3)
    assert lru.peek("b") is None
    assert (lru.peek("a"), lru.peek("c")) == (1, 3)

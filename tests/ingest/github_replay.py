"""A local HTTP server replaying GitHub REST API shapes (loopback only), for tests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.loopback import loopback_server

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@dataclass
class Replay:
    """Routes: path -> (status, body bytes, extra headers). Records every request."""

    routes: dict[str, tuple[int, bytes, dict[str, str]]] = field(default_factory=dict)
    requests: list[tuple[str, str, dict[str, str], bytes]] = field(default_factory=list)
    url: str = ""

    def json(self, path: str, doc: Any, status: int = 200) -> None:
        self.routes[path] = (status, json.dumps(doc).encode(), {"Content-Type": "application/json"})

    def raw(
        self, path: str, body: bytes, status: int = 200, headers: dict[str, str] | None = None
    ) -> None:
        self.routes[path] = (status, body, headers or {})


@contextmanager
def serve(replay: Replay) -> Iterator[Replay]:
    def handle(
        method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, bytes, dict[str, str]]:
        replay.requests.append((method, path, headers, body))
        return replay.routes.get(path.split("?")[0], (404, b'{"message": "Not Found"}', {}))

    with loopback_server(handle) as url:
        replay.url = url
        yield replay

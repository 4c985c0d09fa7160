"""A local HTTP server replaying GitHub REST API shapes (loopback only), for tests."""

from __future__ import annotations

import io
import json
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def zip_bytes(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


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
    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            replay.requests.append((self.command, self.path, dict(self.headers), body))
            key = self.path.split("?")[0]
            status, data, headers = replay.routes.get(key, (404, b'{"message": "Not Found"}', {}))
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = _answer
        do_POST = _answer

        def log_message(self, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    replay.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield replay
    finally:
        server.shutdown()
        server.server_close()

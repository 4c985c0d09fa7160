"""A threaded HTTP server on 127.0.0.1 for replaying APIs in tests (shared by the GitHub replays)."""

from __future__ import annotations

import io
import threading
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# (method, path with query, headers, body) -> (status, body, headers)
Handle = Callable[[str, str, dict[str, str], bytes], tuple[int, bytes, dict[str, str]]]


def zip_bytes(members: dict[str, bytes]) -> bytes:
    """A zip archive holding the given members."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


@contextmanager
def loopback_server(handle: Handle) -> Iterator[str]:
    """Serve `handle` on a free loopback port; yields the base URL."""

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            status, data, headers = handle(self.command, self.path, dict(self.headers), body)
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
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()

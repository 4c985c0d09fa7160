"""Compressed responses: static files compressed once and served from memory, the rest on the fly.

The browser loads about 3.9 MB of JavaScript on a cold visit (plotly, the grid library, React,
Dash); compressed it is about a quarter of that. Two layers, both plain `after_request` hooks, so
any WSGI server (waitress included) just sends the bytes with their `Content-Length`:

* `StaticCompressor`: the app's static files (`/assets/`, `/_dash-component-suites/`),
  compressed once per file and encoding at a high setting (brotli 9, gzip 9) and kept in a small
  LRU keyed by the file (a Dash fingerprint or an asset's `?m=` query names the same file, so
  neither can make the server compress anything twice), shared by the process's apps.
  `warm_static` fills it at start-up.
* flask-compress for every other response (the page, `/_dash-layout`, callbacks, exports):
  zstd 3 / brotli 4 / gzip 6, as the browser accepts, above 1 kB, never streamed.

No response carries a secret (tokens are never echoed), so compressing pages next to
user-controlled text gives a BREACH-style attacker nothing to recover.
"""

from __future__ import annotations

import gzip
import logging
import re
from collections.abc import Iterable

import flask
from dash.fingerprint import check_fingerprint
from flask_compress import Compress
from werkzeug.http import parse_accept_header

from views.cache import LRU

try:  # as flask-compress does: brotlicffi where brotli (CPython only) is not installed
    import brotlicffi as brotli
except ImportError:
    import brotli

log = logging.getLogger("paretolens.dashboard")

STATIC_PREFIXES = ("/assets/", "/_dash-component-suites/")
STATIC_TYPES = frozenset(
    {"application/javascript", "text/javascript", "text/css", "application/json", "image/svg+xml"}
)
MIN_BYTES = 1024
# Encodings of static files, in our order of preference (the browser's q-values rule first).
STATIC_ENCODINGS = ("br", "gzip")


def _compress(data: bytes, encoding: str) -> bytes:
    if encoding == "br":
        return bytes(brotli.compress(data, quality=9))
    return gzip.compress(data, compresslevel=9, mtime=0)


def accepted(header: str, offered: Iterable[str]) -> str | None:
    """The offered encoding a client's Accept-Encoding prefers (None: identity only); q-values
    rule, then the order of `offered` (werkzeug's parser: q=0 and malformed items accept nothing)."""
    best: str | None = parse_accept_header(header).best_match(tuple(offered))
    return best


# Compressed static bodies, shared by every app of the process (they serve the same files).
_BODIES = LRU(64)


class StaticCompressor:
    """The `after_request` hook that serves static files compressed, each compressed once."""

    def __init__(self, prefixes: tuple[str, ...] = STATIC_PREFIXES, bodies: LRU = _BODIES) -> None:
        self.prefixes = prefixes
        self._bodies = bodies

    def __call__(self, resp: flask.Response) -> flask.Response:
        req = flask.request
        if (
            req.method != "GET"
            or resp.status_code != 200
            or not req.path.startswith(self.prefixes)
            or "Content-Encoding" in resp.headers
            or resp.mimetype not in STATIC_TYPES
        ):
            return resp
        encoding = accepted(req.headers.get("Accept-Encoding", ""), STATIC_ENCODINGS)
        if encoding is None:
            return resp
        original = resp.response
        key = (check_fingerprint(req.path)[0], encoding, resp.content_length, resp.last_modified)
        resp.direct_passthrough = False
        body: bytes | None = self._bodies.peek(key)
        if body is None:
            data = resp.get_data()
            if len(data) < MIN_BYTES:
                return resp
            body = _compress(data, encoding)
            self._bodies.put(key, body)
        elif hasattr(original, "close"):
            resp.call_on_close(original.close)
        resp.set_data(body)
        resp.headers["Content-Encoding"] = encoding
        vary = resp.headers.get("Vary")
        if not vary:
            resp.headers["Vary"] = "Accept-Encoding"
        elif "accept-encoding" not in vary.lower():
            resp.headers["Vary"] = f"{vary}, Accept-Encoding"
        etag, weak = resp.get_etag()
        if etag and not weak:
            resp.set_etag(f"{etag}:{encoding}")
            resp.make_conditional(req)  # a revalidation of this encoding is a 304
        return resp


def enable(server: flask.Flask) -> StaticCompressor:
    """Compress the app's responses (see the module docstring); returns the static layer."""
    server.config.setdefault("COMPRESS_ALGORITHM", ["zstd", "br", "gzip"])
    server.config.setdefault("COMPRESS_STREAMS", False)
    server.config.setdefault("COMPRESS_MIN_SIZE", MIN_BYTES)
    Compress(server)
    static = StaticCompressor()
    # Registered after flask-compress, so it runs first (Flask runs these hooks in reverse): a
    # static response leaves it with its Content-Encoding and flask-compress lets it be.
    server.after_request(static)
    return static


# Static paths already compressed by a warm-up of this process (another app needs no second one).
_WARMED: set[str] = set()


def warm_static(server: flask.Flask, html: str, extra: Iterable[str] = ()) -> None:
    """Compress the static files `html` (script and link tags) names, and the `extra` ones (run
    in a background thread at start-up, so no visitor waits for the one-off compression)."""
    files = [*extra, *re.findall(r'(?:src|href)="(/[^"?]+\.(?:js|css))', html)]
    client = server.test_client()
    for path in dict.fromkeys(files):
        if not path.startswith(STATIC_PREFIXES) or path in _WARMED:
            continue
        for encoding in STATIC_ENCODINGS:
            try:
                client.get(path, headers={"Accept-Encoding": encoding}).close()
            except Exception:  # warming is best effort
                log.debug("warming %s failed", path, exc_info=True)
        _WARMED.add(path)

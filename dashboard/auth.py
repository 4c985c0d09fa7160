"""Who may change state through the web app: the one token check of the dashboard's own routes.

Launch and cancel are decided by `runner.service.authorize` (the runner's single gate); this module
covers the dashboard's other state-changing request, fetching a GitHub run into the store, and
reads the token from a request. The token travels in the `X-Paretolens-Token` header or a `token`
form field, never in a query string (query strings end up in logs and browser history), and is
compared with `hmac.compare_digest`. Wrong tokens are slowed down per client address
(`Throttle`): after `FREE_WRONG_TOKENS` wrong ones, that address is refused (429) for a lockout
that doubles with each further wrong token, up to `MAX_LOCKOUT_S`. The counts are shared by every
server process of a deployment (`Throttle.path`). A request another site's page made
(`foreign_origin`) is refused before the throttle counts it: a page the user opens elsewhere
could otherwise post wrong tokens from the user's own address and lock the user out.
"""

from __future__ import annotations

import contextlib
import hmac
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from dashboard.settings import AppSettings, allowed_hosts

TOKEN_HEADER = "X-Paretolens-Token"
TOKEN_FIELD = "token"


# Wrong tokens a client may send before it is slowed down, and the longest lockout then.
FREE_WRONG_TOKENS = 5
MAX_LOCKOUT_S = 300.0
# A client's wrong tokens are forgotten after this long without one.
FORGET_AFTER_S = 900.0
# The longest token considered; a longer one is wrong without being compared.
MAX_TOKEN_CHARS = 1024


class AuthError(PermissionError):
    """A state-changing request was refused; the message says why and how to fix it."""


class Throttled(AuthError):
    """Too many wrong tokens from one client: refused without looking at the token (429)."""

    def __init__(self, retry_after: float) -> None:
        self.retry_after = max(1, int(retry_after + 0.999))
        super().__init__(
            f"too many wrong tokens from this address: try again in {self.retry_after} s"
        )


def as_token(value: object) -> str | None:
    """A token field's value as a token: only a non-empty string of sane length is one (a
    forged callback can send a number, a list or a megabyte)."""
    if not isinstance(value, str) or not value or len(value) > MAX_TOKEN_CHARS:
        return None
    return value


def client_address() -> str | None:
    """The address of the client of the request being handled (None outside a request)."""
    import flask

    return flask.request.remote_addr if flask.has_request_context() else None


def request_token(request: Any) -> str | None:
    """The token a Flask request carries (header first, then a form field)."""
    value = request.headers.get(TOKEN_HEADER)
    if value is None and request.form:
        value = request.form.get(TOKEN_FIELD)
    return as_token(value)


_SCHEMA = "CREATE TABLE IF NOT EXISTS misses (client TEXT PRIMARY KEY, count INTEGER, last REAL)"


# Host names every server answers; an Origin naming one of them on another port is another site.
_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})


def foreign_origin(settings: AppSettings) -> str | None:
    """The other site that made the request being handled (its Origin), or None when the
    request is the app's own (its Origin is the request's Host, or a host name configured in
    PARETOLENS_ALLOWED_HOSTS for a proxy) or was not made by a browser page (no Origin)."""
    import flask

    if not flask.has_request_context():
        return None
    headers = flask.request.headers
    origin = headers.get("Origin")
    if headers.get("Sec-Fetch-Site") == "cross-site":
        return (origin or "another site")[:200]
    if origin is None:
        return None
    try:
        parts = urlsplit(origin)
        name = (parts.hostname or "").lower()
    except ValueError:
        return origin[:200]
    if parts.netloc and parts.netloc.lower() == flask.request.host.lower():
        return None
    hosts = allowed_hosts(settings)  # None ("*"): any Host, but an Origin must still be its own
    if hosts is not None and name and name in hosts - _LOOPBACK:
        return None
    return origin[:200]


@dataclass
class Throttle:
    """Wrong tokens per client address; `guard` refuses a client in its lockout.

    The counts live in a SQLite database: the file `path`, which every server process of one
    deployment shares (`paretolens serve --workers N`), so a client cannot multiply its free
    guesses by the number of processes; or, without a path, one in this process's memory.
    """

    clock: Any = time.time
    path: Path | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _memory: sqlite3.Connection | None = None

    def lockout_s(self, count: int) -> float:
        """How long a client with `count` wrong tokens waits after its last one."""
        if count < FREE_WRONG_TOKENS:
            return 0.0
        return float(min(MAX_LOCKOUT_S, 2 ** (count - FREE_WRONG_TOKENS)))

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """The database in one write transaction (other processes wait for it to end)."""
        with self._lock:
            if self.path is None:
                if self._memory is None:
                    self._memory = sqlite3.connect(":memory:", check_same_thread=False)
                db = self._memory
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(self.path, timeout=10.0)
            try:
                db.execute(_SCHEMA)
                db.execute("BEGIN IMMEDIATE")
                try:
                    yield db
                except BaseException:
                    db.rollback()
                    raise
                db.commit()
            finally:
                if db is not self._memory:
                    db.close()

    def guard(self, settings: AppSettings, supplied: object, client: str | None) -> None:
        """Before a token check: refuse a client in its lockout; count a wrong token.

        Only a token that was sent and is wrong counts (none at all is not a guess), and only
        while a token is configured (without one every change is refused anyway).

        Raises:
            AuthError: for a request another site's page made (`foreign_origin`), whatever its
                token, without counting it against the client's address.
            Throttled: while the client's lockout lasts.
        """
        foreign = foreign_origin(settings)
        if foreign is not None:
            raise AuthError(
                f"refused: this request came from another site ({foreign}); changes are made "
                "from paretolens's own pages or the command line"
            )
        key = client or "?"
        now = float(self.clock())
        token = as_token(supplied)
        wrong = not (supplied is None or settings.token is None or token_matches(settings, token))
        with self._transaction() as db:
            row = db.execute("SELECT count, last FROM misses WHERE client = ?", (key,)).fetchone()
            if row is not None and now - row[1] > FORGET_AFTER_S:
                db.execute("DELETE FROM misses WHERE client = ?", (key,))
                row = None
            if row is not None:
                wait = row[1] + self.lockout_s(row[0]) - now
                if wait > 0:
                    raise Throttled(wait)
            if not wrong:
                return
            db.execute(
                "INSERT INTO misses VALUES (?, 1, ?) ON CONFLICT(client) "
                "DO UPDATE SET count = count + 1, last = excluded.last",
                (key, now),
            )
            # a flood of addresses: keep the newest
            (n,) = db.execute("SELECT count(*) FROM misses").fetchone()
            if n > 10_000:
                db.execute(
                    "DELETE FROM misses WHERE client IN "
                    "(SELECT client FROM misses ORDER BY last LIMIT 5000)"
                )


def token_matches(settings: AppSettings, supplied: str | None) -> bool:
    """Whether `supplied` equals the configured token (constant time; False when none is set)."""
    if settings.token is None or supplied is None:
        return False
    expected = settings.token.get_secret_value()
    return bool(expected) and hmac.compare_digest(supplied.encode(), expected.encode())


@dataclass(frozen=True)
class FetchPolicy:
    """May the app fetch a missing run from GitHub, and does it need the token to."""

    mode: Literal["auto", "token", "off"]
    reason: str


def fetch_policy(settings: AppSettings) -> FetchPolicy:
    """Fetching writes to the store, so it needs a GitHub token and the app token, like every
    other state-changing action (on loopback too: any page the user opens could POST it)."""
    if settings.github_token is None:
        return FetchPolicy("off", "no GitHub token is configured (set GITHUB_TOKEN)")
    if settings.token is None or not settings.token.get_secret_value():
        return FetchPolicy(
            "off",
            "fetching writes to the store and needs the app token: set PARETOLENS_TOKEN and "
            "restart, or fetch from the command line",
        )
    return FetchPolicy("token", "fetching writes to the store: enter the app token")


def authorize_fetch(settings: AppSettings, supplied: str | None) -> None:
    """Allow a fetch or raise AuthError with the reason.

    Raises:
        AuthError: when the policy is off or the token is wrong or missing.
    """
    policy = fetch_policy(settings)
    if policy.mode == "off":
        raise AuthError(f"fetching is off: {policy.reason}")
    if policy.mode == "token" and not token_matches(settings, supplied):
        raise AuthError("wrong or missing token")

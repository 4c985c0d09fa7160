"""Who may change state through the web app: the one token check of the dashboard's own routes.

Launch and cancel are decided by `runner.service.authorize` (the runner's single gate); this module
covers the dashboard's other state-changing request, fetching a GitHub run into the store, and
reads the token from a request. The token travels in the `X-Paretolens-Token` header or a `token`
form field, never in a query string (query strings end up in logs and browser history), and is
compared with `hmac.compare_digest`.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Any, Literal

from paretolens.settings import Settings

TOKEN_HEADER = "X-Paretolens-Token"
TOKEN_FIELD = "token"


class AuthError(PermissionError):
    """A state-changing request was refused; the message says why and how to fix it."""


def request_token(request: Any) -> str | None:
    """The token a Flask request carries (header first, then a form field)."""
    value = request.headers.get(TOKEN_HEADER)
    if value is None and request.form:
        value = request.form.get(TOKEN_FIELD)
    return value or None


def token_matches(settings: Settings, supplied: str | None) -> bool:
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


def fetch_policy(settings: Settings) -> FetchPolicy:
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


def authorize_fetch(settings: Settings, supplied: str | None) -> None:
    """Allow a fetch or raise AuthError with the reason.

    Raises:
        AuthError: when the policy is off or the token is wrong or missing.
    """
    policy = fetch_policy(settings)
    if policy.mode == "off":
        raise AuthError(f"fetching is off: {policy.reason}")
    if policy.mode == "token" and not token_matches(settings, supplied):
        raise AuthError("wrong or missing token")

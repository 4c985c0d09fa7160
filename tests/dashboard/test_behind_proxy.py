"""Behind a reverse proxy (`PARETOLENS_PROXIES=1`, docs/deployment.md): every request arrives from
the proxy's address, so the wrong-token lockout counts the client the proxy names in
X-Forwarded-For, and the Host check reads the name the client asked the proxy for. Without the
setting the headers are not trusted (a client could otherwise pick its own address)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import SecretStr

from dashboard import auth
from dashboard.app import create_app
from ingest.store import Store
from paretolens.settings import Settings

from .conftest import TOKEN

PROXY = {"REMOTE_ADDR": "127.0.0.1"}
CANCEL = "/api/jobs/j-20260101-000000-abcdef/cancel"


def _client(tmp_path: Path, proxies: int) -> Any:
    settings = Settings(
        store=tmp_path / "s",
        token=SecretStr(TOKEN),
        launch_enabled=True,
        allowed_hosts="lens.example.org",
        proxies=proxies,
    )
    return create_app(Store(tmp_path / "s"), settings).server.test_client()


def _post(c: Any, client_ip: str, token: str) -> int:
    headers = {
        auth.TOKEN_HEADER: token,
        "X-Forwarded-For": client_ip,
        "X-Forwarded-Host": "lens.example.org",
    }
    return int(c.post(CANCEL, headers=headers, environ_base=PROXY).status_code)


def test_the_lockout_counts_each_client_behind_the_proxy(tmp_path: Path) -> None:
    c = _client(tmp_path, proxies=1)
    codes = [_post(c, "203.0.113.7", f"wrong-{i}") for i in range(auth.FREE_WRONG_TOKENS + 1)]
    assert codes == [403] * auth.FREE_WRONG_TOKENS + [429]
    # Another client through the same proxy is not locked out: its right token reaches the
    # job lookup (404: there is no such job).
    assert _post(c, "198.51.100.4", TOKEN) == 404


def test_without_the_setting_the_forwarded_headers_are_not_trusted(tmp_path: Path) -> None:
    c = _client(tmp_path, proxies=0)
    # The Host the client names in X-Forwarded-Host is not taken: the request's own Host
    # (localhost) is not among the allowed names.
    assert _post(c, "203.0.113.7", TOKEN) == 400

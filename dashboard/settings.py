"""The settings the dashboard reads, declared as a Protocol (as `runner.service.LaunchSettings`).

The dashboard never reads the environment and never imports the composition root: whoever builds
the app (`paretolens serve`, `paretolens.wsgi`, a test) hands `create_app` an object with these
fields. `paretolens.settings.Settings` satisfies the Protocol; `LocalSettings` is the default, a
loopback server with launching and fetching off.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pydantic import SecretStr

from runner.service import LaunchSettings


class AppSettings(LaunchSettings, Protocol):
    """What the web app reads: the runner's launch settings (token, launch_enabled, host, the
    GitHub client's), plus the store directory, the launch options document and the Host names
    it answers (comma-separated; "*" for any), and the state directory its server processes
    share (None: this process's memory; see `dashboard.context.AppContext`), and how many
    reverse proxies stand in front of it (their X-Forwarded-* headers are trusted)."""

    store: Path
    launch_options: Path | None
    allowed_hosts: str
    state_dir: Path | None
    proxies: int


@dataclass
class LocalSettings:
    """Settings for an app given none: a loopback server over `store`, no token, launching off."""

    store: Path
    token: SecretStr | None = None
    launch_enabled: bool = False
    host: str = "127.0.0.1"
    github_token: SecretStr | None = None
    github_api_url: str = "https://api.github.com"
    github_repo: str = "SemiAnalysisAI/InferenceX"
    launch_options: Path | None = None
    allowed_hosts: str = "localhost,127.0.0.1,::1"
    state_dir: Path | None = None
    proxies: int = 0


WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::", "*"})


def allowed_hosts(settings: AppSettings) -> frozenset[str] | None:
    """The Host names `settings` answers (lower case, no port); None when any Host is allowed.

    The address the server binds is added when it is one address (not 0.0.0.0 or ::).
    """
    names = {h.strip().lower().strip("[]").rstrip(".") for h in settings.allowed_hosts.split(",")}
    if "*" in names:
        return None
    bind = settings.host.strip().lower().strip("[]")
    if bind not in WILDCARD_HOSTS:
        names.add(bind)
    return frozenset(n for n in names if n)

"""Settings from the environment (PARETOLENS_*), with the store in the user's data directory as
the default, and where the bundled data is (`ingest.bundled`: a clone's `data/`, or the copy a
wheel carries)."""

from __future__ import annotations

from pathlib import Path

from platformdirs import user_data_path
from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = [
    "Settings",
    "default_store",
    "load_settings",
]


def default_store() -> Path:
    """The store when none is given: `store` in the user's data directory (on Linux
    `~/.local/share/paretolens/store`, or under `$XDG_DATA_HOME`), never inside the installed
    package."""
    return user_data_path("paretolens", appauthor=False) / "store"


class Settings(BaseSettings):
    """paretolens settings. Secrets are SecretStr so they never print."""

    model_config = SettingsConfigDict(env_prefix="PARETOLENS_", extra="ignore")

    store: Path = Field(default_factory=default_store)
    host: str = "127.0.0.1"
    port: int = 8050
    # Token that every state-changing request (upload, launch, cancel, delete) must carry.
    token: SecretStr | None = None
    github_token: SecretStr | None = Field(default=None, validation_alias="GITHUB_TOKEN")
    github_api_url: str = "https://api.github.com"
    github_repo: str = "SemiAnalysisAI/InferenceX"
    launch_enabled: bool = False
    # The server-side launch options document (YAML: commands, slurm, github, env, defaults,
    # timeouts) that every web launch uses; the browser chooses points, backend and durations
    # only. Default: launch-options.yaml in the store, when it exists (docs/runner.md).
    launch_options: Path | None = None
    # Host names the server answers to (the request's Host header, port aside), comma-separated;
    # any other Host gets 400, so a DNS-rebinding page cannot read the app through the browser.
    # The address the server binds is added when it is one address (not 0.0.0.0 or ::); "*"
    # answers any Host (behind a proxy that checks it).
    allowed_hosts: str = "localhost,127.0.0.1,::1"
    # What the server processes of one deployment share: the wrong-token counts and the
    # progress of fetches from the web. `serve --workers N` makes one for its processes when
    # none is given; servers on several machines behind one proxy share one here (on a disk
    # they all mount) or send each client to one server (docs/deployment.md).
    state_dir: Path | None = None
    # How many reverse proxies stand in front of the server: their X-Forwarded-For, -Proto and
    # -Host headers are trusted for that many hops, so the wrong-token lockout counts each
    # client and not the proxy, and the Host check sees the name the client asked for. 0 (the
    # default) trusts none: never set it on a server that clients reach without the proxy.
    proxies: int = Field(default=0, ge=0)


def load_settings(**overrides: object) -> Settings:
    """Settings from the environment with explicit overrides (None values ignored)."""
    return Settings(**{k: v for k, v in overrides.items() if v is not None})  # type: ignore[arg-type]

"""Settings from the environment (PARETOLENS_*), with the bundled store as the default."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = REPO_ROOT / "data"
DEFAULT_STORE = DATA_DIR / "store"
SAMPLES_DIR = DATA_DIR / "samples"
GOLDEN_AL_DIR = DATA_DIR / "golden_al"


class Settings(BaseSettings):
    """paretolens settings. Secrets are SecretStr so they never print."""

    model_config = SettingsConfigDict(env_prefix="PARETOLENS_", extra="ignore")

    store: Path = DEFAULT_STORE
    host: str = "127.0.0.1"
    port: int = 8050
    # Token that every state-changing request (upload, launch, cancel, delete) must carry.
    token: SecretStr | None = None
    github_token: SecretStr | None = Field(default=None, validation_alias="GITHUB_TOKEN")
    github_api_url: str = "https://api.github.com"
    github_repo: str = "SemiAnalysisAI/InferenceX"
    launch_enabled: bool = False


def load_settings(**overrides: object) -> Settings:
    """Settings from the environment with explicit overrides (None values ignored)."""
    return Settings(**{k: v for k, v in overrides.items() if v is not None})  # type: ignore[arg-type]

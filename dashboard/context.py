"""What every page and route of one app shares: the data source, the settings, the fetcher."""

from __future__ import annotations

from dataclasses import dataclass

from dashboard.data import DataSource
from dashboard.fetch import Fetcher
from paretolens.settings import Settings


@dataclass(frozen=True)
class AppContext:
    """The per-app services (one per `create_app`; nothing here is module-global)."""

    source: DataSource
    settings: Settings
    fetcher: Fetcher

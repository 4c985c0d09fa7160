"""What every page and route of one app shares: the data source, the settings, the fetcher, the
wrong-token throttle."""

from __future__ import annotations

from dataclasses import dataclass, field

from dashboard.auth import Throttle
from dashboard.fetch import Fetcher
from dashboard.settings import AppSettings
from views.source import DataSource


@dataclass(frozen=True)
class AppContext:
    """The per-app services (one per `create_app`; nothing here is module-global)."""

    source: DataSource
    settings: AppSettings
    fetcher: Fetcher
    throttle: Throttle = field(default_factory=Throttle)

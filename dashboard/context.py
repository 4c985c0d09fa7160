"""What every page and route of one app shares: the data source, the settings, the fetcher, the
wrong-token throttle.

Nothing here may hold what another server process needs: the data source caches what it read
keyed by the store files' versions (so an ingest by any process is seen by all on their next
request), and the fetcher and the throttle keep their state in the settings' `state_dir` when one
is given (`app_context`), which every process of a deployment shares."""

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


def app_context(source: DataSource, settings: AppSettings) -> AppContext:
    """The services of an app, sharing their state through `settings.state_dir` when set."""
    shared = settings.state_dir
    return AppContext(
        source=source,
        settings=settings,
        fetcher=Fetcher(source.store, settings, shared),
        throttle=Throttle(path=shared / "throttle.sqlite" if shared is not None else None),
    )

"""A run banner's list of rejected and ignored files, bounded: a run with 100k rejects gave a
20 MB page with every one of them drawn."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl
from dash import html

from ingest.contract.schema import RejectCol

# Rejected (and ignored) files a run's banner lists by name; the rest are counted per reason, and
# the whole list is in the rejects tab's exports (a run with 100k rejects gave a 20 MB page).
BANNER_LISTED = 50


def listed(
    frame: pl.DataFrame, item: Callable[[dict[str, Any]], Any], full_href: str | None
) -> list[Any]:
    """The first BANNER_LISTED rows of `frame` as list items; the rest counted per reason."""
    items = [item(r) for r in frame.head(BANNER_LISTED).iter_rows(named=True)]
    rest = frame.slice(BANNER_LISTED)
    if rest.height:
        top = (
            rest.group_by(RejectCol.REASON)
            .len()
            .sort(["len", RejectCol.REASON], descending=[True, False])
        )
        reasons = "; ".join(f"{n:,} × {str(r)[:120]}" for r, n in top.head(5).iter_rows())
        more: list[Any] = [
            f"… and {rest.height:,} more ({reasons}{'; …' if top.height > 5 else ''})"
        ]
        if full_href:
            more += [" — ", html.A("the full list (CSV)", href=full_href, download="")]
        items.append(html.Li(more, className="muted"))
    return items

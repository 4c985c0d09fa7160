"""Commands of this group (filled in by their feature)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Register this group's commands on the app."""

"""`paretolens store`: the store's history (`log`), going back to a version (`undo`), deleting
the data files no recent version reads (`vacuum`) and converting a store written before Delta
Lake (`upgrade`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from paretolens.commands.common import StoreOpt, UsageError, guard
from paretolens.settings import load_settings

store_app = typer.Typer(
    help="The store's commits, undo to a version, vacuum old files, upgrade an old store.",
    no_args_is_help=True,
)


def _root(store: Path | None) -> Path:
    return store if store is not None else load_settings().store


@store_app.command("log")
def log(
    limit: Annotated[int, typer.Option("--limit", help="newest commits to list")] = 20,
    store: StoreOpt = None,
) -> None:
    """List the store's commits, newest first: version, when, what, runs, source, rows added."""
    from ingest.store import Store

    with guard():
        commits = Store(_root(store)).log(limit)
        if not commits:
            raise UsageError(f"the store at {_root(store)} has no commits yet")
        for c in commits:
            runs = ",".join(c.runs) if len(c.runs) <= 5 else f"{len(c.runs)} runs"
            print(
                f"{c.version}\t{c.at.isoformat(timespec='seconds')}\t{c.action}\t"
                f"{runs or '-'}\t{c.source or '-'}\t{c.rows} rows"
            )


@store_app.command("undo")
def undo(
    version: Annotated[int, typer.Argument(help="the version to go back to (`store log`)")],
    store: StoreOpt = None,
) -> None:
    """Make the store hold what it held at VERSION (a new commit: the undone ones stay in the
    log, so an undo can itself be undone)."""
    from ingest.store import Store

    with guard():
        new = Store(_root(store)).restore(version)
        print(f"the store holds what it held at version {version} (now version {new})")


@store_app.command("vacuum")
def vacuum(
    retention_hours: Annotated[
        int,
        typer.Option(
            "--retention-hours",
            help="keep every file a version of the last N hours reads (`store undo` to those "
            "versions keeps working)",
        ),
    ] = 168,  # ingest.lake.delta.RETENTION_HOURS (not imported: start-up stays short)
    yes: Annotated[
        bool, typer.Option("--yes", help="delete the files (default: list them)")
    ] = False,
    store: StoreOpt = None,
) -> None:
    """List the data files that replaced or deleted runs left behind and no version of the last
    --retention-hours reads; delete them with --yes. The rows the store reads do not change."""
    from ingest.store import Store

    with guard():
        files = Store(_root(store)).vacuum(retention_hours, dry_run=not yes)
        for f in files:
            print(f)
        window = f"the last {retention_hours} hours"
        if yes:
            print(f"deleted {len(files)} files; `store undo` reaches the versions of {window}")
        else:
            print(
                f"would delete {len(files)} files (no version of {window} reads them); "
                "run again with --yes to delete them"
            )


@store_app.command("upgrade")
def upgrade(store: StoreOpt = None) -> None:
    """Convert a store written before Delta Lake into the Delta table (one commit; the old
    files move to legacy/)."""
    from ingest.lake.upgrade import upgrade as run_upgrade

    with guard():
        report = run_upgrade(_root(store))
        rows = ", ".join(f"{n} {t}" for t, n in sorted(report.rows.items()))
        print(f"upgraded {report.runs} runs ({rows}) to version {report.version}")
        for f in report.shared_files:
            print(f"note: {f} held rows of more than one run id; each run got its own rows")


def register(app: typer.Typer) -> None:
    """Register the store command group."""
    app.add_typer(store_app, name="store")

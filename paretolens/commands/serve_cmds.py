"""`paretolens serve`: the web app on waitress (the production WSGI server) or Dash's dev server."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import polars as pl
import typer

from ingest.schema import RunCol
from ingest.store import Store
from paretolens.commands.ingest_cmds import open_store
from paretolens.settings import load_settings


def sample_run(store: Store) -> str | None:
    """The run whose page to advertise: the one with the most points (ties: newest id)."""
    runs = store.runs().filter(pl.col(RunCol.POINT_COUNT) > 0)
    if runs.height == 0:
        return None
    best = runs.sort([RunCol.POINT_COUNT, RunCol.RUN_ID], descending=True).row(0, named=True)
    return str(best[RunCol.RUN_ID])


def serve(
    store: Annotated[
        Path | None, typer.Option("--store", help="store directory (default: the bundled store)")
    ] = None,
    host: Annotated[
        str | None, typer.Option("--host", help="listen address (default 127.0.0.1)")
    ] = None,
    port: Annotated[int | None, typer.Option("--port", help="port (default 8050)")] = None,
    wsgi: Annotated[
        bool,
        typer.Option(
            "--wsgi/--dev",
            help="waitress, the production WSGI server (default), or Dash's dev server",
        ),
    ] = True,
    threads: Annotated[int, typer.Option("--threads", help="waitress worker threads")] = 8,
) -> None:
    """Serve the web app and print the URL of a sample run page."""
    from dashboard import urls
    from dashboard.app import create_app
    from runner.service import is_loopback

    settings = load_settings(host=host, port=port, store=store)
    st = open_store(store)
    app = create_app(st, settings)
    shown = f"[{settings.host}]" if ":" in settings.host else settings.host
    base = f"http://{shown}:{settings.port}"
    err = sys.stderr
    print(f"paretolens: serving {st.root} ({len(st.run_ids())} runs) on {base}/", file=err)
    sample = sample_run(st)
    if sample:
        print(f"open a sample run: {base}{urls.runs(sample)}", file=err)
    if not is_loopback(settings.host) and settings.token is None:
        print(
            f"warning: listening on {settings.host}, beyond localhost, without PARETOLENS_TOKEN: "
            "launching and fetching from the web are refused",
            file=err,
        )
    err.flush()
    if wsgi:
        from waitress import serve as waitress_serve

        waitress_serve(
            app.server, host=settings.host, port=settings.port, threads=threads, ident="paretolens"
        )
    else:
        app.run(host=settings.host, port=settings.port, debug=False)


def register(app: typer.Typer) -> None:
    """Register `serve`."""
    app.command()(serve)

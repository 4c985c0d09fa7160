"""`paretolens serve`: the web app on waitress (the production WSGI server) or Dash's dev server."""

from __future__ import annotations

import errno
import socket
import sys
from pathlib import Path
from typing import Annotated

import polars as pl
import typer

from ingest.contract.col import Col
from ingest.store import Store
from paretolens.commands.common import open_store
from paretolens.settings import GOLDEN_AL_DIR, load_settings
from views.query.state import RunView


def sample_view(store: Store) -> RunView | None:
    """The run page to advertise: a run with an A/B to show (spec decoding first, then KV
    offload), else the one with the most points; with its A/B axis set and arms ranked at 40
    tok/s/user."""
    pts = store.collect(lambda lf: lf.select(Col.RUN_ID, Col.SPEC_DECODING, Col.KV_OFFLOADING))
    if pts.height == 0:
        return None
    runs = pts.group_by(Col.RUN_ID).agg(
        pl.col(Col.SPEC_DECODING).n_unique().alias("spec"),
        pl.col(Col.KV_OFFLOADING).n_unique().alias("kv"),
        pl.len().alias("n"),
    )
    best = runs.sort(["spec", "kv", "n", Col.RUN_ID], descending=[True, True, True, False]).row(
        0, named=True
    )
    axis = Col.SPEC_DECODING if best["spec"] > 1 else Col.KV_OFFLOADING if best["kv"] > 1 else None
    view = RunView(runs=(str(best[Col.RUN_ID]),), at=40.0)
    return view.replace(ab=axis.value, tab="deltas") if axis else view


def listen_problem(host: str, port: int) -> str | None:
    """Why the server could not listen on host:port (None when it can): a port in use, an
    address this machine does not have, a privileged port."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        # as waitress binds: a port in TIME_WAIT is free, one with a listener is not
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            reason = exc.strerror or str(exc)
            if exc.errno == errno.EADDRINUSE:
                reason = "the port is in use (another paretolens or server?)"
            return f"{reason}: stop it, or pick another port with --port"
    return None


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
    from dashboard.app import create_app
    from runner.service import is_loopback
    from views import urls

    settings = load_settings(host=host, port=port, store=store)
    problem = listen_problem(settings.host, settings.port)
    if problem is not None:
        print(
            f"paretolens: cannot listen on {settings.host}:{settings.port}: {problem}",
            file=sys.stderr,
        )
        raise typer.Exit(2)
    st = open_store(store)
    app = create_app(st, settings, golden_dir=GOLDEN_AL_DIR)
    shown = f"[{settings.host}]" if ":" in settings.host else settings.host
    base = f"http://{shown}:{settings.port}"
    err = sys.stderr
    print(f"paretolens: serving {st.root} ({len(st.run_ids())} runs) on {base}/", file=err)
    sample = sample_view(st)
    if sample:
        print(f"open a sample run: {base}{urls.run(sample)}", file=err)
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

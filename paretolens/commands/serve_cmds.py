"""`paretolens serve`: the web app on waitress (the production WSGI server, one process), on
gunicorn with `--workers N` (N processes, on Linux and other POSIX systems), or on Dash's dev
server."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Annotated

import polars as pl
import typer

from ingest.bundled import GOLDEN_AL_DIR
from ingest.contract.col import Col
from ingest.store import Store
from paretolens.commands.common import StoreOpt, open_store, sample_runs, seed_samples
from paretolens.settings import Settings, load_settings
from views.query.state import RunView


def sample_view(store: Store) -> RunView | None:
    """The run page to advertise: a run with an A/B to show (spec decoding first, then KV
    offload), else the one with the most points; with its A/B axis set, arms ranked at 40
    tok/s/user and the master config under which its pruned list is an exact `test-config`
    line (`exact_master`), when the store has one."""
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
    master = exact_master(store, view)
    view = view.replace(master=master) if master else view
    return view.replace(ab=axis.value, tab="deltas") if axis else view


def exact_master(store: Store, view: RunView) -> str:
    """The first of the store's master configs (by name) under which the view's pruned list is
    one exact `test-config` line, so the page's pruned tab shows a line that runs; '' when none
    is."""
    from views.source import DataSource

    source = DataSource(store)
    for name in sorted(source.master_configs()):
        data = source.run_data(view.replace(master=name))
        if data.pruned.arms and not data.pruned_cli.startswith("#"):
            return name
    return ""


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
    store: StoreOpt = None,
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
    threads: Annotated[
        int, typer.Option("--threads", help="worker threads (of each process with --workers)")
    ] = 8,
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            min=1,
            help="server processes: 1 is waitress; more run gunicorn (Linux and other POSIX "
            "systems), each process with --threads threads",
        ),
    ] = 1,
) -> None:
    """Serve the web app and print the URL of a sample run page."""
    from dashboard.app import create_app, settle_heap
    from runner.service import is_loopback
    from views import urls

    settings = load_settings(host=host, port=port, store=store)
    if workers > 1 and (not wsgi or sys.platform == "win32"):
        why = "with --dev" if not wsgi else "on Windows (gunicorn needs a POSIX system)"
        print(
            f"paretolens: --workers {workers} cannot run {why}: leave --workers at 1",
            file=sys.stderr,
        )
        raise typer.Exit(2)
    problem = listen_problem(settings.host, settings.port)
    if problem is not None:
        print(
            f"paretolens: cannot listen on {settings.host}:{settings.port}: {problem}",
            file=sys.stderr,
        )
        raise typer.Exit(2)
    st = open_store(store)
    app = create_app(st, settings, golden_dir=GOLDEN_AL_DIR)
    settle_heap()
    shown = f"[{settings.host}]" if ":" in settings.host else settings.host
    base = f"http://{shown}:{settings.port}"
    err = sys.stderr
    print(f"paretolens: serving {st.uri} ({len(st.run_ids())} runs) on {base}/", file=err)
    sample = sample_view(st)
    if sample:
        print(f"open a sample run: {base}{urls.run(sample)}", file=err)
    else:
        print(empty_store_offer(st.root, store is not None), file=err)
    if not is_loopback(settings.host) and settings.token is None:
        print(
            f"warning: listening on {settings.host}, beyond localhost, without PARETOLENS_TOKEN: "
            "launching and fetching from the web are refused",
            file=err,
        )
    err.flush()
    if workers > 1:
        raise typer.Exit(run_gunicorn(settings, st.root, workers=workers, threads=threads))
    if wsgi:
        from waitress import serve as waitress_serve

        waitress_serve(
            app.server, host=settings.host, port=settings.port, threads=threads, ident="paretolens"
        )
    else:
        app.run(host=settings.host, port=settings.port, debug=False)


def empty_store_offer(root: Path, explicit: bool) -> str:
    """What `serve` says of a store without runs: how to load the bundled samples or a sweep."""
    where = f" --store {root}" if explicit else ""
    return (
        f"the store {root} has no runs yet: `paretolens demo{where}` loads the "
        f"{len(sample_runs())} bundled sample runs, `paretolens ingest DIR{where}` a sweep of yours"
    )


def demo(
    store: StoreOpt = None,
    if_empty: Annotated[
        bool,
        typer.Option("--if-empty", help="only into a store without runs (as scripts/serve.sh)"),
    ] = False,
) -> None:
    """Load the bundled sample runs into the store (those it does not have), to try the app."""
    st = open_store(store)
    have = set(st.run_ids())
    if if_empty and have:
        return
    report = seed_samples(st, skip=have)
    loaded = [r for r in sample_runs() if r not in have]
    err = sys.stderr
    if loaded:
        print(
            f"paretolens: loaded {len(loaded)} sample runs ({report.accepted} points) into "
            f"{st.root}: {', '.join(loaded)}",
            file=err,
        )
    else:
        print(f"paretolens: {st.root} has every sample run already", file=err)
    if not if_empty:  # a script serves next
        where = f" --store {st.root}" if store is not None else ""
        print(f"serve them: paretolens serve{where}", file=err)
        from views import urls

        sample = sample_view(st)
        if sample:
            print(f"and open the run page it links first: {urls.run(sample)}", file=err)


def gunicorn_command(host: str, port: int, workers: int, threads: int) -> list[str]:
    """The gunicorn command line of `serve --workers`: threaded workers over
    `paretolens.wsgi:server`, each process building its own app (no preloading: a process forked
    after polars has started its thread pool can deadlock)."""
    bind = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return [
        sys.executable,
        "-m",
        "gunicorn",
        "--bind",
        bind,
        "--workers",
        str(workers),
        "--worker-class",
        "gthread",
        "--threads",
        str(threads),
        # A page never takes this long; a worker that does is stuck and gunicorn replaces it.
        "--timeout",
        "120",
        "--graceful-timeout",
        "10",
        # A page's callbacks are POSTs sent after the user has looked at the page for a while;
        # gunicorn's 2 s closes the idle connection first, and a POST sent as it closes fails
        # (browsers retry only idempotent requests). 75 s, as nginx keeps client connections.
        "--keep-alive",
        "75",
        "paretolens.wsgi:server",
    ]


def run_gunicorn(settings: Settings, store: Path, *, workers: int, threads: int) -> int:
    """Run gunicorn's master in a fresh process until it stops (a signal to this process is
    passed on) and return its exit code. The workers read their settings from the environment
    (`paretolens.wsgi`) and share the state directory: the settings' one, or a temporary one
    removed when the server stops."""
    with tempfile.TemporaryDirectory(prefix="paretolens-state-") as tmp:
        # The chart answers an earlier server kept (dashboard.pages.run.cached_answers) are not
        # this one's to find: its store may have been made again since.
        if settings.state_dir is not None:
            shutil.rmtree(Path(settings.state_dir) / "answers", ignore_errors=True)
        env = dict(os.environ)
        env.update(
            PARETOLENS_STORE=str(Path(store).resolve()),
            PARETOLENS_HOST=settings.host,
            PARETOLENS_PORT=str(settings.port),
            PARETOLENS_STATE_DIR=str(settings.state_dir or tmp),
        )
        proc = subprocess.Popen(
            gunicorn_command(settings.host, settings.port, workers, threads), env=env
        )

        def forward(signum: int, _frame: object) -> None:
            proc.send_signal(signum)

        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, forward)
        return proc.wait()


def register(app: typer.Typer) -> None:
    """Register `serve` and `demo`."""
    app.command()(serve)
    app.command()(demo)

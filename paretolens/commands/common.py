"""What every command group shares: the store, the shared options, the one error guard and the one
way a table reaches the screen or a file (`emit`, through the renderer registry
`analysis.render.RENDERERS` that the web exports use too)."""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
from collections.abc import Collection, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.text import Text

from ingest.bundled import MASTER_CONFIGS_DIR, SAMPLES_DIR
from ingest.contract.schema import RunCol
from ingest.lake.errors import LegacyStoreError
from ingest.store import Store
from ingest.untrusted.controls import escape_controls

if TYPE_CHECKING:
    import polars as pl

    from analysis.render import Rendering
    from analysis.tables import Table
    from ingest.report import IngestReport

# The analysis package and the ingest pipeline are imported by the functions that use them: a
# command that only reads the store (or only renders) does not pay for the others. The `--format`
# options, whose help lists the analysis package's formats, are in `format_opts`.

StoreOpt = Annotated[
    Path | None,
    typer.Option(
        "--store",
        help="store directory or s3:// gs:// az:// URI (default: PARETOLENS_STORE, else `store` "
        "in the user's data directory)",
    ),
]
RunOpt = Annotated[list[str] | None, typer.Option("--run", help="run id (repeat for several runs)")]
RunsArg = Annotated[
    list[str] | None,
    typer.Argument(
        help="run ids (the same as --run; `paretolens runs` lists them)", show_default=False
    ),
]
XOpt = Annotated[
    str, typer.Option("--x", help="x metric (a canonical column with a better direction)")
]
YOpt = Annotated[str, typer.Option("--y", help="y metric")]
OutputOpt = Annotated[
    Path | None, typer.Option("--output", help="write to this file instead of stdout")
]


class InertConsole(Console):
    """A console that prints every string as written: never read as rich markup (a file named
    `[bold red]b.json` shows its brackets, `a[/x].json` does not crash) and its control characters
    escaped (an ESC or BEL from a file name or a model string does nothing to the terminal).
    Styles are given as `Text` objects (`error_text`)."""

    def render_str(self, text: str, **kw: Any) -> Text:
        kw.update(markup=False, emoji=False, highlight=False)
        return super().render_str(escape_controls(text, keep_layout=True), **kw)


def inert(text: str) -> str:
    """Untrusted text for a `Text` object: control characters escaped (a `Text` is never markup)."""
    return escape_controls(text, keep_layout=True)


def error_text(message: str) -> Text:
    """`error: <message>` with a red label; the message shown as written, controls escaped."""
    return Text.assemble(("error:", "red"), " ", inert(message))


console = InertConsole()
err = InertConsole(stderr=True)


class UsageError(Exception):
    """A caller mistake reported as exit code 2."""


USAGE_ERRORS: tuple[type[BaseException], ...] = (UsageError, ValueError, ValidationError)


@contextlib.contextmanager
def guard(*errors: type[BaseException]) -> Iterator[None]:
    """The one place a caller mistake becomes a message on stderr and exit code 2 (`errors`:
    the exceptions that mean one; by default UsageError, ValueError and ValidationError)."""
    caught = errors or USAGE_ERRORS
    try:
        yield
    except caught as exc:
        # soft_wrap: a long path or value is never broken by a newline the terminal did not ask for
        err.print(error_text(str(exc)), highlight=False, soft_wrap=True)
        raise typer.Exit(2) from exc


def fail(message: str) -> typer.Exit:
    """Print `message` as an error and return the exit (code 2) to raise."""
    err.print(error_text(message), highlight=False, soft_wrap=True)
    return typer.Exit(2)


def runs_of(positional: Sequence[str] | None, option: Sequence[str] | None) -> list[str]:
    """The run ids given as arguments and with --run, in order, each once."""
    return list(dict.fromkeys([*(positional or []), *(option or [])]))


def open_store(store: Path | None) -> Store:
    """The store to use: `store`, else PARETOLENS_STORE, else the one in the user's data
    directory (`paretolens.settings.default_store`). `paretolens demo` loads the sample runs.
    A store written before Delta Lake is refused with the command that upgrades it."""
    if store is None:
        # Imported here: pydantic-settings costs a command about 40 ms, and a command given
        # --store (as CI's ingests are) reads no setting.
        from paretolens.settings import load_settings

        store = load_settings().store
    st = Store(store)
    try:
        st.version()
    except LegacyStoreError as exc:
        raise fail(str(exc)) from exc
    return st


def sample_runs() -> dict[str, Path]:
    """The bundled sample runs: run id -> directory (one directory per run under
    `data/samples`; its hidden `.run.json` holds the run's catalog fields)."""
    run_dirs = (
        sorted(p for p in SAMPLES_DIR.iterdir() if p.is_dir()) if SAMPLES_DIR.exists() else []
    )
    return {str(_run_meta(d).get(RunCol.RUN_ID, d.name)): d for d in run_dirs}


def _run_meta(run_dir: Path) -> dict[str, Any]:
    meta_path = run_dir / ".run.json"
    return json.loads(meta_path.read_text()) if meta_path.exists() else {}


def seed_master_configs(st: Store) -> None:
    """Give the store the bundled master configs it lacks (`<store>/master-configs/`: the
    pruned list's `master=` choices, under which a sample's `test-config` line is runnable)."""
    from views.master_configs import MASTERS_DIR

    masters = st.root / MASTERS_DIR
    for src in sorted(MASTER_CONFIGS_DIR.glob("*.yaml")) if MASTER_CONFIGS_DIR.is_dir() else []:
        if not (masters / src.name).exists():
            masters.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, masters / src.name)


def seed_samples(st: Store, skip: Collection[str] = ()) -> IngestReport:
    """Ingest the bundled sample runs into `st`, but those in `skip` (`sample_runs`), and give
    the store the bundled master configs (`seed_master_configs`)."""
    from ingest.pipeline import ingest_paths
    from ingest.report import IngestReport

    seed_master_configs(st)
    report = IngestReport()
    for run_id, run_dir in sample_runs().items():
        if run_id in skip:
            continue
        r = ingest_paths([run_dir], st, run_id=run_id, run_meta=_run_meta(run_dir))
        report.runs.extend(r.runs)
        report.accepted += r.accepted
        report.duplicates += r.duplicates
        report.rejected.extend(r.rejected)
        report.ignored.extend(r.ignored)
        report.notes.extend(r.notes)
    return report


def write(body: str | bytes, output: Path | None = None) -> None:
    """A rendered table to `output`, or to stdout (bytes as they are)."""
    if output is not None:
        if isinstance(body, bytes):
            output.write_bytes(body)
        else:
            output.write_text(body)
    elif isinstance(body, bytes):
        sys.stdout.flush()
        sys.stdout.buffer.write(body)
        sys.stdout.buffer.flush()
    else:
        sys.stdout.write(body)


def emit(table: Table, fmt: str, how: Rendering, output: Path | None = None) -> None:
    """Render `table` as `fmt` with the one registry and write it (`write`). The terminal table
    takes the terminal's width at call time, and its colours when stdout is a terminal."""
    from analysis.render import render

    if fmt == "table" and output is None:
        how = replace(how, color=sys.stdout.isatty())
    write(render(table, fmt, how), output)


def emit_frame(frame: pl.DataFrame, fmt: str, columns: Sequence[str], title: str) -> None:
    """An analysis command's result: the chosen `columns` in the terminal table and markdown
    (200 characters wide, floats to 2 decimals), every column in CSV and JSON (an array of rows);
    headers without units, as scripts read them."""
    from analysis.render import Rendering
    from analysis.tables import Table

    shown = columns if fmt in ("table", "markdown") else None
    how = Rendering(units=False, shape="rows", columns=shown, width=200)
    emit(Table("result", title, frame), fmt, how)

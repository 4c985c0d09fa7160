"""What every command group shares: the store, the shared options, the one error guard and the one
way a table reaches the screen or a file (`emit`, through the renderer registry
`analysis.render.RENDERERS` that the web exports use too)."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import polars as pl
import typer
from pydantic import ValidationError
from rich.console import Console
from rich.text import Text

from analysis.render import Rendering, render
from analysis.tables import Table
from ingest.contract.schema import RunCol
from ingest.pipeline import ingest_paths
from ingest.report import IngestReport
from ingest.store import Store
from ingest.untrusted.controls import escape_controls
from paretolens.settings import SAMPLES_DIR, load_settings

StoreOpt = Annotated[
    Path | None,
    typer.Option(
        "--store", help="store directory (default: PARETOLENS_STORE or the bundled store)"
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


def format_names(text_only: bool) -> tuple[str, ...]:
    """The `--format` values: the formats of `analysis.render.FORMATS` that write any table (text
    ones only where a command prints several tables one after another)."""
    from analysis.render import FORMATS

    return tuple(
        f.name for f in FORMATS.values() if f.render is not None and not (text_only and f.binary)
    )


def _format_check(text_only: bool) -> Any:
    # Checked against the registry when the command line is parsed, so a format declared there
    # is a choice here too.
    def check(value: str) -> str:
        names = format_names(text_only)
        if value not in names:
            raise typer.BadParameter(f"{value!r} is not one of {', '.join(names)}")
        return value

    return check


# The analysis commands' formats (text: some print two tables), and the store tables' (any).
FmtOpt = Annotated[
    str,
    typer.Option(
        "--format", callback=_format_check(True), help=", ".join(format_names(text_only=True))
    ),
]
FileFmtOpt = Annotated[
    str,
    typer.Option(
        "--format", callback=_format_check(False), help=", ".join(format_names(text_only=False))
    ),
]


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
    """The store to use, seeding the bundled default store with the samples on first use."""
    settings = load_settings()
    root = store or settings.store
    st = Store(root)
    if store is None and Path(root) == settings.store and not st.runs_path.exists():
        seed_samples(st)
    return st


def seed_samples(st: Store) -> IngestReport:
    """Ingest every bundled sample run (one directory per run under data/samples; its hidden
    `.run.json` holds the run's catalog fields)."""
    report = IngestReport()
    run_dirs = (
        sorted(p for p in SAMPLES_DIR.iterdir() if p.is_dir()) if SAMPLES_DIR.exists() else []
    )
    for run_dir in run_dirs:
        meta_path = run_dir / ".run.json"
        meta: dict[str, Any] = json.loads(meta_path.read_text()) if meta_path.exists() else {}
        r = ingest_paths([run_dir], st, run_id=meta.get(RunCol.RUN_ID, run_dir.name), run_meta=meta)
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
    if fmt == "table" and output is None:
        how = replace(how, color=sys.stdout.isatty())
    write(render(table, fmt, how), output)


def emit_frame(frame: pl.DataFrame, fmt: str, columns: Sequence[str], title: str) -> None:
    """An analysis command's result: the chosen `columns` in the terminal table and markdown
    (200 characters wide, floats to 2 decimals), every column in CSV and JSON (an array of rows);
    headers without units, as scripts read them."""
    shown = columns if fmt in ("table", "markdown") else None
    how = Rendering(units=False, shape="rows", columns=shown, width=200)
    emit(Table("result", title, frame), fmt, how)

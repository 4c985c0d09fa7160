"""Ingest commands: ingest, fetch (the store's tables are printed by `catalog_cmds`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ingest.defaults import check_defaults
from ingest.errors import SchemaError
from ingest.lake.errors import StoreWriteError
from ingest.pipeline import ingest_paths
from ingest.report import IngestReport
from ingest.run_ids import InvalidRunId
from ingest.sources.dump import DumpError, ingest_dump, is_dump_dir
from ingest.sources.run_meta import FIELDS as RUN_FIELDS
from paretolens.commands.common import (
    StoreOpt,
    console,
    err,
    fail,
    open_store,
)


def _print_report(report: IngestReport, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(report.to_json(), indent=2) + "\n")
        return
    console.print(f"runs: {', '.join(report.runs) or '-'}")
    console.print(
        f"accepted {report.accepted} points, {report.duplicates} duplicates skipped, "
        f"{len(report.rejected)} rejected, {len(report.ignored)} auxiliary files ignored"
    )
    if not (report.rejected or report.notes or report.ignored):
        return
    # Imported here: the analysis package (and rich's tables) cost an ingest's start-up about
    # 0.1-0.3 s, and most ingests print no table.
    from rich.table import Table as RichTable

    from analysis.render import keep_whole

    if report.rejected:
        t = RichTable("rejected file", "field", "reason", title="Rejected", show_lines=False)
        for r in report.rejected:
            t.add_row(r.path, r.field, r.reason)
        console.print(keep_whole(t))
    if report.notes:
        t = RichTable("file", "note", title="Notes from the readers")
        for n in report.notes:
            t.add_row(n.path, n.reason)
        console.print(keep_whole(t))
    if report.ignored:
        t = RichTable("ignored file", "why", title="Ignored (recognised, nothing to store)")
        for i in report.ignored:
            t.add_row(i.path, i.reason)
        console.print(keep_whole(t))


def _exit(report: IngestReport) -> None:
    raise typer.Exit(1 if report.rejected else 0)


def _settings(pairs: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """`--set KEY=VALUE` pairs, checked before anything is read (exit 2): (point columns as
    ingest defaults, run catalog fields such as title or branch, `ingest.sources.run_meta.FIELDS`)."""
    out: dict[str, Any] = {}
    run: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise fail(f"--set {pair}: expected COLUMN=VALUE, e.g. hw=h200")
        (run if key.strip() in RUN_FIELDS else out)[key.strip()] = value.strip()
    try:
        return check_defaults(out), run
    except SchemaError as exc:
        raise fail(f"--set {exc.field}: {exc.reason}") from exc


def ingest(
    paths: Annotated[list[Path], typer.Argument(help="files, directories or zips")],
    run_id: Annotated[
        str | None, typer.Option("--run-id", help="store everything under this run id")
    ] = None,
    store: StoreOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the summary as JSON")] = False,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="what no file says, as COLUMN=VALUE (repeatable), e.g. --set hw=h200 "
            "--set num_gpus=4 --set model_prefix=llama3-70b; a file's own value wins (with a "
            "warning). The same keys in a paretolens.yaml beside the files apply to them. "
            "Run catalog fields (title, branch, head_sha, created_at, status, ...) set the run's "
            "entry, over its .run.json",
        ),
    ] = None,
) -> None:
    """Ingest benchmark results into the store."""
    missing = [p for p in paths if not p.exists() and not p.is_symlink()]
    if missing:
        raise fail(f"no such file or directory: {', '.join(map(str, missing))}")
    if len(paths) == 1 and is_dump_dir(paths[0]):
        # An InferenceX app table dump: one run per workflow run (ingest/sources/dump.py).
        if run_id or set_:
            raise fail("a dump gives one run per workflow run; no --run-id/--set")
        try:
            report = ingest_dump(paths[0], open_store(store))
        except DumpError as exc:
            raise fail(str(exc)) from exc
        _print_report(report, as_json)
        _exit(report)
    defaults, run_meta = _settings(set_ or [])
    st = open_store(store)
    try:
        if as_json or not sys.stderr.isatty():
            report = ingest_paths(
                paths,
                st,
                run_id=run_id,
                run_meta=run_meta,
                defaults=defaults,
                defaults_from="--set",
            )
        else:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            with Progress(
                TextColumn("reading"),
                BarColumn(),
                MofNCompleteColumn(),
                console=err,
                transient=True,
            ) as prog:
                task = prog.add_task("units", total=None)
                report = ingest_paths(
                    paths,
                    st,
                    run_id=run_id,
                    run_meta=run_meta,
                    progress=lambda d, t: prog.update(task, completed=d, total=t),
                    defaults=defaults,
                    defaults_from="--set",
                )
    except (InvalidRunId, StoreWriteError) as exc:
        # A refused run id, or a store that cannot be written (read-only, full): nothing stored.
        raise fail(str(exc)) from exc
    _print_report(report, as_json)
    _exit(report)


def fetch(
    run: Annotated[str, typer.Argument(help="GitHub Actions run id")],
    repo: Annotated[str | None, typer.Option("--repo")] = None,
    api_url: Annotated[str | None, typer.Option("--api-url")] = None,
    store: StoreOpt = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="what no file says, as COLUMN=VALUE (repeatable); run keys such as "
            "title=... or branch=... override the run's GitHub metadata",
        ),
    ] = None,
) -> None:
    """Fetch a GitHub Actions run's artifacts and ingest them under its run id."""
    from ingest.sources.github import GitHubClient, GitHubError, fetch_run

    # Run keys (title, branch, ...) win over the run's GitHub metadata, as with `ingest --set`.
    from paretolens.settings import load_settings

    defaults, run_fields = _settings(set_ or [])
    settings = load_settings()
    token = settings.github_token.get_secret_value() if settings.github_token else None
    client = GitHubClient(api_url or settings.github_api_url, token, repo or settings.github_repo)
    try:
        report = fetch_run(
            run,
            open_store(store),
            client,
            progress=None if as_json else (lambda msg: err.print(msg)),
            defaults={**defaults, **run_fields},
        )
    except GitHubError as exc:
        raise fail(str(exc)) from exc
    _print_report(report, as_json)
    _exit(report)


def register(app: typer.Typer) -> None:
    """Register the ingest commands."""
    app.command()(ingest)
    app.command()(fetch)

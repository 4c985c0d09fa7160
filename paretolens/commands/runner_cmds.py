"""Runner commands: plan, launch, jobs, job, cancel, resume (docs/runner.md).

Exit codes: 0 when every point succeeded (or the command did what it was asked), 1 when a
followed job ended with failed, timed-out or cancelled points, 2 on a usage error (a bad plan,
an unknown job, a refused launch).
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from analysis.render import keep_whole
from ingest.store import Store
from paretolens.commands.common import (
    StoreOpt,
    console,
    err,
    error_text,
    fail,
    guard,
    open_store,
)
from paretolens.settings import load_settings
from runner import service
from runner.errors import RunnerError
from runner.jobs import JobState, PointState
from runner.plan import Plan
from runner.service import Caller, JobStatus, LogStream
from runner.sources import load_plan, read_document

JsonOpt = Annotated[bool, typer.Option("--json", help="print JSON")]
_STATE_STYLE = {
    PointState.SUCCEEDED: "green",
    PointState.FAILED: "red",
    PointState.TIMED_OUT: "magenta",
    PointState.CANCELLED: "yellow",
    PointState.RUNNING: "cyan",
}


class Backend(StrEnum):
    local = "local"
    slurm = "slurm"
    github = "github"


class PlanFmt(StrEnum):
    table = "table"
    yaml = "yaml"
    json = "json"


def _guard() -> contextlib.AbstractContextManager[None]:
    """Runner errors become messages and exit code 2 (`common.guard`)."""
    return guard(RunnerError, KeyError)


def _load(
    source: Path, options: Path | None, config_key: list[str] | None, name: str | None
) -> Plan:
    opts: Any = read_document(options) if options else None
    if opts is not None and not isinstance(opts, dict):
        raise fail(f"{options}: expected a mapping of plan fields")
    return load_plan(source, options=opts, config_keys=config_key or (), name=name)


SourceArg = Annotated[
    Path,
    typer.Argument(
        help="a plan, an InferenceX search-space YAML, or `paretolens prune --format json` output"
    ),
]
OptionsOpt = Annotated[
    Path | None,
    typer.Option(
        "--options", help="YAML/JSON of plan fields to add: commands, timeout_s, slurm, github, ..."
    ),
]
KeyOpt = Annotated[
    list[str] | None,
    typer.Option("--config-key", help="InferenceX config key or glob (repeatable)"),
]
NameOpt = Annotated[str | None, typer.Option("--name", help="plan name")]


def plan(
    source: SourceArg,
    options: OptionsOpt = None,
    config_key: KeyOpt = None,
    name: NameOpt = None,
    fmt: Annotated[PlanFmt, typer.Option("--format")] = PlanFmt.table,
) -> None:
    """Show the plan a source makes: its points with their stable ids (or the plan as YAML/JSON)."""
    with _guard():
        p = _load(source, options, config_key, name)
    if fmt is PlanFmt.json:
        sys.stdout.write(p.model_dump_json(indent=2, exclude_defaults=True) + "\n")
    elif fmt is PlanFmt.yaml:
        sys.stdout.write(
            yaml.safe_dump(p.model_dump(mode="json", exclude_defaults=True), sort_keys=False)
        )
    else:
        t = Table(
            "point",
            "arm",
            "conc",
            title=f"plan {p.name}: {len(p.arms)} arms, {len(p.points())} points",
        )
        for pt in p.points():
            t.add_row(pt.id, pt.arm.describe(), str(pt.conc))
        console.print(keep_whole(t))


def launch(
    source: SourceArg,
    backend: Annotated[
        Backend, typer.Option("--backend", help="where to run the points")
    ] = Backend.local,
    options: OptionsOpt = None,
    config_key: KeyOpt = None,
    name: NameOpt = None,
    wait: Annotated[
        bool,
        typer.Option("--wait/--no-wait", help="follow the job with progress bars until it ends"),
    ] = True,
    poll: Annotated[
        float | None, typer.Option("--poll", help="seconds between the worker's status polls")
    ] = None,
    store: StoreOpt = None,
) -> None:
    """Launch a plan on a backend; a detached worker runs it, so closing this terminal is safe."""
    settings = load_settings()
    st = open_store(store)
    with _guard():
        p = _load(source, options, config_key, name)
        job_id = service.launch(p, backend.value, st, settings, caller=Caller.CLI, poll_s=poll)
    err.print(f"job {job_id}: {len(p.points())} points of plan {p.name} on {backend.value}")
    if not wait:
        sys.stdout.write(job_id + "\n")
        return
    _follow(st, job_id)


def _summary(status: JobStatus) -> str:
    c = status.counts()
    parts = [
        f"{n} {s.value.replace('_', ' ')}" for s, n in c.items() if n and s != PointState.PENDING
    ]
    return ", ".join(parts) or "pending"


def _follow(st: Store, job_id: str) -> None:
    status = service.get_job(st, job_id)
    try:
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[summary]}"),
            console=err,
            transient=False,
        ) as prog:
            task = prog.add_task(job_id, total=status.total, summary="")
            while not (status.state.terminal or status.state == JobState.INTERRUPTED):
                prog.update(task, completed=status.done, summary=_summary(status))
                time.sleep(0.5)
                status = service.get_job(st, job_id)
            prog.update(task, completed=status.done, summary=_summary(status))
    except KeyboardInterrupt:
        err.print(f"stopped following; the job goes on. `paretolens job {job_id}` shows it.")
        raise typer.Exit(0) from None
    _print_job(status)
    raise typer.Exit(0 if status.state == JobState.SUCCEEDED else 1)


def _job_json(status: JobStatus) -> dict[str, Any]:
    doc: dict[str, Any] = status.record.model_dump(mode="json", exclude={"plan"})
    doc.update(
        state=status.state.value,
        worker_alive=status.worker_alive,
        plan_name=status.record.plan.name,
    )
    for p, rec in zip(doc["points"], status.record.points, strict=True):
        p["elapsed_s"] = rec.elapsed_s()
    return doc


def jobs(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """List the jobs of the store, newest first."""
    all_jobs = service.list_jobs(open_store(store))
    if as_json:
        sys.stdout.write(json.dumps([_job_json(s) for s in all_jobs], indent=2) + "\n")
        return
    t = Table("job", "plan", "backend", "state", "points", "progress", "created", "run")
    for s in all_jobs:
        r = s.record
        t.add_row(
            r.id,
            r.plan.name,
            r.backend,
            s.state.value,
            f"{s.done}/{s.total}",
            _summary(s),
            f"{r.created_at:%Y-%m-%d %H:%M}",
            ", ".join(r.run_ids) or "-",
        )
    console.print(keep_whole(t))


def _print_job(status: JobStatus) -> None:
    r = status.record
    console.print(
        f"job {r.id}: plan {r.plan.name} on {r.backend}, {status.state.value}"
        + (" (worker alive)" if status.worker_alive else "")
        + f"; run {', '.join(r.run_ids) or '-'}"
    )
    if r.error:
        console.print(error_text(r.error))
    t = Table("point", "arm | conc", "state", "elapsed", "exit", "rows", "reason", "logs")
    job_dir = Path("jobs") / r.id
    for p in r.points:
        elapsed = p.elapsed_s()
        style = _STATE_STYLE.get(p.state, "")
        t.add_row(
            p.point_id,
            p.label,
            Text(p.state.value, style=style),
            "" if elapsed is None else f"{elapsed:.1f} s",
            "" if p.exit_code is None else str(p.exit_code),
            (f"{p.rows_accepted}" + (f" ({p.rows_rejected} rejected)" if p.rows_rejected else ""))
            if p.ingested
            else "",
            p.reason,
            str(job_dir / p.dir),
        )
    console.print(keep_whole(t))
    for note in r.notes:
        console.print(f"note: {note}", highlight=False)


def job(
    job_id: Annotated[str, typer.Argument(help="job id (see `paretolens jobs`)")],
    log: Annotated[str | None, typer.Option("--log", help="print this point's log tail")] = None,
    stream: Annotated[
        str, typer.Option("--stream", help="stdout, stderr, serve_stdout, serve_stderr or executor")
    ] = "stdout",
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show one job: per-point state, elapsed time, exit code, rows ingested, reason, log dir."""
    st = open_store(store)
    with _guard():
        status = service.get_job(st, job_id)
        if log is not None:
            if stream not in service.LOG_FILES:
                raise KeyError(
                    f"unknown --stream {stream!r}; choose one of {', '.join(service.LOG_FILES)}"
                )
            status.record.point(log)
            stream_name: LogStream = stream
            sys.stdout.write(service.log_tail(st, job_id, log, stream_name))
            return
    if as_json:
        sys.stdout.write(json.dumps(_job_json(status), indent=2) + "\n")
        return
    _print_job(status)


def cancel(job_id: Annotated[str, typer.Argument(help="job id")], store: StoreOpt = None) -> None:
    """Cancel a job: stop every process, Slurm job or workflow run it started."""
    with _guard():
        status = service.cancel_job(open_store(store), job_id, load_settings(), caller=Caller.CLI)
    err.print(f"job {job_id}: cancel requested ({status.state.value}; {_summary(status)})")


def resume(
    job_id: Annotated[
        str | None, typer.Argument(help="job id (default: every interrupted job)")
    ] = None,
    store: StoreOpt = None,
) -> None:
    """Start a worker for a job whose worker died (after a crash or a reboot)."""
    st = open_store(store)
    with _guard():
        if job_id is None:
            ids = service.resume_interrupted(st, load_settings(), caller=Caller.CLI)
            err.print(f"resumed {len(ids)} job(s): {', '.join(ids) or '-'}")
            return
        started = service.resume_job(st, job_id, load_settings(), caller=Caller.CLI)
    err.print(
        f"job {job_id}: {'resumed' if started else 'nothing to resume (finished, or a worker drives it)'}"
    )


def register(app: typer.Typer) -> None:
    """Register the runner commands."""
    app.command("plan")(plan)
    app.command("launch")(launch)
    app.command("jobs")(jobs)
    app.command("job")(job)
    app.command("cancel")(cancel)
    app.command("resume")(resume)

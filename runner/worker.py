"""The worker: drives one job to its end (submit, poll, ingest as points finish, cancel).

One worker per job, enforced by the job's worker lock. It runs detached from whoever launched
it (``python -m runner.worker --store DIR JOB_ID``), so neither a closed terminal nor a restarted
web server stops a sweep. A worker started on a job another worker left behind resumes it: the
backends work from the record and the files, points that finished are kept, running ones are
tracked, pending ones run.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ingest.contract.schema import RunCol
from ingest.errors import IngestError
from ingest.pipeline import ingest_paths
from ingest.store import Store
from runner.backends.base import Backend, BackendContext, PointUpdate
from runner.backends.github import GithubBackend
from runner.backends.local import LocalBackend
from runner.backends.slurm import SlurmBackend
from runner.environment import point_identity
from runner.errors import BackendError, JobBusy
from runner.jobs import JobRecord, JobState, JobTable, PointState, now
from runner.plan import BackendName, Point

log = logging.getLogger(__name__)

BACKENDS: Mapping[BackendName, type[Backend]] = MappingProxyType(
    {"local": LocalBackend, "slurm": SlurmBackend, "github": GithubBackend}
)


def make_backend(name: BackendName, ctx: BackendContext) -> Backend:
    """The backend of that name."""
    return BACKENDS[name](ctx)


def apply_updates(table: JobTable, job_id: str, updates: Mapping[str, PointUpdate]) -> JobRecord:
    """Write backend updates into the job record (a terminal point never changes again)."""
    if not updates:
        return table.get(job_id)

    def change(r: JobRecord) -> None:
        for pid, u in updates.items():
            p = r.point(pid)
            if p.state.terminal:
                continue
            if u.state in (PointState.PENDING, PointState.QUEUED) and p.state == PointState.RUNNING:
                p.started_at = p.finished_at = p.exit_code = None
            p.state = u.state
            if u.reason or u.state != PointState.RUNNING:
                p.reason = u.reason
            p.exit_code = u.exit_code if u.exit_code is not None else p.exit_code
            p.submitted_at = u.submitted_at or p.submitted_at
            p.started_at = u.started_at or p.started_at
            p.finished_at = u.finished_at or p.finished_at
            if u.state.terminal and p.finished_at is None:
                p.finished_at = now()
            if u.result_files:
                p.result_files = list(u.result_files)
            if u.handle:
                p.handle = {**p.handle, **u.handle}
            if u.new_attempt:
                p.attempt += 1

    return table.update(job_id, change)


def drive(
    store: Store,
    job_id: str,
    *,
    github_token: str | None = None,
    poll_s: float | None = None,
    on_locked: Callable[[], None] | None = None,
) -> JobRecord:
    """Drive a job until every point is final; returns the final record.

    `on_locked` is called once this process holds the job's worker lock.

    Raises:
        JobBusy: when another live worker drives the job.
        JobNotFound: when there is no such job.
    """
    table = JobTable(store)
    with table.worker_lock(job_id):
        if on_locked is not None:
            on_locked()
        job = table.update(job_id, _started)
        if job.state.terminal:
            return job
        backend = make_backend(job.backend, BackendContext(store, table, github_token))
        interval = poll_s if poll_s is not None else backend.interval(job)
        try:
            _loop(table, backend, job, interval)
        except BackendError as exc:
            log.error("job %s: %s", job_id, exc)
            _fail(table, job_id, str(exc))
        finally:
            backend.close()
        job = _ingest_finished(table, backend, table.get(job_id))
        return _finish(table, job_id)


def _loop(table: JobTable, backend: Backend, job: JobRecord, interval: float) -> None:
    if not job.cancel_requested:
        job = apply_updates(table, job.id, backend.submit(job))
    cancel_sent: float | None = None
    while True:
        job = table.get(job.id)
        if job.cancel_requested and cancel_sent is None:
            job = apply_updates(table, job.id, backend.cancel(job))
            cancel_sent = time.monotonic()
        job = apply_updates(table, job.id, backend.status(job))
        if not job.cancel_requested and any(p.state == PointState.PENDING for p in job.points):
            job = apply_updates(table, job.id, backend.submit(job))
        job = _ingest_finished(table, backend, job)
        if all(p.state.terminal for p in job.points):
            return
        if cancel_sent is not None and time.monotonic() - cancel_sent > backend.cancel_wait_s(job):
            wait = backend.cancel_wait_s(job)
            reason = f"cancel requested; no final state reported within {wait:g} s"
            stragglers = {
                p.point_id: PointUpdate(PointState.CANCELLED, reason=reason)
                for p in job.points
                if not p.state.terminal
            }
            apply_updates(table, job.id, stragglers)
            return
        time.sleep(interval)


def _ingest_finished(table: JobTable, backend: Backend, job: JobRecord) -> JobRecord:
    """Ingest the results of points that finished and are not ingested yet."""
    wanted = backend.ingest_states()
    planned: dict[str, Point] | None = None
    for p in job.points:
        if p.ingested or p.state not in wanted:
            continue
        counts: dict[str, Any] = {"rows_accepted": 0, "rows_duplicate": 0, "rows_rejected": 0}
        note = ""
        try:
            got = backend.collect(job, p)
            report = got.report
            clashes: list[str] = []
            if report is None and got.paths:
                if planned is None:
                    planned = {pt.id: pt for pt in job.plan.points()}
                # The plan's identity of the point fills what its result files do not say, so the
                # launched point keeps the arm id of the point it was planned (pruned) from.
                point = planned.get(p.point_id)
                report = ingest_paths(
                    list(got.paths),
                    table.store,
                    run_id=got.run_id,
                    run_meta=run_meta(job, in_progress=True),
                    defaults=point_identity(point) if point is not None else None,
                    defaults_from=PLAN_DEFAULTS,
                )
                clashes = [n.reason for n in report.notes if n.reason.endswith(_PLAN_CLASH)]
            if report is not None:
                # A worker killed after the store write and before the record update ingests the
                # point again on resume: its rows are then duplicates, but they are the point's
                # rows in the store all the same.
                counts = {
                    "rows_accepted": report.accepted + report.duplicates,
                    "rows_duplicate": report.duplicates,
                    "rows_rejected": len(report.rejected),
                }
            note = "; ".join(x for x in (got.note, *dict.fromkeys(clashes)) if x)
        except (IngestError, BackendError, OSError) as exc:
            note = f"ingest failed: {exc}"
            log.error("job %s point %s: %s", job.id, p.point_id, note)

        def mark(
            r: JobRecord, pid: str = p.point_id, counts: dict[str, Any] = counts, note: str = note
        ) -> None:
            rec = r.point(pid)
            rec.ingested = True
            rec.rows_accepted, rec.rows_duplicate, rec.rows_rejected = (
                counts["rows_accepted"],
                counts["rows_duplicate"],
                counts["rows_rejected"],
            )
            if note:
                r.notes = [*r.notes, f"{pid}: {note}"]

        job = table.update(job.id, mark)
    return job


# How ingest names the plan in a warning when a result file contradicts it.
PLAN_DEFAULTS = "the job's plan"
_PLAN_CLASH = f"from {PLAN_DEFAULTS}; the file's value is kept"


def run_meta(job: JobRecord, *, in_progress: bool) -> dict[str, Any]:
    """Catalog fields of the job's run (local and slurm jobs)."""
    final = job.final_state()
    return {
        RunCol.SOURCE: "runner",
        RunCol.TITLE: f"{job.plan.name} ({job.backend} job {job.id})",
        RunCol.CREATED_AT: job.created_at.isoformat(),
        RunCol.STATUS: "in_progress" if in_progress else "completed",
        RunCol.CONCLUSION: None
        if in_progress
        else {"succeeded": "success", "cancelled": "cancelled"}.get(final, "failure"),
    }


def _started(r: JobRecord) -> None:
    if not r.state.terminal:
        r.state = JobState.RUNNING
        r.started_at = r.started_at or now()


def _fail(table: JobTable, job_id: str, error: str) -> None:
    def change(r: JobRecord) -> None:
        r.error = error
        for p in r.points:
            if not p.state.terminal:
                p.state, p.reason, p.finished_at = PointState.FAILED, f"job failed: {error}", now()

    table.update(job_id, change)


def _finish(table: JobTable, job_id: str) -> JobRecord:
    """Decide the job's final state once, under its record lock, and write the run's catalog
    entry from that same decision before the record: a cancel (which flags the job under the
    same lock) comes wholly before or wholly after, so the record and the catalog agree."""

    def change(r: JobRecord) -> None:
        r.state = r.final_state()
        r.finished_at = now()
        # The catalog first: once the record says final, readers may expect the run to say so.
        if r.backend != "github" and r.run_id in table.store.run_ids():
            with table.store.lock():
                table.store.upsert_run({RunCol.RUN_ID: r.run_id, **run_meta(r, in_progress=False)})

    return table.update(job_id, change)


# Exit code of a --daemon launcher whose worker found the job driven by another worker.
EXIT_BUSY = 3


def main(argv: list[str] | None = None) -> int:
    """``python -m runner.worker --store DIR JOB_ID``: drive a job; the GitHub token comes from $GITHUB_TOKEN.

    With ``--daemon`` the process forks; the parent exits once the child holds the job's worker
    lock (0) or has given up (EXIT_BUSY), so the launcher knows, and nobody has to reap the child.
    """
    parser = argparse.ArgumentParser(prog="python -m runner.worker")
    parser.add_argument("--store", required=True, type=Path)
    parser.add_argument("--poll", type=float, default=None, help="seconds between status polls")
    parser.add_argument("--daemon", action="store_true", help="fork; return once the worker runs")
    parser.add_argument("job_id")
    args = parser.parse_args(argv)
    ready: int | None = None
    if args.daemon:
        read_end, ready = os.pipe()
        if os.fork() > 0:
            os.close(ready)
            # b"1" once the child holds the lock; EOF (b"") when it exited before that.
            os._exit(0 if os.read(read_end, 1) == b"1" else EXIT_BUSY)
        os.close(read_end)

    def locked() -> None:
        if ready is not None:
            os.write(ready, b"1")
            os.close(ready)

    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        job = drive(
            Store(args.store),
            args.job_id,
            github_token=os.environ.get("GITHUB_TOKEN") or None,
            poll_s=args.poll,
            on_locked=locked,
        )
    except JobBusy as exc:
        log.info("%s", exc)
        return EXIT_BUSY
    log.info("job %s finished: %s", job.id, job.state)
    return 0


if __name__ == "__main__":
    sys.exit(main())

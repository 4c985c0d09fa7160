"""Fetching a GitHub Actions run that is not in the store, in the background, with progress.

The run page of a missing run starts a fetch (when `auth.fetch_policy` allows it) and polls its
progress lines; when the fetch is done the page reloads and shows the run.

A fetch's progress is a JSON file in the server's state directory, written whole on each line, and
the thread that fetches holds a lock file beside it for as long as it runs. So every server process
of a deployment (`paretolens serve --workers N`) answers the poll of a fetch another one started,
starts no second fetch of a run that one is fetching, and reports a fetch whose process died as
failed instead of running forever.
"""

from __future__ import annotations

import contextlib
import fcntl
import shutil
import tempfile
import threading
import time
import weakref
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

from dashboard.settings import AppSettings
from ingest.sources.github import GitHubClient, GitHubError, fetch_run
from ingest.store import Store
from runner.locks import hold, is_held, read_json, write_json

State = Literal["running", "done", "failed"]

DIED = "the server process that was fetching it stopped; start the fetch again"


@dataclass
class FetchJob:
    """One fetch: its progress lines and outcome (`started`: seconds since the epoch)."""

    run_id: str
    defaults: dict[str, Any] = field(default_factory=dict)
    state: State = "running"
    lines: list[str] = field(default_factory=list)
    error: str = ""
    started: float = field(default_factory=time.time)

    def snapshot(self) -> dict[str, object]:
        """A JSON-ready copy."""
        return {
            "run_id": self.run_id,
            "state": self.state,
            "lines": list(self.lines),
            "error": self.error,
            "elapsed_s": round(max(0.0, time.time() - self.started), 1),
        }


class Fetcher:
    """Background fetches of one deployment (one at a time per run id, across its processes).

    `state_dir` is the directory the server processes share; None keeps the fetches in a
    directory of this process's own (made on first use).
    """

    def __init__(self, store: Store, settings: AppSettings, state_dir: Path | None = None) -> None:
        self.store = store
        self.settings = settings
        self._dir = state_dir / "fetches" if state_dir is not None else None
        self._lock = threading.Lock()

    @property
    def dir(self) -> Path:
        """Where the fetches' progress files and locks are."""
        with self._lock:
            if self._dir is None:
                self._dir = Path(tempfile.mkdtemp(prefix="paretolens-fetches-"))
                # this process's own: removed with this fetcher (or at exit)
                weakref.finalize(self, shutil.rmtree, self._dir, ignore_errors=True)
            self._dir.mkdir(parents=True, exist_ok=True)
            return self._dir

    def start(self, run_id: str, defaults: dict[str, Any] | None = None) -> FetchJob:
        """Start fetching `run_id` (a running fetch of it is returned as is); `defaults` are
        what no file says (validated column -> value, as `paretolens fetch --set`).

        Raises:
            ValueError: when the id is not a GitHub Actions run id (digits).
        """
        if not run_id.isdigit():
            raise ValueError(f"{run_id!r} is not a GitHub Actions run id (expected digits)")
        with hold(self.dir / "start.lock"):
            running = self.status(run_id)
            if running is not None and running.state == "running":
                return running
            # Taken here, before another process may look, and held by the fetching thread.
            lock = open(self._lock_path(run_id), "a+")  # noqa: SIM115
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            job = FetchJob(run_id, dict(defaults or {}))
            self._save(job)
        threading.Thread(
            target=self._run, args=(job, lock), name=f"fetch-{run_id}", daemon=True
        ).start()
        return job

    def status(self, run_id: str) -> FetchJob | None:
        """The latest fetch of a run, if any (by whichever process it ran in)."""
        doc = read_json(self._status_path(run_id)) if run_id.isdigit() else None
        if not isinstance(doc, dict):
            return None
        job = FetchJob(**doc)
        if job.state == "running" and not is_held(self._lock_path(run_id)):
            # Read again: the fetch may have ended between the two reads.
            doc = read_json(self._status_path(run_id))
            job = FetchJob(**doc)
            if job.state == "running":
                job.state, job.error = "failed", DIED
        return job

    def _status_path(self, run_id: str) -> Path:
        return self.dir / f"{run_id}.json"

    def _lock_path(self, run_id: str) -> Path:
        return self.dir / f"{run_id}.lock"

    def _save(self, job: FetchJob) -> None:
        write_json(self._status_path(job.run_id), asdict(job))

    def _run(self, job: FetchJob, lock: IO[str]) -> None:
        s = self.settings
        token = s.github_token.get_secret_value() if s.github_token else None
        client = GitHubClient(s.github_api_url, token, s.github_repo)

        def progress(line: str) -> None:
            job.lines.append(line)
            self._save(job)

        try:
            report = fetch_run(
                job.run_id,
                self.store,
                client,
                progress=progress,
                defaults=job.defaults or None,
            )
            job.lines.append(
                f"stored {report.accepted} points, {len(report.rejected)} rejected files or rows"
            )
            job.state = "done"
        except GitHubError as exc:
            job.error = str(exc)
            job.state = "failed"
        except OSError as exc:
            job.error = f"{type(exc).__name__}: {exc}"
            job.state = "failed"
        except BaseException as exc:
            # A bug, not a fetch outcome: the page says so, and the thread's traceback is logged.
            job.error = f"internal error: {type(exc).__name__}"
            job.state = "failed"
            raise
        finally:
            client.close()
            with contextlib.suppress(OSError):
                self._save(job)
            lock.close()

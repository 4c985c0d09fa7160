"""Fetching a GitHub Actions run that is not in the store, in the background, with progress.

The run page of a missing run starts a fetch (when `auth.fetch_policy` allows it) and polls its
progress lines; when the fetch is done the page reloads and shows the run.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from dashboard.settings import AppSettings
from ingest.sources.github import GitHubClient, GitHubError, fetch_run
from ingest.store import Store

State = Literal["running", "done", "failed"]


@dataclass
class FetchJob:
    """One fetch: its progress lines and outcome."""

    run_id: str
    defaults: dict[str, Any] = field(default_factory=dict)
    state: State = "running"
    lines: list[str] = field(default_factory=list)
    error: str = ""
    started: float = field(default_factory=time.monotonic)

    def snapshot(self) -> dict[str, object]:
        """A JSON-ready copy."""
        return {
            "run_id": self.run_id,
            "state": self.state,
            "lines": list(self.lines),
            "error": self.error,
            "elapsed_s": round(time.monotonic() - self.started, 1),
        }


class Fetcher:
    """Background fetches of one app (one at a time per run id)."""

    def __init__(self, store: Store, settings: AppSettings) -> None:
        self.store = store
        self.settings = settings
        self._jobs: dict[str, FetchJob] = {}
        self._lock = threading.Lock()

    def start(self, run_id: str, defaults: dict[str, Any] | None = None) -> FetchJob:
        """Start fetching `run_id` (a running fetch of it is returned as is); `defaults` are
        what no file says (validated column -> value, as `paretolens fetch --set`).

        Raises:
            ValueError: when the id is not a GitHub Actions run id (digits).
        """
        if not run_id.isdigit():
            raise ValueError(f"{run_id!r} is not a GitHub Actions run id (expected digits)")
        with self._lock:
            job = self._jobs.get(run_id)
            if job is not None and job.state == "running":
                return job
            job = self._jobs[run_id] = FetchJob(run_id, dict(defaults or {}))
        threading.Thread(target=self._run, args=(job,), name=f"fetch-{run_id}", daemon=True).start()
        return job

    def status(self, run_id: str) -> FetchJob | None:
        """The latest fetch of a run, if any."""
        with self._lock:
            return self._jobs.get(run_id)

    def _run(self, job: FetchJob) -> None:
        s = self.settings
        token = s.github_token.get_secret_value() if s.github_token else None
        client = GitHubClient(s.github_api_url, token, s.github_repo)
        try:
            report = fetch_run(
                job.run_id,
                self.store,
                client,
                progress=job.lines.append,
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
        finally:
            client.close()

"""The github backend: dispatch InferenceX's e2e workflow, find its run, poll it, ingest it.

Points are grouped into dispatches: the arms of one config key share one ``--conc`` list (the
union of their concurrencies; InferenceX's ``test-config --conc`` filter applies to every entry of
a key), and keys with the same list share one dispatch. Each dispatch carries a marker in its
``test-name`` input; the workflow's run-name (``e2e Test - <test-name>``) shows it, which is how
the run the dispatch started is found among the workflow's runs. A run's points share its state.
When a run completes, ingest's `fetch_run` downloads and ingests its artifacts under the GitHub
run id (the id InferenceX's own links use); the job lists those ids in `run_ids`.

The dispatch intent is recorded before the POST, so a worker that dies mid-dispatch looks for the
run on restart instead of dispatching twice.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any, ClassVar

from ingest.sources.github import GitHubClient, GitHubError, fetch_run
from runner.backends.base import Backend, Collected, PointUpdate
from runner.errors import BackendError
from runner.jobs import JobRecord, PointRecord, PointState, now
from runner.options import GithubOptions

log = logging.getLogger(__name__)

DEFAULT_API_URL = "https://api.github.com"
DEFAULT_REPO = "SemiAnalysisAI/InferenceX"
_QUEUED = {"queued", "waiting", "requested", "pending"}
_CONCLUSION = {
    "success": PointState.SUCCEEDED,
    "cancelled": PointState.CANCELLED,
    "timed_out": PointState.TIMED_OUT,
}
_WORDS = {
    "cancelled": "was cancelled on GitHub Actions: conclusion",
    "timed_out": "hit its time limit: conclusion",
}


def dispatch_groups(job: JobRecord) -> list[dict[str, Any]]:
    """The dispatches a job needs: config keys, conc list, command line and point ids."""
    opts = job.plan.github or GithubOptions()
    concs_by_key: dict[str, set[int]] = {}
    points_by_key: dict[str, list[str]] = {}
    for p in job.plan.points():
        key = p.arm.config_key
        assert key is not None, "plan.require('github') checks this before launch"
        concs_by_key.setdefault(key, set()).add(p.conc)
        points_by_key.setdefault(key, []).append(p.id)
    by_concs: dict[tuple[int, ...], list[str]] = {}
    for key, key_concs in concs_by_key.items():
        by_concs.setdefault(tuple(sorted(key_concs)), []).append(key)
    groups = []
    for i, (concs, keys) in enumerate(by_concs.items()):
        argv = ["test-config", "--config-keys", *keys, "--conc", *map(str, concs)]
        argv += [
            "--config-files",
            *opts.config_files,
            "--runner-config",
            opts.runner_config,
            *opts.extra_args,
        ]
        groups.append(
            {
                "index": i,
                "config_keys": keys,
                "concs": list(concs),
                "command": " ".join(argv),
                "marker": f"pl-{job.id}-{i}",
                "point_ids": [pid for k in keys for pid in points_by_key[k]],
                "state": "planned",
                "run_id": None,
                "collected": False,
            }
        )
    return groups


class GithubBackend(Backend):
    """Points as GitHub Actions workflow runs."""

    name = "github"
    poll_interval_s: ClassVar[float] = 30.0

    def interval(self, job: JobRecord) -> float:
        return (job.plan.github or GithubOptions()).poll_interval_s

    def _opts(self, job: JobRecord) -> GithubOptions:
        return job.plan.github or GithubOptions()

    def _client(self, job: JobRecord) -> GitHubClient:
        gh = job.backend_state.get("github", {})
        return GitHubClient(
            gh.get("api_url", DEFAULT_API_URL), self.ctx.github_token, gh.get("repo", DEFAULT_REPO)
        )

    def _save(
        self, job: JobRecord, dispatches: list[dict[str, Any]], run_id: str | None = None
    ) -> None:
        def change(r: JobRecord) -> None:
            r.backend_state = {
                **r.backend_state,
                "github": {**r.backend_state.get("github", {}), "dispatches": dispatches},
            }
            if run_id is not None and run_id not in r.run_ids:
                r.run_ids = [*r.run_ids, run_id]

        fresh = self.ctx.table.update(job.id, change)
        job.backend_state = fresh.backend_state
        job.run_ids = fresh.run_ids

    def _dispatches(self, job: JobRecord) -> list[dict[str, Any]]:
        return [dict(d) for d in job.backend_state.get("github", {}).get("dispatches", [])]

    # ---- submit --------------------------------------------------------------------------------
    def submit(self, job: JobRecord) -> dict[str, PointUpdate]:
        if job.cancel_requested:
            return {}
        dispatches = self._dispatches(job) or dispatch_groups(job)
        opts = self._opts(job)
        client = self._client(job)
        try:
            for d in dispatches:
                if d["state"] == "dispatching" and self._find(client, job, d):
                    self._save(job, dispatches, d["run_id"])
                if d["state"] not in ("planned", "dispatching"):
                    continue
                d["state"], d["dispatched_at"] = "dispatching", now().isoformat()
                self._save(job, dispatches)
                run_id = self._dispatch(client, job, opts, d)
                d["state"] = "dispatched"
                if run_id is not None:
                    d["state"], d["run_id"] = "found", run_id
                self._save(job, dispatches, run_id)
        except GitHubError as exc:
            raise BackendError(f"workflow dispatch of {opts.workflow} failed: {exc}") from exc
        finally:
            client.close()
        return {
            pid: PointUpdate(PointState.QUEUED, submitted_at=now())
            for d in dispatches
            for pid in d["point_ids"]
        }

    def _dispatch(
        self, client: GitHubClient, job: JobRecord, opts: GithubOptions, d: dict[str, Any]
    ) -> str | None:
        inputs = {
            "generate-cli-command": d["command"],
            "test-name": f"{opts.test_name or job.plan.name} [{d['marker']}]",
        }
        if opts.checkout_ref:
            inputs["ref"] = opts.checkout_ref
        resp = client.post(
            f"/repos/{client.repo}/actions/workflows/{opts.workflow}/dispatches",
            {"ref": opts.ref, "inputs": inputs},
        )
        # Newer GitHub answers 200 with the run id; the classic answer is 204 and no body.
        if resp.status_code == 200 and resp.content:
            run_id = resp.json().get("workflow_run_id")
            return None if run_id is None else str(run_id)
        return None

    def _find(self, client: GitHubClient, job: JobRecord, d: dict[str, Any]) -> bool:
        """Look for the run a dispatch started (its title carries the marker)."""
        since = datetime.fromisoformat(d["dispatched_at"]) - timedelta(minutes=2)
        opts = self._opts(job)
        data = client.get_json(
            f"/repos/{client.repo}/actions/workflows/{opts.workflow}/runs",
            event="workflow_dispatch",
            created=f">={since:%Y-%m-%dT%H:%M:%SZ}",
            per_page=100,
        )
        for run in data.get("workflow_runs", []):
            if d["marker"] in str(run.get("display_title", "")):
                d["state"], d["run_id"], d["html_url"] = (
                    "found",
                    str(run["id"]),
                    run.get("html_url"),
                )
                return True
        return False

    # ---- status --------------------------------------------------------------------------------
    def status(self, job: JobRecord) -> dict[str, PointUpdate]:
        dispatches = self._dispatches(job)
        client = self._client(job)
        updates: dict[str, PointUpdate] = {}
        try:
            for d in dispatches:
                update = self._poll(client, job, d)
                if update is not None:
                    self._save(job, dispatches, d.get("run_id"))
                    for pid in d["point_ids"]:
                        if job.point(pid).state != update.state or update.state.terminal:
                            updates[pid] = update
        except GitHubError as exc:
            log.warning("github poll of job %s failed (will retry): %s", job.id, exc)
        finally:
            client.close()
        return {pid: u for pid, u in updates.items() if not job.point(pid).state.terminal}

    def _poll(self, client: GitHubClient, job: JobRecord, d: dict[str, Any]) -> PointUpdate | None:
        if d.get("run_id") is None:
            if d["state"] == "planned":
                return None
            if self._find(client, job, d):
                return PointUpdate(PointState.QUEUED, handle={"run_id": d["run_id"]})
            waited = (now() - datetime.fromisoformat(d["dispatched_at"])).total_seconds()
            if waited > self._opts(job).find_timeout_s:
                d["state"] = "lost"
                return PointUpdate(
                    PointState.FAILED,
                    reason=f"dispatched, but no run titled [...{d['marker']}] appeared within {waited:.0f} s "
                    "(does the workflow's run-name show its test-name input?)",
                    finished_at=now(),
                )
            return None
        run = client.run(d["run_id"])
        status, conclusion = run.get("status"), run.get("conclusion")
        d["status"], d["conclusion"], d["html_url"] = status, conclusion, run.get("html_url")
        handle = {"run_id": str(d["run_id"])}
        started = _time(run.get("run_started_at"))
        if status in _QUEUED:
            return PointUpdate(PointState.QUEUED, handle=handle)
        if status != "completed":
            return PointUpdate(PointState.RUNNING, started_at=started, handle=handle)
        state = _CONCLUSION.get(str(conclusion), PointState.FAILED)
        reason = (
            ""
            if state == PointState.SUCCEEDED
            else f"run {d['run_id']} {_WORDS.get(str(conclusion), 'concluded')} {conclusion} "
            f"({run.get('html_url')})"
        )
        return PointUpdate(
            state,
            reason=reason,
            started_at=started,
            finished_at=_time(run.get("updated_at")) or now(),
            handle=handle,
        )

    # ---- cancel / collect ----------------------------------------------------------------------
    def cancel_wait_s(self, job: JobRecord) -> float:
        return max(120.0, 3 * self.interval(job))

    def ingest_states(self) -> frozenset[PointState]:
        # A run that failed or was cancelled still uploaded the artifacts of its finished jobs.
        return frozenset(
            {PointState.SUCCEEDED, PointState.FAILED, PointState.CANCELLED, PointState.TIMED_OUT}
        )

    def cancel(self, job: JobRecord) -> dict[str, PointUpdate]:
        dispatches = self._dispatches(job)
        client = self._client(job)
        try:
            for d in dispatches:
                if d.get("run_id") is None and d["state"] in ("dispatching", "dispatched"):
                    self._find(client, job, d)
                if d.get("run_id") is not None and d.get("status") != "completed":
                    try:
                        client.post(f"/repos/{client.repo}/actions/runs/{d['run_id']}/cancel", {})
                    except GitHubError as exc:
                        log.warning("cancel of run %s failed: %s", d["run_id"], exc)
            self._save(job, dispatches)
        except GitHubError as exc:
            raise BackendError(f"cancel of job {job.id} failed: {exc}") from exc
        finally:
            client.close()
        return {
            pid: PointUpdate(
                PointState.CANCELLED, reason="cancelled before it was dispatched", finished_at=now()
            )
            for d in dispatches
            if d["state"] == "planned"
            for pid in d["point_ids"]
        }

    def collect(self, job: JobRecord, point: PointRecord) -> Collected:
        dispatches = self._dispatches(job)
        d = next((d for d in dispatches if point.point_id in d["point_ids"]), None)
        if d is None or d.get("run_id") is None:
            return Collected(job.run_id, note="no run to ingest")
        run_id = str(d["run_id"])
        if d["collected"]:
            return Collected(run_id, note=f"ingested with run {run_id}")
        client = self._client(job)
        try:
            arts = client.artifacts(run_id)
            if arts and all(a.expired for a in arts):
                raise GitHubError("every artifact is marked expired")
            report = fetch_run(run_id, self.ctx.store, client)
        except GitHubError as exc:
            if "HTTP 410" not in str(exc) and "expired" not in str(exc):
                raise BackendError(f"fetching run {run_id} failed: {exc}") from exc
            # Gone for good: GitHub keeps artifacts for its retention period only. The job ends
            # failed with the reason; a retry would not help.
            message = (
                f"the artifacts of run {run_id} have expired (HTTP 410 Gone: {exc}); nothing was "
                f"ingested: run the points again ({d.get('html_url') or 'see the run page'})"
            )
            d["collected"], d["expired"] = True, True
            self._save(job, dispatches, run_id)

            def fail(r: JobRecord) -> None:
                r.error = r.error or message

            self.ctx.table.update(job.id, fail)
            return Collected(run_id, note=message)
        finally:
            client.close()
        d["collected"] = True
        self._save(job, dispatches, run_id)
        return Collected(run_id, report=report)


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00"))

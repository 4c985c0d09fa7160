"""A loopback server that behaves like the GitHub Actions API for workflow dispatches (tests only).

Responses are the real shapes of run 29820102138 (`tests/fixtures/github/`): a dispatch creates a
run from the real run object (new id, title from the `test-name` input as e2e-tests.yml's
run-name makes it, created now); each GET of the run advances its status through `statuses`;
its artifact listing is the real one with download URLs pointing back here. Every request is
recorded.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.loopback import loopback_server, zip_bytes

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
GH = FIXTURES / "github" / "run_29820102138"
AGG_DIR = FIXTURES / "inferencex" / "agentic_agg" / "kimik2.7_tp4_sweep_29003473063"
REPO = "SemiAnalysisAI/InferenceX"
WORKFLOW = "e2e-tests.yml"


def agg_bmk() -> bytes:
    """`results_bmk/agg_bmk.json`: an array of real AgentX aggregates."""
    rows = [json.loads(p.read_text()) for p in sorted(AGG_DIR.glob("kimik2.7_*.json"))]
    return json.dumps(rows).encode()


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass
class GitHubReplay:
    token: str
    statuses: list[tuple[str, str | None]] = field(
        default_factory=lambda: [("queued", None), ("in_progress", None), ("completed", "success")]
    )
    dispatch_status: int = 204
    artifact_status: int = 200  # 410: the artifacts expired (GitHub answers "Gone")
    url: str = ""
    requests: list[Request] = field(default_factory=list)
    runs: dict[int, dict[str, Any]] = field(default_factory=dict)
    polls: dict[int, int] = field(default_factory=dict)
    next_id: int = 30000000001

    def __post_init__(self) -> None:
        self.template = json.loads((GH / "github_run.json").read_text())
        self.listing = json.loads((GH / "github_artifacts.json").read_text())
        self.lock = threading.Lock()
        # Someone else's dispatch of the same workflow, created "now": it must not be taken.
        self.add_run("e2e Test - somebody else's sweep")

    def add_run(self, title: str) -> dict[str, Any]:
        run = copy.deepcopy(self.template)
        rid = self.next_id
        self.next_id += 1
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        run.update(
            id=rid,
            display_title=title,
            name=title,
            status="queued",
            conclusion=None,
            created_at=stamp,
            run_started_at=stamp,
            updated_at=stamp,
            html_url=f"https://github.com/{REPO}/actions/runs/{rid}",
        )
        self.runs[rid] = run
        self.polls[rid] = 0
        return run

    def dispatches(self) -> list[Request]:
        return [r for r in self.requests if r.method == "POST" and r.path.endswith("/dispatches")]

    def answer(self, req: Request) -> tuple[int, Any]:
        if req.headers.get("Authorization") != f"Bearer {self.token}":
            return 401, {"message": "Bad credentials"}
        base = f"/repos/{REPO}/actions"
        with self.lock:
            if req.method == "POST" and req.path == f"{base}/workflows/{WORKFLOW}/dispatches":
                if self.dispatch_status != 204:
                    return self.dispatch_status, {
                        "message": "Resource not accessible by integration"
                    }
                self.add_run(f"e2e Test - {req.body['inputs']['test-name']}")
                return 204, None
            if req.method == "GET" and req.path == f"{base}/workflows/{WORKFLOW}/runs":
                since = req.query.get("created", [">=1970-01-01T00:00:00Z"])[0].removeprefix(">=")
                runs = [
                    r
                    for r in self.runs.values()
                    if r["created_at"] >= since and r["event"] == req.query["event"][0]
                ]
                return 200, {
                    "total_count": len(runs),
                    "workflow_runs": sorted(runs, key=lambda r: -r["id"]),
                }
            parts = req.path.removeprefix(f"{base}/").split("/")
            if parts[0] == "runs" and int(parts[1]) in self.runs:
                run = self.runs[int(parts[1])]
                if req.method == "POST" and parts[2:] == ["cancel"]:
                    run["status"], run["conclusion"] = "completed", "cancelled"
                    return 202, {}
                if parts[2:] == ["artifacts"]:
                    listing = copy.deepcopy(self.listing)
                    for a in listing["artifacts"]:
                        a["archive_download_url"] = f"{self.url}{base}/artifacts/{a['id']}/zip"
                        a["digest"] = None
                        a["workflow_run"]["id"] = run["id"]
                    return 200, listing
                if not parts[2:]:
                    if run["conclusion"] != "cancelled":
                        i = min(self.polls[run["id"]], len(self.statuses) - 1)
                        run["status"], run["conclusion"] = self.statuses[i]
                        self.polls[run["id"]] += 1
                    return 200, run
            if parts[0] == "artifacts" and parts[2:] == ["zip"] and self.artifact_status != 200:
                return self.artifact_status, {"message": "Artifact has expired"}
            if parts[0] == "artifacts" and parts[2:] == ["zip"]:
                name = next(
                    a["name"] for a in self.listing["artifacts"] if str(a["id"]) == parts[1]
                )
                return 200, zip_bytes({"agg_bmk.json": agg_bmk()} if name == "results_bmk" else {})
        return 404, {"message": "Not Found"}


@contextmanager
def serve(replay: GitHubReplay) -> Iterator[GitHubReplay]:
    def handle(
        method: str, path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, bytes, dict[str, str]]:
        split = urlsplit(path)
        req = Request(
            method, split.path, parse_qs(split.query), headers, json.loads(raw) if raw else None
        )
        replay.requests.append(req)
        status, doc = replay.answer(req)
        if isinstance(doc, bytes):
            return status, doc, {"Content-Type": "application/zip"}
        return (
            status,
            b"" if doc is None else json.dumps(doc).encode(),
            {"Content-Type": "application/json"},
        )

    with loopback_server(handle) as url:
        replay.url = url
        yield replay

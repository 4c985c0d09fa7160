"""GitHub REST client for Actions runs and artifacts, and `fetch_run`, which ingests a run."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from ingest.contract.schema import RunCol
from ingest.pipeline import ingest_paths
from ingest.report import IngestReport
from ingest.sources.artifacts import logical_name
from ingest.store import Store


class GitHubError(Exception):
    """The GitHub API refused or failed a request (message never contains the token)."""


@dataclass(frozen=True)
class Artifact:
    """One Actions artifact as the API lists it."""

    id: int
    name: str
    size_in_bytes: int
    created_at: str
    expired: bool
    archive_download_url: str
    digest: str | None = None


class GitHubClient:
    """A small GitHub REST client (runs, artifacts, downloads, dispatches)."""

    def __init__(self, api_url: str, token: str | None, repo: str, timeout: float = 60.0) -> None:
        self.api_url = api_url.rstrip("/")
        self.repo = repo
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "paretolens",
        }
        if token:
            headers["Authorization"] = f"Bearer {token}"
        # httpx drops Authorization when a redirect leaves the API origin (artifact blob URLs).
        self.http = httpx.Client(headers=headers, timeout=timeout, follow_redirects=True)

    def close(self) -> None:
        self.http.close()

    def _get(self, path: str, **params: Any) -> Any:
        url = path if path.startswith("http") else f"{self.api_url}{path}"
        try:
            resp = self.http.get(url, params=params or None)
        except httpx.HTTPError as exc:
            raise GitHubError(f"GET {url} failed: {type(exc).__name__}") from exc
        if resp.status_code == 404:
            raise GitHubError(
                f"GET {url}: not found (404); check the run id and --repo, and that GITHUB_TOKEN can read it"
            )
        if resp.status_code in (401, 403):
            raise GitHubError(
                f"GET {url}: {resp.status_code} {_message(resp)}; set GITHUB_TOKEN to a token that can read {self.repo}"
            )
        if resp.status_code >= 400:
            raise GitHubError(f"GET {url}: HTTP {resp.status_code} {_message(resp)}")
        return resp.json()

    def post(self, path: str, payload: dict[str, Any]) -> httpx.Response:
        """POST JSON to an API path; raises GitHubError on HTTP errors."""
        url = f"{self.api_url}{path}"
        try:
            resp = self.http.post(url, json=payload)
        except httpx.HTTPError as exc:
            raise GitHubError(f"POST {url} failed: {type(exc).__name__}") from exc
        if resp.status_code >= 400:
            raise GitHubError(f"POST {url}: HTTP {resp.status_code} {_message(resp)}")
        return resp

    def get_json(self, path: str, **params: Any) -> Any:
        """GET an API path (or absolute URL) and return its JSON."""
        return self._get(path, **params)

    def run(self, run_id: str) -> dict[str, Any]:
        """The workflow run object."""
        data = self._get(f"/repos/{self.repo}/actions/runs/{run_id}")
        assert isinstance(data, dict)
        return data

    def artifacts(self, run_id: str) -> list[Artifact]:
        """Every artifact of the run (all pages)."""
        out: list[Artifact] = []
        page = 1
        while True:
            data = self._get(
                f"/repos/{self.repo}/actions/runs/{run_id}/artifacts", per_page=100, page=page
            )
            items = data.get("artifacts", [])
            for a in items:
                out.append(
                    Artifact(
                        id=int(a["id"]),
                        name=str(a["name"]),
                        size_in_bytes=int(a.get("size_in_bytes", 0)),
                        created_at=str(a.get("created_at", "")),
                        expired=bool(a.get("expired", False)),
                        archive_download_url=str(a["archive_download_url"]),
                        digest=a.get("digest"),
                    )
                )
            if len(items) < 100 or len(out) >= int(data.get("total_count", len(out))):
                return out
            page += 1

    def download(self, artifact: Artifact, target: Path) -> Path:
        """Download an artifact zip to `target` (atomically)."""
        tmp = target.with_suffix(".part")
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            with self.http.stream("GET", artifact.archive_download_url) as resp:
                if resp.status_code >= 400:
                    raise GitHubError(
                        f"download of artifact {artifact.name!r} failed: HTTP {resp.status_code}"
                    )
                with open(tmp, "wb") as fh:
                    for chunk in resp.iter_bytes():
                        fh.write(chunk)
        except httpx.HTTPError as exc:
            raise GitHubError(
                f"download of artifact {artifact.name!r} failed: {type(exc).__name__}"
            ) from exc
        tmp.replace(target)
        return target


def _message(resp: httpx.Response) -> str:
    try:
        return str(resp.json().get("message", ""))
    except ValueError:
        return ""


def newest_artifacts(artifacts: list[Artifact]) -> list[Artifact]:
    """Unexpired artifacts, one per logical name (retry suffix stripped), the newest kept."""
    best: dict[str, Artifact] = {}
    for a in artifacts:
        if a.expired:
            continue
        key = logical_name(a.name)
        if key not in best or (a.created_at, a.id) > (best[key].created_at, best[key].id):
            best[key] = a
    return sorted(best.values(), key=lambda a: a.name)


def _cached_ok(path: Path, artifact: Artifact) -> bool:
    if not path.exists():
        return False
    if artifact.digest and artifact.digest.startswith("sha256:"):
        return hashlib.sha256(path.read_bytes()).hexdigest() == artifact.digest.split(":", 1)[1]
    return path.stat().st_size > 0


def run_meta(run: dict[str, Any], repo: str) -> dict[str, Any]:
    """Catalog fields of a workflow run object."""
    return {
        RunCol.REPO: repo,
        RunCol.BRANCH: run.get("head_branch"),
        RunCol.HEAD_SHA: run.get("head_sha"),
        RunCol.TITLE: run.get("display_title") or run.get("name"),
        RunCol.CREATED_AT: run.get("created_at"),
        RunCol.STATUS: run.get("status"),
        RunCol.CONCLUSION: run.get("conclusion"),
        RunCol.HTML_URL: run.get("html_url"),
        RunCol.SOURCE: "github",
    }


def fetch_run(
    run_id: str,
    store: Store,
    client: GitHubClient,
    progress: Callable[[str], None] | None = None,
    defaults: Mapping[str, Any] | None = None,
) -> IngestReport:
    """Fetch a run's metadata and artifacts (cached under the store) and ingest them.

    Args:
        defaults: what no file says (column -> value, as `paretolens ingest --set`); run keys
            (title, branch, ...) among them win over the run's GitHub metadata.

    Raises:
        GitHubError: when the API refuses or fails.
    """
    say = progress or (lambda _m: None)
    run = client.run(run_id)
    arts = newest_artifacts(client.artifacts(run_id))
    cache = store.root / "cache" / "github" / str(run_id)
    say(f"run {run_id}: {run.get('display_title', '')!s} — {len(arts)} artifacts")
    for i, a in enumerate(arts, 1):
        target = cache / f"{a.name}.zip"
        if _cached_ok(target, a):
            say(f"[{i}/{len(arts)}] {a.name} (cached)")
            continue
        say(f"[{i}/{len(arts)}] downloading {a.name} ({a.size_in_bytes} bytes)")
        client.download(a, target)
    inputs = [cache / f"{a.name}.zip" for a in arts]
    say("ingesting")
    return (
        ingest_paths(
            [cache] if inputs else [],
            store,
            run_id=str(run_id),
            run_meta=run_meta(run, client.repo),
            defaults=defaults,
            defaults_from="--set",
        )
        if inputs
        else _empty_run(store, run_id, run, client.repo)
    )


def _empty_run(store: Store, run_id: str, run: dict[str, Any], repo: str) -> IngestReport:
    with store.lock():
        store.upsert_run(
            {
                RunCol.RUN_ID: str(run_id),
                RunCol.POINT_COUNT: 0,
                RunCol.REJECT_COUNT: 0,
                **run_meta(run, repo),
            }
        )
    return IngestReport(runs=[str(run_id)])

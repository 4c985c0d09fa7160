"""The one URL helper: every link the app renders is built here (datasette's `Urls`).

Pages and exports take the same query string, so an export link is the page's own query behind
`/export/<table>.<fmt>`.
"""

from __future__ import annotations

import functools
from urllib.parse import quote, urlsplit

from views.query.state import CompareView, HistoryView, IndexView, JobsView, RunView

RUN_PATH = "/inference"
POINTS_PATH = "/points"
COMPARE_PATH = "/compare"
JOBS_PATH = "/jobs"
HISTORY_PATH = "/history"
EMBED_PATH = "/embed"
INDEX_PATH = "/"
EXPORT_PREFIX = "/export/"
API_PREFIX = "/api/"


def _with(path: str, query: str) -> str:
    return f"{path}?{query}" if query else path


def index(view: IndexView | None = None) -> str:
    """The runs index."""
    return _with(INDEX_PATH, view.query() if view else "")


def run(view: RunView) -> str:
    """The run page of a view."""
    return _with(RUN_PATH, view.query())


@functools.lru_cache(maxsize=8192)
def runs(*run_ids: str) -> str:
    """The run page of some runs with every other setting at its default (kept: the runs
    index links each of its thousands of runs on every render)."""
    return run(RunView(runs=tuple(run_ids)))


def points(view: RunView) -> str:
    """The full points table of a view's runs (same filters)."""
    return _with(POINTS_PATH, view.query())


def compare(view: CompareView) -> str:
    """The compare page."""
    return _with(COMPARE_PATH, view.query())


def compare_runs(base: str, candidate: str) -> str:
    """The compare page of two runs with default axes."""
    return compare(CompareView(base=base, candidate=candidate))


def history(view: HistoryView) -> str:
    """The history page of some arms (their frontier at x, run by run)."""
    return _with(HISTORY_PATH, view.query())


def embed(view: RunView) -> str:
    """The run page's main chart alone, to put in an iframe."""
    return _with(EMBED_PATH, view.query())


def jobs(view: JobsView | None = None) -> str:
    """The jobs page (one job when `view.job` is set)."""
    return _with(JOBS_PATH, view.query() if view else "")


def export(table: str, fmt: str, query: str) -> str:
    """An export of one table in one format, for a page's query string."""
    return _with(f"{EXPORT_PREFIX}{quote(table)}.{quote(fmt)}", query.lstrip("?"))


def api_launch() -> str:
    """POST route that launches a plan."""
    return f"{API_PREFIX}launch"


def safe_href(url: object) -> str | None:
    """`url` when it is an http(s) link (from a result file or the API), else None."""
    if not isinstance(url, str):
        return None
    parts = urlsplit(url.strip())
    return url.strip() if parts.scheme in ("http", "https") and parts.netloc else None


def github_commit(repo: object, sha: object) -> str | None:
    """Link to a commit on GitHub, when both parts look right."""
    if not (isinstance(repo, str) and isinstance(sha, str)):
        return None
    if not all(
        part.replace("-", "").replace("_", "").replace(".", "").isalnum()
        for part in repo.split("/")
    ):
        return None
    if repo.count("/") != 1 or not sha.isalnum():
        return None
    return f"https://github.com/{repo}/commit/{sha}"

"""One rule for a page or export that names runs the store does not have, or ids that are not
run ids: 404, with the same text on every route (`/inference`, `/points`, `/compare`, `/embed`,
`/export/...`)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from analysis.comparison.baseline import MAIN
from ingest.run_ids import is_readable_run_id
from views import urls
from views.query.state import RunView
from views.query.viewmodel import parse_query, split_values

# The routes whose query names runs as the run page does, and the compare page's run keys.
RUN_ROUTES = (urls.RUN_PATH, urls.POINTS_PATH, urls.EMBED_PATH)
COMPARE_KEYS = ("base", "candidate")


def requested_runs(path: str, query: str) -> tuple[str, ...]:
    """The run ids a page's query asks for (valid or not); () for a page that names none."""
    if path in RUN_ROUTES or path.startswith(urls.EXPORT_PREFIX):
        runs = RunView.requested_runs(query)
        if runs or not path.startswith(urls.EXPORT_PREFIX):
            return runs
    if path == urls.COMPARE_PATH or path.startswith(urls.EXPORT_PREFIX):
        q = parse_query(query)
        return tuple(
            dict.fromkeys(
                r for k in COMPARE_KEYS for r in split_values(q.get(k)) if r and r != MAIN
            )
        )
    return ()


def not_found_text(requested: Sequence[str], have: Collection[str]) -> str | None:
    """What a page says (with status 404) when it names an id that is no run id or a run the
    store does not have; None when every run is there."""
    invalid = [r for r in requested if not is_readable_run_id(r)]
    missing = [r for r in requested if is_readable_run_id(r) and r not in have]
    said: list[str] = []
    if invalid:
        shown = ", ".join(repr(r[:60]) for r in invalid)
        said.append(
            f"{shown} {'is' if len(invalid) == 1 else 'are'} not a run id (no markup, quotes, "
            "commas or control characters), so no run has it"
        )
    if missing:
        ids = ", ".join(missing)
        said.append(
            f"run{'s' if len(missing) > 1 else ''} {ids} not in the store: ingest it "
            "(paretolens ingest PATH --run-id ID) or fetch it (paretolens fetch ID)"
        )
    return "; ".join(said) if said else None


__all__ = ["RUN_ROUTES", "not_found_text", "requested_runs"]

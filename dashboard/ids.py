"""Every component id of the app, defined once (no bare-string ids in layouts or callbacks).

Run-page controls share one pattern id, `{"type": CONTROL, "field": <RunView field>}`, so a single
callback input (`control(ALL)`) carries the whole view and the field name maps each value back to
the URL state model.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class Id(StrEnum):
    """Fixed component ids."""

    # shell
    LOCATION = "location"
    NAV = "nav"
    PAGE = "page"
    ROUTE_LOCATION = "route-location"
    # run page
    MAIN_CHART = "main-chart"
    SECOND_CHART = "second-chart"
    SECOND_FIGURE = "second-figure"
    SECOND_TOKENS = "second-tokens"
    SECOND_WANTED = "second-wanted"
    TRACE_TOKENS = "trace-tokens"
    TABLES_READY = "tables-ready"
    TABLES_VISIBLE = "tables-visible"  # the tables scrolled into view (paretolens.js)
    TABLES = "tables"
    TABLES_SHOWN = "tables-shown"
    DETAIL = "detail"
    UNPIN = "unpin"
    BANNER = "banner"
    NOTES = "notes"
    AT_TABLE = "at-table"
    POINTS_GRID = "points-grid"
    POINTS_ROWS = "points-rows"
    AL_GRID = "al-grid"
    DELTAS_GRID = "deltas-grid"
    DELTAS_FRONTIER_GRID = "deltas-frontier-grid"
    PRUNED_GRID = "pruned-grid"
    PRUNED_DROPPED_GRID = "pruned-dropped-grid"
    PRUNED_YAML = "pruned-yaml"
    PRUNED_CLI = "pruned-cli"
    PRUNED_COPY_YAML = "pruned-copy-yaml"
    PRUNED_COPY_CLI = "pruned-copy-cli"
    PRUNED_SKIPPED = "pruned-skipped"
    PRUNED_INVALID = "pruned-invalid"
    REJECTS_GRID = "rejects-grid"
    EXPORTS = "exports"
    COPY_LINK = "copy-link"
    PNG_MAIN = "png-main"
    SVG_MAIN = "svg-main"
    PNG_SECOND = "png-second"
    SVG_SECOND = "svg-second"
    POINTS_BOX = "points-box"
    AL_BOX = "al-box"
    DELTAS_BOX = "deltas-box"
    PRUNED_BOX = "pruned-box"
    REJECTS_BOX = "rejects-box"
    TCO_BOX = "tco-box"  # issue 27: the TCO calculator
    TCO_GRID = "tco-grid"
    TCO_HEADLINE = "tco-headline"
    ASSUMPTIONS = "assumption-badges"
    EVALS_CHART = "evals-chart"
    HISTORY_CHANGELOG = "history-changelog"
    LAUNCH_BOX = "launch-box"
    # launch panel and jobs
    LAUNCH_SOURCE = "launch-source"
    LAUNCH_BACKEND = "launch-backend"
    LAUNCH_TOKEN = "launch-token"
    LAUNCH_OPTIONS = "launch-options"
    LAUNCH_BUTTON = "launch-button"
    LAUNCH_RESULT = "launch-result"
    LAUNCH_STATUS = "launch-status"
    JOBS_TABLE = "jobs-table"
    JOBS_TICK = "jobs-tick"
    JOB_DETAIL = "job-detail"
    JOB_LOG = "job-log"
    CANCEL_TOKEN = "cancel-token"
    CANCEL_BUTTON = "cancel-button"
    CANCEL_RESULT = "cancel-result"
    # fetch (run not in the store)
    FETCH_TOKEN = "fetch-token"
    FETCH_BUTTON = "fetch-button"
    FETCH_TICK = "fetch-tick"
    FETCH_LOG = "fetch-log"
    FETCH_RUNS = "fetch-runs"
    FETCH_STATE = "fetch-state"
    # index
    INDEX_GRID = "index-grid"
    INDEX_ACTIONS = "index-actions"
    INDEX_EMPTY = "index-empty"
    INDEX_EXPORTS = "index-exports"
    INDEX_PAGER = "index-pager"
    # compare
    COMPARE_CHART = "compare-chart"
    COMPARE_BODY = "compare-body"
    COMPARE_NOTES = "compare-notes"  # base=main: the main runs used; accuracy flags
    ACCURACY_TABLE = "accuracy-table"  # the run page's accuracy per arm (issue 14)
    COMPARE_POINTS_GRID = "compare-points-grid"
    UNMATCHED_GRID = "unmatched-grid"
    UPLIFT_GRID = "uplift-grid"
    COMPARE_MARKDOWN = "compare-markdown"
    COMPARE_MARKDOWN_TEXT = "compare-markdown-text"
    # points page
    ALL_POINTS_GRID = "all-points-grid"
    # issue 14: baseline, costs, history
    BASELINE_TABLE = "baseline-table"
    BASELINE_MARKDOWN = "baseline-markdown"
    COST_CAPTION = "cost-caption"
    HISTORY_CHART = "history-chart"
    HISTORY_TABLE = "history-table"
    HISTORY_PALETTE = "history-palette"


CONTROL = "control"
INDEX_CONTROL = "index-control"
COMPARE_CONTROL = "compare-control"


def control(field: Any, kind: str = CONTROL) -> dict[str, Any]:
    """Pattern id of a URL-state control (`field` may be a name or dash.ALL)."""
    return {"type": kind, "field": field}

"""Run ids: the rule new ids keep, the tolerance for ids of stores written before, and the
file-name key stores written before Delta Lake named a run's files by (`ingest.lake.upgrade`
reads them; the Delta store partitions by the run id itself, so two ids never share a file)."""

from __future__ import annotations

import base64
import re

# What a run id may contain (one rule: ingest refuses other ids, the dashboard's URLs carry these
# unescaped): a letter or digit, then up to 199 letters, digits and `. _ : @ + -`.
RUN_ID_MAX_CHARS = 200
RUN_ID_RULE = (
    f"a letter or digit, then letters, digits and . _ : @ + - (at most {RUN_ID_MAX_CHARS} "
    "characters; no spaces, slashes or brackets)"
)
_RUN_ID = re.compile(rf"^[A-Za-z0-9][A-Za-z0-9._:@+-]{{0,{RUN_ID_MAX_CHARS - 1}}}$")
_RUN_ID_BAD = re.compile(r"[^A-Za-z0-9._:@+-]+")


class InvalidRunId(ValueError):
    """A run id that breaks `RUN_ID_RULE`; the message suggests one that keeps it."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.suggestion = suggest_run_id(run_id)
        shown = run_id if len(run_id) <= 80 else run_id[:77] + "..."
        super().__init__(
            f"run id {shown!r} is not allowed: a run id is {RUN_ID_RULE}. "
            f"Pass --run-id {self.suggestion} (or rename the directory)"
        )


def is_valid_run_id(run_id: object) -> bool:
    """Whether `run_id` keeps the run id rule (what ingest accepts)."""
    return isinstance(run_id, str) and _RUN_ID.match(run_id) is not None


def check_run_id(run_id: str) -> str:
    """`run_id` when it keeps the rule.

    Raises:
        InvalidRunId: naming the rule and a suggested id.
    """
    if not is_valid_run_id(run_id):
        raise InvalidRunId(run_id)
    return run_id


def suggest_run_id(run_id: str) -> str:
    """An id that keeps the rule, made from one that does not ('sweep 2026-01 (retry)' ->
    'sweep-2026-01-retry')."""
    out = _RUN_ID_BAD.sub("-", run_id).strip("-._:@+")[:RUN_ID_MAX_CHARS].rstrip("-._:@+")
    return out or "run"


# Never in a run id a URL names, old or new: the URL's list separator, markup and quotes.
_NEVER_IN_RUN_IDS = frozenset(",<>\"'`\\")


def is_readable_run_id(run_id: object) -> bool:
    """Whether a run id can be named in a URL. Ids that stores written before the rule may hold
    (the default was the directory's name: spaces, brackets, `#`, `&`, non-ASCII letters) are
    tolerated on read; control characters, commas (the URL's list separator), markup and quote
    characters, and surrounding blanks are not."""
    return (
        isinstance(run_id, str)
        and 0 < len(run_id) <= 4 * RUN_ID_MAX_CHARS
        and run_id.strip() == run_id
        and run_id.isprintable()
        and _NEVER_IN_RUN_IDS.isdisjoint(run_id)
    )


def run_key(run_id: str) -> str:
    """The file-name key of a run id in the old Parquet layout (`b64-YTpi` was the key of both
    `b64-YTpi` and `a:b`: issue 29 item 1; the upgrade splits such files by their rows' ids)."""
    if run_id.replace("-", "").replace("_", "").replace(".", "").isalnum():
        return run_id
    return "b64-" + base64.urlsafe_b64encode(run_id.encode()).decode().rstrip("=")

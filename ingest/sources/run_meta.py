"""A run directory's own catalog fields: the `.run.json` beside its files.

`paretolens fetch`, the web fetch and launched jobs write the run's catalog fields (title,
branch, head sha, status, dates, links) to `.run.json` at the top of the run directory, and the
bundled samples carry one. Plain `ingest_paths` reads it too, so a directory ingested by hand
(`paretolens ingest ./run_29003473063 --run-id 29003473063`) keeps its title, branch, status and
date. The same run keys may be given in a `paretolens.yaml` of the input (`title: ...`) and with
`--set title=...` (`paretolens ingest`, `paretolens fetch`, the web fetch's `set`); the order of
trust, lowest first: `.run.json`, `paretolens.yaml`, the caller's `run_meta` (a GitHub run's own
metadata for a fetch, the job for a launched run), `--set`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ingest.contract.schema import RunCol
from ingest.report import IngestReport, Reject
from ingest.sources.artifacts import run_root
from ingest.sources.files import shown

RUN_FILE = ".run.json"
# What a `.run.json` may set: the catalog's descriptive fields (the counts and the ingest time
# are the store's own).
FIELDS: frozenset[str] = frozenset(
    str(c)
    for c in (
        RunCol.REPO,
        RunCol.BRANCH,
        RunCol.HEAD_SHA,
        RunCol.TITLE,
        RunCol.CREATED_AT,
        RunCol.STATUS,
        RunCol.CONCLUSION,
        RunCol.HTML_URL,
        RunCol.SOURCE,
    )
)


def _run_file(path: Path) -> Path | None:
    if not path.is_dir():
        return None
    for d in (path, run_root(path)):
        f = d / RUN_FILE
        if f.is_file():
            return f
    return None


def read_run_file(path: Path) -> dict[str, Any]:
    """The catalog fields of one `.run.json`.

    Raises:
        ValueError: naming the file and what is wrong (not a JSON object, a field of the wrong
            type); unknown keys are ignored (`run_id` is the caller's to choose).
    """
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a readable JSON file ({exc})") from exc
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: expected a JSON object of run catalog fields")
    out: dict[str, Any] = {}
    for key in sorted(FIELDS & set(doc)):
        value = doc[key]
        if value is None:
            continue
        if not isinstance(value, str):
            raise ValueError(f"{path}: field {key!r} must be a string, got {value!r}")
        out[key] = value
    return out


def run_metas(
    paths: Sequence[Path],
    run_ids: Sequence[str],
    run_id: str | None,
    given: dict[str, Any],
    report: IngestReport,
    local: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Each run's catalog fields: its input directory's `.run.json`, under the run keys of its
    `paretolens.yaml` files (`local`, by run id), under the caller's `given`.

    Args:
        paths: the inputs.
        run_ids: the runs they gave (`collect_all` order).
        run_id: the one run id of every input, or None (each directory is its own run).
        given: the caller's fields (they win).
        report: where an unreadable `.run.json` is reported (as a reject of that file).
        local: run keys of each run's `paretolens.yaml` files.
    """
    local = local or {}
    out: dict[str, dict[str, Any]] = {rid: {**local.get(rid, {}), **given} for rid in run_ids}
    for p in paths:
        f = _run_file(p)
        if f is None:
            continue
        rid = run_id or shown(run_root(p).resolve().name)
        if rid not in out:
            continue
        try:
            fields = read_run_file(f)
        except ValueError as exc:
            report.rejected.append(Reject(rid, RUN_FILE, str(exc), "", "run metadata"))
            continue
        out[rid] = {**fields, **out[rid]}
    return out

"""Reader for the InferenceX app's JSON table dump: one paretolens run per workflow run.

The InferenceX app (SemiAnalysisAI/InferenceX-app, `packages/db`) can run from a dump of its
Postgres tables, one JSON array of raw rows per table (`configs.json`, `workflow_runs.json`,
`benchmark_results.json`, `eval_results.json`, ...; ../shared/docs/inferencex-dump.md and
docs/formats.md "InferenceX app dump"). This module brings such a dump into the store as
**official** results, to be used as baselines:

- a directory is a dump when it holds `configs.json`, `workflow_runs.json` and
  `benchmark_results.json` (`is_dump_dir`);
- bigserial ids arriving as strings are coerced; only the highest `run_attempt` per
  `github_run_id` counts (the app's `latest_workflow_runs`); rows of a superseded attempt are
  reported as ignored;
- each benchmark row is joined to its config and workflow run and turned back into the
  `utils/process_result.py` aggregate row it was made from (the config's identity fields plus
  `isl`, `osl`, `conc`, `image` and every key of `metrics`, latencies in seconds as the dump keeps
  them), so the existing `agg_fixed` reader and normalisation give the points; nothing here
  re-implements them;
- one run per workflow run: run id = `github_run_id`, catalog branch = `head_branch`, head sha,
  title = `name`, created_at, status, conclusion, html_url, repo (from html_url), source
  `inferencex-dump`;
- a row with an `error`, a dangling `config_id` or `workflow_run_id`, a config without hardware or
  model, or metrics without `tput_per_gpu` is a reject naming the dump row
  (`benchmark_results.json#id=<id>`), stored under its run when the run is known; never dropped
  silently. The derived tables are listed as ignored;
- each `eval_results` row (the same attempt rule; a dangling run or config is a reject naming
  `eval_results.json#id=<id>`) is joined to its config and written as the one-row
  `agg_eval_all.json` it was made from (`eval_aggregate_row`), file `eval_results/<id>.json`, which
  the eval reader (`ingest.readers.evals`) stores in the run's `evals` table.

Each row becomes one file `benchmark_results/<id>.json` of a per-run temporary directory that goes
through `ingest.pipeline.ingest_paths`, so a point's `source_path` names its dump row and
re-ingesting the same dump stores nothing twice.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from ingest.contract.schema import RejectCol, RunCol
from ingest.pipeline import ingest_paths
from ingest.readers.app_api import aggregate_row
from ingest.report import Ignored, IngestReport, Reject
from ingest.run_ids import is_valid_run_id
from ingest.store import Store

SOURCE = "inferencex-dump"
READER = "inferencex_dump"
REQUIRED_FILES = ("configs.json", "workflow_runs.json", "benchmark_results.json")
# Tables of the dump that hold nothing paretolens stores (yet); listed as ignored when present.
OTHER_FILES: dict[str, str] = {
    "availability.json": "derived by the app from benchmark_results (nothing new)",
    "run_stats.json": "per-hardware success counts of a run (reliability chart): not stored",
    "changelog_entries.json": "changelog entries: not stored",
    "server_logs.json": "server logs: not read (the file can be several GB)",
    "eval_samples.json": "eval samples: not stored",
}
_BENCH = "benchmark_results.json"
_EVALS = "eval_results.json"
_REPO_URL = re.compile(r"^https://github\.com/([^/\s]+/[^/\s]+)/actions/runs/")


class DumpError(ValueError):
    """The directory is not a readable dump (a required table is missing or not a JSON array)."""


def is_dump_dir(path: Path) -> bool:
    """A directory holding the three tables a benchmark dump cannot do without."""
    return path.is_dir() and all((path / name).is_file() for name in REQUIRED_FILES)


def _table(directory: Path, name: str) -> list[dict[str, Any]]:
    path = directory / name
    if not path.is_file():
        return []
    try:
        doc = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DumpError(f"{name}: not valid JSON ({exc})") from exc
    if not isinstance(doc, list) or not all(isinstance(r, dict) for r in doc):
        raise DumpError(f"{name}: expected a JSON array of table rows (objects)")
    return doc


def _id(value: Any) -> int | None:
    """A bigserial id: Postgres' JSON gives bigint columns as strings; coerce, None if not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


@dataclass(frozen=True)
class _Run:
    row_id: int
    github_run_id: int
    attempt: int
    meta: dict[str, Any]


def _runs(rows: list[dict[str, Any]]) -> tuple[dict[int, _Run], dict[int, _Run]]:
    """(every workflow_runs row by its id, the latest attempt by github_run_id)."""
    by_id: dict[int, _Run] = {}
    latest: dict[int, _Run] = {}
    for r in rows:
        rid, gid = _id(r.get("id")), _id(r.get("github_run_id"))
        if rid is None or gid is None:
            continue
        attempt = _id(r.get("run_attempt")) or 0
        url = r.get("html_url") if isinstance(r.get("html_url"), str) else None
        repo = _REPO_URL.match(url or "")
        meta = {
            RunCol.BRANCH.value: r.get("head_branch"),
            RunCol.HEAD_SHA.value: r.get("head_sha"),
            RunCol.TITLE.value: r.get("name"),
            RunCol.CREATED_AT.value: r.get("created_at") or r.get("date"),
            RunCol.STATUS.value: r.get("status"),
            RunCol.CONCLUSION.value: r.get("conclusion"),
            RunCol.HTML_URL.value: url,
            RunCol.REPO.value: repo.group(1) if repo else None,
            RunCol.SOURCE.value: SOURCE,
        }
        run = _Run(rid, gid, attempt, {k: v for k, v in meta.items() if v is not None})
        by_id[rid] = run
        if gid not in latest or attempt > latest[gid].attempt:
            latest[gid] = run
    return by_id, latest


def _current_run(
    result: dict[str, Any],
    where: str,
    by_id: dict[int, _Run],
    latest: dict[int, _Run],
    rejects: list[Reject],
    report: IngestReport,
) -> _Run | None:
    """The workflow run a result or eval row belongs to, when that run is its latest attempt;
    otherwise None, with the row rejected (unknown run) or ignored (a superseded attempt)."""
    run = by_id.get(_id(result.get("workflow_run_id")) or -1)
    if run is None:
        reason = f"workflow run {result.get('workflow_run_id')!r} is not in workflow_runs.json"
        rejects.append(Reject("", where, reason, "workflow_run_id", READER))
        return None
    newest = latest[run.github_run_id]
    if newest is not run:
        why = (
            f"attempt {run.attempt} of run {run.github_run_id} is superseded by attempt "
            f"{newest.attempt} (only the highest run_attempt counts, as in the InferenceX app)"
        )
        report.ignored.append(Ignored(where, why, str(run.github_run_id)))
        return None
    return run


def eval_aggregate_row(config: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
    """The `agg_eval_all.json` row a dump eval row was made from: the config's identity (as
    `aggregate_row` gives it), task, conc, ISL/OSL, lm-eval version and every metric."""
    agg = aggregate_row(config, {k: result.get(k) for k in ("isl", "osl", "conc")})
    row = {k: v for k, v in agg.items() if v is not None}
    row["task"] = result.get("task")
    row["lm_eval_version"] = result.get("lm_eval_version")
    row["date"] = result.get("date")
    metrics = result.get("metrics")
    if isinstance(metrics, Mapping):
        for key, value in metrics.items():
            row.setdefault(str(key), value)
    return row


def _problem(config: Mapping[str, Any] | None, result: Mapping[str, Any]) -> tuple[str, str]:
    """(field, reason) when a benchmark row cannot become a point, else ('', '')."""
    if result.get("error") is not None:
        return "error", f"the benchmark failed in the run: {str(result['error'])[:300]}"
    if config is None:
        return "config_id", f"config {result.get('config_id')!r} is not in configs.json"
    for key in ("hardware", "model"):
        if not isinstance(config.get(key), str) or not str(config.get(key)).strip():
            return f"configs.{key}", f"config {config.get('id')!r} has no {key} key"
    metrics = result.get("metrics")
    if not isinstance(metrics, Mapping):
        return "metrics", "expected an object of metrics"
    if "tput_per_gpu" not in metrics:
        kind = result.get("benchmark_type")
        return (
            "metrics.tput_per_gpu",
            f"no tput_per_gpu (benchmark_type {kind!r}): not a fixed-sequence aggregate row",
        )
    return "", ""


def ingest_dump(directory: Path, store: Store) -> IngestReport:
    """Ingest an InferenceX app table dump: one run per workflow run (its latest attempt).

    Returns:
        One IngestReport over every run touched, with the dump-level rejects (failed, dangling or
        unreadable rows, `benchmark_results.json#id=<id>`) and ignored rows and tables.

    Raises:
        DumpError: when a required table is missing or is not a JSON array of objects.
        InvalidRunId: never for a well-formed dump (github run ids are digits).
    """
    directory = Path(directory)
    missing = [n for n in REQUIRED_FILES if not (directory / n).is_file()]
    if missing:
        raise DumpError(f"not an InferenceX dump: missing {', '.join(missing)}")
    configs = {
        cid: c for c in _table(directory, "configs.json") if (cid := _id(c.get("id"))) is not None
    }
    by_id, latest = _runs(_table(directory, "workflow_runs.json"))
    report = IngestReport()
    rows: dict[int, list[tuple[int, dict[str, Any]]]] = {}
    dump_rejects: list[Reject] = []
    for i, result in enumerate(_table(directory, _BENCH)):
        bid = _id(result.get("id"))
        where = f"{_BENCH}#id={bid}" if bid is not None else f"{_BENCH}#{i}"
        run = _current_run(result, where, by_id, latest, dump_rejects, report)
        if run is None:
            continue
        rid = str(run.github_run_id)
        config = configs.get(_id(result.get("config_id")) or -1)
        field, reason = _problem(config, result)
        if field:
            dump_rejects.append(Reject(rid, where, reason, field, READER))
            continue
        assert config is not None  # _problem names a missing config
        key = bid if bid is not None else i
        rows.setdefault(run.github_run_id, []).append((key, aggregate_row(config, result)))
    evals: dict[int, list[tuple[int, dict[str, Any]]]] = {}
    for i, result in enumerate(_table(directory, _EVALS)):
        eid = _id(result.get("id"))
        where = f"{_EVALS}#id={eid}" if eid is not None else f"{_EVALS}#{i}"
        run = _current_run(result, where, by_id, latest, dump_rejects, report)
        if run is None:
            continue
        rid = str(run.github_run_id)
        config = configs.get(_id(result.get("config_id")) or -1)
        if config is None:
            reason = f"config {result.get('config_id')!r} is not in configs.json"
            dump_rejects.append(Reject(rid, where, reason, "config_id", READER))
            continue
        key = eid if eid is not None else i
        evals.setdefault(run.github_run_id, []).append((key, eval_aggregate_row(config, result)))
    for name, why in OTHER_FILES.items():
        if (directory / name).is_file():
            report.ignored.append(Ignored(name, why))
    _store_rejects(store, dump_rejects, report)
    with tempfile.TemporaryDirectory(prefix="paretolens-dump-") as work:
        for gid in sorted(set(rows) | set(evals)):
            run_dir = Path(work) / str(gid)
            for table, items, wrap in (
                ("benchmark_results", rows.get(gid, []), False),
                ("eval_results", evals.get(gid, []), True),
            ):
                if items:
                    (run_dir / table).mkdir(parents=True)
                for bid, agg in items:
                    (run_dir / table / f"{bid}.json").write_text(
                        json.dumps([agg] if wrap else agg, sort_keys=True)
                    )
            part = ingest_paths([run_dir], store, run_id=str(gid), run_meta=dict(latest[gid].meta))
            _merge(report, part)
    report.rejected.extend(dump_rejects)
    return report


def _store_rejects(store: Store, rejects: list[Reject], report: IngestReport) -> None:
    """Record the dump-level rejects (and ignored rows) of known runs before their runs are
    ingested, so the catalog's reject counts include them."""
    known = [r for r in rejects if r.run_id and is_valid_run_id(r.run_id)]
    skipped = [i for i in report.ignored if i.run_id and is_valid_run_id(i.run_id)]
    if not known and not skipped:
        return
    now = datetime.now(UTC)
    with store.lock():
        store.add_rejects(
            pl.DataFrame(
                [
                    {
                        RejectCol.RUN_ID: r.run_id,
                        RejectCol.PATH: r.path,
                        RejectCol.SHA256: "",
                        RejectCol.READER: r.reader,
                        RejectCol.FIELD: r.field,
                        RejectCol.REASON: r.reason,
                        RejectCol.AT: now,
                        RejectCol.OUTCOME: "rejected",
                    }
                    for r in known
                ]
                + [
                    {
                        RejectCol.RUN_ID: i.run_id,
                        RejectCol.PATH: i.path,
                        RejectCol.SHA256: "",
                        RejectCol.READER: READER,
                        RejectCol.FIELD: "",
                        RejectCol.REASON: i.reason,
                        RejectCol.AT: now,
                        RejectCol.OUTCOME: "ignored",
                    }
                    for i in skipped
                ]
            )
        )
    for rid in dict.fromkeys(r.run_id for r in known):
        if rid not in report.runs:
            report.runs.append(rid)


def _merge(into: IngestReport, part: IngestReport) -> None:
    for rid in part.runs:
        if rid not in into.runs:
            into.runs.append(rid)
    into.accepted += part.accepted
    into.duplicates += part.duplicates
    into.rejected.extend(part.rejected)
    into.ignored.extend(part.ignored)
    into.notes.extend(part.notes)
    into.accepted_files.extend(part.accepted_files)
    into.duplicate_files.extend(part.duplicate_files)
    into.auxiliary.extend(part.auxiliary)

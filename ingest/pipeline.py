"""Ingest: inputs -> units -> readers -> canonical rows -> the store.

The batch is read and normalised entirely before the store is touched; then, under the store lock,
each run's file is rewritten once. A file that yields nothing keeps whatever the store already had
from it. Every file is accounted for: stored, duplicate, ignored (auxiliary, with why) or rejected
(with the field and the reason).


The rooms: `ingest.report` (outcomes), `ingest.reading` (units through readers), `ingest.rows`
(joining auxiliaries, normalising), `ingest.defaults` (`--set` and paretolens.yaml), `ingest.store`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from ingest.changelog import run_changelog
from ingest.contract.col import Col
from ingest.contract.evals_schema import EvalCol
from ingest.contract.schema import RejectCol, RunCol, SeriesCol, empty_points
from ingest.defaults import account_local, check_defaults, read_local_defaults, split_run_keys
from ingest.errors import ParseError
from ingest.eval_rows import eval_frame
from ingest.eval_store import read_evals
from ingest.normalize.measurements import KEY_COLUMNS, merge_measurements, repeats_of
from ingest.reading import read_unit
from ingest.report import Ignored, IngestReport, Reject
from ingest.rows import build_rows
from ingest.run_ids import check_run_id
from ingest.sources.artifacts import Collected, collect_all
from ingest.sources.run_meta import run_metas
from ingest.sources.workspace import workspace
from ingest.store import Store

__all__ = [
    "ingest_paths",
]

Row = dict[str, Any]


def _account(c: Collected, run_id: str, report: IngestReport) -> None:
    """Name an outcome for every file of the input that has none yet (none is left unsaid)."""
    said: set[str] = set()
    for outs in (report.accepted_files, report.auxiliary):
        said.update(o.path for o in outs if o.run_id == run_id)
    said.update(r.path.split("#", 1)[0] for r in report.rejected if r.run_id == run_id)
    said.update(r.path for r in report.rejected if r.run_id == run_id)
    said.update(i.path for i in report.ignored if i.run_id == run_id)
    for unit in c.units:
        for f in unit.files:
            if f.rel in said:
                continue
            if unit.name in said:
                why = f"not read on its own: it belongs to {unit.name}, which was rejected"
            else:
                why = "read, but no reader took anything from it: nothing stored"
            report.ignored.append(Ignored(f.rel, why, run_id))
            said.add(f.rel)


def ingest_paths(
    paths: Sequence[Path],
    store: Store,
    run_id: str | None = None,
    run_meta: dict[str, Any] | None = None,
    progress: Callable[[int, int], None] | None = None,
    defaults: Mapping[str, Any] | None = None,
    defaults_from: str = "the defaults",
) -> IngestReport:
    """Ingest files, directories and zips into the store.

    Args:
        paths: inputs; each becomes its own run unless `run_id` is given.
        store: the target store.
        run_id: put every point under this run id.
        run_meta: catalog fields for the run(s) (repo, branch, head_sha, title, ...); they win
            over a `.run.json` at the top of an input directory (`ingest.sources.run_meta`).
        progress: called with (done, total) units as reading proceeds.
        defaults: canonical column -> value, for what the files do not say (the plan of a job
            the runner launched; ``--set key=value``). A default fills a column that the readers
            (and sidecars) left null, before normalisation, so it counts in the arm identity. A
            file's own value is kept; where it differs from the default, the point gets a warning
            naming both (also in ``report.notes``).
        defaults_from: how warnings name the defaults, e.g. "the job's plan".

    Returns:
        The report: runs touched, points accepted, duplicates skipped, rejects, ignored files.

    Raises:
        InvalidRunId: when `run_id`, or an input's default id (its directory's name), breaks
            the run id rule (`ingest.store.RUN_ID_RULE`); nothing is stored then.
        SchemaError: when a default is not a canonical column a default may set, or its value
            does not fit the column (nothing is read or stored then).
    """
    point_defaults, set_run = split_run_keys(defaults or {})
    given = check_defaults(point_defaults)
    report = IngestReport()
    now = datetime.now(UTC)
    per_run: dict[str, tuple[list[pl.DataFrame], list[Row]]] = {}
    per_run_evals: dict[str, list[pl.DataFrame]] = {}
    changelogs: dict[str, list[dict[str, Any]]] = {}
    yaml_run: dict[str, dict[str, str]] = {}
    if run_id is not None:
        check_run_id(run_id)
    with workspace() as work:
        collected = collect_all([Path(p) for p in paths], work, run_id)
        # Nothing is read or written under an id the dashboard could not link to.
        for rid, _ in collected:
            check_run_id(rid)
        total = sum(len(c.units) for _, c in collected)
        done = 0
        for rid, c in collected:
            for prob in c.problems:
                report.rejected.append(Reject(rid, prob.rel, prob.reason, prob.field, "artifacts"))
            for name in c.superseded:
                report.ignored.append(
                    Ignored(
                        name,
                        "superseded: a newer retry of the same artifact, or a byte-identical "
                        "copy of a run-level artifact",
                        rid,
                    )
                )
            c, local, run_keys = read_local_defaults(c, rid, report)
            yaml_run[rid] = {**run_keys, **yaml_run.get(rid, {})}
            try:
                log = run_changelog([f for unit in c.units for f in unit.files])
            except ParseError as exc:
                report.rejected.append(Reject(rid, exc.path, exc.reason, exc.field, "changelog"))
                log = None
            if log is not None:
                changelogs[rid] = log
            outs = []
            for unit in c.units:
                outs.append(read_unit(unit, rid, report))
                done += 1
                if progress:
                    progress(done, total)
            rows, series = build_rows(outs, rid, now, report, given, defaults_from, local)
            per_run_evals.setdefault(rid, []).append(eval_frame(outs, rid, report))
            account_local(local, rid, report)
            _account(c, rid, report)
            acc = per_run.setdefault(rid, ([], []))
            acc[0].append(rows)
            acc[1].extend(series)
            if rid not in report.runs:
                report.runs.append(rid)
        metas = run_metas(
            paths, report.runs, run_id, {**(run_meta or {}), **set_run}, report, yaml_run
        )
    _store(store, per_run, report, metas, now, per_run_evals)
    for rid, entries in changelogs.items():
        store.write_changelog(rid, entries)
    return report


def _store(
    store: Store,
    per_run: dict[str, tuple[list[pl.DataFrame], list[Row]]],
    report: IngestReport,
    metas: dict[str, dict[str, Any]],
    now: datetime,
    evals: dict[str, list[pl.DataFrame]] | None = None,
) -> None:
    # On a conflict with another writer the body runs again on the newer version: what it
    # reports is reset first, so duplicates are counted against what is stored then.
    saved = (report.duplicates, report.accepted, report.accepted_files, report.duplicate_files)

    def body() -> None:
        report.duplicates, report.accepted = saved[0], saved[1]
        report.accepted_files, report.duplicate_files = list(saved[2]), list(saved[3])
        _store_runs(store, per_run, report, metas, now, evals)

    store.transaction(body)


def _store_runs(
    store: Store,
    per_run: dict[str, tuple[list[pl.DataFrame], list[Row]]],
    report: IngestReport,
    metas: dict[str, dict[str, Any]],
    now: datetime,
    evals: dict[str, list[pl.DataFrame]] | None,
) -> None:
    for rid in report.runs:
        meta = metas.get(rid, {})
        frames, series = per_run.get(rid, ([], []))
        rows = pl.concat(frames) if frames else empty_points()
        new_rows = rows.filter(~_already_stored(store, rid, rows))
        paths: list[str] = rows.get_column(Col.SOURCE_PATH).to_list()
        report.duplicates += rows.height - new_rows.height
        # The files read now replace what the store had from them (before any merge names a
        # stored file as the source of a merged point).
        replaced = sorted(set(new_rows.get_column(Col.SOURCE_PATH).to_list()))
        new_rows, renamed, taken = _merge_with_stored(store, rid, new_rows, report)
        report.accepted += taken
        if renamed:
            _follow(report, rid, renamed)
            series = [
                {**s, SeriesCol.POINT_ID: renamed.get(s[SeriesCol.POINT_ID], s[SeriesCol.POINT_ID])}
                for s in series
            ]
        fresh = set(new_rows.get_column(Col.POINT_ID).to_list())
        mine = [o for o in report.accepted_files if o.run_id == rid]
        # (an eval file's outcome has no point ids: `_store_evals` decides it)
        stale = [o for o in mine if o.point_ids and not fresh.intersection(o.point_ids)]
        if stale:
            report.duplicate_files.extend(stale)
            report.accepted_files = [o for o in report.accepted_files if o not in stale]
        if new_rows.height:
            new_ids = set(new_rows.get_column(Col.POINT_ID).to_list())
            sframe = (
                pl.DataFrame(
                    [
                        {k: _safe(v) if isinstance(v, str) else v for k, v in s.items()}
                        for s in series
                        if s[SeriesCol.POINT_ID] in new_ids
                    ]
                )
                if series
                else pl.DataFrame()
            )
            store.replace_run_rows(rid, new_rows, sframe, replaced, renamed)
        # Every file read now has no old rejects, also one whose rows are already stored: an
        # ingest killed between the two writes left its stale reject behind.
        eval_paths = _store_evals(store, rid, (evals or {}).get(rid, []), report)
        store.clear_rejects(rid, sorted(set(paths) | eval_paths))
        rej = [r for r in report.rejected if r.run_id == rid]
        store.add_rejects(
            pl.DataFrame(
                [
                    {
                        RejectCol.RUN_ID: r.run_id,
                        RejectCol.PATH: _safe(r.path),
                        RejectCol.SHA256: r.sha256,
                        RejectCol.READER: _safe(r.reader),
                        RejectCol.FIELD: _safe(r.field),
                        RejectCol.REASON: _safe(r.reason),
                        RejectCol.AT: now,
                        RejectCol.OUTCOME: "rejected",
                    }
                    for r in rej
                ]
                + [
                    {
                        RejectCol.RUN_ID: rid,
                        RejectCol.PATH: _safe(i.path),
                        RejectCol.SHA256: "",
                        RejectCol.READER: "",
                        RejectCol.FIELD: "",
                        RejectCol.REASON: _safe(i.reason),
                        RejectCol.AT: now,
                        RejectCol.OUTCOME: "ignored",
                    }
                    for i in report.ignored
                    if i.run_id == rid
                ]
            )
        )
        points = store.scan_points([rid]).select(pl.len()).collect().item()
        rejects = (
            store.rejects([rid])
            .filter(pl.col(RejectCol.OUTCOME).fill_null("rejected") != "ignored")
            .height
        )
        entry: dict[str, Any] = {
            RunCol.RUN_ID: rid,
            RunCol.SOURCE: meta.get(RunCol.SOURCE, "local"),
            RunCol.INGESTED_AT: now,
            RunCol.POINT_COUNT: points,
            RunCol.REJECT_COUNT: rejects,
        }
        for k in RunCol:
            if k in meta and k not in entry:
                entry[k] = meta[k]
        store.upsert_run(entry)


def _already_stored(store: Store, rid: str, rows: pl.DataFrame) -> pl.Series:
    """Which of `rows` the run holds already: a row whose file (path and content) or content
    is stored, or a point made of repeats every one of which is stored (a measurement is
    stored as a point or as a repeat that a stored point holds)."""
    existing = (
        store.scan_points([rid])
        .select(Col.SOURCE_PATH, Col.SOURCE_SHA256, Col.POINT_ID, Col.METADATA)
        .collect()
    )
    if existing.height == 0:
        return pl.Series([False] * rows.height, dtype=pl.Boolean)
    known = set(existing.select(Col.SOURCE_PATH, Col.SOURCE_SHA256).rows())
    known_sha = {s for _, s in known}
    ids = set(existing.get_column(Col.POINT_ID).to_list())
    for raw in existing.get_column(Col.METADATA).to_list():
        ids.update(str(m.get("point_id")) for m in repeats_of(raw))
    out = []
    for path, sha, meta in rows.select(Col.SOURCE_PATH, Col.SOURCE_SHA256, Col.METADATA).rows():
        held = [m.get("point_id") for m in repeats_of(meta)]
        if held and all(h is not None for h in held):
            out.append(all(str(h) in ids for h in held))
        else:
            out.append((path, sha) in known or sha in known_sha)
    return pl.Series(out, dtype=pl.Boolean)


def _merge_with_stored(
    store: Store, rid: str, new_rows: pl.DataFrame, report: IngestReport
) -> tuple[pl.DataFrame, dict[str, str], int]:
    """Apply the one-measurement rule (`ingest.normalize.measurements`) across ingests: the new
    rows together with the stored points of the run at the same configuration and load, so a
    copy or a repeat that arrives in a later ingest (or in a concurrent one) ends as it would
    have in one ingest of everything.

    Returns:
        The rows to write, {point id (stored or new) -> the point that now holds it}, and how
        many points the run gains.
    """
    if new_rows.height == 0:
        return new_rows, {}, 0
    sources = new_rows.get_column(Col.SOURCE_PATH).unique().to_list()
    keys = new_rows.select(KEY_COLUMNS).unique()
    near = (
        store.scan_points([rid])
        .join(keys.lazy(), on=list(KEY_COLUMNS), how="semi", nulls_equal=True)
        .collect()
    )
    mine = pl.col(Col.SOURCE_PATH).is_in(sources)
    # The stored points of the files read now are replaced; those whose measurement a new
    # point holds (a concurrent ingest stored it alone) do not count as points gained.
    holds = {
        str(m.get("point_id"))
        for raw in new_rows.get_column(Col.METADATA).to_list()
        for m in repeats_of(raw)
    }
    subsumed = near.filter(mine & pl.col(Col.POINT_ID).is_in(list(holds))).height
    stored = near.filter(~mine)
    if stored.height == 0:
        return new_rows, {}, new_rows.height - subsumed
    # A measurement that a stored point already holds as one of its repeats is a duplicate.
    held = {
        str(m.get("point_id"))
        for raw in stored.get_column(Col.METADATA).to_list()
        for m in repeats_of(raw)
    }
    again = new_rows.get_column(Col.POINT_ID).is_in(list(held))
    if again.any():
        report.duplicates += int(again.sum())
        new_rows = new_rows.filter(~again)
        if new_rows.height == 0:
            return new_rows, {}, 0
    stored = stored.select([c for c in new_rows.columns if c in stored.columns])
    both = pl.concat([stored, new_rows], how="diagonal_relaxed")
    merged = merge_measurements(both)
    report.notes.extend(Ignored(path, why, rid) for path, why in merged.notes)
    old_ids = set(stored.get_column(Col.POINT_ID).to_list())
    renamed = {k: v for k, v in merged.moved.items() if k != v}
    # A stored point that the merge left as it was stays; one it replaced goes.
    kept = merged.frame.filter(~pl.col(Col.POINT_ID).is_in(list(old_ids)))
    gone = {i: renamed.get(i, i) for i in old_ids if i in renamed}
    for i in old_ids - set(gone):
        renamed.pop(i, None)
    renamed.update(gone)
    return kept, renamed, merged.frame.height - stored.height - subsumed


def _follow(report: IngestReport, rid: str, renamed: dict[str, str]) -> None:
    """Point the files' outcomes at the points that now hold their measurements."""
    for outs in (report.accepted_files, report.auxiliary):
        for i, o in enumerate(outs):
            if o.run_id == rid and any(p in renamed for p in o.point_ids):
                ids = tuple(dict.fromkeys(renamed.get(p, p) for p in o.point_ids))
                outs[i] = replace(o, point_ids=ids)


def _store_evals(
    store: Store, rid: str, frames: list[pl.DataFrame], report: IngestReport
) -> set[str]:
    """Write a run's eval rows (each file's rows replace what the store had from it); a file
    whose rows are all stored already, from the same bytes, is a duplicate. Returns the files."""
    frame = pl.concat([f for f in frames if f.height]) if any(f.height for f in frames) else None
    if frame is None:
        return set()
    files = frame.get_column(EvalCol.SOURCE_PATH).str.split("#").list.first()
    frame = frame.with_columns(files.alias("__file"))
    old = read_evals(store, [rid])
    known = set(
        zip(
            old.get_column(EvalCol.SOURCE_PATH).str.split("#").list.first().to_list(),
            old.get_column(EvalCol.SOURCE_SHA256).to_list(),
            strict=True,
        )
    )
    shas = dict(zip(frame["__file"].to_list(), frame[EvalCol.SOURCE_SHA256].to_list(), strict=True))
    same = {f for f, sha in shas.items() if (f, sha) in known}
    dup = [
        o for o in report.accepted_files if o.run_id == rid and not o.point_ids and o.path in same
    ]
    if dup:
        report.duplicate_files.extend(dup)
        report.accepted_files = [o for o in report.accepted_files if o not in dup]
    new = frame.filter(~pl.col("__file").is_in(sorted(same))).drop("__file")
    if new.height:
        store.replace_run_evals(rid, new)
    return set(shas)


def _safe(text: str) -> str:
    """Text Arrow can store: a lone surrogate (a JSON "\\ud800" escape in a hostile file, echoed
    in a reason or a label) is written as its escape instead of failing the whole batch."""
    if text.isascii():
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")

"""The store's Delta Lake table: where it lives, its layout, snapshots, commits and history.

A store is one Delta table (`<store>/delta`) holding five logical tables, `points`,
`timeseries`, `runs` (the catalog), `rejects` and `evals`, partitioned by `table` and then by
`run_id`. Delta Lake has no transaction across tables; one table makes every change of a store,
however many runs and logical tables it touches, one commit (one log entry): readers see all of
it or none of it, whatever happens to the writer. A logical table's column `c` is stored as
`<table>__c` (its run id as `<table>__run_id` too); `run_id` and `table` are the partition
values, so reading one run opens only that run's files, and the run id itself names its
partition: two run ids never share a file. A read of many runs is one scan of their files.

A reader takes a `Snapshot` (the table's version and its files at that version) and reads only
from it, so one read never mixes two versions; a writer replaces whole partitions by predicate,
and delta-rs's commit protocol refuses a commit whose partitions another writer changed since
its snapshot (`ConflictError`): `ingest.store` then rebuilds the change on the new version.

Remote stores are URIs (`s3://`, `gs://`, `az://`/`abfss://`); delta-rs and polars read the
cloud SDKs' usual environment variables (`AWS_*`, `GOOGLE_*`, `AZURE_*`). On S3, concurrent
writers need a commit primitive that S3 lacks by itself: `conditional_put` (S3's If-None-Match,
the default here) or a DynamoDB lock (`AWS_S3_LOCKING_PROVIDER=dynamodb`); see
`docs/deployment.md`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl
import pyarrow as pa

from ingest.contract.derived import no_rows
from ingest.contract.evals_schema import EVALS_SCHEMA
from ingest.contract.schema import POINTS_SCHEMA, REJECTS_SCHEMA, RUNS_SCHEMA, TIMESERIES_SCHEMA

if TYPE_CHECKING:
    from deltalake import DeltaTable

TABLE_DIR = "delta"
TABLE_COL = "table"
RUN_COL = "run_id"
PARTITIONS = [TABLE_COL, RUN_COL]
SCHEMAS: dict[str, pa.Schema] = {
    "points": POINTS_SCHEMA,
    "timeseries": TIMESERIES_SCHEMA,
    "runs": RUNS_SCHEMA,
    "rejects": REJECTS_SCHEMA,
    "evals": EVALS_SCHEMA,
}
REMOTE_SCHEMES = ("s3://", "s3a://", "gs://", "gcs://", "az://", "abfs://", "abfss://")
# Metadata keys of a commit (`paretolens store log`).
META_ACTION, META_RUNS, META_SOURCE = "paretolens.action", "paretolens.runs", "paretolens.source"


def stored_name(table: str, column: str) -> str:
    """The Delta column holding a logical table's column (its run id too: the partition value
    lives in the log, and a copy in the files lets one scan read many runs' files)."""
    return f"{table}__{column}"


def _lake_schema() -> pa.Schema:
    fields = [pa.field(TABLE_COL, pa.string()), pa.field(RUN_COL, pa.string())]
    for table, schema in SCHEMAS.items():
        fields += [f.with_name(stored_name(table, f.name)) for f in schema]
    return pa.schema(fields)


LAKE_SCHEMA = _lake_schema()


@functools.cache
def _file_schema() -> pl.Schema:
    """The columns of a data file (the partition columns live in the log, not in the files)."""
    empty = pl.from_arrow(no_rows(LAKE_SCHEMA))
    assert isinstance(empty, pl.DataFrame)
    return pl.Schema({k: v for k, v in empty.schema.items() if k not in PARTITIONS})


def is_remote(uri: str) -> bool:
    """Whether a store location is an object-storage URI rather than a local path."""
    return uri.lower().startswith(REMOTE_SCHEMES)


def table_uri(store_uri: str) -> str:
    """Where a store's Delta table lives."""
    return f"{store_uri.rstrip('/')}/{TABLE_DIR}"


def storage_options(uri: str) -> dict[str, str]:
    """Options for delta-rs and polars beyond the environment's credentials.

    On S3 without a lock provider, commits use S3's conditional put (If-None-Match), which two
    writers on two machines need to never overwrite each other's log entry.
    """
    if not uri.lower().startswith(("s3://", "s3a://")):
        return {}
    if os.environ.get("AWS_S3_LOCKING_PROVIDER") or os.environ.get("AWS_CONDITIONAL_PUT"):
        return {}
    return {"conditional_put": "etag"}


def local_workdir(uri: str) -> Path:
    """A local folder for what a remote store keeps per machine (runner jobs, download cache)."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "paretolens" / "stores" / hashlib.sha256(uri.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Snapshot:
    """One version of the table: its data files by (table, run id). Version -1: no table yet.
    `table` is the table object a writer commits through (a reader's snapshot has none)."""

    version: int
    files: Mapping[tuple[str, str], tuple[str, ...]]
    uri: str
    options: Mapping[str, str]
    table: DeltaTable | None

    def runs_of(self, table: str) -> list[str]:
        """Run ids with files in a logical table."""
        return sorted(r for t, r in self.files if t == table)

    def scan(self, table: str, runs: Iterable[str] | None) -> pl.LazyFrame | None:
        """The rows of a logical table (of the given runs), as its own schema; None if none."""
        wanted = self.runs_of(table) if runs is None else runs
        uris = [u for run in dict.fromkeys(wanted) for u in self.files.get((table, run), ())]
        if not uris:
            return None
        # One scan over every file (files written before a column joined the schema read it as
        # null; a column dropped since is ignored).
        lf = pl.scan_parquet(
            uris,
            schema=_file_schema(),
            missing_columns="insert",
            extra_columns="ignore",
            storage_options=dict(self.options) or None,
        )
        return lf.select(pl.col(stored_name(table, f.name)).alias(f.name) for f in SCHEMAS[table])


def open_table(uri: str, version: int | None = None) -> DeltaTable | None:
    """The store's Delta table (at a version), or None when it does not exist yet."""
    from deltalake import DeltaTable
    from deltalake.exceptions import TableNotFoundError

    try:
        return DeltaTable(table_uri(uri), version=version, storage_options=storage_options(uri))
    except TableNotFoundError:
        return None


def snapshot_of(uri: str, dt: DeltaTable | None, with_table: bool = True) -> Snapshot:
    """The files of `dt`'s current version, grouped by partition (`with_table`: the snapshot
    holds `dt`, to commit through; a reader's holds none)."""
    opts = storage_options(uri)
    if dt is None:
        return Snapshot(-1, {}, uri, opts, None)
    # Straight into polars (Arrow's C interface): through pyarrow, the actions' timezone-aware
    # modification times would import pandas where it is installed (0.2-0.3 s).
    actions = pl.DataFrame(dt.get_add_actions(flatten=True))
    files: dict[tuple[str, str], tuple[str, ...]] = {}
    if actions.height:
        # The URIs polars opens as they are, by data file name (a UUID): an action's path
        # escapes the partition folder's name once more than the object's key does.
        name = pl.col("uri").str.split("/").list.last()
        uris = pl.DataFrame({"uri": dt.file_uris()}, schema={"uri": pl.String})
        grouped = (
            actions.select(
                pl.col("path").str.split("/").list.last().alias("name"),
                pl.col(f"partition.{TABLE_COL}").alias("t"),
                pl.col(f"partition.{RUN_COL}").alias("r"),
            )
            .join(uris.with_columns(name.alias("name")), on="name", how="left")
            .group_by("t", "r")
            .agg(pl.col("uri").sort())
        )
        for table, run, found in grouped.iter_rows():
            if None in found:
                raise RuntimeError(f"a data file of {table}/{run} has no URI in the table's log")
            files[(table, run)] = tuple(found)
    table = dt if with_table else None
    return Snapshot(dt.version(), files, uri, opts, table)


def _repeated(value: str, n: int) -> pa.Array:
    """`value` n times as an Arrow string array, from its buffers: `pa.array` of Python values
    imports pandas where it is installed (0.2-0.3 s of an ingest)."""
    data = value.encode()
    offsets = (np.arange(n + 1, dtype=np.int32) * len(data)).tobytes()
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data * n))


def to_lake(table: str, frame: pa.Table) -> pa.Table:
    """A logical table's rows (already in its schema) as rows of the Delta table."""
    n = frame.num_rows
    cols: list[pa.Array | pa.ChunkedArray] = []
    for f in LAKE_SCHEMA:
        if f.name == TABLE_COL:
            cols.append(_repeated(table, n))
        elif f.name == RUN_COL:
            run = frame.column(RUN_COL)  # (an Arrow cast imports pyarrow.compute: 30 ms)
            cols.append(run if run.type == pa.string() else run.cast(pa.string()))
        elif f.name.startswith(f"{table}__"):
            cols.append(frame.column(f.name[len(table) + 2 :]))
        else:
            cols.append(pa.nulls(n, type=f.type))
    return pa.Table.from_arrays(cols, schema=LAKE_SCHEMA)


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def predicate(parts: Iterable[tuple[str, str]]) -> str:
    """The SQL predicate naming whole partitions (what a commit replaces)."""
    by_table: dict[str, list[str]] = {}
    for table, run in sorted(set(parts)):
        by_table.setdefault(table, []).append(run)
    terms = [
        f"({TABLE_COL} = {_quote(t)} AND {RUN_COL} IN ({', '.join(_quote(r) for r in runs)}))"
        for t, runs in by_table.items()
    ]
    return " OR ".join(terms)


def _os_error(exc: Exception) -> OSError:
    """A delta-rs failure as the OSError it reports ('... (os error 28)' -> ENOSPC)."""
    if isinstance(exc, OSError) and exc.errno:
        return exc
    text = str(exc).strip()
    found = re.search(r"os error (\d+)", text)
    code = int(found.group(1)) if found else 0
    what = os.strerror(code) if code else (text.splitlines()[0] if text else type(exc).__name__)
    return OSError(code, what)


class ConflictError(Exception):
    """Another writer committed to the same partitions since this writer's snapshot."""


def commit(
    snap: Snapshot,
    parts: Mapping[tuple[str, str], pa.Table],
    meta: Mapping[str, str],
) -> int:
    """Replace the named partitions with the given rows (an empty table: delete it) in one commit.

    Returns:
        The new version.

    Raises:
        ConflictError: another writer changed one of these partitions after `snap`.
    """
    from deltalake import CommitProperties, write_deltalake
    from deltalake.exceptions import CommitFailedError, DeltaError

    data = pa.concat_tables([to_lake(t, rows) for (t, _), rows in sorted(parts.items())])
    opts = dict(snap.options) or None
    creating = snap.table is None
    if creating and snap.version >= 0:
        raise ValueError("a commit needs a writer's snapshot (one that holds its table object)")
    # Creating the table: no retry, since delta-rs would retry a create that lost the race as
    # an append of the same rows on top of the winner's.
    props = CommitProperties(custom_metadata=dict(meta), max_commit_retries=0 if creating else 20)
    try:
        if snap.table is None:
            write_deltalake(
                table_uri(snap.uri),
                data,
                mode="error",  # a table another writer created meanwhile: a conflict
                partition_by=PARTITIONS,
                storage_options=opts,
                configuration={"delta.dataSkippingNumIndexedCols": "0"},
                commit_properties=props,
            )
        else:
            write_deltalake(
                snap.table,
                data,
                mode="overwrite",
                predicate=predicate(parts),
                schema_mode="merge",  # a column added to the contract joins the table
                partition_by=PARTITIONS,
                commit_properties=props,
            )
    except CommitFailedError as exc:
        raise ConflictError(str(exc)) from exc
    except (DeltaError, OSError) as exc:
        if creating and open_table(snap.uri) is not None:
            raise ConflictError(str(exc)) from exc
        raise _os_error(exc) from exc
    if snap.table is not None:
        # delta-rs moves the table object to the version it committed (over any commits of
        # other writers it retried on): no second read of the log
        return snap.table.version()
    dt = open_table(snap.uri)
    assert dt is not None
    return dt.version()


@dataclass(frozen=True)
class Commit:
    """One entry of `paretolens store log`."""

    version: int
    at: datetime
    action: str
    runs: tuple[str, ...]
    source: str
    rows: int


def history(uri: str, limit: int | None = None) -> list[Commit]:
    """The table's commits, newest first."""
    dt = open_table(uri)
    if dt is None:
        return []
    out = []
    for h in dt.history(limit):
        runs = h.get(META_RUNS)
        metrics = h.get("operationMetrics") or {}
        out.append(
            Commit(
                version=int(h["version"]),
                at=datetime.fromtimestamp(int(h["timestamp"]) / 1000, UTC),
                action=str(h.get(META_ACTION) or h.get("operation", "")).lower(),
                runs=tuple(json.loads(runs)) if isinstance(runs, str) else (),
                source=str(h.get(META_SOURCE) or ""),
                rows=int(metrics.get("num_added_rows", 0) or 0),
            )
        )
    return out


def restore(uri: str, version: int, meta: Mapping[str, str]) -> int:
    """Make the table hold what it held at `version` (a new commit; history is kept).

    Returns:
        The new version.
    """
    from deltalake import CommitProperties

    dt = open_table(uri)
    if dt is None:
        raise ValueError(f"the store at {uri} has no table yet: there is nothing to restore")
    if not 0 <= version <= dt.version():
        raise ValueError(
            f"version {version} is not in the store at {uri} (versions 0 to {dt.version()}); "
            "see `paretolens store log`"
        )
    dt.restore(version, commit_properties=CommitProperties(custom_metadata=dict(meta)))
    return dt.version()


# How long a replaced or deleted data file is kept before `vacuum` may delete it: Delta Lake's
# own default (`delta.deletedFileRetentionDuration`, one week). `store undo` can go back to any
# version that was current within this window, since every file such a version reads is kept.
RETENTION_HOURS = 168


def vacuum(uri: str, retention_hours: int, dry_run: bool, meta: Mapping[str, str]) -> list[str]:
    """The data files no version within the last `retention_hours` reads (deleted unless
    `dry_run`), as paths inside the table. A retention under the table's own one
    (`RETENTION_HOURS` unless the table says otherwise) is taken as given: the caller has said so.

    Raises:
        ValueError: the store has no table yet, or a negative retention.
    """
    from deltalake import CommitProperties

    if retention_hours < 0:
        raise ValueError(f"the retention must be 0 hours or more, not {retention_hours}")
    dt = open_table(uri)
    if dt is None:
        raise ValueError(f"the store at {uri} has no table yet: there is nothing to vacuum")
    return sorted(
        dt.vacuum(
            retention_hours=retention_hours,
            dry_run=dry_run,
            enforce_retention_duration=False,
            commit_properties=CommitProperties(custom_metadata=dict(meta)),
        )
    )


def encode_runs(runs: Sequence[str]) -> str:
    """The run ids of a commit as its metadata holds them."""
    return json.dumps(sorted(set(runs)))


def empty_like(table: str) -> pa.Table:
    """No rows of a logical table."""
    return no_rows(SCHEMAS[table])


__all__ = [
    "LAKE_SCHEMA",
    "SCHEMAS",
    "Commit",
    "ConflictError",
    "Snapshot",
    "commit",
    "history",
    "is_remote",
    "open_table",
    "restore",
    "snapshot_of",
    "storage_options",
    "table_uri",
    "vacuum",
]

"""Convert a store written before Delta Lake (`runs.parquet`, `rejects.parquet`,
`points|timeseries|evals/run=<key>.parquet`) into the Delta table, in one commit.

Every row lands in the partition of the run id it carries, not of the file it was in: in the old
layout two run ids could share a file (`b64-YTpi` was both its own key and the key of `a:b`), and
such a file's rows are split back into their runs (`UpgradeReport.shared_files` names them). The
old files are moved to `legacy/` once the commit is in, so a second upgrade finds nothing to do.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from ingest.frames import _conform
from ingest.lake import delta
from ingest.run_ids import run_key
from ingest.store import Store

OLD_FILES = ("runs.parquet", "rejects.parquet")
OLD_DIRS = ("points", "timeseries", "evals")
_TABLE_OF_DIR = {"points": "points", "timeseries": "timeseries", "evals": "evals"}


@dataclass
class UpgradeReport:
    """What `upgrade` converted."""

    runs: int = 0
    rows: dict[str, int] = field(default_factory=dict)
    shared_files: list[str] = field(default_factory=list)  # files holding rows of several runs
    version: int = -1


def _read(path: Path, table: str) -> pl.DataFrame:
    df = pl.from_arrow(pq.read_table(path))
    assert isinstance(df, pl.DataFrame)
    schema = delta.SCHEMAS[table]
    missing = [f for f in schema if f.name not in df.columns]
    df = df.with_columns(pl.lit(None).alias(f.name) for f in missing)
    return df.select([f.name for f in schema])


def upgrade(root: Path) -> UpgradeReport:
    """Convert the old-layout store at `root` (a local folder) in one commit.

    Raises:
        ValueError: `root` holds no old-layout store, or already holds the Delta table.
    """
    if not any((root / f).exists() for f in OLD_FILES) and not any(
        (root / d).is_dir() for d in OLD_DIRS
    ):
        raise ValueError(f"{root} holds no store in the old Parquet layout: nothing to upgrade")
    if delta.open_table(str(root.absolute())) is not None:
        raise ValueError(f"{root} already holds a Delta store ({root / delta.TABLE_DIR})")
    report = UpgradeReport()
    frames: dict[str, list[pl.DataFrame]] = {t: [] for t in delta.SCHEMAS}
    for name, table in (("runs.parquet", "runs"), ("rejects.parquet", "rejects")):
        if (root / name).exists():
            frames[table].append(_read(root / name, table))
    for d, table in _TABLE_OF_DIR.items():
        for path in sorted((root / d).glob("run=*.parquet")) if (root / d).is_dir() else []:
            df = _read(path, table)
            owners = set(df.get_column("run_id").unique().to_list())
            key = path.name[len("run=") : -len(".parquet")]
            if len(owners) > 1 or any(run_key(str(o)) != key for o in owners):
                report.shared_files.append(f"{d}/{path.name}")
            frames[table].append(df)
    parts = {}
    for table, dfs in frames.items():
        if not dfs:
            continue
        df = pl.concat(dfs, how="vertical_relaxed")
        report.rows[table] = df.height
        for (rid,), part in df.group_by("run_id", maintain_order=True):
            parts[(table, str(rid))] = _conform(part, delta.SCHEMAS[table])
    report.runs = len({r for t, r in parts if t == "runs"})
    st = Store(root)
    meta = {delta.META_ACTION: "upgrade", delta.META_RUNS: delta.encode_runs([r for _, r in parts])}
    if parts:
        delta.commit(delta.snapshot_of(st.uri, None), parts, {**meta, delta.META_SOURCE: "legacy"})
    legacy = root / "legacy"
    legacy.mkdir(exist_ok=True)
    for name in (*OLD_FILES, *OLD_DIRS, ".lock", ".journal.json"):
        if (root / name).exists():
            shutil.move(str(root / name), str(legacy / name))
    report.version = st.version()
    return report

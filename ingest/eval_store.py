"""The `evals` table in the store: `evals/run=<key>.parquet`, one file per run, written through
`Store.replace_run_evals` (under `Store.lock()`, in the store's transaction) and read here.

Kept beside `ingest.store` (which holds the one method that writes it) so the store module stays
small; both go through the store's own `_read`/`_write`, so evals join the same crash-safe
transaction as points and rejects.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import polars as pl
import pyarrow as pa

from ingest.contract.evals_schema import EVALS_SCHEMA, EvalCol
from ingest.run_ids import run_key


class Store(Protocol):
    """What of `ingest.store.Store` the evals table uses (no import: the store imports this)."""

    root: Path

    def run_ids(self) -> list[str]: ...

    def _read(self, path: Path, schema: pa.Schema) -> pl.DataFrame: ...


EVALS_DIR = "evals"


def _conform(frame: pl.DataFrame) -> pa.Table:
    cols = []
    for f in EVALS_SCHEMA:
        arr = (
            frame.get_column(f.name).to_arrow()
            if f.name in frame.columns
            else pa.nulls(frame.height, type=f.type)
        )
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        cols.append(arr.cast(f.type) if arr.type != f.type else arr)
    return pa.Table.from_arrays(cols, schema=EVALS_SCHEMA)


def evals_path(store: Store, run_id: str) -> Path:
    """The file holding a run's eval rows (it may not exist)."""
    return store.root / EVALS_DIR / f"run={run_key(run_id)}.parquet"


def _file_col(col: str) -> pl.Expr:
    """The file of a row's source path (`agg_eval_all.json#3` -> `agg_eval_all.json`)."""
    return pl.col(col).str.split("#").list.first()


def read_evals(store: Store, run_ids: Sequence[str] | None = None) -> pl.DataFrame:
    """The eval rows of the given runs (every run when None)."""
    base = store.root / EVALS_DIR
    if run_ids is None:
        keys = {run_key(r): r for r in store.run_ids()}
        names = sorted(p.name for p in base.glob("run=*.parquet")) if base.exists() else []
        run_ids = [keys[n[4:-8]] for n in names if n[4:-8] in keys]
    frames = [store._read(evals_path(store, r), EVALS_SCHEMA) for r in run_ids]
    frames = [f for f in frames if f.height]
    if not frames:
        df = pl.from_arrow(EVALS_SCHEMA.empty_table())
        assert isinstance(df, pl.DataFrame)
        return df
    return pl.concat(frames)


def replace_evals(
    store: Store,
    run_id: str,
    frame: pl.DataFrame,
    read: Callable[[Path, pa.Schema], pl.DataFrame],
    write: Callable[[pa.Table, Path], None],
) -> None:
    """Replace the rows of `frame`'s files in a run's evals with `frame` (other files' rows are
    kept). `read`/`write` are the store's own, so this joins its transaction."""
    target = evals_path(store, run_id)
    old = read(target, EVALS_SCHEMA)
    new = _conform(frame.with_columns(pl.lit(run_id).alias(EvalCol.RUN_ID)))
    if old.height:
        files = set(frame.select(_file_col(EvalCol.SOURCE_PATH)).to_series().to_list())
        kept = old.filter(~_file_col(EvalCol.SOURCE_PATH).is_in(sorted(files)))
        new = pa.concat_tables([_conform(kept), new]).combine_chunks()
    write(new, target)

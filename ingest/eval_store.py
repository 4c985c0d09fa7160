"""The `evals` table of the store (the `evals` partitions of its Delta table, one per run),
written through `Store.replace_run_evals` and read here.

Kept beside `ingest.store` so the store module stays small; evals are staged with the rest of a
change and land in the same commit as points and rejects.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import polars as pl
import pyarrow as pa

from ingest.contract.evals_schema import EVALS_SCHEMA, EvalCol
from ingest.frames import cast_table


class Store(Protocol):
    """What of `ingest.store.Store` the evals table uses (no import: the store imports this)."""

    def evals(self, run_ids: Sequence[str] | None = None) -> pl.DataFrame: ...


EVALS_DIR = "evals"


def _conform(frame: pl.DataFrame) -> pa.Table:
    cols: list[pa.Array | pa.ChunkedArray] = [
        frame.get_column(f.name).to_arrow()
        if f.name in frame.columns
        else pa.nulls(frame.height, type=f.type)
        for f in EVALS_SCHEMA
    ]
    return cast_table(pa.Table.from_arrays(cols, names=EVALS_SCHEMA.names), EVALS_SCHEMA)


def _file_col(col: str) -> pl.Expr:
    """The file of a row's source path (`agg_eval_all.json#3` -> `agg_eval_all.json`)."""
    return pl.col(col).str.split("#").list.first()


def read_evals(store: Store, run_ids: Sequence[str] | None = None) -> pl.DataFrame:
    """The eval rows of the given runs (every run when None)."""
    return store.evals(run_ids)


def replace_evals(
    run_id: str,
    frame: pl.DataFrame,
    old: pl.DataFrame,
    stage: Callable[[pa.Table], None],
) -> None:
    """Replace the rows of `frame`'s files in a run's evals (`old`) with `frame` (other files'
    rows are kept); `stage` takes the run's new eval rows into the store's change."""
    new = _conform(frame.with_columns(pl.lit(run_id).alias(EvalCol.RUN_ID)))
    if old.height:
        files = set(frame.select(_file_col(EvalCol.SOURCE_PATH)).to_series().to_list())
        kept = old.filter(~_file_col(EvalCol.SOURCE_PATH).is_in(sorted(files)))
        new = pa.concat_tables([_conform(kept), new]).combine_chunks()
    stage(new)

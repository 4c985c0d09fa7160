"""Frames cast to exactly the store's Arrow schemas (used by `ingest.store`, which re-exports
`conform_frame`)."""

from __future__ import annotations

import polars as pl
import pyarrow as pa

from ingest.contract.derived import no_rows
from ingest.contract.schema import POINTS_SCHEMA

# schema id -> (the schema, an empty frame of it, its column names, its polars dtypes). Keyed by
# id: hashing a 124-field Arrow schema costs more than building the empty frame.
_EMPTY: dict[int, tuple[pa.Schema, pl.DataFrame, list[str], list[pl.DataType]]] = {}


def _empty_of(schema: pa.Schema) -> tuple[pa.Schema, pl.DataFrame, list[str], list[pl.DataType]]:
    got = _EMPTY.get(id(schema))
    if got is None or got[0] is not schema:
        made = pl.from_arrow(no_rows(schema))
        assert isinstance(made, pl.DataFrame)
        got = _EMPTY[id(schema)] = (schema, made, made.columns, made.dtypes)
    return got


def _empty(schema: pa.Schema) -> pl.DataFrame:
    return _empty_of(schema)[1].clone()


def _exact(df: pl.DataFrame, schema: pa.Schema) -> bool:
    """The frame already has exactly the schema's columns, in order, with its polars dtypes."""
    _, _, names, dtypes = _empty_of(schema)
    return df.columns == names and df.dtypes == dtypes


def cast_table(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """`table.cast(schema)`: the same safe casts, one chunk per column, done by a record batch
    reader in Arrow's C++ (a table's or an array's `cast` imports `pyarrow.compute`, about 30 ms
    of a command's start-up)."""
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches())
    # (`RecordBatchReader.cast` is pyarrow 16's)
    out = reader.cast(schema).read_all() if hasattr(reader, "cast") else table.cast(schema)
    if any(c.num_chunks != 1 for c in out.columns):
        out = out.combine_chunks()
    return out


def _conform(df: pl.DataFrame, schema: pa.Schema) -> pa.Table:
    """Cast a frame to exactly the given Arrow schema (missing columns become null)."""
    if df.columns == schema.names:
        return cast_table(df.to_arrow(), schema)
    cols: list[pa.Array | pa.ChunkedArray] = []
    for f in schema:
        if f.name in df.columns:
            cols.append(df.get_column(f.name).to_arrow())
        else:
            cols.append(pa.nulls(df.height, type=f.type))
    return cast_table(pa.Table.from_arrays(cols, names=schema.names), schema)


def _polars_overrides(schema: pa.Schema) -> dict[str, pl.DataType]:
    return dict(_empty(schema).schema)


def conform_frame(df: pl.DataFrame, schema: pa.Schema = POINTS_SCHEMA) -> pl.DataFrame:
    """Cast a frame to exactly `schema` (the points schema by default); absent columns are null."""
    if _exact(df, schema):
        return df.clone()
    out = pl.from_arrow(_conform(df, schema))
    assert isinstance(out, pl.DataFrame)
    return out

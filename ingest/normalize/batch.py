"""The batch path: complete and validate a whole ingest batch as one polars frame.

It checks the values' types column by column (`values.clean_column`), does the derivations and
the contract checks as expressions over the batch (`derive.plan`, `rules.RULES`), and sends every
row that any check flags through the one-row `normalize`, so a refused row gets exactly the error
(field and reason) the one-row path gives, and the rest of the batch carries on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from ingest.contract.col import Col
from ingest.contract.derived import extra_metrics
from ingest.contract.schema import polars_schema
from ingest.errors import SchemaError
from ingest.normalize.derive import FLAGGED, POLARS, plan
from ingest.normalize.ids import canonical_columns, hw_pair, identify
from ingest.normalize.row import normalize
from ingest.normalize.values import KIND, NAMES, clean_column

# Set by the pipeline or derived here last; a reader that sets one takes the one-row path.
NOT_FROM_READERS = frozenset(
    str(c)
    for c in (
        Col.RUN_ID,
        Col.SOURCE_PATH,
        Col.SOURCE_SHA256,
        Col.ARTIFACT,
        Col.INGESTED_AT,
        Col.ARM_ID,
        Col.ARM_LABEL,
        Col.POINT_ID,
    )
)


def _nulls(schema: pl.Schema) -> dict[str, pl.Expr]:
    return {c: pl.lit(None, dtype=t).alias(c) for c, t in schema.items()}


_NULLS = _nulls(POLARS)
_INDEX = "__row"


@dataclass
class Batch:
    """What `normalize_batch` made of a batch of partial rows.

    frame: the rows that satisfy the contract, in input order, with every canonical column
        (the points schema's polars dtypes).
    point_ids: per input row, the id of its point (None when it was refused).
    errors: input row index -> why it was refused.
    """

    frame: pl.DataFrame
    point_ids: list[str | None]
    errors: dict[int, SchemaError] = field(default_factory=dict)


def _columns(partials: Sequence[Mapping[str, Any]]) -> list[tuple[str, list[Any]]]:
    """The batch's values column by column: (key, one value per row, None where absent)."""
    first = tuple(partials[0])
    if all(tuple(p) == first for p in partials):
        # Files of one format usually have one layout: transpose at C speed.
        by_row = (p.values() for p in partials)
        return [(k, list(v)) for k, v in zip(first, zip(*by_row, strict=True), strict=True)]
    return [(key, [p.get(key) for p in partials]) for key in set().union(*partials)]


def normalize_batch(
    partials: Sequence[Mapping[str, Any]],
    *,
    run_id: str,
    source_paths: Sequence[str],
    source_sha256s: Sequence[str],
    artifacts: Sequence[str],
    ingested_at: Any,
) -> Batch:
    """Complete and validate a batch of canonical rows: `normalize` over every row, as one frame.

    Args:
        partials: the readers' rows (keys are column names).
        run_id, ingested_at: provenance shared by the batch.
        source_paths, source_sha256s, artifacts: provenance of each row.

    Returns:
        The rows that satisfy the contract as one frame in input order, each row's point id, and
        for each refused row the `SchemaError` that `normalize` raises for it.
    """
    n = len(partials)
    # The points schema, with any derived metric declared beyond the stored columns.
    schema = polars_schema() if extra_metrics() else POLARS
    order = tuple(schema)
    nulls = _NULLS if schema is POLARS else _nulls(schema)
    if not n:
        return Batch(pl.DataFrame(schema=schema), [])
    flagged: set[int] = set()
    data: dict[str, list[Any]] = {}
    for key, vals in _columns(partials):
        name = NAMES.get(key)
        if name is None or name in NOT_FROM_READERS:
            flagged.update(i for i, p in enumerate(partials) if key in p)
            continue
        clean_column(KIND[name], vals, flagged)
        data[name] = vals
    canonical_columns(data, n)
    hw_label, hw = data.get(str(Col.HW_LABEL)), data.get(str(Col.HW))
    if hw_label is not None or hw is not None:
        seen: dict[tuple[str | None, str | None], tuple[str | None, str | None]] = {}
        pairs = zip(hw_label or [None] * n, hw or [None] * n, strict=True)
        out = [seen.get(p) or seen.setdefault(p, hw_pair(*p)) for p in pairs]
        data[str(Col.HW_LABEL)] = [p[0] for p in out]
        data[str(Col.HW)] = [p[1] for p in out]
    data[str(Col.SOURCE_PATH)] = list(source_paths)
    data[str(Col.SOURCE_SHA256)] = list(source_sha256s)
    data[str(Col.ARTIFACT)] = list(artifacts)
    columns = [
        pl.Series(name, vals, dtype=POLARS[name], strict=True) for name, vals in data.items()
    ]
    stamp = str(Col.INGESTED_AT)
    columns.append(
        pl.Series(stamp, [ingested_at], dtype=POLARS[stamp], strict=False).new_from_index(0, n)
    )
    columns.append(pl.Series(str(Col.RUN_ID), [run_id], dtype=pl.String).new_from_index(0, n))
    plan_ = plan(frozenset(data))
    have = {s.name for s in columns}
    # Eager steps: on a frame this wide the lazy optimiser costs more than it saves.
    work = (
        pl.DataFrame(columns)
        .with_row_index(_INDEX)
        .with_columns(nulls[c] for c in sorted(plan_.live - have))
    )
    have |= plan_.live | {_INDEX, FLAGGED}
    for stage in plan_.stages:
        work = work.with_columns(stage)
    if flagged:
        work = work.with_columns(
            (pl.col(FLAGGED) | pl.col(_INDEX).is_in(sorted(flagged))).alias(FLAGGED)
        )
    out_frame = work.with_columns(plan_.violations.alias(FLAGGED)).select(
        pl.col(c) if c in have else nulls[c] for c in (*order, _INDEX, FLAGGED)
    )
    flags = out_frame.get_column(FLAGGED)
    slow = out_frame.filter(flags).get_column(_INDEX).to_list() if flags.any() else []
    point_ids: list[str | None] = [None] * n
    errors: dict[int, SchemaError] = {}
    good = out_frame.filter(~flags) if slow else out_frame
    frame = identify(good, run_id, point_ids, frozenset(have), _INDEX, FLAGGED)
    rows, index = [], []
    for i in slow:
        try:
            row = normalize(
                partials[i],
                run_id=run_id,
                source_path=source_paths[i],
                source_sha256=source_sha256s[i],
                artifact=artifacts[i],
                ingested_at=ingested_at,
            )
        except SchemaError as exc:
            errors[i] = exc
            continue
        rows.append(row)
        index.append(i)
        point_ids[i] = row[Col.POINT_ID]
    if rows:
        by_row = pl.DataFrame(rows, schema=schema, strict=False).with_columns(
            pl.Series(_INDEX, index, dtype=frame.schema[_INDEX])
        )
        frame = pl.concat([frame, by_row]).sort(_INDEX)
    return Batch(
        pl.DataFrame([s for s in frame.get_columns() if s.name != _INDEX]), point_ids, errors
    )

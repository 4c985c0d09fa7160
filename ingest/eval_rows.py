"""The eval rows of one ingest batch: every eval reader result of a run made into one frame of the
`evals` table (run id and arm id added), and each eval file's outcome written to the report.

A file whose rows gave evals is **accepted** (in `ingest --json`, with no point ids), the
`meta_env.json` that gave their configuration is **auxiliary**, and the files of an eval set
that were read and not taken (a superseded result, per-sample logs) are **ignored** with why.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from ingest.contract.derived import no_rows
from ingest.contract.evals_schema import EVALS_SCHEMA, EvalCol
from ingest.normalize.ids import arm_id, canonical_columns
from ingest.reading import UnitOut
from ingest.report import FileOutcome, Ignored, IngestReport

Row = dict[str, Any]


def empty_evals() -> pl.DataFrame:
    """An empty frame with the evals schema."""
    df = pl.from_arrow(no_rows(EVALS_SCHEMA))
    assert isinstance(df, pl.DataFrame)
    return df


def _file_of(source_path: str) -> str:
    """`agg_eval_all.json#3` -> `agg_eval_all.json` (a row of an aggregate names its index)."""
    return source_path.split("#", 1)[0]


def eval_frame(outs: list[UnitOut], run_id: str, report: IngestReport) -> pl.DataFrame:
    """The run's eval rows as one frame; each eval file's outcome goes to `report`."""
    rows: list[Row] = []
    for o in outs:
        for src, res, reader in o.evals:
            files: dict[str, None] = {}
            for r in res.evals:
                row = {str(k): v for k, v in r.items()}
                row[EvalCol.RUN_ID.value] = run_id
                canonical_columns(row)  # the model key, precision and engine as a point's
                row[EvalCol.ARM_ID.value] = arm_id(row)  # the keys it reads are Col values
                rows.append(row)
                files[_file_of(str(row[EvalCol.SOURCE_PATH.value]))] = None
            for rel in files:
                report.accepted_files.append(FileOutcome(run_id, rel, (), reader))
            for rel, why in res.eval_ignored.items():
                report.ignored.append(Ignored(rel, why, run_id))
            for rel in res.consumed:
                if rel not in files and rel not in res.eval_ignored:
                    report.auxiliary.append(FileOutcome(run_id, rel, (), reader))
            if src.rel not in files and src.rel not in res.consumed:
                report.auxiliary.append(FileOutcome(run_id, src.rel, (), reader))
    if not rows:
        return empty_evals()
    frame = pl.DataFrame(rows, schema_overrides=dict(empty_evals().schema), strict=False)
    missing = [c for c in EVALS_SCHEMA.names if c not in frame.columns]
    frame = frame.with_columns(pl.lit(None).alias(c) for c in missing)
    return frame.select(
        pl.col(f.name).cast(dt) for f, dt in zip(EVALS_SCHEMA, empty_evals().dtypes, strict=True)
    )

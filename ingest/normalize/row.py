"""The one-row path: complete and validate one canonical row.

Readers that must refuse one bad element alone (an aggregate array, a JSON Lines file) call it
per row, and the batch path sends it every row a batch check flags, so its errors are the
reference: the coercion (`values`), the derivations (`derive`), the contract (`rules`), the
identity (`ids`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ingest.contract.col import Col
from ingest.errors import SchemaError
from ingest.normalize.derive import derive_row
from ingest.normalize.ids import arm_id, arm_label, point_id
from ingest.normalize.rules import check_row
from ingest.normalize.values import FLOAT64_SET, KIND, NAMES, RECOERCED, coerce_value

Row = dict[str, Any]


def normalize(
    partial: Mapping[str, Any],
    *,
    run_id: str,
    source_path: str,
    source_sha256: str,
    artifact: str,
    ingested_at: Any,
) -> Row:
    """Complete and validate one canonical row.

    Args:
        partial: the reader's row (keys are column names; unknown keys are an error).
        run_id, source_path, source_sha256, artifact, ingested_at: provenance set by the pipeline.

    Returns:
        A row with every canonical column (None where unknown).

    Raises:
        SchemaError: naming the field that breaks the contract.
    """
    row: Row = {}
    for key, value in partial.items():
        col = NAMES.get(key)
        if col is None:
            raise SchemaError(key, "not a canonical column (reader bug)")
        row[col] = coerce_value(col, value)
    row[Col.RUN_ID] = run_id
    row[Col.SOURCE_PATH] = source_path
    row[Col.SOURCE_SHA256] = source_sha256
    row[Col.ARTIFACT] = artifact
    row[Col.INGESTED_AT] = ingested_at
    derive_row(row)
    for col in RECOERCED:
        row[col] = coerce_value(col, row.get(col))
    for col in KIND:
        if col not in row:
            row[col] = None
        elif row[col] is not None and col in FLOAT64_SET:
            row[col] = coerce_value(col, row[col])
    check_row(row)
    row[Col.ARM_ID] = arm_id(row)
    row[Col.ARM_LABEL] = arm_label(row)
    row[Col.POINT_ID] = point_id(
        run_id, row[Col.ARM_ID], row[Col.CONC], source_path, row[Col.REQUEST_RATE]
    )
    return {str(k): v for k, v in row.items()}

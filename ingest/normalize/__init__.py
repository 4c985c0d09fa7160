"""Turn a reader's partial row into a complete, validated canonical row.

Readers record what their format says; this package derives what every row must have (canonical
hardware, GPU count, per-GPU throughput, interactivity, error rate, arm id and label, point id)
and checks the data contract. Two entry points apply the same rules: `normalize` completes one
row and raises the first `SchemaError` it meets (`row.py`); `normalize_batch` completes a whole
ingest batch as one polars frame (`batch.py`). The rooms: `values` (types), `derive` and
`speculative` (derived columns, each in its row and batch form), `rules` (the contract's
checks, each stated once), `ids` (arm and point identity).
"""

from ingest.normalize.batch import NOT_FROM_READERS, Batch, normalize_batch
from ingest.normalize.canonical import canonical_hw, is_known_model
from ingest.normalize.derive import DEFAULTS
from ingest.normalize.ids import arm_id, arm_label, point_id
from ingest.normalize.row import normalize
from ingest.normalize.rules import MAX_STRING_CHARS, RULES, Rule
from ingest.normalize.values import coerce_value, parse_bool

__all__ = [
    "DEFAULTS",
    "MAX_STRING_CHARS",
    "NOT_FROM_READERS",
    "RULES",
    "Batch",
    "Rule",
    "arm_id",
    "arm_label",
    "canonical_hw",
    "coerce_value",
    "is_known_model",
    "normalize",
    "normalize_batch",
    "parse_bool",
    "point_id",
]

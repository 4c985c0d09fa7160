"""docs/schema.md is generated from ingest/contract/schema.py and must be current."""

from __future__ import annotations

from ingest.contract.col import Col
from ingest.contract.columns import COLUMNS
from ingest.contract.schema import POINTS_SCHEMA, better, header
from ingest.contract.schema_doc import DOC_PATH, render


def test_schema_doc_is_current() -> None:
    assert DOC_PATH.read_text() == render(), "run: uv run python -m ingest.contract.schema_doc"


def test_every_column_is_documented_with_a_unit_or_dimensionless() -> None:
    text = render()
    for spec in COLUMNS:
        assert f"| `{spec.name.value}` |" in text
        assert spec.description
    assert [f.name for f in POINTS_SCHEMA] == [c.value for c in Col]


def test_directions_and_headers() -> None:
    assert better("tput_per_gpu") == "higher"
    assert better("p99_ttft") == "lower"
    assert better("median_intvty") == "higher"
    assert header("p99_ttft") == "p99_ttft (s)"
    assert header("tput_per_gpu") == "tput_per_gpu (tok/s/GPU)"

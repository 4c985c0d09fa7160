"""Generate docs/schema.md from the data contract (a test keeps the checked-in copy current).

Run `uv run python -m ingest.schema_doc` after changing `ingest/schema.py`.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from ingest.schema import (
    COLUMNS,
    REJECT_DESCRIPTIONS,
    REJECTS_SCHEMA,
    RUN_DESCRIPTIONS,
    RUNS_SCHEMA,
    SERIES_DESCRIPTIONS,
    TIMESERIES_SCHEMA,
    RejectCol,
    RunCol,
    SeriesCol,
)

DOC_PATH = Path(__file__).resolve().parent.parent / "docs" / "schema.md"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _simple(title: str, schema: pa.Schema, desc: dict[str, str]) -> list[str]:
    lines = [f"## {title}", "", "| column | type | meaning |", "|---|---|---|"]
    for f in schema:
        lines.append(f"| `{f.name}` | {f.type} | {_cell(desc[f.name])} |")
    return [*lines, ""]


def render() -> str:
    """The schema documentation as Markdown."""
    lines = [
        "# The paretolens data contract",
        "",
        "Generated from `ingest/schema.py` by `python -m ingest.schema_doc`; do not edit by hand.",
        "Names follow the InferenceX aggregate fields where one exists. Latencies are in **seconds**,",
        "interactivity in tok/s/user. `better` is the direction analysis treats as an improvement.",
        "",
        "## points",
        "",
        "| column | type | unit | better | group | meaning |",
        "|---|---|---|---|---|---|",
    ]
    for s in COLUMNS:
        lines.append(
            f"| `{s.name.value}` | {s.dtype} | {s.unit or '-'} | {s.better or '-'} | {s.group} | {_cell(s.description)} |"
        )
    lines.append("")
    lines += _simple("runs", RUNS_SCHEMA, {str(k): v for k, v in RUN_DESCRIPTIONS.items()})
    lines += _simple("rejects", REJECTS_SCHEMA, {str(k): v for k, v in REJECT_DESCRIPTIONS.items()})
    lines += _simple(
        "timeseries", TIMESERIES_SCHEMA, {str(k): v for k, v in SERIES_DESCRIPTIONS.items()}
    )
    assert set(RunCol) and set(RejectCol) and set(SeriesCol)
    return "\n".join(lines)


def main() -> None:
    DOC_PATH.parent.mkdir(exist_ok=True)
    DOC_PATH.write_text(render())


if __name__ == "__main__":
    main()

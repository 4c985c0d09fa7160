"""Generate docs/schema.md from the data contract (a test keeps the checked-in copy current).

Run `uv run python -m ingest.contract.schema_doc` after changing `ingest/contract/schema.py`.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from ingest.contract.columns import COLUMNS
from ingest.contract.evals_schema import EVAL_DESCRIPTIONS, EVAL_IDENTITY, EVALS_SCHEMA
from ingest.contract.schema import (
    ARM_KEY,
    DEFAULT_GROUP,
    IDENTITY_SOURCES,
    REJECT_DESCRIPTIONS,
    REJECTS_SCHEMA,
    RUN_DESCRIPTIONS,
    RUN_NOISE_FLAGS,
    RUNS_SCHEMA,
    SERIES_DESCRIPTIONS,
    TIMESERIES_SCHEMA,
    RejectCol,
    RunCol,
    SeriesCol,
)

DOC_PATH = Path(__file__).resolve().parents[2] / "docs" / "schema.md"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _simple(title: str, schema: pa.Schema, desc: dict[str, str]) -> list[str]:
    lines = [f"## {title}", "", "| column | type | meaning |", "|---|---|---|"]
    for f in schema:
        lines.append(f"| `{f.name}` | {f.type} | {_cell(desc[f.name])} |")
    return [*lines, ""]


def _identity() -> list[str]:
    lines = [
        "## Identity",
        "",
        "Where a point's identity comes from, most trusted first (`IDENTITY_SOURCES`). A source",
        "fills only what those above it left unknown; where two disagree the point keeps the more",
        "trusted value and its `warnings` name both.",
        "",
        "| # | source | what it gives |",
        "|---|---|---|",
    ]
    for i, (source, gives) in enumerate(IDENTITY_SOURCES, 1):
        lines.append(f"| {i} | {_cell(source)} | {_cell(gives)} |")
    lines += [
        "",
        "**The arm** (`arm_id`) is a hash of " + ", ".join(f"`{c.value}`" for c in ARM_KEY) + "",
        "(and whether the point is identified by `request_rate` rather than `conc`), refined by the",
        "server configuration: after each ingest batch an arm whose points differ in a server",
        "flag (`server_flags`) or in a `metadata` key that labels groups of points is split, the",
        "differing settings named in `arm_label` (`ingest/identity.py`). Never part of it: run",
        "noise flags (" + ", ".join(f"`{f}`" for f in sorted(RUN_NOISE_FLAGS)) + "), and a",
        "flag equal to the point's concurrency (InferenceX's `--max-num-seqs`).",
        "",
        "**The comparison group** (frontiers, dominance) defaults to "
        + ", ".join(f"`{c.value}`" for c in DEFAULT_GROUP)
        + ": two models never share a frontier.",
        "",
        "**The point id** is a hash of `run_id`, `arm_id`, `conc`, `source_path` (and",
        "`request_rate` when the point has one); points that would still share one get distinct",
        "ids and a warning.",
        "",
    ]
    return lines


def render() -> str:
    """The schema documentation as Markdown."""
    lines = [
        "# The paretolens data contract",
        "",
        "Generated from `ingest/contract/schema.py` by `python -m ingest.contract.schema_doc`; do not edit by hand.",
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
    lines += _identity()
    lines += _simple("runs", RUNS_SCHEMA, {str(k): v for k, v in RUN_DESCRIPTIONS.items()})
    lines += _simple("rejects", REJECTS_SCHEMA, {str(k): v for k, v in REJECT_DESCRIPTIONS.items()})
    lines += _simple(
        "timeseries", TIMESERIES_SCHEMA, {str(k): v for k, v in SERIES_DESCRIPTIONS.items()}
    )
    lines += _simple("evals", EVALS_SCHEMA, {str(k): v for k, v in EVAL_DESCRIPTIONS.items()})
    lines += [
        "An eval row joins an arm of the same run when every identity column it states ("
        + ", ".join(f"`{c.value}`" for c in EVAL_IDENTITY)
        + ") equals the arm's (hardware canonical, text lower case), with the hardware, the",
        "precision and a model column (`model` or `model_prefix`) stated on both sides; `conc`,",
        "when given, picks the arm's point at that concurrency (`analysis.evals`).",
        "",
    ]
    assert set(RunCol) and set(RejectCol) and set(SeriesCol)
    return "\n".join(lines)


def main() -> None:
    DOC_PATH.parent.mkdir(exist_ok=True)
    DOC_PATH.write_text(render())


if __name__ == "__main__":
    main()

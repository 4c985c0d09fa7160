"""Generate docs/schema.md from the data contract (a test keeps the checked-in copy current).

Run `uv run python -m ingest.contract.schema_doc` after changing `ingest/contract/schema.py`.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

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
    point_specs,
)
from ingest.normalize.canonical import (
    FRAMEWORK_ALIASES,
    HARDWARE,
    HARDWARE_ALIASES,
    KV_TIERS,
    MODELS,
    PRECISION_ALIASES,
    SPEC_METHOD_ALIASES,
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


def _canonical() -> list[str]:
    def pairs(table: dict[str, str]) -> str:
        return ", ".join(f"`{a}` -> `{b}`" for a, b in sorted(table.items()))

    lines = [
        "## The canonical configuration key",
        "",
        "One configuration has one key whatever the source (an InferenceX app dump, an aggregate,",
        "a raw harness file, a local sweep, a job paretolens launched): the columns of the arm key",
        "(below), each brought to one form at ingest (`ingest/normalize/canonical.py`). Baseline,",
        "compare, history, deltas and the runs index pair arms by it (`arm_id`). What differs",
        "between two paired points and is not configuration (the HF id or path in `model`, the",
        "image, the runner, the recipe, the reader) is listed as a confound beside the numbers",
        "(`analysis/comparison/confounds.py`), never a reason to leave the arms unpaired.",
        "",
        "- **model** (`model_prefix`): the model key, the InferenceX model prefix. The table below",
        "  maps HF ids, display names and local directory names to it; matching is case-folded,",
        "  ignores `-`, `_` and spaces, looks at a path's (or HF cache dir's) last component and",
        "  drops a checkpoint's quantisation suffix (`-FP8`, `-NVFP4-v2`, ...). The prefix a source",
        "  states is tried first, then `model`. A model no row knows is kept as given",
        "  (a path by its last component), case-folded, and the ingest notes it once.",
        "- **hardware** (`hw`): the label up to its first `-`, lower-cased, with "
        + pairs(HARDWARE_ALIASES)
        + "; from the runner label only when nothing else says it and its first segment is "
        "known hardware (" + ", ".join(f"`{h}`" for h in sorted(HARDWARE)) + ").",
        "- **precision**: lower-cased, " + pairs(PRECISION_ALIASES) + " (the InferenceX app's "
        "normalisation); from the checkpoint name's suffix when nothing else says it.",
        "- **engine** (`framework`): lower-cased, " + pairs(FRAMEWORK_ALIASES) + ".",
        "- **KV offload** (`kv_offloading`, `kv_offload_backend`): a tier ("
        + ", ".join(f"`{t}`" for t in sorted(KV_TIERS))
        + "; `cpu` is `dram`); a backend named as the tier (`offloading: lmcache`) is `dram`",
        "  through that backend.",
        "- **speculative method** (`spec_method`): one name per method ("
        + pairs(SPEC_METHOD_ALIASES)
        + ", any `*_mtp` -> `mtp`), with K (`num_spec_tokens`); the arm label names it.",
        "- **topology, speculative decoding, scenario**: as the columns of the arm",
        "  key state them (unset `spec_decoding`/`kv_offloading` are `none`, unset EP, PP, DCP",
        "  and PCP are 1, unset DP-attention, disagg and multinode are false).",
        "",
        "| model key | also known as |",
        "|---|---|",
    ]
    for key, aliases in sorted(MODELS.items()):
        lines.append(f"| `{key}` | {_cell(', '.join(aliases))} |")
    return [*lines, ""]


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
    for s in point_specs():
        lines.append(
            f"| `{s.name}` | {s.dtype} | {s.unit or '-'} | {s.better or '-'} | {s.group} | {_cell(s.description)} |"
        )
    lines.append("")
    lines += _identity()
    lines += _canonical()
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

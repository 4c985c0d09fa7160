"""What a chart and the points table read: an analysis table with the point columns it does not
carry (for the hover and the detail panel) and the arm names joined on by `point_id`/`arm_id`.

Every plane also carries the point's InferenceX parallelism label (`parallelism`, from
`analysis.labels.parallelism_labels`: TP8, DEP8, 2xTEP4+1xDEP32) and its full topology as text
(`topology`), for the point labels, the legend and the hover."""

from __future__ import annotations

from functools import cache

import polars as pl

from analysis.frontier.codes import columns
from analysis.frontier.prune import Analysis
from analysis.labels import parallelism_labels
from ingest.contract.col import Col

# Analysis columns joined onto the points (beyond the canonical schema).
VERDICT_COLUMNS = ("verdict", "reason", "on_arm_frontier", "knee_conc")
# Point columns the hover and the detail panel read that the analysis table does not carry.
HOVER_COLUMNS = (
    Col.NUM_GPUS,
    Col.NUM_REQUESTS_SUCCESSFUL,
    Col.NUM_REQUESTS_TOTAL,
    Col.ERROR_RATE,
    Col.AL_MEASURED,
    Col.AL_SOURCE,
    Col.SYNTHETIC_AL,
    Col.IMAGE,
)
PARALLELISM = "parallelism"
HARNESS = "harness"
HARNESS_VERSION = "harness_version"
# The benchmark harness of each reader's files, where the file does not name it in `metadata`
# (`harness`/`tool` and their `_version`, which the readers of other harnesses write).
HARNESS_OF_VARIANT: dict[str, str] = {
    "bench_serving_ms": "vLLM benchmark_serving",
    "bench_serving_random_s": "InferenceX benchmark_serving_random",
    "agg_fixed_v1": "InferenceX process_result",
    "agg_fixed_v2": "InferenceX process_result",
    "agentic_v3": "InferenceX AgentX",
    "agentic_flat": "InferenceX agentic",
    "multiturn_summary": "InferenceX multi-turn",
    "aiperf": "aiperf",
    "aiperf_legacy": "aiperf",
    "genai_perf": "GenAI-Perf",
    "sglang_bench_serving": "SGLang bench_serving",
    "vllm_bench_sweep": "vllm bench sweep",
    "together_runner": "together_runner",
    "guidellm": "GuideLLM",
    "inference_perf": "inference-perf",
    "llmperf": "llmperf",
}


def harness_exprs() -> list[pl.Expr]:
    """`harness` and `harness_version` of each point: what its result file names (`metadata`),
    else the harness of its reader's format; the version when the file states it."""
    return list(_harness_exprs())


@cache
def _harness_exprs() -> tuple[pl.Expr, ...]:
    """Built once (an expression is immutable; the mapping of formats is a list of literals)."""
    meta = pl.col(Col.METADATA)
    variant = pl.col(Col.SCHEMA_VARIANT)
    name = pl.coalesce(
        meta.str.json_path_match("$.harness"),
        meta.str.json_path_match("$.tool"),
        variant.replace_strict(HARNESS_OF_VARIANT, default=variant, return_dtype=pl.String),
    )
    version = pl.coalesce(
        meta.str.json_path_match("$.harness_version"),
        meta.str.json_path_match("$.tool_version"),
        meta.str.json_path_match("$.aiperf_version"),
    )
    return name.alias(HARNESS), version.alias(HARNESS_VERSION)


TOPOLOGY = "topology"
# The topology fields the hover lists (those a point has), in this order.
TOPOLOGY_FIELDS: tuple[Col, ...] = (
    Col.TP,
    Col.EP,
    Col.PP,
    Col.DP_ATTENTION,
    Col.DCP_SIZE,
    Col.PCP_SIZE,
    Col.DISAGG,
    Col.IS_MULTINODE,
    Col.PREFILL_NUM_WORKERS,
    Col.PREFILL_TP,
    Col.PREFILL_EP,
    Col.PREFILL_DP_ATTENTION,
    Col.PREFILL_GPUS,
    Col.DECODE_NUM_WORKERS,
    Col.DECODE_TP,
    Col.DECODE_EP,
    Col.DECODE_DP_ATTENTION,
    Col.DECODE_GPUS,
)


def topology_expr(points: pl.DataFrame) -> pl.Expr:
    """'tp=8 ep=8 dp_attention=true ...': every topology field the point has a value for."""
    have = set(points.columns)
    return _topology(tuple(c for c in TOPOLOGY_FIELDS if c in have))


@cache
def _topology(fields: tuple[str, ...]) -> pl.Expr:
    """`topology_expr` over these fields, built once per set of fields."""
    parts = [
        pl.when(pl.col(c).is_not_null()).then(
            pl.format(f"{c}={{}}", pl.col(c).cast(pl.String).str.to_lowercase())
        )
        for c in fields
    ]
    if not parts:
        return pl.lit("")
    return pl.concat_str(parts, separator=" ", ignore_nulls=True).fill_null("")


def labelled(points: pl.DataFrame) -> pl.DataFrame:
    """`point_id`, `parallelism`, `topology` of every point."""
    return points.select(Col.POINT_ID, topology_expr(points).alias(TOPOLOGY)).with_columns(
        parallelism_labels(points).alias(PARALLELISM)
    )


def point_hover(points: pl.DataFrame) -> pl.DataFrame:
    """Per point (by `point_id`): the `HOVER_COLUMNS`, the harness, the topology and the
    parallelism label: what `table_plane` joins onto analysis rows, made once for every plane
    of the same points."""
    hover = points.select(Col.POINT_ID, *HOVER_COLUMNS, *_harness_exprs())
    if points.get_column(Col.POINT_ID).n_unique() == points.height:
        # one row per id: the labels line up with the rows, no join needed
        return hover.hstack(labelled(points).drop(Col.POINT_ID))
    return hover.join(labelled(points), on=Col.POINT_ID, how="left")


def table_plane(
    table: pl.DataFrame,
    points: pl.DataFrame,
    names: pl.DataFrame,
    hover: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """What a chart draws of some analysis rows: the hover columns, labels and arm names
    (`hover`: `point_hover(points)` when the caller has it)."""
    have = set(table.columns)
    extra = [c for c in HOVER_COLUMNS if c not in have]
    hover = point_hover(points) if hover is None else hover
    picked = columns(hover, [Col.POINT_ID, *extra, HARNESS, HARNESS_VERSION, TOPOLOGY, PARALLELISM])
    plane = table.join(picked, on=Col.POINT_ID, how="left")
    return plane.with_columns(_profiled()).join(names, on=Col.ARM_ID, how="left")


# The requests the measurement window profiled: the successful ones plus the failed ones.
# `num_requests_total` of an AgentX aggregate also counts warm-up records, so "ok/total" would
# read as a high failure count where there was none (issue 13).
PROFILED = "num_requests_profiled"


def profiled_requests() -> pl.Expr:
    """Successful + failed (error rate x total) requests of the profiling window."""
    return _profiled()


@cache
def _profiled() -> pl.Expr:
    ok = pl.col(Col.NUM_REQUESTS_SUCCESSFUL).cast(pl.Float64)
    failed = (pl.col(Col.ERROR_RATE) * pl.col(Col.NUM_REQUESTS_TOTAL)).round(0)
    return (ok + failed.fill_null(0.0)).cast(pl.Int64).alias(PROFILED)


def chart_plane(
    a: Analysis, points: pl.DataFrame, names: pl.DataFrame, hover: pl.DataFrame | None = None
) -> pl.DataFrame:
    """What a chart draws: the analysis rows plus the hover columns and the arm names
    (`hover`: `point_hover(points)` when the caller has it)."""
    return table_plane(a.table, points, names, hover)


def verdict_points(a: Analysis, points: pl.DataFrame, names: pl.DataFrame) -> pl.DataFrame:
    """The points with their arm names and verdict columns, sorted by run, arm and concurrency."""
    verdicts = a.table.select(Col.POINT_ID, *VERDICT_COLUMNS)
    named = points.with_columns(harness_exprs()).join(names, on=Col.ARM_ID, how="left")
    return named.join(verdicts, on=Col.POINT_ID, how="left").sort(
        Col.RUN_ID, Col.ARM_LABEL, Col.CONC
    )

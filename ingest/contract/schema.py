"""The data contract: every canonical column, its Arrow type, unit, meaning and better direction.

Column names follow the InferenceX aggregate field names wherever one exists (`tput_per_gpu`,
`median_intvty`, `p99_ttft` in seconds, `conc`, `tp`, `ep`, `spec_decoding`). Everything else in
paretolens refers to columns through :class:`Col`, never through bare strings. The names are in
`ingest.contract.col`, the points table's columns in `ingest.contract.columns` and `ingest.contract.measured_columns`; this
module re-exports them with the keys, the schemas and the other tables.
"""

from __future__ import annotations

import json
from enum import StrEnum

import polars as pl
import pyarrow as pa

from ingest.contract.col import Better, Col, ColumnSpec
from ingest.contract.columns import COLUMNS
from ingest.contract.derived import extra_metrics, no_rows

__all__ = [
    "ARM_KEY",
    "DEFAULT_GROUP",
    "IDENTITY_SOURCES",
    "POINTS_SCHEMA",
    "REJECTS_SCHEMA",
    "REJECT_DESCRIPTIONS",
    "RUNS_SCHEMA",
    "RUN_DESCRIPTIONS",
    "RUN_NOISE_FLAGS",
    "SERIES_DESCRIPTIONS",
    "SPECS",
    "TIMESERIES_SCHEMA",
    "RejectCol",
    "RunCol",
    "SeriesCol",
    "better",
    "empty_points",
    "header",
    "metric_columns",
    "point_specs",
    "polars_schema",
    "server_flag_items",
    "spec_of",
    "unit",
]

_S = pa.string()
_I = pa.int64()
_F = pa.float64()
_B = pa.bool_()

SPECS: dict[str, ColumnSpec] = {spec.name: spec for spec in COLUMNS}
POINTS_SCHEMA: pa.Schema = pa.schema([pa.field(str(s.name), s.dtype) for s in COLUMNS])


def point_specs() -> tuple[ColumnSpec, ...]:
    """The points table's columns: the stored ones, then derived metrics declared beyond them
    (`ingest.contract.derived.register`)."""
    return (*COLUMNS, *(m.spec for m in extra_metrics()))


def spec_of(col: str) -> ColumnSpec | None:
    """The declaration of a points column (None when there is none)."""
    spec = SPECS.get(col)
    if spec is not None:
        return spec
    return next((m.spec for m in extra_metrics() if m.name == col), None)


# The canonical configuration key: everything about the configuration except the load and the
# run, every value in its canonical form (`ingest.normalize.canonical`: the model key in
# model_prefix, canonical hardware, precision and engine). Equal configurations from any source
# (an InferenceX dump, a raw file, a local sweep, a launched job) have equal keys and one arm id;
# what else differs between them (HF id or path, image, engine version, recipe) is a confound.
ARM_KEY: tuple[Col, ...] = (
    Col.SCENARIO,
    Col.MODEL_PREFIX,
    Col.HW,
    Col.FRAMEWORK,
    Col.PRECISION,
    Col.ISL,
    Col.OSL,
    Col.SPEC_DECODING,
    Col.SPEC_METHOD,
    Col.DRAFT_MODEL,
    Col.NUM_SPEC_TOKENS,
    Col.DISAGG,
    Col.IS_MULTINODE,
    Col.TP,
    Col.PP,
    Col.EP,
    Col.DP_ATTENTION,
    Col.DCP_SIZE,
    Col.PCP_SIZE,
    Col.PREFILL_TP,
    Col.PREFILL_EP,
    Col.PREFILL_DP_ATTENTION,
    Col.PREFILL_NUM_WORKERS,
    Col.DECODE_TP,
    Col.DECODE_EP,
    Col.DECODE_DP_ATTENTION,
    Col.DECODE_NUM_WORKERS,
    Col.KV_OFFLOADING,
    Col.KV_OFFLOAD_BACKEND,
)

# Default comparison group for frontiers: run x scenario x model x isl/osl x hw x precision.
# The model is its key (model_prefix), set on every row that names a model.
DEFAULT_GROUP: tuple[Col, ...] = (
    Col.RUN_ID,
    Col.SCENARIO,
    Col.MODEL_PREFIX,
    Col.ISL,
    Col.OSL,
    Col.HW,
    Col.PRECISION,
)


# Where a point's identity comes from, most trusted first. A source fills only what the ones
# above it left unknown; where two disagree the point keeps the more trusted value and a warning
# names both.
IDENTITY_SOURCES: tuple[tuple[str, str], ...] = (
    (
        "the result file's own fields",
        "model, load (max_concurrency / request_rate / users), lengths, server_info, input_config, "
        "spec-decode counters",
    ),
    (
        "vLLM `--metadata key=value` keys in the result",
        "gpu=4xNVIDIA_L40S (num_gpus, hw), tp, num_gpus, hw; every key kept in `metadata`",
    ),
    (
        "InferenceX artifact, directory and file names",
        "model prefix, TP/EP/DP-attention, offload, precision, framework, spec, conc, hardware "
        "from the runner label; `vllm bench sweep` SERVE--/BENCH-- directory parameters",
    ),
    (
        "sidecars and the server command beside the result",
        "vllm_command.txt / sweep serve parameters: TP, EP, DP, max-num-seqs, spec config, "
        "offload connector, all flags in `server_flags`",
    ),
    (
        "the checkpoint name and the runner label",
        "precision from a checkpoint's quantisation suffix (amd/Kimi-K2.5-MXFP4 -> fp4), hardware "
        "from a runner label's first segment when it is known hardware (MI355-gbt350-... -> "
        "mi355x)",
    ),
    (
        "the plan of a job paretolens launched",
        "hardware, image, model, topology, spec and offload settings of the plan point",
    ),
    (
        "`paretolens ingest --set COLUMN=VALUE` and a paretolens.yaml beside the files",
        "anything no file says (--set wins over paretolens.yaml; the nearest paretolens.yaml "
        "applies)",
    ),
    (
        "the measurements themselves (these overrule a label that says otherwise)",
        "spec decoding on when draft counters or an AL were measured, even if a name said "
        "spec-none ('detected', K = draft tokens / drafts, with a warning)",
    ),
)

# Server flags that say where or how a run was launched, never what was measured: they are not
# part of a configuration's identity, and never a confound (names as `server_flag_items` writes
# them: no leading dashes, underscores as dashes).
RUN_NOISE_FLAGS: frozenset[str] = frozenset(
    {
        "host",
        "port",
        "seed",
        "log-level",
        "uvicorn-log-level",
        "disable-log-requests",
        "enable-log-requests",
        "disable-log-stats",
        "disable-uvicorn-access-log",
        "log-requests",
        "log-file",
        "log-dir",
        "api-key",
        "served-model-name",
        "download-dir",
        "root-path",
        "ssl-keyfile",
        "ssl-certfile",
        "allowed-origins",
        "allowed-headers",
        "allowed-methods",
        "otlp-traces-endpoint",
        "collect-detailed-traces",
        "output-dir",
        "result-dir",
        "result-filename",
        "save-result",
        "metrics-port",
        "nccl-port",
        "dist-init-addr",
        "master-port",
        "prometheus-port",
        "trust-remote-code",
        "random-seed",
    }
)


def server_flag_items(raw: object) -> dict[str, str]:
    """A `server_flags` value as {flag name: value text}: names without leading dashes and with
    underscores as dashes, non-string values as sorted JSON. Text that is not a JSON object is
    kept whole under `<server_flags>`."""
    if not raw:
        return {}
    try:
        doc = json.loads(str(raw))
    except (json.JSONDecodeError, RecursionError):
        return {"<server_flags>": str(raw)}
    if not isinstance(doc, dict):
        return {"<server_flags>": str(raw)}
    return {
        str(k).lstrip("-").replace("_", "-"): v
        if isinstance(v, str)
        else json.dumps(v, sort_keys=True)
        for k, v in doc.items()
    }


def better(col: str) -> Better:
    """Return the better direction of a metric column.

    Raises:
        ValueError: when the column is unknown or has no direction (it is not a metric).
    """
    spec = spec_of(col)
    if spec is None:
        raise ValueError(f"unknown column {col!r}; see docs/schema.md for the metric names")
    if spec.better is None:
        raise ValueError(f"column {col!r} is not a metric with a better direction")
    return spec.better


def metric_columns() -> list[Col | str]:
    """Columns that have a better direction (usable as Pareto axes)."""
    return [s.name for s in point_specs() if s.better is not None]


def unit(col: str) -> str:
    """Unit of a canonical column ('' when dimensionless)."""
    spec = spec_of(col)
    if spec is None:
        raise ValueError(f"unknown column {col!r}; see docs/schema.md for the column names")
    return spec.unit


def header(col: str) -> str:
    """A column header with its unit, e.g. 'p99_ttft (s)'."""
    u = unit(col)
    return f"{col} ({u})" if u else str(col)


def polars_schema() -> pl.Schema:
    """The points schema as polars dtypes, declared derived metrics included."""
    schema = empty_points().schema
    for m in extra_metrics():
        empty = pl.from_arrow(no_rows(pa.schema([pa.field(m.name, m.spec.dtype)])))
        assert isinstance(empty, pl.DataFrame)
        schema[m.name] = empty.schema[m.name]
    return schema


def empty_points() -> pl.DataFrame:
    """An empty frame with the canonical points schema."""
    df = pl.from_arrow(no_rows(POINTS_SCHEMA))
    assert isinstance(df, pl.DataFrame)
    return df


# ---- the other tables -------------------------------------------------------------------------


class RunCol(StrEnum):
    """Columns of the `runs` catalog."""

    RUN_ID = "run_id"
    REPO = "repo"
    BRANCH = "branch"
    HEAD_SHA = "head_sha"
    TITLE = "title"
    CREATED_AT = "created_at"
    STATUS = "status"
    CONCLUSION = "conclusion"
    HTML_URL = "html_url"
    SOURCE = "source"
    INGESTED_AT = "ingested_at"
    POINT_COUNT = "point_count"
    REJECT_COUNT = "reject_count"


RUNS_SCHEMA: pa.Schema = pa.schema(
    [
        pa.field(RunCol.RUN_ID, _S),
        pa.field(RunCol.REPO, _S),
        pa.field(RunCol.BRANCH, _S),
        pa.field(RunCol.HEAD_SHA, _S),
        pa.field(RunCol.TITLE, _S),
        pa.field(RunCol.CREATED_AT, _S),
        pa.field(RunCol.STATUS, _S),
        pa.field(RunCol.CONCLUSION, _S),
        pa.field(RunCol.HTML_URL, _S),
        pa.field(RunCol.SOURCE, _S),
        pa.field(RunCol.INGESTED_AT, pa.timestamp("us", tz="UTC")),
        pa.field(RunCol.POINT_COUNT, _I),
        pa.field(RunCol.REJECT_COUNT, _I),
    ]
)

RUN_DESCRIPTIONS: dict[RunCol, str] = {
    RunCol.RUN_ID: "run id (GitHub Actions run id or local name)",
    RunCol.REPO: "owner/name of the repository the run belongs to",
    RunCol.BRANCH: "head branch",
    RunCol.HEAD_SHA: "head commit sha",
    RunCol.TITLE: "run title (display_title)",
    RunCol.CREATED_AT: "creation time, ISO 8601 UTC",
    RunCol.STATUS: "GitHub status (queued, in_progress, completed) or 'local'",
    RunCol.CONCLUSION: "GitHub conclusion (success, failure, ...)",
    RunCol.HTML_URL: "link to the run",
    RunCol.SOURCE: "github, local, upload or runner",
    RunCol.INGESTED_AT: "last ingest into this run",
    RunCol.POINT_COUNT: "points stored for the run",
    RunCol.REJECT_COUNT: "rejected files and rows for the run",
}


class RejectCol(StrEnum):
    """Columns of the `rejects` table."""

    RUN_ID = "run_id"
    PATH = "path"
    SHA256 = "sha256"
    READER = "reader"
    FIELD = "field"
    REASON = "reason"
    AT = "at"
    OUTCOME = "outcome"


REJECTS_SCHEMA: pa.Schema = pa.schema(
    [
        pa.field(RejectCol.RUN_ID, _S),
        pa.field(RejectCol.PATH, _S),
        pa.field(RejectCol.SHA256, _S),
        pa.field(RejectCol.READER, _S),
        pa.field(RejectCol.FIELD, _S),
        pa.field(RejectCol.REASON, _S),
        pa.field(RejectCol.AT, pa.timestamp("us", tz="UTC")),
        pa.field(RejectCol.OUTCOME, _S),
    ]
)

REJECT_DESCRIPTIONS: dict[RejectCol, str] = {
    RejectCol.RUN_ID: "run the file was ingested into",
    RejectCol.PATH: "file (or file/row) that was not taken",
    RejectCol.SHA256: "sha256 of the file's bytes (empty if unreadable)",
    RejectCol.READER: "reader that tried it ('sniff' when no reader recognised it)",
    RejectCol.FIELD: "field that was wrong ('' for whole-file problems)",
    RejectCol.REASON: "what was wrong and what was expected",
    RejectCol.OUTCOME: "'rejected' (not taken: the reason says what to fix) or 'ignored' (a file "
    "that was recognised or read but holds nothing to store, with why); null in stores written "
    "before ignored files were recorded means rejected",
    RejectCol.AT: "when it was rejected",
}


class SeriesCol(StrEnum):
    """Columns of the server-metric `timeseries` table."""

    RUN_ID = "run_id"
    POINT_ID = "point_id"
    METRIC = "metric"
    LABELS = "labels"
    T = "t"
    VALUE = "value"


TIMESERIES_SCHEMA: pa.Schema = pa.schema(
    [
        pa.field(SeriesCol.RUN_ID, _S),
        pa.field(SeriesCol.POINT_ID, _S),
        pa.field(SeriesCol.METRIC, _S),
        pa.field(SeriesCol.LABELS, _S),
        pa.field(SeriesCol.T, _F),
        pa.field(SeriesCol.VALUE, _F),
    ]
)

SERIES_DESCRIPTIONS: dict[SeriesCol, str] = {
    SeriesCol.RUN_ID: "run of the point",
    SeriesCol.POINT_ID: "point the series belongs to",
    SeriesCol.METRIC: "server metric name, e.g. vllm:kv_cache_usage_perc, vllm:num_requests_running",
    SeriesCol.LABELS: "Prometheus labels as a JSON object",
    SeriesCol.T: "seconds since the start of the capture (s)",
    SeriesCol.VALUE: "sample value in the metric's own unit",
}

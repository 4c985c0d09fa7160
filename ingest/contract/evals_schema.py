"""The `evals` table: accuracy measurements (lm-eval tasks) of a configuration, stored beside the
points of the same run and joined to them by configuration (`analysis.evals`).

One row per (source file, task, metric, concurrency). Part of the data contract; `ingest.contract.schema`
re-exports these names and `docs/schema.md` lists the columns (`python -m ingest.contract.schema_doc`).
"""

from __future__ import annotations

from enum import StrEnum

import pyarrow as pa

from ingest.contract.col import Col

_S = pa.string()
_I = pa.int64()
_F = pa.float64()
_B = pa.bool_()


class EvalCol(StrEnum):
    """Columns of the `evals` table (identity columns share the points' names)."""

    RUN_ID = "run_id"
    SOURCE_PATH = "source_path"
    SOURCE_SHA256 = "source_sha256"
    READER = "reader"
    TASK = "task"
    METRIC = "metric"
    VALUE = "value"
    STDERR = "stderr"
    N_EFF = "n_eff"
    PRIMARY = "primary"
    MODEL = "model"
    MODEL_PREFIX = "model_prefix"
    HW = "hw"
    FRAMEWORK = "framework"
    PRECISION = "precision"
    SPEC_DECODING = "spec_decoding"
    DISAGG = "disagg"
    IS_MULTINODE = "is_multinode"
    TP = "tp"
    EP = "ep"
    DP_ATTENTION = "dp_attention"
    PREFILL_TP = "prefill_tp"
    PREFILL_EP = "prefill_ep"
    PREFILL_DP_ATTENTION = "prefill_dp_attention"
    PREFILL_NUM_WORKERS = "prefill_num_workers"
    DECODE_TP = "decode_tp"
    DECODE_EP = "decode_ep"
    DECODE_DP_ATTENTION = "decode_dp_attention"
    DECODE_NUM_WORKERS = "decode_num_workers"
    KV_OFFLOADING = "kv_offloading"
    ISL = "isl"
    OSL = "osl"
    CONC = "conc"
    ARM_ID = "arm_id"
    LM_EVAL_VERSION = "lm_eval_version"
    DATE = "date"


# The configuration columns an eval row may state; the join (`analysis.evals`) compares each one
# the eval states with the arm's value. ISL/OSL are recorded, never matched: lm-eval runs its own
# prompts, the lengths only name the sweep scenario that scheduled the eval job.
EVAL_IDENTITY: tuple[EvalCol, ...] = (
    EvalCol.MODEL,
    EvalCol.MODEL_PREFIX,
    EvalCol.HW,
    EvalCol.FRAMEWORK,
    EvalCol.PRECISION,
    EvalCol.SPEC_DECODING,
    EvalCol.DISAGG,
    EvalCol.IS_MULTINODE,
    EvalCol.TP,
    EvalCol.EP,
    EvalCol.DP_ATTENTION,
    EvalCol.PREFILL_TP,
    EvalCol.PREFILL_EP,
    EvalCol.PREFILL_DP_ATTENTION,
    EvalCol.PREFILL_NUM_WORKERS,
    EvalCol.DECODE_TP,
    EvalCol.DECODE_EP,
    EvalCol.DECODE_DP_ATTENTION,
    EvalCol.DECODE_NUM_WORKERS,
    EvalCol.KV_OFFLOADING,
)
assert all(str(c) in set(Col) for c in EVAL_IDENTITY)

_TYPES: dict[EvalCol, pa.DataType] = {
    EvalCol.VALUE: _F,
    EvalCol.STDERR: _F,
    EvalCol.N_EFF: _I,
    EvalCol.PRIMARY: _B,
    EvalCol.DISAGG: _B,
    EvalCol.IS_MULTINODE: _B,
    EvalCol.TP: _I,
    EvalCol.EP: _I,
    EvalCol.DP_ATTENTION: _B,
    EvalCol.PREFILL_TP: _I,
    EvalCol.PREFILL_EP: _I,
    EvalCol.PREFILL_DP_ATTENTION: _B,
    EvalCol.PREFILL_NUM_WORKERS: _I,
    EvalCol.DECODE_TP: _I,
    EvalCol.DECODE_EP: _I,
    EvalCol.DECODE_DP_ATTENTION: _B,
    EvalCol.DECODE_NUM_WORKERS: _I,
    EvalCol.ISL: _I,
    EvalCol.OSL: _I,
    EvalCol.CONC: _I,
}

EVALS_SCHEMA: pa.Schema = pa.schema([pa.field(c.value, _TYPES.get(c, _S)) for c in EvalCol])

EVAL_DESCRIPTIONS: dict[EvalCol, str] = {
    EvalCol.RUN_ID: "run the eval was ingested into (joins points of the same run)",
    EvalCol.SOURCE_PATH: "file the row came from (an agg_eval_all.json, an lm-eval results_*.json, "
    "or eval_results/<id>.json of an InferenceX dump)",
    EvalCol.SOURCE_SHA256: "sha256 of that file's bytes",
    EvalCol.READER: "reader that produced the row (eval_agg, lm_eval, lm_eval_v0)",
    EvalCol.TASK: "lm-eval task, lower case (gsm8k, gpqa_diamond_cot_zeroshot, mmlu_...)",
    EvalCol.METRIC: "em_strict / em_flexible (exact_match with the strict-match / "
    "flexible-extract filter, InferenceX's names), else the lm-eval metric name, with ',filter' "
    "when the filter is not 'none' (acc, acc_norm, exact_match,custom-extract)",
    EvalCol.VALUE: "the metric's value, a fraction in [0, 1] for accuracies",
    EvalCol.STDERR: "its standard error as lm-eval reports it (null when absent or 'N/A')",
    EvalCol.N_EFF: "samples the task was scored on (lm-eval n-samples.effective)",
    EvalCol.PRIMARY: "the task's headline metric, as InferenceX picks its `score`: em_strict "
    "(strict or resolved exact match) when present, else acc, else the first metric",
    EvalCol.MODEL: "model (HF id or path) the eval ran against",
    EvalCol.MODEL_PREFIX: "InferenceX model prefix (infmax_model_prefix)",
    EvalCol.HW: "canonical hardware (the runner label's first segment, lower case: B200-TRT -> b200)",
    EvalCol.FRAMEWORK: "serving framework, lower case",
    EvalCol.PRECISION: "weight precision, lower case",
    EvalCol.SPEC_DECODING: "speculative decoding (none, mtp, eagle, ...); null when unknown",
    EvalCol.DISAGG: "prefill/decode disaggregated",
    EvalCol.IS_MULTINODE: "multi-node deployment",
    EvalCol.TP: "tensor parallel size",
    EvalCol.EP: "expert parallel size",
    EvalCol.DP_ATTENTION: "data-parallel attention",
    EvalCol.PREFILL_TP: "prefill worker TP (disaggregated)",
    EvalCol.PREFILL_EP: "prefill worker EP (disaggregated)",
    EvalCol.PREFILL_DP_ATTENTION: "prefill worker DP attention (disaggregated)",
    EvalCol.PREFILL_NUM_WORKERS: "prefill workers (disaggregated)",
    EvalCol.DECODE_TP: "decode worker TP (disaggregated)",
    EvalCol.DECODE_EP: "decode worker EP (disaggregated)",
    EvalCol.DECODE_DP_ATTENTION: "decode worker DP attention (disaggregated)",
    EvalCol.DECODE_NUM_WORKERS: "decode workers (disaggregated)",
    EvalCol.KV_OFFLOADING: "KV offload tier, when the eval states it",
    EvalCol.ISL: "sweep scenario input length that scheduled the eval (recorded, not matched)",
    EvalCol.OSL: "sweep scenario output length that scheduled the eval (recorded, not matched)",
    EvalCol.CONC: "concurrency the eval ran at (InferenceX EVAL_CONC); joins the arm's point at "
    "that concurrency when there is one",
    EvalCol.ARM_ID: "ingest.normalize.arm_id of the eval's identity, as a point's would be; equal "
    "to a point's arm_id only when the eval states every ARM_KEY column the point has",
    EvalCol.LM_EVAL_VERSION: "lm-evaluation-harness version that wrote the result",
    EvalCol.DATE: "when the eval ran (ISO 8601), when the file says",
}

"""The values a point's commands see: template placeholders and InferenceX-style env vars.

The variable names are those of InferenceX's `benchmark-tmpl.yml` (MODEL, TP, EP_SIZE, CONC,
SPEC_DECODING, ISL, OSL, RESULT_FILENAME, ...), so its benchmark scripts run unchanged.
"""

from __future__ import annotations

import re
import sys

from ingest.contract.col import Col
from runner.plan import Arm, Plan, Point

_SEQ_NAMES = {(1024, 1024): "1k1k", (1024, 8192): "1k8k", (8192, 1024): "8k1k"}


def _safe(value: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", value).strip("-") or "x"


def exp_name(arm: Arm) -> str:
    """InferenceX-style experiment name: ``<prefix>_<1k1k|1k8k|8k1k>``, else
    ``<prefix>_isl<I>_osl<O>`` (InferenceX writes ``<I>_<O>``, which no reader can tell from other
    numbers), or ``<prefix>_agentic``."""
    prefix = _safe(arm.model_prefix or arm.model.rstrip("/").rsplit("/", 1)[-1]).replace("_", "-")
    if arm.isl is None or arm.osl is None:
        return f"{prefix}_agentic"
    return f"{prefix}_{_SEQ_NAMES.get((arm.isl, arm.osl), f'isl{arm.isl}_osl{arm.osl}')}"


def result_filename(point: Point) -> str:
    """InferenceX-style RESULT_FILENAME (without .json), ending in the point id so it is unique."""
    a = point.arm
    dpa = str(a.dp_attn).lower()
    if a.prefill is not None and a.decode is not None:
        p, d = a.prefill, a.decode
        topo = (
            f"prefill-tp{p.tp}-ep{p.ep}-dp{str(p.dp_attn).lower()}-nw{p.num_worker}"
            f"_decode-tp{d.tp}-ep{d.ep}-dp{str(d.dp_attn).lower()}-nw{d.num_worker}"
        )
    else:
        topo = f"tp{a.tp}-pp{a.pp}-dcp{a.dcp_size}-pcp{a.pcp_size}-ep{a.ep}-dpa{dpa}"
    parts = [
        exp_name(a),
        _safe(a.precision or "na"),
        _safe(a.framework or "na"),
        topo,
        f"disagg-{str(a.disagg).lower()}",
        f"spec-{a.spec_decoding}",
        f"conc{point.conc}",
        _safe(a.hw or "local"),
        point.id,
    ]
    return "_".join(parts)


def point_values(
    plan: Plan, point: Point, *, job_id: str, result_dir: str
) -> dict[str, str | None]:
    """Placeholder values of a point (None where the point has no such value); `port` comes later."""
    a = point.arm

    def opt(v: object) -> str | None:
        return None if v is None else str(v)

    max_len = a.isl + a.osl + 256 if a.isl is not None and a.osl is not None else None
    return {
        "model": a.model,
        "model_prefix": a.model_prefix,
        "framework": a.framework,
        "precision": a.precision,
        "image": a.image,
        "hw": a.hw,
        "scenario": a.scenario,
        "exp_name": exp_name(a),
        "isl": opt(a.isl),
        "osl": opt(a.osl),
        "max_model_len": opt(max_len),
        "conc": str(point.conc),
        "num_prompts": str(point.conc * plan.num_prompts_per_conc),
        "tp": str(a.tp),
        "pp": str(a.pp),
        "ep": str(a.ep),
        "dcp_size": str(a.dcp_size),
        "pcp_size": str(a.pcp_size),
        "dp_attn": str(a.dp_attn).lower(),
        "spec_decoding": a.spec_decoding,
        "kv_offloading": a.kv_offloading,
        "kv_offload_backend": a.kv_offload_backend,
        "duration": opt(plan.duration_s),
        "random_range_ratio": str(plan.random_range_ratio),
        "result_dir": result_dir,
        "result_filename": result_filename(point),
        "point_id": point.id,
        "job_id": job_id,
        "port": None,
        "python": sys.executable,
    }


def point_env(plan: Plan, point: Point, values: dict[str, str | None]) -> dict[str, str]:
    """InferenceX-style environment of a point, then plan, commands and arm env (later wins)."""
    a = point.arm
    agentic = a.scenario == "agentic-coding"

    def v(key: str, default: str = "") -> str:
        value = values.get(key)
        return default if value is None else value

    env = {
        "MODEL": v("model"),
        "MODEL_PREFIX": v("model_prefix"),
        "FRAMEWORK": v("framework"),
        "PRECISION": v("precision"),
        "IMAGE": v("image"),
        "RUNNER_TYPE": v("hw"),
        "EXP_NAME": v("exp_name"),
        "SCENARIO_TYPE": a.scenario,
        "IS_AGENTIC": "1" if agentic else "0",
        "ISL": v("isl", "0"),
        "OSL": v("osl", "0"),
        "MAX_MODEL_LEN": v("max_model_len", "0"),
        "TP": v("tp"),
        "PP_SIZE": v("pp"),
        "DCP_SIZE": v("dcp_size"),
        "PCP_SIZE": v("pcp_size"),
        "EP_SIZE": v("ep"),
        "DP_ATTENTION": v("dp_attn"),
        "CONC": v("conc"),
        "NUM_PROMPTS": v("num_prompts"),
        "SPEC_DECODING": a.spec_decoding,
        "DISAGG": str(a.disagg).lower(),
        "IS_MULTINODE": str(a.is_multinode).lower(),
        "KV_OFFLOADING": a.kv_offloading,
        "KV_OFFLOAD_BACKEND": a.kv_offload_backend or "",
        "DURATION": v("duration"),
        "RANDOM_RANGE_RATIO": v("random_range_ratio"),
        "RESULT_FILENAME": v("result_filename"),
        "RESULT_DIR": v("result_dir"),
        "PARETOLENS_JOB_ID": v("job_id"),
        "PARETOLENS_POINT_ID": point.id,
    }
    for role, worker in (("PREFILL", a.prefill), ("DECODE", a.decode)):
        if worker is not None:
            env[f"{role}_NUM_WORKERS"] = str(worker.num_worker)
            env[f"{role}_TP"] = str(worker.tp)
            env[f"{role}_EP"] = str(worker.ep)
            env[f"{role}_DP_ATTN"] = str(worker.dp_attn).lower()
            env[f"{role}_ADDITIONAL_SETTINGS"] = " ".join(worker.additional_settings)
    env.update(plan.env)
    if plan.commands is not None:
        env.update(plan.commands.env)
    env.update(a.env)
    return env


def point_columns(point: Point, *, run_id: str) -> dict[str, object]:
    """The point's configuration as canonical columns (`ingest.contract.schema.Col`), written next to its
    results as ``paretolens_point.json`` so nothing the plan knew is lost on the way to the store.

    The result file name carries the topology ingest reads today; this file also says what the
    name cannot (hardware label, image, KV offload, exact model prefix)."""
    a = point.arm
    cols: dict[Col, object] = {
        Col.RUN_ID: run_id,
        Col.SCENARIO: a.scenario,
        Col.MODEL: a.model,
        Col.MODEL_PREFIX: a.model_prefix,
        Col.FRAMEWORK: a.framework,
        Col.PRECISION: a.precision,
        Col.IMAGE: a.image,
        Col.HW_LABEL: a.hw,
        Col.ISL: a.isl,
        Col.OSL: a.osl,
        Col.CONC: point.conc,
        Col.TP: a.tp,
        Col.PP: a.pp,
        Col.EP: a.ep,
        Col.DCP_SIZE: a.dcp_size,
        Col.PCP_SIZE: a.pcp_size,
        Col.DP_ATTENTION: a.dp_attn,
        Col.SPEC_DECODING: a.spec_decoding,
        Col.KV_OFFLOADING: a.kv_offloading,
        Col.KV_OFFLOAD_BACKEND: a.kv_offload_backend,
        Col.DISAGG: a.disagg,
        Col.IS_MULTINODE: a.is_multinode,
    }
    for role, w in (("prefill", a.prefill), ("decode", a.decode)):
        if w is not None:
            cols[Col(f"{role}_tp")] = w.tp
            cols[Col(f"{role}_ep")] = w.ep
            cols[Col(f"{role}_dp_attention")] = w.dp_attn
            cols[Col(f"{role}_num_workers")] = w.num_worker
    return {str(k): v for k, v in cols.items() if v is not None}


def point_identity(point: Point) -> dict[str, object]:
    """What the plan says a point is, as canonical columns: the `defaults` its results are
    ingested with (`ingest.pipeline.ingest_paths`), so a launched point keeps the hardware, image,
    model, topology, spec decoding and KV offload of the arm it was planned from, whatever its
    result file records. A result file's own value wins (with a warning when it differs)."""
    cols = point_columns(point, run_id="")
    cols.pop(str(Col.RUN_ID), None)
    return cols

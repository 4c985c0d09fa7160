"""Turn a reader's partial row into a complete, validated canonical row.

Readers record what their format says; this module derives what every row must have (canonical
hardware, GPU count, per-GPU throughput, interactivity, error rate, arm id and label, point id) and
checks the data contract, so the rules live in one place.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from ingest.errors import SchemaError
from ingest.schema import ARM_KEY, LATENCIES, SPECS, STATS, Col

Row = dict[str, Any]

_DEFAULTS: dict[Col, Any] = {
    Col.RUN_ATTEMPT: 1,
    Col.SCENARIO: "fixed-seq-len",
    Col.PP: 1,
    Col.EP: 1,
    Col.DCP_SIZE: 1,
    Col.PCP_SIZE: 1,
    Col.DP_ATTENTION: False,
    Col.DISAGG: False,
    Col.IS_MULTINODE: False,
    Col.SPEC_DECODING: "none",
    Col.KV_OFFLOADING: "none",
}

# Throughputs must be strictly positive when present; latencies must be positive.
_POSITIVE = (
    Col.TPUT_PER_GPU,
    Col.OUTPUT_TPUT_PER_GPU,
    Col.TOTAL_TPUT,
    Col.OUTPUT_TPUT,
)
_NON_NEGATIVE_GROUPS = {
    "throughput",
    "latency",
    "interactivity",
    "requests",
    "server",
    "spec_measured",
}


def canonical_hw(label: str) -> str:
    """InferenceX-app's canonical hardware: drop up to the last ':', keep the first '-' segment."""
    tail = label.rsplit(":", 1)[-1]
    return tail.split("-", 1)[0].lower()


def parse_bool(value: Any, field: str) -> bool:
    """Accept real booleans and the strings InferenceX writes ('true'/'false').

    Raises:
        SchemaError: for anything else.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "false"}:
        return value.strip().lower() == "true"
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise SchemaError(field, f"expected a boolean or 'true'/'false', got {value!r}")


def _coerce(col: Col, value: Any) -> Any:
    if value is None:
        return None
    dtype = SPECS[col].dtype
    if pa.types.is_boolean(dtype):
        return parse_bool(value, col)
    if pa.types.is_integer(dtype):
        if isinstance(value, bool):
            raise SchemaError(col, f"expected an integer, got boolean {value!r}")
        if isinstance(value, float):
            if not math.isfinite(value) or value != int(value):
                raise SchemaError(col, f"expected an integer, got {value!r}")
            return int(value)
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value)
        if not isinstance(value, int):
            raise SchemaError(col, f"expected an integer, got {type(value).__name__} {value!r}")
        if abs(value) >= 2**63:
            raise SchemaError(col, f"integer {value} is out of range")
        return value
    if pa.types.is_floating(dtype):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise SchemaError(col, f"expected a number, got {type(value).__name__} {value!r}")
        f = float(value)
        if not math.isfinite(f):
            raise SchemaError(col, f"expected a finite number, got {value!r}")
        return f
    if pa.types.is_string(dtype):
        if isinstance(value, dict | list):
            return json.dumps(value, sort_keys=True)
        return _text(col, str(value))
    if pa.types.is_list(dtype):
        if not isinstance(value, list):
            raise SchemaError(col, f"expected a list, got {type(value).__name__}")
        inner = dtype.value_type
        if pa.types.is_floating(inner):
            out = []
            for v in value:
                if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                    raise SchemaError(col, f"expected finite numbers in the list, got {v!r}")
                out.append(float(v))
            return out
        return [_text(col, str(v)) for v in value]
    return value


def _text(col: Col, value: str) -> str:
    # A JSON "\\ud800" escape decodes to a lone surrogate, which Arrow cannot store as UTF-8.
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise SchemaError(
            col, f"not valid Unicode text: a lone surrogate at character {exc.start}"
        ) from exc
    return value


def _hash(*parts: Any) -> str:
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def arm_id(row: Mapping[str, Any]) -> str:
    """Stable hash of the arm identity (everything in ARM_KEY; conc and run excluded)."""
    return _hash(*[row.get(c) for c in ARM_KEY])


def arm_label(row: Mapping[str, Any]) -> str:
    """Readable arm label such as 'TP8 EP1 | MTP K=3 | kv dram/mooncake'."""
    parts: list[str] = []
    if row.get(Col.IS_MULTINODE) or row.get(Col.PREFILL_TP) is not None:
        pre = f"P{row.get(Col.PREFILL_NUM_WORKERS) or 1}xTP{row.get(Col.PREFILL_TP)}"
        if (row.get(Col.PREFILL_EP) or 1) > 1:
            pre += f"EP{row.get(Col.PREFILL_EP)}"
        if row.get(Col.PREFILL_DP_ATTENTION):
            pre += "dpa"
        dec = f"D{row.get(Col.DECODE_NUM_WORKERS) or 1}xTP{row.get(Col.DECODE_TP)}"
        if (row.get(Col.DECODE_EP) or 1) > 1:
            dec += f"EP{row.get(Col.DECODE_EP)}"
        if row.get(Col.DECODE_DP_ATTENTION):
            dec += "dpa"
        if row.get(Col.PREFILL_TP) is not None:
            topo = f"{pre} {dec}"
        elif row.get(Col.TP) is not None:
            topo = f"TP{row.get(Col.TP)}"
        else:
            topo = f"{row.get(Col.PREFILL_GPUS)}P+{row.get(Col.DECODE_GPUS)}D GPUs"
    else:
        topo = f"TP{row.get(Col.TP)} EP{row.get(Col.EP) or 1}"
        for col, tag in ((Col.PP, "PP"), (Col.DCP_SIZE, "DCP"), (Col.PCP_SIZE, "PCP")):
            if (row.get(col) or 1) > 1:
                topo += f" {tag}{row.get(col)}"
    if row.get(Col.DP_ATTENTION) and "dpa" not in topo:
        topo += " DPA"
    if row.get(Col.DISAGG):
        topo += " disagg"
    parts.append(topo)
    spec = row.get(Col.SPEC_DECODING) or "none"
    if spec != "none":
        s = str(spec).upper()
        method = row.get(Col.SPEC_METHOD)
        if method and str(method).lower() != str(spec).lower():
            s += f" {method}"
        if row.get(Col.NUM_SPEC_TOKENS):
            s += f" K={row.get(Col.NUM_SPEC_TOKENS)}"
        parts.append(s)
    else:
        parts.append("no spec")
    kv = row.get(Col.KV_OFFLOADING) or "none"
    backend = row.get(Col.KV_OFFLOAD_BACKEND)
    parts.append(f"kv {kv}/{backend}" if backend and kv != "none" else f"kv {kv}")
    return " | ".join(parts)


def _derive(row: Row) -> None:
    for col, default in _DEFAULTS.items():
        if row.get(col) is None:
            row[col] = default
    if row.get(Col.HW_LABEL) and not row.get(Col.HW):
        row[Col.HW] = canonical_hw(str(row[Col.HW_LABEL]))
    if row.get(Col.HW) and not row.get(Col.HW_LABEL):
        row[Col.HW_LABEL] = row[Col.HW]
    if row.get(Col.HW):
        row[Col.HW] = canonical_hw(str(row[Col.HW]))
    if row.get(Col.NUM_GPUS) is None:
        pre, dec = row.get(Col.PREFILL_GPUS), row.get(Col.DECODE_GPUS)
        if pre is not None and dec is not None:
            row[Col.NUM_GPUS] = int(pre) + int(dec)
        elif row.get(Col.TP) is not None:
            row[Col.NUM_GPUS] = int(row[Col.TP]) * int(row[Col.PP]) * int(row[Col.PCP_SIZE])
    gpus = row.get(Col.NUM_GPUS)
    if not gpus and row.get(Col.TPUT_PER_GPU) is None and row.get(Col.TOTAL_TPUT) is not None:
        row[Col.WARNINGS] = [
            *(row.get(Col.WARNINGS) or []),
            "GPU count unknown (neither the file nor its name says it): per-GPU throughput not "
            "computed, so the point has no place on a per-GPU frontier",
        ]
    if gpus:
        for total, per in (
            (Col.TOTAL_TPUT, Col.TPUT_PER_GPU),
            (Col.OUTPUT_TPUT, Col.OUTPUT_TPUT_PER_GPU),
            (Col.INPUT_TPUT, Col.INPUT_TPUT_PER_GPU),
        ):
            if row.get(per) is None and row.get(total) is not None:
                row[per] = float(row[total]) / gpus
            if row.get(total) is None and row.get(per) is not None:
                row[total] = float(row[per]) * gpus
    if row.get(Col.TOTAL_TPUT) is None and None not in (
        row.get(Col.INPUT_TPUT),
        row.get(Col.OUTPUT_TPUT),
    ):
        row[Col.TOTAL_TPUT] = float(row[Col.INPUT_TPUT]) + float(row[Col.OUTPUT_TPUT])
        if gpus and row.get(Col.TPUT_PER_GPU) is None:
            row[Col.TPUT_PER_GPU] = row[Col.TOTAL_TPUT] / gpus
    # Interactivity from TPOT when the format does not carry it: 1 / pXX_tpot (the slow tail).
    derived = False
    definition = row.get(Col.INTVTY_DEFINITION)
    for stat in STATS if definition in (None, "inv_tpot_percentile") else ():
        tpot = row.get(f"{stat}_tpot")
        key = f"{stat}_intvty"
        if row.get(key) is None and isinstance(tpot, int | float) and tpot > 0:
            row[key] = 1.0 / float(tpot)
            derived = True
    if derived and not row.get(Col.INTVTY_DEFINITION):
        row[Col.INTVTY_DEFINITION] = "inv_tpot_percentile"
    issued, ok = row.get(Col.NUM_REQUESTS_TOTAL), row.get(Col.NUM_REQUESTS_SUCCESSFUL)
    if (
        row.get(Col.ERROR_RATE) is None
        and row.get(Col.SCENARIO) != "agentic-coding"
        and isinstance(issued, int | float)
        and issued
        and ok is not None
    ):
        row[Col.ERROR_RATE] = max(0.0, 1.0 - float(ok) / float(issued))
    acc, drafts = row.get(Col.SPEC_ACCEPTED_TOKENS), row.get(Col.SPEC_DRAFTS)
    if (
        row.get(Col.AL_MEASURED) is None
        and isinstance(acc, int | float)
        and isinstance(drafts, int | float)
        and drafts > 0
    ):
        row[Col.AL_MEASURED] = 1.0 + float(acc) / float(drafts)
    dtoks = row.get(Col.SPEC_DRAFT_TOKENS)
    if (
        row.get(Col.DRAFT_ACCEPTANCE_RATE) is None
        and isinstance(acc, int | float)
        and isinstance(dtoks, int | float)
        and dtoks > 0
    ):
        row[Col.DRAFT_ACCEPTANCE_RATE] = float(acc) / float(dtoks)


def _check(row: Row) -> None:
    for col in (Col.CONC,):
        if row.get(col) is None:
            raise SchemaError(col, "required: the concurrency of the point was not found")
        if row[col] <= 0:
            raise SchemaError(col, f"expected a positive concurrency, got {row[col]}")
    if all(row.get(c) is None for c in _POSITIVE):
        raise SchemaError(
            Col.TPUT_PER_GPU, "no throughput found (need a per-GPU, total or output throughput)"
        )
    for col in _POSITIVE:
        v = row.get(col)
        if v is not None and v <= 0:
            raise SchemaError(col, f"expected a positive throughput, got {v}")
    for stat in STATS:
        v = row.get(f"{stat}_tpot")
        if v is not None and v <= 0:
            raise SchemaError(f"{stat}_tpot", f"expected a positive TPOT in seconds, got {v}")
    for spec in SPECS.values():
        v = row.get(spec.name)
        if spec.group in _NON_NEGATIVE_GROUPS and isinstance(v, float) and v < 0:
            raise SchemaError(spec.name, f"expected a non-negative value, got {v}")
    er = row.get(Col.ERROR_RATE)
    if er is not None and er > 1.0:
        raise SchemaError(Col.ERROR_RATE, f"expected a fraction in 0..1, got {er}")
    _check_units(row)


def _check_units(row: Row) -> None:
    # Milliseconds written where seconds belong show up as a factor of 1000 between a file's
    # TPOT and its interactivity (1/TPOT); real files agree within a few percent.
    for stat in STATS:
        tpot, intvty = row.get(f"{stat}_tpot"), row.get(f"{stat}_intvty")
        if tpot and intvty and not 0.1 <= tpot * intvty <= 10:
            raise SchemaError(
                f"{stat}_tpot",
                f"{stat}_tpot {tpot:g} s and {stat}_intvty {intvty:g} tok/s/user disagree "
                f"{tpot * intvty:.3g}-fold: wrong units? (TPOT in seconds, interactivity = 1/TPOT)",
            )


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
        try:
            col = Col(key)
        except ValueError as exc:
            raise SchemaError(key, "not a canonical column (reader bug)") from exc
        row[col] = _coerce(col, value)
    row[Col.RUN_ID] = run_id
    row[Col.SOURCE_PATH] = source_path
    row[Col.SOURCE_SHA256] = source_sha256
    row[Col.ARTIFACT] = artifact
    row[Col.INGESTED_AT] = ingested_at
    _derive(row)
    for col in (Col.NUM_GPUS, *(Col(f"{s}_{lat}") for s in STATS for lat in LATENCIES)):
        row[col] = _coerce(col, row.get(col))
    for col in SPECS:
        if col not in row:
            row[col] = None
        elif SPECS[col].dtype == pa.float64() and row[col] is not None:
            row[col] = _coerce(col, row[col])
    _check(row)
    row[Col.ARM_ID] = arm_id(row)
    row[Col.ARM_LABEL] = arm_label(row)
    row[Col.POINT_ID] = _hash(run_id, row[Col.ARM_ID], row[Col.CONC], source_path)
    return {str(k): v for k, v in row.items()}

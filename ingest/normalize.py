"""Turn a reader's partial row into a complete, validated canonical row.

Readers record what their format says; this module derives what every row must have (canonical
hardware, GPU count, per-GPU throughput, interactivity, error rate, arm id and label, point id) and
checks the data contract, so the rules live in one place.

Two entry points apply the same rules. `normalize` completes one row and raises the first
`SchemaError` it meets. `normalize_batch` completes a whole ingest batch as one polars frame: it
checks the values' types column by column, does the derivations and the contract checks as
expressions over the batch, and sends every row that any check flags through `normalize`, so a
refused row gets exactly the error (field and reason) the one-row path gives, and the rest of the
batch carries on.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from json.encoder import encode_basestring_ascii as _json_str
from typing import Any

import polars as pl
import pyarrow as pa

from ingest.errors import SchemaError
from ingest.schema import ARM_KEY, LATENCIES, SPECS, STATS, Col, polars_schema

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
_NO_GPU_COUNT = (
    "GPU count unknown (neither the file nor its name says it): per-GPU throughput not "
    "computed, so the point has no place on a per-GPU frontier"
)
_INT_LIMIT = 2**63

# What each column holds, decided once from the schema (not per value).
_FLOAT, _INT, _BOOL, _STR, _FLOAT_LIST, _STR_LIST, _OTHER = range(7)


def _kind_of(dtype: pa.DataType) -> int:
    if pa.types.is_boolean(dtype):
        return _BOOL
    if pa.types.is_integer(dtype):
        return _INT
    if pa.types.is_floating(dtype):
        return _FLOAT
    if pa.types.is_string(dtype):
        return _STR
    if pa.types.is_list(dtype):
        return _FLOAT_LIST if pa.types.is_floating(dtype.value_type) else _STR_LIST
    return _OTHER


_KIND: dict[str, int] = {str(c): _kind_of(s.dtype) for c, s in SPECS.items()}
# Any key a reader may use (a Col or its string) -> the plain column name.
_NAMES: dict[str, str] = {str(c): str(c) for c in Col}
_FLOAT64: tuple[str, ...] = tuple(str(c) for c, s in SPECS.items() if s.dtype == pa.float64())
_FLOAT64_SET = frozenset(_FLOAT64)
_RECOERCED: tuple[str, ...] = (
    str(Col.NUM_GPUS),
    *(f"{s}_{lat}" for s in STATS for lat in LATENCIES),
)
_NON_NEGATIVE: tuple[str, ...] = tuple(
    str(c) for c, s in SPECS.items() if s.group in _NON_NEGATIVE_GROUPS and _KIND[c] == _FLOAT
)
_HASH_ENCODER = json.JSONEncoder(sort_keys=True, default=str)
_REQUEST_RATE = str(Col.REQUEST_RATE)
# The longest text a string field (or one item of a string list) may hold: longer is a reject
# naming the field (real values are under 1,000 characters; a 50 MB model name is an attack).
MAX_STRING_CHARS = 4096
_STR_COLS: tuple[str, ...] = tuple(c for c, k in _KIND.items() if k == _STR)
_STR_LIST_COLS: tuple[str, ...] = tuple(c for c, k in _KIND.items() if k == _STR_LIST)
_CONC = str(Col.CONC)


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


def _coerce(col: str, value: Any) -> Any:
    if value is None:
        return None
    kind = _KIND[col]
    if kind == _FLOAT:
        # inf - inf and nan - nan are nan: the common case (a finite float) in one test.
        if type(value) is float and value - value == 0.0:
            return value
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise SchemaError(col, f"expected a number, got {type(value).__name__} {value!r}")
        f = float(value)
        if not math.isfinite(f):
            # An infinite request rate is vLLM's "every request at once" (request_rate: inf).
            if col == _REQUEST_RATE and f == math.inf:
                return f
            raise SchemaError(col, f"expected a finite number, got {value!r}")
        return f
    if kind == _INT:
        if type(value) is int and -_INT_LIMIT < value < _INT_LIMIT:
            return value
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
        if abs(value) >= _INT_LIMIT:
            raise SchemaError(col, f"integer {value} is out of range")
        return value
    if kind == _STR:
        if type(value) is str:
            return value if value.isascii() else _text(col, value)
        if isinstance(value, dict | list):
            return json.dumps(value, sort_keys=True)
        return _text(col, str(value))
    if kind == _BOOL:
        return value if type(value) is bool else parse_bool(value, col)
    if kind == _FLOAT_LIST:
        if not isinstance(value, list):
            raise SchemaError(col, f"expected a list, got {type(value).__name__}")
        out = []
        for v in value:
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                raise SchemaError(col, f"expected finite numbers in the list, got {v!r}")
            out.append(float(v))
        return out
    if kind == _STR_LIST:
        if not isinstance(value, list):
            raise SchemaError(col, f"expected a list, got {type(value).__name__}")
        return [_text(col, str(v)) for v in value]
    return value


def _text(col: str, value: str) -> str:
    # A JSON "\\ud800" escape decodes to a lone surrogate, which Arrow cannot store as UTF-8.
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise SchemaError(
            col, f"not valid Unicode text: a lone surrogate at character {exc.start}"
        ) from exc
    return value


def _hash(*parts: Any) -> str:
    # The same text as json.dumps(parts, sort_keys=True, default=str), without a new encoder.
    blob = _HASH_ENCODER.encode(parts).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def _point_id(run_id: Any, arm: Any, conc: Any, source_path: Any, request_rate: Any = None) -> str:
    """`_hash(run_id, arm, conc, source_path)`; the JSON text built directly for the usual types.

    A point identified by its request rate hashes the rate too (`conc` is null there), so the
    points of one request-rate sweep file get distinct ids.
    """
    if request_rate is not None:
        return _hash(run_id, arm, conc, source_path, repr(float(request_rate)))
    if type(run_id) is str and type(arm) is str and type(conc) is int and type(source_path) is str:
        text = f"[{_json_str(run_id)}, {_json_str(arm)}, {int.__repr__(conc)}, {_json_str(source_path)}]"
        return hashlib.sha256(text.encode()).hexdigest()[:16]
    return _hash(run_id, arm, conc, source_path)


_BY_RATE = "load=request_rate"


def _by_rate(conc: Any, rate: Any) -> bool:
    """A point whose load is its request rate (no concurrency): its arm is a request-rate sweep,
    never the same arm as concurrency points of the same configuration."""
    return conc is None and rate is not None


def arm_id(row: Mapping[str, Any]) -> str:
    """Stable hash of the arm identity (everything in ARM_KEY; conc and run excluded)."""
    if _by_rate(row.get(Col.CONC), row.get(Col.REQUEST_RATE)):
        return _hash(*[row.get(c) for c in ARM_KEY], _BY_RATE)
    return _hash(*[row.get(c) for c in ARM_KEY])


def _n(value: Any) -> str:
    """A label part: the value, or '?' when the files did not say it (never 'None')."""
    return "?" if value is None else str(value)


def arm_label(row: Mapping[str, Any]) -> str:
    """Readable arm label such as 'TP8 EP1 | MTP K=3 | kv dram/mooncake'."""
    parts: list[str] = []
    if row.get(Col.IS_MULTINODE) or row.get(Col.PREFILL_TP) is not None:
        pre = f"P{row.get(Col.PREFILL_NUM_WORKERS) or 1}xTP{_n(row.get(Col.PREFILL_TP))}"
        if (row.get(Col.PREFILL_EP) or 1) > 1:
            pre += f"EP{row.get(Col.PREFILL_EP)}"
        if row.get(Col.PREFILL_DP_ATTENTION):
            pre += "dpa"
        dec = f"D{row.get(Col.DECODE_NUM_WORKERS) or 1}xTP{_n(row.get(Col.DECODE_TP))}"
        if (row.get(Col.DECODE_EP) or 1) > 1:
            dec += f"EP{row.get(Col.DECODE_EP)}"
        if row.get(Col.DECODE_DP_ATTENTION):
            dec += "dpa"
        if row.get(Col.PREFILL_TP) is not None:
            topo = f"{pre} {dec}"
        elif row.get(Col.TP) is not None:
            topo = f"TP{row.get(Col.TP)}"
        else:
            topo = f"{_n(row.get(Col.PREFILL_GPUS))}P+{_n(row.get(Col.DECODE_GPUS))}D GPUs"
    else:
        topo = f"TP{_n(row.get(Col.TP))} EP{row.get(Col.EP) or 1}"
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
    if _by_rate(row.get(Col.CONC), row.get(Col.REQUEST_RATE)):
        parts.append("by request rate")
    return " | ".join(parts)


def _derive(row: Row) -> None:
    for col, default in _DEFAULTS.items():
        if row.get(col) is None:
            row[col] = default
    if row.get(Col.HW_LABEL) or row.get(Col.HW):
        row[Col.HW_LABEL], row[Col.HW] = _hw_pair(row.get(Col.HW_LABEL), row.get(Col.HW))
    if row.get(Col.NUM_GPUS) is None:
        pre, dec = row.get(Col.PREFILL_GPUS), row.get(Col.DECODE_GPUS)
        if pre is not None and dec is not None:
            row[Col.NUM_GPUS] = int(pre) + int(dec)
        elif row.get(Col.TP) is not None:
            row[Col.NUM_GPUS] = int(row[Col.TP]) * int(row[Col.PP]) * int(row[Col.PCP_SIZE])
    gpus = row.get(Col.NUM_GPUS)
    if not gpus and row.get(Col.TPUT_PER_GPU) is None and row.get(Col.TOTAL_TPUT) is not None:
        row[Col.WARNINGS] = [*(row.get(Col.WARNINGS) or []), _NO_GPU_COUNT]
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
    _spec_from_measurements(row)


_SPEC_DETECTED = "detected"


def _spec_measured(row: Mapping[str, Any]) -> bool:
    """The point's own counters say speculative decoding ran: drafts were proposed, or an
    acceptance length was measured."""
    drafts, dtoks = row.get(Col.SPEC_DRAFTS), row.get(Col.SPEC_DRAFT_TOKENS)
    return (
        (isinstance(drafts, int | float) and drafts > 0)
        or (isinstance(dtoks, int | float) and dtoks > 0)
        or row.get(Col.AL_MEASURED) is not None
    )


def _spec_from_measurements(row: Row) -> None:
    """Speculative decoding recognised from the measurements, not only from labels.

    A point labelled `none` (or not labelled) whose counters show drafting gets
    `spec_decoding = "detected"` (the method is not known) and a warning; K is
    draft tokens / drafts when no configuration says it.
    """
    if not _spec_measured(row):
        return
    if row.get(Col.SPEC_DECODING) in (None, "none"):
        said = row.get(Col.SPEC_DECODING)
        row[Col.SPEC_DECODING] = _SPEC_DETECTED
        al = row.get(Col.AL_MEASURED)
        evidence = f"measured AL {al:.2f}" if isinstance(al, float) else "draft counters"
        row[Col.WARNINGS] = [
            *(row.get(Col.WARNINGS) or []),
            f"speculative decoding recognised from the measurements ({evidence}) although "
            f"{'the labels said none' if said == 'none' else 'no label said so'}; method unknown",
        ]
    drafts, dtoks = row.get(Col.SPEC_DRAFTS), row.get(Col.SPEC_DRAFT_TOKENS)
    if (
        row.get(Col.NUM_SPEC_TOKENS) is None
        and isinstance(drafts, int | float)
        and isinstance(dtoks, int | float)
        and drafts > 0
    ):
        k = float(dtoks) / float(drafts)
        if abs(k - round(k)) < 1e-6 and round(k) >= 1:
            row[Col.NUM_SPEC_TOKENS] = round(k)


def _check(row: Row) -> None:
    if row.get(Col.CONC) is None and row.get(Col.REQUEST_RATE) is None:
        raise SchemaError(
            Col.CONC,
            "required: the load of the point was not found: neither a concurrency (conc, "
            "max_concurrency) nor a request rate (request_rate); see docs/formats.md, 'Load'",
        )
    if row.get(Col.CONC) is not None and row[Col.CONC] <= 0:
        raise SchemaError(Col.CONC, f"expected a positive concurrency, got {row[Col.CONC]}")
    rate = row.get(Col.REQUEST_RATE)
    if rate is not None and not rate > 0:
        raise SchemaError(Col.REQUEST_RATE, f"expected a positive request rate, got {rate}")
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
    for name in _NON_NEGATIVE:
        v = row.get(name)
        if isinstance(v, float) and v < 0:
            raise SchemaError(name, f"expected a non-negative value, got {v}")
    er = row.get(Col.ERROR_RATE)
    if er is not None and er > 1.0:
        raise SchemaError(Col.ERROR_RATE, f"expected a fraction in 0..1, got {er}")
    _check_lengths(row)
    _check_units(row)


def _check_lengths(row: Row) -> None:
    for col in _STR_COLS:
        v = row.get(col)
        if isinstance(v, str) and len(v) > MAX_STRING_CHARS:
            raise SchemaError(
                col, f"{len(v)} characters, over the {MAX_STRING_CHARS} character limit"
            )
    for col in _STR_LIST_COLS:
        for item in row.get(col) or ():
            if isinstance(item, str) and len(item) > MAX_STRING_CHARS:
                raise SchemaError(
                    col, f"an item of {len(item)} characters, over the {MAX_STRING_CHARS} limit"
                )


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
        col = _NAMES.get(key)
        if col is None:
            raise SchemaError(key, "not a canonical column (reader bug)")
        row[col] = _coerce(col, value)
    row[Col.RUN_ID] = run_id
    row[Col.SOURCE_PATH] = source_path
    row[Col.SOURCE_SHA256] = source_sha256
    row[Col.ARTIFACT] = artifact
    row[Col.INGESTED_AT] = ingested_at
    _derive(row)
    for col in _RECOERCED:
        row[col] = _coerce(col, row.get(col))
    for col in _KIND:
        if col not in row:
            row[col] = None
        elif row[col] is not None and col in _FLOAT64_SET:
            row[col] = _coerce(col, row[col])
    _check(row)
    row[Col.ARM_ID] = arm_id(row)
    row[Col.ARM_LABEL] = arm_label(row)
    row[Col.POINT_ID] = _point_id(
        run_id, row[Col.ARM_ID], row[Col.CONC], source_path, row[Col.REQUEST_RATE]
    )
    return {str(k): v for k, v in row.items()}


# ---- the batch path ---------------------------------------------------------------------------

_POLARS: pl.Schema = polars_schema()
_ORDER: tuple[str, ...] = tuple(_POLARS)
# Set by the pipeline or derived here last; a reader that sets one takes the one-row path.
NOT_FROM_READERS = frozenset(
    str(c)
    for c in (
        Col.RUN_ID,
        Col.SOURCE_PATH,
        Col.SOURCE_SHA256,
        Col.ARTIFACT,
        Col.INGESTED_AT,
        Col.ARM_ID,
        Col.ARM_LABEL,
        Col.POINT_ID,
    )
)
# arm_label reads the arm key and these two (the GPU split of a multinode row without prefill_tp),
# and arm_id and arm_label both read the load columns (a request-rate sweep is its own arm).
_LABEL_KEY: tuple[str, ...] = (
    *(str(c) for c in ARM_KEY),
    str(Col.PREFILL_GPUS),
    str(Col.DECODE_GPUS),
    str(Col.CONC),
    str(Col.REQUEST_RATE),
)
_NULLS: dict[str, pl.Expr] = {c: pl.lit(None, dtype=t).alias(c) for c, t in _POLARS.items()}
_INDEX = "__row"
_FLAGGED = "__flagged"
_NONE = type(None)


@dataclass
class Batch:
    """What `normalize_batch` made of a batch of partial rows.

    frame: the rows that satisfy the contract, in input order, with every canonical column
        (the points schema's polars dtypes).
    point_ids: per input row, the id of its point (None when it was refused).
    errors: input row index -> why it was refused.
    """

    frame: pl.DataFrame
    point_ids: list[str | None]
    errors: dict[int, SchemaError] = field(default_factory=dict)


def _is_text(value: str) -> bool:
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _clean(kind: int, vals: list[Any], flagged: set[int]) -> None:
    """Make one column's values exactly what `_coerce` would return, in place.

    A value of any other shape is left to `normalize` (its row is flagged and the value nulled), so
    the batch only ever holds values of the column's own type.
    """
    types = set(map(type, vals))
    types.discard(_NONE)
    if kind == _FLOAT:
        # Finiteness is checked over the frame, after the derivations.
        if types <= {float}:
            return
        for i, v in enumerate(vals):
            t = type(v)
            if t is float or v is None:
                continue
            if t is int:
                try:
                    vals[i] = float(v)
                    continue
                except OverflowError:
                    pass
            flagged.add(i)
            vals[i] = None
    elif kind == _INT:
        if types <= {int}:
            present = [v for v in vals if v is not None]
            if not present or (min(present) > -_INT_LIMIT and max(present) < _INT_LIMIT):
                return
        for i, v in enumerate(vals):
            if v is None or (type(v) is int and -_INT_LIMIT < v < _INT_LIMIT):
                continue
            flagged.add(i)
            vals[i] = None
    elif kind == _BOOL:
        if types <= {bool}:
            return
        for i, v in enumerate(vals):
            if v is not None and type(v) is not bool:
                flagged.add(i)
                vals[i] = None
    elif kind == _STR:
        if types <= {str} and _is_text("".join(filter(None, vals))):
            return
        for i, v in enumerate(vals):
            if v is None or (type(v) is str and _is_text(v)):
                continue
            if type(v) is dict or type(v) is list:
                # server_flags and the like arrive as objects: stored as canonical JSON text.
                try:
                    vals[i] = json.dumps(v, sort_keys=True)
                    continue
                except (TypeError, ValueError, RecursionError):
                    pass
            flagged.add(i)
            vals[i] = None
    elif kind in (_FLOAT_LIST, _STR_LIST):
        convert = _finite_floats if kind == _FLOAT_LIST else _text_list
        for i, v in enumerate(vals):
            if v is None:
                continue
            out = convert(v) if type(v) is list else None
            if out is None:
                flagged.add(i)
            vals[i] = out
    else:
        for i, v in enumerate(vals):
            if v is not None:
                flagged.add(i)
                vals[i] = None


def _text_list(values: list[Any]) -> list[str] | None:
    if all(type(x) is str for x in values) and _is_text("".join(values)):
        return list(values)
    return None


def _finite_floats(values: list[Any]) -> list[float] | None:
    out: list[float] = []
    for x in values:
        t = type(x)
        if t is int:
            try:
                x = float(x)
            except OverflowError:
                return None
        elif t is not float:
            return None
        if x - x != 0.0:
            return None
        out.append(x)
    return out


def _hw_pair(label: str | None, hw: str | None) -> tuple[str | None, str | None]:
    """`_derive`'s hardware rules on one (hw_label, hw) pair."""
    if label and not hw:
        hw = canonical_hw(str(label))
    if hw and not label:
        label = hw
    if hw:
        hw = canonical_hw(str(hw))
    return label, hw


def _c(col: Col | str) -> pl.Expr:
    return pl.col(str(col))


@dataclass(frozen=True)
class _Plan:
    """`_derive` and the contract checks as expressions, for batches with given columns.

    Only the steps whose inputs can be non-null are kept (a step whose inputs are null everywhere
    changes nothing), so a batch pays for the columns it has.
    """

    stages: tuple[tuple[pl.Expr, ...], ...]
    violations: pl.Expr
    live: frozenset[str]


@functools.lru_cache(maxsize=64)
def _plan(present: frozenset[str]) -> _Plan:
    live = set(present) | {str(k) for k in _DEFAULTS}
    stages: list[list[pl.Expr]] = [
        [
            *(_c(k).fill_null(pl.lit(v, dtype=_POLARS[str(k)])) for k, v in _DEFAULTS.items()),
            pl.lit(False).alias(_FLAGGED),
        ]
    ]
    checks: list[pl.Expr] = [pl.col(_FLAGGED)]

    def has(*cols: Col | str) -> bool:
        return all(str(c) in live for c in cols)

    gpus = _c(Col.NUM_GPUS)
    pre, dec = _c(Col.PREFILL_GPUS), _c(Col.DECODE_GPUS)
    tp, pp, pcp = _c(Col.TP), _c(Col.PP), _c(Col.PCP_SIZE)
    split, single = has(Col.PREFILL_GPUS, Col.DECODE_GPUS), has(Col.TP)
    if split or single:
        from_split = gpus.is_null() & pre.is_not_null() & dec.is_not_null()
        from_tp = gpus.is_null() & tp.is_not_null()
        if not has(Col.NUM_GPUS):
            gpus = pl.lit(None, dtype=pl.Int64)
            from_split, from_tp = pre.is_not_null() & dec.is_not_null(), tp.is_not_null()
        # prefill + decode GPUs first, else tp * pp * pcp. Python's integers do not wrap: a row
        # whose count could leave int64 is flagged for the row path.
        count: pl.Expr = gpus
        big: pl.Expr = pl.lit(False)
        if single:
            wide = (tp.abs() > 2**20) | (pp.abs() > 2**20) | (pcp.abs() > 2**20)
            count = pl.when(from_tp).then(tp * pp * pcp).otherwise(count)
            big = pl.when(from_tp).then(wide).otherwise(big)
        if split:
            wide = (pre.abs() > 2**40) | (dec.abs() > 2**40)
            count = pl.when(from_split).then(pre + dec).otherwise(count)
            big = pl.when(from_split).then(wide).otherwise(big)
        stages.append([count.alias(str(Col.NUM_GPUS)), big.alias(_FLAGGED)])
        live.add(str(Col.NUM_GPUS))
        gpus = _c(Col.NUM_GPUS)
    known = (gpus.is_not_null() & (gpus != 0)) if has(Col.NUM_GPUS) else pl.lit(False)
    pairs = (
        (Col.TOTAL_TPUT, Col.TPUT_PER_GPU),
        (Col.OUTPUT_TPUT, Col.OUTPUT_TPUT_PER_GPU),
        (Col.INPUT_TPUT, Col.INPUT_TPUT_PER_GPU),
    )
    step: list[pl.Expr] = []
    if has(Col.TOTAL_TPUT):
        warnings = _c(Col.WARNINGS) if has(Col.WARNINGS) else pl.lit(None, pl.List(pl.String))
        no_per = _c(Col.TPUT_PER_GPU).is_null() if has(Col.TPUT_PER_GPU) else pl.lit(True)
        empty = pl.lit([], dtype=pl.List(pl.String))
        step.append(
            pl.when(~known & no_per & _c(Col.TOTAL_TPUT).is_not_null())
            .then(pl.concat_list(warnings.fill_null(empty), pl.lit(_NO_GPU_COUNT)))
            .otherwise(warnings)
            .alias(str(Col.WARNINGS))
        )
        live.add(str(Col.WARNINGS))
    if has(Col.NUM_GPUS):
        for total, per in pairs:
            if has(total):
                step.append(
                    pl.when(known & _c(per).is_null() & _c(total).is_not_null())
                    .then(_c(total) / gpus)
                    .otherwise(_c(per))
                    .alias(str(per))
                )
                live.add(str(per))
    stages.append(step)
    if has(Col.NUM_GPUS):
        stages.append(
            [
                pl.when(known & _c(total).is_null() & _c(per).is_not_null())
                .then(_c(per) * gpus)
                .otherwise(_c(total))
                .alias(str(total))
                for total, per in pairs
                if has(per)
            ]
        )
        live.update(str(total) for total, per in pairs if has(per))
    if has(Col.INPUT_TPUT, Col.OUTPUT_TPUT):
        summed = (
            _c(Col.TOTAL_TPUT).is_null()
            & _c(Col.INPUT_TPUT).is_not_null()
            & _c(Col.OUTPUT_TPUT).is_not_null()
        )
        live.add(str(Col.TOTAL_TPUT))
        summed_total = (
            pl.when(summed)
            .then(_c(Col.INPUT_TPUT) + _c(Col.OUTPUT_TPUT))
            .otherwise(_c(Col.TOTAL_TPUT))
            .alias(str(Col.TOTAL_TPUT))
        )
        if not has(Col.NUM_GPUS):
            stages.append([summed_total])
        else:
            live.add(str(Col.TPUT_PER_GPU))
            per_from_sum = summed & known & _c(Col.TPUT_PER_GPU).is_null()
            stages.append([summed_total, per_from_sum.alias("__per_from_sum")])
            stages.append(
                [
                    pl.when(pl.col("__per_from_sum"))
                    .then(_c(Col.TOTAL_TPUT) / gpus)
                    .otherwise(_c(Col.TPUT_PER_GPU))
                    .alias(str(Col.TPUT_PER_GPU))
                ]
            )
    # Interactivity from TPOT when the format does not carry it: 1 / pXX_tpot (the slow tail).
    definition = _c(Col.INTVTY_DEFINITION)
    eligible = definition.is_null() | (definition == "inv_tpot_percentile")
    step = []
    fills = []
    for stat in STATS:
        key, tpot = f"{stat}_intvty", f"{stat}_tpot"
        if has(tpot):
            cond = eligible & pl.col(key).is_null() & (pl.col(tpot) > 0)
            step.append(pl.when(cond).then(1.0 / pl.col(tpot)).otherwise(pl.col(key)).alias(key))
            fills.append(cond.fill_null(False))
            live.add(key)
    if fills:
        step.append(
            pl.when(pl.any_horizontal(fills) & (definition.is_null() | (definition == "")))
            .then(pl.lit("inv_tpot_percentile"))
            .otherwise(definition)
            .alias(str(Col.INTVTY_DEFINITION))
        )
        live.add(str(Col.INTVTY_DEFINITION))
    issued, ok = _c(Col.NUM_REQUESTS_TOTAL), _c(Col.NUM_REQUESTS_SUCCESSFUL)
    if has(Col.NUM_REQUESTS_TOTAL, Col.NUM_REQUESTS_SUCCESSFUL):
        failed = 1.0 - ok.cast(pl.Float64) / issued.cast(pl.Float64)
        step.append(
            pl.when(
                _c(Col.ERROR_RATE).is_null()
                & (_c(Col.SCENARIO) != "agentic-coding")
                & issued.is_not_null()
                & (issued != 0)
                & ok.is_not_null()
            )
            .then(pl.when(failed > 0.0).then(failed).otherwise(0.0))
            .otherwise(_c(Col.ERROR_RATE))
            .alias(str(Col.ERROR_RATE))
        )
        live.add(str(Col.ERROR_RATE))
    acc, drafts = _c(Col.SPEC_ACCEPTED_TOKENS), _c(Col.SPEC_DRAFTS)
    if has(Col.SPEC_ACCEPTED_TOKENS, Col.SPEC_DRAFTS):
        step.append(
            pl.when(_c(Col.AL_MEASURED).is_null() & acc.is_not_null() & (drafts > 0))
            .then(1.0 + acc / drafts)
            .otherwise(_c(Col.AL_MEASURED))
            .alias(str(Col.AL_MEASURED))
        )
        live.add(str(Col.AL_MEASURED))
    if has(Col.SPEC_ACCEPTED_TOKENS, Col.SPEC_DRAFT_TOKENS):
        dtoks = _c(Col.SPEC_DRAFT_TOKENS)
        step.append(
            pl.when(_c(Col.DRAFT_ACCEPTANCE_RATE).is_null() & acc.is_not_null() & (dtoks > 0))
            .then(acc / dtoks)
            .otherwise(_c(Col.DRAFT_ACCEPTANCE_RATE))
            .alias(str(Col.DRAFT_ACCEPTANCE_RATE))
        )
        live.add(str(Col.DRAFT_ACCEPTANCE_RATE))
    stages.append(step)
    checks.extend(_checks(live))
    # Unknown (null) counts as a violation: the row path then decides.
    violations = pl.any_horizontal(checks).fill_null(True)
    return _Plan(tuple(tuple(s) for s in stages if s), violations, frozenset(live))


def _checks(live: set[str]) -> list[pl.Expr]:
    """`_check`, and the finiteness `_coerce` demands, over the columns that can be non-null.

    Each check may flag more than `_check` refuses (a flagged row takes the row path, which
    decides); it never flags less.
    """

    def cols(names: Sequence[Col | str]) -> list[pl.Expr]:
        return [pl.col(str(c)) for c in names if str(c) in live]

    out: list[pl.Expr] = []
    # A point whose counters show speculative decoding takes the row path, which recognises it
    # (`_spec_from_measurements`).
    measured = cols([Col.SPEC_DRAFTS, Col.SPEC_DRAFT_TOKENS, Col.AL_MEASURED])
    if measured:
        unlabelled = _c(Col.SPEC_DECODING).is_null() | (_c(Col.SPEC_DECODING) == "none")
        no_k = _c(Col.NUM_SPEC_TOKENS).is_null() if str(Col.NUM_SPEC_TOKENS) in live else True
        out.append(
            (pl.any_horizontal(e.is_not_null() for e in measured) & (unlabelled | no_k)).fill_null(
                True
            )
        )
    conc = _c(Col.CONC) if str(Col.CONC) in live else pl.lit(None, dtype=pl.Int64)
    # A request-rate point (conc null) takes the row path, which checks its rate.
    out.append(conc.is_null() | (conc <= 0))
    if _REQUEST_RATE in live:
        out.append((_c(Col.REQUEST_RATE) <= 0).fill_null(False))
    positive = cols(_POSITIVE)
    if not positive:
        return [pl.lit(True)]
    out.append(pl.all_horizontal(e.is_null() for e in positive))
    out.append((pl.min_horizontal(positive) <= 0).fill_null(False))
    tpots = cols([f"{s}_tpot" for s in STATS])
    if tpots:
        out.append((pl.min_horizontal(tpots) <= 0).fill_null(False))
    non_negative = cols(_NON_NEGATIVE)
    if non_negative:
        out.append((pl.min_horizontal(non_negative) < 0).fill_null(False))
    if str(Col.ERROR_RATE) in live:
        out.append((_c(Col.ERROR_RATE) > 1.0).fill_null(False))
    # _check_lengths: no string (or string list item) over MAX_STRING_CHARS.
    texts = [pl.col(c).str.len_chars() for c in _STR_COLS if c in live]
    texts += [
        pl.col(c).list.eval(pl.element().str.len_chars()).list.max()
        for c in _STR_LIST_COLS
        if c in live
    ]
    if texts:
        out.append((pl.max_horizontal(texts) > MAX_STRING_CHARS).fill_null(False))
    # _check_units: TPOT x interactivity within 0.1..10 (a zero interactivity is flagged too).
    products = [
        pl.col(f"{s}_tpot") * pl.col(f"{s}_intvty")
        for s in STATS
        if f"{s}_tpot" in live and f"{s}_intvty" in live
    ]
    if products:
        out.append((pl.min_horizontal(products) < 0.1).fill_null(False))
        out.append((pl.max_horizontal(products) > 10).fill_null(False))
    # A sum is finite only when every term is (one that overflows is flagged too).
    floats = cols(_FLOAT64)
    if floats:
        out.append(~pl.sum_horizontal(floats).is_finite())
    return out


def _columns(partials: Sequence[Mapping[str, Any]]) -> list[tuple[str, list[Any]]]:
    """The batch's values column by column: (key, one value per row, None where absent)."""
    first = tuple(partials[0])
    if all(tuple(p) == first for p in partials):
        # Files of one format usually have one layout: transpose at C speed.
        by_row = (p.values() for p in partials)
        return [(k, list(v)) for k, v in zip(first, zip(*by_row, strict=True), strict=True)]
    return [(key, [p.get(key) for p in partials]) for key in set().union(*partials)]


def normalize_batch(
    partials: Sequence[Mapping[str, Any]],
    *,
    run_id: str,
    source_paths: Sequence[str],
    source_sha256s: Sequence[str],
    artifacts: Sequence[str],
    ingested_at: Any,
) -> Batch:
    """Complete and validate a batch of canonical rows: `normalize` over every row, as one frame.

    Args:
        partials: the readers' rows (keys are column names).
        run_id, ingested_at: provenance shared by the batch.
        source_paths, source_sha256s, artifacts: provenance of each row.

    Returns:
        The rows that satisfy the contract as one frame in input order, each row's point id, and
        for each refused row the `SchemaError` that `normalize` raises for it.
    """
    n = len(partials)
    if not n:
        return Batch(pl.DataFrame(schema=_POLARS), [])
    flagged: set[int] = set()
    data: dict[str, list[Any]] = {}
    for key, vals in _columns(partials):
        name = _NAMES.get(key)
        if name is None or name in NOT_FROM_READERS:
            flagged.update(i for i, p in enumerate(partials) if key in p)
            continue
        _clean(_KIND[name], vals, flagged)
        data[name] = vals
    hw_label, hw = data.get(str(Col.HW_LABEL)), data.get(str(Col.HW))
    if hw_label is not None or hw is not None:
        seen: dict[tuple[str | None, str | None], tuple[str | None, str | None]] = {}
        pairs = zip(hw_label or [None] * n, hw or [None] * n, strict=True)
        out = [seen.get(p) or seen.setdefault(p, _hw_pair(*p)) for p in pairs]
        data[str(Col.HW_LABEL)] = [p[0] for p in out]
        data[str(Col.HW)] = [p[1] for p in out]
    data[str(Col.SOURCE_PATH)] = list(source_paths)
    data[str(Col.SOURCE_SHA256)] = list(source_sha256s)
    data[str(Col.ARTIFACT)] = list(artifacts)
    columns = [
        pl.Series(name, vals, dtype=_POLARS[name], strict=True) for name, vals in data.items()
    ]
    stamp = str(Col.INGESTED_AT)
    columns.append(
        pl.Series(stamp, [ingested_at], dtype=_POLARS[stamp], strict=False).new_from_index(0, n)
    )
    columns.append(pl.Series(str(Col.RUN_ID), [run_id], dtype=pl.String).new_from_index(0, n))
    plan = _plan(frozenset(data))
    have = {s.name for s in columns}
    # Eager steps: on a frame this wide the lazy optimiser costs more than it saves.
    work = (
        pl.DataFrame(columns)
        .with_row_index(_INDEX)
        .with_columns(_NULLS[c] for c in sorted(plan.live - have))
    )
    have |= plan.live | {_INDEX, _FLAGGED}
    for stage in plan.stages:
        work = work.with_columns(stage)
    if flagged:
        work = work.with_columns(
            (pl.col(_FLAGGED) | pl.col(_INDEX).is_in(sorted(flagged))).alias(_FLAGGED)
        )
    out_frame = work.with_columns(plan.violations.alias(_FLAGGED)).select(
        pl.col(c) if c in have else _NULLS[c] for c in (*_ORDER, _INDEX, _FLAGGED)
    )
    flags = out_frame.get_column(_FLAGGED)
    slow = out_frame.filter(flags).get_column(_INDEX).to_list() if flags.any() else []
    point_ids: list[str | None] = [None] * n
    errors: dict[int, SchemaError] = {}
    good = out_frame.filter(~flags) if slow else out_frame
    frame = _identified(good, run_id, point_ids, frozenset(have))
    rows, index = [], []
    for i in slow:
        try:
            row = normalize(
                partials[i],
                run_id=run_id,
                source_path=source_paths[i],
                source_sha256=source_sha256s[i],
                artifact=artifacts[i],
                ingested_at=ingested_at,
            )
        except SchemaError as exc:
            errors[i] = exc
            continue
        rows.append(row)
        index.append(i)
        point_ids[i] = row[Col.POINT_ID]
    if rows:
        by_row = pl.DataFrame(rows, schema=_POLARS, strict=False).with_columns(
            pl.Series(_INDEX, index, dtype=frame.schema[_INDEX])
        )
        frame = pl.concat([frame, by_row]).sort(_INDEX)
    return Batch(
        pl.DataFrame([s for s in frame.get_columns() if s.name != _INDEX]), point_ids, errors
    )


def _identified(
    good: pl.DataFrame, run_id: str, point_ids: list[str | None], live: frozenset[str]
) -> pl.DataFrame:
    """The batch rows with their arm id, arm label and point id (the frame of `normalize`)."""
    # Only the key columns that can be non-null are read back; the others are None everywhere.
    read = [c for c in _LABEL_KEY if c in live]
    at = {c: i for i, c in enumerate(read)}
    # Only whether a row is a request-rate point matters to the arm, not its conc or rate value.
    conc_null = pl.col(_CONC).is_null() if _CONC in live else pl.lit(True)
    by_rate = (
        conc_null & pl.col(_REQUEST_RATE).is_not_null() if _REQUEST_RATE in live else pl.lit(False)
    )

    def key_of(c: str) -> pl.Expr:
        if c == _REQUEST_RATE:
            return pl.when(by_rate).then(pl.lit(1.0)).otherwise(None).alias(c)
        if c == _CONC:
            return pl.lit(None, pl.Int64).alias(c)
        return pl.col(c)

    keys = good.select(key_of(c) for c in read).to_dict(as_series=False)
    seen: dict[tuple[Any, ...], tuple[str, str]] = {}
    arms: list[str] = []
    labels: list[str] = []
    for key in zip(*keys.values(), strict=True) if read else [()] * good.height:
        got = seen.get(key)
        if got is None:
            full = {c: key[at[c]] if c in at else None for c in _LABEL_KEY}
            got = seen[key] = (arm_id(full), arm_label(full))
        arms.append(got[0])
        labels.append(got[1])
    # _point_id's JSON text, with the run's and each arm's part encoded once.
    heads: dict[str, str] = {}
    run = _json_str(run_id) if type(run_id) is str else None
    ids: list[str] = []
    sha256 = hashlib.sha256
    rates = (
        good.get_column(_REQUEST_RATE).to_list() if _REQUEST_RATE in live else [None] * good.height
    )
    for arm, conc, path, rate in zip(
        arms,
        good.get_column(str(Col.CONC)).to_list(),
        good.get_column(str(Col.SOURCE_PATH)).to_list(),
        rates,
        strict=True,
    ):
        if run is None or type(conc) is not int or type(path) is not str or rate is not None:
            ids.append(_point_id(run_id, arm, conc, path, rate))
            continue
        head = heads.get(arm)
        if head is None:
            head = heads[arm] = f"[{run}, {_json_str(arm)}, "
        text = f"{head}{int.__repr__(conc)}, {_json_str(path)}]"
        ids.append(sha256(text.encode()).hexdigest()[:16])
    for i, pid in zip(good.get_column(_INDEX).to_list(), ids, strict=True):
        point_ids[i] = pid
    made = {
        str(Col.ARM_ID): pl.Series(str(Col.ARM_ID), arms, dtype=pl.String),
        str(Col.ARM_LABEL): pl.Series(str(Col.ARM_LABEL), labels, dtype=pl.String),
        str(Col.POINT_ID): pl.Series(str(Col.POINT_ID), ids, dtype=pl.String),
    }
    return pl.DataFrame([made.get(s.name, s) for s in good.get_columns() if s.name != _FLAGGED])

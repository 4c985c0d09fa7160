"""A point's identity: canonical hardware, arm id and label, point id.

The one-row path calls `arm_id`, `arm_label` and `point_id` on each row; the batch path's
`identify` computes the same values for a whole frame, each distinct arm key once and each
point id's JSON text built from parts encoded once per run and arm.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from json.encoder import encode_basestring_ascii as _json_str
from typing import Any

import polars as pl

from ingest.contract.col import Col
from ingest.contract.schema import ARM_KEY

_HASH_ENCODER = json.JSONEncoder(sort_keys=True, default=str)
_REQUEST_RATE = str(Col.REQUEST_RATE)
_CONC = str(Col.CONC)
# arm_label reads the arm key and these two (the GPU split of a multinode row without prefill_tp),
# and arm_id and arm_label both read the load columns (a request-rate sweep is its own arm).
LABEL_KEY: tuple[str, ...] = (
    *(str(c) for c in ARM_KEY),
    str(Col.PREFILL_GPUS),
    str(Col.DECODE_GPUS),
    str(Col.CONC),
    str(Col.REQUEST_RATE),
)


def canonical_hw(label: str) -> str:
    """InferenceX-app's canonical hardware: drop up to the last ':', keep the first '-' segment."""
    tail = label.rsplit(":", 1)[-1]
    return tail.split("-", 1)[0].lower()


def hw_pair(label: str | None, hw: str | None) -> tuple[str | None, str | None]:
    """The hardware rules (`canonical_hw`) on one (hw_label, hw) pair."""
    if label and not hw:
        hw = canonical_hw(str(label))
    if hw and not label:
        label = hw
    if hw:
        hw = canonical_hw(str(hw))
    return label, hw


def _hash(*parts: Any) -> str:
    # The same text as json.dumps(parts, sort_keys=True, default=str), without a new encoder.
    blob = _HASH_ENCODER.encode(parts).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def point_id(run_id: Any, arm: Any, conc: Any, source_path: Any, request_rate: Any = None) -> str:
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


def identify(
    good: pl.DataFrame,
    run_id: str,
    point_ids: list[str | None],
    live: frozenset[str],
    index: str,
    drop: str,
) -> pl.DataFrame:
    """The batch rows with their arm id, arm label and point id (the frame of `normalize`).

    Args:
        good: the batch's accepted rows, with their input row number in column `index`.
        run_id: the batch's run.
        point_ids: per input row; filled in for the rows of `good`.
        live: the columns that can be non-null.
        index, drop: the row-number column; a column to leave out of the result.
    """
    # Only the key columns that can be non-null are read back; the others are None everywhere.
    read = [c for c in LABEL_KEY if c in live]
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
            full = {c: key[at[c]] if c in at else None for c in LABEL_KEY}
            got = seen[key] = (arm_id(full), arm_label(full))
        arms.append(got[0])
        labels.append(got[1])
    # point_id's JSON text, with the run's and each arm's part encoded once.
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
            ids.append(point_id(run_id, arm, conc, path, rate))
            continue
        head = heads.get(arm)
        if head is None:
            head = heads[arm] = f"[{run}, {_json_str(arm)}, "
        text = f"{head}{int.__repr__(conc)}, {_json_str(path)}]"
        ids.append(sha256(text.encode()).hexdigest()[:16])
    for i, pid in zip(good.get_column(index).to_list(), ids, strict=True):
        point_ids[i] = pid
    made = {
        str(Col.ARM_ID): pl.Series(str(Col.ARM_ID), arms, dtype=pl.String),
        str(Col.ARM_LABEL): pl.Series(str(Col.ARM_LABEL), labels, dtype=pl.String),
        str(Col.POINT_ID): pl.Series(str(Col.POINT_ID), ids, dtype=pl.String),
    }
    return pl.DataFrame([made.get(s.name, s) for s in good.get_columns() if s.name != drop])

"""Helpers shared by the InferenceX / vLLM JSON readers.

`Fields` gives typed access to one JSON object and raises `ParseError` naming the file and the
dotted field path, so every reader reports bad input the same way. The InferenceX topology and
identity fields that fixed-sequence and agentic aggregates share are read here once. What
InferenceX encodes in file names lives in `ingest.readers._names`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.readers.base import ReadResult, Row, SourceFile

_INT_LIMIT = 2**63


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


class Fields:
    """Typed, error-reporting access to one JSON object.

    Args:
        rel: the file, relative to the ingested root (used in errors).
        obj: the JSON object.
        prefix: dotted path of `obj` inside the file ('' for the top level).
    """

    def __init__(self, rel: str, obj: Mapping[str, Any], prefix: str = "") -> None:
        self.rel = rel
        self.obj = obj
        self.prefix = prefix

    @classmethod
    def top(cls, src: SourceFile, doc: Any, what: str) -> Fields:
        """The top-level object of a file.

        Raises:
            ParseError: when the document is not a JSON object.
        """
        if not isinstance(doc, dict):
            raise ParseError(src.rel, "", f"expected a JSON object ({what}), got {_kind(doc)}")
        return cls(src.rel, doc)

    def path(self, key: str) -> str:
        return f"{self.prefix}.{key}" if self.prefix else key

    def error(self, key: str, reason: str) -> ParseError:
        return ParseError(self.rel, self.path(key), reason)

    def has(self, key: str) -> bool:
        return self.obj.get(key) is not None

    def _get(self, key: str, required: bool) -> Any:
        value = self.obj.get(key)
        if value is None:
            self._absent(key, required)
        return value

    def _absent(self, key: str, required: bool) -> None:
        """An absent or null field: an error when it is required."""
        if required:
            raise self.error(key, "required field is missing or null")

    def num(self, key: str, *, required: bool = False) -> float | None:
        """A finite number as float (ints accepted: InferenceX writes integral floats as ints)."""
        value = self.obj.get(key)
        # inf - inf and nan - nan are nan: a finite float, the common case, in one test.
        if type(value) is float and value - value == 0.0:
            return value
        if value is None:
            self._absent(key, required)
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(key, f"expected a number, got {_kind(value)} {value!r:.60}")
        try:
            out = float(value)
        except OverflowError as exc:
            raise self.error(key, "number is too large") from exc
        if not math.isfinite(out):
            raise self.error(
                key, f"expected a finite number, got {value!r} (a JSON Infinity or 1e400 literal)"
            )
        return out

    def int_(self, key: str, *, required: bool = False) -> int | None:
        """An integer (an integral float is accepted)."""
        value = self.obj.get(key)
        if type(value) is int and -_INT_LIMIT < value < _INT_LIMIT:
            return value
        if value is None:
            self._absent(key, required)
            return None
        if isinstance(value, float) and math.isfinite(value) and value == int(value):
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(key, f"expected an integer, got {_kind(value)} {value!r:.60}")
        if abs(value) >= _INT_LIMIT:
            raise self.error(key, "integer is out of range")
        return value

    def pos_int(self, key: str, *, required: bool = False) -> int | None:
        """A strictly positive integer (sizes, counts of GPUs, concurrency)."""
        value = self.obj.get(key)
        if type(value) is int and 0 < value < _INT_LIMIT:
            return value
        if value is None and not required:
            return None
        value = self.int_(key, required=required)
        if value is not None and value <= 0:
            raise self.error(key, f"expected a positive integer, got {value}")
        return value

    def str_(self, key: str, *, required: bool = False) -> str | None:
        value = self.obj.get(key)
        if type(value) is str:
            return value
        if value is None:
            self._absent(key, required)
            return None
        if not isinstance(value, str):
            raise self.error(key, f"expected a string, got {_kind(value)} {value!r:.60}")
        return value

    def bool_(self, key: str, *, required: bool = False) -> bool | None:
        """A boolean; InferenceX writes `dp_attention` as the string 'true'/'false'."""
        value = self.obj.get(key)
        if type(value) is bool:
            return value
        if value is None:
            self._absent(key, required)
            return None
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in {"true", "false"}:
            return value.strip().lower() == "true"
        raise self.error(key, f"expected a boolean or 'true'/'false', got {value!r:.60}")

    def sub(self, key: str, *, required: bool = False) -> Fields | None:
        """A nested object (None when absent or null)."""
        value = self._get(key, required)
        if value is None:
            return None
        if not isinstance(value, dict):
            raise self.error(key, f"expected an object, got {_kind(value)}")
        return Fields(self.rel, value, self.path(key))

    def nums(self, key: str) -> list[float] | None:
        """A list of finite numbers (None when absent)."""
        value = self._get(key, False)
        if value is None:
            return None
        if not isinstance(value, list):
            raise self.error(key, f"expected a list of numbers, got {_kind(value)}")
        holder = Fields(self.rel, {str(i): v for i, v in enumerate(value)}, self.path(key))
        out: list[float] = []
        for i in range(len(value)):
            item = holder.num(str(i), required=True)
            assert item is not None
            out.append(item)
        return out


def put(row: Row, col: Col, value: Any) -> None:
    """Set a column when the value is known (None leaves it for normalize to derive)."""
    if value is not None:
        row[col._value_] = value  # `.value` is a descriptor call; `_value_` is the same str


def warn(row: Row, message: str) -> None:
    """Append a data-quality note to the row's warnings."""
    row.setdefault(Col.WARNINGS._value_, []).append(message)


def read_identity(f: Fields, row: Row) -> None:
    """The InferenceX identity block shared by fixed-sequence and agentic aggregates.

    An empty string is the workflow's unset env var (`hw: ""`, `framework: ""` in real
    `results_bmk` downloads), so it is unknown, not a value: `--set` may fill it.
    """
    put(row, Col.HW_LABEL, f.str_("hw", required=True) or None)
    put(row, Col.CONC, f.pos_int("conc"))
    put(row, Col.IMAGE, f.str_("image") or None)
    put(row, Col.MODEL, f.str_("model") or None)
    put(row, Col.MODEL_PREFIX, f.str_("infmax_model_prefix") or None)
    put(row, Col.FRAMEWORK, f.str_("framework") or None)
    put(row, Col.PRECISION, f.str_("precision") or None)
    put(row, Col.SPEC_DECODING, f.str_("spec_decoding") or None)
    put(row, Col.DISAGG, f.bool_("disagg"))
    put(row, Col.RECIPE_FINGERPRINT, f.str_("recipe_fingerprint") or None)
    put(row, Col.IS_MULTINODE, f.bool_("is_multinode"))


_ROLE_FIELDS = (("tp", "int"), ("ep", "int"), ("dp_attention", "bool"), ("num_workers", "int"))


def read_topology(f: Fields, row: Row) -> bool:
    """Single-node tp/pp/ep/dcp/pcp/dp_attention, or the split prefill/decode shape.

    Returns:
        True when the row has the split prefill/decode (v2) shape.
    """
    split = f.has("prefill_tp")
    for col, key in ((Col.PP, "pp"), (Col.DCP_SIZE, "dcp_size"), (Col.PCP_SIZE, "pcp_size")):
        put(row, col, f.pos_int(key))
    put(row, Col.DP_ATTENTION, f.bool_("dp_attention"))
    if not split:
        put(row, Col.TP, f.pos_int("tp", required=True))
        put(row, Col.EP, f.pos_int("ep"))
        return False
    roles: dict[str, dict[str, Any]] = {}
    for role in ("prefill", "decode"):
        got: dict[str, Any] = {}
        for name, kind in _ROLE_FIELDS:
            full = f"{role}_{name}"
            # An aggregated multinode worker has decode_tp/decode_ep forced to 0 (formats.md 2.3).
            got[name] = f.bool_(full) if kind == "bool" else f.int_(full)
            if kind == "int" and got[name] is not None and got[name] < 0:
                raise f.error(full, f"expected a non-negative integer, got {got[name]}")
            put(row, Col(f"{role}_{name}"), got[name])
        gpus = f.int_(f"num_{role}_gpu")
        if gpus is not None and gpus < 0:
            raise f.error(f"num_{role}_gpu", f"expected a non-negative GPU count, got {gpus}")
        put(row, Col.PREFILL_GPUS if role == "prefill" else Col.DECODE_GPUS, gpus)
        roles[role] = got
    pre, dec = roles["prefill"], roles["decode"]
    # InferenceX's multinode rollup: tp = prefill_tp + decode_tp, ep = max, dp_attention = OR.
    tp = f.pos_int("tp") or ((pre["tp"] or 0) + (dec["tp"] or 0)) or None
    if tp is None:
        raise f.error("prefill_tp", "prefill_tp + decode_tp must be positive")
    put(row, Col.TP, tp)
    put(row, Col.EP, f.pos_int("ep") or max(pre["ep"] or 1, dec["ep"] or 1))
    if not f.has("dp_attention"):
        put(row, Col.DP_ATTENTION, bool(pre["dp_attention"] or dec["dp_attention"]))
    if not f.has("is_multinode"):
        put(row, Col.IS_MULTINODE, True)
    return True


def read_power(f: Fields, row: Row) -> None:
    """Average GPU power, when the power adapter marked the window valid."""
    valid = f.obj.get("power_valid")
    if isinstance(valid, bool | int | float) and valid == 1:
        put(row, Col.AVG_POWER_W, f.num("avg_power_w"))


def read_warnings(f: Fields, row: Row) -> None:
    """Copy the aggregate's own `warnings` list (strings) into the row."""
    value = f.obj.get("warnings")
    if value is None:
        return
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise f.error("warnings", "expected a list of strings")
    for message in value:
        warn(row, message)


class RepeatedElements:
    """The elements of one JSON array seen so far, by their canonical text: an element that
    repeats an earlier one byte for byte (after key sorting) is the same measurement written
    twice, kept once with a note in the read's summary."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    def repeats(self, result: ReadResult, i: int, element: Any) -> bool:
        """True (and a note on `result`) when element `i` repeats an earlier element."""
        body = json.dumps(element, sort_keys=True)
        first = self._seen.setdefault(body, i)
        if first != i:
            result.notes.append(f"element {i} repeats element {first}; kept once")
            return True
        return False

"""The value of each canonical column, in the type the schema gives it (the coercion rules).

Both forms of one rule sit together here: `coerce_value` checks and converts one value for the
one-row path (raising `SchemaError`), and `clean_column` makes a whole column of a batch what
`coerce_value` would return, flagging every row whose value it cannot take so that row goes
through the one-row path and gets its exact error. `unfinite` is the batch form of the
finiteness `coerce_value` demands, evaluated after the derivations.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

import polars as pl
import pyarrow as pa

from ingest.contract.col import LATENCIES, STATS, Col
from ingest.contract.schema import SPECS
from ingest.errors import SchemaError

INT_LIMIT = 2**63

# What each column holds, decided once from the schema (not per value).
FLOAT, INT, BOOL, STR, FLOAT_LIST, STR_LIST, OTHER = range(7)


def _kind_of(dtype: pa.DataType) -> int:
    if pa.types.is_boolean(dtype):
        return BOOL
    if pa.types.is_integer(dtype):
        return INT
    if pa.types.is_floating(dtype):
        return FLOAT
    if pa.types.is_string(dtype):
        return STR
    if pa.types.is_list(dtype):
        return FLOAT_LIST if pa.types.is_floating(dtype.value_type) else STR_LIST
    return OTHER


KIND: dict[str, int] = {str(c): _kind_of(s.dtype) for c, s in SPECS.items()}
# Any key a reader may use (a Col or its string) -> the plain column name.
NAMES: dict[str, str] = {str(c): str(c) for c in Col}
FLOAT64: tuple[str, ...] = tuple(str(c) for c, s in SPECS.items() if s.dtype == pa.float64())
FLOAT64_SET = frozenset(FLOAT64)
# Derived columns whose values are coerced again after the derivations (the row path).
RECOERCED: tuple[str, ...] = (
    str(Col.NUM_GPUS),
    *(f"{s}_{lat}" for s in STATS for lat in LATENCIES),
)
_REQUEST_RATE = str(Col.REQUEST_RATE)
_NONE = type(None)


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


def coerce_value(col: str, value: Any) -> Any:
    """`value` as column `col` stores it (a float for a float column, ...); None stays None.

    Raises:
        SchemaError: naming `col` when the value cannot be that type (or is not finite).
    """
    if value is None:
        return None
    kind = KIND[col]
    if kind == FLOAT:
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
    if kind == INT:
        if type(value) is int and -INT_LIMIT < value < INT_LIMIT:
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
        if abs(value) >= INT_LIMIT:
            raise SchemaError(col, f"integer {value} is out of range")
        return value
    if kind == STR:
        if type(value) is str:
            return value if value.isascii() else _text(col, value)
        if isinstance(value, dict | list):
            return json.dumps(value, sort_keys=True)
        return _text(col, str(value))
    if kind == BOOL:
        return value if type(value) is bool else parse_bool(value, col)
    if kind == FLOAT_LIST:
        if not isinstance(value, list):
            raise SchemaError(col, f"expected a list, got {type(value).__name__}")
        out = []
        for v in value:
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                raise SchemaError(col, f"expected finite numbers in the list, got {v!r}")
            out.append(float(v))
        return out
    if kind == STR_LIST:
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


# ---- the batch form ---------------------------------------------------------------------------


def _is_text(value: str) -> bool:
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def clean_column(kind: int, vals: list[Any], flagged: set[int]) -> None:
    """Make one column's values exactly what `coerce_value` would return, in place.

    A value of any other shape is left to `normalize` (its row is flagged and the value nulled), so
    the batch only ever holds values of the column's own type.
    """
    types = set(map(type, vals))
    types.discard(_NONE)
    if kind == FLOAT:
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
    elif kind == INT:
        if types <= {int}:
            present = [v for v in vals if v is not None]
            if not present or (min(present) > -INT_LIMIT and max(present) < INT_LIMIT):
                return
        for i, v in enumerate(vals):
            if v is None or (type(v) is int and -INT_LIMIT < v < INT_LIMIT):
                continue
            flagged.add(i)
            vals[i] = None
    elif kind == BOOL:
        if types <= {bool}:
            return
        for i, v in enumerate(vals):
            if v is not None and type(v) is not bool:
                flagged.add(i)
                vals[i] = None
    elif kind == STR:
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
    elif kind in (FLOAT_LIST, STR_LIST):
        convert = _finite_floats if kind == FLOAT_LIST else _text_list
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


def unfinite(live: Iterable[str]) -> pl.Expr | None:
    """True where a float column of the batch is not finite (`coerce_value` refuses it; an
    infinite request rate, which it takes, is flagged too and decided by the one-row path)."""
    floats = [pl.col(c) for c in FLOAT64 if c in live]
    # A sum is finite only when every term is (one that overflows is flagged too).
    return ~pl.sum_horizontal(floats).is_finite() if floats else None

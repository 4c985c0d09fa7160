"""Forged Dash callback requests are the client's fault: 400, one log line, never a 500.

Dash's renderer always posts `/_dash-update-component` shaped by the app's callback map (the
callback's output, its outputs, inputs and state in order, each naming the declared component
and property) with the values the components hold. A request built by hand can post anything: an
unknown or client-side output, lists of the wrong length, a number where a dict belongs. Dash
trusts the shape, and a callback trusts the types its parameters declare, so such requests raised
deep inside and answered 500 with a traceback in the log (542 of 788 forged posts, 2.4 KB each).

When a callback request fails, `malformed_callback` says whether the request was at fault: it
names no server callback, its shape is not the callback's, or a value is not of the type the
callback's parameter declares (checked strictly with pydantic against the annotations). Then
the answer is 400 naming what was wrong. A request that is well formed and still fails is a bug
of ours and stays a 500 with its traceback.
"""

from __future__ import annotations

import inspect
import json
import typing
from functools import cache
from typing import Any

from pydantic import TypeAdapter, ValidationError
from typing_extensions import TypedDict  # pydantic reads typing's only from Python 3.12

CALLBACK_PATH = "/_dash-update-component"


def _declared_id(raw: str) -> Any:
    return json.loads(raw) if raw.startswith("{") else raw


def _wildcard(id_: Any) -> bool:
    return isinstance(id_, dict) and any(isinstance(v, list) for v in id_.values())


def _matches(item: Any, spec: dict[str, Any]) -> bool:
    """`item` (an input, state or output of the request) names the declared id and property."""
    declared = spec["id"]
    declared = _declared_id(declared) if isinstance(declared, str) else declared
    prop = str(spec["property"]).split("@", 1)[0]
    items = item if _wildcard(declared) and isinstance(item, list) else [item]
    for one in items:
        if not isinstance(one, dict) or str(one.get("property", "")).split("@", 1)[0] != prop:
            return False
        got = one.get("id")
        if _wildcard(declared):
            if (
                not isinstance(got, dict)
                or set(got) != set(declared)
                or any(got[k] != v for k, v in declared.items() if not isinstance(v, list))
            ):
                return False
        elif got != declared:
            return False
    return True


def _outputs(output: str) -> list[dict[str, Any]]:
    parts = output[2:-2].split("...") if output.startswith("..") else [output]
    out = []
    for part in parts:
        id_, prop = part.rsplit(".", 1)
        out.append({"id": id_, "property": prop})
    return out


@cache
def _hints(func: Any) -> tuple[tuple[str, Any], ...]:
    """(parameter name, TypeAdapter or None) of a callback function, in order."""
    target = inspect.unwrap(func)
    try:
        hints = typing.get_type_hints(target)
        params = list(inspect.signature(target).parameters)
    except (NameError, TypeError, ValueError):
        return ()
    out = []
    for name in params:
        hint = hints.get(name)
        try:
            out.append((name, None if hint in (None, Any) else TypeAdapter(hint)))
        except Exception:  # a hint pydantic cannot check is not checked
            out.append((name, None))
    return tuple(out)


def _value(item: Any) -> Any:
    if isinstance(item, list):
        return [i.get("value") if isinstance(i, dict) else None for i in item]
    return item.get("value") if isinstance(item, dict) else None


def malformed_callback(callback_map: dict[str, Any], body: Any) -> str | None:
    """What is wrong with a callback request's body (None: it is well formed)."""
    if not isinstance(body, dict):
        return "the body is not a JSON object"
    output = body.get("output")
    if not isinstance(output, str):
        return "the body names no output"
    cb = callback_map.get(output)
    if cb is None or "callback" not in cb:
        return f"no server callback has the output {output[:80]!r}"
    inputs, state = body.get("inputs"), body.get("state", [])
    if not isinstance(inputs, list) or not isinstance(state, list):
        return "inputs and state must be lists"
    if len(inputs) != len(cb["inputs"]) or len(state) != len(cb["state"]):
        return f"{output[:80]!r} takes {len(cb['inputs'])} inputs and {len(cb['state'])} states"
    for item, spec in zip([*inputs, *state], [*cb["inputs"], *cb["state"]], strict=True):
        if not _matches(item, spec):
            return f"an input or state is not {spec['id']}.{spec['property']}"
    outputs = body.get("outputs")
    declared = _outputs(output)
    given = outputs if output.startswith("..") else [outputs]
    if not isinstance(given, list) or len(given) != len(declared):
        return f"outputs do not match {output[:80]!r}"
    for item, spec in zip(given, declared, strict=True):
        if not _matches(item, spec):
            return f"an output is not {spec['id']}.{spec['property']}"
    changed = body.get("changedPropIds", [])
    if not isinstance(changed, list) or not all(isinstance(c, str) for c in changed):
        return "changedPropIds must be a list of strings"
    values = [_value(i) for i in [*inputs, *state]]
    for (name, adapter), value in zip(_hints(cb["callback"]), values, strict=False):
        if adapter is None:
            continue
        try:
            adapter.validate_python(value, strict=True)
        except ValidationError:
            return f"{name}: a value of the wrong type ({type(value).__name__})"
    return None


def control_values(values: Any, ids: Any) -> dict[str, Any]:
    """Pattern-matched control values keyed by their URL-state field (`{"type": "control",
    "field": ...}` ids, as the pages lay them out).

    Raises:
        ValueError: when the ids are not the controls' (a forged request; answered 400).
    """
    if not isinstance(values, list) or not isinstance(ids, list) or len(values) != len(ids):
        raise ValueError("malformed controls: values and ids must be lists of one length")
    out: dict[str, Any] = {}
    for i, v in zip(ids, values, strict=True):
        field = i.get("field") if isinstance(i, dict) else None
        if not isinstance(field, str):
            raise ValueError("malformed controls: an id without a field")
        out[field] = v
    return out


# The shapes of component data the callbacks read into, as annotations `malformed_callback`
# checks: a plotly click on a point (`customdata[0]` is its point id) and a ticked runs-grid row.
class ClickedPoint(TypedDict):
    """One point of a plotly `clickData`."""

    customdata: list[Any]


class ClickData(TypedDict, total=False):
    """A plotly `clickData`."""

    points: list[ClickedPoint]


class RunRow(TypedDict):
    """A ticked row of the runs grid."""

    run_id: str

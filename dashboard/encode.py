"""The JSON of a page layout or a callback answer: plotly's encoder's bytes, without its walk.

Dash encodes what it sends with plotly's `to_json_plotly`, which hands the value to orjson as it
is; when orjson cannot write something in it (a Dash component: every layout, and the answers
that carry components) it first walks the whole value in Python (`clean_to_json_compatible`),
every point of every figure included. On a run page's layout that walk is most of the request's
time. `to_json` gives orjson the components' `to_plotly_json()` as it meets them (its `default`
hook) and otherwise the same options and the same escapes, so the bytes are plotly's own; a
value holding anything else orjson cannot write goes to plotly's encoder, walk and all.
"""

from __future__ import annotations

from typing import Any

from plotly.io.json import to_json_plotly

try:  # the `fast` extra; without it plotly's encoder (its `json` engine) does everything
    import orjson
except ImportError:  # pragma: no cover - the install test runs without the extra
    orjson = None  # type: ignore[assignment]

# As plotly's orjson engine escapes its output (plotly/io/_json.py `_swap_orjson`): no `</script>`
# or line separator can close or break the script a page embeds it in.
_SWAPS = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("/", "\\u002f"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)


class _Unwritable(TypeError):
    """A value orjson cannot write that is not a component: plotly's encoder takes it."""


def _component(obj: Any) -> Any:
    # plotly's walk turns anything with `to_plotly_json` (Dash components, plotly figures)
    # into its JSON value; everything else orjson cannot write is plotly's.
    to_plotly_json = getattr(obj, "to_plotly_json", None)
    if to_plotly_json is None or not callable(to_plotly_json):
        raise _Unwritable(type(obj).__name__)
    return to_plotly_json()


def to_json(value: Any) -> str:
    """`plotly.io.json.to_json_plotly(value)`'s string, written by orjson in one pass."""
    if orjson is None or _plotly_engine() != "orjson":
        return str(to_json_plotly(value))
    try:
        out = orjson.dumps(
            value,
            default=_component,
            option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY,
        ).decode("utf8")
    except TypeError:  # `_Unwritable`, or a component whose JSON holds such a value
        return str(to_json_plotly(value))
    for unsafe, safe in _SWAPS:
        if unsafe in out:
            out = out.replace(unsafe, safe)
    return out


def _plotly_engine() -> str:
    from plotly.io.json import config

    engine = str(config.default_engine)
    return "orjson" if engine == "auto" else engine

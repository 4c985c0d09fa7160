"""Reading a Dash component tree in tests: its visible text and the components in it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def text(node: Any) -> str:
    """Every text child of a component tree, joined by spaces (numbers as they print)."""
    if node is None:
        return ""
    if isinstance(node, str | int | float):
        return str(node)
    if isinstance(node, list | tuple):
        return " ".join(text(n) for n in node if n is not None)
    kids = getattr(node, "children", None)
    return text(kids) if kids is not None else ""


def find(node: Any, pred: Callable[[Any], bool]) -> list[Any]:
    """The components of a tree for which `pred` holds, in document order."""
    out = [node] if pred(node) else []
    kids = getattr(node, "children", None)
    for kid in kids if isinstance(kids, list | tuple) else [kids] if kids is not None else []:
        out += find(kid, pred)
    return out


def by_id(node: Any, id_: str) -> list[Any]:
    """The components of a tree with this id."""
    return find(node, lambda n: getattr(n, "id", None) == id_)

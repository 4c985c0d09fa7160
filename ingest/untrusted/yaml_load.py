"""The one YAML loader: every YAML document the project reads goes through `load_yaml`.

`yaml.safe_load` builds an alias (`*a`) as a second reference to its anchor's object, so a 1 KB
"billion laughs" document (nine levels of ten aliases) loads quickly into a graph that is 10^9
nodes when anything walks it: validation, defaults, JSON, a pydantic model. Such a document took
35 s and 3 GB and then a `MemoryError` that lost the whole batch. `load_yaml` composes the node
graph first and counts what the aliases would expand to; beyond `MAX_ALIAS_NODES` nodes added by
aliases (real configuration files use a few anchors for shared defaults, a few hundred nodes) or
on a recursive alias, the document is refused with a `YAMLBombError` (a `yaml.YAMLError`, so every
caller's handling of invalid YAML applies) before any Python object is built.
"""

from __future__ import annotations

from typing import Any

import yaml

# Nodes an alias may add to a document once expanded, all aliases together.
MAX_ALIAS_NODES = 10_000


class YAMLBombError(yaml.YAMLError):
    """A document whose aliases expand beyond `MAX_ALIAS_NODES` nodes, or refer to themselves."""


def _expanded(node: yaml.Node, sizes: dict[int, int], open_: set[int], limit: int) -> int:
    """Nodes under `node` with every alias expanded (memoised per node object, so linear)."""
    key = id(node)
    if key in sizes:
        return sizes[key]
    if key in open_:
        raise YAMLBombError("an alias refers to a node that contains it (a recursive document)")
    open_.add(key)
    total = 1
    stack: list[Any] = []
    if isinstance(node, yaml.SequenceNode):
        stack = list(node.value)
    elif isinstance(node, yaml.MappingNode):
        stack = [n for pair in node.value for n in pair]
    for child in stack:
        total += _expanded(child, sizes, open_, limit)
        if total > limit:  # stop counting as soon as the bound is passed
            raise YAMLBombError(
                f"its aliases expand to over {MAX_ALIAS_NODES:,} more nodes than it holds "
                f"({limit - MAX_ALIAS_NODES:,}): refused as an alias bomb"
            )
    open_.discard(key)
    sizes[key] = total
    return total


def _distinct(node: yaml.Node, seen: set[int]) -> None:
    todo = [node]
    while todo:
        n = todo.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if isinstance(n, yaml.SequenceNode):
            todo.extend(n.value)
        elif isinstance(n, yaml.MappingNode):
            todo.extend(x for pair in n.value for x in pair)


def check_aliases(node: yaml.Node) -> None:
    """Raise `YAMLBombError` if the aliases in `node` expand beyond `MAX_ALIAS_NODES` nodes."""
    distinct: set[int] = set()
    _distinct(node, distinct)
    _expanded(node, {}, set(), len(distinct) + MAX_ALIAS_NODES)


# libyaml's parser when PyYAML was built with it (GuideLLM reports run to megabytes); the
# constructor, where the check sits, is Python in both.
_SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class BoundedSafeLoader(_SAFE_LOADER):  # type: ignore[misc]
    """A safe loader that checks alias expansion before constructing anything."""

    def construct_document(self, node: yaml.Node) -> Any:
        check_aliases(node)
        return super().construct_document(node)


def load_yaml(text: str | bytes) -> Any:
    """The document in `text`, as `yaml.safe_load` reads it; alias bombs raise `YAMLBombError`."""
    try:
        return yaml.load(text, Loader=BoundedSafeLoader)
    except RecursionError as exc:
        raise yaml.YAMLError("nested too deeply to read") from exc

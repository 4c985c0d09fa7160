"""Shared helpers for reader tests: load real fixtures, read + normalize, mutate documents."""

from __future__ import annotations

import contextlib
import copy
import json
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from ingest.errors import ParseError, SchemaError
from ingest.normalize.row import normalize
from ingest.readers.base import FileReader, ReadResult, SourceFile

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
Row = dict[str, Any]


def source(rel: str, data: bytes | None = None) -> SourceFile:
    """A SourceFile for a fixture (or for `data` under that name)."""
    path = FIXTURES / rel
    return SourceFile(path, rel, path.parent.name, path.read_bytes() if data is None else data)


def load(rel: str) -> tuple[SourceFile, Any]:
    src = source(rel)
    return src, json.loads(src.text())


def doc_of(rel: str) -> Any:
    return load(rel)[1]


def norm(src: SourceFile, partial: Row) -> Row:
    return normalize(
        partial,
        run_id="test",
        source_path=src.rel,
        source_sha256=src.sha256,
        artifact=src.artifact,
        ingested_at=None,
    )


def point(reader: FileReader, src: SourceFile, doc: Any) -> Row:
    """Sniff and read a document that yields one point, and normalize it."""
    assert reader.sniff(src, doc), f"{reader.name} does not claim {src.rel}"
    res = reader.read(src, doc)
    assert len(res.points) == 1 and not res.rejects
    return norm(src, res.points[0])


def read_point(reader: FileReader, rel: str) -> Row:
    """Read a real fixture file that yields one point, normalized."""
    src, doc = load(rel)
    return point(reader, src, doc)


def named(rel: str) -> SourceFile:
    """A SourceFile for a constructed document under a name that is not on disk."""
    return SourceFile(FIXTURES / rel, rel, "constructed", b"{}")


def fixture_files(pattern: str) -> list[str]:
    return sorted(str(p.relative_to(FIXTURES)) for p in FIXTURES.glob(pattern) if p.is_file())


def read_all(reader: FileReader, src: SourceFile, doc: Any) -> tuple[ReadResult, list[Row]]:
    res = reader.read(src, doc)
    return res, [norm(src, p) for p in res.points]


# ---- hypothesis: mutated real documents ---------------------------------------------------

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
    st.sampled_from(["true", "false", "", "on", "off", "inf", "0"]),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=5,
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(node, list):
        for i, v in enumerate(node[:4]):
            out.extend(_paths(v, (*prefix, i)))
    return out


@st.composite
def mutated(draw: st.DrawFn, doc: Any) -> Any:
    """`doc` with 1-4 nodes replaced by random JSON values, deleted, or numbers rescaled."""
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, 4))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            return draw(json_values)
        path = draw(st.sampled_from(paths))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        key = path[-1]
        action = draw(st.sampled_from(["replace", "delete", "scale"]))
        if action == "delete" and isinstance(parent, dict):
            del parent[key]
        elif action == "scale" and isinstance(parent[key], int | float):
            parent[key] = parent[key] * draw(st.sampled_from([-1, 0, 1e-9, 1e300, 2**64, 0.5]))
        else:
            parent[key] = draw(json_values)
    return doc


def check_only_contract_errors(reader: FileReader, src: SourceFile, doc: Any) -> None:
    """Sniffing never raises; reading raises only ParseError; normalizing only SchemaError."""
    if not reader.sniff(src, doc):
        return
    try:
        res = reader.read(src, doc)
    except ParseError:
        return
    for point in res.points:
        with contextlib.suppress(SchemaError):
            norm(src, point)

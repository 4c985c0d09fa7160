"""Helpers for tests of the unit and text readers: fixture directories as units, mutated text."""

from __future__ import annotations

from pathlib import Path

from hypothesis import strategies as st

from ingest.readers.base import SourceFile
from tests.ingest.readers._support import FIXTURES


def unit(
    rel_dir: str, rename: str | None = None, extra: dict[str, bytes] | None = None
) -> list[SourceFile]:
    """The files of a fixture directory as one unit; `rename` relabels the directory."""
    root = FIXTURES / rel_dir
    parent = str(Path(rel_dir).parent)
    name = rename or root.name
    files = [
        SourceFile(p, f"{parent}/{name}/{p.name}", name, p.read_bytes())
        for p in sorted(root.iterdir())
        if p.is_file()
    ]
    for fname, data in (extra or {}).items():
        files.append(SourceFile(root / fname, f"{parent}/{name}/{fname}", name, data))
    return files


def text_file(rel: str, text: str | bytes, artifact: str = "constructed") -> SourceFile:
    """A constructed file under a name that is not on disk."""
    return SourceFile(
        FIXTURES / rel, rel, artifact, text.encode() if isinstance(text, str) else text
    )


_garbage = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        ["nan", "inf", "-1", "1e309", "", ",,,", "{", "'", '"', "Accepted: x tokens", "# TYPE x"]
    ),
)


@st.composite
def mutated_text(draw: st.DrawFn, text: str) -> str:
    """`text` with 1-3 lines replaced, deleted, duplicated or cut, or a token swapped for garbage."""
    lines = text.splitlines()
    for _ in range(draw(st.integers(1, 3))):
        if not lines:
            lines = [draw(_garbage)]
        i = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["replace", "delete", "duplicate", "cut", "token"]))
        if action == "replace":
            lines[i] = draw(_garbage)
        elif action == "delete":
            del lines[i]
        elif action == "duplicate":
            lines.insert(i, lines[i])
        elif action == "cut":
            lines[i] = lines[i][: draw(st.integers(0, max(len(lines[i]) - 1, 0)))]
        else:
            tokens = lines[i].split(" ")
            j = draw(st.integers(0, len(tokens) - 1))
            tokens[j] = draw(_garbage)
            lines[i] = " ".join(tokens)
    return "\n".join(lines) + "\n"

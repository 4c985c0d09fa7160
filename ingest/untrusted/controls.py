"""Control characters in untrusted text: found (to refuse them in identity strings at ingest) and
escaped (wherever text reaches a terminal or a text export).

A file name or a result string can carry ESC (terminal escape sequences: retitle the window, move
the cursor, rewrite what was printed), BEL, NUL, a newline (a new line in a YAML snippet or a shell
line) or a C1 control (U+0080-U+009F; U+009B is a one-character CSI on many terminals).
`escape_controls` writes each as a visible escape (`\\x1b`, `\\n`, `\\x00`, `\\x9b`), so the text
shows as itself and does nothing.
"""

from __future__ import annotations

import re

# C0 controls, DEL and C1 controls.
CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")
# The same set without newline and tab (for the terminal, where a multi-line reason stays so).
CONTROLS_BUT_LAYOUT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# polars (Rust regex) spelling of CONTROLS.
CONTROLS_PATTERN = r"[\x00-\x1F\x7F-\x{9F}]"

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match[str]) -> str:
    ch = m.group(0)
    return _NAMED.get(ch) or f"\\x{ord(ch):02x}"


def escape_controls(text: str, *, keep_layout: bool = False) -> str:
    """`text` with every control character written as an escape (`\\x1b`, `\\n`); with
    `keep_layout`, newlines and tabs stay (a terminal may show them)."""
    return (CONTROLS_BUT_LAYOUT if keep_layout else CONTROLS).sub(_escape, text)


def first_control(text: str) -> str | None:
    """The first control character of `text` as its escape, or None when it has none."""
    m = CONTROLS.search(text)
    return None if m is None else _escape(m)

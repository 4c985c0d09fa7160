"""The `--format` options: their values are the formats of `analysis.render.FORMATS` that write
a table, so a format declared there is a choice here too. Apart from `common`: listing them in the
help imports the analysis package (0.03-0.1 s), which a command without the option (`ingest`)
does not pay for."""

from __future__ import annotations

from typing import Annotated, Any

import typer


def format_names(text_only: bool) -> tuple[str, ...]:
    """The `--format` values: the formats of `analysis.render.FORMATS` that write any table (text
    ones only where a command prints several tables one after another)."""
    from analysis.render import FORMATS

    return tuple(
        f.name for f in FORMATS.values() if f.render is not None and not (text_only and f.binary)
    )


def _format_check(text_only: bool) -> Any:
    # Checked against the registry when the command line is parsed, so a format declared there
    # is a choice here too.
    def check(value: str) -> str:
        names = format_names(text_only)
        if value not in names:
            raise typer.BadParameter(f"{value!r} is not one of {', '.join(names)}")
        return value

    return check


# The analysis commands' formats (text: some print two tables), and the store tables' (any).
FmtOpt = Annotated[
    str,
    typer.Option(
        "--format", callback=_format_check(True), help=", ".join(format_names(text_only=True))
    ),
]
FileFmtOpt = Annotated[
    str,
    typer.Option(
        "--format", callback=_format_check(False), help=", ".join(format_names(text_only=False))
    ),
]

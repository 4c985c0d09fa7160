"""Terminal tables: identifier columns are never cut or wrapped, whatever the terminal width."""

from __future__ import annotations

from rich.table import Table

# Columns a user copies into the next command (`--run`, `paretolens job`, `--point`).
WHOLE: frozenset[str] = frozenset({"run_id", "point_id", "arm_id", "conc", "job", "point", "run"})


def keep_whole(table: Table) -> Table:
    """Give every WHOLE column of `table` the width of its longest cell, unwrapped; the other
    columns share what is left."""
    for col in table.columns:
        if str(col.header) in WHOLE:
            col.no_wrap = True
            col.min_width = max([len(str(col.header)), *(len(str(c)) for c in col.cells)])
    return table

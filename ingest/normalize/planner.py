"""The batch plan being built by the derivations (`derive.py`, `speculative.py`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from ingest.contract.col import Col


@dataclass
class Planner:
    """A plan being built: the columns that can be non-null so far, the stages (each one
    `with_columns`, reading what the stages before it wrote) and the flags."""

    live: set[str]
    stages: list[list[pl.Expr]] = field(default_factory=list)
    flags: list[pl.Expr] = field(default_factory=list)

    def has(self, *cols: Col | str) -> bool:
        return all(str(c) in self.live for c in cols)

"""Latency and error SLOs: the frontier of the points a service could actually offer.

An SLO is a set of limits on point metrics, e.g. `p90_ttft<=2,p90_tpot<=0.05,error_rate<=0.01`
(latencies in seconds, as the points table stores them). A point that breaks any limit is
`out_of_slo`: marked, with the limit it broke as its reason, and left out of the frontier, the
"rank arms at x" ranking and the pruned list. No peer tool offers this; InferenceX filters only
TTFT > 60 s and cost > $5/M from its charts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

from ingest.contract.col import Col
from ingest.contract.schema import better

_LIMIT = re.compile(r"^\s*(?P<col>[A-Za-z0-9_.]+)\s*(?P<op><=|>=)\s*(?P<value>[-+0-9.eE]+)\s*$")


@dataclass(frozen=True)
class Limit:
    """One limit: `column <= value` (lower is better) or `column >= value` (higher is better)."""

    column: str
    op: str
    value: float

    def text(self) -> str:
        """The limit as written in a URL or on the command line, e.g. `p90_ttft<=2`."""
        return f"{self.column}{self.op}{self.value:g}"

    def broken(self) -> pl.Expr:
        """True where a point breaks the limit; a point without the metric breaks it too (it
        cannot show it meets it)."""
        col = pl.col(self.column).cast(pl.Float64)
        bad = col > self.value if self.op == "<=" else col < self.value
        return bad.fill_null(True) | col.is_nan()

    def reason(self) -> pl.Expr:
        """Why a point breaks the limit, e.g. `p90_ttft 3.21 > 2 (SLO)`."""
        col = pl.col(self.column).cast(pl.Float64)
        sign = ">" if self.op == "<=" else "<"
        return (
            pl.when(col.is_null() | col.is_nan())
            .then(pl.lit(f"no {self.column} to check against the SLO {self.text()}"))
            .otherwise(pl.format(f"{self.column} {{}} {sign} {self.value:g} (SLO)", col.round(4)))
        )


@dataclass(frozen=True)
class Slo:
    """A set of limits (empty: no SLO)."""

    limits: tuple[Limit, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.limits)

    def text(self) -> str:
        """The SLO as one string, e.g. `p90_ttft<=2,error_rate<=0.01` (empty when none)."""
        return ",".join(limit.text() for limit in self.limits)

    def describe(self) -> str:
        """The SLO for people: `p90_ttft <= 2 s, error_rate <= 0.01` (units from the schema)."""
        from ingest.contract.schema import SPECS

        parts = []
        for limit in self.limits:
            unit = SPECS[Col(limit.column)].unit
            parts.append(f"{limit.column} {limit.op} {limit.value:g}{' ' + unit if unit else ''}")
        return ", ".join(parts)

    def broken(self, points: pl.DataFrame) -> pl.Series:
        """True where a point breaks any limit (False everywhere without an SLO)."""
        if not self.limits:
            return pl.Series("out_of_slo", [False] * points.height, dtype=pl.Boolean)
        return points.select(
            pl.any_horizontal(limit.broken() for limit in self.limits).alias("out_of_slo")
        ).to_series()

    def reasons(self, points: pl.DataFrame) -> pl.Series:
        """Every limit each point breaks, joined with `; ` (null where it meets the SLO)."""
        if not self.limits:
            return pl.Series("slo_reason", [None] * points.height, dtype=pl.String)
        texts = [
            pl.when(limit.broken()).then(limit.reason()).otherwise(None) for limit in self.limits
        ]
        joined = pl.concat_str(texts, separator="; ", ignore_nulls=True)
        return points.select(
            pl.when(joined != "").then(joined).otherwise(None).alias("slo_reason")
        ).to_series()


def parse_slo(text: str | None) -> Slo:
    """Parse `p90_ttft<=2,p90_tpot<=0.05,error_rate<=0.01` (latencies in seconds).

    Raises:
        ValueError: naming the part that is not `column<=value` / `column>=value`, a column that
            is not a metric, or a direction that would reward the worse side.
    """
    if not text or not text.strip():
        return Slo()
    limits = []
    for part in text.split(","):
        if not part.strip():
            continue
        m = _LIMIT.match(part)
        if m is None:
            raise ValueError(
                f"SLO limit {part.strip()!r}: expected column<=value or column>=value, "
                "e.g. p90_ttft<=2 (seconds)"
            )
        col, op = m["col"], m["op"]
        try:
            value = float(m["value"])
            direction = better(col)
        except ValueError as exc:
            raise ValueError(f"SLO limit {part.strip()!r}: {exc}") from exc
        if (direction == "lower") != (op == "<="):
            want = "<=" if direction == "lower" else ">="
            raise ValueError(
                f"SLO limit {part.strip()!r}: {col} is better {direction}, so its limit is "
                f"{col}{want}value"
            )
        limits.append(Limit(col, op, value))
    return Slo(tuple(limits))


__all__ = ["Limit", "Slo", "parse_slo"]

"""The data contract's checks, each stated once as (fields, test, reason).

A row breaks a `Rule` where its `test` holds for one of its `fields`; the reject names that
field (the first, in the order given) and says `reason`. `RULES` is read by both paths:

- the one-row path (`check_row`) goes through the rules in order and raises the first broken
  one as `SchemaError(field, reason)`;
- the batch path (`rule_flags`) ORs each rule's polars expression over the frame; a flagged row
  is sent through the one-row path, which names the field and the reason.

A test has both forms next to each other: `first_broken` over one row's values and `expr` over
a batch. The batch form may flag more than the row form refuses (the one-row path then
decides), never less: one grouped expression per rule keeps the batch fast (polars pays per
expression, not per row). `tests/ingest/test_normalize_batch.py` holds the two paths equal.

Adding a rule: append `Rule(fields, test, reason)` to `RULES` (at the place in the order where it
should be checked), with a test below or a new one that gives both forms.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import polars as pl

from ingest.contract.col import STATS, Col
from ingest.contract.schema import SPECS
from ingest.errors import SchemaError
from ingest.normalize.values import FLOAT, KIND, STR, STR_LIST
from ingest.untrusted.controls import CONTROLS, CONTROLS_PATTERN, first_control

Row = dict[str, Any]

# The longest text a string field (or one item of a string list) may hold: longer is a reject
# naming the field (real values are under 1,000 characters; a 50 MB model name is an attack).
MAX_STRING_CHARS = 4096


class Test(Protocol):
    """What breaks a rule, in the two forms the paths need."""

    def first_broken(self, fields: Sequence[str], row: Mapping[str, Any]) -> str | None:
        """The first of `fields` whose value in `row` breaks the rule (None: the row keeps it)."""
        ...

    def expr(self, fields: Sequence[str], live: frozenset[str]) -> pl.Expr | None:
        """True (or null) where a row of the batch may break the rule; None when no row can
        (`live`: the columns that can be non-null in this batch, the others are null)."""
        ...

    def figures(self, field: str, row: Mapping[str, Any]) -> dict[str, Any]:
        """What the reason may quote besides `field` and `value`."""
        ...


@dataclass(frozen=True)
class Rule:
    """One check of the contract: `fields`, the `test` one of them breaks, the reject's `reason`
    (a format string over `{field}`, `{value}` and the test's `figures`)."""

    fields: tuple[str, ...]
    test: Test
    reason: str

    def error(self, field: str, row: Mapping[str, Any]) -> SchemaError:
        """The reject of a row whose `field` breaks this rule."""
        figures = {"field": field, "value": row.get(field), **self.test.figures(field, row)}
        return SchemaError(field, self.reason.format_map(figures))


def _live(fields: Sequence[str], live: frozenset[str]) -> list[pl.Expr]:
    return [pl.col(f) for f in fields if f in live]


@dataclass(frozen=True)
class NoneOf:
    """Broken when none of `among` is known (the row names the rule's field)."""

    among: tuple[str, ...]

    def first_broken(self, fields: Sequence[str], row: Mapping[str, Any]) -> str | None:
        return fields[0] if all(row.get(c) is None for c in self.among) else None

    def expr(self, fields: Sequence[str], live: frozenset[str]) -> pl.Expr | None:
        known = _live(self.among, live)
        return pl.all_horizontal(e.is_null() for e in known) if known else pl.lit(True)

    def figures(self, field: str, row: Mapping[str, Any]) -> dict[str, Any]:
        return {}


@dataclass(frozen=True)
class AtMost:
    """Broken by a known value <= `limit` (`strict`: < `limit`)."""

    limit: float
    strict: bool = False

    def first_broken(self, fields: Sequence[str], row: Mapping[str, Any]) -> str | None:
        limit = self.limit
        if self.strict:
            return next((f for f in fields if (v := row.get(f)) is not None and v < limit), None)
        return next((f for f in fields if (v := row.get(f)) is not None and v <= limit), None)

    def expr(self, fields: Sequence[str], live: frozenset[str]) -> pl.Expr | None:
        cols = _live(fields, live)
        if not cols:
            return None
        low = pl.min_horizontal(cols)
        return ((low < self.limit) if self.strict else (low <= self.limit)).fill_null(False)

    def figures(self, field: str, row: Mapping[str, Any]) -> dict[str, Any]:
        return {}


@dataclass(frozen=True)
class Over:
    """Broken by a known value > `limit`."""

    limit: float

    def first_broken(self, fields: Sequence[str], row: Mapping[str, Any]) -> str | None:
        for f in fields:
            v = row.get(f)
            if v is not None and v > self.limit:
                return f
        return None

    def expr(self, fields: Sequence[str], live: frozenset[str]) -> pl.Expr | None:
        cols = _live(fields, live)
        return (pl.max_horizontal(cols) > self.limit).fill_null(False) if cols else None

    def figures(self, field: str, row: Mapping[str, Any]) -> dict[str, Any]:
        return {}


@dataclass(frozen=True)
class LongerThan:
    """Broken by a text (`items`: an item of a list of texts) of more than `limit` characters."""

    limit: int
    items: bool = False

    def _long(self, value: Any) -> str | None:
        texts = (value or ()) if self.items else (value,)
        return next((t for t in texts if isinstance(t, str) and len(t) > self.limit), None)

    def first_broken(self, fields: Sequence[str], row: Mapping[str, Any]) -> str | None:
        limit = self.limit
        for f in fields:
            v = row.get(f)
            if v is None:
                continue
            if self.items:
                if any(isinstance(t, str) and len(t) > limit for t in v):
                    return f
            elif isinstance(v, str) and len(v) > limit:
                return f
        return None

    def expr(self, fields: Sequence[str], live: frozenset[str]) -> pl.Expr | None:
        cols = _live(fields, live)
        if not cols:
            return None
        if self.items:
            cols = [c.list.eval(pl.element().str.len_chars()).list.max() for c in cols]
        else:
            cols = [c.str.len_chars() for c in cols]
        return (pl.max_horizontal(cols) > self.limit).fill_null(False)

    def figures(self, field: str, row: Mapping[str, Any]) -> dict[str, Any]:
        return {"length": len(self._long(row.get(field)) or ""), "limit": self.limit}


@dataclass(frozen=True)
class HasControl:
    """Broken by a text holding a control character (`ingest.untrusted.controls.CONTROLS`)."""

    def first_broken(self, fields: Sequence[str], row: Mapping[str, Any]) -> str | None:
        for f in fields:
            v = row.get(f)
            if isinstance(v, str) and CONTROLS.search(v):
                return f
        return None

    def expr(self, fields: Sequence[str], live: frozenset[str]) -> pl.Expr | None:
        cols = _live(fields, live)
        if not cols:
            return None
        return pl.any_horizontal(c.str.contains(CONTROLS_PATTERN).fill_null(False) for c in cols)

    def figures(self, field: str, row: Mapping[str, Any]) -> dict[str, Any]:
        v = row.get(field)
        return {"char": first_control(v) if isinstance(v, str) else ""}


@dataclass(frozen=True)
class Reciprocal:
    """Broken when a field and its partner (`partners[field]`), both known and non-zero, are not
    each other's reciprocal within a factor `within` (the product outside 1/within..within)."""

    partners: Mapping[str, str]
    within: float

    def _product(self, field: str, row: Mapping[str, Any]) -> float | None:
        a, b = row.get(field), row.get(self.partners[field])
        return a * b if a and b else None

    def first_broken(self, fields: Sequence[str], row: Mapping[str, Any]) -> str | None:
        lo, hi = 1 / self.within, self.within
        for f in fields:
            p = self._product(f, row)
            if p is not None and not lo <= p <= hi:
                return f
        return None

    def expr(self, fields: Sequence[str], live: frozenset[str]) -> pl.Expr | None:
        products = [
            pl.col(f) * pl.col(self.partners[f])
            for f in fields
            if f in live and self.partners[f] in live
        ]
        if not products:
            return None
        # A zero partner is flagged too (the row path skips it).
        return (pl.min_horizontal(products) < 1 / self.within).fill_null(False) | (
            pl.max_horizontal(products) > self.within
        ).fill_null(False)

    def figures(self, field: str, row: Mapping[str, Any]) -> dict[str, Any]:
        other = self.partners[field]
        return {"other": other, "other_value": row.get(other), "product": self._product(field, row)}


# Throughputs must be strictly positive when present; latencies must be positive.
POSITIVE: tuple[str, ...] = tuple(
    str(c) for c in (Col.TPUT_PER_GPU, Col.OUTPUT_TPUT_PER_GPU, Col.TOTAL_TPUT, Col.OUTPUT_TPUT)
)
_NON_NEGATIVE_GROUPS = {
    "throughput",
    "latency",
    "interactivity",
    "requests",
    "server",
    "spec_measured",
}
NON_NEGATIVE: tuple[str, ...] = tuple(
    str(c) for c, s in SPECS.items() if s.group in _NON_NEGATIVE_GROUPS and KIND[c] == FLOAT
)
_TPOTS = tuple(f"{s}_tpot" for s in STATS)
_TEXTS = tuple(c for c, k in KIND.items() if k == STR)
_TEXT_LISTS = tuple(c for c, k in KIND.items() if k == STR_LIST)
# Text that names a point, its arm or its run: it reaches labels, file names, the pruned
# snippet and the dispatch line, so a control character in it (a newline that starts a YAML
# entry, an ESC for the terminal) is refused. Free text (the source path, server flags,
# metadata, warnings) may hold them and is escaped where it is shown.
_FREE_TEXTS = {str(Col.SOURCE_PATH), str(Col.SERVER_FLAGS), str(Col.METADATA)}
IDENTITY_TEXTS = tuple(c for c in _TEXTS if c not in _FREE_TEXTS)
_CONC, _RATE, _ERROR_RATE = str(Col.CONC), str(Col.REQUEST_RATE), str(Col.ERROR_RATE)

# In the order the one-row path checks them: a row breaking several is refused for the first.
RULES: tuple[Rule, ...] = (
    Rule(
        (_CONC,),
        NoneOf((_CONC, _RATE)),
        "required: the load of the point was not found: neither a concurrency (conc, "
        "max_concurrency) nor a request rate (request_rate); see docs/formats.md, 'Load'",
    ),
    Rule((_CONC,), AtMost(0), "expected a positive concurrency, got {value}"),
    Rule((_RATE,), AtMost(0), "expected a positive request rate, got {value}"),
    Rule(
        (str(Col.TPUT_PER_GPU),),
        NoneOf(POSITIVE),
        "no throughput found (need a per-GPU, total or output throughput)",
    ),
    Rule(POSITIVE, AtMost(0), "expected a positive throughput, got {value}"),
    Rule(_TPOTS, AtMost(0), "expected a positive TPOT in seconds, got {value}"),
    Rule(NON_NEGATIVE, AtMost(0, strict=True), "expected a non-negative value, got {value}"),
    Rule((_ERROR_RATE,), Over(1.0), "expected a fraction in 0..1, got {value}"),
    Rule(
        _TEXTS,
        LongerThan(MAX_STRING_CHARS),
        "{length} characters, over the {limit} character limit",
    ),
    Rule(
        _TEXT_LISTS,
        LongerThan(MAX_STRING_CHARS, items=True),
        "an item of {length} characters, over the {limit} limit",
    ),
    Rule(
        IDENTITY_TEXTS,
        HasControl(),
        "holds a control character ({char}); names, labels and identity fields may not",
    ),
    # Milliseconds written where seconds belong show up as a factor of 1000 between a file's
    # TPOT and its interactivity (1/TPOT); real files agree within a few percent.
    Rule(
        _TPOTS,
        Reciprocal({f"{s}_tpot": f"{s}_intvty" for s in STATS}, within=10),
        "{field} {value:g} s and {other} {other_value:g} tok/s/user disagree {product:.3g}-fold: "
        "wrong units? (TPOT in seconds, interactivity = 1/TPOT)",
    ),
)


def check_row(row: Mapping[str, Any]) -> None:
    """Raise the first rule `row` (a complete, coerced row) breaks.

    Raises:
        SchemaError: naming the field and the reason.
    """
    for rule in RULES:
        field = rule.test.first_broken(rule.fields, row)
        if field is not None:
            raise rule.error(field, row)


def rule_flags(live: frozenset[str]) -> list[pl.Expr]:
    """Every rule as an expression over a batch whose non-null columns are among `live`: true
    (or null) where a row may break it."""
    exprs = (rule.test.expr(rule.fields, live) for rule in RULES)
    return [e for e in exprs if e is not None]

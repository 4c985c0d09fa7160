"""The derived speculative-decoding columns, in their row and batch forms (see `derive`).

Acceptance length and draft acceptance rate come from the counters; speculative decoding is
recognised from the counters when no label says so (the batch flags such rows and the row form
derives them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import polars as pl

from ingest.contract.col import Col

if TYPE_CHECKING:
    from ingest.normalize.planner import Planner

Row = dict[str, Any]
_SPEC_DETECTED = "detected"


def col(name: Col | str) -> pl.Expr:
    return pl.col(str(name))


# ---- acceptance length and draft acceptance rate from the speculative-decoding counters -------


def spec_rates_row(row: Row) -> None:
    acc, drafts = row.get(Col.SPEC_ACCEPTED_TOKENS), row.get(Col.SPEC_DRAFTS)
    if (
        row.get(Col.AL_MEASURED) is None
        and isinstance(acc, int | float)
        and isinstance(drafts, int | float)
        and drafts > 0
    ):
        row[Col.AL_MEASURED] = 1.0 + float(acc) / float(drafts)
    dtoks = row.get(Col.SPEC_DRAFT_TOKENS)
    if (
        row.get(Col.DRAFT_ACCEPTANCE_RATE) is None
        and isinstance(acc, int | float)
        and isinstance(dtoks, int | float)
        and dtoks > 0
    ):
        row[Col.DRAFT_ACCEPTANCE_RATE] = float(acc) / float(dtoks)


def spec_rates_batch(p: Planner) -> None:
    step = p.stages[-1]
    acc, drafts = col(Col.SPEC_ACCEPTED_TOKENS), col(Col.SPEC_DRAFTS)
    if p.has(Col.SPEC_ACCEPTED_TOKENS, Col.SPEC_DRAFTS):
        step.append(
            pl.when(col(Col.AL_MEASURED).is_null() & acc.is_not_null() & (drafts > 0))
            .then(1.0 + acc / drafts)
            .otherwise(col(Col.AL_MEASURED))
            .alias(str(Col.AL_MEASURED))
        )
        p.live.add(str(Col.AL_MEASURED))
    if p.has(Col.SPEC_ACCEPTED_TOKENS, Col.SPEC_DRAFT_TOKENS):
        dtoks = col(Col.SPEC_DRAFT_TOKENS)
        step.append(
            pl.when(col(Col.DRAFT_ACCEPTANCE_RATE).is_null() & acc.is_not_null() & (dtoks > 0))
            .then(acc / dtoks)
            .otherwise(col(Col.DRAFT_ACCEPTANCE_RATE))
            .alias(str(Col.DRAFT_ACCEPTANCE_RATE))
        )
        p.live.add(str(Col.DRAFT_ACCEPTANCE_RATE))


# ---- speculative decoding recognised from the measurements, not only from labels --------------


def _spec_measured(row: Mapping[str, Any]) -> bool:
    """The point's own counters say speculative decoding ran: drafts were proposed, or an
    acceptance length was measured."""
    drafts, dtoks = row.get(Col.SPEC_DRAFTS), row.get(Col.SPEC_DRAFT_TOKENS)
    return (
        (isinstance(drafts, int | float) and drafts > 0)
        or (isinstance(dtoks, int | float) and dtoks > 0)
        or row.get(Col.AL_MEASURED) is not None
    )


def spec_row(row: Row) -> None:
    """A point labelled `none` (or not labelled) whose counters show drafting gets
    `spec_decoding = "detected"` (the method is not known) and a warning; K is
    draft tokens / drafts when no configuration says it."""
    if not _spec_measured(row):
        return
    if row.get(Col.SPEC_DECODING) in (None, "none"):
        said = row.get(Col.SPEC_DECODING)
        row[Col.SPEC_DECODING] = _SPEC_DETECTED
        al = row.get(Col.AL_MEASURED)
        evidence = f"measured AL {al:.2f}" if isinstance(al, float) else "draft counters"
        row[Col.WARNINGS] = [
            *(row.get(Col.WARNINGS) or []),
            f"speculative decoding recognised from the measurements ({evidence}) although "
            f"{'the labels said none' if said == 'none' else 'no label said so'}; method unknown",
        ]
    drafts, dtoks = row.get(Col.SPEC_DRAFTS), row.get(Col.SPEC_DRAFT_TOKENS)
    if (
        row.get(Col.NUM_SPEC_TOKENS) is None
        and isinstance(drafts, int | float)
        and isinstance(dtoks, int | float)
        and drafts > 0
    ):
        k = float(dtoks) / float(drafts)
        if abs(k - round(k)) < 1e-6 and round(k) >= 1:
            row[Col.NUM_SPEC_TOKENS] = round(k)


def spec_batch(p: Planner) -> None:
    # Not derived over the batch: a row whose counters may show speculative decoding, unlabelled
    # or without a K, is flagged and `spec_row` recognises it.
    measured = [
        col(c) for c in (Col.SPEC_DRAFTS, Col.SPEC_DRAFT_TOKENS, Col.AL_MEASURED) if p.has(c)
    ]
    if not measured:
        return
    unlabelled = col(Col.SPEC_DECODING).is_null() | (col(Col.SPEC_DECODING) == "none")
    no_k = col(Col.NUM_SPEC_TOKENS).is_null() if p.has(Col.NUM_SPEC_TOKENS) else True
    p.flags.append(
        (pl.any_horizontal(e.is_not_null() for e in measured) & (unlabelled | no_k)).fill_null(True)
    )

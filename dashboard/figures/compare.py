"""The compare page's chart: per-arm frontiers of a base run against a candidate run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from analysis.frontier.polylines import Frontier
from dashboard.figures.style import (
    Figure,
    arm_color,
    base_layout,
    hovertemplate,
    inert,
    line_trace,
    name_column,
    points_trace,
    token,
)
from ingest.contract.col import Col


def compare_figure(
    plane: pl.DataFrame, arm_frontiers: Sequence[Frontier], *, base: str, candidate: str, x: str, y: str,
    arm_order: dict[str, int], logx: bool = False, logy: bool = False,
) -> Figure:  # fmt: skip
    """Per-arm frontiers of a base run (dashed, hollow) against a candidate run (solid, filled)."""
    template = hovertemplate(x, y)
    roles = ((base, "base", "dash", "circle-open"), (candidate, "candidate", "solid", "circle"))
    lines = {(dict(f.key).get(Col.ARM_ID), dict(f.key).get(Col.RUN_ID)): f for f in arm_frontiers}
    rows = plane.filter(
        pl.col("x").is_not_null() & pl.col("y").is_not_null() & (pl.col("verdict") != "invalid")
    )
    series = rows.partition_by(Col.ARM_ID, Col.RUN_ID, as_dict=True, maintain_order=True)
    name_col = name_column(rows)
    arms = rows.select(Col.ARM_ID, name_col).unique().sort(name_col, Col.ARM_ID)
    traces: list[dict[str, Any]] = []
    for arm_id, arm_label in arms.iter_rows():
        color = arm_color(arm_order.get(arm_id, 0))
        for run, role, dash, symbol in roles:
            part = series.get((arm_id, run))
            if part is None:
                continue
            part, tok, name = part.sort("x"), token(arm_id, run), inert(f"{arm_label} · {role}")
            line = lines.get((arm_id, run))
            if line is not None:
                traces.append(
                    line_trace(line.xs, line.ys, name=name, color=color, dash=dash, tok=tok)
                )
            trace = points_trace(
                part,
                kind="scatter",
                name=name,
                color=color,
                run_index={},
                labels=None,
                template=template,
                tok=tok,
            )
            trace["marker"]["symbol"] = symbol
            traces.append(trace)
    layout = base_layout(
        f"Base {inert(base)} (dashed) vs candidate {inert(candidate)} (solid)",
        x,
        y,
        logx,
        logy,
        revision=f"{base}|{candidate}|{x}|{y}",
    )
    layout["legend"]["title"]["text"] = "Arms"
    return {"data": traces, "layout": layout}

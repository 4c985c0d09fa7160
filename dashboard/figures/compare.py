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
    fields_trace,
    hovertemplate,
    inert,
    line_trace,
    name_column,
    point_fields,
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
    name_col = name_column(rows)
    # Every trace's fields from one polars query; traces pick their rows by index (a query per
    # trace cost 0.3 s for the 76 traces of a whole-history comparison).
    f = point_fields(
        rows, run_index={}, compact=False, labels=None, extra=(Col.ARM_ID, Col.RUN_ID, name_col)
    )
    series: dict[tuple[Any, Any], list[int]] = {}
    for i, key in enumerate(zip(f[Col.ARM_ID], f[Col.RUN_ID], strict=True)):
        series.setdefault(key, []).append(i)
    xs = f["x"]
    arms = sorted({(str(n), a) for a, n in zip(f[Col.ARM_ID], f[name_col], strict=True)})
    traces: list[dict[str, Any]] = []
    for arm_label, arm_id in arms:
        color = arm_color(arm_order.get(arm_id, 0))
        for run, role, dash, symbol in roles:
            part = series.get((arm_id, run))
            if part is None:
                continue
            # Along x (NaN last, as polars sorts), ties in row order.
            ix = sorted(part, key=lambda i: (xs[i] != xs[i], xs[i]))
            tok, name = token(arm_id, run), inert(f"{arm_label} · {role}")
            line = lines.get((arm_id, run))
            if line is not None:
                traces.append(
                    line_trace(line.xs, line.ys, name=name, color=color, dash=dash, tok=tok)
                )
            trace = fields_trace(
                f, ix, kind="scatter", name=name, color=color, labels=False,
                template=template, tok=tok,
            )  # fmt: skip
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

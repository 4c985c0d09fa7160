"""The evals chart: each arm's accuracy with its error bar, beside the frontier (issue 27).

One row per arm and eval task (the arm's headline score at its highest evaluated concurrency,
`views.accuracy`), a dot at the score and a whisker of ± one standard error, in the arm's colour
of the frontier chart (and the view's palette). InferenceX's evaluation page draws the same
dot-and-whisker per configuration; here it sits next to the performance it goes with.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from dashboard.figures.style import FONT, Figure, arm_color, inert, repaint
from ingest.contract.col import Col
from views.facets import ARM_NAME


def evals_figure(acc: pl.DataFrame, arm_order: Mapping[str, int], palette: str) -> Figure | None:
    """The dot-and-whisker chart of `RunData.accuracy` (None when no arm has a score)."""
    rows = acc.filter(pl.col("eval_score").is_not_null())
    if rows.height == 0:
        return None
    rows = rows.sort("eval_score")
    labels = [
        inert(f"{r[ARM_NAME] or r[Col.ARM_ID]} · {r['eval_task']}")
        for r in rows.iter_rows(named=True)
    ]
    colors = [arm_color(arm_order.get(str(a), 0)) for a in rows.get_column(Col.ARM_ID)]
    se = [s if s is not None else 0.0 for s in rows.get_column("eval_stderr").to_list()]
    trace = {
        "type": "scatter",
        "mode": "markers",
        "x": rows.get_column("eval_score").to_list(),
        "y": labels,
        "error_x": {"type": "data", "array": se, "visible": True, "thickness": 1.5, "width": 6},
        "marker": {"color": colors, "size": 10},
        "customdata": [
            [m, n] for m, n in zip(rows["eval_metric"], rows["eval_n_eff"], strict=True)
        ],
        "hovertemplate": "%{y}<br>%{customdata[0]} %{x:.4f} ± %{error_x.array:.4f}"
        "<br>n_eff %{customdata[1]}<extra></extra>",
        "showlegend": False,
    }
    fig: Figure = {
        "data": [trace],
        "layout": {
            "title": {"text": "Accuracy per arm (± standard error)", "font": {"size": 13}},
            "xaxis": {
                "title": {"text": "score (fraction)"},
                "gridcolor": "#eee",
                "zeroline": False,
            },
            "yaxis": {"automargin": True, "gridcolor": "#eee"},
            "height": 120 + 28 * rows.height,
            "margin": {"l": 10, "r": 10, "t": 36, "b": 40},
            "font": {"family": FONT, "size": 11},
            "paper_bgcolor": "#ffffff",
            "plot_bgcolor": "#ffffff",
        },
    }
    return repaint(fig, palette)

"""The run page's table tabs: points, AL checks, A/B deltas, the pruned list, rejects; and the
ranking of arms at a target interactivity."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import polars as pl
from dash import dcc, html

from dashboard import components as c
from dashboard.figures.evals import evals_figure
from dashboard.ids import Id, control
from dashboard.pages import badges
from dashboard.pages import overlays as o
from dashboard.pages.run_panels import GRAPH_CONFIG, choices, dropdown
from ingest.contract.col import Col
from ingest.contract.schema import SPECS
from views import urls
from views.accuracy import accuracy_notes
from views.facets import ARM_NAME
from views.query.choices import AB_CHOICES, PRUNE_TOGGLES
from views.query.state import RunView
from views.run_data import RunData
from views.tables import KEY_POINT_COLUMNS, run_table


def at_readout(data: RunData, view: RunView) -> Any:
    """Arms ranked by their frontier's throughput at the target x."""
    if view.at is None:
        return html.Div([html.Div(
            "Enter a value in “Rank arms at x =” to rank every arm by its frontier throughput there (PCHIP along the frontier, no extrapolation).",
            className="muted small",
        ), *o.panel(data, view), badges.for_view(data, view), accuracy_panel(data, view)])  # fmt: skip
    t = data.at_target
    unit_y = SPECS[Col(view.y)].unit
    body = []
    for i, r in enumerate(t.iter_rows(named=True), 1):
        y = r["y"]
        cell = f"{y:,.1f} {unit_y}" if y is not None else out_of_range(data, view, r)
        body.append(
            html.Tr(
                [
                    html.Td(str(i) if y is not None else "–"),
                    html.Td(str(r[ARM_NAME] or r[Col.ARM_ID])),
                    html.Td(str(r[Col.RUN_ID])),
                    html.Td(cell),
                    html.Td(o.history_link(view, str(r[Col.ARM_ID]))),  # issue 14
                ]
            )
        )
    head = html.Tr(
        [
            html.Th("rank"),
            html.Th("arm"),
            html.Th("run"),
            html.Th(f"{view.y} at {view.x} = {view.at:g}"),
        ]
    )
    table = (
        html.Table([head, *body], className="at-table")
        if body
        else html.Div("no arm frontier in this view", className="empty")
    )
    return html.Div(
        [
            table,
            c.export_links("at", view.query()),
            *o.panel(data, view),
            badges.for_view(data, view),
            accuracy_panel(data, view),
        ]
    )


def _fraction(v: object) -> str:
    return f"{v:.4f}" if isinstance(v, float) else "–"


def accuracy_panel(data: RunData, view: RunView) -> Any:
    """Accuracy per arm and eval task (issue 14): score ± standard error, n_eff, the
    concurrency evaluated; or that the view's runs have no evals. The same numbers are the
    `eval_*` columns of the points table and its exports."""
    acc = data.accuracy
    runs = ", ".join(view.runs)
    if not acc.height:
        body: Any = html.Div(
            f"No evals for this run ({runs}) joined its arms: ingest the run's eval results "
            "(agg_eval_all.json, lm-eval results JSON) with `paretolens ingest PATH --run-id "
            "<run id>` to see accuracy next to performance.",
            className="empty",
            id=Id.ACCURACY_TABLE,
        )
    else:
        head = html.Tr(
            [html.Th(h) for h in ("arm", "run", "task", "score ± stderr", "n_eff", "conc")]
        )
        rows = [
            html.Tr(
                [
                    html.Td(str(r[ARM_NAME] or r[Col.ARM_ID])),
                    html.Td(str(r[Col.RUN_ID])),
                    html.Td(f"{r['eval_task']} {r['eval_metric']}"),
                    html.Td(f"{_fraction(r['eval_score'])} ± {_fraction(r['eval_stderr'])}"),
                    html.Td("–" if r["eval_n_eff"] is None else str(r["eval_n_eff"])),
                    html.Td("–" if r["eval_conc"] is None else str(r["eval_conc"])),
                ],
                className="accuracy-row",
            )
            for r in acc.iter_rows(named=True)
        ]
        body = html.Table([head, *rows], className="at-table", id=Id.ACCURACY_TABLE)
    chart = evals_figure(acc, data.arm_order, view.palette) if acc.height else None
    return html.Div(
        [
            html.H4("Accuracy per arm (evals joined by configuration)"),
            dcc.Graph(figure=chart, config=GRAPH_CONFIG, id=Id.EVALS_CHART) if chart else None,
            body,
            html.Div(
                [
                    "The points table carries these as eval_* columns (fraction, ± standard "
                    "error). ",
                    c.export_links("points", view.query(), label="Points with accuracy"),
                ],
                className="muted small",
            ),
        ],
        className="accuracy-panel",
    )


def out_of_range(data: RunData, view: RunView, r: dict[str, Any]) -> str:
    """Why an arm has no value at the target x: the x range its points were measured over, the
    range its frontier covers, and whether the frontier was cut by a cliff (post-cliff points
    measured beyond it)."""
    unit = SPECS[Col(view.x)].unit
    plane = data.main_plane.filter(
        (pl.col(Col.ARM_ID) == r[Col.ARM_ID])
        & (pl.col(Col.RUN_ID) == r[Col.RUN_ID])
        & (pl.col("x") > 0)
        & (pl.col("verdict") != "invalid")
    )
    span = f"frontier covers {r['x_lo']:.3g}–{r['x_hi']:.3g}"
    if not plane.height:
        return f"outside its measured range ({span} {unit})"
    lo, hi = plane.select(pl.col("x").min(), pl.col("x").max().alias("hi")).row(0)
    text = f"outside its measured range: measured {lo:.3g}–{hi:.3g} {unit}, {span}"
    cliff = plane.filter(
        (pl.col("verdict") == "post_cliff")
        & ((pl.col("x") < r["x_lo"]) | (pl.col("x") > r["x_hi"]))
    )
    if cliff.height:
        c_lo, c_hi = cliff.select(pl.col("x").min(), pl.col("x").max().alias("hi")).row(0)
        n = cliff.height
        text += (
            f"; the frontier was cut at the cliff ({n} post-cliff point{'s' if n != 1 else ''} "
            f"at {c_lo:.3g}–{c_hi:.3g} left out)"
        )
    return text


def _grid_or_empty(
    grid_id: Any, table: Any, columns: Sequence[str] | None, empty: str, **kw: Any
) -> Any:
    return (
        c.grid(grid_id, table, columns, **kw)
        if table.frame.height
        else html.Div(empty, className="empty")
    )


def points_body(data: RunData, view: RunView) -> list[Any]:
    """The points tab: key columns with verdicts; click a row to pin it."""
    q = view.query()
    t = run_table(data, "points")
    return [
        html.Div(
            [c.export_links("points", q), " · ", html.A("every column →", href=urls.points(view))],
            className="small",
        ),
        *c.deferred_grid(
            Id.POINTS_GRID, Id.POINTS_ROWS, t, KEY_POINT_COLUMNS, height=360, row_id=Col.POINT_ID
        ),
    ]


AL_COLUMNS = (
    Col.RUN_ID, Col.ARM_LABEL, Col.CONC, "verdict", Col.AL_MEASURED, "al_expected",
    "al_expected_source", "reason", "al_pinned", "al_golden", "golden_table", "draft_variant",
    "thinking_mode_used", Col.AL_SOURCE,
)  # fmt: skip


def al_body(data: RunData, view: RunView) -> list[Any]:
    """The AL-checks tab."""
    t = run_table(data, "al")
    return [
        html.Div(c.export_links("al", view.query()), className="small"),
        _grid_or_empty(
            Id.AL_GRID, t, AL_COLUMNS, "no speculative-decoding points in this view", height=300
        ),
    ]


def _delta_columns(frame: pl.DataFrame) -> list[str]:
    """Concurrency and the two arms first, then per metric its delta, baseline and treatment."""
    lead = [
        "flag",
        "confounds",
        Col.CONC,
        Col.REQUEST_RATE,
        Col.ISL,
        Col.OSL,
        "baseline_arm_label",
        "treatment_arm_label",
        "baseline_value",
        "treatment_value",
    ]
    stems = [c.removesuffix("_delta_pct") for c in frame.columns if c.endswith("_delta_pct")]
    metrics = [f"{m}{s}" for m in stems for s in ("_delta_pct", "_baseline", "_treatment")]
    tail = [
        *ACCURACY_COLUMNS, "al_measured_baseline", "al_measured_treatment", "baseline_verdict",
        "treatment_verdict", "baseline_run_id", "treatment_run_id",
    ]  # fmt: skip
    return [c for c in [*lead, *metrics, *tail] if c in frame.columns]


# issue 14: each side's headline accuracy and the combined-stderr flag (analysis.evals)
ACCURACY_COLUMNS = ("accuracy_flag", "accuracy_task", "accuracy_baseline", "accuracy_treatment")
FRONTIER_DELTA_COLUMNS = (
    "baseline_arm_label", "treatment_arm_label", "mean_delta_pct", "area_delta_pct", "x_lo", "x_hi",
    *ACCURACY_COLUMNS, "note", "baseline_value", "treatment_value", "baseline_run_id",
    "treatment_run_id",
)  # fmt: skip


def ab_control(view: RunView) -> html.Div:
    """The A/B axis picker (in the initial layout, so its value is always part of the view)."""
    return dropdown(
        "ab",
        "A/B axis (arms that differ only in it are paired)",
        choices(AB_CHOICES),
        view.ab,
        css="control",
    )


def deltas_body(data: RunData, view: RunView) -> list[Any]:
    """The A/B tab: equal-concurrency deltas with confounds, and the frontier delta."""
    q = view.query()
    t, f = run_table(data, "deltas"), run_table(data, "deltas_frontier")
    return [
        html.Div(
            [
                html.Span(c.export_links("deltas", q, label="Per conc"), className="small"),
                html.Span(
                    c.export_links("deltas_frontier", q, label="Frontier"), className="small"
                ),
            ],
            className="inline-form",
        ),
        c.notes(accuracy_notes(f.frame, "of the treatment differs beyond the combined stderr")),
        html.H4(f"At equal concurrency, {view.ab}: treatment vs baseline"),
        _grid_or_empty(
            Id.DELTAS_GRID,
            t,
            _delta_columns(t.frame),
            f"no two arms in this view differ only in {view.ab}",
            height=300,
            status_columns=("baseline_verdict", "treatment_verdict"),
        ),
        html.H4("Frontier vs frontier at matched x (PCHIP, common range only)"),
        _grid_or_empty(
            Id.DELTAS_FRONTIER_GRID,
            f,
            FRONTIER_DELTA_COLUMNS,
            "no pairs",
            height=170,
            status_columns=(),
        ),
    ]


PRUNED_COLUMNS = (
    "kept",
    "keep_reason",
    Col.RUN_ID,
    Col.ARM_LABEL,
    Col.CONC,
    "verdict",
    "reason",
    "x",
    "y",
)


def prune_controls(view: RunView, masters: Sequence[str]) -> html.Div:
    """The pruned list's options, as `paretolens prune` takes them (in the initial layout, so
    their values are always part of the view): neighbouring concurrencies, every arm's own
    frontier, and a master config to reuse keys from, chosen among the files the server knows."""
    options = [{"label": m, "value": m} for m in masters]
    if view.master and view.master not in masters:
        options.append({"label": f"{view.master} (not known here)", "value": view.master})
    return html.Div(
        [
            html.Div(
                [
                    html.Label("Also keep"),
                    dcc.Checklist(
                        id=control("prune"),
                        options=choices(PRUNE_TOGGLES),
                        value=view.controls()["prune"],
                        labelStyle={"display": "block"},
                    ),
                ],
                className="control",
            ),
            dropdown(
                "master",
                "Reuse keys from master config (files in the store's master-configs/)",
                options,
                view.master or None,
                placeholder="none" if masters else "none known to this server",
                css="control wide",
            ),
        ],
        className="axis-row",
    )


def skipped_arms(space: Any) -> Any:
    """The kept arms that cannot be exported, first, each with what would make it exportable."""
    skipped = [] if isinstance(space, str) else list(space.skipped)
    if not skipped:
        return None
    n = len(skipped)
    return html.Div(
        [
            html.B(
                f"{n} kept arm{'s' if n != 1 else ''} not exported: set what is missing, then "
                "export again"
            ),
            html.Ul([html.Li([html.B(label), f": {why}"]) for label, why in skipped]),
        ],
        id=Id.PRUNED_SKIPPED,
        className="notes",
        role="status",
    )


def _copyable(text: str, pre_id: Id, copy_id: Id, what: str) -> html.Div:
    return html.Div(
        [
            dcc.Clipboard(id=copy_id, target_id=pre_id, title=f"copy the {what}", className="clip"),
            html.Pre(text, id=pre_id, tabIndex="0"),
        ],
        className="copyable",
    )


def pruned_body(data: RunData, view: RunView) -> list[Any]:
    """The pruned-list tab: skipped arms first, the CLI line, the validated search-space YAML
    (or why there is none), kept and dropped points."""
    q = view.query()
    p = data.pruned
    options = [
        n for n, on in (("neighbours", view.neighbours), ("arm frontiers", view.arm_frontier)) if on
    ]
    kept_how = f"the group-frontier points of {view.x} vs {view.y}"
    if options:
        kept_how += f", plus {' and '.join(options)}"
    summary = (
        f"{p.kept.height} of {p.kept.height + p.dropped.height} points kept in {len(p.arms)} "
        f"arm{'s' if len(p.arms) != 1 else ''} ({kept_how})"
    )
    problem = data.pruned_check
    yaml_part: Any = (
        _copyable(data.pruned_yaml, Id.PRUNED_YAML, Id.PRUNED_COPY_YAML, "search-space YAML")
        if problem is None
        else html.Div(
            f"No search-space YAML: {problem}",
            id=Id.PRUNED_INVALID,
            className="notes",
            role="status",
        )
    )
    exact = not data.pruned_cli.startswith("#")
    return [
        skipped_arms(data.pruned_space),
        c.notes([data.master[1]] if data.master[1] else []),
        html.Div(
            [html.B(summary), " ", c.export_links("pruned", q)],
            className="small",
        ),
        html.H4(
            "Run the full sweep on exactly these points"
            if exact
            else "No single test-config line runs exactly these points"
        ),
        _copyable(data.pruned_cli, Id.PRUNED_CLI, Id.PRUNED_COPY_CLI, "test-config line"),
        html.H4("InferenceX search-space YAML (validated as a master config)"),
        yaml_part,
        c.grid(Id.PRUNED_GRID, run_table(data, "pruned"), PRUNED_COLUMNS, height=300),
    ]


# Rows the rejects tab's grid holds; its exports hold every one.
GRID_REJECTS = 1000


def rejects_body(data: RunData, view: RunView) -> list[Any]:
    """The rejected-files tab (the first GRID_REJECTS rows; the exports have them all)."""
    t = run_table(data, "rejects")
    shown: list[Any] = []
    if t.frame.height > GRID_REJECTS:
        shown = [
            f" · the first {GRID_REJECTS:,} of {t.frame.height:,} are shown; "
            "the exports hold every one"
        ]
        t = dataclasses.replace(t, frame=t.frame.head(GRID_REJECTS))
    return [
        html.Div([c.export_links("rejects", view.query()), *shown], className="small"),
        _grid_or_empty(
            Id.REJECTS_GRID,
            t,
            ("run_id", "outcome", "path", "field", "reason", "reader", "sha256", "at"),
            "nothing was rejected or ignored: every file gave points or joined one",
            height=260,
            status_columns=(),
        ),
    ]

"""Run vs run: a candidate sweep (a PR) against a baseline sweep (the last main sweep).

Arms match by `arm_id` (the configuration identity, run excluded). Per matched arm and
concurrency: delta % of the headline metrics. Per matched arm and per comparison group: the
frontier uplift at matched interactivity (PCHIP, common range only) and the area between the
frontiers. Arms present in only one run are listed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from analysis.comparison.confounds import CONFOUND_COLUMNS, confounds
from analysis.evals import accuracy_columns
from analysis.frontier.cliff import CliffParams
from analysis.frontier.interpolate import FrontierGap, frontier_gap
from analysis.frontier.polylines import Frontier
from analysis.frontier.prune import DEFAULT_MAX_ERROR_RATE, analyze_points
from analysis.frontier.slo import Slo
from analysis.tables import md_cell, md_text
from ingest.contract.col import Col
from ingest.contract.schema import DEFAULT_GROUP, better

HEADLINE_METRICS: tuple[Col, ...] = (
    Col.TPUT_PER_GPU,
    Col.OUTPUT_TPUT_PER_GPU,
    Col.MEDIAN_INTVTY,
    Col.P90_TTFT,
    Col.MEDIAN_E2EL,
)


@dataclass(frozen=True, eq=False)
class RunComparison:
    """points: per matched arm x conc; arms: per matched arm (frontier uplift); groups: per
    comparison group (envelope uplift); only_in_base / only_in_candidate: unmatched arms."""

    base_run: str
    candidate_run: str
    x: str
    y: str
    metrics: tuple[str, ...]
    points: pl.DataFrame
    arms: pl.DataFrame
    groups: pl.DataFrame
    only_in_base: pl.DataFrame
    only_in_candidate: pl.DataFrame
    slo: Slo = field(default_factory=Slo)


_GAP_COLUMNS = ("x_lo", "x_hi", "uplift_pct", "mean_delta_pct", "area_base", "area_between")


def _gap_row(gap: FrontierGap | None) -> dict[str, Any]:
    return {
        "x_lo": gap.lo if gap else None,
        "x_hi": gap.hi if gap else None,
        "uplift_pct": gap.area_delta_pct if gap else None,
        "mean_delta_pct": gap.mean_delta_pct if gap else None,
        "area_base": gap.area_baseline if gap else None,
        "area_between": gap.area_between if gap else None,
    }


def _arms(t: pl.DataFrame, run: str) -> pl.DataFrame:
    return (
        t.filter(pl.col(Col.RUN_ID) == run)
        .group_by(Col.ARM_ID, maintain_order=True)
        .agg(pl.col(Col.ARM_LABEL).first(), pl.col(Col.CONC).unique().sort().alias("concs"))
        .sort(Col.ARM_LABEL, Col.ARM_ID)  # arms that share a label keep one order
    )


_ORDER = "__order"


def _confounds(pts: pl.DataFrame, per: pl.DataFrame, base: str, cand: str) -> list[list[str]]:
    # The first point (by id) of each run, arm and load, with only the columns `confounds`
    # compares, lined up with `per`'s rows; `confounds` runs (in Python, on row dicts) only on
    # the pairs that differ in a column or in their raw server flags (most pairs of a
    # comparison differ in nothing, and a dict of each point cost more than the check).
    key = [Col.RUN_ID, Col.ARM_ID, Col.CONC, Col.REQUEST_RATE]
    load = key[1:]
    compared = [c for c in dict.fromkeys([*CONFOUND_COLUMNS, Col.SERVER_FLAGS]) if c in pts.columns]
    firsts = (
        pts.select(c for c in dict.fromkeys([*key, Col.POINT_ID, *compared]) if c in pts.columns)
        .sort(Col.POINT_ID)
        .unique(key, keep="first", maintain_order=True)
    )

    def side(run: str, tag: str) -> pl.DataFrame:
        mine = firsts.filter(pl.col(Col.RUN_ID) == run).select(
            *load, *[pl.col(c).alias(f"{c}{tag}") for c in compared]
        )
        return mine

    pairs = (
        per.select(load)
        .with_row_index(_ORDER)
        .join(side(base, "__b"), on=load, how="left", nulls_equal=True)
        .join(side(cand, "__c"), on=load, how="left", nulls_equal=True)
        .sort(_ORDER)
    )

    def differs(c: str) -> pl.Expr:
        b, t = pl.col(f"{c}__b"), pl.col(f"{c}__c")
        out = b.ne_missing(t)
        if pairs.schema[f"{c}__b"].is_float():  # NaN != NaN to Python, equal to polars
            out = out | b.is_nan().fill_null(False) | t.is_nan().fill_null(False)
        return out

    mask = pairs.select(
        pl.any_horizontal([differs(c) for c in compared] or [pl.lit(False)])
    ).to_series()
    found = iter(
        confounds({c: r[f"{c}__b"] for c in compared}, {c: r[f"{c}__c"] for c in compared})
        for r in pairs.filter(mask).iter_rows(named=True)
    )
    return [next(found) if diff else [] for diff in mask.to_list()]


def compare_runs(
    points: pl.DataFrame,
    base_run: str,
    candidate_run: str,
    *,
    x: str = Col.MEDIAN_INTVTY,
    y: str = Col.TPUT_PER_GPU,
    group_by: Sequence[str] = DEFAULT_GROUP,
    cliff: CliffParams = CliffParams(),
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE,
    metrics: Sequence[str] = HEADLINE_METRICS,
    slo: Slo = Slo(),
    evals: pl.DataFrame | None = None,
) -> RunComparison:
    """Compare a candidate run with a base run (points may hold other runs; they are ignored).

    Returns:
        A RunComparison. `points` has the identity columns, `<m>_base`, `<m>_candidate`,
        `<m>_delta_pct` for each metric, both verdicts and `confounds` (what else differs
        between the two points: image, runner, server flags, ...); `arms` has `x_lo`, `x_hi`,
        `uplift_pct` (x-averaged: 100 x (area_candidate / area_base - 1)), `mean_delta_pct`
        (mean of the deltas at the measured x values) and `area_between`. With `evals` (rows
        of the store's `evals` table), `points` and `arms` also carry the arm's headline
        accuracy in each run (`accuracy_baseline` = base, `accuracy_treatment` = candidate)
        and `accuracy_flag` (`analysis.evals.accuracy_columns`).
    """
    pts = points.filter(pl.col(Col.RUN_ID).is_in([base_run, candidate_run]))
    a = analyze_points(pts, x, y, group_by, cliff, max_error_rate, max_dominated_by=0, slo=slo)
    pid = [Col.RUN_ID, Col.POINT_ID]
    values = pts.select(*pid, *[pl.col(m).alias(f"__{m}") for m in metrics]).unique(pid)
    t = a.table.join(values, on=pid, how="left")
    base, cand = _arms(t, base_run), _arms(t, candidate_run)
    matched = base.join(cand.select(Col.ARM_ID), on=Col.ARM_ID, how="semi")
    only_b = base.join(cand.select(Col.ARM_ID), on=Col.ARM_ID, how="anti")
    only_c = cand.join(base.select(Col.ARM_ID), on=Col.ARM_ID, how="anti")
    keys = [
        c
        for c in (
            "arm_id",
            "arm_label",
            "conc",
            "request_rate",
            "tp",
            "ep",
            "spec_decoding",
            "kv_offloading",
            "isl",
            "osl",
        )
        if c in t.columns
    ]

    def side(name: str, run: str, cols: Sequence[str]) -> pl.DataFrame:
        return (
            t.filter(pl.col(Col.RUN_ID) == run)
            .select(
                *cols,
                *[pl.col(f"__{m}").alias(f"{m}_{name}") for m in metrics],
                pl.col("verdict").alias(f"{name}_verdict"),
            )
            .unique(load, keep="first")
        )

    # Equal load: the same concurrency, or the same request rate for request-rate sweeps.
    load = [Col.ARM_ID, Col.CONC, Col.REQUEST_RATE]
    per = side("base", base_run, keys).join(
        side("candidate", candidate_run, load), on=load, nulls_equal=True
    )
    per = per.with_columns(
        (100.0 * (pl.col(f"{m}_candidate") / pl.col(f"{m}_base") - 1.0)).alias(f"{m}_delta_pct")
        for m in metrics
    ).sort(Col.ARM_LABEL, Col.CONC, Col.REQUEST_RATE, Col.ARM_ID, nulls_last=True)
    per = per.with_columns(
        pl.Series(
            "confounds", _confounds(pts, per, base_run, candidate_run), dtype=pl.List(pl.String)
        )
    )
    fronts: dict[tuple[object, object], Frontier] = {
        (dict(f.key)[Col.RUN_ID], dict(f.key)[Col.ARM_ID]): f for f in a.arm_frontiers
    }
    # Matched loads per arm, counted once (a filter per arm cost 3 ms each, 40 arms a page).
    matched_loads = Counter(a for a in per.get_column(Col.ARM_ID).to_list() if a is not None)
    arm_rows = []
    for arm in matched.iter_rows(named=True):
        fb, fc = (
            fronts.get((base_run, arm[Col.ARM_ID])),
            fronts.get((candidate_run, arm[Col.ARM_ID])),
        )
        gap = frontier_gap(fb, fc) if fb is not None and fc is not None else None
        n = matched_loads.get(arm[Col.ARM_ID], 0)
        arm_rows.append(
            {
                Col.ARM_ID.value: arm[Col.ARM_ID],
                Col.ARM_LABEL.value: arm[Col.ARM_LABEL],
                "matched_concs": n,
                **_gap_row(gap),
            }
        )
    group_rows = []
    gkeys = [c for c in a.group_by if c != Col.RUN_ID]
    cand_groups = {
        tuple(dict(f.key).get(c) for c in gkeys): f
        for f in a.group_frontiers
        if dict(f.key).get(Col.RUN_ID) == candidate_run
    }
    for f in a.group_frontiers:
        key = tuple(dict(f.key).get(c) for c in gkeys)
        if dict(f.key).get(Col.RUN_ID) == base_run and key in cand_groups:
            gap = frontier_gap(f, cand_groups[key])
            group_rows.append(
                {**{str(c): v for c, v in zip(gkeys, key, strict=True)}, **_gap_row(gap)}
            )
    arms_frame = pl.DataFrame(arm_rows, infer_schema_length=None)
    if evals is not None:
        per, arms_frame = (
            _with_accuracy(f, pts, evals, base_run, candidate_run) for f in (per, arms_frame)
        )
    return RunComparison(
        base_run,
        candidate_run,
        str(x),
        str(y),
        tuple(str(m) for m in metrics),
        per,
        arms_frame,
        pl.DataFrame(group_rows, infer_schema_length=None),
        only_b,
        only_c,
        slo,
    )


def _with_accuracy(
    frame: pl.DataFrame, pts: pl.DataFrame, evals: pl.DataFrame, base: str, cand: str
) -> pl.DataFrame:
    """The frame (rows of matched arms) with each run's headline accuracy of the arm."""
    if not frame.height:
        return frame
    sides = frame.select(
        pl.col(Col.ARM_ID), pl.lit(base).alias("__b"), pl.lit(cand).alias("__c")
    ).with_columns(pl.col(Col.ARM_ID).alias("__arm"))
    out = accuracy_columns(sides, pts, evals, [("__b", "__arm"), ("__c", "__arm")])
    return pl.concat([frame, out.drop(Col.ARM_ID, "__b", "__c", "__arm")], how="horizontal")


def comparison_json(cmp: RunComparison) -> dict[str, Any]:
    """The comparison as one JSON-ready object (the `compare --format json` document)."""
    return {
        "base_run": cmp.base_run,
        "candidate_run": cmp.candidate_run,
        "x": cmp.x,
        "y": cmp.y,
        "arms": cmp.arms.to_dicts(),
        "groups": cmp.groups.to_dicts(),
        "points": cmp.points.to_dicts(),
        "only_in_base": cmp.only_in_base.to_dicts(),
        "only_in_candidate": cmp.only_in_candidate.to_dicts(),
        "slo": cmp.slo.text() or None,
    }


def _num(v: object, digits: int = 1) -> str:
    return "–" if v is None else f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def _pct(v: object) -> str:
    return "–" if not isinstance(v, float) else f"{v:+.1f}%"


def _code(text: str) -> str:
    """A run id as a code span (inert: no link or HTML inside one), escaped text when it holds
    a backtick or a line break that would end the span."""
    return f"`{text}`" if "`" not in text and text.isprintable() else md_text(text, in_table=False)


_UNCOMPARABLE = ("post_cliff", "invalid", "out_of_slo")


def _flag(base: object, cand: object) -> str | None:
    """A per-load row whose delta says nothing (a side past its cliff, invalid, out of SLO)."""
    sides = [
        f"{name} {v}" for name, v in (("base", base), ("candidate", cand)) if v in _UNCOMPARABLE
    ]
    return "; ".join(sides) or None


def _load(r: dict[str, Any]) -> str:
    if r.get(Col.CONC) is not None:
        return f"c{r[Col.CONC]}"
    rate = r.get(Col.REQUEST_RATE)
    return f"{rate:g} req/s" if isinstance(rate, float) else "?"


def _group_lines(cmp: RunComparison) -> list[str]:
    """The group-envelope uplift: each comparison group's envelope over all its arms."""
    if not cmp.groups.height:
        return []
    keys = [c for c in cmp.groups.columns if c not in _GAP_COLUMNS]
    out = [
        f"Envelope uplift per comparison group (the best of all arms, at matched `{cmp.x}`):",
        "",
        "| group | " + f"{cmp.x} range | uplift | mean Δ at measured x |",
        "|---|---|---|---|",
    ]
    for r in cmp.groups.iter_rows(named=True):
        name = ", ".join(f"{k}={r[k]}" for k in keys if k != Col.RUN_ID and r[k] is not None)
        rng = "no overlap"
        if r["x_lo"] is not None:
            rng = f"{_num(r['x_lo'], 2)}–{_num(r['x_hi'], 2)}"
        out.append(
            f"| {md_cell(name)} | {rng} | {_pct(r['uplift_pct'])} | {_pct(r['mean_delta_pct'])} |"
        )
    return [*out, ""]


def _has_accuracy(arms: pl.DataFrame) -> bool:
    """Whether any matched arm has an accuracy in either run (evals were given and joined)."""
    cols = [c for c in ("accuracy_baseline", "accuracy_treatment") if c in arms.columns]
    return bool(cols) and arms.select(pl.any_horizontal(pl.col(cols).is_not_null()).any()).item()


def _accuracy_cells(r: dict[str, Any]) -> str:
    """` task base → cand | flag |`: the arm's headline accuracy in both runs (4 decimals, as
    the flag writes them) and the combined-stderr flag."""
    b, t = r.get("accuracy_baseline"), r.get("accuracy_treatment")
    task = r.get("accuracy_task") or ""
    value = f"{task} {_num(b, 4)} → {_num(t, 4)}" if b is not None or t is not None else "–"
    flag = r.get("accuracy_flag") or ("not flagged" if b is not None and t is not None else "–")
    return f" {md_cell(value.strip())} | {md_cell(str(flag))} |"


def comparison_markdown(cmp: RunComparison) -> str:
    """Markdown for a PR comment: frontier uplift per arm, per-conc deltas, unmatched arms;
    with the arms' accuracy in both runs and its stderr flag when the comparison has evals.

    Text from result files (run ids, arm labels) is escaped (`md_text`): it renders as itself,
    never as a link, image or HTML."""
    arrow = {m: "↑" if better(m) == "higher" else "↓" for m in cmp.metrics}
    lines = [
        f"### paretolens compare: {_code(cmp.base_run)} → {_code(cmp.candidate_run)}",
        "",
        f"Frontier uplift of `{cmp.y}` at matched `{cmp.x}` (PCHIP over each arm's frontier, "
        "common range only; post-cliff and invalid points excluded"
        + (f"; only points within the SLO {cmp.slo.describe()}" if cmp.slo else "")
        + "):",
        "",
    ]
    acc = _has_accuracy(cmp.arms)
    if cmp.arms.height:
        lines += [
            f"| arm | {cmp.x} range | uplift | mean Δ at measured x | area between |"
            + (" accuracy base → cand | accuracy flag |" if acc else ""),
            "|---|---|---|---|---|" + ("---|---|" if acc else ""),
        ]
    else:
        lines.append("No arm is in both runs, so there is no frontier to compare.")
    for r in cmp.arms.iter_rows(named=True):
        rng = "no overlap"
        if r["x_lo"] is not None:
            rng = f"{_num(r['x_lo'], 2)}–{_num(r['x_hi'], 2)}"
        lines.append(
            f"| {md_cell(r['arm_label'])} | {rng} | {_pct(r['uplift_pct'])} "
            f"| {_pct(r['mean_delta_pct'])} | {_num(r['area_between'])} |"
            + (_accuracy_cells(r) if acc else "")
        )
    lines.append("")
    lines += _group_lines(cmp)
    if cmp.points.height:
        lines += [
            "| arm | load | "
            + " | ".join(f"{m} {arrow[m]} base → cand (Δ)" for m in cmp.metrics)
            + " | flag | confounds |",
            "|---|---|" + "---|" * len(cmp.metrics) + "---|---|",
        ]
    else:
        lines.append("No arm was measured at the same load in both runs.")
    # A label, flag or confound text repeats on many rows: each is escaped once.
    cell: dict[object, str] = {}

    def text(v: object) -> str:
        if v not in cell:
            cell[v] = md_cell(v)
        return cell[v]

    for r in cmp.points.iter_rows(named=True):
        cells = [
            f"{_num(r[f'{m}_base'], 2)} → {_num(r[f'{m}_candidate'], 2)} "
            f"({_pct(r[f'{m}_delta_pct'])})"
            for m in cmp.metrics
        ]
        flag = _flag(r.get("base_verdict"), r.get("candidate_verdict"))
        confounds = "; ".join(r.get("confounds") or []) or "none"
        lines.append(
            f"| {text(r[Col.ARM_LABEL])} | {_load(r)} | "
            + " | ".join(cells)
            + f" | {text(flag or '')} | {text(confounds)} |"
        )
    for title, frame in (
        ("Only in base", cmp.only_in_base),
        ("Only in candidate", cmp.only_in_candidate),
    ):
        if frame.height:
            lines += ["", f"**{title}:**"]
            lines += [
                f"- {md_text(r[Col.ARM_LABEL], in_table=False)} (conc {', '.join(map(str, r['concs']))})"
                for r in frame.iter_rows(named=True)
            ]
    return "\n".join(lines) + "\n"

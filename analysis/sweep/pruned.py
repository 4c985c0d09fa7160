"""Pruned point lists: the points worth a full-duration sweep, grouped per arm.

`prune_list` keeps the group-frontier points (optionally also arm-frontier points and the
neighbouring concurrencies of kept points), groups them per arm with a sorted conc list and the
InferenceX config key they belong to, and records every dropped point with its verdict and reason.
`analysis.sweep.export` turns the kept arms into a master-config snippet and a dispatch command.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from analysis.frontier.prune import Analysis, Verdict
from analysis.sweep.recipes import config_key, row_identity
from analysis.sweep.sweep_config import SweepConfig
from ingest.contract.col import Col
from ingest.contract.plans import ArmPlan, Identity

_KEEP = (Verdict.FRONTIER.value, Verdict.DOMINATED.value)


@dataclass(frozen=True, eq=False)
class PrunedList:
    """kept: verdict rows of the kept points plus `keep_reason`; dropped: the others (their
    `verdict` and `reason` say why); arms: the kept points grouped per arm."""

    arms: tuple[ArmPlan, ...]
    kept: pl.DataFrame
    dropped: pl.DataFrame
    master: SweepConfig | None = None
    slo: str = ""  # the SLO the kept points meet, for people (empty: none)


def prune_list(
    analysis: Analysis,
    *,
    neighbours: bool = False,
    include_arm_frontier: bool = False,
    master: SweepConfig | None = None,
) -> PrunedList:
    """The points worth the full sweep, grouped per arm.

    Args:
        analysis: verdicts from `analyze_points`.
        neighbours: also keep the next lower and higher measured concurrency of each kept point
            in its arm, when that point is frontier or dominated (never invalid or post-cliff).
        include_arm_frontier: also keep points on their own arm's frontier (so that every arm
            that has a valid point keeps its best curve, e.g. both sides of an A/B).
        master: a validated master config; kept arms reuse its config keys and entries.
    """
    t = analysis.table.with_row_index("__row")
    arm = [Col.RUN_ID, Col.ARM_ID]
    front = pl.col("verdict") == Verdict.FRONTIER.value
    arm_front = pl.col("on_arm_frontier") & pl.lit(include_arm_frontier)
    reason = (
        pl.when(front)
        .then(pl.lit("on the group frontier"))
        .when(arm_front)
        .then(pl.lit("on its arm frontier"))
        .otherwise(pl.lit(None, pl.String))
    )
    t = t.with_columns(__keep=front | arm_front, keep_reason=reason)
    if neighbours:
        t = t.sort([*arm, Col.CONC, "__row"])
        ok = pl.col("verdict").is_in(_KEEP)
        for shift in (1, -1):
            near = pl.col("__keep").shift(shift).over(arm).fill_null(False)
            conc = pl.col(Col.CONC).shift(shift).over(arm)
            add = ~pl.col("__keep") & near & ok
            t = t.with_columns(
                keep_reason=pl.when(add & pl.col("keep_reason").is_null())
                .then(pl.format("neighbour of c{}", conc))
                .otherwise(pl.col("keep_reason")),
            )
        t = t.with_columns(__keep=pl.col("keep_reason").is_not_null()).sort("__row")
    kept = t.filter(pl.col("__keep")).drop("__keep", "__row")
    dropped = t.filter(~pl.col("__keep")).drop("__keep", "__row", "keep_reason")
    groups: dict[tuple[str, str, int | None, int | None, Identity], dict[str, Any]] = {}
    for row in kept.iter_rows(named=True):
        key = config_key(row, master)
        scen = str(row[Col.SCENARIO])
        g = groups.setdefault(
            (key, scen, row.get(Col.ISL), row.get(Col.OSL), row_identity(row)),
            {
                "arm_id": row[Col.ARM_ID],
                "arm_label": row[Col.ARM_LABEL],
                "concs": set(),
                "rates": set(),
            },
        )
        if row[Col.CONC] is not None:
            g["concs"].add(int(row[Col.CONC]))
        elif row.get(Col.REQUEST_RATE) is not None:
            g["rates"].add(float(row[Col.REQUEST_RATE]))
    arms = tuple(
        ArmPlan(
            config_key=k[0],
            scenario=k[1],
            isl=k[2],
            osl=k[3],
            arm_id=g["arm_id"],
            arm_label=g["arm_label"],
            identity=k[4],
            conc_list=tuple(sorted(g["concs"])),
            rate_list=tuple(sorted(g["rates"])),
        )
        for k, g in sorted(
            groups.items(), key=lambda kv: (kv[0][:2], kv[1]["arm_label"], repr(kv[0]))
        )
    )
    slo = analysis.slo.describe() if analysis.slo else ""
    return PrunedList(arms=arms, kept=kept, dropped=dropped, master=master, slo=slo)


def selection_list(points: pl.DataFrame, point_ids: Sequence[str]) -> PrunedList:
    """Chosen points (ticked in the run page's points table) as a pruned list, so that they
    launch as the pruned list does: one arm per `arm_id`, in the order the points come, with
    the config key and identity of its first point; nothing is dropped.

    Args:
        points: canonical points, with verdict columns or without.
        point_ids: the chosen `point_id`s (ids not in `points` are ignored).
    """
    rows = points.filter(pl.col(Col.POINT_ID).is_in(list(point_ids)))
    arms = []
    for (arm_id,), grp in rows.group_by(Col.ARM_ID, maintain_order=True):
        r = grp.row(0, named=True)
        concs = grp.get_column(Col.CONC).drop_nulls().unique()
        rates = (
            grp.filter(pl.col(Col.CONC).is_null()).get_column(Col.REQUEST_RATE).drop_nulls()
            if Col.REQUEST_RATE in grp.columns
            else pl.Series([], dtype=pl.Float64)
        )
        arms.append(
            ArmPlan(
                config_key=config_key(r, None),
                scenario=r[Col.SCENARIO],
                isl=r[Col.ISL],
                osl=r[Col.OSL],
                arm_id=str(arm_id),
                arm_label=r[Col.ARM_LABEL],
                identity=row_identity(r),
                conc_list=tuple(sorted(int(c) for c in concs.to_list())),
                rate_list=tuple(sorted({float(v) for v in rates.to_list()})),
            )
        )
    return PrunedList(arms=tuple(arms), kept=rows, dropped=rows.clear())


def pruned_table(pruned: PrunedList) -> pl.DataFrame:
    """Kept and dropped points in one frame (CSV): `kept`, `keep_reason`, `verdict`, `reason`."""
    kept = pruned.kept.with_columns(kept=pl.lit(True))
    dropped = pruned.dropped.with_columns(kept=pl.lit(False), keep_reason=pl.lit(None, pl.String))
    return pl.concat([kept, dropped.select(kept.columns)]).sort(
        [Col.RUN_ID, Col.ARM_LABEL, Col.CONC], nulls_last=True
    )


def pruned_json(pruned: PrunedList) -> dict[str, Any]:
    """The pruned list as a JSON-ready object: `arms`, `kept`, `dropped` (see docs/analysis.md)."""
    arms = [
        {
            "config_key": a.config_key,
            "scenario": a.scenario,
            "isl": a.isl,
            "osl": a.osl,
            "arm_id": a.arm_id,
            "arm_label": a.arm_label,
            "identity": dict(a.identity),
            "conc_list": list(a.conc_list),
            "request_rates": list(a.rate_list),
        }
        for a in pruned.arms
    ]
    return {
        "arms": arms,
        "kept": pruned.kept.to_dicts(),
        "dropped": pruned.dropped.to_dicts(),
        "slo": pruned.slo or None,
    }


__all__ = [
    "PrunedList",
    "prune_list",
    "pruned_json",
    "pruned_table",
    "selection_list",
]

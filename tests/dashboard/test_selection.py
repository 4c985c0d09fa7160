"""Launching from a run view plans from typed arms: the pruned list and the ticked points reach
`runner.sources.plan_from_arms` as `ArmPlan`s, and plan exactly as their JSON documents do."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from analysis.sweep.pruned import pruned_json
from analysis.sweep.recipes import config_key, row_identity
from ingest.contract.col import Col
from runner.sources import plan_from_arms, plan_from_pruned
from views.query.state import RunView
from views.run_data import RunData
from views.source import DataSource

RUN = "29337493492"
BASE = {"name": "full", "commands": {"script": ["bash", "run_point.sh"]}, "timeout_s": 60}


def _legacy_selection_doc(data: RunData, point_ids: Sequence[str]) -> dict[str, Any]:
    """The document `RunData.selection_doc` built by hand before the selection moved into
    analysis (kept here as the oracle of `selection_list`)."""
    rows = data.verdict_points.filter(pl.col(Col.POINT_ID).is_in(list(point_ids)))
    arms = []
    for (arm_id,), grp in rows.group_by(Col.ARM_ID, maintain_order=True):
        r = grp.row(0, named=True)
        arms.append(
            {
                "config_key": config_key(r, None), "scenario": r[Col.SCENARIO], "isl": r[Col.ISL],
                "osl": r[Col.OSL], "arm_id": arm_id, "arm_label": r[Col.ARM_LABEL],
                "identity": dict(row_identity(r)),
                "conc_list": sorted(grp.get_column(Col.CONC).unique().to_list()),
            }
        )  # fmt: skip
    return {"arms": arms, "kept": rows.to_dicts(), "dropped": []}


def test_ticked_points_plan_as_the_document_they_used_to_be(source: DataSource) -> None:
    data = source.run_data(RunView(runs=(RUN,)))
    ids = data.verdict_points.filter(pl.col(Col.CONC).is_in([8, 16, 32, 48])).get_column(
        Col.POINT_ID
    )
    # Ticked out of order, across arms: the arms keep the order of the points table.
    picked = list(reversed(ids.to_list()))
    chosen = data.selection(picked)
    legacy = _legacy_selection_doc(data, picked)
    assert [a.arm_id for a in chosen.arms] == [a["arm_id"] for a in legacy["arms"]]
    assert [list(a.conc_list) for a in chosen.arms] == [a["conc_list"] for a in legacy["arms"]]
    assert [(a.arm_label, a.conc_list) for a in chosen.arms] == [
        ("TP8 EP1 | no spec | kv dram/lmcache", (16, 32, 48)),
        ("TP8 EP1 | no spec | kv none", (8,)),
    ]
    assert chosen.kept.to_dicts() == legacy["kept"] and chosen.dropped.height == 0
    typed = plan_from_arms(chosen.arms, chosen.kept, base=BASE, source="web")
    assert typed == plan_from_pruned(legacy, base=BASE, source="web")
    assert typed == plan_from_pruned(pruned_json(chosen), base=BASE, source="web")
    assert sorted(p.conc for p in typed.points()) == [8, 16, 32, 48]


def test_the_pruned_list_plans_as_its_json_document(source: DataSource) -> None:
    data = source.run_data(RunView(runs=(RUN,)))
    typed = plan_from_arms(data.pruned.arms, data.pruned.kept, base=BASE, source="web")
    assert typed == plan_from_pruned(data.pruned_doc, base=BASE, source="web")
    assert [a.label for a in typed.arms] == [a.arm_label for a in data.pruned.arms]

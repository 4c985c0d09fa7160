"""Issue 23, item 2: a download that holds each measurement twice stores it once.

tests/fixtures/wild/inferencex/rocm_team_glm5.1_agentic_download is a real whole InferenceX
agentic run (GLM-5.1 FP4, SGLang on MI355X, TP2, HiCache on/off, conc 4 to 48) as a fork
committed it: twelve `bmk_agentic_*/<name>.json` point files and `results_bmk/agg_bmk.json`, the
run aggregate holding the same twelve rows (PROVENANCE.md in tests/fixtures/wild/inferencex).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl

from ingest.contract.col import Col
from ingest.pipeline import ingest_paths
from ingest.store import Store

DOWNLOAD = (
    Path(__file__).resolve().parent.parent
    / "fixtures"
    / "wild"
    / "inferencex"
    / "rocm_team_glm5.1_agentic_download"
)
AGG = "results_bmk/agg_bmk.json"


def _rows() -> list[dict[str, object]]:
    rows = json.loads((DOWNLOAD / AGG).read_text())
    assert isinstance(rows, list)
    return rows


def test_each_point_once_as_many_as_the_aggregate_has_rows(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    report = ingest_paths([DOWNLOAD], store, run_id="glm")
    pts = store.points(["glm"])
    assert len(_rows()) == 12
    assert (report.accepted, pts.height) == (12, 12)
    # the point files are kept (the fuller copies); the aggregate's rows are their copies
    assert all(p.startswith("bmk_agentic_glm5.1_") for p in pts[Col.SOURCE_PATH])
    by_load = {
        (r[Col.CONC], r[Col.KV_OFFLOAD_BACKEND]): r[Col.MEAN_TTFT]
        for r in pts.iter_rows(named=True)
    }
    # agg_bmk.json row 2: conc 4, hicache, mean_ttft 0.9042303929145299 s
    assert by_load[(4, "hicache")] == 0.9042303929145299
    assert len(by_load) == 12
    (note,) = [n.reason for n in report.notes if n.path == AGG]
    assert note.startswith("12 of its points are the same measurements as bmk_agentic_glm5.1_")
    assert note.endswith("(same configuration, load and measured values): stored once")
    # the aggregate is accounted for: its points are the stored ones
    (agg,) = [o for o in report.accepted_files if o.path == AGG]
    assert set(agg.point_ids) == set(pts[Col.POINT_ID])


def test_a_copy_that_disagrees_is_kept_apart_and_reported(tmp_path: Path) -> None:
    copy = tmp_path / "download"
    shutil.copytree(DOWNLOAD, copy)
    rows = _rows()
    assert (rows[2]["conc"], rows[2]["offloading"]) == (4, "hicache")
    rows[2]["mean_ttft"] = 0.95  # was 0.9042303929145299
    (copy / AGG).write_text(json.dumps(rows))
    store = Store(tmp_path / "s")
    report = ingest_paths([copy], store, run_id="glm")
    pts = store.points(["glm"])
    assert pts.height == 13
    twins = pts.filter((pl.col(Col.CONC) == 4) & (pl.col(Col.KV_OFFLOAD_BACKEND) == "hicache"))
    assert sorted(twins[Col.MEAN_TTFT].to_list()) == [0.9042303929145299, 0.95]
    assert twins[Col.REPEATS].to_list() == [None, None]  # not averaged: a copy, not a repeat
    (why,) = [n.reason for n in report.notes if "disagree" in n.reason]
    assert (
        "mean_ttft 0.9042303929145299 vs 0.95" in why
        or "mean_ttft 0.95 vs 0.9042303929145299" in why
    )
    assert why.endswith("both kept apart")
    assert all(why in (w or []) for w in twins[Col.WARNINGS].to_list())

"""GPU x date: the history page marks the runs' changelog entries on its chart (issue 27).

Real files: the Kimi-K2.7 TP4 sweep (run 29003473063, tests/fixtures/inferencex/agentic_agg) and
its changelog_metadata.json, whose one entry (PR 2126) names config key
kimik2.7-fp4-mi355x-vllm-agentic: the configuration of every arm of that run
(kimik2.7 fp4 mi355x vllm). The TP8 sweep (29337493492) has no changelog file.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from dash import html

from dashboard.pages import history
from ingest.changelog import config_key, touches
from ingest.pipeline import ingest_paths
from ingest.store import Store
from tests.dashboard.tree import text as _text
from views.query.state import HistoryView
from views.source import DataSource
from views.tables import history_changelog, history_table

AGG = Path(__file__).resolve().parents[1] / "fixtures" / "inferencex" / "agentic_agg"
TP4, TP8 = "29003473063", "29337493492"
KV_NONE = "1b9425cf10a3a94a"  # TP4 EP1 | no spec | kv none (the canonical configuration key)


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> DataSource:
    st = Store(tmp_path_factory.mktemp("changelog"))
    ingest_paths([AGG / f"kimik2.7_tp4_sweep_{TP4}"], st, run_id=TP4)
    ingest_paths([AGG / f"kimik2.7_tp8_sweep_{TP8}"], st, run_id=TP8)
    return DataSource(st)


def test_ingest_keeps_the_runs_changelog(source: DataSource) -> None:
    (entry,) = source.store.changelog(TP4)
    assert entry["config_keys"] == ["kimik2.7-fp4-mi355x-vllm-agentic"]
    assert entry["pr_link"] == "https://github.com/SemiAnalysisAI/InferenceX/pull/2126"
    assert entry["description"][0].startswith("Add Kimi-K2.7-Code-MXFP4 agentic-coding config")
    assert source.store.changelog(TP8) == []


def test_config_keys_match_by_glob_and_scenario_suffix() -> None:
    key = config_key("kimik2.7", "fp4", "mi355x", "vllm")
    assert key == "kimik2.7-fp4-mi355x-vllm"
    assert touches({"config_keys": ["kimik2.7-fp4-mi355x-vllm-agentic"]}, key)
    assert touches({"config_keys": ["kimik2.7*"]}, key)
    assert not touches({"config_keys": ["dsr1*", "kimik2.7-fp8-*"]}, key)


def test_history_marks_the_changelog_on_the_chart(source: DataSource) -> None:
    view, _ = HistoryView.parse(f"arm={KV_NONE}&at=40")
    frame = history_table(source, view).frame
    log = history_changelog(source, view, frame)
    assert [(e["run_id"], e["arms"]) for e in log] == [(TP4, ["TP4 EP1 | no spec | kv none"])]
    fig = history.changelog_marks(history.history_figure(frame, view), log)
    (line,) = fig["layout"]["shapes"]
    label = history._run_label(log[0])
    assert line["x0"] == line["x1"] == label and label.endswith(TP4)
    note = [a for a in fig["layout"]["annotations"] if a.get("name") == "changelog"]
    assert [n["text"] for n in note] == ["PR 2126"]
    assert "LMCache" in note[0]["hovertext"]
    text = _text(html.Div(history.changelog_list(log)))
    assert "PR 2126" in text and "TP4 EP1 | no spec | kv none" in text

"""URL state: every control round-trips through the query string, tolerant parsing."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import BaseModel

from dashboard.pages import run_charts as run
from views import run_data
from views.query.affects import Part, affects, fields_affecting, invalidates
from views.query.choices import FILTER_FIELDS, seq_label
from views.query.state import DISPLAY_ONLY, CompareView, IndexView, JobsView, RunView
from views.query.viewmodel import split_values


@pytest.mark.parametrize(
    "query",
    [
        "unofficialRun=123,456",
        "unofficialrun=123&unofficialRuns=456",
        "UNOFFICIALRUNS=123,456",
        "unofficialRun=123&unofficialRun=456&unofficialRun=123",
        "run=123,456",
    ],
)
def test_run_ids_any_case_plural_and_comma_lists(query: str) -> None:
    view, notes = RunView.parse(query)
    assert view.runs == ("123", "456")
    assert notes == []


def test_defaults_are_left_out_and_the_canonical_key_is_unofficialRun() -> None:
    assert RunView(runs=("123",)).query() == "unofficialRun=123"
    assert RunView().query() == ""


def test_every_field_round_trips() -> None:
    view = RunView(
        runs=("a", "b"), y="output_tput_per_gpu", x="p90_intvty", x2="p99_ttft", model=("kimik2.5",),
        scenario=("agentic-coding",), seq=("8192/1024", "trace"), hw=("b200", "h200"), precision=("fp4",),
        framework=("vllm",), spec=("mtp",), offload=("dram",), arm=("abc",), hide=("abc~a", "envelope~b"),
        logx=True, logy=True, frontier_only=True, labels="gpus", envelope="all", at=40.0, point="p1",
        ab="kv_offloading", tab="deltas",
    )  # fmt: skip
    assert RunView.parse(view.query()) == (view, [])
    assert RunView.from_controls(view.controls()) == (view, [])


def test_query_string_is_readable() -> None:
    view = RunView(runs=("29003473063",), hw=("b200", "h200"), logy=True, at=40.0)
    assert view.query() == "unofficialRun=29003473063&hw=b200,h200&logy=1&at=40"


def test_bad_values_are_dropped_with_a_notice_and_the_rest_kept() -> None:
    view, notes = RunView.parse("unofficialRun=1&y=bogus&at=-3&labels=gpus")
    assert view == RunView(runs=("1",), labels="gpus")
    assert [n.split(":")[0] for n in notes] == ["ignored y=bogus", "ignored at=-3"]


def test_run_ids_that_are_not_ids_are_refused() -> None:
    view, notes = RunView.parse("unofficialRun=<script>alert(1)</script>")
    assert view.runs == ()
    assert notes and notes[0].startswith("ignored unofficialRun=")


def test_inferencex_share_keys_map_onto_ours() -> None:
    view, _ = RunView.parse("unofficialRun=1&i_log=true&i_optimal=1&i_nolabel=1")
    assert (view.logy, view.frontier_only, view.labels) == (True, True, "none")


def test_data_key_ignores_display_only_fields() -> None:
    a = RunView(runs=("1",), hw=("b200",))
    assert a.data_key() == a.replace(logx=True, point="p", tab="al", x2="p99_ttft").data_key()
    assert a.data_key() != a.replace(x="p90_intvty").data_key()


def test_compare_index_and_jobs_views_round_trip() -> None:
    c = CompareView(base="1", candidate="2", x="p90_intvty", logy=True)
    assert CompareView.parse(c.query()) == (c, [])
    assert CompareView.from_controls(c.controls()) == (c, [])
    i = IndexView(q="kimi", hw=("mi355x",), since="2026-01-01")
    assert IndexView.parse(i.query()) == (i, [])
    assert IndexView.from_controls(i.controls()) == (i, [])
    j = JobsView(job="j-20261202-101010-abcdef", point="p1", stream="stderr")
    assert JobsView.parse(j.query()) == (j, [])


def test_index_dates_are_validated() -> None:
    view, notes = IndexView.parse("since=yesterday&until=2026-02-01")
    assert (view.since, view.until) == ("", "2026-02-01")
    assert len(notes) == 1


def test_split_and_seq_labels() -> None:
    assert split_values(["a,b", " b ,c", ""]) == ("a", "b", "c")
    assert seq_label("8192/1024") == "8k/1k"
    assert seq_label("1000/128") == "1000/128"
    assert seq_label("trace") == "agentic trace"


def test_every_run_view_field_declares_what_it_affects() -> None:
    for name in RunView.model_fields:
        invalidates(RunView, name)  # raises for a field without its one marker


def test_the_cache_and_callback_field_sets_follow_from_the_markers() -> None:
    # The lists these replaced, written out by hand in three modules before.
    shown = {"logx", "logy", "frontier_only", "labels", "point", "hide", "tab", "x2", "palette"}
    assert shown == DISPLAY_ONLY
    assert set(run_data.CACHE_IGNORED) == DISPLAY_ONLY - {"x2"}
    assert run_data.RUN_FIELDS == ("runs",)
    assert set(run_data.POINT_FIELDS) == {"runs", *FILTER_FIELDS, "hwcost"}
    assert set(run_data.MAIN_FIELDS) == {*run_data.POINT_FIELDS, "x", "y", "envelope", "slo"}
    assert set(run_data.SECOND_FIELDS) == {*run_data.POINT_FIELDS, "x2", "y", "envelope", "slo"}
    assert set(run_data.DELTA_FIELDS) == {*run_data.MAIN_FIELDS, "ab"}
    assert set(run_data.BASELINE_FIELDS) == {*run_data.MAIN_FIELDS, "baseline"}
    assert set(run_data.PRUNED_FIELDS) == {
        *run_data.MAIN_FIELDS,
        "neighbours",
        "arm_frontier",
        "master",
    }
    tco = {"tco_intvty", "tco_tput", "tco_cost"}  # the TCO calculator's targets (issue 27)
    neutral = {"tab", "ab", "neighbours", "arm_frontier", "master", *tco}
    # the main chart draws no x2; the second chart no x, no "rank arms at" line, no baseline
    assert {*neutral, "x2"} == run.FIGURE_NEUTRAL["main"]
    assert {*neutral, "x", "at", "baseline"} == run.FIGURE_NEUTRAL["second"]
    assert {"logx", "logy", "hide", "point"} == run.PATCHABLE
    for which in ("main", "second"):
        assert run.chart_update({"tab", "ab"}, which) == "none"
        assert run.chart_update(None, which) == "figure"
        assert run.chart_update({"logx", "tab"}, which) == "patch"
        assert run.chart_update({"spec"}, which) == "figure"
    assert (
        run.chart_update({"x2"}, "main") == "none"
        and run.chart_update({"x2"}, "second") == "figure"
    )
    assert run.chart_update({"x", "logy"}, "second") == "patch"
    assert run.chart_update({"x"}, "main") == run.chart_update({"at"}, "main") == "figure"


def test_a_field_without_a_marker_is_refused() -> None:
    class View(BaseModel):
        x: Annotated[str, affects(Part.MAIN)] = ""
        bare: str = ""

    assert invalidates(View, "x") == {
        Part.MAIN, Part.DELTAS, Part.RANKING, Part.BASELINE, Part.PRUNED, Part.MAIN_CHART
    }  # fmt: skip
    with pytest.raises(TypeError, match=r"View.bare needs one affects\(...\) marker"):
        fields_affecting(View, Part.MAIN)

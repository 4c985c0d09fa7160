"""The latest main-branch baseline of a run: which point per configuration and load, the uplift."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.comparison.baseline import (
    BASELINE_MAIN,
    baseline_markdown,
    baseline_sources,
    latest_main_baseline,
    latest_main_rows,
    main_baseline_choice,
)
from analysis.comparison.compare import compare_runs
from ingest.contract.col import Col
from ingest.contract.schema import RunCol
from tests.analysis.pointdata import frame, row

# One configuration (DeepSeek-R1 FP8 on H200, vLLM TP8, 1k/1k) measured by four runs.
# (conc, median_intvty) is the same everywhere; tput_per_gpu differs by run.
X = {1: 100.0, 2: 90.0, 4: 80.0, 8: 60.0, 16: 40.0}
OLD_MAIN = {1: 10.0, 2: 18.0, 4: 25.0, 8: 40.0}  # main, 2026-03-01: all four loads
NEW_MAIN = {4: 30.0, 8: 50.0}  # main, 2026-03-10: conc 4 and 8 only
OTHER_BRANCH = {1: 99.0, 2: 99.0, 4: 99.0, 8: 99.0}  # newest of all, but not main
# The PR: 1.2 x the baseline the rule must pick (old main at conc 1-2, new main at 4-8).
PR = {1: 12.0, 2: 21.6, 4: 36.0, 8: 60.0}

COMMON: dict[str, Any] = {
    "hw": "h200",
    "framework": "vllm",
    "precision": "fp8",
    "model_prefix": "dsr1",
    "tp": 8,
    "ep": 1,
    "isl": 1024,
    "osl": 1024,
    "p90_ttft": 1.0,
}


def _run(run_id: str, tputs: dict[int, float], **extra: Any) -> list[dict[str, Any]]:
    fields = {**COMMON, **extra}
    return [
        row(run_id, f"{run_id}/c{c}.json", conc=c, tput_per_gpu=y, median_intvty=X[c], **fields)
        for c, y in tputs.items()
    ]


@pytest.fixture(scope="module")
def points() -> pl.DataFrame:
    return frame(
        # The PR's rows name the served model (from its aggregates); the new main run's come
        # from an InferenceX app dump, which keeps only the model key and writes "trt"-style
        # canonical names: both spellings must match.
        _run("pr", PR, model="deepseek-ai/DeepSeek-R1-0528", image="vllm:pr")
        + _run("m1", OLD_MAIN, model="deepseek-ai/DeepSeek-R1-0528", image="vllm:old")
        + _run("m2", NEW_MAIN, image="vllm:new")
        + _run("feat", OTHER_BRANCH, model="deepseek-ai/DeepSeek-R1-0528")
        # another configuration on main (TP4): never a baseline for the TP8 arm
        + _run("m2", {1: 500.0}, tp=4)
    )


@pytest.fixture(scope="module")
def runs() -> pl.DataFrame:
    return pl.DataFrame(
        {
            RunCol.RUN_ID.value: ["m1", "m2", "feat", "pr"],
            RunCol.BRANCH.value: ["main", "main", "feature/x", "feature/y"],
            RunCol.HEAD_SHA.value: ["a" * 40, "b" * 40, "c" * 40, "d" * 40],
            RunCol.CREATED_AT.value: [
                "2026-03-01T06:00:00Z",
                "2026-03-10T06:00:00Z",
                "2026-03-20T06:00:00Z",
                "2026-03-12T06:00:00Z",
            ],
        }
    )


def test_newest_main_point_per_configuration_and_load(
    points: pl.DataFrame, runs: pl.DataFrame
) -> None:
    base = latest_main_baseline(points, runs, "pr")
    assert base.columns == points.columns
    assert base.get_column(Col.RUN_ID).unique().to_list() == [BASELINE_MAIN]
    got = baseline_sources(points, base).select(Col.CONC, "source_run").rows()
    assert got == [(1, "m1"), (2, "m1"), (4, "m2"), (8, "m2")]
    assert base.get_column(Col.TPUT_PER_GPU).to_list() == [10.0, 18.0, 30.0, 50.0]
    # the baseline points stand for the PR's arm (so compare_runs pairs them) ...
    pr_arm = points.filter(pl.col(Col.RUN_ID) == "pr").get_column(Col.ARM_ID).unique().to_list()
    assert base.get_column(Col.ARM_ID).unique().to_list() == pr_arm
    # ... and keep their own provenance
    assert base.get_column(Col.IMAGE).to_list() == ["vllm:old", "vllm:old", "vllm:new", "vllm:new"]


def test_the_run_itself_and_other_branches_never_count(
    points: pl.DataFrame, runs: pl.DataFrame
) -> None:
    # m2 on a branch: only m1 is left, at every load
    moved = runs.with_columns(
        pl.when(pl.col(RunCol.RUN_ID) == "m2")
        .then(pl.lit("fix"))
        .otherwise(pl.col(RunCol.BRANCH))
        .alias(RunCol.BRANCH)
    )
    base = latest_main_baseline(points, moved, "pr")
    assert base.get_column(Col.TPUT_PER_GPU).to_list() == list(OLD_MAIN.values())
    # a main run's own baseline excludes itself: m2's conc 4/8 come from m1
    base = latest_main_baseline(points, runs, "m2")
    # (m2's TP4 arm at conc 1 has no other main-branch point: no row)
    assert baseline_sources(points, base).select(Col.CONC, "source_run").rows() == [
        (4, "m1"),
        (8, "m1"),
    ]


def test_uplift_over_the_baseline_frontier(points: pl.DataFrame, runs: pl.DataFrame) -> None:
    base = latest_main_baseline(points, runs, "pr")
    cmp = compare_runs(pl.concat([points, base]), BASELINE_MAIN, "pr")
    # PR throughput is 1.2 x the baseline at every measured interactivity (60, 80, 90, 100), so
    # both PCHIP curves differ by the constant factor 1.2: +20 % everywhere and on average; the
    # area between them is 0.2 x the baseline area over the common range 60..100.
    (arm,) = cmp.arms.to_dicts()
    assert (arm["x_lo"], arm["x_hi"], arm["matched_concs"]) == (60.0, 100.0, 4)
    assert round(arm["uplift_pct"], 9) == 20.0
    assert round(arm["mean_delta_pct"], 9) == 20.0
    assert round(arm["area_between"] / arm["area_base"], 9) == 0.2
    # per load: conc 4 is 30 -> 36, conc 8 is 50 -> 60 (the new main run's values)
    per = cmp.points.select(Col.CONC, "tput_per_gpu_base", "tput_per_gpu_candidate").rows()
    assert per == [(1, 10.0, 12.0), (2, 18.0, 21.6), (4, 30.0, 36.0), (8, 50.0, 60.0)]


def test_pr_markdown_has_the_baseline_section(points: pl.DataFrame, runs: pl.DataFrame) -> None:
    # the PR also ran conc 16, which no main-branch run measured
    extra = _run("pr", {16: 70.0}, model="deepseek-ai/DeepSeek-R1-0528")
    with_16 = pl.concat([points, frame(extra)])
    base = latest_main_baseline(with_16, runs, "pr")
    cmp = compare_runs(pl.concat([with_16, base]), BASELINE_MAIN, "pr")
    md = baseline_markdown(cmp, with_16, base, runs, "pr")
    assert "### paretolens compare: `baseline:main` → `pr`" in md
    assert "| +20.0% |" in md
    assert "#### Baseline: the latest main-branch result per configuration" in md
    assert "| m1 | 2026-03-01 | aaaaaaa | 2 |" in md
    assert "| m2 | 2026-03-10 | bbbbbbb | 2 |" in md
    assert "**No main-branch result for:**\n- TP8 EP1 | no spec | kv none (conc 16)" in md


def test_no_main_run_gives_an_empty_baseline(points: pl.DataFrame) -> None:
    runs = pl.DataFrame({RunCol.RUN_ID.value: ["pr"], RunCol.BRANCH.value: ["feature/y"]})
    base = latest_main_baseline(points, runs, "pr")
    assert base.height == 0 and base.columns == points.columns


def _choice_sources(points: pl.DataFrame, runs: pl.DataFrame, run_id: str) -> list[Any]:
    """(arm, load, chosen run, chosen point) of the main baseline of `run_id` over `points`."""
    choice = main_baseline_choice(points, runs, run_id)
    if choice is None:
        return []
    picked = points[choice.get_column("__row")].select(Col.RUN_ID, Col.POINT_ID)
    keys = choice.select(Col.ARM_ID, Col.CONC, Col.REQUEST_RATE)
    return sorted(pl.concat([keys, picked], how="horizontal").rows(), key=str)


def test_the_kept_main_rows_are_the_two_newest_runs_per_configuration_and_load(
    points: pl.DataFrame, runs: pl.DataFrame
) -> None:
    kept = latest_main_rows(points, runs)
    got = kept.select(Col.TP, Col.CONC, Col.RUN_ID).sort(Col.TP, Col.CONC, Col.RUN_ID).rows()
    # TP8: m1 alone measured conc 1 and 2, m2 (newer) and m1 both conc 4 and 8; TP4: m2 at
    # conc 1. The feature branch and the PR are not main.
    assert got == [
        (4, 1, "m2"),
        (8, 1, "m1"), (8, 2, "m1"), (8, 4, "m1"), (8, 4, "m2"), (8, 8, "m1"), (8, 8, "m2"),
    ]  # fmt: skip
    # The same choice from a run's rows and the kept rows as from every row: for the PR, and
    # for m2, whose own rows must be left out (its conc 4 and 8 then come from m1).
    for run_id in ("pr", "m2"):
        mine = points.filter(pl.col(Col.RUN_ID) == run_id)
        others = kept.filter(pl.col(Col.RUN_ID) != run_id)
        narrow = pl.concat([mine, others], how="diagonal")
        assert _choice_sources(narrow, runs, run_id) == _choice_sources(points, runs, run_id)
    # Keeping one run: the newest alone (m2 where it measured).
    newest = latest_main_rows(points, runs, keep=1).select(Col.TP, Col.CONC, Col.RUN_ID)
    assert newest.sort(Col.TP, Col.CONC).rows() == [
        (4, 1, "m2"), (8, 1, "m1"), (8, 2, "m1"), (8, 4, "m2"), (8, 8, "m2"),
    ]  # fmt: skip


_DAYS = st.one_of(st.none(), st.integers(1, 4).map(lambda d: f"2026-03-0{d}T06:00:00Z"))


@settings(max_examples=40, deadline=None)
@given(
    data=st.lists(
        st.tuples(
            st.sampled_from(["main", "main", "feature"]),  # branch
            _DAYS,  # created_at (ties and missing dates too)
            st.lists(  # (tp, conc, model key) of each point
                st.tuples(
                    st.sampled_from([4, 8]),
                    st.sampled_from([1, 2, 4]),
                    st.sampled_from(["dsr1", "dsr1-0528"]),
                ),
                min_size=1,
                max_size=5,
            ),
        ),
        min_size=2,
        max_size=6,
    ),
    pick=st.integers(0, 5),
    split=st.integers(1, 5),
)
def test_the_kept_main_rows_choose_what_every_row_chooses(
    data: list[tuple[str, str | None, list[tuple[int, int, str]]]], pick: int, split: int
) -> None:
    rows = [
        row(f"r{i}", f"r{i}/{j}.json", conc=c, tp=tp, model_prefix=m, tput_per_gpu=1.0 + j,
            median_intvty=10.0, hw="h200", framework="vllm", precision="fp8", isl=1024, osl=1024)
        for i, (_b, _d, pts) in enumerate(data)
        for j, (tp, c, m) in enumerate(pts)
    ]  # fmt: skip
    points = frame(rows)
    runs = pl.DataFrame(
        {
            RunCol.RUN_ID.value: [f"r{i}" for i in range(len(data))],
            RunCol.BRANCH.value: [b for b, _d, _p in data],
            RunCol.CREATED_AT.value: [d for _b, d, _p in data],
        },
        schema={
            RunCol.RUN_ID.value: pl.String,
            RunCol.BRANCH.value: pl.String,
            RunCol.CREATED_AT.value: pl.String,
        },
    )
    kept = latest_main_rows(points, runs)
    run_id = f"r{pick % len(data)}"
    mine = points.filter(pl.col(Col.RUN_ID) == run_id)
    narrow = pl.concat([mine, kept.filter(pl.col(Col.RUN_ID) != run_id)], how="diagonal")
    assert _choice_sources(narrow, runs, run_id) == _choice_sources(points, runs, run_id)
    # Adding runs to kept rows keeps what keeping them from every row keeps.
    cut = min(split, len(data) - 1)
    first = points.filter(pl.col(Col.RUN_ID).is_in([f"r{i}" for i in range(cut)]))
    rest = points.filter(~pl.col(Col.RUN_ID).is_in([f"r{i}" for i in range(cut)]))
    merged = latest_main_rows(
        pl.concat([latest_main_rows(first, runs), rest.select(kept.columns)]), runs
    )
    order = kept.columns
    assert merged.sort(order, nulls_last=True).equals(kept.sort(order, nulls_last=True))

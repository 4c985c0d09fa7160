"""Issue 23, item 1: one configuration from two sources is one arm.

The InferenceX app dump fixture's branch run 23000000002 holds Kimi-K2.5 INT4 on MI355X, vLLM
TP8 MTP, 8k/1k at conc 32 and 64 (config 2: `model` "kimik2.5", `hardware` "mi355x", no HF id);
the two raw `vllm bench serve` files those points were aggregated from
(tests/fixtures/inferencex/raw_bench_serving/kimik2.5_mi355x_mtp_root, the HF id
`moonshotai/Kimi-K2.5`, the runner label `MI355-gbt350-odcdh5-wbb3`, no `hw` field) are the same
measurements. Both runs must give one arm with the same numbers: uplift 0.0 %, per-conc delta
0.0 %, the arm in neither "only in" list, two runs in its history.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from analysis.comparison.compare import RunComparison, compare_runs, comparison_markdown
from analysis.comparison.history import arm_history
from ingest.contract.col import Col
from ingest.pipeline import ingest_paths
from ingest.sources.dump import ingest_dump
from ingest.store import Store

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
DUMP = FIXTURES / "wild" / "inferencex_dump"
RAW = FIXTURES / "inferencex" / "raw_bench_serving" / "kimik2.5_mi355x_mtp_root"
DUMP_RUN, RAW_RUN = "23000000002", "k25-raw"
ARM = "TP8 EP1 | MTP | kv none"


def two_sources(root: Path) -> Store:
    """A store with the dump and the raw run of the same two points (8k/1k conc 32 and 64)."""
    raw = root / "raw"
    raw.mkdir()
    for f in RAW.glob("kimik2.5_8k1k_*.json"):
        shutil.copy(f, raw / f.name)
    store = Store(root / "store")
    ingest_dump(DUMP, store)
    ingest_paths([raw], store, run_id=RAW_RUN)
    return store


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    return two_sources(tmp_path_factory.mktemp("one-config"))


@pytest.fixture(scope="module")
def cmp(store: Store) -> RunComparison:
    return compare_runs(store.points([DUMP_RUN, RAW_RUN]), DUMP_RUN, RAW_RUN)


def test_both_sources_give_one_canonical_key(store: Store) -> None:
    pts = store.points([DUMP_RUN, RAW_RUN]).filter(pl.col(Col.MODEL_PREFIX) == "kimik2.5")
    got = pts.select(Col.RUN_ID, Col.CONC, Col.MODEL, Col.MODEL_PREFIX, Col.HW, Col.ARM_ID).sort(
        Col.RUN_ID, Col.CONC
    )
    assert got.rows() == [
        (DUMP_RUN, 32, None, "kimik2.5", "mi355x", got[Col.ARM_ID][0]),
        (DUMP_RUN, 64, None, "kimik2.5", "mi355x", got[Col.ARM_ID][0]),
        # the raw files: model from their `model_id`, hardware from the runner label MI355-...
        (RAW_RUN, 32, "moonshotai/Kimi-K2.5", "kimik2.5", "mi355x", got[Col.ARM_ID][0]),
        (RAW_RUN, 64, "moonshotai/Kimi-K2.5", "kimik2.5", "mi355x", got[Col.ARM_ID][0]),
    ]


def test_compare_pairs_the_arm_with_zero_deltas(cmp: RunComparison) -> None:
    (arm,) = cmp.arms.to_dicts()
    assert (arm[Col.ARM_LABEL], arm["matched_concs"]) == (ARM, 2)
    # the same measurements on both sides: x range c64..c32 (3.31..4.34 tok/s/user), uplift 0
    assert (round(arm["x_lo"], 2), round(arm["x_hi"], 2)) == (3.31, 4.34)
    assert arm["uplift_pct"] == pytest.approx(0.0, abs=1e-12)
    per = cmp.points.select(Col.CONC, f"{Col.TPUT_PER_GPU}_base", f"{Col.TPUT_PER_GPU}_delta_pct")
    assert [(c, round(b, 2), d) for c, b, d in per.rows()] == [(32, 157.12, 0.0), (64, 234.47, 0.0)]
    # What differs is listed beside the numbers, never a reason to leave the arm unpaired.
    assert cmp.points.get_column("confounds").to_list()[0] == [
        "model: None vs moonshotai/Kimi-K2.5",
        "image: vllm/vllm-openai-rocm:v0.21.0 vs None",
        "runner: None vs MI355-gbt350-odcdh5-wbb3",
        "schema_variant: agg_fixed_v1 vs bench_serving_ms",
    ]


def test_no_only_in_arm_for_the_shared_configuration(cmp: RunComparison) -> None:
    assert cmp.only_in_candidate.height == 0
    # The dump run's other arm, GLM-4.7 on gaudi3 (conc 16, 32), is the only unmatched one.
    assert cmp.only_in_base.select(Col.ARM_LABEL, "concs").rows() == [
        ("TP8 EP1 | no spec | kv none", [16, 32])
    ]


def test_the_pr_markdown_says_the_same(cmp: RunComparison) -> None:
    md = comparison_markdown(cmp)
    assert "| TP8 EP1 \\| MTP \\| kv none | 3.31–4.34 | +0.0% | +0.0% | 0.0 |" in md
    assert "157.12 → 157.12 (+0.0%)" in md and "234.47 → 234.47 (+0.0%)" in md
    assert "Only in candidate" not in md
    assert "MTP" not in md.split("**Only in base:**")[1]


def test_history_shows_both_runs(store: Store) -> None:
    pts = store.points()
    arm = pts.filter(pl.col(Col.RUN_ID) == RAW_RUN).get_column(Col.ARM_ID).unique().to_list()
    hist = arm_history(pts, store.runs(), arm, at=4.0)
    assert hist.get_column(Col.RUN_ID).to_list() == [DUMP_RUN, RAW_RUN]
    ys = hist.get_column("y").to_list()
    assert ys[0] == pytest.approx(ys[1], rel=0, abs=1e-9)

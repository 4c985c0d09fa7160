"""The one-measurement rule holds across ingests into one run, not only inside one batch.

The together runner's baselines (tests/fixtures/inferencex/together_runner_baselines, see
PROVENANCE there) hold the DeepSeek-R1 FP4 SGLang B200 TP8 EP8 1k/1k arm twice at each of
conc 16, 64, 128 and 256: `b200_dsr1-fp4_*` and `b200_sglang_dsr1-fp4_*`, two measurements of one
configuration in one directory, i.e. repeats. Ingested together they are one point each (the
mean, count 2); ingested as two batches, in either order, or again, the run ends the same.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from ingest.contract.col import Col
from ingest.pipeline import ingest_paths
from ingest.store import Store

SRC = (
    Path(__file__).resolve().parent.parent / "fixtures" / "inferencex" / "together_runner_baselines"
)
PLAIN = sorted(SRC.glob("b200_dsr1-fp4_*.json"))
NAMED = sorted(SRC.glob("b200_sglang_dsr1-fp4_*.json"))


def _tput(path: Path) -> float:
    return float(json.loads(path.read_text())["metrics"]["total_token_throughput"])


def _batch(root: Path, files: list[Path]) -> Path:
    root.mkdir(parents=True)
    for f in files:
        shutil.copy(f, root / f.name)
    return root


def _points(store: Store) -> pl.DataFrame:
    return store.points(["together"]).drop(Col.INGESTED_AT, Col.ARTIFACT).sort(Col.POINT_ID)


@pytest.mark.parametrize("first_plain", [True, False])
def test_repeats_split_over_two_ingests_end_as_one_ingest_of_both(
    tmp_path: Path, first_plain: bool
) -> None:
    assert len(PLAIN) == len(NAMED) == 4
    one = Store(tmp_path / "one")
    ingest_paths([_batch(tmp_path / "all" / "together", [*PLAIN, *NAMED])], one)
    two = Store(tmp_path / "two")
    order = (PLAIN, NAMED) if first_plain else (NAMED, PLAIN)
    reports = [
        ingest_paths([_batch(tmp_path / f"b{i}" / "together", files)], two)
        for i, files in enumerate(order)
    ]
    assert _points(two).equals(_points(one))
    # The run holds one point per load, and the second ingest added none.
    assert [r.accepted for r in reports] == [4, 0]
    pts = two.points(["together"]).sort(Col.CONC)
    assert pts.get_column(Col.CONC).to_list() == [16, 64, 128, 256]
    assert pts.get_column(Col.REPEATS).to_list() == [2, 2, 2, 2]
    # conc 16: the mean of 2152.19 and 2287.87 tok/s (each file's total_token_throughput)
    a, b = _tput(PLAIN[1]), _tput(NAMED[1])
    assert "conc16" in PLAIN[1].name and "conc16" in NAMED[1].name
    assert pts.row(0, named=True)[Col.TOTAL_TPUT] == pytest.approx((a + b) / 2, rel=1e-12)
    assert round(a, 2) == 2152.19 and round(b, 2) == 2287.87
    spread = pts.row(0, named=True)[Col.REPEAT_SPREAD]
    assert spread == pytest.approx(abs(a - b) / ((a + b) / 2), rel=1e-12)

    # Ingesting either half again changes nothing: each measurement is held already.
    again = ingest_paths([tmp_path / "b1" / "together"], two)
    assert again.accepted == 0 and again.duplicates == 4
    assert _points(two).equals(_points(one))

"""TCO calculator: fleets sized by hand from a real InferenceX run (Kimi-K2.5 INT4 on MI355X).

The fixture's two arms (tests/fixtures/inferencex/agg_fixed_seq), both TP8 (8 GPUs an instance):
1k1k: one point, 57.491425 tok/s/user at 55.626703 tok/s/GPU;
8k1k: (3.314949, 234.474626) and (4.341838, 157.121656).
MI355X in data/hardware.yaml: 2.65 kW/GPU, $1.48 (hyperscaler) / $1.90 (neocloud) per GPU-hour.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from analysis.cost import load_hardware, parse_hwcost
from analysis.tco import Target, fleet_table
from ingest.pipeline import ingest_paths
from ingest.store import Store

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "inferencex" / "agg_fixed_seq"


@pytest.fixture(scope="module")
def points(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    st = Store(tmp_path_factory.mktemp("tco"))
    ingest_paths([FIX], st, run_id="kimi")
    return st.points(["kimi"])


def _by_label(t: pl.DataFrame) -> dict[str, dict[str, object]]:
    return {r["arm_label"] + f" {r['intvty_hi']:.3g}": r for r in t.iter_rows(named=True)}


def test_fleet_below_every_front(points: pl.DataFrame) -> None:
    # 10,000 tok/s at 3 tok/s/user: both arms read at their slowest front point.
    t = fleet_table(points, Target(3.0, 10_000.0), load_hardware())
    assert t.height == 2
    first, second = t.row(0, named=True), t.row(1, named=True)
    # 8k1k: ceil(10000 / (234.474626 * 8)) = ceil(5.331) = 6 instances, 48 GPUs
    assert first["tput_per_gpu_at_target"] == pytest.approx(234.474626)
    assert (first["instances"], first["gpus"]) == (6, 48)
    assert first["usd_per_hour"] == pytest.approx(48 * 1.48)  # 71.04
    assert first["usd_per_year"] == pytest.approx(48 * 1.48 * 8760)
    assert first["power_kw"] == pytest.approx(48 * 2.65)  # 127.2
    assert first["usd_per_mtok"] == pytest.approx(71.04 / 36.0)  # 10000*3600/1e6 = 36 Mtok/h
    # 1k1k: ceil(10000 / (55.626703 * 8)) = ceil(22.471) = 23 instances, 184 GPUs
    assert (second["instances"], second["gpus"]) == (23, 184)
    assert second["usd_per_hour"] == pytest.approx(184 * 1.48)
    assert "slowest front point" in second["note"]


def test_unreachable_arm_last_with_reason(points: pl.DataFrame) -> None:
    t = fleet_table(points, Target(50.0, 10_000.0, "neocloud"), load_hardware())
    rows = t.to_dicts()
    assert rows[0]["gpus"] == 184 and rows[0]["usd_per_hour"] == pytest.approx(184 * 1.90)
    assert rows[1]["gpus"] is None
    assert rows[1]["note"] == "cannot reach 50 tok/s/user (its best is 4.342)"


def test_interpolated_between_front_points_and_override(points: pl.DataFrame) -> None:
    # two front points: PCHIP is the straight line between them
    x0, y0, x1, y1 = 3.314949, 234.474626, 4.341838, 157.121656
    y = y0 + (y1 - y0) * (4.0 - x0) / (x1 - x0)  # 182.875...
    over = parse_hwcost("mi355x:kw=3,hyperscaler=2")
    t = fleet_table(points, Target(4.0, 10_000.0), load_hardware(), over)
    row = t.filter(pl.col("intvty_hi") < 5).row(0, named=True)
    assert row["tput_per_gpu_at_target"] == pytest.approx(y)
    instances = -(-10_000 // (y * 8))  # ceil(6.835) = 7
    assert (row["instances"], row["gpus"]) == (int(instances), 56)
    assert (row["power_kw_per_gpu"], row["usd_per_gpu_hour"]) == (3.0, 2.0)
    assert row["usd_per_hour"] == pytest.approx(112.0) and row["power_kw"] == pytest.approx(168.0)


def test_unknown_hardware_says_so(points: pl.DataFrame) -> None:
    t = fleet_table(
        points.with_columns(pl.lit("tpu9").alias("hw")), Target(3.0, 1000.0), load_hardware()
    )
    assert t.get_column("usd_per_hour").null_count() == 2
    assert all("no power or hyperscaler cost figure for 'tpu9'" in n for n in t["note"])


def test_target_must_be_positive() -> None:
    with pytest.raises(ValueError, match="tput must be a positive number"):
        Target(3.0, 0.0)

"""What no file says: `paretolens ingest --set COLUMN=VALUE` and a paretolens.yaml beside the files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
from typer.testing import CliRunner

from ingest.contract.col import Col
from ingest.pipeline import ingest_paths
from ingest.store import Store
from paretolens.cli import app

ROOT = Path(__file__).resolve().parents[2]
# A real appended vLLM/SGLang request-rate sweep: no hardware, GPU count or model prefix in it.
SWEEP = ROOT / "tests/fixtures/wild/vllm_bench_serve/rate_sweep_framework/fce30a0/results.json"
# A real InferenceX aggregate: it says hw mi355x and tp 8 itself.
AGG = sorted((ROOT / "tests/fixtures/inferencex/agg_fixed_seq").glob("agg_*.json"))[0]


def _cli(*args: str) -> tuple[int, dict[str, object]]:
    res = CliRunner().invoke(app, ["ingest", *args, "--json"])
    return res.exit_code, (json.loads(res.stdout) if res.stdout.strip() else {})


def test_set_supplies_hardware_gpus_and_prefix(tmp_path: Path) -> None:
    store = tmp_path / "s"
    code, doc = _cli(
        str(SWEEP),
        "--run-id",
        "rate",
        "--store",
        str(store),
        "--set",
        "hw=h200",
        "--set",
        "num_gpus=4",
        "--set",
        "model_prefix=llama3-70b",
    )
    assert code == 0, doc
    pts = Store(store).points(["rate"])
    assert pts.height == 12
    assert set(pts.get_column(Col.HW)) == {"h200"}
    assert set(pts.get_column(Col.MODEL_PREFIX)) == {"llama3-70b"}
    # per-GPU throughput now computed: total / 4
    row = pts.filter(pts[Col.FRAMEWORK] == "sgl").sort(Col.REQUEST_RATE).row(0, named=True)
    assert row[Col.TPUT_PER_GPU] == row[Col.TOTAL_TPUT] / 4


def test_a_files_own_value_wins_over_set_with_a_warning(tmp_path: Path) -> None:
    st = Store(tmp_path)
    rep = ingest_paths(
        [AGG], st, run_id="r", defaults={"hw": "h200", "tp": "4"}, defaults_from="--set"
    )
    row = st.points(["r"]).row(0, named=True)
    assert (row[Col.HW], row[Col.TP]) == ("mi355x", 8)
    warnings = " ".join(row[Col.WARNINGS])
    assert "tp=8 from the file differs from tp=4 from --set; the file's value is kept" in warnings
    assert rep.notes


def test_a_bad_set_is_a_usage_error_before_anything_is_read(tmp_path: Path) -> None:
    for bad in ("hw", "not_a_column=1", "num_gpus=four"):
        res = CliRunner().invoke(
            app, ["ingest", str(SWEEP), "--store", str(tmp_path / "s"), "--set", bad]
        )
        assert res.exit_code == 2, (bad, res.output)
    assert not (tmp_path / "s" / "points").exists() or not any(
        (tmp_path / "s" / "points").iterdir()
    )


def test_paretolens_yaml_beside_the_files(tmp_path: Path) -> None:
    run = tmp_path / "sweep"
    (run / "a").mkdir(parents=True)
    (run / "b").mkdir()
    shutil.copy(SWEEP, run / "a" / "results.json")
    shutil.copy(SWEEP, run / "b" / "results.json")
    (run / "paretolens.yaml").write_text("hw: l40s\nnum_gpus: 4\n")
    (run / "b" / "paretolens.yaml").write_text("hw: h100\n")  # nearer: wins for b/
    st = Store(tmp_path / "s")
    rep = ingest_paths([run], st, run_id="y")
    pts = st.points(["y"])
    a = pts.filter(pl.col(Col.SOURCE_PATH).str.starts_with("a/"))
    b = pts.filter(pl.col(Col.SOURCE_PATH).str.starts_with("b/"))
    assert (set(a[Col.HW]), set(a[Col.NUM_GPUS])) == ({"l40s"}, {4})
    # the nearest file alone applies: b/paretolens.yaml says hw only, so no GPU count for b/
    assert (set(b[Col.HW]), set(b[Col.NUM_GPUS])) == ({"h100"}, {None})
    aux = {o.path for o in rep.auxiliary}
    assert {"paretolens.yaml", "b/paretolens.yaml"} <= aux
    # a bad one is rejected naming the key; the rest still ingests
    (run / "paretolens.yaml").write_text("gpus_total: 4\n")
    rep = ingest_paths([run], Store(tmp_path / "s2"), run_id="y")
    assert [(r.path, r.field) for r in rep.rejected] == [("paretolens.yaml", "gpus_total")]
    assert rep.accepted == 24

"""aiperf exports found in public repositories (tests/fixtures/wild/aiperf, PROVENANCE.md in each):
aiperf 0.10.0 (schema 1.3, `input_config.phases[]`) at a fixed concurrency and at a Poisson
request rate, read end to end through the pipeline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.pipeline import ingest_paths
from ingest.readers._aiperf_export import load_of
from ingest.store import Store

WILD = Path(__file__).resolve().parents[2] / "fixtures" / "wild" / "aiperf"
C16 = WILD / "qwen36-nvfp4_5090_chatbot_c16"
R08 = WILD / "qwen36-nvfp4_5090_chatbot_r0.8"


def _points(tmp_path: Path, root: Path, count: int) -> dict[str, dict[str, Any]]:
    """The points of the run directories under `root`, keyed by directory name."""
    st = Store(tmp_path / "store")
    rep = ingest_paths([root], st, run_id="wild")
    # PROVENANCE.md is ours, not a result: the only file the pipeline may refuse
    assert [r.path for r in rep.rejected if not r.path.endswith("PROVENANCE.md")] == []
    assert rep.accepted == count
    rows = st.points(["wild"]).sort(Col.SOURCE_PATH).iter_rows(named=True)
    return {Path(r[Col.SOURCE_PATH]).parent.name: r for r in rows}


def test_concurrency_and_request_rate_runs_of_aiperf_0_10(tmp_path: Path) -> None:
    pts = _points(tmp_path, WILD, 3)
    c16, r08 = pts[C16.name], pts[R08.name]
    # phases[profiling] = {"type": "concurrency", "concurrency": 16}
    assert (c16[Col.CONC], c16[Col.REQUEST_RATE]) == (16, None)
    # phases[profiling] = {"type": "poisson", "rate": 0.8}: a rate point, no conc
    assert (r08[Col.CONC], r08[Col.REQUEST_RATE]) == (None, 0.8)
    assert c16[Col.MODEL] == r08[Col.MODEL] == "qwen3.6-nvfp4"  # input_config.models.items[0]
    # output_token_throughput.avg and total_token_throughput.avg, tokens/sec as written
    assert (c16[Col.OUTPUT_TPUT], c16[Col.TOTAL_TPUT]) == (1040.1442436393677, 2961.781439682358)
    assert (r08[Col.OUTPUT_TPUT], r08[Col.TOTAL_TPUT]) == (175.87869652544535, 645.3399131165812)
    # time_to_first_token.p50 in ms: 120.50948349999999 / 1000 and 96.58306549999999 / 1000
    assert c16[Col.MEDIAN_TTFT] == pytest.approx(0.1205094835)
    assert r08[Col.MEDIAN_TTFT] == pytest.approx(0.0965830655)
    # median interactivity = 1 / p50 ITL = 1000 / 13.248111012987014 ms = 75.4825 tok/s/user,
    # which aiperf's own output_token_throughput_per_user.p50 (75.48245927436056) agrees with
    assert c16[Col.MEDIAN_INTVTY] == pytest.approx(1000 / 13.248111012987014)
    assert c16[Col.MEDIAN_INTVTY] == pytest.approx(75.48245927436056, rel=1e-6)
    assert c16[Col.MEDIAN_TPOT] == pytest.approx(0.013248111012987014)  # ITL is the TPOT
    assert r08[Col.MEDIAN_INTVTY] == pytest.approx(1000 / 5.296571639150943)  # = 188.80
    # request_count.avg = 96 with no error_request_count: 96 issued, 96 ok
    for p in (c16, r08):
        assert (p[Col.NUM_REQUESTS_SUCCESSFUL], p[Col.NUM_REQUESTS_TOTAL]) == (96, 96)
        assert p[Col.ERROR_RATE] == 0.0 and p[Col.SCHEMA_VARIANT] == "aiperf"
        assert p[Col.ISL] is None and p[Col.OSL] is None  # ShareGPT prompts: no nominal lengths
    # total_isl / benchmark_duration = 35259 / 18.34841669 (the export writes the total too)
    assert c16[Col.INPUT_TPUT] == pytest.approx(35259 / 18.34841669)
    assert c16[Col.DURATION] == 18.34841669


def test_what_has_no_column_is_kept_in_the_metadata(tmp_path: Path) -> None:
    r08 = _points(tmp_path, WILD, 3)[R08.name]
    meta = json.loads(r08[Col.METADATA])
    assert (meta["schema_version"], meta["aiperf_version"]) == ("1.3", "0.10.0")
    assert (meta["load_type"], meta["request_count"], meta["datasets"]) == (
        "poisson",
        96,
        ["sharegpt"],
    )
    assert "--request-rate 0.8" in meta["run_info"]["cli_command"]
    assert meta["tokenizer"] == "nvidia/Qwen3.6-35B-A3B-NVFP4"


def test_rate_with_a_concurrency_cap_is_a_rate_point_and_the_cap_is_kept(tmp_path: Path) -> None:
    doc = json.loads((R08 / "profile_export_aiperf.json").read_text())
    doc["input_config"]["phases"][1]["concurrency"] = 8
    run = tmp_path / "runs" / "capped_r0.8"
    run.mkdir(parents=True)
    (run / "profile_export_aiperf.json").write_text(json.dumps(doc))
    p = _points(tmp_path, run.parent, 1)["capped_r0.8"]
    assert (p[Col.CONC], p[Col.REQUEST_RATE]) == (None, 0.8)
    assert json.loads(p[Col.METADATA])["concurrency_cap"] == 8


@pytest.mark.parametrize(
    ("config", "load"),
    [
        ({"loadgen": {"concurrency": 100}}, (100, None)),  # aiperf <= 0.8
        ({"loadgen": {"request_rate": 12.5}}, (None, 12.5)),
        ({"loadgen": {"request_rate": 4, "concurrency": 32}}, (None, 4.0)),
        ({"phases": {"profiling": {"type": "constant", "rate": 2}}}, (None, 2.0)),
        ({"phases": [{"name": "warmup", "concurrency": 1}, {"concurrency": 64}]}, (64, None)),
        ({}, (None, None)),
    ],
)
def test_load_of_every_config_generation(
    config: dict[str, Any], load: tuple[int | None, float | None]
) -> None:
    assert load_of(config, "p.json") == load


@pytest.mark.parametrize("bad", [0, -1, "fast", True])
def test_a_bad_rate_names_its_field(bad: Any) -> None:
    with pytest.raises(ParseError) as err:
        load_of({"phases": [{"name": "profiling", "rate": bad}]}, "p.json")
    assert err.value.field == "input_config.phases.rate"


def test_the_whole_wild_tree_lands_with_a_load_on_every_point(tmp_path: Path) -> None:
    st = Store(tmp_path)
    ingest_paths([WILD], st, run_id="w")
    df = st.points(["w"])
    assert df.height == 3
    assert df.filter(pl.col(Col.CONC).is_null() & pl.col(Col.REQUEST_RATE).is_null()).height == 0


def test_a_pre_1_0_export_with_num_prompts_is_a_fixed_length_run(tmp_path: Path) -> None:
    # wellflat/k8s-dev: aiperf without schema_version; `conversation: {num_dataset_entries: 200}`
    # is what --num-prompts writes, not a multi-turn workload: ISL 200 / OSL 300 synthetic.
    row = _points(tmp_path, WILD, 3)["wellflat_k8s-dev_gpt-oss-20b_c1"]
    assert row[Col.SCENARIO] == "fixed-seq-len"
    assert (row[Col.ISL], row[Col.OSL], row[Col.CONC]) == (200, 300, 1)
    assert row[Col.NUM_REQUESTS_SUCCESSFUL] == 100

"""Cost and energy per token (analysis/cost.py) against hand computation on real fixture points.

Figures (data/hardware.yaml = InferenceX GPU_SPECS): P = all-in kW per GPU; $/GPU-h per class
    b200   P 2.17  hyperscaler 1.95  neocloud 2.34  rental3y 2.90
    mi355x P 2.65  hyperscaler 1.48  neocloud 1.90  rental3y 2.10
Formulas: tok/s/MW = T * 1000 / P; J/tok = P * 1000 / T; $/Mtok = $/GPU-h / (T * 3600 / 1e6).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from analysis.cost import (
    COST_COLUMNS,
    HARDWARE_FILE,
    HardwareFile,
    SpecOverride,
    axis_label,
    cost_columns,
    format_hwcost,
    load_hardware,
    parse_hwcost,
    with_costs,
)
from analysis.frontier.prune import analyze_points
from ingest.contract.col import Col
from ingest.contract.columns import COLUMNS
from ingest.contract.schema import SPECS, better, metric_columns
from ingest.pipeline import ingest_paths
from ingest.store import Store
from paretolens.cli import app
from tests.analysis.pointdata import FIXTURES

SPECS_FILE = load_hardware()
GPTOSS_DISAGG = FIXTURES / "inferencex/raw_bench_serving/gptoss120b_multinode"
approx = pytest.approx


def _rel(x: float) -> object:
    return approx(x, rel=1e-12)


@pytest.fixture(scope="module")
def disagg(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    """The gpt-oss-120b 8 prefill + 8 decode GPU sweep; its files name no hardware, so it is set
    as `paretolens ingest --set hw=b200` would."""
    store = Store(tmp_path_factory.mktemp("disagg"))
    report = ingest_paths([GPTOSS_DISAGG], store, run_id="disagg", defaults={"hw": "b200"})
    assert report.accepted == 8 and not report.rejected
    return store.points(["disagg"])


# ---- the data file ------------------------------------------------------------------------------


def test_hardware_file_holds_inferencex_gpu_specs() -> None:
    # packages/app/src/lib/constants.ts GPU_SPECS: power, costh, costn, costr
    inferencex = {
        "h100": (1.73, 1.3, 1.69, 1.3),
        "h200": (1.73, 1.41, 1.74, 1.6),
        "b200": (2.17, 1.95, 2.34, 2.9),
        "b300": (2.17, 2.34, 2.808, 3.48),
        "gb200": (2.1, 2.21, 2.75, 3.3),
        "gb300": (2.1, 2.652, 3.3, 3.96),
        "mi300x": (1.79, 1.12, 1.4, 1.55),
        "mi325x": (2.18, 1.28, 1.59, 1.8),
        "mi355x": (2.65, 1.48, 1.9, 2.1),
    }
    got = {
        hw: (s.power_kw, s.usd_per_gpu_hour.hyperscaler, s.usd_per_gpu_hour.neocloud,
             s.usd_per_gpu_hour.rental3y)
        for hw, s in SPECS_FILE.hardware.items()
    }  # fmt: skip
    assert got == inferencex
    src = SPECS_FILE.sources["inferencex_gpu_specs"]
    assert (src.repo, src.path) == (
        "SemiAnalysisAI/InferenceX-app",
        "packages/app/src/lib/constants.ts",
    )
    assert src.commit is not None and len(src.commit) == 40
    for spec in SPECS_FILE.hardware.values():  # every figure names a source that says where
        for ref in (spec.power_source, spec.cost_source):
            s = SPECS_FILE.sources[ref]
            assert s.url or s.commit


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["hardware"]["h100"].update(power_kw=0), "greater than 0"),
        (
            lambda d: d["hardware"]["h100"]["usd_per_gpu_hour"].update(neocloud=-1.0),
            "greater than 0",
        ),
        (lambda d: d["hardware"]["h100"].update(watts=700), "Extra inputs"),
        (lambda d: d["hardware"]["h100"].update(power_kw="1.7"), "valid number"),
        (lambda d: d["hardware"]["h100"].update(cost_source="nowhere"), "unknown source 'nowhere'"),
        (lambda d: d["hardware"].update({"H100-SXM": d["hardware"]["h100"]}), "not a canonical hw"),
        (lambda d: d["sources"]["inferencex_gpu_specs"].pop("commit"), "repo, commit and path"),
    ],
)
def test_hardware_file_is_validated(edit: Callable[[Any], None], message: str) -> None:
    doc = yaml.safe_load(HARDWARE_FILE.read_text())
    edit(doc)
    with pytest.raises(ValueError, match=message):
        HardwareFile.model_validate(doc)


def test_load_hardware_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "hw.yaml"
    bad.write_text("schema_version: 1\nsources: {}\nhardware: {h100: {power_kw: 1}}\n")
    with pytest.raises(ValueError, match=r"hw\.yaml"):
        load_hardware(bad)


# ---- the columns in the contract ------------------------------------------------------------


def test_cost_columns_are_in_the_contract_with_units_and_directions() -> None:
    cost = [s for s in COLUMNS if s.group == "cost"]
    assert [s.name for s in cost] == sorted(COST_COLUMNS, key=list(SPECS).index)
    assert len(cost) == 15
    units = {s.name: (s.unit, s.better) for s in cost}
    assert units[Col.TPUT_PER_MW] == ("tok/s/MW", "higher")
    assert units[Col.OUTPUT_TPUT_PER_MW] == ("tok/s/MW", "higher")
    assert units[Col.JOULES_PER_TOKEN_INPUT] == ("J/tok", "lower")
    assert units[Col.COST_PER_MTOK_NEOCLOUD] == ("$/Mtok", "lower")  # InferenceX: "(%)"
    assert better("cost_per_mtok_rental3y_output") == "lower"
    assert set(COST_COLUMNS) <= set(metric_columns())
    assert "neocloud-giant" in SPECS[Col.COST_PER_MTOK_NEOCLOUD].description
    assert "all-in provisioned" in SPECS[Col.JOULES_PER_TOKEN].description


def test_axis_labels_name_the_cost_class_and_power_figure() -> None:
    assert axis_label("cost_per_mtok_neocloud") == (
        "Cost per million total tokens (owning, neocloud-giant TCO $/GPU-h) ($/Mtok)"
    )
    assert axis_label("cost_per_mtok_rental3y_output", ["h200"]) == (
        "Cost per million output tokens (3-year rental $/GPU-h) [hwcost: h200] ($/Mtok)"
    )
    assert axis_label("input_tput_per_mw") == (
        "Input tok/s per all-in utility MW (all-in provisioned kW/GPU) (tok/s/MW)"
    )
    assert axis_label("joules_per_token") == (
        "All-in provisioned joules per total token (all-in provisioned kW/GPU) (J/tok)"
    )


# ---- hand computation -------------------------------------------------------------------------


def test_single_node_point_by_hand(points: Callable[..., pl.DataFrame]) -> None:
    # agg_kimik2.5_1k1k_int4_vllm_tp8-..._conc4_MI355-...json, an InferenceX aggregate (mi355x,
    # TP8, not disaggregated), publishes per GPU over its 8 GPUs:
    #   tput_per_gpu 55.62670336516291, input 27.948691873346146, output 27.678011491816765
    p = points("k25mtp").filter(pl.col("conc") == 4)
    assert p.height == 1 and p["hw"][0] == "mi355x" and p["num_gpus"][0] == 8
    r = cost_columns(p, SPECS_FILE).row(0, named=True)
    # tok/s/MW: 55.62670336516291 * 1000 / 2.65 = 20991.208817042607
    assert r["tput_per_mw"] == _rel(20991.208817042607)
    # 27.948691873346146 * 1000 / 2.65 = 10546.676178621188
    assert r["input_tput_per_mw"] == _rel(10546.676178621188)
    # 27.678011491816765 * 1000 / 2.65 = 10444.53263842142
    assert r["output_tput_per_mw"] == _rel(10444.53263842142)
    # J/tok: 2.65 * 1000 / 55.62670336516291 = 47.63899062297486
    assert r["joules_per_token"] == _rel(47.63899062297486)
    # 2650 / 27.948691873346146 = 94.81660222270466; 2650 / 27.678011491816765 = 95.74387237983099
    assert r["joules_per_token_input"] == _rel(94.81660222270466)
    assert r["joules_per_token_output"] == _rel(95.74387237983099)
    # Mtok/h = 55.62670336516291 * 3600 / 1e6 = 0.20025613211458648
    # $/Mtok: 1.48 / 0.200256... = 7.390535232914338; 1.90 / ... = 9.487849285498138;
    #         2.10 / ... = 10.486570262918995
    assert r["cost_per_mtok_hyperscaler"] == _rel(7.390535232914338)
    assert r["cost_per_mtok_neocloud"] == _rel(9.487849285498138)
    assert r["cost_per_mtok_rental3y"] == _rel(10.486570262918995)
    # input: 1.48 / (27.948691873346146 * 0.0036) = 14.709493845870325
    assert r["cost_per_mtok_hyperscaler_input"] == _rel(14.709493845870325)
    # output: 2.10 / (27.678011491816765 * 0.0036) = 21.07569517795022
    assert r["cost_per_mtok_rental3y_output"] == _rel(21.07569517795022)


def test_disaggregated_point_by_hand_counts_prefill_and_decode_gpus(disagg: pl.DataFrame) -> None:
    # concurrency_16_req_rate_inf_gpus_16_ctx_8_gen_8.json (vLLM benchmark_serving, 8 prefill +
    # 8 decode GPUs): total_token_throughput 3451.1624296487935, output_throughput
    # 1725.5812148243967, so input 1725.5812148243968 tok/s.
    p = disagg.filter(pl.col("conc") == 16)
    s = p.row(0, named=True)
    assert (s["num_prefill_gpu"], s["num_decode_gpu"], s["num_gpus"]) == (8, 8, 16)
    # ingest divides the total by prefill + decode GPUs: 3451.1624296487935 / 16 = 215.6976518530496
    assert s["tput_per_gpu"] == _rel(215.6976518530496)
    # ... but, as InferenceX publishes them, output per decode GPU (1725.58 / 8) and input per
    # prefill GPU: 215.6976518530496 each, twice the rate over all 16 GPUs.
    assert s["output_tput_per_gpu"] == _rel(215.6976518530496)
    assert s["input_tput_per_gpu"] == _rel(215.6976518530496)
    r = cost_columns(p, SPECS_FILE).row(0, named=True)
    # total, T = 215.6976518530496 (b200: P 2.17):
    #   tok/s/MW 215.6976518530496 * 1000 / 2.17 = 99399.83956361732
    #   J/tok    2170 / 215.6976518530496 = 10.060378410973044
    #   $/Mtok   1.95 / (215.6976518530496 * 0.0036) = 2.511231170173763 (hyperscaler),
    #            2.34 / ... = 3.0134774042085155 (neocloud), 2.90 / ... = 3.73465148384816 (rental)
    assert r["tput_per_mw"] == _rel(99399.83956361732)
    assert r["joules_per_token"] == _rel(10.060378410973044)
    assert r["cost_per_mtok_hyperscaler"] == _rel(2.511231170173763)
    assert r["cost_per_mtok_neocloud"] == _rel(3.0134774042085155)
    assert r["cost_per_mtok_rental3y"] == _rel(3.73465148384816)
    # output, T over all 16 GPUs = 1725.5812148243967 / 16 = 107.8488259265248 (not 215.70):
    #   tok/s/MW 107.8488259265248 * 1000 / 2.17 = 49699.91978180866
    #   J/tok    2170 / 107.8488259265248 = 20.120756821946088
    #   $/Mtok   1.95 / (107.8488259265248 * 0.0036) = 5.022462340347526
    #   (InferenceX, dividing by the 8 decode GPUs only, shows 2.511231170173763)
    assert r["output_tput_per_mw"] == _rel(49699.91978180866)
    assert r["joules_per_token_output"] == _rel(20.120756821946088)
    assert r["cost_per_mtok_hyperscaler_output"] == _rel(5.022462340347526)
    # input: 1725.5812148243968 / 16 = 107.8488259265248, the same figures
    assert r["input_tput_per_mw"] == _rel(49699.91978180866)
    assert r["cost_per_mtok_hyperscaler_input"] == _rel(5.022462340347526)


def test_an_override_replaces_only_the_figures_it_names(disagg: pl.DataFrame) -> None:
    p = disagg.filter(pl.col("conc") == 16)
    over = parse_hwcost("b200:kw=1.0,rental3y=4")
    r = cost_columns(p, SPECS_FILE, over).row(0, named=True)
    # tok/s/MW 215.6976518530496 * 1000 / 1.0 = 215697.65185304958; J/tok 1000 / 215.69... =
    # 4.636119083397716; rental 4 / (215.6976518530496 * 0.0036) = 5.151243425997462
    assert r["tput_per_mw"] == _rel(215697.65185304958)
    assert r["joules_per_token"] == _rel(4.636119083397716)
    assert r["cost_per_mtok_rental3y"] == _rel(5.151243425997462)
    assert r["cost_per_mtok_hyperscaler"] == _rel(2.511231170173763)  # the file's 1.95 kept


def test_missing_hardware_is_null_and_reported(points: Callable[..., pl.DataFrame]) -> None:
    base = points("k25mtp").sort("conc")
    frame = base.with_columns(
        pl.Series("hw", ["l40s", None, "mi355x_vllm"]),
        pl.Series("tput_per_gpu", [100.0, 100.0, 0.0]),
    )
    got = with_costs(frame, SPECS_FILE, {"gb300": SpecOverride(power_kw=1.0)})
    rows = got.frame.select(COST_COLUMNS).rows()
    assert all(v is None for v in rows[0])  # l40s: no figures -> null, never 0
    assert all(v is None for v in rows[1])  # no hw
    # mi355x_vllm resolves to mi355x (InferenceX's base rule); T = 0 -> null on the total columns,
    # the input/output columns still computed
    r = got.frame.row(2, named=True)
    assert r["tput_per_mw"] is None and r["cost_per_mtok_hyperscaler"] is None
    assert r["joules_per_token_output"] is not None
    assert got.missing == {"l40s": ("power_kw", "hyperscaler", "neocloud", "rental3y")}
    assert got.no_hardware == 1
    assert got.unused_overrides == ("gb300",)
    assert any("'l40s'" in n for n in got.notes())


def test_a_partial_override_for_unknown_hardware_fills_what_it_gives(
    points: Callable[..., pl.DataFrame],
) -> None:
    frame = points("k25mtp").with_columns(pl.lit("l40s").alias("hw"))
    got = with_costs(frame, SPECS_FILE, parse_hwcost("l40s:kw=0.5"))
    assert got.missing == {"l40s": ("hyperscaler", "neocloud", "rental3y")}
    assert got.frame["tput_per_mw"].null_count() == 0
    assert got.frame["cost_per_mtok_neocloud"].null_count() == 3


def test_points_without_the_columns_get_them_and_the_input_is_untouched() -> None:
    frame = pl.DataFrame({"hw": ["h200"], "tput_per_gpu": [1000.0]})
    out = cost_columns(frame, SPECS_FILE)
    assert frame.columns == ["hw", "tput_per_gpu"]
    assert out.columns == ["hw", "tput_per_gpu", *map(str, COST_COLUMNS)]
    # 1.41 / (1000 * 3600 / 1e6) = 1.41 / 3.6 = 0.39166666666666666; input/output unknown -> null
    assert out["cost_per_mtok_hyperscaler"][0] == _rel(1.41 / 3.6)
    assert out["cost_per_mtok_hyperscaler_output"][0] is None


def test_a_cost_axis_is_lower_is_better_in_the_analysis(disagg: pl.DataFrame) -> None:
    # On one hardware $/Mtok = C / (T * 0.0036) falls as T rises, so the frontier of cost (lower
    # better) vs interactivity is the frontier of tput_per_gpu (higher better).
    with_cost = cost_columns(disagg, SPECS_FILE)
    by_cost = analyze_points(with_cost, x="median_intvty", y="cost_per_mtok_hyperscaler")
    by_tput = analyze_points(with_cost, x="median_intvty", y="tput_per_gpu")
    verdicts = [by.table.sort("conc").select("conc", "verdict") for by in (by_cost, by_tput)]
    assert verdicts[0].equals(verdicts[1])
    assert by_cost.counts()["invalid"] == 0


# ---- properties -------------------------------------------------------------------------------

_pos = st.floats(1e-3, 1e6, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(t=_pos, kw=st.floats(0.05, 50), usd=st.floats(0.01, 100), klass=st.sampled_from(
    ["hyperscaler", "neocloud", "rental3y"]))  # fmt: skip
def test_cost_times_throughput_gives_back_the_gpu_hour(
    t: float, kw: float, usd: float, klass: str
) -> None:
    over = {"h200": SpecOverride.model_validate({"power_kw": kw, klass: usd})}
    r = cost_columns(pl.DataFrame({"hw": ["h200"], "tput_per_gpu": [t]}), SPECS_FILE, over).row(
        0, named=True
    )
    # $/Mtok * tok/s/gpu * 3600 / 1e6 == $/GPU-h; (tok/s/MW) * (J/tok) == 1e6 (W per MW)
    assert r[f"cost_per_mtok_{klass}"] * t * 3600 / 1e6 == approx(usd, rel=1e-12)
    assert r["tput_per_mw"] * r["joules_per_token"] == approx(1e6, rel=1e-12)
    assert r["tput_per_mw"] == approx(t * 1000 / kw, rel=1e-12)


_hw = st.from_regex(r"[a-z0-9][a-z0-9_.]{0,10}", fullmatch=True)
_fig = st.none() | st.floats(1e-6, 1e6, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_hw, st.tuples(_fig, _fig, _fig, _fig), max_size=4))
def test_hwcost_round_trips(raw: dict[str, tuple[float | None, ...]]) -> None:
    over = {
        hw: SpecOverride(power_kw=a, hyperscaler=b, neocloud=c, rental3y=d)
        for hw, (a, b, c, d) in raw.items()
        if any(v is not None for v in (a, b, c, d))
    }
    assert parse_hwcost(format_hwcost(over)) == over


# ---- the URL form ------------------------------------------------------------------------------


def test_parse_hwcost() -> None:
    got = parse_hwcost(" h200:kw=1.2,hyperscaler=2.5 ; B200:neocloud=3.1;b200:costr=.5; ")
    assert got == {
        "h200": SpecOverride(power_kw=1.2, hyperscaler=2.5),
        "b200": SpecOverride(neocloud=3.1, rental3y=0.5),
    }
    assert parse_hwcost("") == {}
    assert format_hwcost(got) == "b200:neocloud=3.1,rental3y=0.5;h200:kw=1.2,hyperscaler=2.5"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("h200", "part 'h200': expected HW:FIELD=VALUE"),
        ("h200:kw=1;b200", "part 'b200'"),
        ("h200:", "part 'h200:': no FIELD=VALUE"),
        ("h200:watts=700", "'watts=700' is not FIELD=VALUE"),
        ("h200:kw", "'kw' is not FIELD=VALUE"),
        ("h200:kw=0", r"kw must be a positive number \(kW per GPU\), got '0'"),
        ("h200:neocloud=-2", r"neocloud must be a positive number \(\$ per GPU-hour\)"),
        ("h200:kw=inf", "got 'inf'"),
        ("h200:kw=1e999", "got '1e999'"),
        ("h200:kw=1,kw=2", "kw of h200 given twice"),
        ("gb 200:kw=1", "part 'gb 200:kw=1'"),
        ("x" * 3000, "longer than"),
    ],
)
def test_parse_hwcost_names_the_bad_part(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_hwcost(text)


# ---- the CLI ------------------------------------------------------------------------------------


def test_points_costs_cli(store: Store) -> None:
    runner = CliRunner()
    args = ["points", "--run", "k25mtp", "--store", str(store.root)]
    res = runner.invoke(app, [*args, "--costs", "--format", "json"])
    assert res.exit_code == 0, res.output
    rows = pl.read_json(res.stdout.encode())
    c4 = rows.filter(pl.col("conc") == 4).row(0, named=True)
    assert c4["cost_per_mtok_hyperscaler"] == _rel(7.390535232914338)
    res = runner.invoke(app, [*args, "--hwcost", "mi355x:hyperscaler=2.96", "--format", "json"])
    c4 = pl.read_json(res.stdout.encode()).filter(pl.col("conc") == 4).row(0, named=True)
    assert c4["cost_per_mtok_hyperscaler"] == _rel(2 * 7.390535232914338)  # twice the $/GPU-h
    res = runner.invoke(app, [*args, "--costs"], env={"COLUMNS": "400"})
    assert res.exit_code == 0 and "cost_per_mtok_hyperscaler ($/Mtok)" in res.stdout
    assert "tput_per_mw (tok/s/MW)" in res.stdout and "joules_per_token (J/tok)" in res.stdout
    res = runner.invoke(app, [*args, "--hwcost", "mi355x:kw=-1"])
    assert res.exit_code == 2 and "kw must be a positive number" in res.stderr

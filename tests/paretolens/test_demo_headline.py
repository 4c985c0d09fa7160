"""What a newcomer's first run page shows on the seeded samples: the A/B deltas of a real MTP
vs no-MTP pair at equal concurrency, a ranking of the arms at x = 40 and, under the bundled master
config the page's link names, an exact `test-config` line; and the KV offload on/off pair at shared
loads and the AgentX master line beside it. Every figure is read by hand from the raw files in
data/samples (numbers copied from the JSON, the arithmetic written out)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from dash import html
from typer.testing import CliRunner

from dashboard.ids import Id
from dashboard.pages import run_tables
from ingest.store import Store
from paretolens.cli import app as cli
from paretolens.commands.common import sample_runs, seed_samples
from paretolens.commands.serve_cmds import sample_view
from tests.dashboard.tree import by_id as _by_id
from tests.dashboard.tree import text as _text
from views import urls
from views.source import DataSource

FIRST = "dsr1-fp8-b300-mtp"  # the run of `serve`'s printed link: DeepSeek-R1 FP8 B300 TP8 MTP A/B
KV = "dsr1-b200-multiturn"  # KV offload on vs off at the same loads
KIMI_TP4 = "29003473063"  # the AgentX TP4 sweep the bundled AMD master config holds
FIRST_QUERY = "at=40&tab=deltas&master=nvidia-master.yaml"
MTP = "TP8 EP1 | MTP | kv none"
NO_MTP = "TP8 EP1 | no spec | kv none"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store seeded as `paretolens demo` seeds it, with only the runs these tests read."""
    root = tmp_path_factory.mktemp("demo") / "store"
    seed_samples(Store(root), skip=set(sample_runs()) - {FIRST, KV, KIMI_TP4})
    return root


def _table(store: Path, name: str, run: str, query: str, fmt: str) -> str:
    result = CliRunner().invoke(
        cli, ["table", name, run, "--query", query, "--format", fmt, "--store", str(store)]
    )
    assert result.exit_code == 0, result.output
    return result.output


def _rows(store: Path, name: str, run: str, query: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(_table(store, name, run, query, "csv"))))


def test_serve_advertises_the_mtp_pair_with_its_exact_master(store: Path) -> None:
    view = sample_view(Store(store))
    assert view is not None
    # ab=spec_decoding is the page's default axis, so the link leaves it out.
    assert urls.run(view) == f"/inference?unofficialRun={FIRST}&{FIRST_QUERY}"
    assert view.ab == "spec_decoding"


# data/samples/dsr1-fp8-b300-mtp/benchmarks.json, "tput_per_gpu" of each element: no MTP (run
# 24559275898) and MTP (run 24562691419), by (isl, conc).
NO_MTP_TPUT = {
    (1024, 4): 103.98732762436595,
    (1024, 8): 164.07208643673215,
    (1024, 16): 256.1461364122729,
    (1024, 32): 372.07126505513855,
    (1024, 64): 496.3696010446879,
    (8192, 4): 273.0485608330788,
}
MTP_TPUT = {
    (1024, 4): 145.21642609801984,
    (1024, 8): 214.28541777715742,
    (1024, 16): 301.84441365811483,
    (1024, 32): 403.8331698119921,
    (1024, 64): 512.2868379108553,
    (8192, 4): 316.8389407361656,
}


def test_the_first_page_mtp_deltas_at_equal_load_come_from_the_raw_rows(store: Path) -> None:
    rows = _rows(store, "deltas", FIRST, FIRST_QUERY)
    assert [(r["baseline_arm_label"], r["treatment_arm_label"]) for r in rows] == [
        (NO_MTP, MTP)
    ] * 6
    got = {
        (int(r["isl (tokens)"]), int(r["conc (requests)"])): (
            float(r["tput_per_gpu_baseline (tok/s/GPU)"]),
            float(r["tput_per_gpu_treatment (tok/s/GPU)"]),
            float(r["tput_per_gpu_delta_pct (%)"]),
        )
        for r in rows
    }
    # Every load both configurations measured: 1k/1k conc 4-64 and 8k/1k conc 4.
    assert sorted(got) == sorted(NO_MTP_TPUT)
    for load, (base, treat, pct) in got.items():
        assert (base, treat) == (NO_MTP_TPUT[load], MTP_TPUT[load])
        assert pct == pytest.approx((treat - base) / base * 100)
    # By hand: (145.21642609801984 - 103.98732762436595) / 103.98732762436595 = +39.648 % at
    # 1k/1k conc 4; (512.2868379108553 - 496.3696010446879) / 496.3696010446879 = +3.207 % at
    # conc 64; (316.8389407361656 - 273.0485608330788) / 273.0485608330788 = +16.038 % at 8k/1k.
    assert round(got[(1024, 4)][2], 3) == 39.648
    assert round(got[(1024, 64)][2], 3) == 3.207
    assert round(got[(8192, 4)][2], 3) == 16.038
    # Same image, GPUs, TP and day: nothing but MTP differs, so no confound is listed.
    assert {r["confounds"] for r in rows} == {""}


def test_the_first_page_ranks_the_mtp_arms_at_x_40(store: Path) -> None:
    rows = _rows(store, "at", FIRST, FIRST_QUERY)
    ranked = [(r["arm_name"], r["y (tok/s/GPU)"], r["x_lo (tok/s/user)"], r["x_hi (tok/s/user)"])
              for r in rows]  # fmt: skip
    assert [name for name, *_ in ranked] == [
        f"1k/1k · {MTP}",
        f"1k/1k · {NO_MTP}",
        f"8k/1k · {MTP}",
        f"8k/1k · {NO_MTP}",
    ]
    y = [float(v) if v else None for _, v, _, _ in ranked]
    # Each frontier is read between the two measured points around 40 tok/s/user ("median_intvty"
    # of the raw rows): MTP 1k/1k between conc 64 (34.24, 512.29) and conc 32 (54.52, 403.83);
    # no MTP 1k/1k between conc 64 (32.77, 496.37) and conc 32 (49.31, 372.07); MTP 8k/1k between
    # conc 16 (25.56, 412.89) and conc 8 (46.93, 363.86).
    assert y[0] is not None and 403.8331698119921 < y[0] < 512.2868379108553
    assert y[1] is not None and 372.07126505513855 < y[1] < 496.3696010446879
    assert y[2] is not None and 363.86421674377857 < y[2] < 412.89183652999753
    assert y[0] > y[1]  # MTP gives more throughput per GPU at 40 tok/s/user
    # The 8k/1k no-MTP configuration was measured at conc 4 only (69.33 tok/s/user): no value.
    assert y[3] is None
    assert [(float(lo), float(hi)) for _, _, lo, hi in ranked] == [
        (34.23894636020666, 155.8323211383904),
        (32.77498756032911, 110.05752677423068),
        (6.692766876216727, 84.61437829542842),
        (69.33125026217071, 69.33125026217071),
    ]


def test_the_first_page_gives_the_exact_test_config_line(store: Path) -> None:
    assert sorted(p.name for p in (store / "master-configs").iterdir()) == [
        "amd-master.yaml",
        "nvidia-master.yaml",
    ]
    line = _table(store, "pruned", FIRST, FIRST_QUERY, "txt").strip()
    # Every no-MTP point is dominated by an MTP point (e.g. 1k/1k conc 64: 496.37 tok/s/GPU at
    # 32.77 tok/s/user against MTP's 512.29 at 34.24), so the pruned list keeps the MTP arms at
    # conc 4-64 in both sequence lengths; the master's key dsr1-fp8-b300-sglang-mtp holds
    # exactly those two entries (1k/1k and 8k/1k { tp: 8, ep: 1, spec-decoding: mtp }).
    assert line == (
        "test-config --config-keys dsr1-fp8-b300-sglang-mtp --conc 4 8 16 32 64 "
        "--config-files configs/nvidia-master.yaml --runner-config configs/runners.yaml"
    )
    # Under the AMD master (no such key) the page says why no line is exact.
    amd = _table(store, "pruned", FIRST, "master=amd-master.yaml", "txt")
    assert amd.startswith("# no single test-config line runs exactly the kept points")


def test_the_linked_page_pruned_tab_shows_the_line_as_runnable(store: Path) -> None:
    view = sample_view(Store(store))
    assert view is not None
    view = view.replace(tab="pruned")
    body = html.Div(run_tables.pruned_body(DataSource(Store(store)).run_data(view), view))
    assert "Run the full sweep on exactly these points" in _text(body)
    assert _text(_by_id(body, Id.PRUNED_CLI)[0]).startswith(
        "test-config --config-keys dsr1-fp8-b300-sglang-mtp --conc 4 8 16 32 64 "
    )


def test_the_kv_offload_deltas_at_equal_load_come_from_the_two_raw_files(store: Path) -> None:
    rows = _rows(store, "deltas", KV, "ab=kv_offloading")
    tp4 = {
        r["conc (requests)"]: r
        for r in rows
        if r["baseline_arm_label"] == "TP4 EP4 | no spec | kv none"
        and r["treatment_arm_label"] == "TP4 EP4 | no spec | kv dram"
    }
    # 2 users, TP4: agg_dsr1_tp4_users2_offloadoff_... "tput_per_gpu": 739.8461220656252 and
    # agg_dsr1_tp4_users2_offloadon_... "tput_per_gpu": 881.1206299848727.
    at2 = tp4["2"]
    assert float(at2["tput_per_gpu_baseline (tok/s/GPU)"]) == pytest.approx(739.8461220656252)
    assert float(at2["tput_per_gpu_treatment (tok/s/GPU)"]) == pytest.approx(881.1206299848727)
    expected = (881.1206299848727 - 739.8461220656252) / 739.8461220656252 * 100  # 19.0951...
    assert float(at2["tput_per_gpu_delta_pct (%)"]) == pytest.approx(expected)
    # Both TP4 arms have an agg_dsr1_tp4_users<N>_offload{off,on}_* file at each of 12 loads.
    assert sorted(map(int, tp4)) == [1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 128, 256]


def test_the_kv_offload_run_ranks_the_arms_at_x_40(store: Path) -> None:
    rows = _rows(store, "at", KV, "at=40")
    ranked = [(r["arm_label"], r["y (tok/s/GPU)"]) for r in rows]
    # KV offload to DRAM gives more throughput per GPU at 40 tok/s/user than none (TP4); the
    # TP8 arms' frontiers start above 95 tok/s/user, so they have no value at x = 40.
    assert [label for label, _ in ranked] == [
        "TP4 EP4 | no spec | kv dram",
        "TP4 EP4 | no spec | kv none",
        "TP8 EP8 | no spec | kv none",
        "TP8 EP8 | no spec | kv dram",
    ]
    assert float(ranked[0][1]) > float(ranked[1][1]) > 0
    assert ranked[2][1] == ranked[3][1] == ""
    assert all(float(r["x_lo (tok/s/user)"]) > 40 for r in rows[2:])


def test_demo_gives_the_store_the_master_config_of_a_runnable_test_config_line(
    store: Path,
) -> None:
    line = _table(store, "pruned", KIMI_TP4, "master=amd-master.yaml", "txt").strip()
    # The master's key kimik2.7-fp4-mi355x-vllm-agentic holds one entry, { tp: 4,
    # kv-offloading: none, conc-list: [1, 2, 4, 8] }; the pruned list keeps that arm's points at
    # c1, c4 and c8 (the bmk_agentic_*_kvnone_*_conc{1,4,8}_* files) and no DRAM point.
    assert line == (
        "test-config --config-keys kimik2.7-fp4-mi355x-vllm-agentic --conc 1 4 8 "
        "--config-files configs/amd-master.yaml --runner-config configs/runners.yaml"
    )
    # Without a master the page says why no line is exact, instead of a line that may fail.
    assert _table(store, "pruned", KIMI_TP4, "", "txt").startswith(
        "# no single test-config line runs exactly the kept points"
    )

"""What a newcomer's first run page shows on the seeded samples: the A/B deltas of a real KV
offload on/off pair at shared loads, a ranking of the arms at x = 40, and, under the bundled
master config, an exact `test-config` line. Every figure is read by hand from the raw files in
data/samples (numbers copied from the JSON, the arithmetic written out)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ingest.store import Store
from paretolens.cli import app as cli
from paretolens.commands.common import sample_runs, seed_samples
from paretolens.commands.serve_cmds import sample_view
from views import urls

FIRST = "dsr1-b200-multiturn"  # the run of the README's tour and of `serve`'s printed link
KIMI_TP4 = "29003473063"  # the AgentX TP4 sweep the bundled master config holds


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store seeded as `paretolens demo` seeds it, with only the two runs these tests read."""
    root = tmp_path_factory.mktemp("demo") / "store"
    seed_samples(Store(root), skip=set(sample_runs()) - {FIRST, KIMI_TP4})
    return root


def _table(store: Path, name: str, run: str, query: str, fmt: str) -> str:
    result = CliRunner().invoke(
        cli, ["table", name, run, "--query", query, "--format", fmt, "--store", str(store)]
    )
    assert result.exit_code == 0, result.output
    return result.output


def test_serve_advertises_the_kv_offload_pair_with_deltas_and_a_ranking(store: Path) -> None:
    view = sample_view(Store(store))
    assert view is not None
    assert urls.run(view) == (f"/inference?unofficialRun={FIRST}&at=40&ab=kv_offloading&tab=deltas")


def test_the_first_page_deltas_at_equal_load_come_from_the_two_raw_files(store: Path) -> None:
    rows = list(
        csv.DictReader(io.StringIO(_table(store, "deltas", FIRST, "ab=kv_offloading", "csv")))
    )
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


def test_the_first_page_ranks_the_arms_at_x_40(store: Path) -> None:
    rows = list(csv.DictReader(io.StringIO(_table(store, "at", FIRST, "at=40", "csv"))))
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
    assert sorted(p.name for p in (store / "master-configs").iterdir()) == ["amd-master.yaml"]
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

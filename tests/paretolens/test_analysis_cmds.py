"""The analysis commands end to end: store -> command -> table / JSON / CSV / YAML / markdown."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
import yaml
from typer.testing import CliRunner

from analysis.sweep.sweep_config import validate_sweep_config
from ingest.contract.col import Col
from ingest.store import Store
from paretolens.cli import app
from tests.analysis.pointdata import MASTER, frame, row

runner = CliRunner()


def _run(*args: str) -> tuple[int, str, str]:
    res = runner.invoke(app, list(args))
    return res.exit_code, res.stdout, res.stderr


def test_analyze_json_has_one_row_per_point(store: Store) -> None:
    code, out, _ = _run("analyze", "--run", "dsr1", "--format", "json", "--store", str(store.root))
    assert code == 0
    rows = json.loads(out)
    assert len(rows) == 44
    assert {"arm_id", "arm_label", "conc", "tp", "ep", "spec_decoding", "kv_offloading", "x", "y", "verdict",
            "on_arm_frontier", "reason", "dominated_by"} <= set(rows[0])  # fmt: skip
    c32 = next(
        r for r in rows if r["arm_label"] == "TP4 EP4 | no spec | kv dram" and r["conc"] == 32
    )
    assert (c32["verdict"], c32["dominated_by"]) == ("post_cliff", [])


def test_analyze_csv_and_table(store: Store) -> None:
    code, out, _ = _run("analyze", "--run", "kimi", "--format", "csv", "--store", str(store.root))
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 10 and rows[0]["verdict"] in {"frontier", "dominated"}
    code, out, _ = _run("analyze", "--run", "kimi", "--store", str(store.root))
    assert code == 0 and "frontier 3, dominated 7, post_cliff 0, invalid 0" in out
    header = next(line for line in out.splitlines() if "run_id" in line)
    assert [c.strip() for c in header.strip("┃ ").split("┃")] == [
        "run_id", "arm_label", "isl", "osl", "conc", "median_intvty", "tput_per_gpu", "verdict",
        "on_arm_frontier", "reason",
    ]  # fmt: skip


def test_prune_formats(store: Store, tmp_path: Path) -> None:
    root = str(store.root)
    code, out, _ = _run("prune", "--run", "kimi", "--arm-frontier", "--store", root)
    assert code == 0
    assert list(validate_sweep_config(yaml.safe_load(out)).root) == [
        "kimik2.7-fp4-mi355x-vllm-agentic"
    ]
    # Without the master config nobody can tell what else config key holds: refused, exit 1.
    code, out, err = _run("prune", "--run", "kimi", "--format", "cli", "--store", root)
    assert (code, out) == (1, "") and "without the master config" in err
    # The real amd-master.yaml has no kimik2.7 key: a line naming it would fail, so none is given.
    amd = str(MASTER.parent / "amd-master.yaml")
    code, out, err = _run(
        "prune", "--run", "kimi", "--format", "cli", "--master", amd, "--store", root
    )
    assert (code, out) == (1, "")
    assert "has no config key kimik2.7-fp4-mi355x-vllm-agentic" in " ".join(err.split())
    # A master whose key holds only the kept TP4 no-offload entry (the snippet prune wrote,
    # pasted in as the master): the line runs exactly the kept points, at conc 1 4 8.
    code, snippet, _ = _run("prune", "--run", "kimi", "--store", root)
    master = tmp_path / "amd-master.yaml"
    master.write_text(snippet)
    code, out, _ = _run(
        "prune", "--run", "kimi", "--format", "cli", "--master", str(master), "--store", root
    )
    assert code == 0
    assert out == ("test-config --config-keys kimik2.7-fp4-mi355x-vllm-agentic --conc 1 4 8 "
                   "--config-files configs/amd-master.yaml --runner-config configs/runners.yaml\n")  # fmt: skip
    code, out, _ = _run("prune", "--run", "kimi", "--format", "json", "--store", root)
    doc = json.loads(out)
    assert (len(doc["kept"]), len(doc["dropped"])) == (3, 7)
    # An arm that cannot be exported: listed first with what to set, and the exit code says so.
    code, out, err = _run("prune", "--run", "dsr1", "--store", root)
    assert (
        code == 1
        and out.startswith("# not exported: TP4 EP4 | no spec | kv dram")
        and "not exported" in err
        and "--set kv_offload_backend=" in err
    )


def test_deltas_json_fields(store: Store) -> None:
    code, out, _ = _run("deltas", "--run", "dsr1", "--axis", "kv_offloading", "--format", "json",
                        "--store", str(store.root))  # fmt: skip
    assert code == 0
    rows = json.loads(out)
    assert len(rows) == 21
    r = next(r for r in rows if r["tp"] == 4 and r["conc"] == 8)
    assert {"baseline_arm_id", "treatment_arm_id", "tput_per_gpu_baseline", "tput_per_gpu_treatment",
            "tput_per_gpu_delta_pct", "confounds"} <= set(r)  # fmt: skip
    assert round(r["tput_per_gpu_delta_pct"], 2) == 16.82
    code, out, _ = _run("deltas", "--run", "dsr1", "--axis", "kv_offloading", "--frontier", "--format",
                        "markdown", "--store", str(store.root))  # fmt: skip
    assert code == 0 and out.startswith("| baseline_arm_label | treatment_arm_label | x_lo |")


@pytest.fixture()
def two_runs(tmp_path: Path, points: Callable[..., pl.DataFrame]) -> Path:
    st = Store(tmp_path / "store")
    base = points("dsr1")
    pr = base.with_columns(pl.lit("pr").alias(Col.RUN_ID), ("pr-" + pl.col(Col.POINT_ID)).alias(Col.POINT_ID),
                           (pl.col(Col.TPUT_PER_GPU) * 1.05).alias(Col.TPUT_PER_GPU))  # fmt: skip
    bad = frame([row("mtp", conc=8, tp=8, tput_per_gpu=500.0, median_intvty=40.0, spec_decoding="mtp",
                     num_spec_tokens=3, synthetic_acceptance=True, synthetic_al=2.78, al_measured=1.9)])  # fmt: skip
    with st.lock():
        for run_id, df in (("dsr1", base), ("pr", pr), ("mtp", bad)):
            st.replace_run_rows(run_id, df, pl.DataFrame(), [])
            st.upsert_run({"run_id": run_id, "source": "local"})
    return st.root


def test_compare_markdown(two_runs: Path) -> None:
    code, out, _ = _run("compare", "dsr1", "pr", "--format", "markdown", "--store", str(two_runs))
    assert code == 0
    assert out.startswith("### paretolens compare: `dsr1` → `pr`")
    assert "| TP4 EP4 \\| no spec \\| kv dram | 32.25–109.42 | +5.0% |" in out
    code, out, _ = _run("compare", "dsr1", "pr", "--format", "json", "--store", str(two_runs))
    assert code == 0 and len(json.loads(out)["arms"]) == 4


def test_al_check_exit_codes(store: Store, two_runs: Path) -> None:
    code, out, _ = _run(
        "al-check", "--run", "k25mtp", "--format", "json", "--store", str(store.root)
    )
    assert code == 0 and {r["verdict"] for r in json.loads(out)} == {"not_measured"}
    # pinned 2.78, measured 1.9: |delta| 0.88 > 3 x 0.05 -> fail -> exit 1
    code, out, _ = _run("al-check", "--run", "mtp", "--format", "json", "--store", str(two_runs))
    assert code == 1 and json.loads(out)[0]["verdict"] == "fail"
    code, out, _ = _run(
        "al-check",
        "--run",
        "mtp",
        "--tolerance",
        "1.0",
        "--format",
        "json",
        "--store",
        str(two_runs),
    )
    assert code == 0 and json.loads(out)[0]["tolerance"] == 1.0


def test_caller_mistakes_exit_2(store: Store) -> None:
    code, _, err = _run("analyze", "--run", "nope", "--store", str(store.root))
    assert code == 2 and "run(s) nope have no points" in err
    code, _, err = _run("analyze", "--run", "dsr1", "--x", "conc", "--store", str(store.root))
    assert code == 2 and "'conc' is not a metric" in err
    code, _, err = _run("deltas", "--run", "dsr1", "--axis", "image", "--store", str(store.root))
    assert code == 2 and "not an arm-identity field" in err
    code, _, err = _run("analyze", "--store", str(store.root))
    assert code == 2 and "--run" in err


def test_run_ids_can_be_given_as_arguments(store: Store) -> None:
    root = str(store.root)
    by_option = _run("analyze", "--run", "dsr1", "--format", "json", "--store", root)
    by_argument = _run("analyze", "dsr1", "--format", "json", "--store", root)
    assert by_argument == by_option and len(json.loads(by_argument[1])) == 44
    # both ways at once, and a repeat: each run read once (44 + 10 points, none doubled)
    code, out, _ = _run(
        "analyze", "dsr1", "kimi", "--run", "dsr1", "--format", "json", "--store", root
    )
    assert code == 0 and len(json.loads(out)) == 54
    assert _run("prune", "kimi", "--format", "json", "--store", root) == _run(
        "prune", "--run", "kimi", "--format", "json", "--store", root
    )
    code, out, _ = _run(
        "deltas", "dsr1", "--axis", "kv_offloading", "--format", "json", "--store", root
    )
    assert code == 0 and len(json.loads(out)) == 21

"""A whole `gh run download` gives the same points however it is passed.

The tree is the real Kimi-K2.7 TP4 sweep of run 29003473063: five `bmk_agentic_*` aggregates
(conc 1, 4, 8, 16, 32), its `changelog-metadata` and the raw `agentic_*` trees (aiperf exports, server-metric export, command
files) of conc 1 and 16, laid out as `gh run download` writes them (data/samples/29003473063).
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import polars as pl
import pytest

from ingest.pipeline import ingest_paths
from ingest.sources.artifacts import collect, collect_all
from ingest.store import Store

FIX = Path(__file__).resolve().parents[1] / "fixtures"
RAW = FIX / "aiperf" / "inferencex_kimik2.7_tp4_sweep_29003473063"
AGG = FIX / "inferencex" / "agentic_agg" / "kimik2.7_tp4_sweep_29003473063"
RUN = "29003473063"
_AIPERF_FILES = (
    "profile_export_aiperf.json",
    "profile_export_aiperf.csv",
    "server_metrics_export.csv",
)
CONC16 = "kimik2.7_tp4_conc16_kvdram-lmcache_fp4_vllm_tp4-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc16_mi355x-amds_04"


def _run_tree(parent: Path) -> Path:
    run = parent / RUN
    for agg in sorted(AGG.glob("kimik2.7_*.json")):
        d = run / f"bmk_agentic_{agg.stem}"
        d.mkdir(parents=True)
        shutil.copyfile(agg, d / agg.name)
    (run / "changelog-metadata").mkdir()
    shutil.copyfile(
        AGG / "changelog_metadata.json", run / "changelog-metadata/changelog_metadata.json"
    )
    for raw in sorted(p for p in RAW.iterdir() if p.is_dir()):
        d = run / raw.name
        (d / "aiperf_artifacts").mkdir(parents=True)
        for f in raw.iterdir():
            sub = "aiperf_artifacts/" if f.name in _AIPERF_FILES else ""
            shutil.copyfile(f, d / f"{sub}{f.name}")
    return run


def _points(paths: list[Path], store_dir: Path) -> pl.DataFrame:
    store = Store(store_dir)
    report = ingest_paths(paths, store, run_id=RUN)
    assert report.runs == [RUN]
    return (
        store.scan_points([RUN])
        .select("point_id", "conc", "tput_per_gpu", "schema_variant", "source_path")
        .collect()
        .sort("conc")
    )


def _zip_of(run: Path, target: Path) -> Path:
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for p in sorted(run.rglob("*")):
            if p.is_file():
                zf.write(p, p.relative_to(run.parent).as_posix())
    return target


@pytest.fixture
def by_dir(tmp_path: Path) -> pl.DataFrame:
    return _points([_run_tree(tmp_path / "a")], tmp_path / "s")


def test_the_run_directory_gives_one_joined_point_per_aggregate(by_dir: pl.DataFrame) -> None:
    # Five aggregates; the conc 1 and 16 raw trees join their aggregates instead of adding points.
    assert by_dir.get_column("conc").to_list() == [1, 4, 8, 16, 32]
    assert by_dir.get_column("tput_per_gpu").to_list() == [
        1350.20976,
        3099.21014,
        5299.71326,
        4063.0395,
        4328.22715,
    ]
    assert set(by_dir.get_column("schema_variant")) == {"agentic_v3"}


def test_parent_and_zip_give_the_identical_points(tmp_path: Path, by_dir: pl.DataFrame) -> None:
    parent = _run_tree(tmp_path / "p").parent
    assert _points([parent], tmp_path / "s1").equals(by_dir)
    zipped = _zip_of(_run_tree(tmp_path / "z"), tmp_path / f"{RUN}.zip")
    assert _points([zipped], tmp_path / "s2").equals(by_dir)


def test_children_collect_to_the_same_files_as_the_run_directory(tmp_path: Path) -> None:
    run = _run_tree(tmp_path / "c")
    (tmp_path / "w1").mkdir()
    (tmp_path / "w2").mkdir()
    whole = collect(run, tmp_path / "w1")
    parts = collect_all(sorted(run.iterdir()), tmp_path / "w2")
    assert [rid for rid, _ in parts] == [RUN]  # each artifact belongs to its directory's run
    files = sorted((u.name, f.rel) for u in parts[0][1].units for f in u.files)
    assert files == sorted((u.name, f.rel) for u in whole.units for f in u.files)


def test_children_as_separate_arguments_give_the_identical_points(
    tmp_path: Path, by_dir: pl.DataFrame
) -> None:
    run = _run_tree(tmp_path / "k")
    assert _points(sorted(run.iterdir()), tmp_path / "s").equals(by_dir)


@pytest.mark.parametrize("damage", ["delete", "corrupt"])
def test_the_raw_tree_still_gives_its_point_without_a_readable_aggregate(
    tmp_path: Path, damage: str
) -> None:
    run = _run_tree(tmp_path / "d")
    agg = run / f"bmk_agentic_{CONC16}"
    if damage == "delete":
        shutil.rmtree(agg)
    else:
        (agg / f"{CONC16}.json").write_text('{"hw": "mi355x", "conc": 16,')
    pts = _points([run], tmp_path / "s")
    assert pts.get_column("conc").to_list() == [1, 4, 8, 16, 32]
    raw = pts.filter(pl.col("conc") == 16).row(0, named=True)
    # From agentic_<CONC16>/aiperf_artifacts/profile_export_aiperf.json alone:
    #   conc = input_config.loadgen.concurrency = 16
    #   tput_per_gpu = total_token_throughput.avg / GPUs = 16192.562766868063 tok/s / 4 (tp4,
    #   from vllm_command.txt --tensor-parallel-size 4) = 4048.140691717016
    assert raw["schema_variant"] == "aiperf"
    assert raw["tput_per_gpu"] == pytest.approx(16192.562766868063 / 4)
    assert raw["source_path"].startswith(f"agentic_{CONC16}/aiperf_artifacts/")


def test_two_downloads_of_results_bmk_are_kept_unless_byte_identical(tmp_path: Path) -> None:
    src = (
        Path(__file__).resolve().parents[1]
        / "fixtures/wild/inferencex/rocm_team_results_bmk_download/results_bmk (7)"
    )
    same, other = tmp_path / "same", tmp_path / "other"
    for d in (same, other):
        shutil.copytree(src, d / "results_bmk (7)")
        shutil.copytree(src, d / "results_bmk (8)")
    # the same download twice: one point set, the copy named as superseded
    rep = ingest_paths([same], Store(tmp_path / "s1"), run_id="r")
    assert rep.accepted == 1 and [i.path for i in rep.ignored] == ["results_bmk (8)"]
    # two different runs' downloads side by side: both kept (never one dropped as a "retry")
    doc = json.loads((other / "results_bmk (8)" / "agg_bmk.json").read_text())
    doc[0]["conc"] = 32
    (other / "results_bmk (8)" / "agg_bmk.json").write_text(json.dumps(doc))
    rep = ingest_paths([other], Store(tmp_path / "s2"), run_id="r")
    assert rep.accepted == 2 and rep.ignored == []

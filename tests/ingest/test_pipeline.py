"""The ingest pipeline end to end on real aggregates: idempotency, replacement, bad inputs that are
rejected with their reason while the rest of the batch is stored and stored data stays untouched,
and two concurrent ingests."""

from __future__ import annotations

import json
import multiprocessing as mp
import shutil
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from ingest.contract.col import Col
from ingest.contract.schema import RunCol
from ingest.pipeline import ingest_paths
from ingest.store import Store
from paretolens.cli import app

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "inferencex"
AGG = sorted((FIX / "agg_fixed_seq").glob("agg_*.json"))
C4 = next(p for p in AGG if "conc4_" in p.name)


def _run_dir(tmp: Path) -> Path:
    d = tmp / "run"
    d.mkdir()
    for p in AGG:
        shutil.copy(p, d / p.name)
    return d


def _doc() -> dict[str, object]:
    doc = json.loads(C4.read_text())
    assert isinstance(doc, dict)
    return doc


def test_real_aggregates_land_with_their_published_values(tmp_path: Path) -> None:
    st = Store(tmp_path / "s")
    rep = ingest_paths([_run_dir(tmp_path)], st, run_id="r")
    assert (rep.runs, rep.accepted, rep.duplicates, rep.rejected) == (["r"], 3, 0, [])
    row = st.points(["r"]).filter(pl.col(Col.CONC) == 4).row(0, named=True)
    # process_result.py wrote these; the canonical row keeps them (seconds, tok/s/user).
    assert row[Col.TPUT_PER_GPU] == pytest.approx(55.62670336516291)
    assert row[Col.MEDIAN_INTVTY] == pytest.approx(57.49142521935413)
    assert row[Col.MEDIAN_TPOT] == pytest.approx(0.017393898241078155)
    assert row[Col.P999_TTFT] == pytest.approx(0.6591278487213433)
    assert row[Col.HW] == "mi355x" and row[Col.NUM_GPUS] == 8 and row[Col.DP_ATTENTION] is False
    assert row[Col.ARM_LABEL] == "TP8 EP1 | MTP | kv none"
    assert st.runs().row(0, named=True)[RunCol.POINT_COUNT] == 3


def test_same_inputs_twice_add_nothing_and_a_changed_file_replaces_its_rows(tmp_path: Path) -> None:
    st = Store(tmp_path / "s")
    run = _run_dir(tmp_path)
    ingest_paths([run], st, run_id="r")
    again = ingest_paths([run], st, run_id="r")
    assert (again.accepted, again.duplicates) == (0, 3)
    assert st.points(["r"]).height == 3
    doc = _doc()
    doc["tput_per_gpu"] = 60.0
    (run / C4.name).write_text(json.dumps(doc))
    changed = ingest_paths([run], st, run_id="r")
    assert (changed.accepted, changed.duplicates) == (1, 2)
    df = st.points(["r"])
    assert df.height == 3
    assert df.filter(pl.col(Col.CONC) == 4).get_column(Col.TPUT_PER_GPU).to_list() == [60.0]


BAD: dict[str, tuple[bytes, str, str]] = {
    # name: (bytes, expected field, expected reason fragment)
    "truncated.json": (C4.read_bytes()[:200], "", "invalid JSON"),
    "latin1.json": (b'{"hw": "h\xe9"}', "", "not UTF-8"),
    "nan.json": (
        C4.read_text().replace('"tput_per_gpu": 55.62670336516291', '"tput_per_gpu": NaN').encode(),
        "",
        "NaN",
    ),
    "dupkey.json": (b'{"conc": 4, "conc": 8}', "", "duplicate key 'conc'"),
    "unknown.json": (b'{"hello": "world"}', "", "unrecognised JSON document"),
    "notes.bin": (b"\x00\x01\x02binary", "", "unrecognised file"),
}


def _mutated(**changes: object) -> bytes:
    doc = _doc()
    doc.update(changes)
    return json.dumps(doc).encode()


BAD_ROWS: dict[str, tuple[bytes, str, str]] = {
    "zero_tput.json": (_mutated(tput_per_gpu=0.0, conc=5), "tput_per_gpu", "positive throughput"),
    "neg_tput.json": (_mutated(tput_per_gpu=-3.0, conc=6), "tput_per_gpu", "positive throughput"),
    "zero_tpot.json": (_mutated(median_tpot=0.0, conc=7), "median_tpot", "positive TPOT"),
    "wrong_type.json": (_mutated(tp="eight", conc=9), "tp", "integer"),
}


def test_bad_inputs_are_rejected_with_reasons_and_nothing_else_changes(tmp_path: Path) -> None:
    st = Store(tmp_path / "s")
    ingest_paths([_run_dir(tmp_path)], st, run_id="r")
    before = st.points(["r"]).sort(Col.POINT_ID)
    bad = tmp_path / "bad"
    bad.mkdir()
    for name, (data, _f, _r) in {**BAD, **BAD_ROWS}.items():
        (bad / name).write_bytes(data)
    shutil.copy(C4, bad / "good_copy.json")
    rep = ingest_paths([bad], st, run_id="r")
    got = {r.path: r for r in rep.rejected}
    assert sorted(got) == sorted({**BAD, **BAD_ROWS})
    for name, (_d, fld, why) in {**BAD, **BAD_ROWS}.items():
        assert got[name].field == fld, name
        assert why in got[name].reason, (name, got[name].reason)
    # The good copy is byte-identical to a stored file: a duplicate, not a new point.
    assert (rep.accepted, rep.duplicates) == (0, 1)
    assert st.points(["r"]).sort(Col.POINT_ID).equals(before)
    stored = st.rejects(["r"])
    assert stored.height == len(BAD) + len(BAD_ROWS)


def test_a_stored_file_that_turns_bad_keeps_its_old_rows(tmp_path: Path) -> None:
    st = Store(tmp_path / "s")
    run = _run_dir(tmp_path)
    ingest_paths([run], st, run_id="r")
    (run / C4.name).write_bytes(C4.read_bytes()[:100])
    rep = ingest_paths([run], st, run_id="r")
    assert [r.path for r in rep.rejected] == [C4.name]
    assert st.points(["r"]).height == 3


def _ingest_proc(store: str, paths: list[str]) -> None:
    ingest_paths([Path(p) for p in paths], Store(store), run_id="r")


def test_two_concurrent_ingests_of_overlapping_inputs_leave_their_union(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    for p in AGG[:2]:
        shutil.copy(p, a / p.name)
    for p in AGG[1:]:
        shutil.copy(p, b / p.name)
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_ingest_proc, args=(str(tmp_path / "s"), [str(d)])) for d in (a, b)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    df = Store(tmp_path / "s").points(["r"])
    assert sorted(df.get_column(Col.CONC).to_list()) == [4, 32, 64]


def test_cli_ingest_json_and_exit_codes(tmp_path: Path) -> None:
    run = _run_dir(tmp_path)
    store = str(tmp_path / "s")
    ok = CliRunner().invoke(app, ["ingest", str(run), "--run-id", "r", "--store", store, "--json"])
    assert ok.exit_code == 0, ok.output
    first = json.loads(ok.stdout)
    assert {k: first[k] for k in ("runs", "accepted", "duplicates", "rejected", "ignored")} == {
        "runs": ["r"],
        "accepted": 3,
        "duplicates": 0,
        "rejected": [],
        "ignored": [],
    }
    assert sorted(f["path"] for f in first["accepted_files"]) == sorted(p.name for p in AGG)
    assert all(len(f["points"]) == 1 for f in first["accepted_files"])
    assert first["duplicate_files"] == [] and first["auxiliary"] == []
    (run / "broken.json").write_text("{")
    some = CliRunner().invoke(
        app, ["ingest", str(run), "--run-id", "r", "--store", store, "--json"]
    )
    assert some.exit_code == 1
    doc = json.loads(some.stdout)
    assert doc["accepted"] == 0 and doc["duplicates"] == 3
    assert doc["accepted_files"] == []
    assert sorted(f["path"] for f in doc["duplicate_files"]) == sorted(p.name for p in AGG)
    assert doc["rejected"][0]["path"] == "broken.json"
    assert doc["rejected"][0]["reason"].startswith("invalid JSON")
    usage = CliRunner().invoke(app, ["ingest", str(tmp_path / "nope"), "--store", store])
    assert usage.exit_code == 2
    pts = CliRunner().invoke(app, ["points", "--run", "r", "--store", store, "--format", "json"])
    rows = json.loads(pts.stdout)
    assert len(rows) == 3 and set(rows[0]) >= {
        "tput_per_gpu",
        "median_intvty",
        "p99_ttft",
        "conc",
        "tp",
        "ep",
        "spec_decoding",
    }
    runs = json.loads(CliRunner().invoke(app, ["runs", "--store", store, "--json"]).stdout)
    assert runs[0]["run_id"] == "r" and runs[0]["point_count"] == 3 and runs[0]["reject_count"] == 1


def test_cli_runs_table_keeps_long_run_ids_whole(tmp_path: Path) -> None:
    # CliRunner's output is not a terminal: rich lays the table out in 80 columns, where the
    # title and branch columns squeeze; the run id a user copies into --run must stay whole.
    run_id = "minimax-m2.5-tep8-vs-dep8-isl1k-32k-sweep"
    store = str(tmp_path / "s")
    ok = CliRunner().invoke(
        app, ["ingest", str(_run_dir(tmp_path)), "--run-id", run_id, "--store", store]
    )
    assert ok.exit_code == 0, ok.output
    table = CliRunner().invoke(app, ["runs", "--store", store]).stdout
    assert max(len(line) for line in table.splitlines()) <= 80
    assert run_id in table

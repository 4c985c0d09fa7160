"""The hostile corpus (tests/reliability/hostile/, made by make_hostile.py): each file is rejected
with its reason (or stored exactly, for the few that are valid), stored data is never lost, zip
extraction never leaves its target, and one bad file never sinks a batch."""

from __future__ import annotations

import io
import json
import os
import shutil
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from ingest.contract.col import Col
from ingest.contract.schema import RejectCol
from ingest.errors import ParseError, SchemaError, UnsafeArchiveError
from ingest.normalize.row import normalize
from ingest.pipeline import ingest_paths
from ingest.readers.base import SourceFile
from ingest.readers.registry import file_readers
from ingest.reading import parse_json
from ingest.report import IngestReport, Reject
from ingest.run_ids import InvalidRunId
from ingest.sources import artifacts, zips
from ingest.sources.zips import safe_extract
from ingest.store import Store
from tests.reliability import figures, make_hostile
from tests.reliability._support import FIXTURES, HOSTILE, copy_store, snapshot

MANIFEST: dict[str, dict[str, Any]] = json.loads((HOSTILE / "MANIFEST.json").read_text())
NAMES = sorted(MANIFEST)
ZIPS = [n for n in NAMES if n.endswith(".zip")]
AGG = sorted((FIXTURES / "inferencex" / "agg_fixed_seq").glob("*.json"))
SLIP_TARGETS = [Path("/tmp/paretolens_hostile_zip_slip_absolute.json")]


def test_the_corpus_is_what_make_hostile_writes() -> None:
    made = make_hostile.corpus()
    on_disk = sorted(p.name for p in HOSTILE.iterdir() if p.name != "MANIFEST.json")
    assert on_disk == sorted(made), "run: uv run python -m tests.reliability.make_hostile"
    for name, (data, expect) in made.items():
        assert (HOSTILE / name).read_bytes() == data, name
        assert MANIFEST[name] == expect, name
    assert len(made) >= 50
    figures.put("hostile", "files", len(made))
    figures.put("hostile", "zips", len(ZIPS))


@pytest.fixture(scope="module")
def base_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile-base") / "store"
    ingest_paths(AGG, Store(root), run_id="base")
    return root


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A tmp dir that ingest's own temporary work directories are made in."""
    work = tmp_path / "tmp"
    work.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(work))
    yield tmp_path
    for target in SLIP_TARGETS:
        assert not target.exists(), f"zip slip wrote {target}"


def _mine(r: Reject, name: str) -> bool:
    return r.path == name or r.path.startswith((f"{name}/", f"{name}#"))


def _check(name: str, rep: IngestReport, rows: pl.DataFrame, *, alone: bool = True) -> None:
    expect = MANIFEST[name]
    outcome, why = expect["outcome"], expect.get("reason", "").lower()
    mine = [r for r in rep.rejected if _mine(r, name)]
    reasons = " | ".join(f"{r.field}: {r.reason}" for r in mine)
    assert all(r.reason.strip() for r in rep.rejected), rep.rejected
    if outcome == "rejected":
        assert rows.height == 0, f"{name}: stored {rows.height} rows"
        assert mine, f"{name}: not rejected"
        assert any(why in r.reason.lower() for r in mine), f"{name}: {reasons}"
        if "field" in expect:
            assert any(r.field == expect["field"] for r in mine), f"{name}: {reasons}"
    elif outcome == "partial":
        assert rows.height > 0 and mine, f"{name}: {rows.height} rows, {reasons}"
        assert any(why in r.reason.lower() for r in mine), f"{name}: {reasons}"
    elif outcome == "accepted":
        assert rows.height > 0 and not mine, f"{name}: {reasons}"
        for col, value in expect.get("literal", {}).items():
            assert rows.get_column(col).to_list() == [value] * rows.height, col
        for col, n in expect.get("length", {}).items():
            assert rows.get_column(col).str.len_chars().to_list() == [n] * rows.height
    elif outcome == "no_rows":
        ignored = [i for i in rep.ignored if i.path.startswith(name)]
        assert rows.height == 0, name
        # In a batch, raw metrics may instead enrich the batch's aggregates (unreported).
        assert mine or ignored or not alone, f"{name}: not reported"
    else:
        assert outcome == "nothing" and rows.height == 0, name
    figures.add("hostile", f"outcome_{outcome}")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", NAMES)
def test_each_hostile_file_is_handled_and_nothing_stored_is_lost(
    name: str, base_store: Path, sandbox: Path
) -> None:
    store = copy_store(base_store, sandbox / "store")
    before = snapshot(store)
    rep = ingest_paths([HOSTILE / name], store, run_id="hostile")
    after = snapshot(store)
    _check(name, rep, after.run_points("hostile"))
    assert after.run_points("base").equals(before.run_points("base"))
    figures.add("hostile", "base_rows_checked", before.run_points("base").height)
    stored = after.rejects.filter(
        (pl.col(RejectCol.RUN_ID) == "hostile") & (pl.col(RejectCol.OUTCOME) == "rejected")
    )
    assert stored.height == len({(r.path, r.field, r.reason) for r in rep.rejected})
    # ingest's work directory is gone and nothing escaped into the sandbox around it.
    assert list((sandbox / "tmp").iterdir()) == []
    assert not [p for p in sandbox.rglob("*evil*")], "a zip-slip member was written"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", ZIPS)
def test_zip_extraction_stays_inside_its_target(name: str, tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "target"
    target.mkdir(parents=True)
    try:
        safe_extract(HOSTILE / name, target)
    except UnsafeArchiveError as exc:
        assert str(exc)
        figures.add("hostile", "zips_refused")
    for p in tmp_path.rglob("*"):
        assert p == target or target in p.parents or p in target.parents, f"{p} outside target"
        assert not p.is_symlink(), f"{p} is a symlink"
    for slip in SLIP_TARGETS:
        assert not slip.exists()
    figures.add("hostile", "zips_contained")


def _contract(src: SourceFile) -> None:
    try:
        doc = parse_json(src)
    except ParseError:
        return
    for reader in file_readers():
        if not reader.sniff(src, doc):
            continue
        try:
            res = reader.read(src, doc)
        except (ParseError, SchemaError) as exc:
            assert exc.reason
            continue
        for p in res.points:
            try:
                normalize(
                    p,
                    run_id="h",
                    source_path=src.rel,
                    source_sha256="",
                    artifact="",
                    ingested_at=None,
                )
            except SchemaError as exc:
                assert exc.reason


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", [n for n in NAMES if not n.endswith(".zip")])
def test_each_hostile_file_through_every_reader_raises_only_contract_errors(name: str) -> None:
    path = HOSTILE / name
    _contract(SourceFile(path, name, "hostile", path.read_bytes()))


@pytest.mark.timeout(120)
def test_the_whole_corpus_in_one_batch_stores_the_good_files(
    tmp_path: Path, base_store: Path, sandbox: Path
) -> None:
    batch = tmp_path / "batch"
    shutil.copytree(HOSTILE, batch)
    (batch / "MANIFEST.json").unlink()
    for p in AGG:
        shutil.copy(p, batch / p.name)
    store = copy_store(base_store, tmp_path / "store")
    rep = ingest_paths([batch], store, run_id="batch")
    rows = store.points(["batch"])
    good = rows.filter(pl.col(Col.SOURCE_PATH).is_in([p.name for p in AGG]))
    ref = store.points(["base"])
    cols = [Col.CONC, Col.TPUT_PER_GPU, Col.MEDIAN_INTVTY, Col.ARM_ID]
    assert good.select(cols).sort(Col.CONC).equals(ref.select(cols).sort(Col.CONC))
    for name in NAMES:
        _check(name, rep, rows.filter(pl.col(Col.SOURCE_PATH).str.starts_with(name)), alone=False)
    figures.put("hostile", "batch_files", len(NAMES) + len(AGG))
    figures.put("hostile", "batch_rejects", len(rep.rejected))
    figures.put("hostile", "batch_good_rows_stored", good.height)


# ---- limits that need a runtime-made input --------------------------------------------------


def _zip_bytes(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def test_member_count_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(zips, "MAX_MEMBERS", 50)
    z = tmp_path / "many.zip"
    z.write_bytes(_zip_bytes({f"m{i}.json": b"{}" for i in range(51)}))
    rep = ingest_paths([z], Store(tmp_path / "s"), run_id="r")
    assert [r.reason for r in rep.rejected] == [
        "unsafe or broken archive: 51 members, over the 50 member limit"
    ]


def test_nested_zips_extract_up_to_the_depth_limit(tmp_path: Path) -> None:
    ok, deep = tmp_path / "ok.zip", tmp_path / "deep.zip"
    ok.write_bytes(make_hostile._nested(artifacts.MAX_ZIP_DEPTH - 1))
    deep.write_bytes(make_hostile._nested(artifacts.MAX_ZIP_DEPTH))
    rep = ingest_paths([ok], Store(tmp_path / "s"), run_id="ok")
    assert (rep.accepted, rep.rejected) == (1, [])
    rep = ingest_paths([deep], Store(tmp_path / "s"), run_id="deep")
    assert rep.accepted == 0
    assert [r.reason for r in rep.rejected] == [
        f"zips nested more than {artifacts.MAX_ZIP_DEPTH} deep: not extracted"
    ]


def test_nested_zips_share_one_byte_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    body = json.dumps(make_hostile.AGG).encode()
    inner = _zip_bytes({"agg.json": body})
    outer = _zip_bytes({f"bmk_{i}.zip": inner for i in range(3)})
    # Each inner zip alone fits; together with the outer ones they do not.
    monkeypatch.setattr(artifacts, "MAX_ARCHIVE_BYTES", 2 * len(inner) + 2 * len(body))
    z = tmp_path / "outer.zip"
    z.write_bytes(outer)
    rep = ingest_paths([z], Store(tmp_path / "s"), run_id="r")
    assert rep.accepted >= 1
    assert any("byte limit" in r.reason for r in rep.rejected), rep.rejected


def test_file_names_that_are_not_utf8_are_reported_and_the_rest_stored(tmp_path: Path) -> None:
    run = tmp_path / os.fsdecode(b"run-\xff")
    run.mkdir()
    shutil.copy(AGG[0], run / AGG[0].name)
    bad = os.path.join(os.fsencode(run), b"bad-\xfe.json")
    with open(bad, "wb") as fh:
        fh.write(AGG[1].read_bytes())
    store = Store(tmp_path / "s")
    # The directory's name is not a run id (ingest says which one to pass instead) ...
    with pytest.raises(InvalidRunId, match="--run-id run--udcff"):
        ingest_paths([run], store)
    assert store.run_ids() == []
    rep = ingest_paths([run], store, run_id="run-ff")
    assert rep.runs == ["run-ff"]
    assert rep.accepted == 1
    assert [(r.path, r.reason) for r in rep.rejected] == [
        ("bad-\\udcfe.json", "file name is not valid UTF-8: rename it")
    ]
    assert store.points().height == 1
    assert store.rejects().filter(pl.col(RejectCol.OUTCOME) == "rejected").height == 1


def test_symlinked_directories_and_loops_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(AGG[0], outside / "secret.json")
    run = tmp_path / "run"
    (run / "sub").mkdir(parents=True)
    shutil.copy(AGG[1], run / AGG[1].name)
    (run / "sub" / "link").symlink_to(outside, target_is_directory=True)
    (run / "sub" / "loop").symlink_to(run, target_is_directory=True)
    rep = ingest_paths([run], Store(tmp_path / "s"), run_id="r")
    assert rep.accepted == 1
    assert sorted(r.path for r in rep.rejected) == ["sub/link", "sub/loop"]
    assert all("symbolic link" in r.reason for r in rep.rejected)

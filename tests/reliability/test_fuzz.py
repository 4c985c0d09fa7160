"""Fuzzing: hostile mutations of every real fixture, through every reader and through ingest.

Three layers, each a bounded hypothesis run (derandomized, so CI is repeatable; scale the example
counts with PARETOLENS_FUZZ_SCALE for a longer local hunt):

1. every fixture file, mutated (bytes and JSON structure), through every file reader and every
   unit reader: sniffing never raises, reading raises only ParseError/SchemaError with a reason,
   normalising only SchemaError, and what normalises converts to the store's Arrow schema;
2. every fixture directory (a unit), with 1-2 files mutated, through `ingest_paths` into a store
   that already holds it: no exception, every reject has a reason, other runs unchanged, and no
   stored row disappears unless a newer version of its file replaced it;
3. mutated zip artifacts through `ingest_paths`: the same.
"""

from __future__ import annotations

import io
import tempfile
import zipfile
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.contract.col import Col
from ingest.contract.schema import POINTS_SCHEMA, RejectCol, RunCol
from ingest.errors import ParseError, SchemaError
from ingest.normalize.row import normalize
from ingest.pipeline import ingest_paths
from ingest.readers.base import SourceFile
from ingest.readers.registry import file_readers, unit_readers
from ingest.reading import parse_json
from ingest.report import IngestReport
from ingest.store import Store
from tests.reliability import figures
from tests.reliability._support import (
    FIXTURES,
    Snapshot,
    copy_store,
    fixture_files,
    fixture_units,
    mutated_bytes,
    mutation,
    scaled,
    snapshot,
    source,
    unit_sources,
)

FILES = fixture_files()
UNITS = list(fixture_units().items())
_POLARS_SCHEMA = pl.from_arrow(POINTS_SCHEMA.empty_table()).schema  # type: ignore[union-attr]
_SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]


def test_the_fixtures_are_there() -> None:
    assert len(FILES) >= 250, "tests/fixtures lost its files?"
    assert len(UNITS) >= 15
    figures.put("fuzz", "fixture_files", len(FILES))
    figures.put("fuzz", "fixture_units", len(UNITS))
    figures.put("fuzz", "file_readers", len(file_readers()))
    figures.put("fuzz", "unit_readers", len(unit_readers()))


# ---- 1. every reader -------------------------------------------------------------------------


def _normalised(src: SourceFile, points: list[dict[str, object]]) -> None:
    rows = []
    for partial in points:
        try:
            rows.append(
                normalize(
                    partial,
                    run_id="fuzz",
                    source_path=src.rel,
                    source_sha256=src.sha256,
                    artifact=src.artifact,
                    ingested_at=None,
                )
            )
        except SchemaError as exc:
            assert exc.reason and exc.field, exc
            figures.add("fuzz", "reader_rejects_with_reason")
    if rows:
        # What normalises must also be storable (the store converts exactly like this).
        pl.DataFrame(rows, schema=_POLARS_SCHEMA, strict=False).to_arrow()


def _through_file_readers(src: SourceFile) -> None:
    try:
        doc = parse_json(src)
    except ParseError as exc:
        assert exc.reason, exc
        figures.add("fuzz", "reader_rejects_with_reason")
        return
    for reader in file_readers():
        if not reader.sniff(src, doc):
            continue
        figures.add("fuzz", "reader_reads")
        try:
            res = reader.read(src, doc)
        except (ParseError, SchemaError) as exc:
            assert exc.reason, (reader.name, exc)
            figures.add("fuzz", "reader_rejects_with_reason")
            continue
        assert all(rj.reason for rj in res.rejects), (reader.name, res.rejects)
        _normalised(src, res.points)


def _through_unit_readers(files: list[SourceFile]) -> None:
    for reader in unit_readers():
        if not reader.sniff_unit(files):
            continue
        figures.add("fuzz", "reader_reads")
        try:
            res = reader.read_unit(files)
        except (ParseError, SchemaError) as exc:
            assert exc.reason, (reader.name, exc)
            figures.add("fuzz", "reader_rejects_with_reason")
            continue
        assert all(rj.reason for rj in res.rejects), (reader.name, res.rejects)
        anchor = next((f for f in files if res.consumed and f.rel == res.consumed[0]), files[0])
        _normalised(anchor, res.points)


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "path", FILES, ids=[str(p.relative_to(FIXTURES)) for p in FILES] if FILES else None
)
def test_every_reader_survives_mutations_of_every_fixture(path: Path) -> None:
    @settings(
        max_examples=scaled(14),
        deadline=None,  # pytest-timeout bounds a hung reader; no wall-clock asserts
        derandomize=True,
        database=None,
        suppress_health_check=_SLOW,
    )
    @given(data=mutation(path))
    def run(data: bytes) -> None:
        figures.add("fuzz", "reader_cases")
        _through_file_readers(source(path, data))
        _through_unit_readers(unit_sources(path, data))

    run()


# ---- 2. through ingest_paths, into a store that already holds the unit ------------------------


@pytest.fixture(scope="module")
def base_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding an unrelated run that no fuzzed ingest may touch."""
    root = tmp_path_factory.mktemp("base") / "store"
    agg = sorted((FIXTURES / "inferencex" / "agg_fixed_seq").glob("*.json"))
    assert agg
    ingest_paths(agg, Store(root), run_id="base")
    return root


def _write_unit(root: Path, name: str, files: dict[str, bytes]) -> Path:
    d = root / name
    for rel, data in files.items():
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_bytes(data)
    return d


def _assert_nothing_lost(before: Snapshot, after: Snapshot, rep: IngestReport, run: str) -> None:
    assert all(r.reason.strip() and r.path for r in rep.rejected), rep.rejected
    assert after.run_points("base").equals(before.run_points("base"))
    pre, post = before.run_points(run), after.run_points(run)
    whole_file = {r.path for r in rep.rejected}
    for src in pre.get_column(Col.SOURCE_PATH).unique().to_list():
        a = pre.filter(pl.col(Col.SOURCE_PATH) == src)
        b = post.filter(pl.col(Col.SOURCE_PATH) == src)
        if b.equals(a):
            continue
        # Rows may only change by being replaced with a newer, successfully read version.
        assert b.height > 0, f"rows of {src} vanished"
        old_sha = set(a.get_column(Col.SOURCE_SHA256).to_list())
        assert not old_sha & set(b.get_column(Col.SOURCE_SHA256).to_list()), src
        assert src not in whole_file, f"{src} was rejected yet its rows changed"
    assert post.get_column(Col.POINT_ID).n_unique() == post.height, "duplicate rows"
    stored = set(
        zip(
            after.rejects.get_column(RejectCol.PATH).to_list(),
            after.rejects.get_column(RejectCol.REASON).to_list(),
            strict=True,
        )
    )
    assert {(r.path, r.reason) for r in rep.rejected} <= stored
    cat = after.runs.filter(pl.col(RunCol.RUN_ID) == run)
    assert cat.get_column(RunCol.POINT_COUNT).to_list() == [post.height]
    figures.add("fuzz", "pipeline_rejects_with_reason", len(rep.rejected))


@st.composite
def _unit_edit(
    draw: st.DrawFn, files: tuple[Path, ...]
) -> tuple[dict[str, bytes], dict[str, bytes]]:
    victims = draw(st.lists(st.sampled_from(files), min_size=1, max_size=2, unique=True))
    others = [f for f in files if f not in victims]
    if len(files) > 6:
        others = draw(st.lists(st.sampled_from(others), max_size=4, unique=True)) if others else []
    orig = {source(p).rel: source(p).data for p in [*victims, *others]}
    mutated = dict(orig)
    for p in victims:
        mutated[source(p).rel] = draw(mutation(p))
    return orig, mutated


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "udir", [u for u, _ in UNITS], ids=[str(u.relative_to(FIXTURES)) for u, _ in UNITS]
)
def test_mutated_units_through_ingest_lose_nothing(base_store: Path, udir: Path) -> None:
    files = fixture_units()[udir]

    @settings(
        max_examples=scaled(3),
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=_SLOW,
    )
    @given(edit=_unit_edit(files))
    def run(edit: tuple[dict[str, bytes], dict[str, bytes]]) -> None:
        orig, mutated = edit
        figures.add("fuzz", "pipeline_cases")
        with tempfile.TemporaryDirectory() as tmp:
            t = Path(tmp)
            store = copy_store(base_store, t / "store")
            ingest_paths([_write_unit(t / "orig", udir.name, orig)], store, run_id="t")
            before = snapshot(store)
            rep = ingest_paths([_write_unit(t / "mut", udir.name, mutated)], store, run_id="t")
            _assert_nothing_lost(before, snapshot(store), rep, "t")

    run()


# ---- 3. mutated zip artifacts -------------------------------------------------------------------


def _zip_of(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for rel, data in sorted(files.items()):
            zf.writestr(zipfile.ZipInfo(rel, (1980, 1, 1, 0, 0, 0)), data)
    return buf.getvalue()


@st.composite
def _zip_edit(draw: st.DrawFn) -> tuple[str, bytes]:
    udir, files = draw(st.sampled_from(UNITS))
    picked = (
        files
        if len(files) <= 4
        else draw(st.lists(st.sampled_from(files), min_size=1, max_size=4, unique=True))
    )
    blob = _zip_of({source(p).rel: source(p).data for p in picked})
    return f"bmk_{udir.name}.zip", draw(mutated_bytes(blob))


@pytest.mark.timeout(180)
def test_mutated_zip_artifacts_are_rejected_with_reasons(base_store: Path) -> None:
    @settings(
        max_examples=scaled(40),
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=_SLOW,
    )
    @given(edit=_zip_edit())
    def run(edit: tuple[str, bytes]) -> None:
        name, blob = edit
        figures.add("fuzz", "zip_cases")
        with tempfile.TemporaryDirectory() as tmp:
            t = Path(tmp)
            store = copy_store(base_store, t / "store")
            (t / name).write_bytes(blob)
            before = snapshot(store)
            rep = ingest_paths([t / name], store, run_id="z")
            _assert_nothing_lost(before, snapshot(store), rep, "z")

    run()

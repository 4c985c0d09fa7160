"""A new derived metric is one declaration (`ingest.contract.derived`): a throwaway one declared
here is in the schema document, in the points normalize makes (row and batch paths), in the run
page's points table (for points stored before it was declared) and in the y-axis choices, and
nowhere once its block ends."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pytest

from ingest.contract.col import Col, ColumnSpec
from ingest.contract.derived import DerivedMetric, registered
from ingest.contract.schema import better, point_specs
from ingest.contract.schema_doc import render
from ingest.normalize.batch import normalize_batch
from ingest.normalize.row import normalize
from ingest.store import Store
from paretolens.commands.common import seed_samples
from views.query.choices import y_choices
from views.query.state import RunView
from views.run_data import RunData
from views.source import DataSource
from views.tables import TABLES

NAME = "tput_per_gpu_per_conc"
LABEL = "Total tok/s/GPU per concurrent request"
RUN = "kimik2.5-mi355x-mtp"
# tput_per_gpu / conc of the run's three files (data/samples/kimik2.5-mi355x-mtp/agg_*_conc{4,32,
# 64}_*.json: tput_per_gpu 55.62670336516291, 157.12165563281164, 234.47462632067425).
EXPECTED = [55.62670336516291 / 4, 157.12165563281164 / 32, 234.47462632067425 / 64]
METRIC = DerivedMetric(
    ColumnSpec(
        NAME,
        pa.float64(),
        "tok/s/GPU/request",
        "total token throughput per GPU over the concurrency",
        "higher",
        "throughput",
    ),
    inputs=(Col.TPUT_PER_GPU, Col.CONC),
    formula=lambda v: v(Col.TPUT_PER_GPU) / v(Col.CONC),
    applies=lambda v: v(Col.CONC) > 0,
    label=LABEL,
)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store = Store(tmp_path_factory.mktemp("store"))
    seed_samples(store)  # stored before the metric is declared
    return store


@pytest.fixture
def metric() -> Iterator[DerivedMetric]:
    with registered(METRIC) as m:
        yield m


def _provenance(n: int) -> dict[str, object]:
    return {
        "run_id": "r1",
        "source_paths": [f"f{i}.json" for i in range(n)],
        "source_sha256s": ["0" * 64] * n,
        "artifacts": [""] * n,
        "ingested_at": datetime(2026, 1, 1, tzinfo=UTC),
    }


def test_the_schema_document_lists_it(metric: DerivedMetric) -> None:
    assert point_specs()[-1] == metric.spec
    assert (
        f"| `{NAME}` | double | tok/s/GPU/request | higher | throughput | total token throughput "
        "per GPU over the concurrency |"
    ) in render()
    assert better(NAME) == "higher"


def test_both_normalize_paths_derive_it(metric: DerivedMetric) -> None:
    rows = [
        {"tp": 8, "conc": 4, "tput_per_gpu": 55.62670336516291},
        {"tp": 8, "conc": 32, "tput_per_gpu": 157.12165563281164},
    ]
    batch = normalize_batch(rows, **_provenance(2))  # type: ignore[arg-type]
    assert batch.errors == {}
    assert batch.frame.get_column(NAME).to_list() == EXPECTED[:2]
    assert batch.frame.columns[-1] == NAME
    p = _provenance(1)
    row = normalize(
        rows[0],
        run_id="r1",
        source_path="f0.json",
        source_sha256="0" * 64,
        artifact="",
        ingested_at=p["ingested_at"],
    )
    assert row[NAME] == EXPECTED[0]


def test_the_points_table_and_the_y_axis_choices_have_it(
    metric: DerivedMetric, store: Store
) -> None:
    assert y_choices()[-1] == (NAME, LABEL)
    view, notes = RunView.parse(f"unofficialRun={RUN}&y={NAME}")
    assert view.y == NAME and notes == []
    table = TABLES["points"](RunData(DataSource(store), view))
    frame = table.frame.sort(Col.CONC)
    assert frame.get_column(NAME).to_list() == EXPECTED
    assert table.unit(NAME) == "tok/s/GPU/request"


def test_the_declaration_does_not_outlive_its_block(store: Store, tmp_path: Path) -> None:
    with registered(METRIC):
        assert NAME in store.points([RUN]).columns
    assert NAME not in store.points([RUN]).columns
    assert NAME not in render()
    assert NAME not in dict(y_choices())
    view, notes = RunView.parse(f"unofficialRun={RUN}&y={NAME}")
    assert view.y == Col.TPUT_PER_GPU and notes[0].startswith(f"ignored y={NAME}")
    batch = normalize_batch([{"tp": 8, "conc": 4}], **_provenance(1))  # type: ignore[arg-type]
    assert NAME not in batch.frame.columns

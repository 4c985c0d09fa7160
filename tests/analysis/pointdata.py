"""Canonical point frames for the analysis tests.

Real sweeps go through the real pipeline (`ingest.pipeline.ingest_paths`) from the fixture copies
under tests/fixtures; synthetic rows go through `ingest.normalize.normalize`, the contract code.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa

from ingest.contract.schema import POINTS_SCHEMA
from ingest.normalize.row import normalize
from ingest.pipeline import ingest_paths
from ingest.store import Store

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
AGENTIC = FIXTURES / "inferencex/agentic_agg"
DSR1 = AGENTIC / "dsr1_b200_multiturn_pareto_input"
KIMI_TP4 = AGENTIC / "kimik2.7_tp4_sweep_29003473063"
KIMI_TP8 = AGENTIC / "kimik2.7_tp8_sweep_29337493492"
MINIMAX = FIXTURES / "inferencex/bench_serving_random/minimax-m2.5"
KIMI25_MTP = FIXTURES / "inferencex/agg_fixed_seq"
LCB = FIXTURES / "vllm/inferencex_mtp-fixed-ar-minimax-lcb-v8-20260529-092323"
MASTER = FIXTURES / "inferencex/configs/nvidia-master.yaml"
GOLDEN = Path(__file__).resolve().parents[2] / "data/golden_al"
_AT = datetime(2026, 8, 1, tzinfo=UTC)

# run id -> fixture directories ingested into it
RUNS: dict[str, tuple[Path, ...]] = {
    "dsr1": (DSR1,),
    "kimi": (KIMI_TP4, KIMI_TP8),
    "mm25": (MINIMAX,),
    "k25mtp": (KIMI25_MTP,),
    "lcb": (LCB,),
}


def build_store(root: Path) -> Store:
    """A store holding every run of RUNS, ingested by the real pipeline."""
    store = Store(root)
    for run_id, dirs in RUNS.items():
        report = ingest_paths(list(dirs), store, run_id=run_id)
        assert report.accepted and not report.rejected, (run_id, report.rejected)
    return store


def row(run_id: str = "r1", source: str = "mem.json", **fields: Any) -> dict[str, Any]:
    """One canonical row from partial fields, completed and checked by `normalize`."""
    return normalize(fields, run_id=run_id, source_path=source, source_sha256="0" * 64,
                     artifact="test", ingested_at=_AT)  # fmt: skip


def frame(rows: Iterable[Mapping[str, Any]]) -> pl.DataFrame:
    """Rows as a frame with exactly the points schema."""
    df = pl.from_arrow(pa.Table.from_pylist(list(rows), schema=POINTS_SCHEMA))
    assert isinstance(df, pl.DataFrame)
    return df

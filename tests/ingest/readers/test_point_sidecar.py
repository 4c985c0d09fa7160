"""The runner's `paretolens_point.json` fills what a result file cannot say."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.pipeline import ingest_paths
from ingest.readers.base import SourceFile
from ingest.readers.point_sidecar import PointSidecarReader
from ingest.store import Store

FIX = Path(__file__).resolve().parents[2] / "fixtures"
RAW = (
    FIX
    / "inferencex/raw_bench_serving/gptoss120b_multinode/concurrency_8_req_rate_inf_gpus_16_ctx_8_gen_8.json"
)


def test_sidecar_fills_hardware_image_and_offload_of_a_runner_point(tmp_path: Path) -> None:
    pdir = tmp_path / "job" / "p0001"
    (pdir / "results").mkdir(parents=True)
    shutil.copy(RAW, pdir / "results" / RAW.name)
    sidecar = {
        "paretolens_point": {
            "run_id": "job-1",
            "hw": "cluster:h200-dgxc",
            "hw_label": "cluster:h200-dgxc",
            "image": "vllm/vllm-openai:v0.27.1",
            "kv_offloading": "none",
            "conc": 8,
            "model_prefix": "gptoss",
        }
    }
    (pdir / "paretolens_point.json").write_text(json.dumps(sidecar))
    st = Store(tmp_path / "s")
    rep = ingest_paths([tmp_path / "job"], st, run_id="job-1")
    assert rep.rejected == [] and rep.accepted == 1
    row = st.points(["job-1"]).row(0, named=True)
    assert (row[Col.HW], row[Col.HW_LABEL], row[Col.IMAGE], row[Col.MODEL_PREFIX]) == (
        "h200",
        "cluster:h200-dgxc",
        "vllm/vllm-openai:v0.27.1",
        "gptoss",
    )
    # The result file's own values win: 16 GPUs from its name, conc 8 from max_concurrency.
    assert (row[Col.NUM_GPUS], row[Col.CONC]) == (16, 8)


def test_a_sidecar_with_a_foreign_column_names_it() -> None:
    src = SourceFile(Path("paretolens_point.json"), "p/paretolens_point.json", "p", b"")
    doc = {"paretolens_point": {"gpu_kind": "h200"}}
    reader = PointSidecarReader()
    assert reader.sniff(src, doc)
    with pytest.raises(ParseError) as err:
        reader.read(src, doc)
    assert err.value.field == "paretolens_point.gpu_kind"

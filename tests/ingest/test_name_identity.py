"""Issue 23, item 4: identity from names and logs, under one order of trust.

A free-form result name states precision, engine and hardware as well as TP, conc, ISL and OSL;
an attached vLLM server log states the engine and its version. Both only fill what the result
file left unknown (docs/schema.md, "Identity").
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ingest.contract.col import Col
from ingest.pipeline import ingest_paths
from ingest.readers._names import parse_name
from ingest.readers.server_log import engine_of
from ingest.store import Store

WILD = Path(__file__).resolve().parent.parent / "fixtures" / "wild" / "inferencex"
NAMED = WILD / "local_named_result"
LOGGED = WILD / "rocm_team_minimaxm2.5_server_log"
POINT = "minimaxm2.5_tp1_conc16_offloadlmcache_fp8_vllm_tp1-ep1-dpafalse_disagg-false_spec-none_conc16_mi355x-amds_04"


@pytest.mark.parametrize(
    ("name", "facts"),
    [
        # names from public InferenceX wrappers (PROVENANCE.md)
        ("gptoss_fp4_h200_tp8_conc16_isl1024_osl1024.json", ("fp4", None, "h200", "gptoss", 16)),
        (
            "results/gptoss_fp4_h200_tp2_conc64_isl1024_osl1024/"
            "gptoss_fp4_h200_tp2_conc64_isl1024_osl1024.json",
            ("fp4", None, "h200", "gptoss", 64),
        ),
        ("baseline_sglang_tp8_conc64_isl1024_osl1024.json", (None, "sglang", None, None, 64)),
        # the real files of tests/fixtures/inferencex/bench_serving_random
        ("glm5_fp8_vllm_tp8_isl1024_osl128_conc16.json", ("fp8", "vllm", None, "glm5", 16)),
    ],
)
def test_a_free_form_name_states_precision_engine_and_hardware(
    name: str, facts: tuple[object, ...]
) -> None:
    f = parse_name(name)
    assert (f.precision, f.framework, f.hw, f.model_prefix, f.conc) == facts


def test_a_named_raw_file_gets_hardware_and_precision(tmp_path: Path) -> None:
    store = Store(tmp_path)
    ingest_paths([NAMED], store, run_id="named")
    (p,) = store.points(["named"]).to_dicts()
    assert (p[Col.HW], p[Col.PRECISION], p[Col.MODEL_PREFIX], p[Col.TP], p[Col.CONC]) == (
        "mi355x",
        "int4",
        "kimik2.5",
        8,
        32,
    )
    assert (p[Col.ISL], p[Col.OSL]) == (8192, 1024)
    assert (
        "precision=int4, hw_label=mi355x, model_prefix=kimik2.5 taken from the file name"
        in (p[Col.WARNINGS])
    )


def test_the_server_log_states_the_engine_and_its_version() -> None:
    log = next(LOGGED.glob("server_logs_*/server.log")).read_text()
    assert engine_of(log) == {Col.FRAMEWORK: "vllm", Col.FRAMEWORK_VERSION: "0.22.0"}
    assert engine_of("[2026-06-03 17:56:55] server_args=ServerArgs(model_path='x')") == {
        Col.FRAMEWORK: "sglang"
    }
    assert engine_of("INFO vLLM API server version 0.10.1.1\n") == {
        Col.FRAMEWORK: "vllm",
        Col.FRAMEWORK_VERSION: "0.10.1.1",
    }


def test_an_attached_log_fills_engine_and_version(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    report = ingest_paths([LOGGED], store, run_id="log")
    assert report.rejected == []  # the KVTransferConfig(...) repr no longer refuses the log
    (p,) = store.points(["log"]).to_dicts()
    assert (p[Col.FRAMEWORK], p[Col.FRAMEWORK_VERSION]) == ("vllm", "0.22.0")
    assert json.loads(p[Col.SERVER_FLAGS])["max-num-seqs"] == 16


def test_a_log_fills_the_engine_a_result_does_not_state(tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(LOGGED, copy)
    result = copy / f"bmk_agentic_{POINT}" / f"{POINT}.json"
    doc = json.loads(result.read_text())
    assert doc.pop("framework") == "vllm"
    result.write_text(json.dumps(doc))
    store = Store(tmp_path / "s")
    ingest_paths([copy], store, run_id="log")
    (p,) = store.points(["log"]).to_dicts()
    assert (p[Col.FRAMEWORK], p[Col.FRAMEWORK_VERSION]) == ("vllm", "0.22.0")

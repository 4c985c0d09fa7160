"""InferenceX parallelism labels (analysis.labels), on real points and on InferenceX's own cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.labels import parallelism_label, parallelism_labels
from ingest.contract.col import Col
from ingest.pipeline import ingest_paths
from ingest.store import Store

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"


@pytest.mark.parametrize(
    ("run", "expected"),
    [
        # dsr1 B200: tp4 ep4 and tp8 ep8 without DP-attention: TEP
        ("dsr1-b200-multiturn", {"TEP4", "TEP8"}),
        # MiniMax-M2.5: TP8 EP8 and TP8 EP8 with DP-attention
        ("minimax-m2.5-tep8-vs-dep8", {"TEP8", "DEP8"}),
        # Kimi-K2.7 TP8 EP1
        ("29337493492", {"TP8"}),
        # gpt-oss disaggregated, only the GPU split in the file names: 8 prefill + 8 decode GPUs
        ("gpt-oss-120b-disagg", {"8P+8D"}),
    ],
)
def test_labels_of_the_bundled_runs(tmp_path: Path, run: str, expected: set[str]) -> None:
    st = Store(tmp_path)
    ingest_paths([SAMPLES / run], st, run_id=run)
    assert set(parallelism_labels(st.points([run]))) == expected


@pytest.mark.parametrize(
    ("row", "label"),
    [
        ({Col.TP: 8, Col.EP: 1}, "TP8"),
        ({Col.TP: 8, Col.EP: 8}, "TEP8"),
        ({Col.TP: 8, Col.EP: 8, Col.DP_ATTENTION: True}, "DEP8"),
        ({Col.TP: 4, Col.EP: 8}, "EP8"),
        ({Col.TP: 4, Col.EP: 8, Col.DP_ATTENTION: True}, "DPAEP8"),
        ({Col.TP: 8, Col.EP: 1, Col.DP_ATTENTION: True}, "DPATP8"),
        ({Col.TP: 8, Col.EP: 1, Col.PP: 2}, "TP8PP2"),
        ({Col.TP: 8, Col.EP: 1, Col.DCP_SIZE: 8}, "TP8/DCP8"),
        ({Col.TP: None, Col.EP: 1}, "TP?"),
        # InferenceX's documented multinode example: 2 prefill workers EP4, 1 decode DPA EP32
        (
            {
                Col.IS_MULTINODE: True,
                Col.DISAGG: True,
                Col.PREFILL_TP: 4,
                Col.PREFILL_EP: 4,
                Col.PREFILL_NUM_WORKERS: 2,
                Col.DECODE_TP: 32,
                Col.DECODE_EP: 32,
                Col.DECODE_DP_ATTENTION: True,
                Col.DECODE_NUM_WORKERS: 1,
                Col.EP: 1,
            },
            "2xTEP4+1xDEP32",
        ),
        (
            {
                Col.IS_MULTINODE: True,
                Col.DISAGG: True,
                Col.PREFILL_TP: 8,
                Col.PREFILL_EP: 1,
                Col.PREFILL_NUM_WORKERS: 1,
                Col.DECODE_TP: 0,
                Col.DECODE_NUM_WORKERS: 0,
                Col.EP: 1,
            },
            "TP8",
        ),
    ],
)
def test_the_label_rules(row: dict[str, object], label: str) -> None:
    assert parallelism_label(row) == label

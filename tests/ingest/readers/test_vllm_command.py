"""`vllm_command.txt`: shell-quoted argv -> speculative config, thinking mode, server flags."""

from __future__ import annotations

import contextlib
import json
import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.readers.vllm_command import (
    VllmCommandReader,
    config_columns,
    serve_flags,
    spec_config,
    thinking_mode,
    topology_columns,
)
from tests.ingest.readers._support import source
from tests.ingest.readers._unit_support import mutated_text, text_file

READER = VllmCommandReader()
OFFLOAD_ON = (
    "inferencex/multiturn_runs/agentic_dsr1_tp8_bs16_offloadon_fp4_vllm_tp8-ep8-dpafalse_disagg-false"
    "_spec-none_conc16_b200-dgxc-slurm_7/vllm_command.txt"
)
LMCACHE = (
    "aiperf/inferencex_kimik2.7_tp4_sweep_29003473063/agentic_kimik2.7_tp4_conc16_kvdram-lmcache_fp4_vllm"
    "_tp4-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc16_mi355x-amds_04/vllm_command.txt"
)
# The speculative config of the real capture's github_output.txt (a synthetic per-position pin).
CAPTURE_SPEC = (
    '{"method": "eagle3", "model": "thoughtworks/MiniMax-M2.5-Eagle3", "num_speculative_tokens": 3, '
    '"rejection_sample_method": "synthetic", "synthetic_acceptance_rates": [0.664606, 0.419918, 0.259226]}'
)


def _printf_q(*argv: str) -> str:
    # What `printf '%q '` writes for these arguments, as the launchers record vllm_command.txt.
    return " ".join(shlex.quote(a) for a in argv) + " "


def test_real_offload_command_flags_are_all_kept() -> None:
    src = source(OFFLOAD_ON)
    assert READER.sniff(src, None)
    res = READER.read(src, None)
    assert res.points == [] and res.consumed == [OFFLOAD_ON]
    assert json.loads(res.enrich[Col.SERVER_FLAGS]) == {
        "model": "nvidia/DeepSeek-R1-0528-FP4",
        "host": "0.0.0.0",
        "port": "8888",
        "config": "/workspace/results/config.yaml",
        "gpu-memory-utilization": "0.9",
        "tensor-parallel-size": "8",
        "enable-expert-parallel": True,
        "kv-offloading-backend": "native",  # written --kv_offloading_backend: one spelling kept
        "kv-offloading-size": "600",
        "no-disable-hybrid-kv-cache-manager": True,
    }
    assert Col.SPEC_METHOD not in res.enrich and Col.THINKING_MODE not in res.enrich


def test_real_escaped_json_flag_is_unquoted_and_parsed() -> None:
    flags = serve_flags(source(LMCACHE).text(), LMCACHE)
    assert flags["kv-transfer-config"]["kv_connector"] == "LMCacheMPConnector"
    assert flags["kv-transfer-config"]["kv_connector_extra_config"]["lmcache.mp.port"] == 5555
    assert topology_columns(flags, LMCACHE) == {
        Col.FRAMEWORK: "vllm",
        Col.MODEL: "amd/Kimi-K2.7-Code-MXFP4",
        Col.TP: 4,  # --tensor-parallel-size=4
        Col.PP: 1,
        Col.EP: 1,
        Col.DP_ATTENTION: False,
        Col.KV_OFFLOADING: "dram",
        Col.KV_OFFLOAD_BACKEND: "lmcache",
    }


def test_expert_parallel_spans_tp_times_dp() -> None:
    flags = serve_flags(source(OFFLOAD_ON).text(), OFFLOAD_ON)
    topo = topology_columns(flags, OFFLOAD_ON)
    assert (topo[Col.TP], topo[Col.EP], topo[Col.KV_OFFLOAD_BACKEND]) == (8, 8, "native")
    short = serve_flags("vllm serve m -tp 4 -dp 2 --enable-expert-parallel", "x")
    assert (
        topology_columns(short, "x")[Col.EP] == 8 and topology_columns(short, "x")[Col.DP_ATTENTION]
    )


def test_per_position_synthetic_rates_imply_al_one_plus_their_sum() -> None:
    text = _printf_q(
        "/usr/bin/vllm", "serve", "MiniMaxAI/MiniMax-M2.5", "--speculative-config", CAPTURE_SPEC
    )
    row, notes = config_columns(serve_flags(text, "c.txt"), "c.txt")
    # 1 + 0.664606 + 0.419918 + 0.259226 = 2.34375
    assert row[Col.SYNTHETIC_AL] == pytest.approx(2.34375, abs=1e-12)
    assert (row[Col.SPEC_METHOD], row[Col.DRAFT_MODEL], row[Col.NUM_SPEC_TOKENS]) == (
        "eagle3",
        "thoughtworks/MiniMax-M2.5-Eagle3",
        3,
    )
    assert row[Col.SYNTHETIC_ACCEPTANCE] is True and notes == []


def test_minimax_m3_mtp_pin_and_thinking_mode() -> None:
    # formats.md §3.9: Inferact/MiniMax-M3-EAGLE3-GQA, K=3, thinking enabled, pinned 2.78.
    spec = (
        '{"method":"eagle3","model":"Inferact/MiniMax-M3-EAGLE3-GQA","num_speculative_tokens":3,'
        '"rejection_sample_method":"synthetic","synthetic_acceptance_length":2.78}'
    )
    text = _printf_q(
        "vllm",
        "serve",
        "MiniMaxAI/MiniMax-M3",
        f"--speculative-config={spec}",
        "--default-chat-template-kwargs",
        '{"thinking_mode":"enabled"}',
    )
    row, _ = config_columns(serve_flags(text, "m3.txt"), "m3.txt")
    assert row[Col.SYNTHETIC_AL] == 2.78 and row[Col.NUM_SPEC_TOKENS] == 3
    assert row[Col.THINKING_MODE] == "thinking_on"
    assert topology_columns(serve_flags(text, "m3.txt"), "m3.txt")[Col.SPEC_DECODING] == "mtp"


def test_a_pin_without_the_synthetic_method_is_flagged_as_not_applied() -> None:
    row, notes = spec_config(
        {"method": "mtp", "num_speculative_tokens": 2, "synthetic_acceptance_length": 2.5}, "x"
    )
    assert row[Col.SYNTHETIC_ACCEPTANCE] is False and row[Col.SYNTHETIC_AL] == 2.5
    assert notes and "pin is not applied" in notes[0]


@pytest.mark.parametrize(
    ("kwargs", "mode"),
    [
        ({"thinking_mode": "disabled"}, "thinking_off"),
        ({"enable_thinking": False}, "thinking_off"),
        ('{"enable_thinking": true}', "thinking_on"),
        ({"thinking": "on"}, "thinking_on"),
        ({"reasoning_effort": "high"}, None),
        ("not json", None),
        (None, None),
    ],
)
def test_thinking_mode_from_chat_template_kwargs(kwargs: object, mode: str | None) -> None:
    assert thinking_mode(kwargs) == mode


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('vllm serve m --speculative-config \'{"method": ', ""),  # unbalanced quote
        ("vllm serve m --speculative-config '{not json}'", "speculative-config"),
        ("vllm serve m --speculative-config '[1, 2]'", "speculative-config"),
        (
            'vllm serve m --speculative-config \'{"num_speculative_tokens": "three"}\'',
            "speculative-config.num_speculative_tokens",
        ),
        (
            'vllm serve m --speculative-config \'{"synthetic_acceptance_length": "NaN"}\'',
            "speculative-config.synthetic_acceptance_length",
        ),
        ("vllm serve m --tensor-parallel-size eight", "tensor-parallel-size"),
        ("python -m sglang.launch_server --model m", ""),
    ],
)
def test_bad_commands_raise_parse_errors_naming_the_field(text: str, field: str) -> None:
    with pytest.raises(ParseError) as err:
        flags = serve_flags(text, "bad.txt")
        config_columns(flags, "bad.txt")
        topology_columns(flags, "bad.txt")
    assert err.value.field == field and err.value.path == "bad.txt"


def test_sniffing_reads_content_not_names() -> None:
    assert not READER.sniff(text_file("x/vllm_command.txt", "aiperf profile --model m"), None)
    assert READER.sniff(text_file("x/cmd.log", "/opt/venv/bin/vllm serve m --port 1"), None)
    assert not READER.sniff(text_file("x/vllm_command.txt", "vllm serve m"), {"a": 1})


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_mutated_commands_raise_only_parse_errors(data: st.DataObject) -> None:
    text = data.draw(
        mutated_text(source(LMCACHE).text() + "--speculative-config " + shlex.quote(CAPTURE_SPEC))
    )
    src = text_file("m/vllm_command.txt", text)
    if READER.sniff(src, None):
        with contextlib.suppress(ParseError):
            READER.read(src, None)

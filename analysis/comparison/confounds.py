"""Confounds: every configuration difference between two points other than the A/B itself.

Identity columns are equal by construction of a pairing; these are the columns that are not part of
the arm identity but change results (the image, the recipe fingerprint, the machine, the pinned
acceptance, ...) and the server command-line flags (`server_flags`, a JSON object from
`vllm_command.txt`), compared by name with dashes and underscores unified.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ingest.contract.col import Col
from ingest.contract.schema import RUN_NOISE_FLAGS, server_flag_items

CONFOUND_COLUMNS: tuple[Col, ...] = (
    Col.IMAGE,
    Col.RECIPE_FINGERPRINT,
    Col.HW_LABEL,
    Col.RUNNER,
    Col.NUM_GPUS,
    Col.THINKING_MODE,
    Col.SYNTHETIC_ACCEPTANCE,
    Col.SYNTHETIC_AL,
    Col.KV_OFFLOAD_BACKEND_VERSION,
    Col.ALLOCATED_CPU_DRAM_GB,
    Col.INTVTY_DEFINITION,
    Col.SCHEMA_VARIANT,
)
# Columns and server flags that are the A/B itself, so never a confound of that axis.
_AXIS_CONTEXT: dict[str, set[str]] = {
    Col.SPEC_DECODING: {
        Col.SYNTHETIC_ACCEPTANCE,
        Col.SYNTHETIC_AL,
        "speculative-config",
        "num-speculative-tokens",
        "speculative-model",
    },
    Col.KV_OFFLOADING: {
        Col.KV_OFFLOAD_BACKEND_VERSION,
        Col.ALLOCATED_CPU_DRAM_GB,
        "kv-offloading-backend",
        "kv-offloading-size",
        "kv-transfer-config",
    },
    Col.DP_ATTENTION: {"data-parallel-size", "enable-dp-attention"},
    Col.EP: {"enable-expert-parallel"},
}


def _flags(raw: object) -> dict[str, str]:
    return {k: v for k, v in server_flag_items(raw).items() if k not in RUN_NOISE_FLAGS}


def confounds(
    baseline: Mapping[str, Any], treatment: Mapping[str, Any], axis: str | None = None
) -> list[str]:
    """Every configuration difference between two points, except those that are the A/B on
    `axis` itself (e.g. the speculative config of a spec_decoding A/B); None compares all."""
    skip = _AXIS_CONTEXT.get(axis, set()) if axis is not None else set()
    out = [
        f"{c}: {baseline.get(c)} vs {treatment.get(c)}"
        for c in CONFOUND_COLUMNS
        if c not in skip and baseline.get(c) != treatment.get(c)
    ]
    fb, ft = _flags(baseline.get(Col.SERVER_FLAGS)), _flags(treatment.get(Col.SERVER_FLAGS))
    for flag in sorted(set(fb) | set(ft)):
        if flag not in skip and fb.get(flag) != ft.get(flag):
            out.append(f"--{flag}: {fb.get(flag, 'absent')} vs {ft.get(flag, 'absent')}")
    return out

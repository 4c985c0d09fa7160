"""The pinned point's measured energy per token beside the modelled one (hand-worked)."""

from __future__ import annotations

from analysis.cost import energy_check
from ingest.contract.col import Col


def test_measured_beside_modelled_with_difference() -> None:
    # 1928.75 J over 5,319,000 tokens (the gpu_metrics excerpt joined to the real result):
    # 3.6262e-4 J/token; modelled 5.0e-4: difference -1.3738e-4 J/token, -27.5%.
    row = {
        Col.MEASURED_JOULES_PER_TOKEN: 1928.75 / 5319000,
        Col.MEASURED_POWER_W: 1928.75,
        Col.JOULES_PER_TOKEN: 5.0e-4,
    }
    assert energy_check(row) == (
        "measured 0.0003626 J/token (GPU boards, from gpu_metrics, 1.93 kW over the window); "
        "modelled 0.0005 J/token (all-in provisioned kW/GPU, hardware.yaml); "
        "measured - modelled = -0.0001374 J/token (-27.5%)"
    )


def test_no_model_and_no_telemetry() -> None:
    assert energy_check({Col.JOULES_PER_TOKEN: 5.0e-4}) is None
    only = energy_check({Col.MEASURED_JOULES_PER_TOKEN: 2.0, Col.JOULES_PER_TOKEN: None})
    assert only == (
        "measured 2 J/token (GPU boards, from gpu_metrics); "
        "no modelled figure for this hardware in hardware.yaml"
    )

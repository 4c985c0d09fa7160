"""TCO calculator: the fleet a target throughput at a target interactivity needs, per arm.

For each arm (configuration) of the points: its frontier of per-GPU throughput (`tput_per_gpu`)
against interactivity (`median_intvty`, tok/s/user), read at the target interactivity I by
monotone PCHIP between its measured points (`analysis.frontier.interpolate.frontier_value`, as
"rank arms at x"; nothing extrapolated). An arm whose points all run faster than I per user is
read at its slowest front point (it meets the target with room to spare); one that never reaches
I cannot serve it and gets no fleet. Then, with T the fleet's target throughput (total tok/s),
g the arm's GPUs per instance (`num_gpus`), y the per-GPU throughput at I, and P (kW/GPU) and
C ($/GPU-h of the chosen cost class) from `data/hardware.yaml` or the view's `hwcost`:

    instances = ceil(T / (y * g))     gpus = instances * g
    usd_per_hour = gpus * C           power_kw = gpus * P
    usd_per_mtok = usd_per_hour / (T * 3600 / 1e6)

InferenceX's calculator shows the interpolated per-GPU figures only; this one sizes the fleet
(whole instances) and says which arms cannot reach the target and which hardware lacks figures.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from analysis.cost import (
    CLASS_TITLES,
    COST_CLASSES,
    CostClass,
    Overrides,
    Specs,
    figures_in_force,
)
from analysis.frontier.interpolate import frontier_value
from analysis.frontier.polylines import Frontier
from ingest.contract.col import Col

UNITS: dict[str, str] = {
    "target_intvty": "tok/s/user",
    "target_tput": "tok/s",
    "tput_per_gpu_at_target": "tok/s/gpu",
    "gpus_per_instance": "GPUs",
    "instances": "",
    "gpus": "GPUs",
    "usd_per_hour": "$/h",
    "usd_per_year": "$/year",
    "power_kw": "kW",
    "usd_per_mtok": "$/Mtok",
    "power_kw_per_gpu": "kW",
    "usd_per_gpu_hour": "$/GPU-h",
    "intvty_lo": "tok/s/user",
    "intvty_hi": "tok/s/user",
    "note": "",
}
DESCRIPTIONS: dict[str, str] = {
    "target_intvty": "the interactivity every user must get (tco_intvty)",
    "target_tput": "the fleet's total token throughput to serve (tco_tput)",
    "tput_per_gpu_at_target": "the arm frontier's tput_per_gpu at the target interactivity "
    "(PCHIP between measured points; the slowest front point when all are faster)",
    "gpus_per_instance": "GPUs one server instance of the arm uses (num_gpus)",
    "instances": "server instances needed: ceil(target_tput / (tput_per_gpu_at_target x "
    "gpus_per_instance))",
    "gpus": "GPUs of the fleet: instances x gpus_per_instance",
    "power_kw_per_gpu": "all-in provisioned power per GPU assumed (hardware.yaml or hwcost)",
    "usd_per_gpu_hour": "cost of a GPU-hour assumed for the chosen cost class",
    "usd_per_hour": "fleet cost per hour: gpus x usd_per_gpu_hour",
    "usd_per_year": "fleet cost per year: usd_per_hour x 8760",
    "power_kw": "fleet all-in power: gpus x power_kw_per_gpu",
    "usd_per_mtok": "fleet cost per million tokens at the target: usd_per_hour / "
    "(target_tput x 3600 / 1e6)",
    "intvty_lo": "the lowest interactivity on the arm's frontier",
    "intvty_hi": "the highest interactivity on the arm's frontier",
    "note": "why an arm has no fleet, or how it meets the target",
}
_INT = ("gpus_per_instance", "instances", "gpus")
SCHEMA: dict[str, pl.DataType] = {
    Col.ARM_ID.value: pl.String(),
    Col.ARM_LABEL.value: pl.String(),
    Col.HW.value: pl.String(),
    **{k: pl.Int64() if k in _INT else pl.String() if k == "note" else pl.Float64() for k in UNITS},
}


@dataclass(frozen=True)
class Target:
    """What the fleet must serve, and which cost class prices it."""

    intvty: float
    tput: float
    cost_class: CostClass = "hyperscaler"

    def __post_init__(self) -> None:
        for name in ("intvty", "tput"):
            v = getattr(self, name)
            if not math.isfinite(v) or v <= 0:
                raise ValueError(f"{name} must be a positive number, got {v!r}")
        if self.cost_class not in COST_CLASSES:
            raise ValueError(f"cost class must be one of {', '.join(COST_CLASSES)}")

    def assumptions(self) -> str:
        """The target and the cost class, in words."""
        return (
            f"{self.tput:g} tok/s in total at {self.intvty:g} tok/s/user, priced as "
            f"{CLASS_TITLES[self.cost_class]}"
        )


def _front(xs: list[float], ys: list[float]) -> tuple[list[float], list[float]]:
    """The points no other beats on both interactivity and throughput, sorted by x."""
    best = -math.inf
    fx: list[float] = []
    fy: list[float] = []
    for x, y in sorted(zip(xs, ys, strict=True), key=lambda p: (-p[0], -p[1])):
        if y > best:
            fx.append(x)
            fy.append(y)
            best = y
    return fx[::-1], fy[::-1]


def fleet_table(
    points: pl.DataFrame, target: Target, specs: Specs, overrides: Overrides | None = None
) -> pl.DataFrame:
    """One row per arm: its per-GPU throughput at the target interactivity and the fleet it needs.

    Args:
        points: canonical points with arm_id, arm_label, hw, num_gpus, median_intvty and
            tput_per_gpu (points missing either axis are left out of their arm's frontier).
        target: the interactivity, the fleet throughput and the cost class.
        specs, overrides: hardware figures (`analysis.cost.load_hardware`, `parse_hwcost`).

    Returns:
        `SCHEMA` columns, cheapest fleet first; arms that cannot serve the target last, with
        the reason in `note`.
    """
    need = [Col.ARM_ID, Col.MEDIAN_INTVTY, Col.TPUT_PER_GPU]
    if points.height == 0 or any(str(c) not in points.columns for c in need):
        return pl.DataFrame(schema=SCHEMA)
    usable = points.filter(
        pl.col(Col.MEDIAN_INTVTY).is_finite()
        & (pl.col(Col.MEDIAN_INTVTY) > 0)
        & pl.col(Col.TPUT_PER_GPU).is_finite()
        & (pl.col(Col.TPUT_PER_GPU) > 0)
    )
    hws = sorted(
        {str(h) for h in usable.get_column(Col.HW).drop_nulls().to_list()}
        if Col.HW in usable.columns
        else set()
    )
    figures = figures_in_force(hws, specs, overrides)
    rows = []
    for (arm,), grp in usable.group_by(Col.ARM_ID, maintain_order=True):
        first = grp.row(0, named=True)
        hw = first.get(Col.HW)
        label = str(first.get(Col.ARM_LABEL) or arm)
        g = first.get(Col.NUM_GPUS)
        fx, fy = _front(
            grp.get_column(Col.MEDIAN_INTVTY).to_list(), grp.get_column(Col.TPUT_PER_GPU).to_list()
        )
        row: dict[str, object] = {
            Col.ARM_ID.value: arm,
            Col.ARM_LABEL.value: label,
            Col.HW.value: hw,
            "target_intvty": target.intvty,
            "target_tput": target.tput,
            "intvty_lo": fx[0],
            "intvty_hi": fx[-1],
            "gpus_per_instance": int(g) if isinstance(g, int | float) and g > 0 else None,
        }
        figs = figures.get(str(hw), {}) if hw is not None else {}
        power, cost = figs.get("power_kw"), figs.get(target.cost_class)
        row["power_kw_per_gpu"], row["usd_per_gpu_hour"] = power, cost
        if target.intvty > fx[-1]:
            row["note"] = f"cannot reach {target.intvty:g} tok/s/user (its best is {fx[-1]:.4g})"
            rows.append(row)
            continue
        if target.intvty < fx[0]:
            y = fy[0]
            row["note"] = f"its slowest front point already gives {fx[0]:.4g} tok/s/user"
        else:
            front = Frontier((), label, "x", "y", (), tuple(fx), tuple(fy), ())
            y = frontier_value(front, target.intvty) or fy[0]
            row["note"] = ""
        row["tput_per_gpu_at_target"] = y
        if row["gpus_per_instance"] is None:
            row["note"] = "no num_gpus: cannot size the fleet"
            rows.append(row)
            continue
        per = int(row["gpus_per_instance"])  # type: ignore[call-overload]
        instances = math.ceil(target.tput / (y * per))
        gpus = instances * per
        row.update(instances=instances, gpus=gpus)
        if power is not None:
            row["power_kw"] = gpus * power
        if cost is not None:
            hourly = gpus * cost
            row.update(
                usd_per_hour=hourly,
                usd_per_year=hourly * 8760,
                usd_per_mtok=hourly / (target.tput * 3600 / 1e6),
            )
        if power is None or cost is None:
            row["note"] = (
                f"{row['note']}; " if row["note"] else ""
            ) + f"no power or {target.cost_class} cost figure for {hw!r} (hardware.yaml, hwcost)"
        rows.append(row)
    if not rows:
        return pl.DataFrame(schema=SCHEMA)
    frame = pl.DataFrame(rows, schema=SCHEMA)
    return frame.sort("usd_per_hour", "gpus", nulls_last=True)


def table_units() -> Mapping[str, str]:
    """Units of the TCO table's own columns."""
    return UNITS

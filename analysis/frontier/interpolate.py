"""Frontier against frontier at matched x (interactivity): monotone PCHIP, no extrapolation.

A frontier sorted by x is monotone in y, so a PCHIP interpolant (shape-preserving, never
overshooting) is the honest curve between measured points. Two frontiers are compared only on the
x range both cover; outside it nothing is claimed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from analysis.frontier.polylines import Frontier

FloatArray = np.ndarray


@dataclass(frozen=True)
class FrontierGap:
    """Treatment (or candidate) frontier vs baseline frontier on their common x range.

    xs: the measured x values of either frontier inside [lo, hi] (where the curves are compared).
    delta_pct: 100 x (treatment / baseline - 1) at each of xs.
    area_*: integrals of y over [lo, hi] (y-unit x x-unit); area_between = treatment - baseline;
        area_delta_pct = 100 x (area_treatment / area_baseline - 1), the x-averaged uplift.
    """

    x: str
    y: str
    lo: float
    hi: float
    xs: tuple[float, ...]
    baseline: tuple[float, ...]
    treatment: tuple[float, ...]
    delta_pct: tuple[float, ...]
    mean_delta_pct: float
    area_baseline: float
    area_treatment: float
    area_between: float
    area_delta_pct: float | None


def _curve(f: Frontier) -> tuple[FloatArray, FloatArray]:
    xs = np.asarray(f.xs, dtype=np.float64)
    ys = np.asarray(f.ys, dtype=np.float64)
    ux, first = np.unique(xs, return_index=True)  # equal x on a frontier means an equal point
    return ux, ys[first]


def _pchip(x: FloatArray, y: FloatArray) -> Any:
    # scipy.interpolate takes most of a second to import and only comparisons need it, so it
    # is imported here rather than with the module (every CLI command imports analysis).
    from scipy.interpolate import PchipInterpolator

    return PchipInterpolator(x, y, extrapolate=False)


def load_interpolation() -> None:
    """Import the interpolation library now: a server's warm-up calls this so that its first
    comparison or history page does not wait the most of a second scipy.interpolate takes."""
    _pchip(np.asarray([0.0, 1.0]), np.asarray([0.0, 1.0]))


def _evaluate(x: FloatArray, y: FloatArray, at: FloatArray, curve: Any = None) -> FloatArray:
    """The curve through (x, y) at `at` (`curve`: its interpolant, when already built)."""
    if len(x) == 1:
        return np.full(len(at), y[0])
    out: FloatArray = (curve if curve is not None else _pchip(x, y))(at)
    return out


def _integral(x: FloatArray, y: FloatArray, lo: float, hi: float, curve: Any = None) -> float:
    if len(x) == 1 or hi <= lo:
        return 0.0
    return float((curve if curve is not None else _pchip(x, y)).integrate(lo, hi))


def frontier_value(frontier: Frontier, x: float) -> float | None:
    """A frontier's y at x, by PCHIP between its measured points (None outside their x range:
    nothing is extrapolated)."""
    fx, fy = _curve(frontier)
    if not len(fx) or not fx[0] <= x <= fx[-1]:
        return None
    return float(_evaluate(fx, fy, np.asarray([x], dtype=np.float64))[0])


def frontier_gap(baseline: Frontier, treatment: Frontier) -> FrontierGap | None:
    """Compare two frontiers on the x range both cover (None when they do not overlap).

    Raises:
        ValueError: when the frontiers are on different axes.
    """
    if (baseline.x, baseline.y) != (treatment.x, treatment.y):
        raise ValueError(
            f"frontiers on different axes: {baseline.x}/{baseline.y} vs {treatment.x}/{treatment.y}"
        )
    bx, by = _curve(baseline)
    tx, ty = _curve(treatment)
    if not len(bx) or not len(tx):
        return None
    lo, hi = max(bx[0], tx[0]), min(bx[-1], tx[-1])
    if lo > hi:
        return None
    grid = np.unique(np.concatenate([bx, tx]))
    grid = grid[(grid >= lo) & (grid <= hi)]
    # Each curve's interpolant built once for its values and its area (building one is most
    # of a gap's time).
    cb = _pchip(bx, by) if len(bx) > 1 else None
    ct = _pchip(tx, ty) if len(tx) > 1 else None
    yb, yt = _evaluate(bx, by, grid, cb), _evaluate(tx, ty, grid, ct)
    pct = 100.0 * (yt / yb - 1.0)
    ab, at = _integral(bx, by, lo, hi, cb), _integral(tx, ty, lo, hi, ct)
    return FrontierGap(
        x=baseline.x,
        y=baseline.y,
        lo=float(lo),
        hi=float(hi),
        xs=tuple(float(v) for v in grid),
        baseline=tuple(float(v) for v in yb),
        treatment=tuple(float(v) for v in yt),
        delta_pct=tuple(float(v) for v in pct),
        mean_delta_pct=float(np.mean(pct)),
        area_baseline=ab,
        area_treatment=at,
        area_between=at - ab,
        area_delta_pct=100.0 * (at / ab - 1.0) if ab > 0 else None,
    )

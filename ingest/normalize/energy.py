"""Measured energy of a point: GPU-board power integrated over its benchmark window.

The rule follows InferenceX's `utils/aggregate_power.py`: each GPU's power samples are
integrated on their own with the trapezoid rule, linearly interpolated at the window's start
and end, and the GPUs are summed; the window must be bracketed by samples of every GPU (a
window the telemetry does not cover gives no number, with the reason, never a partial one).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

# A gap between two samples wider than this (seconds) makes the integral a guess.
MAX_SAMPLE_GAP_S = 3.0


@dataclass(frozen=True)
class Energy:
    """The measured energy over a window, or why there is none."""

    energy_j: float | None
    power_w: float | None
    gpus: int
    reason: str = ""


def _interp(t: float, a: tuple[float, float], b: tuple[float, float]) -> float:
    (t0, p0), (t1, p1) = a, b
    return p0 if t1 == t0 else p0 + (p1 - p0) * (t - t0) / (t1 - t0)


def integrate_gpu(samples: Sequence[tuple[float, float]], start: float, end: float) -> float:
    """Energy (J) of one GPU's (t, watts) samples, sorted by t, over [start, end].

    Raises:
        ValueError: when the samples do not bracket the window or leave a gap over
            `MAX_SAMPLE_GAP_S` inside it.
    """
    if not samples or samples[0][0] > start or samples[-1][0] < end:
        first = samples[0][0] if samples else None
        last = samples[-1][0] if samples else None
        raise ValueError(f"samples from {first} to {last} do not cover the window {start}..{end}")
    pts: list[tuple[float, float]] = []
    for i in range(len(samples) - 1):
        a, b = samples[i], samples[i + 1]
        if b[0] < start or a[0] > end:
            continue
        if b[0] - a[0] > MAX_SAMPLE_GAP_S and b[0] > start and a[0] < end:
            raise ValueError(f"a {b[0] - a[0]:g} s gap between samples at t={a[0]}")
        if a[0] <= start <= b[0] and not pts:
            pts.append((start, _interp(start, a, b)))
        if start < b[0] < end:
            pts.append(b)
        if a[0] <= end <= b[0]:
            pts.append((end, _interp(end, a, b)))
            break
    return sum((t1 - t0) * (p0 + p1) / 2 for (t0, p0), (t1, p1) in pairwise(pts))


def measure(
    power: Mapping[str, Iterable[tuple[float, float]]], start: float | None, end: float | None
) -> Energy:
    """Energy and mean power of every GPU's (t, watts) samples over the window [start, end]."""
    gpus = len(power)
    if start is None or end is None:
        return Energy(None, None, gpus, "the point records no benchmark window")
    if end <= start:
        return Energy(None, None, gpus, f"empty benchmark window {start}..{end}")
    if not power:
        return Energy(None, None, 0, "no power samples")
    total = 0.0
    for gpu, samples in sorted(power.items()):
        try:
            total += integrate_gpu(sorted(samples), start, end)
        except ValueError as exc:
            return Energy(None, None, gpus, f"GPU {gpu}: {exc}")
    return Energy(total, total / (end - start), gpus)

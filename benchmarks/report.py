"""The results model (figures, anchors, checks, growth tables) and its RESULTS.md rendering."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from benchmarks.timing import Samples


@dataclass
class Anchor:
    """An anchor timed in the same run. `scale` multiplies measured samples to the full size."""

    name: str
    samples: Samples | None
    scale: float = 1.0
    note: str = ""

    @property
    def median(self) -> float:
        assert self.samples is not None
        return self.samples.median * self.scale


@dataclass
class Check:
    """One target clause: e.g. 'median <= 1 s' with whether it held."""

    text: str
    passed: bool


@dataclass
class Figure:
    """One measured figure: samples, how to show them, its target clauses and anchors."""

    name: str
    samples: Samples | None
    target: str
    checks: list[Check] = field(default_factory=list)
    anchors: list[Anchor] = field(default_factory=list)
    unit: str = "ms"
    per_second: float | None = None  # show items/s = per_second / seconds too
    per_second_unit: str = ""
    stat: str = "median"  # or "p95": which statistic the target reads
    notes: str = ""
    command: str = ""
    missing: str = ""  # why the figure could not be measured

    @property
    def value(self) -> float:
        assert self.samples is not None
        return self.samples.p95() if self.stat == "p95" else self.samples.median

    @property
    def status(self) -> str:
        if self.samples is None:
            return "MISSING"
        if not self.checks:
            return "INFO"
        return "PASS" if all(c.passed for c in self.checks) else "FAIL"

    def ratio(self, anchor: Anchor) -> float | None:
        if self.samples is None or anchor.samples is None:
            return None
        return self.samples.median / anchor.median


@dataclass
class GrowthRow:
    """Cost of one operation at one size."""

    n: int
    seconds: float
    peak_bytes: int
    runs: int


@dataclass
class Growth:
    """Cost growth of one operation over sizes, with fitted log-log exponents."""

    name: str
    rows: list[GrowthRow]
    notes: str = ""

    def exponent(self, attr: str) -> float | None:
        pts = [(r.n, getattr(r, attr)) for r in self.rows if getattr(r, attr) > 0]
        if len(pts) < 2:
            return None
        x = np.log([p[0] for p in pts])
        y = np.log([p[1] for p in pts])
        return float(np.polyfit(x, y, 1)[0])


@dataclass
class Section:
    """A group of figures (one suite)."""

    title: str
    figures: list[Figure] = field(default_factory=list)
    growth: list[Growth] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def fmt_seconds(seconds: float, unit: str) -> str:
    """Seconds shown in the figure's unit."""
    if unit == "s":
        return f"{seconds:.3f} s"
    if unit == "MiB":  # a memory figure: its samples are bytes
        return fmt_bytes(seconds)
    value = seconds * 1000
    return f"{value:.1f} ms" if value < 100 else f"{value:.0f} ms"


def fmt_bytes(n: float) -> str:
    """Bytes as MiB."""
    return f"{n / 2**20:.1f} MiB"


def _ratio(r: float | None) -> str:
    if r is None or math.isnan(r):
        return "n/a"
    return f"{r:.2f}x" if r >= 0.01 else f"{r:.4f}x"


def render_figure(fig: Figure) -> list[str]:
    """Markdown lines of one figure."""
    lines = [f"#### {fig.name} — **{fig.status}**", ""]
    lines.append(f"- target: {fig.target}")
    if fig.samples is None:
        lines.append(f"- not measured: {fig.missing}")
        if fig.command:
            lines.append(f"- reproduce: `{fig.command}`")
        lines.append("")
        return lines
    s = fig.samples
    shown = (
        f"- {fig.stat} of {len(s.values)} runs: **{fmt_seconds(fig.value, fig.unit)}** "
        f"(median {fmt_seconds(s.median, fig.unit)}, min {fmt_seconds(s.min, fig.unit)}, "
        f"max {fmt_seconds(s.max, fig.unit)})"
    )
    if fig.per_second:
        shown += f"; **{fig.per_second / s.median:,.0f} {fig.per_second_unit}** at the median"
    lines.append(shown)
    for c in fig.checks:
        lines.append(f"- {'pass' if c.passed else 'FAIL'}: {c.text}")
    if fig.anchors:
        lines += [
            "",
            "| anchor (same run) | median | min | max | ours / anchor |",
            "|---|---|---|---|---|",
        ]
        for a in fig.anchors:
            if a.samples is None:
                lines.append(f"| {a.name} | not run: {a.note} | | | |")
                continue
            scale = a.scale
            name = a.name + (f" ({a.note})" if a.note else "")
            lines.append(
                f"| {name} | {fmt_seconds(a.samples.median * scale, fig.unit)} | "
                f"{fmt_seconds(a.samples.min * scale, fig.unit)} | "
                f"{fmt_seconds(a.samples.max * scale, fig.unit)} | {_ratio(fig.ratio(a))} |"
            )
    if fig.notes:
        lines += ["", fig.notes]
    if fig.command:
        lines += ["", f"Reproduce: `{fig.command}`"]
    lines.append("")
    return lines


def render_growth(g: Growth) -> list[str]:
    """Markdown lines of one growth table."""
    lines = [
        f"#### {g.name}",
        "",
        "| points | time (median) | peak memory above baseline (largest) | runs |",
    ]
    lines.append("|---:|---:|---:|---:|")
    for r in g.rows:
        lines.append(
            f"| {r.n:,} | {fmt_seconds(r.seconds, 'ms')} | {fmt_bytes(r.peak_bytes)} | {r.runs} |"
        )
    te, me = g.exponent("seconds"), g.exponent("peak_bytes")
    lines.append("")
    lines.append(
        f"Fitted exponent (log-log least squares, cost ~ n^k): time k = "
        f"{'n/a' if te is None else f'{te:.2f}'}, peak memory k = "
        f"{'n/a' if me is None else f'{me:.2f}'}."
    )
    if g.notes:
        lines += ["", g.notes]
    lines.append("")
    return lines


def summary_rows(sections: list[Section]) -> list[str]:
    """The one-table summary at the top of RESULTS.md."""
    lines = [
        "| figure | result | target | status | ratio to the named anchor |",
        "|---|---|---|---|---|",
    ]
    for sec in sections:
        if not sec.figures and not sec.growth:
            why = "suite failed" if any("failed" in n for n in sec.notes) else "not measured"
            lines.append(f"| {sec.title} | — | | MISSING | {why}: see its section |")
        for f in sec.figures:
            if f.samples is None:
                lines.append(f"| {f.name} | — | {f.target} | MISSING | |")
                continue
            ratios = "; ".join(
                f"{_ratio(f.ratio(a))} {a.name}" for a in f.anchors[:2] if a.samples is not None
            )
            value = fmt_seconds(f.value, f.unit)
            if f.per_second:
                value += f" ({f.per_second / f.samples.median:,.0f} {f.per_second_unit})"
            lines.append(f"| {f.name} | {value} | {f.target} | {f.status} | {ratios} |")
    return lines

"""The palette URL option: the palettes' promises and the repaint of a real chart (issue 27)."""

from __future__ import annotations

from typing import Any

import pytest

from dashboard.figures import style
from dashboard.pages.run_charts import main_figure
from views.query.choices import PALETTE_CHOICES
from views.query.state import RunView
from views.source import DataSource


def _contrast(hex_colour: str) -> float:
    """WCAG 2 contrast ratio against white."""
    rgb = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    lum = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    return 1.05 / (lum + 0.05)


def test_every_choice_has_a_palette() -> None:
    assert [v for v, _ in PALETTE_CHOICES] == list(style.PALETTES)


def test_high_contrast_colours_are_dark_and_distinct() -> None:
    hc = style.PALETTES["contrast"]
    assert len(set(hc)) == len(hc) == 9
    assert min(_contrast(c) for c in hc) >= 5.0
    # by hand: #004488 is 9.62:1, #007A7A 5.17:1 (the lightest)
    assert _contrast("#004488") == pytest.approx(9.62, abs=0.01)
    assert min(hc, key=_contrast) == "#007A7A"


def _colours(fig: dict[str, Any]) -> set[str]:
    out: set[str] = set()
    for t in fig["data"]:
        c = (t.get("marker") or {}).get("color")
        out.update(c if isinstance(c, list) else [c] if isinstance(c, str) else [])
    return out


def test_the_run_chart_is_repainted_and_attributed(source: DataSource) -> None:
    base, _ = RunView.parse("unofficialRun=dsr1")
    fig = main_figure(source.run_data(base), base)
    arms = _colours(fig) & set(style.PALETTE)
    assert arms  # the default draws Okabe-Ito colours
    tol, _ = RunView.parse("unofficialRun=dsr1&palette=tol")
    repainted = _colours(main_figure(source.run_data(tol), tol))
    index = {c: i for i, c in enumerate(style.PALETTE)}
    assert repainted & set(style.PALETTE) == set()
    assert {style.PALETTES["tol"][index[c]] for c in arms} <= repainted
    assert fig["layout"]["meta"]["attribution"] == (
        "Made with paretolens from the published results of run dsr1"
    )

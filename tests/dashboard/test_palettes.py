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


def test_the_compare_chart_takes_the_palette_of_its_url(source: DataSource) -> None:
    from dashboard.pages.compare import compare_figure
    from views.query.state import CompareView

    query = "base=dsr1&candidate=dsr1-rerun"
    base, _ = CompareView.parse(query)
    hc, notes = CompareView.parse(query + "&palette=contrast")
    assert notes == [] and hc.palette == "contrast"
    assert CompareView.parse(hc.query())[0] == hc  # the URL round-trips
    arms = _colours(compare_figure(source.compare_data(base), base)) & set(style.PALETTE)
    assert arms  # Okabe-Ito by default
    repainted = _colours(compare_figure(source.compare_data(hc), hc))
    index = {c: i for i, c in enumerate(style.PALETTE)}
    mapped = {style.HIGH_CONTRAST[index[c] % 9] for c in arms}
    assert mapped <= repainted and (arms - mapped) & repainted == set()
    # The figure is built once per comparison: a palette repaints a copy, the default stays.
    assert _colours(compare_figure(source.compare_data(base), base)) & set(style.PALETTE) == arms
    assert _colours(compare_figure(source.compare_data(hc), hc)) == repainted
    bad, notes = CompareView.parse(query + "&palette=neon")
    assert bad.palette == "okabe" and len(notes) == 1 and "palette" in notes[0]


def test_the_history_chart_takes_the_palette_and_links_to_the_others(source: DataSource) -> None:
    import polars as pl

    from dashboard.pages import history
    from ingest.contract.col import Col
    from views import urls
    from views.query.state import HistoryView
    from views.tables import history_frame

    pts = source.store.points(["dsr1"])
    arm = str(
        pts.filter(pl.col(Col.ARM_LABEL) == "TP8 EP8 | no spec | kv none").item(0, Col.ARM_ID)
    )
    first = history_frame(source, HistoryView(arm=(arm,), at=1.0)).row(0, named=True)
    at = float((first["x_lo"] + first["x_hi"]) / 2)
    view, notes = HistoryView.parse(f"arm={arm}&at={at}&palette=tol")
    assert notes == [] and HistoryView.parse(view.query())[0].palette == "tol"
    frame = history_frame(source, view)
    fig = history.history_figure(frame, view)
    # one arm: the first colour of Paul Tol's "bright" scheme, not Okabe-Ito's first
    assert fig["data"][0]["marker"]["color"] == style.TOL_BRIGHT[0] == "#4477AA"
    links = str(history.palette_links(view))
    assert repr(urls.history(view.replace(palette="contrast"))) in links
    assert repr(urls.history(view.replace(palette="okabe"))) in links
    assert "palette=tol" not in links.split("B(")[0]  # the current palette is bold, not a link

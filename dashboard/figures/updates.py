"""Updates of a drawn chart without redrawing it: the display-only patch (log axes, hidden arms,
the pinned point), the zoom-keeping revision, and the legend state after a legend click."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl
from dash import Patch

from dashboard.figures.style import Figure
from ingest.contract.col import Col


def pinned_xy(rows: pl.DataFrame, pinned: str | None) -> tuple[list[float], list[float]]:
    """Where the pinned point's ring goes (nowhere when it is not drawn)."""
    pin = rows.filter(pl.col(Col.POINT_ID) == pinned) if pinned else rows.clear()
    return pin.get_column("x").to_list(), pin.get_column("y").to_list()


UPLIFT_META = "uplift"  # first word of the uplift annotations' `name`: "uplift <token> <arm id>"


def uplift_note_name(token: str, arm_id: str) -> str:
    """`name` of an uplift annotation: it carries its baseline's legend token, so hiding the
    baseline from the legend hides its uplift labels too."""
    return f"{UPLIFT_META} {token} {arm_id}"


def note_tokens(fig: Figure) -> list[str]:
    """The legend token of every annotation of a figure, by index ("" for those no legend entry
    hides)."""
    out = []
    for note in fig["layout"].get("annotations") or []:
        words = str(note.get("name") or "").split(" ", 2)
        out.append(words[1] if len(words) == 3 and words[0] == UPLIFT_META else "")
    return out


def display_patch(
    *, tokens: Sequence[str], hidden: Sequence[str], pinned: tuple[list[float], list[float]],
    logx: bool, logy: bool, axes_changed: bool, revision: str, notes: Sequence[str] = (),
) -> Patch:  # fmt: skip
    """The update of a drawn chart for display-only changes (log axes, hidden arms, the pin):
    a few properties instead of the whole figure, so a 5,000-point chart stays quick."""
    patch = Patch()
    if axes_changed:
        patch["layout"]["xaxis"]["type"] = "log" if logx else "linear"
        patch["layout"]["yaxis"]["type"] = "log" if logy else "linear"
        patch["layout"]["yaxis"]["rangemode"] = "normal" if logy else "tozero"
        patch["layout"]["xaxis"]["autorange"] = True
        patch["layout"]["yaxis"]["autorange"] = True
        patch["layout"]["uirevision"] = revision
    hide = set(hidden)
    for i, tok in enumerate(tokens):
        if tok == "pinned":
            patch["data"][i]["x"], patch["data"][i]["y"] = pinned
        elif tok:
            patch["data"][i]["visible"] = "legendonly" if tok in hide else True
    for i, tok in enumerate(notes):
        if tok:
            patch["layout"]["annotations"][i]["visible"] = tok not in hide
    return patch


def revision(runs: Sequence[str], x: str, y: str, logx: bool, logy: bool) -> str:
    """The chart's uirevision: zoom survives updates until the runs, axes or scales change."""
    return f"{','.join(runs)}|{x}|{y}|{logx}|{logy}"


def trace_tokens(fig: Figure) -> list[str]:
    """The legend token of every trace of a figure, by trace index."""
    return [str(t.get("meta") or "") for t in fig["data"]]


def hidden_after_restyle(restyle: Any, tokens: Sequence[str], hidden: Sequence[str]) -> list[str]:
    """The hidden legend tokens after a plotly legend click (`restyleData`)."""
    if (
        not restyle
        or not isinstance(restyle, list)
        or len(restyle) < 2
        or not isinstance(restyle[0], dict)
    ):
        return list(hidden)
    vis = restyle[0].get("visible")
    if vis is None:
        return list(hidden)
    indices = restyle[1] if isinstance(restyle[1], list) else [restyle[1]]
    values = vis if isinstance(vis, list) else [vis] * len(indices)
    out = dict.fromkeys(hidden)
    for i, idx in enumerate(indices):
        if not isinstance(idx, int) or not 0 <= idx < len(tokens) or tokens[idx] in ("", "pinned"):
            continue
        v = values[i] if i < len(values) else values[-1]
        if v == "legendonly":
            out[tokens[idx]] = None
        else:
            out.pop(tokens[idx], None)
    return list(out)

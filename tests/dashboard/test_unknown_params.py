"""Issue 27 item 4: every ignored URL parameter is named on the page, however many; an unknown
run and an id that is no run id get one rule on every route: 404 with the same text."""

from __future__ import annotations

import html
from typing import Any

import pytest

from dashboard.context import AppContext
from dashboard.pages import run
from views.query.state import CompareView, IndexView, RunView
from views.unknown_runs import not_found_text

NOSUCH = (
    "run nosuchrun not in the store: ingest it (paretolens ingest PATH --run-id ID) or fetch "
    "it (paretolens fetch ID)"
)
INVALID = (
    "'<b>x' is not a run id (no markup, quotes, commas or control characters), so no run has it"
)


def test_every_unknown_key_is_named_with_its_values() -> None:
    _, notes = RunView.parse("unofficialRun=dsr1&y=nope&foo=1&bar=2,3&i_log=1&at=-3")
    assert [n.partition(":")[0] for n in notes] == [
        "ignored y=nope",
        "ignored at=-3",
        "ignored foo=1",
        "ignored bar=2,3",
    ]  # i_log (an InferenceX share-link key) and unofficialRun are the page's own
    assert notes[2:] == [
        "ignored foo=1: not a parameter of this page",
        "ignored bar=2,3: not a parameter of this page",
    ]
    assert IndexView.parse("q=x&unofficialRun=dsr1")[1] == [
        "ignored unofficialRun=dsr1: not a parameter of this page"
    ]
    assert CompareView.parse("base=dsr1&candidate=mtp&tab=x")[1] == [
        "ignored tab=x: not a parameter of this page"
    ]


def test_the_run_page_names_every_value_its_controls_cannot_show(ctx: AppContext) -> None:
    page = str(
        run.layout(ctx, "unofficialRun=dsr1&baseline=nosuchrun&hide=zz&model=zzz&y=nope&foo=1")
    )
    for said in (
        "ignored y=nope",
        "ignored foo=1: not a parameter of this page",
        "ignored hide=zz: no arm, envelope or baseline of this view has it",
        "ignored baseline=nosuchrun: run nosuchrun is not in the store; pick another run, or main",
        "model=zzz: no point of these runs has it, so this filter keeps nothing of it",
    ):
        assert said in page
    # the controls get the values they can show, so no dropdown drops one and rewrites the URL
    view = RunView(runs=("dsr1",), baseline="nosuchrun", hide=("zz",), model=("zzz",))
    shown, _ = run.unshown_values(ctx.source.run_data(view), view, {"dsr1", "mtp"})
    assert (shown.baseline, shown.hide, shown.model) == ("", (), ("zzz",))


@pytest.mark.parametrize(
    ("path", "status", "text"),
    [
        ("/inference?unofficialRun=nosuchrun", 404, NOSUCH),
        ("/points?unofficialRun=nosuchrun", 404, NOSUCH),
        ("/embed?unofficialRun=nosuchrun", 404, NOSUCH),
        ("/compare?base=nosuchrun&candidate=dsr1", 404, NOSUCH),
        ("/export/points.csv?unofficialRun=nosuchrun", 404, NOSUCH),
        ("/inference?unofficialRun=%3Cb%3Ex", 404, INVALID),
        ("/embed?unofficialRun=%3Cb%3Ex", 404, INVALID),
        ("/points?unofficialRun=%3Cb%3Ex", 404, INVALID),
        ("/export/points.csv?unofficialRun=%3Cb%3Ex", 404, INVALID),
        ("/inference?unofficialRun=dsr1", 200, None),
        ("/compare?base=main&candidate=dsr1", 200, None),
    ],
)
def test_unknown_runs_and_invalid_ids_are_404_on_every_route(
    client: Any, path: str, status: int, text: str | None
) -> None:
    resp = client.get(path)
    assert resp.status_code == status
    if text is not None:
        body = resp.get_data(as_text=True)
        # the export and embed bodies say it themselves; a page's body is drawn by its layout
        if path.startswith(("/export", "/embed")):
            assert text in html.unescape(body)


def test_one_text_for_unknown_and_invalid_ids() -> None:
    assert not_found_text(["nosuchrun"], {"dsr1"}) == NOSUCH
    assert not_found_text(["<b>x"], {"dsr1"}) == INVALID
    assert not_found_text(["dsr1"], {"dsr1"}) is None

"""Every page renders from its URL alone (the layout Dash fetches names its page, `layout_url`)."""

from __future__ import annotations

import json
from typing import Any

from dashboard.app import layout_url, render
from dashboard.context import AppContext

from .test_callbacks import _text


def _layout(client: Any, page: str | None) -> dict[str, Any]:
    resp = client.get(layout_url(page) if page else "/_dash-layout")
    assert resp.status_code == 200
    return json.loads(resp.get_data(as_text=True))


def _ids(node: Any, out: set[str]) -> set[str]:
    if isinstance(node, dict):
        if isinstance(node.get("props"), dict) and isinstance(node["props"].get("id"), str):
            out.add(node["props"]["id"])
        for v in node.values():
            _ids(v, out)
    elif isinstance(node, list):
        for v in node:
            _ids(v, out)
    return out


def test_the_run_page_has_its_first_chart_in_the_initial_layout(client: Any) -> None:
    ids = _ids(_layout(client, "/inference?unofficialRun=dsr1"), set())
    assert {"main-chart", "second-chart", "detail", "banner", "notes"} - ids <= {"banner"}
    layout = json.dumps(_layout(client, "/inference?UnofficialRuns=dsr1"))
    assert '"type": "Graph"' in layout and "TP4 EP4 | no spec | kv dram" in layout


def test_a_layout_request_naming_no_page_gets_the_shell_that_routes_itself(client: Any) -> None:
    # Dash's own first look at the layout (`_setup_server`, on whatever request comes first)
    # names no page: it gets the shell, whose router callback draws the page from its location.
    assert "route-location" in _ids(_layout(client, None), set())
    assert "route-location" not in _ids(_layout(client, "/"), set())


def test_a_referer_alone_does_not_pick_the_page(client: Any) -> None:
    for referer in (
        "http://localhost/inference?unofficialRun=dsr1",
        "http://localhost/jobs",
        "/compare?base=dsr1&candidate=dsr1-rerun",
    ):
        resp = client.get("/_dash-layout", headers={"Referer": referer})
        assert resp.status_code == 200
        ids = _ids(json.loads(resp.get_data(as_text=True)), set())
        # the shell only: no page was drawn into it, whatever the Referer names
        assert "route-location" in ids
        assert ids.isdisjoint({"main-chart", "second-chart", "detail", "notes"})
        assert "No jobs yet" not in resp.get_data(as_text=True)
    # the same shell as a request with no header at all
    bare = client.get("/_dash-layout").get_data()
    assert (
        client.get("/_dash-layout", headers={"Referer": "http://localhost/jobs"}).get_data() == bare
    )


def test_a_layout_request_names_its_page(client: Any) -> None:
    resp = client.get(layout_url("/inference?unofficialRun=dsr1"))
    assert resp.status_code == 200
    ids = _ids(json.loads(resp.get_data(as_text=True)), set())
    assert {"main-chart", "second-chart", "detail", "notes"} <= ids
    assert "route-location" not in ids
    # the name in the request wins over a Referer naming another page
    resp = client.get(layout_url("/jobs"), headers={"Referer": "http://localhost/compare"})
    assert "No jobs yet" in resp.get_data(as_text=True)
    # a page of another site is no page here: the shell routes itself
    resp = client.get(layout_url("http://evil.example/inference?unofficialRun=dsr1"))
    assert "route-location" in _ids(json.loads(resp.get_data(as_text=True)), set())
    # a page over the length limits: the request itself is over them
    assert client.get(layout_url("/inference?unofficialRun=" + "x" * 9000)).status_code == 414


def test_the_preload_names_the_page_and_a_missing_page_does_not_echo_its_query(
    client: Any,
) -> None:
    run = client.get("/inference?unofficialRun=dsr1").get_data(as_text=True)
    assert f'<link rel="preload" href="{layout_url("/inference?unofficialRun=dsr1")}"' in run
    # no page here: the preload names the path only (what was typed after `?` may be a secret)
    resp = client.get("/no/such/page?token=s3cret-value")
    body = resp.get_data(as_text=True)
    assert resp.status_code == 404 and "s3cret" not in body
    assert f'<link rel="preload" href="{layout_url("/no/such/page")}"' in body


def test_run_banner_shows_metadata_and_rejects(ctx: AppContext) -> None:
    _active, page = render(ctx, "/inference", "unofficialRun=29003473063,mtp")
    text = _text(page)
    assert "kimi-k2.7-tp4" in text and "completed / success" in text and "6c128cd22b" in text
    assert "1 rejected file or row (not in the charts)" in text
    assert "unrecognised JSON document" in text
    assert "View run ↗" in str(page)


def test_a_run_not_in_the_store_says_how_to_ingest_it(ctx: AppContext) -> None:
    _active, page = render(ctx, "/inference", "unofficialRun=424242")
    text = _text(page)
    assert "Run 424242 not in the store" in text
    assert "no GitHub token is configured" in text
    assert f"paretolens fetch 424242 --store {ctx.source.store.root}" in text
    assert "paretolens ingest PATH --run-id 424242" in text


def test_a_partly_missing_overlay_still_shows_the_runs_it_has(ctx: AppContext) -> None:
    _active, page = render(ctx, "/inference", "unofficialRun=dsr1,424242")
    assert (
        "Not found: run 424242 not in the store: ingest it (paretolens ingest PATH --run-id ID) "
        "or fetch it (paretolens fetch ID); the other runs are shown"
    ) in _text(page)


def test_bad_url_values_are_reported_on_the_page(ctx: AppContext) -> None:
    _active, page = render(ctx, "/inference", "unofficialRun=dsr1&y=nope")
    assert "ignored y=nope" in _text(page)


def test_index_points_compare_jobs_and_not_found(ctx: AppContext) -> None:
    active, page = render(ctx, "/", "hw=b200")
    assert active == "runs" and "Runs (5 in" in _text(page)
    active, page = render(ctx, "/points", "unofficialRun=mtp")
    assert active == "run" and "3 points of run mtp" in _text(page)
    active, page = render(ctx, "/compare", "base=dsr1&candidate=dsr1-rerun")
    assert active == "compare" and "Frontier uplift per arm" in _text(page)
    active, page = render(ctx, "/compare", "")
    assert "Pick a base run and a candidate run." in _text(page)
    active, page = render(ctx, "/jobs", "")
    assert active == "jobs" and "No jobs yet" in _text(page)
    active, page = render(ctx, "/nowhere", "")
    assert active == "" and "No page at /nowhere." in _text(page)
    assert "No run id" in _text(render(ctx, "/inference", "")[1])


def test_the_launch_panel_is_off_unless_configured(ctx: AppContext) -> None:
    _active, page = render(ctx, "/inference", "unofficialRun=dsr1&tab=launch")
    text = _text(page)
    assert "Launching is off. Start the server with PARETOLENS_LAUNCH_ENABLED=true" in text
    assert '"disabled": true' in json.dumps(
        page.to_plotly_json(), default=lambda o: o.to_plotly_json()
    )


def test_each_page_loads_only_the_scripts_it_needs(
    client: Any, source: Any, monkeypatch: Any
) -> None:
    import dashboard.app

    run = client.get("/inference?unofficialRun=dsr1").get_data(as_text=True)
    assert "plotly-basic-4.1.1.min.js" in run and "plotly-gl2d" not in run
    assert "data-lazy-script" in run and "polyfill@" not in run and "dash_table/bundle" not in run
    assert "plotly-" not in client.get("/").get_data(as_text=True)
    assert "dash_ag_grid.v" in client.get("/").get_data(as_text=True)
    monkeypatch.setattr(dashboard.app, "WEBGL_THRESHOLD", 50)
    charts_of = dashboard.app.plotly_bundle(source)
    assert charts_of("/inference", "unofficialRun=dsr1") == "basic"
    assert charts_of("/inference", "unofficialRun=dsr1,dsr1-rerun") == "gl2d"
    assert charts_of("/compare", "base=dsr1&candidate=dsr1-rerun") == "gl2d"
    assert charts_of("/jobs", "") is None

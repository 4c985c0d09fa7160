"""The launch panel sends no programs: commands come from the server's launch options document.

The browser may choose points, backend and durations. A request that carries a command, to the
launch API or straight to the panel's Dash callback, is refused with HTTP 400 and says why; the
options document is validated when the app starts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import SecretStr

from dashboard.ids import control
from dashboard.launching import LaunchOptionsError
from ingest.pipeline import ingest_paths
from ingest.store import Store
from paretolens.settings import Settings
from runner import service
from tests.runner.support import FIXTURES

TOKEN = "launch-panel-test-token-0123456789"
RUN = "panel-run"
EVIL = ["bash", "-c", "touch /tmp/paretolens-pwned"]
SERVER_COMMANDS = "commands:\n  script: [bash, benchmarks/run_point.sh]\ntimeout_s: 1200\n"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("panel") / "store"
    ingest_paths([FIXTURES / "inferencex" / "agg_fixed_seq"], Store(root), run_id=RUN)
    return root


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    started: list[str] = []
    monkeypatch.setattr(service, "spawn_worker", lambda st, job_id, **kw: started.append(job_id))
    return started


def _settings(root: Path, options: Path | None) -> Settings:
    return Settings(
        store=root,
        host="127.0.0.1",
        token=SecretStr(TOKEN),
        github_token=None,
        launch_enabled=True,
        launch_options=options,
    )


def _app(root: Path, options_text: str | None = SERVER_COMMANDS) -> Any:
    from dashboard.app import create_app

    options = None
    if options_text is not None:
        options = root.parent / "launch.yaml"
        options.write_text(options_text)
    return create_app(Store(root), _settings(root, options))


def _jobs(root: Path) -> list[str]:
    return [st.id for st in service.list_jobs(Store(root))]


FORM = {"query": f"unofficialRun={RUN}", "backend": "local", "token": TOKEN}


def test_the_launch_api_takes_commands_from_the_server_document(
    base: Path, spawned: list[str]
) -> None:
    client = _app(base).server.test_client()
    resp = client.post("/api/launch", data={**FORM, "options": "timeout_s: 600\n"})
    assert resp.status_code == 202, resp.get_data(as_text=True)
    job = json.loads(resp.get_data(as_text=True))["job"]
    plan = service.get_job(Store(base), job).record.plan
    assert plan.commands is not None and plan.commands.script == [
        "bash",
        "benchmarks/run_point.sh",
    ]
    assert plan.timeout_s == 600  # the request's duration wins over the document's 1200
    assert spawned == [job]


@pytest.mark.parametrize(
    "form",
    [
        {"options": json.dumps({"commands": {"script": EVIL}})},
        {"options": "commands:\n  benchmark: [bash, -c, 'touch /tmp/paretolens-pwned']\n"},
        {"options": json.dumps({"slurm": {"time_limit_min": 5, "python": "/tmp/evil"}})},
        {"options": json.dumps({"env": {"LD_PRELOAD": "/tmp/evil.so"}})},
        {"commands": json.dumps({"script": EVIL})},
        {"script": "bash -c id"},
    ],
    ids=["options.commands", "options.benchmark", "options.slurm", "options.env", "commands", "script"],
)  # fmt: skip
def test_a_launch_request_carrying_a_command_is_refused_with_400(
    tmp_path: Path, base: Path, spawned: list[str], form: dict[str, str]
) -> None:
    client = _app(base).server.test_client()
    before = _jobs(base)
    resp = client.post("/api/launch", data={**FORM, **form})
    body = resp.get_data(as_text=True)
    assert resp.status_code == 400, body
    assert "may not carry" in body and "PARETOLENS_LAUNCH_OPTIONS" in body, body
    assert _jobs(base) == before and spawned == []
    # A JSON body is refused the same way.
    doc = {k: v for k, v in FORM.items() if k != "token"}
    doc |= {k: (yaml.safe_load(v) if k == "options" else v) for k, v in form.items()}
    resp = client.post("/api/launch", json=doc, headers={"X-Paretolens-Token": TOKEN})
    assert resp.status_code == 400 and "may not carry" in resp.get_data(as_text=True)
    assert _jobs(base) == before and spawned == []


def _callback_body(client: Any, options: Any) -> dict[str, Any]:
    """The body the launch panel's Dash callback receives, with these options."""
    deps = json.loads(client.get("/_dash-dependencies").get_data(as_text=True))
    dep = next(d for d in deps if "launch-result.children" in d["output"])
    outputs = [o.strip(".") for o in dep["output"].strip(".").split("...") if o]
    values = {
        "launch-source": "pruned",
        "launch-backend": "local",
        "launch-options": options,
        "launch-token": TOKEN,
        "points-grid": None,
    }
    state: list[Any] = []
    runs = {"id": control("runs"), "property": "value", "value": [RUN]}
    for s in dep["state"]:
        if s["id"].startswith("{"):  # the page's controls (pattern-matching ids)
            state.append([runs] if s["property"] == "value" else [{**runs, "value": runs["id"]}])
        else:
            state.append({"id": s["id"], "property": s["property"], "value": values[s["id"]]})
    return {
        "output": dep["output"],
        "outputs": [dict(zip(("id", "property"), o.split("."), strict=True)) for o in outputs],
        "inputs": [{"id": "launch-button", "property": "n_clicks", "value": 1}],
        "state": state,
        "changedPropIds": ["launch-button.n_clicks"],
    }


def test_the_panel_callback_refuses_a_command_with_400(base: Path, spawned: list[str]) -> None:
    client = _app(base).server.test_client()
    before = _jobs(base)
    evil = f"commands:\n  script: {json.dumps(EVIL)}\n"
    resp = client.post("/_dash-update-component", json=_callback_body(client, evil))
    body = resp.get_data(as_text=True)
    assert resp.status_code == 400, body
    assert "may not carry commands" in body and "PARETOLENS_LAUNCH_OPTIONS" in body
    assert _jobs(base) == before and spawned == []
    # The same callback with durations only launches, with the server's commands.
    ok = client.post("/_dash-update-component", json=_callback_body(client, "timeout_s: 900\n"))
    assert ok.status_code == 200, ok.get_data(as_text=True)
    assert "Launched job" in ok.get_data(as_text=True)
    (job,) = set(_jobs(base)) - set(before)
    plan = service.get_job(Store(base), job).record.plan
    assert plan.commands is not None and plan.commands.script[0] == "bash"
    assert plan.timeout_s == 900


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("commands: {script: [bash, run.sh], frobnicate: 1}\n", "commands.frobnicate"),
        ("slurm: {time_limit_min: 0}\n", "slurm.time_limit_min"),
        ("arms: []\n", "arms: not a plan field an options document sets"),
        ("- a list\n", "expected a mapping"),
    ],
)
def test_the_options_document_is_validated_at_start_up(base: Path, text: str, words: str) -> None:
    with pytest.raises(LaunchOptionsError) as err:
        _app(base, text)
    assert words in str(err.value) and "launch.yaml" in str(err.value)


def test_a_missing_options_document_named_by_the_setting_stops_the_start(base: Path) -> None:
    from dashboard.app import create_app

    with pytest.raises(LaunchOptionsError, match="does not exist"):
        create_app(Store(base), _settings(base, base.parent / "nope.yaml"))

"""Issue 29 (reliability and security, round three): the attack run's items 2-8 and 11-14, one
test each with the issue's repro as its input. Each test failed before its fix.

2. YAML alias bombs (a `paretolens.yaml`, a vLLM `--config`, the launch options document);
3. rich markup in file names crashed or was swallowed by the CLI;
4. terminal escapes in file names and model strings reached the terminal and the exports;
5. an unreadable subdirectory was skipped silently;
6. zips inside every limit still exhausted memory and disk;
7. a newline in a result string injected configuration into the pruned snippet;
8. 500s any client could cause;
11. wrong tokens from a foreign origin locked the real user out;
12. cancelling during the finish left the job and the run catalog disagreeing;
13. a run with 100k rejects gave a 20 MB page;
14. the worker liveness check made a starting worker give up.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from dashboard.app import layout_url
from ingest.pipeline import ingest_paths
from ingest.store import Store
from paretolens.settings import Settings
from tests.reliability import figures
from tests.reliability._support import FIXTURES, REPO

AGG = FIXTURES / "inferencex" / "agg_fixed_seq"
MULTITURN = FIXTURES / "inferencex" / "multiturn_runs"
SGLANG = FIXTURES / "wild" / "sglang_bench_serving" / "tonyli15_agg_n100_in128_out128_c8.jsonl"
TOKEN = "pl-tok-round3-8c2f1e9a7b"


def bomb(key: str) -> str:
    """The issue's 1 KB "billion laughs" as the value of `key`: nine levels of nine aliases,
    9^9 strings once expanded."""
    levels = "".join(
        f"  - &{name} [{', '.join([f'*{prev}'] * 9) if prev else ', '.join(['lol'] * 9)}]\n"
        for prev, name in zip(["", *"abcdefgh"], "abcdefghi", strict=True)
    )
    return f"{key}:\n{levels}"


BOMB = bomb("max-model-len")


def _settings(root: Path, **kw: Any) -> Settings:
    base: dict[str, Any] = {"store": root, "token": SecretStr(TOKEN), "launch_enabled": True}
    return Settings(**{**base, **kw})


def _client(root: Path, **kw: Any) -> Any:
    from dashboard.app import create_app

    return create_app(Store(root), _settings(root, **kw)).server.test_client()


# ---- 2. YAML alias bombs -----------------------------------------------------------------------


def test_a_yaml_alias_bomb_is_refused_and_the_good_file_beside_it_ingested(
    tmp_path: Path,
) -> None:
    assert len(bomb("model")) < 1100 and bomb("model").count("*") == 72
    src = tmp_path / "sweep"
    shutil.copytree(AGG, src / "good")
    bad = src / "bad"
    shutil.copytree(AGG, bad)
    (bad / "paretolens.yaml").write_text(bomb("model"))
    store = Store(tmp_path / "store")
    t0 = time.perf_counter()
    report = ingest_paths([src], store, run_id="bomb")
    took = time.perf_counter() - t0
    assert took < 10, took
    [rej] = [r for r in report.rejected if r.path.endswith("paretolens.yaml")]
    assert rej.path == "bad/paretolens.yaml"
    assert "alias bomb" in rej.reason and "10,000" in rej.reason, rej.reason
    # Every result file is read: the good directory's and the bad one's (only the defaults
    # document is refused; its results need none). The bad directory's files are byte copies
    # of the good one's, so each measurement is one point, its copy named in the report.
    assert len(store.points(["bomb"])) == len(list(AGG.glob("*.json"))) == 3
    read = {o.path for o in report.accepted_files + report.duplicate_files}
    assert {f"{d}/{p.name}" for d in ("good", "bad") for p in AGG.glob("*.json")} <= read, read

    # The same bomb as a multiturn run's vLLM --config file: that run is rejected naming it, the
    # other run directory beside it is stored.
    mt = tmp_path / "mt"
    shutil.copytree(MULTITURN, mt)
    [bomb_dir, *_] = sorted(p for p in mt.iterdir() if (p / "config.yaml").exists())
    (bomb_dir / "config.yaml").write_text(BOMB)
    good = Store(tmp_path / "good-store")
    ingest_paths([MULTITURN], good, run_id="mt")
    mt_store = Store(tmp_path / "mt-store")
    report = ingest_paths([mt], mt_store, run_id="mt")
    [rej] = [r for r in report.rejected if "alias bomb" in r.reason]
    assert rej.path == f"{bomb_dir.name}/config.yaml" and rej.reason.startswith("vLLM --config")
    # The sweep's aggregate beside it and the other run directory are stored as without it.
    assert len(mt_store.points(["mt"])) == len(good.points(["mt"])) == 46
    figures.add("round_three", "checks")


def test_an_alias_bomb_in_the_launch_options_document_does_not_slow_or_break_pages(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "store")
    ingest_paths([AGG], store, run_id="r1")
    (tmp_path / "store" / "launch-options.yaml").write_text(bomb("timeout_s"))
    # With launching on, the document is checked when the app starts: it does not start, and
    # says why at once (it started before, and every run page then took 10 s and answered 500).
    from dashboard.app import create_app
    from dashboard.launching import LaunchOptionsError

    t0 = time.perf_counter()
    with pytest.raises(LaunchOptionsError, match=r"launch-options.yaml: .*alias bomb"):
        create_app(store, _settings(tmp_path / "store"))
    assert time.perf_counter() - t0 < 3
    # With launching off, the run page loads quickly and the launch panel says what is wrong.
    client = _client(tmp_path / "store", launch_enabled=False)
    for _ in range(3):
        t0 = time.perf_counter()
        layout = client.get(layout_url("/inference?unofficialRun=r1"))
        took = time.perf_counter() - t0
        assert layout.status_code == 200, layout.get_data(as_text=True)[:300]
        assert took < 3, took
        body = layout.get_data(as_text=True)
        assert "alias bomb" in body
    figures.add("round_three", "checks")


def test_the_yaml_loader_keeps_ordinary_anchors_and_refuses_recursion() -> None:
    from ingest.untrusted.yaml_load import YAMLBombError, load_yaml

    doc = "base: &d {tp: 8, ep: 1}\narm:\n  <<: *d\n  conc: 64\nboth: [*d, *d]\n"
    assert load_yaml(doc) == {
        "base": {"tp": 8, "ep": 1},
        "arm": {"tp": 8, "ep": 1, "conc": 64},
        "both": [{"tp": 8, "ep": 1}, {"tp": 8, "ep": 1}],
    }
    with pytest.raises(YAMLBombError, match="recursive"):
        load_yaml("a: &a [*a]")
    with pytest.raises(YAMLBombError, match="alias bomb"):
        load_yaml(bomb("x"))


# ---- 3, 4. rich markup and terminal escapes ----------------------------------------------------

RAW_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # newline and tab may lay out text
AGG_FILE = sorted(AGG.glob("*.json"))[0]


def _cli(*args: str) -> Any:
    from paretolens.cli import app

    return CliRunner().invoke(app, list(args))


def test_rich_markup_in_file_names_is_printed_as_written(tmp_path: Path) -> None:
    src = tmp_path / "in"
    (src / "a[").mkdir(parents=True)
    shutil.copy(SGLANG, src / "a[" / "x].json")
    (src / "a[" / "x].md").write_text("# notes\n")  # read, nothing to store: listed by name
    (src / "[bold red]b.json").write_text("{not json")
    store = str(tmp_path / "store")
    out = _cli("ingest", str(src), "--run-id", "markup", "--store", store)
    assert out.exception is None or isinstance(out.exception, SystemExit), out.exception
    assert "MarkupError" not in out.output and "Traceback" not in out.output
    assert out.exit_code == 1, out.output  # the broken file is a reject; the other was stored
    assert "[bold red]b.json" in out.output  # the name as written, not "b.json" in bold red
    assert "a[/x].md" in out.output
    assert len(Store(tmp_path / "store").points(["markup"])) == 1
    listed = _cli("rejects", "--store", store)
    assert listed.exit_code == 0 and "[bold red]b.json" in listed.output, listed.output
    figures.add("round_three", "checks")


def _with_controls_rules_off(mp: pytest.MonkeyPatch) -> None:
    """Ingest as before control characters were refused (a store written then)."""
    from ingest.normalize import rules

    mp.setattr(
        rules,
        "RULES",
        tuple(r for r in rules.RULES if type(r.test).__name__ != "HasControl"),
    )


ESC_MODEL = "moonshotai/Kimi\x1b]0;pwned\x07\x1b[2J-K2.5\x00\x9b31m"


def test_terminal_escapes_never_reach_the_terminal_or_the_text_exports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "in"
    src.mkdir()
    (src / "bad\x1b]0;owned\x07.json").write_text("{not json")
    doc = json.loads(AGG_FILE.read_text())
    (src / "esc_model.json").write_text(json.dumps({**doc, "model": ESC_MODEL}))
    root = tmp_path / "store"
    # Now: the model string is refused at ingest, naming the field and the character.
    report = ingest_paths([src], Store(root), run_id="esc")
    reasons = {r.path: (r.field, r.reason) for r in report.rejected}
    assert reasons["esc_model.json"] == (
        "model",
        "holds a control character (\\x1b); names, labels and identity fields may not",
    )
    # A store written before that rule holds it: every output escapes it.
    old = tmp_path / "old"
    with monkeypatch.context() as mp:
        _with_controls_rules_off(mp)
        ingest_paths([src], Store(old), run_id="esc")
    assert Store(old).points(["esc"])["model"].to_list() == [ESC_MODEL]
    outputs: dict[str, str] = {}
    for store in (str(root), str(old)):
        for fmt in ("table", "csv", "json"):
            outputs[f"rejects {fmt} {store}"] = _cli(
                "rejects", "--format", fmt, "--store", store
            ).output
    for fmt in ("table", "csv", "json"):
        outputs[f"points {fmt}"] = _cli("points", "--format", fmt, "--store", str(old)).output
    for fmt in ("table", "csv", "markdown"):
        outputs[f"analyze {fmt}"] = _cli(
            "analyze", "esc", "--format", fmt, "--store", str(old)
        ).output
    client = _client(old)
    for table in ("points", "rejects"):
        for ext in ("md", "csv"):
            r = client.get(f"/export/{table}.{ext}?unofficialRun=esc")
            assert r.status_code == 200, (table, ext, r.status_code)
            outputs[f"/export/{table}.{ext}"] = r.get_data(as_text=True)
    for name, text in outputs.items():
        assert not RAW_CONTROLS.search(text), (name, RAW_CONTROLS.search(text))
    # ... and shows them as escapes, so the name is still recognisable.
    assert "bad\\x1b]0;owned\\x07.json" in outputs[f"rejects csv {root}"]
    assert "Kimi\\x1b]0;pwned\\x07\\x1b[2J-K2.5\\x00\\x9b31m" in outputs["points csv"]
    assert "Kimi\\\\x1b" in outputs["/export/points.md"]  # a markdown backslash, shown as \x1b
    figures.add("round_three", "checks")


# ---- 7. a newline in a result string and the pruned snippet -------------------------------------

EVIL = "EAGLE\nevil-entry:\n  image: attacker/evil:latest\n#"


def _evil_sweep(root: Path) -> Path:
    """The issue's repro: a good SGLang result (with the recipe fields in a paretolens.yaml), and
    the same result whose `speculative_algorithm` holds a newline and a master-config entry."""
    text = SGLANG.read_text()
    assert '"speculative_algorithm": null' in text
    (root / "evil").mkdir(parents=True)
    (root / "evil" / "r.jsonl").write_text(
        text.replace(
            '"speculative_algorithm": null', '"speculative_algorithm": ' + json.dumps(EVIL)
        )
    )
    (root / "good").mkdir()
    shutil.copy(SGLANG, root / "good" / "r.jsonl")
    (root / "good" / "paretolens.yaml").write_text(
        "image: lmsysorg/sglang:v0.5.2\nmodel_prefix: qwen2.5-3b\nprecision: bf16\n"
    )
    return root


def test_a_newline_in_a_result_string_cannot_inject_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import yaml

    src = _evil_sweep(tmp_path / "in")
    report = ingest_paths([src], Store(tmp_path / "store"), run_id="r", defaults={"hw": "h100"})
    [rej] = report.rejected
    assert (rej.path, rej.field) == ("evil/r.jsonl", "spec_method")
    assert (
        rej.reason == "holds a control character (\\n); names, labels and identity fields may not"
    )
    assert report.accepted == 1

    # A store written before the rule: the snippet and the line stay inert.
    with monkeypatch.context() as mp:
        _with_controls_rules_off(mp)
        ingest_paths([src], Store(tmp_path / "old"), run_id="r", defaults={"hw": "h100"})
    client = _client(tmp_path / "old")
    body = client.get("/export/pruned.yaml?unofficialRun=r").get_data(as_text=True)
    assert body.startswith("# not exported: TP1 EP1 | eagle\\nevil-entry:\\n  image: ")
    assert "\nevil-entry" not in body and "attacker/evil" not in "".join(
        line for line in body.splitlines() if not line.startswith("#")
    )
    doc = yaml.safe_load(body)
    assert list(doc) == ["qwen2.5-3b-bf16-h100-sglang"]
    assert doc["qwen2.5-3b-bf16-h100-sglang"]["image"] == "lmsysorg/sglang:v0.5.2"
    line = client.get("/export/pruned.txt?unofficialRun=r").get_data(as_text=True)
    assert line.count("\n") <= 1 and line.startswith("# no single test-config line")
    figures.add("round_three", "checks")


def test_the_dispatch_line_is_built_as_quoted_words(monkeypatch: pytest.MonkeyPatch) -> None:
    import shlex

    from analysis.sweep.export import dispatch_command

    class _Arm:
        config_key = "key; rm -rf ~\nwhoami"
        conc_list = (8, 16)

    class _Pruned:
        arms = (_Arm(),)

    import analysis.sweep.export as export

    # A line is written only when one runs exactly the kept points; say this one does.
    monkeypatch.setattr(export, "dispatch_problem", lambda p, d=0.8: None)
    line = dispatch_command(_Pruned(), ("configs/nvidia-master.yaml",))  # type: ignore[arg-type]
    assert shlex.split(line) == [
        "test-config",
        "--config-keys",
        "key; rm -rf ~\nwhoami",
        "--conc",
        "8",
        "16",
        "--config-files",
        "configs/nvidia-master.yaml",
        "--runner-config",
        "configs/runners.yaml",
    ]


# ---- 5. an unreadable subdirectory -------------------------------------------------------------

# Run the CLI as an unprivileged user: root reads a mode-000 directory anyway. The interpreter
# lives under /root here, so the child imports everything (an ingest of a readable copy) as
# root, then drops to `nobody` and ingests the input with the locked directory.
_AS_NOBODY = """
import os, sys
from paretolens.cli import app
def run(args):
    try:
        app(args)
    except SystemExit as e:
        return e.code
    return 0
run(["ingest", sys.argv[1], "--run-id", "warm", "--store", sys.argv[3]])
if os.geteuid() == 0:
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)
assert os.geteuid() != 0
sys.stdout.flush()
print("EXIT", run(["ingest", sys.argv[2], "--run-id", "locked", "--json", "--store", sys.argv[4]]))
"""


def test_an_unreadable_subdirectory_is_a_reject(tmp_path: Path) -> None:
    base = Path(tempfile.mkdtemp(prefix="paretolens-unreadable-"))  # outside root's 0700 tmp
    try:
        base.chmod(0o755)
        src = base / "in"
        shutil.copytree(AGG, src / "good")
        shutil.copytree(AGG, src / "locked")
        shutil.copytree(src, base / "warm")
        store = base / "store"
        store.mkdir()
        if os.geteuid() == 0:
            for p in [src, *src.rglob("*")]:
                p.chmod(0o755 if p.is_dir() else 0o644)
            os.chown(store, 65534, 65534)
        (src / "locked").chmod(0)
        out = subprocess.run(
            [
                sys.executable,
                "-c",
                _AS_NOBODY,
                str(base / "warm"),
                str(src),
                str(base / "ws"),
                str(store),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=REPO,
        )
        assert out.stdout.rstrip().endswith("EXIT 1"), out.stdout[-2000:] + out.stderr[-2000:]
        report = json.loads(out.stdout[out.stdout.index("{") : out.stdout.rindex("}") + 1])
        assert [(r["path"], r["reason"]) for r in report["rejected"]] == [
            (
                "locked/",
                "cannot read directory: Permission denied; nothing under it was read (give the "
                "user running ingest permission to list it)",
            )
        ]
        assert report["accepted"] == 3
    finally:
        (base / "in" / "locked").chmod(0o755)
        shutil.rmtree(base)
    figures.add("round_three", "checks")


# ---- 11. cross-site lockout ----------------------------------------------------------------------


def test_wrong_tokens_from_another_site_do_not_lock_out_the_real_user(tmp_path: Path) -> None:
    from dashboard import auth

    root = tmp_path / "store"
    ingest_paths([AGG], Store(root), run_id="r1")
    client = _client(root)
    url = "/api/jobs/j-20260101-000000-abcdef/cancel"
    evil = {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}
    # The repro: a page on evil.example posts wrong tokens from the user's browser
    # (so from 127.0.0.1), paced to hold the lockout.
    codes = [
        client.post(url, headers={**evil, auth.TOKEN_HEADER: f"wrong-{i}"}).status_code
        for i in range(3 * auth.FREE_WRONG_TOKENS)
    ]
    assert codes == [403] * len(codes)
    only_origin = client.post(
        url, headers={"Origin": "http://evil.example", auth.TOKEN_HEADER: "wrong"}
    )
    assert only_origin.status_code == 403
    assert "another site" in only_origin.get_data(as_text=True)
    # The real user, on the app's own page, is not held up: the token is right (the job is
    # unknown, hence 404, not 403 or 429).
    own = {"Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"}
    r = client.post(url, headers={**own, auth.TOKEN_HEADER: TOKEN})
    assert r.status_code == 404, r.get_data(as_text=True)
    # Wrong tokens from the app's own origin still count.
    same = [
        client.post(url, headers={**own, auth.TOKEN_HEADER: f"w{i}"}).status_code
        for i in range(auth.FREE_WRONG_TOKENS + 1)
    ]
    assert same[-1] == 429
    figures.add("round_three", "checks")


# ---- 14. the worker liveness check and a starting worker ----------------------------------------

# A look (`JobTable.worker_alive` -> `is_held`) takes the worker lock for a moment; on a busy
# machine the looking process can be descheduled for a while inside that moment. This one is
# held there for 0.3 s, as a preempted look would be.
_LOOK = """
import sys, time
from pathlib import Path
from runner.locks import hold
with hold(Path(sys.argv[1]), wait=False):
    print("looking", flush=True)
    time.sleep(0.3)
"""


def test_a_liveness_check_does_not_make_a_starting_worker_give_up(tmp_path: Path) -> None:
    from runner.errors import JobBusy
    from runner.jobs import JobTable
    from runner.plan import parse_plan
    from tests.runner.support import serve_commands

    store = Store(tmp_path / "store")
    plan = parse_plan(
        {
            "name": "live",
            "defaults": {"model": "m/x", "isl": 1024, "osl": 1024, "framework": "vllm"},
            "arms": [{"concs": [1]}],
            "commands": serve_commands(),
        }
    )
    table = JobTable(store)
    job = table.create(plan, "local")
    lock = table.job_dir(job.id) / "worker.lock"
    for _ in range(3):
        look = subprocess.Popen(
            [sys.executable, "-c", _LOOK, str(lock)], cwd=REPO, stdout=subprocess.PIPE, text=True
        )
        assert look.stdout is not None and look.stdout.readline() == "looking\n"
        # A worker starting now, while the other process looks: it starts (it gave up before).
        t0 = time.monotonic()
        with table.worker_lock(job.id):
            assert table.get(job.id).worker["pid"] == os.getpid()
        assert time.monotonic() - t0 < 1.0
        look.communicate(timeout=30)
    # A live worker is still seen, and a second one still refused.
    with table.worker_lock(job.id):
        assert table.worker_alive(job.id)
        with pytest.raises(JobBusy), table.worker_lock(job.id):
            pass
    assert not table.worker_alive(job.id)
    figures.add("round_three", "checks")


# ---- 12. cancel during the finish ----------------------------------------------------------------


def _finished_job(root: Path) -> tuple[Any, str]:
    """A local job whose every point succeeded and was ingested (its run in the store), as the
    worker holds it just before it finishes."""
    from runner.jobs import JobTable, PointState
    from runner.plan import parse_plan
    from runner.worker import run_meta
    from tests.runner.support import serve_commands

    store = Store(root)
    plan = parse_plan(
        {
            "name": "fin",
            "defaults": {"model": "m/x", "isl": 1024, "osl": 1024, "framework": "vllm"},
            "arms": [{"concs": [1, 2]}],
            "commands": serve_commands(),
        }
    )
    table = JobTable(store)
    job = table.create(plan, "local")
    ingest_paths([AGG], store, run_id=job.run_id, run_meta=run_meta(job, in_progress=True))

    def done(r: Any) -> None:
        for p in r.points:
            p.state, p.ingested = PointState.SUCCEEDED, True

    table.update(job.id, done)
    return table, job.id


def test_a_cancel_during_the_finish_leaves_the_job_and_the_catalog_agreeing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from ingest.contract.schema import RunCol
    from runner import service, worker
    from runner.jobs import JobState
    from runner.service import Caller
    from tests.runner.support import FakeSettings

    table, job_id = _finished_job(tmp_path / "store")
    store = table.store
    # The repro: the cancel arrives right after the last point is ingested, while the
    # worker finishes (here: just after the catalog write, the moment it used to lose).
    cancels: list[threading.Thread] = []
    real_upsert = Store.upsert_run

    def upsert_then_cancel(self: Store, row: dict[str, Any]) -> None:
        real_upsert(self, row)
        if not cancels:
            t = threading.Thread(
                target=service.cancel_job,
                args=(store, job_id, FakeSettings()),
                kwargs={"caller": Caller.CLI},
            )
            cancels.append(t)
            t.start()
            t.join(timeout=1.0)  # it used to flag the job before the finish wrote its state

    monkeypatch.setattr(Store, "upsert_run", upsert_then_cancel)
    with table.worker_lock(job_id):
        worker._finish(table, job_id)
    cancels[0].join(timeout=30)
    assert not cancels[0].is_alive()
    job = table.get(job_id)
    catalog = Store(tmp_path / "store").runs().filter(pl.col(RunCol.RUN_ID) == job.run_id)
    # Every point succeeded: the job and its run both say so.
    assert job.state == JobState.SUCCEEDED
    assert catalog[RunCol.CONCLUSION].to_list() == ["success"]
    assert catalog[RunCol.STATUS].to_list() == ["completed"]
    # A cancel after the job finished changes nothing.
    st = service.cancel_job(store, job_id, FakeSettings(), caller=Caller.CLI)
    assert st.state == JobState.SUCCEEDED and not table.get(job_id).cancel_requested
    figures.add("round_three", "checks")


# ---- 13. a run with 100k rejects -----------------------------------------------------------------


def test_a_run_with_100k_rejects_renders_a_bounded_page(tmp_path: Path) -> None:
    root = tmp_path / "store"
    store = Store(root)
    src = tmp_path / "in"
    shutil.copytree(AGG, src)
    (src / "broken.json").write_text("{not json")
    ingest_paths([src], store, run_id="big")
    [real] = store.rejects(["big"]).to_dicts()
    # The run: 100k rejects (the real reject, one per file name: a sweep of broken files).
    n = 100_000
    many = pl.DataFrame(
        {
            **{k: [v] * n for k, v in real.items()},
            "path": [f"broken-{i:06d}.json" for i in range(n)],
        },
        schema=store.rejects(["big"]).schema,
    )
    with store.lock():
        store.clear_rejects("big", ["broken.json"])
        store.add_rejects(many)
    assert store.rejects(["big"]).height == n
    client = _client(root)
    sizes = {}
    t0 = time.perf_counter()
    for tab in ("", "&tab=rejects"):
        page = f"/inference?unofficialRun=big{tab}"
        html = client.get(page)
        layout = client.get(layout_url(page))
        assert html.status_code == layout.status_code == 200
        sizes[f"html{tab}"] = len(html.get_data())
        sizes[f"layout{tab}"] = len(layout.get_data())
        body = layout.get_data(as_text=True)
        assert "broken-000000.json" in body and "broken-099999.json" not in body
        assert f"and 99,950 more (99,950 × {real['reason'][:40]}" in body
    took = time.perf_counter() - t0
    assert max(sizes.values()) < 1_000_000, sizes  # it was 20.5 MB (HTML) and 41 MB (layout)
    # The whole list is exported.
    csv = client.get("/export/rejects.csv?unofficialRun=big").get_data(as_text=True)
    assert csv.count("\n") == n + 1
    figures.add("round_three", "checks")
    figures.put("round_three", "rejects_page_bytes", max(sizes.values()))
    figures.put("round_three", "rejects_page_s", round(took, 2))


# ---- 8. 500s any client can cause, and the fuzz of every callback and route ----------------------

LONG_ID = "a" * 300


def test_long_run_ids_and_history_without_arm_are_not_500s(tmp_path: Path) -> None:
    root = tmp_path / "store"
    ingest_paths([AGG], Store(root), run_id="r1")
    client = _client(root)
    # The repro: a 300-character run id ("file name too long") in the layout request's
    # page, /embed and baseline=.
    # A run not in the store is a 404 with the clear text (one rule on every route); an
    # unknown baseline beside a known run is named on the run's page.
    for page, code in (
        (f"/inference?unofficialRun={LONG_ID}", 404),
        (f"/inference?unofficialRun=r1&baseline={LONG_ID}", 200),
    ):
        r = client.get(layout_url(page))
        assert r.status_code == 200, (page, r.status_code)
        got = client.get(page)
        assert got.status_code == code, (page, got.status_code)
        if code == 404:  # the page's text comes with its layout
            assert f"run {LONG_ID} not in the store" in r.get_data(as_text=True)
    body = client.get(layout_url(f"/inference?unofficialRun=r1&baseline={LONG_ID}")).get_data(
        as_text=True
    )
    assert f"ignored baseline={LONG_ID}: run {LONG_ID} is not in the store" in body
    assert client.get(f"/embed?unofficialRun={LONG_ID}").status_code == 404
    # /export/history.* without arm or at: a 400 saying what the query needs.
    for ext in ("csv", "json", "md", "parquet"):
        r = client.get(f"/export/history.{ext}?unofficialRun=r1")
        assert r.status_code == 400 and "arm=<arm id> and at=<x>" in r.get_data(as_text=True)
    out = _cli("table", "history", "--store", str(root))
    assert out.exit_code == 2 and "Traceback" not in out.output
    assert "error: the query needs arm=<arm id> and at=<x>" in " ".join(out.output.split())
    figures.add("round_three", "checks")


_ODD = [
    "",
    LONG_ID,
    "é\u202e💥",
    "\x00\x1b[2J",
    "-1",
    "1e309",
    "nan",
    "[]",
    "r1,r1,r1",
    "../../etc",
]
_QUERY_KEYS = (
    "unofficialRun", "unofficialRuns", "runs", "y", "x", "x2", "model", "scenario", "seq", "hw",
    "precision", "framework", "spec", "offload", "arm", "hide", "logx", "logy", "frontier_only",
    "labels", "envelope", "at", "slo", "point", "ab", "tab", "neighbours", "arm_frontier",
    "master", "baseline", "hwcost", "q", "branch", "status", "since", "until", "base",
    "candidate", "job", "stream",
)  # fmt: skip
_PAGES = ("/", "/inference", "/compare", "/points", "/jobs", "/history", "/embed")
_BAD_BODIES: tuple[Any, ...] = (
    None, [], "x", 7, {}, {"output": 5}, {"output": "nope.children"},
    {"output": "page.children", "inputs": "x"}, {"output": "page.children", "inputs": [1, 2, 3]},
)  # fmt: skip


def _callback_body(dep: dict[str, Any], values: list[Any]) -> dict[str, Any]:
    """A callback request shaped as the renderer shapes it, carrying `values`."""

    def parse(raw: Any) -> Any:
        return json.loads(raw) if isinstance(raw, str) and raw.startswith("{") else raw

    def concrete(i: Any) -> Any:
        if not isinstance(i, dict):
            return i
        return {k: ("x" if isinstance(v, list) else v) for k, v in i.items()}

    def every(i: Any) -> bool:
        return isinstance(i, dict) and any(v == ["ALL"] for v in i.values())

    def item(spec: dict[str, Any], v: Any, with_value: bool = True) -> Any:
        pid = parse(spec["id"])
        one = {"id": concrete(pid), "property": str(spec["property"]).split("@")[0]}
        if with_value:
            one["value"] = v
        return [one] if every(pid) else one

    out = dep["output"]
    parts = out[2:-2].split("...") if out.startswith("..") else [out]
    outs = [
        item(dict(zip(("id", "property"), p.rsplit(".", 1), strict=True)), None, False)
        for p in parts
    ]
    specs = [*dep["inputs"], *dep["state"]]
    items = [item(s, values[k % len(values)]) for k, s in enumerate(specs)]
    first = dep["inputs"][0] if dep["inputs"] else None
    return {
        "output": out,
        "outputs": outs if out.startswith("..") else outs[0],
        "inputs": items[: len(dep["inputs"])],
        "state": items[len(dep["inputs"]) :],
        "changedPropIds": [f"{first['id']}.{first['property']}"] if first else [],
    }


def test_fuzz_every_callback_and_route_finds_no_500(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import random
    from urllib.parse import quote

    root = tmp_path / "store"
    ingest_paths([AGG], Store(root), run_id="r1")
    client = _client(root)
    rng = random.Random(29)
    statuses: dict[int, int] = {}
    failures: list[str] = []

    def check(what: str, status: int) -> None:
        statuses[status] = statuses.get(status, 0) + 1
        if status >= 500:
            failures.append(f"{status} {what[:200]}")

    values: list[Any] = [
        *_ODD, None, 0, -1, 10**30, 1.5, True, [], ["a"] * 50, {}, {"a": [1, {"b": None}]},
        [[1]], [{}], [{"field": 3}], {"points": "x"}, {"points": [{"customdata": 5}]},
        "unofficialRun=r1&at=abc", "?" + "&".join(["unofficialRun=r1"] * 50),
    ]  # fmt: skip
    deps = client.get("/_dash-dependencies").get_json()
    for dep in deps:
        for k in range(len(values)):
            picked = [values[k], *rng.sample(values, 3)]
            r = client.post("/_dash-update-component", json=_callback_body(dep, picked))
            check(f"callback {dep['output']} {picked!r}", r.status_code)
    for bad in _BAD_BODIES:
        check(f"body {bad!r}", client.post("/_dash-update-component", json=bad).status_code)
    check("not json", client.post("/_dash-update-component", data=b"{{").status_code)
    n_callbacks = sum(statuses.values())

    # Every route: pages (and their layouts), exports of every table, the API, with long,
    # repeated and unicode parameters.
    from views.exports import EXPORTS

    def query(key: str, value: str, repeat: int = 1) -> str:
        return "&".join([f"{key}={quote(value)}"] * repeat)

    queries = [query(k, v) for k in _QUERY_KEYS for v in _ODD]
    queries += [query(k, "r1", 50) for k in ("unofficialRun", "arm", "hide", "at")]
    queries += ["unofficialRun=%ED%A0%80", "unofficialRun=r1&%FF=%FE", "a" * 9000]
    for q in queries:
        q = f"unofficialRun=r1&{q}" if rng.random() < 0.5 else q
        page = rng.choice(_PAGES)
        check(f"GET {page}?{q}", client.get(f"{page}?{q}").status_code)
        layout = client.get(layout_url(f"{page}?{q}"))
        check(f"layout {page}?{q}", layout.status_code)
        name = rng.choice(sorted(EXPORTS))
        fmt = rng.choice(("csv", "json", "md", "parquet", "yaml", "txt"))
        check(f"export {name}.{fmt}?{q}", client.get(f"/export/{name}.{fmt}?{q}").status_code)
    for odd in _ODD[1:]:
        segment = quote(odd, safe="")
        for url in (
            f"/export/{segment}",
            f"/export/points.{segment}",
            f"/api/fetch/{segment}/status",
            f"/{segment}",
            f"/_dash-component-suites/{segment}/{segment}",
        ):
            check(f"GET {url}", client.get(url).status_code)
        for url in (f"/api/fetch/{segment}", f"/api/jobs/{segment}/cancel", "/api/launch"):
            for data in ({"token": odd, "set": odd}, {"query": odd, "points": odd}):
                check(f"POST {url} {data}", client.post(url, data=data).status_code)
            check(
                f"POST {url} json", client.post(url, json={"options": odd, "x": [odd]}).status_code
            )
    assert not failures, failures[:20]
    # Refusals log one short line each, never a traceback.
    assert "Traceback" not in caplog.text
    assert max((len(r.getMessage()) for r in caplog.records), default=0) < 600
    total = sum(statuses.values())
    figures.put("round_three", "fuzz_requests", total)
    figures.put("round_three", "fuzz_callback_posts", n_callbacks)
    figures.put("round_three", "fuzz_callbacks", len(deps))
    figures.put("round_three", "fuzz_statuses", dict(sorted(statuses.items())))


# ---- 6. zips: one byte budget per batch, disk freed, temporary space swept after a kill ----------


def _zip_of(directory: Path, target: Path) -> Path:
    import zipfile

    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in sorted(directory.iterdir()):
            zf.write(f, f.name)
    return target


def test_zips_of_one_batch_share_one_byte_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ingest.sources import artifacts

    size = sum(f.stat().st_size for f in AGG.iterdir())
    zips = [_zip_of(AGG, tmp_path / f"sweep_{i}.zip") for i in "abc"]
    # The batch: three zips, each within the limit, in one ingest (it took 6.1 GB with
    # a 2 GiB limit). Here the limit is 2.5 zips' worth, so the third is over the batch budget.
    monkeypatch.setattr(artifacts, "MAX_ARCHIVE_BYTES", int(2.5 * size))
    report = ingest_paths(zips, Store(tmp_path / "store"), run_id="zips")
    [rej] = report.rejected
    assert rej.path == "sweep_c.zip"
    assert rej.reason == (
        f"unsafe or broken archive: declares {size} bytes uncompressed, over the batch's "
        f"{int(2.5 * size)} byte limit for archives ({int(0.5 * size)} left)"
    )
    assert len(report.accepted_files) + len(report.duplicate_files) == 6
    # Alone, each is within the limit.
    alone = ingest_paths([zips[2]], Store(tmp_path / "alone"), run_id="zips")
    assert not alone.rejected
    figures.add("round_three", "checks")


_KILLED_INGEST = """
import sys
from pathlib import Path
from ingest.pipeline import ingest_paths
from ingest.store import Store
ingest_paths([Path(sys.argv[1])], Store(Path(sys.argv[2])), run_id="big")
"""


def test_a_kill_during_extraction_leaves_nothing_after_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import signal
    import zipfile

    # A zip inside every limit that takes a while to read: 6 nested zips of 3 members of 8 MiB
    # of JSON-like text (about 40:1), 144 MiB in all. Members are read into memory one at a
    # time; a nested zip is the one thing written to the temporary space, one at a time.
    big = tmp_path / "bmk_big.zip"
    line = b'{"conc": 64, "tput_per_gpu": 1234.5, "median_intvty": 56.7, "n": %08d}\n'
    block = b"".join(line % i for i in range(8 * 1024 * 1024 // len(line % 0)))
    with zipfile.ZipFile(big, "w", zipfile.ZIP_STORED) as outer:
        for n in range(6):
            inner = tmp_path / f"bmk_part{n}.zip"
            with zipfile.ZipFile(inner, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
                for m in range(3):
                    zf.writestr(f"results/part{m:02d}.jsonl", block)
            outer.write(inner, f"bmk_part{n}.zip")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED_INGEST, str(big), str(tmp_path / "store")],
        cwd=REPO,
        env={**os.environ, "TMPDIR": str(tmp)},
    )
    deadline = time.monotonic() + 60
    extracted = 0
    while time.monotonic() < deadline and not extracted:
        extracted = sum(f.stat().st_size for f in tmp.rglob("*.zip") if f.is_file())
        time.sleep(0.01)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    left = list(tmp.iterdir())
    assert extracted and left, (extracted, left)  # killed mid-extraction
    # The next start (any ingest) sweeps it; a live ingest's space is kept.
    time.sleep(2.1)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    from ingest.sources.workspace import workspace

    with workspace() as live:
        (live / "x").write_text("in use")
        time.sleep(2.1)
        report = ingest_paths([AGG], Store(tmp_path / "other"), run_id="next")
        assert report.accepted == 3
        assert sorted(p.name for p in tmp.iterdir()) == [live.name, f"{live.name}.lock"]
    assert list(tmp.iterdir()) == []
    figures.add("round_three", "checks")


def test_a_zip_bomb_and_a_zip_over_the_batch_budget_are_refused_and_the_good_files_ingested(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import zipfile

    from ingest.sources import artifacts

    size = sum(f.stat().st_size for f in AGG.iterdir())  # 4577 bytes: the three aggregates
    good = _zip_of(AGG, tmp_path / "sweep_good.zip")
    # The bomb: 16.8 MB declaring 2 GiB; here 20 MiB of zeros in 20 KB (1000:1).
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("zeros.json", b"0" * (20 * 1024 * 1024))
    over = _zip_of(AGG, tmp_path / "sweep_over.zip")
    loose = tmp_path / "loose"
    shutil.copytree(MULTITURN, loose)
    # The batch may inflate 1.5 zips of the aggregates: the good one fits, the last does not.
    monkeypatch.setattr(artifacts, "MAX_ARCHIVE_BYTES", int(1.5 * size))
    report = ingest_paths([good, bomb, over, loose], Store(tmp_path / "store"), run_id="batch")
    reasons = {r.path: r.reason for r in report.rejected}
    assert reasons["bomb.zip"] == (
        "unsafe or broken archive: declares 20971520 bytes uncompressed, over the batch's "
        f"{int(1.5 * size)} byte limit for archives ({int(1.5 * size) - size} left)"
    )
    assert reasons["sweep_over.zip"] == (
        f"unsafe or broken archive: declares {size} bytes uncompressed, over the batch's "
        f"{int(1.5 * size)} byte limit for archives ({int(1.5 * size) - size} left)"
    )
    assert sorted(reasons) == ["bomb.zip", "sweep_over.zip"]
    # The good zip's three aggregates and the loose directory beside them are stored.
    got = {o.path for o in report.accepted_files}
    assert {f"sweep_good.zip/{f.name}" for f in AGG.iterdir()} <= got
    assert any(not p.startswith(("sweep_good.zip/", "sweep_over", "bomb")) for p in got), got
    # Within the budget, the bomb is still refused, by its ratio (20 MiB in 20 KB).
    monkeypatch.setattr(artifacts, "MAX_ARCHIVE_BYTES", 64 * 1024 * 1024)
    alone = ingest_paths([bomb, good], Store(tmp_path / "alone"), run_id="alone")
    [rej] = alone.rejected
    assert (rej.path, rej.reason) == (
        "bomb.zip",
        "unsafe or broken archive: its members compress 1029:1 together (zip bomb?)",
    )
    assert alone.accepted == 3
    figures.add("round_three", "checks")


def test_extraction_holds_one_member_at_a_time_within_the_batch_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import zipfile

    from ingest.sources import artifacts, zips

    # A run download zipped whole: 4 artifact zips of 3 members each (the aggregates), and a
    # zip whose directory says its member is 100 bytes while it inflates to 1 MiB.
    names = sorted(AGG.iterdir())
    run = tmp_path / "run.zip"
    inner_sizes = []
    with zipfile.ZipFile(run, "w", zipfile.ZIP_STORED) as outer:
        for n in range(4):
            inner = _zip_of(AGG, tmp_path / f"bmk_{n}.zip")
            inner_sizes.append(inner.stat().st_size)
            outer.write(inner, f"run/bmk_{n}.zip")
    liar = tmp_path / "liar.zip"
    with zipfile.ZipFile(liar, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("big.json", b" " * (1 << 20))
    raw = bytearray(liar.read_bytes())
    cd = raw.rfind(b"PK\x01\x02")
    raw[cd + 24 : cd + 28] = (100).to_bytes(4, "little")  # the declared uncompressed size
    liar.write_bytes(bytes(raw))

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    calls: list[tuple[str, int, int, int]] = []  # member, declared, bytes passed on, disk used
    real = zips.Archive._stream

    def spy(self: zips.Archive, member: zips.Member, sink: Any) -> int:
        got = [0]

        def counting(chunk: bytes) -> None:
            got[0] += len(chunk)
            sink(chunk)

        try:
            return real(self, member, counting)
        finally:
            disk = sum(f.stat().st_size for f in tmp.rglob("*") if f.is_file())
            calls.append((member.rel, member.size, got[0], disk))

    monkeypatch.setattr(zips.Archive, "_stream", spy)
    budget = sum(inner_sizes) + 3 * sum(f.stat().st_size for f in names) + 100
    monkeypatch.setattr(artifacts, "MAX_ARCHIVE_BYTES", budget)
    report = ingest_paths([run, liar], Store(tmp_path / "store"), run_id="r")
    # Three of the four artifacts are read (their same points stored once); the fourth is over
    # the budget.
    assert len(report.accepted_files) == 9, report
    reasons = {r.path: r.reason for r in report.rejected}
    assert reasons["liar.zip"] == (
        "unsafe or broken archive: member 'big.json' is corrupt: Bad CRC-32 for file 'big.json'"
    )
    assert "over the batch's" in reasons["bmk_3.zip"], reasons
    # One member at a time: each read passed on at most what the member declared, and the
    # whole batch no more than the budget.
    assert all(passed <= declared for _, declared, passed, _ in calls), calls
    assert sum(passed for _, _, passed, _ in calls) <= budget
    # The liar was read no further than its declared 100 bytes (whose checksum fails) and
    # nothing of it was passed on, never its whole MiB.
    assert [c[2] for c in calls if c[0] == "big.json"] == [0]
    # The disk held at most the nested zip being read (never the whole archive unpacked).
    assert max(c[3] for c in calls) <= max(inner_sizes), calls
    # The over-budget artifact was refused from its directory: none of its members was read.
    assert sum(1 for c in calls if c[0].endswith(".json")) == 9 + 1
    assert list(tmp.iterdir()) == []
    figures.add("round_three", "checks")

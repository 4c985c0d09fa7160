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

import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from ingest.pipeline import ingest_paths
from ingest.store import Store
from paretolens.settings import Settings
from tests.reliability import figures
from tests.reliability._support import FIXTURES

AGG = FIXTURES / "inferencex" / "agg_fixed_seq"
MULTITURN = FIXTURES / "inferencex" / "multiturn_runs"
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
    # Every result file is stored: the good directory's and the bad one's (only the defaults
    # document is refused; its results need none).
    assert len(store.points(["bomb"])) == 2 * len(list(AGG.glob("*.json"))) == 6

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
        layout = client.get(
            "/_dash-layout", headers={"Referer": "http://localhost/inference?unofficialRun=r1"}
        )
        took = time.perf_counter() - t0
        assert layout.status_code == 200, layout.get_data(as_text=True)[:300]
        assert took < 3, took
        body = layout.get_data(as_text=True)
        assert "alias bomb" in body
    figures.add("round_three", "checks")


def test_the_yaml_loader_keeps_ordinary_anchors_and_refuses_recursion() -> None:
    from ingest.yaml_safe import YAMLBombError, load_yaml

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

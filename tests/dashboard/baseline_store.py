"""A store for the baseline tests: the InferenceX app dump fixture (official runs, ingested with
`ingest.sources.dump.ingest_dump`) plus a synthetic dump written here with numbers chosen so the uplift
can be computed by hand.

Synthetic dump (config 3: h200 / vllm / synth1 / fp8 / TP8, 1k/1k; config 1: the fixture's
gaudi3 GLM-4.7 TP8):

- run 24000000000 (main, 2026-03-01): config 3 at conc 4 and 8 with throughput 999: older than
  24000000001, so the main-branch baseline must not pick it;
- run 24000000001 (main, 2026-03-20): config 3, conc 4 at (x 20, y 60), conc 8 at (10, 100);
- run 24000000002 (pr/tune, 2026-03-21), the run under test: config 3, conc 4 at (24, 70),
  conc 8 at (12, 110); config 1 at the fixture main run's four loads with the same latencies
  and every throughput x 1.2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ingest.sources.dump import ingest_dump
from ingest.store import Store

DUMP = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "inferencex_dump"
RUN = "24000000002"
OLD_MAIN = "24000000000"
NEW_MAIN = "24000000001"
DUMP_MAIN = "23000000001"  # the fixture dump's main-branch run (gaudi3 GLM-4.7 conc 1..8)
SCALE = 1.2


def _row(i: int, wr: int, cfg: int, conc: int, x: float, y: float) -> dict[str, Any]:
    tpot = 1.0 / x
    return {
        "id": str(i), "workflow_run_id": str(wr), "config_id": cfg, "benchmark_type": "single_turn",
        "date": "2026-03-20", "isl": 1024, "osl": 1024, "conc": conc, "image": None, "error": None,
        "server_log_id": None,
        "metrics": {
            "tput_per_gpu": y, "output_tput_per_gpu": y / 2, "input_tput_per_gpu": y / 2,
            "median_ttft": 0.2, "mean_ttft": 0.2, "p99_ttft": 0.3, "median_tpot": tpot,
            "mean_tpot": tpot, "p99_tpot": tpot * 1.1, "median_intvty": x, "mean_intvty": x,
            "p99_intvty": x * 0.9,
        },
    }  # fmt: skip


def _run(i: int, gid: str, branch: str, day: str) -> dict[str, Any]:
    return {
        "id": str(i), "github_run_id": gid, "run_attempt": 1, "name": "synthetic (test)",
        "status": "completed", "conclusion": "success", "head_sha": str(i) * 40,
        "head_branch": branch, "created_at": f"{day}T06:00:00.000Z", "date": day,
        "html_url": f"https://github.com/SemiAnalysisAI/InferenceX/actions/runs/{gid}",
    }  # fmt: skip


def write_dump(folder: Path) -> Path:
    """The synthetic dump described above, in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    configs = json.loads((DUMP / "configs.json").read_text())[:1]
    configs.append(
        {**configs[0], "id": 3, "hardware": "h200", "framework": "vllm", "model": "synth1",
         "precision": "fp8"}
    )  # fmt: skip
    (folder / "configs.json").write_text(json.dumps(configs))
    runs = [
        _run(1, OLD_MAIN, "main", "2026-03-01"),
        _run(2, NEW_MAIN, "main", "2026-03-20"),
        _run(3, RUN, "pr/tune", "2026-03-21"),
    ]
    (folder / "workflow_runs.json").write_text(json.dumps(runs))
    rows = [
        _row(1, 1, 3, 4, 20, 999), _row(2, 1, 3, 8, 10, 999),
        _row(3, 2, 3, 4, 20, 60), _row(4, 2, 3, 8, 10, 100),
        _row(5, 3, 3, 4, 24, 70), _row(6, 3, 3, 8, 12, 110),
    ]  # fmt: skip
    fixture = json.loads((DUMP / "benchmark_results.json").read_text())
    glm_main = [r for r in fixture if r["workflow_run_id"] == "10" and r["config_id"] == 1]
    for k, r in enumerate(glm_main):
        metrics = {m: v * SCALE if "tput" in m else v for m, v in r["metrics"].items()}
        rows.append({**r, "id": str(100 + k), "workflow_run_id": "3", "metrics": metrics})
    (folder / "benchmark_results.json").write_text(json.dumps(rows))
    return folder


def build(root: Path) -> Store:
    """The fixture dump and the synthetic dump, ingested into a store at `root / "store"`."""
    store = Store(root / "store")
    ingest_dump(DUMP, store)
    ingest_dump(write_dump(root / "synthetic-dump"), store)
    return store

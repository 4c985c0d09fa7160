"""The CLI's and the web's output bytes for the bundled sample runs, as a fixed list of requests.

`tests/test_outputs.py` compares them with the files in `tests/golden_outputs/`, written by
this module (`uv run python -m tests.outputs`) into `tests/golden_outputs/` with the code of the commit before the `views/`
move, so a move that claims to change no behaviour is held to the byte. Time stamps of ingest are
pinned, because they are the one thing that differs between two ingests of the same files.
When a later change means to alter an output, rewrite the files with the same command and say so
in its commit.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "tests" / "golden_outputs"
PINNED = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)

RUN_TABLES = ("points", "al", "deltas", "deltas_frontier", "at", "pruned", "rejects")
RUN_QUERIES = {
    "kimik2.5-mi355x-mtp": "unofficialRun=kimik2.5-mi355x-mtp",
    "dsr1-b200-multiturn": "unofficialRun=dsr1-b200-multiturn&at=40&ab=kv_offloading",
    "29003473063": "unofficialRun=29003473063&baseline=29337493492",
    "minimax-m2.5-tep8-vs-dep8": "unofficialRun=minimax-m2.5-tep8-vs-dep8&at=30",
    "dsr1-fp8-b300-mtp": "unofficialRun=dsr1-fp8-b300-mtp&at=40&master=nvidia-master.yaml",
}
SUFFIXES = ("csv", "json", "parquet", "md")


def requests() -> Iterator[tuple[str, str]]:
    """(file name, web path) of every export compared."""
    for run, q in RUN_QUERIES.items():
        for table in RUN_TABLES:
            for suffix in SUFFIXES:
                yield f"web-{run}-{table}.{suffix}", f"/export/{table}.{suffix}?{q}"
        for suffix in ("yaml", "txt"):
            yield f"web-{run}-pruned.{suffix}", f"/export/pruned.{suffix}?{q}"
    base = RUN_QUERIES["29003473063"]
    for suffix in SUFFIXES:
        yield f"web-baseline.{suffix}", f"/export/baseline.{suffix}?{base}"
        cq = "base=29337493492&candidate=29003473063"
        for table in ("uplift", "compare_points", "unmatched"):
            yield f"web-compare-{table}.{suffix}", f"/export/{table}.{suffix}?{cq}"
        yield f"web-runs.{suffix}", f"/export/runs.{suffix}?"


CLI = {
    "cli-runs.txt": ["runs"],
    "cli-points-kimi.csv": ["points", "--run", "kimik2.5-mi355x-mtp", "--format", "csv"],
    "cli-points-kimi.json": ["points", "--run", "kimik2.5-mi355x-mtp", "--format", "json"],
    "cli-rejects-29003473063.csv": ["rejects", "--run", "29003473063", "--format", "csv"],
    "cli-table-points-dsr1.md": [
        "table", "points", "dsr1-b200-multiturn", "--query", "at=40", "--format", "markdown",
    ],
    "cli-table-deltas-dsr1.csv": [
        "table", "deltas", "dsr1-b200-multiturn", "--query", "at=40&ab=kv_offloading",
        "--format", "csv",
    ],
    "cli-table-pruned-kimi.yaml": ["table", "pruned", "kimik2.5-mi355x-mtp", "--format", "yaml"],
    "cli-compare.md": ["compare", "29337493492", "29003473063", "--format", "markdown"],
    "cli-analyze-dsr1.csv": ["analyze", "dsr1-b200-multiturn", "--format", "csv"],
    "cli-deltas-dsr1.md": ["deltas", "dsr1-b200-multiturn", "--format", "markdown"],
}  # fmt: skip


def _pin_time() -> None:
    import ingest.pipeline
    import ingest.sources.dump

    class Pinned(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Any:  # type: ignore[override]
            return PINNED

    ingest.pipeline.datetime = Pinned  # type: ignore[attr-defined,misc]
    ingest.sources.dump.datetime = Pinned  # type: ignore[attr-defined,misc]


def outputs(store: Path) -> dict[str, bytes]:
    """Every compared output, from a new store at `store` seeded with the sample runs."""
    from typer.testing import CliRunner

    from dashboard.app import create_app
    from paretolens.cli import app as cli
    from paretolens.commands.common import seed_samples

    _pin_time()
    from ingest.store import Store

    seed_samples(Store(store))
    client = create_app(store).server.test_client()
    out: dict[str, bytes] = {}
    for name, path in requests():
        r = client.get(path)
        out[name] = f"{r.status_code}\n".encode() + r.get_data()
    runner = CliRunner()
    for name, args in CLI.items():
        res = runner.invoke(cli, [*args, "--store", str(store)], env={"COLUMNS": "200"})
        out[name] = f"{res.exit_code}\n".encode() + res.stdout_bytes
    return out


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        got = outputs(Path(tmp) / "store")
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    for name, body in got.items():
        (OUT_DIR / name).write_bytes(body)
    (OUT_DIR / "INDEX.json").write_text(json.dumps(sorted(got), indent=1) + "\n")
    print(f"wrote {len(got)} files to {OUT_DIR}", file=sys.stderr)

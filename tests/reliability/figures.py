"""The figures the reliability suite measures, collected while it runs.

Tests call `add`/`put` under a section name (fuzz, hostile, crash, concurrency, load, security);
`conftest.py` tallies each section's test outcomes and, at the end of the session, merges this
run's sections into `FIGURES_PATH` (gitignored). `render_doc.py` turns that file into
docs/reliability.md, so every figure in the document comes from a run of the suite.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
FIGURES_PATH = Path(
    os.environ.get("PARETOLENS_RELIABILITY_FIGURES", REPO / "tests/reliability/.out/figures.json")
)

_sections: dict[str, dict[str, Any]] = {}
_outcomes: dict[str, dict[str, Any]] = {}


def add(section: str, key: str, n: float = 1) -> None:
    """Add `n` to a counter."""
    sec = _sections.setdefault(section, {})
    sec[key] = sec.get(key, 0) + n


def put(section: str, key: str, value: Any) -> None:
    """Set a figure."""
    _sections.setdefault(section, {})[key] = value


def tally(section: str, outcome: str, seconds: float) -> None:
    """Count one test outcome of a section and its time ('' adds only the time)."""
    sec = _outcomes.setdefault(section, {"passed": 0, "failed": 0, "skipped": 0, "seconds": 0.0})
    if outcome:
        sec[outcome] = sec.get(outcome, 0) + 1
    sec["seconds"] = round(sec["seconds"] + seconds, 2)


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        return out.stdout.strip()
    except OSError:
        return ""


def flush() -> None:
    """Merge this session's sections into FIGURES_PATH (sections not run keep older figures)."""
    if not _outcomes:
        return
    try:
        doc: dict[str, Any] = json.loads(FIGURES_PATH.read_text())
    except (OSError, ValueError):
        doc = {}
    now = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    machine = f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    for name, outcome in _outcomes.items():
        doc[name] = {
            "figures": _sections.get(name, {}),
            "tests": outcome,
            "run_at": now,
            "commit": _commit(),
            "machine": machine,
        }
    FIGURES_PATH.parent.mkdir(parents=True, exist_ok=True)
    FIGURES_PATH.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")

"""What the suite ran on: cores, memory, CPU model, load, library and browser versions."""

from __future__ import annotations

import platform
import subprocess
from importlib import metadata
from pathlib import Path

from benchmarks.synth import cpu_count
from benchmarks.timing import load_average

LIBRARIES = (
    "polars",
    "pyarrow",
    "numpy",
    "pandas",
    "pydantic",
    "dash",
    "plotly",
    "flask",
    "moocore",
    "paretoset",
    "numba",
    "selenium",
)


def cpu_model() -> str:
    """CPU model name from /proc/cpuinfo."""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def memory_gib() -> float:
    """Total memory in GiB."""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) / 2**20
    return 0.0


def versions() -> dict[str, str]:
    """Installed versions of the libraries that matter to the figures."""
    out = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    out["chromium"] = _command_version(["/usr/bin/chromium", "--version"])
    out["chromedriver"] = _command_version(["/usr/bin/chromedriver", "--version"])
    return out


def _command_version(cmd: list[str]) -> str:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "not installed"
    return done.stdout.strip().split("\n")[0] or "unknown"


def describe() -> list[str]:
    """Markdown lines describing the machine."""
    one, five, fifteen = load_average()
    return [
        f"- CPU: {cpu_model()}, {cpu_count()} usable cores",
        f"- memory: {memory_gib():.1f} GiB",
        f"- OS: {platform.platform()}",
        f"- load average when the suite started: {one:.2f} / {five:.2f} / {fifteen:.2f} "
        "(1 / 5 / 15 min; the machine is shared, so absolute times carry noise; ratios are "
        "timed interleaved)",
    ]

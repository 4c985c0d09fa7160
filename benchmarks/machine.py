"""What the suite ran on: cores, memory, CPU model, load, library and browser versions."""

from __future__ import annotations

import platform
import subprocess
import time
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Moment:
    """The machine's load at one moment: load averages and the CPU pressure counter."""

    at: float
    load: tuple[float, float, float]
    cpu_stall_us: int | None  # /proc/pressure/cpu "some" total (microseconds), None without PSI

    @classmethod
    def now(cls) -> Moment:
        return cls(time.monotonic(), load_average(), cpu_stall_us())


def cpu_stall_us() -> int | None:
    """Microseconds in which some runnable task waited for a CPU (Linux PSI), since boot."""
    try:
        text = Path("/proc/pressure/cpu").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("some "):
            for part in line.split():
                if part.startswith("total="):
                    return int(part.removeprefix("total="))
    return None


def describe(start: Moment, end: Moment) -> list[str]:
    """Markdown lines describing the machine and its load over the run."""
    lines = [
        f"- CPU: {cpu_model()}, {cpu_count()} usable cores",
        f"- memory: {memory_gib():.1f} GiB",
        f"- OS: {platform.platform()}",
    ]
    for label, m in (("started", start), ("ended", end)):
        one, five, fifteen = m.load
        lines.append(
            f"- load average when the suite {label}: {one:.2f} / {five:.2f} / {fifteen:.2f} "
            "(1 / 5 / 15 min)"
        )
    if start.cpu_stall_us is not None and end.cpu_stall_us is not None and end.at > start.at:
        share = (end.cpu_stall_us - start.cpu_stall_us) / 1e6 / (end.at - start.at)
        lines.append(
            f"- CPU pressure over the run: some task waited for a CPU {share:.0%} of the time "
            "(/proc/pressure/cpu; the suite's own threads and browser count too)"
        )
    lines.append(
        "- the machine is shared, so absolute times carry noise; ratios are timed interleaved"
    )
    return lines

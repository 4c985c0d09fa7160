"""GPU telemetry of a benchmark point: InferenceX's `gpu_metrics.csv` (one per point).

InferenceX's `benchmarks/benchmark_lib.sh` (`start_gpu_monitor`) samples every GPU once a second
while the server runs and uploads the CSV in the `gpu_metrics_<result>` artifact, beside
`gpu_metrics_energy_start.csv`, `gpu_metrics_energy_end.csv` and `gpu_metrics_identity.json`
on AMD. Two layouts:

- NVIDIA: `nvidia-smi --query-gpu=timestamp,index,power.draw,temperature.gpu,
  clocks.current.sm,clocks.current.memory,utilization.gpu,utilization.memory --format=csv`:
  a `timestamp, index, power.draw [W], ...` header, values with their units (`412.34 W`,
  `1980 MHz`, `95 %`), the timestamp `YYYY/MM/DD HH:MM:SS.fff` in the host's clock without a
  zone (read as UTC, the zone of CI runners; say otherwise and the window will not match).
- AMD: `amd-smi metric -p -c -t -u -w 1 --csv`: a `timestamp,gpu,gfx_activity,umc_activity,...
  socket_power,...,gfx_0_clk,...,mem_0_clk,...,hotspot,mem` header, epoch seconds, a blank line
  between samples, `N/A` where the GPU reports nothing.

The file is no point: its samples are stored as the point's time series (`gpu:power_w`,
`gpu:util_pct`, `gpu:mem_util_pct`, `gpu:sm_clock_mhz`, `gpu:mem_clock_mhz`, `gpu:temp_c`, one
series per GPU, `t` in seconds from the first sample), and its power, integrated over the
point's benchmark window (`ingest.normalize.energy`), gives the point's measured energy
(`ingest.rows`). A cell that is `N/A` or empty is a gap in that series; a cell that is neither
a number nor `N/A` is refused naming the line and column.
"""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import UTC, datetime
from typing import Any

from ingest.errors import ParseError
from ingest.readers.base import ReadResult, Row, SourceFile

_NUMBER = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(W|MHz|%|C)?\s*$")
_MISSING = {"", "n/a", "[n/a]", "na", "[not supported]"}

# metric -> (NVIDIA header, AMD header)
METRICS: dict[str, tuple[str, str]] = {
    "gpu:power_w": ("power.draw [W]", "socket_power"),
    "gpu:util_pct": ("utilization.gpu [%]", "gfx_activity"),
    "gpu:mem_util_pct": ("utilization.memory [%]", "umc_activity"),
    "gpu:sm_clock_mhz": ("clocks.current.sm [MHz]", "gfx_0_clk"),
    "gpu:mem_clock_mhz": ("clocks.current.memory [MHz]", "mem_0_clk"),
    "gpu:temp_c": ("temperature.gpu", "hotspot"),
}
POWER = "gpu:power_w"


def _header(src: SourceFile) -> list[str]:
    line = src.data[:8192].decode("utf-8", "replace").lstrip("\ufeff").split("\n", 1)[0]
    return [c.strip() for c in line.strip().split(",")]


def layout(src: SourceFile) -> str | None:
    """'nvidia', 'amd' or None (not a gpu_metrics CSV)."""
    head = _header(src)
    if head[:3] == ["timestamp", "index", "power.draw [W]"]:
        return "nvidia"
    if head[:2] == ["timestamp", "gpu"] and "socket_power" in head:
        return "amd"
    return None


def _time(text: str, vendor: str, rel: str, where: str) -> float:
    text = text.strip()
    try:
        if vendor == "amd":
            return float(text)
        for fmt in ("%Y/%m/%d %H:%M:%S.%f", "%Y/%m/%d %H:%M:%S"):
            try:
                return datetime.strptime(text, fmt).replace(tzinfo=UTC).timestamp()
            except ValueError:
                continue
    except ValueError:
        pass
    expected = "epoch seconds" if vendor == "amd" else "YYYY/MM/DD HH:MM:SS.fff"
    raise ParseError(rel, where, f"timestamp {text!r} is not {expected}")


def _value(text: str, rel: str, where: str) -> float | None:
    if text.strip().casefold() in _MISSING:
        return None
    m = _NUMBER.match(text)
    if not m:
        raise ParseError(rel, where, f"expected a number (or N/A), got {text!r}")
    return float(m.group(1))


def read_samples(src: SourceFile) -> tuple[str, dict[str, dict[str, list[tuple[float, float]]]]]:
    """The vendor and metric -> gpu -> [(epoch seconds, value)] of a gpu_metrics CSV.

    Raises:
        ParseError: naming the line and column of a cell that is not what the layout says.
    """
    vendor = layout(src)
    if vendor is None:
        raise ParseError(src.rel, "header", "expected an nvidia-smi or amd-smi gpu_metrics header")
    rows = csv.reader(io.StringIO(src.text()), skipinitialspace=True)
    header = [c.strip() for c in next(rows)]
    col = {name: i for i, name in enumerate(header)}
    wanted = {
        m: col[h[0 if vendor == "nvidia" else 1]]
        for m, h in METRICS.items()
        if h[0 if vendor == "nvidia" else 1] in col
    }
    gpu_col = col["index" if vendor == "nvidia" else "gpu"]
    out: dict[str, dict[str, list[tuple[float, float]]]] = {m: {} for m in wanted}
    for lineno, cells in enumerate(rows, start=2):
        if not cells or all(not c.strip() for c in cells):
            continue  # amd-smi's watch mode leaves a blank line between samples
        if len(cells) != len(header):
            raise ParseError(
                src.rel, f"line {lineno}", f"expected {len(header)} cells, got {len(cells)}"
            )
        t = _time(cells[0], vendor, src.rel, f"line {lineno}, timestamp")
        gpu = cells[gpu_col].strip()
        for metric, i in wanted.items():
            v = _value(cells[i], src.rel, f"line {lineno}, {header[i]}")
            if v is not None:
                out[metric].setdefault(gpu, []).append((t, v))
    if not out.get(POWER):
        raise ParseError(
            src.rel, METRICS[POWER][0 if vendor == "nvidia" else 1], "no power samples"
        )
    return vendor, out


def read_gpu_metrics(src: SourceFile) -> ReadResult:
    """The file's samples as time series, with the power samples and window in its scope."""
    vendor, samples = read_samples(src)
    t0 = min(t for per_gpu in samples.values() for s in per_gpu.values() for t, _ in s)
    t1 = max(t for per_gpu in samples.values() for s in per_gpu.values() for t, _ in s)
    series: list[Row] = [
        {
            "metric": metric,
            "labels": json.dumps({"gpu": gpu}),
            "t": t - t0,
            "value": v,
            "point_key": None,
        }
        for metric, per_gpu in samples.items()
        for gpu, pts in per_gpu.items()
        for t, v in pts
    ]
    n = len(samples[POWER])
    return ReadResult(
        series=series,
        consumed=[src.rel],
        scope={"window": [t0, t1], "gpu_power": samples[POWER]},
        notes=[
            f"{src.rel}: {vendor} GPU telemetry, {n} GPU(s), {t1 - t0:g} s; power integrated "
            "over the point's benchmark window"
        ],
    )


class GpuMetricsReader:
    """InferenceX `gpu_metrics.csv` (nvidia-smi or amd-smi): the point's GPU telemetry."""

    name = "gpu_metrics"

    def sniff(self, src: SourceFile, doc: Any) -> bool:
        return doc is None and layout(src) is not None

    def read(self, src: SourceFile, doc: Any) -> ReadResult:
        return read_gpu_metrics(src)


FILE_READERS = (GpuMetricsReader(),)

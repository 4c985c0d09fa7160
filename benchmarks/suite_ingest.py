"""Ingest: a 500-file run of InferenceX aggregate files into an empty store, vs plain json.load;
and the command line's start-up (`paretolens --help`), vs starting Python itself."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from benchmarks import anchors
from benchmarks.config import Config
from benchmarks.report import Anchor, Check, Figure, Section
from benchmarks.synth import runs_spec, synth_points, write_aggregate_dir
from benchmarks.timing import Samples, interleaved, timed
from ingest.pipeline import ingest_paths
from ingest.store import Store

# The CLI's start-up target (issue 26): a command that reads nothing starts within this.
STARTUP_TARGET_S = 0.3


def startup_figure(cfg: Config) -> Figure:
    """`paretolens --help` as a user runs it (the installed script, a new process each time),
    interleaved with `python -c pass` of the same interpreter."""
    script = str(Path(sys.executable).with_name("paretolens"))

    def cli() -> None:
        subprocess.run([script, "--help"], check=True, capture_output=True)

    def bare() -> None:
        subprocess.run([sys.executable, "-c", "pass"], check=True, capture_output=True)

    got = interleaved({"cli": cli, "bare": bare}, max(cfg.runs, 10))
    ours, anchor = got["cli"], got["bare"]
    return Figure(
        name="CLI start-up (`paretolens --help`, a new process)",
        samples=ours,
        target=f"<= {STARTUP_TARGET_S} s",
        checks=[
            Check(
                f"median {ours.median:.3f} s <= {STARTUP_TARGET_S} s",
                ours.median <= STARTUP_TARGET_S,
            )
        ],
        anchors=[Anchor("`python -c pass` (the interpreter's own start-up)", anchor)],
        notes=(
            "The command groups load lazily (`paretolens.cli.LazyGroup`): the listing imports "
            "typer and none of polars, pyarrow, dash or plotly; a command imports its own group "
            "when it runs. Every command pays this start-up before its own work."
        ),
        command=cfg.command("ingest"),
    )


def run(cfg: Config) -> Section:
    """Measure the ingest figure and the CLI's start-up."""
    section = Section("Ingest (InferenceX `process_result.py` aggregate files)")
    section.figures.append(startup_figure(cfg))
    n = cfg.run_points
    points = synth_points(runs_spec(n, points_per_run=n, seed=7))
    src = cfg.workdir / "ingest" / "run"
    files = write_aggregate_dir(points, src)
    probe = ingest_paths([src], Store(cfg.workdir / "ingest" / "probe"), run_id="probe")
    if probe.accepted != len(files):
        reasons = sorted({r.reason for r in probe.rejected})[:3]
        section.figures.append(
            Figure(
                name=f"Ingest a {n}-file run",
                samples=None,
                target=">= 2,000 files/s (<= 0.25 s) and <= 2x plain json.load",
                missing=f"only {probe.accepted} of {len(files)} files were stored: {reasons}",
                command=cfg.command("ingest"),
            )
        )
        return section
    ours, plain = Samples(), Samples()
    # Warm-up: imports, reader registry, first Parquet write.
    ingest_paths([src], Store(cfg.workdir / "ingest" / "warm"), run_id="warm")
    anchors.json_load_all(files)
    for i in range(cfg.runs):
        root = cfg.workdir / "ingest" / f"store{i}"
        ours.values.append(timed(lambda r=root: ingest_paths([src], Store(r), run_id="bench"))[0])
        plain.values.append(timed(lambda: anchors.json_load_all(files))[0])
        shutil.rmtree(root, ignore_errors=True)
    rate = n / ours.median
    ratio = ours.median / plain.median
    section.figures.append(
        Figure(
            name=f"Ingest a {n}-file run into an empty store (`ingest_paths`)",
            samples=ours,
            target=">= 2,000 files/s (a 500-point run <= 0.25 s), and <= 2x plain json.load",
            unit="ms",
            per_second=n,
            per_second_unit="files/s",
            checks=[
                Check(
                    f"{rate:,.0f} files/s >= 2,000 (median {ours.median:.3f} s <= 0.25 s)",
                    ours.median <= 0.25,
                ),
                Check(f"{ratio:.1f}x plain json.load <= 2x", ratio <= 2.0),
            ],
            anchors=[Anchor("plain json.load of the same files", plain)],
            notes=(
                f"{len(files)} files of {sum(p.stat().st_size for p in files) / len(files):,.0f} "
                "bytes on average, keys and layout of "
                "`kimik2.5_int4_anchor_rows.json` rows, values from the synthetic model "
                "(benchmarks/synth.py). Ours covers the whole call: walking the directory, "
                "sniffing, strict parsing, validation, normalisation, sha256, the locked "
                "Parquet write, rejects and the runs catalog."
            ),
            command=cfg.command("ingest"),
        )
    )
    shutil.rmtree(Path(cfg.workdir / "ingest"), ignore_errors=True)
    return section

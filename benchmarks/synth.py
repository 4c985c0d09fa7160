"""Realistic synthetic benchmark sweeps: canonical point frames, aggregate JSON files, stores.

Every distribution is modelled on the real fixtures, mainly the InferenceX `process_result.py`
aggregates in `shared/benchmarks/kimik2.5_int4_anchor_rows.json` (13 configurations x 2 sequence
lengths x concurrency 1-256) and the `agg_fixed_seq` files. Within one arm, as concurrency c rises:

* interactivity follows ``median_intvty = i1 / (1 + c / c0)`` (the anchor rows fit this within
  2 %: vLLM TP8 1k/1k has i1 = 67 tok/s/user, c0 = 66), i1 ~ base(isl) x hardware x framework x
  spec-decode factor x lognormal(0, 0.15), c0 ~ lognormal(ln 66, 0.35);
* p90 TTFT is linear in c: ``ttft0 x (1 + 0.045 c)``, ttft0 = 0.30 s at 1k input, 2.1 s at 8k;
* throughput per GPU is ``c x (isl + osl) / e2el / gpus`` with ``e2el = ttft + osl / intvty``;
* a share of arms (`cliff_share`, 15 %) collapses past a random knee: throughput drops 20-50 % per
  step and TTFT grows 8-30x (the queueing cliff `analysis.frontier.cliff` looks for);
* every metric carries lognormal(0, 0.02) run-to-run noise; `invalid_share` of points have an
  error rate above 10 % and `missing_share` have no interactivity (excluded from frontiers).

Groups (the default comparison key: run x scenario x model x isl/osl x hw x precision) hold
`arms_per_group` distinct configurations (framework x TP x EP x spec decode x DP attention),
drawn without replacement, as in the real sweeps. Ladders of up to 9 points are the real
1, 2, 4, ..., 256; longer ladders (the 100-point arms of the 1e6-point figure) are strictly
increasing integers spaced geometrically up to 4 x the ladder length.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from ingest.contract.col import Col
from ingest.contract.schema import POINTS_SCHEMA, RunCol
from ingest.frames import conform_frame
from ingest.normalize.ids import arm_id, arm_label

ANCHOR_ROWS = Path("/work/shared/benchmarks/kimik2.5_int4_anchor_rows.json")

# Relative speed of single-user decode (the anchor rows: b200 ~ 1.2 x mi355x, h200 ~ 0.8).
HARDWARE: dict[str, tuple[float, str]] = {
    "b200": (1.20, "b200-nb"),
    "gb200": (1.30, "gb200-nv"),
    "h200": (0.80, "h200-cw"),
    "h100": (0.65, "h100-cr"),
    "mi355x": (1.00, "mi355x-amds"),
    "mi325x": (0.75, "mi325x-amd"),
}
FRAMEWORKS: dict[str, float] = {"vllm": 1.0, "sglang": 1.05, "trt": 1.2, "atom": 0.95}
MODELS: tuple[tuple[str, str], ...] = (
    ("moonshotai/Kimi-K2.5", "kimik2.5"),
    ("deepseek-ai/DeepSeek-R1-0528", "dsr1"),
    ("MiniMaxAI/MiniMax-M2.5", "minimaxm2.5"),
    ("openai/gpt-oss-120b", "gptoss120b"),
    ("Qwen/Qwen3.5-397B-A17B", "qwen3.5"),
)
PRECISIONS = ("fp8", "fp4", "int4", "bf16")
SEQ_LENS: tuple[tuple[int, int], ...] = ((1024, 1024), (8192, 1024), (1024, 8192))
TP_CHOICES = (2, 4, 8)
EP_CHOICES = (1, 8)
SPEC_CHOICES = ("none", "mtp")
COMMIT_RUNS = 100  # runs per commit of `write_store`
STATS_SHIFT = {"mean": 1.0, "median": 1.0, "p90": 1.12, "p99": 1.35, "p99.9": 1.5}


@dataclass(frozen=True)
class SynthSpec:
    """Shape of a synthetic sweep collection.

    n_points: total points; n_arms: total (run, group, configuration) arms; the points are spread
    evenly over the arms (the first arms take the remainder). arms_per_group: configurations
    compared in one group; groups_per_run: sequence-length groups per run.
    """

    n_points: int
    n_arms: int
    arms_per_group: int = 10
    groups_per_run: int = 2
    seed: int = 0
    cliff_share: float = 0.15
    invalid_share: float = 0.005
    missing_share: float = 0.002
    run_prefix: str = "synth"
    points_per_run: int | None = None


def _ladder(k: int) -> np.ndarray:
    if k <= 9:
        return 2 ** np.arange(k, dtype=np.int64)
    g = np.round(np.geomspace(1, 4 * k, k)).astype(np.int64)
    # Strictly increasing: bump collisions at the low end.
    return np.maximum.accumulate(g - np.arange(k)) + np.arange(k)


def _configs(rng: np.random.Generator) -> list[tuple[str, int, int, str, bool]]:
    out = [
        (fw, tp, ep, spec, dpa)
        for fw in FRAMEWORKS
        for tp in TP_CHOICES
        for ep in EP_CHOICES
        for spec in SPEC_CHOICES
        for dpa in (False, True)
    ]
    order = rng.permutation(len(out))
    return [out[i] for i in order]


def _arm_table(spec: SynthSpec, rng: np.random.Generator) -> pl.DataFrame:
    """One row per arm: its run, group attributes, configuration and model parameters."""
    configs = _configs(rng)
    per_group = min(spec.arms_per_group, len(configs))
    rows: list[dict[str, Any]] = []
    group = 0
    hardware = list(HARDWARE)
    while len(rows) < spec.n_arms:
        run, seq = divmod(group, spec.groups_per_run)
        if seq == 0:  # model, hardware and precision are per run; sequence lengths per group
            model, prefix = MODELS[int(rng.integers(len(MODELS)))]
            hw = hardware[int(rng.integers(len(hardware)))]
            precision = PRECISIONS[int(rng.integers(len(PRECISIONS)))]
        isl, osl = SEQ_LENS[seq % len(SEQ_LENS)]
        start = int(rng.integers(len(configs)))
        for j in range(per_group):
            if len(rows) >= spec.n_arms:
                break
            fw, tp, ep, sd, dpa = configs[(start + j) % len(configs)]
            rows.append(
                {
                    Col.RUN_ID: f"{spec.run_prefix}-{run:06d}",
                    Col.MODEL: model,
                    Col.MODEL_PREFIX: prefix,
                    Col.HW: hw,
                    Col.HW_LABEL: HARDWARE[hw][1],
                    Col.PRECISION: precision,
                    Col.ISL: isl,
                    Col.OSL: osl,
                    Col.FRAMEWORK: fw,
                    Col.TP: tp,
                    Col.EP: ep,
                    Col.SPEC_DECODING: sd,
                    Col.DP_ATTENTION: dpa,
                }
            )
        group += 1
    return _with_params(pl.DataFrame(rows), spec, rng)


def _with_params(arms: pl.DataFrame, spec: SynthSpec, rng: np.random.Generator) -> pl.DataFrame:
    """The arms with their model parameters (the module docstring's model), drawn per arm."""
    n = arms.height
    base = np.where(arms[Col.ISL].to_numpy() >= 8192, 42.0, 66.0)
    base = np.where(arms[Col.OSL].to_numpy() >= 8192, base * 0.9, base)
    hwf = np.array([HARDWARE[h][0] for h in arms[Col.HW].to_list()])
    fwf = np.array([FRAMEWORKS[f] for f in arms[Col.FRAMEWORK].to_list()])
    spf = np.where(arms[Col.SPEC_DECODING].to_numpy() == "mtp", 1.5, 1.0)
    tpf = (arms[Col.TP].to_numpy() / 8.0) ** 0.25
    return arms.with_columns(
        pl.Series("__i1", base * hwf * fwf * spf * tpf * rng.lognormal(0.0, 0.15, n)),
        pl.Series("__c0", rng.lognormal(np.log(66.0), 0.35, n)),
        pl.Series(
            "__ttft0",
            np.where(arms[Col.ISL].to_numpy() >= 8192, 2.1, 0.30) / hwf * rng.lognormal(0, 0.1, n),
        ),
        pl.Series("__cliff", rng.random(n) < spec.cliff_share),
        pl.Series("__knee_frac", rng.uniform(0.5, 0.85, n)),
        pl.Series("__drop", rng.uniform(0.5, 0.8, n)),
        pl.Series("__ttft_jump", rng.uniform(8.0, 30.0, n)),
    )


def _lengths(spec: SynthSpec, arms: pl.DataFrame) -> np.ndarray:
    n_arms = arms.height
    if spec.points_per_run is None:
        k, extra = divmod(spec.n_points, n_arms)
        lengths = np.full(n_arms, k, dtype=np.int64)
        lengths[:extra] += 1
        return lengths
    # Fixed-size runs: 9-point ladders, the last arm of each run cut to fit.
    per_run = -(-spec.points_per_run // 9)
    lengths = np.full(n_arms, 9, dtype=np.int64)
    last = spec.points_per_run - 9 * (per_run - 1)
    lengths[per_run - 1 :: per_run] = last
    return lengths


def _hex_ids(rng: np.random.Generator, n: int, chars: int) -> list[str]:
    words = max(1, chars // 16)
    blob = rng.integers(0, 2**63, size=n * words, dtype=np.int64).astype(">u8").tobytes().hex()
    step = 16 * words
    return [blob[i : i + chars] for i in range(0, len(blob), step)]


def synth_points(spec: SynthSpec, arm_table: pl.DataFrame | None = None) -> pl.DataFrame:
    """A frame of canonical points (exactly `POINTS_SCHEMA`) following the documented model.

    `arm_table`: the arm table to use (its configuration columns and model parameters, as
    `_arm_table` makes it) instead of drawing one from `spec`.
    """
    rng = np.random.default_rng(spec.seed)
    arms = _arm_table(spec, rng) if arm_table is None else arm_table
    n_arms = arms.height
    lengths = _lengths(spec, arms)
    starts = np.cumsum(lengths) - lengths
    arm_ix = np.repeat(np.arange(n_arms), lengths)
    rank = np.arange(int(lengths.sum())) - starts[arm_ix]
    conc = np.zeros(len(rank), dtype=np.int64)
    point_len = lengths[arm_ix]
    for m in np.unique(lengths):
        sel = point_len == m
        conc[sel] = _ladder(int(m))[rank[sel]]
    n = len(conc)

    gather = pl.Series(arm_ix)

    def col(name: str) -> np.ndarray:
        return arms.get_column(name).to_numpy()[arm_ix]

    def text(name: str) -> pl.Series:
        return arms.get_column(name).gather(gather)

    isl, osl, tp = col(Col.ISL), col(Col.OSL), col(Col.TP)
    i1, c0, ttft0 = col("__i1"), col("__c0"), col("__ttft0")
    noise = lambda: rng.lognormal(0.0, 0.02, n)  # noqa: E731
    intvty = i1 / (1.0 + conc / c0) * noise()
    ttft = ttft0 * (1.0 + 0.045 * conc) * noise()
    past = col("__cliff") & (rank >= np.floor(col("__knee_frac") * lengths[arm_ix]))
    steps = np.where(past, rank - np.floor(col("__knee_frac") * lengths[arm_ix]) + 1, 0)
    ttft = np.where(past, ttft * col("__ttft_jump"), ttft)
    e2el = ttft + osl / intvty
    gpus = tp.astype(np.float64)
    tput = conc * (isl + osl) / e2el / gpus * np.power(col("__drop"), steps)
    out_share = osl / (isl + osl)
    missing = rng.random(n) < spec.missing_share
    error_rate = np.where(rng.random(n) < spec.invalid_share, rng.uniform(0.11, 0.6, n), 0.0)
    arm_rows = arms.select(
        Col.MODEL,
        Col.MODEL_PREFIX,
        Col.HW,
        Col.PRECISION,
        Col.ISL,
        Col.OSL,
        Col.FRAMEWORK,
        Col.TP,
        Col.EP,
        Col.SPEC_DECODING,
        Col.DP_ATTENTION,
    ).to_dicts()
    ids, labels = [], []
    cache: dict[tuple[Any, ...], tuple[str, str]] = {}
    for r in arm_rows:
        key = tuple(r.values())
        if key in cache:
            ids.append(cache[key][0])
            labels.append(cache[key][1])
            continue
        full = {
            **r,
            Col.SCENARIO: "fixed-seq-len",
            Col.PP: 1,
            Col.DCP_SIZE: 1,
            Col.PCP_SIZE: 1,
            Col.DISAGG: False,
            Col.IS_MULTINODE: False,
            Col.KV_OFFLOADING: "none",
        }
        cache[key] = (arm_id(full), arm_label(full))
        ids.append(cache[key][0])
        labels.append(cache[key][1])
    arms = arms.with_columns(pl.Series(Col.ARM_ID, ids), pl.Series(Col.ARM_LABEL, labels))
    runner = text(Col.HW_LABEL)
    cols: dict[str, Any] = {
        Col.POINT_ID: _hex_ids(rng, n, 16),
        Col.RUN_ID: text(Col.RUN_ID),
        Col.RUN_ATTEMPT: np.ones(n, dtype=np.int64),
        Col.SOURCE_SHA256: _hex_ids(rng, n, 64),
        Col.MODEL: text(Col.MODEL),
        Col.MODEL_PREFIX: text(Col.MODEL_PREFIX),
        Col.HW: text(Col.HW),
        Col.HW_LABEL: runner,
        Col.RUNNER: runner,
        Col.FRAMEWORK: text(Col.FRAMEWORK),
        Col.PRECISION: text(Col.PRECISION),
        Col.ISL: isl,
        Col.OSL: osl,
        Col.CONC: conc,
        Col.TP: tp,
        Col.PP: np.ones(n, dtype=np.int64),
        Col.EP: col(Col.EP),
        Col.DP_ATTENTION: col(Col.DP_ATTENTION),
        Col.DCP_SIZE: np.ones(n, dtype=np.int64),
        Col.PCP_SIZE: np.ones(n, dtype=np.int64),
        Col.DISAGG: np.zeros(n, dtype=bool),
        Col.IS_MULTINODE: np.zeros(n, dtype=bool),
        Col.NUM_GPUS: tp,
        Col.SPEC_DECODING: text(Col.SPEC_DECODING),
        Col.TPUT_PER_GPU: tput,
        Col.OUTPUT_TPUT_PER_GPU: tput * out_share,
        Col.INPUT_TPUT_PER_GPU: tput * (1 - out_share),
        Col.TOTAL_TPUT: tput * gpus,
        Col.OUTPUT_TPUT: tput * gpus * out_share,
        Col.INPUT_TPUT: tput * gpus * (1 - out_share),
        Col.ERROR_RATE: error_rate,
        Col.ARM_ID: text(Col.ARM_ID),
        Col.ARM_LABEL: text(Col.ARM_LABEL),
    }
    for stat, shift in STATS_SHIFT.items():
        iv = intvty / shift
        cols[f"{stat}_intvty"] = np.where(missing, np.nan, iv)
        cols[f"{stat}_tpot"] = 1.0 / iv
        cols[f"{stat}_itl"] = 2.6 / iv
        cols[f"{stat}_ttft"] = ttft * shift / STATS_SHIFT["p90"]
        cols[f"{stat}_e2el"] = e2el * shift
    frame = pl.DataFrame(cols, nan_to_null=True)
    frame = frame.with_columns(
        pl.concat_str(
            [
                pl.lit("agg_"),
                pl.col(Col.MODEL_PREFIX),
                pl.lit("_"),
                pl.col(Col.ISL).cast(pl.String),
                pl.lit("x"),
                pl.col(Col.OSL).cast(pl.String),
                pl.lit("_"),
                pl.col(Col.PRECISION),
                pl.lit("_"),
                pl.col(Col.FRAMEWORK),
                pl.lit("_tp"),
                pl.col(Col.TP).cast(pl.String),
                pl.lit("-ep"),
                pl.col(Col.EP).cast(pl.String),
                pl.lit("_spec-"),
                pl.col(Col.SPEC_DECODING),
                pl.lit("_conc"),
                pl.col(Col.CONC).cast(pl.String),
                pl.lit(".json"),
            ]
        ).alias(Col.SOURCE_PATH),
        pl.col(Col.RUN_ID).alias(Col.ARTIFACT),
        pl.lit("fixed-seq-len").alias(Col.SCENARIO),
        pl.lit("none").alias(Col.KV_OFFLOADING),
        pl.concat_str([pl.lit("synthetic/"), pl.col(Col.FRAMEWORK)]).alias(Col.IMAGE),
        pl.lit(datetime(2026, 11, 1, tzinfo=UTC)).alias(Col.INGESTED_AT),
    )
    return conform_frame(frame)


def runs_spec(n_points: int, points_per_run: int = 500, seed: int = 0) -> SynthSpec:
    """A collection of realistic runs: 2 sequence-length groups x ~28 arms x 9 concurrencies."""
    n_runs = max(1, n_points // points_per_run)
    arms_per_run = -(-points_per_run // 9)
    return SynthSpec(
        n_points=n_runs * points_per_run,
        n_arms=n_runs * arms_per_run,
        arms_per_group=-(-arms_per_run // 2),
        groups_per_run=2,
        seed=seed,
        points_per_run=points_per_run,
    )


# ---- stores ------------------------------------------------------------------------------------


def write_store(
    points: pl.DataFrame, root: Path, catalog: dict[str, dict[str, Any]] | None = None
) -> list[str]:
    """Write `points` as a paretolens store (the Delta table `ingest.store` writes: each run's
    points and catalog row in their partitions), in one commit rather than one per run.
    `catalog` gives catalog fields (branch, created_at, ...) by run id. Returns the run ids.
    """
    from ingest.contract.schema import RUNS_SCHEMA, RunCol
    from ingest.lake import delta
    from ingest.store import Store

    store = Store(root)
    parts: dict[tuple[str, str], pa.Table] = {}
    run_ids: list[str] = []
    now = datetime(2026, 11, 1, tzinfo=UTC)
    for (rid,), part in points.group_by([Col.RUN_ID], maintain_order=True):
        rid = str(rid)
        run_ids.append(rid)
        parts[("points", rid)] = part.to_arrow().cast(POINTS_SCHEMA)
        row = {f.name: pa.nulls(1, f.type) for f in RUNS_SCHEMA}
        row[RunCol.RUN_ID] = pa.array([rid], pa.string())
        row[RunCol.SOURCE] = pa.array(["local"], pa.string())
        row[RunCol.INGESTED_AT] = pa.array([now], RUNS_SCHEMA.field(RunCol.INGESTED_AT).type)
        row[RunCol.POINT_COUNT] = pa.array(
            [part.height], RUNS_SCHEMA.field(RunCol.POINT_COUNT).type
        )
        row[RunCol.REJECT_COUNT] = pa.array([0], RUNS_SCHEMA.field(RunCol.REJECT_COUNT).type)
        for key, value in (catalog or {}).get(rid, {}).items():
            row[key] = pa.array([value], RUNS_SCHEMA.field(key).type)
        parts[("runs", rid)] = pa.Table.from_arrays(
            [row[f.name] for f in RUNS_SCHEMA], schema=RUNS_SCHEMA
        )
    # One commit per `COMMIT_RUNS` runs (as many ingests would leave it, without their cost):
    # delta-rs holds a writer per partition of a commit, so one commit of thousands of runs
    # would need tens of GiB.
    keys = list(parts)
    step = 2 * COMMIT_RUNS
    for i in range(0, len(keys), step):
        chunk = {k: parts[k] for k in keys[i : i + step]}
        # a writer's snapshot: the table object the commit goes through (None: create it)
        snap = delta.snapshot_of(store.uri, delta.open_table(store.uri))
        delta.commit(snap, chunk, {delta.META_ACTION: "synth", delta.META_RUNS: "[]"})
    return run_ids


# ---- a whole history (issue 26, item 5) ---------------------------------------------------------

# Bump when the history generator changes what it writes: the cached stores are keyed on it.
HISTORY_FORMAT = 2
HISTORY_START = datetime(2024, 12, 1, tzinfo=UTC)
# Precisions a (model, GPU) pair is swept at (InferenceX: fp4 only where the GPU has it).
FP4_HW = ("b200", "gb200", "mi355x")


@dataclass(frozen=True)
class HistorySpec:
    """Shape of a synthetic InferenceX history: `n_runs` runs over `days` days, `points_per_run`
    points each (two sequence-length groups of `configs_per_group` configurations, 9-point
    concurrency ladders), `main_share` of them on the main branch, the rest on PR branches.
    """

    n_runs: int = 3_000
    points_per_run: int = 334
    days: int = 730
    configs_per_group: int = 19
    main_share: float = 0.75
    seed: int = 26

    @property
    def n_points(self) -> int:
        return self.n_runs * self.points_per_run

    def scaled(self, divisor: int) -> HistorySpec:
        """The same history with `divisor` times fewer runs (the dates still span `days`)."""
        return HistorySpec(
            max(2, self.n_runs // divisor), self.points_per_run, self.days,
            self.configs_per_group, self.main_share, self.seed,
        )  # fmt: skip

    def key(self) -> str:
        """What a cached store of this spec is named by (the format version included)."""
        text = f"{HISTORY_FORMAT}:{self!r}"
        return hashlib.sha256(text.encode()).hexdigest()[:12]


def _matrix(spec: HistorySpec, rng: np.random.Generator) -> list[tuple[Any, ...]]:
    """The sweep matrix: per (model, GPU, precision) a fixed list of configurations, as the
    nightly InferenceX sweeps keep one search space per model and GPU."""
    configs = _configs(rng)
    out = []
    for model, prefix in MODELS:
        for hw in HARDWARE:
            precisions = ("fp4", "fp8") if hw in FP4_HW else ("fp8",)
            if prefix == "kimik2.5":
                precisions = ("int4",)
            for precision in precisions:
                start = int(rng.integers(len(configs)))
                chosen = [
                    configs[(start + j) % len(configs)] for j in range(spec.configs_per_group)
                ]
                out.append((model, prefix, hw, precision, chosen))
    return out


def history_arms(spec: HistorySpec) -> tuple[pl.DataFrame, dict[str, dict[str, Any]]]:
    """(the arm table of every run, the catalog fields of every run by run id).

    Each run sweeps one (model, GPU, precision) slice of the matrix at two sequence lengths; a
    configuration keeps its model parameters across runs (with 3 % run-to-run noise) and gets
    faster over the history (software improves: +30 % interactivity over `days`), so `/history`
    of one configuration is a line with a trend, not noise.
    """
    rng = np.random.default_rng(spec.seed)
    matrix = _matrix(spec, rng)
    weights = rng.uniform(0.5, 1.5, len(matrix))
    slices = rng.choice(len(matrix), size=spec.n_runs, p=weights / weights.sum())
    span = spec.days * 86_400
    offsets = np.sort(rng.uniform(0, span, spec.n_runs))
    offsets[-1] = span  # the history spans exactly `days` days
    offsets[0] = 0
    on_main = rng.random(spec.n_runs) < spec.main_share
    rows: list[dict[str, Any]] = []
    catalog: dict[str, dict[str, Any]] = {}
    for r in range(spec.n_runs):
        model, prefix, hw, precision, chosen = matrix[int(slices[r])]
        rid = str(12_000_000_000 + r * 3_911 + int(rng.integers(3_000)))
        when = HISTORY_START + timedelta(seconds=float(offsets[r]))
        branch = "main" if on_main[r] else f"pr-{4_000 + r % 997}-{prefix}-{hw}"
        catalog[rid] = {
            RunCol.REPO: "SemiAnalysisAI/InferenceX",
            RunCol.BRANCH: branch,
            RunCol.HEAD_SHA: f"{rng.integers(2**62):016x}" * 2 + "abcdef01",
            RunCol.TITLE: f"{'Nightly' if on_main[r] else 'PR'} sweep {prefix} {hw} {precision}",
            RunCol.CREATED_AT: when.strftime("%Y-%m-%dT%H:%M:%SZ"),
            RunCol.STATUS: "completed",
            RunCol.CONCLUSION: "success",
            RunCol.HTML_URL: f"https://github.com/SemiAnalysisAI/InferenceX/actions/runs/{rid}",
            RunCol.SOURCE: "github",
        }
        for isl, osl in SEQ_LENS[:2]:
            for fw, tp, ep, sd, dpa in chosen:
                rows.append(
                    {
                        Col.RUN_ID: rid, Col.MODEL: model, Col.MODEL_PREFIX: prefix, Col.HW: hw,
                        Col.HW_LABEL: HARDWARE[hw][1], Col.PRECISION: precision, Col.ISL: isl,
                        Col.OSL: osl, Col.FRAMEWORK: fw, Col.TP: tp, Col.EP: ep,
                        Col.SPEC_DECODING: sd, Col.DP_ATTENTION: dpa, "__t": offsets[r] / span,
                    }
                )  # fmt: skip
    arms = pl.DataFrame(rows)
    key = [c for c in arms.columns if c not in (Col.RUN_ID, "__t")]
    # Model parameters drawn once per configuration, then shared by its runs.
    configs = _with_params(arms.unique(key, maintain_order=True).drop(Col.RUN_ID, "__t"),
                           SynthSpec(1, 1), rng)  # fmt: skip
    arms = arms.join(configs, on=key, how="left", maintain_order="left")
    n = arms.height
    trend = 1.0 + 0.3 * arms.get_column("__t").to_numpy()
    arms = arms.with_columns(
        (pl.col("__i1") * pl.Series(trend * rng.lognormal(0.0, 0.03, n))).alias("__i1"),
        (pl.col("__ttft0") * pl.Series(rng.lognormal(0.0, 0.03, n))).alias("__ttft0"),
    ).drop("__t")
    return arms, catalog


def history_points(spec: HistorySpec) -> tuple[pl.DataFrame, dict[str, dict[str, Any]]]:
    """(the points of the whole history, the catalog fields by run id)."""
    arms, catalog = history_arms(spec)
    n_arms = arms.height
    synth = SynthSpec(
        n_points=spec.n_points, n_arms=n_arms, arms_per_group=spec.configs_per_group,
        seed=spec.seed, points_per_run=spec.points_per_run,
    )  # fmt: skip
    points = synth_points(synth, arms)
    stamp = pl.Series(
        Col.INGESTED_AT,
        [datetime.strptime(catalog[r][RunCol.CREATED_AT], "%Y-%m-%dT%H:%M:%SZ")
         .replace(tzinfo=UTC) for r in catalog],
    )  # fmt: skip
    when = pl.DataFrame({Col.RUN_ID: list(catalog), "__when": stamp})
    points = (
        points.join(when, on=Col.RUN_ID, how="left", maintain_order="left")
        .with_columns(pl.col("__when").dt.cast_time_unit("us").alias(Col.INGESTED_AT))
        .drop("__when")
    )
    return conform_frame(points), catalog


def history_cache_dir() -> Path:
    """Where generated history stores are kept between benchmark runs."""
    env = os.environ.get("PARETOLENS_BENCH_CACHE")
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "paretolens" / "bench"


def history_store(spec: HistorySpec, cache: Path | None = None) -> tuple[Path, list[str]]:
    """The store of a history (generated once, then reused from the cache by its spec's key).

    Returns:
        (the store's root, its run ids in date order).
    """
    cache = cache or history_cache_dir()
    root = cache / f"history-{spec.key()}"
    ids_file = root / "run_ids.json"
    if not ids_file.exists():
        tmp = cache / f".history-{spec.key()}-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        points, catalog = history_points(spec)
        run_ids = write_store(points, tmp, catalog)
        del points
        (tmp / "run_ids.json").write_text(json.dumps(run_ids))
        (tmp / "spec.json").write_text(json.dumps(dataclasses.asdict(spec)))
        shutil.rmtree(root, ignore_errors=True)
        os.replace(tmp, root)
    return root, json.loads(ids_file.read_text())


def copy_store(src: Path, dst: Path) -> Path:
    """A copy of a local store to write into: the Delta log copied, the data files (never
    rewritten in place) hard-linked, so the cached store stays as generated."""

    def link(s: str, d: str) -> None:
        if "_delta_log" in Path(s).parts:
            shutil.copy2(s, d)
        else:
            os.link(s, d)

    shutil.copytree(src, dst, copy_function=link)
    return dst


# ---- aggregate JSON files (the InferenceX process_result.py format) ----------------------------


def anchor_rows() -> list[dict[str, Any]]:
    """The 234 Kimi-K2.5 aggregate rows the InferenceX-app anchor drew."""
    rows: list[dict[str, Any]] = json.loads(ANCHOR_ROWS.read_text())
    return rows


def aggregate_docs(points: pl.DataFrame) -> Iterator[tuple[str, dict[str, Any]]]:
    """(file name, document) pairs in the aggregate format, one per point, keys as in the anchor.

    The key set and order are those of the anchor rows; values come from the synthetic points.
    """
    template = anchor_rows()[0]
    keys = list(template)
    rename = {"infmax_model_prefix": Col.MODEL_PREFIX}
    for row in points.iter_rows(named=True):
        doc: dict[str, Any] = {}
        for key in keys:
            src = rename.get(key, key)
            if key == "hw":
                doc[key] = row[Col.HW]
            elif key == "dp_attention":
                doc[key] = "true" if row[Col.DP_ATTENTION] else "false"
            elif key.startswith("std_"):
                base = row.get(key.replace("std_", "median_"))
                doc[key] = None if base is None else base * 0.1
            else:
                doc[key] = row.get(src)
        if doc.get("median_intvty") is None:
            # The real files always carry interactivity; the reader derives nothing from null.
            doc = {k: v for k, v in doc.items() if not k.endswith("_intvty")}
        seq = f"{row[Col.ISL] // 1024}k{row[Col.OSL] // 1024}k"
        name = (
            f"agg_{row[Col.MODEL_PREFIX]}_{seq}_{row[Col.PRECISION]}_{row[Col.FRAMEWORK]}"
            f"_tp{row[Col.TP]}-ep{row[Col.EP]}-dpa{doc['dp_attention']}_disagg-false"
            f"_spec-{row[Col.SPEC_DECODING]}_conc{row[Col.CONC]}_{row[Col.HW_LABEL]}-"
            f"{row[Col.POINT_ID][:6]}.json"
        )
        yield name, doc


def write_aggregate_dir(points: pl.DataFrame, directory: Path) -> list[Path]:
    """Write one aggregate JSON file per point into `directory`; returns the paths."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, doc in aggregate_docs(points):
        path = directory / name
        path.write_text(json.dumps(doc, indent=2))
        paths.append(path)
    return paths


def write_anchor_dir(directory: Path, isl: int | None = None) -> list[Path]:
    """Write the anchor rows (optionally only one input length) as aggregate files."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, row in enumerate(anchor_rows()):
        if isl is not None and row["isl"] != isl:
            continue
        seq = f"{row['isl'] // 1024}k{row['osl'] // 1024}k"
        name = (
            f"agg_{row['infmax_model_prefix']}_{seq}_{row['precision']}_{row['framework']}"
            f"_tp{row['tp']}-ep{row['ep']}-dpa{row['dp_attention']}_disagg-false"
            f"_spec-{row['spec_decoding']}_conc{row['conc']}_{row['hw']}-{i:03d}.json"
        )
        path = directory / name
        path.write_text(json.dumps(row, indent=2))
        paths.append(path)
    return paths


def dir_size(path: Path) -> int:
    """Bytes under a directory."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def cpu_count() -> int:
    """Usable cores."""
    return len(os.sched_getaffinity(0))

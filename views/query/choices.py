"""The menus of the pages: axis, A/B, label and tab choices as (value, menu label), the run
page's filters, and the labels a choice or an ISL/OSL key is shown with."""

from __future__ import annotations

from collections.abc import Sequence

from analysis.cost import CLASS_TITLES, COST_COLUMNS
from analysis.cost import LABELS as COST_LABELS
from ingest.contract.col import Col
from ingest.contract.derived import derived_metrics

# Axis choices: (column, menu label). Units come from the schema when drawn.
Y_CHOICES: tuple[tuple[Col, str], ...] = (
    (Col.TPUT_PER_GPU, "Total tok/s/GPU"),
    (Col.OUTPUT_TPUT_PER_GPU, "Output tok/s/GPU"),
    (Col.INPUT_TPUT_PER_GPU, "Input tok/s/GPU"),
    # For points whose GPU count no file says (no per-GPU throughput): the totals over all GPUs.
    (Col.TOTAL_TPUT, "Total tok/s (all GPUs)"),
    (Col.OUTPUT_TPUT, "Output tok/s (all GPUs)"),
)
# Issue 14: the cost and energy columns (analysis.cost, filled at view time with `hwcost=`).
Y_CHOICES += tuple((col, COST_LABELS[col]) for col in COST_COLUMNS)
# Issue 27: the measured energy per token of points with GPU telemetry (gpu_metrics.csv).
Y_CHOICES += ((Col.MEASURED_JOULES_PER_TOKEN, "Measured J/token (GPU telemetry)"),)


def y_choices() -> tuple[tuple[Col | str, str], ...]:
    """The y-axis menu: `Y_CHOICES`, then every derived metric declared with a menu label
    (`ingest.contract.derived`)."""
    return (*Y_CHOICES, *((m.spec.name, m.label) for m in derived_metrics() if m.label))


X_CHOICES: tuple[tuple[Col, str], ...] = (
    (Col.MEDIAN_INTVTY, "Interactivity, median"),
    (Col.P90_INTVTY, "Interactivity, p90 (slow tail)"),
    (Col.P99_INTVTY, "Interactivity, p99 (slow tail)"),
    (Col.MEDIAN_E2E_NORM_INTVTY, "E2E-normalised interactivity, median"),
    (Col.P90_E2E_NORM_INTVTY, "E2E-normalised interactivity, p90"),
)
X2_CHOICES: tuple[tuple[Col, str], ...] = (
    (Col.MEDIAN_E2EL, "E2E latency, median"),
    (Col.P90_E2EL, "E2E latency, p90"),
    (Col.P99_E2EL, "E2E latency, p99"),
    (Col.MEDIAN_TTFT, "TTFT, median"),
    (Col.P90_TTFT, "TTFT, p90"),
    (Col.P99_TTFT, "TTFT, p99"),
)
# A/B axes for equal-concurrency deltas (single ARM_KEY fields).
AB_CHOICES: tuple[tuple[Col, str], ...] = (
    (Col.SPEC_DECODING, "spec decoding (MTP vs none)"),
    (Col.KV_OFFLOADING, "KV offload"),
    (Col.PRECISION, "precision"),
    (Col.FRAMEWORK, "framework"),
    (Col.TP, "TP"),
    (Col.EP, "EP"),
    (Col.NUM_SPEC_TOKENS, "spec tokens K"),
    (Col.DP_ATTENTION, "DP attention"),
)
# The TCO calculator's cost classes (analysis.cost.CLASS_TITLES).
COST_CLASS_CHOICES = tuple(CLASS_TITLES.items())
# The charts' palettes (dashboard.figures.style.PALETTES), issue 27.
PALETTE_CHOICES = (
    ("okabe", "Okabe-Ito (colour-blind safe)"),
    ("tol", "Paul Tol bright (colour-blind safe)"),
    ("contrast", "High contrast"),
)
LABEL_CHOICES = (
    ("conc", "concurrency"),
    ("gpus", "GPUs"),
    ("parallelism", "parallelism"),  # issue 14: InferenceX's TP8 / DEP8 / 2xTEP4+1xDEP32 labels
    ("none", "none"),
)
ENVELOPE_CHOICES = (("run", "per run"), ("all", "across runs"))
TABS = (
    ("points", "Points"),
    ("al", "Acceptance length"),
    ("deltas", "A/B deltas"),
    ("pruned", "Pruned list"),
    ("tco", "TCO calculator"),
    ("rejects", "Rejected"),
    ("launch", "Launch"),
)
LOG_STREAMS = (
    ("stdout", "stdout"),
    ("stderr", "stderr"),
    ("serve_stdout", "server stdout"),
    ("serve_stderr", "server stderr"),
    ("executor", "executor"),
)
TOGGLES = (("logx", "log x"), ("logy", "log y"), ("frontier_only", "hide non-frontier"))
# The pruned list's switches (`paretolens prune --neighbours --arm-frontier`), one checklist.
PRUNE_TOGGLES = (
    ("neighbours", "also keep neighbouring concurrencies"),
    ("arm_frontier", "also keep every arm's own frontier"),
)

# Filter fields, the canonical column each filters on ('seq' is 'isl/osl', or 'trace' without).
FILTERS: tuple[tuple[str, str, Col | None], ...] = (
    ("model", "Model", Col.MODEL_PREFIX),
    ("scenario", "Scenario", Col.SCENARIO),
    ("seq", "ISL/OSL", None),
    ("hw", "Hardware", Col.HW),
    ("precision", "Precision", Col.PRECISION),
    ("framework", "Framework", Col.FRAMEWORK),
    ("spec", "Spec decoding", Col.SPEC_DECODING),
    ("offload", "KV offload", Col.KV_OFFLOADING),
    ("arm", "Arm", Col.ARM_ID),
)
FILTER_FIELDS = tuple(f for f, _, _ in FILTERS)


def choice_label(choices: Sequence[tuple[object, str]], value: object) -> str:
    """The menu label of a choice (the value itself when unknown)."""
    return next((label for c, label in choices if str(c) == str(value)), str(value))


def seq_label(key: str) -> str:
    """'8192/1024' -> '8k/1k'; 'trace' -> 'agentic trace'."""
    if key == "trace":
        return "agentic trace"

    def short(n: str) -> str:
        v = int(n)
        return f"{v // 1024}k" if v >= 1024 and v % 1024 == 0 else str(v)

    isl, osl = key.split("/")
    return f"{short(isl)}/{short(osl)}"

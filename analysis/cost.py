"""Cost and energy per token: InferenceX's tok/s/MW, J/tok and $/Mtok, from per-GPU throughput.

With T the token throughput per GPU (total, input or output), P the all-in provisioned utility
power per GPU in kW and C a GPU-hour's cost in $ for one cost class (InferenceX
`createChartDataPoint`, `packages/app/src/lib/chart-utils.ts`):

    tok/s/MW = T * 1000 / P          J/tok = P * 1000 / T          $/Mtok = C / (T * 3600 / 1e6)

P and C per hardware come from `data/hardware.yaml` (InferenceX's GPU_SPECS, with sources) and
can be overridden per hardware (`parse_hwcost`). T is the stored per-GPU throughput over every GPU
of the point: `tput_per_gpu` (total_tput / num_gpus, where num_gpus is prefill + decode GPUs on a
disaggregated point), and `input_tput / num_gpus`, `output_tput / num_gpus` on a disaggregated
point, whose stored input/output per-GPU rates are per prefill / per decode GPU as InferenceX
publishes them (on other points those stored rates are already over num_gpus and are used as they
are). A point whose hardware has no figure, or whose T is missing or not positive, gets null
(InferenceX shows 0); `with_costs` says which hardware lacked figures.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import polars as pl
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ingest.bundled import HARDWARE_FILE
from ingest.contract.col import Col
from ingest.contract.schema import SPECS
from ingest.untrusted.yaml_load import load_yaml

CostClass = Literal["hyperscaler", "neocloud", "rental3y"]
COST_CLASSES: tuple[CostClass, ...] = ("hyperscaler", "neocloud", "rental3y")
# What each class's $/GPU-hour is (InferenceX dropdown titles: "Owning - Hyperscaler",
# "Owning - Neocloud Giant", "3 Year Rental").
CLASS_TITLES: dict[CostClass, str] = {
    "hyperscaler": "owning, hyperscaler TCO",
    "neocloud": "owning, neocloud-giant TCO",
    "rental3y": "3-year rental",
}
POWER_TITLE = "all-in provisioned kW/GPU"

Positive = Annotated[float, Field(gt=0, allow_inf_nan=False, strict=True)]
_HW_KEY = re.compile(r"^[a-z0-9][a-z0-9_.]{0,63}$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GpuHourCost(_Strict):
    """$ per GPU-hour for each cost class."""

    hyperscaler: Positive
    neocloud: Positive
    rental3y: Positive


class Source(_Strict):
    """Where figures come from: a file at a commit of a repository, or a page (or both)."""

    title: str = Field(min_length=1)
    repo: str | None = None
    commit: str | None = None
    path: str | None = None
    url: str | None = None
    via: str | None = None
    note: str = ""

    @model_validator(mode="after")
    def _located(self) -> Source:
        in_repo = (self.repo, self.commit, self.path)
        if any(in_repo) and not all(in_repo):
            raise ValueError("a repository source needs repo, commit and path")
        if self.commit is not None and not _COMMIT.match(self.commit):
            raise ValueError(f"commit must be 40 lowercase hex digits, got {self.commit!r}")
        if not any(in_repo) and not self.url:
            raise ValueError("a source needs repo/commit/path or a url")
        return self


class HardwareSpec(_Strict):
    """One hardware's figures: all-in power per GPU and $/GPU-hour per cost class."""

    label: str = Field(min_length=1)
    power_kw: Positive
    power_source: str
    usd_per_gpu_hour: GpuHourCost
    cost_source: str
    note: str = ""


class HardwareFile(_Strict):
    """`data/hardware.yaml`: every figure's source id names an entry of `sources`."""

    schema_version: Literal[1]
    sources: dict[str, Source]
    hardware: dict[str, HardwareSpec]

    @model_validator(mode="after")
    def _consistent(self) -> HardwareFile:
        for key, spec in self.hardware.items():
            if not _HW_KEY.match(key):
                raise ValueError(f"hardware key {key!r} is not a canonical hw value (e.g. h200)")
            for field in ("power_source", "cost_source"):
                ref = getattr(spec, field)
                if ref not in self.sources:
                    raise ValueError(f"hardware.{key}.{field}: unknown source {ref!r}")
        for sid, src in self.sources.items():
            if src.via is not None and src.via not in self.sources:
                raise ValueError(f"sources.{sid}.via: unknown source {src.via!r}")
        return self


class SpecOverride(_Strict):
    """A partial replacement of one hardware's figures (None keeps the file's figure)."""

    power_kw: Positive | None = None
    hyperscaler: Positive | None = None
    neocloud: Positive | None = None
    rental3y: Positive | None = None


Specs = HardwareFile | Mapping[str, HardwareSpec]
Overrides = Mapping[str, SpecOverride]


def load_hardware(path: Path = HARDWARE_FILE) -> HardwareFile:
    """Read and validate a hardware file.

    Raises:
        ValueError: naming the file and what is wrong with it.
    """
    try:
        doc = load_yaml(path.read_text())
        return HardwareFile.model_validate(doc)
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise ValueError(f"{path}: {exc}") from exc


# ---- the columns --------------------------------------------------------------------------------

_KINDS = ("total", "input", "output")
_FIGURES = ("power_kw", *COST_CLASSES)


def _col_names(kind: str) -> tuple[Col, Col, dict[CostClass, Col]]:
    pre = "" if kind == "total" else f"{kind}_"
    suf = "" if kind == "total" else f"_{kind}"
    return (
        Col(f"{pre}tput_per_mw"),
        Col(f"joules_per_token{suf}"),
        {c: Col(f"cost_per_mtok_{c}{suf}") for c in COST_CLASSES},
    )


# Every cost and energy column: per token kind, tok/s/MW, J/tok, then $/Mtok per cost class.
COST_COLUMNS: tuple[Col, ...] = tuple(
    c
    for kind in _KINDS
    for c in (_col_names(kind)[0], _col_names(kind)[1], *_col_names(kind)[2].values())
)


def _base(key: str) -> str:
    return re.split(r"[-_]", key, maxsplit=1)[0]


def _lookup(key: str, table: Mapping[str, Any]) -> Any:
    """The entry of a hw value: exact, else its base before the first '-' or '_' (as InferenceX's
    getGpuSpecs: "h100_vllm" -> h100)."""
    if key in table:
        return table[key]
    return table.get(_base(key))


def _figures(hw: str, table: Mapping[str, HardwareSpec], overrides: Overrides) -> dict[str, Any]:
    spec: HardwareSpec | None = _lookup(hw, table)
    out: dict[str, float | None] = {f: None for f in _FIGURES}
    if spec is not None:
        out["power_kw"] = spec.power_kw
        out.update({c: getattr(spec.usd_per_gpu_hour, c) for c in COST_CLASSES})
    over: SpecOverride | None = _lookup(hw, overrides)
    if over is not None:
        out.update({f: getattr(over, f) for f in _FIGURES if getattr(over, f) is not None})
    return out


def hardware_figures(
    hw: str, specs: Specs, overrides: Overrides | None = None
) -> tuple[HardwareSpec | None, dict[str, Any]]:
    """The entry of a hw value (exact, else its base) and the figures its points are costed
    with (`power_kw`, $/GPU-hour per cost class; overrides applied; None: no figure)."""
    table = specs.hardware if isinstance(specs, HardwareFile) else specs
    return _lookup(hw, table), _figures(hw, table, overrides or {})


def cost_assumptions(
    specs: HardwareFile, hws: Sequence[str], y: str, overrides: Overrides | None = None
) -> tuple[str, set[str]]:
    """The figures a cost or energy axis `y` uses for the hardware `hws` of a page, as one line
    ("... AMD MI355X: 2.65 kW, $1.48 per GPU-hour (owning, hyperscaler TCO)."), and the ids of
    the sources of exactly those figures. An axis that is neither states power and every cost
    class."""
    cls = next((c for c in COST_CLASSES if c in y), None)
    energy = cls is None and ("_mw" in y or "joules" in y)
    said: list[str] = []
    used: set[str] = set()
    for hw in hws:
        spec, fig = hardware_figures(hw, specs, overrides)
        parts: list[str] = []
        if cls is None and fig["power_kw"] is not None:
            parts.append(f"{fig['power_kw']:g} kW ({POWER_TITLE})")
            used |= {spec.power_source} if spec is not None else set()
        for c in (cls,) if cls is not None else () if energy else COST_CLASSES:
            if fig[c] is not None:
                parts.append(f"${fig[c]:.2f} per GPU-hour ({CLASS_TITLES[c]})")
                used |= {spec.cost_source} if spec is not None else set()
        if parts:
            said.append(f"{spec.label if spec is not None else hw}: {', '.join(parts)}")
    head = "Cost and energy figures per GPU for the hardware on this page (data/hardware.yaml"
    head += ", hwcost applied): " if overrides else "): "
    return head + ("; ".join(said) or "none") + ".", used


@dataclass(frozen=True)
class Costs:
    """`with_costs`' result.

    frame: the points with the cost and energy columns (COST_COLUMNS) filled.
    missing: hw value -> the figures it has none of ("power_kw", "hyperscaler", ...), for every
        hardware of the points that lacks one; its points are null in those columns.
    no_hardware: points whose `hw` is null (null in every cost column).
    unused_overrides: override keys that match no point's hardware.
    """

    frame: pl.DataFrame
    missing: dict[str, tuple[str, ...]]
    no_hardware: int
    unused_overrides: tuple[str, ...]

    def notes(self) -> list[str]:
        """One readable line per gap, for a CLI or a page caption."""
        out = [
            f"no {', '.join(figs)} figure for hardware {hw!r}: its points are null in those "
            "columns (data/hardware.yaml, or give them with hwcost)"
            for hw, figs in self.missing.items()
        ]
        if self.no_hardware:
            out.append(f"{self.no_hardware} point(s) have no hardware (hw): cost columns null")
        if self.unused_overrides:
            out.append(f"hwcost names hardware no point has: {', '.join(self.unused_overrides)}")
        return out


def _num(points: pl.DataFrame, col: Col) -> pl.Expr:
    if str(col) in points.columns:
        return pl.col(str(col)).cast(pl.Float64)
    return pl.lit(None, dtype=pl.Float64)


def _throughputs(points: pl.DataFrame) -> dict[str, pl.Expr]:
    """T per kind, null unless finite and positive."""
    gpus = _num(points, Col.NUM_GPUS)
    split = (
        _num(points, Col.PREFILL_GPUS).is_not_null() & _num(points, Col.DECODE_GPUS).is_not_null()
    )
    raw = {
        "total": _num(points, Col.TPUT_PER_GPU),
        "input": pl.when(split)
        .then(_num(points, Col.INPUT_TPUT) / gpus)
        .otherwise(_num(points, Col.INPUT_TPUT_PER_GPU)),
        "output": pl.when(split)
        .then(_num(points, Col.OUTPUT_TPUT) / gpus)
        .otherwise(_num(points, Col.OUTPUT_TPUT_PER_GPU)),
    }
    return {k: pl.when(t.is_finite() & (t > 0)).then(t) for k, t in raw.items()}


def with_costs(points: pl.DataFrame, specs: Specs, overrides: Overrides | None = None) -> Costs:
    """The points with the cost and energy columns filled, and which hardware lacked figures.

    Args:
        points: canonical points (any subset of the points schema; absent inputs count as null).
        specs: the hardware file (`load_hardware()`) or its `hardware` mapping.
        overrides: per hw value, figures that replace the file's (`parse_hwcost`).

    Returns:
        `Costs`: the frame has every column of `points` (the cost columns replaced) plus any cost
        column it lacked, in input row order.
    """
    table = specs.hardware if isinstance(specs, HardwareFile) else specs
    over = {k.lower(): v for k, v in (overrides or {}).items()}
    hw_col = str(Col.HW)
    hws: list[str] = []
    no_hw = points.height
    if hw_col in points.columns:
        hw = points.get_column(hw_col)
        no_hw = hw.null_count()
        hws = sorted(str(h) for h in hw.drop_nulls().unique().to_list())
    figures = {h: _figures(h, table, over) for h in hws}
    missing = {
        h: tuple(f for f in _FIGURES if figs[f] is None)
        for h, figs in figures.items()
        if any(figs[f] is None for f in _FIGURES)
    }
    unused = tuple(sorted(k for k in over if not any(k in (h, _base(h)) for h in hws)))

    def figure(name: str) -> pl.Expr:
        if not hws:
            return pl.lit(None, dtype=pl.Float64)
        mapping = {h: figs[name] for h, figs in figures.items()}
        return pl.col(hw_col).replace_strict(mapping, default=None, return_dtype=pl.Float64)

    power = figure("power_kw")
    cost = {c: figure(c) for c in COST_CLASSES}
    exprs: list[pl.Expr] = []
    for kind, t in _throughputs(points).items():
        mw, joules, per_mtok = _col_names(kind)
        exprs.append((t * 1000.0 / power).alias(str(mw)))
        exprs.append((power * 1000.0 / t).alias(str(joules)))
        mtok_per_hour = t * 3600.0 / 1e6
        exprs.extend((cost[c] / mtok_per_hour).alias(str(col)) for c, col in per_mtok.items())
    return Costs(points.with_columns(exprs), missing, no_hw, unused)


def cost_columns(
    points: pl.DataFrame, specs: Specs, overrides: Overrides | None = None
) -> pl.DataFrame:
    """The points with the cost and energy columns filled (`with_costs(...).frame`)."""
    return with_costs(points, specs, overrides).frame


# ---- labels ---------------------------------------------------------------------------------------

_TOKENS = {"total": "total", "input": "input", "output": "output"}


def _label(col: Col) -> str:
    for kind in _KINDS:
        mw, joules, per_mtok = _col_names(kind)
        tokens = _TOKENS[kind]
        if col == mw:
            return f"{tokens.capitalize()} tok/s per all-in utility MW ({POWER_TITLE})"
        if col == joules:
            return f"All-in provisioned joules per {tokens} token ({POWER_TITLE})"
        for klass, c in per_mtok.items():
            if col == c:
                return f"Cost per million {tokens} tokens ({CLASS_TITLES[klass]} $/GPU-h)"
    raise ValueError(f"{col!r} is not a cost or energy column")


LABELS: dict[Col, str] = {c: _label(c) for c in COST_COLUMNS}


def axis_label(col: str, overridden: Sequence[str] = ()) -> str:
    """The axis title of a cost or energy column: what it measures, which cost class or power
    figure it uses, the hardware whose figures were overridden, and the unit.

    e.g. 'Cost per million output tokens (3-year rental $/GPU-h) ($/Mtok)'.
    """
    c = Col(col)
    text = LABELS[c]
    if overridden:
        text += f" [hwcost: {', '.join(overridden)}]"
    return f"{text} ({SPECS[c].unit})"


# ---- overrides in a URL -----------------------------------------------------------------------

# Field names of the compact form, with InferenceX's GPU_SPECS names as aliases.
_FIELDS: dict[str, str] = {
    "kw": "power_kw",
    "power": "power_kw",
    "hyperscaler": "hyperscaler",
    "costh": "hyperscaler",
    "neocloud": "neocloud",
    "costn": "neocloud",
    "rental3y": "rental3y",
    "costr": "rental3y",
}
_SHORT = {"power_kw": "kw", "hyperscaler": "hyperscaler", "neocloud": "neocloud",
          "rental3y": "rental3y"}  # fmt: skip
_NUMBER = re.compile(r"^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
MAX_HWCOST_CHARS = 2000


def parse_hwcost(text: str) -> dict[str, SpecOverride]:
    """Overrides from the compact URL form `hw:field=value,...;hw:...`.

    Fields: `kw` (all-in kW per GPU), `hyperscaler`, `neocloud`, `rental3y` ($/GPU-hour); the
    InferenceX names `power`, `costh`, `costn`, `costr` are accepted too. Values are positive
    decimal numbers. e.g. `h200:kw=1.2,hyperscaler=2.5;b200:neocloud=3.1`. Blank text is no
    override; a hardware named twice merges its fields.

    Raises:
        ValueError: naming the part that is wrong and what was expected.
    """
    if len(text) > MAX_HWCOST_CHARS:
        raise ValueError(f"hwcost is longer than {MAX_HWCOST_CHARS} characters")
    fields: dict[str, dict[str, float]] = {}
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        hw, sep, body = part.partition(":")
        hw = hw.strip().lower()
        if not sep or not _HW_KEY.match(hw):
            raise ValueError(
                f"hwcost part {part!r}: expected HW:FIELD=VALUE[,FIELD=VALUE...] with HW a "
                "hardware key such as h200"
            )
        got = fields.setdefault(hw, {})
        items = [i.strip() for i in body.split(",")]
        if not any(items):
            raise ValueError(f"hwcost part {part!r}: no FIELD=VALUE after {hw!r}")
        for item in items:
            name, eq, value = (s.strip() for s in item.partition("="))
            field = _FIELDS.get(name.lower())
            if field is None or not eq:
                raise ValueError(
                    f"hwcost part {part!r}: {item!r} is not FIELD=VALUE with FIELD one of kw, "
                    "hyperscaler, neocloud, rental3y"
                )
            number = float(value) if _NUMBER.match(value) else math.nan
            if not (math.isfinite(number) and number > 0):
                unit = "kW per GPU" if field == "power_kw" else "$ per GPU-hour"
                raise ValueError(
                    f"hwcost part {part!r}: {name} must be a positive number ({unit}), "
                    f"got {value!r}"
                )
            if field in got and got[field] != number:
                raise ValueError(f"hwcost part {part!r}: {name} of {hw} given twice")
            got[field] = number
    return {hw: SpecOverride.model_validate(f) for hw, f in fields.items()}


def format_hwcost(overrides: Overrides) -> str:
    """The compact URL form of overrides (`parse_hwcost` reads it back to the same values)."""
    parts = []
    for hw in sorted(overrides):
        o = overrides[hw]
        items = [f"{_SHORT[f]}={getattr(o, f)!r}" for f in _FIGURES if getattr(o, f) is not None]
        if items:
            parts.append(f"{hw}:{','.join(items)}")
    return ";".join(parts)


def energy_check(row: Mapping[str, Any]) -> str | None:
    """The point's measured energy per token beside the modelled one, with the difference.

    Measured: GPU-board energy from the point's telemetry over its benchmark window, per input
    and output token (`measured_joules_per_token`). Modelled: `joules_per_token`, the all-in
    provisioned power of `data/hardware.yaml` over the throughput (it counts host, network and
    cooling, so it is expected to be the larger). None when the point has no measured energy.
    """
    measured = row.get(Col.MEASURED_JOULES_PER_TOKEN)
    if not isinstance(measured, int | float):
        return None
    text = f"measured {measured:.4g} J/token (GPU boards, from gpu_metrics"
    power = row.get(Col.MEASURED_POWER_W)
    text += f", {power / 1000:.3g} kW over the window)" if isinstance(power, int | float) else ")"
    modelled = row.get(Col.JOULES_PER_TOKEN)
    if not isinstance(modelled, int | float) or modelled == 0:
        return text + "; no modelled figure for this hardware in hardware.yaml"
    diff = measured - modelled
    return (
        f"{text}; modelled {modelled:.4g} J/token ({POWER_TITLE}, hardware.yaml); "
        f"measured - modelled = {diff:+.4g} J/token ({diff / modelled:+.1%})"
    )


def figures_in_force(
    hws: Sequence[str], specs: Specs, overrides: Overrides | None = None
) -> dict[str, dict[str, float | None]]:
    """Per hw value, the figures in force: `power_kw` and $/GPU-h per cost class (the file's,
    replaced by `overrides`; None where neither has one)."""
    table = specs.hardware if isinstance(specs, HardwareFile) else specs
    over = {k.lower(): v for k, v in (overrides or {}).items()}
    return {h: _figures(h, table, over) for h in hws}

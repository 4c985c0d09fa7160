"""The URL state of every page as pydantic models: parse a query string, write one back.

A view is reproducible from its address: every control maps to one field here, defaults are left
out of the query string, and parsing is tolerant (a bad value is dropped with a notice, never a
crash), because links get hand-edited and pasted into PRs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any, ClassVar, Self
from urllib.parse import parse_qs, urlencode

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    StringConstraints,
    ValidationError,
    field_validator,
)

from analysis.baseline import MAIN as MAIN_BASELINE
from analysis.cost import COST_COLUMNS, format_hwcost, parse_hwcost
from analysis.cost import LABELS as COST_LABELS
from analysis.slo import parse_slo
from dashboard.affects import TABLE_PARTS, Part, affects, fields_sparing
from ingest.schema import Col
from ingest.store import is_readable_run_id

RawQuery = Mapping[str, Sequence[str]]

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

_RUNS_KEY = re.compile(r"^(unofficialruns?|runs?)$", re.IGNORECASE)
_ID = re.compile(r"^[A-Za-z0-9._:@+-]{1,200}$")
_MASTER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,120}\.ya?ml$")


def _one_of(choices: Iterable[tuple[object, str]]) -> AfterValidator:
    allowed = [str(c) for c, _ in choices]

    def check(v: str) -> str:
        if v not in allowed:
            raise ValueError(f"expected one of {', '.join(allowed)}")
        return v

    return AfterValidator(check)


def _ids(values: tuple[str, ...]) -> tuple[str, ...]:
    # Run ids: ingest keeps new ones to `ingest.store.RUN_ID_RULE`; ids a store written before
    # the rule holds ('sweep 2026-01 (retry)') are tolerated here, so their pages still open.
    bad = [v for v in values if not is_readable_run_id(v)]
    if bad:
        raise ValueError(f"not a run id: {bad[0][:40]!r}")
    return values


YAxis = Annotated[str, _one_of(Y_CHOICES)]
XAxis = Annotated[str, _one_of(X_CHOICES)]
X2Axis = Annotated[str, _one_of(X2_CHOICES)]
AbAxis = Annotated[str, _one_of(AB_CHOICES)]
Ids = Annotated[tuple[str, ...], AfterValidator(_ids)]
Values = tuple[str, ...]
# A filter of the run view: it changes which points are analysed.
Filter = Annotated[Values, affects(Part.POINTS)]


def split_values(raw: str | Sequence[str] | None) -> tuple[str, ...]:
    """Comma-separated and/or repeated values, stripped, de-duplicated, order kept."""
    if raw is None:
        return ()
    items = [raw] if isinstance(raw, str) else list(raw)
    out: dict[str, None] = {}
    for item in items:
        for part in str(item).split(","):
            if part.strip():
                out[part.strip()] = None
    return tuple(out)


def parse_query(query: str) -> dict[str, list[str]]:
    """A query string (with or without the leading '?') as a key -> values mapping."""
    return parse_qs(query.lstrip("?"), keep_blank_values=True)


class _View(BaseModel):
    """Shared machinery: tolerant parsing from a query and minimal query strings."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # field name -> query key, where they differ
    query_keys: ClassVar[Mapping[str, str]] = {}

    @classmethod
    def _raw(cls, query: RawQuery) -> dict[str, Any]:
        names = {v: k for k, v in cls.query_keys.items()}
        raw: dict[str, Any] = {}
        for key, values in query.items():
            field = names.get(key, key)
            if field not in cls.model_fields:
                continue
            info = cls.model_fields[field]
            if isinstance(info.default, tuple):
                raw[field] = split_values(values)
            elif values and values[-1] != "":
                raw[field] = values[-1]
        return raw

    @classmethod
    def parse(cls, query: RawQuery | str) -> tuple[Self, list[str]]:
        """The view a query describes, and a notice for every value that had to be dropped."""
        q = parse_query(query) if isinstance(query, str) else query
        return cls.tolerant(cls._raw(q))

    @classmethod
    def tolerant(cls, raw: dict[str, Any]) -> tuple[Self, list[str]]:
        """Validate `raw`, dropping (and reporting) the fields that do not validate."""
        notes: list[str] = []
        for _ in range(len(raw) + 1):
            try:
                return cls.model_validate(raw), notes
            except ValidationError as exc:
                for err in exc.errors():
                    field = str(err["loc"][0]) if err["loc"] else ""
                    if field in raw:
                        key = cls.query_keys.get(field, field)
                        value = raw.pop(field)
                        value = ",".join(value) if isinstance(value, tuple) else str(value)
                        value = value[:60]
                        notes.append(f"ignored {key}={value}: {err['msg']}")
        return cls(), notes

    def query(self) -> str:
        """The minimal query string of this view (defaults left out), without '?'."""
        pairs: list[tuple[str, str]] = []
        defaults = type(self)()
        for name in type(self).model_fields:
            value = getattr(self, name)
            if value == getattr(defaults, name):
                continue
            key = self.query_keys.get(name, name)
            if isinstance(value, tuple):
                pairs.append((key, ",".join(value)))
            elif isinstance(value, bool):
                pairs.append((key, "1"))
            elif isinstance(value, float):
                pairs.append((key, f"{value:g}"))
            elif value is not None:
                pairs.append((key, str(value)))
        return urlencode(pairs, safe=",:/")

    def replace(self, **changes: Any) -> Self:
        """A copy with some fields changed (validated)."""
        return type(self).model_validate({**self.model_dump(), **changes})


class RunView(_View):
    """State of the run page (`/inference`) and the points page (`/points`)."""

    query_keys: ClassVar[Mapping[str, str]] = {"runs": "unofficialRun", "frontier_only": "frontier"}

    # Each field's marker names what it feeds (dashboard/affects.py): the caches and callbacks
    # derive from these what a change of the field recomputes, redraws or leaves alone.
    runs: Annotated[Ids, affects(Part.RUNS)] = ()
    y: Annotated[YAxis, affects(Part.MAIN, Part.SECOND)] = Col.TPUT_PER_GPU.value
    x: Annotated[XAxis, affects(Part.MAIN)] = Col.MEDIAN_INTVTY.value
    x2: Annotated[X2Axis, affects(Part.SECOND)] = Col.MEDIAN_E2EL.value
    model: Filter = ()
    scenario: Filter = ()
    seq: Filter = ()
    hw: Filter = ()
    precision: Filter = ()
    framework: Filter = ()
    spec: Filter = ()
    offload: Filter = ()
    arm: Filter = ()
    hide: Annotated[Values, affects(Part.CHART_STYLE)] = ()
    logx: Annotated[bool, affects(Part.CHART_STYLE)] = False
    logy: Annotated[bool, affects(Part.CHART_STYLE)] = False
    frontier_only: Annotated[bool, affects(Part.CHARTS)] = False
    labels: Annotated[str, _one_of(LABEL_CHOICES), affects(Part.CHARTS)] = "conc"
    envelope: Annotated[str, _one_of(ENVELOPE_CHOICES), affects(Part.MAIN, Part.SECOND)] = "run"
    at: Annotated[float | None, affects(Part.RANKING, Part.CHARTS)] = None
    slo: Annotated[str, affects(Part.MAIN, Part.SECOND)] = ""
    point: Annotated[str | None, affects(Part.CHART_STYLE)] = None
    ab: Annotated[AbAxis, affects(Part.DELTAS)] = Col.SPEC_DECODING.value
    tab: Annotated[str, _one_of(TABS), affects()] = "points"
    # The pruned list's options, as `paretolens prune --neighbours --arm-frontier --master`: the
    # master config is a name among the server's known files (DataSource.master_configs), never
    # a path the browser chose.
    neighbours: Annotated[bool, affects(Part.PRUNED)] = False
    arm_frontier: Annotated[bool, affects(Part.PRUNED)] = False
    master: Annotated[str, affects(Part.PRUNED)] = ""

    # ---- issue 14 (baselines, cost and energy axes): owned by the figures/planes side ----
    # `baseline=<run id>|main`: drawn under the view's first run, with its per-arm uplift.
    baseline: Annotated[str, affects(Part.BASELINE)] = ""
    # `hwcost=h200:kw=1.2,hyperscaler=2.5;...`: per-hardware power and $/GPU-h overrides.
    hwcost: Annotated[str, affects(Part.POINTS)] = ""

    @field_validator("baseline")
    @classmethod
    def _baseline(cls, v: str) -> str:
        """A run id, or `main`: the latest main-branch result per configuration and load."""
        if v and v != MAIN_BASELINE and not is_readable_run_id(v):
            raise ValueError("expected a run id or main")
        return v

    @field_validator("hwcost")
    @classmethod
    def _hwcost(cls, v: str) -> str:
        """Per-hardware cost/power overrides (analysis.cost.parse_hwcost), canonical form."""
        return format_hwcost(parse_hwcost(v))

    # ---- end of issue 14 block ----

    @field_validator("master")
    @classmethod
    def _master(cls, v: str) -> str:
        """The name of a master config the server knows (a file name, no path)."""
        if v and not _MASTER_NAME.match(v):
            raise ValueError("expected the name of a known master config, e.g. nvidia-master.yaml")
        return v

    @field_validator("slo")
    @classmethod
    def _slo(cls, v: str) -> str:
        """Latency/error limits, e.g. `p90_ttft<=2,error_rate<=0.01` (analysis.slo)."""
        return parse_slo(v).text()

    @field_validator("at")
    @classmethod
    def _positive(cls, v: float | None) -> float | None:
        if v is not None and (not math.isfinite(v) or v <= 0):
            raise ValueError("expected a positive number")
        return v

    @classmethod
    def _raw(cls, query: RawQuery) -> dict[str, Any]:
        raw = super()._raw({k: v for k, v in query.items() if not _RUNS_KEY.match(k)})
        runs: list[str] = []
        for key, values in query.items():
            if _RUNS_KEY.match(key):
                runs.extend(split_values(values))
        if runs:
            raw["runs"] = tuple(dict.fromkeys(runs))
        # InferenceX share-link keys, so their links keep working here.
        if query.get("i_log", [""])[-1] in ("1", "true"):
            raw.setdefault("logy", True)
        if query.get("i_optimal", [""])[-1] in ("1", "true"):
            raw.setdefault("frontier_only", True)
        if query.get("i_nolabel", [""])[-1] in ("1", "true"):
            raw.setdefault("labels", "none")
        return raw

    def changed(self, other: RunView) -> set[str]:
        """The fields whose value differs from another view's."""
        return {f for f in type(self).model_fields if getattr(self, f) != getattr(other, f)}

    def data_key(self) -> str:
        """The query of the fields the tables depend on (display-only fields left out)."""
        return self.replace(**{f: RunView.model_fields[f].default for f in DISPLAY_ONLY}).query()

    def controls(self) -> dict[str, Any]:
        """The value of every control of the run page for this view."""
        values: dict[str, Any] = {
            name: list(v) if isinstance(v, tuple) else v
            for name, v in self.model_dump().items()
            if name not in {n for n, _ in (*TOGGLES, *PRUNE_TOGGLES)}
        }
        values["toggles"] = [n for n, _ in TOGGLES if getattr(self, n)]
        values["prune"] = [n for n, _ in PRUNE_TOGGLES if getattr(self, n)]
        values["point"] = self.point or ""
        return values

    @classmethod
    def from_controls(cls, values: Mapping[str, Any]) -> tuple[RunView, list[str]]:
        """The view the run page's controls show (the inverse of `controls`)."""
        raw: dict[str, Any] = {}
        for name, value in values.items():
            if name == "toggles":
                raw.update({n: n in (value or []) for n, _ in TOGGLES})
            elif name == "prune":
                raw.update({n: n in (value or []) for n, _ in PRUNE_TOGGLES})
            elif name in cls.model_fields and value not in (None, ""):
                raw[name] = tuple(value) if isinstance(value, list) else value
        return cls.tolerant(raw)


# Run-view fields that change the charts only, never a table (derived from the fields' markers).
DISPLAY_ONLY = fields_sparing(RunView, *TABLE_PARTS)


class CompareView(_View):
    """State of the compare page (`/compare?base=&candidate=`)."""

    base: str | None = None
    candidate: str | None = None
    y: YAxis = Col.TPUT_PER_GPU.value
    x: XAxis = Col.MEDIAN_INTVTY.value
    logx: bool = False
    logy: bool = False

    @field_validator("base", "candidate")
    @classmethod
    def _id(cls, v: str | None) -> str | None:
        if v is not None and not is_readable_run_id(v):
            raise ValueError("not a run id")
        return v

    def controls(self) -> dict[str, Any]:
        """Control values of the compare page."""
        values = self.model_dump(exclude={"logx", "logy"})
        values["toggles"] = [n for n in ("logx", "logy") if getattr(self, n)]
        return values

    @classmethod
    def from_controls(cls, values: Mapping[str, Any]) -> tuple[CompareView, list[str]]:
        """The view the compare page's controls show."""
        raw = {k: v for k, v in values.items() if k != "toggles" and v not in (None, "")}
        raw.update({n: n in (values.get("toggles") or []) for n in ("logx", "logy")})
        return cls.tolerant(raw)


# The longest index search string (longer is dropped with a notice).
MAX_SEARCH_CHARS = 200


class IndexView(_View):
    """State of the runs index (`/`)."""

    q: Annotated[str, StringConstraints(max_length=MAX_SEARCH_CHARS)] = ""
    model: Values = ()
    hw: Values = ()
    branch: Values = ()
    status: Values = ()
    since: str = ""
    until: str = ""

    @field_validator("since", "until")
    @classmethod
    def _date(cls, v: str) -> str:
        if v and not re.match(r"^\d{4}-\d{2}-\d{2}$", v):
            raise ValueError("expected a date YYYY-MM-DD")
        return v

    def controls(self) -> dict[str, Any]:
        """Control values of the index page."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.model_dump().items()}

    @classmethod
    def from_controls(cls, values: Mapping[str, Any]) -> tuple[IndexView, list[str]]:
        """The view the index page's controls show."""
        raw = {
            k: tuple(v) if isinstance(v, list) else v
            for k, v in values.items()
            if v not in (None, "")
        }
        return cls.tolerant(raw)


class JobsView(_View):
    """State of the jobs page (`/jobs?job=&point=&stream=`)."""

    job: str | None = None
    point: str | None = None
    stream: Annotated[str, _one_of(LOG_STREAMS)] = "stdout"

    @field_validator("job", "point")
    @classmethod
    def _id(cls, v: str | None) -> str | None:
        if v is not None and not _ID.match(v):
            raise ValueError("not an id")
        return v


class HistoryView(_View):
    """State of the history page (`/history?arm=<id>[,<id>]&at=<x>&x=&y=`), issue 14."""

    arm: Values = ()
    at: float | None = None
    x: XAxis = Col.MEDIAN_INTVTY.value
    y: YAxis = Col.TPUT_PER_GPU.value
    hwcost: str = ""

    @field_validator("arm")
    @classmethod
    def _arms(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        bad = [a for a in v if not _ID.match(a)]
        if bad:
            raise ValueError(f"not an arm id: {bad[0][:40]!r}")
        return v

    @field_validator("at")
    @classmethod
    def _positive(cls, v: float | None) -> float | None:
        if v is not None and (not math.isfinite(v) or v <= 0):
            raise ValueError("expected a positive number")
        return v

    @field_validator("hwcost")
    @classmethod
    def _hwcost(cls, v: str) -> str:
        return format_hwcost(parse_hwcost(v))


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

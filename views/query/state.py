"""The URL state of every page as pydantic models: parse a query string, write one back.

A view is reproducible from its address: every control maps to one field here, defaults are left
out of the query string, and parsing is tolerant (a bad value is dropped with a notice, never a
crash), because links get hand-edited and pasted into PRs. The parsing machinery is
`views.query.viewmodel`; the menus the fields choose from are `views.query.choices` (both importable
from here too).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, Field, StringConstraints, field_validator

from analysis.comparison.baseline import MAIN as MAIN_BASELINE
from analysis.cost import format_hwcost, parse_hwcost
from analysis.frontier.slo import parse_slo
from ingest.contract.col import Col
from ingest.run_ids import is_readable_run_id
from views.query.affects import TABLE_PARTS, Part, affects, fields_sparing
from views.query.choices import (
    AB_CHOICES,
    COST_CLASS_CHOICES,
    ENVELOPE_CHOICES,
    LABEL_CHOICES,
    LOG_STREAMS,
    PALETTE_CHOICES,
    PRUNE_TOGGLES,
    TABS,
    TOGGLES,
    X2_CHOICES,
    X_CHOICES,
    y_choices,
)
from views.query.viewmodel import RawQuery, View, one_of, parse_query, split_values

__all__ = [
    "DISPLAY_ONLY",
    "MAX_SEARCH_CHARS",
    "CompareView",
    "HistoryView",
    "IndexView",
    "JobsView",
    "RunView",
]

_RUNS_KEY = re.compile(r"^(unofficialruns?|runs?)$", re.IGNORECASE)
_ID = re.compile(r"^[A-Za-z0-9._:@+-]{1,200}$")
# The InferenceX share-link keys the run page honours (RunView._raw).
_SHARE_KEYS = frozenset({"i_log", "i_optimal", "i_nolabel"})
_MASTER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,120}\.ya?ml$")


def _ids(values: tuple[str, ...]) -> tuple[str, ...]:
    # Run ids: ingest keeps new ones to `ingest.store.RUN_ID_RULE`; ids a store written before
    # the rule holds ('sweep 2026-01 (retry)') are tolerated here, so their pages still open.
    bad = [v for v in values if not is_readable_run_id(v)]
    if bad:
        raise ValueError(f"not a run id: {bad[0][:40]!r}")
    return values


YAxis = Annotated[str, one_of(y_choices)]
XAxis = Annotated[str, one_of(X_CHOICES)]
X2Axis = Annotated[str, one_of(X2_CHOICES)]
AbAxis = Annotated[str, one_of(AB_CHOICES)]
Ids = Annotated[tuple[str, ...], AfterValidator(_ids)]


def _positive(v: float | None) -> float | None:
    if v is not None and (not math.isfinite(v) or v <= 0):
        raise ValueError("expected a positive number")
    return v


# Field types shared by the views, each validated once: a positive x (`at`), latency/error limits
# in canonical form (analysis.frontier.slo, e.g. `p90_ttft<=2,error_rate<=0.01`), per-hardware cost/power
# overrides in canonical form (analysis.cost.parse_hwcost).
PositiveX = Annotated[float | None, AfterValidator(_positive)]
SloText = Annotated[str, AfterValidator(lambda v: parse_slo(v).text())]
HwCost = Annotated[str, AfterValidator(lambda v: format_hwcost(parse_hwcost(v)))]
Values = tuple[str, ...]
# A filter of the run view: it changes which points are analysed.
# fields both charts draw (a redraw of each)
BOTH_CHARTS = affects(Part.MAIN_CHART, Part.SECOND_CHART)
Filter = Annotated[Values, affects(Part.POINTS)]


class RunView(View):
    """State of the run page (`/inference`) and the points page (`/points`)."""

    query_keys: ClassVar[Mapping[str, str]] = {"runs": "unofficialRun", "frontier_only": "frontier"}

    # Each field's marker names what it feeds (views/query/affects.py): the caches and callbacks
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
    frontier_only: Annotated[bool, BOTH_CHARTS] = False
    labels: Annotated[str, one_of(LABEL_CHOICES), BOTH_CHARTS] = "conc"
    # issue 27: the arms' colours (`palette=tol|contrast`; Okabe-Ito by default)
    palette: Annotated[str, one_of(PALETTE_CHOICES), BOTH_CHARTS] = "okabe"
    envelope: Annotated[str, one_of(ENVELOPE_CHOICES), affects(Part.MAIN, Part.SECOND)] = "run"
    at: Annotated[PositiveX, affects(Part.RANKING, Part.MAIN_CHART)] = None
    slo: Annotated[SloText, affects(Part.MAIN, Part.SECOND)] = ""
    point: Annotated[str | None, affects(Part.CHART_STYLE)] = None
    ab: Annotated[AbAxis, affects(Part.DELTAS)] = Col.SPEC_DECODING.value
    tab: Annotated[str, one_of(TABS), affects()] = "points"
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
    hwcost: Annotated[HwCost, affects(Part.POINTS)] = ""
    # ---- issue 27: the TCO calculator (`tab=tco`): the interactivity every user must get
    # (tok/s/user), the fleet's total throughput (tok/s) and the cost class; the per-GPU power
    # and $/GPU-h it assumes are hwcost's (above) ----
    tco_intvty: Annotated[PositiveX, affects(Part.TCO)] = None
    tco_tput: Annotated[PositiveX, affects(Part.TCO)] = None
    tco_cost: Annotated[str, one_of(COST_CLASS_CHOICES), affects(Part.TCO)] = "hyperscaler"

    @field_validator("baseline")
    @classmethod
    def _baseline(cls, v: str) -> str:
        """A run id, or `main`: the latest main-branch result per configuration and load."""
        if v and v != MAIN_BASELINE and not is_readable_run_id(v):
            raise ValueError("expected a run id or main")
        return v

    # ---- end of issue 14 block ----

    @field_validator("master")
    @classmethod
    def _master(cls, v: str) -> str:
        """The name of a master config the server knows (a file name, no path)."""
        if v and not _MASTER_NAME.match(v):
            raise ValueError("expected the name of a known master config, e.g. nvidia-master.yaml")
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

    @classmethod
    def requested_runs(cls, query: str) -> tuple[str, ...]:
        """Every run id a query names, valid or not (`parse` drops the invalid ones)."""
        q = parse_query(query)
        return tuple(
            dict.fromkeys(r for k, v in q.items() if _RUNS_KEY.match(k) for r in split_values(v))
        )

    @classmethod
    def known_key(cls, key: str) -> bool:
        return bool(_RUNS_KEY.match(key)) or key in _SHARE_KEYS or super().known_key(key)

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


class CompareView(View):
    """State of the compare page (`/compare?base=&candidate=`)."""

    base: str | None = None
    candidate: str | None = None
    y: YAxis = Col.TPUT_PER_GPU.value
    x: XAxis = Col.MEDIAN_INTVTY.value
    logx: bool = False
    logy: bool = False
    slo: SloText = ""
    # the arms' colours, as on the run page (`palette=tol|contrast`; Okabe-Ito by default)
    palette: Annotated[str, one_of(PALETTE_CHOICES)] = "okabe"

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


class IndexView(View):
    """State of the runs index (`/`)."""

    q: Annotated[str, StringConstraints(max_length=MAX_SEARCH_CHARS)] = ""
    model: Values = ()
    hw: Values = ()
    branch: Values = ()
    status: Values = ()
    since: str = ""
    until: str = ""
    # The page of the filtered runs the grid shows (the server sends one page of runs; past the
    # last page shows the last). Filters start again at page 1.
    page: Annotated[int, Field(ge=1)] = 1

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


class JobsView(View):
    """State of the jobs page (`/jobs?job=&point=&stream=`)."""

    job: str | None = None
    point: str | None = None
    stream: Annotated[str, one_of(LOG_STREAMS)] = "stdout"

    @field_validator("job", "point")
    @classmethod
    def _id(cls, v: str | None) -> str | None:
        if v is not None and not _ID.match(v):
            raise ValueError("not an id")
        return v


class HistoryView(View):
    """State of the history page (`/history?arm=<id>[,<id>]&at=<x>&x=&y=`), issue 14."""

    arm: Values = ()
    at: PositiveX = None
    x: XAxis = Col.MEDIAN_INTVTY.value
    y: YAxis = Col.TPUT_PER_GPU.value
    hwcost: HwCost = ""
    # the arms' colours, as on the run page (`palette=tol|contrast`; Okabe-Ito by default)
    palette: Annotated[str, one_of(PALETTE_CHOICES)] = "okabe"

    @field_validator("arm")
    @classmethod
    def _arms(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        bad = [a for a in v if not _ID.match(a)]
        if bad:
            raise ValueError(f"not an arm id: {bad[0][:40]!r}")
        return v

"""What a change of a view field invalidates, declared on the field itself.

Each `RunView` field carries an `Affects` marker in its annotation naming the parts of the page
it feeds directly (`runs: Annotated[Ids, affects(Part.RUNS)]`). A part built on another
(`BUILT_ON`) is invalidated with it, so a field names only what it feeds directly, and every
list the cache and the callbacks need (the data cache key, the shared parts of a `RunData`, the
fields that leave the tables or the charts alone) is derived from the markers here, in one place.
Adding a control means declaring its marker; a test holds that every field has one.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel


class Part(StrEnum):
    """A part of the run page a view field can invalidate."""

    RUNS = "runs"  # the points read from the store (and the runs' catalog rows, rejects)
    POINTS = "points"  # the points the filters keep (AL checks)
    MAIN = "main"  # the main plane's analysis: verdicts, frontiers, pruned list, points table
    SECOND = "second"  # the second (latency) plane's analysis
    DELTAS = "deltas"  # the A/B deltas
    RANKING = "ranking"  # the arms ranked at x
    MAIN_CHART = "main_chart"  # the drawn main chart (redrawn)
    SECOND_CHART = "second_chart"  # the drawn second chart (redrawn)
    CHART_STYLE = "chart_style"  # the drawn charts, updated by a patch (axes type, hidden, pin)
    BASELINE = "baseline"  # the baseline drawn under the run and its uplift (issue 14)
    PRUNED = "pruned"  # the pruned list and its exports (prune options, issue 13)
    TCO = "tco"  # the TCO calculator's fleets (issue 27)


# Each part is rebuilt when a part it is built on changes.
BUILT_ON: dict[Part, tuple[Part, ...]] = {
    Part.POINTS: (Part.RUNS,),
    Part.MAIN: (Part.POINTS,),
    Part.SECOND: (Part.POINTS,),
    Part.DELTAS: (Part.MAIN,),
    Part.RANKING: (Part.MAIN,),
    Part.BASELINE: (Part.MAIN,),
    Part.PRUNED: (Part.MAIN,),
    Part.TCO: (Part.POINTS,),
    # the main chart draws the baseline and the "rank arms at x" line; the second neither
    Part.MAIN_CHART: (Part.MAIN, Part.BASELINE),
    Part.SECOND_CHART: (Part.SECOND,),
}
# The parts a `RunData` holds (its cache key is the fields that affect one of them).
DATA_PARTS = frozenset(
    {
        Part.RUNS,
        Part.POINTS,
        Part.MAIN,
        Part.SECOND,
        Part.DELTAS,
        Part.RANKING,
        Part.BASELINE,
        Part.PRUNED,
        Part.TCO,
    }
)
# The parts the table tabs and the ranking show (the second plane only has a chart).
TABLE_PARTS = DATA_PARTS - {Part.SECOND}


@dataclass(frozen=True)
class Affects:
    """The annotation marker of a view field: the parts it feeds directly (see `affects`)."""

    parts: frozenset[Part]


def affects(*parts: Part) -> Affects:
    """The marker of a field that feeds `parts` (none: a field that changes nothing drawn or
    computed, such as the open tab)."""
    return Affects(frozenset(parts))


def _downstream(parts: frozenset[Part]) -> frozenset[Part]:
    out = set(parts)
    grew = True
    while grew:
        grew = False
        for part, bases in BUILT_ON.items():
            if part not in out and out.intersection(bases):
                out.add(part)
                grew = True
    return frozenset(out)


def invalidates(model: type[BaseModel], field: str) -> frozenset[Part]:
    """Every part a change of `field` invalidates (its marker's parts and what is built on them).

    Raises:
        TypeError: when the field has no `Affects` marker.
    """
    markers = [m for m in model.model_fields[field].metadata if isinstance(m, Affects)]
    if len(markers) != 1:
        raise TypeError(f"{model.__name__}.{field} needs one affects(...) marker")
    return _downstream(markers[0].parts)


def fields_affecting(model: type[BaseModel], *parts: Part) -> tuple[str, ...]:
    """The fields (in declaration order) whose change invalidates any of `parts`."""
    return tuple(f for f in model.model_fields if invalidates(model, f) & set(parts))


def fields_sparing(model: type[BaseModel], *parts: Part) -> frozenset[str]:
    """The fields whose change invalidates none of `parts`."""
    return frozenset(model.model_fields) - set(fields_affecting(model, *parts))

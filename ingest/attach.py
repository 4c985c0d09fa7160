"""Which point an auxiliary measurement belongs to (issue 12 item 6).

A /metrics scrape, an aiperf server-metric export or a vLLM server log holds no point of its
own: ingest joins its columns and series to a point of the same directory (or of the paired
aggregate). It joins exactly one point, and only one it agrees with:

1. Model. The measurement's served model names (`model_name` labels, the log's `--model` /
   `--served-model-name`) must match the point's `model` (full id or its last path part, case
   folded). A point without a model is a match only when it is the one candidate; a point whose
   `model_prefix` is the start of the served name counts as a match.
2. Several candidates left: the time window (the export's profiling window, or the server start
   and scrape time of counters since start, against the point's request window) and the token
   totals (`vllm:prompt_tokens` / `vllm:generation_tokens` against the point's
   `total_input_tokens` / `total_output_tokens`: within 10% for a window, no less than the point
   for counters since server start) must pick exactly one: that candidate agrees and every
   other one is contradicted.
3. Otherwise it joins none and the report lists it as ignored with the reason, naming the
   candidates. A measurement is never spread over several points.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ingest.contract.col import Col

Window = tuple[float | None, float | None]

# Counters over the profiling window against the client's totals (warm-up and requests still in
# flight at either end make them differ by a few percent).
TOKEN_TOLERANCE = 0.10
# Clock skew between the client and the server, seconds.
WINDOW_SLACK_S = 5.0


@dataclass(frozen=True)
class Candidate:
    """One point an auxiliary measurement could join."""

    label: str
    row: Mapping[str, Any]
    window: Callable[[], Window | None] = lambda: None


@dataclass(frozen=True)
class Choice:
    """The candidate chosen (its index), or None and why."""

    index: int | None
    reason: str = ""


def _norm(name: str) -> str:
    return name.strip().rstrip("/").casefold()


def _base(name: str) -> str:
    return _norm(name).rsplit("/", 1)[-1]


def _squeeze(name: str) -> str:
    return re.sub(r"[^0-9a-z.]", "", name.casefold())


def aux_models(scope: Mapping[str, Any], enrich: Mapping[str, Any]) -> list[str]:
    """The served model names a measurement names (its scope, else the model it enriches with)."""
    models = [str(m) for m in scope.get("models") or [] if m]
    if not models and enrich.get(Col.MODEL):
        models = [str(enrich[Col.MODEL])]
    return models


def model_verdict(models: Sequence[str], row: Mapping[str, Any]) -> bool | None:
    """True when the point's model is one of `models`, False when it is another, None unknown."""
    if not models:
        return None
    model = row.get(Col.MODEL)
    if isinstance(model, str) and model.strip():
        return any(_norm(m) == _norm(model) or _base(m) == _base(model) for m in models)
    prefix = row.get(Col.MODEL_PREFIX)
    if (
        isinstance(prefix, str)
        and _squeeze(prefix)
        and any(_squeeze(_base(m)).startswith(_squeeze(prefix)) for m in models)
    ):
        return True
    return None


def window_verdict(scope: Mapping[str, Any], point: Window | None) -> bool | None:
    """Whether the measurement's time window covers the point's request window (None unknown)."""
    raw = scope.get("window")
    p0, p1 = point if point is not None else (None, None)
    if not raw or p0 is None or p1 is None:
        return None
    a0, a1 = raw[0], raw[1]
    if scope.get("since_start"):
        # Counters since server start: the server started before the point and was scraped after.
        if (a0 is not None and p1 < a0 - WINDOW_SLACK_S) or (
            a1 is not None and p0 > a1 + WINDOW_SLACK_S
        ):
            return False
        if a0 is not None and a0 <= p0 + WINDOW_SLACK_S:
            return a1 is None or p1 <= a1 + WINDOW_SLACK_S
        return None
    if a0 is None or a1 is None:
        return None
    overlap = min(a1, p1) - max(a0, p0)
    if overlap <= 0:
        return False
    span = p1 - p0
    return span <= 0 or overlap >= 0.5 * span


def token_verdict(scope: Mapping[str, Any], row: Mapping[str, Any]) -> bool | None:
    """Whether the measurement's token counters agree with the point's totals (None unknown)."""
    pairs = [
        (scope.get(key), row.get(col))
        for key, col in (
            ("prompt_tokens", Col.TOTAL_INPUT_TOKENS),
            ("generation_tokens", Col.TOTAL_OUTPUT_TOKENS),
        )
    ]
    known = [
        (float(c), float(t))
        for c, t in pairs
        if isinstance(c, int | float) and isinstance(t, int | float) and t > 0
    ]
    if not known:
        return None
    if scope.get("since_start"):
        return all(c >= t * 0.99 for c, t in known)
    return all(abs(c - t) / t <= TOKEN_TOLERANCE for c, t in known)


def _describe(c: Candidate) -> str:
    model = c.row.get(Col.MODEL) or c.row.get(Col.MODEL_PREFIX)
    return f"{c.label} (model {model})" if model else f"{c.label} (model unknown)"


def choose(
    scope: Mapping[str, Any], enrich: Mapping[str, Any], cands: Sequence[Candidate]
) -> Choice:
    """The one candidate a measurement joins, or None with the reason (see the module doc)."""
    if not cands:
        return Choice(None, "no point in this directory to attach it to")
    models = aux_models(scope, enrich)
    verdicts = [model_verdict(models, c.row) for c in cands]
    pool = [i for i, v in enumerate(verdicts) if v is True]
    if not pool:
        pool = [i for i, v in enumerate(verdicts) if v is None]
        if not pool:
            named = "; ".join(_describe(c) for c in cands)
            return Choice(
                None,
                f"served model {', '.join(models)} matches no point here ({named}): "
                "not attached, nothing stored from it",
            )
        if len(cands) == 1:
            return Choice(0)
    elif len(pool) == 1:
        return Choice(pool[0])
    # Several points of its model, or points whose model is unknown beside others: only the
    # window or the tokens may pick one.
    checks = {
        i: (window_verdict(scope, cands[i].window()), token_verdict(scope, cands[i].row))
        for i in pool
    }
    agree = [i for i, v in checks.items() if True in v and False not in v]
    others_refuted = all(False in v for i, v in checks.items() if i not in agree)
    if len(agree) == 1 and others_refuted:
        return Choice(agree[0])
    named = "; ".join(_describe(cands[i]) for i in pool)
    why = "model" if not models else f"model ({', '.join(models)})"
    return Choice(
        None,
        f"could belong to {len(pool)} points ({named}) and neither its {why}, time window nor "
        "token totals pick exactly one: attached to none, nothing stored from it",
    )


def point_window(data: bytes, index: int, count: int) -> Window | None:
    """A point's request window in epoch seconds from its source file, when it records one in a
    zone-free clock: aiperf's `min_request_timestamp` / `max_response_timestamp` (ns), or bench_serving's
    `benchmark_start_time_unix` / `benchmark_end_time_unix` (s). vLLM's
    `date` is local time without a zone and gives none."""
    if count != 1 or data.lstrip()[:1] != b"{":
        return None
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict):
        return None
    start, end = doc.get("benchmark_start_time_unix"), doc.get("benchmark_end_time_unix")
    if (
        isinstance(start, int | float)
        and isinstance(end, int | float)
        and not isinstance(start, bool)
        and not isinstance(end, bool)
    ):
        return (float(start), float(end))  # bench_serving's benchmark window (epoch seconds)
    ends: list[float] = []
    for key in ("min_request_timestamp", "max_response_timestamp"):
        value = doc.get(key)
        value = value.get("avg") if isinstance(value, dict) else value
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        ends.append(float(value) / 1e9)
    return (ends[0], ends[1])

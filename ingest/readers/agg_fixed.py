"""Reader for InferenceX `utils/process_result.py` aggregates, `agg_<RESULT_FILENAME>.json`.

One flat JSON object per fixed-sequence point (formats.md 2). Latencies are already in seconds and
`<stat>_intvty = 1000 / <stat>_tpot_ms`. Two parallelism shapes exist (InferenceX-app's
benchmark-mapper): v1 has one shared `tp`/`ep`/`dp_attention`; v2 (a `prefill_tp` key, the
multinode shape) splits prefill and decode workers and GPU counts.
"""

from __future__ import annotations

import re
from typing import Any

from ingest.contract.col import STATS, Col
from ingest.readers._common import (
    Fields,
    put,
    read_identity,
    read_power,
    read_topology,
    read_warnings,
)
from ingest.readers._names import parse_runner
from ingest.readers.base import ReadResult, Row, SourceFile

AGENTIC = "agentic-coding"
_LATENCY = re.compile(r"^(?P<stat>mean|median|p\d+(?:\.\d+)?)_(?P<lat>ttft|tpot|itl|e2el|intvty)$")
# What _LATENCY matches with a stat in STATS: key -> (column, is an interactivity). `$` also
# matches before a final newline, so "mean_ttft\n" is read (into mean_ttft) as well.
_LATENCY_KEYS: dict[str, tuple[str, bool]] = {
    f"{stat}_{lat}{end}": (f"{stat}_{lat}", lat == "intvty")
    for stat in STATS
    for lat in ("ttft", "tpot", "itl", "e2el", "intvty")
    for end in ("", "\n")
}


def is_fixed_aggregate(doc: Any) -> bool:
    """A process_result.py row: InferenceX identity plus per-GPU throughput, not agentic."""
    return (
        isinstance(doc, dict)
        and "hw" in doc
        and "tput_per_gpu" in doc
        and ("tp" in doc or "prefill_tp" in doc)
        and doc.get("scenario_type") != AGENTIC
        and "request_metrics" not in doc
        and "users" not in doc
        and "metrics" not in doc
    )


def read_fixed_row(src: SourceFile, doc: Any) -> Row:
    """Turn one process_result.py row into a partial canonical row.

    Raises:
        ParseError: naming the field that is missing or has the wrong type.
    """
    f = Fields.top(src, doc, "a process_result.py aggregate")
    row: Row = {}
    read_identity(f, row)
    split = read_topology(f, row)
    put(row, Col.SCHEMA_VARIANT, "agg_fixed_v2" if split else "agg_fixed_v1")
    put(row, Col.ISL, f.pos_int("isl"))
    put(row, Col.OSL, f.pos_int("osl"))
    for col, key in (
        (Col.TPUT_PER_GPU, "tput_per_gpu"),
        (Col.OUTPUT_TPUT_PER_GPU, "output_tput_per_gpu"),
        (Col.INPUT_TPUT_PER_GPU, "input_tput_per_gpu"),
    ):
        put(row, col, f.num(key))
    if split:
        _multinode_totals(f, row)
    derived_intvty = False
    for key, value in f.obj.items():
        hit = _LATENCY_KEYS.get(key)
        if hit is None:
            continue
        # f.num's fast case inline: a finite float is taken as it is.
        if type(value) is not float or value - value != 0.0:
            value = f.num(key)
        if value is not None:
            row[hit[0]] = value
        derived_intvty = derived_intvty or hit[1]
    if derived_intvty:
        put(row, Col.INTVTY_DEFINITION, "inv_tpot_percentile")
    read_power(f, row)
    read_warnings(f, row)
    return row


def _multinode_totals(f: Fields, row: Row) -> None:
    # Per-GPU rates divide by different GPU counts in multinode rows (formats.md 2.3), so the totals
    # are recovered from the matching denominators instead of num_gpus.
    pre, dec = f.int_("num_prefill_gpu"), f.int_("num_decode_gpu")
    total, out = f.num("tput_per_gpu"), f.num("output_tput_per_gpu")
    inp = f.num("input_tput_per_gpu")
    gpus = (pre or 0) + (dec or 0)
    if pre is None or dec is None or gpus <= 0:
        return
    put(row, Col.NUM_GPUS, gpus)
    put(row, Col.TOTAL_TPUT, None if total is None else total * gpus)
    put(row, Col.OUTPUT_TPUT, None if out is None else out * (dec or gpus))
    put(row, Col.INPUT_TPUT, None if inp is None or not pre else inp * pre)


class AggFixedReader:
    """`agg_*.json` fixed-sequence aggregates, single-node (v1) and multinode (v2)."""

    name = "agg_fixed"

    def sniff(self, src: SourceFile, doc: Any) -> bool:
        return is_fixed_aggregate(doc)

    def read(self, src: SourceFile, doc: Any) -> ReadResult:
        row = read_fixed_row(src, doc)
        put(row, Col.RUNNER, parse_runner(src.rel))
        return ReadResult(points=[row])


FILE_READERS = (AggFixedReader(),)

"""Arms are server configurations: split an arm whose points were served with different settings.

The arm key (`ingest.contract.schema.ARM_KEY`) names what every format can say (model, hardware,
topology, spec decoding, offload, ...). A sweep can vary a server setting the key has no column
for (`--max-num-seqs 4` vs `8`, `--max-num-batched-tokens`, a scheduler flag): its points would
then share one arm and repeat their concurrencies. After a batch is normalised, each arm's
`server_flags` are compared across its points; the settings that differ become part of the
arm's identity (the arm id is re-hashed with them and the label names them), so two variants are
two arms. Points with no recorded settings keep the arm they have (unknown is not a variant).

Settings that differ only as run noise (`RUN_NOISE_FLAGS`: ports, hosts, seeds, log levels,
paths) never split an arm, nor does a setting that moves in lock-step with the load: InferenceX
starts each point's server with `--max-num-seqs` equal to its concurrency, which is one arm.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict

import polars as pl

from ingest.contract.col import Col
from ingest.contract.schema import RUN_NOISE_FLAGS, server_flag_items


def _identity_flags(raw: object) -> dict[str, str]:
    return {k: v for k, v in server_flag_items(raw).items() if k not in RUN_NOISE_FLAGS}


def _tied_to_load(values: list[str | None], loads: list[object]) -> bool:
    """The setting equals the point's concurrency wherever it is set."""
    seen = False
    for v, load in zip(values, loads, strict=True):
        if v is None:
            continue
        seen = True
        if load is None or v.strip() != str(load):
            return False
    return seen


def splitting_flags(flags: list[dict[str, str]], loads: list[object]) -> list[str]:
    """The settings that tell an arm's points apart (sorted): set differently (or set on some
    points and not others), neither run noise nor tied to the load."""
    names = sorted({k for f in flags for k in f})
    out = []
    for name in names:
        values = [f.get(name) for f in flags]
        if len(set(values)) > 1 and not _tied_to_load(values, loads):
            out.append(name)
    return out


def _metadata_settings(raw: object) -> dict[str, str]:
    """The scalar top-level entries of a point's `metadata` (vLLM `--metadata key=value`)."""
    if not raw:
        return {}
    try:
        doc = json.loads(str(raw))
    except (json.JSONDecodeError, RecursionError):
        return {}
    if not isinstance(doc, dict):
        return {}
    return {
        f"metadata.{k}": str(v) for k, v in doc.items() if isinstance(v, str | int | float | bool)
    }


def labelling_keys(settings: list[dict[str, str]]) -> list[str]:
    """Metadata keys that label groups of an arm's points (sorted): their values differ, and at
    least one value is shared by two points. A key with a different value on every point (a
    benchmark id, a timestamp) names runs, not configurations."""
    out = []
    for name in sorted({k for m in settings for k in m}):
        values = [m.get(name) for m in settings]
        distinct = set(values)
        if len(distinct) > 1 and len(distinct) < len(values):
            out.append(name)
    return out


def refine_arms(frame: pl.DataFrame) -> tuple[pl.DataFrame, dict[str, str]]:
    """Split the arms of a normalised batch by the server settings their points differ in.

    Args:
        frame: normalised points (one run or several).

    Returns:
        The frame with `arm_id`, `arm_label` and `point_id` replaced on the rows of split arms,
        and {old point id: new point id} for those rows.
    """
    if frame.height == 0:
        return frame, {}
    rows = frame.select(
        Col.RUN_ID,
        Col.ARM_ID,
        Col.ARM_LABEL,
        Col.POINT_ID,
        Col.CONC,
        Col.SERVER_FLAGS,
        Col.METADATA,
    ).to_dict(as_series=False)
    by_arm: dict[tuple[object, object], list[int]] = defaultdict(list)
    for i, key in enumerate(zip(rows[Col.RUN_ID], rows[Col.ARM_ID], strict=True)):
        by_arm[key].append(i)
    arms, labels, pids = list(rows[Col.ARM_ID]), list(rows[Col.ARM_LABEL]), list(rows[Col.POINT_ID])
    moved: dict[str, str] = {}
    for every in by_arm.values():
        if len(every) < 2:
            continue
        # A point whose server settings no file recorded is not a variant: it keeps its arm.
        idx = [i for i in every if rows[Col.SERVER_FLAGS][i] is not None]
        flags = [_identity_flags(rows[Col.SERVER_FLAGS][i]) for i in idx]
        split = splitting_flags(flags, [rows[Col.CONC][i] for i in idx]) if len(idx) > 1 else []
        meta = [_metadata_settings(rows[Col.METADATA][i]) for i in every]
        by_meta = labelling_keys(meta)
        if by_meta:
            # Metadata variants (vLLM --metadata deployment=...) split every point of the arm.
            known = dict(zip(idx, flags, strict=True))
            idx = every
            flags = [{**known.get(i, {}), **m} for i, m in zip(every, meta, strict=True)]
            split = [*split, *by_meta]
        if not split:
            continue
        for i, f in zip(idx, flags, strict=True):
            setting = {name: f.get(name) for name in split}
            text = json.dumps([arms[i], setting], sort_keys=True)
            arms[i] = hashlib.sha256(text.encode()).hexdigest()[:16]
            shown = ", ".join(f"{k}={'unset' if v is None else v}" for k, v in setting.items())
            labels[i] = f"{labels[i]} | {shown}"
            new = hashlib.sha256(json.dumps([pids[i], arms[i]]).encode()).hexdigest()[:16]
            moved[pids[i]] = new
            pids[i] = new
    if not moved:
        return frame, {}
    return (
        frame.with_columns(
            pl.Series(Col.ARM_ID, arms, dtype=pl.String),
            pl.Series(Col.ARM_LABEL, labels, dtype=pl.String),
            pl.Series(Col.POINT_ID, pids, dtype=pl.String),
        ),
        moved,
    )


_SAME_POINT = (
    "another point of this run has the same configuration, load and source file; kept apart as "
    "point {n} of them (say what tells them apart, e.g. --metadata, to give each its own arm)"
)


def unique_point_ids(frame: pl.DataFrame) -> tuple[pl.DataFrame, dict[int, str]]:
    """Give the second and later rows that share a point id their own id, with a warning.

    Returns:
        The frame and {row index: new point id} for the rows that changed.
    """
    ids = frame.get_column(Col.POINT_ID).to_list()
    if len(set(ids)) == len(ids):
        return frame, {}
    seen: dict[str, int] = {}
    changed: dict[int, str] = {}
    warnings = frame.get_column(Col.WARNINGS).to_list()
    for i, pid in enumerate(ids):
        n = seen.get(pid, 0) + 1
        seen[pid] = n
        if n > 1:
            changed[i] = hashlib.sha256(json.dumps([pid, n]).encode()).hexdigest()[:16]
            warnings[i] = [*(warnings[i] or []), _SAME_POINT.format(n=n)]
    ids = [changed.get(i, pid) for i, pid in enumerate(ids)]
    return (
        frame.with_columns(
            pl.Series(Col.POINT_ID, ids, dtype=pl.String),
            pl.Series(Col.WARNINGS, warnings, dtype=frame.schema[Col.WARNINGS]),
        ),
        changed,
    )

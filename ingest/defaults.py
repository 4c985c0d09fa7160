"""Ingest defaults: what no file says, from `--set`, a job's plan or a `paretolens.yaml`.

A default fills a column the readers left null, before normalisation; a file's own value is kept,
and where it differs from the default the point gets a warning naming both.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from ingest.contract.col import Col
from ingest.errors import SchemaError
from ingest.normalize.batch import NOT_FROM_READERS
from ingest.normalize.canonical import canonical_hw
from ingest.normalize.values import coerce_value
from ingest.report import FileOutcome, Ignored, IngestReport, Reject
from ingest.sources.artifacts import Collected, Unit
from ingest.untrusted.yaml_load import load_yaml

Row = dict[str, Any]

# Columns a default may not set: provenance and derived ids (ingest's own), and the warnings list.
_NO_DEFAULT = NOT_FROM_READERS | {str(Col.WARNINGS)}


def split_run_keys(given: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """`--set`/`paretolens.yaml` keys as (point columns, run catalog fields): title, branch, repo,
    head_sha, status, ... (`ingest.sources.run_meta.FIELDS`) describe the run, not its points.

    Raises:
        SchemaError: naming a run key whose value is not text.
    """
    from ingest.sources.run_meta import FIELDS

    points: dict[str, Any] = {}
    run: dict[str, str] = {}
    for key, value in given.items():
        k = str(key).strip()
        if k not in FIELDS:
            points[str(key)] = value
        elif value is None:
            continue
        elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
            run[k] = str(value)
        else:
            raise SchemaError(k, f"a run catalog field takes text, got {value!r}")
    return points, run


def check_defaults(defaults: Mapping[str, Any]) -> dict[str, Any]:
    """Validate ingest defaults (canonical column -> value) and coerce each value to its column's
    type (``"8"`` for an integer column is 8, ``"true"`` for a boolean is True); None is dropped.

    Raises:
        SchemaError: naming the key that is not a column a default may set, or the bad value.
    """
    out: dict[str, Any] = {}
    for key, value in defaults.items():
        try:
            col = str(Col(key))
        except ValueError as exc:
            raise SchemaError(key, "not a canonical column (docs/schema.md lists them)") from exc
        if col in _NO_DEFAULT:
            raise SchemaError(key, "set by ingest itself; it cannot be given as a default")
        if value is None:
            continue
        try:
            out[col] = coerce_value(col, value)
        except SchemaError:
            # Text from a command line: "0.9" for a float column, "8.0" for an integer one.
            try:
                number = float(value) if isinstance(value, str) else None
            except ValueError:
                number = None
            if number is None:
                raise
            out[col] = coerce_value(col, number)
    return out


def _same(col: str, have: Any, want: Any) -> bool:
    try:
        have = coerce_value(col, have)
    except SchemaError:
        return False
    if isinstance(have, str) and isinstance(want, str):
        return have.strip().casefold() == want.strip().casefold()
    return bool(have == want)


def apply_defaults(
    partials: list[Row],
    defaults: Mapping[str, Any],
    defaults_from: str,
    where: Sequence[str],
    run_id: str,
    report: IngestReport,
) -> list[Row]:
    """Fill the columns each row left null from `defaults` (validated by `check_defaults`).

    A row's own value is kept; where it differs from the default, the row gets a warning naming
    both and the report a note. `hw` and `hw_label` are one fact: a row that says either is
    compared on the canonical hardware, and the other is filled only when they agree. Returns new
    row dicts (the readers' rows are not modified).
    """
    hw_c, label_c = str(Col.HW), str(Col.HW_LABEL)
    out: list[Row] = []
    for i, partial in enumerate(partials):
        row = dict(partial)
        clashes: list[str] = []
        for col, want in defaults.items():
            have = row.get(col)
            if col in (hw_c, label_c) and have is None:
                other = row.get(label_c if col == hw_c else hw_c)
                if other is not None and canonical_hw(str(other)) != canonical_hw(str(want)):
                    name = label_c if col == hw_c else hw_c
                    clashes.append(
                        f"{name}={other!r} from the file differs from {col}={want!r} from "
                        f"{defaults_from}; the file's value is kept"
                    )
                    continue
            if have is None:
                row[col] = want
            elif not _same(col, have, want):
                clashes.append(
                    f"{col}={have!r} from the file differs from {col}={want!r} from "
                    f"{defaults_from}; the file's value is kept"
                )
        if clashes:
            row[str(Col.WARNINGS)] = [*(row.get(str(Col.WARNINGS)) or []), *clashes]
            path = where[i] if i < len(where) else ""
            report.notes.extend(Ignored(path, c, run_id) for c in clashes)
        out.append(row)
    return out


LOCAL_DEFAULTS = "paretolens.yaml"


def local_defaults(
    local: Mapping[str, tuple[Mapping[str, Any], str]], path: str
) -> tuple[Mapping[str, Any], str]:
    """The defaults of the nearest `paretolens.yaml` above a file: (column -> value, its path)."""
    best = ""
    for prefix in local:
        if (not prefix or path.startswith(prefix)) and len(prefix) >= len(best):
            best = prefix
    return local.get(best, ({}, ""))


def fill_row(
    row: Row, defaults: Mapping[str, Any], where: str, path: str, run_id: str, report: IngestReport
) -> Row:
    """`apply_defaults` on one row."""
    if not defaults:
        return row
    return apply_defaults([row], defaults, where, [path], run_id, report)[0]


def read_local_defaults(
    c: Collected, run_id: str, report: IngestReport
) -> tuple[Collected, dict[str, tuple[Mapping[str, Any], str]], dict[str, str]]:
    """Take every `paretolens.yaml` out of the input: {directory prefix: (defaults, its path)},
    and the run catalog fields they give (title, branch, ...; the shallowest file's win).

    A file that is not a mapping of canonical columns (or run catalog fields) to values is
    rejected with the key at fault; the rest of the input is read as usual.
    """
    import yaml

    local: dict[str, tuple[Mapping[str, Any], str]] = {}
    run_keys: list[tuple[int, str, dict[str, str]]] = []
    units: list[Unit] = []
    for unit in c.units:
        keep = []
        for f in unit.files:
            if f.name != LOCAL_DEFAULTS:
                keep.append(f)
                continue
            try:
                doc = load_yaml(f.data.decode("utf-8-sig"))
                if not isinstance(doc, dict):
                    raise SchemaError("", "expected a mapping of column names to values")
                points, run = split_run_keys({str(k): v for k, v in doc.items()})
                local[f.rel.rpartition("/")[0] + "/" if "/" in f.rel else ""] = (
                    check_defaults(points),
                    f.rel,
                )
                if run:
                    run_keys.append((f.rel.count("/"), f.rel, run))
            except (yaml.YAMLError, UnicodeDecodeError) as exc:
                report.rejected.append(
                    Reject(run_id, f.rel, f"not valid YAML: {exc}", "", "paretolens.yaml", f.sha256)
                )
            except SchemaError as exc:
                report.rejected.append(
                    Reject(run_id, f.rel, exc.reason, exc.field, "paretolens.yaml", f.sha256)
                )
        if keep:
            units.append(dataclasses.replace(unit, files=keep))
    run_fields: dict[str, str] = {}
    for _depth, _rel, run in sorted(run_keys, reverse=True):
        run_fields.update(run)
    return dataclasses.replace(c, units=units), local, run_fields


def account_local(
    local: Mapping[str, tuple[Mapping[str, Any], str]], run_id: str, report: IngestReport
) -> None:
    """Each paretolens.yaml is auxiliary to the points of the files under its directory."""
    for prefix, (_defaults, rel) in local.items():
        ids = [
            pid
            for o in report.accepted_files
            if o.run_id == run_id and o.path.startswith(prefix)
            for pid in o.point_ids
        ]
        if ids:
            report.auxiliary.append(FileOutcome(run_id, rel, tuple(ids), LOCAL_DEFAULTS))
        else:
            report.ignored.append(
                Ignored(rel, "paretolens.yaml with no point under its directory", run_id)
            )

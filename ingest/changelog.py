"""A run's changelog: the InferenceX perf-changelog entries its head ref adds (issue 27).

InferenceX CI uploads `changelog_metadata.json` in the `changelog-metadata` artifact of a run:
`{"base_ref", "head_ref", "entries": [{"config-keys": [...], "description": [...],
"pr-link": ..., ...}]}`, the `perf-changelog.yaml` entries the run's branch adds over its base.
They say what changed in the configurations the run measures, so the history page marks them
on its chart. Ingest keeps each run's entries beside the store (`Store.write_changelog`); the
file itself gives no point.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ingest.errors import ParseError
from ingest.readers.base import SourceFile

FILE_NAME = "changelog_metadata.json"


def _strings(value: Any, rel: str, where: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ParseError(rel, where, "expected a list of strings")
    return list(value)


def parse_changelog(src: SourceFile) -> list[dict[str, Any]]:
    """The entries of a `changelog_metadata.json`: config keys, description lines, PR link.

    Raises:
        ParseError: naming the entry and field that are not the documented shape.
    """
    try:
        doc = json.loads(src.text())
    except ValueError as exc:
        raise ParseError(src.rel, "", f"not JSON: {exc}") from exc
    if not isinstance(doc, Mapping) or not isinstance(doc.get("entries"), list):
        raise ParseError(src.rel, "entries", "expected an object with a list of entries")
    out = []
    for i, entry in enumerate(doc["entries"]):
        where = f"entries[{i}]"
        if not isinstance(entry, Mapping):
            raise ParseError(src.rel, where, "expected an object")
        link = entry.get("pr-link")
        if link is not None and not isinstance(link, str):
            raise ParseError(src.rel, f"{where}.pr-link", "expected a URL string")
        out.append(
            {
                "config_keys": _strings(
                    entry.get("config-keys", []), src.rel, f"{where}.config-keys"
                ),
                "description": _strings(
                    entry.get("description", []), src.rel, f"{where}.description"
                ),
                "pr_link": link or "",
                "head_ref": str(doc.get("head_ref") or ""),
            }
        )
    return out


def run_changelog(files: Sequence[SourceFile]) -> list[dict[str, Any]] | None:
    """The entries of the changelog file among a run's files (None when it has none)."""
    found = [f for f in files if f.name == FILE_NAME]
    if not found:
        return None
    return [e for f in found for e in parse_changelog(f)]


def config_key(model_prefix: object, precision: object, hw: object, framework: object) -> str:
    """InferenceX's config key of a configuration: `<model>-<precision>-<hw>-<framework>`."""
    return "-".join(str(p or "").lower() for p in (model_prefix, precision, hw, framework))


def touches(entry: Mapping[str, Any], key: str) -> bool:
    """Whether a changelog entry names a configuration (its glob, or the key with a scenario
    suffix such as `-agentic`)."""
    for pattern in entry.get("config_keys", []):
        p = str(pattern).lower()
        if fnmatch.fnmatchcase(key, p) or p.startswith(key + "-"):
            return True
    return False

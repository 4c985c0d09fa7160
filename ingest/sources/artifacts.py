"""Input layouts -> units of files to read.

Accepted inputs: a directory (a `gh run download` tree with one directory per artifact, a local
sweep directory, or one artifact), an artifact zip (or a zip of zips as the REST API serves), or
loose files. A *unit* is one directory holding files (its `aiperf_artifacts/`, `logs/`, `results/`
subdirectories belong to it): the readers see a unit's files together.

A whole run download gives the same units and the same relative paths however it is passed: the
run directory, a parent holding only that run, a zip of it, or its artifacts as separate inputs
(`collect_all` re-roots each artifact under its own name and merges inputs of one run). A
browser-downloaded artifact keeps its ` (N)` copy suffix in its path but not in its name.

Retried artifacts are deduplicated by logical name (the trailing `_<runner>_<n>` and a browser's
` (N)` stripped), keeping the newest, and so are repeated run-level artifacts (`results_bmk`, ...);
units named `agentic_<x>`, `server_logs_<x>`, `power_audit_<x>` share the pair key of
`bmk_agentic_<x>` / `bmk_<x>` so raw metrics join their aggregate.

Files are read by `ingest.sources.files` (regular files only, within MAX_FILE_BYTES; names that are not
UTF-8 are reported, not read) and zips extracted by `ingest.sources.zips.safe_extract`, which refuses
what could escape or explode; every zip of a batch (nested ones included) draws on one byte
budget, zips are followed at most MAX_ZIP_DEPTH deep, and each zip's extracted files leave the
disk as soon as they are read.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ingest.errors import UnsafeArchiveError
from ingest.readers.base import SourceFile
from ingest.sources.files import FileProblem, is_zip, read_file, shown, utf8_only, walk
from ingest.sources.zips import MAX_ARCHIVE_BYTES, safe_extract

__all__ = [
    "MAX_ZIP_DEPTH",
    "Collected",
    "Unit",
    "artifact_name",
    "collect",
    "collect_all",
    "dedupe_retries",
    "is_artifact_name",
    "logical_name",
    "pair_key",
    "run_root",
]

MAX_ZIP_DEPTH = 8
_NESTED_DIRS = {"aiperf_artifacts", "logs", "results", "trace_replay", "LOGS", "agentic"}
_RETRY = re.compile(r"_(?P<pool>[A-Za-z0-9][A-Za-z0-9.-]*?)_(?P<n>\d+)$")
_PAIR_PREFIXES = (
    "bmk_agentic_",
    "agentic_",
    "bmk_",
    "multinode_server_logs_",
    "server_logs_",
    "power_audit_",
    "gpu_metrics_",
)
PRIMARY_PREFIXES = ("bmk_agentic_", "bmk_")
# Run-level artifacts of run-sweep.yml / e2e-tests.yml: one per run, so a second copy is a repeat.
RUN_LEVEL = ("results_bmk", "eval_results_all", "changelog-metadata", "run-stats")
# A browser saves a second download of `x.zip` as `x (1).zip`.
_BROWSER_COPY = re.compile(r" \(\d+\)$")


def artifact_name(stem: str) -> str:
    """An artifact's name from its directory or zip stem: a browser's ` (N)` suffix dropped."""
    return _BROWSER_COPY.sub("", stem)


def logical_name(name: str) -> str:
    """Artifact name with a browser's ` (N)` and a trailing `_<runner>_<n>` retry suffix stripped."""
    return _RETRY.sub("", artifact_name(name))


def is_artifact_name(name: str) -> bool:
    """A per-job (`bmk_*`, `agentic_*`, ...) or run-level (`results_bmk`, ...) artifact name."""
    base = artifact_name(name.removesuffix(".zip"))
    return base.startswith(_PAIR_PREFIXES) or base in RUN_LEVEL


def pair_key(name: str) -> str:
    """Key shared by an aggregate artifact and its raw/log siblings (retry suffix kept)."""
    for prefix in _PAIR_PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


@dataclass
class Unit:
    """Files of one directory, read together."""

    name: str
    files: list[SourceFile] = field(default_factory=list)
    mtime: float = 0.0

    @property
    def logical(self) -> str:
        return logical_name(self.name)

    @property
    def pair(self) -> str:
        return pair_key(self.name)

    @property
    def is_primary(self) -> bool:
        return self.name.startswith(PRIMARY_PREFIXES)


@dataclass
class Collected:
    """What one input path yielded."""

    default_run_id: str
    units: list[Unit]
    problems: list[FileProblem]
    superseded: list[str] = field(default_factory=list)


def _unit_dir(rel_parent: str) -> str:
    """The unit directory of a file's parent ('' for the root): nested result dirs dropped."""
    parts = rel_parent.split("/") if rel_parent else []
    while parts and parts[-1] in _NESTED_DIRS:
        parts.pop()
    return "/".join(parts) if parts else "."


def _group(
    entries: Iterable[tuple[Path, str]],
    root_name: str,
    prefix: str,
    problems: list[FileProblem],
) -> list[Unit]:
    units: dict[str, Unit] = {}
    artifacts: dict[str, str] = {}
    dirs: dict[str, str] = {}
    for path, rel in entries:
        parent = rel.rpartition("/")[0]
        udir = dirs.get(parent)
        if udir is None:
            udir = dirs[parent] = _unit_dir(parent)
        unit = units.get(udir)
        if unit is None:
            unit = units[udir] = Unit(name=root_name if udir == "." else udir.rpartition("/")[2])
            artifacts[udir] = logical_name(unit.name)
        got = read_file(path, f"{prefix}{rel}", artifacts[udir], problems)
        if got is not None:
            unit.files.append(got[0])
            unit.mtime = max(unit.mtime, got[1])
    return [u for u in units.values() if u.files]


@dataclass
class _Budget:
    """Uncompressed bytes still allowed for one batch (one `collect_all`): every zip of every
    input, nested ones included, draws on it. A budget per input let three zips within the
    limit take three times the limit in one batch."""

    left: int = field(default_factory=lambda: MAX_ARCHIVE_BYTES)

    def limit_text(self) -> str:
        return f"the batch's {MAX_ARCHIVE_BYTES} byte limit for archives ({self.left} left)"


def _from_zip(
    zpath: Path,
    work: Path,
    problems: list[FileProblem],
    prefix: str = "",
    depth: int = 1,
    budget: _Budget | None = None,
) -> list[Unit]:
    budget = budget or _Budget()
    rel_zip = f"{prefix}{shown(zpath.name)}"
    if depth > MAX_ZIP_DEPTH:
        problems.append(
            FileProblem(rel_zip, f"zips nested more than {MAX_ZIP_DEPTH} deep: not extracted")
        )
        return []
    target = Path(tempfile.mkdtemp(prefix="z", dir=work))
    try:
        extracted = safe_extract(zpath, target, limit=budget.left)
    except UnsafeArchiveError as exc:
        why = str(exc)
        if why.endswith(f"over the {budget.left} byte limit"):
            why = why.replace(f"the {budget.left} byte limit", budget.limit_text())
        problems.append(FileProblem(rel_zip, f"unsafe or broken archive: {why}"))
        return []
    budget.left -= sum(p.stat().st_size for p in extracted)
    units: list[Unit] = []
    inner = walk(target, problems)
    nested = [(p, r) for p, r in inner if is_zip(r)]
    plain = [(p, r) for p, r in inner if not is_zip(r)]
    units.extend(_group(plain, artifact_name(shown(zpath.stem)), f"{rel_zip}/", problems))
    for p, r in nested:
        units.extend(
            _from_zip(
                p,
                work,
                problems,
                prefix=f"{rel_zip}/{r.rpartition('/')[0] or '.'}/".replace("/./", "/"),
                depth=depth + 1,
                budget=budget,
            )
        )
    # Everything extracted has been read (or extracted further): free the disk now, not at
    # the end of the batch.
    shutil.rmtree(target, ignore_errors=True)
    return units


def dedupe_retries(units: Sequence[Unit]) -> tuple[list[Unit], list[str]]:
    """Keep the newest unit of each logical artifact name; return the kept and superseded names."""
    best: dict[str, Unit] = {}
    superseded: list[str] = []
    for u in units:
        if not u.name.startswith(_PAIR_PREFIXES) and artifact_name(u.name) not in RUN_LEVEL:
            best[f"{u.name}\0{id(u)}"] = u
            continue
        if not u.name.startswith(_PAIR_PREFIXES):
            # A run-level artifact (`results_bmk`, `results_bmk (7)`) is one per run: two copies
            # are the same download only when their bytes are; otherwise both are kept (two
            # runs' downloads side by side), never one dropped as a "retry".
            same = _content_key(u)
            twin = next((k for k, v in best.items() if _content_key(v) == same), None)
            if twin is None:
                best[f"{u.name}\0{id(u)}"] = u
            else:
                superseded.append(u.name)
            continue
        cur = best.get(u.logical)
        if cur is None or (u.mtime, u.name) > (cur.mtime, cur.name):
            if cur is not None:
                superseded.append(cur.name)
            best[u.logical] = u
        else:
            superseded.append(u.name)
    return list(best.values()), superseded


def _content_key(u: Unit) -> tuple[tuple[str, str], ...]:
    """A unit's files by name within the unit and bytes (sha256)."""
    return tuple(sorted((f.rel.rpartition("/")[2], f.sha256) for f in u.files))


def _visible(directory: Path) -> list[Path]:
    try:
        return [p for p in directory.iterdir() if not p.name.startswith(".")]
    except OSError:
        return []


def _is_run_tree(directory: Path) -> bool:
    """A directory laid out like `gh run download`: it holds artifact directories or zips."""
    return any(is_artifact_name(p.name) for p in _visible(directory))


def run_root(directory: Path) -> Path:
    """The run tree a directory stands for: itself, or the one run directory it alone holds."""
    if _is_run_tree(directory):
        return directory
    inner = _visible(directory)
    one = inner[0] if len(inner) == 1 else None
    if one is not None and one.is_dir() and not one.is_symlink() and _is_run_tree(one):
        return one
    return directory


def _collect_dir(
    root: Path,
    work: Path,
    problems: list[FileProblem],
    budget: _Budget | None = None,
    depth: int = 1,
) -> list[Unit]:
    entries = utf8_only(walk(root, problems), problems)
    zips = [(p, r) for p, r in entries if is_zip(r)]
    plain = [(p, r) for p, r in entries if not is_zip(r)]
    units = _group(plain, shown(root.name), "", problems)
    for p, r in zips:
        parent = f"{r.rpartition('/')[0]}/" if "/" in r else ""
        units.extend(_from_zip(p, work, problems, prefix=parent, depth=depth, budget=budget))
    return units


def _collect_run_zip(
    path: Path, work: Path, problems: list[FileProblem], budget: _Budget
) -> Collected | None:
    """A zip of a whole run tree, read as that tree; None when it is one artifact's zip."""
    target = Path(tempfile.mkdtemp(prefix="z", dir=work))
    try:
        extracted = safe_extract(path, target, limit=budget.left)
    except UnsafeArchiveError:
        return None  # _from_zip reports it with the archive's name
    root = run_root(target)
    if not _is_run_tree(root):
        shutil.rmtree(target, ignore_errors=True)  # _from_zip extracts it again as one artifact
        return None
    # The zips inside share the outer zip's byte budget, as nested artifact zips do.
    budget.left -= sum(p.stat().st_size for p in extracted)
    units = _collect_dir(root, work, problems, budget=budget, depth=2)
    run = shown(root.name) if root != target else artifact_name(shown(path.stem))
    kept, superseded = dedupe_retries(units)
    return Collected(run, kept, problems, superseded)


def collect(path: Path, work: Path, budget: _Budget | None = None) -> Collected:
    """Turn one input path into units (zips are extracted under `work`, drawing on `budget`,
    the batch's; a new one when None).

    A directory holding only one run directory, and a zip of a run directory, are read as that
    run directory: same relative paths, and the run directory's name as the default run id.
    """
    problems: list[FileProblem] = []
    budget = budget or _Budget()
    if path.is_dir():
        root = run_root(path)
        units = _collect_dir(root, work, problems, budget=budget)
        run = shown(root.resolve().name)
    elif path.suffix == ".zip":
        whole = _collect_run_zip(path, work, problems, budget)
        if whole is not None:
            return whole
        units = _from_zip(path, work, problems, budget=budget)
        run = artifact_name(shown(path.stem))
    elif path.exists() or path.is_symlink():
        entries = utf8_only([(path, path.name)], problems)
        units = _group(entries, shown(path.parent.resolve().name), "", problems)
        run = shown(path.resolve().parent.name)
    else:
        return Collected(
            shown(path.name), [], [FileProblem(shown(str(path)), "no such file or directory")]
        )
    kept, superseded = dedupe_retries(units)
    return Collected(run, kept, problems, superseded)


def _rerooted(c: Collected, prefix: str) -> Collected:
    """`c` with every file path under `prefix` (an artifact passed on its own)."""

    def move(f: SourceFile) -> SourceFile:
        return dataclasses.replace(f, rel=f"{prefix}{f.rel}")

    units = [dataclasses.replace(u, files=[move(f) for f in u.files]) for u in c.units]
    problems = [dataclasses.replace(p, rel=f"{prefix}{p.rel}") for p in c.problems]
    return Collected(c.default_run_id, units, problems, c.superseded)


def collect_all(
    paths: Sequence[Path], work: Path, run_id: str | None = None
) -> list[tuple[str, Collected]]:
    """Collect several inputs, one `Collected` per run id (first-seen order).

    An artifact passed on its own (a directory or zip named `bmk_*`, `agentic_*`, `results_bmk`,
    ...) belongs to the run of the directory it sits in, and its files get the paths they have when
    that run directory is passed whole; inputs of one run are merged, so an aggregate passed
    beside its raw `agentic_*` tree joins it. With `run_id`, every input is that run.

    Args:
        paths: the inputs, in the order given.
        work: an empty directory for extracted zips.
        run_id: the run id for everything, or None for each input's default.
    """
    merged: dict[str, Collected] = {}
    budget = _Budget()  # one for the whole batch
    for i, p in enumerate(paths):
        wdir = work / f"in{i}"
        wdir.mkdir()
        c = collect(p, wdir, budget)
        if is_artifact_name(p.name) and (p.is_dir() or p.suffix == ".zip"):
            if p.is_dir():
                c = _rerooted(c, f"{shown(p.name)}/")
            c = dataclasses.replace(c, default_run_id=shown(p.resolve().parent.name))
        rid = run_id or c.default_run_id
        have = merged.get(rid)
        if have is None:
            merged[rid] = c
            continue
        kept, superseded = dedupe_retries([*have.units, *c.units])
        merged[rid] = Collected(
            have.default_run_id,
            kept,
            [*have.problems, *c.problems],
            [*have.superseded, *c.superseded, *superseded],
        )
    return list(merged.items())

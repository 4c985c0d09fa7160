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
UTF-8 are reported, not read) and zips through `ingest.sources.zips.open_archive`, which refuses
what could escape or explode before a byte is inflated; members are read one at a time (a zip is
never unpacked whole), every member of a batch's zips (nested ones included) draws on one byte
budget, zips are followed at most MAX_ZIP_DEPTH deep, and only the nested zip being read is on
disk.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ingest.errors import UnsafeArchiveError
from ingest.readers.base import SourceFile
from ingest.sources.files import FileProblem, is_zip, read_file, shown, utf8_only, walk
from ingest.sources.zips import MAX_ARCHIVE_BYTES, open_archive

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

    def limit_text(self, left: int) -> str:
        return f"the batch's {MAX_ARCHIVE_BYTES} byte limit for archives ({left} left)"

    def take(self, n: int) -> None:
        self.left -= n


def _hidden(rel: str) -> bool:
    """A member `walk` would skip: a name part starting with a dot."""
    return any(part.startswith(".") for part in rel.split("/"))


def _children(names: Sequence[str], under: str) -> set[str]:
    """The visible names directly under `under` ('' for the archive's top) among member paths."""
    out: set[str] = set()
    for n in names:
        if under and not n.startswith(f"{under}/"):
            continue
        part = (n[len(under) + 1 :] if under else n).split("/", 1)[0]
        if part and not part.startswith("."):
            out.add(part)
    return out


def _run_root_in(names: Sequence[str]) -> str | None:
    """Where a zip holds a whole run tree (`run_root` on member paths): '' for its top, the one
    directory it alone holds, or None when it is one artifact's zip."""
    top = _children(names, "")
    if any(is_artifact_name(n) for n in top):
        return ""
    if len(top) == 1:
        (one,) = top
        inner = _children(names, one)
        if inner and any(is_artifact_name(n) for n in inner):
            return one
    return None


def _from_zip(
    zpath: Path,
    work: Path,
    problems: list[FileProblem],
    prefix: str = "",
    depth: int = 1,
    budget: _Budget | None = None,
    whole_run: list[str] | None = None,
) -> list[Unit]:
    """The units of a zip, its members read one at a time (nothing is unpacked whole).

    Plain members are read into memory one by one, each drawing its bytes on the batch's budget;
    a nested zip is written to `work` alone, read the same way and removed before the next one.
    With `whole_run` (a list to receive the run's name), a zip holding a whole run tree is read as
    that tree: paths relative to the run directory, as when the tree is passed unzipped.
    """
    budget = budget or _Budget()
    rel_zip = f"{prefix}{shown(zpath.name)}"
    if depth > MAX_ZIP_DEPTH:
        problems.append(
            FileProblem(rel_zip, f"zips nested more than {MAX_ZIP_DEPTH} deep: not extracted")
        )
        return []
    left = budget.left
    units: list[Unit] = []
    try:
        with open_archive(zpath, limit=left) as arc:
            members = sorted(
                (m for m in arc.members if not _hidden(m.rel)), key=lambda m: m.rel.split("/")
            )
            root = None
            if whole_run is not None:
                root = _run_root_in([*(m.rel for m in arc.members), *arc.dirs])
            if root is None:
                base, strip, root_name = f"{rel_zip}/", "", artifact_name(shown(zpath.stem))
            else:
                base, strip = "", f"{root}/" if root else ""
                root_name = shown(root) if root else artifact_name(shown(zpath.stem))
                assert whole_run is not None
                whole_run.append(root_name)
            members = [m for m in members if m.rel.startswith(strip)]
            plain: list[tuple[str, bytes]] = []
            for m in members:
                if not is_zip(m.rel):
                    data = arc.read(m)
                    budget.take(len(data))
                    plain.append((m.rel[len(strip) :], data))
            units.extend(_group_bytes(plain, root_name, base, work, problems))
            del plain
            for m in members:
                if not is_zip(m.rel):
                    continue
                rel = m.rel[len(strip) :]
                holder = Path(tempfile.mkdtemp(prefix="z", dir=work))
                try:
                    inner = holder / m.rel.rpartition("/")[2]
                    budget.take(arc.copy_to(m, inner))
                    units.extend(
                        _from_zip(
                            inner,
                            work,
                            problems,
                            prefix=f"{base}{rel.rpartition('/')[0]}/" if "/" in rel else base,
                            depth=depth + 1,
                            budget=budget,
                        )
                    )
                finally:
                    # Read (or refused): off the disk before the next one is written.
                    shutil.rmtree(holder, ignore_errors=True)
    except UnsafeArchiveError as exc:
        why = str(exc)
        if why.endswith(f"over the {left} byte limit"):
            why = why.replace(f"the {left} byte limit", budget.limit_text(left))
        problems.append(FileProblem(rel_zip, f"unsafe or broken archive: {why}"))
        if whole_run:
            whole_run.clear()
        return []
    return units


def _group_bytes(
    entries: Sequence[tuple[str, bytes]],
    root_name: str,
    prefix: str,
    work: Path,
    problems: list[FileProblem],
) -> list[Unit]:
    """`_group` for members already in memory (relative posix paths, sorted as `walk` sorts)."""
    units: dict[str, Unit] = {}
    artifacts: dict[str, str] = {}
    now = time.time()
    for rel, data in entries:
        parent = rel.rpartition("/")[0]
        udir = _unit_dir(parent)
        unit = units.get(udir)
        if unit is None:
            unit = units[udir] = Unit(name=root_name if udir == "." else udir.rpartition("/")[2])
            artifacts[udir] = logical_name(unit.name)
        unit.files.append(
            SourceFile(path=work / rel, rel=f"{prefix}{rel}", artifact=artifacts[udir], data=data)
        )
        unit.mtime = now
    return [u for u in units.values() if u.files]


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
        named: list[str] = []
        units = _from_zip(path, work, problems, budget=budget, whole_run=named)
        run = named[0] if named else artifact_name(shown(path.stem))
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

"""Shared by the reliability tests: the real fixtures as ingest sees them, hostile mutations of
them, and comparisons of what a store holds."""

from __future__ import annotations

import copy
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import polars as pl
from hypothesis import strategies as st

from ingest.contract.col import Col
from ingest.contract.schema import RejectCol, RunCol
from ingest.readers.base import SourceFile
from ingest.sources.artifacts import logical_name
from ingest.store import Store

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
HOSTILE = Path(__file__).resolve().parent / "hostile"
# Directories that belong to the unit above them (ingest.sources.artifacts groups them the same way).
NESTED = {"aiperf_artifacts", "logs", "results", "trace_replay", "LOGS", "agentic"}


def scaled(n: int) -> int:
    """An example count, scaled by PARETOLENS_FUZZ_SCALE for longer local runs."""
    return max(1, round(n * float(os.environ.get("PARETOLENS_FUZZ_SCALE", "1"))))


# ---- the real fixtures, grouped into the units ingest reads together ------------------------


def unit_dir(path: Path) -> Path:
    d = path.parent
    while d.name in NESTED:
        d = d.parent
    return d


@cache
def fixture_files() -> tuple[Path, ...]:
    """Every regular file under tests/fixtures (hidden ones skipped, as ingest skips them)."""
    return tuple(
        sorted(
            p
            for p in FIXTURES.rglob("*")
            if p.is_file()
            and not p.is_symlink()
            and not any(part.startswith(".") for part in p.relative_to(FIXTURES).parts)
        )
    )


@cache
def fixture_units() -> dict[Path, tuple[Path, ...]]:
    """Unit directory -> its files."""
    out: dict[Path, list[Path]] = {}
    for p in fixture_files():
        out.setdefault(unit_dir(p), []).append(p)
    return {d: tuple(fs) for d, fs in sorted(out.items())}


@cache
def _bytes(path: Path) -> bytes:
    return path.read_bytes()


def source(path: Path, data: bytes | None = None) -> SourceFile:
    """A fixture as ingest would present it (rel to its unit directory)."""
    udir = unit_dir(path)
    rel = path.relative_to(udir).as_posix()
    return SourceFile(path, rel, logical_name(udir.name), _bytes(path) if data is None else data)


def unit_sources(path: Path, data: bytes) -> list[SourceFile]:
    """The unit of `path` with `path`'s bytes replaced by `data`."""
    return [source(p, data if p == path else None) for p in fixture_units()[unit_dir(path)]]


def is_json_name(path: Path) -> bool:
    return path.suffix == ".json"


# ---- mutations -------------------------------------------------------------------------------

_INF = "__paretolens_inf__"
_NINF = "__paretolens_ninf__"

hostile_scalars = st.sampled_from(
    [
        None,
        True,
        False,
        0,
        -1,
        2**63,
        -(2**63) - 1,
        10**30,
        10**400,
        1e308,
        -1e308,
        5e-324,
        -0.0,
        float("inf"),
        float("-inf"),
        "",
        "NaN",
        "inf",
        "1e400",
        "true",
        "0",
        "-0",
        "<script>alert(1)</script>",
        "\ud800",
        "\x00\x1b[31m",
        "\u202e",
        "x" * 5000,
    ]
)
json_scalars = st.one_of(
    hostile_scalars,
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=True),
    st.text(max_size=8),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(node: Any, prefix: tuple[Any, ...] = (), depth: int = 0) -> Iterator[tuple[Any, ...]]:
    if prefix:
        yield prefix
    if depth > 6:
        return
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*prefix, k), depth + 1)
    elif isinstance(node, list):
        for i, v in enumerate(node[:5]):
            yield from _paths(v, (*prefix, i), depth + 1)


def _to_text(doc: Any) -> bytes:
    def walk(node: Any) -> Any:
        if isinstance(node, float) and node in (float("inf"), float("-inf")):
            return _INF if node > 0 else _NINF
        if isinstance(node, dict):
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    text = json.dumps(walk(doc), indent=1)
    # 1e400 parses as inf without tripping the NaN/Infinity check: the way inf reaches readers.
    return text.replace(f'"{_INF}"', "1e400").replace(f'"{_NINF}"', "-1e400").encode()


@st.composite
def mutated_doc(draw: st.DrawFn, doc: Any) -> bytes:
    """`doc` with 1-4 nodes replaced, deleted, rescaled, retyped or nested, as JSON bytes."""
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, 4))):
        paths = list(_paths(doc))
        if not paths:
            doc = draw(json_values)
            continue
        path = draw(st.sampled_from(paths))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        key = path[-1]
        value = parent[key]
        action = draw(
            st.sampled_from(["replace", "delete", "scale", "retype", "nest", "dup", "rename"])
        )
        if action == "delete":
            del parent[key]
        elif action == "scale" and isinstance(value, int | float) and not isinstance(value, bool):
            parent[key] = value * draw(st.sampled_from([-1, 0, 1e-9, 1000, 1e300, 2**64, 0.5]))
        elif action == "retype":
            parent[key] = str(value) if not isinstance(value, str) else [value]
        elif action == "nest":
            for _ in range(draw(st.sampled_from([1, 3, 60]))):
                value = [value]
            parent[key] = value
        elif action == "dup" and isinstance(value, list):
            parent[key] = value + value[:3]
        elif action == "rename" and isinstance(parent, dict):
            parent[f"{key}_x" if draw(st.booleans()) else str(key).upper()] = parent.pop(key)
        else:
            parent[key] = draw(json_values)
    return _to_text(doc)


_TOKENS = [
    b"NaN",
    b"-Infinity",
    b"1e400",
    b"\xff",
    b"\x00",
    b'"',
    b"{",
    b"]",
    b",",
    b":",
    b"\xef\xbb\xbf",
    b"9" * 40,
    b"\\ud800",
    b"\n",
    b"\r\n",
    b"-",
]
_NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


@st.composite
def mutated_bytes(draw: st.DrawFn, data: bytes) -> bytes:
    """`data` with 1-3 byte-level edits: truncation, deletion, insertion, flips, numbers."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 3))):
        n = len(out)
        at = draw(st.integers(0, n))
        op = draw(st.sampled_from(["truncate", "delete", "insert", "flip", "dup", "number", "bom"]))
        if op == "truncate":
            del out[at:]
        elif op == "delete":
            del out[at : at + draw(st.integers(1, 64))]
        elif op == "insert":
            blob = draw(st.one_of(st.sampled_from(_TOKENS), st.binary(min_size=1, max_size=8)))
            out[at:at] = blob
        elif op == "flip" and n:
            i = min(at, n - 1)
            out[i] ^= draw(st.integers(1, 255))
        elif op == "dup":
            out[at:at] = out[at : at + draw(st.integers(1, 256))]
        elif op == "number":
            nums = list(_NUMBER.finditer(bytes(out)))
            if nums:
                m = draw(st.sampled_from(nums[:200]))
                token = draw(
                    st.sampled_from([b"NaN", b"1e400", b"-1", b"0", b"9" * 400, b"1e-400"])
                )
                out[m.start() : m.end()] = token
        elif op == "bom":
            out[0:0] = b"\xef\xbb\xbf"
    return bytes(out)


def mutation(path: Path) -> st.SearchStrategy[bytes]:
    """Hostile variants of a real fixture's bytes (structural ones for JSON)."""
    data = _bytes(path)
    strategies = [mutated_bytes(data)]
    if is_json_name(path):
        try:
            doc = json.loads(data)
        except ValueError:
            doc = None
        if doc is not None:
            strategies.append(mutated_doc(doc))
    return st.one_of(*strategies)


# ---- store snapshots -------------------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    """Everything a store holds, read back through its public API."""

    points: pl.DataFrame
    series: pl.DataFrame
    runs: pl.DataFrame
    rejects: pl.DataFrame

    def run_points(self, run_id: str) -> pl.DataFrame:
        return self.points.filter(pl.col(Col.RUN_ID) == run_id).sort(Col.POINT_ID)


def snapshot(store: Store) -> Snapshot:
    """Read the whole store (this is also the check that it opens)."""
    return Snapshot(
        points=store.points().sort(Col.RUN_ID, Col.POINT_ID),
        series=store.timeseries(),
        runs=store.runs().sort(RunCol.RUN_ID),
        rejects=store.rejects().sort(RejectCol.RUN_ID, RejectCol.PATH, RejectCol.REASON),
    )


def copy_store(src: Path, dst: Path) -> Store:
    shutil.copytree(src, dst)
    return Store(dst)


def point_keys(df: pl.DataFrame) -> set[tuple[str, str, str]]:
    """(run, source file, point id) of every row."""
    return set(
        zip(
            df.get_column(Col.RUN_ID).to_list(),
            df.get_column(Col.SOURCE_PATH).to_list(),
            df.get_column(Col.POINT_ID).to_list(),
            strict=True,
        )
    )


def comparable(df: pl.DataFrame) -> pl.DataFrame:
    """Rows without the ingest timestamp, in a stable order (for equality across ingests)."""
    return df.drop(Col.INGESTED_AT).sort(Col.RUN_ID, Col.POINT_ID)


@contextmanager
def synthetic_series() -> Iterator[None]:
    """Give every point ingest builds three server-metric samples derived from its id (the real
    fixtures carry no /metrics dumps), so store writes include the series files. Deterministic:
    the same point always gets the same samples."""
    import ingest.pipeline as pipeline

    real = pipeline.build_rows

    def build_rows(*args: Any, **kwargs: Any) -> tuple[pl.DataFrame, list[dict[str, Any]]]:
        frame, series = real(*args, **kwargs)
        extra = [
            {
                "run_id": rid,
                "point_id": pid,
                "metric": "vllm:kv_cache_usage_perc",
                "labels": "{}",
                "t": float(t),
                "value": float(int(pid[:6], 16) % 97 + t) if pid else float(t),
            }
            for rid, pid in zip(
                frame.get_column(Col.RUN_ID).to_list(),
                frame.get_column(Col.POINT_ID).to_list(),
                strict=True,
            )
            for t in range(3)
        ]
        return frame, series + extra

    pipeline.build_rows = build_rows  # type: ignore[assignment]
    try:
        yield
    finally:
        pipeline.build_rows = real


def crash_batch(root: Path) -> tuple[list[Path], Path]:
    """The batch that is killed (several runs, a zip, a changed and a fixed file) and the
    directory of the run as the store held it before."""
    new, old = root / "inputs", root / "old"
    shutil.copytree(
        FIXTURES / "inferencex" / "agentic_agg" / "dsr1_b200_multiturn_pareto_input", new / "dsr1"
    )
    shutil.copytree(FIXTURES / "inferencex" / "bench_serving_random" / "glm-5", new / "glm5")
    shutil.copytree(FIXTURES / "inferencex" / "together_runner_baselines", new / "together")
    zpath = new / "bmk_gptoss.zip"
    shutil.make_archive(
        str(zpath.with_suffix("")),
        "zip",
        FIXTURES / "inferencex" / "raw_bench_serving" / "gptoss120b_multinode",
    )
    agg = sorted((FIXTURES / "inferencex" / "agg_fixed_seq").glob("*.json"))
    for d in (new / "agg", old / "agg"):
        d.mkdir(parents=True)
        for p in agg:
            shutil.copy(p, d / p.name)
    doc = json.loads(agg[0].read_text())
    (old / "agg" / "fixme.json").write_text(json.dumps(doc)[:120])  # rejected before
    (new / "agg" / "fixme.json").write_text(json.dumps({**doc, "conc": 5}))  # fixed now
    (new / "agg" / agg[1].name).write_text(
        json.dumps({**json.loads(agg[1].read_text()), "tput_per_gpu": 1.5})
    )
    return [new / "dsr1", new / "glm5", new / "together", zpath, new / "agg"], old / "agg"


# ---- worker subprocesses ---------------------------------------------------------------------


class Worker:
    """A `_ingest_worker` subprocess: spawned ahead (imports take a second), then given a spec."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self._err = open(log, "w")  # noqa: SIM115 - closed in finish()
        # Bytecode is cached outside the tree, so each worker does not recompile pandas and polars
        # (the environment may set PYTHONDONTWRITEBYTECODE).
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "paretolens-test-pycache")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.reliability._ingest_worker"],
            cwd=REPO,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err,
            text=True,
        )

    def wait_ready(self, timeout: float = 90) -> None:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else ""
        assert line.strip() == "ready", f"worker not ready: {line!r}, see {self.log}"

    def start(self, spec: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(spec) + "\n")
        self.proc.stdin.flush()

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)

    def finish(self, timeout: float = 120) -> tuple[int, dict[str, Any] | None]:
        """Wait for the exit; return (returncode, the result line if one was printed)."""
        try:
            out, _ = self.proc.communicate(timeout=timeout)
        finally:
            self._err.close()
        lines = [ln for ln in (out or "").splitlines() if ln.startswith("{")]
        result = json.loads(lines[-1]) if lines else None
        return self.proc.returncode, result


@contextmanager
def served(wsgi: Any, *, threads: int = 4, name: str = "paretolens-test") -> Iterator[str]:
    """Serve a WSGI app with waitress on a free loopback port; yields its base URL."""
    from waitress.server import create_server

    server = create_server(wsgi, host="127.0.0.1", port=0, threads=threads, ident=name)
    thread = threading.Thread(target=server.run, name=name, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.effective_port}"
    finally:
        server.close()
        thread.join(timeout=10)

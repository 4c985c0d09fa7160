"""A store shared by a team: several writers (threads, processes, "machines" with their own
working directory and environment) on a local folder and on S3, and the store's history.

S3 is moto's server (`moto[server]`, an S3 API emulator from PyPI) started here on a loopback
port; delta-rs commits to it with S3's conditional put (If-None-Match), as it does on AWS.
Every check compares with the same inputs ingested one after the other into a local store:
every row lands exactly once, whatever the interleaving."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from ingest.contract.col import Col
from ingest.pipeline import ingest_paths
from ingest.store import Store
from tests.reliability import figures
from tests.reliability._support import FIXTURES, comparable, snapshot

INX = FIXTURES / "inferencex" / "bench_serving_random"
BUCKET = "paretolens-team"
# Two writers' shares of one run: each has its own files, and both have the overlap.
GLM = sorted((INX / "glm-5").glob("*.json"))
SHARES = [GLM[:6], GLM[4:]]
CLI = str(Path(sys.executable).parent / "paretolens")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """moto's S3 server on a free port, one bucket; yields the environment that reaches it."""
    port = _free_port()
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    env = {
        "AWS_ACCESS_KEY_ID": "paretolens-test",
        "AWS_SECRET_ACCESS_KEY": "paretolens-test",
        "AWS_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
        "AWS_ALLOW_HTTP": "true",
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        import boto3

        deadline = time.monotonic() + 30
        while True:
            try:
                boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"]).create_bucket(
                    Bucket=BUCKET
                )
                break
            except Exception:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.2)
        # The emulator refuses a second create of one key, as S3 does: two writers racing for
        # one log entry are told, so the tests below can fail.
        client = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"])
        client.put_object(Bucket=BUCKET, Key="probe", Body=b"1", IfNoneMatch="*")
        with pytest.raises(client.exceptions.ClientError, match="PreconditionFailed"):
            client.put_object(Bucket=BUCKET, Key="probe", Body=b"2", IfNoneMatch="*")
        yield env
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    """Both shares ingested one after the other: the points every interleaving must give."""
    st = Store(tmp_path_factory.mktemp("ref") / "store")
    for share in SHARES:
        ingest_paths(share, st, run_id="glm-5")
    return comparable(st.points())


def _machine(
    where: Path, store: str, files: list[Path], extra: dict[str, str]
) -> subprocess.Popen[str]:
    """`paretolens ingest` as another machine runs it: its own working directory, home, cache
    and temporary folder, and only the environment a CI runner would give it."""
    where.mkdir(parents=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(where / "home"),
        "XDG_CACHE_HOME": str(where / "cache"),
        "XDG_DATA_HOME": str(where / "data"),
        "TMPDIR": str(where / "tmp"),
        **extra,
    }
    for d in ("home", "cache", "data", "tmp"):
        (where / d).mkdir()
    return subprocess.Popen(
        [CLI, "ingest", *map(str, files), "--store", store, "--run-id", "glm-5"],
        cwd=where,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _two_machines(tmp_path: Path, store: str, extra: dict[str, str]) -> None:
    procs = [
        _machine(tmp_path / f"machine{i}", store, share, extra) for i, share in enumerate(SHARES)
    ]
    for p in procs:
        out, err = p.communicate(timeout=240)
        assert p.returncode == 0, (out, err[-3000:])


def test_two_machines_ingest_into_one_local_store_every_row_once(
    tmp_path: Path, reference: pl.DataFrame
) -> None:
    store = tmp_path / "shared"
    _two_machines(tmp_path, str(store), {})
    got = comparable(Store(store).points())
    assert got.height == len(GLM) == reference.height
    assert got.equals(reference)
    assert Store(store).runs().get_column("point_count").to_list() == [len(GLM)]
    figures.put("shared_store", "local_two_machines_rows", got.height)


def test_two_machines_ingest_into_one_s3_store_every_row_once(
    tmp_path: Path, s3: dict[str, str], reference: pl.DataFrame
) -> None:
    uri = f"s3://{BUCKET}/machines"
    _two_machines(tmp_path, uri, s3)
    st = Store(uri)
    got = comparable(st.points())
    assert got.equals(reference) and got.height == len(GLM)
    assert st.runs().get_column("point_count").to_list() == [len(GLM)]
    # Both machines' commits are in the log, each naming the run.
    ingests = [c for c in st.log() if c.action == "ingest"]
    assert len(ingests) == 2 and all(c.runs == ("glm-5",) for c in ingests)
    figures.put("shared_store", "s3_two_machines_rows", got.height)


def _writer(uri: str, run: str, n: int, offset: int) -> None:
    """One writer's n small ingests into one run (sources overlap with the other writer's)."""
    from tests.ingest.test_store import _frame, _row

    st = Store(uri)
    for i in range(offset, offset + n):
        with st.lock():
            st.replace_run_rows(
                run,
                _frame([_row(run, f"s{i}.json", i + 1, 100.0 + i)]),
                pl.DataFrame(),
                [f"s{i}.json"],
            )


def _run_writers(uri: str, how: str, run: str = "shared") -> list[str]:
    """Two writers (threads or processes), 6 sources each, 2 of them shared."""
    if how == "threads":
        threads = [threading.Thread(target=_writer, args=(uri, run, 6, off)) for off in (0, 4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    else:
        code = (
            "import sys; from tests.reliability.test_shared_store import _writer; "
            "_writer(sys.argv[1], sys.argv[3], 6, int(sys.argv[2]))"
        )
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", code, uri, str(off), run], cwd=Path(__file__).parents[2]
            )
            for off in (0, 4)
        ]
        for p in procs:
            assert p.wait(180) == 0
    return sorted(Store(uri).points([run]).get_column(Col.SOURCE_PATH).to_list())


WANT = sorted(f"s{i}.json" for i in range(10))


@pytest.mark.parametrize("how", ["threads", "processes"])
def test_two_writers_on_a_local_store_lose_and_double_nothing(tmp_path: Path, how: str) -> None:
    assert _run_writers(str(tmp_path / "store"), how) == WANT


@pytest.mark.parametrize("how", ["threads", "processes"])
def test_two_writers_on_s3_lose_and_double_nothing(s3: dict[str, str], how: str) -> None:
    # A run id with every punctuation the rule allows: its partition's key is escaped on S3.
    uri, run = f"s3://{BUCKET}/writers-{how}", "team:glm-5@h200+fp8_v1.2"
    assert _run_writers(uri, how, run) == WANT
    assert Store(uri).points().get_column(Col.RUN_ID).unique().to_list() == [run]
    figures.put("shared_store", f"s3_two_writer_{how}", len(WANT))


def test_store_log_lists_commits_and_undo_restores_before_a_bad_ingest(tmp_path: Path) -> None:
    store = tmp_path / "store"
    env = {**os.environ, "PARETOLENS_STORE": str(store)}

    def cli(*args: str) -> str:
        proc = subprocess.run([CLI, *args], capture_output=True, text=True, env=env, check=False)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    cli("ingest", str(INX / "glm-5"), "--store", str(store), "--run-id", "good")
    good = snapshot(Store(store))
    cli("ingest", str(INX / "qwen3.5"), "--store", str(store), "--run-id", "good")
    assert Store(store).points().height > good.points.height
    log = [line.split("\t") for line in cli("store", "log", "--store", str(store)).splitlines()]
    # version, when, what, runs, source, rows: newest first, one commit per ingest.
    assert [(v, what, runs, src) for v, _at, what, runs, src, _rows in log] == [
        ("1", "ingest", "good", "local"),
        ("0", "ingest", "good", "local"),
    ]
    assert log[1][5] == f"{good.points.height + good.runs.height} rows"
    out = cli("store", "undo", "0", "--store", str(store))
    assert "version 0 (now version 2)" in out
    back = snapshot(Store(store))
    assert comparable(back.points).equals(comparable(good.points))
    assert back.runs.equals(good.runs)
    assert cli("store", "log", "--store", str(store), "--limit", "1").split("\t")[2] == "undo to 0"

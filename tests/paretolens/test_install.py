"""A normal install: the wheel `uv build` makes, installed into a fresh virtual environment with
the locked dependencies, gives a working `paretolens`. `paretolens demo` loads the bundled sample
runs (carried in the wheel) into the store in the user's data directory, `paretolens serve` serves
them, a run page loads over HTTP with the sample's points, and nothing is written under the
environment's site-packages."""

from __future__ import annotations

import csv
import io
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from dashboard.app import layout_url

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform == "win32", reason="a POSIX virtual environment layout"),
]

ROOT = Path(__file__).resolve().parents[2]
UV = os.environ.get("UV") or shutil.which("uv")
KIMI = "kimik2.5-mi355x-mtp"
# tput_per_gpu of the three process_result aggregates of data/samples/kimik2.5-mi355x-mtp.
KIMI_TPUT = [55.62670336516291, 157.12165563281164, 234.47462632067425]
SAMPLE_RUNS = 8  # the directories of data/samples


def _run(*cmd: str, env: dict[str, str] | None = None, cwd: Path = ROOT) -> str:
    done = subprocess.run(
        cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=600, check=False
    )
    assert done.returncode == 0, f"{cmd}: {done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def _files(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under `root`: relative path -> (size, mtime in ns)."""
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in root.rglob("*")
        if p.is_file()
    }


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(the environment's bin directory, its site-packages) with the built wheel installed."""
    assert UV, "uv is needed to build the wheel (scripts/test.sh installs it)"
    tmp = tmp_path_factory.mktemp("install")
    _run(UV, "build", "--wheel", "--out-dir", str(tmp / "dist"), str(ROOT))
    (wheel,) = (tmp / "dist").glob("paretolens-*.whl")
    venv = tmp / "venv"
    _run(UV, "venv", "--quiet", "--python", sys.executable, str(venv))
    python = venv / "bin" / "python"
    # The locked versions of the runtime dependencies, then the wheel itself; compiled as pip
    # installs by default, so imports need not write byte code.
    reqs = tmp / "requirements.txt"
    locked = _run(UV, "export", "--frozen", "--no-dev", "--no-hashes", "--no-emit-project")
    reqs.write_text("\n".join(line for line in locked.splitlines() if not line.startswith("#")))
    _run(
        UV,
        "pip",
        "install",
        "--quiet",
        "--compile-bytecode",
        "--python",
        str(python),
        "-r",
        str(reqs),
    )
    _run(
        UV,
        "pip",
        "install",
        "--quiet",
        "--compile-bytecode",
        "--no-deps",
        "--python",
        str(python),
        str(wheel),
    )
    (site,) = (venv / "lib").glob("python3*/site-packages")
    yield venv / "bin", site


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_installed_wheel_demos_and_serves_without_writing_into_the_package(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    bin_dir, site = installed
    before = _files(site)
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PARETOLENS_", "VIRTUAL_ENV"))}
    env.update(HOME=str(home), XDG_DATA_HOME=str(home / "data"), PATH=f"{bin_dir}:/usr/bin:/bin")
    # Run from elsewhere than the clone, as an installed tool is.
    out = _run(str(bin_dir / "paretolens"), "demo", env=env, cwd=tmp_path)
    store = home / "data" / "paretolens" / "store"
    assert f"loaded {SAMPLE_RUNS} sample runs" in out and str(store) in out

    port = _free_port()
    log = tmp_path / "serve.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [str(bin_dir / "paretolens"), "serve", "--port", str(port)],
            env=env,
            cwd=tmp_path,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 120
        while "open a sample run: " not in log.read_text():
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        text = log.read_text()
        assert f"serving {store} ({SAMPLE_RUNS} runs)" in text
        base = f"http://127.0.0.1:{port}"
        page = f"/inference?unofficialRun={KIMI}"
        body = ""
        while not body:
            try:
                with urllib.request.urlopen(base + page, timeout=30) as resp:
                    body = resp.read().decode()
            except OSError:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
        assert "paretolens" in body
        req = urllib.request.Request(base + layout_url(page))
        with urllib.request.urlopen(req, timeout=30) as resp:
            layout = resp.read().decode()
        assert KIMI in layout and "not in the store" not in layout
        export = f"{base}/export/points.csv?unofficialRun={KIMI}"
        with urllib.request.urlopen(export, timeout=30) as resp:
            rows = list(csv.DictReader(io.StringIO(resp.read().decode())))
        tput = sorted(float(r["tput_per_gpu (tok/s/GPU)"]) for r in rows)
        assert tput == pytest.approx(KIMI_TPUT, rel=1e-12)
    finally:
        proc.terminate()
        proc.wait(timeout=30)

    assert _files(site) == before, "paretolens wrote under site-packages"
    assert store.is_dir() and any(store.iterdir())

#!/usr/bin/env bash
# Run every check and test paretolens has, installing what they need first.
# This is the README's test command; .ci/run runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v uv >/dev/null 2>&1; then
    python3 -m pip install --quiet uv
fi
# Browser tests drive Debian's headless chromium through chromedriver.
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    if [ "$(id -u)" = "0" ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
    else
        sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
    fi
fi
# The Slurm tests (tests/runner/test_slurm_cluster.py) start a real one-node cluster from Debian's
# packages: they run munged, slurmctld and slurmd themselves, with a generated slurm.conf.
if ! command -v slurmctld >/dev/null 2>&1 || ! command -v slurmd >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then
    if [ "$(id -u)" = "0" ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
    else
        sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
    fi
fi

uv sync --frozen --quiet
echo "== ruff check";  uv run ruff check .
echo "== ruff format"; uv run ruff format --check .
echo "== mypy";        uv run mypy
# Every tier (tests/conftest.py). `pytest` alone runs only the fast one; the other tiers here
# override its -m. The fast tier runs on both cores (pytest-xdist); the slow (workers and
# subprocesses), browser, reliability and Slurm tiers one test at a time (timing-sensitive runner,
# crash and load tests, one chromium, one Slurm cluster). Extra arguments go to every run.
tier() {
    local name="$1"; shift
    echo "== pytest: ${name}"
    local rc=0
    uv run pytest "$@" || rc=$?
    # 5: the tier has no test (possible with a -k filter among the extra arguments).
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 5 ]; then exit "$rc"; fi
}
tier fast        -n 2 "$@"
tier slow        -n 0 -m "slow" "$@"
tier browser     -n 0 -m "browser" "$@"
tier reliability -n 0 -m "reliability" "$@"
tier slurm       -n 0 -m "slurm" "$@"

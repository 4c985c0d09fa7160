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
echo "== pytest";      uv run pytest "$@"

#!/usr/bin/env bash
# Serve the dashboard on the bundled sample runs (installing what it needs first), from the
# clone's own store data/store, which gets the sample runs on first use.
# Extra arguments go to `paretolens serve` (e.g. --port 8060, --workers 2).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v uv >/dev/null 2>&1; then
    python3 -m pip install --quiet uv
fi
uv sync --frozen --quiet
store="$(pwd)/data/store"
uv run paretolens demo --store "$store" --if-empty
exec uv run paretolens serve --store "$store" "$@"

#!/usr/bin/env bash
# Serve the dashboard on the bundled sample runs (installing what it needs first).
# Extra arguments go to `paretolens serve` (e.g. --port 8060).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v uv >/dev/null 2>&1; then
    python3 -m pip install --quiet uv
fi
uv sync --frozen --quiet
exec uv run paretolens serve "$@"

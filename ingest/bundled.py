"""Where the bundled data is: the sample runs, the master config they are pruned against, the
golden AL tables and the hardware figures.

In a clone (and an editable install) they are the repository's `data/`; a wheel carries the same
files inside this package, as `ingest/bundled_data/` (pyproject.toml's force-include), so an
installed paretolens finds them without a clone. Nothing is ever written here: the user's store
lives in their data directory (`paretolens.settings`).
"""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent
_IN_WHEEL = _HERE / "bundled_data"

DATA_DIR = _IN_WHEEL if _IN_WHEEL.is_dir() else _HERE.parent / "data"
SAMPLES_DIR = DATA_DIR / "samples"
MASTER_CONFIGS_DIR = DATA_DIR / "master-configs"
GOLDEN_AL_DIR = DATA_DIR / "golden_al"
HARDWARE_FILE = DATA_DIR / "hardware.yaml"

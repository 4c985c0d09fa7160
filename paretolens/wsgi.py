"""The WSGI target: `waitress-serve paretolens.wsgi:server` (any WSGI server works).

The composition root builds the app, as datasette's CLI builds `Datasette(...)`: the settings
come from the environment (`PARETOLENS_*`), the store is the configured one (the bundled store is
seeded with the sample runs on first use), and the golden AL tables are the bundled ones.
Importing this module builds the app; `paretolens serve` builds its own and does not import it.
"""

from __future__ import annotations

from flask import Flask

from dashboard.app import create_app
from paretolens.commands.common import open_store
from paretolens.settings import GOLDEN_AL_DIR, load_settings

settings = load_settings()
server: Flask = create_app(open_store(None), settings, golden_dir=GOLDEN_AL_DIR).server

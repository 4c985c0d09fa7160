"""The WSGI target: `waitress-serve paretolens.wsgi:server` or `gunicorn paretolens.wsgi:server`
(any WSGI server works; `paretolens serve --workers N` runs gunicorn on it).

The composition root builds the app, as datasette's CLI builds `Datasette(...)`: the settings
come from the environment (`PARETOLENS_*`), the store is the configured one, and the golden AL
tables are the bundled ones. Importing this module builds the app, once in each server process;
several processes share what they must through `PARETOLENS_STATE_DIR` (docs/deployment.md).
`paretolens serve` with one process builds its own app and does not import this module.
"""

from __future__ import annotations

from flask import Flask

from dashboard.app import create_app, settle_heap
from ingest.bundled import GOLDEN_AL_DIR
from paretolens.commands.common import open_store
from paretolens.settings import load_settings

settings = load_settings()
server: Flask = create_app(open_store(None), settings, golden_dir=GOLDEN_AL_DIR).server
settle_heap()  # after the app is built: full collections walk only what requests make

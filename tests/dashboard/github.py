"""A loopback server replaying the real GitHub API responses of run 29820102138 (run object and
artifact listing from tests/fixtures/github), with artifact zips built from real aggregates."""

from __future__ import annotations

import io
import json
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
GH_RUN = "29820102138"
REPO = "SemiAnalysisAI/InferenceX"


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def routes(base: str) -> dict[str, bytes]:
    """Path -> body of every route the fetch of the run uses."""
    gh = FIXTURES / "github" / f"run_{GH_RUN}"
    listing = json.loads((gh / "github_artifacts.json").read_text())
    agg = FIXTURES / "inferencex" / "agentic_agg" / "kimik2.7_tp4_sweep_29003473063"
    rows = json.dumps(
        [json.loads(p.read_text()) for p in sorted(agg.glob("kimik2.7_*.json"))]
    ).encode()
    out = {f"/repos/{REPO}/actions/runs/{GH_RUN}": (gh / "github_run.json").read_bytes()}
    for a in listing["artifacts"]:
        a["archive_download_url"], a["digest"] = f"{base}/dl/{a['id']}.zip", None
        out[f"/dl/{a['id']}.zip"] = _zip(
            {"agg_bmk.json": rows} if a["name"] == "results_bmk" else {}
        )
    out[f"/repos/{REPO}/actions/runs/{GH_RUN}/artifacts"] = json.dumps(listing).encode()
    return out


@contextmanager
def github_api() -> Iterator[str]:
    """Serve the replay on a free loopback port; yields its base URL."""
    table: dict[str, bytes] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = table.get(self.path.split("?")[0])
            self.send_response(200 if body is not None else 404)
            data = body if body is not None else b'{"message": "Not Found"}'
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    table.update(routes(base))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield base
    finally:
        server.shutdown()
        server.server_close()

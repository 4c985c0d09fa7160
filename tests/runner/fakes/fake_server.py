"""A stand-in for `vllm serve` (tests only): /health, /metrics and a completions endpoint.

Listens on 127.0.0.1 only. /health answers 503 until FAKE_READY_DELAY seconds have passed, then
200. /metrics is Prometheus text with vLLM's speculative-decoding counters, which every POST to
/v1/completions advances (2 drafts of 3 tokens, 4 accepted: AL = 1 + 4/2 = 3 per request).
FAKE_SERVER_MODE=crash exits with code 4 before it ever becomes ready.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = os.environ.get("MODEL", "fake/model")
STATE = {"drafts": 100.0, "draft_tokens": 300.0, "accepted": 150.0, "pos": [60.0, 50.0, 40.0]}
LOCK = threading.Lock()
START = time.monotonic()


def metrics_text() -> str:
    labels = f'engine="0",model_name="{MODEL}"'
    with LOCK:
        s = dict(STATE)
        pos = list(STATE["pos"])
    lines = []
    for name, key, help_ in (
        ("vllm:spec_decode_num_drafts", "drafts", "Number of spec decoding drafts."),
        ("vllm:spec_decode_num_draft_tokens", "draft_tokens", "Number of draft tokens."),
        ("vllm:spec_decode_num_accepted_tokens", "accepted", "Number of accepted tokens."),
    ):
        lines += [
            f"# HELP {name}_total {help_}",
            f"# TYPE {name}_total counter",
            f"{name}_total{{{labels}}} {s[key]}",
        ]
    name = "vllm:spec_decode_num_accepted_tokens_per_pos"
    lines += [
        f"# HELP {name}_total Accepted tokens per draft position.",
        f"# TYPE {name}_total counter",
    ]
    lines += [f'{name}_total{{{labels},position="{i}"}} {v}' for i, v in enumerate(pos)]
    lines += [
        "# HELP vllm:num_requests_running Requests running.",
        "# TYPE vllm:num_requests_running gauge",
    ]
    lines += [f"vllm:num_requests_running{{{labels}}} 0.0"]
    return "\n".join(lines) + "\n"


class Handler(BaseHTTPRequestHandler):
    ready_after = 0.0

    def _send(self, status: int, body: str, ctype: str = "text/plain") -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path == "/health":
            ready = time.monotonic() - START >= self.ready_after
            self._send(200 if ready else 503, "ok" if ready else "loading")
        elif self.path == "/metrics":
            self._send(200, metrics_text(), "text/plain; version=0.0.4")
        else:
            self._send(404, "not found")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        with LOCK:
            STATE["drafts"] += 2
            STATE["draft_tokens"] += 6
            STATE["accepted"] += 4
            STATE["pos"] = [STATE["pos"][0] + 2, STATE["pos"][1] + 1.5, STATE["pos"][2] + 0.5]
        self._send(200, '{"choices": [{"text": "ok"}]}', "application/json")

    def log_message(self, *args: object) -> None:
        return


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model", default=MODEL)
    args = parser.parse_args()
    if os.environ.get("FAKE_SERVER_MODE") == "crash":
        print("fake server: failed to allocate KV cache", file=sys.stderr)
        return 4
    Handler.ready_after = float(os.environ.get("FAKE_READY_DELAY", "0.2"))
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"fake server for {args.model} on 127.0.0.1:{args.port}", flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A stand-in for `vllm bench serve` (tests only): writes a benchmark_serving result JSON.

The result has the real key set of `benchmark_serving.py` (taken from a real gpt-oss-120b result
in tests/fixtures) with numbers derived from the concurrency. Arguments mirror vllm's
(`--model --max-concurrency --port --result-dir --result-filename`); without them the
InferenceX environment variables are used (script mode).

Behaviour by environment, for the failure tests:
* FAKE_FAIL / FAKE_HANG: "CONC/DP_ATTENTION" pairs ("16/true,64/false"); a matching point exits
  with code 3 (writing no result), or hangs after starting a grandchild that hangs too (its pid
  is written to $FAKE_COUNTS_DIR/<point id>.grandchild);
* FAKE_OOM: "CONC/DP_ATTENTION" pairs; a matching point takes 1.5 GB of memory and holds it
  (a Slurm memory limit then kills it);
* FAKE_SLEEP: seconds to sleep before benchmarking (to hold a point in the running state);
* FAKE_COUNTS_DIR: each invocation appends a line to <dir>/<point id> (to count runs).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

TEMPLATE = (
    Path(__file__).resolve().parents[2]
    / "fixtures/inferencex/raw_bench_serving/gptoss120b_multinode/concurrency_8_req_rate_inf_gpus_16_ctx_8_gen_8.json"
)


def _matches(var: str, conc: int) -> bool:
    key = f"{conc}/{os.environ.get('DP_ATTENTION', 'false')}"
    return key in {x.strip() for x in os.environ.get(var, "").split(",") if x.strip()}


def _requests(port: int, n: int) -> None:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    for _ in range(n):
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/completions", data=b"{}", method="POST"
        )
        with opener.open(req, timeout=5) as resp:
            resp.read()


def result(model: str, conc: int) -> dict[str, object]:
    doc = json.loads(TEMPLATE.read_text())
    # DP attention serves 10% more in this fake; no two points write the same bytes.
    scale = conc / (1 + conc / 32) * (1.1 if os.environ.get("DP_ATTENTION") == "true" else 1.0)
    prompts = conc * 10
    doc.update(
        date=time.strftime("%Y%m%d-%H%M%S"),
        model_id=model,
        tokenizer_id=model,
        num_prompts=prompts,
        completed=prompts,
        max_concurrency=conc,
        total_input_tokens=prompts * 1024,
        total_output_tokens=prompts * 128,
    )
    doc["total_token_throughput"] = 300.0 * scale
    doc["output_throughput"] = 35.0 * scale
    doc["request_throughput"] = 0.25 * scale
    doc["duration"] = prompts / doc["request_throughput"]
    for key in list(doc):
        if key.endswith("_tpot_ms") or key.endswith("_itl_ms"):
            doc[key] = 8.0 + conc * 0.5
        elif key.endswith("_ttft_ms"):
            doc[key] = 100.0 + conc * 5.0
        elif key.endswith("_e2el_ms"):
            doc[key] = 1200.0 + conc * 70.0
    return doc


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=os.environ.get("MODEL"))
    parser.add_argument("--max-concurrency", type=int, default=int(os.environ.get("CONC", "0")))
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "0")))
    parser.add_argument("--result-dir", default=os.environ.get("RESULT_DIR"))
    parser.add_argument(
        "--result-filename", default=os.environ.get("RESULT_FILENAME", "result") + ".json"
    )
    parser.add_argument("--no-requests", action="store_true")
    args = parser.parse_args()
    conc = args.max_concurrency
    point = os.environ.get("PARETOLENS_POINT_ID", "unknown")
    counts = os.environ.get("FAKE_COUNTS_DIR")
    if counts:
        with open(Path(counts) / point, "a") as fh:
            fh.write(f"{os.getpid()}\n")
    print(
        f"fake bench: model={args.model} conc={conc} tp={os.environ.get('TP')} port={args.port}",
        flush=True,
    )
    time.sleep(float(os.environ.get("FAKE_SLEEP", "0")))
    if _matches("FAKE_FAIL", conc):
        print(
            "fake bench: RuntimeError: 12 of 40 requests failed (CUDA out of memory)",
            file=sys.stderr,
        )
        return 3
    if _matches("FAKE_OOM", conc):
        print("fake bench: loading a model that does not fit", flush=True)
        hog = bytearray(1536 * 1024 * 1024)
        for i in range(0, len(hog), 4096):
            hog[i] = 1
        time.sleep(600)
        return 1
    if _matches("FAKE_HANG", conc):
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        if counts:
            (Path(counts) / f"{point}.grandchild").write_text(str(child.pid))
        print("fake bench: waiting for a server that never answers", flush=True)
        time.sleep(600)
        return 1
    if args.port and not args.no_requests:
        _requests(args.port, 4)
    out = Path(args.result_dir) / args.result_filename
    out.write_text(json.dumps(result(args.model, conc), indent=2))
    print(f"fake bench: wrote {out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

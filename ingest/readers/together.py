"""Reader for together_runner baseline results (`together_runner/baselines/<hw>/.../conc<N>.json`).

A third harness in InferenceX's tree: `compare.py emit` maps a raw `benchmark_serving.py` (vLLM)
or `sglang.bench_serving` output into `{hw, cluster, model, framework, precision, isl, osl, tp, ep,
conc, profile, image, tuning, host, ts, metrics{...}, gpu{...}}`. Metrics are totals (tok/s) and
latencies in milliseconds (median and p99). `gpu.n_gpus` counts every GPU nvidia-smi sampled on
the host, not the GPUs serving the model, so per-GPU throughput divides by `tp` as InferenceX does.
"""

from __future__ import annotations

import re
from typing import Any

from ingest.contract.col import STATS, Col
from ingest.readers._common import Fields, put, warn
from ingest.readers.base import ReadResult, Row, SourceFile

_LAT_MS = re.compile(r"^(?P<stat>mean|median|p\d+(?:\.\d+)?)_(?P<lat>ttft|tpot|itl|e2el)_ms$")
# Both together_runner clients run `--num-prompts $(( CONC * 10 ))`.
_PROMPTS_PER_CONC = 10


def _is_together(doc: Any) -> bool:
    metrics = doc.get("metrics") if isinstance(doc, dict) else None
    return (
        isinstance(metrics, dict)
        and "hw" in doc
        and "conc" in doc
        and ("total_token_throughput" in metrics or "output_token_throughput" in metrics)
    )


def _identity(f: Fields, row: Row) -> None:
    put(row, Col.HW_LABEL, f.str_("hw", required=True))
    put(row, Col.MODEL, f.str_("model"))
    put(row, Col.FRAMEWORK, f.str_("framework"))
    precision = f.str_("precision")
    put(row, Col.PRECISION, precision)
    put(row, Col.IMAGE, f.str_("image"))
    put(row, Col.ISL, f.pos_int("isl"))
    put(row, Col.OSL, f.pos_int("osl"))
    put(row, Col.CONC, f.pos_int("conc", required=True))
    put(row, Col.TP, f.pos_int("tp", required=True))
    ep = f.int_("ep")
    if ep is not None and ep < 0:
        raise f.error("ep", f"expected a non-negative expert-parallel size, got {ep}")
    put(row, Col.EP, ep or 1)  # compare.py writes 0 when EP_SIZE is unset
    put(row, Col.RUNNER, f.str_("host"))
    profile = f.str_("profile")
    if profile and precision and profile.endswith(f"-{precision}"):
        # Profiles are InferenceX-style `<model prefix>-<precision>`, e.g. dsr1-fp4.
        put(row, Col.MODEL_PREFIX, profile.removesuffix(f"-{precision}"))
    tuning = f.obj.get("tuning")
    if isinstance(tuning, bool | int) and tuning in (0, 1):
        put(row, Col.SERVER_FLAGS, {"enable_tuning": bool(tuning)})
    elif tuning is not None:
        raise f.error("tuning", f"expected 0 or 1, got {tuning!r:.40}")


def _metrics(m: Fields, row: Row, conc: int) -> None:
    ok = m.int_("successful_requests")
    if ok is not None:
        if ok <= 0:
            raise m.error("successful_requests", f"{ok} requests succeeded: the run failed")
        put(row, Col.NUM_REQUESTS_SUCCESSFUL, ok)
        issued = _PROMPTS_PER_CONC * conc
        if ok <= issued:
            put(row, Col.NUM_REQUESTS_TOTAL, issued)
            warn(
                row,
                f"num_requests_total={issued} inferred from the harness (--num-prompts 10*conc)",
            )
    total, output = m.num("total_token_throughput"), m.num("output_token_throughput")
    put(row, Col.TOTAL_TPUT, total)
    put(row, Col.OUTPUT_TPUT, output)
    if total is not None and output is not None:
        put(row, Col.INPUT_TPUT, total - output)
    put(row, Col.REQUEST_THROUGHPUT, m.num("request_throughput"))
    for key in m.obj:
        lat = _LAT_MS.match(key)
        if lat and lat["stat"] in STATS:
            value = m.num(key)
            put(row, Col(f"{lat['stat']}_{lat['lat']}"), None if value is None else value / 1000)


def _gpu(g: Fields, row: Row, tp: int) -> None:
    power = g.num("mean_power_per_gpu_w")
    sampled = g.int_("n_gpus")
    if sampled is None or sampled == tp:
        put(row, Col.AVG_POWER_W, power)
        return
    # The mean includes GPUs that served nothing, so it is not the serving GPUs' power.
    warn(
        row,
        f"gpu.n_gpus={sampled} counts every GPU sampled on the host: per-GPU throughput divides "
        f"by tp={tp}; mean_power_per_gpu_w={power} (over all {sampled}) not stored",
    )


class TogetherRunnerReader:
    """together_runner baseline JSON: identity, `metrics{...}` in ms, `gpu{...}` power."""

    name = "together_runner"

    def sniff(self, src: SourceFile, doc: Any) -> bool:
        return _is_together(doc)

    def read(self, src: SourceFile, doc: Any) -> ReadResult:
        f = Fields.top(src, doc, "a together_runner result")
        row: Row = {Col.SCHEMA_VARIANT.value: self.name}
        _identity(f, row)
        metrics = f.sub("metrics", required=True)
        assert metrics is not None
        _metrics(metrics, row, row[Col.CONC.value])
        gpu = f.sub("gpu")
        if gpu is not None:
            _gpu(gpu, row, row[Col.TP.value])
        return ReadResult(points=[row])


FILE_READERS = (TogetherRunnerReader(),)

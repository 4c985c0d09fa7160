"""MLPerf Inference loadgen logs: recognised, named, and refused (they are not serving sweeps).

`mlperf_log_summary.txt` opens with `MLPerf Results Summary` between `=` rules and lists `SUT
name`, `Scenario` (SingleStream, MultiStream, Server, Offline), `Mode`, the scenario's one result
(`Samples per second`, `Completed samples per second`, a latency percentile) and `Result is :
VALID|INVALID`; `mlperf_log_detail.txt` is the same run as `:::MLLOG {json}` lines (`loadgen_version`,
`effective_scenario`, `result_*`). Loadgen 1.0 to 5.x write both shapes. One loadgen run is one
scenario at one target (a QPS, a latency bound), with no per-token latencies and no notion of
concurrency or interactivity, so it is not a point on a throughput/interactivity frontier: the
file is refused with a message naming what it is, rather than called an unknown format.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ingest.errors import ParseError
from ingest.readers.base import ReadResult, SourceFile

_SUMMARY = b"MLPerf Results Summary"
_MLLOG = b":::MLLOG {"
_FIELD = re.compile(r"^(?P<label>SUT name|Scenario|Mode|Result is)\s*:\s*(?P<value>.+?)\s*$", re.M)
_KEYS = ("loadgen_version", "effective_scenario", "result_validity", "sut_name")


def _detail_keys(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        if not line.startswith(":::MLLOG "):
            continue
        try:
            entry: Any = json.loads(line[len(":::MLLOG ") :])
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("key") in _KEYS:
            out.setdefault(str(entry["key"]), str(entry.get("value")))
    return out


class MlperfLoadgenReader:
    """`mlperf_log_summary.txt` / `mlperf_log_detail.txt`: named and refused."""

    name = "mlperf_loadgen"

    def sniff(self, src: SourceFile, doc: Any) -> bool:
        head = src.data[:4096]
        return doc is None and (_SUMMARY in head or head.lstrip().startswith(_MLLOG))

    def read(self, src: SourceFile, doc: Any) -> ReadResult:
        text = src.text()
        if _SUMMARY in src.data[:4096]:
            fields = {m["label"]: m["value"] for m in _FIELD.finditer(text)}
            what = "MLPerf loadgen summary"
            scenario, sut, valid = (
                fields.get("Scenario"),
                fields.get("SUT name"),
                fields.get("Result is"),
            )
            version = None
        else:
            keys = _detail_keys(text)
            what = "MLPerf loadgen detail log"
            scenario, sut = keys.get("effective_scenario"), keys.get("sut_name")
            valid, version = keys.get("result_validity"), keys.get("loadgen_version")
        facts = ", ".join(
            f"{k} {v}"
            for k, v in (
                ("loadgen", version),
                ("scenario", scenario),
                ("SUT", sut),
                ("result", valid),
            )
            if v
        )
        raise ParseError(
            src.rel,
            "",
            f"{what}: not an LLM-serving sweep ({facts}; one loadgen scenario run has no "
            "concurrency, per-token latencies or interactivity to place on a frontier)",
        )


FILE_READERS = (MlperfLoadgenReader(),)

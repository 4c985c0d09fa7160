"""Console result blocks of `vllm bench serve` / `benchmark_serving.py` and SGLang
`sglang.bench_serving`: the `============ Serving Benchmark Result ============` block, parsed
into canonical columns with the bench arguments (a command line or `Namespace(...)`) printed
before it. Read by `ingest.readers.vllm_capture` (docs/formats.md, "Console result blocks").
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.readers._metrics_common import parse_float, spec_row
from ingest.readers.base import Row

BANNER = "============ Serving Benchmark Result ============"
BANNER_BYTES = BANNER.encode()
_LINE = re.compile(r"^\s*(?P<label>[^:]+?):\s+(?P<value>\S+)\s*$")
_LATENCY = re.compile(
    r"^(?P<stat>Mean|Median|P(?P<pct>\d+(?:\.\d+)?)) (?P<lat>TTFT|TPOT|ITL|E2EL) \(ms\)$"
)
_POSITION = re.compile(r"^Position (?P<i>\d+)$")
_COLUMNS = {c.value for c in Col}
_NS_KEYS = (
    "max_concurrency",
    "request_rate",
    "model",
    "num_prompts",
    "dataset_name",
    "random_input_len",
    "random_output_len",
    "random_range_ratio",
)
# A bench command line printed (or pasted) before its result block: `python3 -m
# sglang.bench_serving ...`, `vllm bench serve ...`, `python benchmark_serving.py ...`.
_COMMAND = re.compile(r"sglang\.bench_serving|vllm bench serve|benchmark_serving\.py")
_FLAG = re.compile(r"(?:^|\s)--(?P<key>[a-z][a-z0-9-]*)(?:[ =](?P<value>[^\s\\-][^\s\\]*))?")
_FLAG_KEYS = {
    "model": "model",
    "max-concurrency": "max_concurrency",
    "request-rate": "request_rate",
    "dataset-name": "dataset_name",
    "num-prompts": "num_prompts",
    "num-prompt": "num_prompts",
    "random-input-len": "random_input_len",
    "random-input": "random_input_len",
    "random-output-len": "random_output_len",
    "random-output": "random_output_len",
    "random-range-ratio": "random_range_ratio",
}
_PLAIN = {
    "Benchmark duration (s)": Col.DURATION,
    "Request throughput (req/s)": Col.REQUEST_THROUGHPUT,
    "Output token throughput (tok/s)": Col.OUTPUT_TPUT,
    "Total token throughput (tok/s)": Col.TOTAL_TPUT,
    "Total Token throughput (tok/s)": Col.TOTAL_TPUT,  # vLLM before late 2025
    "Total throughput (tok/s)": Col.TOTAL_TPUT,  # SGLang 2024
    "Input token throughput (tok/s)": Col.INPUT_TPUT,  # SGLang
    "Total input tokens": Col.TOTAL_INPUT_TOKENS,
    "Total generated tokens": Col.TOTAL_OUTPUT_TOKENS,
}
# Lines whose value may be a word: the SGLang block's server kind and its unset limits.
_TEXT_LABELS = frozenset(
    {
        "Backend",
        "Architecture",
        "Traffic request rate",
        "Max request concurrency",
        "Maximum request concurrency",
        "Request rate configured (RPS)",
    }
)
_LOAD_ABOVE = re.compile(
    r"^(?P<what>Traffic request rate|Maximum request concurrency): (?P<v>\S+)\s*$"
)
_TEXT_LINE = re.compile(
    r"^\s*(?P<label>Backend|Architecture|Traffic request rate|Max(?:imum)? request concurrency"
    r"|Request rate configured \(RPS\)):\s+(?P<value>\S.*?)\s*$"
)
_SGLANG_LATENCY = re.compile(r"^(?P<stat>Mean|Median|P(?P<pct>\d+(?:\.\d+)?)) E2E Latency \(ms\)$")
VLLM_VERSION = re.compile(r"vLLM API server version (?P<v>\S+)")


@dataclass
class Block:
    """One `Serving Benchmark Result` block and the bench arguments printed before it."""

    rel: str
    lineno: int
    args: dict[str, str] = field(default_factory=dict)
    values: dict[str, float] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)

    @property
    def sglang(self) -> bool:
        """An SGLang `bench_serving` block (vLLM's never prints `Backend:`)."""
        return "Backend" in self.texts or "Total generated tokens (retokenized)" in self.values


def _stat(stat: str, pct: str | None) -> str:
    """A latency line's statistic as a column prefix: mean, median (also P50) or pNN."""
    if stat == "Mean":
        return "mean"
    return "median" if stat == "Median" or pct == "50" else f"p{pct}"


def _namespace(line: str) -> dict[str, str]:
    out = {}
    for key in _NS_KEYS:
        m = re.search(rf"[(\s,]{key}=(?:'(?P<q>[^']*)'|(?P<v>[^,)]*))", line)
        if m:
            out[key] = m["q"] if m["q"] is not None else m["v"]
    return out


def _command(lines: list[str]) -> dict[str, str]:
    """The bench arguments of a command line (with its `\\` continuation lines)."""
    out: dict[str, str] = {}
    for m in _FLAG.finditer(" ".join(line.rstrip().rstrip("\\") for line in lines)):
        key = _FLAG_KEYS.get(m["key"])
        if key and m["value"]:
            out[key] = m["value"].strip("'\"")
    return out


def parse_console(text: str, rel: str) -> list[Block]:
    """Result blocks of a `vllm bench serve` or `sglang.bench_serving` console log, each with
    the arguments of the command line or `Namespace(...)` printed before it.

    Raises:
        ParseError: naming the line whose value is not a number.
    """
    blocks: list[Block] = []
    args: dict[str, str] = {}
    current: Block | None = None
    lines = text.splitlines()
    for lineno, line in enumerate(lines, start=1):
        if "Namespace(" in line and "backend=" in line:
            args = _namespace(line[line.index("Namespace(") :])
        elif (
            current is None
            and _COMMAND.search(line)
            and "--" in line + (lines[lineno] if lineno < len(lines) else "")
        ):
            command = [line]
            while command[-1].rstrip().endswith("\\") and lineno - 1 + len(command) < len(lines):
                command.append(lines[lineno - 1 + len(command)])
            args = _command(command)
        elif current is None and (m := _LOAD_ABOVE.match(line)):
            # vLLM to mid 2025 prints the load above the block (`None`: no limit)
            args["request_rate" if m["what"] == "Traffic request rate" else "max_concurrency"] = m[
                "v"
            ]
        elif line.strip() == BANNER:
            current = Block(rel, lineno, dict(args))
            blocks.append(current)
        elif current is not None and line.startswith("=" * 20):
            current = None
        elif current is not None and (m := _TEXT_LINE.match(line) or _LINE.match(line)):
            label, value = m["label"].strip(), m["value"]
            if label in _TEXT_LABELS and not _is_number(value):
                current.texts[label] = value
            else:
                current.values[label] = parse_float(value, rel, f"line {lineno}")
    return blocks


def _is_number(text: str) -> bool:
    """A finite number (`inf`, `not set` and `None` are words here)."""
    try:
        return math.isfinite(float(text.replace(",", "")))
    except ValueError:
        return False


def _load(block: Block) -> tuple[int | None, float | None]:
    """(conc, request_rate) of a block: its concurrency limit, else its offered request rate.

    Raises:
        ParseError: when the block has neither (nor do the bench arguments printed before it).
    """
    v, texts = block.values, block.texts
    conc = v.get("Maximum request concurrency", v.get("Max request concurrency"))
    if conc is None and block.args.get("max_concurrency", "None") not in ("None", ""):
        conc = parse_float(block.args["max_concurrency"], block.rel, "max_concurrency")
    if conc is not None:
        return int(conc), None
    rate = v.get("Traffic request rate", v.get("Request rate configured (RPS)"))
    word = texts.get("Traffic request rate", texts.get("Request rate configured (RPS)"))
    if rate is None and word is None and block.args.get("request_rate"):
        word = block.args["request_rate"]
        if _is_number(word):
            rate = parse_float(word, block.rel, "request_rate")
    if rate is not None and rate > 0:
        return None, rate
    if word is not None and word.strip().lower() in ("inf", "infinity"):
        return None, math.inf
    return None, None


def block_row(block: Block) -> Row:
    """Canonical columns of one result block (ms become s, percentages fractions).

    Raises:
        ParseError: when the block has no concurrency or no request counts.
    """
    v, where = block.values, f"line {block.lineno}"
    conc, rate = _load(block)
    if (conc is None and rate is None) or "Successful requests" not in v:
        raise ParseError(
            block.rel,
            where,
            "result block without a load (`Maximum request concurrency`, `Max request "
            "concurrency` or `Traffic request rate`) or without `Successful requests`",
        )
    row: Row = {Col.NUM_REQUESTS_SUCCESSFUL: int(v["Successful requests"])}
    if conc is not None:
        row[Col.CONC] = conc
    else:
        row[Col.REQUEST_RATE] = rate
    row[Col.NUM_REQUESTS_TOTAL] = int(v["Successful requests"] + v.get("Failed requests", 0.0))
    for label, col in _PLAIN.items():
        if label in v:
            row[col] = (
                int(v[label])
                if col in (Col.TOTAL_INPUT_TOKENS, Col.TOTAL_OUTPUT_TOKENS)
                else v[label]
            )
    if (
        row.get(Col.TOTAL_TPUT) is not None
        and row.get(Col.OUTPUT_TPUT) is not None
        and row.get(Col.INPUT_TPUT) is None
    ):
        row[Col.INPUT_TPUT] = row[Col.TOTAL_TPUT] - row[Col.OUTPUT_TPUT]
    ok = row[Col.NUM_REQUESTS_SUCCESSFUL]
    for col, total in (
        (Col.MEAN_INPUT_LEN, Col.TOTAL_INPUT_TOKENS),
        (Col.MEAN_OUTPUT_LEN, Col.TOTAL_OUTPUT_TOKENS),
    ):
        if ok and row.get(total) is not None:
            row[col] = row[total] / ok
    per_pos: dict[int, float] = {}
    for label, value in v.items():
        m = _LATENCY.match(label) or _SGLANG_LATENCY.match(label)
        if m:
            lat = m["lat"].lower() if "lat" in m.groupdict() else "e2el"
            if (name := f"{_stat(m['stat'], m['pct'])}_{lat}") in _COLUMNS:
                row[name] = value / 1000.0
        elif p := _POSITION.match(label):
            per_pos[int(p["i"])] = value / 100.0
    drafts = v.get("Drafts")
    if drafts is not None:
        spec = spec_row(
            drafts, v.get("Draft tokens"), v.get("Accepted tokens"), {}, "bench_console"
        )
        if per_pos:
            spec[Col.ACCEPT_RATE_PER_POS] = [per_pos.get(i, 0.0) for i in range(max(per_pos) + 1)]
        row.update(spec)
        printed, measured = v.get("Acceptance length"), spec.get(Col.AL_MEASURED)
        if printed is not None and measured is not None and abs(printed - measured) > 0.006:
            row[Col.WARNINGS] = [
                f"printed acceptance length {printed} != 1 + accepted/drafts = {measured:.4f}"
            ]
    if block.args.get("dataset_name") == "random":
        for col, key in ((Col.ISL, "random_input_len"), (Col.OSL, "random_output_len")):
            if block.args.get(key, "").isdigit():
                row[col] = int(block.args[key])
        ratio = block.args.get("random_range_ratio")
        if block.sglang and Col.ISL in row and (ratio is None or ratio not in ("1", "1.0")):
            # SGLang draws each length from [ratio x len, len] (ratio 0 by default).
            row[Col.WARNINGS] = [
                *row.get(Col.WARNINGS, []),
                f"isl/osl are the requested maxima: SGLang's random dataset drew lengths from "
                f"[{ratio or '0'} x len, len]",
            ]
    return row

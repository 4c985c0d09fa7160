"""vLLM server command lines: `vllm_command.txt` (argv written with `printf '%q '`, formats.md §3.1).

The speculative config (`--speculative-config` JSON) gives the method, draft model, K and whether
acceptance is pinned synthetically (`rejection_sample_method: synthetic`, with
`synthetic_acceptance_length` or per-position `synthetic_acceptance_rates`, whose implied AL is
1 + their sum); `--default-chat-template-kwargs` gives the thinking mode; every flag is kept as
`server_flags` for confound listings. The file carries no point: its columns enrich the point of
its unit or of the paired aggregate.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from collections.abc import Mapping
from typing import Any

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.readers.base import ReadResult, Row, SourceFile

_ON = {"enabled", "enable", "on", "true", "1", "yes"}
_OFF = {"disabled", "disable", "off", "false", "0", "no"}
_THINKING_KEYS = ("thinking_mode", "enable_thinking", "thinking")


_SHORT = {
    "tp": "tensor-parallel-size",
    "pp": "pipeline-parallel-size",
    "dp": "data-parallel-size",
    "O": "compilation-config",
    "q": "quantization",
}


_SERVE = re.compile(rb"\s*(?:\S*/)?vllm\s+serve\b")


def is_serve_command(data: bytes) -> bool:
    """Whether a file's text starts with a `vllm serve` command (a path before `vllm` allowed)."""
    return len(data) <= 64 * 1024 and _SERVE.match(data) is not None


def _flag_key(token: str) -> str:
    if not token.startswith("--"):
        return _SHORT.get(token[1:], token[1:])
    return token[2:].replace("_", "-")


def _is_flag(token: str) -> bool:
    if token.startswith("--"):
        return len(token) > 2
    if not token.startswith("-") or len(token) < 2:
        return False
    try:
        float(token)
    except ValueError:
        return True
    return False


def _value(text: str) -> Any:
    if text[:1] in "{[":
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            return text
    return text


def split_command(text: str, rel: str) -> list[str]:
    """The argv of a recorded command line.

    Raises:
        ParseError: when the text is not valid shell quoting.
    """
    try:
        return shlex.split(text.strip())
    except ValueError as exc:
        raise ParseError(rel, "", f"cannot split the command line with shell rules: {exc}") from exc


def parse_flags(argv: list[str]) -> dict[str, Any]:
    """`--flag value`, `--flag=value` and bare `--flag` (True) into a dict; positionals under `_args`.

    JSON-valued flags (speculative config, kv-transfer config, ...) are parsed into objects; a
    repeated flag keeps its last value, as argparse does.
    """
    flags: dict[str, Any] = {}
    positional: list[str] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        if _is_flag(tok):
            if "=" in tok:
                key, _, val = tok.partition("=")
                flags[_flag_key(key)] = _value(val)
            elif i + 1 < len(argv) and not _is_flag(argv[i + 1]):
                flags[_flag_key(tok)] = _value(argv[i + 1])
                i += 1
            else:
                flags[_flag_key(tok)] = True
        else:
            positional.append(tok)
        i += 1
    if positional:
        flags["_args"] = positional
    return flags


def serve_flags(text: str, rel: str) -> dict[str, Any]:
    """Flags of a `vllm serve MODEL ...` command, with the model under `model`.

    Raises:
        ParseError: when the text is not a vLLM serve command.
    """
    argv = split_command(text, rel)
    starts = [
        i
        for i, tok in enumerate(argv[:-1])
        if tok.rsplit("/", 1)[-1] == "vllm" and argv[i + 1] == "serve"
    ]
    if not starts:
        raise ParseError(rel, "", "not a `vllm serve` command line")
    flags = parse_flags(argv[starts[0] + 2 :])
    args = flags.pop("_args", [])
    if args and "model" not in flags:
        flags["model"] = args[0]
    return flags


def _as_int(value: Any, rel: str, field: str) -> int:
    if isinstance(value, bool):
        raise ParseError(rel, field, f"expected an integer, got {value!r}")
    try:
        out = int(str(value))
    except ValueError as exc:
        raise ParseError(rel, field, f"expected an integer, got {value!r}") from exc
    return out


def _as_float(value: Any, rel: str, field: str) -> float:
    if isinstance(value, bool):
        raise ParseError(rel, field, f"expected a number, got {value!r}")
    try:
        out = float(value)
    except (TypeError, ValueError) as exc:
        raise ParseError(rel, field, f"expected a number, got {value!r}") from exc
    if not math.isfinite(out):
        raise ParseError(rel, field, f"expected a finite number, got {value!r}")
    return out


def spec_config(spec: Any, rel: str) -> tuple[Row, list[str]]:
    """Columns from a vLLM speculative config object, plus data-quality notes.

    Raises:
        ParseError: when the config is not an object or a field has the wrong type.
    """
    field = "speculative-config"
    if isinstance(spec, str):
        try:
            spec = json.loads(spec)
        except json.JSONDecodeError as exc:
            raise ParseError(rel, field, f"not valid JSON: {exc.msg}") from exc
        except (ValueError, RecursionError) as exc:
            raise ParseError(rel, field, f"not valid JSON: {exc}") from exc
    if not isinstance(spec, Mapping):
        raise ParseError(rel, field, f"expected a JSON object, got {type(spec).__name__}")
    row: Row = {}
    notes: list[str] = []
    if spec.get("method") is not None:
        row[Col.SPEC_METHOD] = str(spec["method"]).lower()
    if spec.get("model") is not None:
        row[Col.DRAFT_MODEL] = str(spec["model"])
    if spec.get("num_speculative_tokens") is not None:
        row[Col.NUM_SPEC_TOKENS] = _as_int(
            spec["num_speculative_tokens"], rel, f"{field}.num_speculative_tokens"
        )
    synthetic = str(spec.get("rejection_sample_method", "")).lower() == "synthetic"
    row[Col.SYNTHETIC_ACCEPTANCE] = synthetic
    pinned: float | None = None
    if spec.get("synthetic_acceptance_length") is not None:
        pinned = _as_float(
            spec["synthetic_acceptance_length"], rel, f"{field}.synthetic_acceptance_length"
        )
    elif spec.get("synthetic_acceptance_rates") is not None:
        rates = spec["synthetic_acceptance_rates"]
        if not isinstance(rates, list):
            raise ParseError(rel, f"{field}.synthetic_acceptance_rates", "expected a list of rates")
        pinned = 1.0 + sum(_as_float(r, rel, f"{field}.synthetic_acceptance_rates") for r in rates)
    if pinned is not None:
        row[Col.SYNTHETIC_AL] = pinned
        if not synthetic:
            notes.append(
                f"{rel}: a synthetic acceptance value is set but rejection_sample_method is not "
                "'synthetic': acceptance is real, the pin is not applied"
            )
    return row, notes


def thinking_mode(kwargs: Any) -> str | None:
    """thinking_on / thinking_off from chat-template kwargs, or None when they do not say."""
    if isinstance(kwargs, str):
        try:
            kwargs = json.loads(kwargs)
        except (ValueError, RecursionError):
            return None
    if not isinstance(kwargs, Mapping):
        return None
    for key in _THINKING_KEYS:
        if key in kwargs:
            value = str(kwargs[key]).strip().lower()
            if value in _ON:
                return "thinking_on"
            if value in _OFF:
                return "thinking_off"
    return None


def config_columns(flags: Mapping[str, Any], rel: str) -> tuple[Row, list[str]]:
    """Enrichment columns from parsed server flags: spec config, thinking mode, server_flags.

    Raises:
        ParseError: when the speculative config is malformed.
    """
    try:
        encoded = json.dumps(dict(flags), sort_keys=True, default=str)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ParseError(
            rel, "", f"server flags cannot be written as a JSON object: {exc}"
        ) from exc
    row: Row = {Col.SERVER_FLAGS: encoded}
    notes: list[str] = []
    spec = flags.get("speculative-config")
    if spec is not None:
        spec_row, notes = spec_config(spec, rel)
        row.update(spec_row)
    mode = thinking_mode(flags.get("default-chat-template-kwargs"))
    if mode:
        row[Col.THINKING_MODE] = mode
    return row, notes


def topology_columns(flags: Mapping[str, Any], rel: str) -> Row:
    """Model and parallelism from server flags, for points that have no aggregate to say so.

    Raises:
        ParseError: when a size flag is not an integer.
    """
    row: Row = {Col.FRAMEWORK: "vllm"}
    if flags.get("model") is not None:
        row[Col.MODEL] = str(flags["model"])
    sizes = {"tensor-parallel-size": 1, "pipeline-parallel-size": 1, "data-parallel-size": 1}
    for key in sizes:
        if key in flags:
            sizes[key] = _as_int(flags[key], rel, key)
    row[Col.TP], row[Col.PP] = sizes["tensor-parallel-size"], sizes["pipeline-parallel-size"]
    ep = flags.get("enable-expert-parallel") is True
    row[Col.EP] = sizes["tensor-parallel-size"] * sizes["data-parallel-size"] if ep else 1
    row[Col.DP_ATTENTION] = sizes["data-parallel-size"] > 1
    if "speculative-config" in flags:
        row[Col.SPEC_DECODING] = "mtp"  # InferenceX labels every speculative arm `mtp`
    transfer = str(flags.get("kv-transfer-config", "")).lower()
    backend = flags.get("kv-offloading-backend")
    if (
        backend is not None
        or "lmcache" in transfer
        or "mooncake" in transfer
        or "offloading" in transfer
    ):
        row[Col.KV_OFFLOADING] = "dram"
        name = backend or next((n for n in ("lmcache", "mooncake") if n in transfer), "native")
        row[Col.KV_OFFLOAD_BACKEND] = str(name)
    return row


class VllmCommandReader:
    """`vllm serve ...` command lines: enrichment columns, no point."""

    name = "vllm_command"

    def sniff(self, src: SourceFile, doc: Any) -> bool:
        return doc is None and is_serve_command(src.data)

    def read(self, src: SourceFile, doc: Any) -> ReadResult:
        flags = serve_flags(src.text(), src.rel)
        row, notes = config_columns(flags, src.rel)
        return ReadResult(enrich=row, notes=notes, consumed=[src.rel])


FILE_READERS = (VllmCommandReader(),)

"""Argv command templates and the InferenceX-style environment of a point.

A template is a list of strings, one per argv element. `{name}` placeholders are replaced inside
an element, so a value can never split into several arguments or reach a shell as code: there is
no shell. `{{` and `}}` are literal braces. Placeholders are checked when the plan is validated.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import PurePath

# Every placeholder a template may use, with what it stands for (docs/runner.md lists them).
PLACEHOLDERS: dict[str, str] = {
    "model": "model id or path",
    "model_prefix": "InferenceX model prefix (e.g. minimaxm3)",
    "framework": "serving framework (vllm, sglang, ...)",
    "precision": "fp8, fp4, ...",
    "image": "container image",
    "hw": "runner label",
    "scenario": "fixed-seq-len or agentic-coding",
    "exp_name": "InferenceX-style experiment name",
    "isl": "input sequence length",
    "osl": "output sequence length",
    "max_model_len": "isl + osl + 256",
    "conc": "client concurrency",
    "num_prompts": "conc x plan.num_prompts_per_conc",
    "tp": "tensor parallel size",
    "pp": "pipeline parallel size",
    "ep": "expert parallel size",
    "dcp_size": "decode context parallel size",
    "pcp_size": "prefill context parallel size",
    "dp_attn": "true or false",
    "spec_decoding": "none, mtp, draft_model, ...",
    "kv_offloading": "none or dram",
    "kv_offload_backend": "KV offload backend name",
    "duration": "benchmark duration in seconds",
    "random_range_ratio": "random length range ratio",
    "result_dir": "directory the result files go to",
    "result_filename": "result file name without .json",
    "point_id": "the point's stable id",
    "job_id": "the job id",
    "port": "the server port (resolved when the point starts)",
    "python": "the Python interpreter running paretolens",
}

_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
_SHELLS = frozenset(
    {"sh", "bash", "dash", "zsh", "ksh", "fish", "python", "python3", "perl", "ruby", "node"}
)
_INLINE_CODE_FLAGS = frozenset({"-c", "-e", "--command", "--eval"})


def placeholders(element: str) -> list[str]:
    """Names of the placeholders in one argv element.

    Raises:
        ValueError: on a lone brace or an empty placeholder.
    """
    names: list[str] = []
    for m in _TOKEN.finditer(element):
        tok = m.group(0)
        if tok in ("{{", "}}"):
            continue
        if tok in ("{", "}"):
            raise ValueError(f"lone {tok!r} in {element!r}; write {tok * 2} for a literal brace")
        name = m.group(1)
        if not name:
            raise ValueError(f"empty placeholder {{}} in {element!r}")
        names.append(name)
    return names


def check_template(argv: Sequence[str]) -> None:
    """Check a template: known placeholders only, and none inside inline shell or script code.

    Raises:
        ValueError: naming the element index and what to do instead.
    """
    if not argv:
        raise ValueError("an empty command; give the program and its arguments as a list")
    inline_code_at: int | None = None
    prog = PurePath(argv[0]).name
    interpreter = prog in _SHELLS or re.fullmatch(r"python3(\.\d+)?", prog) is not None
    for i, element in enumerate(argv):
        if "\x00" in element:
            raise ValueError(f"[{i}]: NUL byte in argument")
        try:
            names = placeholders(element)
        except ValueError as exc:
            raise ValueError(f"[{i}]: {exc}") from exc
        unknown = sorted(set(names) - PLACEHOLDERS.keys())
        if unknown:
            raise ValueError(
                f"[{i}]: unknown placeholder(s) {', '.join('{' + n + '}' for n in unknown)}; "
                f"known: {', '.join(sorted(PLACEHOLDERS))}"
            )
        if names and inline_code_at is not None and i == inline_code_at + 1:
            raise ValueError(
                f"[{i}]: placeholders inside inline code ({argv[0]} {argv[inline_code_at]} ...) would "
                "splice plan values into code; read the environment variables ($MODEL, $CONC, ...) "
                "in a script instead"
            )
        if interpreter and element in _INLINE_CODE_FLAGS:
            inline_code_at = i


def render(argv: Sequence[str], values: Mapping[str, str | None]) -> list[str]:
    """Substitute placeholders element by element.

    Raises:
        ValueError: when a placeholder has no value for this point.
    """
    out: list[str] = []
    for element in argv:

        def sub(m: re.Match[str]) -> str:
            tok = m.group(0)
            if tok == "{{":
                return "{"
            if tok == "}}":
                return "}"
            value = values.get(m.group(1))
            if value is None:
                raise ValueError(f"placeholder {tok} has no value for this point")
            return value

        out.append(_TOKEN.sub(sub, element))
    return out

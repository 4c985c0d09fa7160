"""What InferenceX and its harnesses encode in result file names (formats.md 1.3 and 7.1).

Readers parse the JSON fields first; these facts only fill what the JSON lacks (the multinode GPU
split, the concrete runner, the nominal sequence lengths of raw files).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from ingest.normalize.canonical import (
    FRAMEWORK_ALIASES,
    HARDWARE,
    HARDWARE_ALIASES,
    MODELS,
    PRECISION_ALIASES,
)

# {EXP}_{PREC}_{FW}_tp{TP}[-pp{PP}][-dcp{DCP}][-pcp{PCP}]-ep{EP}-dpa{bool}_disagg-{bool}_spec-{SPEC}
#   _conc{CONC}_{runner}[_recipe-{fingerprint[:16]}]
_SINGLE = re.compile(
    r"^(?P<exp>.+?)_(?P<prec>[a-z0-9]+)_(?P<fw>[a-z][a-z0-9.\-]*)"
    r"_tp(?P<tp>\d+)(?:-pp(?P<pp>\d+))?(?:-dcp(?P<dcp>\d+))?(?:-pcp(?P<pcp>\d+))?"
    r"-ep(?P<ep>\d+)-dpa(?P<dpa>true|false)_disagg-(?P<disagg>true|false)"
    r"_spec-(?P<spec>[A-Za-z0-9.\-_]+?)_conc(?P<conc>\d+)_(?P<runner>.+?)"
    r"(?:_recipe-(?P<recipe>[0-9a-f]+))?$"
)
# Multinode names: only the runner after the conc list is taken from them.
_RUNNER = re.compile(
    r"_conc[0-9x]+_(?P<runner>[A-Za-z0-9][A-Za-z0-9\-]*(?:_\d+)?)(?:_recipe-[0-9a-f]+)?$"
)
_GPU_SPLIT = re.compile(r"_gpus_(?P<gpus>\d+)(?:_ctx_(?P<ctx>\d+)_gen_(?P<gen>\d+))?$")
_TRAILING_CONC = re.compile(r"_conc(?P<conc>\d+)$")
_CONC = re.compile(r"(?:^|_)conc(?:urrency_)?(?P<conc>\d+)(?=_|$)")
_SEQ_K = re.compile(r"(?:^|_)(?P<isl>\d+)k(?P<osl>\d+)k(?=_|$)")
_SEQ = re.compile(r"(?:^|_)isl(?P<isl>\d+)_osl(?P<osl>\d+)(?=_|$)")
_USERS = re.compile(r"(?:^|_)users(?P<users>\d+)(?=_|$)")
# Name tokens that state a precision, an engine or hardware in free-form result names such as
# `gptoss_fp4_h200_tp8_conc16_isl1024_osl1024` (a local RESULT_FILENAME) or
# `baseline_sglang_tp8_conc64_isl1024_osl1024`.
_PRECISIONS = frozenset({"fp4", "fp8", "bf16", "fp16", "int4", "int8", "mxfp8", "w4a16", "w8a8"})
_PRECISIONS |= frozenset(PRECISION_ALIASES)
_FRAMEWORKS = frozenset({"vllm", "sglang", "trt", "lmdeploy", "atom"}) | frozenset(
    FRAMEWORK_ALIASES
)
_HARDWARE = HARDWARE | frozenset(HARDWARE_ALIASES)


@dataclass(frozen=True)
class NameFacts:
    """Facts a file name carries; None where it carries nothing."""

    exp_name: str | None = None
    precision: str | None = None
    framework: str | None = None
    tp: int | None = None
    pp: int | None = None
    dcp: int | None = None
    pcp: int | None = None
    ep: int | None = None
    dp_attention: bool | None = None
    disagg: bool | None = None
    spec: str | None = None
    conc: int | None = None
    users: int | None = None
    runner: str | None = None
    recipe: str | None = None
    gpus: int | None = None
    prefill_gpus: int | None = None
    decode_gpus: int | None = None
    isl: int | None = None
    osl: int | None = None
    hw: str | None = None
    model: str | None = None

    @property
    def model_prefix(self) -> str | None:
        """InferenceX EXP_NAME starts with the model prefix (e.g. kimik2.5_8k1k -> kimik2.5); a
        free-form name's first token when it is a model key (`model`)."""
        return self.exp_name.split("_", 1)[0] if self.exp_name else self.model


def _int(value: str | None) -> int | None:
    return int(value) if value else None


def _stem(name: str) -> tuple[str, re.Match[str] | None]:
    """The file name without directories, `.json` and `agg_`, and without its GPU split."""
    tail = name.rpartition("/")[2]
    # PurePosixPath(name).name, without building a path for the usual case.
    stem = tail if tail and tail != "." else PurePosixPath(name).name
    stem = stem.removesuffix(".json")
    stem = stem.removeprefix("agg_")
    split = _GPU_SPLIT.search(stem)
    return (stem[: split.start()] if split else stem), split


def _runner(base: str, single: re.Match[str] | None, split: re.Match[str] | None) -> str | None:
    if single:
        return single["runner"]
    if "_prefill-tp" in base and not split:
        runner = _RUNNER.search(base)
        if runner:
            return runner["runner"]
    return None


def parse_runner(name: str) -> str | None:
    """`parse_name(name).runner`, without the rest of the facts."""
    stem, split = _stem(name)
    base = _TRAILING_CONC.sub("", stem)
    return _runner(base, _SINGLE.match(base), split)


def parse_name(name: str) -> NameFacts:
    """Parse a result file name (with or without directories and the .json suffix)."""
    stem, split = _stem(name)
    facts: dict[str, Any] = {}
    if split:
        facts["gpus"] = int(split["gpus"])
        facts["prefill_gpus"] = _int(split["ctx"])
        facts["decode_gpus"] = _int(split["gen"])
    concs = [int(m["conc"]) for m in _CONC.finditer(stem)]
    if concs:
        facts["conc"] = concs[-1]
    users = _USERS.search(stem)
    if users:
        facts["users"] = int(users["users"])
    seq = _SEQ.search(stem) or _SEQ_K.search(stem)
    if seq:
        scale = 1024 if seq.re is _SEQ_K else 1
        facts["isl"] = int(seq["isl"]) * scale
        facts["osl"] = int(seq["osl"]) * scale
    # Multinode agentic aggregates are `<RESULT_FILENAME>_conc<N>.json`.
    base = _TRAILING_CONC.sub("", stem)
    single = _SINGLE.match(base)
    if single:
        facts.update(
            exp_name=single["exp"],
            precision=single["prec"],
            framework=single["fw"],
            tp=int(single["tp"]),
            pp=_int(single["pp"]),
            dcp=_int(single["dcp"]),
            pcp=_int(single["pcp"]),
            ep=int(single["ep"]),
            dp_attention=single["dpa"] == "true",
            disagg=single["disagg"] == "true",
            spec=single["spec"],
            recipe=single["recipe"],
        )
    else:
        facts.update(_tokens(base))
    runner = _runner(base, single, split)
    if runner is not None:
        facts["runner"] = runner
    return NameFacts(**facts)


def _tokens(base: str) -> dict[str, Any]:
    """Precision, engine, hardware and model a free-form name states, each from the first token
    that names one (`_`-separated, case-folded); nothing where two tokens disagree."""
    found: dict[str, set[str]] = {"precision": set(), "framework": set(), "hw": set()}
    tokens = [t.casefold() for t in base.split("_") if t]
    for t in tokens:
        if t in _PRECISIONS:
            found["precision"].add(t)
        elif t in _FRAMEWORKS:
            found["framework"].add(t)
        elif t in _HARDWARE:
            found["hw"].add(t)
    out: dict[str, Any] = {k: next(iter(v)) for k, v in found.items() if len(v) == 1}
    if tokens and tokens[0] in MODELS:
        out["model"] = tokens[0]
    return out


# Every InferenceX aggregate key that has been renamed, in one place: canonical field -> the keys
# that have carried it, newest first. A future rename is one more string here.
FIELD_ALIASES: dict[str, tuple[str, ...]] = {
    # process_agentic_result.py: `users` until the USERS -> CONC rename (e92a9bf97, 2026-05-17).
    "conc": ("conc", "users"),
    # v1.0 nested rows (303669b0e, 2026-07-02) say kv_offloading; the flat v0.x rows `offloading`;
    # the kv-cache-tester rows `offload_mode` (on/off).
    "kv_offloading": ("kv_offloading", "offloading", "offload_mode"),
    # kv-cache-tester called end-to-end latency ttlt (time to last token).
    "e2el": ("e2el", "ttlt"),
    "median": ("median", "p50"),
}


def alias_key(doc: Any, field: str) -> str | None:
    """The key of `doc` that carries `field` (per FIELD_ALIASES), or None when none is present."""
    if not isinstance(doc, dict):
        return None
    return next((k for k in FIELD_ALIASES.get(field, (field,)) if doc.get(k) is not None), None)


def missing_key_reason(reader: str, field: str, doc: Any) -> str:
    """A reject reason naming the field, the reader, the keys it accepts and the keys found."""
    accepted = ", ".join(FIELD_ALIASES.get(field, (field,)))
    found = sorted(doc) if isinstance(doc, dict) else []
    shown = ", ".join(found[:40]) + (f", ... ({len(found)} keys)" if len(found) > 40 else "")
    return (
        f"{reader}: required field {field!r} is missing (accepted keys: {accepted}); "
        f"keys found: {shown or 'none'}. If InferenceX renamed it, add the new key to "
        f"ingest.readers._names.FIELD_ALIASES[{field!r}]"
    )

"""The canonical configuration key: one spelling per model, hardware, precision and engine.

Two sources of one configuration spell it differently: the InferenceX app dump says model
`kimik2.5`, a raw `vllm bench serve` file `moonshotai/Kimi-K2.5`, a local sweep
`/models/Kimi-K2.5`; a runner label says `MI355-gbt350-...` where the aggregate says `mi355x`;
one harness says `nvfp4` or `trtllm` where InferenceX says `fp4` or `trt`. Every row is brought
to one form here, at ingest, so the arm key (`ingest.contract.schema.ARM_KEY`) is equal for equal
configurations whatever the source, and baseline, compare, history and deltas pair them.

The model key is `model_prefix` (the InferenceX model prefix); the HF id or path stays in
`model`, outside the key (a confound when two paired points differ in it). `MODELS` is the
maintained table: add a row when a new model arrives under a name it does not know. A model no
row knows is kept as given, case-folded (a path by its last component), and the ingest reports
it once.
"""

from __future__ import annotations

import functools
import re

# Model key -> every other name it arrives under: HF ids, display names, local directory names.
# Matching is case-folded and ignores '-', '_', ' ' and the quantisation suffix of a checkpoint
# name (`-FP8`, `-NVFP4-v2`, `-MXFP4-Preview`, ...): precision is its own column.
MODELS: dict[str, tuple[str, ...]] = {
    "dsr1": ("deepseek-ai/DeepSeek-R1-0528", "deepseek-ai/DeepSeek-R1", "DeepSeek R1", "dsr1-fp8"),
    "dsv3": ("deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-V3-0324", "DeepSeek V3"),
    "dsv4": ("deepseek-ai/DeepSeek-V4-Pro", "DeepSeek V4 Pro", "DeepSeek-V4"),
    "gptoss": ("openai/gpt-oss-120b", "gpt-oss-120b", "gpt-oss", "GPT-OSS 120B"),
    "gptoss20b": ("openai/gpt-oss-20b",),
    "glm4.7": ("zai-org/GLM-4.7", "GLM-4.7"),
    "glm5": ("zai-org/GLM-5", "GLM 5"),
    "glm5.1": ("zai-org/GLM-5.1", "GLM 5.1"),
    "glm5.2": ("zai-org/GLM-5.2", "GLM 5.2"),
    "kimik2.5": ("moonshotai/Kimi-K2.5", "Kimi K2.5", "Kimi-K2.5"),
    "kimik2.6": ("moonshotai/Kimi-K2.6", "Kimi K2.6"),
    "kimik2.7": ("moonshotai/Kimi-K2.7", "Kimi K2.7"),
    "kimik3": ("moonshotai/Kimi-K3", "Kimi K3"),
    "llama70b": ("meta-llama/Llama-3.3-70B-Instruct", "Llama-3.3-70B", "Llama 3.3 70B"),
    "minimaxm2.5": ("MiniMaxAI/MiniMax-M2.5", "MiniMax M2.5"),
    "minimaxm3": ("MiniMaxAI/MiniMax-M3", "MiniMax M3"),
    "qwen3.5": ("Qwen/Qwen3.5-397B-A17B", "Qwen3.5 397B A17B", "Qwen3.5-397B"),
}

# Hardware the first segment of a runner label may name (InferenceX runner names such as
# `b200-nb_0`, `mi355x-amd_1`, `MI355-gbt350-odcdh5-wbb3`), and short spellings of them.
HARDWARE: frozenset[str] = frozenset(
    {
        "a100",
        "b200",
        "b300",
        "gaudi3",
        "gb200",
        "gb300",
        "h100",
        "h20",
        "h200",
        "l40s",
        "mi300x",
        "mi325x",
        "mi355x",
        "rtx5090",
        "rtxpro6000",
    }
)
HARDWARE_ALIASES: dict[str, str] = {"mi300": "mi300x", "mi325": "mi325x", "mi355": "mi355x"}
# The InferenceX app's normalisers (packages/constants framework aliases, normalizePrecision).
PRECISION_ALIASES: dict[str, str] = {"nvfp4": "fp4", "mxfp4": "fp4"}
FRAMEWORK_ALIASES: dict[str, str] = {
    "trtllm": "trt",
    "tensorrt-llm": "trt",
    "dynamo-trtllm": "dynamo-trt",
    "sglang-disagg": "mori-sglang",
}

# Speculative-decoding methods as vLLM (`speculative_config.method`) and SGLang
# (`--speculative-algorithm`) spell them -> one name each; the label names the method.
SPEC_METHOD_ALIASES: dict[str, str] = {
    "nextn": "mtp",
    "deepseek_mtp": "mtp",
    "qwen3_next_mtp": "mtp",
    "glm4_moe_mtp": "mtp",
    "ernie_mtp": "mtp",
    "longcat_flash_mtp": "mtp",
    "mimo_mtp": "mtp",
    "standalone": "draft_model",
    "draft": "draft_model",
    "[ngram]": "ngram",
    "n-gram": "ngram",
}
SPEC_METHOD_NAMES: dict[str, str] = {
    "mtp": "MTP",
    "eagle": "EAGLE",
    "eagle3": "EAGLE3",
    "draft_model": "draft model",
    "ngram": "n-gram",
    "dflash": "DFlash",
    "suffix": "suffix",
    "medusa": "Medusa",
    "mlp_speculator": "MLP speculator",
}

# KV offload tiers; any other `kv_offloading` value names the backend that offloads to DRAM (the
# flat agentic rows' `offloading: lmcache` is the nested rows' `kv_offloading: dram` with
# `kv_offload_backend: lmcache`).
KV_TIERS: frozenset[str] = frozenset({"none", "dram", "ssd", "disk"})
# Older spellings of a tier: the flat v0.x rows' `cpu` is CPU memory, InferenceX's `dram` since v1.
KV_TIER_ALIASES: dict[str, str] = {"cpu": "dram"}

_QUANT = re.compile(
    r"[-_](?:fp8|fp4|nvfp4|mxfp4|mxfp8|int4|int8|w4a16|w8a8|awq|gptq|bf16|dynamic|v\d+|preview)$",
    re.IGNORECASE,
)
_HF_CACHE = re.compile(r"models--[^/]+--(?P<name>[^/]+)")


def _squash(text: str) -> str:
    return re.sub(r"[-_\s]", "", text.casefold())


def _last(text: str) -> str:
    """The model's own name: the last component of an HF id or a path (HF cache dirs too)."""
    cache = _HF_CACHE.search(text)
    if cache:
        return cache["name"]
    return text.strip().rstrip("/").rsplit("/", 1)[-1]


def _index() -> dict[str, str]:
    out: dict[str, str] = {}
    for key, aliases in MODELS.items():
        out[_squash(key)] = key
        for alias in aliases:
            out[_squash(alias)] = key
            out[_squash(_last(alias))] = key
    return out


_INDEX = _index()


def _known(text: str) -> str | None:
    for candidate in (text, _last(text)):
        name = candidate
        while True:
            hit = _INDEX.get(_squash(name))
            if hit is not None:
                return hit
            stripped = _QUANT.sub("", name)
            if stripped == name:
                break
            name = stripped
    return None


@functools.lru_cache(maxsize=1024)
def model_key(prefix: str | None, model: str | None) -> str | None:
    """The canonical model key of a row from its `model_prefix` and `model` (HF id or path).

    A prefix or model the table knows gives its key (the prefix first); otherwise the prefix,
    else the model's last component, case-folded. None when the row names no model.
    """
    for text in (prefix, model):
        if text:
            hit = _known(str(text))
            if hit is not None:
                return hit
    if prefix:
        return str(prefix).strip().casefold()
    if model:
        return _last(str(model)).casefold() or None
    return None


_NAMED_PRECISION = re.compile(
    r"[-_](?P<p>nvfp4|mxfp4|mxfp8|fp8|fp4|int4|int8|bf16)(?=$|[-_])", re.IGNORECASE
)


def precision_from_model(model: str | None) -> str | None:
    """The precision a checkpoint's name states (`amd/Kimi-K2.5-MXFP4` -> fp4), canonical; None
    when the name states none (a base checkpoint's precision is not in its name)."""
    if not model:
        return None
    found = _NAMED_PRECISION.search(_last(str(model)))
    return canonical_precision(found["p"]) if found else None


def is_known_model(key: str | None) -> bool:
    """Whether a model key is one of the table's (an unknown model is reported once)."""
    return key is None or key in MODELS


def canonical_hw(label: str) -> str:
    """InferenceX-app's canonical hardware: drop up to the last ':', keep the first '-'
    segment, lower-cased; short spellings (`mi355`) become the table's (`mi355x`)."""
    tail = label.rsplit(":", 1)[-1]
    hw = tail.split("-", 1)[0].lower()
    return HARDWARE_ALIASES.get(hw, hw)


def hw_from_runner(runner: str | None) -> str | None:
    """The hardware a runner label names (`MI355-gbt350-odcdh5-wbb3` -> mi355x), when its first
    segment is hardware the table knows; None otherwise (a host name says nothing)."""
    if not runner:
        return None
    hw = canonical_hw(re.sub(r"_\d+$", "", str(runner)))
    return hw if hw in HARDWARE else None


def canonical_precision(value: str | None) -> str | None:
    """Precision as InferenceX spells it (nvfp4 / mxfp4 -> fp4), lower-cased."""
    if value is None:
        return None
    text = str(value).strip().lower()
    return PRECISION_ALIASES.get(text, text)


def canonical_spec_method(value: str | None) -> str | None:
    """A speculative method as one name (`NEXTN`, `deepseek_mtp` -> mtp; `STANDALONE` ->
    draft_model; `EAGLE3` -> eagle3), lower-cased."""
    if value is None:
        return None
    text = str(value).strip().lower()
    if text.endswith("_mtp"):
        return "mtp"
    return SPEC_METHOD_ALIASES.get(text, text)


def spec_label(spec: str | None, method: str | None, k: object) -> str:
    """How an arm label names its speculative decoding: the method when anything says it
    (`EAGLE3 K=3`, `draft model K=5`), `MTP` for InferenceX's `spec-mtp` label alone, `spec`
    when nothing says which (counters only); `no spec` without it."""
    if (spec or "none") == "none" and not method:
        return "no spec"
    if method:
        text = SPEC_METHOD_NAMES.get(method, method)
    elif spec == "mtp":
        text = "MTP"
    else:
        text = "spec"
    return f"{text} K={k}" if k else text


def canonical_kv(tier: str | None, backend: str | None) -> tuple[str | None, str | None]:
    """(kv_offloading, kv_offload_backend) in one form: a backend named as the tier
    (`lmcache`, `hicache`) is DRAM offload through that backend."""
    if tier is None:
        return None, backend
    text = str(tier).strip().lower()
    text = KV_TIER_ALIASES.get(text, text)
    if text in KV_TIERS:
        return text, backend
    return "dram", backend or text


def canonical_framework(value: str | None) -> str | None:
    """Engine as InferenceX spells it (trtllm -> trt, ...), lower-cased."""
    if value is None:
        return None
    text = str(value).strip().lower()
    return FRAMEWORK_ALIASES.get(text, text)

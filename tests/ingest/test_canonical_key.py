"""Issue 23, item 1: the canonical configuration key (ingest/normalize/canonical.py).

The model table is checked against every (model, model-prefix) pair of InferenceX's real master
configs (tests/fixtures/inferencex/configs, SemiAnalysisAI/InferenceX): each HF id, whatever its
quantisation suffix, must give the prefix InferenceX files its results under.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from ingest.contract.col import Col
from ingest.contract.schema import ARM_KEY
from ingest.normalize.canonical import (
    MODELS,
    canonical_framework,
    canonical_hw,
    canonical_precision,
    canonical_spec_method,
    hw_from_runner,
    model_key,
    precision_from_model,
    spec_label,
)
from ingest.pipeline import ingest_paths
from ingest.store import Store

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CONFIGS = FIXTURES / "inferencex" / "configs"


def _master_pairs() -> list[tuple[str, str]]:
    pairs: set[tuple[str, str]] = set()
    for name in ("amd-master.yaml", "nvidia-master.yaml"):
        for entry in yaml.safe_load((CONFIGS / name).read_text()).values():
            if isinstance(entry, dict) and "model" in entry:
                pairs.add((entry["model"], entry["model-prefix"]))
    return sorted(pairs)


def test_the_master_configs_hold_these_pairs() -> None:
    assert len(_master_pairs()) == 21
    assert ("nvidia/DeepSeek-R1-0528-NVFP4-v2", "dsr1") in _master_pairs()
    assert ("deepseek-r1-fp4", "dsr1") in _master_pairs()  # a served name, not an HF id


@pytest.mark.parametrize(("model", "prefix"), _master_pairs())
def test_every_inferencex_checkpoint_gives_its_model_prefix(model: str, prefix: str) -> None:
    assert model_key(None, model) == prefix
    assert model_key(prefix, model) == prefix
    assert model_key(prefix, None) == prefix


@pytest.mark.parametrize(
    ("prefix", "model", "key"),
    [
        (None, "moonshotai/Kimi-K2.5", "kimik2.5"),  # raw vllm bench serve model_id
        ("Kimi K2.5", None, "kimik2.5"),  # a display name
        (None, "/mnt/lustre01/models/kimi-k2.5-nvfp4", "kimik2.5"),  # a local path
        (None, "/root/.cache/huggingface/hub/models--openai--gpt-oss-120b/snapshots/0a1", "gptoss"),
        ("GLM4.7", "zai-org/GLM-4.7", "glm4.7"),
        # unknown: kept as given (a path or HF id by its last component), case-folded
        (None, "Qwen/Qwen3-32B", "qwen3-32b"),
        ("MyModel", "/data/x", "mymodel"),
        (None, None, None),
    ],
)
def test_model_keys(prefix: str | None, model: str | None, key: str | None) -> None:
    assert model_key(prefix, model) == key


def test_hardware_precision_and_engine_spellings() -> None:
    assert [canonical_hw(x) for x in ("MI355X-amd_0", "mi355", "ci:H200-cw_1", "b200")] == [
        "mi355x",
        "mi355x",
        "h200",
        "b200",
    ]
    # a runner label names hardware only when its first segment is known hardware
    assert [hw_from_runner(r) for r in ("MI355-gbt350-odcdh5-wbb3", "b200-nb_0", "node-7")] == [
        "mi355x",
        "b200",
        None,
    ]
    assert [canonical_precision(p) for p in ("NVFP4", "mxfp4", "fp8", None)] == [
        "fp4",
        "fp4",
        "fp8",
        None,
    ]
    assert [canonical_framework(f) for f in ("TRTLLM", "dynamo-trtllm", "sglang")] == [
        "trt",
        "dynamo-trt",
        "sglang",
    ]
    assert [precision_from_model(m) for m in ("amd/Kimi-K2.5-MXFP4", "moonshotai/Kimi-K2.5")] == [
        "fp4",
        None,
    ]


def test_the_model_path_is_not_part_of_the_key() -> None:
    assert Col.MODEL_PREFIX in ARM_KEY and Col.MODEL not in ARM_KEY


def test_an_unknown_model_is_kept_case_folded_and_noted_once(tmp_path: Path) -> None:
    # Two real aiperf 0.10.0 runs of `qwen3.6-nvfp4` (a served name no table row knows).
    wild = FIXTURES / "wild" / "aiperf"
    store = Store(tmp_path)
    report = ingest_paths(
        [wild / "qwen36-nvfp4_5090_chatbot_c16", wild / "qwen36-nvfp4_5090_chatbot_r0.8"],
        store,
        run_id="q",
    )
    pts = store.points(["q"])
    assert pts.height == 2
    assert pts.select(Col.MODEL_PREFIX, Col.PRECISION).unique().rows() == [("qwen3.6-nvfp4", "fp4")]
    notes = [n.reason for n in report.notes if "model table" in n.reason]
    assert notes == [
        "model 'qwen3.6-nvfp4' is not in the model table "
        "(ingest.normalize.canonical.MODELS): kept as 'qwen3.6-nvfp4'; add a row there to pair "
        "it with its other spellings"
    ]
    assert pl.Series(pts[Col.ARM_ID]).n_unique() == 2  # one by conc, one by request rate


def test_an_eagle3_arm_is_labelled_eagle3(tmp_path: Path) -> None:
    # data/samples/minimax-m2.5-eagle3-lcb: a real InferenceX run of MiniMax-M2.5 with
    # speculative_config {'model': 'thoughtworks/MiniMax-M2.5-Eagle3', 'method': 'eagle3',
    # 'num_speculative_tokens': 3} in its server log (InferenceX labels it spec-mtp).
    sample = Path(__file__).resolve().parents[2] / "data" / "samples" / "minimax-m2.5-eagle3-lcb"
    store = Store(tmp_path)
    ingest_paths([sample], store, run_id="e")
    pts = store.points(["e"])
    assert pts.select(Col.SPEC_METHOD, Col.NUM_SPEC_TOKENS, Col.ARM_LABEL).unique().rows() == [
        ("eagle3", 3, "TP8 EP8 | EAGLE3 K=3 | kv none")
    ]


@pytest.mark.parametrize(
    ("spec", "method", "k", "label"),
    [
        ("mtp", canonical_spec_method("NEXTN"), 3, "MTP K=3"),  # SGLang's name for MTP
        ("mtp", canonical_spec_method("deepseek_mtp"), 1, "MTP K=1"),
        ("mtp", canonical_spec_method("EAGLE3"), 3, "EAGLE3 K=3"),
        ("mtp", canonical_spec_method("STANDALONE"), 5, "draft model K=5"),
        ("mtp", canonical_spec_method("ngram"), 4, "n-gram K=4"),
        ("mtp", canonical_spec_method("DFLASH"), None, "DFlash"),
        ("mtp", None, None, "MTP"),  # InferenceX's spec-mtp label and nothing else
        ("detected", None, 3, "spec K=3"),  # counters only: nothing says which
        ("none", None, None, "no spec"),
    ],
)
def test_spec_labels(spec: str, method: str | None, k: int | None, label: str) -> None:
    assert spec_label(spec, method, k) == label


_ALIASES = [(key, alias) for key, aliases in MODELS.items() for alias in (key, *aliases)]


@given(
    pair=st.sampled_from(_ALIASES),
    flips=st.lists(st.booleans(), min_size=64, max_size=64),
    suffix=st.sampled_from(["", "-FP8", "-NVFP4", "-MXFP4-v2", "_fp4", "-Preview"]),
    where=st.sampled_from(["{}", "/models/{}", "org/{}", "/data/{}/"]),
)
def test_every_spelling_of_a_known_model_gives_its_key(
    pair: tuple[str, str], flips: list[bool], suffix: str, where: str
) -> None:
    key, alias = pair
    name = alias.rsplit("/", 1)[-1] + suffix
    cased = "".join(c.upper() if f else c.lower() for c, f in zip(name, flips, strict=False))
    cased += name[len(flips) :]
    assert model_key(None, where.format(cased)) == key
    assert model_key(key, where.format(cased)) == key
    assert model_key(model_key(None, cased), None) == key  # the key is its own key

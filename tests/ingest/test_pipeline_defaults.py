"""`ingest_paths(..., defaults=...)`: what the files do not say, from the caller (a job's plan, a
user's `--set key=value`). Defaults fill nulls before normalisation; a file's own value wins, and a
value that contradicts the default is kept with a warning naming both."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ingest.contract.col import Col
from ingest.errors import SchemaError
from ingest.pipeline import ingest_paths
from ingest.store import Store

RAW = Path(__file__).resolve().parents[1] / "fixtures/inferencex/raw_bench_serving"
# A real `vllm bench serve` result under an InferenceX RESULT_FILENAME (tp8, int4, vllm, mtp).
NAMED = (
    RAW
    / "kimik2.5_mi355x_mtp_root"
    / "kimik2.5_1k1k_int4_vllm_tp8-ep1-dpafalse_disagg-false_spec-mtp_conc4_MI355-gbt350-odcdh5-wbb3.json"
)


def _plain(tmp_path: Path) -> Path:
    """The same result under a name that says nothing (what `--result-filename x.json` writes)."""
    d = tmp_path / "plain"
    d.mkdir()
    shutil.copy(NAMED, d / "result.json")
    return d


def test_defaults_fill_what_the_file_does_not_say(tmp_path: Path) -> None:
    st = Store(tmp_path / "s")
    bare = ingest_paths([_plain(tmp_path)], st, run_id="bare")
    assert bare.accepted == 1
    rep = ingest_paths(
        [tmp_path / "plain"],
        st,
        run_id="given",
        defaults={
            "hw_label": "cluster:mi355x-amds",
            "image": "vllm/vllm-openai-rocm:v0.21.0",
            "model_prefix": "kimik2.5",
            "precision": "int4",
            "framework": "vllm",
            "tp": "8",  # text, as from a command line
            "ep": 8,
            "dp_attention": "true",
            "kv_offloading": "dram",
            "kv_offload_backend": "lmcache",
            "isl": 1024,
            "osl": 1024,
        },
    )
    assert rep.accepted == 1 and rep.rejected == [] and rep.notes == []
    row = st.points(["given"]).row(0, named=True)
    assert (row[Col.HW], row[Col.HW_LABEL], row[Col.IMAGE]) == (
        "mi355x",
        "cluster:mi355x-amds",
        "vllm/vllm-openai-rocm:v0.21.0",
    )
    assert (row[Col.TP], row[Col.EP], row[Col.DP_ATTENTION], row[Col.NUM_GPUS]) == (8, 8, True, 8)
    assert (row[Col.KV_OFFLOADING], row[Col.KV_OFFLOAD_BACKEND]) == ("dram", "lmcache")
    assert (row[Col.MODEL], row[Col.CONC]) == ("moonshotai/Kimi-K2.5", 4)  # the file's own
    assert row[Col.TPUT_PER_GPU] is not None
    # the defaults are part of the identity: another arm than the bare file's
    assert row[Col.ARM_ID] != st.points(["bare"]).row(0, named=True)[Col.ARM_ID]
    assert "TP8 EP8 DPA" in row[Col.ARM_LABEL] and "kv dram/lmcache" in row[Col.ARM_LABEL]


def test_a_file_value_that_contradicts_a_default_is_kept_with_a_warning(tmp_path: Path) -> None:
    d = tmp_path / "named"
    d.mkdir()
    shutil.copy(NAMED, d / NAMED.name)
    st = Store(tmp_path / "s")
    rep = ingest_paths(
        [d],
        st,
        run_id="r",
        defaults={"tp": 4, "precision": "INT4", "image": "img:1"},
        defaults_from="the job's plan",
    )
    assert rep.accepted == 1
    row = st.points(["r"]).row(0, named=True)
    # the file name says tp8 and int4: kept; the image it does not say is filled
    assert (row[Col.TP], row[Col.PRECISION], row[Col.IMAGE]) == (8, "int4", "img:1")
    tp = "tp=8 from the file differs from tp=4 from the job's plan; the file's value is kept"
    assert tp in row[Col.WARNINGS]
    assert not [w for w in row[Col.WARNINGS] if w.startswith("precision")]  # same, case aside
    assert [(n.path, n.reason) for n in rep.notes] == [(NAMED.name, tp)]


@pytest.mark.parametrize(
    ("hw", "expected", "warned"),
    [
        ("h200", ("h200", "cluster:h200-dgxc"), False),
        ("mi355x", ("h200", "cluster:h200-dgxc"), True),
    ],
)
def test_hw_and_hw_label_are_one_fact(
    tmp_path: Path, hw: str, expected: tuple[str, str], warned: bool
) -> None:
    # A sidecar beside the result says the runner label; a default `hw` is checked against it.
    run = tmp_path / "job"
    (run / "p1" / "results").mkdir(parents=True)
    shutil.copy(NAMED, run / "p1" / "results" / "result.json")
    sidecar = {"paretolens_point": {"hw_label": "cluster:h200-dgxc"}}
    (run / "p1" / "paretolens_point.json").write_text(json.dumps(sidecar))
    st = Store(tmp_path / "s")
    rep = ingest_paths([run], st, run_id="r", defaults={"hw": hw})
    row = st.points(["r"]).row(0, named=True)
    assert (row[Col.HW], row[Col.HW_LABEL]) == expected
    clash = (
        "hw_label='cluster:h200-dgxc' from the file differs from hw='mi355x' from the "
        "defaults; the file's value is kept"
    )
    assert [n.reason for n in rep.notes] == ([clash] if warned else [])


@pytest.mark.parametrize(
    ("defaults", "field"),
    [
        ({"gpu_kind": "h200"}, "gpu_kind"),
        ({"run_id": "other"}, "run_id"),
        ({"arm_id": "x"}, "arm_id"),
        ({"tp": "eight"}, "tp"),
        ({"dp_attention": "maybe"}, "dp_attention"),
    ],
)
def test_a_bad_default_is_refused_before_anything_is_stored(
    tmp_path: Path, defaults: dict[str, object], field: str
) -> None:
    st = Store(tmp_path / "s")
    with pytest.raises(SchemaError) as err:
        ingest_paths([_plain(tmp_path)], st, run_id="r", defaults=defaults)
    assert err.value.field == field
    assert "r" not in st.run_ids()

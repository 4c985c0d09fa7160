"""Eval readers on real files (tests/fixtures/wild/evals, PROVENANCE.md there): InferenceX
eval aggregates, lm-eval results with and without meta_env.json, the dump's eval rows."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import polars as pl

from ingest.contract.evals_schema import EvalCol
from ingest.eval_store import read_evals
from ingest.normalize.ids import arm_id
from ingest.pipeline import ingest_paths
from ingest.readers.base import SourceFile
from ingest.readers.evals import EvalAggReader, LmEvalFileReader, LmEvalUnitReader
from ingest.reading import parse_json
from ingest.sources.dump import ingest_dump
from ingest.store import Store

WILD = Path(__file__).resolve().parents[2] / "fixtures/wild"
EVALS = WILD / "evals"
AGG = EVALS / "inferencex_agg"
ARTIFACT = (
    EVALS / "inferencex_eval_artifact"
    / "eval_dsr1_1k8k_fp8_sglang_tp8-ep1-dpafalse_disagg-false_spec-none_conc64_h200-nv_1"
)  # fmt: skip
RESULTS = "results_2026-02-19T15-34-28.956093.json"


def _src(path: Path, rel: str | None = None) -> SourceFile:
    return SourceFile(path, rel or path.name, "", path.read_bytes())


def _rows(rows: list[dict[str, Any]], **where: Any) -> list[dict[str, Any]]:
    return [r for r in rows if all(r.get(k) == v for k, v in where.items())]


def test_inferencex_eval_aggregate_rows() -> None:
    src = _src(AGG / "supplemental-evals.json")
    res = EvalAggReader().read(src, parse_json(src))
    # 66 rows, each with em_strict and em_flexible (score duplicates em_strict: not a metric)
    assert len(res.evals) == 132 and not res.rejects
    # row 40 (Feb 2026): DeepSeek-R1 FP8 on B200-TRT, TRT-LLM TP8 EP8 DPA, no spec, conc 256
    (strict,) = _rows(res.evals, source_path="supplemental-evals.json#40", metric="em_strict")
    assert (strict["hw"], strict["framework"], strict["precision"]) == ("b200", "trt", "fp8")
    assert (strict["tp"], strict["ep"], strict["dp_attention"], strict["conc"]) == (8, 8, True, 256)
    assert (strict["spec_decoding"], strict["model_prefix"]) == ("none", "dsr1")
    assert strict["model"] == "deepseek-ai/DeepSeek-R1-0528"
    # the file's own numbers: 1193 of 1319 strict matches = 0.9044730856709629, and the binomial
    # stderr lm-eval reports, sqrt(p (1 - p) / (n - 1)) = sqrt(0.904473 x 0.095527 / 1318)
    # = 0.0080966
    assert strict["value"] == 0.9044730856709629
    assert strict["stderr"] == 0.008096605771155703
    assert round((0.9044730856709629 * 0.0955269143290371 / 1318) ** 0.5, 7) == 0.0080966
    assert (strict["n_eff"], strict["primary"]) == (1319, True)
    # ISL/OSL from the artifact name in `source` (eval_dsr1_1k8k_...), as the InferenceX app does
    assert (strict["isl"], strict["osl"]) == (1024, 8192)
    (flex,) = _rows(res.evals, source_path="supplemental-evals.json#40", metric="em_flexible")
    assert (flex["value"], flex["stderr"], flex["primary"]) == (
        0.9128127369219106,
        0.007770691416783609,
        False,
    )
    # row 20: gpt-oss on MI300X with spec_decoding "" (SPEC_DECODING unset): unknown, not "none"
    (mi300,) = _rows(res.evals, source_path="supplemental-evals.json#20", metric="em_strict")
    assert (mi300["hw"], mi300["spec_decoding"], mi300["date"]) == (
        "mi300x", None, "2026-01-21T05:44:15Z",
    )  # fmt: skip


def test_eval_aggregate_without_stderr() -> None:
    # a one-row eval_results_all/agg.json of the InferenceX app's measurement-receipt fixture
    src = _src(AGG / "measurement-receipt-agg.json")
    res = EvalAggReader().read(src, parse_json(src))
    strict, flex = res.evals
    assert (strict["metric"], strict["value"], strict["stderr"], strict["n_eff"]) == (
        "em_strict", 0.5, None, 2,
    )  # fmt: skip
    assert (flex["metric"], flex["value"]) == ("em_flexible", 1.0)
    # runner label h200-nv -> h200; no model column but the prefix
    assert (strict["hw"], strict["model_prefix"], strict["model"], strict["conc"]) == (
        "h200", "dsr1", None, 28,
    )  # fmt: skip
    assert strict["source_path"] == "measurement-receipt-agg.json"  # one row: no #index


def test_lm_eval_results_with_meta_env() -> None:
    files = [_src(p, f"a/{p.name}") for p in sorted(ARTIFACT.iterdir())]
    res = LmEvalUnitReader().read_unit(files)
    strict, flex = res.evals
    assert strict["source_path"] == f"a/{RESULTS}"
    assert (strict["metric"], strict["value"], strict["stderr"], strict["n_eff"]) == (
        "em_strict", 0.9408642911296436, 0.006497266660428847, 1319,
    )  # fmt: skip
    assert (flex["metric"], flex["value"], flex["stderr"]) == (
        "em_flexible", 0.9393479909021987, 0.0065747333814057994,
    )  # fmt: skip
    # configuration from meta_env.json: isl/osl arrive as strings, hw is the runner type
    assert (strict["hw"], strict["framework"], strict["tp"], strict["ep"]) == (
        "h200",
        "sglang",
        8,
        1,
    )
    assert (strict["isl"], strict["osl"], strict["conc"], strict["lm_eval_version"]) == (
        1024, 8192, 64, "0.4.9",
    )  # fmt: skip
    # single node: the collector's prefill_*/decode_* copies are not kept
    assert strict.get("prefill_tp") is None
    assert set(res.consumed) == {"a/meta_env.json", f"a/{RESULTS}"}


def test_lone_lm_eval_results_04_and_03_shapes() -> None:
    src = _src(EVALS / "lm_eval_mmlu/results_2025-01-21T00-40-03.356274.json")
    res = LmEvalFileReader().read(src, parse_json(src))
    (acc,) = res.evals
    assert (acc["task"], acc["metric"], acc["value"], acc["stderr"], acc["n_eff"]) == (
        "mmlu_abstract_algebra", "acc", 0.34, 0.047609522856952344, 100,
    )  # fmt: skip
    # sqrt(0.34 x 0.66 / 99) = 0.0476095: lm-eval's sample stderr of a mean of 0/1
    assert round((0.34 * 0.66 / 99) ** 0.5, 7) == 0.0476095
    assert acc["date"] == "2025-01-21T00:38:59+00:00"  # "date": 1737419939.4888458
    assert acc["model"].endswith("dog_steer.csv") and acc.get("hw") is None
    assert "join no arm" in res.notes[0]
    src = _src(EVALS / "lm_eval_v0/gsm8k-v0-res.json")
    (v0,) = LmEvalFileReader().read(src, parse_json(src)).evals
    assert (v0["task"], v0["metric"], v0["value"], v0["stderr"], v0["n_eff"]) == (
        "gsm8k", "acc", 0.0, 0.0, None,
    )  # fmt: skip


def _batched(root: Path) -> Path:
    art = root / "eval_batched"
    art.mkdir(parents=True)
    meta = json.loads((ARTIFACT / "meta_env.json").read_text())
    meta.update(eval_concs=[4, 16], completed_eval_concs=[4], failed_eval_concs=[16])
    (art / "meta_env.json").write_text(json.dumps(meta))
    for conc in (4, 16):
        shutil.copy(ARTIFACT / RESULTS, art / f"results_x_conc{conc}.json")
    (art / "samples_gsm8k_x.jsonl").write_text('{"doc_id": 0}\n')
    return art


def test_ingest_accounts_for_every_eval_file(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    report = ingest_paths([EVALS], store, run_id="ev")
    accepted = sorted(o.path for o in report.accepted_files)
    assert accepted == [
        "inferencex_agg/measurement-receipt-agg.json",
        "inferencex_agg/supplemental-evals.json",
        f"inferencex_eval_artifact/{ARTIFACT.name}/{RESULTS}",
        "lm_eval_mmlu/results_2025-01-21T00-40-03.356274.json",
        "lm_eval_v0/gsm8k-v0-res.json",
    ]
    assert [o.path for o in report.auxiliary] == [
        f"inferencex_eval_artifact/{ARTIFACT.name}/meta_env.json"
    ]
    assert not report.rejected and report.accepted == 0
    assert [i.path for i in report.ignored] == ["PROVENANCE.md"]
    stored = read_evals(store, ["ev"])
    # 132 + 2 aggregate rows, 2 from the artifact, 1 mmlu, 1 v0 gsm8k
    assert stored.height == 138
    # the arm id is the points' hash of the identity (ARM_KEY columns the eval states)
    row = stored.filter(pl.col("source_path").str.ends_with(RESULTS)).row(0, named=True)
    assert row[EvalCol.ARM_ID] == arm_id(row)
    again = ingest_paths([EVALS], store, run_id="ev")
    assert len(again.duplicate_files) == 5 and not again.accepted_files
    assert read_evals(store, ["ev"]).height == 138


def test_batched_evals_keep_completed_concurrencies(tmp_path: Path) -> None:
    art = _batched(tmp_path / "in")
    store = Store(tmp_path / "store")
    report = ingest_paths([art], store, run_id="b")
    assert [o.path for o in report.accepted_files] == ["results_x_conc4.json"]
    ignored = {i.path: i.reason for i in report.ignored}
    assert "not among the completed ones [4]" in ignored["results_x_conc16.json"]
    assert "per-sample" in ignored["samples_gsm8k_x.jsonl"]
    stored = read_evals(store, ["b"])
    assert stored.get_column("conc").unique().to_list() == [4]


def test_newest_result_of_a_legacy_eval_set_counts(tmp_path: Path) -> None:
    art = tmp_path / "eval_legacy"
    shutil.copytree(ARTIFACT, art)
    old = json.loads((ARTIFACT / RESULTS).read_text())
    old["results"]["gsm8k"]["exact_match,strict-match"] = 0.5
    (art / "results_2026-02-18T00-00-00.000000.json").write_text(json.dumps(old))
    report = ingest_paths([art], Store(tmp_path / "s"), run_id="l")
    assert [o.path for o in report.accepted_files] == [RESULTS]
    ignored = {i.path: i.reason for i in report.ignored}
    assert "superseded by " + RESULTS in ignored["results_2026-02-18T00-00-00.000000.json"]


def test_dump_eval_rows_go_to_the_evals_table(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    report = ingest_dump(WILD / "inferencex_dump", store)
    assert ("23000000002", "eval_results/700.json") in {
        (o.run_id, o.path) for o in report.accepted_files
    }
    (row,) = read_evals(store, ["23000000002"]).iter_rows(named=True)
    # eval row 700 joined to config 2: Kimi-K2.5 INT4 MTP on mi355x, vLLM TP8, 1k/1k conc 64
    assert (row["task"], row["metric"], row["value"], row["stderr"], row["n_eff"]) == (
        "gsm8k", "em_strict", 0.9378, 0.0067, 1319,
    )  # fmt: skip
    assert (row["model_prefix"], row["hw"], row["spec_decoding"], row["tp"], row["conc"]) == (
        "kimik2.5", "mi355x", "mtp", 8, 64,
    )  # fmt: skip
    assert (row["lm_eval_version"], row["isl"], row["osl"]) == ("0.4.9", 1024, 1024)

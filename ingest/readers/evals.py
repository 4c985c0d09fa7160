"""Eval results: accuracy of a configuration, for the `evals` table (docs/formats.md, "Evals").

Three shapes, each recognised by its keys:

- **InferenceX eval aggregate** (`eval_results_all/agg_eval_all.json`, written by
  `utils/collect_eval_results.py`): a JSON array of flat rows, one per configuration, concurrency
  and task: the configuration (`infmax_model_prefix`/`model_prefix`, `model`, `hw` upper case,
  `framework`, `precision`, `spec_decoding`, `tp`, `ep`, `dp_attention` as a string,
  `prefill_*`/`decode_*`, `is_multinode`, `isl`, `osl`, `conc`), `task`, `em_strict(_se)`,
  `em_flexible(_se)`, `n_eff`, `score`, `score_name`, `score_se`, `source`. The InferenceX app
  dump's `eval_results` rows reach this reader in the same shape (`ingest.sources.dump`).
- **lm-eval results with `meta_env.json`** (an `eval_<...>` artifact: `meta_env.json` written by
  InferenceX's `benchmark_lib.sh` and `results_<date>.json` by lm-evaluation-harness): the
  configuration from `meta_env.json`, the metrics from `results[task]["<metric>,<filter>"]`,
  `"<metric>_stderr,<filter>"` and `n-samples[task].effective`. As InferenceX collects them: the
  newest results file counts, or, when `meta_env.eval_concs` is a list (batched evals), the
  newest `_conc<N>` file of each concurrency in `completed_eval_concs`; the others are ignored
  with the reason, as are `samples_*.jsonl` logs.
- **a lone lm-eval results JSON** (0.4 `results`/`n-samples`/`config`, or the 0.3 shape
  `{"results": {task: {"acc": .., "acc_stderr": ..}}, "versions": {..}}`): stored with the model
  it names and no configuration, so it joins no arm; a note says so.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from ingest.contract.evals_schema import EvalCol
from ingest.errors import ParseError
from ingest.normalize.ids import canonical_hw
from ingest.readers.base import ReadResult, Row, RowReject, SourceFile

_CONC_SUFFIX = re.compile(r"_conc(\d+)(?:_\d+)?\.json$")
_ISL_OSL = re.compile(r"(?:^|[_/])(\d+)k(\d+)k(?:_|$)")
_UNKNOWN = {"", "unknown", "none_set", "null"}
_RENAMES = {
    "exact_match,strict-match": "em_strict",
    "exact_match,flexible-extract": "em_flexible",
}
_AGG_METRICS = ("em_strict", "em_flexible")
_NOT_METRICS = {"alias", "sample_len", "name", "sample_count"}


def _num(value: Any) -> float | None:
    """A finite number, else None (lm-eval writes "N/A" for a missing stderr)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    out = float(value)
    return out if math.isfinite(out) else None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def _text(value: Any, lower: bool = True) -> str | None:
    if value is None or isinstance(value, bool | dict | list):
        return None
    out = str(value).strip()
    if out.lower() in _UNKNOWN:
        return None
    return out.lower() if lower else out


def _bool(value: Any) -> bool | None:
    """InferenceX writes booleans as JSON booleans or "true"/"false"; "none" or a split
    "prefill=true,decode=false" says nothing one column can hold."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower() if value is not None else ""
    return {"true": True, "false": False, "1": True, "0": False}.get(text)


def identity(meta: Mapping[str, Any], source: str = "") -> Row:
    """The configuration columns an eval states, from a `meta_env.json` or an aggregate row.

    Unknown markers (`unknown`, empty strings, InferenceX's 0 for an unset ISL/OSL/conc) are
    left null. `prefill_*`/`decode_*` are kept only for multinode or disaggregated
    configurations (the collector copies `tp`/`ep` into them for single-node ones).
    """
    hw = _text(meta.get("hw"), lower=False)
    multinode = _bool(meta.get("is_multinode"))
    disagg = _bool(meta.get("disagg"))
    row: Row = {
        EvalCol.MODEL: _text(meta.get("model"), lower=False),
        EvalCol.MODEL_PREFIX: _text(
            meta.get("infmax_model_prefix") or meta.get("model_prefix"), lower=False
        ),
        EvalCol.HW: canonical_hw(hw) if hw else None,
        EvalCol.FRAMEWORK: _text(meta.get("framework")),
        EvalCol.PRECISION: _text(meta.get("precision")),
        EvalCol.SPEC_DECODING: _text(meta.get("spec_decoding") or meta.get("spec_method")),
        EvalCol.DISAGG: disagg,
        EvalCol.IS_MULTINODE: multinode,
        EvalCol.TP: _int(meta.get("tp")),
        EvalCol.EP: _int(meta.get("ep")),
        EvalCol.DP_ATTENTION: _bool(meta.get("dp_attention")),
        EvalCol.KV_OFFLOADING: _text(meta.get("kv_offloading")),
        EvalCol.ISL: _int(meta.get("isl")) or None,
        EvalCol.OSL: _int(meta.get("osl")) or None,
        EvalCol.CONC: _int(meta.get("conc")) or None,
    }
    if multinode or disagg:
        for role in ("prefill", "decode"):
            for key in ("tp", "ep", "num_workers"):
                row[f"{role}_{key}"] = _int(meta.get(f"{role}_{key}"))
            row[f"{role}_dp_attention"] = _bool(meta.get(f"{role}_dp_attention"))
    if row[EvalCol.ISL] is None and source:
        # The app reads them from the artifact name (`eval_dsr1_1k8k_...`) when the row has none.
        m = _ISL_OSL.search(source)
        if m:
            row[EvalCol.ISL], row[EvalCol.OSL] = int(m.group(1)) * 1024, int(m.group(2)) * 1024
    return row


def _metric_name(key: str) -> str:
    if key in _RENAMES:
        return _RENAMES[key]
    name, _, flt = key.partition(",")
    return name if flt in ("", "none") else key


def _stderr_key(key: str) -> str:
    name, sep, flt = key.partition(",")
    return f"{name}_stderr{sep}{flt}"


def _primary(metrics: list[str]) -> str | None:
    """InferenceX's `score`: strict (or resolved) exact match, else accuracy, else the first."""
    for want in ("em_strict", "acc"):
        if want in metrics:
            return want
    resolved = [m for m in metrics if "resolved" in m]
    return resolved[0] if resolved else (metrics[0] if metrics else None)


def _date(value: Any) -> str | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return datetime.fromtimestamp(float(value), UTC).isoformat(timespec="seconds")
    return _text(value, lower=False)


def _model_of(doc: Mapping[str, Any]) -> str | None:
    name = _text(doc.get("model_name"), lower=False)
    if name:
        return name
    args = doc.get("config", {}).get("model_args") if isinstance(doc.get("config"), dict) else None
    if isinstance(args, str):
        for part in args.split(","):
            key, _, value = part.partition("=")
            if key.strip() in ("pretrained", "model") and value.strip():
                return value.strip()
    return None


def lm_eval_rows(doc: Mapping[str, Any], rel: str, ident: Row) -> list[Row]:
    """One row per (task, metric) of an lm-eval results document, with the given identity."""
    results = doc.get("results")
    if not isinstance(results, dict) or not results:
        raise ParseError(rel, "results", "an lm-eval results file with no task in `results`")
    raw = doc.get("n-samples")
    samples: dict[str, Any] = raw if isinstance(raw, dict) else {}
    version = _text(doc.get("lm_eval_version"), lower=False)
    date = _date(doc.get("date"))
    base = {**ident}
    if base.get(EvalCol.MODEL) is None:
        base[EvalCol.MODEL] = _model_of(doc)
    out: list[Row] = []
    for task, metrics in results.items():
        if not isinstance(metrics, dict):
            continue
        got = samples.get(task)
        entry: dict[str, Any] = got if isinstance(got, dict) else {}
        n_eff = _int(entry.get("effective")) if entry else _int(metrics.get("sample_len"))
        found: dict[str, tuple[float, float | None]] = {}
        for key, value in metrics.items():
            name = key.partition(",")[0]
            if key in _NOT_METRICS or name.endswith("_stderr") or _num(value) is None:
                continue
            found[_metric_name(key)] = (
                float(value),
                _num(metrics.get(_stderr_key(key))),
            )
        primary = _primary(list(found))
        for metric, (value, se) in found.items():
            out.append(
                {
                    **base,
                    EvalCol.SOURCE_PATH: rel,
                    EvalCol.TASK: str(task).lower(),
                    EvalCol.METRIC: metric,
                    EvalCol.VALUE: value,
                    EvalCol.STDERR: se,
                    EvalCol.N_EFF: n_eff,
                    EvalCol.PRIMARY: metric == primary,
                    EvalCol.LM_EVAL_VERSION: version,
                    EvalCol.DATE: date,
                }
            )
    if not out:
        raise ParseError(rel, "results", "no numeric metric in any task of `results`")
    return out


def is_lm_eval(doc: Any) -> bool:
    """An lm-eval results document (0.3 or 0.4 shape)."""
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("results"), dict)
        and bool(doc["results"])
        and all(isinstance(v, dict) for v in doc["results"].values())
        and any(k in doc for k in ("lm_eval_version", "n-samples", "versions", "configs"))
    )


def is_eval_agg(doc: Any) -> bool:
    """An InferenceX eval aggregate: an array of flat rows with a task and an exact-match score."""
    if not isinstance(doc, list) or not doc or not all(isinstance(r, dict) for r in doc):
        return False
    first = doc[0]
    return (
        "task" in first
        and "tput_per_gpu" not in first
        and any(k in first for k in ("em_strict", "em_flexible", "score", "score_name"))
    )


def agg_rows(doc: list[dict[str, Any]], rel: str) -> tuple[list[Row], list[RowReject]]:
    """The rows of an eval aggregate; a row without a task or a score is a row reject."""
    out: list[Row] = []
    rejects: list[RowReject] = []
    for i, row in enumerate(doc):
        task = _text(row.get("task"))
        if not task:
            rejects.append(RowReject("task", "an eval row without a task", f"#{i}"))
            continue
        if row.get("infrastructure_success") is False:
            err = json.dumps(row.get("integration_error"), sort_keys=True)[:300]
            why = f"the eval did not run (infrastructure_success false): {err}"
            rejects.append(RowReject("infrastructure_success", why, f"#{i}"))
            continue
        found: dict[str, tuple[float, float | None]] = {}
        for name in _AGG_METRICS:
            value = _num(row.get(name))
            if value is not None:
                found[name] = (value, _num(row.get(f"{name}_se")))
        score_name = _text(row.get("score_name"))
        if score_name and score_name not in found and _num(row.get("score")) is not None:
            name = "acc" if score_name == "accuracy" else score_name
            found[name] = (float(row["score"]), _num(row.get("score_se")))
        if not found:
            why = "no em_strict, em_flexible or score value (null or not a number)"
            rejects.append(RowReject("score", why, f"#{i}"))
            continue
        primary = _primary(list(found))
        if score_name and (score_name in found or score_name == "accuracy"):
            primary = "acc" if score_name == "accuracy" else score_name
        ident = identity(row, str(row.get("source") or ""))
        where = rel if len(doc) == 1 else f"{rel}#{i}"
        for metric, (value, se) in found.items():
            out.append(
                {
                    **ident,
                    EvalCol.SOURCE_PATH: where,
                    EvalCol.TASK: task,
                    EvalCol.METRIC: metric,
                    EvalCol.VALUE: value,
                    EvalCol.STDERR: se,
                    EvalCol.N_EFF: _int(row.get("n_eff")),
                    EvalCol.PRIMARY: metric == primary,
                    EvalCol.LM_EVAL_VERSION: _text(row.get("lm_eval_version"), lower=False),
                    EvalCol.DATE: _text(row.get("timestamp") or row.get("date"), lower=False),
                }
            )
    return out, rejects


def _sha(rows: list[Row], src: SourceFile, reader: str) -> list[Row]:
    return [{**r, EvalCol.SOURCE_SHA256: src.sha256, EvalCol.READER: reader} for r in rows]


class EvalAggReader:
    """`agg_eval_all.json` (and the dump's eval rows): one eval row per configuration x task."""

    name = "eval_agg"

    def sniff(self, src: SourceFile, doc: Any) -> bool:
        return is_eval_agg(doc)

    def read(self, src: SourceFile, doc: Any) -> ReadResult:
        rows, rejects = agg_rows(doc, src.rel)
        return ReadResult(evals=_sha(rows, src, self.name), rejects=rejects, consumed=[src.rel])


class LmEvalFileReader:
    """A results JSON of lm-evaluation-harness with no `meta_env.json` beside it."""

    name = "lm_eval"

    def sniff(self, src: SourceFile, doc: Any) -> bool:
        return is_lm_eval(doc)

    def read(self, src: SourceFile, doc: Any) -> ReadResult:
        rows = _sha(lm_eval_rows(doc, src.rel, {}), src, self.name)
        note = (
            "lm-eval results without a meta_env.json beside them: stored with the model they "
            "name and no hardware or topology, so they join no arm"
        )
        return ReadResult(evals=rows, consumed=[src.rel], notes=[note])


def _load(src: SourceFile) -> Any:
    try:
        return json.loads(src.text())
    except (ValueError, RecursionError):
        return None


class LmEvalUnitReader:
    """An InferenceX eval artifact: `meta_env.json` with the lm-eval results beside it."""

    name = "lm_eval"

    def sniff_unit(self, files: list[SourceFile]) -> bool:
        return any(f.name == "meta_env.json" for f in files)

    def read_unit(self, files: list[SourceFile]) -> ReadResult:
        meta_src = next(f for f in files if f.name == "meta_env.json")
        meta = _load(meta_src)
        if not isinstance(meta, dict):
            raise ParseError(meta_src.rel, "", "meta_env.json is not a JSON object")
        results = [(f, d) for f in files if f is not meta_src and is_lm_eval(d := _load(f))]
        ignored = {
            f.rel: "per-sample lm-eval log: the results file carries the scores; not stored"
            for f in files
            if f.name.startswith("samples_") and f.name.endswith((".jsonl", ".json"))
        }
        batched = isinstance(meta.get("eval_concs"), list)
        chosen: dict[int | None, tuple[SourceFile, Any]] = {}
        allowed = meta.get("completed_eval_concs", meta.get("eval_concs")) if batched else None
        for f, doc in sorted(results, key=lambda fd: (_date(fd[1].get("date")) or "", fd[0].name)):
            conc = None
            if batched:
                m = _CONC_SUFFIX.search(f.name)
                conc = int(m.group(1)) if m else None
                if conc is None or (isinstance(allowed, list) and conc not in allowed):
                    ignored[f.rel] = (
                        f"batched eval result of concurrency {conc} not among the completed "
                        f"ones {allowed} (meta_env.json): not taken, as InferenceX collects it"
                    )
                    continue
            old = chosen.get(conc)
            if old is not None:
                ignored[old[0].rel] = (
                    f"superseded by {f.name}: the newest lm-eval result of the eval set counts"
                )
            chosen[conc] = (f, doc)
        rows: list[Row] = []
        for conc, (f, doc) in chosen.items():
            ident = identity({**meta, "conc": conc} if conc is not None else meta)
            rows.extend(_sha(lm_eval_rows(doc, f.rel, ident), f, self.name))
        consumed = [meta_src.rel, *(f.rel for f, _ in chosen.values()), *ignored]
        notes = [] if rows else ["meta_env.json with no lm-eval results file beside it"]
        return ReadResult(evals=rows, eval_ignored=ignored, consumed=consumed, notes=notes)


FILE_READERS = (EvalAggReader(), LmEvalFileReader())
UNIT_READERS = (LmEvalUnitReader(),)

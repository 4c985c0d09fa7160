"""Reader for the InferenceX app's benchmark rows, as its API serves them.

`GET /api/v1/benchmarks?model=<model>` (SemiAnalysisAI/InferenceX-app, `packages/db/src/queries/
benchmarks.ts`, `getLatestBenchmarks`) answers a JSON array with the newest result per
configuration, concurrency and sequence lengths of one model. Each element joins a `configs` row
to its `benchmark_results` row: `hardware`, `framework`, `model` (the model prefix, e.g. `dsr1`),
`precision`, `spec_method`, `disagg`, `is_multinode`, `prefill_*`/`decode_*` (`tp`, `ep`,
`dp_attention`, `num_workers`), `num_prefill_gpu`, `num_decode_gpu`, `isl`, `osl`, `conc`,
`image`, `metrics` (the `process_result.py` metrics, latencies in seconds), `date` and `run_url`
(`<html_url>/attempts/<n>`). The app's own Cypress fixture
(`packages/app/cypress/fixtures/api/benchmarks.json`) is a capture of it (docs/formats.md).

Each element is turned back into the aggregate row it was made from (`aggregate_row`, which the
app's table dump shares, `ingest.sources.dump`) and read by the `agg_fixed` reader, so nothing of
that format is read twice. The element's `date` and `run_url` are kept in the point's `metadata`
under `inferencex_app` (an object, so they never split an arm). An element that is not such a
row, or whose row breaks the data contract, is a reject naming its index; the others are kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ingest.contract.col import Col
from ingest.errors import ParseError, SchemaError
from ingest.normalize.row import normalize
from ingest.readers._common import RepeatedElements
from ingest.readers.agg_fixed import read_fixed_row
from ingest.readers.base import ReadResult, Row, RowReject, SourceFile

# The keys every element of the app's benchmark array carries (BenchmarkRow, benchmarks.ts).
_ROW_KEYS = frozenset({"hardware", "framework", "model", "precision", "spec_method", "conc"})


def flag(value: Any) -> bool:
    """A boolean column as the app gives it (JSON true, or the string "true")."""
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def aggregate_row(config: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
    """The `process_result.py` aggregate row an app benchmark row was made from.

    `config` holds the configuration's fields (a `configs` row) and `result` the measurement's
    (`isl`, `osl`, `conc`, `image`, `metrics`); an API element holds both, so it is passed as
    both. Single-node configs whose prefill and decode fields agree (the app copies a v1 row's
    one `tp`/`ep`/`dp_attention` into both) give the v1 shape, so their arms equal those of the
    same configuration ingested from a run's artifacts; disaggregated or multinode configs give
    the v2 shape (`prefill_*`, `decode_*`, `num_prefill_gpu`, `num_decode_gpu`).
    """
    row: dict[str, Any] = {
        "hw": config.get("hardware"),
        "infmax_model_prefix": config.get("model"),
        "framework": config.get("framework"),
        "precision": config.get("precision"),
        "spec_decoding": config.get("spec_method") or "none",
        "disagg": flag(config.get("disagg")),
        "is_multinode": flag(config.get("is_multinode")),
        "isl": result.get("isl"),
        "osl": result.get("osl"),
        "conc": result.get("conc"),
    }
    if result.get("image"):
        row["image"] = result["image"]
    same = all(
        config.get(f"prefill_{k}") == config.get(f"decode_{k}")
        for k in ("tp", "ep", "dp_attention")
    )
    if same and not row["disagg"] and not row["is_multinode"]:
        row["tp"] = config.get("prefill_tp")
        row["ep"] = config.get("prefill_ep")
        row["dp_attention"] = flag(config.get("prefill_dp_attention"))
    else:
        for role in ("prefill", "decode"):
            for key in ("tp", "ep", "num_workers"):
                row[f"{role}_{key}"] = config.get(f"{role}_{key}")
            row[f"{role}_dp_attention"] = flag(config.get(f"{role}_dp_attention"))
            row[f"num_{role}_gpu"] = config.get(f"num_{role}_gpu")
    metrics = result.get("metrics")
    if isinstance(metrics, Mapping):
        for key, value in metrics.items():
            row.setdefault(str(key), value)
    return row


def is_app_row(element: Any) -> bool:
    """One element of the app's benchmark array: configuration fields, `metrics` and a
    `prefill_tp` or `decode_tp` (a table dump's `benchmark_results` row has a `config_id`
    instead; a `configs` row has no `metrics`)."""
    return (
        isinstance(element, dict)
        and element.keys() >= _ROW_KEYS
        and isinstance(element.get("metrics"), dict)
        and ("prefill_tp" in element or "decode_tp" in element)
        and "config_id" not in element
    )


def _problem(element: Mapping[str, Any]) -> tuple[str, str]:
    """(field, what was expected) when an app row cannot be a fixed-sequence point."""
    for key in ("hardware", "model"):
        value = element.get(key)
        if not isinstance(value, str) or not value.strip():
            return key, f"expected the {key} key (a non-empty string), got {value!r}"
    metrics = element["metrics"]
    if "tput_per_gpu" not in metrics:
        return (
            "metrics.tput_per_gpu",
            f"no tput_per_gpu (benchmark_type {element.get('benchmark_type')!r}): not a "
            "fixed-sequence row",
        )
    return "", ""


def _point(src: SourceFile, element: Mapping[str, Any]) -> Row:
    """The partial canonical row of one app element, validated against the data contract."""
    row = read_fixed_row(src, aggregate_row(element, element))
    source = {k: element[k] for k in ("date", "run_url") if element.get(k) is not None}
    if source:
        row[Col.METADATA] = {"inferencex_app": source}
    # Validate now so one bad element is rejected alone instead of failing the whole array.
    normalize(row, run_id="", source_path=src.rel, source_sha256="", artifact="", ingested_at=None)
    return row


class AppApiReader:
    """The InferenceX app's `/api/v1/benchmarks` array of benchmark rows."""

    name = "inferencex_app_api"

    def sniff(self, src: SourceFile, doc: Any) -> bool:
        return isinstance(doc, list) and any(is_app_row(e) for e in doc)

    def read(self, src: SourceFile, doc: Any) -> ReadResult:
        if not isinstance(doc, list):
            raise ParseError(src.rel, "", "expected a JSON array of InferenceX app benchmark rows")
        result = ReadResult()
        seen = RepeatedElements()
        for i, element in enumerate(doc):
            if not is_app_row(element):
                keys = sorted(element)[:30] if isinstance(element, dict) else []
                what = (
                    f"keys found: {', '.join(keys)}" if keys else f"a JSON {type(element).__name__}"
                )
                result.rejects.append(
                    RowReject(
                        "",
                        "inferencex_app_api: expected a benchmark row (hardware, framework, "
                        f"model, precision, spec_method, conc, prefill_tp, metrics); {what}",
                        str(i),
                    )
                )
                continue
            field, why = _problem(element)
            if field:
                result.rejects.append(RowReject(field, why, str(i)))
                continue
            if seen.repeats(result, i, element):
                continue
            try:
                result.points.append(_point(src, element))
            except (ParseError, SchemaError) as exc:
                result.rejects.append(RowReject(exc.field, exc.reason, str(i)))
        return result


FILE_READERS = (AppApiReader(),)

"""aiperf raw trees: `profile_export_aiperf.{json,csv}` with their server dumps and command lines.

The run aggregate (either JSON schema or the CSV, `ingest.readers._aiperf_export`) gives the
metrics, `server_metrics_export.{json,csv}` the spec-decode counters, server summary and time
series, `vllm_command.txt` the server config, `benchmark_command.txt` the client flags, and a
`server.log` the acceptance when the dump has no spec-decode counters.

A tree inside an InferenceX `agentic_<x>` artifact enriches the `bmk_agentic_<x>` aggregate built
from the same records (InferenceX always uploads both, §7.2); any other tree is a point of its own,
its identity taken from the directory name (§7.1), the aiperf input config and the command lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.readers import server_metrics
from ingest.readers._aiperf_export import (
    is_profile_csv,
    is_profile_json,
    load_of,
    metrics_row,
    profiling_phase,
    stats_from_csv,
    stats_from_json,
)
from ingest.readers._metrics_common import identity_from_name, parse_float, unit_dir_name
from ingest.readers.base import ReadResult, Row, SourceFile
from ingest.readers.server_log import spec_from_log
from ingest.readers.vllm_command import (
    config_columns,
    is_serve_command,
    parse_flags,
    serve_flags,
    split_command,
    topology_columns,
)

_SPEC_COLUMNS = {
    Col.SPEC_DRAFTS,
    Col.SPEC_DRAFT_TOKENS,
    Col.SPEC_ACCEPTED_TOKENS,
    Col.AL_MEASURED,
    Col.DRAFT_ACCEPTANCE_RATE,
    Col.ACCEPT_RATE_PER_POS,
    Col.AL_SOURCE,
}


def _load_json(src: SourceFile) -> Any:
    if src.data.lstrip()[:1] != b"{":
        return None
    try:
        return json.loads(src.text())
    except json.JSONDecodeError as exc:
        raise ParseError(
            src.rel, "", f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from exc
    except RecursionError as exc:
        raise ParseError(src.rel, "", "JSON nested too deeply") from exc
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise ParseError(src.rel, "", f"invalid JSON: {exc}") from exc


def _model(config: Mapping[str, Any]) -> str | None:
    # <= 0.8: endpoint.model_names[]; 0.9+: models.items[].name (or a bare list of names).
    endpoint, models = config.get("endpoint", {}), config.get("models")
    names = endpoint.get("model_names") if isinstance(endpoint, Mapping) else None
    if isinstance(models, Mapping):
        models = models.get("items")
    if not names and isinstance(models, list):
        names = [m.get("name") if isinstance(m, Mapping) else m for m in models]
    return str(names[0]) if isinstance(names, list) and names and names[0] else None


def _metadata(profile: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, Any]:
    """What the export says beyond the canonical columns (versions, run_info, load shape)."""
    meta: dict[str, Any] = {
        k: profile[k]
        for k in ("schema_version", "aiperf_version", "benchmark_id")
        if isinstance(profile.get(k), str)
    }
    run_info = profile.get("run_info")
    if isinstance(run_info, Mapping):
        meta["run_info"] = {k: v for k, v in run_info.items() if k != "benchmark_id"}
    elif isinstance(config.get("cli_command"), str):
        meta["cli_command"] = config["cli_command"]
    phase = profiling_phase(config)
    loadgen = config.get("loadgen") if isinstance(config.get("loadgen"), Mapping) else {}
    shape = phase or loadgen
    for key, ours in (
        ("type", "load_type"),
        ("request_rate_mode", "load_type"),
        ("arrival_pattern", "arrival_pattern"),
        ("requests", "request_count"),
        ("request_count", "request_count"),
        ("duration", "benchmark_duration_s"),
        ("benchmark_duration", "benchmark_duration_s"),
    ):
        if isinstance(shape, Mapping) and shape.get(key) is not None:
            meta.setdefault(ours, shape[key])
    if isinstance(shape, Mapping) and shape.get("rate") is not None and shape.get("concurrency"):
        meta["concurrency_cap"] = shape["concurrency"]  # rate-paced with a concurrency limit
    endpoint = config.get("endpoint")
    if isinstance(endpoint, Mapping):
        for key in ("type", "streaming"):
            if endpoint.get(key) is not None:
                meta[f"endpoint_{key}"] = endpoint[key]
    datasets = config.get("datasets")
    if isinstance(datasets, list):
        names = [d.get("dataset") or d.get("type") for d in datasets if isinstance(d, Mapping)]
        meta["datasets"] = [str(n) for n in names if n]
    tokenizer = config.get("tokenizer")
    if isinstance(tokenizer, Mapping) and isinstance(tokenizer.get("name"), str):
        meta["tokenizer"] = tokenizer["name"]
    return meta


def _identity(
    files: list[SourceFile],
    config: Mapping[str, Any],
    by_kind: Mapping[str, SourceFile],
    rel: str,
) -> Row:
    row = identity_from_name(unit_dir_name(files))
    if (model := _model(config)) is not None:
        row[Col.MODEL] = model
    conc, rate = load_of(config, rel)
    if conc is not None:
        row[Col.CONC] = conc
    if rate is not None:
        row[Col.REQUEST_RATE] = rate
        row.pop(Col.CONC, None)  # a rate-paced point: its load coordinate is the rate
    if "client" in by_kind:
        flags = parse_flags(split_command(by_kind["client"].text(), by_kind["client"].rel))
        if row.get(Col.REQUEST_RATE) is None and flags.get("request-rate") is not None:
            row[Col.REQUEST_RATE] = parse_float(
                str(flags["request-rate"]), by_kind["client"].rel, "--request-rate"
            )
            row.pop(Col.CONC, None)
        elif row.get(Col.REQUEST_RATE) is None:
            row.setdefault(Col.CONC, flags.get("concurrency"))
        row.setdefault(Col.MODEL, flags.get("model"))
    inputs = config.get("input", {}) if isinstance(config.get("input"), Mapping) else {}
    # aiperf writes `conversation: {num_dataset_entries: N}` for every run (--num-prompts): only
    # a multi-turn conversation (turns, a trace or a public dataset) is an agentic workload.
    raw_conv = inputs.get("conversation")
    conv: Mapping[str, Any] = raw_conv if isinstance(raw_conv, Mapping) else {}
    multi_turn = bool(conv.get("turn") or conv.get("num")) or "trace" in str(
        inputs.get("custom_dataset_type") or ""
    )
    agentic = bool(inputs.get("public_dataset") or multi_turn) or "agentx" in str(
        config.get("scenario", "")
    )
    row[Col.SCENARIO] = "agentic-coding" if agentic else "fixed-seq-len"
    prompt = inputs.get("prompt", {}) if isinstance(inputs.get("prompt"), Mapping) else {}
    for col, key in ((Col.ISL, "input_tokens"), (Col.OSL, "output_tokens")):
        mean = prompt.get(key, {}).get("mean") if isinstance(prompt.get(key), Mapping) else None
        if mean is not None and not agentic:
            row[col] = mean
    return row


def _classify(files: list[SourceFile]) -> tuple[dict[str, SourceFile], dict[str, Any]]:
    kinds: dict[str, SourceFile] = {}
    docs: dict[str, Any] = {}
    for src in files:
        doc = _load_json(src) if src.name.endswith(".json") else None
        head = src.data[:256].decode("utf-8", "replace")
        kind = (
            "profile_json"
            if is_profile_json(doc)
            else "failed_json"
            if is_failed_export(doc)
            else "server_json"
            if server_metrics.is_json_dump(doc)
            else "profile_csv"
            if is_profile_csv(src)
            else "server_csv"
            if server_metrics.is_csv_dump(src)
            else "serve"
            if is_serve_command(src.data)
            else "client"
            if re.match(r"\s*\S*aiperf profile\b", head)
            else "log"
            if b"SpecDecoding metrics:" in src.data
            else ""
        )
        if kind and kind not in kinds:
            kinds[kind], docs[kind] = src, doc
    return kinds, docs


def _server_columns(
    kinds: Mapping[str, SourceFile], docs: Mapping[str, Any]
) -> tuple[Row, list[Row], list[str]]:
    enrich: Row = {}
    series: list[Row] = []
    notes: list[str] = []
    if "server_json" in kinds:
        store, series = server_metrics.read_json_dump(docs["server_json"], kinds["server_json"].rel)
        enrich, notes = server_metrics.enrich_row(store, kinds["server_json"].rel)
    elif "server_csv" in kinds:
        store = server_metrics.read_csv_dump(kinds["server_csv"].text(), kinds["server_csv"].rel)
        enrich, notes = server_metrics.enrich_row(store, kinds["server_csv"].rel)
    if "log" in kinds and not _SPEC_COLUMNS & enrich.keys():
        log_row, log_notes = spec_from_log(kinds["log"].text(), kinds["log"].rel)
        enrich.update(log_row)
        notes += log_notes
    return enrich, series, notes


def _warnings(profile: Mapping[str, Any]) -> list[str]:
    errors = profile.get("error_summary")
    out = []
    for e in errors if isinstance(errors, list) else []:
        details = e.get("error_details") if isinstance(e, Mapping) else None
        kind = details.get("type", "?") if isinstance(details, Mapping) else "?"
        if isinstance(e, Mapping):
            out.append(f"aiperf errors: {e.get('count', '?')} x {kind}")
    if profile.get("was_cancelled") is True:
        out.append("aiperf run was cancelled before its planned end")
    return out


def _inside_raw_artifact(files: list[SourceFile]) -> bool:
    # `agentic_<RESULT_FILENAME>` (also as a parent of multinode `conc_<N>/` trees), §7.2.
    parts = {part for f in files for part in PurePosixPath(f.rel).parts[:-1]}
    return any(p.startswith("agentic_") and identity_from_name(p) for p in parts)


def is_failed_export(doc: Any) -> bool:
    """An aiperf export of a run none of whose requests succeeded: the version, the error
    summary and `error_request_count`, but no `request_count` or latency statistics."""
    return (
        isinstance(doc, Mapping)
        and isinstance(doc.get("aiperf_version"), str)
        and isinstance(doc.get("error_summary"), list)
        and not is_profile_json(doc)
    )


def failed_export_error(doc: Mapping[str, Any], rel: str) -> ParseError:
    """Why an export of a run without a successful request gives no point, naming the tool,
    its version, how many requests failed and the error types."""
    counts: dict[str, int] = {}
    for entry in doc.get("error_summary") or ():
        details = entry.get("error_details") if isinstance(entry, Mapping) else None
        kind = details.get("type") if isinstance(details, Mapping) else None
        count = entry.get("count") if isinstance(entry, Mapping) else None
        name = str(kind or (details or {}).get("code") or "unknown error")
        counts[name] = counts.get(name, 0) + (count if isinstance(count, int) else 0)
    errors = doc.get("error_request_count")
    total = errors.get("avg") if isinstance(errors, Mapping) else None
    n = int(total) if isinstance(total, int | float) else sum(counts.values())
    kinds = ", ".join(counts) or "no error recorded"
    return ParseError(
        rel,
        "error_request_count",
        f"aiperf {doc['aiperf_version']} export: all {n} requests failed ({kinds}); "
        "no successful request, so no point",
    )


class AiperfTreeReader:
    """A directory holding an aiperf run aggregate, read with its server dumps and commands."""

    name = "aiperf"

    def sniff_unit(self, files: list[SourceFile]) -> bool:
        for src in files:
            if is_profile_csv(src):
                return True
            data = src.data  # `in data[:4096]` without the copy: find within the first 4096
            if data.find(b'"unit"', 0, 4096) >= 0 and (
                data.find(b'"records"', 0, 4096) >= 0
                or b'"request_count"' in data
                or b'"error_summary"' in data
            ):
                try:
                    doc = _load_json(src)
                except ParseError:
                    return True  # ours, and broken: read_unit reports why
                return is_profile_json(doc) or is_failed_export(doc)
        return False

    def read_unit(self, files: list[SourceFile]) -> ReadResult:
        kinds, docs = _classify(files)
        if "failed_json" in kinds and "profile_json" not in kinds:
            raise failed_export_error(docs["failed_json"], kinds["failed_json"].rel)
        if "profile_json" in kinds:
            source = kinds["profile_json"]
            profile: Mapping[str, Any] = docs["profile_json"]
            stats, variant = stats_from_json(profile, source.rel)
        elif "profile_csv" in kinds:
            source, profile, variant = kinds["profile_csv"], {}, "aiperf_csv"
            stats = stats_from_csv(source.text(), source.rel)
        else:
            raise ParseError(
                files[0].rel,
                "",
                "no aiperf run aggregate (profile_export_aiperf.json/.csv) in the directory",
            )
        enrich, series, notes = _server_columns(kinds, docs)
        flags: dict[str, Any] = {}
        if "serve" in kinds:
            flags = serve_flags(kinds["serve"].text(), kinds["serve"].rel)
            config_row, config_notes = config_columns(flags, kinds["serve"].rel)
            enrich.update(config_row)
            notes += config_notes
        # The first consumed file is the one the pipeline names as the point's source.
        consumed = [source.rel, *sorted(s.rel for s in kinds.values() if s is not source)]
        unit = unit_dir_name(files)
        raw_tree = _inside_raw_artifact(files)
        raw_config = profile.get("input_config")
        config: Mapping[str, Any] = raw_config if isinstance(raw_config, Mapping) else {}
        point = _identity(files, config, kinds, source.rel)
        point.update(metrics_row(stats, source.rel))
        if meta := _metadata(profile, config):
            point[Col.METADATA] = meta
        for key, value in topology_columns(flags, kinds["serve"].rel).items() if flags else ():
            point.setdefault(key, value)
        point.update(enrich)
        point[Col.SCHEMA_VARIANT] = variant
        if warnings := _warnings(profile):
            point[Col.WARNINGS] = warnings
        if point.get(Col.TP) is None and point.get(Col.NUM_GPUS) is None:
            # Kept with its totals; normalize records that per-GPU throughput cannot be computed.
            notes.append(
                f"{unit}: no vllm_command.txt beside the aiperf export and the directory name is "
                "not an InferenceX RESULT_FILENAME, so the GPU count is unknown; add the server "
                "command line or ingest the run's aggregate to get per-GPU throughput"
            )
        if raw_tree:
            # The aggregate may lack the E2E-normalised interactivity: fill it from the same
            # profiled records (enrichment only fills columns the aggregate has no value for).
            enrich.update(e2e_norm_intvty(stats))
            # The bmk_agentic_ aggregate of the same run is the point when it is there (these
            # columns then enrich it); without it, this tree's own point stands.
            return ReadResult(
                points=[point], enrich=enrich, series=series, notes=notes, consumed=consumed
            )
        return ReadResult(points=[point], series=series, notes=notes, consumed=consumed)


def e2e_norm_intvty(stats: Mapping[str, Any]) -> Row:
    """InferenceX's E2E-normalised interactivity from aiperf's per-request
    `e2e_output_token_throughput` (output tokens / E2E latency, tok/s/user).

    InferenceX builds it from per-request `e2el_s / osl` (formats.md §7: the same shape as
    `latency.intvty`): median = 1 / p50(e2el/osl) = p50(osl/e2el), and its p90 is the slow tail,
    1 / p90(e2el/osl) = p10(osl/e2el). aiperf's statistics cover the profiled requests only.
    """
    stat = stats.get("e2e_output_token_throughput")
    if stat is None:
        return {}
    row: Row = {}
    for col, key in ((Col.MEDIAN_E2E_NORM_INTVTY, "p50"), (Col.P90_E2E_NORM_INTVTY, "p10")):
        value = stat.values.get(key)
        if value is not None and value > 0:
            row[col] = float(value)
    return row


UNIT_READERS = (AiperfTreeReader(),)

"""Build plans from what people have: a plan file, an InferenceX search-space YAML, a pruned list.

* a paretolens plan (YAML or JSON) with `name` and `arms` (docs/runner.md);
* an InferenceX master config or snippet (`configs/nvidia-master.yaml`, or what
  `paretolens prune --format yaml` prints): `{config-key: {model, runner, scenarios, ...}}`;
* `paretolens prune --format json` output: `{"arms": [...], "kept": [...], "dropped": [...]}`;
  in process, the same pruned list as typed arms (`plan_from_arms`), with no JSON detour.

The last two say what to run but not how, so the plan's other fields (commands, timeouts, Slurm
or GitHub options) come from `options`, a mapping of plan fields (an options file on the CLI).
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import polars as pl
import yaml
from pydantic import ValidationError

from ingest.contract.col import Col
from ingest.contract.plans import ArmPlan
from ingest.untrusted.yaml_load import load_yaml
from runner.errors import PlanError
from runner.plan import Arm, Plan, parse_plan, plan_error, point_id

SourceKind = Literal["plan", "inferencex", "prune"]

# Our arm field -> the InferenceX key it came from (so errors name the field the user wrote).
_IX_FIELDS = {
    "concs": "conc-list",
    "dp_attn": "dp-attn",
    "spec_decoding": "spec-decoding",
    "kv_offloading": "kv-offloading",
    "kv_offload_backend": "kv-offload-backend",
    "dcp_size": "dcp-size",
    "pcp_size": "pcp-size",
    "num_worker": "num-worker",
    "additional_settings": "additional-settings",
    "dram_utilization": "dram-utilization",
    "model_prefix": "model-prefix",
    "hw": "runner",
}


def sniff(doc: Any) -> SourceKind:
    """Which kind of plan source a parsed document is.

    Raises:
        PlanError: when it is none of them.
    """
    if isinstance(doc, Mapping):
        if "kept" in doc and isinstance(doc.get("arms"), list):
            return "prune"
        if "arms" in doc or "name" in doc:
            return "plan"
        if doc and all(isinstance(v, Mapping) and "scenarios" in v for v in doc.values()):
            return "inferencex"
    raise PlanError(
        "",
        "not a plan (name, arms), an InferenceX search-space YAML ({config-key: {scenarios: ...}}) "
        "or `paretolens prune --format json` output (arms, kept, dropped)",
    )


def read_document(path: Path) -> Any:
    """Parse a YAML or JSON file.

    Raises:
        PlanError: when it cannot be read or parsed.
    """
    try:
        text = path.read_text()
    except OSError as exc:
        raise PlanError("", f"cannot read: {exc.strerror or exc}", source=str(path)) from exc
    try:
        return json.loads(text) if path.suffix == ".json" else load_yaml(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise PlanError(
            "", f"not valid {'JSON' if path.suffix == '.json' else 'YAML'}: {exc}", source=str(path)
        ) from exc


def load_plan(
    path: Path,
    *,
    options: Mapping[str, Any] | None = None,
    config_keys: Sequence[str] = (),
    name: str | None = None,
) -> Plan:
    """Load a plan from a plan file, an InferenceX search-space YAML or a prune JSON.

    Args:
        path: the file.
        options: plan fields to add (commands, timeout_s, slurm, github, ...); for a plan file
            they are defaults that the file overrides.
        config_keys: for an InferenceX file, the keys to take (glob patterns; default all).
        name: the plan name (default: from the file).

    Raises:
        PlanError: naming the file and the field that is wrong.
    """
    doc = read_document(path)
    kind = sniff(doc)
    source = str(path)
    if kind == "plan":
        merged = {**(options or {}), **doc}
        if name:
            merged["name"] = name
        return parse_plan(merged, source=source)
    base = {"name": name or _slug(path.stem), **(options or {})}
    if kind == "prune":
        return plan_from_pruned(doc, base=base, source=source)
    return plan_from_inferencex(doc, base=base, config_keys=config_keys, source=source)


def plan_from_inferencex(
    doc: Mapping[str, Any],
    *,
    base: Mapping[str, Any],
    config_keys: Sequence[str] = (),
    source: str = "",
) -> Plan:
    """A plan from an InferenceX master config (or snippet): one arm per search-space entry.

    Concurrency ranges expand as InferenceX expands them (doubling from conc-start, the last value
    clamped to conc-end); a conc-list is taken verbatim.

    Raises:
        PlanError: naming the config key, scenario, entry and InferenceX field that is wrong.
    """
    arms: list[Arm] = []
    seen: dict[str, str] = {}
    duplicates: list[str] = []
    matched = [
        k for k in doc if not config_keys or any(fnmatch.fnmatchcase(k, pat) for pat in config_keys)
    ]
    if not matched:
        raise PlanError("", f"no config key matches {', '.join(config_keys)}", source=source)
    for key in matched:
        cfg = doc[key]
        if not isinstance(cfg, Mapping) or not isinstance(cfg.get("scenarios"), Mapping):
            raise PlanError(
                f"{key}.scenarios", "expected a mapping of scenario type -> list", source=source
            )
        top = {
            "config_key": key,
            "model": cfg.get("model"),
            "model_prefix": cfg.get("model-prefix"),
            "framework": cfg.get("framework"),
            "precision": cfg.get("precision"),
            "image": cfg.get("image"),
            "hw": cfg.get("runner"),
            "disagg": bool(cfg.get("disagg", False)),
        }
        for scen, items in cfg["scenarios"].items():
            if scen not in ("fixed-seq-len", "agentic-coding"):
                raise PlanError(
                    f"{key}.scenarios.{scen}",
                    "unknown scenario type; expected fixed-seq-len or agentic-coding",
                    source=source,
                )
            for ii, item in enumerate(items or []):
                for ei, entry in enumerate(item.get("search-space") or []):
                    where = f"{key}.scenarios.{scen}.{ii}.search-space.{ei}"
                    arm = _ix_arm(top, scen, item, entry, where, source)
                    # Real configs repeat a point in two entries (overlapping conc lists of one
                    # arm); InferenceX would run it twice, the plan runs it once and says so.
                    concs = []
                    for conc in arm.concs:
                        pid = point_id(arm, conc)
                        if pid in seen:
                            duplicates.append(f"{where} conc {conc} repeats {seen[pid]}")
                        else:
                            seen[pid] = where
                            concs.append(conc)
                    if concs:
                        arms.append(arm.model_copy(update={"concs": concs}))
    if not arms:
        raise PlanError("", "the selected config keys have no search-space entries", source=source)
    provenance = {"kind": "inferencex", "path": source}
    if duplicates:
        provenance["duplicates_dropped"] = "; ".join(duplicates)
    arm_docs = [a.model_dump() for a in arms]
    return parse_plan({**base, "arms": arm_docs, "source": provenance}, source=source)


def _ix_concs(entry: Mapping[str, Any], where: str, source: str) -> list[int]:
    if "conc-list" in entry:
        if "conc-start" in entry or "conc-end" in entry:
            raise PlanError(
                f"{where}.conc-list",
                "give conc-list or conc-start/conc-end, not both",
                source=source,
            )
        return list(entry["conc-list"])
    start, end = entry.get("conc-start"), entry.get("conc-end")
    if not isinstance(start, int) or not isinstance(end, int) or not 0 < start <= end:
        raise PlanError(
            f"{where}.conc-start",
            "need conc-list, or integers 0 < conc-start <= conc-end",
            source=source,
        )
    out, conc = [], start
    while True:
        out.append(conc)
        if conc == end:
            return out
        conc = min(conc * 2, end)


def _ix_worker(block: Mapping[str, Any]) -> dict[str, Any]:
    keys = {
        "num-worker",
        "tp",
        "ep",
        "pp",
        "dcp-size",
        "pcp-size",
        "dp-attn",
        "additional-settings",
    }
    return {k.replace("-", "_"): v for k, v in block.items() if k in keys and v is not None}


def _ix_arm(
    top: Mapping[str, Any],
    scen: str,
    item: Mapping[str, Any],
    entry: Mapping[str, Any],
    where: str,
    source: str,
) -> Arm:
    arm: dict[str, Any] = {**top, "scenario": scen, "concs": _ix_concs(entry, where, source)}
    if scen == "fixed-seq-len":
        arm["isl"], arm["osl"] = item.get("isl"), item.get("osl")
    elif item.get("dram-utilization") is not None:
        arm["dram_utilization"] = item["dram-utilization"]
    for key in (
        "tp",
        "pp",
        "ep",
        "dcp-size",
        "pcp-size",
        "dp-attn",
        "spec-decoding",
        "kv-offloading",
    ):
        if entry.get(key) is not None:
            arm[key.replace("-", "_")] = entry[key]
    backend = entry.get("kv-offload-backend")
    if isinstance(backend, Mapping):
        arm["kv_offload_backend"] = backend.get("name")
    elif backend is not None:
        arm["kv_offload_backend"] = backend
    for role in ("prefill", "decode"):
        if isinstance(entry.get(role), Mapping):
            arm[role] = _ix_worker(entry[role])
    try:
        return Arm.model_validate(arm)
    except ValidationError as exc:
        err = plan_error(exc)
        field = ".".join(_IX_FIELDS.get(part, part) for part in err.field.split("."))
        raise PlanError(f"{where}.{field}", err.reason, source=source) from exc


def plan_from_pruned(doc: Mapping[str, Any], *, base: Mapping[str, Any], source: str = "") -> Plan:
    """A plan from `paretolens prune --format json` output (a file): its arms are read back as
    `ArmPlan`s and planned by `plan_from_arms`.

    Raises:
        PlanError: naming the arm of the prune output that is wrong.
    """
    arms = [_doc_arm(a) for a in doc.get("arms") or []]
    return _plan_arms(arms, list(doc.get("kept") or []), base=base, source=source)


def plan_from_arms(
    arms: Sequence[ArmPlan], kept: pl.DataFrame, *, base: Mapping[str, Any], source: str = ""
) -> Plan:
    """A plan from a pruned list in process (`PrunedList.arms` and `.kept`, or the same of
    `selection_list`): one arm per kept arm, its conc_list.

    The configuration (model, image, hardware, topology, spec decoding, KV offload) comes from the
    kept verdict rows of the arm; the arm's `identity` (what prune grouped by) wins where both say.

    Raises:
        PlanError: naming the arm that is wrong (`arms.<i>`).
    """
    return _plan_arms(arms, kept.to_dicts(), base=base, source=source)


def _doc_arm(a: Mapping[str, Any]) -> ArmPlan:
    def value(name: str) -> Any:
        # The file's values as they are: `_plan_arms` and `parse_plan` say what is wrong.
        return a.get(name)

    return ArmPlan(
        config_key=value("config_key"),
        scenario=value("scenario"),
        isl=value("isl"),
        osl=value("osl"),
        arm_id=value("arm_id"),
        arm_label=value("arm_label"),
        identity=tuple(dict(value("identity") or {}).items()),
        conc_list=tuple(value("conc_list") or ()),
        rate_list=tuple(value("request_rates") or ()),
    )


def _plan_arms(
    arms: Sequence[ArmPlan],
    kept: Sequence[Mapping[str, Any]],
    *,
    base: Mapping[str, Any],
    source: str,
) -> Plan:
    rows_by_arm: dict[str, Mapping[str, Any]] = {}
    for kept_row in kept:
        rows_by_arm.setdefault(str(kept_row.get(Col.ARM_ID)), kept_row)
    runs = sorted({str(r.get(Col.RUN_ID)) for r in kept if r.get(Col.RUN_ID)})
    docs: list[dict[str, Any]] = []
    for i, a in enumerate(arms):
        row = rows_by_arm.get(str(a.arm_id))
        if row is None:
            raise PlanError(
                f"arms.{i}.arm_id", f"no kept row of arm {a.arm_id!r} in `kept`", source=source
            )
        docs.append(_arm_doc(a, row))
    if not docs:
        raise PlanError("arms", "the pruned list keeps no arm: nothing to run", source=source)
    provenance = {"kind": "prune", "path": source, "run_id": ",".join(runs)}
    name = base.get("name") or _slug(f"pruned-{'-'.join(runs) or 'list'}")
    return parse_plan({**base, "name": name, "arms": docs, "source": provenance}, source=source)


def _arm_doc(a: ArmPlan, row: Mapping[str, Any]) -> dict[str, Any]:
    """The plan arm of a kept arm and its first kept row (None values left out)."""
    ident: dict[str, Any] = dict(a.identity)

    def pick(name: str) -> Any:
        return ident.get(name, row.get(name))

    arm: dict[str, Any] = {
        "config_key": a.config_key,
        "scenario": a.scenario or row.get(Col.SCENARIO),
        "model": row.get(Col.MODEL),
        "model_prefix": row.get(Col.MODEL_PREFIX),
        "framework": row.get(Col.FRAMEWORK),
        "precision": row.get(Col.PRECISION),
        "image": row.get(Col.IMAGE),
        "hw": row.get(Col.HW_LABEL) or row.get(Col.HW),
        "isl": a.isl,
        "osl": a.osl,
        "disagg": bool(row.get(Col.DISAGG)),
        "spec_decoding": ident.get(Col.SPEC_DECODING) or row.get(Col.SPEC_DECODING) or "none",
        "concs": list(a.conc_list or []),
        "label": a.arm_label,
    }
    if row.get(Col.IS_MULTINODE):
        for role in ("prefill", "decode"):
            arm[role] = {
                "num_worker": pick(f"{role}_num_workers"),
                "tp": pick(f"{role}_tp") or 1,
                "ep": pick(f"{role}_ep") or 1,
                "dp_attn": bool(pick(f"{role}_dp_attention")),
            }
    else:
        for ours, theirs in (
            ("tp", Col.TP),
            ("pp", Col.PP),
            ("ep", Col.EP),
            ("dcp_size", Col.DCP_SIZE),
            ("pcp_size", Col.PCP_SIZE),
        ):
            value = pick(theirs)
            if value is not None:
                arm[ours] = value
        arm["dp_attn"] = bool(pick(Col.DP_ATTENTION))
    kv = pick(Col.KV_OFFLOADING) or "none"
    arm["kv_offloading"] = kv
    if kv != "none":
        arm["kv_offload_backend"] = pick(Col.KV_OFFLOAD_BACKEND)
    return {k: v for k, v in arm.items() if v is not None}


def select_points(plan: Plan, point_ids: Sequence[str]) -> Plan:
    """The plan narrowed to some of its points (arms left with none are dropped).

    Raises:
        PlanError: when an id is not a point of the plan.
    """
    wanted = set(point_ids)
    points = plan.points()
    unknown = sorted(wanted - {p.id for p in points})
    if unknown:
        raise PlanError("points", f"not points of plan {plan.name}: {', '.join(unknown)}")
    arms = []
    for i, arm in enumerate(plan.arms):
        concs = [p.conc for p in points if p.arm_index == i and p.id in wanted]
        if concs:
            arms.append(arm.model_copy(update={"concs": concs}))
    return parse_plan(
        {**plan.model_dump(exclude={"arms", "defaults"}), "arms": [a.model_dump() for a in arms]}
    )


def _slug(text: str) -> str:
    out = "".join(c if c.isalnum() or c in "._-" else "-" for c in text).strip("-._")
    return (out or "plan")[:100]

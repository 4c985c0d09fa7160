"""Export pruned point lists as an InferenceX search-space snippet and an e2e dispatch line.

`search_space` writes one flow entry per kept arm with a sorted `conc-list` (never a conc range),
`kv-offloading`/`kv-offload-backend` on agentic entries and `dram-utilization` on the scenario when
an arm offloads (formats.md 5.4). A master config, when given, supplies the key, the entry template
(router, additional-settings, backend version) and the scenario's dram-utilization. The snippet is
validated by `analysis.sweep.sweep_config`; arms that cannot be valid entries are listed, not guessed.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

import yaml

from analysis.sweep.pruned import PrunedList
from analysis.sweep.recipes import Row, entry_identity
from analysis.sweep.sweep_config import SweepConfig, validate_sweep_config
from ingest.contract.col import Col
from ingest.contract.plans import ArmPlan
from ingest.untrusted.controls import escape_controls


def _entry(arm: ArmPlan, row: Row, template: dict[str, Any] | None) -> dict[str, Any]:
    ident = dict(arm.identity)
    if template is not None:
        entry = {k: v for k, v in template.items() if not k.startswith("conc-")}
    elif row.get(Col.IS_MULTINODE):
        entry = {
            role: {
                "num-worker": ident[f"{role}_num_workers"],
                "tp": ident[f"{role}_tp"],
                "ep": ident[f"{role}_ep"],
                "dp-attn": ident[f"{role}_dp_attention"],
            }
            for role in ("prefill", "decode")
        }
    else:
        entry = {"tp": ident["tp"]}
        for col, key, default in (
            ("ep", "ep", 1),
            ("dp_attention", "dp-attn", False),
            ("pp", "pp", 1),
            ("dcp_size", "dcp-size", 1),
            ("pcp_size", "pcp-size", 1),
        ):
            if ident[col] != default:
                entry[key] = ident[col]
    if template is None and ident["spec_decoding"] != "none":
        entry["spec-decoding"] = ident["spec_decoding"]
    if template is None and arm.scenario == "agentic-coding":
        entry["kv-offloading"] = ident["kv_offloading"]
        if ident["kv_offloading"] != "none":
            backend = {"name": ident["kv_offload_backend"]}
            if row.get(Col.KV_OFFLOAD_BACKEND_VERSION):
                backend["version"] = row[Col.KV_OFFLOAD_BACKEND_VERSION]
            entry["kv-offload-backend"] = backend
    entry["conc-list"] = list(arm.conc_list)
    return entry


def _template(master: SweepConfig | None, arm: ArmPlan) -> tuple[dict[str, Any] | None, Any]:
    """The master's entry for this arm (and its scenario item), if the master has one."""
    m = master.root.get(arm.config_key) if master is not None else None
    if m is None:
        return None, None
    items = (
        m.scenarios.agentic_coding
        if arm.scenario == "agentic-coding"
        else m.scenarios.fixed_seq_len
    ) or []
    for item in items:
        if getattr(item, "isl", None) != arm.isl or getattr(item, "osl", None) != arm.osl:
            continue
        for e in item.search_space:
            if entry_identity(e) == arm.identity:
                return e.model_dump(by_alias=True, exclude_none=True, exclude_defaults=True), item
    return None, items[0] if items else None


@dataclass(frozen=True, eq=False)
class SearchSpace:
    """A master-config snippet of the kept arms; `skipped` names the kept arms that cannot be
    written as valid InferenceX entries, with why (as `(arm label, reason)`)."""

    doc: dict[str, Any]
    skipped: tuple[tuple[str, str], ...]
    slo: str = ""

    def yaml(self) -> str:
        """The snippet as YAML in the style of the master configs (skipped arms and the SLO the
        kept points meet as comments)."""
        notes = [f"kept points meet the SLO {self.slo}"] if self.slo else []
        notes += [f"not exported: {label}: {why}" for label, why in self.skipped]
        body = (
            yaml.dump(self.doc, Dumper=_FlowDumper, sort_keys=False, width=200) if self.doc else ""
        )
        return "".join(map(comment, notes)) + body


def _top(arm: ArmPlan, row: Row, m: Any) -> dict[str, Any]:
    runner = m.runner if m else str(row.get(Col.HW_LABEL) or row.get(Col.HW) or "")
    if arm.scenario == "agentic-coding" and runner and not runner.startswith("cluster:"):
        runner = f"cluster:{runner}"  # agentic runners are cluster labels
    top = {
        "image": row.get(Col.IMAGE) or (m.image if m else None),
        "model": row.get(Col.MODEL) or (m.model if m else None),
        "model-prefix": row.get(Col.MODEL_PREFIX),
        "runner": runner or None,
        "precision": row.get(Col.PRECISION),
        "framework": row.get(Col.FRAMEWORK),
        "multinode": bool(row.get(Col.IS_MULTINODE)),
    }
    if row.get(Col.IS_MULTINODE):
        top["disagg"] = bool(row.get(Col.DISAGG))
        if m is not None and m.kv_p2p_transfer:
            top["kv-p2p-transfer"] = m.kv_p2p_transfer
    return top


def _problem(arm: ArmPlan, top: dict[str, Any], template: Any, existing: Any) -> str | None:
    missing = [k for k, v in top.items() if v is None]
    if missing:
        column = {"runner": "hw_label", "model-prefix": "model_prefix"}
        sets = " ".join(f"--set {column.get(k, k)}=..." for k in missing)
        return (
            f"no {', '.join(missing)} recorded: pass the master config that holds this recipe "
            f"(--master), or ingest with {sets}"
        )
    ident = dict(arm.identity)
    if not arm.conc_list:
        rates = ", ".join(f"{r:g}" for r in arm.rate_list)
        return (
            f"a request-rate sweep (request rates {rates} req/s): InferenceX search spaces "
            "run concurrencies only (conc-list)"
        )
    if ident.get("spec_decoding") not in (None, "none", "mtp", "draft_model"):
        return (
            f"spec-decoding {ident.get('spec_decoding')!r} (recognised from the measurements, "
            "method unknown): InferenceX takes none, mtp or draft_model; ingest with "
            "--set spec_decoding=mtp (or draft_model) to say which"
        )
    if arm.scenario != "agentic-coding" and arm.isl is None:
        return "fixed-seq-len arm without isl/osl"
    offload = ident.get("kv_offloading", "none") != "none"
    if offload and not ident.get("kv_offload_backend") and template is None:
        return (
            "kv-offloading dram but no kv_offload_backend recorded (InferenceX requires one): "
            "ingest with --set kv_offload_backend=<lmcache|mooncake|native|...>"
        )
    if existing is not None and {k: v for k, v in existing.items() if k != "scenarios"} != top:
        diff = [k for k, v in top.items() if existing.get(k) != v]
        return f"{', '.join(diff)} differ from the other arms of key {arm.config_key}"
    return None


def search_space(pruned: PrunedList, dram_utilization: float = 0.80) -> SearchSpace:
    """The kept arms as a validated master-config snippet.

    Args:
        pruned: from `prune_list`.
        dram_utilization: put on an agentic scenario when an arm offloads to DRAM and the master
            config does not say (InferenceX configs use 0.80).

    Returns:
        A SearchSpace: the snippet (validated by `analysis.sweep.sweep_config`) and the skipped arms.
    """
    rows = {r[Col.ARM_ID]: r for r in pruned.kept.iter_rows(named=True)}
    doc: dict[str, Any] = {}
    skipped: list[tuple[str, str]] = []
    for arm in pruned.arms:
        row = rows[arm.arm_id]
        template, item = _template(pruned.master, arm)
        m = pruned.master.root.get(arm.config_key) if pruned.master else None
        top = _top(arm, row, m)
        why = _problem(arm, top, template, doc.get(arm.config_key))
        if why is not None:
            skipped.append((f"{arm.arm_label} ({arm.config_key})", why))
            continue
        scenarios = doc.setdefault(arm.config_key, {**top, "scenarios": {}})["scenarios"]
        entry = _entry(arm, row, template)
        if arm.scenario == "agentic-coding":
            scen = scenarios.setdefault("agentic-coding", [{"search-space": []}])[0]
            if entry.get("kv-offloading", "none") != "none" and "dram-utilization" not in scen:
                util = getattr(item, "dram_utilization", None)
                scen["dram-utilization"] = util if util is not None else dram_utilization
        else:
            items = scenarios.setdefault("fixed-seq-len", [])
            scen = next((i for i in items if (i["isl"], i["osl"]) == (arm.isl, arm.osl)), None)
            if scen is None:
                scen = {"isl": arm.isl, "osl": arm.osl, "search-space": []}
                items.append(scen)
        scen["search-space"].append(entry)
    for top in doc.values():  # dram-utilization first, as InferenceX writes it
        for i, item in enumerate(top["scenarios"].get("agentic-coding", [])):
            top["scenarios"]["agentic-coding"][i] = dict(sorted(item.items()))
    validate_sweep_config(doc)
    return SearchSpace(doc, tuple(skipped), pruned.slo)


class _FlowDumper(yaml.SafeDumper):
    pass


def _represent_dict(dumper: yaml.SafeDumper, data: dict[str, Any]) -> yaml.Node:
    flow = "conc-list" in data  # one flow mapping per search-space entry, like the real configs
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=flow)


_FlowDumper.add_representer(dict, _represent_dict)


def comment(text: str) -> str:
    """`text` as one YAML (and shell) comment line: its control characters written as escapes,
    so a newline in a label from a result file can never end the comment and start an entry."""
    return f"# {escape_controls(text)}\n"


def search_space_yaml(pruned: PrunedList, dram_utilization: float = 0.80) -> str:
    """`search_space(...).yaml()`: the snippet text, skipped arms as leading comments."""
    return search_space(pruned, dram_utilization).yaml()


def _master_entries(pruned: PrunedList, key: str) -> list[tuple[str, Any, Any, Any]]:
    """(scenario, isl, osl, identity) of every search-space entry of a master config key."""
    m = pruned.master.root.get(key) if pruned.master is not None else None
    if m is None:
        return []
    out: list[tuple[str, Any, Any, Any]] = []
    for scen, items in (
        ("fixed-seq-len", m.scenarios.fixed_seq_len or []),
        ("agentic-coding", m.scenarios.agentic_coding or []),
    ):
        for item in items:
            isl, osl = getattr(item, "isl", None), getattr(item, "osl", None)
            out.extend((scen, isl, osl, entry_identity(e)) for e in item.search_space)
    return out


def dispatch_problem(pruned: PrunedList, dram_utilization: float = 0.80) -> str | None:
    """Why no single `test-config ... --conc ...` line runs exactly the kept points (None when
    one does). A config key's `--conc` applies to every search-space entry of the key, so the line
    is exact only when every kept arm is exportable, all keep the same concurrencies, and the
    master config's keys hold no entry that was not kept."""
    if not pruned.arms:
        return "no points were kept, so there is nothing to dispatch"
    skipped = search_space(pruned, dram_utilization).skipped
    if skipped:
        by_reason: dict[str, list[str]] = {}
        for label, why in skipped:
            by_reason.setdefault(why, []).append(label)
        said = "; ".join(
            f"{labels[0]}{f' and {len(labels) - 1} more' if len(labels) > 1 else ''}: {why}"
            for why, labels in by_reason.items()
        )
        return (
            f"{len(skipped)} kept arm{'s' if len(skipped) != 1 else ''} cannot be written as "
            f"InferenceX entries ({said})"
        )
    lists = {a.conc_list for a in pruned.arms}
    if len(lists) > 1:
        union = sorted({c for a in pruned.arms for c in a.conc_list})
        kept = sum(len(a.conc_list) for a in pruned.arms)
        each = "; ".join(f"{a.arm_label}: {' '.join(map(str, a.conc_list))}" for a in pruned.arms)
        return (
            f"the kept arms keep different concurrencies ({each}); --conc applies to every "
            f"entry of a config key, so one line would run {len(pruned.arms) * len(union)} points "
            f"instead of the {kept} kept: dispatch the search-space YAML instead"
        )
    if pruned.master is None:
        keys = ", ".join(sorted({a.config_key for a in pruned.arms}))
        return (
            f"without the master config paretolens cannot tell whether config key {keys} holds "
            "search-space entries that were not kept (test-config would run them too): pass "
            "--master configs/<vendor>-master.yaml, or dispatch the search-space YAML"
        )
    missing = sorted({a.config_key for a in pruned.arms} - set(pruned.master.root))
    if missing:
        return (
            f"the master config has no config key{'s' if len(missing) != 1 else ''} "
            f"{', '.join(missing)}, so test-config --config-keys would fail: choose the master "
            f"config that defines {'them' if len(missing) != 1 else 'it'}, or dispatch the "
            "search-space YAML"
        )
    for arm in pruned.arms:
        if (arm.scenario, arm.isl, arm.osl, arm.identity) not in _master_entries(
            pruned, arm.config_key
        ):
            seq = f" at {arm.isl}/{arm.osl}" if arm.isl is not None else ""
            return (
                f"config key {arm.config_key} holds no search-space entry for "
                f"{arm.arm_label}{seq}, so test-config would not run its kept points: choose "
                "the master config that defines it, or dispatch the search-space YAML"
            )
    kept_ids = {(a.config_key, a.scenario, a.isl, a.osl, a.identity) for a in pruned.arms}
    for key in sorted({a.config_key for a in pruned.arms}):
        extra = [e for e in _master_entries(pruned, key) if (key, *e) not in kept_ids]
        if extra:
            return (
                f"config key {key} also holds {len(extra)} search-space "
                f"entr{'ies' if len(extra) != 1 else 'y'} that were not kept; test-config would "
                "run them too: dispatch the search-space YAML instead"
            )
    return None


def dispatch_command(
    pruned: PrunedList,
    config_files: tuple[str, ...] | None = None,
    runner_config: str = "configs/runners.yaml",
) -> str:
    """The `test-config` command for an e2e-tests.yml dispatch of exactly the kept points, or,
    when no single line does that, a `#` comment saying why (`dispatch_problem`).

    Raises:
        ValueError: when nothing was kept (there is nothing to dispatch).
    """
    if not pruned.arms:
        raise ValueError("no points were kept, so there is nothing to dispatch")
    problem = dispatch_problem(pruned)
    if problem is not None:
        return comment(f"no single test-config line runs exactly the kept points: {problem}")[:-1]
    keys = sorted({a.config_key for a in pruned.arms})
    concs = sorted({c for a in pruned.arms for c in a.conc_list})
    if config_files is None:
        hws = (
            set(pruned.kept.get_column(Col.HW).drop_nulls().to_list())
            if pruned.kept.height
            else set()
        )
        amd = any(str(h).startswith("mi") for h in hws)
        config_files = ("configs/amd-master.yaml",) if amd else ("configs/nvidia-master.yaml",)
    # Built as a list of arguments and quoted by shlex: a key from a result file is one word.
    return shlex.join(
        [
            "test-config",
            "--config-keys",
            *keys,
            "--conc",
            *map(str, concs),
            "--config-files",
            *config_files,
            "--runner-config",
            runner_config,
        ]
    )


__all__ = [
    "SearchSpace",
    "comment",
    "dispatch_command",
    "dispatch_problem",
    "search_space",
    "search_space_yaml",
]

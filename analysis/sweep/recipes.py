"""How canonical arms map to InferenceX master-config entries, and back.

`row_identity` (a canonical row) and `entry_identity` (a validated search-space entry) produce the
same comparable identity, so a master entry can serve as the template of a measured arm and an
exported snippet can be expanded (`expand`) and compared point for point with what was kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from analysis.sweep.sweep_config import (
    AgenticMultiNodeEntry,
    AgenticSingleNodeEntry,
    Entry,
    MultiNodeEntry,
    SingleNodeEntry,
    SweepConfig,
)
from ingest.contract.col import Col
from ingest.contract.plans import Identity

Row = Mapping[str, Any]


def conc_values(entry: Entry) -> list[int]:
    """The concurrencies an entry schedules: conc-list verbatim, ranges doubled and clamped."""
    if entry.conc_list:
        return list(entry.conc_list)
    assert entry.conc_start is not None and entry.conc_end is not None
    out, c = [], entry.conc_start
    while c < entry.conc_end:
        out.append(c)
        c *= 2
    out.append(entry.conc_end)
    return out


def entry_identity(entry: Entry) -> Identity:
    """The arm identity an entry describes (defaults filled), comparable with `row_identity`."""
    ident: dict[str, object] = {"spec_decoding": entry.spec_decoding}
    if isinstance(entry, SingleNodeEntry):
        ident.update(
            tp=entry.tp,
            ep=entry.ep,
            dp_attention=entry.dp_attn,
            pp=entry.pp,
            dcp_size=entry.dcp_size,
            pcp_size=entry.pcp_size,
        )
    if isinstance(entry, MultiNodeEntry):
        for role, w in (("prefill", entry.prefill), ("decode", entry.decode)):
            ident.update(
                {
                    f"{role}_tp": w.tp,
                    f"{role}_ep": w.ep,
                    f"{role}_dp_attention": w.dp_attn,
                    f"{role}_num_workers": w.num_worker,
                }
            )
    if isinstance(entry, AgenticSingleNodeEntry | AgenticMultiNodeEntry):
        backend = entry.kv_offload_backend
        ident.update(
            kv_offloading=entry.kv_offloading, kv_offload_backend=backend.name if backend else None
        )
    return tuple(sorted(ident.items()))


def expand(config: SweepConfig) -> list[tuple[str, str, int | None, int | None, Identity, int]]:
    """Every scheduled point: (config key, scenario, isl, osl, arm identity, conc), sorted."""
    out: list[tuple[str, str, int | None, int | None, Identity, int]] = []
    for key, master in config.root.items():
        for f in master.scenarios.fixed_seq_len or []:
            for e in f.search_space:
                out.extend(
                    (key, "fixed-seq-len", f.isl, f.osl, entry_identity(e), c)
                    for c in conc_values(e)
                )
        for a in master.scenarios.agentic_coding or []:
            for e in a.search_space:
                out.extend(
                    (key, "agentic-coding", None, None, entry_identity(e), c)
                    for c in conc_values(e)
                )
    return sorted(out, key=repr)


def is_agentic(row: Row) -> bool:
    return row.get(Col.SCENARIO) == "agentic-coding"


def row_identity(row: Row) -> Identity:
    """The arm identity of a verdict row, in the form `sweep_config.entry_identity` uses."""
    ident: dict[str, object] = {"spec_decoding": row.get(Col.SPEC_DECODING) or "none"}
    if row.get(Col.IS_MULTINODE):
        for role in ("prefill", "decode"):
            ident.update(
                {
                    f"{role}_tp": row.get(f"{role}_tp"),
                    f"{role}_ep": row.get(f"{role}_ep"),
                    f"{role}_dp_attention": bool(row.get(f"{role}_dp_attention")),
                    f"{role}_num_workers": row.get(f"{role}_num_workers"),
                }
            )
    else:
        ident.update(
            tp=row.get(Col.TP),
            ep=row.get(Col.EP) or 1,
            pp=row.get(Col.PP) or 1,
            dp_attention=bool(row.get(Col.DP_ATTENTION)),
            dcp_size=row.get(Col.DCP_SIZE) or 1,
            pcp_size=row.get(Col.PCP_SIZE) or 1,
        )
    if is_agentic(row):
        kv = row.get(Col.KV_OFFLOADING) or "none"
        ident.update(
            kv_offloading=kv,
            kv_offload_backend=row.get(Col.KV_OFFLOAD_BACKEND) if kv != "none" else None,
        )
    return tuple(sorted(ident.items()))


def _hw(label: str) -> str:
    return label.rsplit(":", 1)[-1].split("-", 1)[0].lower()


def config_key(row: Row, master: SweepConfig | None) -> str:
    """The master key of the row's recipe, or a new key named by the InferenceX convention."""
    spec = (row.get(Col.SPEC_DECODING) or "none") != "none"
    if master is not None:
        found = []
        for key, m in master.root.items():
            items = m.scenarios.agentic_coding if is_agentic(row) else m.scenarios.fixed_seq_len
            if (m.model_prefix, m.precision, m.framework, _hw(m.runner), m.multinode) == (
                row.get(Col.MODEL_PREFIX),
                row.get(Col.PRECISION),
                row.get(Col.FRAMEWORK),
                row.get(Col.HW),
                bool(row.get(Col.IS_MULTINODE)),
            ) and items:
                found.append((("mtp" in key) != spec, m.image != row.get(Col.IMAGE), key))
        if found:
            return min(found)[2]
    parts = [
        row.get(Col.MODEL_PREFIX),
        row.get(Col.PRECISION),
        row.get(Col.HW),
        row.get(Col.FRAMEWORK),
    ]
    key = "-".join(str(p) for p in parts if p)
    key += "-agentic" if is_agentic(row) else ""
    key += "-disagg" if row.get(Col.DISAGG) else ""
    return key + ("-mtp" if spec else "")

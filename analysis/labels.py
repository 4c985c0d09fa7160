"""InferenceX's short parallelism labels (TP8, TEP8, DEP8, EP8, DPAEP8, 2xEP4+1xDPAEP32).

The rules follow the InferenceX app's `parallelism-label.ts` (SemiAnalysisAI/InferenceX-app,
packages/app/src/components/inference/utils/, commit c0a95829): users read these labels on
inference.semianalysis.com, so a point of the same configuration reads the same here.

- tp == ep > 1: `TEP{n}`, or `DEP{n}` with DP-attention;
- ep > 1 otherwise: `EP{ep}`, or `DPAEP{ep}`;
- no EP: `TP{tp}`, or `DPATP{tp}`;
- PP > 1 appends `PP{pp}`; DCP/PCP > 1 append `/DCP{n}`, `/PCP{n}`;
- multinode disaggregated: `{prefill workers}x{prefill}+{decode workers}x{decode}`, a role with
  no workers and no TP left out (prefill-only agentic runs).

Where InferenceX shows the bare GPU count for rows without EP data, paretolens has EP (default
1) on every point, so it always gives the structured label; an unknown TP reads `TP?`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from analysis.frontier.codes import columns, dense_codes, gather, rows_of
from ingest.contract.col import Col


def _size(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def segment_label(
    tp: int | None,
    ep: int | None,
    dp_attention: bool | None,
    pp: int | None = None,
    dcp: int | None = None,
    pcp: int | None = None,
) -> str:
    """One role's label, e.g. `TEP8`, `DPAEP32`, `TP8PP2/DCP8`."""
    suffix = ""
    if pp is not None and pp > 1:
        suffix += f"PP{pp}"
    if dcp is not None and dcp > 1:
        suffix += f"/DCP{dcp}"
    if pcp is not None and pcp > 1:
        suffix += f"/PCP{pcp}"
    shown_tp = "?" if tp is None else str(tp)
    if ep is not None and ep > 1 and tp == ep:
        return f"{'DEP' if dp_attention else 'TEP'}{shown_tp}{suffix}"
    dpa = "DPA" if dp_attention else ""
    if ep is None or ep <= 1:
        return f"{dpa}TP{shown_tp}{suffix}"
    return f"{dpa}EP{ep}{suffix}"


def parallelism_label(row: Mapping[str, Any]) -> str:
    """The InferenceX label of a point's topology (a canonical row or mapping)."""
    tp, ep, pp = _size(row.get(Col.TP)), _size(row.get(Col.EP)), _size(row.get(Col.PP))
    dcp, pcp = _size(row.get(Col.DCP_SIZE)), _size(row.get(Col.PCP_SIZE))
    dpa = bool(row.get(Col.DP_ATTENTION))
    if row.get(Col.IS_MULTINODE) and row.get(Col.DISAGG):
        if row.get(Col.PREFILL_TP) is None and row.get(Col.DECODE_TP) is None and tp is None:
            # Only the GPU split is known (`..._gpus_16_ctx_8_gen_8` file names).
            pre_g, dec_g = _size(row.get(Col.PREFILL_GPUS)), _size(row.get(Col.DECODE_GPUS))
            if pre_g is not None and dec_g is not None:
                return f"{pre_g}P+{dec_g}D"
        pre = segment_label(
            _size(row.get(Col.PREFILL_TP)) if row.get(Col.PREFILL_TP) is not None else tp,
            _size(row.get(Col.PREFILL_EP)) if row.get(Col.PREFILL_EP) is not None else ep,
            row.get(Col.PREFILL_DP_ATTENTION)
            if row.get(Col.PREFILL_DP_ATTENTION) is not None
            else dpa,
        )
        dec = segment_label(
            _size(row.get(Col.DECODE_TP)) if row.get(Col.DECODE_TP) is not None else tp,
            _size(row.get(Col.DECODE_EP)) if row.get(Col.DECODE_EP) is not None else ep,
            row.get(Col.DECODE_DP_ATTENTION)
            if row.get(Col.DECODE_DP_ATTENTION) is not None
            else dpa,
        )
        pw = _size(row.get(Col.PREFILL_NUM_WORKERS))
        dw = _size(row.get(Col.DECODE_NUM_WORKERS))
        pw, dw = (1 if pw is None else pw), (1 if dw is None else dw)
        pre_tp = row.get(Col.PREFILL_TP) if row.get(Col.PREFILL_TP) is not None else tp
        dec_tp = row.get(Col.DECODE_TP) if row.get(Col.DECODE_TP) is not None else tp
        pre_absent = pw == 0 and pre_tp == 0
        dec_absent = dw == 0 and dec_tp == 0
        if dec_absent and not pre_absent:
            return f"{pw}x{pre}" if pw > 1 else pre
        if pre_absent and not dec_absent:
            return f"{dw}x{dec}" if dw > 1 else dec
        return f"{pw}x{pre}+{dw}x{dec}"
    return segment_label(tp, ep, dpa, pp, dcp, pcp)


_FIELDS = (
    Col.TP,
    Col.EP,
    Col.PP,
    Col.DCP_SIZE,
    Col.PCP_SIZE,
    Col.DP_ATTENTION,
    Col.IS_MULTINODE,
    Col.DISAGG,
    Col.PREFILL_TP,
    Col.PREFILL_EP,
    Col.PREFILL_DP_ATTENTION,
    Col.PREFILL_NUM_WORKERS,
    Col.DECODE_TP,
    Col.DECODE_EP,
    Col.DECODE_DP_ATTENTION,
    Col.DECODE_NUM_WORKERS,
    Col.PREFILL_GPUS,
    Col.DECODE_GPUS,
)


def parallelism_labels(points: pl.DataFrame) -> pl.Series:
    """`parallelism_label` of every row (`parallelism`), computed once per distinct topology."""
    cols = [c for c in _FIELDS if c in points.columns]
    if not cols:
        return pl.Series("parallelism", ["TP?"] * points.height, dtype=pl.String)
    topo = columns(points, cols)
    # each distinct topology (nulls equal), in order of first appearance, labelled once
    codes, first = dense_codes(topo, cols)
    labels = [parallelism_label(r) for r in gather(topo, first).iter_rows(named=True)]
    return rows_of(pl.Series("parallelism", labels, dtype=pl.String), codes)


__all__ = ["parallelism_label", "parallelism_labels", "segment_label"]

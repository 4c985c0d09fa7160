"""Acceptance-length checks for speculative-decoding points (formats.md 3.9 and 4).

Each spec-decoding point's measured AL is compared with the pinned synthetic AL when the run
pinned one, else with the golden AL for (model family, draft variant, thinking mode, K). The
golden tables are the InferenceX `golden_al_distribution/*.yaml` files (bundled in
`data/golden_al/`); EAGLE3 and EAGLE3-GQA drafts have separate tables, so the draft model picks the
file. A point without counters is `not_measured`, never a pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import polars as pl

from analysis.frontier.prune import IDENTITY_COLUMNS
from ingest.contract.col import Col
from ingest.untrusted.yaml_load import load_yaml

AcceptanceVerdict = Literal["ok", "warn", "fail", "not_measured"]
# InferenceX's injector maps these prefixes to golden top keys; everything else matches by name.
_PREFIX_FAMILY = {"dsv4": "deepseek-v4-pro", "dsr1": "deepseek-r1"}
_MODES = ("thinking_on", "thinking_off")


@dataclass(frozen=True)
class GoldenTable:
    """One golden AL table: family (top key) x variant (from the file name), AL per (mode, K)."""

    family: str
    variant: str
    source: str
    values: tuple[tuple[str, int, float | None], ...]

    def lookup(self, mode: str, k: int) -> float | None:
        """The golden AL for a thinking mode and K (None when absent or N/A)."""
        return next((al for m, kk, al in self.values if (m, kk) == (mode, k)), None)

    @property
    def modes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m for m, _, _ in self.values))


def _variant(stem: str) -> str:
    return stem.split("_", 1)[1] if "_" in stem else stem.rsplit("-", 1)[-1]


def _al(value: Any, where: str) -> float | None:
    if isinstance(value, str) and value.strip().upper() == "N/A":
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{where}: expected an AL number or N/A, got {value!r}")
    return float(value)


def parse_golden_table(text: str, source: str) -> tuple[GoldenTable, ...]:
    """Tables from one golden YAML file (block mapping or the legacy `[{1: 1.90}, ...]` list).

    Raises:
        ValueError: naming the file and key when the YAML is not a golden table.
    """
    doc = load_yaml(text)
    if not isinstance(doc, dict):
        raise ValueError(
            f"{source}: expected `family: {{thinking_on: {{K: AL}}}}`, got {doc!r:.60}"
        )
    out = []
    for family, modes in doc.items():
        if not isinstance(modes, dict):
            raise ValueError(f"{source}: {family}: expected thinking_on/thinking_off mappings")
        values: list[tuple[str, int, float | None]] = []
        for mode, cells in modes.items():
            if mode not in _MODES:
                raise ValueError(f"{source}: {family}.{mode}: expected one of {_MODES}")
            if isinstance(cells, list):  # legacy flat-list form
                cells = {k: v for item in cells for k, v in dict(item).items()}
            if not isinstance(cells, dict):
                raise ValueError(f"{source}: {family}.{mode}: expected {{K: AL}}")
            for k, v in cells.items():
                values.append((mode, int(k), _al(v, f"{source}: {family}.{mode}.{k}")))
        out.append(GoldenTable(str(family), _variant(Path(source).stem), source, tuple(values)))
    return tuple(out)


def load_golden_tables(directory: Path) -> tuple[GoldenTable, ...]:
    """Every golden table in a directory of `*.yaml` files, sorted by file name."""
    tables: list[GoldenTable] = []
    for path in sorted(Path(directory).glob("*.yaml")):
        tables.extend(parse_golden_table(path.read_text(), path.name))
    return tuple(tables)


def draft_variant(spec_method: str | None, draft_model: str | None, spec: str | None) -> str:
    """The golden-table variant a point's draft belongs to: eagle3_gqa, eagle3, dspark, mtp..."""
    text = f"{draft_model or ''} {spec_method or ''}".lower().replace("-", "_")
    if "eagle3" in text and "gqa" in text:
        return "eagle3_gqa"
    for name in ("eagle3", "dspark"):
        if name in text:
            return name
    return (spec_method or spec or "").lower()


def find_golden(
    tables: Sequence[GoldenTable], model: str | None, model_prefix: str | None, variant: str
) -> GoldenTable | None:
    """The table of this model family and draft variant (longest matching family wins)."""
    base = (model or "").rsplit("/", 1)[-1].lower()
    prefix = (model_prefix or "").lower()
    wanted = {_PREFIX_FAMILY.get(prefix, prefix)}
    if prefix.startswith("dsv4dspark"):
        wanted.add("deepseek-v4-pro-0813")
    hits = [
        t
        for t in tables
        if t.variant == variant and (base.startswith(t.family) or t.family in wanted)
    ]
    return max(hits, key=lambda t: (len(t.family), t.source), default=None)


@dataclass(frozen=True)
class AcceptanceParams:
    """tolerance: |measured - expected| allowed for ok (golden values are 2-dp, so >= 0.01;
    synthetic pins realise within about 0.02-0.05 over a run). warn_factor: a pinned point within
    warn_factor x tolerance is warn, beyond it fail. trt_pin_convention: whether TRT-LLM points
    store `synthetic_al` as an AL or as TRT's own setting (AL - 1)."""

    tolerance: float = 0.05
    warn_factor: float = 3.0
    trt_pin_convention: Literal["al", "al_minus_one"] = "al"

    def __post_init__(self) -> None:
        if self.tolerance < 0.01:
            raise ValueError(f"tolerance {self.tolerance} < 0.01: golden ALs are rounded to 2 dp")


def _sanity(row: Mapping[str, Any]) -> list[str]:
    out = []
    al, k = row.get(Col.AL_MEASURED), row.get(Col.NUM_SPEC_TOKENS)
    if al is not None and k and not 1 <= al <= k + 1:
        out.append(f"AL {al:.2f} outside [1, K+1 = {k + 1}]")
    rate = row.get(Col.DRAFT_ACCEPTANCE_RATE)
    if rate is not None and not 0 <= rate <= 1:
        out.append(f"acceptance rate {rate:.3f} outside [0, 1]")
    per = row.get(Col.ACCEPT_RATE_PER_POS) or []
    for i in range(1, len(per)):
        if per[i] > per[i - 1] + 1e-9:
            out.append(
                f"per-position rate rises at position {i} ({per[i - 1]:.3f} -> {per[i]:.3f})"
            )
            break
    drafts = row.get(Col.SPEC_DRAFTS)
    if drafts is not None and drafts <= 0:
        out.append(f"drafts = {drafts:g} (need > 0)")
    return out


def _check(
    row: Mapping[str, Any], tables: Sequence[GoldenTable], p: AcceptanceParams
) -> dict[str, Any]:
    k, al = row.get(Col.NUM_SPEC_TOKENS), row.get(Col.AL_MEASURED)
    pinned = row.get(Col.SYNTHETIC_AL) if row.get(Col.SYNTHETIC_ACCEPTANCE) is not False else None
    trt = "trt" in str(row.get(Col.FRAMEWORK) or "")
    if pinned is not None and trt and p.trt_pin_convention == "al_minus_one":
        pinned += 1.0
    variant = draft_variant(
        row.get(Col.SPEC_METHOD), row.get(Col.DRAFT_MODEL), row.get(Col.SPEC_DECODING)
    )
    table = find_golden(tables, row.get(Col.MODEL), row.get(Col.MODEL_PREFIX), variant)
    mode = row.get(Col.THINKING_MODE) or "thinking_on"  # InferenceX's injector default
    golden = table.lookup(mode, k) if table is not None and k else None
    expected, source = (
        (pinned, "pinned")
        if pinned is not None
        else (golden, "golden" if golden is not None else None)
    )
    notes: list[str] = []
    if table is not None and golden is not None:
        notes.append(f"golden {golden:.2f} ({table.source} {table.family}.{mode}.{k})")
    if pinned is not None and golden is not None and abs(pinned - golden) > 0.005:
        hint = (
            " (TRT's setting is AL-1: was AL-1 stored as the AL?)"
            if trt and abs(pinned + 1 - golden) < 0.005
            else ""
        )
        notes.append(f"pinned {pinned:.2f} != golden {golden:.2f}{hint}")
    sanity = _sanity(row)
    verdict: AcceptanceVerdict
    if al is None:
        verdict, lead = "not_measured", "no acceptance counters (al_measured missing)"
    elif sanity:
        verdict, lead = "fail", "; ".join(sanity)
    elif expected is None:
        verdict, lead = (
            "warn",
            f"no pinned AL and no golden table for {variant or '?'} K={k} ({mode})",
        )
    else:
        d = al - expected
        lead = f"measured {al:.2f} vs {source} {expected:.2f} (delta {d:+.2f}, "
        lead += f"tolerance {p.tolerance:g})"
        if abs(d) <= p.tolerance:
            verdict = "ok"
        elif source == "pinned" and abs(d) > p.warn_factor * p.tolerance:
            verdict, lead = "fail", lead + ": the pin was not applied"
        else:
            verdict = "warn"
            lead += "" if source == "pinned" else ": real acceptance (no pin), informational"
        if verdict == "ok" and any(n.startswith("pinned") for n in notes):
            verdict = "warn"
    if pinned is None and row.get(Col.SCENARIO) == "agentic-coding":
        notes.append("agentic spec-decode run without a synthetic pin")
        verdict = "warn" if verdict == "ok" else verdict
    return {
        Col.AL_MEASURED.value: al,
        Col.AL_SOURCE.value: row.get(Col.AL_SOURCE),
        "al_expected": expected,
        "al_expected_source": source,
        "tolerance": p.tolerance,
        "verdict": verdict,
        "reason": "; ".join([lead, *notes]),
        "al_pinned": pinned,
        "al_golden": golden,
        "golden_table": table.source if table else None,
        "draft_variant": variant,
        "thinking_mode_used": mode,
    }


_OUT_SCHEMA = {
    "al_measured": pl.Float64,
    "al_source": pl.String,
    "al_expected": pl.Float64,
    "al_expected_source": pl.String,
    "tolerance": pl.Float64,
    "verdict": pl.String,
    "reason": pl.String,
    "al_pinned": pl.Float64,
    "al_golden": pl.Float64,
    "golden_table": pl.String,
    "draft_variant": pl.String,
    "thinking_mode_used": pl.String,
}


def check_acceptance(
    points: pl.DataFrame,
    golden: Sequence[GoldenTable],
    params: AcceptanceParams = AcceptanceParams(),
) -> pl.DataFrame:
    """One row per speculative-decoding point (spec_decoding not none).

    Returns:
        The identity columns present in `points`, then `al_measured`, `al_source`,
        `al_expected`, `al_expected_source` (pinned | golden | null), `tolerance`, `verdict`
        (ok | warn | fail | not_measured), `reason`, `al_pinned`, `al_golden`, `golden_table`,
        `draft_variant`, `thinking_mode_used`.
    """
    spec = points.filter(
        pl.col(Col.SPEC_DECODING).is_not_null() & (pl.col(Col.SPEC_DECODING) != "none")
    )
    ident = [c for c in IDENTITY_COLUMNS if c in spec.columns]
    checks = [_check(r, golden, params) for r in spec.iter_rows(named=True)]
    out = pl.DataFrame(checks, schema=_OUT_SCHEMA) if checks else pl.DataFrame(schema=_OUT_SCHEMA)
    return pl.concat([spec.select(ident), out], how="horizontal").sort(
        [c for c in (Col.RUN_ID, Col.ARM_LABEL, Col.CONC) if c in ident], nulls_last=True
    )

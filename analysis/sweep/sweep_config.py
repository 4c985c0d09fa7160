"""A pydantic model of the InferenceX master-config rules (formats.md section 5.1).

It validates what `export.py` writes and also accepts the real `configs/nvidia-master.yaml`.
Every model forbids unknown keys, as InferenceX's own validator does. How entries map to arms
lives in `analysis.sweep.recipes`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    RootModel,
    Tag,
    model_validator,
)

SpecDecoding = Literal["none", "mtp", "draft_model"]
KvOffloading = Literal["none", "dram"]
PositiveInt = Annotated[int, Field(gt=0)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


class Router(_Strict):
    name: str
    version: str | None = None


class Backend(_Strict):
    name: str
    version: str | None = None


class Worker(_Strict):
    num_worker: int = Field(alias="num-worker", ge=0)
    tp: PositiveInt
    ep: int = Field(ge=0)
    dp_attn: bool = Field(alias="dp-attn")
    pp: PositiveInt | None = None
    dcp_size: PositiveInt | None = Field(default=None, alias="dcp-size")
    pcp_size: PositiveInt | None = Field(default=None, alias="pcp-size")
    hardware: str | None = None
    additional_settings: list[str] | None = Field(default=None, alias="additional-settings")


class Entry(_Strict):
    """Fields every search-space entry shares (concurrency given exactly one way)."""

    spec_decoding: SpecDecoding = Field(default="none", alias="spec-decoding")
    router: Router | None = None
    kv_p2p_transfer: str | None = Field(default=None, alias="kv-p2p-transfer")
    conc_list: list[PositiveInt] | None = Field(default=None, alias="conc-list")
    conc_start: PositiveInt | None = Field(default=None, alias="conc-start")
    conc_end: PositiveInt | None = Field(default=None, alias="conc-end")

    @model_validator(mode="after")
    def _one_concurrency_form(self) -> Entry:
        has_list = bool(self.conc_list)
        has_range = self.conc_start is not None or self.conc_end is not None
        if has_list == has_range:
            raise ValueError("give exactly one of conc-list or conc-start + conc-end")
        if has_range and (self.conc_start is None or self.conc_end is None):
            raise ValueError("conc-start and conc-end must be given together")
        if (
            self.conc_start is not None
            and self.conc_end is not None
            and (self.conc_start > self.conc_end)
        ):
            raise ValueError(f"conc-start {self.conc_start} > conc-end {self.conc_end}")
        return self


class SingleNodeEntry(Entry):
    tp: PositiveInt
    ep: PositiveInt = 1
    dp_attn: bool = Field(default=False, alias="dp-attn")
    pp: PositiveInt = 1
    dcp_size: PositiveInt = Field(default=1, alias="dcp-size")
    pcp_size: PositiveInt = Field(default=1, alias="pcp-size")

    @model_validator(mode="after")
    def _dcp_divides_tp(self) -> SingleNodeEntry:
        if self.tp % self.dcp_size:
            raise ValueError(f"tp {self.tp} is not divisible by dcp-size {self.dcp_size}")
        return self


class MultiNodeEntry(Entry):
    prefill: Worker
    decode: Worker

    @model_validator(mode="after")
    def _hardware_both_or_neither(self) -> MultiNodeEntry:
        if (self.prefill.hardware is None) != (self.decode.hardware is None):
            raise ValueError("set `hardware` on both prefill and decode, or on neither")
        return self


class _Offload(_Strict):
    kv_offload_backend: Backend | None = Field(default=None, alias="kv-offload-backend")

    @model_validator(mode="after")
    def _backend_iff_offload(self) -> _Offload:
        kv = getattr(self, "kv_offloading", "none")
        if kv != "none" and self.kv_offload_backend is None:
            raise ValueError(f"kv-offloading {kv} requires kv-offload-backend")
        if kv == "none" and self.kv_offload_backend is not None:
            raise ValueError("kv-offload-backend is only allowed when kv-offloading is not none")
        return self


class AgenticSingleNodeEntry(SingleNodeEntry, _Offload):
    kv_offloading: KvOffloading = Field(alias="kv-offloading")


class AgenticMultiNodeEntry(MultiNodeEntry, _Offload):
    kv_offloading: KvOffloading = Field(default="none", alias="kv-offloading")


def _form(value: Any) -> str:
    is_multi = isinstance(value, dict) and ("prefill" in value or "decode" in value)
    return "multi" if is_multi else "single"


FixedEntry = Annotated[
    Annotated[SingleNodeEntry, Tag("single")] | Annotated[MultiNodeEntry, Tag("multi")],
    Discriminator(_form),
]
AgenticEntry = Annotated[
    Annotated[AgenticSingleNodeEntry, Tag("single")]
    | Annotated[AgenticMultiNodeEntry, Tag("multi")],
    Discriminator(_form),
]


class FixedSeqLen(_Strict):
    isl: PositiveInt
    osl: PositiveInt
    search_space: list[FixedEntry] = Field(alias="search-space", min_length=1)


class AgenticCoding(_Strict):
    dram_utilization: float | None = Field(default=None, alias="dram-utilization", gt=0, le=1)
    # The trace replay's length in seconds (InferenceX masters since July 2026 carry it; unset,
    # the sweep generator's default of 3600 applies).
    duration: PositiveInt | None = None
    search_space: list[AgenticEntry] = Field(alias="search-space", min_length=1)

    @model_validator(mode="after")
    def _dram_needs_utilization(self) -> AgenticCoding:
        dram = any(e.kv_offloading == "dram" for e in self.search_space)
        if dram and self.dram_utilization is None:
            raise ValueError("dram-utilization is required when an entry uses kv-offloading dram")
        return self


class Scenarios(_Strict):
    fixed_seq_len: list[FixedSeqLen] | None = Field(default=None, alias="fixed-seq-len")
    agentic_coding: list[AgenticCoding] | None = Field(default=None, alias="agentic-coding")


class MasterEntry(_Strict):
    """One config key of a master config."""

    image: str
    model: str
    model_prefix: str = Field(alias="model-prefix")
    runner: str
    precision: str
    framework: str
    multinode: bool
    disagg: bool = False
    router: Router | None = None
    kv_p2p_transfer: str | None = Field(default=None, alias="kv-p2p-transfer")
    scenarios: Scenarios

    @model_validator(mode="after")
    def _consistent(self) -> MasterEntry:
        entries: list[Entry] = []
        for f in self.scenarios.fixed_seq_len or []:
            entries.extend(f.search_space)
        for a in self.scenarios.agentic_coding or []:
            entries.extend(a.search_space)
        want = MultiNodeEntry if self.multinode else SingleNodeEntry
        for e in entries:
            if not isinstance(e, want):
                form = "multinode" if self.multinode else "single-node"
                raise ValueError(f"multinode: {self.multinode} needs {form} search-space entries")
        if not self.multinode and (self.disagg or self.kv_p2p_transfer is not None):
            raise ValueError("disagg and kv-p2p-transfer are multinode-only")
        if self.disagg and self.kv_p2p_transfer is None:
            missing = [e for e in entries if e.kv_p2p_transfer is None]
            if missing:
                raise ValueError("disagg needs kv-p2p-transfer at the top or on every entry")
        if self.scenarios.agentic_coding and not self.runner.startswith("cluster:"):
            raise ValueError(f"agentic-coding needs a 'cluster:<name>' runner, got {self.runner!r}")
        return self


class SweepConfig(RootModel[dict[str, MasterEntry]]):
    """A master config (or a snippet of one): config key -> entry."""

    @model_validator(mode="after")
    def _no_wildcards(self) -> SweepConfig:
        bad = [k for k in self.root if "*" in k or "?" in k]
        if bad:
            raise ValueError(f"config keys may not contain wildcards: {bad}")
        return self


def validate_sweep_config(doc: Any) -> SweepConfig:
    """Validate a parsed master config (or snippet).

    Raises:
        ValueError: naming the key and field that break the rules (a pydantic ValidationError).
    """
    return SweepConfig.model_validate(doc)


__all__ = [
    "SweepConfig",
    "validate_sweep_config",
]

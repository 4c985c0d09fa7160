"""Run plans: what to sweep (arms x concurrencies) and how to run it (commands, Slurm, GitHub).

A plan is ours, so every model forbids unknown keys. It expands to points with stable ids: the id
hashes the point's configuration (not its position, label, durations or timeouts), so a point
keeps its id when the plan is rebuilt, reordered or re-timed (a fast sweep and its full-duration
rerun), and two sources stating the same configuration give the same id.
Builders from an InferenceX search-space YAML and from `paretolens prune` output live in
`runner.sources`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)

from runner.errors import PlanError
from runner.fields import (
    SAFE_VALUE,
    STRICT,
    EnvName,
    EnvValue,
    Name,
    RunId,
    SafeValue,
    Scenario,
    Word,
    field_error,
)
from runner.options import Commands, GithubOptions, SlurmOptions
from runner.templates import placeholders

BackendName = Literal["local", "slurm", "github"]
BACKENDS: tuple[BackendName, ...] = ("local", "slurm", "github")


class Worker(BaseModel):
    """A prefill or decode worker block of a multinode arm."""

    model_config = STRICT

    num_worker: int = Field(ge=0)
    tp: int = Field(1, ge=1)
    ep: int = Field(1, ge=1)
    pp: int = Field(1, ge=1)
    dcp_size: int = Field(1, ge=1)
    pcp_size: int = Field(1, ge=1)
    dp_attn: bool = False
    additional_settings: list[
        Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*=[^\x00\r\n]*$")]
    ] = []


class Arm(BaseModel):
    """One configuration (everything but the concurrency) and the concurrencies to run it at."""

    model_config = STRICT

    config_key: Name | None = Field(
        None, description="InferenceX master-config key (github needs it)"
    )
    scenario: Scenario = "fixed-seq-len"
    model: SafeValue
    model_prefix: Name | None = None
    framework: Name | None = None
    precision: Name | None = None
    image: SafeValue | None = None
    hw: Name | None = Field(None, description="runner label, e.g. h200 or cluster:h200-dgxc")
    isl: int | None = Field(None, gt=0)
    osl: int | None = Field(None, gt=0)
    tp: int = Field(1, ge=1)
    pp: int = Field(1, ge=1)
    ep: int = Field(1, ge=1)
    dcp_size: int = Field(1, ge=1)
    pcp_size: int = Field(1, ge=1)
    dp_attn: bool = False
    spec_decoding: Word = "none"
    kv_offloading: Literal["none", "dram"] = "none"
    kv_offload_backend: Name | None = None
    dram_utilization: float | None = Field(None, gt=0, le=1)
    disagg: bool = False
    prefill: Worker | None = None
    decode: Worker | None = None
    env: dict[EnvName, EnvValue] = {}
    concs: list[int] = Field(min_length=1)
    label: Annotated[str, StringConstraints(max_length=200)] | None = None

    @model_validator(mode="after")
    def _rules(self) -> Arm:
        if any(c <= 0 for c in self.concs):
            bad = next(i for i, c in enumerate(self.concs) if c <= 0)
            raise field_error(f"concs.{bad}", "a concurrency must be a positive integer")
        if len(set(self.concs)) != len(self.concs):
            raise field_error("concs", f"duplicate concurrencies in {self.concs}")
        if self.scenario == "fixed-seq-len" and (self.isl is None or self.osl is None):
            raise field_error(
                "isl" if self.isl is None else "osl", "fixed-seq-len arms need isl and osl"
            )
        if (self.prefill is None) != (self.decode is None):
            raise field_error(
                "prefill" if self.prefill is None else "decode",
                "give both prefill and decode, or neither",
            )
        if self.kv_offloading == "dram" and self.kv_offload_backend is None:
            raise field_error("kv_offload_backend", "kv_offloading dram needs a kv_offload_backend")
        if self.kv_offloading == "none" and self.kv_offload_backend is not None:
            raise field_error("kv_offload_backend", "only allowed with kv_offloading dram")
        if self.dcp_size > 1 and self.tp % self.dcp_size:
            raise field_error(
                "dcp_size", f"tp {self.tp} is not divisible by dcp_size {self.dcp_size}"
            )
        return self

    @property
    def is_multinode(self) -> bool:
        return self.prefill is not None

    def identity(self) -> dict[str, Any]:
        """The configuration that defines the arm's points (not its label or concs).

        The config key is part of it: it selects the InferenceX benchmark script, and two keys
        of one master config may otherwise look the same (e.g. a power A/B copy of an arm).
        """
        return self.model_dump(mode="json", exclude={"concs", "label"})

    def describe(self) -> str:
        """A readable arm label, e.g. ``minimaxm3 TP8 EP1 | mtp | kv dram/mooncake``."""
        if self.label:
            return self.label
        if self.prefill is not None and self.decode is not None:
            topo = f"P{self.prefill.num_worker}xTP{self.prefill.tp} D{self.decode.num_worker}xTP{self.decode.tp}"
        else:
            topo = f"TP{self.tp} EP{self.ep}" + (f" PP{self.pp}" if self.pp > 1 else "")
            topo += " DPA" if self.dp_attn else ""
        parts = [f"{self.model_prefix or self.model} {topo}"]
        if self.spec_decoding != "none":
            parts.append(self.spec_decoding)
        if self.kv_offloading != "none":
            parts.append(f"kv {self.kv_offloading}/{self.kv_offload_backend}")
        return " | ".join(parts)


class Plan(BaseModel):
    """A sweep: arms x concurrencies, run parameters, and the options of each backend.

    `defaults` are merged into every arm before it is validated (an arm's own value wins).
    """

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    name: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=100)]
    description: str = ""
    run_id: RunId | None = None
    defaults: dict[str, Any] = {}
    arms: list[Arm] = Field(min_length=1)
    duration_s: int | None = Field(None, gt=0)
    random_range_ratio: float = Field(0.8, gt=0, le=1)
    num_prompts_per_conc: int = Field(10, gt=0)
    timeout_s: float = Field(3600.0, gt=0, description="per-point limit on the benchmark command")
    env: dict[EnvName, EnvValue] = {}
    commands: Commands | None = None
    slurm: SlurmOptions | None = None
    github: GithubOptions | None = None
    source: dict[str, str] = Field({}, description="provenance: kind, path, run id")

    @model_validator(mode="before")
    @classmethod
    def _merge_defaults(cls, data: Any) -> Any:
        if (
            isinstance(data, dict)
            and isinstance(data.get("defaults"), dict)
            and isinstance(data.get("arms"), list)
        ):
            defaults = data["defaults"]
            unknown = sorted(set(defaults) - set(Arm.model_fields) - {"concs"})
            if unknown:
                raise field_error(
                    f"defaults.{unknown[0]}",
                    f"not an arm field; arm fields: {', '.join(Arm.model_fields)}",
                )
            data = {
                **data,
                "arms": [{**defaults, **a} if isinstance(a, dict) else a for a in data["arms"]],
            }
        return data

    @model_validator(mode="after")
    def _rules(self) -> Plan:
        seen: dict[str, str] = {}
        for i, arm in enumerate(self.arms):
            for j, conc in enumerate(arm.concs):
                pid = point_id(arm, conc)
                if pid in seen:
                    raise field_error(
                        f"arms.{i}.concs.{j}",
                        f"the same point as {seen[pid]} (same configuration and conc)",
                    )
                seen[pid] = f"arms.{i}.concs.{j}"
        if self.commands is not None:
            self._check_placeholders(self.commands)
        if self.slurm is not None and self.commands is not None:
            needed = self.timeout_s + self.commands.ready_timeout_s
            if self.slurm.time_limit_min * 60 < needed:
                raise field_error(
                    "slurm.time_limit_min",
                    f"{self.slurm.time_limit_min} min is shorter than timeout_s + commands.ready_timeout_s ({needed:.0f} s)",
                )
        return self

    def _check_placeholders(self, commands: Commands) -> None:
        for i, arm in enumerate(self.arms):
            optional = {
                "model_prefix": arm.model_prefix,
                "framework": arm.framework,
                "precision": arm.precision,
                "image": arm.image,
                "hw": arm.hw,
                "isl": arm.isl,
                "osl": arm.osl,
                "max_model_len": arm.isl,
                "kv_offload_backend": arm.kv_offload_backend,
                "duration": self.duration_s,
            }
            unset = {k for k, v in optional.items() if v is None}
            for name in ("serve", "benchmark", "script", "health_url", "metrics_url"):
                value = getattr(commands, name)
                argv = [value] if isinstance(value, str) else value or []
                used = {p for element in argv for p in placeholders(element)} & unset
                if used:
                    raise field_error(
                        f"commands.{name}",
                        f"uses {{{sorted(used)[0]}}} but arms.{i} has no {sorted(used)[0]}; "
                        "set it on the arm (or in defaults) or drop the placeholder",
                    )

    def points(self) -> list[Point]:
        """The plan's points in plan order (arm by arm, concurrencies ascending)."""
        out: list[Point] = []
        for ai, arm in enumerate(self.arms):
            for conc in sorted(arm.concs):
                out.append(
                    Point(id=point_id(arm, conc), index=len(out), arm_index=ai, arm=arm, conc=conc)
                )
        return out

    def require(self, backend: BackendName) -> None:
        """Check that the plan has what `backend` needs.

        Raises:
            PlanError: naming the missing field.
        """
        if backend in ("local", "slurm") and self.commands is None:
            raise PlanError(
                "commands", f"the {backend} backend needs commands (serve/benchmark or script)"
            )
        if backend == "slurm" and self.slurm is None:
            raise PlanError(
                "slurm", "the slurm backend needs slurm options (at least time_limit_min)"
            )
        if backend == "github":
            for i, arm in enumerate(self.arms):
                if arm.config_key is None:
                    raise PlanError(
                        f"arms.{i}.config_key",
                        "the github backend dispatches InferenceX config keys",
                    )


@dataclass(frozen=True)
class Point:
    """One arm at one concurrency."""

    id: str
    index: int
    arm_index: int
    arm: Arm
    conc: int

    @property
    def label(self) -> str:
        return f"{self.arm.describe()} | c{self.conc}"


def point_id(arm: Arm, conc: int) -> str:
    """Stable id of an arm at a concurrency: a hash of the configuration, not of its position."""
    blob = json.dumps({**arm.identity(), "conc": conc}, sort_keys=True, separators=(",", ":"))
    return "pt-" + hashlib.sha256(blob.encode()).hexdigest()[:12]


def parse_plan(data: Any, *, source: str = "") -> Plan:
    """Validate a plan document (a mapping, e.g. parsed YAML or JSON).

    Raises:
        PlanError: naming the first invalid field (all of them in the message).
    """
    try:
        return Plan.model_validate(data)
    except ValidationError as exc:
        raise plan_error(exc, source=source) from exc


def plan_error(exc: ValidationError, *, prefix: str = "", source: str = "") -> PlanError:
    """Turn a pydantic error into a PlanError whose field is the dotted path of the first error."""
    errors = exc.errors()
    parts = []
    for err in errors:
        loc = ".".join(str(p) for p in err["loc"] if not str(p).startswith("function-"))
        ctx_field = (err.get("ctx") or {}).get("field")
        if ctx_field:
            loc = f"{loc}.{ctx_field}" if loc else str(ctx_field)
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "string_pattern_mismatch":
            msg = f"{err['input']!r} does not match {(err.get('ctx') or {}).get('pattern')}"
            if (err.get("ctx") or {}).get("pattern") == SAFE_VALUE:
                msg = f"{err['input']!r}: only letters, digits and . _ : / @ + = # - (no spaces or shell characters)"
        if isinstance(ctx_field, str) and msg.startswith(ctx_field + ": "):
            msg = msg[len(ctx_field) + 2 :]
        full = ".".join(p for p in (prefix, loc) if p)
        parts.append((full, msg))
    field, reason = parts[0]
    if len(parts) > 1:
        reason += "; also " + "; ".join(f"{f}: {m}" for f, m in parts[1:4])
    return PlanError(field, reason, source=source)

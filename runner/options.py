"""How the backends run a plan: the commands of a point, Slurm settings, GitHub dispatch settings."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints, model_validator

from runner.fields import STRICT, Argv, EnvName, EnvValue, Name, SafeValue, field_error
from runner.templates import check_template


class Commands(BaseModel):
    """How the local and slurm backends run one point.

    Either `benchmark` (optionally with `serve`, a server kept up while the benchmark runs) or
    `script` (one program driven by the InferenceX environment variables). Each is an argv list.
    """

    model_config = STRICT

    serve: Argv | None = None
    benchmark: Argv | None = None
    script: Argv | None = None
    health_url: Annotated[str, StringConstraints(pattern=r"^https?://[^\s]+$")] | None = None
    metrics_url: Annotated[str, StringConstraints(pattern=r"^https?://[^\s]+$")] | None = None
    port: int | Literal["auto"] = 8888
    ready_timeout_s: float = Field(600.0, gt=0)
    health_interval_s: float = Field(1.0, gt=0)
    grace_s: float = Field(10.0, ge=0, description="SIGTERM to SIGKILL delay")
    workdir: str | None = Field(
        None, description="cwd of the commands (default: the point's result dir)"
    )
    result_glob: str = "*.json"
    max_parallel: int = Field(1, ge=1, description="points run at once by the local backend")
    env: dict[EnvName, EnvValue] = {}

    @model_validator(mode="after")
    def _rules(self) -> Commands:
        if (self.benchmark is None) == (self.script is None):
            raise field_error(
                "benchmark" if self.benchmark is None else "script",
                "give exactly one of benchmark or script",
            )
        if self.serve is not None and self.script is not None:
            raise field_error("serve", "serve goes with benchmark; a script starts its own server")
        for name in ("serve", "benchmark", "script"):
            argv = getattr(self, name)
            if argv is not None:
                try:
                    check_template(argv)
                except ValueError as exc:
                    raise field_error(name, str(exc)) from exc
        for name in ("health_url", "metrics_url"):
            url = getattr(self, name)
            if url is not None:
                try:
                    check_template([url])
                except ValueError as exc:
                    raise field_error(name, str(exc).removeprefix("[0]: ")) from exc
        if self.max_parallel > 1 and self.port != "auto":
            raise field_error(
                "port",
                f"max_parallel {self.max_parallel} runs points at once; they cannot share port "
                f"{self.port}: use port: auto",
            )
        if "/" in self.result_glob or self.result_glob.startswith("."):
            raise field_error(
                "result_glob", "a file-name pattern inside the result dir, e.g. *.json"
            )
        return self


# sbatch options that `additional_parameters` may carry (long names; `_` is read as `-`).
SBATCH_EXTRA = frozenset(
    {
        "begin", "chdir", "comment", "constraint", "container", "contiguous", "core-spec",
        "cores-per-socket", "deadline", "delay-boot", "dependency", "distribution", "exclude",
        "exclusive", "extra-node-info", "gpu-bind", "gpu-freq", "gpus", "gpus-per-socket",
        "gpus-per-task", "gres", "gres-flags", "hint", "licenses", "mail-type", "mail-user",
        "mem-bind", "mem-per-cpu", "mem-per-gpu", "mincpus", "network", "nice", "nodefile",
        "nodelist", "nodes", "ntasks", "ntasks-per-core", "ntasks-per-gpu", "ntasks-per-node",
        "ntasks-per-socket", "overcommit", "oversubscribe", "power", "priority", "profile",
        "propagate", "reboot", "requeue", "reservation", "signal", "sockets-per-node", "spread-job",
        "switches", "thread-spec", "threads-per-core", "time-min", "tmp", "use-min-nodes",
        "wckey",
    }
)  # fmt: skip
# sbatch options the runner sets itself, and the plan field that sets each (None: not settable).
SBATCH_OWN: dict[str, str | None] = {
    "partition": "slurm.partition",
    "p": "slurm.partition",
    "account": "slurm.account",
    "qos": "slurm.qos",
    "time": "slurm.time_limit_min",
    "t": "slurm.time_limit_min",
    "gpus-per-node": "slurm.gpus_per_node",
    "cpus-per-task": "slurm.cpus_per_task",
    "mem": "slurm.mem_gb",
    "array": "slurm.array_parallelism",
    "job-name": None,
    "output": None,
    "error": None,
    "input": None,
    "wrap": None,
    "parsable": None,
    "test-only": None,
    "export": None,
    "export-file": None,
    "get-user-env": None,
    "uid": None,
    "gid": None,
    "chdir": None,
    "no-requeue": None,
    "wait": None,
}


class SlurmOptions(BaseModel):
    """Slurm job-array settings. `cluster: local` runs the same points on this machine (the local backend).

    Checked twice: here (names and values), and at launch by `sbatch --test-only` against the
    cluster (partition, GPUs, limits), so a plan the cluster would refuse is refused at once.
    """

    model_config = STRICT

    cluster: Literal["slurm", "local"] = "slurm"
    partition: Name | None = None
    account: Name | None = None
    qos: Name | None = None
    gpus_per_node: int | None = Field(None, ge=0)
    cpus_per_task: int | None = Field(None, ge=1)
    mem_gb: float | None = Field(None, gt=0)
    time_limit_min: int = Field(gt=0)
    array_parallelism: int = Field(8, ge=1)
    python: SafeValue | None = Field(
        None, description="python of the compute nodes (default: the worker's own)"
    )
    additional_parameters: dict[
        Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9_-]*$", max_length=60)],
        Annotated[str, StringConstraints(pattern=r"^[^\x00\r\n]*$", max_length=400)] | int,
    ] = {}

    @model_validator(mode="after")
    def _sbatch_names(self) -> SlurmOptions:
        for key in self.additional_parameters:
            name = sbatch_option(key)
            if name in SBATCH_OWN:
                owner = SBATCH_OWN[name]
                why = f"set it with {owner}" if owner else "the runner sets it itself"
                raise field_error(f"additional_parameters.{key}", f"--{name} is not extra: {why}")
            if name not in SBATCH_EXTRA:
                raise field_error(
                    f"additional_parameters.{key}",
                    f"--{name} is not an sbatch option the runner passes on "
                    f"(known: {', '.join(sorted(SBATCH_EXTRA))})",
                )
        return self

    def sbatch_args(self) -> list[str]:
        """The sbatch options of these settings (no array, names or log paths)."""
        args = [f"--time={self.time_limit_min}"]
        for flag, value in (
            ("partition", self.partition),
            ("account", self.account),
            ("qos", self.qos),
            ("gpus-per-node", self.gpus_per_node),
            ("cpus-per-task", self.cpus_per_task),
        ):
            if value is not None:
                args.append(f"--{flag}={value}")
        if self.mem_gb is not None:
            args.append(f"--mem={max(1, round(self.mem_gb * 1024))}M")
        if "requeue" not in {sbatch_option(k) for k in self.additional_parameters}:
            args.append("--no-requeue")
        for key, value in self.additional_parameters.items():
            name = sbatch_option(key)
            args.append(f"--{name}" if value == "" else f"--{name}={value}")
        return args


def sbatch_option(key: str) -> str:
    """The sbatch long option a key names (`mem_per_cpu`, `--mem-per-cpu` -> `mem-per-cpu`)."""
    return key.lstrip("-").replace("_", "-").lower()


class GithubOptions(BaseModel):
    """InferenceX `e2e-tests.yml` dispatch settings."""

    model_config = STRICT

    repo: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")] | None = (
        None
    )
    api_url: Annotated[str, StringConstraints(pattern=r"^https?://[^\s]+$")] | None = None
    workflow: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]+$")] = "e2e-tests.yml"
    ref: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._/-]+$")] = "main"
    checkout_ref: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._/-]+$")] | None = None
    config_files: list[SafeValue] = ["configs/nvidia-master.yaml"]
    runner_config: SafeValue = "configs/runners.yaml"
    extra_args: list[Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._:/=,-]+$")]] = []
    test_name: (
        Annotated[str, StringConstraints(pattern=r"^[^\x00\r\n]*$", max_length=150)] | None
    ) = None
    poll_interval_s: float = Field(30.0, gt=0)
    find_timeout_s: float = Field(300.0, gt=0)

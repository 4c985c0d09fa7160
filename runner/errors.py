"""Runner exceptions. Caller mistakes are exceptions; a point that fails is data (its state)."""

from __future__ import annotations


class RunnerError(Exception):
    """Base of every runner error."""


class PlanError(RunnerError, ValueError):
    """A plan (or a source it was built from) is invalid.

    `field` is the dotted path of the offending field, e.g. ``arms.1.concs.0`` or
    ``minimaxm3-fp8-h200-vllm.scenarios.fixed-seq-len.0.search-space.2.conc-list``.
    """

    def __init__(self, field: str, reason: str, *, source: str = "") -> None:
        self.field = field
        self.reason = reason
        self.source = source
        where = f"{source}: " if source else ""
        super().__init__(f"{where}{field}: {reason}" if field else f"{where}{reason}")


class JobNotFound(RunnerError, LookupError):
    """No job with that id in the store."""

    def __init__(self, job_id: str) -> None:
        self.job_id = job_id
        super().__init__(f"no job {job_id!r}; `paretolens jobs` lists the jobs of this store")


class JobBusy(RunnerError):
    """Another live worker already drives the job."""

    def __init__(self, job_id: str) -> None:
        self.job_id = job_id
        super().__init__(f"job {job_id} is already being driven by a live worker")


class LaunchRefused(RunnerError, PermissionError):
    """A state-changing request was refused (launching disabled, wrong or missing token)."""


class BackendError(RunnerError):
    """A backend could not do what was asked (an API answered an error, a scheduler refused)."""

"""The shared runner: plans, backends (local, slurm, github), durable jobs, the service API.

`runner.service` is the function API for the CLI and the web app (docs/runner.md); it is not
re-exported here so that the point executor, which imports this package, starts light.
"""

from runner.errors import BackendError, JobBusy, JobNotFound, LaunchRefused, PlanError, RunnerError
from runner.jobs import JobRecord, JobState, PointRecord, PointState
from runner.plan import Arm, Plan, Point, parse_plan

__all__ = [
    "Arm",
    "BackendError",
    "JobBusy",
    "JobNotFound",
    "JobRecord",
    "JobState",
    "LaunchRefused",
    "Plan",
    "PlanError",
    "Point",
    "PointRecord",
    "PointState",
    "RunnerError",
    "parse_plan",
]

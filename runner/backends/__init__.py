"""Backends that run a job's points: local processes, a Slurm job array, GitHub Actions."""

from runner.backends.base import Backend, BackendContext, Collected, PointUpdate

__all__ = ["Backend", "BackendContext", "Collected", "PointUpdate"]

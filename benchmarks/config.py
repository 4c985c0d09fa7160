"""Run-wide settings of the suite: sizes for full and quick mode, repeats, scratch directory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Config:
    """Sizes and repeats of one suite run.

    Full mode measures the sizes the targets name; quick mode (`--quick`) divides the big sizes by
    10 so the whole suite finishes in under two minutes: its absolute figures are not the targets'
    sizes, only its ratios are comparable.
    """

    quick: bool
    workdir: Path
    runs: int = 5

    @property
    def frontier_points(self) -> int:
        return 100_000 if self.quick else 1_000_000

    @property
    def frontier_arms(self) -> int:
        return self.frontier_points // 100

    @property
    def store_points(self) -> int:
        return 100_000 if self.quick else 1_000_000

    @property
    def run_points(self) -> int:
        return 500

    @property
    def growth_sizes(self) -> tuple[int, ...]:
        return (1_000, 10_000, 100_000) if self.quick else (1_000, 10_000, 100_000, 1_000_000)

    @property
    def browser_loads(self) -> int:
        return 5

    @property
    def big_page_points(self) -> int:
        return 2_000 if self.quick else 5_000

    def mode(self) -> str:
        return "quick" if self.quick else "full"

    def command(self, only: str) -> str:
        """The command that reproduces one suite."""
        flag = " --quick" if self.quick else ""
        return f"uv run --group bench python -m benchmarks.run{flag} --only {only}"

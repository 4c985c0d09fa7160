"""Test tiers and hypothesis profiles for the whole suite.

Tiers (markers, registered in pyproject.toml):

- fast: everything not marked otherwise; `pytest` alone runs it (under 2 minutes on a 2-core
  machine with `-n 2`, which the README's test command uses).
- `slow`: tests that start workers, servers or subprocesses, or search thousands of hypothesis
  examples (the runner's end-to-end paths, the moocore and batch-vs-row oracles).
- `browser`: real headless chromium; `reliability`: crash, concurrency, load and hostile-input
  tests; `slurm`: a real single-node Slurm cluster.

`bash scripts/test.sh` runs every tier. The tier of a test follows from where it lives (below),
so a new test lands in the fast tier unless its room is a slow one.

Hypothesis: the `ci` profile (CI=true) is derandomized, so a CI failure reproduces; `dev` is
randomized with the example database, so local runs keep finding new cases.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))

# Whole rooms in a tier by their path.
_DIRS = {
    "tests/reliability/": "reliability",
    "tests/runner/": "slow",
    "tests/benchmarks/": "slow",
}
# Single slow tests elsewhere (nodeid prefixes): hypothesis oracles over thousands of examples,
# processes and threads.
_SLOW = (
    "tests/analysis/test_pareto_frontier.py::test_frontier_equals_moocore",
    "tests/analysis/test_pareto_frontier.py::test_a_million_points",
    "tests/analysis/test_verdict_oracles.py",
    "tests/analysis/test_fast_paths.py",
    "tests/ingest/test_normalize_batch.py::test_the_batch_path_matches_the_row_path",
    "tests/ingest/test_pipeline.py::test_two_concurrent_ingests",
    "tests/ingest/test_store.py::test_two_processes",
    "tests/test_architecture.py::test_entry_points_import_without_the_slow_modules",
    "tests/paretolens/test_cli_startup.py::test_listing_the_commands_imports_no_heavy_library",
    "tests/paretolens/test_cli_startup.py::test_a_command_loads_only_its_own_group",
    "tests/paretolens/test_runner_cmds.py::test_launch_",  # a local worker runs the plan
)
# The runner's quick unit tests and the benchmark's dump writer stay in the fast tier.
_FAST_IN_SLOW_DIRS = (
    "tests/runner/test_plan.py",
    "tests/runner/test_sources.py",
    "tests/benchmarks/test_inferencex_dump.py",
    "tests/benchmarks/test_team_rounds.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        node = item.nodeid.replace("\\", "/")
        if item.get_closest_marker("browser") or item.get_closest_marker("slurm"):
            continue
        tier = next((t for d, t in _DIRS.items() if node.startswith(d)), None)
        if tier == "slow" and node.startswith(_FAST_IN_SLOW_DIRS):
            tier = None
        if tier is None and node.startswith(_SLOW):
            tier = "slow"
        if tier is not None:
            item.add_marker(getattr(pytest.mark, tier))

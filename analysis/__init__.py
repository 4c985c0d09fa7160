"""Pure analysis over canonical points: frontiers, cliffs, verdicts, exports, AL checks, deltas."""

from analysis.acceptance import (
    AcceptanceParams,
    GoldenTable,
    check_acceptance,
    load_golden_tables,
    parse_golden_table,
)
from analysis.comparison.compare import (
    RunComparison,
    compare_runs,
    comparison_json,
    comparison_markdown,
)
from analysis.comparison.deltas import ArmPair, Deltas, compute_deltas, pair_arms
from analysis.frontier.cliff import CliffParams, detect_cliffs
from analysis.frontier.interpolate import FrontierGap, frontier_gap
from analysis.frontier.pareto import FrontierResult, compute_frontiers, frontier_mask
from analysis.frontier.polylines import Frontier
from analysis.frontier.prune import Analysis, Verdict, analyze_points
from analysis.sweep.export import (
    SearchSpace,
    dispatch_command,
    dispatch_problem,
    search_space,
    search_space_yaml,
)
from analysis.sweep.pruned import PrunedList, prune_list, pruned_json, pruned_table
from analysis.sweep.sweep_config import SweepConfig, validate_sweep_config
from ingest.contract.plans import ArmPlan

__all__ = [
    "AcceptanceParams",
    "Analysis",
    "ArmPair",
    "ArmPlan",
    "CliffParams",
    "Deltas",
    "Frontier",
    "FrontierGap",
    "FrontierResult",
    "GoldenTable",
    "PrunedList",
    "RunComparison",
    "SearchSpace",
    "SweepConfig",
    "Verdict",
    "analyze_points",
    "check_acceptance",
    "compare_runs",
    "comparison_json",
    "comparison_markdown",
    "compute_deltas",
    "compute_frontiers",
    "detect_cliffs",
    "dispatch_command",
    "dispatch_problem",
    "frontier_gap",
    "frontier_mask",
    "load_golden_tables",
    "pair_arms",
    "parse_golden_table",
    "prune_list",
    "pruned_json",
    "pruned_table",
    "search_space",
    "search_space_yaml",
    "validate_sweep_config",
]

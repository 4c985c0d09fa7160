"""Launching a full sweep from a run view: the pruned list or chosen points -> a runner plan -> a job.

Shared by the launch panel and `POST /api/launch`. The runner's `service.authorize` is the gate;
it is asked first, before any plan is built, so a refused request does no work.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import yaml

from dashboard.data import DataSource
from dashboard.state import RunView
from paretolens.settings import Settings
from runner import service
from runner.errors import PlanError
from runner.sources import plan_from_pruned

Source = Literal["pruned", "points"]
OPTIONS_FILE = "launch-options.yaml"
OPTIONS_TEMPLATE = """\
# Plan options for the full sweep: the runner plan fields a pruned list cannot know
# (docs/runner.md). Save them as launch-options.yaml in the store to prefill this box.
timeout_s: 3600
# duration_s: 600
# commands:
#   script: [bash, /path/to/benchmark_script.sh]
# slurm: {partition: gpu, time_limit_min: 90}
# github: {ref: main}
"""


def default_options(store_root: Path) -> str:
    """The options text to prefill: the store's launch-options.yaml, else a template."""
    path = store_root / OPTIONS_FILE
    try:
        return path.read_text()
    except OSError:
        return OPTIONS_TEMPLATE


def parse_options(text: str | None) -> dict[str, Any]:
    """Plan options from YAML text.

    Raises:
        PlanError: when the text is not a YAML mapping.
    """
    try:
        doc = yaml.safe_load(text or "") or {}
    except yaml.YAMLError as exc:
        raise PlanError("options", f"not valid YAML: {exc}") from exc
    if not isinstance(doc, dict):
        raise PlanError("options", "expected a mapping of plan fields (timeout_s, commands, ...)")
    return doc


def plan_name(view: RunView, source: Source) -> str:
    """A plan name for a launch from this view."""
    stem = "-".join(view.runs)[:60] or "run"
    return re.sub(r"[^A-Za-z0-9._-]", "-", f"full-{source}-{stem}").strip("-.")[:100]


def launch_from_view(
    source: DataSource,
    settings: Settings,
    view: RunView,
    *,
    what: Source,
    point_ids: Sequence[str] = (),
    backend: str,
    options: str | None,
    token: str | None,
) -> str:
    """Launch the pruned list (or the given points) of a view; returns the job id.

    Raises:
        LaunchRefused: when the runner's gate refuses (disabled, token, listen address).
        PlanError: when nothing is selected or the options are wrong.
        BackendError: when the backend cannot take the plan.
    """
    service.authorize(settings, token, caller=service.Caller.WEB)
    data = source.run_data(view)
    if what == "points":
        if not point_ids:
            raise PlanError("points", "no point selected: tick rows in the Points tab first")
        doc = data.selection_doc(point_ids)
    else:
        doc = data.pruned_doc
    base = {"name": plan_name(view, what), **parse_options(options)}
    plan = plan_from_pruned(doc, base=base, source="web")
    return service.launch(plan, backend, source.store, settings, token=token)

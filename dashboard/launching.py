"""Launching a full sweep from a run view: the pruned list or chosen points -> a runner plan -> a job.

Shared by the launch panel and `POST /api/launch`. The runner's `service.authorize` is the gate;
it is asked first, before any plan is built, so a refused request does no work.

The browser sends no programs. What a point runs (`commands`), where (`slurm`, `github`) and with
what environment come from the server's launch options document (`PARETOLENS_LAUNCH_OPTIONS`,
default `launch-options.yaml` in the store), read and validated when the app starts. A request
may choose the points, the backend and the durations (`BROWSER_FIELDS`); one that carries
anything else (a command above all) is refused with a `LaunchRequestError` (HTTP 400).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dashboard.settings import AppSettings
from ingest.untrusted.yaml_load import load_yaml
from runner import service
from runner.errors import PlanError
from runner.options import Commands, GithubOptions, SlurmOptions
from runner.plan import Plan, plan_error
from runner.sources import plan_from_arms
from views.query.state import RunView
from views.source import DataSource

Source = Literal["pruned", "points"]
OPTIONS_FILE = "launch-options.yaml"
# What a launch request may set: durations. Everything else comes from the options document.
BROWSER_FIELDS = ("duration_s", "timeout_s")
# The plan fields an options document may set (a plan's own fields, less what a view decides).
DOCUMENT_FIELDS = frozenset(Plan.model_fields) - {"name", "arms", "run_id", "source", "version"}


class LaunchRequestError(PlanError):
    """A launch request carried what only the server's options document may set (HTTP 400)."""


class LaunchOptionsError(ValueError):
    """The server's launch options document is unreadable or invalid (the app does not start)."""


class Durations(BaseModel):
    """The durations a launch request may choose."""

    model_config = ConfigDict(extra="forbid")

    duration_s: int | None = Field(None, gt=0)
    timeout_s: float | None = Field(None, gt=0)


def options_path(settings: AppSettings) -> Path:
    """Where the launch options document is: the setting, else the store's launch-options.yaml."""
    if settings.launch_options is not None:
        return Path(settings.launch_options).expanduser()
    return Path(settings.store) / OPTIONS_FILE


def load_options(settings: AppSettings) -> dict[str, Any]:
    """Read and validate the server's launch options document ({} when there is none).

    Raises:
        LaunchOptionsError: naming the file and the field, when it is unreadable or invalid (also
            when PARETOLENS_LAUNCH_OPTIONS names a file that does not exist).
    """
    path = options_path(settings)
    if not path.exists():
        if settings.launch_options is not None:
            raise LaunchOptionsError(
                f"PARETOLENS_LAUNCH_OPTIONS names {path}, which does not exist"
            )
        return {}
    try:
        doc = load_yaml(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise LaunchOptionsError(f"launch options {path}: not readable YAML: {exc}") from exc
    if not isinstance(doc, dict):
        raise LaunchOptionsError(f"launch options {path}: expected a mapping of plan fields")
    unknown = sorted(set(doc) - DOCUMENT_FIELDS)
    if unknown:
        raise LaunchOptionsError(
            f"launch options {path}: {unknown[0]}: not a plan field an options document sets "
            f"({', '.join(sorted(DOCUMENT_FIELDS))})"
        )
    for name, model in (("commands", Commands), ("slurm", SlurmOptions), ("github", GithubOptions)):
        if doc.get(name) is not None:
            try:
                model.model_validate(doc[name])
            except ValidationError as exc:
                raise LaunchOptionsError(
                    f"launch options {path}: {plan_error(exc, prefix=name)}"
                ) from exc
    return doc


def parse_options(text: str | None) -> dict[str, Any]:
    """A YAML mapping from text ({} for none).

    Raises:
        PlanError: when the text is not a YAML mapping.
    """
    try:
        doc = load_yaml(text or "") or {}
    except yaml.YAMLError as exc:
        raise PlanError("options", f"not valid YAML: {exc}") from exc
    if not isinstance(doc, dict):
        raise PlanError("options", "expected a mapping (duration_s, timeout_s)")
    return doc


def request_durations(options: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """The durations of a launch request; anything else in it is refused.

    Raises:
        LaunchRequestError: when the request carries a command (or any field but the durations).
    """
    doc = dict(options) if isinstance(options, Mapping) else parse_options(options)
    for key in ("commands", "slurm", "github", "env", "defaults"):
        if key in doc:
            raise LaunchRequestError(
                key,
                f"a launch request may not carry {key}: what runs comes from the server's launch "
                "options document (PARETOLENS_LAUNCH_OPTIONS); the browser chooses points, "
                f"backend and durations ({', '.join(BROWSER_FIELDS)}) only",
            )
    extra = sorted(set(doc) - set(BROWSER_FIELDS))
    if extra:
        raise LaunchRequestError(
            extra[0],
            f"not something a launch request sets; it may set {', '.join(BROWSER_FIELDS)} only",
        )
    try:
        durations = Durations.model_validate(doc)
    except ValidationError as exc:
        raise plan_error(exc) from exc
    return durations.model_dump(exclude_none=True)


def refuse_extra_fields(form: Mapping[str, Any], allowed: Sequence[str]) -> None:
    """Refuse a launch request with a field the API does not take (`commands=...` included).

    Raises:
        LaunchRequestError: naming the field.
    """
    extra = sorted(set(form) - set(allowed))
    if extra:
        name = extra[0]
        words = (
            "a launch request may not carry commands: what runs comes from the server's launch "
            "options document (PARETOLENS_LAUNCH_OPTIONS)"
            if re.search(r"command|script|serve|benchmark|slurm|github|env", name, re.I)
            else "not a field of a launch request"
        )
        raise LaunchRequestError(name, f"{words}; it takes {', '.join(allowed)}")


def default_options(settings: AppSettings) -> str:
    """The durations to prefill the panel with (those of the options document)."""
    try:
        doc = load_options(settings)
    except LaunchOptionsError:
        doc = {}
    lines = [f"{k}: {doc[k]}" for k in BROWSER_FIELDS if doc.get(k) is not None]
    return "\n".join(lines) + "\n" if lines else "timeout_s: 3600\n"


def describe_options(settings: AppSettings) -> str:
    """One line on what the server's options document provides (never its values)."""
    try:
        doc = load_options(settings)
    except LaunchOptionsError as exc:
        return str(exc)
    path = options_path(settings)
    if not doc:
        return (
            f"No launch options document ({path}): the local and slurm backends need its commands."
        )
    have = [k for k in ("commands", "slurm", "github") if doc.get(k) is not None]
    return f"Commands and backend settings come from {path}: {', '.join(have) or 'none'}."


def plan_name(view: RunView, source: Source) -> str:
    """A plan name for a launch from this view."""
    stem = "-".join(view.runs)[:60] or "run"
    return re.sub(r"[^A-Za-z0-9._-]", "-", f"full-{source}-{stem}").strip("-.")[:100]


def launch_from_view(
    source: DataSource,
    settings: AppSettings,
    view: RunView,
    *,
    what: Source,
    point_ids: Sequence[str] = (),
    backend: str,
    options: str | Mapping[str, Any] | None,
    token: str | None,
) -> str:
    """Launch the pruned list (or the given points) of a view; returns the job id.

    `options` holds the request's durations only (YAML text or a mapping); commands and backend
    settings come from the server's options document.

    Raises:
        LaunchRefused: when the runner's gate refuses (disabled, token, listen address).
        LaunchRequestError: when the request carries a command or another field it may not set.
        PlanError: when nothing is selected or the plan is wrong.
        BackendError: when the backend cannot take the plan.
    """
    service.authorize(settings, token, caller=service.Caller.WEB)
    durations = request_durations(options)
    try:
        document = load_options(settings)
    except LaunchOptionsError as exc:
        raise PlanError("launch options", str(exc)) from exc
    data = source.run_data(view)
    if what == "points":
        if not point_ids:
            raise PlanError("points", "no point selected: tick rows in the Points tab first")
        chosen = data.selection(point_ids)
    else:
        chosen = data.pruned
    base = {"name": plan_name(view, what), **document, **durations}
    plan = plan_from_arms(chosen.arms, chosen.kept, base=base, source="web")
    return service.launch(plan, backend, source.store, settings, token=token)

"""The paretolens command line: the composition root. Each command group lives in
`paretolens.commands.<group>` and registers its commands on a Typer app (`register`).

The groups are loaded lazily, so the command line starts fast: `paretolens --help` lists the
commands from `COMMANDS` without importing any group (and so none of polars, pyarrow, dash or
plotly, nor rich's help layout), and a command imports only its own group when it runs. `COMMANDS` names each command's
group and the one-line help its docstring starts with; a test checks both against the groups.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperCommand, TyperGroup

if TYPE_CHECKING:
    # typer's own copy of click (importing click itself would cost a tenth of a second more)
    from typer._click import Command, Context, HelpFormatter

# command -> (its group's module under paretolens.commands, the first paragraph of its help),
# in the order `--help` lists them.
COMMANDS: dict[str, tuple[str, str]] = {
    "ingest": ("ingest_cmds", "Ingest benchmark results into the store."),
    "fetch": ("ingest_cmds", "Fetch a GitHub Actions run's artifacts and ingest them under its run id."),
    "runs": ("catalog_cmds", "List the runs in the store."),
    "points": ("catalog_cmds", "Print the canonical points of runs (with --costs, their cost and energy per token)."),
    "rejects": ("catalog_cmds", "Print the rejected files and rows, and the files read with nothing to store, with why."),
    "analyze": ("analysis_cmds", "One verdict per point: frontier | dominated | post_cliff | invalid | out_of_slo, with\nthe reason; with --at, the arms ranked by their frontier's y at that x."),
    "prune": ("analysis_cmds", "The points worth the full sweep: master-config snippet, JSON, CSV or a test-config line."),
    "al-check": ("analysis_cmds", "Measured acceptance length of every spec-decoding point vs pinned or golden AL."),
    "deltas": ("analysis_cmds", "Treatment vs baseline arms that differ only in --axis, at equal concurrency."),
    "compare": ("analysis_cmds", "Candidate run vs base run: per-arm frontier uplift and per-conc deltas."),
    "table": ("table_cmds", "Print a table of the web app as its export gives it (same view, same bytes)."),
    "history": ("history_cmds", "One configuration across runs in time: each run's arm frontier read at x = --at (PCHIP\nbetween measured points, never extrapolated), oldest run first."),
    "serve": ("serve_cmds", "Serve the web app and print the URL of a sample run page."),
    "store": ("store_cmds", "The store's commits, undo to a version, vacuum old files, upgrade an old store."),
    "demo": ("serve_cmds", "Load the bundled sample runs into the store (those it does not have), to try the app."),
    "plan": ("runner_cmds", "Show the plan a source makes: its points with their stable ids (or the plan as YAML/JSON)."),
    "launch": ("runner_cmds", "Launch a plan on a backend; a detached worker runs it, so closing this terminal is safe."),
    "jobs": ("runner_cmds", "List the jobs of the store, newest first."),
    "job": ("runner_cmds", "Show one job: per-point state, elapsed time, exit code, rows ingested, reason, log dir."),
    "cancel": ("runner_cmds", "Cancel a job: stop every process, Slurm job or workflow run it started."),
    "resume": ("runner_cmds", "Start a worker for a job whose worker died (after a crash or a reboot)."),
    "evals": ("evals_cmds", "Accuracy per arm of a run: its evals (agg_eval_all.json, lm-eval results with\nmeta_env.json, dump eval rows) joined to the arms by configuration, the headline metric at\nthe highest evaluated concurrency. With --axis: each A/B pair's accuracies, flagged when they\ndiffer by more than sqrt(se_b^2 + se_t^2)."),
}  # fmt: skip


def load_group(module: str) -> TyperGroup:
    """The commands of one group (`paretolens.commands.<module>`), imported now."""
    mod = importlib.import_module(f"paretolens.commands.{module}")
    sub = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    mod.register(sub)
    return typer.main.get_group(sub)


class LazyGroup(TyperGroup):
    """The top-level group: lists `COMMANDS` and imports a command's group only to run it or
    show its own help."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._groups: dict[str, TyperGroup] = {}
        self._listing = False

    def list_commands(self, ctx: Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, short = COMMANDS[cmd_name]
        if self._listing:
            return TyperCommand(cmd_name, help=short, short_help=" ".join(short.split()))
        if module not in self._groups:
            self._groups[module] = load_group(module)
        return self._groups[module].get_command(ctx, cmd_name)

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


app = typer.Typer(
    name="paretolens",
    cls=LazyGroup,
    help="Pareto frontiers, post-cliff pruning, AL checks and run comparison for inference sweeps.",
    no_args_is_help=True,
    # click's own help layout for the listing: typer's rich one imports rich's markdown and
    # syntax modules, two thirds of the start-up (each command's own --help stays rich).
    rich_markup_mode=None,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _top() -> None:
    """The commands are listed by `LazyGroup`; this makes `app` a group of them."""


def main() -> None:
    app()


if __name__ == "__main__":
    main()

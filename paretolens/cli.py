"""The paretolens command line: the composition root. Each command group lives in
`paretolens.commands.<group>` and registers itself on `app`."""

from __future__ import annotations

import typer

from paretolens.commands import (
    analysis_cmds,
    evals_cmds,
    history_cmds,
    ingest_cmds,
    runner_cmds,
    serve_cmds,
    store_cmds,
    table_cmds,
)

app = typer.Typer(
    name="paretolens",
    help="Pareto frontiers, post-cliff pruning, AL checks and run comparison for inference sweeps.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

for module in (
    ingest_cmds,
    analysis_cmds,
    table_cmds,
    history_cmds,
    serve_cmds,
    runner_cmds,
    evals_cmds,
    store_cmds,
):
    module.register(app)


def main() -> None:
    app()


if __name__ == "__main__":
    main()

"""The lazy command line (`paretolens.cli`): `COMMANDS` lists exactly the commands the groups
register, each with its group and the first paragraph of its help, in the order of the groups;
`paretolens --help` imports none of the heavy libraries, and a command imports only its group."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import typer

from paretolens import cli

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("polars", "pyarrow", "dash", "plotly", "scipy", "numpy", "pydantic", "paretolens.commands")


def test_the_command_table_matches_the_groups() -> None:
    modules = sorted(p.stem for p in (ROOT / "paretolens" / "commands").glob("*_cmds.py"))
    assert sorted({m for m, _ in cli.COMMANDS.values()}) == modules
    ctx = typer.Context(typer.main.get_command(cli.app))
    for module in modules:
        group = cli.load_group(module)
        names = group.list_commands(ctx)
        assert names == [n for n, (m, _) in cli.COMMANDS.items() if m == module]
        for name in names:
            command = group.get_command(ctx, name)
            assert command is not None and command.help is not None
            assert command.help.split("\n\n")[0].strip() == cli.COMMANDS[name][1], name


def test_listing_the_commands_imports_no_heavy_library() -> None:
    probe = (
        "import sys\n"
        "from paretolens.cli import app\n"
        "try:\n"
        "    app(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(','.join(sorted({{m.split('.')[0] if not m.startswith('paretolens') else m "
        f"for m in sys.modules if m.startswith({HEAVY!r})}})), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "  serve " in done.stdout and "  demo " in done.stdout
    assert done.stderr.strip() == ""


def test_a_command_loads_only_its_own_group() -> None:
    probe = (
        "import sys\n"
        "from paretolens.cli import app\n"
        "try:\n"
        "    app(['jobs', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(','.join(sorted(m for m in sys.modules if m.startswith('paretolens.commands.'))), "
        "file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "paretolens.commands.common,paretolens.commands.runner_cmds"

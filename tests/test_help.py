"""Every command of `ra` and `ra-query` is in the README's command table and answers --help.

The command lists come from the programs themselves (the typer app, `ra-query --help`), so a
new command without a README row or without help fails here.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import BIN, run_cmd

README = Path(__file__).resolve().parent.parent / "README.md"


def _ra_commands() -> list[str]:
    """`ra`'s commands as typed: `update`, `inspect doc`, …"""
    import typer

    from ra_build.cli.app import app

    names: list[str] = []
    for name, command in sorted(typer.main.get_command(app).commands.items()):  # type: ignore[attr-defined]
        subcommands = getattr(command, "commands", None)
        names += [f"{name} {sub}" for sub in sorted(subcommands)] if subcommands else [name]
    return names


def _ra_query_commands() -> list[str]:
    """`ra-query`'s subcommands, as its own --help lists them."""
    usage = subprocess.run(
        [str(BIN / "ra-query"), "--help"], capture_output=True, text=True, check=True
    ).stdout
    listed = re.search(r"\{([a-z,]+)\}", usage)
    assert listed is not None, usage
    return listed.group(1).split(",")


def _table_commands() -> list[str]:
    """The code span opening each row of the README's command table (`ra init [--global] …`)."""
    return re.findall(r"^\| `(ra(?:-query)? [^`]*)` \|", README.read_text(encoding="utf-8"), re.M)


RA = _ra_commands()
RA_QUERY = _ra_query_commands()


def test_the_command_lists_are_read_from_the_programs() -> None:
    assert {"update", "search", "inspect doc", "mcp"} <= set(RA)
    assert {"search", "get", "mcp"} <= set(RA_QUERY)


@pytest.mark.parametrize("command", RA)
def test_every_ra_command_has_a_row_in_the_readme_command_table(command: str) -> None:
    assert any(re.match(rf"ra {re.escape(command)}( |$)", row) for row in _table_commands())


@pytest.mark.parametrize("command", RA_QUERY)
def test_every_ra_query_command_has_a_row_in_the_readme_command_table(command: str) -> None:
    pattern = rf"ra-query (\[--artifacts DIR\] )?{re.escape(command)}( |$)"
    assert any(re.match(pattern, row) for row in _table_commands())


@pytest.mark.parametrize("command", RA)
def test_every_ra_command_answers_help_with_its_usage(command: str, tmp_path: Path) -> None:
    run = run_cmd("ra", *command.split(), "--help", cwd=tmp_path, home=tmp_path)
    assert run.code == 0 and run.err == ""
    assert "usage:" in run.out.lower() and command.split()[-1] in run.out


@pytest.mark.parametrize("command", RA_QUERY)
def test_every_ra_query_command_answers_help_with_its_usage(command: str, tmp_path: Path) -> None:
    run = run_cmd("ra-query", command, "--help", cwd=tmp_path, home=tmp_path)
    assert run.code == 0 and run.err == ""
    assert run.out.startswith(f"usage: ra-query {command}")

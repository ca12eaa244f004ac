"""Usage errors, versions, completion and `--` at both command lines, as a user meets them.

A mistake in how a command is called is typer's (or argparse's) usage message and exit 2 — never
`internal error` and exit 70 — for every command of `ra` and `ra-query`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from ra_query.version import __version__
from tests.conftest import BIN, Run, built_copy, run_cmd

COMMANDS = Path(__file__).parent / "fixtures" / "commands"
RaFn = Callable[..., Run]

RA_COMMANDS = [
    "init", "config", "update", "status", "ls", "check", "get", "mcp", "inspect doc", "inspect ctx", "search",
    "context", "likethis", "agents", "pack",
]  # fmt: skip


def assert_usage_error(run: Run, prog: str) -> None:
    assert run.code == 2, (run.code, run.err)
    assert "internal error" not in run.err
    assert run.err.lower().startswith(f"usage: {prog}"), run.err
    assert run.out == ""


@pytest.mark.parametrize("command", RA_COMMANDS)
def test_an_unknown_option_of_any_ra_command_is_a_usage_error(ra: RaFn, command: str) -> None:
    assert_usage_error(ra(*command.split(), "--bogus", "x"), f"ra {command}")


@pytest.mark.parametrize(
    "args",
    [["bogus"], ["get"], ["update", "--bogus"], ["ls", "docs", "a", "extra"], ["inspect", "doc"], ["search"]],
    ids=["unknown-command", "get-without-id", "unknown-option", "extra-argument", "missing-file", "no-query"],
)
def test_a_mistaken_ra_call_prints_the_usage_and_exits_2(ra: RaFn, args: list[str]) -> None:
    run = ra(*args)
    assert_usage_error(run, "ra")
    assert "error" in run.err.lower()


@pytest.mark.parametrize(
    ("args", "prog"),
    [
        (["update", "--full=x"], "ra update"),
        (["status", "--json=x"], "ra status"),
        (["update", "--cluster"], "ra update"),
    ],
    ids=["flag-given-a-value", "json-flag-given-a-value", "option-without-its-value"],
)
def test_an_option_given_or_missing_its_value_prints_the_commands_usage_and_exits_2(
    ra: RaFn, args: list[str], prog: str
) -> None:
    run = ra(*args)
    assert_usage_error(run, prog)
    assert run.err.rstrip().splitlines()[-1].startswith("Error: Option '--")


@pytest.mark.parametrize(
    "args",
    [["bogus"], ["search"], ["get"], ["search", "--bogus", "x"], ["get", "a", "b"], ["mcp", "--bogus"]],
    ids=["unknown-command", "no-query", "get-without-id", "unknown-option", "extra-argument", "mcp-option"],
)
def test_a_mistaken_ra_query_call_prints_the_usage_and_exits_2(
    tmp_path: Path, home: Path, args: list[str]
) -> None:
    assert_usage_error(run_cmd("ra-query", *args, cwd=tmp_path, home=home), "ra-query")


def test_ra_version_prints_the_version(ra: RaFn) -> None:
    assert ra("--version") == Run(0, f"ra {__version__}\n", "")


def test_ra_query_version_prints_the_version(tmp_path: Path, home: Path) -> None:
    assert run_cmd("ra-query", "--version", cwd=tmp_path, home=home) == Run(
        0, f"ra-query {__version__}\n", ""
    )


def test_ra_prints_a_bash_completion_script(tmp_path: Path, home: Path) -> None:
    """The shell is detected from the parent processes: run under bash, whatever started pytest.

    (`; exit $?` keeps bash from exec-ing ra, which would leave no shell among its parents.)
    """
    import os
    import subprocess

    env = {**os.environ, "HOME": str(home)}
    script = f"'{BIN / 'ra'}' --show-completion; exit $?"
    run = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert run.returncode == 0 and "_RA_COMPLETE=complete_bash" in run.stdout


def test_ra_completes_a_command_name(ra: RaFn) -> None:
    run = ra(env={"_RA_COMPLETE": "complete_bash", "COMP_WORDS": "ra sea", "COMP_CWORD": "1"})
    assert (run.code, run.out.split()) == (0, ["search"])


# ---- queries that start with a dash --------------------------------------------------------------


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return built_copy(COMMANDS, tmp_path_factory.mktemp("dash"))


@pytest.mark.parametrize("program", ["ra", "ra-query"])
def test_a_query_after_a_double_dash_reaches_the_query_parser(pages: tuple[Path, Path], program: str) -> None:
    kb, home = pages
    run = run_cmd(program, "search", "--json", "--", "--tar", cwd=kb, home=home)
    assert run.code == 0, run.err
    assert '"query": "--tar"' in run.out


@pytest.mark.parametrize("program", ["ra", "ra-query"])
def test_a_short_flag_after_a_double_dash_is_searched_not_excluded(
    pages: tuple[Path, Path], program: str
) -> None:
    kb, home = pages
    run = run_cmd(program, "search", "--json", "--", "-sh", cwd=kb, home=home)
    assert run.code == 0, run.err
    assert orjson.loads(run.out)["queries"][0]["results"][0]["id"] == "pages:du.md#du"


@pytest.mark.parametrize("program", ["ra", "ra-query"])
def test_an_exclusion_after_a_double_dash_is_read_as_one(pages: tuple[Path, Path], program: str) -> None:
    kb, home = pages
    run = run_cmd(program, "search", "--", "-food", cwd=kb, home=home)
    assert (run.code, run.err) == (1, "")
    assert run.out == "note: query syntax error at column 1 (only negations); found no words to search for\n"

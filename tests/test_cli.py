"""The `ra` command line as a user runs it: real processes, real files, exit codes."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from tests.conftest import CORPUS, Run, drain

RaFn = Callable[..., Run]


def test_init_then_update_then_search_works_in_an_empty_project(ra: RaFn, tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("# Guide\n\nThe pool is small.\n", encoding="utf-8")
    assert ra("init").code == 0
    update = ra("update")
    assert update.code == 0, update.err
    assert "1 files, 2 chunks" in update.out
    found = ra("search", "pool")
    assert found.code == 0, found.err
    assert "─── docs:guide.md#guide ───" in found.out


def test_init_refuses_to_overwrite_without_force(ra: RaFn) -> None:
    assert ra("init").code == 0
    again = ra("init")
    assert again.code == 2
    assert "already exists" in again.err and "--force" in again.err
    assert ra("init", "--force").code == 0


def test_malformed_toml_is_one_line_naming_file_and_line(ra: RaFn, tmp_path: Path) -> None:
    (tmp_path / ".ra.toml").write_text("[settings]\ndefault_limit = 5\nbroken = = 1\n", encoding="utf-8")
    result = ra("config")
    assert result.code == 2
    assert result.err.count("\n") == 1
    assert f"{tmp_path / '.ra.toml'}:3" in result.err
    assert "Traceback" not in result.err


def test_a_tree_path_that_does_not_exist_is_an_error_with_exit_2(ra: RaFn, tmp_path: Path) -> None:
    (tmp_path / ".ra.toml").write_text('[tree.docs]\npath = "./nope"\n', encoding="utf-8")
    result = ra("update")
    assert result.code == 2
    assert "nope" in result.err and "does not exist" in result.err


def test_a_wrong_type_names_the_key(ra: RaFn, tmp_path: Path) -> None:
    (tmp_path / ".ra.toml").write_text("[search]\nstemmer = 3\n", encoding="utf-8")
    result = ra("config")
    assert result.code == 2
    assert "stemmer" in result.err and ":2" in result.err


def test_config_shows_where_each_tree_came_from(ra: RaFn, tmp_path: Path) -> None:
    shutil.copytree(CORPUS, tmp_path / "kb")
    result = ra("config", cwd=tmp_path / "kb")
    assert result.code == 0, result.err
    assert "[tree.docs]" in result.out
    assert str(tmp_path / "kb" / ".ra.toml") in result.out


def test_inspect_rejects_a_file_that_is_not_utf8(ra: RaFn, tmp_path: Path) -> None:
    (tmp_path / "bad.md").write_bytes(b"# Title\n\ncaf\xe9\n")
    result = ra("inspect", "doc", "bad.md")
    assert result.code == 2
    assert result.err.startswith("ra: error: bad.md: not valid UTF-8")
    assert result.err.count("\n") == 1


def test_inspect_of_a_missing_file_says_so(ra: RaFn) -> None:
    result = ra("inspect", "doc", "missing.md")
    assert (result.code, result.err) == (2, "ra: error: missing.md: no such file\n")


def test_inspect_chunks_a_document_with_malformed_frontmatter_and_warns(ra: RaFn, tmp_path: Path) -> None:
    (tmp_path / "doc.md").write_text("---\ntitle: [unclosed\n---\n\n# Real\n\nBody.\n", encoding="utf-8")
    result = ra("inspect", "doc", "doc.md")
    assert result.code == 0, result.err
    assert "malformed YAML" in result.out
    assert "#real" in result.out


def test_inspect_uses_the_tree_name_and_relative_path_of_a_configured_tree(ra: RaFn, tmp_path: Path) -> None:
    shutil.copytree(CORPUS, tmp_path / "kb")
    result = ra("inspect", "doc", "guides/errors.md", cwd=tmp_path / "kb")
    assert result.code == 0, result.err
    assert "docs:guides/errors.md#the-result-type" in result.out
    assert 'Title: "Error Handling" (from frontmatter)' in result.out


def test_search_with_no_match_exits_1_and_says_so(ra: RaFn, tmp_path: Path) -> None:
    shutil.copytree(CORPUS, tmp_path / "kb")
    result = ra("search", "xylophone", cwd=tmp_path / "kb")
    assert result.code == 1
    assert "no results" in result.out


def test_ra_without_a_config_explains_how_to_start(ra: RaFn) -> None:
    result = ra("update")
    assert result.code == 2
    assert "ra init" in result.err


def test_update_draws_a_progress_bar_on_a_terminal_and_not_when_piped(
    ra: RaFn, tmp_path: Path, home: Path
) -> None:
    import os
    import pty
    import subprocess
    import sys

    for i in range(30):
        (tmp_path / f"doc{i}.md").write_text(f"# Doc {i}\n\nbody {i}\n", encoding="utf-8")
    (tmp_path / ".ra.toml").write_text('root = true\n[tree.t]\npath = "."\n', encoding="utf-8")
    main, child = pty.openpty()
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "")}
    with subprocess.Popen(
        [str(Path(sys.executable).parent / "ra"), "update"],
        cwd=tmp_path,
        env=env,
        stdin=child,
        stdout=subprocess.PIPE,
        stderr=child,
    ) as proc:
        os.close(child)
        out, _ = proc.communicate(timeout=120)
        screen = drain(main)
    os.close(main)
    assert proc.returncode == 0
    assert b"30/30 files" in screen and b"[####" in screen
    assert b"30 files, 60 chunks" in out
    (tmp_path / "doc0.md").write_text("# Doc 0\n\nchanged\n", encoding="utf-8")
    piped = ra("update")
    assert piped.err == ""


def test_every_command_in_ra_help_is_documented_in_the_readme(ra: RaFn) -> None:
    import re

    helped = ra("--help").out
    commands = re.findall(r"^│ (\w+) ", helped, flags=re.MULTILINE)
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    assert {"init", "config", "update", "status", "ls", "check", "search", "inspect"} <= set(commands)
    assert [c for c in commands if f"`ra {c}" not in readme] == []


def test_inspect_of_a_file_that_is_not_markdown_text_or_code_says_so(ra: RaFn, tmp_path: Path) -> None:
    notes = tmp_path / "notes.adoc"
    notes.write_text("= Title\n", encoding="utf-8")
    run = ra("inspect", "doc", str(notes))
    assert run.code == 0
    assert run.err.startswith(
        f"ra: warning: {notes}: not a markdown, reStructuredText, text or code file (.md, .rst, .txt, .py, .go, …)"
    )


def test_inspect_of_an_rst_page_shows_its_sections_without_a_warning(ra: RaFn, tmp_path: Path) -> None:
    notes = tmp_path / "notes.rst"
    notes.write_text("Title\n=====\n\nIntro.\n\nUsage\n-----\n\nRun it.\n", encoding="utf-8")
    run = ra("inspect", "doc", str(notes))
    assert run.code == 0 and "warning" not in run.err, run.err
    assert "Usage" in run.out


def test_inspect_of_a_code_file_lists_its_definitions_with_their_lines(ra: RaFn, tmp_path: Path) -> None:
    script = tmp_path / "tool.py"
    script.write_text(
        "# a comment, not a heading to python\ndef main():\n    print('hi')\n", encoding="utf-8"
    )
    run = ra("inspect", "doc", str(script))
    assert run.code == 0, run.err
    assert run.err == ""
    assert "Type: code (python)" in run.out
    assert '     Symbol: main (function)\n     Title: "def main()"' in run.out
    assert "     Lines: 1-3" in run.out


def test_inspect_of_a_code_file_lists_the_fields_a_type_declares(ra: RaFn, tmp_path: Path) -> None:
    source = tmp_path / "opts.go"
    source.write_text(
        "package x\n\ntype Options struct {\n\tHeight int\n\tPreview string\n}\n", encoding="utf-8"
    )
    run = ra("inspect", "doc", str(source))
    assert run.code == 0, run.err
    assert (
        '     Symbol: Options (type)\n     Declares: Options.Height, Options.Preview\n     Title: "'
        in run.out
    )


def test_inspect_of_a_code_file_says_what_a_wrapper_forwards_to(ra: RaFn, tmp_path: Path) -> None:
    source = tmp_path / "conf.go"
    source.write_text("package x\n\nfunc Get(key string) any { return v.Get(key) }\n", encoding="utf-8")
    run = ra("inspect", "doc", str(source))
    assert run.code == 0, run.err
    assert '     Symbol: Get (function)\n     Forwards to: v.Get\n     Title: "' in run.out

"""`ra agents` (issue 12, DECISIONS 27): agent instruction files that teach agents to use ra."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Run, build, run_cmd


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "a.md").write_text("# A\n\ntext\n", encoding="utf-8")
    (root / ".ra.toml").write_text('root = true\n\n[tree.docs]\npath = "docs"\n', encoding="utf-8")
    return root


def agents(project: Path, home: Path, *args: str) -> Run:
    return run_cmd("ra", "agents", *args, cwd=project, home=home)


def test_agents_md_is_the_project_template_then_the_global_one_then_the_ra_section(
    project: Path, home: Path
) -> None:
    (project / ".agents.md").write_text("# Project rules\n\nUse tabs.\n", encoding="utf-8")
    (home / ".agents.md").write_text("# My habits\n\nBe brief.\n", encoding="utf-8")
    run = agents(project, home)
    assert run.code == 0, run.err
    text = (project / "AGENTS.md").read_text(encoding="utf-8")
    assert text.index("# Project rules") < text.index("# My habits") < text.index("## ra knowledge base")
    assert "Trees: `docs` (docs)." in text
    assert "`ra context path/to/file.py`" in text and "`ra search" in text


def test_running_it_twice_changes_nothing_the_second_time(project: Path, home: Path) -> None:
    agents(project, home)
    first = (project / "AGENTS.md").stat().st_mtime_ns
    run = agents(project, home)
    assert run.code == 0 and run.out == ""
    assert run.err == f"{project / 'AGENTS.md'}: up to date\n"
    assert (project / "AGENTS.md").stat().st_mtime_ns == first


def test_the_generated_section_stays_under_two_kilobytes_however_many_trees(
    project: Path, home: Path
) -> None:
    config = project / ".ra.toml"
    for i in range(60):
        (project / f"tree-number-{i:02d}").mkdir()
        config.write_text(
            config.read_text(encoding="utf-8")
            + f'\n[tree.tree_with_a_long_name_{i:02d}]\npath = "tree-number-{i:02d}"\n',
            encoding="utf-8",
        )
    text = agents(project, home, "--stdout").out
    assert len(text.encode()) < 2048
    assert "more (`ra ls trees`)" in text


def test_claude_gemini_and_all_write_the_other_files(project: Path, home: Path) -> None:
    agents(project, home, "--claude")
    assert (project / "AGENTS.md").is_file() and (project / "CLAUDE.md").is_file()
    assert not (project / "GEMINI.md").exists()
    agents(project, home, "--all")
    texts = {(project / name).read_text(encoding="utf-8") for name in ("AGENTS.md", "CLAUDE.md", "GEMINI.md")}
    assert len(texts) == 1


def test_stdout_prints_the_file_and_writes_nothing(project: Path, home: Path) -> None:
    run = agents(project, home, "--stdout")
    assert run.code == 0 and run.out.startswith("## ra knowledge base")
    assert not (project / "AGENTS.md").exists()


def test_diff_shows_what_would_change_and_writes_nothing(project: Path, home: Path) -> None:
    (project / "AGENTS.md").write_text("old text\n", encoding="utf-8")
    run = agents(project, home, "--diff")
    assert run.code == 0
    assert "-old text\n" in run.out and "+## ra knowledge base\n" in run.out
    assert (project / "AGENTS.md").read_text(encoding="utf-8") == "old text\n"


def test_writing_shows_the_change_unless_quiet(project: Path, home: Path) -> None:
    assert "+## ra knowledge base" in agents(project, home).out
    (project / ".agents.md").write_text("# New rule\n", encoding="utf-8")
    run = agents(project, home, "--quiet")
    assert run.out == "" and run.err == f"{project / 'AGENTS.md'}: written\n"
    assert (
        (project / "AGENTS.md").read_text(encoding="utf-8").startswith("# New rule\n\n## ra knowledge base")
    )


CODE_CONFIG = """root = true

[tree.docs]
path = "docs"

[tree.repo]
path = "repo"
include = ["**/*"]
"""


def code_project(root: Path) -> Path:
    """A project whose tree `repo` holds two Python files and one Go file; its include (`**/*`)
    names no language, so only an index can tell that it holds code."""
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "a.md").write_text("# A\n\nUse the client.\n", encoding="utf-8")
    (root / "repo").mkdir()
    (root / "repo" / "client.py").write_text(
        'class Client:\n    def send(self, request):\n        """Send it, retrying."""\n', encoding="utf-8"
    )
    (root / "repo" / "retry.py").write_text(
        "def backoff(attempt):\n    return 2**attempt\n", encoding="utf-8"
    )
    (root / "repo" / "pool.go").write_text(
        "package pool\n\n// Get takes a connection.\nfunc Get() int { return 1 }\n", encoding="utf-8"
    )
    (root / ".ra.toml").write_text(CODE_CONFIG, encoding="utf-8")
    return root


def test_a_tree_with_indexed_code_is_told_how_to_find_a_definition_narrow_a_search_and_get_one(
    tmp_path: Path, home: Path
) -> None:
    root = code_project(tmp_path / "project")
    build(root, home)
    text = agents(root, home, "--stdout").out
    assert "- Python and Go code in `repo`: a definition by what it does\n" in text  # most files first
    assert '(`ra search "where are retries scheduled"`) or by its name (`ra search Client.send`)' in text
    assert "`--kind code|docs|upstream` and `lang:python` narrow a search" in text
    assert "`ra get tree:path#Class.method` prints one definition" in text
    assert len(text.encode()) < 2048


def test_an_indexed_tree_without_code_is_told_nothing_of_code_whatever_its_globs_name(
    project: Path, home: Path
) -> None:
    config = project / ".ra.toml"
    config.write_text(
        config.read_text(encoding="utf-8") + 'include = ["**/*.md", "**/*.py"]\n', encoding="utf-8"
    )
    build(project, home)  # no .py file: the index has markdown only
    text = agents(project, home, "--stdout").out
    assert (
        "code in" not in text and "--kind" not in text and "lang:" not in text and "#Class.method" not in text
    )


def test_before_the_first_build_the_include_globs_say_which_trees_hold_code(
    project: Path, home: Path
) -> None:
    (project / "svc").mkdir()
    config = project / ".ra.toml"
    config.write_text(
        config.read_text(encoding="utf-8")
        + '\n[tree.svc]\npath = "svc"\ninclude = ["**/*.go", "**/*.yaml"]\n',
        encoding="utf-8",
    )
    text = agents(project, home, "--stdout").out
    assert "- Go code in `svc`: a definition by what it does" in text and "`lang:go`" in text


def test_the_section_stays_under_two_kilobytes_with_code_in_many_trees(project: Path, home: Path) -> None:
    config = project / ".ra.toml"
    text = config.read_text(encoding="utf-8")
    for i in range(60):
        (project / f"service-{i:02d}").mkdir()
        text += (
            f'\n[tree.service_with_a_long_name_{i:02d}]\npath = "service-{i:02d}"\ninclude = ["**/*.rs"]\n'
        )
    config.write_text(text, encoding="utf-8")
    out = agents(project, home, "--stdout").out
    assert len(out.encode()) < 2048
    assert (
        "- Rust code in `service_with_a_long_name_00`, " in out
        and "more: a definition by what it does" in out
    )

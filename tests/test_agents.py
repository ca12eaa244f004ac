"""`ra agents` (issue 12, DECISIONS 27): agent instruction files that teach agents to use ra."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Run, run_cmd


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

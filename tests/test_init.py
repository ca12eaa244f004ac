"""Tests for ra_build.config.starter: the starter config, .gitignore handling, --force and --global."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from ra_build.config.load import load_config
from ra_build.config.model import DEFAULT_INCLUDE, ContextSettings, SearchSettings, Settings
from ra_build.config.starter import init_config, tree_name_for
from ra_query.errors import ConfigError, InputError


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "work" / "My Project"
    path.mkdir(parents=True)
    return path


def test_init_with_a_docs_folder_writes_a_docs_tree_that_loads(project: Path, home: Path) -> None:
    (project / "docs").mkdir()
    result = init_config(project, home)
    config = load_config(project, home)
    assert result.path == project / ".ra.toml"
    assert (result.tree_name, result.tree_path) == ("docs", project / "docs")
    assert config.trees["docs"].path == project / "docs"
    assert config.trees["docs"].include == DEFAULT_INCLUDE
    assert not config.trees["docs"].is_global
    assert config.warnings == ()


def test_init_without_docs_indexes_the_folder_under_its_own_name(project: Path, home: Path) -> None:
    result = init_config(project, home)
    config = load_config(project, home)
    assert (result.tree_name, result.tree_path) == ("my-project", project)
    tree = config.trees["my-project"]
    assert tree.path == project
    assert tree.exclude == (".ra/**",)  # node_modules/, .venv/ …: every tree's default excludes
    assert (tree.default_excludes, tree.gitignore) == (True, True)
    assert config.warnings == ()


def test_starter_config_documents_every_section_as_comments(project: Path, home: Path) -> None:
    text = init_config(project, home).path.read_text(encoding="utf-8")
    for header in ("[settings]", "[search]", "[search.boost]", "[context]", "[[context.rules]]"):
        assert f"# {header}" in text
    assert '# stemmer = "english"' in text
    assert set(tomllib.loads(text)) == {"tree"}


def test_starter_config_with_every_line_uncommented_loads_the_defaults(project: Path, home: Path) -> None:
    (project / "docs").mkdir()
    path = init_config(project, home).path
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text(
        "\n".join(
            line[2:] if line.startswith("# ") and ("=" in line or line.startswith("# [")) else line
            for line in lines
        ),
        encoding="utf-8",
    )
    config = load_config(project, home)
    assert config.warnings == ()
    assert (config.settings, config.search, config.context) == (
        Settings(),
        SearchSettings(),
        ContextSettings(),
    )
    assert config.rules[0].include == ("docs:api/overview.md",)
    assert config.trees["docs"].exclude == ("drafts/**",)


def test_tree_names_are_sanitised_from_directory_names() -> None:
    assert tree_name_for(Path("/x/My Project")) == "my-project"
    assert tree_name_for(Path("/x/notes.v2")) == "notes-v2"
    assert tree_name_for(Path("/x/under_score")) == "under_score"
    assert tree_name_for(Path("/x/...")) == "project"


def test_init_in_a_git_repo_adds_ra_to_gitignore(project: Path, home: Path) -> None:
    (project.parent / ".git").mkdir()
    result = init_config(project, home)
    assert result.gitignore == project / ".gitignore"
    assert (project / ".gitignore").read_text(encoding="utf-8") == ".ra/\n"


def test_init_treats_a_git_file_as_a_repository_too(project: Path, home: Path) -> None:
    (project / ".git").write_text("gitdir: ../elsewhere\n", encoding="utf-8")
    assert init_config(project, home).gitignore == project / ".gitignore"


def test_init_appends_to_a_gitignore_without_a_final_newline(project: Path, home: Path) -> None:
    (project / ".git").mkdir()
    (project / ".gitignore").write_text("build/", encoding="utf-8")
    init_config(project, home)
    assert (project / ".gitignore").read_text(encoding="utf-8") == "build/\n.ra/\n"


def test_init_adds_ra_to_gitignore_only_once(project: Path, home: Path) -> None:
    (project / ".git").mkdir()
    init_config(project, home)
    second = init_config(project, home, force=True)
    assert second.gitignore is None
    assert (project / ".gitignore").read_text(encoding="utf-8").count(".ra/") == 1


def test_init_outside_a_git_repo_leaves_gitignore_alone(project: Path, home: Path) -> None:
    assert init_config(project, home).gitignore is None
    assert not (project / ".gitignore").exists()


def test_init_refuses_to_overwrite_an_existing_config(project: Path, home: Path) -> None:
    (project / ".ra.toml").write_text("# mine\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        init_config(project, home)
    assert info.value.message == f"{project / '.ra.toml'} already exists — use --force to overwrite"
    assert info.value.exit_code == 2
    assert (project / ".ra.toml").read_text(encoding="utf-8") == "# mine\n"


def test_init_with_force_overwrites_an_existing_config(project: Path, home: Path) -> None:
    (project / ".ra.toml").write_text("# mine\n", encoding="utf-8")
    init_config(project, home, force=True)
    assert "[tree.my-project]" in (project / ".ra.toml").read_text(encoding="utf-8")


def test_init_leaves_no_temporary_files_behind(project: Path, home: Path) -> None:
    init_config(project, home)
    assert sorted(p.name for p in project.iterdir()) == [".ra.toml"]


def test_init_in_a_missing_directory_is_an_input_error(tmp_path: Path, home: Path) -> None:
    with pytest.raises(InputError):
        init_config(tmp_path / "absent", home)


def test_local_init_in_the_home_folder_points_to_global(home: Path) -> None:
    with pytest.raises(InputError, match="use: ra init --global"):
        init_config(home, home)
    assert not (home / ".ra.toml").exists()


def test_global_init_writes_home_config_with_a_notes_tree(tmp_path: Path, home: Path, project: Path) -> None:
    result = init_config(project, home, global_=True)
    assert result.path == home / ".ra.toml"
    assert result.created_dirs == (home / "notes",)
    assert result.gitignore is None
    assert not (project / ".ra.toml").exists()
    config = load_config(tmp_path, home)
    assert config.trees["notes"].path == home / "notes"
    assert config.trees["notes"].is_global
    assert config.warnings == ()


def test_global_init_keeps_an_existing_notes_folder(home: Path, project: Path) -> None:
    (home / "notes").mkdir()
    (home / "notes" / "a.md").write_text("# a\n", encoding="utf-8")
    assert init_config(project, home, global_=True).created_dirs == ()
    assert (home / "notes" / "a.md").exists()


def test_global_init_refuses_to_overwrite_without_force(home: Path, project: Path) -> None:
    (home / ".ra.toml").write_text("", encoding="utf-8")
    with pytest.raises(ConfigError, match="already exists — use --force"):
        init_config(project, home, global_=True)

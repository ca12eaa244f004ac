"""Symlinks out of a tree are never indexed unless the tree opts in, nor links to what the tree
excludes, and every run says so."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from ra_build.pipeline.chunk_stage import ChunkSettings, parse_file
from tests.conftest import Run, run_cmd

RaFn = Callable[..., Run]
SECRET = "root:x:0:0:the secret line\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose tree holds a page, a link to it, and a link to a file outside the tree."""
    kb = tmp_path / "kb"
    (kb / "docs").mkdir(parents=True)
    (kb / ".ra.toml").write_text('root = true\n\n[tree.docs]\npath = "docs"\n', encoding="utf-8")
    (kb / "docs" / "page.md").write_text("# Page\n\nThe page text.\n", encoding="utf-8")
    os.symlink("page.md", kb / "docs" / "alias.md")
    (tmp_path / "secret.md").write_text(SECRET, encoding="utf-8")
    os.symlink(tmp_path / "secret.md", kb / "docs" / "x.md")
    return kb


def outside_warning(kb: Path) -> str:
    return (
        f"symlink to {kb.parent / 'secret.md'}, outside the tree — not indexed "
        "(allow_outside_links = true in the tree's section indexes it)"
    )


def test_a_link_out_of_the_tree_is_not_indexed_and_update_says_so(ra: RaFn, project: Path) -> None:
    run = ra("update", cwd=project)
    assert run.code == 0, run.err
    assert f"ra: warning: docs:x.md: {outside_warning(project)}\n" in run.err
    assert ra("get", "docs:x.md", cwd=project).code == 1
    assert "secret line" not in ra("search", "secret line", cwd=project).out


def test_nothing_of_the_outside_file_reaches_the_artifacts(ra: RaFn, project: Path) -> None:
    assert ra("update", cwd=project).code == 0
    for path in (project / ".ra").rglob("*"):
        if path.is_file():
            assert b"secret line" not in path.read_bytes(), path


def test_a_link_inside_the_tree_is_indexed(ra: RaFn, project: Path) -> None:
    assert ra("update", cwd=project).code == 0
    run = ra("get", "docs:alias.md", cwd=project)
    assert run.code == 0 and "The page text." in run.out


def test_an_update_that_parses_nothing_still_names_the_skipped_link(ra: RaFn, project: Path) -> None:
    assert ra("update", cwd=project).code == 0
    again = ra("update", cwd=project)
    assert again.code == 0 and "0 parsed" in again.out
    assert f"ra: warning: docs:x.md: {outside_warning(project)}\n" in again.err


def test_check_reports_the_link_in_the_documented_form(ra: RaFn, project: Path) -> None:
    assert ra("update", cwd=project).code == 0
    run = ra("check", cwd=project)
    assert run.code == 1
    assert f"ra: warning: {project / 'docs' / 'x.md'}: {outside_warning(project)}\n" in run.out


def test_ra_query_does_not_count_the_skipped_link_as_stale(ra: RaFn, project: Path, home: Path) -> None:
    assert ra("update", cwd=project).code == 0
    run = run_cmd("ra-query", "search", "--json", "page", cwd=project, home=home)
    assert '"stale": 0' in run.out


def test_a_tree_that_opts_in_indexes_links_out_of_it(ra: RaFn, project: Path) -> None:
    config = project / ".ra.toml"
    config.write_text(config.read_text(encoding="utf-8") + "allow_outside_links = true\n", encoding="utf-8")
    assert ra("update", cwd=project).code == 0
    run = ra("get", "docs:x.md", cwd=project)
    assert run.code == 0 and "secret line" in run.out


def test_allow_outside_links_must_be_a_boolean(ra: RaFn, project: Path) -> None:
    config = project / ".ra.toml"
    config.write_text(config.read_text(encoding="utf-8") + 'allow_outside_links = "yes"\n', encoding="utf-8")
    run = ra("update", cwd=project)
    assert run.code == 2
    assert run.err == (
        f"ra: error: {config}:5: [tree.docs] allow_outside_links must be a boolean (true or false), got string\n"
    )


def test_a_file_that_became_a_link_out_of_the_tree_after_discovery_is_never_read(project: Path) -> None:
    parsed = parse_file("docs", str(project / "docs"), "x.md", ChunkSettings(10_000_000, 50_000))
    assert parsed.chunks == [] and parsed.row.status == "error"
    assert parsed.row.error == outside_warning(project)


def test_a_refresh_before_a_search_warns_on_stderr_about_what_it_skipped(ra: RaFn, project: Path) -> None:
    assert ra("update", cwd=project).code == 0
    (project / "docs" / "blob.md").write_bytes(b"\0\1\2")
    run = ra("search", "page", cwd=project)
    assert run.code == 0
    assert "ra: warning: docs:blob.md: binary file\n" in run.err
    assert "warning" not in run.out
    assert "warning" not in ra("search", "page", cwd=project).err  # nothing changed: nothing to say


def test_a_link_out_of_the_tree_is_not_counted_as_removed_at_every_build(
    project: Path, tmp_path: Path
) -> None:
    """Its error row is rewritten each run; no chunk shard is rewritten for it."""
    from ra_build.config.load import load_config
    from ra_build.pipeline.run import run_build

    home = tmp_path / "home"
    home.mkdir()
    run_build(load_config(project, home), project / ".ra")
    parts = {p: p.stat().st_mtime_ns for p in (project / ".ra" / "chunks" / "docs").glob("part-*.parquet")}
    (project / "docs" / "new.md").write_text("# New\n\nA new page.\n", encoding="utf-8")
    report = run_build(load_config(project, home), project / ".ra")
    assert report.results["chunk:docs"]["removed"] == []
    rewritten = [p.name for p, mtime in parts.items() if p.stat().st_mtime_ns != mtime]
    assert len(rewritten) == 1  # the part that takes new.md, not the one of x.md as well


def test_a_link_to_a_file_the_tree_excludes_is_not_indexed_and_update_says_so(
    ra: RaFn, project: Path
) -> None:
    (project / ".ra.toml").write_text(
        'root = true\n\n[tree.docs]\npath = "docs"\nexclude = ["drafts/"]\n', encoding="utf-8"
    )
    (project / "docs" / "drafts").mkdir()
    (project / "docs" / "drafts" / "plan.md").write_text(
        "# Plan\n\nThe unannounced plan.\n", encoding="utf-8"
    )
    os.symlink("drafts/plan.md", project / "docs" / "current.md")
    run = ra("update", cwd=project)
    assert run.code == 0, run.err
    reason = "symlink to drafts/plan.md, which the tree's exclude patterns skip — not indexed"
    assert f"ra: warning: docs:current.md: {reason}\n" in run.err
    assert ra("get", "docs:current.md", cwd=project).code == 1
    assert "unannounced" not in ra("search", "unannounced plan", cwd=project).out

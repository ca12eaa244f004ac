"""Discovery: which files of a tree are selected (DECISIONS 9–10)."""

import dataclasses
import os
from pathlib import Path

from ra_build.config.model import DEFAULT_INCLUDE, TreeConfig
from ra_build.pipeline.discover import discover_tree


def _tree(
    root: Path, include: tuple[str, ...] = DEFAULT_INCLUDE, exclude: tuple[str, ...] = ()
) -> TreeConfig:
    return TreeConfig("docs", root, include, exclude, False, root / ".ra.toml", 1)


def _write(root: Path, rel: str, text: str = "x\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _paths(tree: TreeConfig) -> list[str]:
    return [f.path for f in discover_tree(tree).files]


def test_default_include_selects_markdown_restructuredtext_and_text_in_every_directory(
    tmp_path: Path,
) -> None:
    for rel in ("a.md", "b.txt", "c.rst", "sub/d.md", "sub/deeper/e.txt", "img.png", "f.adoc"):
        _write(tmp_path, rel)
    assert _paths(_tree(tmp_path)) == ["a.md", "b.txt", "c.rst", "sub/d.md", "sub/deeper/e.txt"]


def test_exclude_wins_over_include(tmp_path: Path) -> None:
    _write(tmp_path, "keep.md")
    _write(tmp_path, "drafts/skip.md")
    assert _paths(_tree(tmp_path, exclude=("**/drafts/**",))) == ["keep.md"]


def test_markdown_extension_is_included_only_when_a_pattern_names_it(tmp_path: Path) -> None:
    _write(tmp_path, "a.markdown")
    assert _paths(_tree(tmp_path)) == []
    assert _paths(_tree(tmp_path, include=("**/*.markdown",))) == ["a.markdown"]


def test_dot_files_and_dot_directories_are_skipped_by_default(tmp_path: Path) -> None:
    _write(tmp_path, ".hidden.md")
    _write(tmp_path, ".git/notes.md")
    _write(tmp_path, "seen.md")
    assert _paths(_tree(tmp_path)) == ["seen.md"]


def test_dot_entries_are_walked_when_a_pattern_names_them(tmp_path: Path) -> None:
    _write(tmp_path, ".github/guide.md")
    assert _paths(_tree(tmp_path, include=(".github/**/*.md",))) == [".github/guide.md"]


def test_symlinks_to_files_inside_the_tree_are_followed(tmp_path: Path) -> None:
    target = _write(tmp_path / "tree" / "real", "real.md")
    os.symlink(target, tmp_path / "tree" / "link.md")
    found = discover_tree(_tree(tmp_path / "tree")).files
    assert [f.path for f in found] == ["link.md", "real/real.md"]


def test_a_symlink_out_of_the_tree_is_skipped_and_reported(tmp_path: Path) -> None:
    target = _write(tmp_path / "outside", "secret.md")
    (tmp_path / "tree").mkdir()
    os.symlink(target, tmp_path / "tree" / "link.md")
    found = discover_tree(_tree(tmp_path / "tree"))
    assert found.files == ()
    assert [(s.path, s.reason) for s in found.skipped] == [
        (
            "link.md",
            f"symlink to {target}, outside the tree — not indexed "
            "(allow_outside_links = true in the tree's section indexes it)",
        )
    ]


def test_a_symlink_through_a_linked_directory_out_of_the_tree_is_skipped(tmp_path: Path) -> None:
    _write(tmp_path / "outside", "secret.md")
    (tmp_path / "tree").mkdir()
    os.symlink(tmp_path / "outside", tmp_path / "tree" / "dir")
    os.symlink("dir/secret.md", tmp_path / "tree" / "link.md")
    assert discover_tree(_tree(tmp_path / "tree")).files == ()


def test_a_tree_may_opt_in_to_links_out_of_it(tmp_path: Path) -> None:
    target = _write(tmp_path / "outside", "shared.md")
    (tmp_path / "tree").mkdir()
    os.symlink(target, tmp_path / "tree" / "link.md")
    tree = dataclasses.replace(_tree(tmp_path / "tree"), outside_links=True)
    assert [f.path for f in discover_tree(tree).files] == ["link.md"]


def test_a_tree_reached_through_a_symlink_still_indexes_its_own_files(tmp_path: Path) -> None:
    _write(tmp_path / "real", "a.md")
    os.symlink(tmp_path / "real", tmp_path / "alias")
    os.symlink("a.md", tmp_path / "real" / "b.md")
    assert [f.path for f in discover_tree(_tree(tmp_path / "alias")).files] == ["a.md", "b.md"]


def test_symlinks_to_directories_are_not_descended(tmp_path: Path) -> None:
    _write(tmp_path / "outside", "inner.md")
    (tmp_path / "tree").mkdir()
    os.symlink(tmp_path / "outside", tmp_path / "tree" / "dirlink")
    assert _paths(_tree(tmp_path / "tree")) == []


def test_a_symlink_loop_is_reported_not_followed(tmp_path: Path) -> None:
    os.symlink(tmp_path / "loop.md", tmp_path / "loop.md")
    result = discover_tree(_tree(tmp_path))
    assert result.files == ()
    assert [(s.path, s.reason) for s in result.skipped] == [("loop.md", "broken or looping symlink")]


def test_unicode_and_space_laden_names_are_found(tmp_path: Path) -> None:
    _write(tmp_path, "naïve notes/über café.md")
    assert _paths(_tree(tmp_path)) == ["naïve notes/über café.md"]


def test_discovery_records_size_and_mtime(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.md", "hello\n")
    os.utime(path, ns=(1_000_000_000, 2_000_000_000))
    (found,) = discover_tree(_tree(tmp_path)).files
    assert (found.size, found.mtime_ns, found.abspath) == (6, 2_000_000_000, str(path))


def test_a_symlink_to_a_file_the_tree_excludes_is_skipped_and_reported(tmp_path: Path) -> None:
    _write(tmp_path, "drafts/secret.md")
    _write(tmp_path, "private.md")
    os.symlink("drafts/secret.md", tmp_path / "current.md")
    os.symlink("private.md", tmp_path / "alias.md")
    found = discover_tree(_tree(tmp_path, exclude=("drafts/", "private.md")))
    assert [f.path for f in found.files] == []
    assert [(s.path, s.reason) for s in found.skipped] == [
        ("alias.md", "symlink to private.md, which the tree's exclude patterns skip — not indexed"),
        ("current.md", "symlink to drafts/secret.md, which the tree's exclude patterns skip — not indexed"),
    ]


def test_a_symlink_into_a_dot_directory_the_walk_skips_is_skipped_and_reported(tmp_path: Path) -> None:
    _write(tmp_path, ".private/notes.md")
    os.symlink(".private/notes.md", tmp_path / "notes.md")
    found = discover_tree(_tree(tmp_path))
    assert found.files == ()
    assert [(s.path, s.reason) for s in found.skipped] == [
        ("notes.md", "symlink to .private/notes.md, a dot entry the tree does not walk — not indexed")
    ]
    named = discover_tree(_tree(tmp_path, include=("*.md", ".private/*.md")))
    assert [f.path for f in named.files] == [".private/notes.md", "notes.md"]


def test_a_symlink_to_an_included_file_elsewhere_in_the_tree_is_still_followed(tmp_path: Path) -> None:
    _write(tmp_path, "guides/intro.md")
    _write(tmp_path, "drafts/old.md")
    os.symlink("guides/intro.md", tmp_path / "start.md")
    assert _paths(_tree(tmp_path, exclude=("drafts/",))) == ["guides/intro.md", "start.md"]


def test_a_skipped_link_whose_target_name_is_not_utf8_is_reported_as_text(tmp_path: Path) -> None:
    (tmp_path / "drafts").mkdir()
    Path(os.fsdecode(os.fsencode(tmp_path / "drafts") + b"/\xff.md")).write_text("# x\n", encoding="utf-8")
    os.symlink(b"drafts/\xff.md", os.fsencode(tmp_path) + b"/a.md")
    found = discover_tree(_tree(tmp_path, exclude=("drafts/",)))
    assert found.files == ()
    reason = "symlink to drafts/\ufffd.md, which the tree's exclude patterns skip — not indexed"
    assert [(s.path, s.reason) for s in found.skipped] == [("a.md", reason)]
    reason.encode("utf-8")  # writable anywhere: the snapshot is JSON


def test_a_file_named_like_markdown_that_links_to_a_directory_is_skipped_silently(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "drafts").mkdir()
    os.symlink(".git", tmp_path / "git.md")
    os.symlink("drafts", tmp_path / "drafts.md")
    found = discover_tree(_tree(tmp_path, exclude=("drafts/",)))
    assert (found.files, found.skipped) == ((), ())


def test_a_link_out_of_the_tree_to_a_name_that_is_not_utf8_is_reported_as_text(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "tree").mkdir()
    target = os.fsencode(tmp_path / "outside") + b"/\xff.md"
    Path(os.fsdecode(target)).write_text("# x\n", encoding="utf-8")
    os.symlink(target, os.fsencode(tmp_path / "tree") + b"/a.md")
    [skipped] = discover_tree(_tree(tmp_path / "tree")).skipped
    assert skipped.reason.startswith(f"symlink to {tmp_path / 'outside'}/\ufffd.md, outside the tree")

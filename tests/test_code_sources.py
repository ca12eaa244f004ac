"""What a tree selects around code: default excludes, git's ignore files, the keys that turn them
off, the build noticing an edited ignore file, and `ra init` offering a code tree (issue 22)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import textwrap
import tomllib
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ra_build.artifacts.layout import Layout
from ra_build.config.fingerprint import config_hash
from ra_build.config.load import load_config
from ra_build.config.model import DEFAULT_INCLUDE, TreeConfig
from ra_build.config.render import config_to_dict, render_config
from ra_build.config.starter import CODE_SCAN_LIMIT, find_code, init_config
from ra_build.pipeline.discover import discover_tree
from ra_build.refresh.current import freshness
from ra_query.artifacts.store import read_manifest
from ra_query.errors import ConfigError
from ra_query.sources.gitignore import GitIgnore, Rules, parse_pattern, parse_patterns
from ra_query.sources.stale import stale_files
from ra_query.sources.walk import DEFAULT_EXCLUDES, walk_tree
from tests.conftest import Run, build

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(
    GIT is None, reason="git is not installed: nothing to compare the matcher with"
)


def _write(root: Path, rel: str, text: str = "x\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _repo(root: Path, ignore: str = "") -> Path:
    """`root` as the top of a git work tree (a `.git` folder is all the matcher looks for)."""
    (root / ".git" / "info").mkdir(parents=True)
    if ignore:
        _write(root, ".gitignore", ignore)
    return root


def _tree(root: Path, include: tuple[str, ...] = DEFAULT_INCLUDE, **keys: bool) -> TreeConfig:
    return TreeConfig("t", root, include, (), False, root / ".ra.toml", 1, **keys)


def _paths(tree: TreeConfig) -> list[str]:
    return [f.path for f in discover_tree(tree).files]


def _verdicts(text: str, *paths: str) -> list[bool | None]:
    """What one ignore file decides for each path (a trailing `/` asks about a directory)."""
    rules = Rules(parse_patterns(text))
    return [rules.verdict(p.rstrip("/"), p.endswith("/")) for p in paths]


# --- the patterns, as gitignore(5) words them ------------------------------------------------


def test_a_pattern_without_a_slash_matches_the_name_at_any_depth() -> None:
    assert _verdicts("*.log\n", "a.log", "deep/er/b.log", "a.log.txt") == [True, True, None]


def test_a_leading_slash_anchors_a_pattern_to_the_folder_of_its_file() -> None:
    assert _verdicts("/todo.md\n", "todo.md", "sub/todo.md") == [True, None]


def test_a_slash_in_the_middle_anchors_a_pattern_too() -> None:
    assert _verdicts("doc/frotz\n", "doc/frotz", "a/doc/frotz") == [True, None]


def test_a_trailing_slash_matches_directories_only() -> None:
    assert _verdicts("build/\n", "build/", "build", "x/build/") == [True, None, True]


def test_the_last_matching_pattern_decides_and_a_bang_re_includes() -> None:
    assert _verdicts("*.md\n!keep.md\n", "a.md", "keep.md") == [True, False]
    assert _verdicts("!keep.md\n*.md\n", "keep.md") == [True]


def test_blank_lines_and_comments_are_no_patterns_but_an_escaped_hash_is_one() -> None:
    assert parse_patterns("\n# a comment\n   \n\\#hash\n") == [parse_pattern("\\#hash")]
    assert _verdicts("# a.md\n\\#hash\n", "a.md", "#hash") == [None, True]


def test_an_escaped_bang_matches_a_name_that_starts_with_one() -> None:
    assert _verdicts("\\!important\n", "!important") == [True]


def test_trailing_spaces_are_trimmed_unless_a_backslash_quotes_one() -> None:
    assert _verdicts("a.md   \n", "a.md", "a.md   ") == [True, None]
    assert _verdicts("b\\ \n", "b ", "b") == [True, None]


def test_two_stars_span_directories_at_the_start_the_end_and_between_slashes() -> None:
    assert _verdicts("**/foo\n", "foo", "x/y/foo") == [True, True]
    assert _verdicts("abc/**\n", "abc/x", "abc/x/y", "abc/") == [True, True, None]
    assert _verdicts("a/**/b\n", "a/b", "a/x/b", "a/x/y/b", "ab") == [True, True, True, None]


def test_two_stars_elsewhere_are_one_star() -> None:
    assert _verdicts("x/a**z\n", "x/abz", "x/a/z") == [True, None]


def test_stars_question_marks_and_classes_never_match_a_slash() -> None:
    assert _verdicts("a*b\n", "a/b") == [None]
    assert _verdicts("x/a?b\n", "x/a/b", "x/acb") == [None, True]
    assert _verdicts("x/a[/]b\n", "x/a/b") == [None]


def test_character_classes_take_ranges_negation_and_posix_names() -> None:
    assert _verdicts("[a-c].md\n", "b.md", "d.md") == [True, None]
    assert _verdicts("[!a-c].md\n", "b.md", "d.md") == [None, True]
    assert _verdicts("v[[:digit:]]\n", "v1", "va") == [True, None]
    assert _verdicts("[]x]\n", "]", "x") == [True, True]


def test_a_malformed_pattern_matches_nothing() -> None:
    assert _verdicts("[abc\n", "[abc", "a") == [None, None]
    assert _verdicts("[[:nope:]]\n", "n") == [None]
    assert _verdicts("trailing\\\n", "trailing", "trailing\\") == [None, None]


def test_a_bom_and_crlf_line_ends_are_read_as_git_reads_them() -> None:
    assert _verdicts("\ufeffa.md\r\nb.md\r\n", "a.md", "b.md") == [True, True]


# --- compared with git itself ------------------------------------------------------------------

_SEGMENTS = ("a", "b", "ab", "a.md", "b.md", "c", "x y", "[a]", "-", "a-b", "#x", "!a")
_TOKENS = (
    "a", "b", "c", "*", "**", "***", "?", "a*", "*.md", "[ab]", "[!a]*", "[a-]", "[]]", "[^b]", "**a",
    "a**", "[z-a]", "[[:alpha:]]", "[[:foo:]]", "[", "\\*", "\\#x", "\\!a", "x\\ y", "b\\ ", "a\\", "*-*",
)  # fmt: skip
_LINES = st.builds(
    lambda bang, lead, tokens, tail: bang + lead + "/".join(tokens) + tail,
    st.sampled_from(["", "", "!"]),
    st.sampled_from(["", "", "/", "**/"]),
    st.lists(st.sampled_from(_TOKENS), min_size=1, max_size=3),
    st.sampled_from(["", "", "/", "/**", "  "]),
)
_FILES = st.lists(st.lists(st.sampled_from(_SEGMENTS), min_size=1, max_size=4), min_size=1, max_size=12)
_IGNORES = st.dictionaries(
    st.sampled_from(["", "a", "b", "a/b", "info/exclude"]),
    st.lists(_LINES, min_size=1, max_size=6),
    max_size=4,
)


def _git(root: Path, *args: str, stdin: str = "") -> str:
    """`git -C root ARGS` with no user or system configuration (no core.excludesFile)."""
    assert GIT is not None
    env = {
        **os.environ,
        "HOME": str(root),
        "XDG_CONFIG_HOME": str(root),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    proc = subprocess.run(
        [GIT, "-C", str(root), *args], input=stdin.encode(), capture_output=True, env=env, check=False
    )
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout.decode()


def _generated_repo(
    root: Path, files: list[list[str]], ignores: dict[str, list[str]]
) -> list[tuple[str, bool]]:
    """A git work tree at `root` with `files` and `ignores`; every (path, is_dir) in it."""
    _git(root, "init", "-q")
    for parts in files:
        path = root.joinpath(*parts)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.is_dir():
                path.touch()
        except OSError:  # a name already taken by a file or a directory
            continue
    for where, lines in ignores.items():
        target = (
            root / ".git" / "info" / "exclude" if where == "info/exclude" else root / where / ".gitignore"
        )
        if target.parent.is_dir():
            target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    found: list[tuple[str, bool]] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        rel = Path(folder).relative_to(root).as_posix()
        for name in [*dirs, *names]:
            if name != ".gitignore":
                found.append((f"{rel}/{name}" if rel != "." else name, name in dirs))
    return found


@needs_git
@settings(max_examples=60, deadline=None)
@given(_FILES, _IGNORES)
def test_the_matcher_ignores_what_git_check_ignore_ignores(
    files: list[list[str]], ignores: dict[str, list[str]]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        paths = _generated_repo(root, files, ignores)
        out = _git(
            root, "check-ignore", "--no-index", "--stdin", "-z", stdin="".join(f"{p}\0" for p, _ in paths)
        )
        by_git = {p for p in out.split("\0") if p}
        matcher = GitIgnore(str(root))
        assert {p for p, is_dir in paths if matcher.ignored_path(p, is_dir)} == by_git


@needs_git
@settings(max_examples=40, deadline=None)
@given(_FILES, _IGNORES)
def test_the_walk_takes_the_files_git_lists_as_not_ignored(
    files: list[list[str]], ignores: dict[str, list[str]]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        _generated_repo(root, files, ignores)
        listed = _git(root, "ls-files", "--others", "--exclude-standard", "-z")
        by_git = {p for p in listed.split("\0") if p and not p.endswith(".gitignore")}
        walked = walk_tree("t", root, ["**/*"], [], default_excludes=False)
        assert {f.path for f in walked.files} == by_git


# --- the walk: default excludes ----------------------------------------------------------------


# what a developer expects no tree to walk: version control, dependencies, caches, build output
EXPECTED_EXCLUDES = [
    ".git",
    "node_modules",
    "vendor",
    "__pycache__",
    "dist",
    "build",
    ".venv",
    "venv",
    "target",
]


def test_default_excluded_directories_are_not_walked_anywhere_in_the_tree(tmp_path: Path) -> None:
    _write(tmp_path, "keep.md")
    _write(tmp_path, ".notes/keep.md")  # a dot-directory the include names is walked: the names decide
    for name in EXPECTED_EXCLUDES:
        _write(tmp_path, f"{name}/x.md")
        _write(tmp_path, f"a/b/{name}/pkg/x.md")
    assert _paths(_tree(tmp_path, ("**/*.md", ".*/**/*.md", "**/.*/**/*.md"))) == [
        ".notes/keep.md",
        "keep.md",
    ]


def test_default_excludes_are_the_directories_a_developer_expects_and_no_others() -> None:
    assert set(EXPECTED_EXCLUDES) == DEFAULT_EXCLUDES


def test_default_excludes_false_walks_those_directories(tmp_path: Path) -> None:
    _write(tmp_path, "dist/notes.md")
    assert _paths(_tree(tmp_path, default_excludes=False)) == ["dist/notes.md"]


def test_an_include_pattern_that_names_a_default_excluded_directory_walks_it(tmp_path: Path) -> None:
    _write(tmp_path, "vendor/acme/guide.md")
    _write(tmp_path, "build/skip.md")
    assert _paths(_tree(tmp_path, ("vendor/**/*.md", "**/*.md"))) == ["vendor/acme/guide.md"]


def test_a_file_named_like_an_excluded_directory_is_still_taken(tmp_path: Path) -> None:
    _write(tmp_path, "build")
    assert _paths(_tree(tmp_path, ("**/build",))) == ["build"]


def test_a_symlink_into_a_default_excluded_directory_is_skipped_and_reported(tmp_path: Path) -> None:
    target = _write(tmp_path, "node_modules/pkg/readme.md")
    (tmp_path / "readme.md").symlink_to(target)
    found = discover_tree(_tree(tmp_path))
    assert found.files == ()
    assert [(s.path, s.reason) for s in found.skipped] == [
        (
            "readme.md",
            "symlink to node_modules/pkg/readme.md, in a directory ra skips by default — not indexed",
        )
    ]


# --- the walk: git's ignore files --------------------------------------------------------------


def test_what_the_repository_ignores_is_not_indexed(tmp_path: Path) -> None:
    _repo(tmp_path, "*.log.md\ndrafts/\n")
    for rel in ("keep.md", "run.log.md", "drafts/a.md", "sub/drafts/b.md", "sub/c.md"):
        _write(tmp_path, rel)
    assert _paths(_tree(tmp_path)) == ["keep.md", "sub/c.md"]


def test_a_nested_gitignore_applies_to_its_directory_and_below(tmp_path: Path) -> None:
    _repo(tmp_path)
    _write(tmp_path, "sub/.gitignore", "/local.md\n*.tmp.md\n")
    for rel in ("local.md", "x.tmp.md", "sub/local.md", "sub/deep/local.md", "sub/deep/y.tmp.md"):
        _write(tmp_path, rel)
    assert _paths(_tree(tmp_path)) == ["local.md", "sub/deep/local.md", "x.tmp.md"]


def test_a_deeper_gitignore_can_re_include_what_a_shallower_one_ignores(tmp_path: Path) -> None:
    _repo(tmp_path, "*.md\n!/keep/\n")
    _write(tmp_path, "keep/.gitignore", "!wanted.md\n")
    for rel in ("a.md", "keep/wanted.md", "keep/other.md"):
        _write(tmp_path, rel)
    assert _paths(_tree(tmp_path)) == ["keep/wanted.md"]


def test_a_file_in_an_ignored_directory_cannot_be_re_included(tmp_path: Path) -> None:
    _repo(tmp_path, "out/\n!out/keep.md\n")
    _write(tmp_path, "out/keep.md")
    assert _paths(_tree(tmp_path)) == []


def test_info_exclude_is_read_below_every_gitignore(tmp_path: Path) -> None:
    _repo(tmp_path, "!private.md\n")
    _write(tmp_path, ".git/info/exclude", "private.md\nscratch.md\n")
    for rel in ("private.md", "scratch.md", "kept.md"):
        _write(tmp_path, rel)
    assert _paths(_tree(tmp_path)) == ["kept.md", "private.md"]


def test_a_gitignore_outside_a_git_work_tree_is_not_read(tmp_path: Path) -> None:
    _write(tmp_path, ".gitignore", "*.md\n")
    _write(tmp_path, "a.md")
    assert _paths(_tree(tmp_path)) == ["a.md"]


def test_a_tree_below_the_top_of_its_repository_follows_the_ignore_files_above_it(tmp_path: Path) -> None:
    _repo(tmp_path, "/docs/drafts/\n*.secret.md\n")
    for rel in ("docs/a.md", "docs/drafts/b.md", "docs/c.secret.md", "docs/sub/drafts/d.md"):
        _write(tmp_path, rel)
    assert _paths(_tree(tmp_path / "docs")) == ["a.md", "sub/drafts/d.md"]


def test_gitignore_false_indexes_what_git_ignores(tmp_path: Path) -> None:
    _repo(tmp_path, "*.md\n")
    _write(tmp_path, "a.md")
    assert _paths(_tree(tmp_path, gitignore=False)) == ["a.md"]


def test_a_tree_whose_folder_git_ignores_is_indexed_whole(tmp_path: Path) -> None:
    _repo(tmp_path, "notes/\n*.md\n")
    _write(tmp_path, "notes/.gitignore", "a.md\n")  # never read: git does not look inside
    _write(tmp_path, "notes/a.md")
    assert _paths(_tree(tmp_path / "notes")) == ["a.md"]


def test_a_nested_repository_follows_its_own_ignore_files_not_the_outer_ones(tmp_path: Path) -> None:
    _repo(tmp_path, "*.txt\n")
    _repo(tmp_path / "lib", "skip.md\n")
    for rel in ("skip.md", "lib/skip.md", "lib/notes.txt"):
        _write(tmp_path, rel)
    assert _paths(_tree(tmp_path)) == ["lib/notes.txt", "skip.md"]


def test_a_tree_in_no_repository_still_follows_a_nested_repositorys_ignore_files(tmp_path: Path) -> None:
    _repo(tmp_path / "project", "generated/\n")
    _write(tmp_path, "project/generated/api.md")
    _write(tmp_path, "project/readme.md")
    assert _paths(_tree(tmp_path)) == ["project/readme.md"]


def test_a_git_file_points_to_where_info_exclude_is(tmp_path: Path) -> None:
    _write(tmp_path, "store/info/exclude", "hidden.md\n")
    _write(tmp_path, "work/.git", "gitdir: ../store\n")
    _write(tmp_path, "work/hidden.md")
    _write(tmp_path, "work/shown.md")
    assert _paths(_tree(tmp_path / "work")) == ["shown.md"]


def test_a_symlink_to_a_file_git_ignores_is_skipped_and_reported(tmp_path: Path) -> None:
    _repo(tmp_path, "private/\n")
    target = _write(tmp_path, "private/secret.md")
    (tmp_path / "public.md").symlink_to(target)
    found = discover_tree(_tree(tmp_path))
    assert found.files == ()
    assert [s.reason for s in found.skipped] == [
        "symlink to private/secret.md, which git ignores — not indexed"
    ]


def test_discovery_lists_the_ignore_files_it_read_relative_to_the_tree(tmp_path: Path) -> None:
    _repo(tmp_path, "*.log\n")
    _write(tmp_path, ".git/info/exclude", "x\n")
    _write(tmp_path, "docs/sub/.gitignore", "y\n")
    _write(tmp_path, "docs/sub/a.md")
    found = discover_tree(_tree(tmp_path / "docs"))
    assert sorted(f.path for f in found.ignore_files) == [
        "../.git/info/exclude",
        "../.gitignore",
        "sub/.gitignore",
    ]


def test_a_walk_with_a_limit_stops_and_says_so(tmp_path: Path) -> None:
    for d in range(5):
        for k in range(5):
            _write(tmp_path, f"d{d}/{k}.md")
    partial = walk_tree("t", tmp_path, ["**/*.md"], [], limit=12)
    assert partial.truncated and len(partial.files) == 10
    assert not walk_tree("t", tmp_path, ["**/*.md"], []).truncated


# --- configuration ----------------------------------------------------------------------------


def _config(project: Path, text: str) -> Path:
    (project / "docs").mkdir(parents=True, exist_ok=True)
    return _write(project, ".ra.toml", textwrap.dedent(text).lstrip("\n"))


def _error(project: Path, home: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(project, home)
    assert info.value.exit_code == 2
    return info.value.message


def test_both_keys_are_on_unless_a_tree_or_the_settings_say_otherwise(tmp_path: Path, home: Path) -> None:
    _config(tmp_path, "[tree.docs]\npath = 'docs'\n")
    tree = load_config(tmp_path, home).trees["docs"]
    assert (tree.default_excludes, tree.gitignore) == (True, True)


def test_the_settings_keys_apply_to_trees_that_do_not_set_their_own(tmp_path: Path, home: Path) -> None:
    _config(
        tmp_path,
        """
        [settings]
        default_excludes = false
        gitignore = false
        [tree.docs]
        path = 'docs'
        [tree.code]
        path = '.'
        gitignore = true
        """,
    )
    trees = load_config(tmp_path, home).trees
    assert (trees["docs"].default_excludes, trees["docs"].gitignore) == (False, False)
    assert (trees["code"].default_excludes, trees["code"].gitignore) == (False, True)


def test_a_tree_gitignore_that_is_not_a_boolean_names_its_file_and_line(tmp_path: Path, home: Path) -> None:
    config = _config(tmp_path, "[tree.docs]\npath = 'docs'\ngitignore = 'no'\n")
    assert (
        _error(tmp_path, home)
        == f"{config}:3: [tree.docs] gitignore must be a boolean (true or false), got string"
    )


def test_a_settings_default_excludes_that_is_not_a_boolean_names_its_file_and_line(
    tmp_path: Path, home: Path
) -> None:
    config = _config(tmp_path, "[settings]\ndefault_excludes = 0\n[tree.docs]\npath = 'docs'\n")
    assert _error(tmp_path, home) == (
        f"{config}:2: [settings] default_excludes must be a boolean (true or false), got integer"
    )


def test_a_misspelt_tree_key_is_a_warning_that_suggests_the_real_one(tmp_path: Path, home: Path) -> None:
    config = _config(tmp_path, "[tree.docs]\npath = 'docs'\ngit_ignore = false\n")
    assert load_config(tmp_path, home).warnings == (
        f"{config}:3: unknown key 'git_ignore' in [tree.docs] (did you mean 'gitignore'?) — ignored",
    )


def test_ra_config_shows_both_keys_of_every_tree(tmp_path: Path, home: Path) -> None:
    _config(tmp_path, "[settings]\ngitignore = false\n[tree.docs]\npath = 'docs'\ndefault_excludes = false\n")
    config = load_config(tmp_path, home)
    text = render_config(config)
    assert "default_excludes = false\ngitignore = false\n" in text.split("[tree.docs]")[1]
    assert "\ngitignore = false  # from " in text
    shown = config_to_dict(config)["trees"]["docs"]
    assert (shown["default_excludes"], shown["gitignore"]) == (False, False)


def test_turning_either_key_off_changes_the_config_hash(tmp_path: Path, home: Path) -> None:
    _config(tmp_path, "[tree.docs]\npath = 'docs'\n")
    before = config_hash(load_config(tmp_path, home))
    hashes = {before}
    for key in ("default_excludes", "gitignore"):
        _config(tmp_path, f"[tree.docs]\npath = 'docs'\n{key} = false\n")
        hashes.add(config_hash(load_config(tmp_path, home)))
    assert len(hashes) == 3


# --- the build and the stale count ------------------------------------------------------------


def _built(project: Path, home: Path, toml: str = "[tree.code]\npath = '.'\n") -> Path:
    _write(project, ".ra.toml", toml)
    build(project, home)
    return project / ".ra"


def _stale(artifacts: Path) -> int | None:
    return stale_files(artifacts, read_manifest(artifacts))


def _snapshot_paths(artifacts: Path) -> list[str]:
    snapshot = orjson.loads((artifacts / "chunks" / "code.snapshot.json").read_bytes())
    return [row[0] for row in snapshot["files"]]


def test_editing_a_gitignore_in_place_makes_the_index_stale_until_the_next_build(
    tmp_path: Path, home: Path
) -> None:
    project = _repo(tmp_path / "p", "*.log\n")
    _write(project, "a.md", "# A\n")
    _write(project, "drafts/b.md", "# B\n")
    artifacts = _built(project, home)
    assert _snapshot_paths(artifacts) == ["a.md", "drafts/b.md"]
    assert _stale(artifacts) == 0
    ignore = project / ".gitignore"
    ignore.write_text("*.log\ndrafts/\n", encoding="utf-8")  # the folder's mtime does not move
    assert _stale(artifacts) == 1
    assert freshness(load_config(project, home), Layout(artifacts)).state == "stale"
    build(project, home)
    assert _snapshot_paths(artifacts) == ["a.md"]
    assert _stale(artifacts) == 0


def test_a_new_gitignore_in_a_subdirectory_makes_the_index_stale(tmp_path: Path, home: Path) -> None:
    project = _repo(tmp_path / "p")
    _write(project, "sub/a.md", "# A\n")
    artifacts = _built(project, home)
    _write(project, "sub/.gitignore", "a.md\n")
    assert _stale(artifacts) == 1


def test_the_stale_count_walks_as_the_build_did_with_gitignore_off(tmp_path: Path, home: Path) -> None:
    project = _repo(tmp_path / "p", "ignored/\n")
    _write(project, "ignored/a.md", "# A\n")
    artifacts = _built(
        project, home, "[tree.code]\npath = '.'\ngitignore = false\ndefault_excludes = false\n"
    )
    assert _snapshot_paths(artifacts) == ["ignored/a.md"]
    _write(project, "ignored/b.md", "# B\n")
    _write(project, "build/c.md", "# C\n")
    assert _stale(artifacts) == 2


def test_the_manifest_records_what_the_walk_skipped(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "p"
    _write(project, "a.md", "# A\n")
    artifacts = _built(project, home, "[tree.code]\npath = '.'\ngitignore = false\n")
    sources = read_manifest(artifacts)["trees"]["code"]["sources"]
    assert (sources["default_excludes"], sources["gitignore"]) == (True, False)


# --- ra init -----------------------------------------------------------------------------------


def test_init_in_a_folder_with_code_includes_its_languages_then_the_docs(tmp_path: Path, home: Path) -> None:
    for rel in ("src/a.py", "src/b.py", "cmd/main.go", "docs/guide.md"):
        _write(tmp_path, rel)
    result = init_config(tmp_path, home)
    tree = load_config(tmp_path, home).trees[result.tree_name]
    assert tree.path == tmp_path
    assert tree.include == ("**/*.py", "**/*.pyi", "**/*.go", "**/*.md", "**/*.rst", "**/*.txt")
    assert result.code is not None and result.code.languages == (("python", 2), ("go", 1))


def test_data_files_alone_are_no_reason_for_a_code_tree(tmp_path: Path, home: Path) -> None:
    for rel in ("pyproject.toml", "config.yaml", "data.json", "docs/guide.md"):
        _write(tmp_path, rel)
    result = init_config(tmp_path, home)
    assert (result.tree_name, result.code) == ("docs", None)
    assert load_config(tmp_path, home).trees["docs"].include == DEFAULT_INCLUDE


def test_init_does_not_count_code_the_tree_would_skip(tmp_path: Path) -> None:
    _repo(tmp_path, "generated/\n")
    for rel in ("node_modules/pkg/index.js", "generated/api.py", ".hidden/x.rs", "main.go"):
        _write(tmp_path, rel)
    found = find_code(tmp_path)
    assert found is not None and found.languages == (("go", 1),)


def test_init_stops_looking_for_code_after_a_bounded_number_of_entries(tmp_path: Path) -> None:
    """A folder of 20,000 entries is all `ra init` looks at: the Go file below it is not counted."""
    _write(tmp_path, "main.py")
    _write(tmp_path, "src/server.go")
    for i in range(CODE_SCAN_LIMIT - 2):
        (tmp_path / f"{i}.txt").touch()
    found = find_code(tmp_path)
    assert found is not None and (found.languages, found.partial) == ((("python", 1),), True)
    assert found.summary().startswith("found code in the first 20,000 entries: python (1 file)")


def test_the_starter_config_of_a_code_tree_loads_without_warnings(tmp_path: Path, home: Path) -> None:
    _write(tmp_path, "lib.rs")
    result = init_config(tmp_path, home)
    text = result.path.read_text(encoding="utf-8")
    assert tomllib.loads(text)["tree"][result.tree_name]["include"] == [
        "**/*.rs",
        "**/*.md",
        "**/*.rst",
        "**/*.txt",
    ]
    assert "# default_excludes = true" in text and "# gitignore = true" in text
    assert load_config(tmp_path, home).warnings == ()


def test_ra_init_prints_the_code_it_found(ra: Callable[..., Run], tmp_path: Path) -> None:
    for rel in ("a.py", "b.py", "c.ts"):
        _write(tmp_path, rel)
    result = ra("init")
    assert result.code == 0, result.err
    assert result.out.splitlines()[1] == (
        "found code: python (2 files), typescript (1 file) — the tree includes it, with the docs (.md, .rst, .txt)"
    )

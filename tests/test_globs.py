"""Glob matching for tree include/exclude and context rules."""

from ra_query.sources.globs import compile_globs, matches, names_dot_entry


def test_double_star_slash_matches_files_at_the_root_and_below() -> None:
    assert matches("**/*.md", "a.md")
    assert matches("**/*.md", "x/y/a.md")


def test_single_star_does_not_cross_directories() -> None:
    assert matches("docs/*.md", "docs/a.md")
    assert not matches("docs/*.md", "docs/sub/a.md")


def test_tree_globs_are_anchored_at_the_tree_root() -> None:
    assert matches("README.md", "README.md")
    assert not matches("README.md", "sub/README.md")


def test_context_globs_without_a_slash_match_the_file_name_anywhere() -> None:
    assert matches("*.rs", "src/api/main.rs", anywhere=True)
    assert not matches("*.rs", "src/api/main.py", anywhere=True)


def test_trailing_double_star_matches_everything_below() -> None:
    assert matches("drafts/**", "drafts/a/b.md")
    assert matches("**/drafts/**", "x/drafts/b.md")
    assert not matches("**/drafts/**", "x/drafted.md")


def test_question_mark_and_classes_match_one_character() -> None:
    assert matches("v?.md", "v1.md")
    assert matches("[ab].md", "a.md")
    assert not matches("[!ab].md", "a.md")


def test_regex_metacharacters_in_globs_are_literal() -> None:
    assert matches("a+b (1).md", "a+b (1).md")
    assert not matches("a.md", "aXmd")


def test_compiled_alternation_matches_any_pattern() -> None:
    rx = compile_globs(["**/*.md", "**/*.txt"])
    assert rx is not None
    assert rx.match("n/a.txt")
    assert not rx.match("n/a.adoc")


def test_no_patterns_compile_to_none() -> None:
    assert compile_globs([]) is None


def test_dot_entries_count_as_named_only_when_a_pattern_says_so() -> None:
    assert names_dot_entry([".github/**/*.md"])
    assert not names_dot_entry(["**/*.md", "./docs/*.md"])

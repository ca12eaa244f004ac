"""Tests for ra_build.config.load: discovery, validation with file:line messages, merging, output."""

from __future__ import annotations

import json
import textwrap
import tomllib
from pathlib import Path

import pytest

from ra_build.config.fingerprint import search_defaults
from ra_build.config.load import load_config
from ra_build.config.model import (
    DEFAULT_INCLUDE,
    STEMMERS,
    ContextRule,
    ContextSettings,
    SearchSettings,
    Settings,
)
from ra_build.config.render import config_to_dict, render_config
from ra_query.errors import ConfigError


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder outside the isolated home, with a docs/ folder."""
    path = tmp_path / "work" / "project"
    (path / "docs").mkdir(parents=True)
    return path


def error_of(cwd: Path, home: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(cwd, home)
    assert info.value.exit_code == 2
    assert "\n" not in info.value.message
    return info.value.message


# --- discovery ----------------------------------------------------------------------------


def test_discovery_walks_up_from_cwd_collecting_nearest_first(tmp_path: Path, home: Path) -> None:
    outer = write(tmp_path / "a" / ".ra.toml", "")
    inner = write(tmp_path / "a" / "b" / ".ra.toml", "")
    cwd = tmp_path / "a" / "b" / "c"
    cwd.mkdir()
    assert load_config(cwd, home).files == (inner, outer)


def test_root_true_stops_the_walk_and_ignores_the_global_file(tmp_path: Path, home: Path) -> None:
    write(home / ".ra.toml", "")
    write(tmp_path / "a" / ".ra.toml", "")
    inner = write(tmp_path / "a" / "b" / ".ra.toml", "root = true\n")
    assert load_config(tmp_path / "a" / "b", home).files == (inner,)


def test_global_file_comes_last_with_lowest_precedence(tmp_path: Path, home: Path) -> None:
    glob = write(home / ".ra.toml", "")
    local = write(tmp_path / "p" / ".ra.toml", "")
    assert load_config(tmp_path / "p", home).files == (local, glob)


def test_home_file_met_on_the_walk_is_the_global_file_not_a_local_one(home: Path) -> None:
    glob = write(home / ".ra.toml", "[tree.notes]\npath = '.'\n")
    local = write(home / "proj" / ".ra.toml", "")
    config = load_config(home / "proj", home)
    assert config.files == (local, glob)
    assert config.trees["notes"].is_global
    assert config.global_file == glob


def test_the_file_with_root_true_is_itself_used(tmp_path: Path, home: Path) -> None:
    write(tmp_path / "a" / ".ra.toml", "[settings]\ndefault_limit = 9\n")
    write(tmp_path / "a" / "b" / ".ra.toml", "root = true\n[settings]\nlocal_boost = 3.0\n")
    config = load_config(tmp_path / "a" / "b", home)
    assert (config.settings.default_limit, config.settings.local_boost) == (5, 3.0)


def test_root_true_in_the_home_file_hides_files_above_home(tmp_path: Path, home: Path) -> None:
    write(tmp_path / ".ra.toml", "")
    glob = write(home / ".ra.toml", "root = true\n")
    local = write(home / "p" / ".ra.toml", "")
    assert load_config(home / "p", home).files == (local, glob)


def test_ra_config_ceiling_ends_the_walk_at_its_folder_and_keeps_the_global_file(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / ".ra.toml", "not toml [")  # above the ceiling: never read
    outer = write(tmp_path / "a" / ".ra.toml", "")
    inner = write(tmp_path / "a" / "b" / ".ra.toml", "")
    glob = write(home / ".ra.toml", "")
    monkeypatch.setenv("RA_CONFIG_CEILING", str(tmp_path / "a"))
    assert load_config(tmp_path / "a" / "b", home).files == (inner, outer, glob)
    monkeypatch.setenv("RA_CONFIG_CEILING", str(tmp_path / "elsewhere"))  # not on the walk: no ceiling
    assert error_of(tmp_path / "a" / "b", home).startswith(f"{tmp_path / '.ra.toml'}:1: invalid TOML")


def test_no_config_files_gives_defaults_and_no_base_dir(tmp_path: Path, home: Path) -> None:
    config = load_config(tmp_path, home)
    assert config.files == ()
    assert config.base_dir is None
    assert config.settings == Settings()
    assert config.search == SearchSettings()
    assert config.context == ContextSettings()
    assert config.trees == {}


def test_base_dir_is_the_nearest_config_directory(tmp_path: Path, home: Path) -> None:
    write(tmp_path / "a" / ".ra.toml", "")
    write(tmp_path / "a" / "b" / ".ra.toml", "")
    (tmp_path / "a" / "b" / "c").mkdir()
    assert load_config(tmp_path / "a" / "b" / "c", home).base_dir == tmp_path / "a" / "b"


def test_base_dir_is_home_when_only_the_global_file_exists(tmp_path: Path, home: Path) -> None:
    write(home / ".ra.toml", "")
    assert load_config(tmp_path, home).base_dir == home


# --- merging ------------------------------------------------------------------------------


def test_nearest_file_wins_per_scalar_key(tmp_path: Path, home: Path) -> None:
    write(home / ".ra.toml", "[search]\nstemmer = 'german'\nfuzzy_distance = 0\n")
    write(tmp_path / "a" / ".ra.toml", "[search]\nstemmer = 'french'\ncandidate_limit = 7\n")
    near = write(tmp_path / "a" / "b" / ".ra.toml", "[search]\nstemmer = 'dutch'\n")
    config = load_config(tmp_path / "a" / "b", home)
    assert config.search.stemmer == "dutch"
    assert config.key_sources["search.stemmer"] == near


def test_keys_not_set_nearby_still_come_from_farther_files(tmp_path: Path, home: Path) -> None:
    glob = write(home / ".ra.toml", "[search]\nfuzzy_distance = 0\n")
    mid = write(tmp_path / "a" / ".ra.toml", "[search]\ncandidate_limit = 7\n")
    write(tmp_path / "a" / "b" / ".ra.toml", "[search]\nstemmer = 'dutch'\n")
    config = load_config(tmp_path / "a" / "b", home)
    assert (config.search.fuzzy_distance, config.search.candidate_limit) == (0, 7)
    assert config.key_sources["search.fuzzy_distance"] == glob
    assert config.key_sources["search.candidate_limit"] == mid
    assert "search.cutoff_ratio" not in config.key_sources


def test_every_documented_key_is_read(project: Path, home: Path) -> None:
    write(
        project / ".ra.toml",
        """
        [settings]
        default_limit = 7
        local_boost = 2
        max_chunk_size = 900
        max_file_size = 1000
        code_chunk_size = 600

        [search]
        stemmer = "Swedish"
        fuzzy_distance = 2
        candidate_limit = 50
        cutoff_ratio = 0.25
        aggregation_threshold = 1
        phrase_boost = 0.5
        stopwords = false

        [search.boost]
        text = 2
        title = 5.0
        tags = 4
        path = 0.5

        [context]
        limit = 3
        terms = 9
        min_term_frequency = 1
        min_word_length = 2
        max_word_length = 20
        sample_size = 1024
        """,
    )
    config = load_config(project, home)
    assert config.settings == Settings(7, 2.0, 900, 2_000, 1000, code_chunk_size=600)
    assert config.search == SearchSettings("swedish", 2, 50, 0.25, 1.0, 0.5, False, 2.0, 5.0, 4.0, 0.5)
    assert config.context == ContextSettings(3, 9, 1, 2, 20, 1024)
    assert config.warnings == ()


def test_a_nearer_tree_definition_replaces_the_whole_tree(tmp_path: Path, home: Path) -> None:
    (tmp_path / "a" / "docs").mkdir(parents=True)
    (tmp_path / "a" / "b" / "guide").mkdir(parents=True)
    write(
        tmp_path / "a" / ".ra.toml",
        "[tree.docs]\npath = 'docs'\ninclude = ['**/*.rst']\nexclude = ['old/**']\n",
    )
    near = write(tmp_path / "a" / "b" / ".ra.toml", "[tree.docs]\npath = 'guide'\n")
    tree = load_config(tmp_path / "a" / "b", home).trees["docs"]
    assert tree.path == tmp_path / "a" / "b" / "guide"
    assert tree.include == DEFAULT_INCLUDE
    assert tree.exclude == ()
    assert tree.source == near


def test_a_global_tree_shadowed_by_a_local_one_becomes_local(project: Path, home: Path) -> None:
    write(home / ".ra.toml", "[tree.docs]\npath = '~'\n[tree.notes]\npath = '~'\n")
    write(project / ".ra.toml", "[tree.docs]\npath = 'docs'\n")
    trees = load_config(project, home).trees
    assert not trees["docs"].is_global
    assert trees["notes"].is_global


def test_trees_are_ordered_nearest_file_first(project: Path, home: Path) -> None:
    write(home / ".ra.toml", "[tree.zeta]\npath = '~'\n")
    write(project / ".ra.toml", "[tree.beta]\npath = 'docs'\n[tree.alpha]\npath = '.'\n")
    assert list(load_config(project, home).trees) == ["beta", "alpha", "zeta"]


def test_tilde_in_a_tree_path_expands_to_the_given_home(project: Path, home: Path) -> None:
    (home / "notes").mkdir()
    write(project / ".ra.toml", "[tree.notes]\npath = '~/notes'\n")
    assert load_config(project, home).trees["notes"].path == home / "notes"


def test_relative_tree_path_resolves_against_the_defining_file(tmp_path: Path, home: Path) -> None:
    (tmp_path / "a" / "docs").mkdir(parents=True)
    cwd = tmp_path / "a" / "b" / "c"
    cwd.mkdir(parents=True)
    (cwd / "docs").mkdir()  # a decoy next to cwd
    write(tmp_path / "a" / ".ra.toml", "[tree.docs]\npath = './docs'\n")
    assert load_config(cwd, home).trees["docs"].path == tmp_path / "a" / "docs"


def test_tree_include_defaults_to_markdown_restructuredtext_and_text(project: Path, home: Path) -> None:
    write(project / ".ra.toml", "[tree.docs]\npath = 'docs'\n")
    tree = load_config(project, home).trees["docs"]
    assert tree.include == DEFAULT_INCLUDE == ("**/*.md", "**/*.rst", "**/*.txt")
    assert tree.exclude == ()


def test_tree_records_its_source_file_and_header_line(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", "# docs\n\n[tree.docs]\npath = 'docs'\n")
    tree = load_config(project, home).trees["docs"]
    assert (tree.source, tree.line) == (source, 3)


def test_context_patterns_merge_with_the_nearer_file_winning(project: Path, home: Path) -> None:
    write(home / ".ra.toml", '[context.patterns]\n"*.rs" = ["rust"]\n"*.go" = ["golang"]\n')
    near = write(project / ".ra.toml", '[context.patterns]\n"*.rs" = ["rust", "cargo"]\n')
    rules = {r.match: r for r in load_config(project, home).rules}
    assert rules[("*.rs",)].terms == ("rust", "cargo")
    assert rules[("*.rs",)].source == near
    assert rules[("*.go",)].terms == ("golang",)


def test_context_rules_from_all_files_concatenate_nearer_first(project: Path, home: Path) -> None:
    write(home / ".ra.toml", '[[context.rules]]\nmatch = "*.rs"\nterms = ["rust"]\n')
    write(
        project / ".ra.toml",
        """
        [[context.rules]]
        match = "*.rs"
        terms = ["embedded"]

        [[context.rules]]
        match = ["src/**", "lib/**"]
        trees = ["docs"]
        include = ["docs:api.md"]

        [tree.docs]
        path = "docs"
        """,
    )
    rules = load_config(project, home).rules
    assert [r.terms for r in rules] == [("embedded",), (), ("rust",)]
    assert rules[1] == ContextRule(
        ("src/**", "lib/**"), ("docs",), (), ("docs:api.md",), project / ".ra.toml"
    )


def test_a_context_pattern_becomes_a_rule_with_terms_only(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", '[context.patterns]\n"tests/**" = ["testing"]\n')
    assert load_config(project, home).rules == (ContextRule(("tests/**",), None, ("testing",), (), source),)


def test_tilde_alone_is_the_home_directory(project: Path, home: Path) -> None:
    write(project / ".ra.toml", "[tree.home]\npath = '~'\n")
    assert load_config(project, home).trees["home"].path == home


def test_an_absolute_tree_path_is_used_as_given(project: Path, home: Path) -> None:
    write(project / ".ra.toml", f"[tree.h]\npath = {json.dumps(str(home))}\n")
    assert load_config(project, home).trees["h"].path == home


def test_rule_match_accepts_a_single_glob_or_a_list(project: Path, home: Path) -> None:
    write(
        project / ".ra.toml",
        '[[context.rules]]\nmatch = "*.rs"\n[[context.rules]]\nmatch = ["a/**", "b/**"]\n',
    )
    assert [r.match for r in load_config(project, home).rules] == [("*.rs",), ("a/**", "b/**")]


def test_patterns_from_a_farther_file_survive_when_the_nearer_has_none(project: Path, home: Path) -> None:
    glob = write(home / ".ra.toml", '[context.patterns]\n"*.go" = ["golang"]\n')
    write(project / ".ra.toml", "[settings]\ndefault_limit = 2\n")
    assert load_config(project, home).rules == (ContextRule(("*.go",), None, ("golang",), (), glob),)


# --- errors -------------------------------------------------------------------------------


def test_malformed_toml_names_the_file_and_line(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", "[search]\nstemmer = 'english'\n\nlimit = \n")
    message = error_of(project, home)
    assert message.startswith(f"{source}:4: invalid TOML: ")
    assert message.endswith(" — fix the syntax")
    assert "(at line" not in message


def test_malformed_toml_in_a_farther_file_is_reported_too(tmp_path: Path, home: Path) -> None:
    source = write(home / ".ra.toml", "[tree.notes\n")
    assert error_of(tmp_path, home).startswith(f"{source}:1: invalid TOML: ")


def test_wrong_type_names_file_line_section_and_key(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", "[settings]\ndefault_limit = 5\n[search]\nstemmer = 12\n")
    assert error_of(project, home) == f"{source}:4: [search] stemmer must be a string, got integer"


def test_an_integer_key_rejects_a_float(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", "[settings]\ndefault_limit = 5.0\n")
    assert error_of(project, home) == (f"{source}:2: [settings] default_limit must be an integer, got float")


def test_a_boolean_is_not_accepted_as_a_number(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", "[search.boost]\ntitle = true\n")
    assert error_of(project, home) == (f"{source}:2: [search.boost] title must be a number, got boolean")


def test_unknown_stemmer_lists_the_supported_ones(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", "# x\n[search]\nstemmer = 'klingon'\n")
    message = error_of(project, home)
    assert message.startswith(f'{source}:3: [search] stemmer "klingon" is not supported')
    assert all(name in message for name in STEMMERS)


def test_negative_limit_is_an_error(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", "[context]\nlimit = -1\n")
    assert error_of(project, home) == f"{source}:2: [context] limit must be at least 1, got -1"


def test_out_of_range_ratio_is_an_error(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", "[search]\n\ncutoff_ratio = 1.5\n")
    assert error_of(project, home) == (f"{source}:3: [search] cutoff_ratio must be between 0 and 1, got 1.5")


def test_fuzzy_distance_above_two_is_an_error(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", "[search]\nfuzzy_distance = 3\n")
    assert error_of(project, home) == (f"{source}:2: [search] fuzzy_distance must be between 0 and 2, got 3")


def test_aggregation_threshold_accepts_both_ends_of_its_range(project: Path, home: Path) -> None:
    write(project / ".ra.toml", "[search]\naggregation_threshold = 0\ncutoff_ratio = 1.0\n")
    search = load_config(project, home).search
    assert (search.aggregation_threshold, search.cutoff_ratio) == (0.0, 1.0)


def test_a_negative_boost_is_an_error(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", "[search.boost]\ntitle = -1\n")
    assert error_of(project, home) == (f"{source}:2: [search.boost] title must be 0 or more, got -1.0")


def test_a_zero_boost_turns_a_field_off(project: Path, home: Path) -> None:
    write(project / ".ra.toml", "[search.boost]\ntitle = 0\n")
    assert load_config(project, home).search.boost_title == 0.0


def test_a_negative_phrase_boost_is_an_error(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", "[search]\nphrase_boost = -0.5\n")
    assert error_of(project, home) == (f"{source}:2: [search] phrase_boost must be 0 or more, got -0.5")


def test_stopwords_must_be_a_boolean(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", '[search]\nstopwords = "no"\n')
    assert error_of(project, home) == (
        f"{source}:2: [search] stopwords must be a boolean (true or false), got string"
    )


def test_max_word_length_below_min_word_length_is_an_error(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", "[context]\nmax_word_length = 3\n")
    message = error_of(project, home)
    assert message.startswith(f"{source}:2: [context] max_word_length (3) is smaller than")


def test_missing_tree_path_names_file_and_line(project: Path, home: Path) -> None:
    write(project / ".ra.toml", "[tree.docs]\npath = 'nowhere'\n")
    source = project / ".ra.toml"
    assert error_of(project, home) == (
        f"{source}:2: [tree.docs] path {project / 'nowhere'} does not exist — create it or fix the path"
    )


def test_missing_tree_path_is_allowed_when_paths_are_not_required(project: Path, home: Path) -> None:
    write(project / ".ra.toml", "[tree.docs]\npath = 'nowhere'\n")
    config = load_config(project, home, require_paths=False)
    assert config.trees["docs"].path == project / "nowhere"


def test_tree_path_that_is_a_file_is_an_error(project: Path, home: Path) -> None:
    (project / "notes.md").write_text("# notes\n", encoding="utf-8")
    source = write(project / ".ra.toml", "# x\n\n[tree.notes]\npath = 'notes.md'\n")
    message = error_of(project, home)
    assert message.startswith(f"{source}:4: [tree.notes] path {project / 'notes.md'} is not a dir")


def test_a_shadowed_tree_with_a_missing_path_is_not_an_error(project: Path, home: Path) -> None:
    write(home / ".ra.toml", "[tree.docs]\npath = '~/gone'\n")
    write(project / ".ra.toml", "[tree.docs]\npath = 'docs'\n")
    assert load_config(project, home).trees["docs"].path == project / "docs"


def test_tree_without_a_path_key_is_an_error(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", "[tree.docs]\ninclude = ['*.md']\n")
    assert error_of(project, home) == (
        f"{source}:1: [tree.docs] is missing the required key 'path' — add path = \"./docs\""
    )


def test_bad_tree_name_is_an_error(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", '[tree."my:docs"]\npath = "docs"\n')
    message = error_of(project, home)
    assert message.startswith(f'{source}:1: [tree."my:docs"] "my:docs" is not a valid tree name')


def test_tree_include_must_be_an_array_of_strings(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", "[tree.docs]\npath = 'docs'\ninclude = '*.md'\n")
    assert error_of(project, home) == (
        f"{source}:3: [tree.docs] include must be an array of strings, got string"
    )


def test_rule_without_match_names_its_header_line(project: Path, home: Path) -> None:
    source = write(
        project / ".ra.toml",
        '[[context.rules]]\nmatch = "*.rs"\n\n[[context.rules]]\nterms = ["x"]\n',
    )
    assert error_of(project, home).startswith(
        f"{source}:4: [[context.rules]] is missing the required key 'match'"
    )


def test_a_wrong_type_in_the_second_rule_names_that_rules_line(project: Path, home: Path) -> None:
    source = write(
        project / ".ra.toml",
        """
        [[context.rules]]
        match = "*.rs"
        terms = ["rust"]

        [[context.rules]]
        match = "*.py"
        terms = "python"
        """,
    )
    assert error_of(project, home) == (
        f"{source}:7: [[context.rules]] terms must be an array of strings, got string"
    )


def test_rule_include_must_be_a_document_id(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", '[[context.rules]]\nmatch = "*"\ninclude = ["a.md"]\n')
    assert error_of(project, home).startswith(
        f'{source}:3: [[context.rules]] include "a.md" is not a document id'
    )


def test_root_must_be_a_boolean(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", "root = 'yes'\n")
    assert error_of(project, home) == (f"{source}:1: root must be a boolean (true or false), got string")


def test_a_file_that_is_not_utf8_is_an_error(project: Path, home: Path) -> None:
    (project / ".ra.toml").write_bytes(b"[search]\nstemmer = '\xff'\n")
    assert "not valid UTF-8" in error_of(project, home)


def test_an_unreadable_config_file_is_an_error(project: Path, home: Path) -> None:
    (project / ".ra.toml").mkdir()  # reading a directory fails whoever runs the test
    assert error_of(project, home).startswith(f"{project / '.ra.toml'}: cannot read: ")


def test_toml_error_at_end_of_document_points_at_the_last_line(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", "[tree.docs]\npath = 'docs'\ninclude = [1,\n")
    assert error_of(project, home) == (f"{source}:3: invalid TOML: Invalid value — fix the syntax")


def test_an_infinite_boost_is_an_error(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", "[settings]\nlocal_boost = inf\n")
    assert error_of(project, home) == (f"{source}:2: [settings] local_boost must be a finite number, got inf")


def test_a_section_that_is_not_a_table_is_an_error(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", "[search]\nboost = 2.0\n")
    assert error_of(project, home) == f"{source}:2: [search.boost] must be a table, got float"


def test_an_empty_tree_path_is_an_error(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", "[tree.docs]\npath = ''\n")
    assert error_of(project, home).startswith(f"{source}:2: [tree.docs] path is empty")


def test_an_empty_rule_match_is_an_error(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", "[[context.rules]]\nmatch = []\n")
    assert error_of(project, home).startswith(f"{source}:2: [[context.rules]] match is empty")


# --- warnings -----------------------------------------------------------------------------


def test_unknown_key_is_a_warning_naming_file_line_and_key(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", "[settings]\ndefault_limit = 3\n\ncolour = 'blue'\n")
    config = load_config(project, home)
    assert config.warnings == (f"{source}:4: unknown key 'colour' in [settings] — ignored",)
    assert config.settings.default_limit == 3


def test_unknown_key_warning_suggests_a_close_match(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", "[search]\nstemer = 'english'\n")
    assert load_config(project, home).warnings == (
        f"{source}:2: unknown key 'stemer' in [search] (did you mean 'stemmer'?) — ignored",
    )


def test_unknown_section_and_tree_key_are_warnings(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", "[colours]\nx = 1\n[tree.docs]\npath='docs'\nglob=1\n")
    warnings = load_config(project, home).warnings
    assert warnings == (
        f"{source}:1: unknown key 'colours' at top level — ignored",
        f"{source}:5: unknown key 'glob' in [tree.docs] — ignored",
    )


def test_dotted_and_inline_keys_are_located(project: Path, home: Path) -> None:
    source = write(
        project / ".ra.toml",
        "search.boost = { title = 2.0 }\nsearch.stemer = 'english'\n",
    )
    assert load_config(project, home).warnings == (
        f"{source}:2: unknown key 'stemer' in [search] (did you mean 'stemmer'?) — ignored",
    )


def test_quoted_keys_and_multiline_values_keep_line_numbers_right(project: Path, home: Path) -> None:
    source = write(
        project / ".ra.toml",
        """
        [context.patterns]
        "*.rs" = [
          "rust",
          "cargo = build",
        ]
        "src/**" = 7
        """,
    )
    assert error_of(project, home) == (
        f'{source}:6: [context.patterns] "src/**" must be an array of strings, got integer'
    )


def test_chunk_settings_without_effect_are_warned_about(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", "[settings]\nchunk_at_headings = false\nmin_chunk_size = 100\n")
    warnings = load_config(project, home).warnings
    assert len(warnings) == 2
    assert warnings[0].startswith(f"{source}:2: [settings] chunk_at_headings has no effect")
    assert warnings[1].startswith(f"{source}:3: [settings] min_chunk_size has no effect")
    assert all("heading chunk tree" in w for w in warnings)


def test_a_body_boost_is_warned_about_the_body_is_ranked_as_part_of_text(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", "[search.boost]\ntext = 2.0\nbody = 1.0\n")
    config = load_config(project, home)
    assert config.warnings == (
        f"{source}:3: [search.boost] body has no effect — a chunk's body is ranked as part of "
        "`text` (weigh that instead); remove it",
    )
    assert search_defaults(config)["boosts"] == {"text": 2.0, "title": 0.1, "tags": 0.0, "path": 0.1}
    assert "\nbody" not in render_config(config) and "body" not in config_to_dict(config)["search"]["boost"]


def test_a_body_boost_is_still_checked_as_a_weight(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", "[search.boost]\nbody = -1\n")
    assert error_of(project, home) == (f"{source}:2: [search.boost] body must be 0 or more, got -1.0")


def test_rule_naming_an_unknown_tree_is_a_warning(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", '[[context.rules]]\nmatch = "*"\ntrees = ["nope"]\n')
    assert load_config(project, home).warnings == (
        f"{source}:1: [[context.rules]] trees names unknown tree 'nope' — ignored",
    )


def test_an_empty_tree_include_is_a_warning(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", "[tree.docs]\npath = 'docs'\ninclude = []\n")
    (warning,) = load_config(project, home).warnings
    assert warning.startswith(f"{source}:3: [tree.docs] include is empty")


def test_rule_include_naming_an_unknown_tree_is_a_warning(project: Path, home: Path) -> None:
    source = write(project / ".ra.toml", '[[context.rules]]\nmatch = "*"\ninclude = ["x:a.md"]\n')
    assert load_config(project, home).warnings == (
        f"{source}:1: [[context.rules]] include 'x:a.md' names unknown tree 'x' — ignored",
    )


def test_warnings_from_every_file_are_kept_nearest_first(project: Path, home: Path) -> None:
    glob = write(home / ".ra.toml", "[settings]\nfoo = 1\n")
    local = write(project / ".ra.toml", "[context]\nbar = 1\n")
    assert [w.split(":")[0] for w in load_config(project, home).warnings] == [
        str(local),
        str(glob),
    ]


# --- output -------------------------------------------------------------------------------


@pytest.fixture
def layered(project: Path, home: Path) -> Path:
    """A project config over a global one, with trees, patterns and rules in both."""
    (home / "notes").mkdir()
    write(
        home / ".ra.toml",
        """
        [search]
        stemmer = "german"

        [tree.notes]
        path = "~/notes"

        [context.patterns]
        "*.rs" = ["rust"]
        """,
    )
    write(
        project / ".ra.toml",
        """
        [settings]
        local_boost = 2.0

        [tree.docs]
        path = "docs"
        exclude = ["drafts/**", "quote\\"d"]

        [[context.rules]]
        match = "src/**"
        trees = ["docs"]
        terms = ["api"]
        include = ["docs:api.md"]
        """,
    )
    return project


def test_render_config_is_valid_toml_with_every_effective_value(layered: Path, home: Path) -> None:
    config = load_config(layered, home)
    data = tomllib.loads(render_config(config))
    assert data["settings"]["local_boost"] == 2.0
    assert data["search"]["stemmer"] == "german"
    assert data["search"]["boost"] == {"text": 1.0, "title": 0.1, "tags": 0.0, "path": 0.1}
    assert data["context"]["sample_size"] == 50_000
    assert data["tree"]["docs"]["exclude"] == ["drafts/**", 'quote"d']
    assert data["tree"]["notes"]["path"] == str(home / "notes")
    assert [r["match"] for r in data["context"]["rules"]] == [["src/**"], ["*.rs"]]


def test_render_config_names_each_trees_source_and_scope(layered: Path, home: Path) -> None:
    text = render_config(load_config(layered, home))
    assert f"[tree.docs]  # from {layered / '.ra.toml'} (local)" in text
    assert f"[tree.notes]  # from {home / '.ra.toml'} (global)" in text
    assert text.index(str(layered / ".ra.toml")) < text.index(str(home / ".ra.toml"))


def test_rendered_config_loads_back_to_the_same_settings(layered: Path, home: Path, tmp_path: Path) -> None:
    config = load_config(layered, home)
    elsewhere = tmp_path / "copy"
    write(elsewhere / ".ra.toml", render_config(config))
    again = load_config(elsewhere, tmp_path / "empty-home")
    assert (again.settings, again.search, again.context) == (
        config.settings,
        config.search,
        config.context,
    )
    assert {n: t.path for n, t in again.trees.items()} == {n: t.path for n, t in config.trees.items()}
    assert again.warnings == ()


def test_render_config_without_files_says_so_and_still_parses(tmp_path: Path, home: Path) -> None:
    text = render_config(load_config(tmp_path, home))
    assert "ra init" in text
    assert tomllib.loads(text)["settings"]["default_limit"] == 5


def test_config_to_dict_is_json_serialisable(layered: Path, home: Path) -> None:
    data = json.loads(json.dumps(config_to_dict(load_config(layered, home))))
    assert data["trees"]["notes"]["global"] is True
    assert data["trees"]["docs"]["path"] == str(layered / "docs")
    assert data["search"]["boost"]["title"] == 0.1
    assert data["key_sources"]["settings.local_boost"] == str(layered / ".ra.toml")
    assert data["rules"][1]["trees"] is None


def test_render_config_marks_defaults_and_the_file_that_set_each_value(layered: Path, home: Path) -> None:
    lines = render_config(load_config(layered, home)).splitlines()
    assert f"local_boost = 2.0  # from {layered / '.ra.toml'}" in lines
    assert f'stemmer = "german"  # from {home / ".ra.toml"}' in lines
    assert "default_limit = 5  # default" in lines


def test_render_config_comments_out_min_chunk_size_which_has_no_effect(tmp_path: Path, home: Path) -> None:
    text = render_config(load_config(tmp_path, home))
    assert "\n# min_chunk_size = 2000  # no effect" in text
    assert "min_chunk_size" not in tomllib.loads(text)["settings"]


def test_semantic_is_read_per_tree_over_the_settings_default(project: Path, home: Path) -> None:
    (project / "notes").mkdir()
    write(
        project / ".ra.toml",
        "[settings]\nsemantic = true\n[search]\nsemantic_weight = 0.3\n"
        "[tree.docs]\npath = 'docs'\n[tree.notes]\npath = 'notes'\nsemantic = false\n",
    )
    config = load_config(project, home)
    assert (config.settings.semantic, config.search.semantic_weight) == (True, 0.3)
    assert config.semantic_trees() == ["docs"]
    assert config.warnings == ()


def test_no_tree_is_semantic_unless_asked(project: Path, home: Path) -> None:
    write(project / ".ra.toml", "[tree.docs]\npath = 'docs'\n")
    assert load_config(project, home).semantic_trees() == []


def test_a_tree_semantic_that_is_not_a_boolean_names_its_file_and_line(project: Path, home: Path) -> None:
    config = write(project / ".ra.toml", "[tree.docs]\npath = 'docs'\nsemantic = 'yes'\n")
    assert (
        error_of(project, home)
        == f"{config}:3: [tree.docs] semantic must be a boolean (true or false), got string"
    )


def test_a_semantic_weight_past_one_names_its_file_and_line(project: Path, home: Path) -> None:
    config = write(project / ".ra.toml", "[search]\nsemantic_weight = 2\n[tree.docs]\npath = 'docs'\n")
    assert error_of(project, home) == f"{config}:2: [search] semantic_weight must be between 0 and 1, got 2.0"


def test_a_type_weight_past_one_names_its_file_and_line(project: Path, home: Path) -> None:
    config = write(project / ".ra.toml", "[tree.docs]\npath = 'docs'\n[search]\ntype_weight = 1.5\n")
    assert error_of(project, home) == f"{config}:4: [search] type_weight must be between 0 and 1, got 1.5"


def test_a_negative_code_words_weight_names_its_file_and_line(project: Path, home: Path) -> None:
    config = write(project / ".ra.toml", "[tree.docs]\npath = 'docs'\n[search]\ncode_words = -1\n")
    assert error_of(project, home) == f"{config}:4: [search] code_words must be between 0 and 1000, got -1.0"


def test_code_words_and_the_code_semantic_weight_are_read_from_search(project: Path, home: Path) -> None:
    write(
        project / ".ra.toml",
        "[search]\ncode_words = 0\ncode_semantic_weight = 0.3\n[tree.docs]\npath = 'docs'\n",
    )
    config = load_config(project, home=home)
    assert (config.search.code_words, config.search.code_semantic_weight) == (0.0, 0.3)

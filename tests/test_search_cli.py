"""`ra search`/`ra get` and `ra-query search`/`ra-query get` as a user runs them.

Real processes over tests/fixtures/query_corpus (trees `docs` and `notes`). The module builds the
corpus once for the tests that only read it; a test that edits files or configuration makes its
own copy. Exact text and JSON are pinned in tests/golden/search_cli_* (pytest --update-goldens).
"""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ra_query.text.tokens import count_tokens
from tests.conftest import BIN, CONFIG_CEILING, Run, built_copy, drain, run_cmd

QUERY_CORPUS = Path(__file__).parent / "fixtures" / "query_corpus"
Golden = Callable[[str, str], None]
ESC = "\x1b["


@dataclass(frozen=True)
class Kb:
    """A built copy of the query corpus and the HOME its commands run with."""

    root: Path
    home: Path

    @property
    def artifacts(self) -> Path:
        return self.root / ".ra"

    def ra(self, *args: str, env: dict[str, str] | None = None) -> Run:
        return run_cmd("ra", *args, cwd=self.root, home=self.home, env=env)

    def rq(self, *args: str, artifacts: Path | None = None, env: dict[str, str] | None = None) -> Run:
        where = str(artifacts or self.artifacts)
        return run_cmd("ra-query", "--artifacts", where, *args, cwd=self.root, home=self.home, env=env)

    def clean(self, text: str) -> str:
        return text.replace(str(self.root.parent), "<TMP>")


def _make(base: Path) -> Kb:
    return Kb(*built_copy(QUERY_CORPUS, base))


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Kb:
    """Built once per module: tests using it must not change it."""
    return _make(tmp_path_factory.mktemp("search_cli"))


@pytest.fixture
def own(tmp_path: Path) -> Kb:
    """A private built copy that the test may edit."""
    return _make(tmp_path)


def as_json(run: Run) -> dict[str, Any]:
    assert run.err == "", run.err
    return json.loads(run.out)


def result_ids(payload: dict[str, Any], topic: int = 0) -> list[str]:
    return [r["id"] for r in payload["queries"][topic]["results"]]


def headers(text: str) -> list[str]:
    return re.findall(r"^─── (.*) ───$", text, flags=re.MULTILINE)


def set_config(kb: Kb, extra: str) -> None:
    path = kb.root / ".ra.toml"
    path.write_text(path.read_text(encoding="utf-8") + "\n" + extra, encoding="utf-8")


# --- the query language at the command line ------------------------------------------------------


@pytest.mark.parametrize("program", ["ra", "ra-query"])
def test_a_broken_query_is_read_leniently_with_a_note_and_exits_0(shared: Kb, program: str) -> None:
    run = shared.ra("search", "canary (image") if program == "ra" else shared.rq("search", "canary (image")
    assert (run.code, run.err) == (0, "")
    assert run.out.startswith(
        "note: query syntax error at column 8 (unbalanced parenthesis); read as: canary image\n"
    )


@pytest.mark.parametrize("program", ["ra", "ra-query"])
def test_under_strict_a_syntax_error_shows_the_query_and_a_caret_and_exits_1(
    shared: Kb, program: str
) -> None:
    args = ("search", "--strict", "pool (size")
    run = shared.ra(*args) if program == "ra" else shared.rq(*args)
    assert run.code == 1 and run.out == ""
    assert run.err == (
        f"{program}: error: query syntax error at column 6: unbalanced parenthesis — this ( is never"
        " closed; add a ) to end the group\n"
        "pool (size\n"
        "     ^\n"
    )


def test_lenient_is_the_default_and_still_accepted(shared: Kb) -> None:
    run = shared.ra("search", "--lenient", "(canary")
    assert run.code == 0, run.err
    assert run.out == shared.ra("search", "(canary").out
    assert run.out.startswith(
        "note: query syntax error at column 1 (unbalanced parenthesis); read as: canary\n"
    )
    assert headers(run.out) == ["docs:deploy.md#rolling-back", "docs:deploy.md#rolling-out"]


def test_the_reading_note_is_in_the_json(shared: Kb) -> None:
    topic = as_json(shared.rq("search", "--json", "canary OR"))["queries"][0]
    assert topic["note"] == "query syntax error at column 8 (OR with nothing after it); read as: canary"
    assert topic["results"]


def test_a_lone_dash_and_lower_case_or_are_words_not_operators(shared: Kb) -> None:
    for query in ("canary - image", "canary or image"):
        topic = as_json(shared.rq("search", "--json", query))["queries"][0]
        assert "note" not in topic and topic["results"], query


def test_raw_passes_tantivy_syntax_through(shared: Kb) -> None:
    ours = shared.rq("search", "--no-aggregation", "title:logging NOT body:request")
    raw = shared.rq("search", "--no-aggregation", "--raw", "title:logging NOT body:request")
    assert headers(ours.out) == ["docs:logging.md#request-logging"]  # NOT is a word to ra
    assert "docs:logging.md#request-logging" not in headers(raw.out)


def test_lenient_and_raw_cannot_be_combined(shared: Kb) -> None:
    run = shared.rq("search", "--lenient", "--raw", "x")
    assert run.code == 2 and "not allowed with argument" in run.err


def test_words_no_chunk_holds_together_are_ranked_without_a_note(shared: Kb) -> None:
    run = shared.ra("search", "canary dashboards")
    assert run.code == 0, run.err
    assert not run.out.startswith("note:")
    topic = as_json(shared.rq("search", "--json", "canary dashboards"))["queries"][0]
    assert topic["relaxed"] is False and topic["results"]


def test_a_phrase_that_matches_nothing_is_relaxed_and_marked(shared: Kb) -> None:
    run = shared.ra("search", '"canary dashboards"')
    assert run.code == 0, run.err
    assert run.out.startswith(
        "note: nothing has every phrase and field term; showing chunks with any of the words\n"
    )
    topic = as_json(shared.rq("search", "--json", '"canary dashboards"'))["queries"][0]
    assert topic["relaxed"] is True and topic["results"]


def test_an_and_query_that_matches_is_not_marked_relaxed(shared: Kb) -> None:
    topic = as_json(shared.rq("search", "--json", "canary image"))["queries"][0]
    assert topic["relaxed"] is False and "note" not in topic


def test_strict_requires_every_word_and_exits_1_when_none_has_them_all(shared: Kb) -> None:
    run = shared.ra("search", "--strict", "canary dashboards")
    assert (run.code, run.err) == (1, "")
    assert run.out == "note: no chunk has every word — drop --strict to rank chunks with any of them\n"
    topic = as_json(shared.rq("search", "--strict", "--json", "canary dashboards"))["queries"][0]
    assert topic["relaxed"] is False and topic["results"] == []


@pytest.mark.parametrize("program", ["ra", "ra-query"])
def test_a_query_that_matches_nothing_says_so_and_exits_1_without_an_error(shared: Kb, program: str) -> None:
    args = ("search", "xylophone quixotic")
    run = shared.ra(*args) if program == "ra" else shared.rq(*args)
    assert (run.code, run.err) == (1, "")
    assert run.out == "note: no results — try fewer or different words\n"


def test_nothing_found_in_json_is_an_empty_result_list_with_exit_1(shared: Kb) -> None:
    run = shared.rq("search", "--json", "xylophone")
    assert run.code == 1
    topic = as_json(run)["queries"][0]
    assert (topic["results"], topic["total_matches"]) == ([], 0)


# --- ranking ---------------------------------------------------------------------------------------

PLAIN = ("--no-aggregation", "--cutoff-ratio", "0", "--json")


def test_field_boosts_from_the_config_change_the_order(own: Kb) -> None:
    before = result_ids(as_json(own.ra("search", *PLAIN, "latency")))
    assert before == ["docs:performance.md#measuring", "docs:performance.md#latency-budget"]
    set_config(own, "[search.boost]\ntitle = 3.0\n")
    after = result_ids(as_json(own.ra("search", *PLAIN, "latency")))
    assert after == ["docs:performance.md#latency-budget", "docs:performance.md#measuring"]


def test_ra_query_ranks_with_the_boosts_recorded_at_build_time(own: Kb) -> None:
    set_config(own, "[search.boost]\ntitle = 3.0\n")
    assert own.ra("update").code == 0
    after = result_ids(as_json(own.rq("search", *PLAIN, "latency")))
    assert after == ["docs:performance.md#latency-budget", "docs:performance.md#measuring"]


def _with_global_tree(kb: Path, home: Path) -> None:
    """`common` (defined in ~/.ra.toml) holds a copy of the local `notes` tree."""
    shutil.copytree(QUERY_CORPUS / "notes", home / "common")
    (home / ".ra.toml").write_text('[tree.common]\npath = "~/common"\n', encoding="utf-8")
    shutil.copytree(QUERY_CORPUS, kb)


def test_a_global_trees_copy_of_a_local_page_is_shown_once_under_the_local_one(
    ra: Callable[..., Run], home: Path, tmp_path: Path
) -> None:
    _with_global_tree(tmp_path / "kb", home)
    results = as_json(ra("search", *PLAIN, "pager", cwd=tmp_path / "kb"))["queries"][0]["results"]
    assert [(r["id"], r.get("also")) for r in results] == [
        ("notes:oncall.md#paging", ["common:oncall.md#paging"])
    ]


def test_a_copy_shown_as_also_under_one_topic_is_not_shown_again_under_another(
    ra: Callable[..., Run], home: Path, tmp_path: Path
) -> None:
    _with_global_tree(tmp_path / "kb", home)
    payload = as_json(ra("search", *PLAIN, "pager", "pager tree:common", cwd=tmp_path / "kb"))
    assert result_ids(payload, 0) == ["notes:oncall.md#paging"]
    assert result_ids(payload, 1) == []


def test_a_local_boost_of_one_ranks_local_and_global_trees_alike(
    ra: Callable[..., Run], home: Path, tmp_path: Path
) -> None:
    _with_global_tree(tmp_path / "kb", home)
    set_config(Kb(tmp_path / "kb", home), "[settings]\nlocal_boost = 1.0\n")
    results = as_json(ra("search", *PLAIN, "pager", cwd=tmp_path / "kb"))["queries"][0]["results"]
    # equal scores fall back to id order, so the global `common` now comes first
    assert [(r["id"], r.get("also")) for r in results] == [
        ("common:oncall.md#paging", ["notes:oncall.md#paging"])
    ]


def test_the_english_stemmer_finds_handled_for_handling(shared: Kb) -> None:
    run = shared.rq("search", "handling")
    assert headers(run.out) == ["docs:logging.md#errors"]


def test_another_stemmer_in_the_config_does_not_conflate_english_forms(own: Kb) -> None:
    set_config(own, '[search]\nstemmer = "french"\n')
    run = own.ra("search", "handling")
    assert run.code == 1, run.out
    assert headers(run.out) == []


def test_a_one_letter_typo_finds_the_chunk_and_is_marked_fuzzy(shared: Kb) -> None:
    topic = as_json(shared.rq("search", *PLAIN, "kubernetis"))["queries"][0]
    assert topic["fuzzy"] is True
    assert "docs:kubernetes.md#scheduling" in [r["id"] for r in topic["results"]]


def test_a_word_spelled_right_is_not_marked_fuzzy(shared: Kb) -> None:
    assert as_json(shared.rq("search", "--json", "kubernetes"))["queries"][0]["fuzzy"] is False


@pytest.mark.parametrize("flag", ["-t", "--tree"])
def test_the_tree_option_keeps_only_that_tree(shared: Kb, flag: str) -> None:
    everywhere = as_json(shared.rq("search", *PLAIN, "every"))["queries"][0]["results"]
    notes = as_json(shared.rq("search", *PLAIN, flag, "notes", "every"))["queries"][0]["results"]
    assert {r["tree"] for r in everywhere} == {"docs", "notes"}
    assert [r["tree"] for r in notes] == ["notes"]


def test_the_tree_option_may_be_repeated(shared: Kb) -> None:
    both = as_json(shared.rq("search", *PLAIN, "-t", "notes", "-t", "docs", "every"))
    assert {r["tree"] for r in both["queries"][0]["results"]} == {"docs", "notes"}


# --- the pipeline flags --------------------------------------------------------------------------


def test_matching_siblings_at_the_threshold_merge_into_their_parent_with_constituents(shared: Kb) -> None:
    run = shared.rq("search", "--json", "--aggregation-threshold", "0.75", "image")  # three of four
    results = as_json(run)["queries"][0]["results"]
    assert [r["id"] for r in results] == ["docs:deploy.md#deployment"]
    assert results[0]["constituents"] == [
        "docs:deploy.md#building-the-image",
        "docs:deploy.md#rolling-back",
        "docs:deploy.md#rolling-out",
    ]


def test_no_aggregation_returns_the_sections_without_constituents(shared: Kb) -> None:
    results = as_json(shared.rq("search", "--json", "--no-aggregation", "canary"))["queries"][0]["results"]
    assert [r["id"] for r in results] == ["docs:deploy.md#rolling-back", "docs:deploy.md#rolling-out"]
    assert all("constituents" not in r for r in results)


def test_an_aggregation_threshold_above_the_matching_share_keeps_siblings_apart(shared: Kb) -> None:
    run = shared.rq("search", "--json", "--aggregation-threshold", "0.8", "--cutoff-ratio", "0", "image")
    assert result_ids(as_json(run)) == [
        "docs:deploy.md#building-the-image",
        "docs:deploy.md#rolling-back",
        "docs:deploy.md#rolling-out",
    ]


def test_by_default_three_matching_sections_of_four_stay_apart(shared: Kb) -> None:
    results = as_json(shared.rq("search", "--json", "--cutoff-ratio", "0", "image"))["queries"][0]["results"]
    assert sorted(r["id"] for r in results) == [
        "docs:deploy.md#building-the-image",
        "docs:deploy.md#rolling-back",
        "docs:deploy.md#rolling-out",
    ]


def test_an_aggregated_result_shows_the_text_of_its_constituents(shared: Kb) -> None:
    run = shared.rq("search", "--aggregation-threshold", "0.75", "image")
    assert headers(run.out) == ["docs:deploy.md#deployment"]
    assert "Build the container image with the release tag." in run.out
    assert "redeploy the previous image" in run.out


def test_matches_of_an_aggregated_result_lists_the_matching_lines_of_its_section(shared: Kb) -> None:
    run = shared.rq("search", "--matches", "image")
    assert "(matched by title or path)" not in run.out
    assert "Build the container image with the release tag." in run.out


def test_an_aggregated_result_has_a_snippet_with_the_match(shared: Kb) -> None:
    results = as_json(shared.rq("search", "--json", "--list", "image"))["queries"][0]["results"]
    assert "<em>image</em>" in results[0]["snippet"]


def test_the_elbow_drops_results_after_a_steep_fall_and_cutoff_zero_keeps_them(shared: Kb) -> None:
    cut = result_ids(
        as_json(shared.rq("search", "--json", "--no-aggregation", "--cutoff-ratio", "0.9", "image"))
    )
    kept = result_ids(as_json(shared.rq("search", *PLAIN, "image")))
    assert cut == ["docs:deploy.md#building-the-image"]
    assert kept == [
        "docs:deploy.md#building-the-image",
        "docs:deploy.md#rolling-back",
        "docs:deploy.md#rolling-out",
    ]


@pytest.mark.parametrize("flag", ["-n", "--limit"])
def test_the_limit_caps_the_results_per_topic(shared: Kb, flag: str) -> None:
    assert len(result_ids(as_json(shared.rq("search", *PLAIN, flag, "2", "image")))) == 2


def test_the_candidate_limit_caps_what_reaches_the_pipeline(shared: Kb) -> None:
    payload = as_json(shared.rq("search", *PLAIN, "--candidate-limit", "1", "image"))
    assert result_ids(payload) == ["docs:deploy.md#building-the-image"]
    assert payload["queries"][0]["total_matches"] == 3


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--cutoff-ratio", "1.5"), "--cutoff-ratio must be between 0 and 1"),
        (("--aggregation-threshold", "-1"), "--aggregation-threshold must be between 0 and 1"),
        (("-n", "0"), "--limit must be between 1 and 1000"),
        (("-n", str(10**30)), "--limit must be between 1 and 1000"),
        (("--candidate-limit", "0"), "--candidate-limit must be between 1 and 10000"),
        (("--candidate-limit", "100000000000"), "--candidate-limit must be between 1 and 10000"),
        (("--max-tokens", str(10**30)), "--max-tokens must be between 1 and 10000000"),
    ],
)
def test_out_of_range_pipeline_flags_are_errors_with_exit_2(
    shared: Kb, flags: tuple[str, ...], message: str
) -> None:
    run = shared.rq("search", *flags, "image")
    assert (run.code, run.err) == (2, f"ra-query: error: {message}\n")


def test_explain_prints_the_parsed_query_the_parameters_and_the_stage_counts(shared: Kb) -> None:
    run = shared.rq("search", "--explain", "image -canary")
    assert run.code == 0, run.err
    assert run.out.startswith(
        "explain: parsed: image -canary\n"
        "explain: parameters: candidate_limit=20 aggregation_threshold=0.9 cutoff_ratio=0.5 limit=5"
        " aggregation=on fuzzy_distance=1\n"
        "explain: counts: matches=1 candidates=1 after_aggregation=1 after_show=1 after_elbow=1 after_limit=1\n"
    )


def test_explain_shows_flag_overrides_and_the_json_carries_it_too(shared: Kb) -> None:
    payload = as_json(shared.rq("search", "--json", "--explain", "-n", "2", "--no-aggregation", "image"))
    assert payload["queries"][0]["explain"][1] == (
        "parameters: candidate_limit=20 aggregation_threshold=0.9 cutoff_ratio=0.5 limit=2"
        " aggregation=off fuzzy_distance=1"
    )


# --- several topics -------------------------------------------------------------------------------


def test_topics_are_printed_in_the_order_given_each_under_its_own_header(shared: Kb) -> None:
    run = shared.rq("search", "pager", "latency")
    assert run.code == 0, run.err
    assert re.findall(r"^═══ (.*) ═══$", run.out, flags=re.MULTILINE) == ["pager", "latency"]
    assert run.out.index("notes:oncall.md#paging") < run.out.index("docs:performance.md")


def test_a_chunk_shown_in_two_topics_appears_once_under_the_one_where_it_ranks_best(shared: Kb) -> None:
    payload = as_json(shared.rq("search", *PLAIN, "image", "canary"))
    assert result_ids(payload, 0) == ["docs:deploy.md#building-the-image"]
    assert result_ids(payload, 1) == ["docs:deploy.md#rolling-back", "docs:deploy.md#rolling-out"]


def test_a_topic_with_no_results_of_its_own_still_appears(shared: Kb) -> None:
    payload = as_json(shared.rq("search", "--json", "image", "image"))
    assert [q["query"] for q in payload["queries"]] == ["image", "image"]
    assert payload["queries"][1]["results"] == []


def test_one_token_budget_spans_all_topics(shared: Kb) -> None:
    args = ("--no-aggregation", "--cutoff-ratio", "0", "image", "pager")
    unlimited = _printed_results(shared.rq("search", *args).out)
    assert len(unlimited) == 4  # image: three sections; pager: one
    image_first, pager_first = unlimited[0], unlimited[3]
    budget = count_tokens(image_first) + count_tokens(pager_first)
    payload = as_json(shared.rq("search", "--json", "--max-tokens", str(budget), *args))
    # round robin: the best of each topic before the second of any, and one budget for both
    assert result_ids(payload, 0) == ["docs:deploy.md#building-the-image"]
    assert result_ids(payload, 1) == ["notes:oncall.md#paging"]
    assert payload["tokens"] == {
        "used": budget,
        "max": budget,
        "omitted": 2,
        "truncated": False,
        "omitted_ids": ["docs:deploy.md#rolling-back", "docs:deploy.md#rolling-out"],
    }


# --- output modes --------------------------------------------------------------------------------


def test_list_shows_id_breadcrumb_and_a_snippet(shared: Kb) -> None:
    run = shared.rq("search", "--list", "daily")
    assert run.out == (
        "docs:logging.md#log-rotation  Logging › Log rotation\n"
        "  Logs rotate daily; old files are compressed with gzip.\n"
    )


def test_a_snippet_of_a_short_body_shows_the_whole_body(shared: Kb) -> None:
    run = shared.rq("search", "--list", "gzip")
    assert run.out.splitlines()[1] == "  Logs rotate daily; old files are compressed with gzip."


def test_list_output_to_a_pipe_has_no_em_tags_and_json_keeps_them(shared: Kb) -> None:
    assert "<em>" not in shared.rq("search", "--list", "gzip").out
    snippet = json.loads(shared.rq("search", "--list", "--json", "gzip").out)["queries"][0]["results"][0][
        "snippet"
    ]
    assert snippet == "Logs rotate daily; old files are compressed with <em>gzip</em>."


@pytest.mark.parametrize(("mode", "flag"), [("list", "--list"), ("matches", "--matches"), ("json", "--json")])
def test_output_option_is_the_same_as_the_flag(shared: Kb, mode: str, flag: str) -> None:
    assert shared.rq("search", "-o", mode, "image", "pager") == shared.rq("search", flag, "image", "pager")


def test_output_full_is_the_default(shared: Kb) -> None:
    assert shared.rq("search", "-o", "full", "image") == shared.rq("search", "image")


def test_list_json_has_no_content(shared: Kb) -> None:
    results = as_json(shared.rq("search", "--json", "--list", "latency"))["queries"][0]["results"]
    assert results and all("content" not in r for r in results)


def test_matches_shows_only_matching_lines_with_their_file_line_numbers(shared: Kb) -> None:
    run = shared.rq("search", "--matches", "production")
    assert run.out == "─── docs:deploy.md ───\n  L6: How we ship the service to production.\n"
    lines = (shared.root / "docs" / "deploy.md").read_text(encoding="utf-8").splitlines()
    assert lines[6 - 1] == "How we ship the service to production."


def test_matches_line_numbers_in_a_section_are_the_file_line_numbers(shared: Kb) -> None:
    run = shared.rq("search", "--matches", "swallowed")
    number = int(re.search(r"L(\d+): .*swallowed", run.out).group(1))  # type: ignore[union-attr]
    lines = (shared.root / "docs" / "logging.md").read_text(encoding="utf-8").splitlines()
    assert "swallowed" in lines[number - 1]


def test_ra_search_and_ra_query_search_print_the_same_on_fresh_artifacts(shared: Kb) -> None:
    for args in (("image", "pager"), ("--list", "every"), ("--matches", "zones")):
        assert shared.ra("search", *args) == shared.rq("search", *args)


def test_ra_search_and_ra_query_search_rank_alike_in_json(shared: Kb) -> None:
    ours = as_json(shared.ra("search", "--json", "canary dashboards"))
    theirs = as_json(shared.rq("search", "--json", "canary dashboards"))
    assert ours["queries"] == theirs["queries"] and ours["tokens"] == theirs["tokens"]


def _on_terminal(program: str, args: list[str], kb: Kb, env: dict[str, str]) -> str:
    """Run with stdout on a pseudo-terminal and return what it printed there."""
    main, child = pty.openpty()
    full_env = {"HOME": str(kb.home), "PATH": os.environ.get("PATH", ""), "COLUMNS": "100", **env}
    full_env[CONFIG_CEILING] = os.environ[CONFIG_CEILING]  # no .ra.toml above the test's folder
    with subprocess.Popen(
        [str(BIN / program), *args], cwd=kb.root, env=full_env, stdin=child, stdout=child, stderr=child
    ) as proc:
        os.close(child)
        screen = drain(main)
        proc.wait(timeout=120)
    os.close(main)
    assert proc.returncode == 0, screen
    return screen.decode("utf-8")


@pytest.mark.parametrize("program", ["ra", "ra-query"])
def test_colour_is_used_on_a_terminal(shared: Kb, program: str) -> None:
    args = (
        ["search", "--list", "daily"]
        if program == "ra"
        else ["--artifacts", str(shared.artifacts), "search", "--list", "daily"]
    )
    screen = _on_terminal(program, args, shared, {})
    assert "\x1b[33m\x1b[1mdaily\x1b[0m" in screen and "<em>" not in screen


@pytest.mark.parametrize("program", ["ra", "ra-query"])
def test_no_color_turns_colour_off_even_on_a_terminal(shared: Kb, program: str) -> None:
    args = (
        ["search", "image"] if program == "ra" else ["--artifacts", str(shared.artifacts), "search", "image"]
    )
    screen = _on_terminal(program, args, shared, {"NO_COLOR": "1"})
    assert "docs:deploy.md#building-the-image" in screen and ESC not in screen


def test_full_output_on_a_terminal_colours_the_header(shared: Kb) -> None:
    screen = _on_terminal("ra-query", ["--artifacts", str(shared.artifacts), "search", "gzip"], shared, {})
    assert "\x1b[1m\x1b[36m─── docs:logging.md#log-rotation ───\x1b[0m" in screen


def test_piped_output_has_no_escape_codes_even_without_no_color(shared: Kb) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RA_") and k != "NO_COLOR"}
    env["HOME"] = str(shared.home)
    for args in (["search", "image"], ["search", "--list", "daily"], ["search", "--matches", "gzip"]):
        proc = subprocess.run(
            [str(BIN / "ra-query"), "--artifacts", str(shared.artifacts), *args],
            env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert proc.returncode == 0 and proc.stdout and ESC not in proc.stdout


# --- the token budget ------------------------------------------------------------------------------


def _printed_results(text: str) -> list[str]:
    """The per-result texts of full output (as the budget charged them), without notes and the budget line."""
    body = re.sub(r"^\[tokens: .*\]\n", "", text, flags=re.MULTILINE)
    blocks = re.split(r"(?m)^(?=─── )", body)
    return [block.rstrip("\n") + "\n" for block in blocks if block.startswith("─── ")]


def test_max_tokens_keeps_the_printed_results_within_the_budget(shared: Kb) -> None:
    run = shared.rq("search", "--no-aggregation", "--cutoff-ratio", "0", "--max-tokens", "80", "every")
    assert run.code == 0, run.err
    printed = _printed_results(run.out)
    used = sum(count_tokens(t) for t in printed)
    assert len(printed) >= 2 and used <= 80
    last = run.out.splitlines()[-1]
    assert re.fullmatch(r"\[tokens: (\d+) of 80, \d+ results? omitted\]", last), last
    assert last.startswith(f"[tokens: {used} of 80")


def test_max_tokens_in_json_reports_used_max_omitted_and_truncated(shared: Kb) -> None:
    payload = as_json(shared.rq("search", *PLAIN, "--max-tokens", "80", "every"))
    tokens = payload["tokens"]
    assert set(tokens) == {"used", "max", "omitted", "truncated", "omitted_ids"}
    assert (
        tokens["max"] == 80 and tokens["used"] <= 80 and tokens["omitted"] == len(tokens["omitted_ids"]) >= 1
    )
    assert tokens["truncated"] is False


def test_without_a_budget_json_still_counts_tokens(shared: Kb) -> None:
    tokens = as_json(shared.rq("search", "--json", "image"))["tokens"]
    assert tokens["max"] is None and tokens["used"] > 0 and tokens["omitted"] == 0


def test_a_budget_smaller_than_the_first_result_truncates_it_at_a_line_and_marks_it(shared: Kb) -> None:
    full = shared.rq("search", "--no-aggregation", "measure")
    run = shared.rq("search", "--no-aggregation", "--max-tokens", "40", "measure")
    assert run.code == 0, run.err
    whole = _printed_results(full.out)[0]
    assert count_tokens(whole) > 40
    *kept, marker, budget_line = run.out.splitlines()
    used = re.fullmatch(r"\[tokens: (\d+) of 40, truncated\]", budget_line)
    assert used is not None and int(used.group(1)) <= 40, budget_line
    assert re.fullmatch(rf"… \[truncated: \d+ of {count_tokens(whole)} tokens shown\]", marker), marker
    # whole lines from the start of the result, and no line cut in the middle
    assert len(kept) >= 1 and whole.startswith("\n".join(kept) + "\n")
    assert int(used.group(1)) == count_tokens("\n".join([*kept, marker]))
    payload = as_json(shared.rq("search", "--json", "--no-aggregation", "--max-tokens", "40", "measure"))
    assert payload["tokens"]["truncated"] is True and payload["queries"][0]["results"][0]["truncated"] is True


def test_a_budget_too_small_for_a_results_id_line_leaves_it_out_whole_and_names_it(shared: Kb) -> None:
    run = shared.rq("search", "--no-aggregation", "--max-tokens", "3", "measure")
    assert run.code == 0, run.err
    assert "───" not in run.out  # no `─── docs:logg` cut inside its id
    omitted = as_json(shared.rq("search", "--json", "--no-aggregation", "--max-tokens", "3", "measure"))
    ids = ", ".join(omitted["tokens"]["omitted_ids"])
    assert re.fullmatch(
        rf"omitted: {re.escape(ids)} — read one with ra get ID, or raise --max-tokens\n"
        r"\[tokens: 0 of 3, \d+ results? omitted\]\n",
        run.out,
    ), run.out  # what it left out, as the JSON lists it


@pytest.mark.parametrize("program", ["ra", "ra-query"])
def test_max_tokens_zero_is_a_clear_error(shared: Kb, program: str) -> None:
    args = ("search", "--max-tokens", "0", "image")
    run = shared.ra(*args) if program == "ra" else shared.rq(*args)
    assert (run.code, run.out, run.err) == (
        2,
        "",
        f"{program}: error: --max-tokens must be between 1 and 10000000\n",
    )


# --- get -------------------------------------------------------------------------------------------


def test_get_a_chunk_by_id(shared: Kb) -> None:
    run = shared.ra("get", "docs:logging.md#errors")
    assert (run.code, run.out) == (
        0,
        "─── docs:logging.md#errors ───\n> Logging › Errors\n\n## Errors\n\n"
        "An exception is handled once, where it is caught.\n"
        "It is logged with the request id and never swallowed.\n",
    )


def test_get_a_document_returns_it_in_document_order(shared: Kb) -> None:
    payload = as_json(shared.rq("get", "--json", "docs:deploy.md"))
    assert payload["whole_document"] is True
    assert [c["id"] for c in payload["chunks"]] == [
        "docs:deploy.md",
        "docs:deploy.md#deployment",
        "docs:deploy.md#building-the-image",
        "docs:deploy.md#rolling-out",
        "docs:deploy.md#rolling-back",
        "docs:deploy.md#monitoring",
    ]
    assert payload["tokens"] == sum(c["tokens"] for c in payload["chunks"])


def test_get_full_document_of_a_chunk_id_is_the_whole_document(shared: Kb) -> None:
    assert shared.rq("get", "--full-document", "docs:deploy.md#monitoring") == shared.rq(
        "get", "docs:deploy.md"
    )


def test_get_of_a_document_holds_every_line_of_its_markdown(shared: Kb) -> None:
    out = shared.rq("get", "docs:logging.md").out
    source = (shared.root / "docs" / "logging.md").read_text(encoding="utf-8")
    assert [line for line in out.splitlines()[1:] if line] == [line for line in source.splitlines() if line]


def test_ra_get_and_ra_query_get_agree(shared: Kb) -> None:
    for args in (("docs:deploy.md#rolling-out",), ("--json", "notes:oncall.md")):
        assert shared.ra("get", *args) == shared.rq("get", *args)


BAD_IDS = ["docs:../../etc/passwd", "docs:/etc/passwd", "nope:x.md", "docs:missing.md", "docs:deploy.md#nope"]


@pytest.mark.parametrize(
    ("program", "bad_id"), [("ra", i) for i in BAD_IDS[:3]] + [("ra-query", i) for i in BAD_IDS]
)
def test_get_of_an_id_outside_the_index_is_not_found_with_exit_1(
    shared: Kb, program: str, bad_id: str
) -> None:
    run = shared.ra("get", bad_id) if program == "ra" else shared.rq("get", bad_id)
    assert (run.code, run.out) == (1, "")
    said = "no tree 'nope' in this index (the trees: docs, notes)" if bad_id.startswith("nope:") else "list "
    assert run.err.startswith(f"{program}: error: not found: {bad_id} — {said}")
    assert run.err.count("\n") == 1


# --- freshness -------------------------------------------------------------------------------------


def _listing(directory: Path) -> list[tuple[str, int, int]]:
    return sorted(
        (str(p.relative_to(directory)), p.stat().st_size, p.stat().st_mtime_ns) for p in directory.rglob("*")
    )


def test_ra_search_sees_an_edit_made_after_the_last_build(own: Kb) -> None:
    (own.root / "docs" / "logging.md").write_text(
        "# Logging\n\n## Tracing\n\nSpans carry a zeppelin id.\n", encoding="utf-8"
    )
    run = own.ra("search", "zeppelin")
    assert run.code == 0, run.err
    assert headers(run.out) == ["docs:logging.md#tracing"]


def test_ra_get_sees_an_edit_made_after_the_last_build(own: Kb) -> None:
    (own.root / "notes" / "oncall.md").write_text("# On-call\n\nRotate weekly.\n", encoding="utf-8")
    assert "Rotate weekly." in own.ra("get", "notes:oncall.md").out


def test_ra_query_reports_stale_sources_and_writes_nothing(own: Kb) -> None:
    with (own.root / "docs" / "performance.md").open("a", encoding="utf-8") as f:
        f.write("\nMore figures.\n")
    (own.root / "notes" / "new.md").write_text("# New\n", encoding="utf-8")
    before = _listing(own.artifacts)
    text = own.rq("search", "latency")
    payload = as_json(own.rq("search", "--json", "latency"))
    own.rq("get", "docs:performance.md")
    assert text.out.endswith("stale: 2 files changed since the build\n")
    assert payload["stale"] == 2
    assert _listing(own.artifacts) == before


def test_ra_query_on_fresh_artifacts_reports_zero_stale(shared: Kb) -> None:
    assert as_json(shared.rq("search", "--json", "image"))["stale"] == 0
    assert "stale" not in shared.rq("search", "image").out


def test_one_changed_file_is_reported_in_the_singular(own: Kb) -> None:
    (own.root / "notes" / "oncall.md").write_text("# On-call\n\nchanged\n", encoding="utf-8")
    assert own.rq("search", "latency").out.endswith("\nstale: 1 file changed since the build\n")


def test_ra_query_says_nothing_about_staleness_when_the_sources_are_gone(own: Kb, tmp_path: Path) -> None:
    moved = tmp_path / "published"
    shutil.copytree(own.artifacts, moved)
    shutil.rmtree(own.root)
    text = run_cmd("ra-query", "--artifacts", str(moved), "search", "latency", cwd=tmp_path, home=own.home)
    as_json_run = run_cmd(
        "ra-query", "--artifacts", str(moved), "search", "--json", "latency", cwd=tmp_path, home=own.home
    )
    payload = as_json(as_json_run)
    assert text.code == 0, text.err
    assert "stale" not in text.out
    assert payload["stale"] is None


# --- pinned text ----------------------------------------------------------------------------------


def test_full_output_is_pinned(shared: Kb, golden: Golden) -> None:
    golden("search_cli_full.txt", shared.ra("search", "--no-aggregation", "canary").out)


def test_list_output_is_pinned(shared: Kb, golden: Golden) -> None:
    golden(
        "search_cli_list.txt",
        shared.rq(
            "search", "--list", "--no-aggregation", "--cutoff-ratio", "0", "namespace OR pager OR rotate"
        ).out,
    )


def test_matches_output_is_pinned(shared: Kb, golden: Golden) -> None:
    golden(
        "search_cli_matches.txt",
        shared.rq(
            "search", "--matches", "--no-aggregation", "--cutoff-ratio", "0", "production OR monitoring"
        ).out,
    )


def test_multi_topic_output_is_pinned(shared: Kb, golden: Golden) -> None:
    run = shared.rq("search", "--no-aggregation", "--cutoff-ratio", "0", "image", "canary", "pager")
    golden("search_cli_multi_topic.txt", run.out)


def test_max_tokens_output_is_pinned(shared: Kb, golden: Golden) -> None:
    run = shared.rq(
        "search", "--no-aggregation", "--cutoff-ratio", "0", "--max-tokens", "80", "every", "latency"
    )
    golden("search_cli_max_tokens.txt", run.out)


def test_truncated_output_is_pinned(shared: Kb, golden: Golden) -> None:
    golden(
        "search_cli_truncated.txt",
        shared.rq("search", "--no-aggregation", "--max-tokens", "40", "measure").out,
    )


def test_json_output_is_pinned(shared: Kb, golden: Golden) -> None:
    golden(
        "search_cli_image.json",
        shared.rq("search", "--json", "--no-aggregation", "image", "canary dashboards").out,
    )


def test_json_list_output_is_pinned(shared: Kb, golden: Golden) -> None:
    golden("search_cli_list.json", shared.rq("search", "--json", "--list", "--no-aggregation", "canary").out)


def test_explain_output_is_pinned(shared: Kb, golden: Golden) -> None:
    golden("search_cli_explain.txt", shared.rq("search", "--explain", "gzip dashboards", "zones").out)


def test_get_text_output_is_pinned(shared: Kb, golden: Golden) -> None:
    text = shared.rq("get", "docs:kubernetes.md").out + shared.rq("get", "docs:kubernetes.md#quotas").out
    golden("search_cli_get.txt", text)


def test_get_json_output_is_pinned(shared: Kb, golden: Golden) -> None:
    golden("search_cli_get.json", shared.rq("get", "--json", "docs:logging.md#request-logging").out)


def test_error_outputs_are_pinned(shared: Kb, golden: Golden) -> None:
    runs = [
        shared.ra("search", "--strict", "canary (image OR"),
        shared.rq("search", "--strict", 'title:"log rotation'),
        shared.ra("get", "docs:../../etc/passwd"),
        shared.rq("get", "nope:x.md"),
        shared.rq("search", "image", artifacts=shared.root / "nowhere"),
        shared.ra("search", "--max-tokens", "0", "image"),
        shared.rq("search", "xylophone"),
    ]
    text = "".join(f"[exit {r.code}]\n{r.err}{r.out}" for r in runs)
    golden("search_cli_errors.txt", shared.clean(text))


# --- process behaviour ----------------------------------------------------------------------------


def test_a_reader_that_goes_away_early_is_no_error(shared: Kb) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RA_")}
    proc = subprocess.Popen(
        [str(BIN / "ra-query"), "--artifacts", str(shared.artifacts), "search", "pool", "handled", "logging"],
        cwd=shared.root,
        env={**env, "HOME": str(shared.home)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # like `ra-query search … | head -0`: every write now fails with EPIPE
    with proc.stderr:
        err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_ra_query_help_lists_the_commands_and_the_search_options(shared: Kb) -> None:
    top = shared.rq("--help")
    assert top.code == 0 and all(c in top.out for c in ("search", "get", "mcp"))
    search = shared.rq("search", "--help")
    assert search.code == 0 and "--max-tokens" in search.out and "--candidate-limit" in search.out


def test_the_help_is_wrapped_to_the_columns_of_the_environment(shared: Kb) -> None:
    narrow = shared.rq("search", "--help", env={"COLUMNS": "60"})
    wide = shared.rq("search", "--help", env={"COLUMNS": "200"})
    assert len(narrow.out.splitlines()) > len(wide.out.splitlines())


def test_scores_that_overflow_are_null_in_json_not_an_error(shared: Kb) -> None:
    query = "image^1000"
    for word in "abcdefghijklm":  # each group may weigh 1000; thirteen nested overflow float32
        query = f"({query} OR {word})^1000"
    payload = as_json(shared.rq("search", query, "--json"))
    scores = [r["score"] for r in payload["queries"][0]["results"]]
    assert scores and None in scores


def test_a_columns_value_of_zero_is_ignored_as_by_shutil(shared: Kb) -> None:
    zero = shared.rq("search", "--help", env={"COLUMNS": "0"})
    unset = shared.rq("search", "--help", env={"COLUMNS": ""})
    assert zero.code == 0 and zero.out == unset.out


@pytest.mark.parametrize(
    ("argv", "guess"),
    [
        (["--artifacts", "/x/.ra", "search", "pool"], "/x/.ra"),
        (["--artifacts=/x/.ra", "search", "pool", "--json"], "/x/.ra"),
        (["search", "pool"], "<found>"),
        (["--art", "/x/.ra", "search", "pool"], None),  # argparse's abbreviation: not guessed
        (["--artifacts", "/x/.ra", "get", "docs:a.md"], None),
        (["--artifacts", "/x/.ra", "--", "search", "pool"], None),
        (["-h"], None),
        ([], None),
    ],
)
def test_the_early_guess_of_the_artifacts_takes_only_the_plain_spellings(
    argv: list[str], guess: str | None, tmp_path: Path
) -> None:
    from ra_query.cli import _early_root  # pyright: ignore[reportPrivateUsage]

    (tmp_path / ".ra").mkdir()
    (tmp_path / ".ra" / "manifest.json").write_text("{}", encoding="utf-8")
    expected = str(tmp_path / ".ra") if guess == "<found>" else guess
    assert _early_root(argv, {}, str(tmp_path / "sub")) == expected


def test_a_wrong_early_guess_is_stopped_and_the_right_artifacts_are_checked(
    own: Kb, capsys: pytest.CaptureFixture[str]
) -> None:
    from ra_query.cli import run
    from ra_query.sources.stale import StaleCheck

    (own.root / "notes" / "extra.md").write_text("# Extra\n", encoding="utf-8")
    wrong = StaleCheck(str(own.root / "elsewhere"))
    code = run(["--artifacts", str(own.artifacts), "search", "logging", "--json"], {}, str(own.root), wrong)
    assert code == 0 and json.loads(capsys.readouterr().out)["stale"] == 1
    assert wrong._pid == 0  # pyright: ignore[reportPrivateUsage]  # cancelled and reaped


@pytest.mark.parametrize("program", ["ra", "ra-query"])
def test_search_help_says_how_a_query_is_read(shared: Kb, program: str) -> None:
    run = shared.ra("search", "--help") if program == "ra" else shared.rq("search", "--help")
    assert run.code == 0
    text = " ".join(run.out.split())
    assert "Plain words are ranked, not required" in text and "--strict: every word required" in text


@pytest.mark.parametrize("program", ["ra", "ra-query"])
def test_an_unknown_tree_option_is_an_error_naming_the_trees(shared: Kb, program: str) -> None:
    args = ("search", "-t", "nosuch", "image")
    run = shared.ra(*args) if program == "ra" else shared.rq(*args)
    assert (run.code, run.out) == (2, "")
    assert (
        run.err
        == f"{program}: error: unknown tree 'nosuch' (-t/--tree) — the trees of this index: docs, notes\n"
    )


@pytest.mark.parametrize("program", ["ra", "ra-query"])
def test_an_unknown_tree_in_the_query_is_an_error_naming_the_trees(shared: Kb, program: str) -> None:
    args = ("search", "tree:nosuch image")
    run = shared.ra(*args) if program == "ra" else shared.rq(*args)
    assert (run.code, run.out) == (2, "")
    assert run.err == f"{program}: error: tree:nosuch: no such tree — the trees: docs, notes\n"

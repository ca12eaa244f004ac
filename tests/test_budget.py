"""`--max-tokens`: fair first results, greedy round-robin fill, omissions, truncation."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ra_query.artifacts.models import ChunkRecord
from ra_query.errors import InputError
from ra_query.search.budget import BudgetOutcome, apply_budget, truncate, truncation_marker
from ra_query.text.tokens import count_tokens

MARKER = re.compile(r"^… \[truncated: (\d+) of (\d+) tokens shown\]$")


def words(text: str) -> int:
    """A fake token counter: one token per whitespace-separated word."""
    return len(text.split())


def record(id: str) -> ChunkRecord:
    return ChunkRecord(
        id=id,
        tree="docs",
        path="a.md",
        doc_id="docs:a.md",
        parent_id=None,
        title=id,
        breadcrumb=(id,),
        depth=1,
        position=0,
        sibling_count=1,
        line_start=1,
        line_end=1,
        byte_start=0,
        byte_end=0,
        tokens=0,
        body="",
    )


def result(id: str, n_words: int) -> tuple[ChunkRecord, str]:
    """A result whose text costs `n_words` under the fake counter."""
    return record(id), " ".join([id] * n_words)


def kept_ids(outcome: BudgetOutcome) -> list[str]:
    return [item.record.id for item in outcome.kept]


# ---- no budget, everything fits ----------------------------------------------------------------


def test_without_a_budget_everything_is_kept_and_counted() -> None:
    outcome = apply_budget([[result("a", 5), result("b", 50)], [result("c", 7)]], None, words)
    assert kept_ids(outcome) == ["a", "b", "c"]
    assert [item.tokens for item in outcome.kept] == [5, 50, 7]
    assert outcome.used_tokens == 62
    assert outcome.omitted == 0
    assert not outcome.truncated
    assert outcome.max_tokens is None


def test_when_everything_fits_nothing_is_omitted_or_cut() -> None:
    outcome = apply_budget([[result("a", 5), result("b", 5)]], 10, words)
    assert kept_ids(outcome) == ["a", "b"]
    assert outcome.used_tokens == 10
    assert outcome.omitted == 0
    assert not outcome.truncated
    assert all(not item.truncated for item in outcome.kept)
    assert outcome.max_tokens == 10


def test_kept_texts_are_the_texts_given_when_nothing_is_cut() -> None:
    topics = [[result("a", 3)]]
    outcome = apply_budget(topics, 100, words)
    assert outcome.kept[0].text == topics[0][0][1]


def test_no_results_give_an_empty_outcome() -> None:
    for topics in ([], [[], []]):
        outcome = apply_budget(topics, 10, words)
        assert outcome.kept == ()
        assert outcome.used_tokens == 0
        assert outcome.omitted == 0
        assert not outcome.truncated


def test_a_budget_below_one_is_an_input_error() -> None:
    for bad in (0, -5):
        with pytest.raises(InputError, match=r"^--max-tokens must be between 1 and 10000000$"):
            apply_budget([[result("a", 1)]], bad, words)


# ---- greedy and round-robin ---------------------------------------------------------------------


def test_a_result_that_does_not_fit_is_skipped_and_a_smaller_later_one_still_fits() -> None:
    outcome = apply_budget(
        [[result("a", 4), result("big", 10), result("small", 3), result("c", 4)]], 8, words
    )
    assert kept_ids(outcome) == ["a", "small"]
    assert outcome.used_tokens == 7
    assert outcome.omitted == 2
    assert not outcome.truncated


def test_every_topic_gets_its_best_result_before_any_topic_gets_its_second() -> None:
    topics = [
        [result("a1", 4), result("a2", 4), result("a3", 4)],
        [result("b1", 4), result("b2", 4)],
        [result("c1", 4)],
    ]
    outcome = apply_budget(topics, 16, words)
    # fill order: a1 b1 c1 a2 | b2 a3 do not fit
    assert kept_ids(outcome) == ["a1", "a2", "b1", "c1"]
    assert outcome.omitted == 2


def test_kept_results_are_grouped_by_topic_in_rank_order() -> None:
    topics = [[result("a1", 1), result("a2", 1)], [result("b1", 1), result("b2", 1)]]
    outcome = apply_budget(topics, 100, words)
    assert [(item.topic, item.rank) for item in outcome.kept] == [(0, 1), (0, 2), (1, 1), (1, 2)]
    assert [item.record.id for item in outcome.kept if item.topic == 1] == ["b1", "b2"]


def test_an_empty_first_topic_lets_the_next_topics_first_result_lead() -> None:
    outcome = apply_budget([[], [result("b1", 20)]], 5, words)
    assert kept_ids(outcome) == ["b1"]
    assert outcome.kept[0].topic == 1
    assert outcome.kept[0].truncated


def test_omitted_counts_every_result_left_out_across_topics() -> None:
    topics = [[result("a1", 3), result("a2", 9), result("a3", 9)], [result("b1", 4), result("b2", 1)]]
    outcome = apply_budget(topics, 8, words)
    assert kept_ids(outcome) == ["a1", "b1", "b2"]
    assert outcome.omitted == 2
    assert len(outcome.kept) + outcome.omitted == 5


def test_a_second_topic_shows_its_first_result_even_when_the_first_topic_could_fill_the_budget() -> None:
    lines = "\n".join(f"a{i} a{i} a{i}" for i in range(10))  # 30 tokens in ten lines
    outcome = apply_budget([[(record("a"), lines)], [result("b", 4)]], 12, words)
    assert kept_ids(outcome) == ["a", "b"]
    first, second = outcome.kept
    assert first.truncated and not second.truncated
    assert first.tokens + second.tokens <= 12


def test_first_results_that_are_all_too_big_share_the_budget_evenly() -> None:
    lines = "\n".join("x x" for _ in range(20))  # 40 tokens in twenty lines
    outcome = apply_budget([[(record("a"), lines)], [(record("b"), lines)]], 20, words)
    assert kept_ids(outcome) == ["a", "b"]
    assert all(item.truncated for item in outcome.kept)
    assert abs(outcome.kept[0].tokens - outcome.kept[1].tokens) <= 2
    assert outcome.used_tokens <= 20


# ---- truncation ---------------------------------------------------------------------------------


def test_the_marker_says_how_many_tokens_are_shown_of_how_many() -> None:
    assert truncation_marker(40, 1200) == "… [truncated: 40 of 1200 tokens shown]"


def test_a_too_big_first_result_is_cut_at_a_line_boundary_with_the_marker() -> None:
    text = "one two three\nfour five six\nseven eight nine ten\neleven twelve\nthirteen fourteen fifteen sixteen\n"
    outcome = apply_budget([[(record("a"), text), result("b", 1), result("c", 2)]], 14, words)
    first = outcome.kept[0]
    assert first.truncated and outcome.truncated
    assert first.text == "one two three\nfour five six\n… [truncated: 6 of 16 tokens shown]"
    assert first.tokens == words(first.text) == 13
    assert kept_ids(outcome) == ["a", "b"]
    assert outcome.used_tokens == 14
    assert outcome.omitted == 1


def test_the_cut_keeps_whole_lines_only() -> None:
    text = "\n".join(f"line {i} has some words in it" for i in range(40))
    cut = truncate(text, 50, words)
    shown = cut.split("\n")[:-1]
    assert shown and all(line in text.split("\n") for line in shown)
    assert text.startswith("\n".join(shown))
    assert MARKER.match(cut.split("\n")[-1])


def test_later_results_may_use_what_the_truncated_first_one_left() -> None:
    text = "a b c d e f\ng h i j k l\n"
    outcome = apply_budget([[(record("big"), text), result("tiny", 1), result("more", 9)]], 9, words)
    # the cut keeps one line (6) and drops the marker (7 words): 3 tokens are left for "tiny"
    assert kept_ids(outcome) == ["big", "tiny"]
    assert outcome.kept[0].text == "a b c d e f"
    assert outcome.used_tokens == 7
    assert outcome.omitted == 1


def test_without_room_for_the_marker_just_the_cut_text_is_kept() -> None:
    text = "one two three\nfour five six\n"
    outcome = apply_budget([[(record("a"), text)]], 5, words)
    assert outcome.kept[0].text == "one two three"
    assert outcome.kept[0].truncated


def test_the_marker_is_preferred_over_one_more_line() -> None:
    text = "a b\nc d\ne f\ng h\n"
    # three lines (6) fit without the marker, but one line plus the marker (2 + 7) is chosen
    assert truncate(text, 9, words) == "a b\n… [truncated: 2 of 8 tokens shown]"


def test_a_first_line_over_budget_is_cut_inside_the_line() -> None:
    text = "w " * 100 + "\nsecond line\n"
    cut = truncate(text, 20, words)
    assert cut.startswith("w w w")
    assert "second" not in cut
    assert words(cut) <= 20
    assert MARKER.match(cut.split("\n")[-1])


def test_leading_blank_lines_do_not_count_as_the_first_line() -> None:
    cut = truncate("\n\nalpha beta gamma delta\nmore\n", 2, words)
    assert cut == "alpha beta"


def test_a_single_enormous_line_is_cut_at_a_token_boundary_with_real_tokens() -> None:
    text = "lorem ipsum dolor sit amet " * 2000  # one line, ~10k cl100k tokens
    total = count_tokens(text)
    outcome = apply_budget([[(record("a"), text)]], 100, count_tokens)
    item = outcome.kept[0]
    assert item.truncated
    body, _, last = item.text.rpartition("\n")
    match = MARKER.match(last)
    assert match is not None
    assert int(match.group(2)) == total
    assert int(match.group(1)) == count_tokens(body)
    assert text.startswith(body) and len(body) > 100
    assert item.tokens == count_tokens(item.text) <= 100
    assert outcome.used_tokens == item.tokens


def test_a_line_of_megabytes_after_a_heading_is_cut_inside_to_fill_the_budget() -> None:
    text = "# Huge\n\n" + "zebra huge line " * 200_000  # a heading that fits, then 3.2 MB in one line
    cut = truncate(text, 300, count_tokens)
    assert 250 < count_tokens(cut) <= 300  # not the heading alone (8 tokens of 300)
    body, _, last = cut.rpartition("\n")
    assert text.startswith(body) and MARKER.match(last)


def test_a_cut_inside_multibyte_text_never_leaves_a_broken_character() -> None:
    text = "日本語のテキストはトークンの途中で切れることがある。" * 200
    cut = truncate(text, 30, count_tokens)
    body = cut.rpartition("\n")[0] or cut
    assert "\ufffd" not in cut
    assert text.startswith(body)
    assert count_tokens(cut) <= 30


def test_truncation_at_a_line_boundary_with_real_tokens() -> None:
    text = "─── docs:a.md#x ───\n> A › X\n\n" + "\n".join(
        f"Paragraph {i} says something." for i in range(500)
    )
    outcome = apply_budget([[(record("a"), text)]], 60, count_tokens)
    item = outcome.kept[0]
    assert item.truncated
    body, _, last = item.text.rpartition("\n")
    assert MARKER.match(last)
    assert body.startswith("─── docs:a.md#x ───\n> A › X\n\n")
    assert (body + "\n") in text  # ends at a line boundary
    assert count_tokens(item.text) == item.tokens <= 60


# ---- the budget is never exceeded ---------------------------------------------------------------

line = st.text(alphabet=st.sampled_from("ab \t"), max_size=40)
texts = st.lists(line, min_size=0, max_size=12).map("\n".join)


@settings(max_examples=150, deadline=None)
@given(
    topics=st.lists(st.lists(texts, max_size=6), max_size=4),
    max_tokens=st.integers(min_value=1, max_value=60),
)
def test_used_tokens_never_exceed_the_budget(topics: list[list[str]], max_tokens: int) -> None:
    given_topics = [[(record(f"{t}.{r}"), text) for r, text in enumerate(ts)] for t, ts in enumerate(topics)]
    outcome = apply_budget(given_topics, max_tokens, words)
    assert outcome.used_tokens <= max_tokens
    assert outcome.used_tokens == sum(item.tokens for item in outcome.kept)
    assert all(item.tokens == words(item.text) for item in outcome.kept)
    total = sum(len(ts) for ts in topics)
    assert len(outcome.kept) + outcome.omitted == total
    # never empty when something matched (an all-blank text may still be cut to nothing)
    if total:
        assert outcome.kept
    assert outcome.truncated == any(item.truncated for item in outcome.kept)
    # only first results are ever cut, and every topic that matched keeps its first unless it
    # could not be cut to fit (an all-blank text, or a share below one token)
    assert all(item.rank == 1 for item in outcome.kept if item.truncated)

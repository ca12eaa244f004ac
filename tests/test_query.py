"""The query language parser: constructs, precedence, error messages, lenient reading, rendering."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ra_query.errors import QuerySyntaxError, RaError
from ra_query.search.syntax import (
    MAX_DEPTH,
    And,
    Node,
    Not,
    Or,
    Phrase,
    Term,
    parse_query,
    read_query,
    render,
    to_query,
)


def t(text: str, field: str | None = None, boost: float = 1.0) -> Term:
    return Term(text, field, boost)


def syntax_error(query: str) -> QuerySyntaxError:
    with pytest.raises(QuerySyntaxError) as info:
        parse_query(query)
    return info.value


# ---- constructs ---------------------------------------------------------------------------------


def test_an_empty_query_parses_to_none() -> None:
    assert parse_query("") is None


def test_a_whitespace_only_query_parses_to_none() -> None:
    assert parse_query(" \t\n ") is None


def test_a_single_word_is_a_term() -> None:
    assert parse_query("rust") == t("rust")


def test_juxtaposed_words_are_an_and() -> None:
    assert parse_query("error  handling\tpool") == And((t("error"), t("handling"), t("pool")))


def test_a_quoted_string_is_a_phrase_with_whitespace_normalised() -> None:
    assert parse_query('"error \n  handling"') == Phrase("error handling")


def test_a_phrase_and_a_word_are_anded() -> None:
    assert parse_query('"error handling" rust') == And((Phrase("error handling"), t("rust")))


def test_a_minus_before_a_word_negates_it() -> None:
    assert parse_query("pool -draft") == And((t("pool"), Not(t("draft"))))


def test_a_minus_before_a_phrase_negates_it() -> None:
    assert parse_query('pool -"old api"') == And((t("pool"), Not(Phrase("old api"))))


def test_a_minus_before_a_group_negates_the_group() -> None:
    assert parse_query("pool -(a OR b)") == And((t("pool"), Not(Or((t("a"), t("b"))))))


def test_or_joins_alternatives() -> None:
    assert parse_query("a OR b OR c") == Or((t("a"), t("b"), t("c")))


def test_parentheses_group() -> None:
    assert parse_query("(a OR b) c") == And((Or((t("a"), t("b"))), t("c")))


def test_groups_nest() -> None:
    assert parse_query("((a OR b) c) OR d") == Or((And((Or((t("a"), t("b"))), t("c"))), t("d")))


def test_a_group_of_one_item_is_that_item() -> None:
    assert parse_query("((rust))") == t("rust")


def test_a_field_prefix_restricts_a_word_to_that_field() -> None:
    assert parse_query("title:rust") == t("rust", "title")


def test_every_known_field_is_recognised() -> None:
    for field in ("title", "tags", "body", "path", "tree"):
        assert parse_query(f"{field}:x") == t("x", field)


def test_a_field_prefix_on_a_phrase_restricts_the_phrase() -> None:
    assert parse_query('body:"connection pool"') == Phrase("connection pool", "body")


def test_a_field_prefix_on_a_group_applies_to_every_word_in_it() -> None:
    assert parse_query('tags:(a OR "b c")') == Or((t("a", "tags"), Phrase("b c", "tags")))


def test_a_field_inside_a_field_group_keeps_its_own_field() -> None:
    assert parse_query("title:(a body:b)") == And((t("a", "title"), t("b", "body")))


def test_a_field_value_keeps_later_colons() -> None:
    assert parse_query("path:src/a:b") == t("src/a:b", "path")


def test_a_negated_field_term_is_a_negation() -> None:
    assert parse_query("a -title:draft") == And((t("a"), Not(t("draft", "title"))))


def test_a_caret_number_boosts_a_word() -> None:
    assert parse_query("log^2") == t("log", boost=2.0)


def test_a_boost_may_be_a_decimal() -> None:
    assert parse_query("a^1.5 b^.5 c^2.") == And((t("a", boost=1.5), t("b", boost=0.5), t("c", boost=2.0)))


def test_a_boost_on_a_phrase_boosts_the_phrase() -> None:
    assert parse_query('"a b"^3') == Phrase("a b", boost=3.0)


def test_a_boost_on_a_group_boosts_the_group() -> None:
    assert parse_query("(a OR b)^2") == Or((t("a"), t("b")), boost=2.0)


def test_a_boost_after_a_field_term_boosts_that_term() -> None:
    assert parse_query("title:rust^3") == t("rust", "title", 3.0)


def test_a_boost_on_a_field_group_boosts_the_group() -> None:
    assert parse_query("title:(a b)^2") == And((t("a", "title"), t("b", "title")), boost=2.0)


def test_boosts_on_nested_single_item_groups_multiply() -> None:
    assert parse_query("(a^2)^3") == t("a", boost=6.0)


def test_a_negated_word_can_carry_a_boost_inside_the_negation() -> None:
    assert parse_query("a -draft^2") == And((t("a"), Not(t("draft", boost=2.0))))


def test_unicode_words_are_words() -> None:
    assert parse_query("café 日本語 Ωmega") == And((t("café"), t("日本語"), t("Ωmega")))


def test_a_phrase_touching_a_word_is_a_separate_item() -> None:
    assert parse_query('a"b c"') == And((t("a"), Phrase("b c")))


# ---- precedence and operator words --------------------------------------------------------------


def test_or_binds_looser_than_juxtaposition() -> None:
    assert parse_query("a b OR c") == Or((And((t("a"), t("b"))), t("c")))


def test_or_binds_looser_than_juxtaposition_on_both_sides() -> None:
    assert parse_query("a b OR c d") == Or((And((t("a"), t("b"))), And((t("c"), t("d")))))


def test_negation_binds_tighter_than_juxtaposition() -> None:
    assert parse_query("a -draft c") == And((t("a"), Not(t("draft")), t("c")))


def test_a_minus_before_one_to_three_letters_or_digits_is_a_flag_searched_as_a_word() -> None:
    assert parse_query("where is the -j option") == And((t("where"), t("is"), t("the"), t("-j"), t("option")))
    assert parse_query("tar -xvf -O2 -1") == And((t("tar"), t("-xvf"), t("-O2"), t("-1")))
    assert parse_query("-h/--help clash") == And((t("-h/--help"), t("clash")))


def test_a_minus_before_a_longer_word_still_excludes_it() -> None:
    assert parse_query("retry -draft") == And((t("retry"), Not(t("draft"))))
    assert parse_query("find -xdev") == And((t("find"), Not(t("xdev"))))
    assert parse_query("walk -max_depth") == And((t("walk"), Not(t("max_depth"))))


def _english_stopword(word: str) -> bool:
    return word.lower() in {"the", "to", "like", "how", "a"}


def test_a_minus_before_a_longer_word_of_a_sentence_is_a_flag_searched_as_a_word() -> None:
    query = "stay on the mount point like find -xdev"
    assert parse_query(query, _english_stopword) == And(
        (t("stay"), t("on"), t("the"), t("mount"), t("point"), t("like"), t("find"), t("xdev"))
    )
    assert read_query("how to build with -Wall", _english_stopword) == (
        And((t("how"), t("to"), t("build"), t("with"), t("Wall"))),
        None,
    )


def test_a_sentence_still_excludes_a_word_in_brackets_or_of_another_script() -> None:
    assert parse_query("the walk -(xdev)", _english_stopword) == And((t("the"), t("walk"), Not(t("xdev"))))
    assert parse_query("the 設定 -日本", _english_stopword) == And((t("the"), t("設定"), Not(t("日本"))))


def test_keywords_without_a_stop_word_still_exclude_a_longer_word() -> None:
    assert parse_query("find -xdev", _english_stopword) == And((t("find"), Not(t("xdev"))))
    # a stop word in a field, a phrase or an exclusion does not make the query a sentence
    assert parse_query('title:the "to be" walk -draft -like', _english_stopword) == And(
        (Term("the", "title"), Phrase("to be"), t("walk"), Not(t("draft")), Not(t("like")))
    )


def test_a_minus_before_a_short_word_of_another_script_still_excludes_it() -> None:
    assert parse_query("設定 -日本") == And((t("設定"), Not(t("日本"))))
    assert parse_query("café -été") == And((t("café"), Not(t("été"))))


def test_a_short_word_in_brackets_after_a_minus_is_excluded() -> None:
    assert parse_query("bundler -(js)") == And((t("bundler"), Not(t("js"))))
    assert to_query(parse_query("bundler -(js)")) == "bundler -(js)"


def test_only_upper_case_or_is_an_operator() -> None:
    assert parse_query("a OR b") == Or((t("a"), t("b")))
    for spelling in ("or", "Or", "oR"):
        assert parse_query(f"a {spelling} b") == And((t("a"), t(spelling), t("b")))


def test_lower_case_or_in_a_sentence_is_a_word() -> None:
    assert parse_query("To Snack or Not to Snack?") == And(
        (t("To"), t("Snack"), t("or"), t("Not"), t("to"), t("Snack?"))
    )


def test_a_lone_minus_separates_words() -> None:
    assert parse_query("Homebrew - a package manager") == And(
        (t("Homebrew"), t("a"), t("package"), t("manager"))
    )


def test_a_minus_at_the_end_is_a_separator() -> None:
    assert parse_query("a -") == t("a")


def test_and_is_a_plain_word() -> None:
    assert parse_query("a AND b") == And((t("a"), t("AND"), t("b")))


def test_not_is_a_plain_word() -> None:
    assert parse_query("NOT draft") == And((t("NOT"), t("draft")))


def test_or_right_after_a_minus_is_a_word() -> None:
    assert parse_query("a -OR") == And((t("a"), t("-OR")))  # a flag, not the operator


def test_or_right_after_a_field_is_a_word() -> None:
    assert parse_query("title:or") == t("or", "title")


def test_or_inside_a_word_is_not_an_operator() -> None:
    assert parse_query("ORacle color") == And((t("ORacle"), t("color")))


# ---- things that look like syntax but are words -------------------------------------------------


def test_an_unknown_field_prefix_is_part_of_a_plain_word() -> None:
    assert parse_query("std::vector http://x DEC:1") == And((t("std::vector"), t("http://x"), t("DEC:1")))


def test_field_names_are_lowercase_only() -> None:
    assert parse_query("Title:rust") == t("Title:rust")


def test_a_hyphen_inside_a_word_is_part_of_the_word() -> None:
    assert parse_query("error-handling co-op") == And((t("error-handling"), t("co-op")))


def test_a_trailing_hyphen_is_part_of_the_word() -> None:
    assert parse_query("pre- post") == And((t("pre-"), t("post")))


def test_a_doubled_leading_hyphen_is_part_of_the_word() -> None:
    assert parse_query("--max-tokens budget") == And((t("--max-tokens"), t("budget")))


def test_an_apostrophe_inside_a_word_is_part_of_the_word() -> None:
    assert parse_query("it's") == t("it's")


def test_a_hyphenated_field_value_is_one_word() -> None:
    assert parse_query("title:-x") == t("-x", "title")


# ---- errors: exact messages ---------------------------------------------------------------------

OR_HINT = "put a word, phrase or group on both sides of OR, e.g. a OR b"
BOOST_HINT = "put a positive number right after '^', e.g. word^2 or word^0.5"
MINUS_HINT = "put '-' right before what to exclude, e.g. -draft, -\"old api\" or -(a OR b)"
FIELD_HINT = 'write title:word, title:"a phrase" or title:(a OR b), with no space after the colon'


@pytest.mark.parametrize(
    ("query", "column", "message"),
    [
        pytest.param(
            "(a b",
            0,
            "query syntax error at column 1: unbalanced parenthesis — this ( is never closed; add a ) to end the group",
            id="unclosed-paren",
        ),
        pytest.param(
            "a (b (c)",
            2,
            "query syntax error at column 3: unbalanced parenthesis — this ( is never closed; add a ) to end the group",
            id="unclosed-outer-paren",
        ),
        pytest.param(
            "a b)",
            3,
            "query syntax error at column 4: unbalanced parenthesis — this ) closes nothing; remove it or add a ( before it",
            id="stray-close-paren",
        ),
        pytest.param(
            ") a",
            0,
            "query syntax error at column 1: unbalanced parenthesis — this ) closes nothing; remove it or add a ( before it",
            id="leading-close-paren",
        ),
        pytest.param(
            'a "b c',
            2,
            'query syntax error at column 3: unterminated phrase — this " is never closed; add a " to end the phrase',
            id="unterminated-quote",
        ),
        pytest.param(
            "a OR",
            2,
            f"query syntax error at column 3: OR with nothing after it — {OR_HINT}",
            id="or-at-end",
        ),
        pytest.param(
            "(a OR) b",
            3,
            f"query syntax error at column 4: OR with nothing after it — {OR_HINT}",
            id="or-before-close-paren",
        ),
        pytest.param(
            "OR b",
            0,
            f"query syntax error at column 1: OR with nothing before it — {OR_HINT}",
            id="or-at-start",
        ),
        pytest.param(
            "a OR OR b",
            5,
            "query syntax error at column 6: OR twice in a row — keep one OR between two alternatives, e.g. a OR b",
            id="or-twice",
        ),
        pytest.param(
            "(a -)",
            3,
            f"query syntax error at column 4: '-' with nothing after it — {MINUS_HINT}",
            id="minus-before-close-paren",
        ),
        pytest.param(
            "a^",
            1,
            f"query syntax error at column 2: '^' without a number — {BOOST_HINT}",
            id="caret-without-number",
        ),
        pytest.param(
            "a^x",
            1,
            f"query syntax error at column 2: boost is not a positive number — {BOOST_HINT}",
            id="caret-word",
        ),
        pytest.param(
            "a^-1",
            1,
            f"query syntax error at column 2: boost is not a positive number — {BOOST_HINT}",
            id="caret-negative",
        ),
        pytest.param(
            "a^0",
            1,
            f"query syntax error at column 2: boost is not a positive number — {BOOST_HINT}",
            id="caret-zero",
        ),
        pytest.param(
            "a^1_0",
            1,
            f"query syntax error at column 2: boost is not a positive number — {BOOST_HINT}",
            id="caret-underscore",
        ),
        pytest.param(
            "a^1e400",
            1,
            "query syntax error at column 2: boost out of range — use a boost above 0 and at most 1000, such as 2 or 0.5",
            id="caret-infinite",
        ),
        pytest.param(
            "a^1e300",
            1,
            "query syntax error at column 2: boost out of range — use a boost above 0 and at most 1000, such as 2 or 0.5",
            id="caret-too-large",
        ),
        pytest.param(
            "(a^10)^200",
            6,
            "query syntax error at column 7: boost out of range — use a boost above 0 and at most 1000, such as 2 or 0.5",
            id="caret-product-too-large",
        ),
        pytest.param(
            "a ^2",
            2,
            "query syntax error at column 3: '^' with nothing to boost — put ^N right after a word, phrase or group, e.g. word^2 or (a b)^2",
            id="caret-after-space",
        ),
        pytest.param(
            "a^2^3",
            3,
            "query syntax error at column 4: '^' with nothing to boost — put ^N right after a word, phrase or group, e.g. word^2 or (a b)^2",
            id="caret-twice",
        ),
        pytest.param(
            "a ()",
            2,
            "query syntax error at column 3: empty group — put at least one word between the parentheses, or remove them",
            id="empty-group",
        ),
        pytest.param(
            'a ""',
            2,
            "query syntax error at column 3: empty phrase — put words between the quotes, or remove them",
            id="empty-phrase",
        ),
        pytest.param(
            'a "  "',
            2,
            "query syntax error at column 3: empty phrase — put words between the quotes, or remove them",
            id="blank-phrase",
        ),
        pytest.param(
            "a title:",
            2,
            f"query syntax error at column 3: nothing after title: — {FIELD_HINT}",
            id="field-at-end",
        ),
        pytest.param(
            "title: rust",
            0,
            f"query syntax error at column 1: nothing after title: — {FIELD_HINT}",
            id="field-before-space",
        ),
        pytest.param(
            "title:^2",
            0,
            f"query syntax error at column 1: nothing after title: — {FIELD_HINT}",
            id="field-before-caret",
        ),
        pytest.param(
            "-alpha -beta",
            0,
            "query syntax error at column 1: only negations — add at least one word to search for; '-' only excludes",
            id="only-negations",
        ),
        pytest.param(
            "a OR -beta",
            5,
            "query syntax error at column 6: only negations — add at least one word to search for; '-' only excludes",
            id="negation-only-alternative",
        ),
        pytest.param(
            "a (-beta)",
            3,
            "query syntax error at column 4: only negations — add at least one word to search for; '-' only excludes",
            id="negation-only-group",
        ),
    ],
)
def test_a_syntax_error_names_its_column_what_went_wrong_and_a_hint(
    query: str, column: int, message: str
) -> None:
    error = syntax_error(query)
    assert (error.column, error.message, str(error)) == (column, message, message)


def test_the_field_hint_names_the_field_used() -> None:
    assert (
        syntax_error("tree:").hint
        == 'write tree:word, tree:"a phrase" or tree:(a OR b), with no space after the colon'
    )


def test_a_syntax_error_exits_1_and_is_an_ra_error() -> None:
    error = syntax_error("(")
    assert isinstance(error, RaError)
    assert error.exit_code == 1


def test_a_syntax_error_keeps_the_query_what_and_hint_apart() -> None:
    error = syntax_error("a OR")
    assert (error.query, error.what, error.hint) == ("a OR", "OR with nothing after it", OR_HINT)


def test_a_syntax_error_message_is_one_line() -> None:
    assert "\n" not in syntax_error('a\n"b').message


def test_the_caret_points_at_an_unclosed_parenthesis() -> None:
    assert syntax_error("rust (error handling").caret() == "rust (error handling\n     ^"


def test_the_caret_points_at_a_dangling_or() -> None:
    assert syntax_error("pool OR").caret() == "pool OR\n     ^"


def test_the_caret_points_at_a_bad_boost() -> None:
    assert syntax_error("title:rust^fast").caret() == "title:rust^fast\n          ^"


def test_the_caret_keeps_tabs_so_it_lines_up() -> None:
    assert syntax_error("a\t)").caret() == "a\t)\n \t^"


def test_the_caret_shows_newlines_as_spaces_so_it_stays_two_lines() -> None:
    assert syntax_error("a\n)").caret() == "a )\n  ^"


def test_the_caret_shows_a_window_around_the_error_in_a_long_query() -> None:
    query = "a " * 100 + ")" + " b" * 100
    shown, caret = syntax_error(query).caret().split("\n")
    assert shown.startswith("…") and shown.endswith("…")
    assert shown[len(caret) - 1] == ")"


def test_the_first_error_in_the_text_is_reported() -> None:
    assert syntax_error(') "unterminated').what == "unbalanced parenthesis"


def test_nesting_up_to_the_limit_parses() -> None:
    query = "(" * MAX_DEPTH + "a" + ")" * MAX_DEPTH
    assert parse_query(query) == t("a")


def test_nesting_deeper_than_the_limit_is_an_error_at_the_first_parenthesis_too_deep() -> None:
    error = syntax_error("(" * (MAX_DEPTH + 1) + "a" + ")" * (MAX_DEPTH + 1))
    assert (error.column, error.message) == (
        MAX_DEPTH,
        "query syntax error at column 65: parentheses nested deeper than 64 levels — remove some of the parentheses",
    )


# ---- long input ---------------------------------------------------------------------------------


def test_a_hundred_thousand_characters_of_words_parse() -> None:
    node = parse_query("word " * 20_000)
    assert isinstance(node, And) and len(node.items) == 20_000


def test_a_hundred_thousand_characters_of_alternatives_parse() -> None:
    node = parse_query("a OR " * 20_000 + "a")
    assert isinstance(node, Or) and len(node.items) == 20_001


def test_a_hundred_thousand_open_parentheses_fail_cleanly() -> None:
    assert syntax_error("(" * 100_000).column == MAX_DEPTH


def test_a_hundred_thousand_characters_of_groups_parse() -> None:
    node = parse_query("(a -b) " * 14_000)
    assert isinstance(node, And) and len(node.items) == 14_000


# ---- reading a query leniently -----------------------------------------------------------------


def test_reading_a_valid_query_adds_no_note() -> None:
    assert read_query("a OR b") == (Or((t("a"), t("b"))), None)


def test_reading_an_empty_query_is_none_without_a_note() -> None:
    assert read_query("  ") == (None, None)


def test_reading_an_unclosed_group_drops_the_parenthesis_and_says_how_it_read_the_query() -> None:
    assert read_query("rust (error handling") == (
        And((t("rust"), t("error"), t("handling"))),
        "query syntax error at column 6 (unbalanced parenthesis); read as: rust error handling",
    )


def test_reading_an_unterminated_quote_keeps_the_words_after_it() -> None:
    node, note = read_query('x "unterminated phrase here')
    assert node == And((t("x"), t("unterminated"), t("phrase"), t("here")))
    assert note is not None and note.startswith("query syntax error at column 3 (unterminated phrase)")


def test_reading_a_broken_query_keeps_what_was_well_formed() -> None:
    node, _ = read_query('"connection pool" -draft (timeout')
    assert node == And((Phrase("connection pool"), Not(t("draft")), t("timeout")))


def test_reading_repairs_every_error_in_turn() -> None:
    node, note = read_query('title: -pool^x OR "config')
    assert node == Or((And((t("title"), Not(t("pool")))), t("config")))
    assert note == "query syntax error at column 1 (nothing after title:); read as: title -pool OR config"


def test_reading_a_bad_boost_drops_the_caret_and_its_number() -> None:
    assert read_query("a^0 b")[0] == And((t("a"), t("b")))
    assert read_query("(a)^2000")[0] == t("a")


def test_reading_a_dangling_or_drops_it() -> None:
    assert read_query("a OR") == (
        t("a"),
        "query syntax error at column 3 (OR with nothing after it); read as: a",
    )


def test_reading_only_exclusions_drops_them_instead_of_searching_their_words() -> None:
    assert read_query("-food") == (
        None,
        "query syntax error at column 1 (only negations); found no words to search for",
    )
    assert read_query("a OR -beta") == (t("a"), "query syntax error at column 6 (only negations); read as: a")
    assert read_query('-"old api" -(a OR b)')[0] is None


def test_reading_too_long_a_query_to_repair_keeps_exclusions_out_of_its_words() -> None:
    node, _ = read_query("(" + "word " * 1000 + "-draft")
    assert isinstance(node, And) and Term("draft") not in node.items


def test_reading_too_long_a_query_to_repair_keeps_its_flags_as_words() -> None:
    node, _ = read_query("(" + "word " * 1000 + "-j")
    assert isinstance(node, And) and Term("-j") in node.items


def test_reading_keeps_unknown_prefixes_as_words() -> None:
    node, _ = read_query("std::vector (")
    assert node == t("std::vector")


def test_reading_a_query_with_no_words_is_none_and_says_so() -> None:
    assert read_query("( )") == (
        None,
        "query syntax error at column 1 (empty group); found no words to search for",
    )


def test_reading_shortens_a_long_query_in_its_note() -> None:
    _, note = read_query("(" + "word " * 40)
    assert note is not None and note.endswith("…") and len(note) < 160


def test_reading_a_very_long_broken_query_falls_back_to_its_words() -> None:
    node, note = read_query("(" + "word " * 2000)
    assert isinstance(node, And) and len(node.items) == 2000
    assert note is not None and "read as: word word" in note


# ---- rendering ----------------------------------------------------------------------------------


def test_render_spells_out_and_or_and_not() -> None:
    node = parse_query('(title:rust ("error handling" OR log^2)) -draft')
    assert render(node) == '(title:rust AND ("error handling" OR log^2)) AND NOT draft'


def test_render_parenthesises_an_and_inside_an_or() -> None:
    assert render(parse_query("a b OR c")) == "(a AND b) OR c"


def test_render_shows_a_top_level_boost_on_the_group() -> None:
    assert render(parse_query("(a OR b)^2.5")) == "(a OR b)^2.5"


def test_render_spells_field_groups_per_word() -> None:
    assert render(parse_query("tags:(a b)")) == "tags:a AND tags:b"


def test_render_of_no_query_is_empty() -> None:
    assert render(None) == ""


def test_to_query_writes_the_canonical_query_text() -> None:
    node = parse_query('( title:rust   ("error   handling" OR log^2.0) ) -draft')
    assert to_query(node) == '(title:rust ("error handling" OR log^2)) -draft'


def test_to_query_of_no_query_is_empty() -> None:
    assert to_query(None) == ""


ROUND_TRIP = [
    "rust",
    "a b c",
    "a b OR c d",
    "(a OR b) c",
    "(a OR b) OR c",
    "a OR (b OR c)",
    "((a b) c)",
    '"error handling" -"old api"',
    "pool -(draft OR wip)",
    "tar -xvf -(js) -(-x) -(ab^2)",
    "title:rust tags:(a OR b)^2",
    'body:"x y"^1.5 path:src/a.py tree:docs',
    "(a b)^2 OR c^0.25",
    "-title:x y",
    "std::vector error-handling --flag it's",
    "a AND NOT b",
    "a -OR",
    "title:title:x",
    "(a^1e-7)^3",
    "a^999.99999",
    "(title:(a body:b) c)^3 OR d",
]


@pytest.mark.parametrize("query", ROUND_TRIP)
def test_to_query_round_trips_through_the_parser(query: str) -> None:
    node = parse_query(query)
    assert parse_query(to_query(node)) == node


@pytest.mark.parametrize("query", ROUND_TRIP)
def test_render_is_stable_through_to_query(query: str) -> None:
    node = parse_query(query)
    assert render(parse_query(to_query(node))) == render(node)


# ---- properties ---------------------------------------------------------------------------------

QUERY_ALPHABET = 'abcdefghijklmnopqrstuvwxyz "()-^:OR0123456789'
QUERY_PIECES = [*'ab()"-^: é', " ", " ", "OR", "or", "AND", "^2", "^0.5", "^0", "title:", "tags:", "x:"]
QUERY_PIECES += ["c ", " -d", " -(-e)", " -draft", ' "e f" ', " title:g", " (h OR i)", " tags:(j k)^3 "]
any_text = st.text()
query_text = st.text(alphabet=QUERY_ALPHABET)
query_pieces = st.lists(st.sampled_from(QUERY_PIECES), max_size=30).map("".join)
query_like = st.one_of(any_text, query_text, query_pieces)


def _checked_parse(text: str) -> Node | None:
    try:
        return parse_query(text)
    except QuerySyntaxError as error:
        assert 0 <= error.column < len(text)
        assert "\n" not in error.message
        assert len(error.caret().split("\n")) == 2
        return None


@settings(max_examples=300, deadline=None)
@given(query_like)
def test_reading_a_query_never_raises_and_reads_something_parseable(text: str) -> None:
    node, note = read_query(text)
    assert note is None or "\n" not in note
    assert node is not None or note is not None or _checked_parse(text) is None
    assert parse_query(to_query(node)) == node


@settings(max_examples=300, deadline=None)
@given(query_like)
def test_parsing_returns_a_node_or_raises_a_syntax_error_and_nothing_else(text: str) -> None:
    node = _checked_parse(text)
    assert node is None or isinstance(node, Term | Phrase | And | Or | Not)


@settings(max_examples=300, deadline=None)
@given(query_like)
def test_every_parsed_query_round_trips_through_to_query(text: str) -> None:
    node = _checked_parse(text)
    if node is not None:
        assert parse_query(to_query(node)) == node


def test_nodes_of_different_kinds_are_never_equal_even_with_the_same_fields() -> None:
    assert Term("a") != Phrase("a")
    assert (Term("a") == Phrase("a")) is False
    assert And((Term("a"),)) != Or((Term("a"),))
    assert len({Term("a"), Phrase("a"), Term("a")}) == 2
    assert Not(Term("a")) == Not(Term("a")) and hash(Not(Term("a"))) == hash(Not(Term("a")))

"""The heading finder's own markdown-it block state against markdown-it's `StateBlock`.

`find_headings` tokenizes with `_HeadingState`, which builds the line tables without a Python
loop and keeps only the top-level heading tokens. These tests hold it to the stock state: the
same tables, the same levels, the same heading tokens, and so the same headings as the
`find_headings` that used `StateBlock` (kept here as the reference).
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt, rules_block
from markdown_it.rules_block import StateBlock
from markdown_it.token import Token

from ra_build.document.markdown import (
    _MD,  # pyright: ignore[reportPrivateUsage]
    Heading,
    _heading,  # pyright: ignore[reportPrivateUsage]
    _HeadingState,  # pyright: ignore[reportPrivateUsage]
    find_headings,
    heading_texts,
    line_starts,
    parser_for,
)

EXAMPLES = settings(max_examples=1500, deadline=None)

_ATOMS = (
    "#", "##", "###", "####### ", " ", "  ", "   ", "    ", "\t", " \t", "\t ", "\n", "\n", "\n", "\r\n",
    "\r", ">", "> ", ">\t", "-", "- ", "-\t", "*", "* ", "+ ", "1. ", "2) ", "_", "---", "===", "=",
    "```", "~~~", "`", "<div>", "</div>", "<!--", "-->", "<pre>", "</pre>", "[a]: /u", "[a]", "text",
    "é", "\\", "&amp;", "\0", "*em*", "`code`", "<b>", "|",
    "\n- a", "\n* b", "\n1. c", "\n***", "\n- - -", "\n> q", "\n> # quoted", "\n- # listed", "\n```",
    "\n~~~ x", "\n# h", "\n## h ##", "\n### [a]", "\nText", "\n===", "\n---", "\n<div>", "\n[r]: /u",
    "\n    code", "\n\tcode", "\n  ", "\n \t", "\n\t\t- deep", " #", "\t#", "#\t", "\n# x\t#",
    "\n| a | b |", "\n|---|:-:|", "\n--|--", "\na | b", " | ",
)  # fmt: skip

sources = st.lists(st.sampled_from(_ATOMS), max_size=40).map("".join)


def _normalized(source: str) -> str:
    """`source` as find_headings hands it to markdown-it."""
    return re.sub(r"\r\n|\r", "\n", source).replace("\0", "\ufffd")


def _tables(state: StateBlock) -> tuple[object, ...]:
    return (state.bMarks, state.eMarks, state.tShift, state.sCount, state.bsCount, state.lineMax)


def _stock_state(source: str, parser: Any) -> tuple[StateBlock, list[Token]]:
    tokens: list[Token] = []
    state = StateBlock(source, parser, {}, tokens)
    parser.block.tokenize(state, state.line, state.lineMax)
    return state, tokens


def _stock_find_headings(text: str, start: int = 0, first_line: int = 0) -> list[Heading]:
    """find_headings as it was before `_HeadingState`: markdown-it's own state and tokens."""
    source = text[start:] if start else text
    if not source:
        return []
    has_cr = "\r" in source
    normalized = _normalized(source)
    parser = parser_for(normalized)
    tokens: list[Token] = []
    env: dict[str, Any] = {}
    state = StateBlock(normalized, parser, env, tokens)
    parser.block.tokenize(state, state.line, state.lineMax)
    marks = line_starts(source) if has_cr else state.bMarks
    headings: list[Heading] = []
    for index, token in enumerate(tokens):
        if token.type != "heading_open" or token.level or token.map is None:
            continue
        first, end = token.map
        title, slug_text = heading_texts(tokens[index + 1].content, env.get("references"))
        headings.append(
            Heading(
                int(token.tag[1]),
                title,
                first + first_line,
                end + first_line,
                start + marks[first],
                start + (marks[end] if end < len(marks) else len(source)),
                slug_text,
            )
        )
    return headings


@EXAMPLES
@given(sources)
def test_the_heading_state_builds_the_line_tables_markdown_it_builds(source: str) -> None:
    source = _normalized(source)
    stock = StateBlock(source, _MD, {}, [])
    fast = _HeadingState(source, _MD, {}, [])
    assert _tables(fast) == _tables(stock)
    assert fast.tShift is not fast.sCount  # rules change one without the other
    assert (fast.line, fast.level, fast.blkIndent, fast.parentType, fast.tight) == (
        stock.line,
        stock.level,
        stock.blkIndent,
        stock.parentType,
        stock.tight,
    )


def test_the_line_tables_expand_tabs_to_the_next_multiple_of_four_columns() -> None:
    state = _HeadingState(" \tx\n\t \ty\n  \n\t", _MD, {}, [])
    assert state.tShift == [2, 3, 2, 0]
    assert state.sCount == [4, 8, 2, 0]
    assert state.lineMax == 3  # the blank last line without a line break is no line


@EXAMPLES
@given(sources)
def test_the_heading_state_keeps_exactly_the_top_level_heading_tokens(source: str) -> None:
    source = _normalized(source)
    for parser in {_MD, parser_for(source)}:
        stock_state, stock_tokens = _stock_state(source, parser)
        kept: list[Token] = []
        state = _HeadingState(source, parser, {}, kept)
        parser.block.tokenize(state, state.line, state.lineMax)
        expected = [
            token
            for index, token in enumerate(stock_tokens)
            if (token.type == "heading_open" and not token.level)
            or (
                index and stock_tokens[index - 1].type == "heading_open" and not stock_tokens[index - 1].level
            )
        ]
        assert kept == expected
        assert (state.level, state.line) == (stock_state.level, stock_state.line)
        assert _tables(state) == _tables(stock_state)  # the rules restored what they changed alike


@EXAMPLES
@given(sources, st.integers(0, 12))
def test_find_headings_finds_what_markdown_its_own_block_state_finds(source: str, cut: int) -> None:
    start = min(cut, len(source))
    first_line = len(line_starts(source[:start])) - 1
    assert find_headings(source, start, first_line) == _stock_find_headings(source, start, first_line)


def test_headings_nested_in_quotes_and_lists_stay_out_and_setext_text_is_kept() -> None:
    text = "> # quoted\n\n- # listed\n\nSetext\ntitle\n===\n\n# ATX #\n\n    # code\n"
    assert [(h.level, h.text) for h in find_headings(text)] == [(1, "Setext title"), (1, "ATX")]
    assert find_headings(text) == _stock_find_headings(text)


_HEADING_LINE = st.lists(st.sampled_from(("#", "#", " ", "\t", "x", "\\#", "=", "\u00a0")), max_size=14).map(
    "".join
)
_STOCK = MarkdownIt("commonmark")


@EXAMPLES
@given(_HEADING_LINE, st.sampled_from(("", " ", "   ", "    ", "\t")), st.sampled_from(("", "\nnext")))
def test_the_atx_heading_rule_answers_as_markdown_its_own(line: str, indent: str, after: str) -> None:
    source = indent + line + after
    for silent in (True, False):
        results: list[tuple[object, ...]] = []
        for rule in (rules_block.heading, _heading):
            tokens: list[Token] = []
            state = StateBlock(source, _STOCK, {}, tokens)
            results.append((rule(state, 0, state.lineMax, silent), state.line, state.level, tokens))
        assert results[0] == results[1]


def test_heading_text_read_once_is_reused_only_where_link_definitions_cannot_change_it() -> None:
    defined = "# [a] `b`\n\n[a]: /u\n"
    for _ in range(2):  # the second round reads remembered texts
        assert [h.text for h in find_headings("# [a] `b`\n")] == ["[a] b"]
        assert [h.text for h in find_headings(defined)] == ["a b"]
        assert [h.text for h in find_headings("# `b` *c*\n\n[a]: /u\n")] == ["b c"]


def test_a_body_repeated_under_other_frontmatter_gets_its_remembered_headings_at_its_own_offsets() -> None:
    body = "# Get-Item\n\nText.\n\nSetext\n---\n\n## Examples\n"
    first = "---\nms.date: 1\n---\n" + body
    second = "---\nms.date: 22\nonline: x\n---\n" + body
    for text, start, line in ((first, 19, 3), (second, 30, 4), (body, 0, 0)):
        assert text[start:] == body
        assert find_headings(text, start, line) == _stock_find_headings(text, start, line)
    assert find_headings(second, 30, 4)[0].start == 30


def test_a_text_memo_forgets_its_oldest_texts_past_its_bound_and_never_answers_wrong() -> None:
    from ra_build.document.memo import TextMemo

    memo: TextMemo[int] = TextMemo(10)
    for text in ("aaaa", "bbbb", "cccc"):
        memo.put(text, len(text))
    assert (memo.get("aaaa"), memo.get("bbbb"), memo.get("cccc")) == (None, 4, 4)
    memo.put("x" * 25, 25)  # longer than the bound: held alone until the next text
    assert len(memo) == 1 and memo.get("x" * 25) == 25
    memo.put("d", 1)
    assert (memo.get("x" * 25), memo.get("d")) == (None, 1)


def test_a_text_memo_shared_by_threads_neither_raises_nor_miscounts() -> None:
    """A Dask worker parses on several threads of one process, all using the same memos."""
    import sys
    import threading

    from ra_build.document.memo import TextMemo

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible; restored below
    memo: TextMemo[int] = TextMemo(50)
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for i in range(20_000):
                text = f"{k}-{i}-xxxxxxxx"
                if memo.get(text) is None:
                    memo.put(text, i)
        except Exception as exc:  # any failure is the finding
            errors.append(exc)

    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == []
    assert memo._chars == sum(map(len, memo._answers)) <= 50  # pyright: ignore[reportPrivateUsage]

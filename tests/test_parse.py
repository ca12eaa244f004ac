"""Tests for ra_build.document.markdown: decoding, frontmatter, headings and heading text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from ra_build.document.frontmatter import frontmatter_title, normalize_tags, parse_frontmatter
from ra_build.document.markdown import decode, find_headings, heading_texts, line_starts

# --- decode -------------------------------------------------------------------------------------


def test_decode_returns_valid_utf8_unchanged_and_not_replaced() -> None:
    assert decode("héllo".encode()) == ("héllo", False)


def test_decode_strips_a_utf8_bom() -> None:
    assert decode(b"\xef\xbb\xbf# Title\n") == ("# Title\n", False)


def test_decode_flags_invalid_utf8_and_uses_replacement_characters() -> None:
    text, replaced = decode(b"caf\xe9 ok")
    assert replaced is True
    assert text == "caf\ufffd ok"


# --- lines --------------------------------------------------------------------------------------


def test_line_starts_treat_crlf_cr_and_lf_as_line_breaks() -> None:
    assert line_starts("a\r\nb\rc\nd") == [0, 3, 5, 7]


# --- frontmatter --------------------------------------------------------------------------------


def test_frontmatter_is_parsed_and_the_markdown_starts_after_its_closing_line() -> None:
    text = "---\ntitle: Guide\nweight: 3\n---\n# Heading\n"
    front = parse_frontmatter(text)
    assert front.data == {"title": "Guide", "weight": 3}
    assert front.title == "Guide"
    assert text[front.body_start :] == "# Heading\n"
    assert front.body_line == 4
    assert front.warnings == ()


def test_frontmatter_may_be_closed_by_three_dots() -> None:
    front = parse_frontmatter("---\na: 1\n...\nbody\n")
    assert front.data == {"a": 1}


def test_frontmatter_markers_may_have_trailing_spaces() -> None:
    front = parse_frontmatter("---  \na: 1\n---\t\nbody\n")
    assert front.data == {"a": 1}


def test_an_unclosed_frontmatter_block_is_not_frontmatter() -> None:
    front = parse_frontmatter("---\ntitle: x\n\n# Heading\n")
    assert front.body_start == 0
    assert front.data == {}
    assert front.warnings == ()


def test_a_block_that_does_not_start_on_the_first_line_is_not_frontmatter() -> None:
    assert parse_frontmatter("\n---\na: 1\n---\n").body_start == 0


def test_a_closing_line_must_be_exactly_three_dashes() -> None:
    assert parse_frontmatter("---\na: 1\n----\nb\n").body_start == 0


def test_an_empty_frontmatter_block_is_removed_without_a_warning() -> None:
    front = parse_frontmatter("---\n---\nbody")
    assert front.body_start == len("---\n---\n")
    assert front.data == {}
    assert front.warnings == ()


def test_crlf_frontmatter_is_recognised() -> None:
    text = "---\r\ntitle: T\r\n---\r\nbody\r\n"
    front = parse_frontmatter(text)
    assert front.title == "T"
    assert text[front.body_start :] == "body\r\n"
    assert front.body_line == 3


def test_malformed_yaml_gives_a_warning_with_its_line_and_no_data() -> None:
    front = parse_frontmatter("---\ntitle: ok\ntags: [a, b\n---\nbody\n")
    assert front.data == {}
    assert front.title is None
    (warning,) = front.warnings
    assert warning.startswith("line ")
    assert "malformed YAML frontmatter" in warning
    assert warning.endswith("fix the YAML or remove the block")
    assert "\n" not in warning


def test_malformed_yaml_is_still_removed_from_the_markdown() -> None:
    text = "---\n: : :\n  - [\n---\nbody\n"
    front = parse_frontmatter(text)
    assert front.warnings
    assert text[front.body_start :] == "body\n"


def test_yaml_that_is_not_a_mapping_gives_a_warning() -> None:
    front = parse_frontmatter("---\n- a\n- b\n---\nbody\n")
    assert front.data == {}
    assert "expected a mapping" in front.warnings[0]


def test_an_impossible_date_gives_a_warning_instead_of_an_exception() -> None:
    front = parse_frontmatter("---\ndate: 2023-02-30\n---\n")
    assert front.data == {}
    assert "malformed YAML frontmatter" in front.warnings[0]


def test_recursive_yaml_anchors_give_a_warning_instead_of_an_exception() -> None:
    front = parse_frontmatter("---\na: &x [*x]\n---\n")
    assert front.data == {}
    assert front.warnings


def test_frontmatter_values_are_made_json_safe() -> None:
    text = (
        "---\n"
        "date: 2024-01-02\n"
        "when: 2024-01-02 03:04:05\n"
        "big: 123456789012345678901234567890\n"
        "nan: .nan\n"
        "1: one\n"
        "nested: {list: [1, 2.5, true, null]}\n"
        "---\n"
    )
    data = parse_frontmatter(text).data
    assert data == {
        "date": "2024-01-02",
        "when": "2024-01-02T03:04:05",
        "big": "123456789012345678901234567890",
        "nan": "nan",
        "1": "one",
        "nested": {"list": [1, 2.5, True, None]},
    }


def test_frontmatter_keeps_keys_in_their_written_order() -> None:
    data = parse_frontmatter("---\nz: 1\na: 2\nm: 3\n---\n").data
    assert list(data) == ["z", "a", "m"]


def test_frontmatter_title_must_be_a_non_empty_scalar() -> None:
    assert frontmatter_title("  Spaced   out  ") == "Spaced out"
    assert frontmatter_title(1984) == "1984"
    assert frontmatter_title("") is None
    assert frontmatter_title(["a"]) is None
    assert frontmatter_title(True) is None
    assert frontmatter_title(None) is None


# --- tags ---------------------------------------------------------------------------------------


def test_tags_given_as_a_list_are_kept_in_order() -> None:
    assert normalize_tags(["rust", "errors", "patterns"]) == ("rust", "errors", "patterns")


def test_tags_given_as_a_string_are_split_on_commas_and_whitespace() -> None:
    assert normalize_tags("rust, errors  patterns,cli") == ("rust", "errors", "patterns", "cli")


def test_obsidian_hash_tags_lose_the_hash_and_nested_tags_stay_whole() -> None:
    assert normalize_tags("#rust #rust/errors") == ("rust", "rust/errors")
    assert normalize_tags(["#a", "b/c"]) == ("a", "b/c")


def test_tags_are_deduplicated_and_empty_ones_dropped() -> None:
    assert normalize_tags(["a", "#a", "", "  ", None, "#", "b", "a"]) == ("a", "b")


def test_non_string_tags_are_converted_to_strings() -> None:
    assert normalize_tags([2024, 1.5]) == ("2024", "1.5")
    assert normalize_tags(7) == ("7",)


def test_a_mapping_is_not_a_tag_list() -> None:
    assert normalize_tags({"a": 1}) == ()


def test_frontmatter_tags_are_normalized() -> None:
    front = parse_frontmatter("---\ntags: [intro, '#setup', intro]\n---\n")
    assert front.tags == ("intro", "setup")
    assert front.data["tags"] == ["intro", "#setup", "intro"]


# --- headings -----------------------------------------------------------------------------------


def test_atx_and_setext_headings_are_found_with_their_levels_and_lines() -> None:
    text = "# One\n\nText\n\nTwo\n===\n\nThree\n---\n\n#### Four ####\n"
    found = [(h.level, h.text, h.first_line, h.end_line) for h in find_headings(text)]
    assert found == [(1, "One", 0, 1), (1, "Two", 4, 6), (2, "Three", 7, 9), (4, "Four", 10, 11)]


def test_a_line_of_dashes_under_a_table_is_a_rule_not_a_heading() -> None:
    # go-chi/chi's README frames its middleware table so: its rows had become one heading
    table = "| Handler | description |\n| :------ | :---------- |\n| [Logger] | Logs requests |\n"
    assert find_headings(f"### Core\n\n----------\n{table}----------\n\nafter\n") == find_headings(
        "### Core\n"
    )
    # a line with a pipe is no table without a delimiter row of as many cells: GitHub's heading
    assert [h.text for h in find_headings("Title | x\n--------\n")] == ["Title | x"]


def test_a_multi_line_setext_heading_spans_all_its_lines() -> None:
    (heading,) = find_headings("First line\nsecond line\n===\n")
    assert (heading.text, heading.first_line, heading.end_line) == (
        "First line second line",
        0,
        3,
    )


def test_a_heading_inside_a_fenced_code_block_is_not_a_heading() -> None:
    text = "```bash\n# a shell comment\n```\n~~~\n## also code\n~~~\n"
    assert find_headings(text) == []


def test_a_heading_inside_an_indented_code_block_is_not_a_heading() -> None:
    assert find_headings("Para\n\n    # indented code\n") == []


def test_headings_inside_block_quotes_and_lists_are_not_section_headings() -> None:
    assert find_headings("> # quoted\n\n- # in a list\n") == []


def test_a_heading_inside_an_html_block_is_not_a_heading() -> None:
    assert find_headings("<div>\n# not a heading\n</div>\n") == []


def test_heading_lines_are_shifted_by_the_first_line_of_the_markdown() -> None:
    text = "---\na: 1\n---\n# Title\n"
    front = parse_frontmatter(text)
    (heading,) = find_headings(text, front.body_start, front.body_line)
    assert heading.first_line == 3
    assert text.splitlines()[heading.first_line] == "# Title"


def test_crlf_headings_get_the_same_line_numbers_as_lf() -> None:
    lf = "intro\n\nSetext\n---\n\n# Atx\n"
    crlf = lf.replace("\n", "\r\n")
    assert [h[:4] for h in find_headings(lf)] == [h[:4] for h in find_headings(crlf)]


def test_heading_offsets_point_at_the_heading_line_and_the_line_after_it() -> None:
    for newline in ("\n", "\r\n", "\r"):
        text = "---\nt: 1\n---\nintro\n\nSetext\n---\n\n# Atx\nbody".replace("\n", newline)
        front = parse_frontmatter(text)
        setext, atx = find_headings(text, front.body_start, front.body_line)
        assert text[setext.start : setext.span_start] == f"Setext{newline}---{newline}"
        assert text[atx.start : atx.span_start] == f"# Atx{newline}"


def test_a_heading_on_the_last_line_spans_to_the_end_of_the_text() -> None:
    (heading,) = find_headings("x\n\n# End")
    assert (heading.start, heading.span_start) == (3, 8)


# --- heading text -------------------------------------------------------------------------------


def plain_text(content: str) -> str:
    """The title of a heading's inline markdown."""
    return heading_texts(content)[0]


def test_plain_text_keeps_code_span_content() -> None:
    assert plain_text("The `Result<T>` type") == "The Result<T> type"
    assert plain_text("``a ` b``") == "a ` b"


def test_plain_text_keeps_link_and_image_text() -> None:
    assert plain_text("See [the guide](http://x.y/a_b) and ![logo](l.png)") == ("See the guide and logo")
    assert plain_text("[ref link][ref]") == "[ref link][ref]"  # no definition: not a link


def test_a_reference_link_in_a_heading_keeps_its_text_when_the_document_defines_it() -> None:
    [heading] = find_headings("# See [the guide][g]\n\ntext\n\n[g]: https://x.y\n")
    assert heading.text == "See the guide"


def test_a_badge_heading_is_its_alt_text() -> None:
    assert plain_text("[![Build status](https://ci/badge.svg)](https://ci)") == "Build status"


def test_no_internal_placeholder_leaks_into_a_title() -> None:
    assert plain_text("<https://x?y=\\*>") == "https://x?y=\\*"


def test_entities_escapes_and_breaks_become_their_text() -> None:
    assert plain_text("a &amp; b &copy; \\*not em\\*") == "a & b © *not em*"
    assert plain_text("one  \ntwo\\\nthree") == "one two three"


def test_a_multi_line_setext_heading_joins_its_lines_with_one_space() -> None:
    [heading] = find_headings("First line\n   second line\n===\n")
    assert heading.text == "First line second line"


def test_plain_text_keeps_autolink_urls() -> None:
    assert plain_text("Visit <https://example.com/a_b_c>") == "Visit https://example.com/a_b_c"


def test_plain_text_drops_html_tags_but_keeps_generic_types() -> None:
    assert plain_text("Fast <em>and</em> safe<br/>") == "Fast and safe"
    assert plain_text("The Result<T> Type!") == "The Result<T> Type!"


def test_plain_text_drops_emphasis_markers() -> None:
    assert plain_text("**Bold** and *em* and __strong__ and _em_") == ("Bold and em and strong and em")


def test_plain_text_keeps_intraword_underscores_and_lone_stars() -> None:
    assert plain_text("my_function_name") == "my_function_name"
    assert plain_text("2 * 3") == "2 * 3"


def test_plain_text_unescapes_backslash_escapes_and_entities() -> None:
    assert plain_text(r"\*not emphasis\* \# &amp; &copy;") == "*not emphasis* # & ©"


# --- the text a slug is made of -----------------------------------------------------------------

# GitHub's rendered text content of headings (tests/fixtures/github-slugger/README.md)
RENDERED_TEXT = Path(__file__).parent / "fixtures" / "github-slugger" / "ra-rendered-text.json"
RENDERED_TEXT_CASES: list[dict[str, Any]] = json.loads(RENDERED_TEXT.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "case", RENDERED_TEXT_CASES, ids=[f"{c['kind']}: {c['from']}" for c in RENDERED_TEXT_CASES]
)
def test_a_headings_slug_text_is_the_text_content_github_renders(case: dict[str, Any]) -> None:
    # but for angle-bracket text that is no HTML element, which ra keeps (DECISIONS 7)
    expected = case["ra"]["text_content"] if "ra" in case else case["text_content"]
    assert [h.slug_text for h in find_headings(case["markdown"])] == expected


def test_the_slug_text_of_a_line_break_is_a_newline() -> None:
    assert heading_texts("one  \ntwo\\\nthree\n four")[1] == "one\ntwo\nthree\nfour"


def test_the_slug_text_leaves_out_images_but_the_title_keeps_their_alt_text() -> None:
    assert heading_texts("See ![the logo](l.png) here") == ("See the logo here", "See  here")


def test_an_html_image_in_a_heading_gives_the_title_its_alt_text_as_a_markdown_image_does() -> None:
    # go-chi/chi's README: `# <img alt="chi" src="…">`, a logo for a title, had an empty one
    assert heading_texts('<img alt="chi" src="chi.svg" width="220" />') == ("chi", "")
    assert heading_texts("<a href='/'><img src=l.png alt='R&amp;D'></a> tools") == ("R&D tools", " tools")
    assert heading_texts('<img src="l.png" title="alt=no">') == ("", "")  # no alt: nothing
    assert heading_texts('<img data-alt="x" alt="Real" src="l.png">') == ("Real", "")  # not `data-alt`


def test_the_slug_text_leaves_out_element_tags_and_comments_but_keeps_a_type_parameter() -> None:
    texts = heading_texts("<b>Bold</b> Result<T> <!-- note --> end")
    assert texts == ("Bold Result<T>  end", "Bold Result<T>  end")


def test_the_slug_text_leaves_out_processing_instructions_declarations_and_cdata() -> None:
    assert heading_texts("a <?php x ?> b <!DOCTYPE html> c <![CDATA[d]]> e")[1] == "a  b  c  e"


def test_a_closing_tag_and_a_tag_with_attributes_of_no_html_element_are_text() -> None:
    assert heading_texts('Tree</Node> <Widget size="2"/>')[1] == 'Tree</Node> <Widget size="2"/>'


def test_the_title_drops_the_tags_of_custom_and_upper_case_elements() -> None:
    assert plain_text('A<BR>B <x-icon name="i"></x-icon>C <table>') == "AB C"


def test_the_slug_text_keeps_the_tags_githubs_tagfilter_escapes() -> None:
    assert heading_texts("a <script> b </STYLE> c")[1] == "a <script> b </STYLE> c"


def test_the_slug_text_is_not_stripped_where_the_title_is() -> None:
    assert heading_texts("![x](x.png) name <a>") == ("x name", " name ")


def test_the_slug_text_decodes_entities_and_escapes() -> None:
    assert heading_texts("&nbsp;a &amp; \\<b\\>")[1] == "\u00a0a & <b>"


@settings(max_examples=500, deadline=None)
@given(st.text(" \t\nab-.é\u00a0", max_size=30).map(lambda s: s.strip(" \t\n")))
def test_a_heading_without_markup_gets_the_slug_text_the_inline_parser_gives(content: str) -> None:
    # such headings skip the inline parser; a `&amp;` at the end makes it run
    assert heading_texts(content)[1] + "&" == heading_texts(content + "&amp;")[1]


# --- the tuned block tokenizer against markdown-it's own ----------------------------------------

_ATOMS = (
    "#", "##", "###", " ", "  ", "   ", "    ", "\t", "\n", "\n", "\n", "\r\n", ">", "> ", "-", "- ", "*",
    "* ", "+ ", "1. ", "2) ", "10.", "_", "___", "---", "===", "=", "```", "~~~", "`", "<div>", "</div>",
    "<!--", "-->", "<pre>", "</pre>", "<x>", "[a]: /u", "[a]", "text", "word", "é", "\\", "&amp;", "<?",
    "?>", "<![CDATA[", "]]>", "|",
    # whole lines, so that blocks meet other blocks (a list item ended by a rule, a quote by a fence…)
    "\n- a", "\n* b", "\n1. c", "\n***", "\n   ***", "\n- - -", "\n> q", "\n```", "\n~~~ x", "\n# h",
    "\n## h ##", "\nText", "\n===", "\n---", "\n<div>", "\n<!-- c -->", "\n[r]: /u", "\n    code", "\n  ",
    # GitHub's tables: a row, its delimiter row, and what may follow them
    "\n| a | b |", "\n|---|:-:|", "\n--|--", "\na | b", "\n| - |", " | ", "\n> a | b", "\n> --|--",
)  # fmt: skip


def _block_tokens(parser: MarkdownIt, source: str) -> list[tuple[object, ...]]:
    from markdown_it.rules_block import StateBlock
    from markdown_it.token import Token

    tokens: list[Token] = []
    state = StateBlock(source, parser, {}, tokens)
    parser.block.tokenize(state, state.line, state.lineMax)
    return [(t.type, t.tag, t.map, t.level, t.nesting, t.markup, t.info, t.content) for t in tokens]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_ATOMS), max_size=40).map("".join))
def test_the_heading_parser_tokenizes_blocks_exactly_as_markdown_it_does(source: str) -> None:
    from ra_build.document.markdown import _MD, parser_for  # pyright: ignore[reportPrivateUsage]

    source = source.replace("\r\n", "\n")  # as find_headings normalises before tokenizing
    stock = MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])  # GitHub's tables
    expected = _block_tokens(stock, source)
    assert _block_tokens(_MD, source) == expected
    # the parser that skips the rules no line can start, which find_headings takes for it
    assert _block_tokens(parser_for(source), source) == expected


def test_headings_after_a_list_nested_past_markdown_its_limit_are_still_found() -> None:
    deep = "".join("  " * i + "- item\n" for i in range(40))
    text = f"# Top\n\n{deep}\n# After\n\ntext\n"
    assert [h.text for h in find_headings(text)] == ["Top", "After"]


def test_headings_after_block_quotes_nested_past_the_limit_are_still_found() -> None:
    quotes = "".join(">" * i + " q\n" for i in range(1, 40))
    assert [h.text for h in find_headings(f"# Top\n\n{quotes}\n# End\n")] == ["Top", "End"]

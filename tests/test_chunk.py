"""Tests for ra_build.document.chunk: the chunk tree, ids, slugs, titles, ranges and token counts."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ra_build.document.chunk import Chunk, Document, Slugger, chunk_document, content_hash, slugify
from ra_build.document.html_tags import is_html_element
from ra_build.document.rst import rst_headings
from ra_query.text.tokens import count_tokens


def chunks_of(text: str, path: str = "guide.md", **kwargs: object) -> tuple[Chunk, ...]:
    return chunk_document("docs", path, text, **kwargs).chunks  # type: ignore[arg-type]


def by_slug(doc: Document) -> dict[str, Chunk]:
    return {chunk.slug: chunk for chunk in doc.chunks}


def chunk_text(text: str, chunk: Chunk) -> str:
    return text.encode("utf-8")[chunk.byte_start : chunk.byte_end].decode("utf-8")


# --- slugs --------------------------------------------------------------------------------------


def test_slug_drops_punctuation_like_github() -> None:
    assert slugify("The Result<T> Type!") == "the-resultt-type"


def test_slug_of_a_numbered_chapter() -> None:
    assert slugify("Chapter 1: Introduction") == "chapter-1-introduction"


def test_slug_keeps_underscores() -> None:
    assert slugify("my_function_name") == "my_function_name"


def test_slug_turns_each_space_into_one_hyphen() -> None:
    assert slugify("a  b - c") == "a--b---c"


def test_slug_keeps_unicode_letters_and_marks() -> None:
    assert slugify("Ünïcödé Überschrift") == "ünïcödé-überschrift"
    assert slugify("हिन्दी") == "हिन्दी"
    assert slugify("日本語の見出し") == "日本語の見出し"


GITHUB_SLUGGER = Path(__file__).parent / "fixtures" / "github-slugger" / "fixtures.json"


def test_slugs_match_every_fixture_of_github_slugger_in_order() -> None:
    slugger = Slugger()
    fixtures = json.loads(GITHUB_SLUGGER.read_text(encoding="utf-8"))
    assert len(fixtures) == 78
    wrong = [(f["name"], slugger.slug(f["input"]), f["expected"]) for f in fixtures]
    assert [w for w in wrong if w[1] != w[2]] == []


@pytest.mark.parametrize(
    ("heading", "slug"),
    [
        ("E = mc²", "e--mc"),
        ("CO₂ levels", "co-levels"),
        ("½ cup", "-cup"),
        ("Ⓔ mail", "ⓔ-mail"),
        ("a‿b", "a‿b"),
    ],
)
def test_slug_characters_follow_unicode_categories_as_github_does(heading: str, slug: str) -> None:
    assert slugify(heading) == slug


# GitHub slugs a heading's rendered text content, not its markdown: cases of each way the two
# differ, with the slugs GitHub's own parser and github-slugger give (the fixture's README).
RENDERED_TEXT = Path(__file__).parent / "fixtures" / "github-slugger" / "ra-rendered-text.json"
RENDERED_TEXT_CASES: list[dict[str, Any]] = json.loads(RENDERED_TEXT.read_text(encoding="utf-8"))


def test_the_rendered_text_goldens_hold_cases_of_each_way_text_and_markdown_differ() -> None:
    kinds = {case["kind"] for case in RENDERED_TEXT_CASES}
    assert kinds == {"line-break", "image", "inline-html", "hyphens", "generic"}
    assert sum(case["kind"] != "generic" for case in RENDERED_TEXT_CASES) == 36


@pytest.mark.parametrize(
    "case", RENDERED_TEXT_CASES, ids=[f"{c['kind']}: {c['from']}" for c in RENDERED_TEXT_CASES]
)
def test_a_heading_gets_the_slug_github_gives_its_rendered_text(case: dict[str, Any]) -> None:
    doc = chunk_document("docs", "g.md", case["markdown"])
    # GitHub's slug of an empty text is empty; ra names it `heading`. A case with an `ra` entry
    # holds angle-bracket text that is no HTML element, which ra keeps (DECISIONS 7).
    expected = case["ra"]["slugs"] if "ra" in case else [slug or "heading" for slug in case["slugs"]]
    assert [c.slug for c in doc.chunks[1:]] == expected


_TAG = re.compile(r"</?([A-Za-z][A-Za-z0-9\-]*)(?:\s[^<>]*)?/?>")


def test_the_goldens_depart_from_github_only_by_angle_bracket_text_that_is_no_html_element() -> None:
    departures = [case for case in RENDERED_TEXT_CASES if "ra" in case]
    for case in departures:
        no_element = [
            _TAG.sub(lambda m: m[0] if is_html_element(m[1]) else "", t) for t in case["ra"]["text_content"]
        ]
        assert no_element == case["text_content"], case["from"]
    # of the 36 cases GitHub's parser made, only these two hold such text
    assert [case["from"] for case in departures if case["kind"] != "generic"] == [
        "CommonMark 0.31.2 example 163, as an ATX heading",
        "hand-written: a generic type is a tag to CommonMark",
    ]


def test_a_multi_line_setext_heading_slugs_its_lines_without_a_separator() -> None:
    doc = chunk_document("docs", "g.md", "Line one\nline two\n===\n\ntext\n")
    assert doc.chunks[1].slug == "line-oneline-two"


def test_a_multi_line_setext_heading_title_reads_its_lines_as_one() -> None:
    doc = chunk_document("docs", "g.md", "Line one\nline two\n===\n\ntext\n")
    assert doc.chunks[1].title == "Line one line two"


def test_an_image_adds_nothing_to_the_slug_but_its_alt_text_to_the_title() -> None:
    heading = chunk_document("docs", "g.md", "# Image ![alt text](x.png) here\ntext\n").chunks[1]
    assert (heading.slug, heading.title) == ("image--here", "Image alt text here")


def test_a_heading_of_only_an_image_slugs_to_heading() -> None:
    doc = chunk_document("docs", "g.md", "# [![Build status](b.svg)](https://ci)\ntext\n")
    assert (doc.chunks[1].slug, doc.chunks[1].title) == ("heading", "Build status")


def test_inline_html_tags_add_nothing_to_the_slug() -> None:
    doc = chunk_document("docs", "g.md", '# foo <a href="x">\na\n# <span>In</span> <!-- c -->b\nb\n')
    assert [c.slug for c in doc.chunks[1:]] == ["foo-", "in-b"]


def test_seed_000s_example_the_result_t_type_slugs_to_the_resultt_type() -> None:
    heading = chunk_document("docs", "g.md", "## The Result<T> Type!\ntext\n").chunks[1]
    assert (heading.id, heading.title) == ("docs:g.md#the-resultt-type", "The Result<T> Type!")


def test_angle_bracket_text_that_is_no_html_element_is_text_in_the_slug() -> None:
    text = "# Vec<T>\na\n# The <Foo> component\nb\n# Map<K, V>\nc\n# Closing </T> here\nd\n"
    slugs = [c.slug for c in chunk_document("docs", "g.md", text).chunks[1:]]
    assert slugs == ["vect", "the-foo-component", "mapk-v", "closing-t-here"]


def test_html_elements_add_nothing_to_the_slug_beside_a_type_parameter() -> None:
    text = '# Result<T> and <kbd>Ctrl</kbd>+<KBD>C</KBD><sup>1</sup> <img src="k.png"><br>\ntext\n'
    assert chunk_document("docs", "g.md", text).chunks[1].slug == "resultt-and-ctrlc1-"


def test_a_custom_element_adds_nothing_to_the_slug_or_the_title() -> None:
    heading = chunk_document("docs", "g.md", '# Foo <my-widget size="2"></my-widget> bar\ntext\n').chunks[1]
    assert (heading.slug, heading.title) == ("foo--bar", "Foo  bar")


def test_a_tag_githubs_tagfilter_escapes_stays_in_the_slug() -> None:
    heading = chunk_document("docs", "g.md", "# foo <script> bar\ntext\n").chunks[1]
    assert heading.slug == "foo-script-bar"


def test_leading_trailing_and_repeated_hyphens_stay_in_the_slug() -> None:
    text = "# ` a`\na\n# foo <b>\nb\n# `  ``  `\nc\n# !!! ???\nd\n"
    assert [c.slug for c in chunk_document("docs", "g.md", text).chunks[1:]] == ["-a", "foo-", "--", "-"]


def test_a_heading_whose_rendered_text_slugs_to_nothing_becomes_heading() -> None:
    text = "# !!!\na\n# <br>\nb\n# ![logo](l.png)\nc\n"
    slugs = [c.slug for c in chunk_document("docs", "g.md", text).chunks[1:]]
    assert slugs == ["heading", "heading-1", "heading-2"]


def test_repeated_headings_get_numbered_slugs() -> None:
    slugger = Slugger()
    assert [slugger.slug("Overview") for _ in range(3)] == ["overview", "overview-1", "overview-2"]


def test_numbered_slugs_skip_an_existing_literal_slug() -> None:
    slugger = Slugger()
    assert [slugger.slug(t) for t in ("a-1", "a", "a")] == ["a-1", "a", "a-2"]


def test_a_heading_without_slug_characters_becomes_heading() -> None:
    slugger = Slugger()
    assert [slugger.slug(t) for t in ("!!!", "???", "")] == ["heading", "heading-1", "heading-2"]


def test_two_overview_headings_get_overview_and_overview_1() -> None:
    doc = chunk_document("docs", "g.md", "# Overview\na\n# Overview\nb\n")
    assert [c.id for c in doc.chunks] == ["docs:g.md", "docs:g.md#overview", "docs:g.md#overview-1"]


# --- the tree -----------------------------------------------------------------------------------


def test_the_document_node_comes_first_with_depth_zero_and_no_parent() -> None:
    doc = chunk_document("docs", "dir/guide.md", "Intro\n\n## Part\ntext\n")
    root = doc.chunks[0]
    assert (root.id, root.doc_id, root.parent_id, root.depth, root.slug) == (
        "docs:dir/guide.md",
        "docs:dir/guide.md",
        None,
        0,
        "",
    )
    assert (root.position, root.sibling_count) == (0, 1)
    assert doc.chunks[1].id == "docs:dir/guide.md#part"


def test_a_heading_with_no_content_before_the_next_heading_is_discarded() -> None:
    doc = chunk_document("docs", "g.md", "# A\n## Empty\n\n## B\ntext\n")
    assert [c.slug for c in doc.chunks] == ["", "a", "b"]


def test_a_discarded_heading_consumes_no_slug() -> None:
    doc = chunk_document("docs", "g.md", "# Same\n# Same\ntext\n")
    assert [c.slug for c in doc.chunks] == ["", "same"]


def test_a_heading_with_only_whitespace_in_its_span_is_discarded() -> None:
    doc = chunk_document("docs", "g.md", "# A\n \t\n\n# B\nx\n# C\n  \n")
    assert [c.slug for c in doc.chunks] == ["", "b"]


def test_a_heading_whose_only_content_is_empty_subheadings_is_discarded() -> None:
    doc = chunk_document("docs", "g.md", "# API\n## Endpoints\n### GET\n### POST\n# Next\nx\n")
    assert [c.slug for c in doc.chunks] == ["", "next"]


def test_a_discarded_heading_still_ends_the_span_before_it() -> None:
    text = "## A\ntext a\n# B\n# C\nmore\n"
    chunks = by_slug(chunk_document("docs", "g.md", text))
    assert "b" not in chunks
    assert chunks["a"].body == "text a"
    assert chunks["c"].parent_id == "docs:g.md"


def test_a_discarded_heading_line_is_in_no_body() -> None:
    text = "Preamble\n# Empty\n# Real\ntext\n## Empty too\n### Deep\nleaf\n"
    doc = chunk_document("docs", "g.md", text)
    for chunk in doc.chunks:
        assert "Empty" not in chunk.body
    assert [c.slug for c in doc.chunks] == ["", "real", "empty-too", "deep"]


def test_a_heading_with_children_keeps_its_empty_body_and_survives() -> None:
    doc = chunk_document("docs", "g.md", "# Parent\n## Child\ntext\n")
    parent = by_slug(doc)["parent"]
    assert parent.body == ""
    assert by_slug(doc)["child"].parent_id == parent.id


def test_an_h3_directly_under_an_h1_is_the_h1s_child() -> None:
    doc = chunk_document("docs", "g.md", "# Top\nintro\n### Deep\ntext\n")
    deep = by_slug(doc)["deep"]
    assert deep.parent_id == "docs:g.md#top"
    assert deep.depth == 3


def test_a_later_h2_after_a_skipped_level_is_a_sibling_of_the_h3() -> None:
    doc = chunk_document("docs", "g.md", "# Top\n### Deep\na\n## Mid\nb\n")
    chunks = by_slug(doc)
    assert chunks["mid"].parent_id == chunks["deep"].parent_id == "docs:g.md#top"
    assert (chunks["deep"].position, chunks["mid"].position) == (0, 1)
    assert chunks["deep"].sibling_count == chunks["mid"].sibling_count == 2


def test_headings_before_any_h1_hang_off_the_document_node() -> None:
    doc = chunk_document("docs", "g.md", "## First\na\n# Second\nb\n")
    assert [c.parent_id for c in doc.chunks[1:]] == ["docs:g.md", "docs:g.md"]
    assert [c.position for c in doc.chunks[1:]] == [0, 1]


def test_sibling_positions_count_children_of_each_parent() -> None:
    text = "# A\na\n## A1\nx\n## A2\ny\n## A3\nz\n# B\nb\n"
    chunks = by_slug(chunk_document("docs", "g.md", text))
    assert [(chunks[s].position, chunks[s].sibling_count) for s in ("a1", "a2", "a3")] == [
        (0, 3),
        (1, 3),
        (2, 3),
    ]
    assert [(chunks[s].position, chunks[s].sibling_count) for s in ("a", "b")] == [(0, 2), (1, 2)]


def test_a_heading_inside_a_fenced_code_block_does_not_create_a_chunk() -> None:
    text = "# Real\n\n```sh\n# comment\n```\n"
    doc = chunk_document("docs", "g.md", text)
    assert [c.slug for c in doc.chunks] == ["", "real"]
    assert "# comment" in doc.chunks[1].body


def test_a_heading_inside_an_indented_code_block_does_not_create_a_chunk() -> None:
    doc = chunk_document("docs", "g.md", "# Real\n\n    # not a heading\n")
    assert [c.slug for c in doc.chunks] == ["", "real"]


def test_ids_are_unique_and_deterministic() -> None:
    text = "# A\nx\n## B\ny\n# A\nz\n## B\nw\n"
    first = chunk_document("docs", "g.md", text)
    second = chunk_document("docs", "g.md", text)
    ids = [c.id for c in first.chunks]
    assert len(set(ids)) == len(ids)
    assert first == second


# --- bodies -------------------------------------------------------------------------------------


def test_a_leaf_heading_body_is_its_whole_span_without_trailing_blank_lines() -> None:
    doc = chunk_document("docs", "g.md", "# A\n\nline 1\n\n  indented\n\n\n# B\nb\n")
    assert by_slug(doc)["a"].body == "line 1\n\n  indented"


def test_a_parent_body_stops_at_its_first_child_heading() -> None:
    doc = chunk_document("docs", "g.md", "# A\nintro\n## B\nchild text\n")
    assert by_slug(doc)["a"].body == "intro"
    assert by_slug(doc)["b"].body == "child text"


def test_the_document_body_is_the_preamble() -> None:
    doc = chunk_document("docs", "g.md", "Preamble line\n\n# A\ntext\n")
    assert doc.chunks[0].body == "Preamble line"


def test_the_document_body_is_the_whole_file_when_there_is_no_heading() -> None:
    doc = chunk_document("docs", "g.md", "Just text\n\nmore text\n")
    assert len(doc.chunks) == 1
    assert doc.chunks[0].body == "Just text\n\nmore text"


def test_bodies_keep_internal_text_byte_exact() -> None:
    body = "a  \tb\n\n\tcode\r\nend"
    doc = chunk_document("docs", "g.md", f"# H\n{body}\n\n")
    assert doc.chunks[1].body == body


# --- frontmatter --------------------------------------------------------------------------------


def test_frontmatter_followed_by_preamble_yields_no_spurious_heading_chunk() -> None:
    text = "---\ntitle: Guide\ntags: [a]\n---\nSome preamble text.\n"
    doc = chunk_document("docs", "g.md", text)
    assert len(doc.chunks) == 1
    assert doc.chunks[0].body == "Some preamble text."


def test_malformed_yaml_frontmatter_warns_and_the_document_is_still_chunked() -> None:
    text = "---\ntitle: [broken\n---\nintro\n# Section\nbody\n"
    doc = chunk_document("docs", "g.md", text)
    assert len(doc.warnings) == 1
    assert "malformed YAML frontmatter" in doc.warnings[0]
    assert doc.frontmatter == {}
    assert [c.slug for c in doc.chunks] == ["", "section"]
    assert doc.chunks[0].body == "intro"
    assert doc.title == "Section"


def test_a_file_with_only_frontmatter_is_one_empty_document_node() -> None:
    text = "---\ntitle: Only\n---\n"
    doc = chunk_document("docs", "g.md", text)
    (root,) = doc.chunks
    assert root.body == ""
    assert root.title == "Only"
    assert 1 <= root.line_start == root.line_end <= 3
    assert root.byte_start == root.byte_end == len(text)


def test_other_frontmatter_keys_are_kept() -> None:
    doc = chunk_document("docs", "g.md", "---\ntitle: T\nauthor: Ann\ntags: x\n---\nbody\n")
    assert doc.frontmatter == {"title": "T", "author": "Ann", "tags": "x"}


def test_every_chunk_inherits_the_document_tags() -> None:
    text = "---\ntags: '#rust, errors'\n---\n# A\nx\n## B\ny\n"
    doc = chunk_document("docs", "g.md", text)
    assert doc.tags == ("rust", "errors")
    assert {c.tags for c in doc.chunks} == {("rust", "errors")}


def test_tags_in_list_form_reach_the_document() -> None:
    doc = chunk_document("docs", "g.md", "---\ntags: [intro, setup]\n---\nx\n")
    assert doc.tags == ("intro", "setup")


# --- titles and breadcrumbs ---------------------------------------------------------------------


def test_frontmatter_title_wins_over_the_first_h1() -> None:
    doc = chunk_document("docs", "g.md", "---\ntitle: From FM\n---\n# From H1\nx\n")
    assert (doc.title, doc.title_source) == ("From FM", "frontmatter")
    assert (doc.chunks[0].title, doc.chunks[0].title_source) == ("From FM", "frontmatter")


def test_the_first_h1_is_the_title_without_frontmatter_title() -> None:
    doc = chunk_document("docs", "g.md", "## Not this\nx\n# This *one*\ny\n# Later\nz\n")
    assert (doc.title, doc.title_source) == ("This one", "h1")


def test_the_file_name_is_the_title_without_h1() -> None:
    doc = chunk_document("docs", "dir/my.notes.md", "## Only h2\nx\n")
    assert (doc.title, doc.title_source) == ("my.notes", "filename")


def test_heading_chunks_take_their_heading_text_as_title() -> None:
    doc = chunk_document("docs", "g.md", "# `Result<T>` and [links](x)\nbody\n")
    heading = doc.chunks[1]
    assert (heading.title, heading.title_source) == ("Result<T> and links", "heading")


def test_breadcrumb_omits_an_h1_equal_to_the_title() -> None:
    doc = chunk_document("docs", "g.md", "# Guide\nintro\n## Install\nsteps\n")
    chunks = by_slug(doc)
    assert doc.chunks[0].breadcrumb == ("Guide",)
    assert chunks["guide"].breadcrumb == ("Guide",)
    assert chunks["install"].breadcrumb == ("Guide", "Install")


def test_breadcrumb_lists_document_title_and_every_ancestor() -> None:
    text = "---\ntitle: Manual\n---\n# Part\na\n## Chapter\nb\n### Section\nc\n"
    chunks = by_slug(chunk_document("docs", "g.md", text))
    assert chunks["section"].breadcrumb == ("Manual", "Part", "Chapter", "Section")


def test_breadcrumb_keeps_a_deeper_heading_equal_to_the_title() -> None:
    chunks = by_slug(chunk_document("docs", "Guide.md", "## Guide\ntext\n"))
    assert chunks["guide"].breadcrumb == ("Guide", "Guide")


# --- ranges -------------------------------------------------------------------------------------


def test_line_ranges_cover_heading_line_and_body() -> None:
    text = "intro\n\n# A\n\nbody a\nmore\n\n## B\nbody b\n"
    chunks = chunks_of(text)
    assert [(c.line_start, c.line_end) for c in chunks] == [(1, 1), (3, 6), (8, 9)]


def test_a_heading_with_an_empty_body_covers_only_its_heading_line() -> None:
    chunks = chunks_of("# A\n## B\nx\n")
    assert (chunks[1].line_start, chunks[1].line_end) == (1, 1)
    assert chunk_text("# A\n## B\nx\n", chunks[1]) == "# A"


def test_setext_headings_are_chunks_whose_range_includes_the_underline() -> None:
    text = "Title\n=====\n\nintro\n\nPart\n----\npart body\n"
    doc = chunk_document("docs", "g.md", text)
    assert [c.slug for c in doc.chunks] == ["", "title", "part"]
    part = by_slug(doc)["part"]
    assert (part.line_start, part.line_end) == (6, 8)
    assert chunk_text(text, part) == "Part\n----\npart body"
    assert by_slug(doc)["title"].body == "intro"


def test_crlf_files_give_the_same_line_numbers_as_lf_files() -> None:
    lf = "---\ntitle: T\n---\nintro\n\n# A\nbody\n\nSub\n---\nsub body\n"
    crlf = lf.replace("\n", "\r\n")
    lines = [(c.line_start, c.line_end) for c in chunks_of(lf)]
    assert [(c.line_start, c.line_end) for c in chunks_of(crlf)] == lines
    assert lines == [(4, 4), (6, 7), (9, 11)]


def test_crlf_byte_ranges_slice_heading_line_and_body() -> None:
    text = "# A\r\nbody\r\n\r\n## B\r\nmore\r\n"
    chunks = chunks_of(text)
    assert [chunk_text(text, c) for c in chunks[1:]] == ["# A\r\nbody", "## B\r\nmore"]


def test_non_ascii_text_gives_right_byte_ranges() -> None:
    text = "Préambule é\n\n# Café ☕\n\nDéjà vu 日本\n\n## Ünter\n\nñ 𝄞 end\n"
    chunks = chunks_of(text)
    assert [chunk_text(text, c) for c in chunks] == [
        "Préambule é",
        "# Café ☕\n\nDéjà vu 日本",
        "## Ünter\n\nñ 𝄞 end",
    ]


def test_byte_range_of_a_heading_is_heading_line_then_body() -> None:
    text = "---\ntitle: Ü\n---\n# Überblick\n\nInhalt äöü\n"
    chunk = chunks_of(text)[1]
    sliced = chunk_text(text, chunk)
    assert sliced.startswith("# Überblick")
    assert sliced.endswith(chunk.body)


def test_line_ranges_stay_within_the_file() -> None:
    text = "# A\nx\n\n\n"
    for chunk in chunks_of(text):
        assert 1 <= chunk.line_start <= chunk.line_end <= 4


# --- kinds and edge files -----------------------------------------------------------------------


def test_a_txt_file_is_one_chunk_titled_by_its_file_name() -> None:
    text = "# not a heading\n\nplain text\n"
    doc = chunk_document("notes", "dir/readme.txt", text)
    assert doc.kind == "text"
    (root,) = doc.chunks
    assert root.id == "notes:dir/readme.txt"
    assert (root.title, root.title_source) == ("readme", "filename")
    assert root.body == "# not a heading\n\nplain text"


def test_a_txt_file_does_not_parse_frontmatter() -> None:
    doc = chunk_document("notes", "a.txt", "---\ntitle: x\n---\nbody\n")
    assert doc.frontmatter == {}
    assert doc.chunks[0].body.startswith("---")


RST = """\
.. _advanced:

==============
Advanced Usage
==============

This document covers advanced features.

Session Objects
---------------

Sessions persist parameters across requests::

    s = requests.Session()
    Not a title
    -----------

Keep-Alive
----------

Connections are kept alive.

Pooling
~~~~~~~

A pool per host.

.. note::
-----------

Go
~~

Short.

Installation steps
~~~~~~~~~~~~

Run it.
"""


def test_an_rst_page_is_chunked_by_its_sections_whatever_their_adornment() -> None:
    doc = chunk_document("d", "user/advanced.rst", RST)
    assert (doc.kind, doc.title) == ("rst", "Advanced Usage")
    sections = [(c.depth, c.slug, c.line_start) for c in doc.chunks if c.depth]
    assert sections == [
        (1, "advanced-usage", 1),  # over- and underlined: the first style, level 1; its label first
        (2, "session-objects", 9),  # an indented literal block's underlined line is no title
        (2, "keep-alive", 18),
        (3, "pooling", 23),  # `~`: the third style
        (3, "go", 31),  # a title of two letters
        (3, "installation-steps", 36),  # an underline shorter than its title, four long or more
    ]  # `.. note::` is a directive, not a title
    assert "Not a title" in next(c for c in doc.chunks if c.slug == "session-objects").body


_RST_LINES = [
    "Title\n",
    "=====\n",
    "-----\n",
    "\n",
    "  indented\n",
    "text here\n",
    "~~~\n",
    ".. note::\n",
    ".. _go-label:\n",
    "Go\n",
    "--\n",
]


@given(st.lists(st.sampled_from(_RST_LINES)))
def test_any_rst_text_chunks_into_ranges_that_cover_each_line_in_order(lines: list[str]) -> None:
    text = "".join(lines)
    doc = chunk_document("d", "p.rst", text)
    starts = [c.byte_start for c in doc.chunks if c.depth]
    assert starts == sorted(starts)
    covered = {n for c in doc.chunks if c.depth or c.body for n in range(c.line_start, c.line_end + 1)}
    # a title whose section holds nothing is no chunk (DECISIONS 1-8: `Title`/`=====`, then
    # `Go`/`--` and no text): its line is a title all the same
    titles = {c.title for c in doc.chunks} | {doc.title} | {h.text for h in rst_headings(text)}
    for number, line in enumerate(text.splitlines(), start=1):
        assert not re.search(r"\w", line) or number in covered or line.strip() in titles, (number, text)
    # and its text: each line with words is in a chunk's body, or is a section's title (or a
    # hyperlink target above one: in the section's range, as its title's underline is)
    held = Counter(line.strip() for c in doc.chunks for line in c.body.splitlines())
    headings = rst_headings(text)
    held.update(h.text for h in headings)
    targets = {
        n
        for h in headings
        for n in range(h.first_line, h.end_line)
        if text.splitlines()[n].startswith(".. _")
    }
    worded = [
        line.strip()
        for n, line in enumerate(text.splitlines())
        if re.search(r"\w", line) and n not in targets
    ]
    assert Counter(worded) <= held, text


def test_the_hyperlink_targets_above_an_rst_title_are_the_first_lines_of_its_section() -> None:
    text = "Intro\n=====\n\nText one.\n\n.. _keep-alive:\n\n.. _alive:\n\nKeep-Alive\n----------\n\nKept.\n"
    doc = chunk_document("d", "a.rst", text)
    ranges = {c.slug: (c.line_start, c.line_end) for c in doc.chunks if c.depth}
    assert ranges == {"intro": (1, 4), "keep-alive": (6, 13)}  # the labels had ended "intro"
    assert [h.text for h in rst_headings(".. _top:\n\nTitle\n=====\n")] == ["Title"]


def test_a_default_tree_finds_a_section_of_an_rst_page_and_lang_rst_keeps_it(tmp_path: Path) -> None:
    from tests.conftest import run_cmd

    (tmp_path / "docs" / "user").mkdir(parents=True)
    (tmp_path / "docs" / "user" / "advanced.rst").write_text(RST, encoding="utf-8")
    (tmp_path / "docs" / "index.md").write_text("# Index\n\nSessions, keep-alive.\n", encoding="utf-8")
    (tmp_path / ".ra.toml").write_text('root = true\n[tree.docs]\npath = "docs"\n', encoding="utf-8")
    (tmp_path / "home").mkdir()
    run = run_cmd(
        "ra", "search", "--json", "connections kept alive lang:rst", cwd=tmp_path, home=tmp_path / "home"
    )
    assert run.code == 0, run.err
    found = json.loads(run.out)["queries"][0]["results"]
    assert [r["id"] for r in found] == ["docs:user/advanced.rst#keep-alive"]
    assert found[0]["language"] == "rst"


def test_kind_can_be_forced() -> None:
    assert chunk_document("t", "a.txt", "# H\nx\n", kind="markdown").kind == "markdown"
    assert chunk_document("t", "a.markdown", "# H\nx\n").kind == "markdown"
    assert len(chunk_document("t", "a.md", "# H\nx\n", kind="text").chunks) == 1


def test_an_empty_file_is_one_empty_document_node_on_line_one() -> None:
    doc = chunk_document("docs", "empty.md", "")
    (root,) = doc.chunks
    assert (root.body, root.line_start, root.line_end, root.byte_start, root.byte_end) == (
        "",
        1,
        1,
        0,
        0,
    )
    assert root.tokens == 0
    assert doc.size == 0
    assert doc.title == "empty"


def test_size_defaults_to_the_utf8_length_and_can_be_given() -> None:
    assert chunk_document("d", "a.md", "é").size == 2
    assert chunk_document("d", "a.md", "é", size=5).size == 5


# --- tokens and hashes --------------------------------------------------------------------------


def test_token_counts_are_positive_and_count_heading_line_and_body() -> None:
    text = "intro words\n\n# Heading one\n\nSome body text here.\n\n## Two\nmore\n"
    for chunk in chunks_of(text):
        assert chunk.tokens > 0
        assert chunk.tokens == count_tokens(chunk_text(text, chunk))


def test_a_custom_token_counter_is_used() -> None:
    chunks = chunks_of("# A\nbody\n", count_tokens=len)
    assert [c.tokens for c in chunks] == [0, len("# A\nbody")]


def test_content_hash_is_stable_and_covers_every_indexed_field() -> None:
    base = content_hash("T", ("D", "T"), ("a",), "body")
    assert base == content_hash("T", ("D", "T"), ("a",), "body")
    assert len(base) == 64
    variants = {
        content_hash("U", ("D", "T"), ("a",), "body"),
        content_hash("T", ("D", "U"), ("a",), "body"),
        content_hash("T", ("D", "T"), ("b",), "body"),
        content_hash("T", ("D", "T"), ("a",), "bodies"),
        content_hash("T", ("DT",), ("a",), "body"),
    }
    assert base not in variants
    assert len(variants) == 5


def test_content_hash_changes_when_a_tag_changes() -> None:
    first = chunk_document("d", "a.md", "---\ntags: [a]\n---\n# H\nx\n").chunks[1]
    second = chunk_document("d", "a.md", "---\ntags: [b]\n---\n# H\nx\n").chunks[1]
    assert first.content_hash != second.content_hash


# --- token counts remembered by text -------------------------------------------------------------

_REPEATED = "# Title\n\nSame words in every version.\n\n## Notes\n\nA note that recurs.\n"


def test_a_custom_token_counter_is_used_for_every_chunk() -> None:
    calls: list[str] = []

    def counter(text: str) -> int:
        calls.append(text)
        return 7

    first = chunk_document("docs", "v1/a.md", _REPEATED, count_tokens=counter)
    second = chunk_document("docs", "v2/a.md", _REPEATED, count_tokens=counter)
    assert {c.tokens for c in (*first.chunks, *second.chunks)} == {7}
    assert len(calls) == len(first.chunks) + len(second.chunks)  # nothing remembered for it


def test_remembered_counts_equal_fresh_counts_even_after_the_memo_forgets_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ra_build.document import chunk
    from ra_build.document.memo import TextMemo

    tiny: TextMemo[int] = TextMemo(40)  # forgets after every few texts
    monkeypatch.setattr(chunk, "_TOKEN_COUNTS", tiny)
    fresh = [c.tokens for c in chunk_document("docs", "v1/a.md", _REPEATED, count_tokens=count_tokens).chunks]
    for version in ("v1", "v2", "v3"):
        cached = chunk_document("docs", f"{version}/a.md", _REPEATED)
        assert [c.tokens for c in cached.chunks] == fresh

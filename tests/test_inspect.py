"""Tests for ra_build.cli.inspection: the exact text of `ra inspect doc`."""

from __future__ import annotations

from ra_build.cli.inspection import render_inspect
from ra_build.document.chunk import chunk_document

GUIDE = """\
---
title: Getting Started
tags: [intro, '#setup']
draft: false
---
Welcome to the guide.

# Getting Started

## Installation

Run the installer.

## Configuration

Edit the file.
"""

GUIDE_GOLDEN = """\
File: docs/guide.md
Type: markdown
Language: en
Frontmatter:
  title: "Getting Started"
  tags: [intro, "#setup"]
  draft: false
Tags: intro, setup

Chunks (4):
  1. docs:guide.md
     Title: "Getting Started" (from frontmatter)
     Breadcrumb: Getting Started
     Parent: -
     Depth: 0
     Lines: 6-6
     Size: 21 chars, 5 tokens

  2. docs:guide.md#getting-started
     Title: "Getting Started"
     Breadcrumb: Getting Started
     Parent: docs:guide.md
     Depth: 1
     Lines: 8-8
     Size: 0 chars, 3 tokens

  3. docs:guide.md#installation
     Title: "Installation"
     Breadcrumb: Getting Started › Installation
     Parent: docs:guide.md#getting-started
     Depth: 2
     Lines: 10-12
     Size: 18 chars, 7 tokens

  4. docs:guide.md#configuration
     Title: "Configuration"
     Breadcrumb: Getting Started › Configuration
     Parent: docs:guide.md#getting-started
     Depth: 2
     Lines: 14-16
     Size: 14 chars, 7 tokens
"""


def test_inspect_output_for_a_small_guide_matches_the_golden_text() -> None:
    doc = chunk_document("docs", "guide.md", GUIDE)
    assert render_inspect(doc, display_path="docs/guide.md", max_chunk_size=50_000) == (GUIDE_GOLDEN)


def test_inspect_flags_chunks_over_max_chunk_size_with_thousands_separators() -> None:
    body = "word " * 2_400
    doc = chunk_document("docs", "big.md", f"# Big\n{body}\n")
    out = render_inspect(doc, display_path="big.md", max_chunk_size=10_000)
    tokens = doc.chunks[1].tokens
    assert tokens > 1_000
    assert f"Size: 11,999 chars, {tokens:,} tokens  (over max_chunk_size 10,000)" in out
    assert out.count("over max_chunk_size") == 1


def test_inspect_shows_warnings_and_no_frontmatter_for_malformed_yaml() -> None:
    doc = chunk_document("docs", "bad.md", "---\ntitle: [x\n---\nbody\n")
    out = render_inspect(doc, display_path="bad.md", max_chunk_size=50_000)
    assert out == (
        "File: bad.md\n"
        "Type: markdown\n"
        "Language: en\n"
        "Frontmatter: none\n"
        "Warnings:\n"
        "  line 3: malformed YAML frontmatter: did not find expected ',' or ']'"
        " — fix the YAML or remove the block\n"
        "\n"
        "Chunks (1):\n"
        "  1. docs:bad.md\n"
        '     Title: "bad" (from file name)\n'
        "     Breadcrumb: bad\n"
        "     Parent: -\n"
        "     Depth: 0\n"
        "     Lines: 4-4\n"
        "     Size: 4 chars, 1 tokens\n"
    )


def test_inspect_names_the_first_h1_as_the_title_source() -> None:
    doc = chunk_document("docs", "a.md", "# Alpha\ntext\n")
    out = render_inspect(doc, display_path="a.md", max_chunk_size=50_000)
    assert '     Title: "Alpha" (from first h1)\n' in out


def test_inspect_of_a_text_file_reports_its_type() -> None:
    doc = chunk_document("notes", "todo.txt", "buy milk\n")
    out = render_inspect(doc, display_path="todo.txt", max_chunk_size=50_000)
    assert out.startswith("File: todo.txt\nType: text\nLanguage: en\nFrontmatter: none\n\nChunks (1):\n")


def test_inspect_quotes_frontmatter_values_that_need_it() -> None:
    text = "---\ntitle: 'Say \"hi\"'\nauthors: [Ann Lee, bob]\nmeta: {a: 1}\n---\nx\n"
    out = render_inspect(chunk_document("d", "q.md", text), display_path="q.md", max_chunk_size=9)
    assert '  title: "Say \\"hi\\""\n' in out
    assert '  authors: ["Ann Lee", bob]\n' in out
    assert '  meta: {"a": 1}\n' in out


def test_inspect_is_deterministic() -> None:
    doc = chunk_document("docs", "guide.md", GUIDE)
    first = render_inspect(doc, display_path="g", max_chunk_size=1)
    assert first == render_inspect(
        chunk_document("docs", "guide.md", GUIDE), display_path="g", max_chunk_size=1
    )

"""Excerpts of long prose results: the lead and the blocks that match the query (issue 21).

A page-sized docs chunk printed whole costs as much as reading the file: five of them cost 0.84×
grep + reading five files on the reworded tldr questions. A search result (full view, JSON
`content`, MCP) of a prose chunk longer than `FOCUS_TOKENS` shows its heading, its first block
(what the chunk is about) and the `FOCUS_BLOCKS` blocks with most of the query's content words,
each with the nearest heading above it (a section merged into its page holds its sub-headings),
in document order; each run of blocks left out is one `⋯` line, and the JSON says `excerpt`. A
block is a run of lines between blank lines; a fenced code block is one block, and a block that
ends with `:` (an example's description) takes the block after it along. A code file's own
chunk longer than `OUTLINE_FOCUS_TOKENS` is cut as its outline's lines (`outlined`); every other
code chunk, `ra get`, `ra context` and `--whole` are never cut. In an excerpt, a long chunk
shown whole or a `ra context` result, a line of over LONG_BLOCK characters (a paragraph of
megabytes) is its beginning and how much is left out (`long_lines_cut`). Measured
(bench/quality.py, reworded): tokens 0.84× -> 0.49× of grep + read; the line the answer quotes
stays visible for 72 of 83 found answers (79 whole): a paraphrase that shares no word with its
line shows the wrong lines, and `ra get` has the rest.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ra_query.artifacts.models import ChunkRecord
from ra_query.search.pipeline import TopicResult, matching_words

FOCUS_TOKENS = 100  # a chunk at most this long (stored cl100k count) is shown whole
FOCUS_BLOCKS = 2  # matching units shown beside the lead: a block, or a description and its example
# a code file's own chunk (its leading lines and the outline of its definitions) at most this long
# is shown whole; a longer one, its leading lines and the FOCUS_ROWS outline lines that match
OUTLINE_FOCUS_TOKENS = 300
FOCUS_ROWS = 8
OUTLINE_MARKER = "outline:\n"  # what begins a file's outline (ra_build.document.code._outline)
GAP = "⋯"
# a line longer than this many characters is shown as its beginning: a page of one line of
# megabytes (generated, minified) printed all of it
LONG_BLOCK = 4000
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def blocks_of(body: str) -> list[str]:
    """The body's blocks: runs of lines between blank lines, a fenced code block whole."""
    out: list[str] = []
    current: list[str] = []
    fence: str | None = None
    for line in body.split("\n"):
        opener = _FENCE.match(line)
        if fence is not None:
            current.append(line)
            if opener and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence):
                fence = None
            continue
        if opener:
            fence = opener.group(1)
            current.append(line)
        elif line.strip():
            current.append(line)
        elif current:
            out.append("\n".join(current))
            current = []
    if current:
        out.append("\n".join(current))
    return out


def with_excerpts(topics: Sequence[TopicResult], analyzer: Any) -> list[TopicResult]:
    """The topics with each long prose hit's excerpt made once, for the text and the JSON."""
    return [
        topic._replace(
            hits=tuple(h._replace(excerpt=excerpt_of(h.record, topic.focus, analyzer)) for h in topic.hits)
        )
        for topic in topics
    ]


def excerpt_of(record: ChunkRecord, words: frozenset[str], analyzer: Any) -> str | None:
    """What a search shows of `record` in place of its content, or None to show it whole: a
    prose chunk longer than FOCUS_TOKENS, or a code file's own chunk longer than
    OUTLINE_FOCUS_TOKENS (`outlined`), with the query's content `words` (none: whole)."""
    if not words:
        return None
    if record.kind == "code":
        if record.defines != "file" or record.tokens <= OUTLINE_FOCUS_TOKENS:
            return None
        return outlined(record.body, record.path, words, analyzer)
    if record.tokens <= FOCUS_TOKENS:
        return None
    return focused(record.heading_line, record.body, words, analyzer)


def outlined(body: str, path: str, words: frozenset[str], analyzer: Any) -> str | None:
    """The excerpt of a code file's own chunk: its leading lines whole, and of its outline (a
    definition a line, ra_build.document.code) the FOCUS_ROWS lines with most of the query's
    content `words`, `⋯` for each run left out; None (whole) when the query names the file (a
    word of its name) or nothing would be left out. The outline is a map of the file, and a
    search that finds the file by its leading lines (a module docstring, a constant's comment)
    showed all of it: 1,000-2,000 tokens in one of eight files of the eight codebases of
    bench/code_search.py."""
    if body.startswith(OUTLINE_MARKER):  # no leading lines
        head, marker, outline = "", OUTLINE_MARKER, body.removeprefix(OUTLINE_MARKER)
    else:  # the last `outline:` after a blank line: a docstring may say "outline:" too
        head, marker, outline = body.rpartition("\n\n" + OUTLINE_MARKER)
        head, marker = head + "\n\n" if marker else head, OUTLINE_MARKER if marker else ""
    # the file's name, not its folders: a project's name (`click/`) is in every path it has
    if not marker or matching_words(_words_apart(path.rpartition("/")[2]), words, analyzer):
        return None
    rows = outline.split("\n")
    more = rows.pop() if len(rows) > 1 and rows[-1].lstrip().startswith("… ") else None  # `… 12 more`
    verdicts: dict[str, bool] = {}
    scores = [len(_matched([_words_apart(row)], words, analyzer, verdicts)) for row in rows]
    chosen = sorted(sorted((i for i in range(len(rows)) if scores[i]), key=lambda i: -scores[i])[:FOCUS_ROWS])
    if len(chosen) == len(rows):
        return None
    kept: list[str] = []
    previous = -1
    for i in chosen:
        if i != previous + 1:
            kept.append(f"  {GAP}")
        kept.append(rows[i])
        previous = i
    if previous != len(rows) - 1:
        kept.append(f"  {GAP} {len(rows) - len(chosen)} of {len(rows)} lines left out (ra get shows them)")
    return head + marker + "\n".join([*kept, *([more] if more else [])])


def _words_apart(text: str) -> str:
    """`text` with its camelCase and PascalCase names written as their words too (`ParseColor` →
    `ParseColor Parse Color`), as the index holds them: the analyzer keeps a name whole."""
    apart = _CAMEL.sub(" ", text)
    return text if apart == text else f"{text} {apart}"


def focused(heading: str | None, body: str, words: frozenset[str], analyzer: Any) -> str | None:
    """The excerpt of a long chunk (heading, lead, the blocks with most of the query's content
    `words`, `⋯` for each gap), or None when the excerpt would leave nothing out."""
    blocks = blocks_of(body)
    clipped = [_clipped(block) for block in blocks]
    units = units_of(clipped)
    if len(units) <= 2:  # shown whole, but for a block too long to read (a line of megabytes)
        return None if clipped == blocks else "\n\n".join([*([heading] if heading else []), *clipped])
    verdicts: dict[str, bool] = {}  # the blocks share their words: each is analyzed once
    scores = [len(_matched(unit, words, analyzer, verdicts)) for unit in units]
    ranked = sorted((i for i in range(1, len(units)) if scores[i]), key=lambda i: (-scores[i], i))
    chosen = ranked[:FOCUS_BLOCKS]
    # a section merged into its parent holds its sub-headings: a kept block brings the nearest
    # heading above it, so the excerpt says which section each block is from
    headings = [i for i, unit in enumerate(units) if _ATX.match(unit[0])]
    above = [max((h for h in headings if h <= i), default=0) for i in chosen]
    keep = sorted({0, *chosen, *above})
    if len(keep) == len(units) and clipped == blocks:
        return None
    parts = [heading] if heading is not None else []
    previous = -1
    for i in keep:
        if i != previous + 1:
            parts.append(GAP)
        parts += units[i]
        previous = i
    if previous != len(units) - 1:
        parts.append(GAP)
    return "\n\n".join(parts)


def long_lines_cut(record: ChunkRecord) -> str | None:
    """`record`'s content with each line over LONG_BLOCK characters cut to its beginning, or
    None when it has none (what a result shown whole shows of a paragraph of megabytes)."""
    content = record.content()
    cut = _clipped(content)
    return None if cut == content else cut


def _clipped(block: str) -> str:
    """`block` with each line longer than LONG_BLOCK characters cut to its beginning (to a space)
    and how much is left out; a block of many lines (a table) keeps them all."""
    if len(block) <= LONG_BLOCK:
        return block
    lines = block.split("\n")
    for i, line in enumerate(lines):
        if len(line) > LONG_BLOCK:
            cut = line[:LONG_BLOCK]
            cut = cut[: cut.rfind(" ")] if " " in cut[LONG_BLOCK // 2 :] else cut
            lines[i] = f"{cut} {GAP} [{len(line) - len(cut):,} characters left out: ra get shows them]"
    return "\n".join(lines)


def units_of(blocks: list[str]) -> list[list[str]]:
    """Blocks grouped as an excerpt keeps them: a block that ends with `:` (an example's
    description) with the block after it, every other block alone."""
    units: list[list[str]] = []
    joined = False
    for block in blocks:
        if joined:
            units[-1].append(block)
            joined = False
        else:
            units.append([block])
            joined = block.rstrip().endswith(":")
    return units


def _matched(unit: list[str], words: frozenset[str], analyzer: Any, verdicts: dict[str, bool]) -> set[str]:
    """The distinct query words (as written, lower-cased) in a unit's blocks."""
    return {block[a:b].lower() for block in unit for a, b in matching_words(block, words, analyzer, verdicts)}

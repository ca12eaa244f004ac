"""Property tests for the chunker: generated markdown never breaks the chunk tree invariants."""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_right
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from ra_build.artifacts.tables import CHUNK_SCHEMA, chunk_batch, chunk_rows, doc_hash
from ra_build.document.chunk import Chunk, Document, chunk_document, chunk_file
from ra_build.document.frontmatter import parse_frontmatter
from ra_build.document.markdown import UTF8_BOM, find_headings, line_starts
from ra_build.pipeline.chunk_stage import ChunkSettings, parse_file

SETTINGS = settings(max_examples=200, deadline=None)

words = st.text(alphabet=st.sampled_from("abcxyzÄéß日本 _-*`!?<>#:1"), min_size=1, max_size=12).map(
    lambda s: s.strip() or "w"
)


@st.composite
def blocks(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["atx", "setext", "paragraph", "fence", "blank", "indented", "list"]))
    if kind == "atx":
        return f"{'#' * draw(st.integers(1, 6))} {draw(words)}"
    if kind == "setext":
        return f"{draw(words)}\n{draw(st.sampled_from(['===', '---', '=']))}"
    if kind == "paragraph":
        return " ".join(draw(st.lists(words, min_size=1, max_size=5)))
    if kind == "fence":
        inner = draw(st.lists(st.sampled_from(["# fake", "## also fake", "x = 1", ""]), max_size=3))
        return "\n".join(["```", *inner, "```"])
    if kind == "indented":
        return "\n    # indented code\n"
    if kind == "list":
        return f"- {draw(words)}\n- # {draw(words)}"
    return ""


@st.composite
def markdown(draw: st.DrawFn) -> str:
    parts = draw(st.lists(blocks(), max_size=14))
    text = "\n".join(parts)
    if draw(st.booleans()):
        front = draw(st.sampled_from(["title: T\ntags: [a, '#b']", "tags: a b", "bad: [", ""]))
        text = f"---\n{front}\n---\n{text}"
    if draw(st.booleans()):
        text += "\n"
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    return text.replace("\n", newline)


def heading_line_numbers(text: str) -> set[int]:
    """The 1-based numbers of every line that belongs to a heading (setext: text and underline)."""
    front = parse_frontmatter(text)
    return {
        number + 1
        for heading in find_headings(text, front.body_start, front.body_line)
        for number in range(heading.first_line, heading.end_line)
    }


def body_line_numbers(text: str, chunk: Chunk) -> set[int]:
    """The 1-based numbers of the lines a chunk's body occupies in the text."""
    if not chunk.body:
        return set()
    starts = line_starts(text)
    end = len(text.encode("utf-8")[: chunk.byte_end].decode("utf-8"))
    start = end - len(chunk.body)
    return set(range(bisect_right(starts, start), bisect_right(starts, end - 1) + 1))


def check_tree(doc: Document, text: str) -> None:
    by_id = {chunk.id: chunk for chunk in doc.chunks}
    assert len(by_id) == len(doc.chunks)
    starts = line_starts(text)
    last_line = max(
        1, len(starts) - 1 if starts[-1] == len(text) else len(starts)
    )  # an empty last line is none
    size = len(text.encode("utf-8", "surrogatepass"))
    children: dict[str, list[int]] = {}
    for chunk in doc.chunks:
        assert 1 <= chunk.line_start <= chunk.line_end <= last_line
        assert 0 <= chunk.byte_start <= chunk.byte_end <= size
        if chunk.parent_id is None:
            assert chunk.depth == 0
            assert chunk is doc.chunks[0]
            assert (chunk.position, chunk.sibling_count) == (0, 1)
        else:
            parent = by_id[chunk.parent_id]
            assert parent.depth < chunk.depth
            children.setdefault(chunk.parent_id, []).append(chunk.position)
    for chunk in doc.chunks:
        positions = children.get(chunk.parent_id or "", [])
        if chunk.parent_id is not None:
            assert positions == list(range(len(positions)))
            assert chunk.sibling_count == len(positions)


@SETTINGS
@given(markdown())
def test_ids_are_unique_and_identical_across_runs(text: str) -> None:
    first = chunk_document("t", "doc.md", text)
    second = chunk_document("t", "doc.md", text)
    ids = [chunk.id for chunk in first.chunks]
    assert len(set(ids)) == len(ids)
    assert ids == [chunk.id for chunk in second.chunks]
    assert first == second


@SETTINGS
@given(markdown())
def test_the_tree_is_well_formed(text: str) -> None:
    check_tree(chunk_document("t", "doc.md", text), text)


@SETTINGS
@given(markdown())
def test_bodies_contain_no_heading_line(text: str) -> None:
    doc = chunk_document("t", "doc.md", text, count_tokens=len)
    headings = heading_line_numbers(text)
    for chunk in doc.chunks:
        assert not body_line_numbers(text, chunk) & headings


@SETTINGS
@given(markdown())
def test_byte_ranges_slice_the_heading_line_and_end_with_the_body(text: str) -> None:
    data = text.encode("utf-8")
    for chunk in chunk_document("t", "doc.md", text, count_tokens=len).chunks:
        sliced = data[chunk.byte_start : chunk.byte_end].decode("utf-8")
        assert sliced.endswith(chunk.body)
        assert chunk.tokens == len(sliced)


@SETTINGS
@given(st.text())
def test_arbitrary_text_never_raises(text: str) -> None:
    doc = chunk_document("t", "any.md", text)
    check_tree(doc, text)


@SETTINGS
@given(st.text(alphabet=st.sampled_from("-.#=\n\r `~>*:[]{}&ab \t")))
def test_markdown_punctuation_soup_never_raises(text: str) -> None:
    check_tree(chunk_document("t", "soup.md", text, count_tokens=len), text)


REFERENCE = MarkdownIt("commonmark")


@SETTINGS
@given(st.one_of(markdown(), st.text(alphabet=st.sampled_from("-=#>` \n\tab*1."))))
def test_headings_are_exactly_the_top_level_headings_of_stock_markdown_it(text: str) -> None:
    front = parse_frontmatter(text)
    found = [
        (h.level, h.first_line, h.end_line) for h in find_headings(text, front.body_start, front.body_line)
    ]
    tokens = REFERENCE.parse(text[front.body_start :])
    expected = [
        (int(t.tag[1]), t.map[0] + front.body_line, t.map[1] + front.body_line)
        for t in tokens
        if t.type == "heading_open" and t.level == 0 and t.map is not None
    ]
    assert found == expected


# --- byte and line ranges slice the file, whatever its bytes ----------------------------------------

BREAK = re.compile(rb"\r\n|\r|\n")
INVALID = [
    b"\xff",
    b"\xe9",
    b"\xe2\x82",
    b"\xc3",
    b"\xed\xa0\x80",
    b"\xef\xbf\xbd",
]  # the last is a real U+FFFD


@st.composite
def file_bytes(draw: st.DrawFn) -> bytes:
    """Generated markdown as a file: a BOM or not, any line breaks, undecodable bytes for some `x`s."""
    pieces = draw(markdown()).split("x")
    data = pieces[0].encode()
    for piece in pieces[1:]:
        data += (draw(st.sampled_from(INVALID)) if draw(st.booleans()) else b"x") + piece.encode()
    return (UTF8_BOM if draw(st.booleans()) else b"") + data


def line_of(data: bytes, offset: int) -> int:
    """The 1-based line of the byte at `offset`, counting `\\r\\n`, `\\r` and `\\n` as line breaks."""
    return 1 + len(BREAK.findall(data, 0, offset))


@SETTINGS
@given(file_bytes())
def test_byte_and_line_ranges_slice_the_file_itself(
    tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    root = tmp_path_factory.getbasetemp() / "ranges"
    root.mkdir(exist_ok=True)
    (root / "doc.md").write_bytes(data)
    for chunk in parse_file("t", str(root), "doc.md", ChunkSettings(10_000_000, 10_000_000)).chunks:
        start, end = chunk["byte_start"], chunk["byte_end"]
        sliced = data[start:end].decode("utf-8", "surrogateescape")
        assert sliced.translate(dict.fromkeys(range(0xDC80, 0xDD00), "\ufffd")).endswith(chunk["body"])
        assert not data[start:end].startswith(UTF8_BOM)
        if end > start:
            assert (line_of(data, start), line_of(data, end - 1)) == (chunk["line_start"], chunk["line_end"])


def _doc_hash_of_rows(rows: list[dict[str, Any]]) -> str:
    """The document hash as it was computed from the row dicts, before `doc_hash` took chunks."""
    h = hashlib.sha256()
    for r in rows:
        h.update(
            f"{r['id']}\x1f{r['content_hash']}\x1f{r['parent_id']}\x1f{r['position']}\x1f"
            f"{r['sibling_count']}\x1f{r['line_start']}\x1f{r['line_end']}\x1f{r['byte_start']}\x1f"
            f"{r['byte_end']}\x1f{r['tokens']}\x1f{r['kind']}\x1f{r['language']}\x1f{r['symbol']}\x1f"
            f"{MEMBERS_JOIN.join(r['members'])}\x1f{r['forwards']}\x1f{r['defines']}\x1e".encode()
        )
    return h.hexdigest()


MEMBERS_JOIN = "\x1d"


def test_a_documents_index_hash_changes_with_what_its_chunks_are_named_folded_and_weighed_by() -> None:
    import dataclasses

    doc, _ = chunk_file("t", "q.go", b"package q\n\ntype Opts struct {\n\tDepth int\n}\n")
    assert doc is not None
    before = doc_hash(doc.chunks)
    for field, value in (("members", ("Opts.Width",)), ("forwards", "Opts"), ("defines", "part")):
        changed = [dataclasses.replace(c, **{field: value}) if c.symbol else c for c in doc.chunks]
        assert doc_hash(changed) != before, field


@SETTINGS
@given(st.lists(st.tuples(markdown(), st.integers(0, 2**62)), max_size=4))
def test_the_chunk_batch_holds_the_rows_chunk_rows_gives(files: list[tuple[str, int]]) -> None:
    docs = [
        (chunk_document("t", f"d{i}.md", text, count_tokens=len), mtime)
        for i, (text, mtime) in enumerate(files)
    ]
    rows = [row for doc, mtime in docs for row in chunk_rows(doc, mtime)]
    assert chunk_batch(docs).equals(pa.RecordBatch.from_pylist(rows, schema=CHUNK_SCHEMA))
    for doc, mtime in docs:
        assert doc_hash(doc.chunks) == _doc_hash_of_rows(chunk_rows(doc, mtime))

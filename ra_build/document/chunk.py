"""The chunk tree: one node for the document and one per surviving heading (DECISIONS 1-8).

A heading's *span* runs from the line after its heading line to the next heading of equal or
lower level (or EOF). A heading is discarded when nothing but whitespace and other heading
lines sits in its span: an empty heading, or one whose only content is empty subheadings.
Discarded headings consume no slug, are not in the tree, and still close the spans of the
headings before them, so their heading line never lands in anyone's body.

Every body ends at the next heading line of any kind, which for a heading with children is
its first child's heading line. Bodies lose leading blank lines and trailing whitespace; the
text in between is byte-exact. Offsets, line numbers and byte ranges refer to the original
file, frontmatter included.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, cast

from ra_build.document.code import (
    DEFAULT_CODE_CHUNK,
    CodeNode,
    Lines,
    UniqueNames,
    code_nodes,
    grammar_of,
    parse_code,
    references_of,
)
from ra_build.document.frontmatter import NO_FRONTMATTER, Frontmatter, parse_frontmatter
from ra_build.document.markdown import UTF8_BOM, Heading, decode, file_bytes, find_headings
from ra_build.document.memo import TextMemo
from ra_build.document.rst import rst_headings
from ra_query.artifacts.schema import doc_id_of
from ra_query.sources.languages import DOC_LANGUAGES, SourceKind, language_of
from ra_query.sources.languages import header_language as _header_language
from ra_query.text.files import looks_binary
from ra_query.text.slugs import slug_keeps
from ra_query.text.tokens import count_tokens as _count_tokens
from ra_query.text.tokens import encoding

TitleSource = Literal["frontmatter", "h1", "filename", "heading", "signature"]
Kind = Literal["markdown", "text", "rst", "code"]

DEFAULT_MAX_CHUNK = 50_000  # [settings] max_chunk_size's default (ra_build.config.model)
_NON_SPACE = re.compile(r"\S")
_SLUG_DROP_ASCII = re.compile(r"[^a-z0-9_\- ]")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One node of a document's chunk tree: the document itself (depth 0) or a heading."""

    id: str
    tree: str
    path: str
    doc_id: str
    parent_id: str | None
    depth: int
    position: int
    sibling_count: int
    slug: str
    title: str
    title_source: TitleSource
    breadcrumb: tuple[str, ...]
    tags: tuple[str, ...]
    body: str
    byte_start: int
    byte_end: int
    line_start: int
    line_end: int
    tokens: int
    content_hash: str
    kind: SourceKind = "docs"  # docs | code | upstream
    language: str = "markdown"  # ra_query.sources.languages: markdown, text, python, go, …
    symbol: str = ""  # a code chunk's qualified name (`Class.method`); "" for docs
    references: tuple[str, ...] = ()  # the names a code chunk calls or constructs, in order
    members: tuple[str, ...] = ()  # the fields, variants, properties a code chunk declares (`Opts.hidden`)
    forwards: str = ""  # the same-named definition a code chunk's whole body calls (`v.WatchConfig`)
    defines: str = ""  # a code chunk's kind of definition (`method`, `struct`), `part`, `block` or `file`


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed file: its metadata and its chunks in document order, document node first."""

    tree: str
    path: str
    kind: Kind
    title: str
    title_source: TitleSource
    frontmatter: dict[str, Any]
    tags: tuple[str, ...]
    chunks: tuple[Chunk, ...]
    warnings: tuple[str, ...]
    size: int
    language: str = "markdown"


def kind_for_path(path: str) -> Kind:
    """`.txt` files are plain text, `.rst` reStructuredText, files of a known programming or data
    language are code (ra_query.sources.languages), everything else is read as markdown."""
    language = language_of(path)
    if language in DOC_LANGUAGES:
        return cast(Kind, language)
    return "code"


def file_stem(path: str) -> str:
    """The file name without directory and last extension (`a/b.c.md` → `b.c`)."""
    name = path.rsplit("/", 1)[-1]
    stem, dot, _ = name.rpartition(".")
    return stem if dot and stem else name


def slugify(text: str) -> str:
    """github-slugger's slug of a text (a heading's rendered text content, `Heading.slug_text`):
    may be empty (the caller substitutes `heading`); hyphens are kept where they fall.

    Lowercase, then drop every character of the Unicode categories GitHub drops — other numbers
    (`²`, `₂`, `½`), all punctuation but connector punctuation (`_`, `‿`) and `-`, symbols,
    controls, format and private-use characters, separators but the space — except alphabetic
    symbols (`Ⓔ`, `🄺`); each space becomes one `-`.
    """
    lowered = text.lower()
    if lowered.isascii():
        kept = _SLUG_DROP_ASCII.sub("", lowered)
    else:
        kept = "".join(c for c in lowered if slug_keeps(c))
    return kept.replace(" ", "-")


class Slugger:
    """Hands out unique slugs within one document, the way github-slugger does.

    Repeats get `-1`, `-2`, …, skipping any suffix that collides with a literal slug.
    """

    def __init__(self) -> None:
        self._names = UniqueNames()

    def slug(self, text: str) -> str:
        """Return the next unique slug for a heading's text (`Heading.slug_text`: what GitHub
        renders); only a text that slugs to nothing at all becomes `heading`."""
        return self._names.unique(slugify(text) or "heading")


def content_hash(title: str, breadcrumb: Iterable[str], tags: Iterable[str], body: str) -> str:
    """sha256 hex over the indexed fields of a chunk, stable across runs and platforms.

    Fields are separated by control characters (U+001E between fields, U+001F inside the
    breadcrumb and the tag list) that do not occur in real headings or tags.
    """
    payload = "\x1e".join((title, "\x1f".join(breadcrumb), "\x1f".join(tags), body))
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


# cl100k_base token counts of chunk texts (ra_build.document.memo): encoding was a third of the time
# chunking took. 32 M characters: 32 MB for Latin-1 text, two or four times that for wider
# characters, in each process that chunks; the PowerShell corpus (94 MB) has 24 M characters of
# distinct chunk text.
_TOKEN_COUNTS: TextMemo[int] = TextMemo(32_000_000)


def _remembered_count(text: str) -> int:
    """The number of cl100k_base tokens of `text` (special tokens as ordinary text)."""
    tokens = _TOKEN_COUNTS.get(text)
    if tokens is None:
        tokens = len(encoding().encode_ordinary(text))
        _TOKEN_COUNTS.put(text, tokens)
    return tokens


def chunk_file(
    tree: str,
    path: str,
    data: bytes,
    *,
    max_chunk_size: int = DEFAULT_MAX_CHUNK,
    source_kind: SourceKind = "docs",
    code_chunk_size: int = DEFAULT_CODE_CHUNK,
    header_language: str = "auto",
) -> tuple[Document | None, bool]:
    """The chunk tree of a file's bytes as a build makes it, or None for a binary file; and
    whether undecodable bytes were replaced (one U+FFFD each: the ranges still slice the file).
    A code definition longer than `code_chunk_size` bytes (or `max_chunk_size`) is cut into
    parts. `source_kind` is the source kind of a markdown or text file's chunks: `upstream` in an
    upstream tree. `header_language` is what a `.h` file is (`c`, `cpp`, or `auto`: by its text)."""
    if looks_binary(data):
        return None, False
    text, replaced = decode(data)
    bom = len(UTF8_BOM) if data.startswith(UTF8_BOM) else 0  # decode dropped it; the ranges count it
    byte_length = file_bytes(data) if replaced else None
    doc = chunk_document(
        tree, path, text, size=len(data), byte_offset=bom, byte_length=byte_length,
        max_chunk_size=max_chunk_size, source_kind=source_kind, code_chunk_size=code_chunk_size,
        header_language=header_language,
    )  # fmt: skip
    return doc, replaced


def chunk_document(
    tree: str,
    path: str,
    text: str,
    *,
    kind: Kind | None = None,
    size: int | None = None,
    byte_offset: int = 0,
    byte_length: Callable[[int, int], int] | None = None,
    count_tokens: Callable[[str], int] = _count_tokens,
    max_chunk_size: int = DEFAULT_MAX_CHUNK,
    source_kind: SourceKind = "docs",
    code_chunk_size: int = DEFAULT_CODE_CHUNK,
    header_language: str = "auto",
) -> Document:
    """Split a document into its chunk tree.

    Args:
        tree: the tree name, the first part of every id.
        path: the path relative to the tree root, with `/` separators.
        text: the decoded file.
        kind: `markdown` or `text`; by default `.txt` is text and anything else markdown.
        size: the file's size in bytes; by default the UTF-8 length of `text`.
        byte_offset: the bytes of the file before `text` (3 for a UTF-8 byte order mark that
            decoding dropped), added to every byte range so ranges slice the file itself.
        byte_length: how many bytes of the file text[start:end] is (`markdown.file_bytes` when
            decoding replaced bytes); by default the length of its UTF-8 form.
        count_tokens: the token counter (cl100k_base by default).
        max_chunk_size: a code definition longer than this (characters) is cut into parts.
        code_chunk_size: a code chunk's budget in bytes: a longer definition is cut into parts.
        source_kind: the source kind of a markdown or text document's chunks (`docs`, `upstream`).
        header_language: what a `.h` file is parsed as (`code_language`).

    Returns:
        The document with its chunks in document order, the document node first.
    """
    if kind is None:
        kind = kind_for_path(path)
    if kind == "code":  # its texts rarely repeat: remembering them cost a tenth and saved nothing
        return chunk_code(
            tree, path, text, code_language(path, text, header_language), size=size,
            byte_offset=byte_offset, byte_length=byte_length, count_tokens=count_tokens,
            max_chunk_size=max_chunk_size, budget=code_chunk_size,
        )  # fmt: skip
    counter = _remembered_count if count_tokens is _count_tokens else count_tokens
    if kind == "markdown":
        front = parse_frontmatter(text)
        headings = find_headings(text, front.body_start, front.body_line)
    else:
        front = NO_FRONTMATTER
        headings = rst_headings(text) if kind == "rst" else []
    title, title_source = _document_title(front, headings, path)
    ranges = _Ranges(text, byte_offset, byte_length)
    tags = front.tags
    doc_id = doc_id_of(tree, path)
    chunks: list[Chunk] = []
    nodes = _nodes(text, front, headings, doc_id, title, title_source)
    for (chunk_id, parent_id, level, position, siblings, slug, chunk_title, source, breadcrumb, body,
         start, end) in nodes:  # fmt: skip
        chunk_text = text[start:end]
        line_start, line_end, byte_start, byte_end = ranges.of(start, end, chunk_text)
        chunks.append(
            Chunk(
                chunk_id,
                tree,
                path,
                doc_id,
                parent_id,
                level,
                position,
                siblings,
                slug,
                chunk_title,
                source,
                breadcrumb,
                tags,
                body,
                byte_start,
                byte_end,
                line_start,
                line_end,
                counter(chunk_text),
                content_hash(chunk_title, breadcrumb, tags, body),
                source_kind,
                kind,
            )
        )
    return Document(
        tree=tree,
        path=path,
        kind=kind,
        title=title,
        title_source=title_source,
        frontmatter=front.data,
        tags=tags,
        chunks=tuple(chunks),
        warnings=front.warnings,
        size=ranges.size() if size is None else size,
        language=kind,
    )


def code_language(path: str, text: str, header_language: str = "auto") -> str:
    """The language a code file is parsed as: its extension's, but a `.h` is C or C++ by
    `header_language` (`c`, `cpp`, or `auto`: by its text)."""
    language = language_of(path)
    if language == "c" and path.lower().endswith(".h"):
        return _header_language(text, header_language)
    return language


def chunk_code(
    tree: str,
    path: str,
    text: str,
    language: str,
    *,
    size: int | None,
    byte_offset: int,
    byte_length: Callable[[int, int], int] | None,
    count_tokens: Callable[[str], int],
    max_chunk_size: int,
    budget: int = DEFAULT_CODE_CHUNK,
) -> Document:
    """The chunk tree of a code file (ra_build.document.code): a document node with the file's
    header and outline, a node per definition, members under their class."""
    encoded = text.encode("utf-8", "surrogatepass")
    parsed = parse_code(encoded, grammar_of(path, language))
    lines = Lines(encoded)
    nodes = code_nodes(path, encoded, parsed, max_chunk_size, lines, budget)
    doc_id = doc_id_of(tree, path)
    ids = [doc_id if n.depth == 0 else f"{doc_id}#{n.slug}" for n in nodes]
    children = [0] * len(nodes)
    positions = [0] * len(nodes)
    for k, node in enumerate(nodes[1:], start=1):
        positions[k] = children[node.parent]
        children[node.parent] += 1

    file_byte = _file_offsets(encoded, byte_offset, byte_length, nodes)
    references = references_of(nodes, parsed.references)

    chunks = []
    for k, node in enumerate(nodes):
        last = max(node.start, node.end - 1)
        parent, siblings = (ids[node.parent], children[node.parent]) if k else (None, 1)
        source: TitleSource = "signature" if k else "filename"
        body, crumbs = node.body, node.breadcrumb
        chunks.append(
            Chunk(
                ids[k], tree, path, doc_id, parent, node.depth, positions[k], siblings, node.slug, node.title,
                source, crumbs, (), body, file_byte(node.start), file_byte(node.end), lines.of(node.start),
                lines.of(last), count_tokens(body), content_hash(node.title, crumbs, (), body), "code",
                language, node.symbol, references[k], node.members, node.forwards, node.kind,
            )
        )  # fmt: skip
    return Document(
        tree=tree,
        path=path,
        kind="code",
        title=path,
        title_source="filename",
        frontmatter={},
        tags=(),
        chunks=tuple(chunks),
        warnings=tuple(parsed.warnings),
        size=len(encoded) + byte_offset if size is None else size,
        language=language,
    )


# (id, parent id, depth, position, sibling count, slug, title, title source, breadcrumb, body,
# start, end) of one node of the chunk tree; text[start:end] is the chunk's text
_Node = tuple[str, str | None, int, int, int, str, str, TitleSource, tuple[str, ...], str, int, int]


def _nodes(
    text: str, front: Frontmatter, headings: list[Heading], doc_id: str, title: str, title_source: TitleSource
) -> Iterator[_Node]:
    """The nodes of the chunk tree in document order: the document, then each surviving heading."""
    survivors = _survivors(text, headings)
    parents, positions, children = _tree([headings[j].level for j in survivors])
    size = len(text)
    head_starts = [h.start for h in headings]
    head_starts.append(size)
    body, start = _trim_body(text, front.body_start, head_starts[0])
    if not body:
        start = min(front.body_start, size)  # the first line after the frontmatter
    yield doc_id, None, 0, 0, 1, "", title, title_source, (title,), body, start, start + len(body)
    ids = [doc_id]
    breadcrumbs: list[tuple[str, ...]] = [(title,)]
    slug_of = Slugger().slug
    for node, j in enumerate(survivors, start=1):
        heading = headings[j]
        parent = parents[node - 1]
        chunk_title = heading.text
        slug = slug_of(heading.slug_text)  # GitHub slugs what it renders, not the title
        chunk_id = f"{doc_id}#{slug}"
        ids.append(chunk_id)
        breadcrumb = (
            breadcrumbs[parent]
            if heading.level == 1 and chunk_title == title
            else (*breadcrumbs[parent], chunk_title)
        )
        breadcrumbs.append(breadcrumb)
        start = heading.start
        body, body_start = _trim_body(text, heading.span_start, head_starts[j + 1])
        # An empty body leaves the heading line alone in the range, minus its line break.
        heading_end = start + len(text[start : heading.span_start].rstrip())
        end = body_start + len(body) if body else heading_end
        position, siblings = positions[node - 1], children[parent]
        yield (
            chunk_id, ids[parent], heading.level, position, siblings, slug, chunk_title, "heading",
            breadcrumb, body, start, end,
        )  # fmt: skip


def _file_offsets(
    encoded: bytes, byte_offset: int, byte_length: Callable[[int, int], int] | None, nodes: list[CodeNode]
) -> Callable[[int], int]:
    """Where each offset of the code nodes into `encoded` (the decoded text, encoded again) is in
    the file: shifted by a BOM, and where decoding replaced bytes, counted through the characters
    (one pass over the sorted offsets: a file with an invalid byte costs what a valid one does)."""
    if byte_length is None:
        return lambda offset: byte_offset + offset
    offsets = sorted({n.start for n in nodes} | {n.end for n in nodes})
    at: dict[int, int] = {}
    chars = file_at = previous = 0
    for offset in offsets:
        count = len(encoded[previous:offset].decode("utf-8", "surrogatepass"))
        file_at += byte_length(chars, chars + count)
        chars += count
        at[offset] = byte_offset + file_at
        previous = offset
    return at.__getitem__


class _Ranges:
    """Line numbers and byte offsets of the ranges of a text, given in document order.

    Every range lies after the previous one, so they are found by looking only at the text
    between consecutive positions: no line table, no full re-encode.
    """

    __slots__ = (
        "breaks", "byte", "byte_at", "byte_length", "is_ascii", "last_line", "line", "line_at", "offset",
        "text",
    )  # fmt: skip

    def __init__(self, text: str, byte_offset: int, byte_length: Callable[[int, int], int] | None) -> None:
        self.text = text
        self.breaks = _line_breaks_counter(text)
        self.is_ascii = text.isascii()
        self.last_line = max(1, self.breaks(0, len(text)) + (1 if text and text[-1] not in "\r\n" else 0))
        self.offset = byte_offset
        self.byte_length = byte_length
        self.line, self.line_at = 1, 0
        self.byte, self.byte_at = 0, 0

    def of(self, start: int, end: int, chunk_text: str) -> tuple[int, int, int, int]:
        """(first line, last line, first byte, end byte) of text[start:end], which is `chunk_text`."""
        self.line += self.breaks(self.line_at, start)
        line_start = self.line
        self.line_at = start
        if end > start:
            self.line += self.breaks(start, end - 1)
            self.line_at = end - 1
        last = self.last_line
        first_line, last_line = min(line_start, last), min(self.line, last)
        if self.is_ascii:
            return first_line, last_line, start + self.offset, end + self.offset
        if self.byte_length is not None:
            self.byte += self.byte_length(self.byte_at, start)
            byte_start = self.byte + self.offset
            self.byte += self.byte_length(start, end)
        else:
            self.byte += len(self.text[self.byte_at : start].encode("utf-8", "surrogatepass"))
            byte_start = self.byte + self.offset
            self.byte += len(chunk_text.encode("utf-8", "surrogatepass"))
        self.byte_at = end
        return first_line, last_line, byte_start, self.byte + self.offset

    def size(self) -> int:
        """The bytes of the whole file."""
        chars = len(self.text)
        if self.byte_length is not None:
            return self.byte_length(0, chars)
        return chars if self.is_ascii else len(self.text.encode("utf-8", "surrogatepass"))


def _document_title(front: Frontmatter, headings: list[Heading], path: str) -> tuple[str, TitleSource]:
    """Frontmatter title, else the first h1 with text, else the file name (DECISIONS 5)."""
    if front.title:
        return front.title, "frontmatter"
    for heading in headings:
        if heading.level == 1 and heading.text:
            return heading.text, "h1"
    return file_stem(path), "filename"


def _survivors(text: str, headings: list[Heading]) -> list[int]:
    """Indices of the headings that are kept: those with non-whitespace text in their span.

    A heading's own stretch runs to the next heading line of any kind; text further on belongs
    to its descendants. So a stretch holding text keeps every heading still open at that point,
    and a heading whose span holds only empty subheadings is dropped with them.
    """
    n = len(headings)
    keep = [False] * n
    open_stack: list[int] = []
    search = _NON_SPACE.search
    size = len(text)
    for j, heading in enumerate(headings):
        level = heading.level
        while open_stack and headings[open_stack[-1]].level >= level:
            open_stack.pop()
        open_stack.append(j)
        stretch_end = headings[j + 1].start if j + 1 < n else size
        if search(text, heading.span_start, stretch_end) is not None:
            for k in reversed(open_stack):
                if keep[k]:
                    break  # everything below was kept by an earlier stretch
                keep[k] = True
    return [j for j in range(n) if keep[j]]


def _tree(levels: list[int]) -> tuple[list[int], list[int], list[int]]:
    """Link headings (given by level, in order) into a tree under the document node 0.

    Returns:
        For each heading its parent node and its position among its siblings, and for each node
        (document node first, heading k is node k + 1) its number of children.
    """
    parents = [0] * len(levels)
    positions = [0] * len(levels)
    children = [0] * (len(levels) + 1)
    open_stack: list[int] = []
    for k, level in enumerate(levels):
        while open_stack and levels[open_stack[-1]] >= level:
            open_stack.pop()
        parent = open_stack[-1] + 1 if open_stack else 0
        parents[k] = parent
        positions[k] = children[parent]
        children[parent] += 1
        open_stack.append(k)
    return parents, positions, children


def _trim_body(text: str, start: int, end: int) -> tuple[str, int]:
    """Return text[start:end] without its leading blank lines and trailing whitespace, and the
    offset where that body starts."""
    body = text[start:end].rstrip()
    lead = len(body) - len(body.lstrip())
    if not lead or not body:
        return body, start
    cut = max(body.rfind("\n", 0, lead), body.rfind("\r", 0, lead)) + 1
    return (body[cut:], start + cut) if cut else (body, start)


def _line_breaks_counter(text: str) -> Callable[[int, int], int]:
    """Return a function counting the line breaks in text[start:end] (`\r\n` counts once).

    Callers never split a `\r\n` pair: every position they pass is a line start or a
    non-whitespace character.
    """
    if "\r" not in text:
        count = text.count
        return lambda start, end: count("\n", start, end)

    def breaks(start: int, end: int) -> int:
        return text.count("\n", start, end) + text.count("\r", start, end) - text.count("\r\n", start, end)

    return breaks


__all__ = [
    "Chunk",
    "Document",
    "Kind",
    "Slugger",
    "TitleSource",
    "chunk_code",
    "chunk_document",
    "chunk_file",
    "content_hash",
    "file_stem",
    "kind_for_path",
    "slugify",
]

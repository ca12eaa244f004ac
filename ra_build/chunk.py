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
import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from ra_build.parse import (
    NO_FRONTMATTER,
    Frontmatter,
    Heading,
    find_headings,
    line_count,
    line_starts,
    parse_frontmatter,
)
from ra_query.tokens import count_tokens as _count_tokens

TitleSource = Literal["frontmatter", "h1", "filename", "heading"]
Kind = Literal["markdown", "text"]

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


def kind_for_path(path: str) -> Kind:
    """`.txt` files are plain text; everything else is read as markdown."""
    return "text" if path.lower().endswith(".txt") else "markdown"


def file_stem(path: str) -> str:
    """The file name without directory and last extension (`a/b.c.md` → `b.c`)."""
    name = path.rsplit("/", 1)[-1]
    stem, dot, _ = name.rpartition(".")
    return stem if dot and stem else name


def slugify(text: str) -> str:
    """GitHub-style slug of a heading's text: may be empty (the caller substitutes `heading`).

    Lowercase; keep letters, digits, marks, `_`, `-` and spaces; drop everything else; each
    space becomes one `-`.
    """
    lowered = text.lower()
    if lowered.isascii():
        kept = _SLUG_DROP_ASCII.sub("", lowered)
    else:
        kept = "".join(
            c for c in lowered if c.isalnum() or c in "_- " or unicodedata.category(c)[0] == "M"
        )
    return kept.replace(" ", "-")


class Slugger:
    """Hands out unique slugs within one document, the way github-slugger does.

    Repeats get `-1`, `-2`, …, skipping any suffix that collides with a literal slug.
    """

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    def slug(self, text: str) -> str:
        """Return the next unique slug for a heading text."""
        base = slugify(text) or "heading"
        result = base
        while result in self._seen:
            self._seen[base] += 1
            result = f"{base}-{self._seen[base]}"
        self._seen[result] = 0
        return result


def content_hash(title: str, breadcrumb: Iterable[str], tags: Iterable[str], body: str) -> str:
    """sha256 hex over the indexed fields of a chunk, stable across runs and platforms.

    Fields are separated by control characters (U+001E between fields, U+001F inside the
    breadcrumb and the tag list) that do not occur in real headings or tags.
    """
    payload = "\x1e".join((title, "\x1f".join(breadcrumb), "\x1f".join(tags), body))
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


def _byte_offsets(text: str, positions: list[int]) -> dict[int, int]:
    """Map character offsets to UTF-8 byte offsets, encoding each stretch of text once."""
    if text.isascii():
        return {p: p for p in positions}
    result: dict[int, int] = {}
    previous = total = 0
    for position in sorted(set(positions)):
        total += len(text[previous:position].encode("utf-8", "surrogatepass"))
        result[position] = total
        previous = position
    return result


def _trim_body(text: str, start: int, end: int) -> tuple[str, int]:
    """Return text[start:end] without its leading blank lines and trailing whitespace, and the
    offset where that body starts."""
    body = text[start:end].rstrip()
    lead = len(body) - len(body.lstrip())
    if not lead or not body:
        return body, start
    cut = max(body.rfind("\n", 0, lead), body.rfind("\r", 0, lead)) + 1
    return (body[cut:], start + cut) if cut else (body, start)


@dataclass(slots=True)
class _Layout:
    """The chunk tree before token counting: parallel lists with one entry per node, the
    document node first. Ranges are character offsets into the text."""

    levels: list[int]
    titles: list[str]
    slugs: list[str]
    parents: list[int]  # index of the parent node; -1 for the document node
    positions: list[int]
    children: list[int]
    breadcrumbs: list[tuple[str, ...]]
    bodies: list[str]
    range_starts: list[int]
    range_ends: list[int]


def chunk_document(
    tree: str,
    path: str,
    text: str,
    *,
    kind: Kind | None = None,
    size: int | None = None,
    count_tokens: Callable[[str], int] = _count_tokens,
) -> Document:
    """Split a document into its chunk tree.

    Args:
        tree: the tree name, the first part of every id.
        path: the path relative to the tree root, with `/` separators.
        text: the decoded file.
        kind: `markdown` or `text`; by default `.txt` is text and anything else markdown.
        size: the file's size in bytes; by default the UTF-8 length of `text`.
        count_tokens: the token counter (cl100k_base by default).

    Returns:
        The document with its chunks in document order, the document node first.
    """
    if kind is None:
        kind = kind_for_path(path)
    starts = line_starts(text)
    if kind == "markdown":
        front = parse_frontmatter(text)
        headings = find_headings(text, front.body_start, front.body_line)
    else:
        front = NO_FRONTMATTER
        headings = []
    title, title_source = _document_title(front, headings, path)
    layout = _lay_out(text, starts, front.body_start, headings, title)

    is_ascii = text.isascii()
    range_starts, range_ends = layout.range_starts, layout.range_ends
    byte_of = {} if is_ascii else _byte_offsets(text, range_starts + range_ends)
    last_line = max(1, line_count(text, starts))
    doc_id = f"{tree}:{path}"
    tags = front.tags
    ids = [doc_id, *(f"{doc_id}#{slug}" for slug in layout.slugs[1:])]
    parents, children, positions = layout.parents, layout.children, layout.positions
    levels, slugs, titles = layout.levels, layout.slugs, layout.titles
    breadcrumbs, bodies = layout.breadcrumbs, layout.bodies
    chunks: list[Chunk] = []
    for index in range(len(ids)):
        start = range_starts[index]
        end = range_ends[index]
        line_start = bisect_right(starts, start)
        line_end = bisect_right(starts, end - 1) if end > start else line_start
        body = bodies[index]
        parent = parents[index]
        breadcrumb = breadcrumbs[index]
        chunk_title = titles[index]
        chunks.append(
            Chunk(
                ids[index],
                tree,
                path,
                doc_id,
                ids[parent] if parent >= 0 else None,
                levels[index],
                positions[index],
                children[parent] if parent >= 0 else 1,
                slugs[index],
                chunk_title,
                "heading" if index else title_source,
                breadcrumb,
                tags,
                body,
                start if is_ascii else byte_of[start],
                end if is_ascii else byte_of[end],
                line_start if line_start < last_line else last_line,
                line_end if line_end < last_line else last_line,
                count_tokens(text[start:end] if index else body),
                content_hash(chunk_title, breadcrumb, tags, body),
            )
        )

    if size is None:
        size = len(text) if is_ascii else len(text.encode("utf-8", "surrogatepass"))
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
        size=size,
    )


def _document_title(
    front: Frontmatter, headings: list[Heading], path: str
) -> tuple[str, TitleSource]:
    """Frontmatter title, else the first h1 with text, else the file name (DECISIONS 5)."""
    if front.title:
        return front.title, "frontmatter"
    for heading in headings:
        if heading.level == 1 and heading.text:
            return heading.text, "h1"
    return file_stem(path), "filename"


def _lay_out(
    text: str, starts: list[int], markdown_start: int, headings: list[Heading], title: str
) -> _Layout:
    """Decide which headings survive, link them into a tree and place every body and range."""
    size = len(text)
    n = len(headings)
    line_total = len(starts)
    levels_in = [h.level for h in headings]
    head_start = [starts[h.first_line] for h in headings]
    head_start.append(size)  # so that head_start[j + 1] is where heading j's stretch ends
    span_start = [starts[h.end_line] if h.end_line < line_total else size for h in headings]
    # A heading's own stretch runs to the next heading line of any kind; further text belongs to
    # its descendants. It survives when its stretch or a descendant's holds non-whitespace, so
    # each stretch with text marks every heading still open at that point.
    survives = [False] * n
    has_text = [False] * n
    open_stack: list[int] = []
    search = _NON_SPACE.search
    for j in range(n):
        level = levels_in[j]
        while open_stack and levels_in[open_stack[-1]] >= level:
            open_stack.pop()
        open_stack.append(j)
        if search(text, span_start[j], head_start[j + 1]) is not None:
            has_text[j] = True
            for k in reversed(open_stack):
                if survives[k]:
                    break
                survives[k] = True

    body, body_start = _trim_body(text, markdown_start, head_start[0])
    if not body:
        # An empty document body sits on the first line after the frontmatter.
        body_start = min(markdown_start, size)
    layout = _Layout(
        levels=[0],
        titles=[title],
        slugs=[""],
        parents=[-1],
        positions=[0],
        children=[0],
        breadcrumbs=[(title,)],
        bodies=[body],
        range_starts=[body_start],
        range_ends=[body_start + len(body)],
    )
    levels, children, breadcrumbs = layout.levels, layout.children, layout.breadcrumbs
    slug = Slugger().slug
    open_nodes: list[int] = []  # node indices of the surviving headings still open
    for j in range(n):
        if not survives[j]:
            continue
        level = levels_in[j]
        while open_nodes and levels[open_nodes[-1]] >= level:
            open_nodes.pop()
        parent = open_nodes[-1] if open_nodes else 0
        heading_text = headings[j].text
        start = head_start[j]
        if has_text[j]:
            body, body_start = _trim_body(text, span_start[j], head_start[j + 1])
            range_end = body_start + len(body)
        else:
            body = ""
            range_end = start + len(text[start : span_start[j]].rstrip())
        open_nodes.append(len(levels))
        levels.append(level)
        layout.titles.append(heading_text)
        layout.slugs.append(slug(heading_text))
        layout.parents.append(parent)
        layout.positions.append(children[parent])
        children[parent] += 1
        children.append(0)
        breadcrumbs.append(
            breadcrumbs[parent]
            if level == 1 and heading_text == title
            else (*breadcrumbs[parent], heading_text)
        )
        layout.bodies.append(body)
        layout.range_starts.append(start)
        layout.range_ends.append(range_end)
    return layout


__all__ = [
    "Chunk",
    "Document",
    "Kind",
    "Slugger",
    "TitleSource",
    "chunk_document",
    "content_hash",
    "file_stem",
    "kind_for_path",
    "slugify",
]

"""`ra get`: one chunk, or a whole document in document order, by id — indexed content only.

Ids are `tree:path` (the document) and `tree:path#slug` (a heading). Everything is read from the
index; the filesystem is never touched, so an id such as `docs:../../etc/passwd` can only ever be
"not found". Every way an id can fail gives the same message, so a failure says nothing about
which files exist outside the index.
"""

import re
from collections.abc import Collection
from typing import Any, NamedTuple, Protocol, cast

from ra_query.artifacts.models import ChunkRecord
from ra_query.errors import NotFoundError
from ra_query.text.slugs import slug_keeps
from ra_query.text.textsafe import printable

HEADER_RULE = "───"
BREADCRUMB_SEP = " › "


class StoreLike(Protocol):
    """What `get` needs from a store: the manifest and two chunk look-ups."""

    # read-only, so the store (whose manifest is an attribute) satisfies the protocol
    @property
    def manifest(self) -> dict[str, Any]: ...

    def get_chunk(self, id: str) -> ChunkRecord | None: ...

    def doc_chunks(self, doc_id: str) -> list[ChunkRecord]: ...

    def page_url(self, tree: str, path: str) -> str | None: ...


class GetResult(NamedTuple):
    """What `ra get` returns: one chunk, or every chunk of a document in document order.

    `id` names what was returned: the chunk id, or the document id when `whole_document` is set
    (also when a chunk id was asked for with `full_document=True`).
    """

    id: str
    chunks: tuple[ChunkRecord, ...]
    whole_document: bool
    url: str | None = None  # where an upstream page was fetched from

    @property
    def tokens(self) -> int:
        """cl100k tokens of the returned chunks, as counted at build time."""
        return sum(chunk.tokens for chunk in self.chunks)


# how `textsafe.printable` shows a control character; only those are ever unescaped
_ESCAPED = re.compile(r"\\x(0[0-8b-f]|1[0-9a-f]|7f|8[0-9a-f]|9[0-9a-f])")


def not_found(id: str, trees: Collection[str] | None = None) -> NotFoundError:
    """The one error for every id that does not name indexed content (`trees`: the index's, when
    the id's tree is none of them)."""
    shown = "".join(c if c.isprintable() else "?" for c in id)
    doc, hash_, _ = shown.partition("#")
    tree, colon, path = doc.partition(":")
    if trees is not None and tree and colon:
        known = ", ".join(sorted(trees)) or "none"
        return NotFoundError(f"not found: {shown} — no tree {tree!r} in this index (the trees: {known})")
    if not (tree and colon):
        said = shown or repr(id)
        return NotFoundError(
            f"not found: {said} — an id is tree:path or tree:path#slug, as ra search and ra ls print them"
        )
    if hash_ and path:
        return NotFoundError(f"not found: {shown} — list the ids of {doc} with: ra ls chunks {doc}")
    return NotFoundError(f"not found: {shown} — list document ids with: ra ls docs {tree}:")


def _is_slug_char(c: str) -> bool:
    # the characters ra_build's slugify keeps (spaces have become `-` by then)
    return c != " " and slug_keeps(c)


def _safe_path(path: str) -> bool:
    # a backslash is an ordinary character of a POSIX file name (`back\slash.md`), and the path
    # is only ever looked up in the index, never opened
    if not path or "\x00" in path or path.startswith("/"):
        return False
    return all(segment not in ("", ".", "..") for segment in path.split("/"))


def parse_id(text: str) -> tuple[str, str, str | None]:
    """Split an id into (tree, path, slug or None).

    The tree ends at the first `:`. A `#` followed by slug characters to the end starts the slug;
    a `#` followed by anything else (a `.`, a `/`) belongs to the path, since slugs never contain
    those. Paths must be relative, `/`-separated and free of `.`/`..`/empty segments.

    Raises:
        NotFoundError: the id is malformed or its path could reach outside a tree.
    """
    tree, colon, rest = text.partition(":")
    if not colon or not tree or not rest:
        raise not_found(text)
    path, slug = rest, None
    head, hash_, tail = rest.rpartition("#")
    if hash_:
        if not tail:
            raise not_found(text)
        if all(_is_slug_char(c) for c in tail):
            path, slug = head, tail
    if not _safe_path(path):
        raise not_found(text)
    return tree, path, slug


def get(store: StoreLike, id: str, *, full_document: bool = False) -> GetResult:
    """Look up a chunk or a whole document in the index.

    Args:
        store: the opened index.
        id: `tree:path` for a whole document, `tree:path#slug` for one chunk.
        full_document: return the whole document that a chunk id belongs to.

    Raises:
        NotFoundError: the id is malformed, names an unknown tree, or is not in the index.
    """
    tree, _path, _slug = parse_id(id)
    trees: object = store.manifest.get("trees") or {}
    if not isinstance(trees, dict) or tree not in trees:
        names = [str(name) for name in cast("dict[object, object]", trees)] if isinstance(trees, dict) else []
        raise not_found(id, names)
    # The index decides what the id names: a document node's id equals its doc_id. Looking the
    # whole id up also settles paths that themselves contain `#`.
    record = store.get_chunk(id)
    if record is None and _ESCAPED.search(id):
        # pasted from ra's own output, which shows control characters as \xNN (textsafe)
        record = store.get_chunk(_ESCAPED.sub(lambda m: chr(int(m[1], 16)), id))
    if record is None or record.tree != tree:
        raise not_found(id)
    url = store.page_url(record.tree, record.path) if record.kind == "upstream" else None
    if record.id == record.doc_id or full_document:
        chunks = store.doc_chunks(record.doc_id) or [record]
        return GetResult(id=record.doc_id, chunks=tuple(chunks), whole_document=True, url=url)
    return GetResult(id=record.id, chunks=_with_parts(store, record), whole_document=False, url=url)


def _with_parts(store: StoreLike, record: ChunkRecord) -> tuple[ChunkRecord, ...]:
    """A code definition with the parts it was cut into (its descendants of the same name: a
    long function's later statements, its long doc comment, a struct's field groups) in line
    order — the whole definition; any other chunk alone."""
    if record.kind != "code" or not record.symbol:
        return (record,)
    chunks = store.doc_chunks(record.doc_id)
    children: dict[str, list[ChunkRecord]] = {}
    for chunk in chunks:
        if chunk.parent_id and chunk.symbol == record.symbol:
            children.setdefault(chunk.parent_id, []).append(chunk)
    found, todo = [record], [record.id]
    while todo:
        more = children.get(todo.pop(), [])
        found += more
        todo += [chunk.id for chunk in more]
    return tuple(sorted(found, key=lambda chunk: (chunk.byte_start, chunk.depth)))


def chunk_to_dict(chunk: ChunkRecord) -> dict[str, Any]:
    """One chunk in the JSON shape shared by `ra get` and search results."""
    return {
        "id": chunk.id,
        "tree": chunk.tree,
        "path": chunk.path,
        "title": chunk.title,
        "breadcrumb": BREADCRUMB_SEP.join(chunk.breadcrumb),
        "depth": chunk.depth,
        "line_start": chunk.line_start,
        "line_end": chunk.line_end,
        "byte_start": chunk.byte_start,
        "byte_end": chunk.byte_end,
        "tokens": chunk.tokens,
        "kind": chunk.kind,
        "language": chunk.language,
        **({"symbol": chunk.symbol} if chunk.symbol else {}),
        "content": chunk.content(),
    }


def get_to_dict(result: GetResult) -> dict[str, Any]:
    """The `--json` / MCP structured shape of a `GetResult`."""
    return {
        "id": result.id,
        "whole_document": result.whole_document,
        "chunks": [chunk_to_dict(chunk) for chunk in result.chunks],
        "tokens": result.tokens,
        **({"url": result.url} if result.url else {}),
    }


def header(id: str) -> str:
    """The `─── id ───` line that introduces a chunk or document in text output."""
    return f"{HEADER_RULE} {id} {HEADER_RULE}"


def render_get(result: GetResult) -> str:
    """Text output: a header, then the chunk (with its breadcrumb) or the whole document, control
    characters escaped (ra_query.text.textsafe)."""
    return printable(_render_get(result))


def _render_get(result: GetResult) -> str:
    top = header(result.id) + (f"\n> {result.url}" if result.url else "")
    if result.whole_document:
        parts = [chunk.content().strip("\r\n") for chunk in result.chunks]
        body = "\n\n".join(part for part in parts if part)
        return f"{top}\n\n{body}\n" if body else f"{top}\n"
    lines = [top]
    first = next((chunk for chunk in result.chunks if chunk.id == result.id), result.chunks[0])
    if first.breadcrumb:
        lines.append(f"> {_spanned(first, result.chunks).crumb(BREADCRUMB_SEP)}")
    lines.append("")
    ended = None  # a definition's parts: each from where the one before it ended, in the file's lines
    for chunk in result.chunks:
        if ended is not None and chunk.line_start > ended + 1:
            lines.append("")
        lines.append(chunk.content().strip("\r\n") if chunk is first else chunk.body.strip("\r\n"))
        ended = chunk.line_end
    return "\n".join(lines) + "\n"


def _spanned(first: ChunkRecord, chunks: tuple[ChunkRecord, ...]) -> ChunkRecord:
    """`first` with the lines of all of `chunks` (a definition and its parts)."""
    if len(chunks) == 1:
        return first
    start, end = min(c.line_start for c in chunks), max(c.line_end for c in chunks)
    return first._replace(line_start=start, line_end=end)

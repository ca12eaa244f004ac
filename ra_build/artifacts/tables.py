"""Parquet chunk and file tables: the source of truth between the chunk and index stages.

One chunk table and one file table per tree under `<artifacts>/chunks/`; the manifest stage
concatenates the file tables into `<artifacts>/files.parquet`. Column meanings are documented
in README.md ("Chunk tables").
"""

from __future__ import annotations

import hashlib
import operator
import os
import sys
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from ra_build.artifacts.atomic import write_with
from ra_query.sources.languages import DOC_LANGUAGES
from ra_query.text.locales import DEFAULT_LOCALE, SAMPLE, document_locale, translation_key

if TYPE_CHECKING:  # the chunker (markdown-it, YAML) is not needed to read or write the tables
    from ra_build.document.chunk import Chunk, Document


def arrow_without_pandas() -> None:
    """Stop pyarrow from importing pandas behind a build's back — in ra's own processes only.

    The first `pa.array(...)` of a process asks pyarrow (its pandas shim, and Arrow's C++
    conversion of Python sequences) about pandas, which imports it: 0.3-0.8 s of every build
    (and of every worker) wherever pandas is installed, as it is for anyone who reads the chunk
    tables with it. Answering that question once while `import pandas` fails settles it for the
    process: pyarrow's pandas integration stays off there (`to_pandas()` still works, a
    nullable pandas dtype no longer converts). So the `ra` command and its shard workers call
    this; importing ra_build as a library (a dodo.py, a notebook) never does.
    """
    if "pandas" in sys.modules:
        return
    sys.meta_path.insert(0, _NO_PANDAS)
    try:
        _ = pa.lib._pandas_api.have_pandas  # pyright: ignore[reportAttributeAccessIssue]
        pa.array(["x"])  # Arrow's C++ sequence conversion asks once too
    finally:
        sys.meta_path.remove(_NO_PANDAS)


class _NoPandas:
    """A meta path finder under which `import pandas` fails."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name.partition(".")[0] == "pandas":
            raise ImportError("pandas is not used by ra's build")


_NO_PANDAS = _NoPandas()

CHUNK_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("tree", pa.string()),
        ("path", pa.string()),
        ("doc_id", pa.string()),
        ("parent_id", pa.string()),
        ("depth", pa.int16()),
        ("position", pa.int32()),
        ("sibling_count", pa.int32()),
        ("slug", pa.string()),
        ("title", pa.string()),
        ("title_source", pa.string()),
        ("breadcrumb", pa.list_(pa.string())),
        ("tags", pa.list_(pa.string())),
        ("body", pa.string()),
        ("byte_start", pa.int64()),
        ("byte_end", pa.int64()),
        ("line_start", pa.int32()),
        ("line_end", pa.int32()),
        ("tokens", pa.int32()),
        ("content_hash", pa.string()),
        ("kind", pa.string()),  # docs | code
        ("language", pa.string()),  # markdown, text, python, go, … (ra_query.sources.languages)
        ("symbol", pa.string()),  # a code chunk's qualified name, "" for docs
        ("references", pa.list_(pa.string())),  # the names a code chunk calls or constructs
        ("members", pa.list_(pa.string())),  # the fields, variants, properties a code chunk declares
        # the same-named definition a code chunk's whole body calls, as written (`v.WatchConfig`)
        ("forwards", pa.string()),
        # what a code chunk is in its file's syntax: the kind of definition (`function`, `method`,
        # `class`, `struct`, `type`, …), `part` of a longer one, `block` of statements, `file`; "" for docs
        ("defines", pa.string()),
        ("frontmatter", pa.string()),
        ("mtime_ns", pa.int64()),
        # a docs chunk's natural language (`en`, `ja`, `pt-br`: ra_query.text.locales), null for code
        ("locale", pa.string()),
        ("translation", pa.string()),  # what its document's translations share (its path, unless…)
    ]
)

FILE_SCHEMA = pa.schema(
    [
        ("tree", pa.string()),
        ("path", pa.string()),
        ("size", pa.int64()),
        ("mtime_ns", pa.int64()),
        ("sha256", pa.string()),
        ("status", pa.string()),  # ok | skipped | error
        ("error", pa.string()),  # why it was skipped / what went wrong, else null
        ("warnings", pa.list_(pa.string())),
        ("chunks", pa.int32()),
        ("doc_hash", pa.string()),  # hash of everything the index stores for this file's chunks
    ]
)

# Small row groups with statistics: each shard is sorted by path (so by doc_id), and the
# index stage reads only the row groups of changed documents.
ROW_GROUP_SIZE = 4096
# A tree's chunk table is split by a stable hash of the path into this many shards, so an
# edit rewrites one shard, not the whole table. Changing it changes CHUNKER_VERSION too.
SHARDS = 16


def shard_of(path: str) -> int:
    """The shard that holds the chunks of the file at `path`."""
    return zlib.crc32(path.encode("utf-8")) % SHARDS


@dataclass(frozen=True, slots=True)
class FileRow:
    """One row of the file table."""

    tree: str
    path: str
    size: int
    mtime_ns: int
    sha256: str
    status: str
    error: str | None
    warnings: tuple[str, ...]
    chunks: int
    doc_hash: str = ""


def chunk_rows(doc: Document, mtime_ns: int, default_locale: str = DEFAULT_LOCALE) -> list[dict[str, Any]]:
    """Rows of the chunk table for one parsed document."""
    frontmatter = _frontmatter_json(doc)
    locale = locale_of(doc, default_locale)
    translation = translation_key(doc.path, doc.frontmatter, locale) if locale else None
    return [_chunk_row(c, frontmatter, mtime_ns, locale, translation) for c in doc.chunks]


def _frontmatter_json(doc: Document) -> str | None:
    return orjson.dumps(doc.frontmatter, default=str).decode() if doc.frontmatter else None


def locale_of(doc: Document, default: str = DEFAULT_LOCALE) -> str | None:
    """A docs document's natural language (ra_query.text.locales.document_locale, `default` its
    tree's), None for code (whose language is its programming language)."""
    if doc.language not in DOC_LANGUAGES:
        return None
    sample: list[str] = []
    size = 0
    for chunk in doc.chunks:
        if size >= SAMPLE:
            break
        sample.append(chunk.body)
        size += len(chunk.body)
    return document_locale(doc.path, doc.frontmatter, "\n".join(sample), default)


def _chunk_row(
    c: Chunk, frontmatter: str | None, mtime_ns: int, locale: str | None, translation: str | None
) -> dict[str, Any]:
    return {
        "id": c.id,
        "tree": c.tree,
        "path": c.path,
        "doc_id": c.doc_id,
        "parent_id": c.parent_id,
        "depth": c.depth,
        "position": c.position,
        "sibling_count": c.sibling_count,
        "slug": c.slug,
        "title": c.title,
        "title_source": c.title_source,
        "breadcrumb": list(c.breadcrumb),
        "tags": list(c.tags),
        "body": c.body,
        "byte_start": c.byte_start,
        "byte_end": c.byte_end,
        "line_start": c.line_start,
        "line_end": c.line_end,
        "tokens": c.tokens,
        "content_hash": c.content_hash,
        "kind": c.kind,
        "language": c.language,
        "symbol": c.symbol,
        "references": list(c.references),
        "members": list(c.members),
        "forwards": c.forwards,
        "defines": c.defines,
        "frontmatter": frontmatter if c.depth == 0 else None,
        "mtime_ns": mtime_ns,
        "locale": locale,
        "translation": translation,
    }


# The chunk table's columns up to `frontmatter` are the fields of `Chunk`, in the same order.
_CHUNK_FIELDS = CHUNK_SCHEMA.names[: CHUNK_SCHEMA.get_field_index("frontmatter")]
_CHUNK_GETTERS = tuple(map(operator.attrgetter, _CHUNK_FIELDS))


def chunk_batch(docs: Sequence[tuple[Document, int]], default_locale: str = DEFAULT_LOCALE) -> pa.RecordBatch:
    """The chunk table rows of parsed documents, each given with its file's mtime, as one batch.

    The same rows as `chunk_rows`, built a column at a time: `RecordBatch.from_pylist` over
    row dicts took three times as long.
    """
    chunks = [chunk for doc, _ in docs for chunk in doc.chunks]
    columns: list[list[Any]] = [list(map(getter, chunks)) for getter in _CHUNK_GETTERS]
    frontmatter: list[str | None] = []
    mtimes: list[int] = []
    locales: list[str | None] = []
    translations: list[str | None] = []
    for doc, mtime_ns in docs:
        json = _frontmatter_json(doc)
        frontmatter += [json if chunk.depth == 0 else None for chunk in doc.chunks]
        mtimes += [mtime_ns] * len(doc.chunks)
        locale = locale_of(doc, default_locale)
        locales += [locale] * len(doc.chunks)
        translations += [translation_key(doc.path, doc.frontmatter, locale) if locale else None] * len(doc.chunks)
    columns += [frontmatter, mtimes, locales, translations]
    arrays = [pa.array(column, type=field.type) for column, field in zip(columns, CHUNK_SCHEMA, strict=True)]
    return pa.RecordBatch.from_arrays(arrays, schema=CHUNK_SCHEMA)


_JOINED = "\x1d"  # between a chunk's members in its document's hash


def doc_hash(chunks: Sequence[Chunk], locale: str | None = None, translation: str | None = None) -> str:
    """Hash of what the index stores for one document's chunks (mtime left out on purpose), its
    natural language (a tree's `language` changed: its docs are indexed again) and its
    `translation` key (a frontmatter `translation_key` edited alone)."""
    head = (f"{locale}\x1e" if locale else "") + (f"{translation}{_JOINED}\x1e" if translation else "")
    fields = head + "".join(
        f"{c.id}\x1f{c.content_hash}\x1f{c.parent_id}\x1f{c.position}\x1f"
        f"{c.sibling_count}\x1f{c.line_start}\x1f{c.line_end}\x1f{c.byte_start}\x1f"
        f"{c.byte_end}\x1f{c.tokens}\x1f{c.kind}\x1f{c.language}\x1f{c.symbol}\x1f"
        f"{_JOINED.join(c.members)}\x1f{c.forwards}\x1f{c.defines}\x1e"  # names, folds and weights
        for c in chunks
    )
    return hashlib.sha256(fields.encode()).hexdigest()  # as if each chunk's part were fed in turn


def write_chunk_table(path: Path, table: pa.Table) -> None:
    """Atomically write a chunk table."""
    write_with(
        path, lambda tmp: pq.write_table(table, tmp, compression="zstd", row_group_size=ROW_GROUP_SIZE)
    )


def read_chunk_table(shards: Sequence[Path]) -> pa.Table:
    """The shards of one chunk table as one table in path order (empty when there are none)."""
    tables = [read_parquet(p).cast(CHUNK_SCHEMA) for p in shards if p.exists()]
    if not tables:
        return CHUNK_SCHEMA.empty_table()
    return pa.concat_tables(tables).sort_by("path") if len(tables) > 1 else tables[0]


def write_file_table(path: Path, rows: Iterable[FileRow]) -> None:
    """Atomically write a file table."""
    rows = list(rows)
    table = pa.Table.from_pylist(
        [
            {
                "tree": r.tree,
                "path": r.path,
                "size": r.size,
                "mtime_ns": r.mtime_ns,
                "sha256": r.sha256,
                "status": r.status,
                "error": r.error,
                "warnings": list(r.warnings),
                "chunks": r.chunks,
                "doc_hash": r.doc_hash,
            }
            for r in rows
        ],
        schema=FILE_SCHEMA,
    )
    write_with(path, lambda tmp: pq.write_table(table, tmp, compression="zstd"))
    # what read_file_rows would read back
    _remember_rows(path, [replace(r, warnings=tuple(r.warnings), doc_hash=r.doc_hash or "") for r in rows])


# The file tables a build read or wrote, by path, with the (inode, size, mtime) they had then:
# the chunk, index and manifest stages of one `ra update` all read them, and an atomic rewrite
# (a new inode) makes the entry stale.
_FILE_ROWS: dict[Path, tuple[tuple[int, int, int], list[FileRow]]] = {}


def _file_key(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _remember_rows(path: Path, rows: list[FileRow]) -> None:
    key = _file_key(path)
    if key is not None:
        _FILE_ROWS[path] = (key, rows)


def read_parquet(path: Path, columns: Sequence[str] | None = None) -> pa.Table:
    """One Parquet file as a table.

    Not `pq.read_table`: for a path it goes through `pyarrow.dataset`, whose import pulls in
    pandas when it is installed (~0.3 s of a no-change `ra update`).
    """
    return pq.ParquetFile(path).read(columns=columns)


def read_file_rows(path: Path) -> list[FileRow]:
    """All rows of a file table, or [] when it does not exist yet."""
    key = _file_key(path)
    if key is None:
        return []
    known = _FILE_ROWS.get(path)
    if known is not None and known[0] == key:
        return list(known[1])
    cols = read_parquet(path).to_pydict()
    n = len(cols["path"])
    rows = [
        FileRow(tree, path_, size, mtime, sha, status, error, tuple(warnings or ()), chunks, dhash or "")
        for tree, path_, size, mtime, sha, status, error, warnings, chunks, dhash in zip(
            *(cols.get(f.name, [None] * n) for f in FILE_SCHEMA), strict=True
        )
    ]
    _FILE_ROWS[path] = (key, rows)
    return list(rows)


def concat_file_tables(sources: Sequence[Path], target: Path) -> None:
    """Write `target` as the concatenation of the per-tree file tables in `sources`."""
    tables = [read_parquet(p) for p in sources if p.exists()]
    table = pa.concat_tables(tables) if tables else FILE_SCHEMA.empty_table()
    write_with(target, lambda tmp: pq.write_table(table, tmp, compression="zstd"))

"""The index stage: apply the difference between the chunk tables and the tantivy index.

`index_state.json` records, for the last committed generation, the hash of every indexed
document. A run compares it with the chunk tables and, per changed document, deletes its old
chunks by `doc_id` and adds the new ones, then commits once. A change of stemmer, a missing
state (`ra update --full`) re-adds every document in that same single commit. Only an index
of another schema (a new ra version) or none at all is built afresh, in `index.next/` beside
the old one, and swapped in when committed. Readers never see an empty or missing index.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import tantivy

from ra_build.atomic import swap_in_directory, write_bytes
from ra_build.layout import Layout
from ra_build.stages import prune_tables
from ra_build.tables import read_file_rows, shard_of
from ra_query.schema import SCHEMA_VERSION, build_schema, doc_id_of, join_breadcrumb, register_analyzer

WRITER_HEAP = 256 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class IndexStats:
    """What one run of the index stage did."""

    added_docs: int
    removed_docs: int
    added_chunks: int
    rebuilt: bool
    generation: int
    seconds: float


def _read_state(layout: Layout) -> dict[str, Any]:
    try:
        return orjson.loads(layout.index_state.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}


def index_stage(layout: Layout, trees: list[str], stemmer: str) -> IndexStats:
    """Bring the tantivy index in line with the chunk tables of `trees`.

    Everything a run changes lands in one tantivy commit, so a reader (or a build killed
    half-way) sees either the previous generation or the new one, never a mix. A stemmer
    change or a lost state re-adds every document inside that same commit; only an index of
    another schema (a new ra version) or none is built afresh, beside it, then swapped in.
    """
    started = time.perf_counter()
    state = _read_state(layout)
    restem = state.get("schema_version") != SCHEMA_VERSION or state.get("stemmer") != stemmer
    old_docs: dict[str, str] = {} if restem else state.get("docs", {})

    rows = {
        doc_id_of(tree, row.path): (tree, row)
        for tree in trees
        for row in read_file_rows(layout.file_table(tree))
        if row.status == "ok"
    }
    new_docs = {d: row.doc_hash for d, (_tree, row) in rows.items()}
    changed = {d for d, h in new_docs.items() if old_docs.get(d) != h}
    removed = set(old_docs) - set(new_docs)

    staging = layout.index_dir.with_name(f"{layout.index_dir.name}.next")
    shutil.rmtree(staging, ignore_errors=True)  # left by a build killed before its swap
    index = _reuse(layout) if (layout.index_dir / "meta.json").exists() else None
    if index is None:  # new, from another schema version, or unreadable: build it beside
        restem = True
        changed, removed = set(new_docs), set[str]()
        staging.mkdir(parents=True)
        index = tantivy.Index(build_schema(), path=str(staging), reuse=False)
    register_analyzer(index, stemmer)
    writer = index.writer(heap_size=WRITER_HEAP, num_threads=min(2, os.cpu_count() or 1))
    if restem:
        writer.delete_all_documents()
    else:
        for doc_id in sorted(changed | removed):
            writer.delete_documents_by_term("doc_id", doc_id)
    added_chunks = 0
    schema = index.schema
    for tree in trees if changed else ():
        wanted = None if restem else {rows[d][1].path: d for d in changed if rows[d][0] == tree}
        for batch in _changed_batches(layout, tree, wanted):
            for doc in _documents(batch, schema):
                writer.add_document(doc)
                added_chunks += 1
    generation = int(state.get("generation", 0)) + (1 if (changed or removed or restem) else 0)
    writer.commit()
    writer.wait_merging_threads()
    if staging.exists():
        swap_in_directory(staging, layout.index_dir)
    write_bytes(
        layout.index_state,
        orjson.dumps(
            {
                "stemmer": stemmer,
                "schema_version": SCHEMA_VERSION,
                "generation": generation,
                "docs": new_docs,
            }
        ),
    )
    prune_tables(layout, trees)  # only after the commit no longer needs them
    return IndexStats(
        added_docs=len(changed),
        removed_docs=len(removed),
        added_chunks=added_chunks,
        rebuilt=restem,
        generation=generation,
        seconds=time.perf_counter() - started,
    )


_COLUMNS = [
    "id", "doc_id", "parent_id", "tree", "slug", "breadcrumb", "title", "tags", "path", "body",
    "depth", "position", "sibling_count", "line_start", "line_end", "byte_start", "byte_end",
    "tokens", "mtime_ns",
]  # fmt: skip
BATCH_ROWS = 8192


def _reuse(layout: Layout) -> tantivy.Index | None:
    """Open the existing index for writing, or None when its schema is not this ra's."""
    try:
        return tantivy.Index(build_schema(), path=str(layout.index_dir), reuse=True)
    except ValueError:
        return None


def _changed_batches(layout: Layout, tree: str, docs: dict[str, str] | None) -> Iterator[pa.RecordBatch]:
    """The chunk rows of `docs` (path → doc id; all rows when None), a bounded batch at a time.

    Only the shards that hold those documents are read, and within a shard (sorted by doc_id,
    small row groups) the filter lets Parquet skip the row groups of unchanged documents.
    """
    if docs is None:
        for shard in layout.chunk_shards(tree):
            yield from pq.ParquetFile(shard).iter_batches(batch_size=BATCH_ROWS, columns=_COLUMNS)
        return
    by_shard: dict[int, list[str]] = {}
    for path, doc in docs.items():
        by_shard.setdefault(shard_of(path), []).append(doc)
    for shard, ids in sorted(by_shard.items()):
        path = layout.chunk_shard(tree, shard)
        if path.exists():
            table = pq.read_table(path, columns=_COLUMNS, filters=pc.field("doc_id").isin(sorted(ids)))
            yield from table.to_batches(max_chunksize=BATCH_ROWS)


def ranked_text(breadcrumb: list[str], tags: list[str], body: str) -> str:
    """The `text` field: breadcrumb, tags and body as one field; nothing for an empty body.

    The breadcrumb puts the document title and the headings above a chunk into its text, so
    `Get-ADUser examples` finds the Examples section of the Get-ADUser page.
    """
    if not body.strip():
        return ""
    return "\n".join([*breadcrumb, " ".join(tags), body])


def _documents(batch: pa.RecordBatch, schema: tantivy.Schema) -> Iterator[tantivy.Document]:
    cols = batch.to_pydict()
    for (id_, doc_id, parent_id, tree, slug, breadcrumb, title, tags, path, body, depth, position,
         siblings, line_start, line_end, byte_start, byte_end, tokens, mtime_ns) in zip(
        *(cols[c] for c in _COLUMNS), strict=True
    ):  # fmt: skip
        yield tantivy.Document.from_dict(
            {
                "id": id_,
                "doc_id": doc_id,
                "parent_id": parent_id or "",
                "tree": tree,
                "slug": slug,
                "breadcrumb": join_breadcrumb(breadcrumb),
                "title": title,
                "tags": " ".join(tags),
                "path": path,
                "path_components": " ".join(path.replace(".", "/").split("/")),
                "text": ranked_text(breadcrumb, tags, body),
                "body": body,
                "depth": depth,
                "position": position,
                "sibling_count": siblings,
                "line_start": line_start,
                "line_end": line_end,
                "byte_start": byte_start,
                "byte_end": byte_end,
                "tokens": tokens,
                "mtime": max(0, mtime_ns) // 1_000_000_000,
            },
            schema,
        )

"""The index stage: apply the difference between the chunk tables and the tantivy index.

`index_state.json` records, for the last committed generation, the hash of every indexed
document. A run compares it with the chunk tables and, per changed document, deletes its old
chunks by `doc_id` and adds the new ones, then commits once. A change of stemmer or schema
rebuilds the whole index in a fresh directory and swaps it in.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from typing import Any

import orjson
import pyarrow.compute as pc
import tantivy

from ra_build.atomic import write_bytes
from ra_build.layout import Layout
from ra_build.stages import doc_hashes, iter_chunk_tables, prune_tables
from ra_query.schema import SCHEMA_VERSION, build_schema, register_analyzer

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
    change re-adds every document inside that same commit; only a schema change (a new ra
    version) or a missing index creates the index directory afresh.
    """
    started = time.perf_counter()
    state = _read_state(layout)
    fresh = state.get("schema_version") != SCHEMA_VERSION or not (layout.index_dir / "meta.json").exists()
    restem = fresh or state.get("stemmer") != stemmer
    old_docs: dict[str, str] = {} if restem else state.get("docs", {})

    tables = dict(iter_chunk_tables(layout, trees))
    new_docs: dict[str, str] = {}
    for table in tables.values():
        new_docs.update(doc_hashes(table))
    changed = {d for d, h in new_docs.items() if old_docs.get(d) != h}
    removed = set(old_docs) - set(new_docs)

    if fresh:
        shutil.rmtree(layout.index_dir, ignore_errors=True)
        layout.index_dir.mkdir(parents=True)
    index = tantivy.Index(build_schema(), path=str(layout.index_dir), reuse=not fresh)
    register_analyzer(index, stemmer)
    writer = index.writer(heap_size=WRITER_HEAP, num_threads=min(2, os.cpu_count() or 1))
    if restem:
        writer.delete_all_documents()
    else:
        for doc_id in sorted(changed | removed):
            writer.delete_documents_by_term("doc_id", doc_id)
    added_chunks = 0
    for table in tables.values():
        if not changed:
            break
        subset = table if restem else table.filter(pc.field("doc_id").isin(sorted(changed)))
        for row in subset.to_pylist():
            writer.add_document(_document(row))
            added_chunks += 1
    generation = int(state.get("generation", 0)) + (1 if (changed or removed or restem) else 0)
    writer.commit()
    writer.wait_merging_threads()
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


def _document(row: dict[str, Any]) -> tantivy.Document:
    path: str = row["path"]
    components = " ".join(path.replace(".", "/").split("/"))
    return tantivy.Document(
        id=row["id"],
        doc_id=row["doc_id"],
        parent_id=row["parent_id"] or "",
        tree=row["tree"],
        slug=row["slug"],
        breadcrumb=orjson.dumps(row["breadcrumb"]).decode(),
        title=row["title"],
        tags=" ".join(row["tags"]),
        path=path,
        path_components=components,
        body=row["body"],
        depth=row["depth"],
        position=row["position"],
        sibling_count=row["sibling_count"],
        line_start=row["line_start"],
        line_end=row["line_end"],
        byte_start=row["byte_start"],
        byte_end=row["byte_end"],
        tokens=row["tokens"],
        mtime=max(0, row["mtime_ns"]) // 1_000_000_000,
    )

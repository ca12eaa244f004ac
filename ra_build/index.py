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
from pathlib import Path
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
    """Bring the tantivy index in line with the chunk tables of `trees`."""
    started = time.perf_counter()
    state = _read_state(layout)
    rebuild = (
        state.get("stemmer") != stemmer
        or state.get("schema_version") != SCHEMA_VERSION
        or not (layout.index_dir / "meta.json").exists()
    )
    old_docs: dict[str, str] = {} if rebuild else state.get("docs", {})

    tables = dict(iter_chunk_tables(layout, trees))
    new_docs: dict[str, str] = {}
    for table in tables.values():
        new_docs.update(doc_hashes(table))
    changed = {d for d, h in new_docs.items() if old_docs.get(d) != h}
    removed = set(old_docs) - set(new_docs)

    target = layout.index_dir
    if rebuild:
        target = layout.root / f"index.new-{os.getpid()}"
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
    schema = build_schema(stemmer)
    index = tantivy.Index(schema, path=str(target), reuse=not rebuild)
    register_analyzer(index, stemmer)
    writer = index.writer(heap_size=WRITER_HEAP, num_threads=min(2, os.cpu_count() or 1))
    if not rebuild:
        for doc_id in sorted(changed | removed):
            writer.delete_documents_by_term("doc_id", doc_id)
    added_chunks = 0
    for table in tables.values():
        if not changed:
            break
        subset = table.filter(pc.field("doc_id").isin(sorted(changed)))
        for row in subset.to_pylist():
            writer.add_document(_document(row))
            added_chunks += 1
    generation = int(state.get("generation", 0)) + (1 if (changed or removed or rebuild) else 0)
    writer.commit()
    writer.wait_merging_threads()
    if rebuild:
        _swap_in(target, layout.index_dir)
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
        rebuilt=rebuild,
        generation=generation,
        seconds=time.perf_counter() - started,
    )


def _swap_in(fresh: Path, live: Path) -> None:
    """Replace the live index directory with `fresh` (two renames; the old one is removed)."""
    old = live.with_name(f"index.old-{os.getpid()}")
    if live.exists():
        os.replace(live, old)
    os.replace(fresh, live)
    shutil.rmtree(old, ignore_errors=True)


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

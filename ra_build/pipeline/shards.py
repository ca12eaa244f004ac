"""Writing one index shard: chunk rows from the Parquet parts into a tantivy index of its own.

The index stage (ra_build.pipeline.index_stage) plans a `ShardJob` per shard it must change;
`write_job` carries one out here, in this process, in a shard writer process
(ra_build.pipeline.shard_workers) or on a cluster worker (ra_build.pipeline.cluster), which all
call the same `write_shard`.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import tantivy

from ra_build.artifacts.segments import read_meta, segment_files
from ra_build.document.code import identifier_terms
from ra_query.artifacts.paths import INDEX_META, MANAGED, META_LOCK, WRITER_LOCK
from ra_query.artifacts.schema import build_schema, join_breadcrumb, register_analyzer
from ra_query.text.locales import (
    base,
    cjk_terms,
    korean_word_starts,
    language_stems,
    mnemonic_words,
    own_stemmer,
)
from ra_query.text.names import chunk_keys

# per shard writer: one thread, so one segment per commit until a commit outgrows the heap
WRITER_HEAP = 256 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ShardJob:
    """What one shard's writer does: start afresh or delete documents, then add chunk rows.

    `parts` lists (Parquet part, doc ids to read from it or None for every row).
    """

    shard: int
    directory: str
    stemmer: str
    fresh: bool
    deletes: tuple[str, ...] = ()
    parts: tuple[tuple[str, tuple[str, ...] | None], ...] = field(default=())


def readable_shard(directory: Path) -> bool:
    """Whether `directory` holds a committed tantivy index of this ra's schema."""
    if not (directory / INDEX_META).is_file():
        return False
    try:
        tantivy.Index(build_schema(), path=str(directory), reuse=True)
    except ValueError:
        return False
    return True


def write_job(job: ShardJob) -> int:
    """Run one shard job: read its Parquet rows and write them with `write_shard`."""
    return write_shard(
        Path(job.directory), job.stemmer, job_batches(job.parts), deletes=job.deletes, fresh=job.fresh
    )


def write_shard(
    directory: Path,
    stemmer: str,
    batches: Iterable[pa.RecordBatch],
    *,
    deletes: Sequence[str] = (),
    fresh: bool = False,
) -> int:
    """Write chunk rows into the shard index in `directory` and commit; return the chunks added.

    `fresh` builds the shard from nothing (anything in `directory` is removed first); otherwise
    the documents in `deletes` lose their chunks before the new rows go in, in the same commit.
    `batches` carry the chunk-table columns of `INDEX_COLUMNS`.
    """
    if fresh:
        _removed(directory)
        directory.mkdir(parents=True)
    else:
        drop_leftovers(directory)
    index = tantivy.Index(build_schema(), path=str(directory), reuse=not fresh)
    register_analyzer(index, stemmer)
    writer = index.writer(heap_size=WRITER_HEAP, num_threads=1)
    for doc_id in deletes:
        writer.delete_documents_by_term("doc_id", doc_id)
    added = add_rows(writer, batches, stemmer)
    writer.commit()
    writer.wait_merging_threads()
    return added


# a killed build's shard writer dies with it, but not at once: a file it was writing can appear
# after the next build emptied the shard's directory (CI: `FileExistsError` on the mkdir after)
REMOVE_TRIES = 20
REMOVE_PAUSE_S = 0.05


def _removed(directory: Path) -> None:
    """Remove `directory` and everything in it, trying again while something still appears in it
    (REMOVE_TRIES times, REMOVE_PAUSE_S apart); the last try says why it failed."""
    for _ in range(REMOVE_TRIES - 1):
        shutil.rmtree(directory, ignore_errors=True)
        if not directory.exists():
            return
        time.sleep(REMOVE_PAUSE_S)
    shutil.rmtree(directory, ignore_errors=False)


def add_rows(writer: tantivy.IndexWriter, batches: Iterable[pa.RecordBatch], stemmer: str = "english") -> int:
    """Add the chunk rows of `batches` to `writer`; return how many (public: bench/scaling.py).

    Each row goes in as JSON (`add_json`), which tantivy parses straight into its document: a
    `tantivy.Document` (`from_dict`, then `add_document`) is built in Rust and copied again. A
    batch's rows are all made before the first is added: added as each was made, this thread and
    the writer's indexing thread woke each other for every chunk (`perf`: a tenth of a shard
    writer's CPU went to the kernel's wake-ups). Together they save the index stage ~0.7 of
    12.5 CPU-s on the powershell corpus (312k chunks).
    """
    added = 0
    add, dumps = writer.add_json, orjson.dumps
    for batch in batches:
        docs = [dumps(doc).decode() for doc in documents(batch, stemmer)]
        for doc in docs:
            add(doc)
        added += len(docs)
    return added


def drop_leftovers(directory: Path) -> list[str]:
    """Remove what a writer killed inside its commit left in the shard `directory`; their names.

    Such files belong to no segment the shard's meta.json lists, and the same write run again
    would write a delete file of the same name, which tantivy refuses to overwrite.
    """
    keep = {INDEX_META, META_LOCK, WRITER_LOCK, MANAGED}
    for segment in read_meta(directory)["segments"]:
        keep.update(segment_files(directory, segment))
    dropped = sorted(name for name in os.listdir(directory) if name not in keep)
    for name in dropped:
        (directory / name).unlink(missing_ok=True)
    return dropped


def job_batches(parts: Iterable[tuple[str, tuple[str, ...] | None]]) -> Iterator[pa.RecordBatch]:
    """The chunk rows a job adds, a bounded batch at a time.

    A whole part is streamed; for a few documents, the filter lets Parquet skip the row groups
    of the others (each part is sorted by doc_id in small row groups).
    """
    for part, ids in parts:
        if not os.path.exists(part):
            continue
        parquet = pq.ParquetFile(part)
        if ids is None:
            yield from parquet.iter_batches(batch_size=BATCH_ROWS, columns=INDEX_COLUMNS)
            continue
        groups = _row_groups_holding(parquet, sorted(ids))
        table = parquet.read_row_groups(groups, columns=INDEX_COLUMNS) if groups else None
        if table is not None:
            # a compute call, not a `pc.field` expression: those import pyarrow.dataset (and pandas)
            keep = pc.call_function("is_in", [table.column("doc_id")], pc.SetLookupOptions(pa.array(ids)))
            wanted = table.filter(keep)
            yield from wanted.to_batches(max_chunksize=BATCH_ROWS)


def _row_groups_holding(parquet: pq.ParquetFile, ids: list[str]) -> list[int]:
    """The row groups whose doc_id range (from the column statistics) takes in one of `ids`."""
    meta = parquet.metadata
    column = next(i for i in range(meta.num_columns) if meta.schema.column(i).path == "doc_id")
    groups = []
    for group in range(meta.num_row_groups):
        stats = meta.row_group(group).column(column).statistics
        if stats is None or not stats.has_min_max or any(stats.min <= doc <= stats.max for doc in ids):
            groups.append(group)
    return groups


INDEX_COLUMNS = [
    "id", "doc_id", "parent_id", "tree", "slug", "breadcrumb", "title", "tags", "path", "body",
    "depth", "position", "sibling_count", "line_start", "line_end", "byte_start", "byte_end",
    "tokens", "mtime_ns", "kind", "language", "symbol", "locale", "translation", "members", "forwards",
    "defines",
]  # fmt: skip
BATCH_ROWS = 8192


def ranked_text(
    breadcrumb: list[str], tags: list[str], body: str, kind: str = "docs", stems_with: str | None = None
) -> str:
    """The `text` field: breadcrumb, tags and body as one field; nothing for an empty body.

    The breadcrumb puts the document title and the headings above a chunk into its text, so
    `Get-ADUser examples` finds the Examples section of the Get-ADUser page. A code chunk's
    text also holds the parts and the joined form of its compound identifiers, so `open store`,
    `openStore` and `open_store` find each other (ra_build.document.code.identifier_terms). A
    docs chunk in a language with a stemmer of its own (`stems_with`: German in an English index)
    also holds its words' stems in that language (ra_query.text.locales.language_stems).
    """
    if not body or body.isspace():
        return ""
    if kind == "code":
        names = identifier_terms(" ".join(breadcrumb[1:]))
        return cjk_terms("\n".join([*breadcrumb, body, names, identifier_terms(body, joined=False)]))
    text = "\n".join([*breadcrumb, " ".join(tags), body, mnemonic_words(body)])
    if stems_with:
        text = f"{text}\n{language_stems(text, stems_with)}"
    if stems := korean_word_starts(text):
        text = f"{text}\n{stems}"
    return cjk_terms(text)


def locale_values(locale: str) -> list[str]:
    """A docs chunk's natural-language values of `lang`: its locale, then its language when the
    locale has a region (`pt-br`, `pt`: `lang:pt` finds every Portuguese page)."""
    language = base(locale)
    return [locale, language] if language != locale else [locale]


def indexed_title(title: str, kind: str) -> str | list[str]:
    """The `title` field's values: the title (stored, shown), then what else finds it — a code
    title's identifier parts and joined forms (`openStore` matches `def open_store(…)`), a
    Chinese, Japanese, Thai or Lao title's pairs, half-width katakana full-width (`cjk_terms`,
    as the query is written)."""
    extra = identifier_terms(title) if kind == "code" else ""
    if (terms := cjk_terms(title)) != title:
        extra = f"{extra} {terms}".strip()
    return [title, extra] if extra else title


def documents(batch: pa.RecordBatch, stemmer: str = "english") -> Iterator[dict[str, Any]]:
    """The tantivy document of each chunk row of `batch`, as its fields' values (`add_rows`), for
    an index whose analyzer stems with `stemmer`."""
    cols = batch.to_pydict()
    for (id_, doc_id, parent_id, tree, slug, breadcrumb, title, tags, path, body, depth, position,
         siblings, line_start, line_end, byte_start, byte_end, tokens, mtime_ns, kind, language,
         symbol, locale, translation, members, forwards, defines) in zip(
        *(cols[c] for c in INDEX_COLUMNS), strict=True
    ):  # fmt: skip
        yield {
            "id": id_,
            "doc_id": doc_id,
            "parent_id": parent_id or "",
            "tree": tree,
            "slug": slug,
            "breadcrumb": join_breadcrumb(breadcrumb),
            "title": indexed_title(title, kind),
            "tags": indexed_title(" ".join(tags), "docs"),  # shown as stored; CJK found by bigrams
            "path": path,
            "path_components": path.replace(".", " ").replace("/", " "),
            "text": ranked_text(breadcrumb, tags, body, kind, locale and own_stemmer(locale, stemmer)),
            "kind": kind or "docs",
            # a docs chunk is in its file's language and its natural one (`lang:markdown`,
            # `lang:ja`): the two never share a name (ra_query.text.locales.LANGUAGES)
            "lang": [language or "markdown", *locale_values(locale)] if locale else language or "markdown",
            "translation": translation or "",
            "symbol": symbol or "",
            "forwards": forwards or "",
            "defines": defines or "",
            "name": chunk_keys(
                kind=kind or "docs",
                depth=depth,
                symbol=symbol or "",
                title=title,
                path=path,
                slug=slug,
                members=members or (),
            ),
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
        }

"""The index stage: apply the difference between the chunk tables and the tantivy index.

The index is built as K shards (`[settings] index_shards`, by default the core count, at most 4, when the
index is first built), each its own tantivy index under `.index-shards/NN/`, written in
parallel by K processes (one after the other, here, for a change too small to pay for them).
Shard k holds the documents of the chunk-table parts p with
p % K == k, so a worker reads only its own Parquet parts. Readers never open a shard: the
stage then *publishes* them as one index, by hard-linking every shard's segment files into
`index/` and writing one meta.json that lists all their segments. tantivy computes BM25's
statistics over every segment of the index it opens, so scores equal those of a one-shard
build exactly (tests compare them).

`index_state.json` records, for the last published generation, the hash and shard of every
indexed document. A run compares it with the chunk tables and, in each shard that holds a
changed document, deletes its old chunks by `doc_id` and adds the new ones; shards without a
change are not touched. A change of stemmer, of schema or of K, or a missing state (`ra update
--full`), rebuilds every shard afresh. Readers keep the previous generation until the new
meta.json replaces it in one rename, so they never see an empty, partial or mixed index.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import tantivy

from ra_build.artifacts.atomic import write_bytes
from ra_build.artifacts.layout import Layout
from ra_build.artifacts.tables import SHARDS, read_file_rows, shard_of
from ra_query.artifacts.paths import INDEX_META, META_LOCK
from ra_query.artifacts.schema import (
    SCHEMA_VERSION,
    build_schema,
    doc_id_of,
    join_breadcrumb,
    register_analyzer,
)

# per shard writer: one thread, so one segment per commit until a commit outgrows the heap
WRITER_HEAP = 256 * 1024 * 1024
# below this many chunks to add, shards are written one after the other in this process: a
# spawned worker's start-up (~0.3 s of imports) costs more than a second core saves
PARALLEL_MIN_CHUNKS = 20_000
# The layout of tantivy's meta.json that publishing relies on (tantivy 0.22–0.25, tantivy-py
# 0.27): a list of segments by id, each with its document count and its deletes. Anything else
# fails loudly (FormatChanged) rather than publishing an index that lists the wrong files.
META_KEYS = frozenset({"index_settings", "segments", "schema", "opstamp", "payload"})
SEGMENT_KEYS = frozenset({"segment_id", "max_doc", "deletes"})
DELETE_KEYS = frozenset({"num_deleted_docs", "opstamp"})
# files of the published directory that belong to no segment and stay
_KEPT = frozenset({INDEX_META, META_LOCK})


class FormatChanged(RuntimeError):
    """tantivy's meta.json is not laid out as publishing expects (a new tantivy version)."""


DEFAULT_MAX_SHARDS = 4


def default_shards() -> int:
    """The shard count of a new index: one per core, at most `DEFAULT_MAX_SHARDS`.

    Every shard is at least one segment that each fresh `ra search` process opens: 2 segments cost a warm
    process 56 ms and 16 cost 129 ms (docs/scaling.md). Past four, a faster build is not worth
    slower searches unless asked for (`index_shards`, up to one per chunk-table part).
    """
    return max(1, min(os.cpu_count() or 1, DEFAULT_MAX_SHARDS, SHARDS))


@dataclass(frozen=True, slots=True)
class IndexStats:
    """What one run of the index stage did."""

    added_docs: int
    removed_docs: int
    added_chunks: int
    rebuilt: bool
    generation: int
    seconds: float
    shards: int = 1
    shards_written: tuple[int, ...] = ()


def _read_state(layout: Layout) -> dict[str, Any]:
    try:
        return orjson.loads(layout.index_state.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}


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


RunJobs = Callable[[Sequence[ShardJob]], list[int]]  # run_jobs or its stand-in


def index_stage(
    layout: Layout, trees: list[str], stemmer: str, shards: int | None = None, run: RunJobs | None = None
) -> IndexStats:
    """Bring the tantivy index in line with the chunk tables of `trees`.

    `shards` is the configured K; None keeps the K of the existing index (or, for a new one,
    one per core, at most 4). Each shard a run changes gets one tantivy commit; the published
    index changes only when the new meta.json lists every shard's new segments, so a reader (or a
    build killed half-way) sees either the previous generation or the new one, never a mix.
    `run` writes the shard jobs (default `run_jobs`, this machine's cores; a cluster build
    passes its own, ra_build.pipeline.cluster) and returns the chunks each added.
    """
    started = time.perf_counter()
    state = _read_state(layout)
    built = state.get("shards")
    if not isinstance(built, int):  # `ra update --full` dropped the state: keep the shards there are
        built = len(_shard_dirs(layout))
    k = max(1, min(shards or built or default_shards(), SHARDS))
    restem = (
        state.get("schema_version") != SCHEMA_VERSION
        or state.get("stemmer") != stemmer
        or state.get("shards") != k
        or not isinstance(state.get("docs"), dict)
        or not all(isinstance(v, list) for v in state["docs"].values())
    )
    old_docs: dict[str, list[Any]] = {} if restem else state["docs"]

    rows = {
        doc_id_of(tree, row.path): (tree, row)
        for tree in trees
        for row in read_file_rows(layout.file_table(tree))
        if row.status == "ok"
    }
    new_docs = {d: [row.doc_hash, shard_of(row.path) % k] for d, (_tree, row) in rows.items()}
    changed = {d for d, entry in new_docs.items() if old_docs.get(d) != entry}
    removed = set(old_docs) - set(new_docs)

    shutil.rmtree(layout.index_dir.with_name(f"{layout.index_dir.name}.next"), ignore_errors=True)
    for leftover in layout.shards_dir.iterdir() if layout.shards_dir.is_dir() else ():
        if not leftover.name.isdigit():  # a killed cluster build's staged NN.new / NN.old
            shutil.rmtree(leftover, ignore_errors=True)
    if restem:
        # a build killed while shards are rebuilt must not trust them next time
        layout.index_state.unlink(missing_ok=True)
    jobs: list[ShardJob] = []
    for shard in range(k):
        directory = layout.index_shard(shard)
        fresh = restem or not _readable_shard(directory)
        parts = [
            p for tree in trees for p in layout.chunk_shards(tree) if int(p.stem.split("-")[1]) % k == shard
        ]
        if fresh:
            everything = tuple((str(p), None) for p in parts)
            jobs.append(ShardJob(shard, str(directory), stemmer, True, (), everything))
            continue
        deletes = sorted(d for d in changed if new_docs[d][1] == shard)
        deletes += sorted(d for d in removed if old_docs[d][1] == shard)
        if not deletes:
            continue
        adds = [d for d in changed if new_docs[d][1] == shard]
        wanted = _by_part(layout, rows, adds)
        jobs.append(ShardJob(shard, str(directory), stemmer, False, tuple(deletes), tuple(wanted)))
    if jobs and not restem:
        # until the new generation is published, every document a job touches counts as not
        # indexed: a build killed before then re-applies them, whatever the sources hold by then
        fresh_shards = {job.shard for job in jobs if job.fresh}
        dirty = {**old_docs}
        dirty.update((d, ["", e[1]]) for d, e in new_docs.items() if d in changed or e[1] in fresh_shards)
        _write_state(layout, stemmer, k, int(state.get("generation", 0)), dirty, state.get("index_shards"))
    chunks = sum(row.chunks for d, (_tree, row) in rows.items() if restem or d in changed)
    if run is None:
        added_chunks = sum(run_jobs(jobs, parallel=chunks >= PARALLEL_MIN_CHUNKS))
    else:
        added_chunks = sum(run(jobs))
    for stale in _shard_dirs(layout):
        if int(stale.name) >= k:
            shutil.rmtree(stale, ignore_errors=True)
    shard_dirs = [layout.index_shard(s) for s in range(k)]
    publish(layout.index_dir, shard_dirs)
    generation = int(state.get("generation", 0)) + (1 if (changed or removed or restem) else 0)
    _write_state(layout, stemmer, k, generation, new_docs, shard_summary(shard_dirs))
    from ra_build.pipeline.chunk_stage import prune_tables  # here: spawned shard workers need no chunker

    prune_tables(layout, trees)  # only after the commit no longer needs them
    return IndexStats(
        added_docs=len(changed),
        removed_docs=len(removed),
        added_chunks=added_chunks,
        rebuilt=restem,
        generation=generation,
        seconds=time.perf_counter() - started,
        shards=k,
        shards_written=tuple(job.shard for job in jobs),
    )


def _write_state(
    layout: Layout, stemmer: str, shards: int, generation: int, docs: dict[str, list[Any]], published: Any
) -> None:
    """Record what the index holds: each document's hash and shard, and the published shards."""
    state = {
        "stemmer": stemmer,
        "schema_version": SCHEMA_VERSION,
        "shards": shards,
        "generation": generation,
        "docs": docs,
        "index_shards": published,
    }
    write_bytes(layout.index_state, orjson.dumps(state))


def shard_summary(shards: Sequence[Path]) -> list[dict[str, Any]]:
    """Each shard's segments and live chunks, in the order index/meta.json lists them."""
    summary = []
    for number, shard in enumerate(shards):
        segments = read_meta(shard)["segments"]
        chunks = sum(s["max_doc"] - (s["deletes"] or {}).get("num_deleted_docs", 0) for s in segments)
        summary.append({"shard": number, "segments": [s["segment_id"] for s in segments], "chunks": chunks})
    return summary


def _by_part(
    layout: Layout, rows: dict[str, tuple[str, Any]], docs: Iterable[str]
) -> list[tuple[str, tuple[str, ...]]]:
    """The Parquet parts that hold `docs`, each with the doc ids to read from it."""
    wanted: dict[Path, list[str]] = {}
    for doc in docs:
        tree, row = rows[doc]
        wanted.setdefault(layout.chunk_shard(tree, shard_of(row.path)), []).append(doc)
    return [(str(part), tuple(sorted(ids))) for part, ids in sorted(wanted.items())]


def _shard_dirs(layout: Layout) -> list[Path]:
    if not layout.shards_dir.is_dir():
        return []
    return [p for p in layout.shards_dir.iterdir() if p.is_dir() and p.name.isdigit()]


def _readable_shard(directory: Path) -> bool:
    """Whether `directory` holds a committed tantivy index of this ra's schema."""
    if not (directory / INDEX_META).is_file():
        return False
    try:
        tantivy.Index(build_schema(), path=str(directory), reuse=True)
    except ValueError:
        return False
    return True


def run_jobs(jobs: Sequence[ShardJob], *, parallel: bool = True) -> list[int]:
    """Run shard jobs, in parallel processes when there is more than one; chunks each added.

    The workers are fresh interpreters (`python -m ra_build.pipeline.shard_workers`), not forks: after the
    chunk stage this process holds hundreds of MB that a forked child would count as its own
    resident memory, and multiprocessing's spawn would re-run the caller's main script. A
    worker costs ~0.3 s of imports, so small jobs (`parallel=False`) run here, in turn.
    """
    workers = min(len(jobs), os.cpu_count() or 1)
    if workers < 2 or not parallel:
        return [write_job(job) for job in jobs]
    from ra_build.pipeline.shard_workers import run_in_workers

    return run_in_workers(jobs, workers)


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
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(parents=True)
    index = tantivy.Index(build_schema(), path=str(directory), reuse=not fresh)
    register_analyzer(index, stemmer)
    writer = index.writer(heap_size=WRITER_HEAP, num_threads=1)
    for doc_id in deletes:
        writer.delete_documents_by_term("doc_id", doc_id)
    added = 0
    schema = index.schema
    for batch in batches:
        for doc in _documents(batch, schema):
            writer.add_document(doc)
            added += 1
    writer.commit()
    writer.wait_merging_threads()
    return added


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


# ── publishing ─────────────────────────────────────────────────────────────────────────────


def read_meta(directory: Path) -> dict[str, Any]:
    """The meta.json of the tantivy index in `directory`, checked against `META_KEYS`."""
    meta = orjson.loads((directory / INDEX_META).read_bytes())
    if not isinstance(meta, dict) or not set(meta) <= META_KEYS or "segments" not in meta:
        raise FormatChanged(f"{directory / INDEX_META}: unexpected keys {sorted(meta)}")
    for segment in meta["segments"]:
        deletes = segment.get("deletes")
        if set(segment) != SEGMENT_KEYS or (deletes is not None and set(deletes) != DELETE_KEYS):
            raise FormatChanged(f"{directory / INDEX_META}: unexpected segment entry {segment}")
    return meta


def segment_files(directory: Path, segment: dict[str, Any]) -> list[str]:
    """The names of the files in `directory` that make up `segment` (its deletes included)."""
    stem = segment["segment_id"].replace("-", "")
    deletes = segment["deletes"]
    dels = f"{stem}.{deletes['opstamp']}.del" if deletes else None
    names = []
    for name in os.listdir(directory):
        head, _, ext = name.partition(".")
        if head == stem and (name == dels or (ext and not ext.endswith("del"))):
            names.append(name)
    if not any(name.endswith(".store") for name in names):
        raise FormatChanged(
            f"{directory}: the files of segment {segment['segment_id']} are missing — "
            "rebuild the index with: ra update --full"
        )
    return names


def merged_meta(shards: Sequence[Path]) -> tuple[dict[str, Any], list[tuple[Path, str]]]:
    """One meta.json listing the segments of every shard, and the files (shard dir, name)."""
    metas = [read_meta(shard) for shard in shards]
    first = metas[0]
    for shard, meta in zip(shards, metas, strict=True):
        if meta.get("schema") != first.get("schema") or meta.get("index_settings") != first.get(
            "index_settings"
        ):
            raise FormatChanged(
                f"{shard}: its schema differs from {shards[0]}'s — rebuild the index with: ra update --full"
            )
    segments = [segment for meta in metas for segment in meta["segments"]]
    files = [(shard, name) for shard, meta in zip(shards, metas, strict=True) for s in meta["segments"]
             for name in segment_files(shard, s)]  # fmt: skip
    merged = {**first, "segments": segments, "opstamp": max(int(m.get("opstamp", 0)) for m in metas)}
    return merged, files


def publish(index_dir: Path, shards: Sequence[Path]) -> bool:
    """Make `index_dir` the one index of all `shards`; True when its meta.json changed.

    Segment files are hard-linked (no copy), then meta.json is replaced in one rename, then
    files no segment lists any more are removed — holding tantivy's meta lock, which readers
    take while they open a generation (ra_query.artifacts.store).
    """
    merged, files = merged_meta(shards)
    index_dir.mkdir(parents=True, exist_ok=True)
    data = orjson.dumps(merged)
    try:
        changed = (index_dir / INDEX_META).read_bytes() != data
    except OSError:
        changed = True
    keep = set(_KEPT) | {name for _, name in files}
    for shard, name in files if changed else ():
        target = index_dir / name
        if not target.exists():
            link_or_copy(shard / name, target)
    with _meta_lock(index_dir):
        if changed:
            write_bytes(index_dir / INDEX_META, data)
        # also when nothing changed: what a publish killed after its rename left behind
        for name in os.listdir(index_dir):
            if name not in keep:
                path = index_dir / name
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)
    return changed


def link_or_copy(source: Path, target: Path) -> None:
    """Hard-link `source` as `target`; copy it where the file system has no hard links."""
    try:
        os.link(source, target)
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EXDEV, errno.ENOTSUP, errno.EMLINK):
            raise
        tmp = target.with_name(f".{target.name}.tmp")
        shutil.copyfile(source, tmp)
        with open(tmp, "rb") as fh:  # on disk before the meta.json that names it
            os.fsync(fh.fileno())
        os.replace(tmp, target)


@contextlib.contextmanager
def _meta_lock(index_dir: Path) -> Iterator[None]:
    """tantivy's meta lock on `index_dir`, held exclusively (readers take it shared)."""
    fd = os.open(index_dir / META_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


INDEX_COLUMNS = [
    "id", "doc_id", "parent_id", "tree", "slug", "breadcrumb", "title", "tags", "path", "body",
    "depth", "position", "sibling_count", "line_start", "line_end", "byte_start", "byte_end",
    "tokens", "mtime_ns",
]  # fmt: skip
BATCH_ROWS = 8192


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
        *(cols[c] for c in INDEX_COLUMNS), strict=True
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

"""The index stage: apply the difference between the chunk tables and the tantivy index.

The index is built as K shards (`[settings] index_shards`, by default the core count, at most
4, when the index is first built), each its own tantivy index under `.index-shards/NN/`, written
in parallel by K processes (one after the other, here, for a change too small to pay for them):
ra_build.pipeline.shards writes one, ra_build.pipeline.shard_workers runs the processes. Shard k
holds the documents of the chunk-table parts p with p % K == k, so a worker reads only its own
Parquet parts. Readers never open a shard: the stage then *publishes* them as one index
(ra_build.pipeline.publish), whose BM25 statistics equal those of a one-shard build exactly
(tests compare them), deleted chunks aside (below).

`index_state.json` records, for the last published generation, the hash and shard of every
indexed document. A run compares it with the chunk tables and, in each shard that holds a
changed document, deletes its old chunks by `doc_id` and adds the new ones; shards without a
change are not touched. A shard that a run would change by a tenth of its documents, or whose
index already counts a tenth of deleted chunks (`REBUILD_SHARE`), is rebuilt afresh instead:
tantivy keeps deleted chunks in its statistics until a merge, and they pass a tenth by one run
at most. A change of stemmer, of schema or of K, or a missing state (`ra update --full`),
rebuilds every shard afresh. Readers keep the previous generation until the new meta.json
replaces it in one rename, so they never see an empty, partial or mixed index.
"""

from __future__ import annotations

import os
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from ra_build.artifacts.atomic import write_bytes
from ra_build.artifacts.layout import Layout
from ra_build.artifacts.segments import read_meta
from ra_build.artifacts.tables import SHARDS, FileRow, read_file_rows, shard_of
from ra_build.pipeline.discover import prune_tables
from ra_build.pipeline.publish import publish, shard_summary
from ra_build.pipeline.shard_workers import run_jobs
from ra_build.pipeline.shards import ShardJob, readable_shard
from ra_query.artifacts.schema import SCHEMA_VERSION, doc_id_of

# a shard is rebuilt afresh, not edited, when a run would delete this share of its documents or
# its index already counts this share of deleted chunks: tantivy drops a deleted chunk from its
# BM25 statistics only when its segment merges, and edits alone left click's index (bench/
# code_search.py) with 3,017 deleted chunks beside 2,438 live ones after four rebuilds of every
# file, its answers to the code questions 0.726 → 0.742 in the top 5 once rebuilt
REBUILD_SHARE = 0.1

# below this many chunks to add, shards are written one after the other in this process: a
# spawned worker's start-up (~0.3 s of imports) costs more than a second core saves
PARALLEL_MIN_CHUNKS = 20_000


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
    diff = _diff(layout, trees, k, {} if restem else state["docs"])
    shutil.rmtree(layout.index_dir.with_name(f"{layout.index_dir.name}.next"), ignore_errors=True)
    for leftover in layout.shards_dir.iterdir() if layout.shards_dir.is_dir() else ():
        if not leftover.name.isdigit():  # a killed cluster build's staged NN.new / NN.old
            shutil.rmtree(leftover, ignore_errors=True)
    if restem:
        # a build killed while shards are rebuilt must not trust them next time
        layout.index_state.unlink(missing_ok=True)
    jobs = _jobs(layout, trees, stemmer, k, restem, diff)
    if jobs and not restem:
        # until the new generation is published, every document a job touches counts as not
        # indexed: a build killed before then re-applies them, whatever the sources hold by then
        fresh_shards = {job.shard for job in jobs if job.fresh}
        dirty = {**diff.old}
        touched = ((d, e) for d, e in diff.new.items() if d in diff.changed or e[1] in fresh_shards)
        dirty.update((d, ["", e[1]]) for d, e in touched)
        _write_state(layout, stemmer, k, int(state.get("generation", 0)), dirty, state.get("index_shards"))
    chunks = sum(row.chunks for d, (_tree, row) in diff.rows.items() if restem or d in diff.changed)
    if run is None:
        added_chunks = sum(run_jobs(jobs, parallel=chunks >= PARALLEL_MIN_CHUNKS))
    else:
        added_chunks = sum(run(jobs))
    for stale in _shard_dirs(layout):
        if int(stale.name) >= k:
            shutil.rmtree(stale, ignore_errors=True)
    shard_dirs = [layout.index_shard(s) for s in range(k)]
    publish(layout.index_dir, shard_dirs)
    generation = int(state.get("generation", 0)) + (1 if (diff.changed or diff.removed or restem) else 0)
    _write_state(layout, stemmer, k, generation, diff.new, shard_summary(shard_dirs))
    prune_tables(layout, trees)  # only after the commit no longer needs them
    return IndexStats(
        added_docs=len(diff.changed),
        removed_docs=len(diff.removed),
        added_chunks=added_chunks,
        rebuilt=restem,
        generation=generation,
        seconds=time.perf_counter() - started,
        shards=k,
        shards_written=tuple(job.shard for job in jobs),
    )


class _Diff(NamedTuple):
    """The chunk tables against what the index holds, by document id."""

    rows: dict[str, tuple[str, FileRow]]  # every document to index: (tree, file row)
    new: dict[str, list[Any]]  # [doc hash, shard] of each, as the tables are now
    old: dict[str, list[Any]]  # the same, as the index holds them
    changed: set[str]  # new, or with another hash or shard
    removed: set[str]  # in the index, no longer in the tables


def _diff(layout: Layout, trees: list[str], k: int, old: dict[str, list[Any]]) -> _Diff:
    """What changed between the index (`old`, from its state) and the chunk tables of `trees`."""
    rows = {
        doc_id_of(tree, row.path): (tree, row)
        for tree in trees
        for row in read_file_rows(layout.file_table(tree))
        if row.status == "ok"
    }
    new = {d: [row.doc_hash, shard_of(row.path) % k] for d, (_tree, row) in rows.items()}
    changed = {d for d, entry in new.items() if old.get(d) != entry}
    return _Diff(rows, new, old, changed, set(old) - set(new))


def _jobs(
    layout: Layout, trees: list[str], stemmer: str, k: int, restem: bool, diff: _Diff
) -> list[ShardJob]:
    """One job per shard that must change: rebuilt whole (`restem`, or not readable), or its
    changed and removed documents deleted and the changed ones added again."""
    jobs: list[ShardJob] = []
    parts = [p for tree in trees for p in layout.chunk_shards(tree)]
    held = Counter(entry[1] for entry in diff.old.values())  # documents per shard
    for shard in range(k):
        directory = layout.index_shard(shard)
        everything = tuple((str(p), None) for p in parts if int(p.stem.split("-")[1]) % k == shard)
        if restem or not readable_shard(directory):
            jobs.append(ShardJob(shard, str(directory), stemmer, True, (), everything))
            continue
        deletes = sorted(d for d in diff.changed if diff.new[d][1] == shard)
        deletes += sorted(d for d in diff.removed if diff.old[d][1] == shard)
        if not deletes:
            continue
        if len(deletes) >= REBUILD_SHARE * held[shard] or deleted_share(directory) >= REBUILD_SHARE:
            jobs.append(ShardJob(shard, str(directory), stemmer, True, (), everything))
            continue
        adds = [d for d in diff.changed if diff.new[d][1] == shard]
        wanted = _by_part(layout, diff.rows, adds)
        jobs.append(ShardJob(shard, str(directory), stemmer, False, tuple(deletes), tuple(wanted)))
    return jobs


def deleted_share(directory: Path) -> float:
    """The share of the documents of the shard index in `directory` that are deleted: tantivy
    keeps a deleted chunk in its segment, and in its BM25 statistics, until the segment merges."""
    segments = read_meta(directory)["segments"]
    held = sum(int(segment["max_doc"]) for segment in segments)
    deleted = sum(int((segment["deletes"] or {}).get("num_deleted_docs", 0)) for segment in segments)
    return deleted / held if held else 0.0


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


def _by_part(
    layout: Layout, rows: dict[str, tuple[str, FileRow]], docs: Iterable[str]
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

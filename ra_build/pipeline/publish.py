"""Publishing the shards as one index: readers open `index/`, never a shard.

Every shard's segment files are hard-linked into `index/` and one meta.json lists all their
segments; tantivy computes BM25's statistics over every segment of the index it opens, so scores
equal those of a one-shard build exactly. The new meta.json replaces the old one in one rename,
under tantivy's meta lock, so a reader sees the previous generation or the new one, never a mix.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson

from ra_build.artifacts.atomic import write_bytes
from ra_build.artifacts.segments import FormatChanged, read_meta, segment_files
from ra_query.artifacts.paths import INDEX_META, META_LOCK

# files of the published directory that belong to no segment and stay
_KEPT = frozenset({INDEX_META, META_LOCK})


def shard_summary(shards: Sequence[Path]) -> list[dict[str, Any]]:
    """Each shard's segments and live chunks, in the order index/meta.json lists them."""
    summary = []
    for number, shard in enumerate(shards):
        segments = read_meta(shard)["segments"]
        chunks = sum(s["max_doc"] - (s["deletes"] or {}).get("num_deleted_docs", 0) for s in segments)
        summary.append({"shard": number, "segments": [s["segment_id"] for s in segments], "chunks": chunks})
    return summary


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

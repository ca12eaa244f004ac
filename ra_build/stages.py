"""The build stages as plain functions: discover → chunk → index → manifest.

doit (ra_build.tasks) decides *whether* a stage runs; these functions decide *what* it
touches, so each stage is incremental on its own: the chunk stage re-parses only files whose
size, mtime or sha256 changed, and the index stage replaces only documents whose chunks
changed. Every file written here is written atomically.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ra_build.atomic import write_bytes, write_if_changed
from ra_build.chunk import chunk_document
from ra_build.config import TreeConfig
from ra_build.discover import discover_tree
from ra_build.layout import Layout
from ra_build.parse import decode
from ra_build.tables import (
    CHUNK_SCHEMA,
    FileRow,
    chunk_rows,
    read_file_rows,
    write_file_table,
    write_with,
)

BINARY_SNIFF = 8192
PARALLEL_MIN_FILES = 256


@dataclass(frozen=True, slots=True)
class ChunkSettings:
    """The settings the chunk stage reads (its doit config_changed key)."""

    max_file_size: int
    max_chunk_size: int


# ── discover ────────────────────────────────────────────────────────────────────────────────


def discover_stage(tree: TreeConfig, layout: Layout) -> bool:
    """Walk one tree and write its snapshot; True when the snapshot changed."""
    found = discover_tree(tree)
    snapshot = {
        "tree": tree.name,
        "root": str(tree.path),
        "files": [[f.path, f.size, f.mtime_ns] for f in found.files],
        "skipped": [[s.path, s.reason] for s in found.skipped],
    }
    return write_if_changed(layout.snapshot(tree.name), orjson.dumps(snapshot))


def read_snapshot(layout: Layout, tree: str) -> dict[str, Any]:
    """The snapshot discovery last wrote for `tree`."""
    return orjson.loads(layout.snapshot(tree).read_bytes())


# ── chunk ───────────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class ParsedFile:
    """The outcome of reading and chunking one file."""

    row: FileRow
    chunks: list[dict[str, Any]]


def parse_file(tree: str, root: str, path: str, settings: ChunkSettings) -> ParsedFile:
    """Read, classify and chunk one file. Never raises for a bad file: it reports it."""
    abspath = os.path.join(root, path)
    try:
        st = os.stat(abspath)
        if st.st_size > settings.max_file_size:
            return _skip(
                tree,
                path,
                st.st_size,
                st.st_mtime_ns,
                "",
                "skipped",
                f"larger than max_file_size ({st.st_size:,} > {settings.max_file_size:,} bytes)",
            )
        with open(abspath, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        # vanished or unreadable: reported now, retried next build (status error is never reused)
        return _skip(tree, path, 0, 0, "", "error", f"cannot read: {exc.strerror or exc}")
    sha = hashlib.sha256(data).hexdigest()
    if b"\0" in data[:BINARY_SNIFF]:
        return _skip(tree, path, len(data), st.st_mtime_ns, sha, "skipped", "binary file")
    text, replaced = decode(data)
    doc = chunk_document(tree, path, text, size=len(data))
    warnings = list(doc.warnings)
    if replaced:
        warnings.insert(0, "invalid UTF-8: undecodable bytes were replaced with U+FFFD")
    warnings.extend(
        f"chunk {c.id} is {len(c.body):,} characters (max_chunk_size {settings.max_chunk_size:,})"
        for c in doc.chunks
        if len(c.body) > settings.max_chunk_size
    )
    rows = chunk_rows(doc, st.st_mtime_ns)
    row = FileRow(tree, path, len(data), st.st_mtime_ns, sha, "ok", None, tuple(warnings), len(rows))
    return ParsedFile(row, rows)


def _skip(tree: str, path: str, size: int, mtime_ns: int, sha: str, status: str, why: str) -> ParsedFile:
    return ParsedFile(FileRow(tree, path, size, mtime_ns, sha, status, why, (), 0), [])


def _parse_batch(args: tuple[str, str, list[str], ChunkSettings]) -> list[ParsedFile]:
    tree, root, paths, settings = args
    return [parse_file(tree, root, p, settings) for p in paths]


FileProgress = Callable[[int, int], None]


def parse_files(
    tree: str,
    root: str,
    paths: Sequence[str],
    settings: ChunkSettings,
    workers: int | None = None,
    progress: FileProgress | None = None,
) -> list[ParsedFile]:
    """Parse `paths`, on every core when there are enough of them to pay for the processes."""
    workers = workers or os.cpu_count() or 1
    total = len(paths)
    out: list[ParsedFile] = []
    if workers < 2 or total < PARALLEL_MIN_FILES:
        for path in paths:
            out.append(parse_file(tree, root, path, settings))
            if progress is not None:
                progress(len(out), total)
        return out
    size = max(16, total // (workers * 8))
    batches = [(tree, root, list(paths[i : i + size]), settings) for i in range(0, total, size)]
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        for batch in pool.map(_parse_batch, batches):
            out.extend(batch)
            if progress is not None:
                progress(len(out), total)
    return out


@dataclass(frozen=True, slots=True)
class ChunkStats:
    """What one run of the chunk stage did for one tree."""

    tree: str
    parsed: tuple[str, ...]
    reused: int
    removed: tuple[str, ...]
    files: int
    chunks: int
    skipped: int
    problems: tuple[str, ...]  # "path: what" for each file of this run skipped or warned about


def chunk_stage(
    tree: TreeConfig, layout: Layout, settings: ChunkSettings, progress: FileProgress | None = None
) -> ChunkStats:
    """Bring `tree`'s chunk and file tables up to date with its snapshot."""
    snap = read_snapshot(layout, tree.name)
    previous = {r.path: r for r in read_file_rows(layout.file_table(tree.name))}
    current = {p: (size, mtime) for p, size, mtime in snap["files"]}

    keep: list[FileRow] = []
    to_parse: list[str] = []
    for path, (size, mtime) in current.items():
        prev = previous.get(path)
        if prev is not None and prev.status != "error" and prev.size == size and prev.mtime_ns == mtime:
            keep.append(prev)
        else:
            to_parse.append(path)
    parsed = parse_files(tree.name, snap["root"], to_parse, settings, progress=progress)

    new_rows: list[dict[str, Any]] = []
    parsed_paths: list[str] = []  # files read and chunked anew this run
    replaced: set[str] = set()  # files whose old chunks must go
    rows_out = list(keep)
    for item in parsed:
        prev = previous.get(item.row.path)
        rows_out.append(item.row)
        if prev is not None and prev.status == item.row.status == "ok" and prev.sha256 == item.row.sha256:
            continue  # touched but not changed: keep the old chunks, remember the new mtime
        replaced.add(item.row.path)
        if item.row.status == "ok":
            parsed_paths.append(item.row.path)
            new_rows.extend(item.chunks)
    removed = tuple(sorted(set(previous) - set(current)))
    replaced.update(removed)

    old_table = _read_chunk_table(layout, tree.name)
    if replaced and old_table.num_rows:
        old_table = old_table.filter(~pc.field("path").isin(sorted(replaced)))
    table = pa.concat_tables([old_table, pa.Table.from_pylist(new_rows, schema=CHUNK_SCHEMA)])
    table = table.sort_by("path")  # a stable sort: each document's rows stay in order
    write_with(layout.chunk_table(tree.name), lambda tmp: pq.write_table(table, tmp, compression="zstd"))

    skipped_walk = [
        FileRow(tree.name, p, 0, 0, "", "error", why, (), 0) for p, why in snap.get("skipped", [])
    ]
    rows_out.sort(key=lambda r: r.path)
    write_file_table(layout.file_table(tree.name), [*rows_out, *skipped_walk])
    stats = ChunkStats(
        tree=tree.name,
        parsed=tuple(sorted(parsed_paths)),
        reused=len(rows_out) - len(parsed_paths),
        removed=removed,
        files=sum(1 for r in rows_out if r.status == "ok"),
        chunks=table.num_rows,
        skipped=sum(1 for r in rows_out if r.status != "ok") + len(skipped_walk),
        problems=tuple(
            f"{tree.name}:{item.row.path}: {why}"
            for item in sorted(parsed, key=lambda i: i.row.path)
            for why in ((item.row.error,) if item.row.error else item.row.warnings)
        )
        + tuple(f"{tree.name}:{r.path}: {r.error}" for r in skipped_walk),
    )
    write_bytes(layout.stats(tree.name), orjson.dumps(stats, option=orjson.OPT_INDENT_2))
    return stats


def _read_chunk_table(layout: Layout, tree: str) -> pa.Table:
    path = layout.chunk_table(tree)
    if not path.exists():
        return CHUNK_SCHEMA.empty_table()
    return pq.read_table(path, schema=CHUNK_SCHEMA)


def doc_hashes(table: pa.Table) -> dict[str, str]:
    """doc id → a hash of everything the index stores for that document's chunks."""
    cols = [
        "doc_id",
        "id",
        "content_hash",
        "parent_id",
        "position",
        "sibling_count",
        "line_start",
        "line_end",
        "byte_start",
        "byte_end",
        "tokens",
        "mtime_ns",
    ]
    data = table.select(cols).to_pydict()
    hashes: dict[str, hashlib._Hash] = {}
    for i, doc_id in enumerate(data["doc_id"]):
        h = hashes.get(doc_id)
        if h is None:
            h = hashes[doc_id] = hashlib.sha256()
        h.update("\x1f".join(str(data[c][i]) for c in cols[1:]).encode())
    return {k: v.hexdigest() for k, v in hashes.items()}


def iter_chunk_tables(layout: Layout, trees: Iterable[str]) -> Iterable[tuple[str, pa.Table]]:
    """(tree, chunk table) for each tree that has one."""
    for tree in trees:
        yield tree, _read_chunk_table(layout, tree)


def prune_tables(layout: Layout, trees: Iterable[str]) -> list[str]:
    """Delete the tables and snapshots of trees no longer configured; return their names."""
    keep = set(trees)
    gone: set[str] = set()
    if layout.chunks_dir.exists():
        for path in layout.chunks_dir.iterdir():
            tree = path.name.split(".", 1)[0]
            if tree not in keep and not path.name.startswith("."):
                path.unlink(missing_ok=True)
                gone.add(tree)
    return sorted(gone)

"""The chunk stage: parse and chunk the new or changed files of a tree into its Parquet tables.

doit (ra_build.pipeline.graph) decides *whether* the stage runs; this module decides *what* it
touches: only files whose size, mtime or sha256 changed since the file table was written are
parsed again (on every core: `parse_files`, or on a cluster), and only the chunk-table parts
their paths fall in are rewritten. Every file written here is written atomically.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from ra_build.artifacts.atomic import write_bytes
from ra_build.artifacts.layout import Layout
from ra_build.artifacts.tables import (
    CHUNK_SCHEMA,
    SHARDS,
    FileRow,
    chunk_batch,
    chunk_rows,
    doc_hash,
    locale_of,
    read_chunk_table,
    read_file_rows,
    shard_of,
    write_chunk_table,
    write_file_table,
)
from ra_build.config.fingerprint import CHUNKER_VERSION
from ra_build.config.model import TreeConfig
from ra_build.document.chunk import Document, chunk_file, kind_for_path
from ra_build.document.code import DEFAULT_CODE_CHUNK, generated_reason
from ra_build.pipeline.discover import read_snapshot
from ra_build.pipeline.workers import worker_init
from ra_query.sources.languages import SourceKind, header_language_of
from ra_query.sources.walk import inside, outside_reason, within_root
from ra_query.text.files import looks_binary
from ra_query.text.locales import DEFAULT_LOCALE, translation_key
from ra_query.text.tokens import encoding

PARALLEL_MIN_FILES = 256


@dataclass(frozen=True, slots=True)
class ChunkSettings:
    """The settings that shape what the chunk stage produces for a file.

    When any of them differs from the last run's, every file of the tree is parsed again:
    rows made under other settings (or by another chunker version) are never reused.
    """

    max_file_size: int
    max_chunk_size: int
    code_chunk_size: int = DEFAULT_CODE_CHUNK
    chunker: int = CHUNKER_VERSION
    outside_links: bool = False  # the tree's allow_outside_links
    source: SourceKind = "docs"  # the source kind of its markdown: `upstream` in an upstream tree
    # what a `.h` is parsed as: "c", "cpp", or "auto" (each header by its own text); a tree's
    # "auto" becomes "cpp" here when the tree says C++ (`header_language_of`)
    header_language: str = "auto"
    language: str = DEFAULT_LOCALE  # the tree's natural language: its docs' unless they say another


# ── chunk ───────────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class ParsedFile:
    """The outcome of reading and chunking one file: its file row, and its document unless it
    was skipped."""

    row: FileRow
    doc: Document | None = None

    @property
    def chunks(self) -> list[dict[str, Any]]:
        """The file's rows of the chunk table."""
        return chunk_rows(self.doc, self.row.mtime_ns) if self.doc is not None else []


def parse_file(
    tree: str, root: str, path: str, settings: ChunkSettings, real_root: str | None = None
) -> ParsedFile:
    """Read, classify and chunk one file. Never raises for a bad file: it reports it.

    `real_root` is `root` with every symlink resolved, when the caller already knows it.
    """
    abspath = os.path.join(root, path)
    size = mtime_ns = 0  # an error row keeps the stat discovery saw, so it is not "changed" again
    try:
        st = os.stat(abspath)
        size, mtime_ns = st.st_size, st.st_mtime_ns
        if st.st_size > settings.max_file_size:
            return too_large(tree, path, st.st_size, st.st_mtime_ns, settings)
        with open(abspath, "rb") as fh:
            # checked on the open file, not the name: a link swapped in after discovery, or
            # between a check and the open, still never gets read
            if not settings.outside_links and not _opened_inside(
                real_root or os.path.realpath(root), fh, abspath
            ):
                return _skip(tree, path, size, mtime_ns, "", "error", outside_reason(abspath))
            data = fh.read()
    except OSError as exc:
        return unreadable(tree, path, size, mtime_ns, exc)
    return parse_data(tree, path, data, mtime_ns, settings)


def too_large(tree: str, path: str, size: int, mtime_ns: int, settings: ChunkSettings) -> ParsedFile:
    """The row of a file over `max_file_size`, which is never read."""
    why = f"larger than max_file_size ({size:,} > {settings.max_file_size:,} bytes)"
    return _skip(tree, path, size, mtime_ns, "", "skipped", why)


def unreadable(tree: str, path: str, size: int, mtime_ns: int, exc: OSError) -> ParsedFile:
    """The row of a file that vanished or cannot be read: reported now, retried next build
    (a row of status error is never reused)."""
    why = f"cannot read: {exc.strerror or exc} — make it readable; every ra update tries it again"
    return _skip(tree, path, size, mtime_ns, "", "error", why)


def parse_data(tree: str, path: str, data: bytes, mtime_ns: int, settings: ChunkSettings) -> ParsedFile:
    """Classify and chunk the bytes of one file, however they were read (a cluster reads them
    through fsspec). Never raises for a bad file: it reports it."""
    sha = hashlib.sha256(data).hexdigest()
    code = kind_for_path(path) == "code" and not looks_binary(data)  # binary is reported as binary
    if code and (why := generated_reason(data)) is not None:
        return _skip(tree, path, len(data), mtime_ns, sha, "skipped", why)
    doc, replaced = chunk_file(
        tree, path, data, max_chunk_size=settings.max_chunk_size, source_kind=settings.source,
        code_chunk_size=settings.code_chunk_size, header_language=settings.header_language,
    )  # fmt: skip
    if doc is None:
        return _skip(tree, path, len(data), mtime_ns, sha, "skipped", "binary file")
    warnings = list(doc.warnings)
    if replaced:
        warnings.insert(0, "invalid UTF-8: undecodable bytes were replaced with U+FFFD")
    warnings.extend(
        f"chunk {c.id} is {len(c.body):,} characters (max_chunk_size {settings.max_chunk_size:,})"
        for c in doc.chunks
        if len(c.body) > settings.max_chunk_size
    )
    locale = locale_of(doc, settings.language)
    translation = translation_key(doc.path, doc.frontmatter, locale) if locale else None
    n, digest = len(doc.chunks), doc_hash(doc.chunks, locale, translation)
    row = FileRow(tree, path, len(data), mtime_ns, sha, "ok", None, tuple(warnings), n, digest)
    return ParsedFile(row, doc)


def _opened_inside(real_root: str, fh: Any, fallback: str) -> bool:
    """Whether the file `fh` really opened is in the directory `real_root` (resolved).

    Linux names the opened file in /proc with every symlink already resolved, so its path is
    compared as it is (resolving it again was a tenth of the time spent outside the chunker);
    elsewhere `fallback`, the path that was opened, is resolved.
    """
    try:
        opened = os.readlink(f"/proc/self/fd/{fh.fileno()}")
    except OSError:
        return inside(real_root, fallback)
    return within_root(real_root, opened) is not None


def _skip(tree: str, path: str, size: int, mtime_ns: int, sha: str, status: str, why: str) -> ParsedFile:
    return ParsedFile(FileRow(tree, path, size, mtime_ns, sha, status, why, (), 0))


def parse_batch(args: tuple[str, str, list[str], ChunkSettings]) -> tuple[list[FileRow], pa.RecordBatch]:
    """Parse a batch in a worker; chunks travel back as one Arrow batch (cheap to pickle)."""
    tree, root, paths, settings = args
    real_root = os.path.realpath(root)
    parsed = [parse_file(tree, root, p, settings, real_root) for p in paths]
    batch = chunk_batch([(p.doc, p.row.mtime_ns) for p in parsed if p.doc is not None], settings.language)
    return [p.row for p in parsed], batch


FileProgress = Callable[[int, int], None]


def batch_paths(paths: Sequence[str], size: int) -> list[list[str]]:
    """`paths` in batches of about `size` files, the files that share a name in one batch.

    Versioned documentation keeps a page under one name per version (`7.4/Get-Item.md`,
    `7.5/Get-Item.md`), mostly word for word: parsed by one process one after the other, the
    copies hit that process's memos of headings and token counts (ra_build.document.memo) instead of
    each process parsing its own. A name shared by more than `size` files fills whole batches.
    """
    by_name: dict[str, list[str]] = {}
    for path in paths:
        by_name.setdefault(path.rpartition("/")[2], []).append(path)
    batches: list[list[str]] = []
    batch: list[str] = []
    for group in by_name.values():
        if batch and len(batch) + len(group) > size:
            batches.append(batch)
            batch = []
        for i in range(0, len(group), size):
            batch += group[i : i + size]
            if len(batch) >= size:
                batches.append(batch)
                batch = []
    if batch:
        batches.append(batch)
    return batches


def parse_files(
    tree: str,
    root: str,
    paths: Sequence[str],
    settings: ChunkSettings,
    workers: int | None = None,
    progress: FileProgress | None = None,
) -> tuple[list[FileRow], pa.Table]:
    """Parse `paths`, on every core when there are enough files to pay for processes.

    Returns the file rows (in `paths` order) and one table of all new chunks, each file's rows
    together, files in `batch_paths` order (`_write_shards` puts each part in path order).
    """
    workers = workers or os.cpu_count() or 1
    total = len(paths)
    # 16 batches a worker: the batch that finishes last keeps the other cores idle for its length
    # (on the powershell corpus, 884 files a batch left one core idle ~0.65 s; 442 files, ~0.3 s)
    size = max(16, total // (workers * 16)) if workers > 1 and total >= PARALLEL_MIN_FILES else 64
    batches = [(tree, root, batch, settings) for batch in batch_paths(paths, size)]
    rows: list[FileRow] = []
    chunks: list[pa.RecordBatch] = []

    def collect(result: tuple[list[FileRow], pa.RecordBatch]) -> None:
        rows.extend(result[0])
        chunks.append(result[1])
        if progress is not None:
            progress(len(rows), total)

    if workers < 2 or total < PARALLEL_MIN_FILES:
        for batch in batches:
            collect(parse_batch(batch))
    else:
        import multiprocessing

        encoding()  # load the BPE ranks once, before the fork, instead of once per worker
        ctx = multiprocessing.get_context("fork")
        pool_args = {"initializer": worker_init, "initargs": (os.getpid(),)}
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, **pool_args) as pool:
            for result in pool.map(parse_batch, batches):
                collect(result)
    order = {path: i for i, path in enumerate(paths)}
    rows.sort(key=lambda row: order[row.path])
    return rows, pa.Table.from_batches(chunks, schema=CHUNK_SCHEMA)


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


ParseFiles = Callable[..., tuple[list[FileRow], pa.Table]]  # parse_files or its stand-in


def chunk_stage(
    tree: TreeConfig,
    layout: Layout,
    settings: ChunkSettings,
    progress: FileProgress | None = None,
    parse: ParseFiles = parse_files,
) -> ChunkStats:
    """Bring `tree`'s chunk and file tables up to date with its snapshot.

    `parse` parses the files that changed (`parse_files`: this machine's cores; a cluster
    build passes its own, ra_build.pipeline.cluster), with `parse_files`' arguments and result.
    """
    snap = read_snapshot(layout, tree.name)
    paths = [p for p, _, _ in snap["files"]]
    if settings.header_language == "auto" and any(p.lower().endswith(".h") for p in paths):
        # a tree without headers never re-chunks for this
        settings = dataclasses.replace(settings, header_language=header_language_of(paths))
    previous = {r.path: r for r in read_file_rows(layout.file_table(tree.name))}
    if _last_settings(layout, tree.name) != _settings_key(settings):
        previous = {}  # made under other settings: parse every file again, from empty shards
        shutil.rmtree(layout.chunk_dir(tree.name), ignore_errors=True)
        (layout.chunks_dir / f"{tree.name}.parquet").unlink(missing_ok=True)  # chunker 1's table
    current = {p: (size, mtime) for p, size, mtime in snap["files"]}

    rows_out: list[FileRow] = []
    to_parse: list[str] = []
    for path, (size, mtime) in current.items():
        prev = previous.get(path)
        if prev is not None and prev.status != "error" and prev.size == size and prev.mtime_ns == mtime:
            rows_out.append(prev)
        else:
            to_parse.append(path)
    parsed_rows, new_table = parse(tree.name, snap["root"], to_parse, settings, progress=progress)

    unchanged: set[str] = set()  # touched but identical: keep the old chunks, record the new mtime
    parsed_paths: list[str] = []  # files chunked anew this run
    for row in parsed_rows:
        prev = previous.get(row.path)
        if prev is not None and prev.status == row.status == "ok" and prev.sha256 == row.sha256:
            unchanged.add(row.path)
            row = FileRow(**{**_fields(row), "doc_hash": prev.doc_hash})
        elif row.status == "ok":
            parsed_paths.append(row.path)
        rows_out.append(row)
    gone = set(previous) - set(current)
    # a file discovery skips (a link out of the tree) keeps an error row, written anew each run:
    # it did not leave the tree; only what had chunks must leave the chunk table
    removed = tuple(sorted(gone - {p for p, _why in snap.get("skipped", [])}))
    dropped = {p for p in gone if previous[p].status == "ok"}
    replaced = {r.path for r in parsed_rows if r.path not in unchanged} | dropped
    if unchanged:
        new_table = new_table.filter(~pc.field("path").isin(sorted(unchanged)))
    _write_shards(layout, tree.name, replaced, new_table)

    walk_errors = [FileRow(tree.name, p, 0, 0, "", "error", why, (), 0) for p, why in snap.get("skipped", [])]
    rows_out.sort(key=lambda r: r.path)
    write_file_table(layout.file_table(tree.name), [*rows_out, *walk_errors])
    stats = ChunkStats(
        tree=tree.name,
        parsed=tuple(parsed_paths),
        reused=len(rows_out) - len(parsed_paths),
        removed=removed,
        files=sum(1 for r in rows_out if r.status == "ok"),
        chunks=sum(r.chunks for r in rows_out if r.status == "ok"),
        skipped=sum(1 for r in rows_out if r.status != "ok") + len(walk_errors),
        problems=tuple(
            f"{tree.name}:{row.path}: {why}"
            for row in parsed_rows
            for why in ((row.error,) if row.error else row.warnings)
        )
        + tuple(f"{tree.name}:{r.path}: {r.error}" for r in walk_errors),
    )
    # files discovery saw but the chunk stage could not read: the next build tries them again
    retry = sorted(r.path for r in rows_out if r.status == "error")
    record = {**orjson.loads(orjson.dumps(stats)), "settings": _settings_key(settings), "retry": retry}
    write_bytes(layout.stats(tree.name), orjson.dumps(record, option=orjson.OPT_INDENT_2))
    return stats


def nothing_to_retry(layout: Layout, tree: str) -> bool:
    """True unless the last chunk stage of `tree` could not read some file (doit's `uptodate`).

    Making a file readable changes neither its size nor its mtime, so the snapshot cannot tell;
    an unreadable file is tried again at every build until it can be read or is gone.
    """
    try:
        return not orjson.loads(layout.stats(tree).read_bytes()).get("retry")
    except (OSError, orjson.JSONDecodeError, AttributeError):
        return False


def _settings_key(settings: ChunkSettings) -> dict[str, object]:
    return {name: getattr(settings, name) for name in settings.__dataclass_fields__}


def _last_settings(layout: Layout, tree: str) -> object:
    """The settings the last chunk stage of `tree` ran with (None when unknown)."""
    try:
        return orjson.loads(layout.stats(tree).read_bytes()).get("settings")
    except (OSError, orjson.JSONDecodeError, AttributeError):
        return None


def _fields(row: FileRow) -> dict[str, Any]:
    return {name: getattr(row, name) for name in row.__dataclass_fields__}


def merge_sorted(old: pa.Table, replaced: set[str], new: pa.Table) -> pa.Table:
    """`old` minus the rows of `replaced` paths, plus `new`, in path order — by zero-copy slices.

    Both tables are sorted by path with each path's rows contiguous, so a one-file edit costs a
    few binary searches instead of a sort that copies every body.
    """
    if old.num_rows == 0:
        return new
    old_paths: list[str] = old.column("path").to_pylist()
    new_paths: list[str] = new.column("path").to_pylist()
    spans = ((bisect_left(old_paths, p), bisect_right(old_paths, p)) for p in replaced)
    cuts = {a: b for a, b in spans if a < b}  # paths absent from `old` cut nothing
    inserts: dict[int, list[tuple[int, int]]] = {}
    i = 0
    while i < len(new_paths):
        j = bisect_right(new_paths, new_paths[i], lo=i)
        inserts.setdefault(bisect_left(old_paths, new_paths[i]), []).append((i, j))
        i = j
    points = sorted({0, len(old_paths), *cuts, *cuts.values(), *inserts})
    pieces: list[pa.Table] = []
    for a, b in zip(points, [*points[1:], None], strict=True):
        pieces += [new.slice(x, y - x) for x, y in inserts.get(a, [])]
        if b is not None and cuts.get(a) != b and b > a:
            pieces.append(old.slice(a, b - a))
    return pa.concat_tables(pieces) if pieces else CHUNK_SCHEMA.empty_table()


def _write_shards(layout: Layout, tree: str, replaced: set[str], new: pa.Table) -> None:
    """Apply the replaced paths and new rows to the shards they fall in; leave the rest alone.

    `new` holds each file's rows together, files in any order; each shard gets its own rows in
    path order, copied shard by shard (each writing thread holds one shard's copies, never a
    copy of all of `new`: a first build's rows are all of its chunks).
    The shards are written on threads: Parquet encoding and zstd release the GIL, and on a first
    build writing sixteen shards one by one took two seconds while the workers sat idle.
    """
    shard_ids: list[int] = []  # the shard of each row of `new`
    for path, start, end in _file_runs(new.column("path").to_pylist()):
        shard_ids += [shard_of(path)] * (end - start)
    shard_column = pa.array(shard_ids, pa.int8())
    gone: dict[int, set[str]] = {}
    for path in replaced:
        gone.setdefault(shard_of(path), set()).add(path)
    first = not layout.chunk_dir(tree).exists()
    with_rows = set(shard_ids)
    affected = set(range(SHARDS)) if first else set(gone) | with_rows

    def write(shard: int) -> None:
        if shard in with_rows:
            # `filter` copies per batch of `new`; a stable sort keeps each file's chunk order
            in_shard = pc.call_function("equal", [shard_column, pa.scalar(shard, pa.int8())])
            part = new.filter(in_shard).sort_by("path")
        else:
            part = CHUNK_SCHEMA.empty_table()
        target = layout.chunk_shard(tree, shard)
        old = read_chunk_table([target])
        write_chunk_table(target, merge_sorted(old, gone.get(shard, set()), part))
        del part, old
        pa.default_memory_pool().release_unused()

    with ThreadPoolExecutor(max_workers=min(len(affected), os.cpu_count() or 1) or 1) as pool:
        list(pool.map(write, sorted(affected)))  # list(): a failed write raises here


def _file_runs(paths: list[str]) -> Iterator[tuple[str, int, int]]:
    """(path, start, end) for each run of equal paths: each file's chunk rows."""
    start = 0
    for i in range(1, len(paths) + 1):
        if i == len(paths) or paths[i] != paths[start]:
            yield paths[start], start, i
            start = i

"""`ra update --cluster SPEC`: the same build, with its heavy work done by Dask workers.

The client (the `ra update` process) runs the usual doit task graph under the usual build lock
(`ra_build.pipeline.run.run_build`): discovery, the chunk stage's bookkeeping, the index
stage's plan, publishing and the manifest all happen here, exactly as in a plain build. Two things move to
the cluster:

- parsing: the files a chunk stage must parse go out in batches (`chunk_stage.batch_paths`: files
  that share a name together), as tasks that read the bytes through fsspec and call ra's own
  `chunk_stage.parse_data`; their file rows and Arrow chunks come back and the chunk stage writes
  the tables as it always does, so they equal a plain build's;
- shard builds: each index shard a run must write goes out with its rows (and, for an
  incremental job, the shard's current files); a worker writes it with `shards.write_shard` in
  a temp directory of its own and sends back the files that are new. Workers never need the
  artifact directory. The client puts each shard together in `.index-shards/NN.new` and swaps
  it in only once every shard has come back; then the index stage publishes as usual.

A worker lost mid-build fails the build with a `ClusterError` before anything readers open
has changed: the previous generation stays readable and the next `ra update` (either kind)
carries on. ra's own `local:N` cluster does not retry a task whose worker died (Dask's
`allowed-failures` is 0: a local worker dies of something a retry repeats, such as memory);
a `tcp://` scheduler applies its own retry policy, then fails the same way.

Nothing here imports Dask, distributed or fsspec at module level, and nothing else in ra
imports this module except `ra update --cluster`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ra_build.artifacts.atomic import swap_in_directory
from ra_build.artifacts.tables import FileRow, chunk_batch
from ra_build.pipeline.chunk_stage import (
    ChunkSettings,
    FileProgress,
    ParsedFile,
    batch_paths,
    parse_data,
    parse_file,
    too_large,
    unreadable,
)
from ra_build.pipeline.embed_stage import local_embed
from ra_build.pipeline.publish import link_or_copy
from ra_build.pipeline.shards import BATCH_ROWS, ShardJob, job_batches, write_shard
from ra_query.artifacts.paths import TANTIVY_LOCKS  # never copied
from ra_query.errors import ClusterError, InputError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from distributed import Client

    from ra_build.config.model import Config
    from ra_build.pipeline.progress import ProgressBar
    from ra_build.pipeline.run import BuildReport

EXTRA = "pip install 'ra-kb[dask]'"
EMBED_BATCH = 256  # texts per embed task: a worker pays the model's load once, a task ~1-3 s
BATCH_FILES = 256  # files per parse task: small enough to spread, large enough to pay for a task
CONNECT_SECONDS = 10
SPEC_HELP = "local:N (N worker processes on this machine) or tcp://HOST:PORT (a running Dask scheduler)"
_TCP = re.compile(r"tcp://(?P<host>[^:/\s]+|\[[0-9A-Fa-f:]+\]):(?P<port>\d{1,5})")


@dataclass(frozen=True, slots=True)
class ClusterSpec:
    """Where the work goes: `workers` local processes, or the scheduler at `address`."""

    text: str
    workers: int = 0
    address: str = ""


def parse_spec(text: str) -> ClusterSpec:
    """The cluster `text` names (`local:N` or `tcp://HOST:PORT`); InputError otherwise."""
    if text.startswith("local:"):
        count = text.removeprefix("local:")
        if count.isdigit() and 1 <= int(count) <= 1024:
            return ClusterSpec(text, workers=int(count))
        raise InputError(f"--cluster {text!r}: N must be a whole number from 1 to 1024 — use {SPEC_HELP}")
    match = _TCP.fullmatch(text)
    if match and 1 <= int(match["port"]) <= 65535:
        return ClusterSpec(text, address=text)
    raise InputError(f"--cluster {text!r} is not a cluster — use {SPEC_HELP}")


def cluster_build(
    config: Config,
    artifacts: Path,
    spec: str,
    *,
    full: bool = False,
    wait: bool = True,
    progress: ProgressBar | None = None,
    notify: Callable[[str], None] | None = None,
) -> BuildReport:
    """`run_build` with parsing and shard builds on the cluster `spec` names.

    The build lock is taken first: a busy artifact directory is reported (`--no-wait`) or
    waited for before any cluster starts.
    """
    from ra_build.artifacts.layout import Layout
    from ra_build.pipeline.lock import BuildLock
    from ra_build.pipeline.run import run_build

    cluster = parse_spec(spec)
    with BuildLock(Layout(artifacts.resolve()), wait=wait, notify=notify), connect(cluster) as client:
        engine = Engine(client, cluster.text)
        return run_build(
            config,
            artifacts,
            full=full,
            progress=progress,
            parse=engine.parse,
            run_shards=engine.run_shards,
            embed=engine.embed,
            locked=True,
        )


@contextlib.contextmanager
def connect(spec: ClusterSpec) -> Iterator[Client]:
    """A client of the cluster `spec` names; a `local:N` cluster is started and closed here."""
    try:
        import dask.config
        import fsspec  # noqa: F401  (the workers read through it: missing, say so now)
        from distributed import Client, LocalCluster
    except ImportError:
        raise ClusterError(f"ra update --cluster needs Dask — install it with: {EXTRA}") from None
    quiet = logging.DEBUG if os.environ.get("RA_DEBUG") else logging.CRITICAL
    # ra reports a failed cluster build in one line; Dask's own logs would bury it
    logging.getLogger("distributed").setLevel(quiet)
    if spec.workers:
        # the scheduler reads its retry policy when it is made
        with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
            try:
                local = LocalCluster(
                    n_workers=spec.workers,
                    threads_per_worker=1,
                    processes=True,
                    memory_limit=0,  # ra's own processes, as in a plain build: never paused or killed
                    dashboard_address=":0",  # a free port: None still takes 8787, and warns when taken
                    silence_logs=quiet,
                )
            except (RuntimeError, OSError, TimeoutError) as exc:  # what distributed raises for it
                raise ClusterError(
                    f"cannot start {spec.workers} local Dask workers ({_why(exc)}) — "
                    "RA_DEBUG=1 shows Dask's log; ra update without --cluster builds here"
                ) from None
        with local, Client(local) as client:
            yield client
        return
    try:
        client = Client(spec.address, timeout=CONNECT_SECONDS)
    except (OSError, TimeoutError) as exc:
        raise ClusterError(
            f"cannot reach the Dask scheduler at {spec.address} ({_why(exc)}) — start it "
            "(dask scheduler; dask worker ADDRESS on each machine) or check the address"
        ) from None
    with client:
        yield client


def _why(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


# ── parsing ─────────────────────────────────────────────────────────────────────────────────


def read_and_parse(tree: str, root: str, path: str, settings: ChunkSettings, real_root: str) -> ParsedFile:
    """`chunk_stage.parse_file` for a worker. A local tree is read exactly as a plain build reads it
    (the same function); a tree at a URL is read through fsspec (any file system it knows), then
    ra's own `parse_data` chunks the bytes.

    `real_root` is `root` with its symlinks resolved (for a local tree)."""
    if "://" not in root:
        return parse_file(tree, root, path, settings, real_root)
    import fsspec

    size = mtime_ns = 0
    try:
        target: Any = fsspec.open(f"{root.rstrip('/')}/{path}", "rb")
        size, mtime_ns = _remote_stat(target.fs, target.path)  # the size decides, as in parse_file
        if size > settings.max_file_size:
            return too_large(tree, path, size, mtime_ns, settings)
        with target as fh:
            data = fh.read()
    except OSError as exc:
        return unreadable(tree, path, size, mtime_ns, exc)
    return parse_data(tree, path, data, mtime_ns, settings)


def _remote_stat(fs: Any, path: str) -> tuple[int, int]:
    """(size, mtime in ns) of `path` on a file system other than the local one (mtime 0 where
    the file system keeps none)."""
    size = int(fs.size(path))
    try:
        return size, int(fs.modified(path).timestamp() * 1_000_000_000)
    except (NotImplementedError, AttributeError):
        return size, 0


def parse_task(
    tree: str, root: str, paths: list[str], settings: ChunkSettings
) -> tuple[list[FileRow], pa.RecordBatch]:
    """One parse task: its files' rows and their chunks as one Arrow batch."""
    real_root = root if "://" in root else os.path.realpath(root)
    parsed = [read_and_parse(tree, root, p, settings, real_root) for p in paths]
    batch = chunk_batch([(p.doc, p.row.mtime_ns) for p in parsed if p.doc is not None], settings.language)
    return [p.row for p in parsed], batch


def embed_task(texts: list[str]) -> npt.NDArray[np.float32]:
    """One embed task: this worker's model (loaded on its first task) over `texts`."""
    from ra_query.semantic.embed import embedder

    return embedder().embed(texts)


# ── shard builds ────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class ShardWork:
    """What a worker needs to write one shard: the job, its rows, the shard's current files."""

    stemmer: str
    fresh: bool
    deletes: tuple[str, ...]
    rows: pa.Table | None
    files: dict[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ShardResult:
    """A written shard: chunks added, every file it has, the bytes of those new or changed."""

    added: int
    names: tuple[str, ...]
    changed: dict[str, bytes]


def shard_task(work: ShardWork) -> ShardResult:
    """One shard build, in a temp directory of the worker's own."""
    with tempfile.TemporaryDirectory(prefix="ra-shard-") as tmp:
        directory = Path(tmp) / "shard"
        directory.mkdir()
        for name, data in work.files.items():
            (directory / name).write_bytes(data)
        batches = work.rows.to_batches(max_chunksize=BATCH_ROWS) if work.rows is not None else []
        added = write_shard(directory, work.stemmer, batches, deletes=work.deletes, fresh=work.fresh)
        names = sorted(n for n in os.listdir(directory) if n not in TANTIVY_LOCKS)
        changed = {}
        for name in names:
            data = (directory / name).read_bytes()
            if work.files.get(name) != data:
                changed[name] = data
        return ShardResult(added, tuple(names), changed)


# ── the client side ─────────────────────────────────────────────────────────────────────────


class Engine:
    """The stand-ins for `chunk_stage.parse_files`, `shard_workers.run_jobs` and
    `embed_stage.local_embed` that a cluster build passes to `run_build`; every wait on the
    cluster turns its failures into a `ClusterError`."""

    def __init__(self, client: Client, name: str) -> None:
        self.client = client
        self.name = name

    @contextlib.contextmanager
    def _waiting(self, what: str) -> Iterator[None]:
        from concurrent.futures import CancelledError

        from distributed import KilledWorker

        try:
            yield
        except (KilledWorker, CancelledError, OSError, TimeoutError) as exc:
            raise ClusterError(
                f"the cluster {self.name} failed while {what} ({_why(exc)}) — nothing was published: "
                "the previous index is still readable; run ra update again (with or without --cluster)"
            ) from None

    def parse(
        self,
        tree: str,
        root: str,
        paths: Sequence[str],
        settings: ChunkSettings,
        progress: FileProgress | None = None,
    ) -> tuple[list[FileRow], pa.Table]:
        """`parse_files` on the cluster: rows in `paths` order, chunks in `batch_paths` batches."""
        from distributed import as_completed

        from ra_build.artifacts.tables import CHUNK_SCHEMA

        # at least sixteen tasks when there are files enough, so every worker gets some
        batches = batch_paths(paths, max(16, min(BATCH_FILES, len(paths) // 16)))
        by_path: dict[str, FileRow] = {}
        chunks: list[pa.RecordBatch] = []
        with self._waiting(f"parsing tree {tree}"):
            futures = [self.client.submit(parse_task, tree, root, b, settings, pure=False) for b in batches]
            results: dict[Any, tuple[list[FileRow], pa.RecordBatch]] = {}
            for future in as_completed(futures):
                results[future.key] = future.result()
                by_path.update((row.path, row) for row in results[future.key][0])
                if progress is not None:
                    progress(len(by_path), len(paths))
        for future in futures:
            chunks.append(results[future.key][1])
        rows = [by_path[p] for p in paths]
        self.check_reachable(tree, root, rows)
        return rows, pa.Table.from_batches(chunks, schema=CHUNK_SCHEMA)

    def embed(
        self, texts: Sequence[str], progress: Callable[[int], None] | None = None
    ) -> npt.NDArray[np.float32]:
        """`local_embed` on the cluster: batches of texts embedded by the workers, rows in order.

        Every worker loads the model ra ships (the semantic extra must be installed where the
        workers run) once, and keeps it for the next batch.
        """
        import numpy as np
        from distributed import as_completed

        size = max(EMBED_BATCH, len(texts) // 64)
        batches = [list(texts[i : i + size]) for i in range(0, len(texts), size)]
        done = 0
        with self._waiting("embedding chunks"):
            futures = [self.client.submit(embed_task, batch, pure=False) for batch in batches]
            results: dict[Any, npt.NDArray[np.float32]] = {}
            for future in as_completed(futures):
                results[future.key] = future.result()
                done += len(results[future.key])
                if progress is not None:
                    progress(done)
        return np.concatenate([results[f.key] for f in futures]) if futures else local_embed([], None)

    def check_reachable(self, tree: str, root: str, rows: list[FileRow]) -> None:
        """Fail when no worker could open any file that this machine sees: the sources are
        not mounted where the workers run, and the build would publish an empty tree."""
        missing = "cannot read: No such file or directory"
        lost = all(r.status == "error" and (r.error or "").startswith(missing) for r in rows)
        if rows and lost and os.path.exists(os.path.join(root, rows[0].path)):
            raise ClusterError(
                f"the workers of {self.name} cannot read tree {tree}'s files at {root} — "
                "mount the sources at the same path on every worker, or build without --cluster"
            )

    def run_shards(self, jobs: Sequence[ShardJob]) -> list[int]:
        """`run_jobs` on the cluster; the new shards replace the old only once all are back."""
        from distributed import as_completed

        if not jobs:
            return []
        shards_dir = Path(jobs[0].directory).parent
        for leftover in shards_dir.iterdir() if shards_dir.is_dir() else ():  # a killed build's
            if leftover.suffix in (".new", ".old"):
                shutil.rmtree(leftover, ignore_errors=True)
        ready: dict[str, Path] = {}
        added: dict[str, int] = {}
        try:
            with self._waiting("sending the index shards"):
                # every shard's data is on the cluster before any shard task starts
                works = [self.client.scatter(_shard_work(job), hash=False) for job in jobs]
                futures = {
                    self.client.submit(shard_task, work, pure=False): job
                    for work, job in zip(works, jobs, strict=True)
                }
            for future in as_completed(list(futures)):
                job = futures[future]
                with self._waiting("building the index shards"):
                    result: ShardResult = future.result()
                ready[job.directory] = _assemble(Path(job.directory), result)
                added[job.directory] = result.added
        except BaseException:
            for staged in ready.values():
                shutil.rmtree(staged, ignore_errors=True)
            raise
        for directory, staged in ready.items():
            # readers never open shards (only the published index, whose files are links of its
            # own), and a shard lost half-way is rebuilt next time
            swap_in_directory(staged, Path(directory))
        return [added[job.directory] for job in jobs]


def _shard_work(job: ShardJob) -> ShardWork:
    """A shard job made self-contained: its rows read here, its current files if it has any."""
    batches = list(job_batches(job.parts))
    rows = pa.Table.from_batches(batches) if batches else None
    files: dict[str, bytes] = {}
    if not job.fresh:
        directory = Path(job.directory)
        kept = (p for p in directory.iterdir() if p.is_file() and p.name not in TANTIVY_LOCKS)
        files = {p.name: p.read_bytes() for p in kept}
    return ShardWork(job.stemmer, job.fresh, job.deletes, rows, files)


def _assemble(directory: Path, result: ShardResult) -> Path:
    """The shard `result` describes, in `directory`.new: unchanged files linked, new ones written."""
    staged = directory.with_name(f"{directory.name}.new")
    shutil.rmtree(staged, ignore_errors=True)
    staged.mkdir(parents=True)
    for name in result.names:
        if name in result.changed:
            with open(staged / name, "wb") as fh:
                fh.write(result.changed[name])
                os.fsync(fh.fileno())
        else:
            link_or_copy(directory / name, staged / name)
    return staged

"""The doit task graph of a build: discover → chunk → index → manifest.

`make_tasks(config, artifacts)` returns `task_*` generators for a doit namespace. The repo's
`dodo.py`, a user's own `dodo.py`, `ra update` and the refresh before a search all run these
same tasks; `run_build` is the programmatic entry used by the CLI.

Each stage declares its inputs as `file_dep`, its outputs as `targets`, and the settings it
reads through `config_changed(...)`, so doit re-runs exactly the stages a change affects.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import fcntl
import functools
import io
import os
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson
from doit.tools import config_changed

from ra_build.artifacts.layout import Layout
from ra_build.config.fingerprint import config_hash, index_settings, search_defaults, tree_settings
from ra_build.config.load import Config
from ra_build.pipeline.chunk_stage import (
    ChunkSettings,
    FileProgress,
    ParseFiles,
    chunk_stage,
    discover_stage,
    nothing_to_retry,
    parse_files,
)
from ra_build.pipeline.index_stage import RunJobs, index_stage
from ra_build.pipeline.manifest import manifest_stage
from ra_build.pipeline.progress import ProgressBar
from ra_build.pipeline.workers import LOCK_FDS
from ra_query.artifacts.paths import MANIFEST_NAME
from ra_query.errors import BusyError, ConfigError, RaError, UnwritableError


def _call(fn: Callable[..., Any], *args: Any) -> Callable[[], dict[str, Any]]:
    """Wrap a stage so doit saves its result as task values (and never sees a falsy return)."""

    def action() -> dict[str, Any]:
        try:
            result = fn(*args)
        except RaError as exc:
            _RAISED.append(exc)  # run_build re-raises it with its own message and exit code
            raise
        except (OSError, ValueError, sqlite3.Error) as exc:
            # tantivy reports a failed write as a ValueError; the probe tells a full disk
            failure = write_failure(_ARTIFACTS[-1], exc) if _ARTIFACTS else None
            if failure is None:
                raise
            _RAISED.append(failure)
            raise failure from exc
        return {"result": orjson.loads(orjson.dumps(result, default=_plain))}

    action.__name__ = fn.__name__
    return action


def _plain(obj: Any) -> Any:
    if hasattr(obj, "__slots__"):
        return {k: getattr(obj, k) for k in obj.__slots__}
    raise TypeError


_RAISED: list[RaError] = []
_ARTIFACTS: list[Path] = []  # the artifact directory of the build under way (for its errors)
# errors that mean "this directory cannot take these writes", each with what to do about it
_WRITE_ERRNOS = {
    errno.ENOSPC: "free some space",
    errno.EDQUOT: "free some space (the disk quota is used up)",
    errno.EFBIG: "raise the file size limit (ulimit -f)",
    errno.EROFS: "build on a writable file system with --artifacts DIR",
    errno.EACCES: "make it writable by this user, or build elsewhere with --artifacts DIR",
    errno.EPERM: "make it writable by this user, or build elsewhere with --artifacts DIR",
}
PROBE_BYTES = 1 << 20  # a build that cannot write this much more is out of space


def write_failure(root: Path, exc: BaseException) -> UnwritableError | None:
    """The one-line error for a build that could not write `root`, or None when `exc` is not that.

    An OSError says why by its errno. doit's state database (sqlite) and tantivy's writer do
    not, so for them the directory itself is tried: is there room, can a file be written.
    """
    code = exc.errno if isinstance(exc, OSError) else _probe(root)
    if code not in _WRITE_ERRNOS:
        return None
    kept = "; the previous index is still readable" if (root / MANIFEST_NAME).exists() else ""
    return UnwritableError(
        f"cannot write the artifacts in {root}: {os.strerror(code)}",
        f"{_WRITE_ERRNOS[code]}, then run ra update again{kept}",
    )


def _probe(root: Path) -> int | None:
    """The errno that writing `PROBE_BYTES` into `root` fails with now (None: it succeeds)."""
    try:
        stats = os.statvfs(root)
        if stats.f_bavail * stats.f_frsize < PROBE_BYTES:
            return errno.ENOSPC
        probe = root / f".write-probe-{os.getpid()}"
        try:
            with open(probe, "wb") as fh:
                fh.write(b"\0" * PROBE_BYTES)
                fh.flush()
                os.fsync(fh.fileno())
        finally:
            probe.unlink(missing_ok=True)
    except OSError as exc:
        return exc.errno
    return None


_HELD: list[BuildLock] = []  # locks a dodo.py takes for the life of its doit process


def make_tasks(
    config: Config,
    artifacts: Path,
    *,
    lock: bool = True,
    file_progress: FileProgress | None = None,
    parse: ParseFiles = parse_files,
    run_shards: RunJobs | None = None,
) -> dict[str, Any]:
    """doit task generators that build `config`'s trees into the directory `artifacts`.

    With `lock` (the default, for a dodo.py run by the `doit` command), the artifact
    directory's build lock is taken now and held until the process exits, so `doit` and
    `ra update` never write the same artifacts at once. `run_build` holds the lock itself.
    `parse` and `run_shards` do the two stages' heavy work, on this machine's cores by
    default; `ra update --cluster` passes its cluster's (ra_build.pipeline.cluster).
    """
    layout = Layout(artifacts.resolve())
    layout.root.mkdir(parents=True, exist_ok=True)  # doit opens its state database there
    if lock:
        _HELD.append(BuildLock(layout, wait=True, notify=_stderr).__enter__())
    trees = list(config.trees.values())
    names = [t.name for t in trees]
    chunk_settings = ChunkSettings(config.settings.max_file_size, config.settings.max_chunk_size)

    def task_discover() -> Iterator[dict[str, Any]]:
        """Walk each tree; snapshot path, size and mtime of every matching file."""
        for tree in trees:
            yield {
                "name": tree.name,
                "actions": [_call(discover_stage, tree, layout)],
                "targets": [str(layout.snapshot(tree.name)), str(layout.stat_table(tree.name))],
                "uptodate": [False],
                "verbosity": 0,
            }

    def task_chunk() -> Iterator[dict[str, Any]]:
        """Parse and chunk new or changed files of each tree into its Parquet tables."""
        for tree in trees:
            yield {
                "name": tree.name,
                "actions": [
                    _call(
                        chunk_stage,
                        tree,
                        layout,
                        dataclasses.replace(chunk_settings, outside_links=tree.outside_links),
                        file_progress,
                        parse,
                    )
                ],
                "file_dep": [str(layout.snapshot(tree.name))],
                "targets": [str(layout.file_table(tree.name)), str(layout.stats(tree.name))],
                "uptodate": [
                    config_changed(tree_settings(tree, config)),
                    functools.partial(nothing_to_retry, layout, tree.name),
                ],
                "verbosity": 0,
            }

    def task_index() -> dict[str, Any]:
        """Replace changed documents' chunks in the tantivy index and commit."""
        return {
            "actions": [
                _call(
                    index_stage,
                    layout,
                    names,
                    config.search.stemmer,
                    config.settings.index_shards or None,
                    run_shards,
                )
            ],
            # the file tables carry each document's hash: they change whenever chunks do
            "file_dep": [str(layout.file_table(n)) for n in names],
            "targets": [str(layout.index_state), str(layout.index_meta)],
            "uptodate": [config_changed(index_settings(config))],
            "verbosity": 0,
        }

    def task_manifest() -> dict[str, Any]:
        """Write manifest.json: format version, versions, config hash, counts, checksums."""
        chash = config_hash(config)
        search = search_defaults(config)
        return {
            "actions": [_call(manifest_stage, layout, names, chash, config.search.stemmer, search)],
            "file_dep": [str(layout.index_state)] + [str(layout.file_table(n)) for n in names],
            "targets": [str(layout.manifest)],
            "uptodate": [config_changed({"config_hash": chash, "search": search})],
            "verbosity": 0,
        }

    return {
        "task_discover": task_discover,
        "task_chunk": task_chunk,
        "task_index": task_index,
        "task_manifest": task_manifest,
        "DOIT_CONFIG": {
            "dep_file": str(layout.doit_db),
            "backend": "sqlite3",  # transactional: a killed build cannot corrupt it
            "default_tasks": ["discover", "chunk", "index", "manifest"],
        },
    }


@dataclass
class BuildReport:
    """Which tasks ran and which were up to date, plus each stage's own result."""

    executed: list[str] = field(default_factory=list)
    up_to_date: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # one line each
    details: list[str] = field(default_factory=list)  # with tracebacks, for RA_DEBUG
    results: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0


def _one_line(fail: Any) -> str:
    """The exception line of a doit failure (its last traceback line), not the traceback."""
    lines = [
        line.strip() for line in "".join(getattr(fail, "traceback", "") or "").splitlines() if line.strip()
    ]
    return lines[-1] if lines else str(getattr(fail, "message", fail)).strip().splitlines()[0]


def _recording_reporter(report: BuildReport, progress: ProgressBar | None) -> type:
    class Reporter:
        desc = "records task outcomes for ra"

        def __init__(self, outstream: IO[str], options: dict[str, Any]) -> None:
            self.outstream = outstream

        def initialize(self, tasks: Any, selected_tasks: Any) -> None: ...
        def get_status(self, task: Any) -> None: ...

        def execute_task(self, task: Any) -> None:
            if progress is not None and task.actions:
                progress.stage(task.name)

        def add_failure(self, task: Any, fail: Any) -> None:
            report.failures.append(f"{task.name}: {_one_line(fail)}")
            report.details.append(fail.get_msg())

        def add_success(self, task: Any) -> None:
            if not task.actions:
                return  # a group task ("chunk" over "chunk:docs", …) does no work itself
            report.executed.append(task.name)
            if task.values:
                report.results[task.name] = task.values.get("result")

        def skip_uptodate(self, task: Any) -> None:
            if task.actions:
                report.up_to_date.append(task.name)

        def skip_ignore(self, task: Any) -> None: ...
        def cleanup_error(self, exception: Any) -> None:
            report.failures.append(str(exception))

        def runtime_error(self, msg: str) -> None:
            report.failures.append(msg)

        def teardown_task(self, task: Any) -> None: ...
        def complete_run(self) -> None: ...

    return Reporter


class _DoitTraceback(io.TextIOBase):
    """stderr while doit runs: passes everything on, except the traceback doit prints for an
    exception of its own (such as a full disk under its state database), which it keeps."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.exception: BaseException | None = None

    def write(self, text: str) -> int:
        raised = sys.exc_info()[1]
        if raised is not None and text.startswith("Traceback (most recent call last):"):
            self.exception = raised  # doit writes traceback.format_exc() from its except block
            return len(text)
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()


class BuildLock:
    """An exclusive lock on an artifact directory, so two builds never write at once."""

    def __init__(self, layout: Layout, *, wait: bool, notify: Callable[[str], None] | None) -> None:
        self.layout = layout
        self.wait = wait
        self.notify = notify
        self._fh: IO[bytes] | None = None

    def __enter__(self) -> BuildLock:
        try:
            self.layout.root.mkdir(parents=True, exist_ok=True)
            fh = open(self.layout.lock, "a+b")
        except OSError as exc:
            raise write_failure(self.layout.root, exc) or exc from None
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not self.wait:
                fh.close()
                raise BusyError(
                    f"another ra update is writing {self.layout.root} — wait for it to finish "
                    "(ra update without --no-wait waits)"
                ) from None
            if self.notify:
                self.notify(f"waiting for another ra update to finish writing {self.layout.root}")
            fcntl.flock(fh, fcntl.LOCK_EX)
        self._fh = fh
        LOCK_FDS.add(fh.fileno())  # forked workers close it (ra_build.pipeline.workers)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fh is not None:
            LOCK_FDS.discard(self._fh.fileno())
            fcntl.flock(self._fh, fcntl.LOCK_UN)
            self._fh.close()


def run_build(
    config: Config,
    artifacts: Path,
    *,
    full: bool = False,
    wait: bool = True,
    progress: ProgressBar | None = None,
    notify: Callable[[str], None] | None = None,
    parse: ParseFiles = parse_files,
    run_shards: RunJobs | None = None,
    locked: bool = False,
) -> BuildReport:
    """Run the task graph for `config` into `artifacts` under the build lock.

    `parse` and `run_shards` as for `make_tasks`. `locked`: the caller holds the build lock
    already (`BuildLock`; a cluster build takes it before it starts the cluster).
    """
    from doit.cmd_base import ModuleTaskLoader
    from doit.doit_cmd import DoitMain

    if not config.trees:
        raise ConfigError("no trees configured — add a [tree.NAME] section to .ra.toml (ra init)")
    layout = Layout(artifacts.resolve())
    report = BuildReport()
    started = time.perf_counter()
    with contextlib.nullcontext() if locked else BuildLock(layout, wait=wait, notify=notify):
        if full:
            _forget(layout)
        elif not _state_db_usable(layout):
            layout.doit_db.unlink()
        namespace = make_tasks(
            config,
            layout.root,
            lock=False,
            file_progress=progress.files if progress else None,
            parse=parse,
            run_shards=run_shards,
        )
        namespace["DOIT_CONFIG"] = {
            **namespace["DOIT_CONFIG"],
            "reporter": _recording_reporter(report, progress),
            "verbosity": 0,
        }
        _RAISED.clear()
        _ARTIFACTS[:] = [layout.root]
        doit_error = _DoitTraceback(sys.stderr)
        try:
            with contextlib.redirect_stderr(doit_error):
                code = DoitMain(ModuleTaskLoader(namespace), config_filenames=()).run(["run"])
        finally:
            _ARTIFACTS.clear()
            if progress is not None:
                progress.finish()
    report.seconds = time.perf_counter() - started
    if _RAISED:
        raise _RAISED[0]
    if doit_error.exception is not None:  # doit's own work failed: its state database, mostly
        raise write_failure(layout.root, doit_error.exception) or doit_error.exception
    if code != 0 and not report.failures:
        report.failures.append(f"doit exited with {code}")
    return report


def _state_db_usable(layout: Layout) -> bool:
    """False when doit's state file exists but is not a database doit can open.

    An older ra kept it as JSON, and a disk-full or foreign write can corrupt it; every stage
    is incremental on its own, so starting doit's state afresh costs little and loses nothing.
    """

    if not layout.doit_db.exists():
        return True
    try:
        with contextlib.closing(sqlite3.connect(f"file:{layout.doit_db}?mode=ro", uri=True)) as conn:
            conn.execute("select count(*) from sqlite_master").fetchone()
    except sqlite3.DatabaseError:
        return False
    return True


def _forget(layout: Layout) -> None:
    """Drop the incremental state so that every stage runs from scratch (ra update --full).

    Only build state goes: doit's, the index stage's record of what the index holds, and each
    chunk table's record of its settings (so every file is parsed again). What readers open
    (the index, the manifest, the stat tables) stays until the rebuild replaces it.
    """
    for path in (layout.doit_db, layout.index_state):
        path.unlink(missing_ok=True)
    for suffix in ("", ".bak", ".dat", ".dir", ".db"):
        Path(str(layout.doit_db) + suffix).unlink(missing_ok=True)
    if layout.chunks_dir.exists():
        for record in layout.chunks_dir.glob("*.stats.json"):
            record.unlink()


def _stderr(message: str) -> None:
    print(f"ra: {message}", file=sys.stderr)

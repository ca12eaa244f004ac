"""Running the build: the task graph under the build lock, with what ran reported back.

`run_build` is what `ra update`, the refresh before a search and `ra update --cluster` call: it
takes the lock, runs ra_build.pipeline.graph's tasks with doit's own engine, and returns a
`BuildReport` (which tasks ran, which were up to date, each stage's result, the failures). An
error a user can fix (a full disk, a bad file) is raised as the `RaError` that says so.
"""

from __future__ import annotations

import contextlib
import io
import sqlite3
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ra_build.artifacts.layout import Layout
from ra_build.artifacts.writable import write_failure
from ra_build.config.model import Config
from ra_build.pipeline.chunk_stage import ParseFiles, parse_files
from ra_build.pipeline.embed_stage import EmbedTexts
from ra_build.pipeline.graph import StageErrors, make_tasks
from ra_build.pipeline.index_stage import RunJobs
from ra_build.pipeline.lock import BuildLock
from ra_build.pipeline.progress import ProgressBar
from ra_query.errors import ConfigError


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
    embed: EmbedTexts | None = None,
) -> BuildReport:
    """Run the task graph for `config` into `artifacts` under the build lock.

    `parse`, `run_shards` and `embed` as for `make_tasks`. `locked`: the caller holds the build lock
    already (`BuildLock`; a cluster build takes it before it starts the cluster).
    """
    from doit.cmd_base import ModuleTaskLoader
    from doit.doit_cmd import DoitMain

    if not config.trees:
        raise ConfigError("no trees configured — add a [tree.NAME] section to .ra.toml (ra init)")
    layout = Layout(artifacts.resolve())
    report = BuildReport()
    errors = StageErrors(layout.root)
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
            errors=errors,
            chunk_progress=progress.chunks if progress else None,
            embed=embed,
        )
        namespace["DOIT_CONFIG"] = {
            **namespace["DOIT_CONFIG"],
            "reporter": _recording_reporter(report, progress),
            "verbosity": 0,
        }
        doit_error = _DoitTraceback(sys.stderr)
        try:
            with contextlib.redirect_stderr(doit_error):
                code = DoitMain(ModuleTaskLoader(namespace), config_filenames=()).run(["run"])
        finally:
            if progress is not None:
                progress.finish()
    report.seconds = time.perf_counter() - started
    if errors.raised:
        raise errors.raised[0]
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

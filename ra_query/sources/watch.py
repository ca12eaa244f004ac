"""Watching the sources, so a long-running server checks freshness only after something changed.

`ra mcp` and `ra-query mcp` answer many calls in one process. Counting changed files on every
call is a stat per source file (tens of ms on 14k files, minutes on a million); a watcher
(watchfiles: inotify, FSEvents, ReadDirectoryChangesW, or polling where none works) instead
raises a flag when anything under a tree changes, and a call pays for the full check only then.

The flag is conservative: any event marks the sources as changed (the full check then decides),
and until the watcher is running, or when it cannot run at all (no watchfiles, too many
directories for the kernel's watch limit), `changed()` answers True, so every call checks as it
would without a watcher. An event reaches the flag `STEP_MS` to ten times that after the write
(watchfiles' step and debounce), later on a busy machine: a call in between sees the old state.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

STEP_MS = 2  # how long the watcher waits for more events before it reports what it saw
STOP_POLL_MS = 200  # how often an idle watcher looks at its stop flag


class SourceWatch:
    """A background thread watching `roots`; `changed()` says whether anything happened since
    the last call of `changed()`. Close it (or use it as a context manager) to stop the thread."""

    def __init__(self, roots: Iterable[str]) -> None:
        import os

        self.roots = sorted({str(r) for r in roots})
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self._dirty = True  # nothing is known until the watcher runs: check
        self._failed = False
        self._thread = threading.Thread(target=self._run, name="ra-source-watch", daemon=True)
        if self.roots and all(os.path.isdir(r) for r in self.roots):
            self._thread.start()
        else:
            self._failed = True  # nothing to watch, or a tree that is not there: check every call
            self._ready.set()

    def _run(self) -> None:
        try:
            from watchfiles import watch

            for _changes in watch(
                *self.roots,
                debounce=STEP_MS * 10,
                step=STEP_MS,
                stop_event=self._stop,
                rust_timeout=STOP_POLL_MS,
                yield_on_timeout=True,  # an empty batch: the watcher is up (the first one)
                raise_interrupt=False,
                ignore_permission_denied=True,
            ):
                self._ready.set()
                if _changes:
                    with self._lock:
                        self._dirty = True
        except Exception:  # watching is an optimisation: fall back to checking always
            self._failed = True
        finally:
            self._ready.set()

    @property
    def watching(self) -> bool:
        """True while the watcher runs (events then reach `changed()`)."""
        return self._ready.is_set() and not self._failed and self._thread.is_alive()

    def wait_ready(self, timeout: float) -> bool:
        """Wait until the watcher has started (or failed); True when it is watching."""
        self._ready.wait(timeout)
        return self.watching

    def changed(self) -> bool:
        """True when the sources may have changed since the last call (always, without a watcher)."""
        if not self.watching:
            return True
        with self._lock:
            dirty, self._dirty = self._dirty, False
        return dirty

    def close(self) -> None:
        """Stop the watcher thread and wait for it."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def __enter__(self) -> SourceWatch:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

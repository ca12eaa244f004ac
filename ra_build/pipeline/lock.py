"""The build lock: one build at a time writes an artifact directory.

`ra update`, the refresh before a search, `ra update --cluster` and a `doit` run of a dodo.py all
take it on `<artifacts>/.lock` (an exclusive flock), so they never write the same artifacts at
once. Forked workers close it (ra_build.pipeline.workers), so a killed build never leaves it held.
"""

from __future__ import annotations

import fcntl
from collections.abc import Callable
from typing import IO

from ra_build.artifacts.layout import Layout
from ra_build.artifacts.writable import write_failure
from ra_build.pipeline.workers import LOCK_FDS
from ra_query.errors import BusyError


class BuildLock:
    """An exclusive lock on an artifact directory, so two builds never write at once."""

    def __init__(self, layout: Layout, *, wait: bool, notify: Callable[[str], None] | None) -> None:
        self.layout = layout
        self.wait = wait
        self.notify = notify
        self._fh: IO[bytes] | None = None
        self._fd = -1  # the descriptor in LOCK_FDS while the lock is held

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
        self._fh, self._fd = fh, fh.fileno()
        LOCK_FDS.add(self._fd)  # forked workers close it (ra_build.pipeline.workers)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fh is not None:
            LOCK_FDS.discard(self._fd)
            fcntl.flock(self._fh, fcntl.LOCK_UN)
            self._fh.close()
            self._fh, self._fd = None, -1

    def __del__(self) -> None:
        # a lock dropped without __exit__ (a dodo.py's tasks let go) is released here; its
        # descriptor number, soon another file's, must not be closed by forked workers
        LOCK_FDS.discard(self._fd)
        if self._fh is not None:
            self._fh.close()

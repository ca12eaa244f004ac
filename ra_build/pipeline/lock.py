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

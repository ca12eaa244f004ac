"""A one-line progress bar for `ra update` on a terminal (stderr only, never when piped)."""

from __future__ import annotations

import shutil
import sys
import time
from typing import TextIO


class ProgressBar:
    """Redraws `stage [#####.....] done/total files` in place; finish() clears the line."""

    def __init__(self, stream: TextIO = sys.stderr, min_interval: float = 0.1) -> None:
        self.stream = stream
        self.min_interval = min_interval
        self._last = 0.0
        self._stage = ""
        self._drawn = False

    def stage(self, name: str) -> None:
        """A doit task started."""
        self._stage = name
        self._draw(f"{name} …", force=True)

    def files(self, done: int, total: int) -> None:
        """Progress of the chunk stage: `done` of `total` files parsed."""
        self.items(done, total, "files")

    def chunks(self, done: int, total: int) -> None:
        """Progress of the embed stage: `done` of `total` chunks embedded."""
        self.items(done, total, "chunks")

    def items(self, done: int, total: int, unit: str) -> None:
        """`done` of `total` things of the running stage."""
        width = max(10, min(40, shutil.get_terminal_size((80, 20)).columns - 40))
        filled = width * done // max(total, 1)
        self._draw(
            f"{self._stage} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} {unit}",
            force=done == total,
        )

    def _draw(self, text: str, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < self.min_interval:
            return
        self._last = now
        columns = shutil.get_terminal_size((80, 20)).columns
        self.stream.write("\r\x1b[2K" + text[: columns - 1])
        self.stream.flush()
        self._drawn = True

    def finish(self) -> None:
        """Clear the bar so the summary line starts clean."""
        if self._drawn:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()

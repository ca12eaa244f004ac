"""Why an artifact directory cannot take a build's writes, said in one line with what to do.

A build that runs out of space or permission fails somewhere inside a stage, doit's state
database or tantivy's writer; each reports it its own way. `write_failure` turns any of them
into one `UnwritableError` (exit 2) that names the directory, the cause and the remedy.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from ra_query.artifacts.paths import MANIFEST_NAME
from ra_query.errors import UnwritableError

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

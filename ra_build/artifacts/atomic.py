"""Atomic file writes: write a sibling temp file, fsync, rename over the target."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

# mkstemp creates 0600 files; artifacts must stay readable by whoever may read the target
_UMASK = os.umask(0)
os.umask(_UMASK)
_MODE = 0o666 & ~_UMASK


@contextlib.contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """Yield a temp path beside `target`; on success it replaces `target` in one rename."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    os.chmod(tmp, _MODE)
    try:
        yield tmp
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def write_bytes(target: Path, data: bytes) -> None:
    """Atomically replace `target` with `data`."""
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)


def write_if_changed(target: Path, data: bytes) -> bool:
    """Atomically write `data` unless `target` already holds exactly it; True if written."""
    try:
        if target.read_bytes() == data:
            return False
    except OSError:
        pass
    write_bytes(target, data)
    return True


def write_with(target: Path, writer: Callable[[Path], None]) -> None:
    """Atomically produce `target` by calling `writer(tmp_path)`."""
    with atomic_path(target) as tmp:
        writer(tmp)


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _exchange(a: Path, b: Path) -> bool:
    """Swap the names `a` and `b` in one step (Linux renameat2); False where that is not offered."""
    import ctypes

    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if renameat2 is None:
        return False
    return renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0


def swap_in_directory(new: Path, target: Path) -> None:
    """Put the directory `new` where `target` is, and delete what was there.

    Where the kernel and filesystem can exchange two names atomically, a reader opening
    `target` meets the old tree or the new one, never neither; elsewhere the gap is two renames.
    """
    import shutil

    if not target.exists():
        os.rename(new, target)
        return
    if _exchange(new, target):
        shutil.rmtree(new, ignore_errors=True)  # now the old tree; the swap is done either way
        return
    old = target.with_name(f"{target.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    os.rename(target, old)
    os.rename(new, target)
    shutil.rmtree(old, ignore_errors=True)

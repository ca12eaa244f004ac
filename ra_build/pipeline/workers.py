"""Worker processes that never outlive the build that forked them (issue 10).

The chunk stage forks workers. A forked child inherits every open file descriptor, the build
lock's among them, and a flock is released only when the last descriptor of it closes: so a
`ra update` killed with SIGKILL left its workers holding `.ra/.lock`, and every later build
waited forever. Workers therefore close the lock descriptors they inherit, and ask the kernel to
kill them when their parent dies (Linux `PR_SET_PDEATHSIG`); a worker whose parent is already
gone leaves at once.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

# descriptors a forked worker must not keep open: the build locks held by this process
LOCK_FDS: set[int] = set()
_PR_SET_PDEATHSIG = 1


def worker_init(parent: int) -> None:
    """Run first in every forked worker: drop inherited locks, die with `parent`."""
    for fd in list(LOCK_FDS):
        with contextlib.suppress(OSError):
            os.close(fd)
    LOCK_FDS.clear()
    if sys.platform.startswith("linux"):
        # no prctl here: the lock is released all the same, the worker just lingers
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)

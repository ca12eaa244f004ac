"""Work done in a forked child while the parent goes on, its answer read back through a pipe.

`ra-query search` forks the stale count (ra_query.sources.stale) before its heavy imports: the
child runs on the other core while the parent imports, opens the index and ranks by BM25, so
its cost hides behind the parent's. Only `os` is imported: the stale count forks before
anything else is loaded. Fork only where no other thread runs: a fork copies the calling thread
alone, and locks held by others would stay locked in the child.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing is not imported here: see the module docstring
if TYPE_CHECKING:
    from collections.abc import Callable


def fork_with_pipe(work: Callable[[], object]) -> tuple[int, int]:
    """Fork a process that writes `str(work())` to a pipe; (pid, read end), or (-1, -1).

    The process leaves with `os._exit` (no exit handlers, no flushing of inherited buffers);
    an exception in `work` leaves the pipe empty.
    """
    try:
        read_end, write_end = os.pipe()
    except OSError:
        return -1, -1
    try:
        pid = os.fork()
    except (AttributeError, OSError):  # AttributeError: no fork on this platform
        os.close(read_end)
        os.close(write_end)
        return -1, -1
    if pid == 0:
        code = 0
        try:
            os.close(read_end)
            os.write(write_end, str(work()).encode())
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(write_end)
    return pid, read_end


def reap(pid: int) -> None:
    """Wait for a child; a caller that set SIGCHLD to SIG_IGN has it reaped already."""
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def read_all(fd: int) -> str:
    """Everything written to the pipe `fd` until its writers close it; closes `fd`."""
    chunks: list[bytes] = []
    while block := os.read(fd, 65536):
        chunks.append(block)
    os.close(fd)
    return b"".join(chunks).decode()


def kill(pid: int, read_end: int, group: bool = False) -> None:
    """Stop a child whose answer is not wanted (its process group too, when it has one), close
    its pipe and reap it."""
    targets = ((os.killpg, pid), (os.kill, pid)) if group else ((os.kill, pid),)
    for signal, target in targets:
        try:
            signal(target, 9)  # SIGKILL (the signal module is not imported here)
            break
        except OSError:
            continue  # no such group yet: signal the child alone
    os.close(read_end)
    reap(pid)

"""Work done in a forked child while the parent goes on, its answer read back through a pipe.

`ra-query search` forks the stale count (ra_query.sources.stale) before its heavy imports: the
child runs on the other core while the parent imports, opens the index and ranks by BM25, so
its cost hides behind the parent's. Only `os` is imported: the stale count forks before
anything else is loaded. Fork only where no other thread runs: a fork copies the calling thread
alone, and locks held by others would stay locked in the child.

`ra mcp` and `ra-query mcp` fork a `Helper` the same way: a child that answers the parent's
requests one at a time (the MCP tools' calls), opening the index while the parent loads the
MCP SDK.
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


class Helper:
    """A forked child answering the parent's requests one at a time: JSON messages, each a
    length line and its text, through a pipe each way.

    The child runs `main(helper)`, where `receive()` is the parent's next request (None once the
    parent closed its end) and `send()` writes a reply, and leaves when `main` returns (its own
    exit handlers run, not the parent's, then `os._exit`). Its stdout is pointed at stderr (the
    parent's stdout may carry a protocol) and its stdin at /dev/null, and it ignores SIGINT: an
    interrupt stops the parent, whose closed pipe ends the child. Without fork, `forked` is
    False and nothing runs.
    """

    def __init__(self, main: Callable[[Helper], object]) -> None:
        self.pid = -1
        self._read = self._write = -1
        try:
            down, up = os.pipe(), os.pipe()  # parent → child, child → parent
        except OSError:
            return
        try:
            pid = os.fork()
        except (AttributeError, OSError):  # AttributeError: no fork on this platform
            for fd in (*down, *up):
                os.close(fd)
            return
        if pid == 0:
            os.close(down[1])
            os.close(up[0])
            self._read, self._write = down[0], up[1]
            _run_child(main, self)
        os.close(down[0])
        os.close(up[1])
        self.pid, self._read, self._write = pid, up[0], down[1]

    @property
    def forked(self) -> bool:
        """True in the parent of a running child (and in the child)."""
        return self._write >= 0

    def send(self, message: object) -> None:
        """Write one message (JSON; ASCII, so a lone surrogate crosses too).

        Raises:
            OSError: the other side is gone (BrokenPipeError).
        """
        import json

        data = json.dumps(message).encode()
        view = memoryview(b"%d\n" % len(data) + data)
        while view:
            view = view[os.write(self._write, view) :]

    def receive(self) -> object:
        """The next message, or None once the other side closed its end (or is gone)."""
        import json

        header = b""
        while not header.endswith(b"\n"):
            byte = os.read(self._read, 1)
            if not byte:
                return None
            header += byte
        size = int(header)
        chunks: list[bytes] = []
        while size:
            block = os.read(self._read, min(size, 1 << 20))
            if not block:
                return None
            chunks.append(block)
            size -= len(block)
        return json.loads(b"".join(chunks))

    def fileno(self) -> int:
        """The end the replies (the child's messages) are read from: wait on it to be readable."""
        return self._read

    def pending(self) -> bool:
        """True when a message is waiting to be read (or the other side closed its end)."""
        import select

        return bool(select.select([self._read], [], [], 0)[0])

    def stop(self) -> None:
        """Kill the child, whatever it is doing, and reap it; closes this end."""
        if not self.forked:
            return
        os.close(self._write)
        kill(self.pid, self._read)
        self._read = self._write = -1

    def close(self) -> None:
        """Close this end and wait for the child to finish what it is doing and leave."""
        if not self.forked:
            return
        os.close(self._write)
        os.close(self._read)
        self._read = self._write = -1
        reap(self.pid)


def _run_child(main: Callable[[Helper], object], helper: Helper) -> None:
    """The child's life: its stdio away from the parent's protocol, `main`, its own exit
    handlers (not the parent's, which it inherited), then `os._exit`."""
    import atexit

    code = 0
    try:
        import signal

        atexit._clear()  # pyright: ignore[reportPrivateUsage]  # the parent runs its own
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        os.dup2(2, 1)
        main(helper)
    except BaseException:  # a bug of ours (`main` answers every error it expects)
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        atexit._run_exitfuncs()  # pyright: ignore[reportPrivateUsage]  # e.g. store.py's temp-dir cleanup
        os._exit(code)

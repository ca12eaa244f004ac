"""Reading a file a user names on the command line, and telling text from binary.

`ra inspect doc FILE` and `ra context FILE...` read files that may not exist, be directories or
be unreadable: each case is one `InputError` naming the file and what to do. The build, the
inspector and the context reader all decide "binary" the same way, by `looks_binary`.
"""

from __future__ import annotations

BINARY_SNIFF = 8192  # the bytes looked at: a NUL among them makes the file binary


def looks_binary(data: bytes) -> bool:
    """True when the first `BINARY_SNIFF` bytes hold a NUL: ra skips such a file as binary."""
    return b"\0" in data[:BINARY_SNIFF]


def read_named(path: str, shown: str, *, limit: int = -1, missing: str = "", directory: str = "") -> bytes:
    """The bytes of the file at `path` (at most `limit`), which the user named `shown`.

    `missing` and `directory` say what to do when it is not there or is a directory (a dash
    and the advice, or nothing).

    Raises:
        InputError: no such file, a directory, or unreadable (with the system's reason).
    """
    from ra_query.errors import InputError

    try:
        with open(path, "rb") as handle:
            return handle.read(limit)
    except FileNotFoundError:
        raise InputError(f"{shown}: no such file{missing}") from None
    except IsADirectoryError:
        raise InputError(f"{shown}: is a directory{directory}") from None
    except OSError as exc:
        raise InputError(f"{shown}: cannot read ({exc.strerror})") from None

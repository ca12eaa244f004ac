"""The stat table: the files discovery saw of a tree, in a form that loads fast.

The build writes `chunks/<tree>.stat` beside the JSON snapshot; `ra-query`'s stale count reads
it (ra_query.sources.stale). The same (path, size, mtime) rows as two arrays of little-endian
int64 and the paths, which load in a third of the time the JSON takes:

    b"ra-stat1", count (uint64), sizes (count x int64), mtimes (count x int64), paths (UTF-8, NUL-separated)

Only `sys` is imported at module level (`array` when a table is encoded or decoded): the stale
count reads tables before anything else is loaded.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing is not imported here: see the module docstring
if TYPE_CHECKING:
    from array import array
    from collections.abc import Iterable

STAT_MAGIC = b"ra-stat1"


def encode_stat_table(rows: Iterable[tuple[str, int, int]]) -> bytes:
    """The stat table of (path, size, mtime_ns) rows, as the build writes it."""
    import array

    paths: list[str] = []
    sizes, mtimes = array.array("q"), array.array("q")
    for path, size, mtime_ns in rows:
        paths.append(path)
        sizes.append(size)
        mtimes.append(mtime_ns)
    if sys.byteorder == "big":
        sizes.byteswap()
        mtimes.byteswap()
    names = "\0".join(paths).encode("utf-8", "surrogateescape")  # undecodable names round-trip
    return STAT_MAGIC + len(paths).to_bytes(8, "little") + sizes.tobytes() + mtimes.tobytes() + names


def decode_stat_table(data: bytes) -> tuple[list[str], array[int], array[int]] | None:
    """(paths, sizes, mtimes) of a stat table, or None when `data` is not a whole one."""
    import array

    if data[:8] != STAT_MAGIC or len(data) < 16:
        return None
    count = int.from_bytes(data[8:16], "little")
    names_at = 16 + 16 * count
    if len(data) < names_at:
        return None
    sizes, mtimes = array.array("q"), array.array("q")
    sizes.frombytes(data[16 : 16 + 8 * count])
    mtimes.frombytes(data[16 + 8 * count : names_at])
    if sys.byteorder == "big":
        sizes.byteswap()
        mtimes.byteswap()
    paths = data[names_at:].decode("utf-8", "surrogateescape").split("\0") if count else []
    return (paths, sizes, mtimes) if len(paths) == count else None

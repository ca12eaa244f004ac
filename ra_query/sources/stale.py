"""How many source files changed since the artifacts were built (DECISIONS 25).

`ra-query search` reports `stale: N files changed since the build`. The count compares the
snapshot the build took of every tree (path, size, mtime of each file; the mtime of each
directory) with the sources as they are now: one stat per file and per directory, and a fresh
listing only of directories whose mtime moved (an added, removed or renamed file changes it).
In trees of more than `STAT_EVERY_FILE_UP_TO` files only the files of moved directories are
stat'ed, so the count costs one stat per directory plus what changed.

The file list is read from `chunks/<tree>.stat`, the stat table the build writes beside the JSON
snapshot (ra_query.artifacts.stat_table, a third of the JSON's load time); the JSON snapshot is
used when it is absent.

Cold start is a measured floor (bench/query.py), and the stat calls are most of the cost, so
`ra-query` forks this check before it imports anything else: the child runs on the other core
while the parent imports, opens the index and searches. That is why this module imports only
`os` at module level, and of ra only the artifact names and the stat table (`json`, which pulls
in `re`, is imported just before the fork: the search needs it too). It reads only; it never
writes.
"""

from __future__ import annotations

import os

from ra_query.artifacts.paths import MANIFEST_NAME, dirs_path, snapshot_path, stat_table_path
from ra_query.artifacts.stat_table import decode_stat_table
from ra_query.forked import fork_with_pipe, kill, read_all, reap

TYPE_CHECKING = False  # typing is not imported here: see the module docstring
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any, cast

    Files = tuple[list[str], Sequence[int], Sequence[int]]  # paths, sizes, mtimes: one row each
else:

    def cast(_type: object, value: object) -> object:
        return value


# Past this many source files (all trees together) a file is stat'ed only when its directory's
# mtime moved: the count stays bounded by what changed, at the cost of not seeing a file
# rewritten in place in a directory nothing was added to or removed from (the MCP servers'
# watcher and `ra update` still see it). Below it, every file is stat'ed (~25 ms per 14k files).
STAT_EVERY_FILE_UP_TO = 100_000


def _load(path: str) -> object:
    """The JSON in `path`, or None when it is missing or unreadable."""
    import json

    try:
        with open(path, "rb") as handle:
            return json.loads(handle.read())
    except (OSError, ValueError):
        return None


def _strings(value: object) -> list[str] | None:
    if not isinstance(value, list):
        return None
    items = cast("list[object]", value)
    return [s for s in items if isinstance(s, str)] if all(isinstance(s, str) for s in items) else None


def _pairs(value: object) -> list[tuple[str, int]] | None:
    """A JSON list of [text, number] pairs (the snapshot's dirs), or None when it is not one."""
    if not isinstance(value, list):
        return None
    pairs: list[tuple[str, int]] = []
    for item in cast("list[object]", value):
        if not isinstance(item, list) or len(cast("list[object]", item)) != 2:
            return None
        text, number = cast("list[object]", item)
        if not isinstance(text, str) or not isinstance(number, int):
            return None
        pairs.append((text, number))
    return pairs


class _Tree:
    """One tree as the build saw it: where its sources are, its globs, its files and directories."""

    __slots__ = (
        "default_excludes", "dirs", "exclude", "gitignore", "include", "mtimes", "name", "outside_links",
        "paths", "sizes", "top",
    )  # fmt: skip

    def __init__(
        self,
        name: str,
        top: str,
        include: list[str],
        exclude: list[str],
        files: tuple[list[str], Sequence[int], Sequence[int]],
        dirs: list[tuple[str, int]] | None,
        outside_links: bool = False,
        skips: tuple[bool, bool] = (True, True),
    ) -> None:
        self.name, self.top, self.include, self.exclude = name, top, include, exclude
        self.outside_links = outside_links  # the tree's allow_outside_links, as the build walked
        self.default_excludes, self.gitignore = skips  # what the build's walk skipped, likewise
        self.paths, self.sizes, self.mtimes = files  # of every file the build saw, row by row
        self.dirs = dirs  # (relative dir, mtime_ns) of every directory it walked; None: no record

    def half(self, second: bool) -> tuple[str, list[str], Sequence[int], Sequence[int]]:
        """(top, paths, sizes, mtimes) of the first or second half of the files."""
        cut = slice(len(self.paths) // 2, None) if second else slice(None, len(self.paths) // 2)
        return self.top, self.paths[cut], self.sizes[cut], self.mtimes[cut]


def _files(root: str, name: str) -> tuple[list[str], Sequence[int], Sequence[int]] | None:
    """(paths, sizes, mtimes) the build recorded for a tree: its stat table, else its snapshot."""
    try:
        with open(stat_table_path(root, name), "rb") as handle:
            table = decode_stat_table(handle.read())
    except OSError:
        table = None
    if table is not None:
        return table
    snapshot = _load(snapshot_path(root, name))
    rows = cast("dict[str, object]", snapshot).get("files") if isinstance(snapshot, dict) else None
    if not isinstance(rows, list):
        return None
    paths: list[str] = []
    sizes: list[int] = []
    mtimes: list[int] = []
    for row in cast("list[object]", rows):
        if not isinstance(row, list) or len(cast("list[object]", row)) != 3:
            return None
        path, size, mtime_ns = cast("list[object]", row)
        if not isinstance(path, str) or not isinstance(size, int) or not isinstance(mtime_ns, int):
            return None
        paths.append(path)
        sizes.append(size)
        mtimes.append(mtime_ns)
    return paths, sizes, mtimes


def _tree(root: str, name: str, sources: Mapping[str, Any], recorded: Files | None = None) -> _Tree | None:
    """What the build recorded of one tree; None when it cannot be compared with the sources.

    `recorded`: the (paths, sizes, mtimes) to compare with instead of the stat table, with no
    directory record (the tree is walked whole for new files).
    """
    top = sources.get("root")
    include = _strings(sources.get("include"))
    exclude = _strings(sources.get("exclude"))
    if not isinstance(top, str) or include is None or exclude is None or not os.path.isdir(top):
        return None  # no record, or artifacts moved away from their sources: nothing to compare with
    outside_links = sources.get("outside_links") is True
    skips = (sources.get("default_excludes") is not False, sources.get("gitignore") is not False)
    if recorded is not None:
        return _Tree(name, top, include, exclude, recorded, None, outside_links, skips)
    files = _files(root, name)
    if files is None:
        return None
    dirs = _pairs(_load(dirs_path(root, name)))
    return _Tree(name, top, include, exclude, files, dirs, outside_links, skips)


def _trees(
    root: str, manifest: Mapping[str, Any], recorded: Mapping[str, Files] | None = None
) -> list[_Tree] | None:
    """Every tree of the build, or None when some tree cannot be compared with its sources."""
    trees: object = manifest.get("trees")
    if not isinstance(trees, dict):
        return None
    found: list[_Tree] = []
    for name, entry in cast("dict[str, object]", trees).items():
        sources = cast("dict[str, object]", entry).get("sources") if isinstance(entry, dict) else None
        if not isinstance(sources, dict):
            return None
        files = recorded.get(name) if recorded is not None else None
        tree = _tree(root, name, cast("dict[str, Any]", sources), files)
        if tree is None:
            return None
        found.append(tree)
    return found


def _count_edits(top: str, paths: list[str], sizes: Sequence[int], mtimes: Sequence[int]) -> int:
    """Files modified or removed since the build: one stat each.

    This loop is most of the cost (~25 ms for 14k files), so it is kept bare.
    """
    changed = 0
    for path, size, mtime_ns in zip(paths, sizes, mtimes, strict=True):
        try:
            st = os.stat(f"{top}/{path}")
        except OSError:
            changed += 1  # removed
            continue
        if st.st_mtime_ns != mtime_ns or st.st_size != size:
            changed += 1
    return changed


def _count_new(tree: _Tree) -> int:
    """Files added to the tree since the build.

    An added (or renamed) file changes its directory's mtime, so only directories whose mtime
    moved are listed again, and a subdirectory the build never saw is walked whole. Without a
    directory record the whole tree is walked. A git ignore file the build did not read counts
    as one (the build records those it read with the files, so an edited one counts as modified).
    """
    top, record = tree.top, tree.dirs
    moved = _moved(tree)
    if record is not None and not moved:
        return 0
    from ra_query.sources.walk import walk_tree

    built = set(tree.paths)
    if record is None:
        found = walk_tree(
            tree.name,
            top,
            tree.include,
            tree.exclude,
            outside_links=tree.outside_links,
            default_excludes=tree.default_excludes,
            gitignore=tree.gitignore,
        ).files
        return sum(1 for f in found if f.path not in built)
    known = {rel for rel, _ in record}
    added = 0
    ignore_files: set[str] = set()  # git ignore files the build did not read (new): each changes the tree
    for rel in moved:
        # list this directory again, and walk whole any subdirectory the build never saw
        fresh = walk_tree(
            tree.name,
            top,
            tree.include,
            tree.exclude,
            start=rel,
            descend=lambda d: d not in known,
            outside_links=tree.outside_links,
            default_excludes=tree.default_excludes,
            gitignore=tree.gitignore,
        )
        added += sum(1 for f in fresh.files if f.path not in built)
        ignore_files.update(f.path for f in fresh.ignore_files if f.path not in built)
    return added + len(ignore_files)


def _moved(tree: _Tree) -> list[str]:
    """The directories (relative; "" is the top) whose mtime is not the one the build saw."""
    top = tree.top
    return [
        rel
        for rel, mtime in tree.dirs or ()
        if _dir_mtime(f"{top}/{rel}" if rel else top) not in (mtime, None)
    ]


def _in_moved_dirs(tree: _Tree) -> _Tree:
    """`tree` with only the files of its moved directories (what a bounded count stats)."""
    moved = set(_moved(tree))
    keep = [i for i, path in enumerate(tree.paths) if path.rpartition("/")[0] in moved]
    files = ([tree.paths[i] for i in keep], [tree.sizes[i] for i in keep], [tree.mtimes[i] for i in keep])
    skips = (tree.default_excludes, tree.gitignore)
    return _Tree(tree.name, tree.top, tree.include, tree.exclude, files, tree.dirs, tree.outside_links, skips)


def _bounded(trees: list[_Tree]) -> list[_Tree]:
    """The trees to stat file by file: all of them up to `STAT_EVERY_FILE_UP_TO` files, else
    only the files of directories whose mtime moved (see the module docstring)."""
    if sum(len(t.paths) for t in trees) <= STAT_EVERY_FILE_UP_TO:
        return trees
    return [_in_moved_dirs(t) if t.dirs is not None else t for t in trees]


def _dir_mtime(path: str) -> int | None:
    """A directory's mtime, or None when it is gone (its files were counted as removed)."""
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def stale_files(
    root: str | os.PathLike[str],
    manifest: Mapping[str, Any],
    *,
    every_file: bool = False,
    recorded: Mapping[str, Files] | None = None,
) -> int | None:
    """How many source files were added, removed or modified since the artifacts at `root` were built.

    `every_file` stats every recorded file however many there are (an exact count, not bounded
    by `STAT_EVERY_FILE_UP_TO`); `recorded` replaces the recorded files of the trees it names.

    Returns:
        The number of changed files over all trees, or None when the sources of some tree are
        not visible from here (artifacts downloaded or moved to another machine), the build's
        records are missing or malformed, or the manifest predates source recording.
    """
    trees = _trees(os.fspath(root), manifest, recorded)
    if trees is None:
        return None
    counted = trees if every_file else _bounded(trees)
    return sum(_count_edits(t.top, t.paths, t.sizes, t.mtimes) + _count_new(t) for t in counted)


def stale_state(changed: int) -> str:
    """How `ra status` and `ra-query status` say that `changed` source files changed (0: current)."""
    return f"stale ({changed} file{'s' if changed != 1 else ''} changed)" if changed else "current"


def _manifest_at(root: str) -> dict[str, Any] | None:
    manifest = _load(os.path.join(root, MANIFEST_NAME))
    return cast("dict[str, Any]", manifest) if isinstance(manifest, dict) else None


# Below this many files one process stats them about as fast as two, counting the fork.
SPLIT_AT = 2000


def _cores() -> int:
    """CPUs this process may run on (a container's affinity mask, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _count_in_two(trees: list[_Tree]) -> int | None:
    """`stale_files` for loaded trees, the stat calls shared with a forked helper process.

    Run inside the already forked check: the stat calls are most of the work, and split in two
    they finish sooner on two cores than one child alone does (bench/query.py). With few files,
    or a single core, one process does it all.
    """
    trees = _bounded(trees)
    pid, read_end = -1, -1
    if sum(len(t.paths) for t in trees) >= SPLIT_AT and _cores() >= 2:
        pid, read_end = fork_with_pipe(lambda: sum(_count_edits(*t.half(second=True)) for t in trees))
    if pid < 0:
        return sum(_count_edits(t.top, t.paths, t.sizes, t.mtimes) + _count_new(t) for t in trees)
    mine = sum(_count_edits(*t.half(second=False)) + _count_new(t) for t in trees)
    theirs = read_all(read_end)
    reap(pid)
    return mine + int(theirs) if theirs.isdigit() else None


def _stale_at(root: str, *, split: bool = False) -> int | None:
    manifest = _manifest_at(root)
    if manifest is None:
        return None
    if not split:
        return stale_files(root, manifest)
    trees = _trees(root, manifest)
    return None if trees is None else _count_in_two(trees)


def _count_in_child(root: str) -> int | None:
    """The forked check's work: detached from the caller's terminal output, in its own group."""
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    # let go of the caller's stdin/stdout/stderr: a reader waiting for their end of file must
    # not wait for this process (or its helper)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    return _stale_at(root, split=True)


class StaleCheck:
    """`stale_files` for the artifacts at `root`, running in a forked child until `result()`.

    Walking the sources is mostly waiting on stat calls; a search is mostly imports and CPU.
    Forked first thing, the walk overlaps the whole search on the other core. Where fork is not
    available the check runs inline when the result is asked for.

    Fork only where no other thread runs (the CLI starts it before anything else): a fork copies
    just the calling thread, and locks held by others would stay locked in the child.
    """

    def __init__(self, root: str) -> None:
        self.root = root
        # imported before the fork: the child needs it and `ra-query` loads it anyway, so one
        # import serves both processes (cold start is bound by the CPU time of all of them)
        import json  # noqa: F401  # pyright: ignore[reportUnusedImport]

        self._pid, self._read = fork_with_pipe(lambda: _count_in_child(root))
        if self._pid > 0:
            # its own process group, so that cancel() stops its helper too (set on both sides
            # of the fork: whichever runs first, the group exists before anyone signals it)
            try:
                os.setpgid(self._pid, self._pid)
            except OSError:
                pass  # it has already set it, or already exited

    def result(self) -> int | None:
        """The count (waiting for the child if it is still walking), or None when it cannot tell."""
        if self._pid <= 0:
            return _stale_at(self.root)
        text = read_all(self._read)
        reap(self._pid)
        self._pid, self._read = 0, -1
        return int(text) if text.isdigit() else None

    def cancel(self) -> None:
        """Stop the child and its helper (their answer is not wanted) and reap the child.

        Does nothing after `result()` or an earlier `cancel()`; ask no `result()` after this.
        """
        if self._pid <= 0:
            return
        kill(self._pid, self._read, group=True)
        self._pid, self._read = 0, -1

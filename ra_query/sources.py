"""The sources of the trees: walking a tree, and how stale the artifacts are (DECISIONS 9–10, 25).

Symlinks to files are followed; symlinks to directories are not descended into (so a symlink
loop cannot trap the walk). Dot-files and dot-directories are skipped unless a pattern names a
dot entry explicitly. Exclude wins over include. Nothing here reads file contents.

The build (`ra_build.discover`) and the read-only side share this walk, so `ra-query` counts
stale files exactly as `ra update` would find them, without importing the build.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import orjson

from ra_query.globs import compile_globs, names_dot_entry
from ra_query.schema import CHUNKS_DIR, MANIFEST_NAME


@dataclass(frozen=True, slots=True)
class FoundFile:
    """A file selected by a tree's patterns, with the stat facts incremental builds compare."""

    tree: str
    path: str  # relative to the tree root, "/"-separated
    abspath: str
    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class Skipped:
    """An entry the walk saw but could not use, with the reason (reported by `ra check`)."""

    tree: str
    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class Discovery:
    """Everything one walk of one tree found."""

    tree: str
    files: tuple[FoundFile, ...]
    skipped: tuple[Skipped, ...]
    dirs: tuple[tuple[str, int], ...] = ()  # (relative dir, mtime_ns) of every directory walked


def walk_tree(
    name: str,
    root: Path,
    include: Sequence[str],
    exclude: Sequence[str],
    *,
    start: str = "",
    descend: Callable[[str], bool] | None = None,
) -> Discovery:
    """Walk `root` and return the files matching the tree's globs, in sorted path order.

    Args:
        name: the tree's name (recorded on every result).
        root: the tree's folder.
        include: globs a file must match, relative to `root` (none: nothing is selected).
        exclude: globs that drop a file, or a whole directory when they match `dir/`.
        start: walk only below this directory (relative to `root`; paths stay relative to `root`).
        descend: when given, a subdirectory is walked only if it returns True for its path.
    """
    include_re = compile_globs(include)
    exclude_re = compile_globs(exclude)
    allow_dots = names_dot_entry(include)
    files: list[FoundFile] = []
    skipped: list[Skipped] = []
    top = str(root)
    stack = [start]
    dirs: list[tuple[str, int]] = []
    while stack:
        rel_dir = stack.pop()
        abs_dir = os.path.join(top, rel_dir) if rel_dir else top
        try:
            dirs.append((rel_dir, os.stat(abs_dir).st_mtime_ns))
            entries = list(os.scandir(abs_dir))
        except OSError as exc:
            skipped.append(Skipped(name, rel_dir or ".", f"unreadable directory: {exc.strerror}"))
            continue
        for entry in entries:
            if entry.name.startswith(".") and not allow_dots:
                continue
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                # d_type answers is_dir/is_symlink without a syscall; only candidates are stat'ed
                if entry.is_dir(follow_symlinks=False):
                    if (exclude_re is None or not exclude_re.match(rel + "/")) and (
                        descend is None or descend(rel)
                    ):
                        stack.append(rel)
                    continue
                if include_re is None or not include_re.match(rel):
                    continue
                if exclude_re is not None and exclude_re.match(rel):
                    continue
                if entry.is_symlink():
                    try:
                        st = os.stat(entry.path)
                    except OSError:
                        skipped.append(Skipped(name, rel, "broken or looping symlink"))
                        continue
                else:
                    st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                skipped.append(Skipped(name, rel, f"cannot stat: {exc.strerror}"))
                continue
            if stat.S_ISREG(st.st_mode):  # symlinks to directories and special files are skipped
                files.append(FoundFile(name, rel, entry.path, st.st_size, st.st_mtime_ns))
    files.sort(key=lambda f: f.path)
    skipped.sort(key=lambda s: s.path)
    dirs.sort()
    return Discovery(name, tuple(files), tuple(skipped), tuple(dirs))


def snapshot_path(root: Path, tree: str) -> Path:
    """Where the build recorded what discovery saw of `tree` (path, size, mtime of each file)."""
    return root / CHUNKS_DIR / f"{tree}.snapshot.json"


def dirs_path(root: Path, tree: str) -> Path:
    """Where the build recorded the mtime of every directory of `tree` it walked."""
    return root / CHUNKS_DIR / f"{tree}.dirs.json"


def _strings(value: object) -> list[str] | None:
    if not isinstance(value, list):
        return None
    items = cast(list[object], value)
    return [s for s in items if isinstance(s, str)] if all(isinstance(s, str) for s in items) else None


def _tree_changes(root: Path, tree: str, sources: Mapping[str, Any]) -> int | None:
    """Files of one tree added, removed or modified since the build; None when it cannot tell."""
    source_root = sources.get("root")
    include = _strings(sources.get("include"))
    exclude = _strings(sources.get("exclude"))
    if not isinstance(source_root, str) or include is None or exclude is None:
        return None
    folder = Path(source_root)
    if not folder.is_dir():
        return None  # artifacts moved away from their sources: nothing to compare with
    try:
        snapshot: object = orjson.loads(snapshot_path(root, tree).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(snapshot, dict):
        return None
    rows: object = cast(dict[str, object], snapshot).get("files")
    if not isinstance(rows, list):
        return None
    built: dict[str, tuple[int, int]] = {}
    for row in cast(list[object], rows):
        if isinstance(row, list) and len(cast(list[object], row)) == 3:
            path, size, mtime_ns = cast(list[Any], row)
            built[str(path)] = (int(size), int(mtime_ns))
    try:
        dirs = {str(d): int(m) for d, m in orjson.loads(dirs_path(root, tree).read_bytes())}
    except (OSError, orjson.JSONDecodeError, TypeError, ValueError):
        dirs = None
    if dirs is None:  # no directory record: walk everything
        seen = {f.path: (f.size, f.mtime_ns) for f in walk_tree(tree, folder, include, exclude).files}
        changed = sum(1 for path, facts in seen.items() if built.get(path) != facts)
        return changed + sum(1 for path in built if path not in seen)
    return _changes_since(folder, tree, include, exclude, built, dirs)


def _changes_since(
    folder: Path,
    tree: str,
    include: Sequence[str],
    exclude: Sequence[str],
    built: dict[str, tuple[int, int]],
    dirs: dict[str, int],
) -> int:
    """Changed files, statting only the files the build saw and the directories it walked.

    An edit shows in a file's size or mtime; an added, removed or renamed file also changes
    its directory's mtime, and only such directories are listed again (a new subdirectory is
    walked whole). Much cheaper than a walk: no listing and no glob test of unchanged folders.
    """
    top = str(folder)
    changed = 0
    for path, facts in built.items():
        try:
            st = os.stat(f"{top}/{path}")
        except OSError:
            changed += 1  # removed
            continue
        if (st.st_size, st.st_mtime_ns) != facts:
            changed += 1
    for rel_dir, mtime in dirs.items():
        abs_dir = f"{top}/{rel_dir}" if rel_dir else top
        try:
            if os.stat(abs_dir).st_mtime_ns == mtime:
                continue
        except OSError:
            continue  # gone: its files were counted as removed
        # list this directory again, and walk whole any subdirectory the build never saw
        fresh = walk_tree(tree, folder, include, exclude, start=rel_dir, descend=lambda d: d not in dirs)
        changed += sum(1 for found in fresh.files if found.path not in built)
    return changed


def stale_files(root: Path, manifest: Mapping[str, Any]) -> int | None:
    """How many source files were added, removed or modified since the artifacts at `root` were built.

    Compares a fresh walk of every tree's sources (as the manifest records them) with the
    snapshot the build took. Reads only; never writes.

    Returns:
        The number of changed files over all trees, or None when the sources of some tree are
        not visible from here (artifacts downloaded or moved to another machine) or the
        manifest predates source recording.
    """
    trees: object = manifest.get("trees")
    if not isinstance(trees, dict):
        return None
    total = 0
    for name, entry in cast(dict[str, object], trees).items():
        if not isinstance(entry, dict):
            return None
        sources: object = cast(dict[str, object], entry).get("sources")
        if not isinstance(sources, dict):
            return None
        changed = _tree_changes(root, name, cast(dict[str, Any], sources))
        if changed is None:
            return None
        total += changed
    return total


def stale_files_soon(root: Path) -> Callable[[], int | None]:
    """Start `stale_files` for the artifacts at `root` in a child process; return its result getter.

    Walking the sources is mostly waiting on stat calls, and a search is mostly imports and
    CPU: forked before the search starts, the walk runs on the other core and costs the search
    nothing. Falls back to walking inline where fork is not available.
    """
    try:
        manifest: object = orjson.loads((root / MANIFEST_NAME).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return lambda: None
    if not isinstance(manifest, dict):
        return lambda: None
    facts = cast(dict[str, Any], manifest)
    try:
        read_end, write_end = os.pipe()
        pid = os.fork()
    except (AttributeError, OSError):
        return lambda: stale_files(root, facts)
    if pid == 0:  # the child: walk, report, leave without running any exit handler
        code = 0
        try:
            os.close(read_end)
            os.write(write_end, str(stale_files(root, facts)).encode())
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(write_end)

    def result() -> int | None:
        chunks: list[bytes] = []
        while block := os.read(read_end, 64):
            chunks.append(block)
        os.close(read_end)
        os.waitpid(pid, 0)
        text = b"".join(chunks).decode()
        return int(text) if text.isdigit() else None

    return result

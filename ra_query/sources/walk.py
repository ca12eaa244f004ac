"""The sources of the trees: walking a tree (DECISIONS 9–10).

Symlinks to files are followed while their target stays inside the tree's root; a link whose
target resolves outside it is skipped and reported (it would put that file — `/etc/passwd` — in
the index and in every published artifact), unless the tree opts in (`allow_outside_links`);
so is a link to a file inside the tree that the walk itself would not take (excluded, or a dot
entry), so a link never brings in what the exclude patterns or the dot rule keep out. (Include
patterns select names: `README.md → README.rst` is indexed under the link's name.)
Symlinks to directories are not descended into (so a symlink loop cannot trap the walk).
Dot-files and dot-directories are skipped unless a pattern names a dot entry explicitly. Exclude
wins over include. Nothing here reads file contents.

The build (`ra_build.pipeline.discover`) and the read-only side (`ra_query.sources.stale`, for
directories that changed since the build) share this walk, so `ra-query` counts stale files exactly as
`ra update` would find them, without importing the build.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ra_query.artifacts.paths import DEFAULT_DIR
from ra_query.sources.globs import compile_globs, names_dot_entry


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
    hidden: tuple[str, ...] = ()  # dot-directories not walked (no pattern names them), relative


def walk_tree(
    name: str,
    root: str | os.PathLike[str],
    include: Sequence[str],
    exclude: Sequence[str],
    *,
    start: str = "",
    descend: Callable[[str], bool] | None = None,
    outside_links: bool = False,
) -> Discovery:
    """Walk `root` and return the files matching the tree's globs, in sorted path order.

    Args:
        name: the tree's name (recorded on every result).
        root: the tree's folder.
        include: globs a file must match, relative to `root` (none: nothing is selected).
        exclude: globs that drop a file, or a whole directory when they match `dir/`.
        start: walk only below this directory (relative to `root`; paths stay relative to `root`).
        descend: when given, a subdirectory is walked only if it returns True for its path.
        outside_links: follow a symlink whose target is outside `root` (off: skip and report it).
    """
    include_re = compile_globs(include)
    exclude_re = compile_globs(exclude)
    allow_dots = names_dot_entry(include)
    files: list[FoundFile] = []
    skipped: list[Skipped] = []
    top = os.fspath(root)
    real_top = os.path.realpath(top)
    stack = [start]
    dirs: list[tuple[str, int]] = []
    hidden: list[str] = []
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
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if entry.name.startswith(".") and not allow_dots:
                if entry.name != DEFAULT_DIR and entry.is_dir(follow_symlinks=False):  # ra's own artifacts
                    hidden.append(rel)
                continue
            try:
                # d_type answers is_dir/is_symlink without a syscall; only candidates are stat'ed
                if entry.is_dir(follow_symlinks=False):
                    if (exclude_re is None or not exclude_re.match(rel + "/")) and (
                        descend is None or descend(rel)
                    ):
                        if _utf8(entry.name):
                            stack.append(rel)
                        else:
                            skipped.append(_not_utf8(name, rel))
                    continue
                if include_re is None or not include_re.match(rel):
                    continue
                if exclude_re is not None and exclude_re.match(rel):
                    continue
                if not _utf8(entry.name):  # an id must be text: such a name cannot be one
                    skipped.append(_not_utf8(name, rel))
                    continue
                if entry.is_symlink():
                    try:
                        st = os.stat(entry.path)
                    except OSError:
                        skipped.append(Skipped(name, rel, "broken or looping symlink"))
                        continue
                    target = os.path.realpath(entry.path)
                    within = within_root(real_top, target)
                    if within is None:
                        if not outside_links:
                            skipped.append(Skipped(name, rel, outside_reason(entry.path)))
                            continue
                    elif not stat.S_ISREG(st.st_mode):
                        continue  # a link to a directory (or a device) in the tree: never followed
                    elif (why := _unwalked(within, exclude_re, allow_dots)) is not None:
                        shown = _shown(within)
                        skipped.append(Skipped(name, rel, f"symlink to {shown}, {why} — not indexed"))
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
    hidden.sort()
    return Discovery(name, tuple(files), tuple(skipped), tuple(dirs), tuple(hidden))


def within_root(real_root: str, target: str) -> str | None:
    """`target` (resolved) relative to `real_root` (resolved) with `/` separators ("" for the
    root itself), or None when it lies outside."""
    if target == real_root:
        return ""
    prefix = real_root.rstrip(os.sep) + os.sep
    if not target.startswith(prefix):
        return None
    return target[len(prefix) :].replace(os.sep, "/")


def _unwalked(rel: str, exclude_re: re.Pattern[str] | None, allow_dots: bool) -> str | None:
    """Why the walk itself would not index the file at `rel` (a symlink's target in the tree):
    an exclude pattern drops it or a directory above it, or it is a dot entry. None when the walk
    would take it. A link must not bring in what the tree's patterns keep out."""
    parts = rel.split("/") if rel else []
    if not allow_dots and any(part.startswith(".") for part in parts):
        return "a dot entry the tree does not walk"
    if exclude_re is not None:
        if exclude_re.match(rel):
            return "which the tree's exclude patterns skip"
        for depth in range(1, len(parts)):
            if exclude_re.match("/".join(parts[:depth]) + "/"):
                return "which the tree's exclude patterns skip"
    return None


def inside(real_root: str, path: str) -> bool:
    """Whether `path`, every symlink resolved, is `real_root` (already resolved) or below it."""
    return within_root(real_root, os.path.realpath(path)) is not None


def outside_reason(path: str) -> str:
    """Why a symlink out of its tree is not indexed, and how to allow it."""
    return (
        f"symlink to {_shown(os.path.realpath(path))}, outside the tree — not indexed "
        "(allow_outside_links = true in the tree's section indexes it)"
    )


def _not_utf8(tree: str, rel: str) -> Skipped:
    return Skipped(tree, _shown(rel), "name is not valid UTF-8 — rename it to index it")


def _shown(path: str) -> str:
    """`path` as text that can be written anywhere: undecodable bytes of a name become U+FFFD."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _utf8(name: str) -> bool:
    """Whether a file name decoded from the file system is real text (no undecodable bytes)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True

"""Find the files of a tree: include/exclude globs, symlink and dot-file rules (DECISIONS 9–10).

Symlinks to files are followed; symlinks to directories are not descended into (so a symlink
loop cannot trap the walk). Dot-files and dot-directories are skipped unless a pattern names a
dot entry explicitly. Exclude wins over include. Nothing here reads file contents.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from ra_build.config import TreeConfig
from ra_build.globs import compile_globs, names_dot_entry


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


def discover_tree(tree: TreeConfig) -> Discovery:
    """Walk `tree.path` and return the matching files in sorted path order."""
    include = compile_globs(tree.include)
    exclude = compile_globs(tree.exclude)
    allow_dots = names_dot_entry(tree.include)
    files: list[FoundFile] = []
    skipped: list[Skipped] = []
    root = str(tree.path)
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        abs_dir = os.path.join(root, rel_dir) if rel_dir else root
        try:
            entries = list(os.scandir(abs_dir))
        except OSError as exc:
            skipped.append(Skipped(tree.name, rel_dir or ".", f"unreadable directory: {exc.strerror}"))
            continue
        for entry in entries:
            if entry.name.startswith(".") and not allow_dots:
                continue
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                if entry.is_symlink():
                    try:
                        st = os.stat(entry.path)
                    except OSError:
                        skipped.append(Skipped(tree.name, rel, "broken or looping symlink"))
                        continue
                    if stat.S_ISDIR(st.st_mode):
                        continue  # symlinks to directories are not followed
                else:
                    st = entry.stat(follow_symlinks=False)
                    if stat.S_ISDIR(st.st_mode):
                        if exclude is None or not exclude.match(rel + "/"):
                            stack.append(rel)
                        continue
            except OSError as exc:
                skipped.append(Skipped(tree.name, rel, f"cannot stat: {exc.strerror}"))
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            if include is None or not include.match(rel):
                continue
            if exclude is not None and exclude.match(rel):
                continue
            files.append(FoundFile(tree.name, rel, os.path.join(root, rel), st.st_size, st.st_mtime_ns))
    files.sort(key=lambda f: f.path)
    skipped.sort(key=lambda s: s.path)
    return Discovery(tree.name, tuple(files), tuple(skipped))

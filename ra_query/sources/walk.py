"""The sources of the trees: walking a tree (DECISIONS 9–10).

Symlinks to files are followed while their target stays inside the tree's root; a link whose
target resolves outside it is skipped and reported (it would put that file — `/etc/passwd` — in
the index and in every published artifact), unless the tree opts in (`allow_outside_links`);
so is a link to a file inside the tree that the walk itself would not take (excluded, or a dot
entry), so a link never brings in what the exclude patterns or the dot rule keep out. (Include
patterns select names: `README.md → README.rst` is indexed under the link's name.)
Symlinks to directories are not descended into (so a symlink loop cannot trap the walk).
Dot-files and dot-directories are skipped unless a pattern names a dot entry explicitly. Exclude
wins over include. Unless the tree turns them off, the directories in `DEFAULT_EXCLUDES`
(`node_modules`, `.git`, `build`, …) are not walked wherever they are, but for a name an include
pattern spells out, and neither is what the git work tree's ignore files ignore
(ra_query.sources.gitignore: the only files read here, beside the listings).

The build (`ra_build.pipeline.discover`) and the read-only side (`ra_query.sources.stale`, for
directories that changed since the build) share this walk, so `ra-query` counts stale files exactly as
`ra update` would find them, without importing the build.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from ra_query.artifacts.paths import DEFAULT_DIR
from ra_query.sources.gitignore import GitIgnore
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
    hidden: tuple[str, ...] = ()  # dot-directories and DEFAULT_EXCLUDES not walked, relative
    ignore_files: tuple[FoundFile, ...] = ()  # the git ignore files read ("../.gitignore" above)
    truncated: bool = False  # stopped at `limit` entries


# Directories no tree wants by default: version control, dependencies, caches, build output.
DEFAULT_EXCLUDES: Final = frozenset(
    {".git", ".venv", "__pycache__", "build", "dist", "node_modules", "target", "vendor", "venv"}
)


def skipped_names(include: Sequence[str]) -> frozenset[str]:
    """The directory names the walk skips by default: `DEFAULT_EXCLUDES` but those an include
    pattern names (`vendor/acme/**/*.md` walks every `vendor/`)."""
    named = {segment for pattern in include for segment in pattern.split("/")}
    return DEFAULT_EXCLUDES - named


def walk_tree(
    name: str,
    root: str | os.PathLike[str],
    include: Sequence[str],
    exclude: Sequence[str],
    *,
    start: str = "",
    descend: Callable[[str], bool] | None = None,
    outside_links: bool = False,
    default_excludes: bool = True,
    gitignore: bool = True,
    limit: int = 0,
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
        default_excludes: skip the directories named in `DEFAULT_EXCLUDES` (see `skipped_names`).
        gitignore: skip what the git work tree's ignore files ignore (ra_query.sources.gitignore).
        limit: stop after looking at about this many entries (0: no limit; `ra init`'s scan).
    """
    walk = _Walk(name, os.fspath(root), include, exclude, outside_links, default_excludes, gitignore)
    stack = [start]
    seen = 0
    while stack and not (limit and seen >= limit):
        seen += walk.directory(stack.pop(), stack, descend)
    files = sorted(walk.files, key=lambda f: f.path)
    skipped = sorted(walk.skipped, key=lambda s: s.path)
    read = walk.ignores.read if walk.ignores is not None else []
    ignore_files = tuple(FoundFile(name, f.path, f.abspath, f.size, f.mtime_ns) for f in read)
    return Discovery(
        name, tuple(files), tuple(skipped), tuple(sorted(walk.dirs)), tuple(sorted(walk.hidden)),
        ignore_files, bool(stack),
    )  # fmt: skip


class _Walk:
    """One walk's rules and what it found so far (see `walk_tree`)."""

    def __init__(
        self,
        name: str,
        top: str,
        include: Sequence[str],
        exclude: Sequence[str],
        outside_links: bool,
        default_excludes: bool,
        gitignore: bool,
    ) -> None:
        self.name, self.top, self.outside_links = name, top, outside_links
        self.include_re = compile_globs(include)
        self.exclude_re = compile_globs(exclude)
        self.allow_dots = names_dot_entry(include)
        self.skip_names = skipped_names(include) if default_excludes else frozenset[str]()
        self.ignores = GitIgnore(top) if gitignore else None
        self.real_top = os.path.realpath(top)
        self.files: list[FoundFile] = []
        self.skipped: list[Skipped] = []
        self.dirs: list[tuple[str, int]] = []
        self.hidden: list[str] = []  # dot-directories and default excludes not walked

    def directory(self, rel_dir: str, stack: list[str], descend: Callable[[str], bool] | None) -> int:
        """List one directory: take its files, put the subdirectories to walk on `stack`; return
        how many entries it has."""
        abs_dir = os.path.join(self.top, rel_dir) if rel_dir else self.top
        try:
            self.dirs.append((rel_dir, os.stat(abs_dir).st_mtime_ns))
            entries = list(os.scandir(abs_dir))
        except OSError as exc:
            self.skipped.append(Skipped(self.name, rel_dir or ".", f"unreadable directory: {exc.strerror}"))
            return 0
        if self.ignores is not None:
            self.ignores.enter(rel_dir, {entry.name for entry in entries})
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if entry.name.startswith(".") and not self.allow_dots:
                if entry.name != DEFAULT_DIR and entry.is_dir(follow_symlinks=False):  # ra's own artifacts
                    self.hidden.append(rel)
                continue
            try:
                # d_type answers is_dir/is_symlink without a syscall; only candidates are stat'ed
                if entry.is_dir(follow_symlinks=False):
                    if self._walks_into(rel, entry.name) and (descend is None or descend(rel)):
                        if _utf8(entry.name):
                            stack.append(rel)
                        else:
                            self.skipped.append(_not_utf8(self.name, rel))
                    continue
                self._file(entry, rel)
            except OSError as exc:
                self.skipped.append(Skipped(self.name, rel, f"cannot stat: {exc.strerror}"))
        return len(entries)

    def _walks_into(self, rel: str, name: str) -> bool:
        """Whether the subdirectory at `rel` is walked: not skipped by name, by an exclude
        pattern, nor by git."""
        if name in self.skip_names:
            self.hidden.append(rel)  # reported with the dot-directories: not walked, by default
            return False
        if self.exclude_re is not None and self.exclude_re.match(rel + "/"):
            return False
        return self.ignores is None or not self.ignores.ignored(rel, True)

    def _file(self, entry: os.DirEntry[str], rel: str) -> None:
        """Take the file (or symlink) at `rel` when the tree selects it."""
        if self.include_re is None or not self.include_re.match(rel):
            return
        if self.exclude_re is not None and self.exclude_re.match(rel):
            return
        if self.ignores is not None and self.ignores.ignored(rel, False):
            return
        if not _utf8(entry.name):  # an id must be text: such a name cannot be one
            self.skipped.append(_not_utf8(self.name, rel))
            return
        if entry.is_symlink():
            try:
                st = os.stat(entry.path)
            except OSError:
                self.skipped.append(Skipped(self.name, rel, "broken or looping symlink"))
                return
            target = os.path.realpath(entry.path)
            within = within_root(self.real_top, target)
            if within is None:
                if not self.outside_links:
                    self.skipped.append(Skipped(self.name, rel, outside_reason(entry.path)))
                    return
            elif not stat.S_ISREG(st.st_mode):
                return  # a link to a directory (or a device) in the tree: never followed
            elif (why := self._unwalked(within)) is not None:
                shown = _shown(within)
                self.skipped.append(Skipped(self.name, rel, f"symlink to {shown}, {why} — not indexed"))
                return
        else:
            st = entry.stat(follow_symlinks=False)
        if stat.S_ISREG(st.st_mode):  # symlinks to directories and special files are skipped
            self.files.append(FoundFile(self.name, rel, entry.path, st.st_size, st.st_mtime_ns))

    def _unwalked(self, rel: str) -> str | None:
        """Why the walk itself would not index the file at `rel` (a symlink's target in the
        tree): a dot entry, a directory skipped by default, an exclude pattern or git drops it or
        a directory above it. None when the walk would take it. A link must not bring in what
        the tree's patterns keep out."""
        parts = rel.split("/") if rel else []
        if not self.allow_dots and any(part.startswith(".") for part in parts):
            return "a dot entry the tree does not walk"
        if any(part in self.skip_names for part in parts[:-1]):
            return "in a directory ra skips by default"
        if self.exclude_re is not None:
            if self.exclude_re.match(rel):
                return "which the tree's exclude patterns skip"
            for depth in range(1, len(parts)):
                if self.exclude_re.match("/".join(parts[:depth]) + "/"):
                    return "which the tree's exclude patterns skip"
        if self.ignores is not None and self.ignores.ignored_path(rel, False):
            return "which git ignores"
        return None


def within_root(real_root: str, target: str) -> str | None:
    """`target` (resolved) relative to `real_root` (resolved) with `/` separators ("" for the
    root itself), or None when it lies outside."""
    if target == real_root:
        return ""
    prefix = real_root.rstrip(os.sep) + os.sep
    if not target.startswith(prefix):
        return None
    return target[len(prefix) :].replace(os.sep, "/")


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

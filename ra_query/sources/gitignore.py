"""What git ignores below a tree's folder, read from the ignore files without git (gitignore(5)).

A tree inside a git work tree (a `.git` directory or file in its folder or a folder above)
skips what the repository ignores: the `.gitignore` of each directory from the work tree's top
down to the file (each applies to its own directory and below; a deeper file's patterns win
over a shallower one's), then `$GIT_DIR/info/exclude`. Within one file the last pattern that
matches decides, and `!pattern` re-includes. An ignored directory is not walked, so nothing
below it can be re-included: git's own rule. A folder with its own `.git` below the tree's folder
(a nested repository, a submodule) is a work tree of its own, whose files follow its ignore
files, not the outer ones. The tree's folder itself is never ignored: when git ignores it (a
private notes folder inside a repository), that repository's ignore files do not apply to it.

Not read, on purpose: git's index (a tracked file a pattern matches is skipped too, as
`git check-ignore --no-index` answers), `core.excludesFile` (`~/.config/git/ignore` is personal:
the index would differ from machine to machine) and `core.ignoreCase` (matching is
case-sensitive, git's default outside macOS and Windows). An ignore file that is a symlink is not
followed, as git does not follow it. Patterns match text, not bytes: `?` is one character of a
name where git counts one byte of its UTF-8.

The walk (ra_query.sources.walk) asks `GitIgnore.ignored` of every entry it would take. Each
ignore file becomes at most four regular expressions (an alternation of its patterns, the last
first), so a path costs a few matches however many patterns there are. Only the standard library.
"""

from __future__ import annotations

import itertools
import os
import re
import stat
from collections.abc import Container, Sequence
from dataclasses import dataclass

IGNORE_FILE = ".gitignore"
GIT_DIR = ".git"

# the POSIX classes of `[[:name:]]`, as ranges of ASCII (git's sane ctype)
_POSIX: dict[str, tuple[str, ...]] = {
    "alnum": ("09", "AZ", "az"),
    "alpha": ("AZ", "az"),
    "blank": ("  ", "\t\t"),
    "cntrl": ("\x00\x1f", "\x7f\x7f"),
    "digit": ("09",),
    "graph": ("!~",),
    "lower": ("az",),
    "print": (" ~",),
    "punct": ("!/", ":@", "[`", "{~"),
    "space": ("  ", "\t\n", "\r\r"),
    "upper": ("AZ",),
    "xdigit": ("09", "AF", "af"),
}


@dataclass(frozen=True, slots=True)
class Pattern:
    """One line of an ignore file, parsed: what it matches and what a match means."""

    text: str  # the line as git reads it (trailing spaces trimmed)
    glob: str  # what is matched: no `!`, no trailing `/`, no anchoring `/`
    regex: str | None  # the path (or the name, `basename`) relative to the file's folder; None: never
    negated: bool  # `!pattern`: a match re-includes
    dir_only: bool  # `pattern/`: matches directories only
    basename: bool  # no `/` but a trailing one: matches the name at any depth


def _trim(line: str) -> str:
    """`line` without its trailing spaces, but for one escaped with a backslash (git's rule)."""
    last_space = -1
    i = 0
    while i < len(line):
        c = line[i]
        if c == " ":
            if last_space < 0:
                last_space = i
        elif c == "\\":
            i += 1
            if i == len(line):
                return line
            last_space = -1
        else:
            last_space = -1
        i += 1
    return line[:last_space] if last_space >= 0 else line


def parse_pattern(line: str) -> Pattern | None:
    """The pattern one line of an ignore file holds, or None for a blank line or a comment."""
    if not line or line.startswith("#"):
        return None
    text = _trim(line)
    negated = text.startswith("!")
    body = text[1:] if negated else text
    dir_only = body.endswith("/")
    body = body[:-1] if dir_only else body
    if not body:
        return None  # "", "!", "/": git keeps them, and they match nothing
    basename = "/" not in body
    if not basename and body.startswith("/"):
        body = body[1:]  # a leading slash anchors: it is not part of what is matched
    return Pattern(text, body, _translate(body), negated, dir_only, basename)


def parse_patterns(text: str) -> list[Pattern]:
    """The patterns of an ignore file's text, in order (a UTF-8 BOM and CR line ends allowed)."""
    lines = text.removeprefix("\ufeff").split("\n")
    parsed = (parse_pattern(line.removesuffix("\r")) for line in lines)
    return [p for p in parsed if p is not None]


def _cp(c: str) -> str:
    """One character inside a regex class, escaped so no character can mean anything else."""
    return f"\\U{ord(c):08x}"


def _translate(glob: str) -> str | None:
    """git's wildmatch with WM_PATHNAME as a regex (None: a malformed pattern, which matches nothing).

    `*`, `?` and `[...]` never match `/`; `**` between slashes (or at an end) spans directories,
    `**/` also none; a run of stars anywhere else is one `*`; a backslash quotes any character.
    """
    out: list[str] = []
    i, n = 0, len(glob)
    # git compares the text before the first wildcard apart, then wildmatches the rest as a
    # pattern of its own: a `**` right after that text counts as at the start (`a**/b` ≡ `a` `**/b`)
    literal = next((k for k, ch in enumerate(glob) if ch in "*?[\\"), n)
    while i < n:
        c = glob[i]
        if c == "\\":
            if i + 1 == n:
                return None  # a trailing backslash quotes nothing: git matches nothing
            out.append(re.escape(glob[i + 1]))
            i += 2
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            bracket, i = _bracket(glob, i)
            if bracket is None:
                return None
            out.append(bracket)
        elif c == "*":
            j = i
            while j < n and glob[j] == "*":
                j += 1
            if j - i >= 2 and (i in (0, literal) or glob[i - 1] == "/"):
                if j == n:
                    out.append(".*")
                    i = j
                    continue
                slash = 1 if glob[j] == "/" else 2 if glob.startswith("\\/", j) else 0
                if slash:
                    out.append("(?:.*/)?")
                    i = j + slash
                    continue
            out.append("[^/]*")
            i = j
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _bracket(glob: str, start: int) -> tuple[str | None, int]:
    """The class `[...]` at `glob[start]` as a regex, and where the pattern goes on (wildmatch's
    rules: `!` or `^` negates, a `]` first is a member, `a-z` ranges, `[:alpha:]` classes, a
    backslash quotes; None when it never closes or names no class)."""
    n = len(glob)
    j = start + 1
    negated = j < n and glob[j] in "!^"
    j += 1 if negated else 0
    items: list[str] = []
    prev = ""  # the member before: a range's start ("" after a range or a class)
    first = True
    while True:
        if j >= n:
            return None, n
        c = glob[j]
        if c == "]" and not first:
            break
        first = False
        if c == "\\":
            if j + 1 >= n:
                return None, n
            prev = glob[j + 1]
            items.append(_cp(prev))
            j += 2
        elif c == "-" and prev and j + 1 < n and glob[j + 1] != "]":
            hi, j = glob[j + 1], j + 2
            if hi == "\\":
                if j >= n:
                    return None, n
                hi, j = glob[j], j + 1
            if hi >= prev:
                items.append(f"{_cp(prev)}-{_cp(hi)}")
            prev = ""
        elif c == "[" and glob.startswith(":", j + 1):
            end = glob.find("]", j + 2)
            if end < 0:
                return None, n
            inner = glob[j + 2 : end]
            if not inner.endswith(":"):  # no `:]`: the `[` is a member like any other
                prev = "["
                items.append(_cp(prev))
                j += 1
                continue
            ranges = _POSIX.get(inner[:-1])
            if ranges is None:
                return None, n  # git: a malformed class, the pattern matches nothing
            items += [f"{_cp(lo)}-{_cp(hi)}" for lo, hi in ranges]
            prev = ""
            j = end + 1
        else:
            prev = c
            items.append(_cp(c))
            j += 1
    body = "".join(items)
    return (f"[^/{body}]" if negated else f"(?!/)[{body}]"), j + 1


@dataclass(frozen=True, slots=True)
class _Alternation:
    """Some patterns of one file as one regex, the last first: its match is the deciding one."""

    regex: re.Pattern[str]
    numbers: tuple[int, ...]  # the pattern number of each group

    @staticmethod
    def of(numbered: Sequence[tuple[int, str]]) -> _Alternation | None:
        if not numbered:
            return None
        ordered = sorted(numbered, reverse=True)
        regex = re.compile("|".join(f"({rx})" for _, rx in ordered), re.DOTALL)
        return _Alternation(regex, tuple(number for number, _ in ordered))

    def last(self, text: str) -> int:
        """The number of the last pattern matching `text`, or -1."""
        m = self.regex.fullmatch(text)
        return -1 if m is None or m.lastindex is None else self.numbers[m.lastindex - 1]


class _Matcher:
    """The patterns of one ignore file that can match a file (or a directory), split so the
    usual ones cost a dict lookup: exact names (`.DS_Store`), extensions (`*.log`), exact paths
    (`/site`); the others are regexes."""

    __slots__ = ("extensions", "name_globs", "names", "path_globs", "paths")

    def __init__(self, numbered: Sequence[tuple[int, Pattern]]) -> None:
        self.names: dict[str, int] = {}
        self.extensions: dict[str, int] = {}
        self.paths: dict[str, int] = {}
        name_globs: list[tuple[int, str]] = []
        path_globs: list[tuple[int, str]] = []
        for number, p in numbered:  # in order: a later pattern replaces an earlier one
            if p.regex is None:
                continue
            tail = p.glob[1:]
            if p.basename and _literal(p.glob):
                self.names[p.glob] = number
            elif p.basename and p.glob.startswith("*") and _literal(tail) and tail.rfind(".") == 0:
                self.extensions[tail] = number
            elif p.basename:
                name_globs.append((number, p.regex))
            elif _literal(p.glob):
                self.paths[p.glob] = number
            else:
                path_globs.append((number, p.regex))
        self.name_globs = _Alternation.of(name_globs)
        self.path_globs = _Alternation.of(path_globs)

    def last(self, rel: str) -> int:
        """The number of the last pattern matching `rel`, or -1."""
        name = rel[rel.rfind("/") + 1 :]
        best = self.names.get(name, -1)
        if self.extensions and (dot := name.rfind(".")) >= 0:
            best = max(best, self.extensions.get(name[dot:], -1))
        if self.paths:
            best = max(best, self.paths.get(rel, -1))
        if self.name_globs is not None:
            best = max(best, self.name_globs.last(name))
        if self.path_globs is not None:
            best = max(best, self.path_globs.last(rel))
        return best


def _literal(glob: str) -> bool:
    return not any(c in "*?[\\" for c in glob)


class Rules:
    """The patterns of one ignore file, compiled; `verdict` says what they decide for a path."""

    __slots__ = ("_dirs", "_files", "negated", "patterns")

    def __init__(self, patterns: Sequence[Pattern]) -> None:
        self.patterns = tuple(patterns)
        self.negated = tuple(p.negated for p in patterns)
        self._dirs = _Matcher(list(enumerate(patterns)))
        self._files = _Matcher([(k, p) for k, p in enumerate(patterns) if not p.dir_only])

    def verdict(self, rel: str, is_dir: bool) -> bool | None:
        """True: the last pattern matching `rel` (relative to the file's folder) ignores it;
        False: it re-includes it (`!`); None: no pattern matches."""
        best = (self._dirs if is_dir else self._files).last(rel)
        return None if best < 0 else not self.negated[best]


@dataclass(frozen=True, slots=True)
class ReadFile:
    """An ignore file the matcher read, with the stat facts that tell when it changes."""

    path: str  # relative to the tree's folder ("../.gitignore" for one above it), "/"-separated
    abspath: str
    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class _Source:
    """Rules and how to make a path relative to the tree's folder relative to their folder."""

    rules: Rules
    prefix: str  # put in front (the tree's folder relative to a folder above it, with "/") ...
    strip: int  # ... after dropping this many leading characters (a folder below the tree's)


# the rules for the entries of one directory, deepest first, and whether it is in a work tree
_Frame = tuple[tuple[_Source, ...], bool]


class GitIgnore:
    """What the git work trees at and around a tree's folder ignore below it.

    The walk calls `enter` with each directory it lists (which saves looking for its ignore file
    and `.git`) and `ignored` for each entry; `ignored_path` answers for any path, its
    directories included. `read` lists every ignore file read, for the build to record.
    """

    def __init__(self, root: str) -> None:
        self.root = root
        self.read: list[ReadFile] = []
        self._frames: dict[str, _Frame] = {}
        self._above: _Frame | None = None

    def enter(self, rel_dir: str, names: Container[str]) -> None:
        """Note a directory the walk listed: `names` are its entries' names."""
        if rel_dir not in self._frames:
            self._frames[rel_dir] = self._frame(rel_dir, IGNORE_FILE in names, GIT_DIR in names)

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether git ignores the entry at `rel` (relative to the tree's folder), its directory
        being walked."""
        sources, _ = self._frame_of(rel.rpartition("/")[0])
        for source in sources:
            verdict = source.rules.verdict(source.prefix + rel[source.strip :], is_dir)
            if verdict is not None:
                return verdict
        return False

    def ignored_path(self, rel: str, is_dir: bool) -> bool:
        """Whether git ignores `rel` or a directory it is in (a symlink's target, say)."""
        parts = rel.split("/")
        return any(self.ignored("/".join(parts[:depth]), True) for depth in range(1, len(parts))) or (
            self.ignored(rel, is_dir)
        )

    def _frame_of(self, rel_dir: str) -> _Frame:
        frame = self._frames.get(rel_dir)
        if frame is None:
            path = os.path.join(self.root, rel_dir) if rel_dir else self.root
            has_git = os.path.lexists(os.path.join(path, GIT_DIR))
            frame = self._frame(rel_dir, os.path.lexists(os.path.join(path, IGNORE_FILE)), has_git)
            self._frames[rel_dir] = frame
        return frame

    def _frame(self, rel_dir: str, has_ignore: bool, has_git: bool) -> _Frame:
        """The rules for the entries of `rel_dir`: its own file's, then its parent's (at a work
        tree's top: its own and its info/exclude only)."""
        path = os.path.join(self.root, rel_dir) if rel_dir else self.root
        strip = len(rel_dir) + 1 if rel_dir else 0
        if has_git:
            exclude = self._load(_info_exclude(path), self.root)
            outer: tuple[_Source, ...] = (_Source(exclude, "", strip),) if exclude else ()
        else:
            outer, in_work_tree = self._frame_of(rel_dir.rpartition("/")[0]) if rel_dir else self._outer()
            if not in_work_tree:
                return (), False
        own = self._load(os.path.join(path, IGNORE_FILE), self.root) if has_ignore else None
        return ((_Source(own, "", strip), *outer) if own else outer), True

    def _outer(self) -> _Frame:
        """The rules from above the tree's folder: the ignore files from its work tree's top down
        to its parent, then info/exclude; none when it is in no work tree or in a folder git
        ignores."""
        if self._above is None:
            self._above = self._find_above()
        return self._above

    def _find_above(self) -> _Frame:
        real = os.path.realpath(self.root)
        folders: list[str] = []  # from the parent of the tree's folder up to the work tree's top
        folder = real
        while not os.path.lexists(os.path.join(folder, GIT_DIR)):
            up = os.path.dirname(folder)
            if up == folder:
                return (), False
            folders.append(folder := up)
        if not folders:
            return (), True  # the tree's folder is the top (its own frame reads the rest)
        chain: list[tuple[Rules, str]] = []  # (rules, their folder), deepest first
        exclude = self._load(_info_exclude(folder), real)
        if exclude:
            chain.append((exclude, folder))
        downward = [*reversed(folders), real]
        for above, below in itertools.pairwise(downward):
            rules = self._load(os.path.join(above, IGNORE_FILE), real)
            if rules:
                chain.insert(0, (rules, above))
            if _decide(chain, below):
                return (), False  # git ignores the tree's folder: its rules say nothing of it
        return tuple(_Source(rules, _relative(real, above) + "/", 0) for rules, above in chain), True

    def _load(self, path: str | None, base: str) -> Rules | None:
        """The rules of the ignore file at `path` (recorded in `read`, relative to `base`: the
        tree's folder as the path to it was made), or None when it is no regular file."""
        if path is None:
            return None
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return None
            with os.fdopen(os.dup(fd), "rb") as handle:
                data = handle.read()
        except OSError:
            return None
        finally:
            os.close(fd)
        self.read.append(ReadFile(_relative(path, base), path, st.st_size, st.st_mtime_ns))
        patterns = parse_patterns(data.decode("utf-8", "surrogateescape"))
        return Rules(patterns) if patterns else None


def _relative(path: str, base: str) -> str:
    return os.path.relpath(path, base).replace(os.sep, "/")


def _decide(chain: list[tuple[Rules, str]], folder: str) -> bool:
    """Whether the rules of `chain` (deepest first, each with its folder) ignore the folder."""
    for rules, above in chain:
        verdict = rules.verdict(_relative(folder, above), True)
        if verdict is not None:
            return verdict
    return False


def _info_exclude(top: str) -> str | None:
    """`info/exclude` of the work tree whose top is `top`: in `.git/`, or where a `.git` file
    points (a submodule; a linked worktree's is in the repository's common directory)."""
    dot_git = os.path.join(top, GIT_DIR)
    git_dir = dot_git
    if not os.path.isdir(dot_git):
        try:
            with open(dot_git, encoding="utf-8") as handle:
                first = handle.readline()
        except (OSError, UnicodeDecodeError):
            return None
        if not first.startswith("gitdir:"):
            return None
        git_dir = os.path.join(top, first[len("gitdir:") :].strip())
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as handle:
            git_dir = os.path.join(git_dir, handle.read().strip())
    except (OSError, UnicodeDecodeError):
        pass
    return os.path.join(git_dir, "info", "exclude")

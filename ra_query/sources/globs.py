"""Glob patterns matched against `/`-separated relative paths (`**` spans directories).

`*` and `?` never cross a `/`; `**` as a whole segment matches zero or more directories;
`[abc]` is a character class. Tree include/exclude globs are anchored at the tree root
(DECISIONS 9: `README.md` is the root README only). Context-rule globs are matched with
`anywhere=True`: a pattern without `/` (e.g. `*.rs`) then matches the file name in any
directory, as users of `[context.patterns]` expect.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                at_start = i == 0 or pattern[i - 1] == "/"
                j = i + 2
                if at_start and (j == n or pattern[j] == "/"):
                    if j == n:
                        out.append(".*")
                        i = j
                    else:
                        out.append("(?:.*/)?")
                        i = j + 1
                    continue
                out.append("[^/]*")
                i = j
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 2)
            if j == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : j]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"(?!/)[{body.replace(chr(92), chr(92) * 2)}]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


@lru_cache(maxsize=512)
def compile_glob(pattern: str, anywhere: bool = False) -> re.Pattern[str]:
    """Compile one glob to a regex matching a whole relative path."""
    pattern = pattern.removeprefix("./")
    if anywhere and "/" not in pattern:
        pattern = "**/" + pattern
    return re.compile(_translate(pattern) + r"\Z", re.DOTALL)


def compile_globs(patterns: Iterable[str], anywhere: bool = False) -> re.Pattern[str] | None:
    """Compile several globs into one alternation; None when there are none."""
    parts = [compile_glob(p, anywhere).pattern for p in patterns]
    if not parts:
        return None
    return re.compile("|".join(f"(?:{p})" for p in parts), re.DOTALL)


def matches(pattern: str, path: str, anywhere: bool = False) -> bool:
    """Whether `path` (relative, `/`-separated) matches the glob `pattern`."""
    return compile_glob(pattern, anywhere).match(path) is not None


def names_dot_entry(patterns: Iterable[str]) -> bool:
    """Whether any pattern names a dot-file or dot-directory explicitly (DECISIONS 10)."""
    return any(seg.startswith(".") and seg not in {".", ".."} for p in patterns for seg in p.split("/"))

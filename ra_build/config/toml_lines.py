"""TOML text helpers: quote a string, and find the line of a key (tomllib gives no positions).

A heuristic scanner, not a parser: it understands table headers (`[a.b]`, `[[a.b]]`), dotted
and quoted keys, and skips over multi-line arrays and strings, so that config errors and
warnings can name the line they are about. At worst it names a nearby line; it never raises.
"""

from __future__ import annotations

import json
import re

Loc = tuple[str | int, ...]  # a key path: table names, array-table indexes, key names


def toml_str(text: str) -> str:
    """`text` as a TOML basic string."""
    out = ['"']
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def parse_key(s: str, i: int) -> tuple[list[str], int] | None:
    """Parse a (dotted, possibly quoted) TOML key at `s[i:]`; return its parts and end."""
    parts: list[str] = []
    n = len(s)
    while True:
        while i < n and s[i] in " \t":
            i += 1
        if i >= n:
            return None
        if s[i] == '"':
            j = i + 1
            while j < n and s[j] != '"':
                j += 2 if s[j] == "\\" else 1
            if j >= n:
                return None
            try:
                parts.append(json.loads(s[i : j + 1]))
            except ValueError:
                parts.append(s[i + 1 : j])
            i = j + 1
        elif s[i] == "'":
            j = s.find("'", i + 1)
            if j < 0:
                return None
            parts.append(s[i + 1 : j])
            i = j + 1
        else:
            m = _BARE_KEY.match(s, i)
            if not m:
                return None
            parts.append(m.group())
            i = m.end()
        while i < n and s[i] in " \t":
            i += 1
        if i < n and s[i] == ".":
            i += 1
            continue
        return parts, i


class LineIndex:
    """Line numbers of table headers and `key =` lines, addressed by key path.

    Array-of-tables elements get their index in the path: the second `[[context.rules]]`
    is ("context", "rules", 1). Keys inside inline tables and arrays fall back to the line
    of the nearest enclosing key that has one.
    """

    def __init__(self, text: str) -> None:
        self._lines: dict[Loc, int] = {}
        arrays: dict[Loc, int] = {}
        table: Loc = ()
        closing: str | None = None
        for no, raw in enumerate(text.splitlines(), 1):
            if closing is not None:  # inside a multi-line string
                if closing in raw:
                    closing = None
                continue
            s = raw.strip()
            if not s or s.startswith("#"):
                continue
            if s.startswith("["):
                double = s.startswith("[[")
                parsed = parse_key(s, 2 if double else 1)
                if parsed is None or not s[parsed[1] :].startswith("]]" if double else "]"):
                    continue
                parts = parsed[0]
                if double:  # the array itself, then its newest element
                    path = (*self._through_arrays(parts[:-1], arrays), parts[-1])
                    arrays[path] = arrays.get(path, 0) + 1
                    self._lines.setdefault(path, no)
                    path = (*path, arrays[path] - 1)
                else:
                    path = self._through_arrays(parts, arrays)
                table = path
                self._lines.setdefault(path, no)
                continue
            parsed = parse_key(s, 0)
            if parsed is None or not s[parsed[1] :].startswith("="):
                continue
            full = (*table, *parsed[0])
            for k in range(len(table) + 1, len(full) + 1):
                self._lines.setdefault(full[:k], no)
            rest = s[parsed[1] + 1 :]
            for quotes in ('"""', "'''"):
                if rest.count(quotes) % 2 == 1:
                    closing = quotes
                    break

    @staticmethod
    def _through_arrays(parts: list[str], arrays: dict[Loc, int]) -> Loc:
        out: list[str | int] = []
        for part in parts:
            out.append(part)
            current = tuple(out)
            if current in arrays:
                out.append(arrays[current] - 1)
        return tuple(out)

    def line(self, loc: Loc) -> int:
        """The line of `loc`, or of its nearest ancestor that has one (1 if none)."""
        for k in range(len(loc), 0, -1):
            if loc[:k] in self._lines:
                return self._lines[loc[:k]]
        return 1

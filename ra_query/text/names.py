"""Names: the keys under which a chunk is found when a query is its name (issue 30, "names first").

An agent that types a name — a definition as written (`BaseClient._redirect_method`), its last
part (`_redirect_method`), a command (`git commit`), a page's or heading's title — wants that
chunk first, not a longer name that contains it (`ssh-add` for `ssh`). BM25 cannot promise it:
a short page that says `ssh` ten times outranks the `ssh` page. So every chunk is indexed under
its names, matched whole (the raw `name` field), and a query that is a name finds them by one
term lookup.

Both sides build keys with this module, so a query's key is exactly the key the build wrote:

- a key is the name lowercased with its white space collapsed (`git commit`), and its **loose**
  form, letters and digits only (`gitcommit`, `redirectmethod`), so `encode-content`,
  `EncodeContent` and `encode_content` find one another;
- a definition's names are its qualified name and every shorter suffix of it
  (`Outer.Inner.run`, `Inner.run`, `run`); `::`, `->`, `#` and PHP's `\\` separate parts as `.` does; each
  suffix as written, case and all, is an **exact** key too (`=Inner.run`), and the whole
  qualified name a **full** one (`==Outer.Inner.run`): a query typed exactly so finds it before
  the names it only resembles (`genMan` before `GenMan`, the function `MarkFlagRequired` before
  the method `Command.MarkFlagRequired`, a definition before a heading of its name);
- a file is named by its path and its file name (`src/cli.rs`, `cli.rs`); a markdown chunk by
  its title (the page's title, or the heading's text);
- a code chunk is named by the fields, variants and properties it declares, qualified by their
  type (`Opts.max_depth`, `Options.Height`: the part of a long struct that declares them), never
  by their bare name (a method or a function called so keeps it).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Sequence

MAX_NAME_CHARS: Final = 120  # a longer title is a sentence, not a name
MAX_QUERY_WORDS: Final = 12  # a longer query is a question, not a name
_SPACE = re.compile(r"\s+")
_NOT_ALNUM = re.compile(r"[\W_]+")
_SEPARATORS = re.compile(r"::|->|\\(?=\w)|#(?=\w)")  # PHP's `Monolog\Logger`; `C#` keeps its `#`
_CALL = re.compile(r"(?<=\w)\([^()]*\)\s*$")  # `encode_content()`, `run(x)`; not `Install (Linux)`
_FIELD = re.compile(r":(?!\s|$)")  # `title:x` uses the query language; `Hybrid search: meaning` is a title
# Lua's method as written (`Path:new`, `M.Job:sync`): the method `Path.new`, unless a field names it
_METHOD = re.compile(r"([A-Za-z_][\w.]*):([A-Za-z_]\w*)")
# the query language's fields (ra_query.search.syntax.FIELDS, a room above this one; a test
# keeps the two equal)
QUERY_FIELDS: Final = frozenset({"title", "tags", "body", "path", "tree", "kind", "lang"})
_QUOTES = "`'\"“”‘’"
# the extensions of the files ra chunks: `config.json` is a file's name, not `json`'s (those of
# ra_query.sources.languages, a room above this one: a test keeps the two equal)
_EXTENSIONS: Final = frozenset(
    [
        "py",
        "pyi",
        "js",
        "mjs",
        "cjs",
        "jsx",
        "ts",
        "mts",
        "cts",
        "tsx",
        "go",
        "rs",
        "java",
        "c",
        "h",
        "cc",
        "cpp",
        "cxx",
        "hpp",
        "hh",
        "hxx",
        "cs",
        "rb",
        "php",
        "kt",
        "kts",
        "swift",
        "lua",
        "zig",
        "ex",
        "exs",
        "scala",
        "sc",
        "sh",
        "bash",
        "zsh",
        "bats",
        "toml",
        "yaml",
        "yml",
        "json",
        "md",
        "markdown",
        "rst",
        "txt",
    ]
)
EXACT: Final = "="  # the mark of an exact key: a name as written, case and all
FULL: Final = "=="  # the mark of a full key: a definition's whole qualified name as written


class Tier(NamedTuple):
    """The keys of one reading of a query, best first: what is named so in full, then exactly,
    then in any spelling (each level's chunks before the next's)."""

    levels: list[list[str]]


def forms(name: str) -> list[str]:
    """The keys of one name: lowercased with white space collapsed, and its loose form."""
    exact = _SPACE.sub(" ", name.strip().lower())
    if not exact or len(exact) > MAX_NAME_CHARS:
        return []
    loose = _NOT_ALNUM.sub("", exact)
    return [exact, loose] if loose and loose != exact else [exact]


def _parts(name: str) -> list[str]:
    """The parts of a qualified name: `a::B.c` → [a, B, c] (no empty part)."""
    return [part for part in _SEPARATORS.sub(".", name).split(".") if part.strip()]


def symbol_keys(symbol: str) -> list[str]:
    """The keys of a definition named `symbol`: its qualified name and every suffix of it."""
    parts = _parts(symbol)
    keys: list[str] = []
    for start in range(len(parts)):
        keys += forms(".".join(parts[start:]))
    return keys


def is_later_part(slug: str, symbol: str) -> bool:
    """Whether a code chunk is the second or a later part of a long definition: its slug is the
    definition's with `.2`, `.3`, … after it (a repeated name's slug ends `-1`, `-2` instead)."""
    return slug.rpartition(".")[2].isdigit() and not symbol.rpartition(".")[2].isdigit()


def chunk_keys(
    *,
    kind: str,
    depth: int,
    symbol: str,
    title: str,
    path: str,
    slug: str = "",
    members: Sequence[str] = (),
) -> list[str]:
    """Every key a chunk is found under (deduplicated, in a stable order).

    A definition: its symbol's keys. A file's own chunk (depth 0): its path and its file name,
    and for a page also its title. A heading: its title. A code chunk that names nothing (a run of
    statements) has no key, nor has the second or a later part of a long definition (its slug is
    the definition's, `.2`, `.3`, …): the name is its first part's. The fields, variants and
    properties a code chunk declares (`members`: `Opts.max_depth`, qualified by their type) are
    its names too, qualified: `Opts.max_depth` finds the part of `Opts` that declares it, and
    `max_depth` alone stays the name of what is defined so (a method, a function).
    """
    keys: list[str] = []
    if symbol and not is_later_part(slug, symbol):
        parts = _parts(symbol)
        keys += [FULL + ".".join(parts), *(EXACT + ".".join(parts[k:]) for k in range(len(parts)))]
        keys += symbol_keys(symbol)
    for member in members:
        parts = _parts(member)
        qualified = [".".join(parts[k:]) for k in range(len(parts) - 1)]  # never the bare name
        keys += [FULL + ".".join(parts), *(EXACT + name for name in qualified)]
        keys += [key for name in qualified for key in forms(name)]
    if depth == 0:
        keys += forms(path) + forms(path.rsplit("/", 1)[-1])
    if kind != "code" and title:
        keys += forms(title)
    return list(dict.fromkeys(keys))


_IDENTIFIER = re.compile(r"^[\w$.:\->\\]*(?:[_.\\]|::|->|[a-z0-9][A-Z])[\w$.:\->\\]*$")


def is_identifier(text: str) -> bool:
    """Whether `text` is spelt like code, not like a word: `encode_content`, `openStore`,
    `Client.send`, `Opts::max_depth` (not `ssh`, `Installation`, `git commit`)."""
    name = text.strip().strip(_QUOTES).strip()
    bare = _CALL.sub("", name)
    if bare != name and bare and not bare.split()[1:]:  # `run()`: a call
        return True
    return _IDENTIFIER.match(bare) is not None


def query_keys(text: str) -> list[Tier]:
    """The keys a query may be the name of, in tiers: the whole query first, then the shorter
    suffixes of a qualified name (`pkg.Client.send` → `Client.send`, then `send`). Empty when the
    query is not shaped like a name: too long, or using the query language (`field:`, `-x`, `OR`,
    brackets). Quotes, backticks and a call's parentheses around a name are looked through."""
    name = text.strip().strip(_QUOTES).strip()
    name = _CALL.sub("", name)  # `run()` is `run`
    method = _METHOD.fullmatch(name)
    if method is not None and method[1] not in QUERY_FIELDS:
        name = f"{method[1]}.{method[2]}"
    if not name or len(name) > MAX_NAME_CHARS or len(name.split()) > MAX_QUERY_WORDS:
        return []
    if _FIELD.search(_SEPARATORS.sub(".", name)) or any(c in name for c in '"()[]{}^'):
        return []
    words = name.split()
    excluded = (word.startswith("-") and not word.startswith("--") and len(word) > 1 for word in words)
    if any(excluded) or "OR" in words:  # `--max-depth` is an option's name; `-x` a flag or an exclusion
        return []
    if len(words) > 1:
        return [Tier([forms(name)])] if forms(name) else []
    parts = _parts(name)  # `Opts::max_depth` is `Opts.max_depth`
    dotted = ".".join(parts)
    loose = list(dict.fromkeys(forms(name) + forms(dotted)))
    tiers = [Tier([[FULL + dotted], [EXACT + dotted], loose])] if loose else []
    if len(parts) < 2 or "/" in name or parts[-1].lower() in _EXTENSIONS:
        return tiers  # one part (or `.` alone: none), a file (`setup.py`): no shorter name in it
    if any(len(p) < 2 or p.isdigit() for p in parts):
        return tiers  # a version (`v1.2.3`), `e.g.`: no shorter name in it
    for start in range(1, len(parts)):
        suffix = ".".join(parts[start:])
        if forms(suffix):
            tiers.append(Tier([[EXACT + suffix], forms(suffix)]))
    return tiers

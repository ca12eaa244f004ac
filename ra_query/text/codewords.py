"""Code words: what an agent says, in the words code is written in (issue 30, "the first try").

An agent new to a codebase asks in its own words — "skip the dot files", "how many parallel
workers", "tear the stream down" — and the code that answers says `hidden`, `threads`,
`destroy`. The question shares no word with the definition, so BM25 cannot find it, however
well the definition is chunked. Code search tools bridge this with a thesaurus of software
vocabulary (the words programmers use for one idea: folder / directory / dir); ra keeps one
here, written from general programming usage, not from any codebase's names.

Each group is a set of words that name one idea in code. A query word in a group also searches
the group's other words, with a smaller weight (`SearchParams.code_words`), and only in code
chunks: the docs, and indexes with no code (SciFact, CACM), rank as they did. The words are
analysed like the query (stemmed), so `folders` reaches `dir` and `directories`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Callable

# one idea per line; keep each word in one group (a word in two groups would join them)
GROUPS: Final[tuple[tuple[str, ...], ...]] = (
    ("folder", "directory", "dir"),
    ("delete", "remove", "erase", "unlink", "rm"),
    ("create", "make", "construct", "new"),
    ("start", "begin", "launch"),
    ("stop", "halt", "terminate", "abort", "cancel", "kill"),
    ("finish", "end", "done"),
    ("error", "exception", "failure", "fault", "err", "fail"),
    ("warn", "warning"),
    ("settings", "options", "config", "configuration", "preferences", "opts", "conf"),
    ("flag", "switch", "option", "opt"),
    ("argument", "arg", "args", "parameter", "param", "params"),
    ("number", "num", "integer", "int"),
    ("count", "total", "amount"),
    ("size", "length", "len"),
    ("maximum", "max", "limit", "cap", "ceiling"),
    ("minimum", "min"),
    ("depth", "deep"),
    ("timeout", "deadline"),
    ("wait", "sleep", "delay", "pause"),
    ("retry", "attempt"),
    ("reply", "response", "resp"),
    ("request", "req"),
    ("address", "url", "uri", "href"),
    ("credentials", "auth", "authentication", "authorization"),
    ("password", "passwd", "secret"),
    ("hidden", "dotfile", "dotfiles", "invisible"),
    ("ignore", "exclude", "exclusion", "skip", "omit"),
    ("search", "find", "lookup", "look"),
    ("sort", "order", "sorted", "ordering"),
    ("parse", "decode", "deserialize", "unmarshal"),
    ("serialize", "encode", "marshal", "stringify"),
    ("write", "save", "persist"),
    ("print", "display", "show", "render", "echo"),
    ("log", "logger", "logging"),
    ("copy", "clone", "duplicate"),
    ("rename", "move"),
    ("merge", "combine"),
    ("join", "concat", "concatenate"),
    ("split", "separate"),
    ("trim", "strip"),
    ("replace", "substitute"),
    ("convert", "transform", "cast", "coerce"),
    ("check", "validate", "verify", "ensure", "assert"),
    ("permission", "access", "allowed", "perm"),
    ("compare", "equal", "equals", "cmp"),
    ("hash", "digest", "checksum"),
    ("compress", "gzip", "deflate", "zip"),
    ("decompress", "gunzip", "inflate", "unzip"),
    ("download", "fetch"),
    ("upload", "send"),
    ("connect", "connection", "conn", "dial"),
    ("socket", "sock"),
    ("thread", "worker", "parallel", "concurrent", "concurrency", "goroutine", "jobs"),
    ("lock", "mutex"),
    ("cache", "cached", "memoize", "memo"),
    ("callback", "hook", "handler", "listener", "cb"),
    ("plugin", "extension", "addon"),
    ("environment", "env", "environ"),
    ("variable", "var"),
    ("color", "colour", "colorize", "ansi"),
    ("terminal", "tty", "console"),
    ("width", "columns", "cols"),
    ("string", "str", "text"),
    ("character", "char", "rune"),
    ("boolean", "bool"),
    ("list", "array", "slice", "vector", "vec"),
    ("map", "dict", "dictionary", "hashmap", "mapping"),
    ("empty", "blank"),
    ("null", "nil", "none", "undefined"),
    ("default", "fallback", "defaults"),
    ("format", "fmt"),
    ("pattern", "glob", "regex", "regexp", "wildcard"),
    ("version", "ver"),
    ("help", "usage"),
    ("command", "cmd", "subcommand"),
    ("application", "app", "program", "prog"),
    ("process", "proc", "subprocess"),
    ("exit", "quit"),
    ("symlink", "symbolic", "softlink"),
    ("modified", "mtime", "changed", "modification"),
    ("redirect", "redirection"),
    ("traverse", "traversal", "walk", "descend", "recurse", "recursive", "recursion"),
    ("iterate", "iterator", "iter", "loop"),
    ("parent", "ancestor"),
    ("escape", "sanitize"),
    ("completion", "autocomplete", "complete"),
    ("prompt", "ask"),
    ("confirm", "confirmation"),
    ("pager", "paging"),
    ("alias", "shortcut", "abbreviation"),
    ("deprecated", "obsolete", "legacy"),
    ("register", "registry", "registration"),
    ("identifier", "id", "uuid"),
    ("random", "rand", "rng"),
    ("mock", "stub", "fake"),
    ("statistics", "stats", "metrics"),
    ("duration", "elapsed"),
    ("memory", "mem"),
    ("allocate", "alloc", "malloc"),
    ("destroy", "teardown", "cleanup", "dispose"),
    ("reset", "clear"),
    ("refresh", "reload"),
    ("initialize", "init", "setup"),
    ("database", "db"),
    ("field", "attribute", "attr", "property", "prop"),
    ("object", "obj"),
    ("inherit", "extend", "subclass", "derive"),
    ("interface", "protocol", "trait"),
    ("wrapper", "decorator", "wrap"),
    ("uppercase", "capital", "upper"),
    ("lowercase", "lower"),
    ("whitespace", "spaces"),
    ("newline", "linebreak", "eol"),
    ("quiet", "silent"),
    ("verbose", "verbosity"),
    ("interrupt", "sigint"),
    ("certificate", "cert"),
    ("tls", "ssl", "https"),
    ("enum", "enumeration"),
    ("constant", "const"),
    ("immutable", "frozen", "readonly"),
    ("asynchronous", "async", "promise", "future"),
)


Table = dict[str, tuple[tuple[str, str], ...]]


def table(analyze: Callable[[str], list[str]], is_stopword: Callable[[str], bool]) -> Table:
    """Each analysed token of GROUPS' words → the rest of its group, as (analysed token, word)
    pairs; stop words are left out (they match everything). Built once per analyzer and given
    to the query compiler."""
    out: Table = {}
    for group in GROUPS:
        pairs: list[tuple[str, str]] = []
        for word in group:
            if not is_stopword(word):
                pairs += [(t, word) for t in analyze(word) if t not in (p[0] for p in pairs)]
        for token, _ in pairs:
            out[token] = tuple(p for p in pairs if p[0] != token)
    return out

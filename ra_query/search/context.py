"""`ra context FILE...` (DECISIONS 24, seed 001 "Context Analysis"): the documentation that fits
the files an agent is about to work on, found by a query built from the files themselves.

Signals, each scored as weight × (1 + ln tf) × idf, where idf comes from the index (restricted
to the selected trees when there are any) and a word the index does not hold is dropped:

- **path**: the directory and file names of each input (`src/auth/oauth_client.py` gives
  `auth`, `oauth`, `client`), weight `PATH_WEIGHT`;
- **rule**: the terms of every `[[context.rules]]` / `[context.patterns]` entry whose globs
  match the file, ranked first (they are what the project asked for);
- **heading** and **body**: words of the content (markdown headings above body text), with
  identifiers split at `_` and camelCase humps; body words must occur `min_term_frequency`
  times; words outside `min_word_length`..`max_word_length`, stop words and common keywords of
  programming languages are ignored. A large file is read up to `sample_size` bytes.

The top `terms` terms over all files (a term's scores add up) form a weighted OR query, searched
with the usual pipeline. For a code file, the docs are searched with terms of their own: the same
words scored with their idf among the docs pages (`docs` and `upstream` chunks) — a word every
definition uses but one page explains tells that page apart, and a word no page holds finds none.
Documents a matching rule `include`s come first; chunks of the input files themselves (when they
are indexed) are removed before the limit is applied.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from ra_query.artifacts.schema import build_analyzer, doc_id_of, stopwords_of
from ra_query.errors import InputError
from ra_query.sources.globs import matches
from ra_query.sources.languages import kind_of, language_of
from ra_query.text.files import looks_binary, read_named

if TYPE_CHECKING:
    from ra_query.artifacts.store import Store
    from ra_query.search.pipeline import SearchHit, SearchParams, TopicResult

PATH_WEIGHT = 2.0
HEADING_WEIGHT = 2.0
BODY_WEIGHT = 1.0
RULE_WEIGHT = 3.0
CANDIDATES = 80  # content words looked up in the index per file, by weighted frequency
PAGE_KINDS = ("docs", "upstream")  # a code file's docs search scores its words among these chunks
MAX_COUNTS_KEPT = 50_000  # words whose document frequency a store keeps (`_Idf`)
OVERFETCH = 25  # extra results asked for, so dropping the input files still leaves `limit`

# words of code that say nothing about what a file is about
CODE_WORDS = frozenset(
    """
    abstract async await bool boolean break case catch char class const continue def default
    defer delete elif else enum except export extends false final finally float func function
    impl import include int interface lambda let long match mod module mut namespace new none
    null package pass private protected pub public raise return self static str string struct
    super switch this throw throws trait true try type typedef undefined unsigned using var void
    while with yield println printf print args kwargs argv
    """.split()  # noqa: SIM905  # a word list reads best as words
)

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_HUMP = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.*)$")
# in a code file, the lines that say what it is about: its imports and its definitions (a `#`
# line there is a comment, not a heading)
_CODE_SIGNAL = re.compile(
    r"^\s*(?:@[\w.]+(?:\([^()]*\))?\s+)*"  # annotations first (`@JvmStatic fun plant(…)`)
    r"(?:(?:export|pub(?:\([a-z]+\))?|public|private|protected|internal|static|async|abstract|final|"
    r"default|open|override|data|sealed|inner|suspend|inline|local|fileprivate|case)\s+)*"
    r"(?P<keyword>def|defp|defmodule|defmacro|defprotocol|defimpl|class|func|fn|fun|function|interface|struct|"
    r"type|trait|impl|enum|module|object|"
    r"protocol|extension|actor|namespace|import|from|use|using|package|require|#include)\b(?P<rest>.*)$"
)  # Kotlin's (`fun`, `object`), Swift's (`protocol`, `extension`), Lua's (`local`) and Elixir's too
_IMPORT_KEYWORDS = frozenset({"import", "from", "use", "using", "package", "require", "#include"})
# a comment line, or a line opening or closing a docstring: prose about the code
_COMMENT = re.compile(
    r"^\s*(?:#(?!include\b|define\b|if|endif|else|elif|pragma)|//|/\*|\*|--|<!--|\"{3}|'{3})"
)
_TRIPLE = re.compile(r"\"{3}|'{3}")

# where a content word came from: a part of its score (`_Scores.SOURCES`); headings, imports and
# definitions weigh HEADING_WEIGHT, the body and docstrings BODY_WEIGHT
HEADING, BODY, IMPORT, DEFINES, DOCSTRING = 3, 4, 5, 6, 7
_HEADING_PARTS = frozenset({HEADING, IMPORT, DEFINES})

# the modules a code file imports, by what the import statements of its language look like
_IMPORTED = (
    re.compile(r"^\s*import\s+(?:static\s+)?([\w.]+(?:\s*,\s*[\w.]+)*)\s*;?\s*(?:$|#|as\b)", re.MULTILINE),
    re.compile(r"^\s*from\s+([\w.]+)\s+import\b", re.MULTILINE),  # Python (relative ones start with .)
    # `from '…'`, `require('…')`, `import '…'` at a line's start; each alternative opens with its
    # first character and looks behind for the word boundary or line start, which spares the
    # regex engine testing a boundary at every position of the file (~4 times faster)
    re.compile(
        r"""(?:f(?<=\bf)rom\s+|r(?<=\br)equire\s*\(?\s*|\s(?<=^\s)\s*import\s+|i(?<=^i)mport\s+)"""
        r"""['"]([^'"\n]+)['"]""",
        re.MULTILINE,
    ),
    re.compile(r"""^\s*(?:import\s+)?(?:[\w.]+\s+)?"([\w.\-]+(?:/[\w.\-]+)+)"\s*$""", re.MULTILINE),  # Go
    re.compile(  # Rust, PHP
        r"^\s*(?:pub(?:\([a-z]+\))?\s+)?(?:use|extern\s+crate)\s+(?:::|\\)?(\w+(?:(?:::|\\)\w+)*)",
        re.MULTILINE,
    ),
    re.compile(r"^\s*using\s+(?:static\s+)?([\w.]+)\s*;", re.MULTILINE),  # C#
    re.compile(r"^\s*#\s*include\s*<([^>\n]+)>", re.MULTILINE),  # C, C++: the system's, not the project's
)
_MODULE_PART = re.compile(r"[./:\\@]+")
MAX_IMPORTS = 30


class ContextRule(NamedTuple):
    """What the configuration says about files matching `match` (globs, relative to the config)."""

    match: tuple[str, ...]
    trees: tuple[str, ...] | None
    terms: tuple[str, ...]
    include: tuple[str, ...]


class ContextOptions(NamedTuple):
    """`[context]`'s term settings (DECISIONS 24)."""

    terms: int = 15
    min_term_frequency: int = 2
    min_word_length: int = 4
    max_word_length: int = 30
    sample_size: int = 50_000


class InputFile(NamedTuple):
    """A file given to `ra context`: as given, where it is, and its path for rule globs.

    With `text`, the input is that text rather than a file (`ra likethis ID`: a chunk), and
    `path` and `relative` are empty: no path words, nothing to read.
    """

    shown: str  # as the user wrote it (for messages)
    path: str  # absolute
    relative: str  # `/`-separated, relative to the nearest config's directory (or as given)
    text: str | None = None


def given_file(path: str) -> InputFile:
    """A file as given, with no configuration to place it: its own normalized path for globs."""
    return InputFile(path, os.path.abspath(path), os.path.normpath(path).replace(os.sep, "/"))


class Term(NamedTuple):
    """One term of the generated query and why it is there."""

    word: str
    score: float
    source: str  # path, rule, heading or body (where most of its score came from)
    frequency: int
    idf: float


class Analysis(NamedTuple):
    """What `ra context` read from its files: the query and everything `--explain` shows."""

    terms: tuple[Term, ...]
    query: str
    trees: tuple[str, ...]
    include: tuple[str, ...]
    exclude: frozenset[str]  # doc ids of the input files that are indexed (or chunk ids: likethis)
    warnings: tuple[str, ...]
    counts: dict[str, int]
    meaning: str | None = None  # what a hybrid search embeds instead of the query (likethis: the source)
    code: bool = False  # an input is a code file: docs that explain it first, its tests last
    names: tuple[str, ...] = ()  # the words of the code files' own names (`_auth.py`: auth)
    definition: str = ""  # `likethis` of a definition: `path#symbol` (what is like it is other code)
    input: str = ""  # the files read, as given (a result list's label when there are several)
    imports: tuple[str, ...] = ()  # the modules the code files import (`import fastapi`: fastapi)
    frameworks: tuple[str, ...] = ()  # the upstream trees of these modules: their pages come next
    docs_terms: tuple[Term, ...] = ()  # a code file's terms scored among the pages: its docs search
    docs_query: str = ""


def words(text: str) -> list[str]:
    """The lower-case words of `text`, identifiers split at `_` and camelCase humps too."""
    out: list[str] = []
    for token in _WORD.findall(text.replace("_", " ")):
        out.extend(_token_words(token))
    return out


@lru_cache(maxsize=1 << 14)
def _token_words(token: str) -> tuple[str, ...]:
    """`words` of one token: its humps, when it has several, then itself (lower-case). Code
    repeats its identifiers, and `ra context` splits every line of a file."""
    parts = _HUMP.findall(token)
    whole = token.lower()
    return (*(p.lower() for p in parts), whole) if len(parts) > 1 else (whole,)


def _read(file: InputFile, sample_size: int) -> bytes | None:
    if file.text is not None:
        return file.text.encode("utf-8")[:sample_size]
    return read_named(
        file.path,
        file.shown,
        limit=sample_size,
        missing=" — give the files you are working on",
        directory=" — give files (e.g. src/*.py)",
    )


def analyze(
    store: Store,
    files: Sequence[InputFile],
    *,
    rules: Sequence[ContextRule] = (),
    options: ContextOptions | None = None,
    trees: Sequence[str] = (),
) -> Analysis:
    """The weighted query for `files` (see the module docstring).

    Raises:
        InputError: a file that does not exist or cannot be read, or no file at all.
    """
    if not files:
        raise InputError("no files given — name the files you are working on: ra context src/app.py")
    options = options or ContextOptions()
    is_stop = stopwords_of(store.stemmer)
    matched = [
        rule
        for file in files
        for rule in rules
        if any(matches(g, file.relative, anywhere=True) for g in rule.match)
    ]
    selected = tuple(trees) or _rule_trees(matched)
    analyzer = build_analyzer(store.stemmer)
    scores = _Scores(_Idf(store, analyzer, selected))
    code_files = [f for f in files if f.relative and kind_of(language_of(f.relative)) == "code"]
    pages = _Idf(store, analyzer, selected, PAGE_KINDS) if code_files else None
    page_scores = _Scores(pages) if pages is not None and pages.total else None
    every = [s for s in (scores, page_scores) if s is not None]
    warnings: list[str] = []
    counts = {"files": len(files), "read": 0, "skipped": 0, "candidates": 0}
    modules: list[str] = []

    verdicts: dict[str, bool] = {}  # a file's words repeat: each is judged once

    def usable(word: str) -> bool:
        verdict = verdicts.get(word)
        if verdict is None:
            verdict = verdicts[word] = (
                options.min_word_length <= len(word) <= options.max_word_length
                and word not in CODE_WORDS
                and not is_stop(word)
            )
        return verdict

    for file in files:
        data = _read(file, options.sample_size)
        if data is None or looks_binary(data):
            warnings.append(f"{file.shown}: binary file — skipped (only its path counts)")
            counts["skipped"] += 1
            data = b""
        else:
            counts["read"] += 1
        for word in set(words(" ".join(_path_parts(file.relative)))):
            if usable(word) or (len(word) >= 3 and word not in CODE_WORDS and not is_stop(word)):
                for each in every:
                    each.add(word, 1, PATH_WEIGHT, 1)
        code = kind_of(language_of(file.relative)) == "code"
        text = data.decode("utf-8", "replace")
        if code:
            modules.extend(imported_modules(text))
        weighted = _content_terms(text, usable, options.min_term_frequency, code)
        counts["candidates"] += len(weighted)
        for word, _, part, tf in weighted[:CANDIDATES]:
            for each in every:
                each.add(word, part, HEADING_WEIGHT if part in _HEADING_PARTS else BODY_WEIGHT, tf)
    for each in every:
        each.add_rules(matched)
    terms = scores.ranked(options.terms)
    docs_terms = page_scores.ranked(options.terms) if page_scores is not None else ()
    include = tuple(dict.fromkeys(doc for rule in matched for doc in rule.include))
    names = tuple(dict.fromkeys(w for f in code_files for w in _name_words(f.relative, is_stop)))
    imports = tuple(dict.fromkeys(modules))[:MAX_IMPORTS]
    return Analysis(
        terms=terms,
        query=_query(terms),
        trees=selected,
        include=include,
        exclude=frozenset(_indexed_ids(store, files)),
        warnings=tuple(warnings),
        counts={**counts, "terms": len(scores.parts), "kept": len(terms)},
        code=bool(code_files),
        names=names,
        input=", ".join(f.shown for f in files),
        imports=imports,
        frameworks=framework_trees(store, imports),
        docs_terms=docs_terms,
        docs_query=_query(docs_terms),
    )


def analyze_each(
    store: Store,
    files: Sequence[InputFile],
    *,
    rules: Sequence[ContextRule] = (),
    options: ContextOptions | None = None,
    trees: Sequence[str] = (),
) -> list[Analysis]:
    """`analyze` of each file on its own (a file given twice once): several files are several
    result lists sharing one limit and one budget (`context_topics`), and none of the files is
    a result of any.

    Raises:
        InputError: a file that does not exist or cannot be read, or no file at all.
    """
    unique = list({file.path or file.shown: file for file in files}.values())
    if len(unique) <= 1:
        return [analyze(store, unique or files, rules=rules, options=options, trees=trees)]
    each = [analyze(store, [file], rules=rules, options=options, trees=trees) for file in unique]
    exclude = frozenset[str]().union(*(analysis.exclude for analysis in each))
    return [analysis._replace(exclude=exclude) for analysis in each]


class _Scores:
    """Each candidate word's score, split by where it came from, and how often it occurred."""

    # the parts of a score, after the total (indexes: 1 path, 2 rule, HEADING, BODY, IMPORT, …)
    SOURCES = ("", "path", "rule", "heading", "body", "import", "defines", "docstring")

    def __init__(self, idf: _Idf) -> None:
        self.idf = idf
        self.parts: dict[str, list[float]] = {}  # word → [score, then each of SOURCES[1:]]
        self.frequency: dict[str, int] = {}

    def add(self, word: str, part: int, weight: float, tf: int) -> None:
        """Add weight × (1 + ln tf) × idf to `word`'s score (a word the index lacks gets none)."""
        score = self.idf(word)
        if score <= 0:
            return
        entry = self.parts.setdefault(word, [0.0] * len(self.SOURCES))
        value = weight * (1 + math.log(tf)) * score
        entry[0] += value
        entry[part] += value
        self.frequency[word] = self.frequency.get(word, 0) + tf

    def add_rules(self, matched: Sequence[ContextRule]) -> None:
        """The terms of the matching rules, each scored `RULE_WEIGHT` times the top content score."""
        top = max((entry[0] for entry in self.parts.values()), default=1.0)
        for rule in matched:
            for term in rule.terms:
                for word in words(term) or [term.lower()]:
                    if self.idf(word) > 0:
                        entry = self.parts.setdefault(word, [0.0] * len(self.SOURCES))
                        entry[0] += RULE_WEIGHT * top
                        entry[2] += RULE_WEIGHT * top
                        self.frequency.setdefault(word, 1)

    def ranked(self, count: int) -> tuple[Term, ...]:
        """The `count` best terms, best first (ties by word)."""
        ranked = sorted(self.parts.items(), key=lambda item: (-item[1][0], item[0]))[:count]
        return tuple(
            Term(word, entry[0], self.SOURCES[_largest(entry)], self.frequency.get(word, 0), self.idf(word))
            for word, entry in ranked
        )


def _content_terms(
    text: str, usable: Callable[[str], bool], min_term_frequency: int, code: bool = False
) -> list[tuple[str, float, int, int]]:
    """(word, weight, part, tf) of a file's content words, heaviest first: heading words
    (HEADING) and body words that occur `min_term_frequency` times (BODY). In a code file the
    words of its imports (IMPORT) and definitions (DEFINES) weigh as headings do, and its
    comments and docstrings (DOCSTRING) as body text; a word's part is where most of its
    occurrences are (its frequency counts them all)."""
    heading_tf: dict[str, int] = {}
    body_tf: dict[str, int] = {}
    where: dict[tuple[str, int], int] = {}  # (word, part) → occurrences
    signal = _CODE_SIGNAL if code else _HEADING
    in_docstring = False
    for line in text.splitlines():
        heading = signal.match(line)
        if heading and code:
            part = IMPORT if heading.group("keyword") in _IMPORT_KEYWORDS else DEFINES
            said = heading.group("rest")
        elif heading:
            part, said = HEADING, heading.group(1)
        else:
            quotes = len(_TRIPLE.findall(line)) if code else 0
            prose = code and (in_docstring or quotes > 0 or bool(_COMMENT.match(line)))
            in_docstring = in_docstring != (quotes % 2 == 1)
            part, said = (DOCSTRING if prose else BODY), line
        target = heading_tf if part in _HEADING_PARTS else body_tf
        for word in words(said):
            if usable(word):
                target[word] = target.get(word, 0) + 1
                where[word, part] = where.get((word, part), 0) + 1

    def part_of(word: str, parts: tuple[int, ...]) -> int:
        return max(parts, key=lambda p: where.get((word, p), 0))

    weighted = [
        (w, HEADING_WEIGHT * (1 + math.log(tf)), part_of(w, (HEADING, DEFINES, IMPORT)), tf)
        for w, tf in heading_tf.items()
    ] + [
        (w, BODY_WEIGHT * (1 + math.log(tf)), part_of(w, (BODY, DOCSTRING)), tf)
        for w, tf in body_tf.items()
        if tf >= min_term_frequency
    ]
    weighted.sort(key=lambda item: (-item[1], item[0]))
    return weighted


def imported_modules(text: str) -> list[str]:
    """The modules a code file's `text` imports, as written (`fastapi.security`,
    `github.com/spf13/cobra`, `@tanstack/react-query`), first seen first; the project's own
    (`.models`, `./util`, `crate::`, `super::`, `self::`) left out."""
    found: dict[str, None] = {}
    for pattern in _IMPORTED:
        for match in pattern.finditer(text):
            for module in match.group(1).split(","):
                module = module.strip()
                if module and not module.startswith((".", "/", "crate::", "super::", "self::")):
                    found.setdefault(module)
    return list(found)[:MAX_IMPORTS]


def framework_trees(store: Store, modules: Iterable[str]) -> tuple[str, ...]:
    """The upstream trees named as one of `modules` or a part of one (`fastapi.security` and
    `[tree.fastapi]`; `github.com/spf13/cobra` and `[tree.cobra]`), `-` and `_` alike."""
    upstream = {
        name.lower().replace("_", "-"): name for name, entry in store.trees().items() if "upstream" in entry
    }
    if not upstream:
        return ()
    named = (
        upstream.get(part.lower().replace("_", "-"))
        for module in modules
        for part in _MODULE_PART.split(module)
    )
    return tuple(dict.fromkeys(name for name in named if name))


def _path_parts(relative: str) -> list[str]:
    """The directory and file names that say what a file is about, its extension dropped.

    A path outside the project (absolute, or above it) keeps only its file and directory names.
    """
    parts = [p for p in relative.split("/") if p not in ("", ".")]
    if relative.startswith("/") or ".." in parts:
        parts = [p for p in parts if p != ".."][-2:]
    if parts:
        parts[-1] = parts[-1].rsplit(".", 1)[0] if "." in parts[-1][1:] else parts[-1]
    return parts


# folders and file names that say where code is, not what it does
_PLACES = frozenset({
    "src", "lib", "source", "sources", "core", "internal", "pkg", "app", "apps", "main", "index", "init",
    "mod", "utils", "util", "common", "base", "impl", "private", "public", "helpers", "misc", "default",
})  # fmt: skip


def _name_words(relative: str, is_stop: Callable[[str], bool]) -> list[str]:
    """The words of a code file's name that say what it does (`httpx/_auth.py`: auth), or of its
    folder's when the name says nothing (`_transports/default.py`, `as-promise/index.ts`): the
    docs that explain a file tend to share them."""
    parts = _path_parts(relative)

    def meaningful(text: str) -> list[str]:
        found = [w for w in words(text) if len(w) >= 3 and w not in _PLACES and not is_stop(w)]
        return [w for w in dict.fromkeys(found) if w not in CODE_WORDS]

    own = meaningful(parts[-1]) if parts else []
    return own or (meaningful(parts[-2]) if len(parts) > 1 else [])


def _largest(entry: list[float]) -> int:
    """Which part (an index of `_Scores.SOURCES`) gave a term most of its score."""
    return max(range(1, len(entry)), key=lambda i: entry[i])


def _rule_trees(rules: Iterable[ContextRule]) -> tuple[str, ...]:
    """The trees the matching rules limit the search to: the trees every limiting rule names
    (a rule without `trees` does not limit); when they have none in common, any of them."""
    limits = [tuple(rule.trees) for rule in rules if rule.trees]
    if not limits:
        return ()
    common = [tree for tree in limits[0] if all(tree in other for other in limits[1:])]
    return tuple(common) or tuple(dict.fromkeys(tree for limit in limits for tree in limit))


def _query(terms: Sequence[Term]) -> str:
    """A weighted OR of the terms, in the query language: `word^boost …` (boosts relative to the top)."""
    if not terms:
        return ""
    top = terms[0].score
    return " ".join(f"{t.word}^{max(t.score / top * 4, 0.1):.2f}" for t in terms)


def _indexed_ids(store: Store, files: Sequence[InputFile]) -> Iterable[str]:
    """The doc ids the input files have in this index (when they are inside a tree)."""
    for name, entry in store.trees().items():
        sources: object = entry.get("sources")
        root = cast(dict[str, object], sources).get("root") if isinstance(sources, dict) else None
        if not isinstance(root, str):
            continue
        top = os.path.realpath(root)
        for file in files:
            if not file.path:
                continue  # a text, not a file
            real = os.path.realpath(file.path)
            if real.startswith(top + os.sep):
                yield doc_id_of(name, os.path.relpath(real, top).replace(os.sep, "/"))


class _Idf:
    """idf of a word in the index (0 when no chunk holds it), over `trees` and chunks of `kinds`
    only when given."""

    def __init__(self, store: Store, analyzer: Any, trees: Sequence[str], kinds: Sequence[str] = ()) -> None:
        import tantivy

        self._tantivy = tantivy
        self.store = store
        self.analyzer = analyzer
        self.trees = tuple(trees)
        self.kinds = tuple(kinds)
        self.searcher = store.index.searcher()
        # each count is a search: kept on the store, where the next file's words find most of theirs
        self._counts: dict[str | None, int] = store.memo.setdefault(("df", self.trees, self.kinds), {})
        self.total = self._count(None) if self.trees or self.kinds else self.searcher.num_docs
        self._cache: dict[str, float] = {}

    def _count(self, token: str | None) -> int:
        counted = self._counts.get(token)
        if counted is None:
            if len(self._counts) >= MAX_COUNTS_KEPT:
                self._counts.clear()
            counted = self._counts[token] = self._counted(token)
        return counted

    def _counted(self, token: str | None) -> int:
        from ra_query.search.compile import tree_filter

        tantivy = self._tantivy
        schema = self.store.index.schema
        within = [
            tree_filter(schema, list(values), field)
            for field, values in (("tree", self.trees), ("kind", self.kinds))
            if values
        ]
        if token is not None:
            within.append(tantivy.Query.term_query(schema, "text", token))
        query = tantivy.Query.boolean_query([(tantivy.Occur.Must, q) for q in within])
        counted: object = getattr(self.searcher.search(query, limit=1, count=True), "count", 0)
        return int(cast(int, counted) or 0)

    def __call__(self, word: str) -> float:
        cached = self._cache.get(word)
        if cached is not None:
            return cached
        tokens = self.analyzer.analyze(word)
        value = 0.0
        if len(tokens) == 1 and self.total:
            token = tokens[0]
            df = self._count(token) if self.trees or self.kinds else self.searcher.doc_freq("text", token)
            if df:
                value = math.log(1 + (self.total - df + 0.5) / (df + 0.5))
        self._cache[word] = value
        return value


# a result of `ra context`'s searches and the terms its snippet shows (the snippets are made
# for the few results shown, not for every hit of the searches)
Ranked = list[tuple["SearchHit", frozenset[str]]]


def context_topic(store: Store, analysis: Analysis, params: SearchParams) -> TopicResult:
    """The results for an analysis: rule includes first, then the query's — docs before code —
    input files left out."""
    from ra_query.search.focus import long_lines_cut
    from ra_query.search.pipeline import search_topic, with_snippet

    limit = params.limit
    hits: list[SearchHit] = []
    seen: set[str] = set()
    for doc in analysis.include:
        hit = _included(store, doc)
        if hit is not None and hit.id not in seen:
            hits.append(hit)
            seen.add(hit.id)
    found = None
    if analysis.query or (analysis.meaning and store.has_vectors()):
        fetch = params._replace(limit=limit + OVERFETCH, trees=analysis.trees or params.trees)
        if analysis.exclude:  # the left-out source would set the elbow's bar for the rest
            fetch = fetch._replace(cutoff_ratio=0.0)
        ordered: Ranked
        if analysis.definition and not params.kinds:
            found, ordered = _like_definition(store, analysis, fetch)
        elif analysis.code and not params.kinds:
            found, ordered = _for_code(store, analysis, fetch, params)
        else:
            found = search_topic(store, analysis.query, fetch, meaning=analysis.meaning, snippets=False)
            # the documentation of what the files are about first, then the code (stable: each
            # kind keeps its ranking)
            ordered = [
                (hit, found.terms) for hit in sorted(found.hits, key=lambda hit: hit.record.kind == "code")
            ]
        for hit, terms in ordered:
            if len(hits) >= limit:
                break
            if hit.record.doc_id in analysis.exclude or hit.id in analysis.exclude or hit.id in seen:
                continue
            # a translation of the page it stands for is the input itself: not "also in" it
            others = tuple(t for t in hit.translations if t[1].partition("#")[0] not in analysis.exclude)
            shown = hit._replace(translations=others, excerpt=long_lines_cut(hit.record))  # no megabyte lines
            hits.append(with_snippet(store, shown, terms))
            seen.add(hit.id)
    from ra_query.search.pipeline import TopicResult as Topic

    note = None if analysis.terms else "no term of these files is in the index — name a topic with: ra search"
    return Topic(
        query=analysis.query,
        hits=tuple(hits[:limit]),
        total_matches=found.total_matches if found else len(hits),
        terms=found.terms if found else frozenset(),
        note=note,
    )


def context_topics(store: Store, analyses: Sequence[Analysis], params: SearchParams) -> list[TopicResult]:
    """The results for each input (`analyze_each`): one list, or one per input file labelled
    with it. Several inputs share the limit: results are handed out best rank first, round
    the inputs (the first of each, then the second, …) until `params.limit` are out; a result
    is shown once, under the input where it ranks best, and names the other inputs it serves."""
    narrowed = bool(params.trees or params.kinds or params.langs)
    topics = [_said_when_empty(context_topic(store, a, params), a, narrowed) for a in analyses]
    if len(topics) == 1:
        return topics
    kept: dict[tuple[int, int], SearchHit] = {}
    where: dict[str, tuple[int, int]] = {}  # a result's id → where it is kept
    depth = max((len(topic.hits) for topic in topics), default=0)
    for rank in range(depth):
        for t, topic in enumerate(topics):
            if rank >= len(topic.hits):
                continue
            hit = topic.hits[rank]
            place = where.get(hit.id)
            if place is not None:  # already kept for another input: it serves this one too
                first = kept[place]
                kept[place] = first._replace(serves=(*first.serves, analyses[t].input))
            elif len(kept) < params.limit:
                kept[t, rank] = hit
                where[hit.id] = (t, rank)
    return [
        topic._replace(
            hits=tuple(kept[t, rank] for rank in range(len(topic.hits)) if (t, rank) in kept),
            label=analyses[t].input,
        )
        for t, topic in enumerate(topics)
    ]


def _said_when_empty(topic: TopicResult, analysis: Analysis, narrowed: bool) -> TopicResult:
    """`topic` with a note when nothing came of it (a file whose words only it holds, or none in
    the trees or kinds asked for)."""
    if topic.hits or topic.note:
        return topic
    where = "in the trees and kinds asked for" if narrowed or analysis.trees else "in the index"
    note = (
        f"nothing else {where} matches {analysis.input} — context leaves its own chunks out; "
        "search for what it does with `ra search`"
    )
    return topic._replace(note=note)


# for a code file, at `ra context`'s default limit: at most this many docs pages, then
# definitions of other files, then tests
DEFAULT_LIMIT = 10
DOCS_FIRST = 3
# the share of a docs page's sections that merges them into the page, for the docs of a code
# file (a search's is 0.9: a question asks for its section): bench/context.py, 62 files, the
# page that explains the file in the top 5: 0.935 at 0.9, 0.952 at 0.75 (got's 1-promise.md for
# source/as-promise/types.ts is the page, not one of its sections)
PAGE_AGGREGATION = 0.75
NAME_BOOST = 3.0  # the boost of a code file's name words in its docs query (the top term's)
NAME_MATCH = 2.0  # a docs page whose file is named alike the code file (`_named_alike`): its score times this
# a section whose title alone is named alike: many sections of other pages mention the file's
# words (`calculate-retry-delay.ts`: "got:request:retry", "beforeRetry"), its own page's name is
# the stronger sign (bench/context.py, 62 files: page first 0.726 -> 0.839 lexical, 0.661 -> 0.726 hybrid)
TITLE_MATCH = 1.25
FRAMEWORK_PAGES = 2  # then at most this many pages of the upstream trees the file imports
CODE_AFTER = 4
TESTS_AFTER = 1
# a project's history, not what its code does: after the other pages
_HISTORY = re.compile(
    r"(?:^|/)(?:CHANGE[S_-]?LOG|CHANGES|HISTORY|NEWS|RELEASES?)(?:\.[a-z]+)?$", re.IGNORECASE
)


def _for_code(
    store: Store, analysis: Analysis, fetch: SearchParams, params: SearchParams
) -> tuple[TopicResult, Ranked]:
    """A code file's results: "what must I know to change this?" — the docs that explain it
    first (searched apart from the code, which would outrank them on the file's own words), then
    the code it is about, its tests last."""
    from ra_query.search.pipeline import is_test_path, is_test_symbol, search_topic

    # one meaning for both searches (the dense side embeds it once): the file's terms
    query, meaning = analysis.query, analysis.meaning or " ".join(t.word for t in analysis.terms) or None
    # the docs that explain a file tend to share its name: its words weigh as the top term there
    # (a field term would be required: the page's name counts after the search, `_named_alike`)
    named = " ".join(f"{word}^{NAME_BOOST:.2f}" for word in analysis.names)
    docs_query = f"{analysis.docs_query or query} {named}".strip()
    # no elbow: each kind's share is capped below, and the file's name would set a bar too high
    fetch = fetch._replace(cutoff_ratio=0.0)
    # the frameworks it imports have their pages apart, after the project's (which say how the
    # project uses them); otherwise upstream pages compete with the project's for the docs' room
    frameworks = [t for t in analysis.frameworks if not fetch.trees or t in fetch.trees]
    docs_kinds = ("docs",) if frameworks else ("docs", "upstream")
    # the pages by their words alone: a code file's meaning, as an English sentence model reads
    # code, points at the page that explains it less often than its words do (bench/context.py,
    # 62 files, hybrid: that page first 0.726 by words and meaning, 0.839 by words)
    by_words = fetch._replace(kinds=docs_kinds, semantic_weight=0.0)
    # the page that explains the file is the answer: its sections merge into it sooner than a
    # search's (`PAGE_AGGREGATION`), unless the build's setting is lower still
    by_words = by_words._replace(aggregation_threshold=min(fetch.aggregation_threshold, PAGE_AGGREGATION))
    docs = search_topic(store, docs_query, by_words, meaning=meaning, snippets=False)
    only = fetch._replace(kinds=("upstream",), trees=tuple(frameworks))
    upstream = search_topic(store, query, only, meaning=meaning, snippets=False) if frameworks else None
    code = search_topic(store, query, fetch._replace(kinds=("code",)), meaning=meaning, snippets=False)
    others = [h for h in code.hits if h.record.doc_id not in analysis.exclude]  # not the file itself
    tests = [h for h in others if is_test_path(h.record.path) or is_test_symbol(h.record.symbol)]
    rest = [h for h in others if h not in tests]

    def rank(hit: SearchHit) -> tuple[bool, float]:  # a changelog last; a page named as the file up
        factor = name_factor(analysis.names, hit.record.path, hit.record.title)
        return bool(_HISTORY.search(hit.record.path)), -hit.score * factor

    # a limit above the default lends its extra room to the code
    pages = _pages(sorted(docs.hits, key=rank), DOCS_FIRST)
    framework_pages = _pages(upstream.hits, FRAMEWORK_PAGES) if upstream else []
    extra = max(0, params.limit - DEFAULT_LIMIT)
    ordered: Ranked = [
        *((hit, docs.terms) for hit in pages),
        *((hit, upstream.terms) for hit in framework_pages if upstream),
        *((hit, code.terms) for hit in [*rest[: CODE_AFTER + extra], *tests[:TESTS_AFTER]]),
    ]
    found = [docs, code, *([upstream] if upstream else [])]
    total = sum(topic.total_matches for topic in found)
    terms = frozenset[str]().union(*(topic.terms for topic in found))
    hits = tuple(hit for hit, _ in ordered)
    return code._replace(hits=hits, total_matches=total, terms=terms), ordered


def _pages(hits: Iterable[SearchHit], count: int) -> list[SearchHit]:
    """The first `count` pages of `hits`, each once (its best section)."""
    pages: list[SearchHit] = []
    for hit in hits:
        if len(pages) < count and all(hit.record.doc_id != page.record.doc_id for page in pages):
            pages.append(hit)
    return pages


def _like_definition(store: Store, analysis: Analysis, fetch: SearchParams) -> tuple[TopicResult, Ranked]:
    """`likethis` of a definition: the definitions elsewhere that do the same kind of thing
    (other implementations, the async twin), code only; the definition's own parts left out
    and tests after the rest."""
    from ra_query.search.pipeline import is_test_path, is_test_symbol, search_topic

    code = fetch._replace(kinds=("code",))
    found = search_topic(store, analysis.query, code, meaning=analysis.meaning, snippets=False)
    others = [h for h in found.hits if f"{h.record.path}#{h.record.symbol}" != analysis.definition]
    tests = [h for h in others if is_test_path(h.record.path) or is_test_symbol(h.record.symbol)]
    ordered = [*(h for h in others if h not in tests), *tests]
    return found._replace(hits=tuple(ordered)), [(hit, found.terms) for hit in ordered]


def name_factor(names: Sequence[str], path: str, title: str) -> float:
    """What a docs hit's score is multiplied by in a code file's context: `NAME_MATCH` when its
    page's file is named alike the code file (`errors.md` for `errors.ts`), `TITLE_MATCH` when
    only its title is ("beforeRetry" for `calculate-retry-delay.ts`), else 1."""
    if _named_alike(names, path, ""):
        return NAME_MATCH
    return TITLE_MATCH if _named_alike(names, path, title) else 1.0


def _named_alike(names: Sequence[str], path: str, title: str) -> bool:
    """Whether a page's file name or title has a word that one of `names` begins or that begins
    one of them (`auth` and `authentication.md`, `timeouts` and "Timeout")."""
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    found = [w for w in words(f"{stem} {title}") if len(w) >= 3]
    return any(w.startswith(name) or (len(w) >= 4 and name.startswith(w)) for name in names for w in found)


def _included(store: Store, doc: str) -> SearchHit | None:
    """A rule's `include` document as one result showing the whole document, or None when the
    index does not hold it."""
    from ra_query.search.pipeline import SearchHit, merged

    parts = store.doc_chunks(doc)
    if not parts:
        return None
    record = merged(parts[0], parts)
    return SearchHit(record=record, score=0.0, snippet=record.body[:150], parts=tuple(parts))


def analysis_json(analysis: Analysis) -> dict[str, Any]:
    """What a context answer's JSON says of its analysis (`context`): terms, query, trees, …"""
    return {
        "terms": [t._asdict() for t in analysis.terms],
        "query": analysis.query,
        "trees": list(analysis.trees),
        "include": list(analysis.include),
        "excluded": sorted(analysis.exclude),
        "warnings": list(analysis.warnings),
        "counts": analysis.counts,
        "code": analysis.code,
        "names": list(analysis.names),
        "definition": analysis.definition,
        "input": analysis.input,
        "imports": list(analysis.imports),
        "frameworks": list(analysis.frameworks),
        "docs_terms": [t._asdict() for t in analysis.docs_terms],
        "docs_query": analysis.docs_query,
    }


def context_json(payload: dict[str, Any], analyses: Sequence[Analysis]) -> dict[str, Any]:
    """A context answer's JSON: the search payload of its topics (one per input, in order),
    each with its `input` and `context` (`analysis_json`)."""
    for entry, analysis in zip(payload["queries"], analyses, strict=True):
        entry["input"] = analysis.input
        entry["context"] = analysis_json(analysis)
    return payload


def explain_lines(analysis: Analysis) -> list[str]:
    """`--explain`: each term with its score, source, frequency and idf; the query; the counts."""
    lines = ["terms (score  source  frequency  idf):"]
    lines += [
        f"  {t.word:24} {t.score:8.2f}  {t.source:7}  {t.frequency:5}  {t.idf:5.2f}" for t in analysis.terms
    ]
    lines.append(f"query: {analysis.query or '(none)'}")
    if analysis.docs_query and analysis.docs_query != analysis.query:
        lines.append(f"docs query (the words scored among the pages): {analysis.docs_query}")
    if analysis.trees:
        lines.append(f"trees: {', '.join(analysis.trees)}")
    if analysis.include:
        lines.append(f"included first: {', '.join(analysis.include)}")
    if analysis.exclude:
        lines.append(f"left out (the input files): {', '.join(sorted(analysis.exclude))}")
    if analysis.imports:
        lines.append(f"imports: {', '.join(analysis.imports)}")
    if analysis.code:
        names = ", ".join(analysis.names) or "(none)"
        frameworks = (
            f"then at most {FRAMEWORK_PAGES} pages of the upstream trees it imports "
            f"({', '.join(analysis.frameworks)}), "
            if analysis.frameworks
            else ""
        )
        lines.append(
            f"code files: the docs first (at most {DOCS_FIRST} pages, searched apart; the files' names "
            f"weigh {NAME_BOOST:g} there: {names}), {frameworks}then at most {CODE_AFTER} definitions "
            f"of other files, then {TESTS_AFTER} test (--kind chooses the kinds instead)"
        )
    c = analysis.counts
    lines.append(
        f"files {c['files']} (read {c['read']}, skipped {c['skipped']}), content words {c['candidates']}, "
        f"terms in the index {c['terms']}, kept {c['kept']}"
    )
    return lines


def like_this(
    store: Store, source: str, *, options: ContextOptions | None = None, trees: Sequence[str] = ()
) -> Analysis:
    """`likethis ID|FILE`: the analysis of an indexed chunk or document (by id), or of a file.

    A file is read as `ra context` reads one, without context rules; a chunk's title and text
    stand in for a file's content, and every word of a short chunk counts (no minimum
    frequency). The source itself is left out of the results.

    Raises:
        NotFoundError: `source` is neither an existing file nor an indexed id.
    """
    from ra_query.search.get import get, not_found

    options = options or ContextOptions()
    if os.path.isfile(source):
        analysis = analyze(store, [given_file(source)], options=options, trees=trees)
        data = _read(given_file(source), options.sample_size) or b""
        return analysis._replace(meaning=data.decode("utf-8", "replace"))
    if ":" not in source:
        raise not_found(source)
    result = get(store, source)  # NotFoundError when the id names nothing indexed
    text = "\n\n".join(f"# {c.title}\n\n{c.body}" for c in result.chunks)
    analysis = analyze(
        store,
        [InputFile(source, "", "", text)],
        options=options._replace(min_term_frequency=1),
        trees=trees,
    )
    meaning = "\n".join(" › ".join(c.breadcrumb) + "\n" + c.body for c in result.chunks)
    first = result.chunks[0] if result.chunks else None
    # a definition: what is like it is code (its parts, which share its symbol, are itself)
    code = first is not None and first.kind == "code" and bool(first.symbol)
    alike = f"{first.path}#{first.symbol}" if first is not None and code else ""
    return analysis._replace(exclude=frozenset({result.id}), meaning=meaning, definition=alike)

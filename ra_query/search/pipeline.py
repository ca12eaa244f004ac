"""The search pipeline: read → candidates → aggregate → show → collapse → elbow → limit, per topic.

For each topic (DECISIONS 16–20):
1. read the query: by default a syntax error is repaired and noted (`read_query`); `strict`
   raises it instead; `raw` hands the text to tantivy's own parser;
2. fetch up to `candidate_limit` chunks ranked by BM25 (ra_query.search.compile: plain words ranked, not
   required). A query whose required parts (phrases, `field:` terms) match nothing is run again
   with every part ranked (marked `relaxed`, unless `strict`); a query that still finds nothing is
   retried with fuzzy clauses (marked `fuzzy`);
3. multiply the scores of local-tree chunks by `local_boost` and re-rank; in a hybrid search,
   fuse them with the chunks nearest the query's meaning (ra_query.search.hybrid);
   names first: the chunks the query is the name of go first (ra_query.search.named);
4. aggregate siblings into parents over the real parent chain (a named chunk never merges);
5. show: a result whose own body is empty yields to its best-matching descendant, or shows its
   whole section when no descendant matched — never an empty answer;
6. collapse results with the same content (the same page in several places) into the first,
   which lists the others as `also`;
7. cut at the elbow, keep `limit`.

Across topics a chunk is shown once, under the topic where it ranks best.
"""

import functools
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from ra_query.artifacts.models import ChunkRecord
from ra_query.artifacts.schema import build_analyzer, doc_id_of, stopwords_of
from ra_query.artifacts.store import Store
from ra_query.errors import ArtifactError, InputError, QuerySyntaxError
from ra_query.search.aggregate import Candidate, PipelineTrace, Result, pipeline
from ra_query.search.compile import Compiler, one_of, tree_filter
from ra_query.search.evidence import Evidence
from ra_query.search.hybrid import DEFAULT_SEMANTIC_WEIGHT, DENSE_K, FUSED_SHARE
from ra_query.search.named import named_first
from ra_query.search.syntax import MAX_DEPTH, And, Node, Or, Term, parse_query, read_query, render, to_query
from ra_query.search.versions import (
    may_be_copies,
    named_version,
    newest_first,
    pairs,
    same_page,
    unversioned,
    version_of,
)
from ra_query.semantic import nearby
from ra_query.text.locales import (
    DEFAULT_LOCALE,
    EMBEDDED_LANGUAGES,
    base,
    korean_stems,
    language_stems,
    latin_locale,
    own_stemmer,
    script_locale,
    translation_patterns,
)
from ra_query.text.names import is_later_part

if TYPE_CHECKING:
    import tantivy

    from ra_query.search.hybrid import Fused
    from ra_query.text.codewords import Table

# chosen with bench/quality.py (docs/searching.md): one combined field, small title and path bonuses
DEFAULT_BOOSTS: Mapping[str, float] = MappingProxyType({"text": 1.0, "title": 0.1, "tags": 0.0, "path": 0.1})
DEFAULT_PHRASE_BOOST = 0.2
# code and docs in one index: measured on 115 code and 67 docs questions over two codebases and
# their docs (bench/code_search.py, docs/code.md)
DEFAULT_TEST_WEIGHT = 0.5
DEFAULT_CODE_BOOST = 1.25
# a type's own chunk — a class's or struct's declaration, its doc comment and fields, an interface,
# an enum — matches a question's words in its doc comment and field names, but the code that does
# what a question asks about is a function or method: six codebases' 390 code questions, the
# definition in the top 5 (bench/tune_code.py, docs/code.md): 0.556 → 0.574 by words, 0.613 →
# 0.626 hybrid at 0.8; no codebase lost one. A question that asks which class or type (`which
# exception class …`) keeps its types' weight; a query that is a name orders its chunks without it
DEFAULT_TYPE_WEIGHT = 0.8
TYPE_DEFINITIONS = frozenset(
    {"class", "struct", "type", "interface", "enum", "trait", "impl", "union", "record", "annotation"}
    | {"extension"}
)
_ASKS_FOR_TYPE = re.compile(
    r"\b(?:which|what)\s+(?:[\w-]+\s+){0,2}?(?:class|struct|interface|enum|trait|type)(?:es|s)?\b",
    re.IGNORECASE,
)
# a question of how to use the software (`how do I …`, `can I …`, `is there a way to …`) is
# answered by its docs at least as often as by its code: code's boost is times this for it (1.25
# → 1.0, no head start). Six codebases' 143 docs and 390 code questions (bench/tune_code.py):
# docs 0.594 → 0.643 by words, 0.706 → 0.741 hybrid; code 0.559 → 0.556, 0.608 → 0.613
USAGE_CODE_SHARE = 0.8
# a question of where in the code something is done or how it works (`where is …`, `which
# function …`, `how does it …`): code's boost is times this (bench/tune_code.py: 1.2-1.5 all find
# more definitions; at 1.3 the two sets written last gained 0.621 → 0.670, docs questions none lost)
WHERE_CODE_SHARE = 1.3
_WHERE = re.compile(
    r"^\W*(?:where\s+(?:is|are|was|does|do|did)\b"
    r"|which\s+(?:function|method|part|code|piece|class|routine|object|type|module|file)s?\b"
    # how it works, not how to use it (`how does it pick …`, `how are bursts collapsed`; `how do I`
    # is `asks_how_to_use`)
    r"|how\s+(?:does|do|is|are|did|was)\s+(?!(?:i|we)\b))",
    re.IGNORECASE,
)
_USAGE = re.compile(
    r"^\W*(?:how\s+(?:do|can|could|should|would)\s+(?:i|we)|(?:can|could|should)\s+(?:i|we)|"
    r"is\s+there\s+(?:a|any)\s+way|do\s+(?:i|we)\s+need|how\s+to|"
    r"what(?:'s|\s+is)\s+the\s+(?:best|recommended|right)\s+way)\b",
    re.IGNORECASE,
)
# evidence from a definition's file and from the docs that name it (ra_query.search.evidence)
DEFAULT_FILE_WEIGHT = 0.0
DEFAULT_DOCS_WEIGHT = 0.0
DEFAULT_CODE_WORDS = 0.4
DEFAULT_CODE_SEMANTIC_WEIGHT = 0.45
# a test file, by the conventions of the languages ra chunks as code
_TEST_PATH = re.compile(
    r"(?:^|/)(?:[Tt]ests?|__tests__|testdata|spec|[a-z]+Tests?)/|(?:^|/)test_[^/]*$|_test\.\w+$|_spec\.(?:rb|lua)$|"
    r"\.(?:test|spec)\.[cm]?[jt]sx?$|Tests?\.(?:java|cs|kt|php|swift)$|(?:Spec|Suite|Tests?)\.scala$|"
    r"\.bats$|(?:^|/)t/t\d{4}-[^/]*\.sh$"  # bats-core's; git's (sharness's) `t/t1234-name.sh`
)

# a program that shows how to use the code (`examples/basic/main.go`, chi's `_examples/`): code
# that calls the library, not the library; weighed as tests are (`test_weight`)
_EXAMPLE_PATH = re.compile(r"(?:^|/)_?(?:[Ee]xamples?|[Ss]amples?|[Dd]emos?)/")

SNIPPET_CHARS = 150
# the most chunks of one definition a candidate pool holds (`_parts_capped`), and how much deeper
# BM25 is asked when they crowd it: fzf's 31-part table of accented letters had filled the pool
# of "which code folds accented letters to ASCII", and one result was shown
PARTS_IN_POOL = 3
POOL_DEPTH = 4
# bounds on what one search may cost, whatever the caller asks (issue 10): a limit or candidate
# limit past these makes tantivy allocate for them up front; a query past MAX_QUERY_WORDS is
# searched by its first words (a pasted page needs no more)
MAX_LIMIT = 1000
MAX_CANDIDATE_LIMIT = 10_000
MAX_QUERY_WORDS = 1000
RELAXED_NOTE = "nothing has every phrase and field term; showing chunks with any of the words"
# a question that quotes an example value (`where is a value like "10mb" turned into bytes`) is a
# sentence with a phrase that few chunks hold: when fewer than the limit have it, the chunks that
# have it come first and those with any of the words follow
FEW_NOTE = "only {n} {chunks} every phrase and field term; chunks with any of the words follow"
SENTENCE_WORDS = 4  # a query's plain words (outside phrases and fields), one a stop word: a sentence
NOTHING_TO_SEARCH = "no words to search for (tree:, kind:, lang: and -word only filter) — add a word"
NO_WORDS = "no words to search for ({query} has no letter or digit) — add a word"


def _nothing_to_search(query: str) -> str:
    """Why a query compiled to nothing: filters alone, or no letter or digit at all (`!!!`)."""
    return NOTHING_TO_SEARCH if any(c.isalnum() for c in query) else NO_WORDS.format(query=repr(query))


_WORD = re.compile(r"\w+")


def asks_for_a_type(text: str) -> bool:
    """Whether a query asks which class, struct, interface, enum, trait or type (`which exception
    class is raised …`, `what type holds …`): its types keep their weight (`type_weight`)."""
    return _ASKS_FOR_TYPE.search(text) is not None


def asks_where_in_code(text: str) -> bool:
    """Whether a query asks where in the code something is done or how it works (`where is the
    retry delay computed`, `which function parses the header`, `how does it pick the
    subcommand`): code answers it more often than prose about it does (`WHERE_CODE_SHARE`)."""
    return _WHERE.match(text) is not None


def asks_how_to_use(text: str) -> bool:
    """Whether a query asks how to use the software (`how do I enable completion`, `can I keep
    the old name`), not how it works (`how does it pick the subcommand`, `where is …`): its docs
    answer it as often as its code (`USAGE_CODE_SHARE`). `how do you …` is not one: it asks the
    project how it does something as often as how to do it."""
    return _USAGE.match(text) is not None


def is_test_path(path: str) -> bool:
    """Whether `path` is a test file (`tests/…`, `test_x.py`, `x_test.go`, `x.spec.ts`, `XTest.java`)."""
    return _TEST_PATH.search(path) is not None


def _calls_the_code(record: ChunkRecord) -> bool:
    """Whether a code chunk is code that calls the project's rather than the project's own: a
    test (a test file, a test module or function, a test block beside the code it tests: Zig's
    `test "adds points" {…}`) or an example program (`_EXAMPLE_PATH`)."""
    path = record.path
    if record.defines == "test" or is_test_path(path) or is_test_symbol(record.symbol):
        return True
    return _EXAMPLE_PATH.search(path) is not None


def is_test_symbol(symbol: str) -> bool:
    """Whether a definition named `symbol` is test code in a source file: inside a test module
    (Rust's `mod tests`, `mod fmt_tests`), or a `test_…` function."""
    parts = symbol.split(".")
    inside = any(p in ("tests", "test") or p.endswith(("_tests", "_test")) for p in parts[:-1])
    last = parts[-1]
    return inside or last == "tests" or last.endswith("_tests") or last.startswith("test_")


@functools.cache
def code_words_of(stemmer: str) -> "Table":
    """The code-words table (ra_query.text.codewords) in the tokens of `stemmer`'s analyzer."""
    from ra_query.text.codewords import table

    return table(build_analyzer(stemmer).analyze, stopwords_of(stemmer))


class SearchParams(NamedTuple):
    """Everything that shapes a search; defaults are DECISIONS 16–19's."""

    limit: int = 5
    candidate_limit: int = 20
    cutoff_ratio: float = 0.5
    aggregation_threshold: float = 0.9
    aggregation: bool = True
    boosts: Mapping[str, float] = DEFAULT_BOOSTS
    local_boost: float = 1.5
    global_trees: frozenset[str] = frozenset()
    fuzzy_distance: int = 1
    phrase_boost: float = DEFAULT_PHRASE_BOOST
    stopwords: bool = True
    trees: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()  # only chunks of these source kinds (docs, code): --kind
    langs: tuple[str, ...] = ()  # only docs in these natural languages (`ja`, `pt-br`): --lang
    strict: bool = False
    raw: bool = False
    semantic_weight: float = DEFAULT_SEMANTIC_WEIGHT  # the dense side's share where there are vectors
    code_semantic_weight: float = DEFAULT_CODE_SEMANTIC_WEIGHT  # the same, of a code chunk
    semantic_asked: bool = False  # the caller asked for hybrid: say so when it cannot be had
    test_weight: float = DEFAULT_TEST_WEIGHT  # a test file's code chunks: their score times this
    type_weight: float = DEFAULT_TYPE_WEIGHT  # a type's own chunk (class, struct): its score times this
    code_boost: float = DEFAULT_CODE_BOOST  # code chunks' score times this (matters beside docs)
    file_weight: float = DEFAULT_FILE_WEIGHT  # a definition's file's own match lends it this share
    docs_weight: float = DEFAULT_DOCS_WEIGHT  # a docs chunk naming a definition lends it this share
    code_words: float = DEFAULT_CODE_WORDS  # a word's code synonyms' share (ra_query.text.codewords)

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> "SearchParams":
        """The params a build recorded (`Store.search_defaults()`), JSON lists made frozensets.

        Keys this ra does not know (from a newer build) are ignored, not a crash.

        Raises:
            ArtifactError: a value of the wrong type or out of range (a hand-edited manifest).
        """
        known = {name: value for name, value in settings.items() if name in cls._fields}
        for name, value in known.items():
            problem = _setting_problem(name, value)
            if problem is not None:
                raise ArtifactError(
                    f"the manifest records search.{name} = {value!r}, {problem} — rebuild the "
                    "artifacts with: ra update --full"
                )
        if "global_trees" in known:
            known["global_trees"] = frozenset(known["global_trees"])
        for name in ("trees", "kinds"):
            if name in known:
                known[name] = tuple(known[name])
        return cls(**known)


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value  # not NaN


def _setting_problem(name: str, value: object) -> str | None:
    """Why a recorded search setting cannot be used, or None when it can."""
    ranges: dict[str, tuple[float, float, bool]] = {  # (low, high, whole number)
        "limit": (1, MAX_LIMIT, True),
        "candidate_limit": (1, MAX_CANDIDATE_LIMIT, True),
        "fuzzy_distance": (0, 2, True),
        "cutoff_ratio": (0, 1, False),
        "aggregation_threshold": (0, 1, False),
        "phrase_boost": (0, 1000, False),
        "local_boost": (0, 1000, False),
        "semantic_weight": (0, 1, False),
        "code_semantic_weight": (0, 1, False),
        "test_weight": (0, 1, False),
        "type_weight": (0, 1, False),
        "code_boost": (0, 1000, False),
        "file_weight": (0, 1000, False),
        "docs_weight": (0, 1000, False),
        "code_words": (0, 1000, False),
    }
    if name in ranges:
        low, high, whole = ranges[name]
        fits = _number(value) and (not whole or isinstance(value, int)) and low <= value <= high  # type: ignore[operator]
        kind = "an integer" if whole else "a number"
        return None if fits else f"not {kind} from {low:g} to {high:g}"
    if name in ("aggregation", "stopwords", "strict", "raw", "semantic_asked"):
        return None if isinstance(value, bool) else "not true or false"
    if name in ("global_trees", "trees", "kinds"):
        ok = isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)  # pyright: ignore[reportUnknownVariableType]
        return None if ok else ("not a list of kinds" if name == "kinds" else "not a list of tree names")
    if name == "boosts":
        ok = isinstance(value, dict) and all(
            isinstance(k, str) and _number(v) and 0 <= v <= 1000  # type: ignore[operator]
            for k, v in value.items()  # pyright: ignore[reportUnknownVariableType]
        )
        return None if ok else "not a table of field weights from 0 to 1000"
    return None


class SearchHit(NamedTuple):
    """One result: a chunk, its score, and what was merged into it."""

    record: ChunkRecord
    score: float
    constituents: tuple[str, ...] = ()
    aggregated: bool = False
    snippet: str = ""
    parts: tuple[ChunkRecord, ...] = ()  # the chunks shown, in document order (a section's all)
    also: tuple[str, ...] = ()  # results with the same content, shown once as this one
    url: str | None = None  # where an upstream page was fetched from
    excerpt: str | None = None  # what a search shows of a long prose chunk (search.focus.with_excerpts)
    translations: tuple[tuple[str, str], ...] = ()  # (locale, id): the same page in other languages
    serves: tuple[str, ...] = ()  # `context` of several files: the other inputs it is a result for

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def breadcrumb(self) -> tuple[str, ...]:
        return self.record.breadcrumb


class TopicResult(NamedTuple):
    """The results of one topic, with how they were found."""

    query: str
    hits: tuple[SearchHit, ...]
    total_matches: int
    terms: frozenset[str] = frozenset()
    relaxed: bool = False
    fuzzy: bool = False
    note: str | None = None
    explain: tuple[str, ...] = ()
    focus: frozenset[str] = frozenset()  # the terms that are not stop words: what excerpts show
    label: str | None = None  # what the results are for, when not the query (`context`: an input file)


# a docs chunk in the language a query said (by its script, its words or --lang), among pages in
# others that match its Latin words (`APIにJSONをPOSTで送る`: English pages say API, JSON and POST
# more often): bench/locales.py, Japanese known items hit@5 0.771 → 0.829 (1.5: no change), the
# other sets the same
READER_BOOST = 2.0


class _Run:
    """One topic's search against one store (keeps the searcher and fetched records)."""

    def __init__(self, store: Store, params: SearchParams) -> None:
        self.store = store
        self.params = params
        self.searcher = store.index.searcher()
        self.analyzer = build_analyzer(store.stemmer)
        self.records: dict[str, ChunkRecord] = {}
        self.sections: dict[str, tuple[ChunkRecord, ...]] = {}
        self.shown: dict[str, Shown] = {}
        self.reader = DEFAULT_LOCALE  # the query's natural language: its translation is shown
        self.reader_said = False  # by --lang, its script or its words (else the default: a guess)
        self.named: frozenset[str] = frozenset()  # the chunks the query is the name of
        self.words: frozenset[str] = frozenset()  # the query's words, lower-cased (a version it names)
        self.compiled: tantivy.Query | None = None  # the query's words as compiled (ranked)
        self.holds_reader: bool | None = None  # whether a docs chunk is in `reader` (asked once)
        self.fusing = False  # whether BM25's candidates are fused with the nearest by meaning

    def compiler(self, *, fuzzy: bool = False, relax: bool = False) -> Compiler:
        return Compiler(
            schema=self.store.index.schema,
            analyzer=self.analyzer,
            boosts=self.params.boosts,
            searcher=self.searcher,
            fuzzy_distance=self.params.fuzzy_distance,
            fuzzy=fuzzy,
            phrase_boost=self.params.phrase_boost,
            is_stopword=stopwords_of(self.store.stemmer) if self.params.stopwords else None,
            strict=self.params.strict,
            relax=relax,
            code_words=code_words_of(self.store.stemmer) if self._code_words() else None,
            code_words_weight=self.params.code_words,
            stems=self._stems(),
            same_words_language=self._same_words_language(),
            trees=self.store.trees(),
        )

    def _same_words_language(self) -> str | None:
        """The reader's language when it was said and has words of one meaning
        (ra_query.text.samewords: Chinese, Japanese, Korean)."""
        from ra_query.text.samewords import GROUPS

        language = base(self.reader) if self.reader_said else None
        return language if language in GROUPS else None

    def _stems(self) -> Callable[[str], str] | None:
        """A query word's stems in the reader's language, when it was said and has a stemmer of
        its own, or is Korean (a word without its particle): the documents in it hold theirs
        (ra_build.pipeline.shards.ranked_text)."""
        if self.reader_said and base(self.reader) == "ko":
            return korean_stems
        stemmer = own_stemmer(self.reader, self.store.stemmer) if self.reader_said else None
        return None if stemmer is None else functools.partial(language_stems, stemmer=stemmer)

    def _code_words(self) -> bool:
        """Whether query words reach their code synonyms: where the index has code (the docs-only
        indexes, SciFact's and CACM's among them, rank as they always did)."""
        if self.params.code_words <= 0:
            return False
        from ra_query.sources.languages import code_languages

        return bool(code_languages(self.store.manifest))

    def filters(self) -> "tantivy.Query | None":
        """The -t/--tree and --kind filters as one zero-score clause, or None."""
        import tantivy

        schema = self.store.index.schema
        clauses = [tree_filter(schema, list(self.params.trees))] if self.params.trees else []
        if self.params.kinds:
            clauses.append(tree_filter(schema, list(self.params.kinds), "kind"))
        if self.params.langs:
            clauses.append(tree_filter(schema, list(self.params.langs), "lang"))
        if len(clauses) < 2:
            return clauses[0] if clauses else None
        return tantivy.Query.boolean_query([(tantivy.Occur.Must, c) for c in clauses])

    def boost(self, record: ChunkRecord, *, types: bool = True) -> float:
        """What a chunk's score is multiplied by: `local_boost` outside the global trees;
        `READER_BOOST` for a docs chunk in the language the query said (its script, its words,
        --lang);
        `code_boost` for code, which an agent asking how something is done wants before the
        prose about it; `test_weight` for the code of a test file, of a test module in a
        source file or of an example program (the code that does something before the code that
        calls it); and
        `type_weight` for a type's own chunk (the functions that do the work before the class
        that declares them) unless `types` is False (a query that is a name: `decoder` finds
        the class `Decoder` before the function `decode_r`)."""
        params = self.params
        boost = 1.0 if record.tree in params.global_trees else params.local_boost
        if self.reader_said and record.locale and base(record.locale) == base(self.reader):
            boost *= READER_BOOST
        if record.kind == "code":
            boost *= params.code_boost
            if params.test_weight != 1.0 and _calls_the_code(record):
                boost *= params.test_weight
            if types and params.type_weight != 1.0 and record.defines in TYPE_DEFINITIONS:
                boost *= params.type_weight
        return boost

    def candidates(self, query: "tantivy.Query") -> tuple[list[tuple[ChunkRecord, float]], int]:
        import tantivy

        filters = self.filters()
        if filters is not None:
            query = tantivy.Query.boolean_query([(tantivy.Occur.Must, query), (tantivy.Occur.Must, filters)])
        limit = self.params.candidate_limit
        found, count = self.hits(query, limit)
        crowded = len(found) == limit and len(_parts_capped(found, _first)) < limit
        if crowded and not self.fusing and limit < MAX_CANDIDATE_LIMIT:
            # the parts of a long definition (a table, a help text cut into 30) crowd the pool:
            # a deeper one, each definition's best PARTS_IN_POOL, fills it with others (a fused
            # search caps its fused list instead, `_hybrid`: a deeper pool would lower the least
            # BM25 score its scores are scaled from, and weigh words more than meaning)
            deeper, count = self.hits(query, min(limit * POOL_DEPTH, MAX_CANDIDATE_LIMIT))
            found = _parts_capped(deeper, _first)[:limit]
        return found, count

    def hits(self, query: "tantivy.Query", limit: int) -> tuple[list[tuple[ChunkRecord, float]], int]:
        """The best `limit` chunks BM25 ranks for `query`, boosted (`boost`), and how many match."""
        result = self.searcher.search(query, limit=limit, count=True)
        found: list[tuple[ChunkRecord, float]] = []
        for score, address in result.hits:
            record = self.store.read(self.searcher, address)
            self.records[record.id] = record
            found.append((record, float(score) * self.boost(record)))
        found.sort(key=lambda pair: (-pair[1], pair[0].id))
        count: int | None = getattr(result, "count", None)
        return found, int(count or 0)

    def lookup(self, chunk_id: str) -> Candidate | None:
        record = self.record(chunk_id)
        if record is None:
            return None
        code = record.kind == "code"
        return Candidate(record.id, record.parent_id, record.depth, record.sibling_count, 0.0, code)

    def record(self, chunk_id: str) -> ChunkRecord | None:
        record = self.records.get(chunk_id) or self.store.get_chunk(chunk_id)
        if record is not None:
            self.records[record.id] = record
        return record

    def show(self, results: list[Result], found: list[tuple[ChunkRecord, float]]) -> list[Result]:
        """The pipeline's show step (`_shown`); remembers how each result is shown."""
        shown = _one_part_each(_declared(_shown(self, results, found), self.record), self.named)
        shown = _forwarders_folded(shown, self.named)
        self.shown = {s.id: s for s in shown}
        if self.named:  # what the query names stays first, above a section many matches merged into
            # (a named page with no text of its own is shown as the section under its title)
            shown.sort(key=lambda s: s.id not in self.named and s.record.parent_id not in self.named)
        return [s.result for s in shown]

    def section(self, record: ChunkRecord) -> tuple[ChunkRecord, ...]:
        if record.id not in self.sections:
            self.sections[record.id] = section(self.store, record)
        return self.sections[record.id]


def _read(text: str, params: SearchParams, stemmer: str) -> tuple[Node | None, str | None]:
    """The query's AST and how it was read; a sentence's `-word` is a flag, searched
    (syntax._flags_of_a_sentence), whether or not its stop words are left out."""
    is_stopword = stopwords_of(stemmer)
    if params.strict:
        return parse_query(text, is_stopword), None
    return read_query(text, is_stopword)


# the vectors of the last texts embedded: `ra context` on a code file searches its docs and its
# code apart with one meaning, embedded once
_VECTORS: dict[tuple[str, str], Any] = {}
_VECTORS_KEPT = 16


def search_topic(
    store: Store, text: str, params: SearchParams, *, meaning: str | None = None, snippets: bool = True
) -> TopicResult:
    """Run one topic through the whole pipeline.

    `meaning` is what the dense side embeds instead of the query's own words (`ra likethis`: the
    source's text). Without `snippets` the hits have none: a caller that shows a few of many
    (`ra context`) makes theirs with `with_snippet`.
    """
    params, explain = _topic_params(params, text)
    hybrid_on = not params.raw and params.semantic_weight > 0
    hybrid_on = hybrid_on and (store.has_vectors() or params.semantic_asked)
    said = params.langs[0] if params.langs else script_locale(text) or latin_locale(text)  # None: unsaid
    reader = said or DEFAULT_LOCALE
    # a query in a language the model does not know would be embedded as if it were English
    words_only = hybrid_on and meaning is None and base(reader) not in EMBEDDED_LANGUAGES
    hybrid_on = hybrid_on and not words_only
    fused_limit = fused_candidates(params)  # what aggregation sees of a fused list
    if hybrid_on and store.has_vectors():  # as many BM25 candidates as dense ones: fused fairly
        params = params._replace(candidate_limit=max(params.candidate_limit, DENSE_K))
    run = _Run(store, params)
    run.fusing = hybrid_on and store.has_vectors()
    run.reader, run.reader_said = reader, said is not None
    run.words = frozenset(word.strip(".") for word in re.findall(r"[\w.-]+", text.lower()))
    relaxed = fuzzy = False
    compiled: tantivy.Query | None = None
    named: tuple[str, ...] = ()
    query_text, cut_note = _first_words(text)
    if words_only:
        cut_note = _also(cut_note, _words_only(reader)) if cut_note else _words_only(reader)
    if params.raw:
        found, total = _raw_candidates(run, store, query_text, params)
        node, note, terms = None, cut_note, frozenset[str]()
        explain.append(f"raw query: {query_text}")
    else:
        node, note = _read(query_text, params, store.stemmer)
        note = _also(cut_note, note) if cut_note and note else cut_note or note
        by_meaning_alone = bool(meaning) and params.semantic_weight > 0 and store.has_vectors()
        if node is None and not by_meaning_alone:
            return TopicResult(text, (), 0, note=note or "nothing to search for — give at least one word")
        reading = _parsed(node, params.strict) if node is not None else "(nothing: by meaning alone)"
        explain.append(f"parsed: {reading}")
        compiler = run.compiler()
        compiled = compiler.compile(node) if node is not None else None
        run.compiled = compiled
        terms = frozenset(compiler.terms)
        explain += _reading(compiler)
        if compiled is None and not by_meaning_alone:
            return TopicResult(text, (), 0, terms, note=_also(note, _nothing_to_search(query_text)))
        found, total = run.candidates(compiled) if compiled is not None else ([], 0)
        fuzzy = bool(found and compiler.typos)
        if node is not None and compiler.required and not params.strict:
            relaxing = _relaxed(run, node, found)
            if relaxing is not None:
                found, more_total, relaxed_note, fuzzy, read = relaxing
                total, relaxed, note = max(total, more_total), True, _also(note, relaxed_note)
                explain += [f"relaxed: {line}" for line in read]
        if not found and node is not None and params.fuzzy_distance > 0:
            fuzzy_query = run.compiler(fuzzy=True, relax=not params.strict).compile(node)
            if fuzzy_query is not None:
                found, total = run.candidates(fuzzy_query)
                fuzzy = bool(found)
                relaxed = fuzzy and compiler.required and not params.strict
    if not params.raw and compiled is not None and (params.file_weight > 0 or params.docs_weight > 0):
        found = _evidence(run, compiled, found)
    if hybrid_on and said is None and meaning is None and (matched := _unembedded_match(found)):
        hybrid_on, run.reader, note = False, matched, _also(note, _words_only(matched))
    fused: dict[str, Fused] = {}
    if hybrid_on:
        found, fused, hybrid_note = _hybrid(run, node, found, relaxed, meaning, fused_limit)
        note = _also(note, hybrid_note) if hybrid_note else note
    if not params.raw and meaning is None:
        found, named = _named(run, query_text, compiled, found, explain)
        total = max(total, len(named))
    explain.append(
        f"parameters: candidate_limit={params.candidate_limit} aggregation_threshold="
        f"{params.aggregation_threshold} cutoff_ratio={params.cutoff_ratio} limit={params.limit}"
        f" aggregation={'on' if params.aggregation else 'off'} fuzzy_distance={params.fuzzy_distance}"
    )
    trace = _pipeline(run, found, params, named)
    explain.append(
        f"counts: matches={total} "
        + " ".join(f"{name}={count}" for name, count in trace.stages())
        + (" (fuzzy)" if fuzzy else "")
        + (" (relaxed)" if relaxed else "")
    )
    hits = tuple(_hit(run, run.shown[result.id], terms, snippets) for result in trace.results)
    if fused:
        explain += [_fused_line(hit.id, fused.get(hit.id)) for hit in hits]
    if not hits and note is None:
        note = (
            "no chunk has every word — drop --strict to rank chunks with any of them"
            if params.strict and not params.raw
            else "no results — try fewer or different words"
        )
    is_stop = stopwords_of(store.stemmer)
    focus = frozenset(t for t in terms if not is_stop(t))
    return TopicResult(text, hits, total, terms, relaxed, fuzzy, note, tuple(explain), focus)


def _parsed(node: Node, strict: bool) -> str:
    """How `--explain` shows the query read: with `strict`, every AND spelt out (each word
    required); else as typed again, juxtaposed words being ranked, not required (an `AND` there
    had read as if a chunk needed them all), and said so where there are two or more."""
    if strict:
        return render(node)
    ranked = 0
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, And):
            stack.extend(item.items)
        elif isinstance(item, Term) and item.field is None:
            ranked += 1  # an Or's words and a Not's are not ranked words of the query
    return to_query(node) + (" (ranked words: a chunk needs any one, more rank higher)" if ranked > 1 else "")


def _relaxed(
    run: _Run, node: Node, found: list[tuple[ChunkRecord, float]]
) -> tuple[list[tuple[ChunkRecord, float]], int, str, bool, list[str]] | None:
    """A query whose phrases or field terms no chunk has — or, read as a sentence, fewer chunks
    than the limit (`_reads_as_a_sentence`: a quoted example value) — searched with every part
    ranked: (its candidates, those that had every part first; their count; the note; whether a
    typo matched; the --explain lines), or None when that finds no more."""
    if found and not (len(found) < run.params.limit and _reads_as_a_sentence(node, run.store.stemmer)):
        return None
    relaxer = run.compiler(relax=True)
    loose = relaxer.compile(node)
    more, total = run.candidates(loose) if loose is not None else ([], 0)
    if len(more) <= len(found):
        return None
    chunks = "chunks have" if len(found) > 1 else "chunk has"
    note = FEW_NOTE.format(n=len(found), chunks=chunks) if found else RELAXED_NOTE
    return _having_first(found, more), total, note, bool(relaxer.typos), _reading(relaxer)


def _reads_as_a_sentence(node: Node, stemmer: str) -> bool:
    """Whether a query reads as a sentence: `SENTENCE_WORDS` plain words or more outside its
    phrases, fields and exclusions, one of them a stop word (the parser's test for a `-word` in a
    sentence, ra_query.search.syntax, with a floor on the words)."""
    words: list[str] = []

    def visit(item: Node) -> None:
        if isinstance(item, Term) and item.field is None:
            words.append(item.text)
        elif isinstance(item, And | Or):
            for child in item.items:
                visit(child)

    visit(node)
    return len(words) >= SENTENCE_WORDS and any(map(stopwords_of(stemmer), words))


def _having_first(
    having: list[tuple[ChunkRecord, float]], more: list[tuple[ChunkRecord, float]]
) -> list[tuple[ChunkRecord, float]]:
    """The chunks that have every phrase (`having`) first, then the rest of `more` (a relaxed
    search's): each of `having` scores its relaxed score plus `more`'s best."""
    top = max((score for _, score in more), default=0.0)
    scores = {record.id: score for record, score in more}
    records = {record.id: record for record, _ in more}
    for record, score in having:
        records[record.id] = record
        scores[record.id] = scores.get(record.id, score) + top
    ranked = sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))
    return [(records[i], score) for i, score in ranked]


def _topic_params(params: SearchParams, text: str) -> tuple[SearchParams, list[str]]:
    """A topic's params — the limits within bounds; for a question of where in the code something
    is done (`asks_where_in_code`), code's boost times `WHERE_CODE_SHARE`; for one of how to use
    the software (`asks_how_to_use`), times `USAGE_CODE_SHARE`: its docs answer it as often as its
    code; for one that asks which class or type (`asks_for_a_type`), types at their full weight —
    and the --explain lines that say so."""
    params = params._replace(
        limit=min(params.limit, MAX_LIMIT), candidate_limit=min(params.candidate_limit, MAX_CANDIDATE_LIMIT)
    )
    if params.raw:
        return params, []
    said: list[str] = []
    if asks_where_in_code(text):
        params = params._replace(code_boost=params.code_boost * WHERE_CODE_SHARE)
        said.append(f"asks about the code: code's boost {params.code_boost:g} (× {WHERE_CODE_SHARE:g})")
    if asks_how_to_use(text):
        params = params._replace(code_boost=params.code_boost * USAGE_CODE_SHARE)
        said.append(f"asks how to use it: code's boost {params.code_boost:g} (× {USAGE_CODE_SHARE:g})")
    if params.type_weight != 1.0 and asks_for_a_type(text):
        said.append(
            f"asks which type: a type's chunk keeps its weight (type_weight {params.type_weight:g} → 1)"
        )
        params = params._replace(type_weight=1.0)
    return params, said


def _evidence(
    run: _Run, compiled: "tantivy.Query", found: list[tuple[ChunkRecord, float]]
) -> list[tuple[ChunkRecord, float]]:
    """BM25's candidates with what their files and the docs lend them (ra_query.search.evidence)."""
    params = run.params
    evidence = Evidence(run.store, run.searcher, run.filters(), run.boost)
    found = evidence.docs(evidence.files(compiled, found, params.file_weight), params.docs_weight)
    found = found[: params.candidate_limit]
    run.records.update((record.id, record) for record, _ in found)
    return found


def _named(
    run: _Run,
    text: str,
    compiled: "tantivy.Query | None",
    found: list[tuple[ChunkRecord, float]],
    explain: list[str],
) -> tuple[list[tuple[ChunkRecord, float]], tuple[str, ...]]:
    """The candidates with the chunks `text` names first (ra_query.search.named), and their ids."""
    languages = sorted({run.reader, base(run.reader), DEFAULT_LOCALE})
    found, named = named_first(
        run.store, run.searcher, text, found, ranked=compiled, filters=run.filters(),
        boost=lambda record: run.boost(record, types=False),
        language_rank=lambda record: _language_rank(record.locale, run.reader),
        preferred=one_of(run.store.index.schema, "lang", languages, 0.0),
    )  # fmt: skip
    if named:
        run.named = frozenset(named)
        explain.append("named: " + " ".join(named))
        run.records.update((record.id, record) for record, _ in found[: len(named)])
    return found, named


def fused_candidates(params: SearchParams) -> int:
    """How many of a hybrid search's fused candidates go on to aggregation: `FUSED_SHARE` of
    `candidate_limit` (ra_query.search.hybrid), never fewer than `limit` nor more than
    `candidate_limit`."""
    return min(params.candidate_limit, max(params.limit, round(params.candidate_limit * FUSED_SHARE)))


def _hybrid(
    run: _Run,
    node: Node | None,
    found: list[tuple[ChunkRecord, float]],
    relaxed: bool,
    meaning: str | None,
    limit: int,
) -> tuple[list[tuple[ChunkRecord, float]], dict[str, "Fused"], str | None]:
    """BM25's candidates fused with the chunks nearest the query's meaning (ra_query.search.hybrid),
    the best `limit` of them; (candidates, how each was ranked, a note when the dense side could
    not run)."""
    from ra_query.search import hybrid

    store, params = run.store, run.params
    if not store.has_vectors():
        return found, {}, hybrid.NO_VECTORS_NOTE
    text = meaning or (hybrid.semantic_text(node) if node is not None else "")
    if not text.strip():
        return found, {}, None
    k = max(params.candidate_limit, hybrid.DENSE_K)
    made_by = store.manifest["vectors"].get("model_sha256")
    answered = nearby.nearest(store.root, text, k, params.trees)  # a cold search's forked child
    if answered is None:
        answered = _nearest(store, text, k, params.trees)
        if isinstance(answered, str):
            return found, {}, answered
    model_sha256, nearest = answered
    if made_by != model_sha256:  # another model's vectors: never compared with this one's
        return found, {}, hybrid.OTHER_MODEL_NOTE
    constraints = run.compiler(relax=relaxed).constraints(node) if node is not None else None
    for values, field in ((params.kinds, "kind"), (params.langs, "lang")):
        if not values:
            continue
        import tantivy

        only = tree_filter(store.index.schema, list(values), field)
        constraints = (
            only
            if constraints is None
            else tantivy.Query.boolean_query([(tantivy.Occur.Must, constraints), (tantivy.Occur.Must, only)])
        )
    dense = hybrid.dense_candidates(store, nearest, constraints, run.records)
    if not dense:
        return found, {}, None
    boosted: list[tuple[ChunkRecord, float]] = []
    for record, score in dense:
        run.records.setdefault(record.id, record)
        boosted.append((record, score * run.boost(record)))
    boosted.sort(key=lambda pair: (-pair[1], pair[0].id))
    # the best `limit` (fused_candidates) go on: aggregation would otherwise see both sides' 50
    # and merge sections whose every part is near in meaning
    fused = hybrid.fuse(found, boosted, params.semantic_weight, params.code_semantic_weight)
    fused = _parts_capped(fused, lambda f: f.record)[:limit]  # no definition's parts crowd it
    return [(f.record, f.score) for f in fused], {f.record.id: f for f in fused}, None


def _nearest(
    store: Store, text: str, k: int, trees: Sequence[str]
) -> tuple[str, list[tuple[str, float]]] | str:
    """(the model's sha256, the `k` chunks nearest `text`'s meaning), the model loaded in this
    process; a note instead when the semantic extra is missing."""
    from ra_query.search import hybrid
    from ra_query.semantic.embed import SemanticUnavailable, embedder

    try:
        # one thread: a query is a few tokens, and starting a second thread's pool costs a cold
        # search ~20 ms more than it saves (bench/semantic.py)
        model = embedder(1)
    except SemanticUnavailable:
        return hybrid.NO_EXTRA_NOTE
    if store.manifest["vectors"].get("model_sha256") != model.sha256:
        return model.sha256, []  # never scanned: the caller says whose vectors they are
    key = (model.sha256, text)
    vector = _VECTORS.get(key)
    if vector is None:
        if len(_VECTORS) >= _VECTORS_KEPT:
            _VECTORS.clear()
        vector = _VECTORS[key] = model.embed([text])[0]
    return model.sha256, hybrid.nearest(store, vector, k, trees)


def _fused_line(chunk_id: str, fused: "Fused | None") -> str:
    """`--explain`'s line for one result of a hybrid search."""
    if fused is None:
        return f"hybrid: {chunk_id} (stands for the chunks aggregated into it)"
    bm25 = f"#{fused.bm25_rank}" if fused.bm25_rank else "-"
    dense = f"#{fused.dense_rank}" if fused.dense_rank else "-"
    return f"hybrid: {chunk_id} bm25 {bm25} dense {dense} fused {fused.score:.3f}"


def _reading(compiler: Compiler) -> list[str]:
    """--explain lines on how the compiler read the query."""
    lines: list[str] = []
    if compiler.dropped:
        lines.append("stop words left out: " + " ".join(compiler.dropped))
    if compiler.compounds:
        lines.append("in no chunk, matched as its words: " + "; ".join(
            f"{word} → {' '.join(parts)}" for word, parts in compiler.compounds.items()))  # fmt: skip
    if compiler.typos:
        lines.append("in no chunk, matched as typos: " + " ".join(compiler.typos))
    if compiler.spellings:
        spelt = "; ".join(f"{word} → {other}" for word, other in compiler.spellings.items())
        lines.append(f"in no chunk, searched as spelt otherwise: {spelt}")
    if compiler.unmatched:
        unmatched = " ".join(compiler.unmatched)
        lines.append(f"in no chunk as typed, and words, not typos: {unmatched}")
    if compiler.synonyms:
        said: dict[str, list[str]] = {}
        for typed, word in compiler.synonyms.values():
            said.setdefault(typed, []).append(word)
        lines.append("code words: " + "; ".join(f"{w} → {', '.join(t)}" for w, t in said.items()))
    if compiler.same:
        same = "; ".join(f"{word} → {', '.join(others)}" for word, others in compiler.same.items())
        lines.append(f"words of the same meaning: {same}")
    if compiler.platforms:
        lines.append("the system it names, in paths: " + ", ".join(f"{f}/" for f in compiler.platforms))
    return lines


# an unsaid query's language is that of the pages its words matched best, when at least this share
# of the first MATCHED_SAMPLE docs chunks (MATCHED_LEAST at the fewest) are in one language
MATCHED_SAMPLE, MATCHED_SHARE, MATCHED_LEAST = 10, 0.7, 3


def _matched_language(found: Sequence[tuple[ChunkRecord, float]]) -> str | None:
    """The natural language most of the best BM25 candidates are in, when one clearly is (a word
    every translation of a page holds, `tar`, matches them all alike: no language is)."""
    languages = [base(record.locale) for record, _ in found[:MATCHED_SAMPLE] if record.locale]
    if len(languages) < MATCHED_LEAST:
        return None
    best = max(set(languages), key=languages.count)
    return best if languages.count(best) >= MATCHED_SHARE * len(languages) else None


def _unembedded_match(found: Sequence[tuple[ChunkRecord, float]]) -> str | None:
    """The language of the pages an unsaid query's words matched, when the model does not know it:
    the query is in it (`rendre un script exécutable`), and embedded as English it would bring the
    English pages up past the ones its words found."""
    matched = _matched_language(found)
    return matched if matched is not None and matched not in EMBEDDED_LANGUAGES else None


def _words_only(reader: str) -> str:
    """The note of a hybrid search run by words alone: the query's language is not the model's."""
    known = ", ".join(sorted(EMBEDDED_LANGUAGES))
    return f"searched by words only: the embedding model knows {known}, not {reader}"


def _also(note: str | None, more: str) -> str:
    """`more` after an earlier note (a repaired query must still say so once relaxed)."""
    return f"{note}; {more}" if note else more


class Shown(NamedTuple):
    """A result as it will be shown: the chunk, the chunks its content spans, duplicates folded in."""

    result: Result
    record: ChunkRecord
    parts: tuple[ChunkRecord, ...]
    also: tuple[str, ...] = ()
    translations: tuple[tuple[str, str], ...] = ()  # (locale, id) of the translations folded in

    @property
    def id(self) -> str:
        return self.record.id


_Ranked = TypeVar("_Ranked")


def _first(pair: tuple[ChunkRecord, float]) -> ChunkRecord:
    return pair[0]


def _parts_capped(found: list[_Ranked], record_of: Callable[[_Ranked], ChunkRecord]) -> list[_Ranked]:
    """`found` (ranked candidates) with at most `PARTS_IN_POOL` of the chunks of one definition
    (its first part and its later parts, `_definition_of`): the rest would take the places of
    other definitions in the pool, and only one of them is shown (`_one_part_each`)."""
    taken: dict[str, int] = {}
    kept: list[_Ranked] = []
    for item in found:
        key = _definition_of(record_of(item))
        taken[key] = taken.get(key, 0) + 1
        if taken[key] <= PARTS_IN_POOL:
            kept.append(item)
    return kept


def _definition_of(record: ChunkRecord) -> str:
    """The id of the definition a code chunk is a later part of (`#Opts` of `#Opts.3`: its parent),
    or of the first part of a long run of statements (`#normalized` of `#normalized.26`, a table
    cut into parts: its siblings, whose parent is the file), else its own."""
    later = record.kind == "code" and is_later_part(record.id.partition("#")[2], record.symbol)
    return record.id.rpartition(".")[0] if later else record.id


def _declared(shown: list[Shown], record_of: Callable[[str], ChunkRecord | None]) -> list[Shown]:
    """`shown` with each part of a long doc comment shown as the part that declares its
    definition, in the part's place (each id once): a doc comment longer than the budget is parts
    of its own, before the declaration (ra_build.document.code), and a question its words answer
    asks for the definition, which an agent reads from its declaration (`ra get` shows the
    whole). `record_of` reads a chunk by its id."""
    out: list[Shown] = []
    seen: set[str] = set()
    for item in shown:
        record = item.record
        if (
            record.kind == "code"
            and record.parent_id
            and not item.result.aggregated
            and is_later_part(record.id.partition("#")[2], record.symbol)
        ):
            head = record_of(record.parent_id)
            if head is not None and head.body.strip() and record.line_end < head.line_start:
                item = item._replace(result=item.result._replace(id=head.id), record=head, parts=(head,))
        if item.id not in seen:
            seen.add(item.id)
            out.append(item)
    return out


def _one_part_each(shown: list[Shown], named: frozenset[str]) -> list[Shown]:
    """`shown` with one result per definition: a long definition is cut into parts (its first
    part is its chunk, the rest its children), and a part after another result of the same
    definition yields its place to the next definition (`ra get` shows the rest). What the query
    names is kept, and another part of it yields to it."""
    taken = {_definition_of(s.record) for s in shown if s.id in named}
    seen: set[str] = set()
    out: list[Shown] = []
    for item in shown:
        key = _definition_of(item.record)
        if item.id not in named and (key in seen or key in taken):
            continue
        seen.add(key)
        out.append(item)
    return out


def _forwarders_folded(shown: list[Shown], named: frozenset[str]) -> list[Shown]:
    """`shown` with each wrapper folded into the definition it calls: a code chunk whose whole
    body calls a definition of its own name (`ChunkRecord.forwards`: `func WatchConfig() {
    v.WatchConfig() }`, an overload calling the fuller one, a Python `@overload` signature) is
    listed in `also` of another result of that name that does the work — of its qualified name in
    its file, else in its file, else in its folder — which takes the better of the two places.
    Both match a question alike (they share a doc comment), and two of five places would say one
    thing. A wrapper the query names stays."""

    def last(record: ChunkRecord) -> str:
        return record.symbol.rpartition(".")[2]

    def folder(path: str) -> str:
        return path.rpartition("/")[0]

    if not any(s.record.forwards for s in shown):  # most searches: nothing to fold
        return shown
    doers = [s for s in shown if s.record.kind == "code" and s.record.symbol and not s.record.forwards]
    into: dict[str, str] = {}  # a wrapper's id → the id of the result it folds into
    folded: dict[str, list[str]] = {}  # the id of a result → the wrappers folded into it
    for item in shown:
        record = item.record
        if not record.forwards or record.kind != "code" or item.id in named:
            continue
        alike = [d for d in doers if last(d.record) == last(record) and d.record.tree == record.tree]
        same_file = [d for d in alike if d.record.path == record.path]
        target = (
            next((d for d in same_file if d.record.symbol == record.symbol), None)
            or next(iter(same_file), None)
            or next((d for d in alike if folder(d.record.path) == folder(record.path)), None)
        )
        if target is not None:
            into[item.id] = target.id
            folded.setdefault(target.id, []).append(item.id)
    if not into:
        return shown
    by_id = {s.id: s for s in shown}
    out: list[Shown] = []
    placed: set[str] = set()
    for item in shown:
        target_id = into.get(item.id, item.id)
        if target_id in placed:
            continue
        placed.add(target_id)
        target = by_id[target_id]
        if target_id in folded:
            best = max(target.result.score, *(by_id[w].result.score for w in folded[target_id]))
            target = target._replace(
                result=target.result._replace(score=best), also=(*target.also, *folded[target_id])
            )
        out.append(target)
    return out


def merged(record: ChunkRecord, parts: Sequence[ChunkRecord]) -> ChunkRecord:
    """`record` showing all of `parts` (itself first, then the rest in document order)."""
    if len(parts) <= 1:
        return record
    body = "\n\n".join([record.body, *(p.content() for p in parts[1:])]).strip("\n")
    return record._replace(
        body=body,
        line_end=max(p.line_end for p in parts),
        byte_end=max(p.byte_end for p in parts),
        tokens=sum(p.tokens for p in parts),
    )


def _hit(run: _Run, shown: Shown, terms: frozenset[str], snippets: bool = True) -> SearchHit:
    """A SearchHit; a section shows all of its parts, constituents included."""
    record, parts = shown.record, shown.parts
    if shown.result.aggregated:
        parts = run.section(record)
    record = merged(record, parts)
    return SearchHit(
        record=record,
        score=shown.result.score,
        constituents=shown.result.constituents,
        aggregated=shown.result.aggregated,
        snippet=snippet(record.body, terms, run.analyzer) if snippets else "",
        parts=parts,
        also=shown.also,
        translations=shown.translations,
        url=run.store.page_url(record.tree, record.path) if record.kind == "upstream" else None,
    )


def with_snippet(store: Store, hit: SearchHit, terms: frozenset[str]) -> SearchHit:
    """`hit` (of a search without snippets) with the snippet the search would have made for
    `terms` (its `TopicResult.terms`)."""
    return hit._replace(snippet=snippet(hit.record.body, terms, build_analyzer(store.stemmer)))


def _shown(run: _Run, results: list[Result], found: list[tuple[ChunkRecord, float]]) -> list[Shown]:
    """Ranked results as they will be shown: never empty, each content once (DECISIONS 19).

    A result whose own body is empty (a document node whose text sits under its one h1, a
    heading with only sub-headings) yields to its best-scoring descendant among the
    candidates, or, when none matched, shows its whole section. Results with the same
    breadcrumb and the same text (whitespace aside; `_content_key`) collapse into the first,
    listing the others.
    """
    scores = {record.id: score for record, score in found}
    out: list[Shown] = []
    seen_ids: set[str] = set()
    by_content: dict[tuple[object, ...], list[int]] = {}
    for result in results:
        record = run.records.get(result.id) or run.record(result.id)
        if record is None:
            continue
        parts: tuple[ChunkRecord, ...] = (record,)
        if not result.aggregated and not record.body.strip():
            best = _best_descendant(run, record, scores)
            if best is not None:
                record = best
                result = Result(best.id, max(result.score, scores[best.id]))
            else:
                parts = run.section(record)
        if record.id in seen_ids:
            continue
        seen_ids.add(record.id)
        shown = Shown(result, record, parts)
        key = _content_key(run, result, record, parts)
        same = next((i for i in by_content.get(key, []) if _same_section(run, out[i], shown)), None)
        if same is not None:
            out[same] = out[same]._replace(also=(*out[same].also, record.id))
            continue
        by_content.setdefault(key, []).append(len(out))
        out.append(shown)
    # a result that yielded to a better descendant may now outrank the one before it
    out.sort(key=lambda s: (-s.result.score, s.id))
    kept = _translations(out, run.reader, run.reader_said)
    seen = min(VERSIONS_SEEN * run.params.limit, VERSIONS_SEEN_MAX)
    kept = _readers_own(run, kept, seen)
    return _versions(kept, run.words, run.record, seen)


# the versions of a page are looked for among the first this many times `limit` results, and
# never more than VERSIONS_SEEN_MAX: a copy further down takes no place that is shown, and texts
# are compared in pairs (0.2 ms of a search on cli; `-n 100` over 200 candidates: 10 ms, ~1 at 30)
VERSIONS_SEEN = 3
VERSIONS_SEEN_MAX = 30


def _versions(
    out: list[Shown], words: frozenset[str], record_of: Callable[[str], ChunkRecord | None], seen: int
) -> list[Shown]:
    """Ranked results with the versions of one docs page folded into one (ra_query.search.versions):
    a docs result whose path says another release than an earlier one's, in the same tree, with
    mostly the same text, is listed in its `also`, as are copies with the very same text (`_shown`
    folded them), a release of the same path before a like page of another (a page renamed in a
    release joins the first like page); the version the query names (`words`), else the newest, is
    the one shown, at the place of the best of them. `record_of` reads a chunk by its id; the first
    `seen` results are looked at, the rest follow as they are."""
    out, rest = out[:seen], out[seen:]
    if not any(s.record.kind != "code" and version_of(s.record.path) is not None for s in out):
        return out + rest  # most trees keep one version of their docs
    groups: list[list[Shown]] = []
    texts: dict[str, frozenset[tuple[str, str]]] = {}  # word pairs, made when first compared

    def text_of(record: ChunkRecord) -> frozenset[tuple[str, str]]:
        if record.id not in texts:
            texts[record.id] = pairs(record.body)
        return texts[record.id]

    def joins(members: list[Shown], shown: Shown) -> bool:  # another release of the page `members` are
        first, record = members[0].record, shown.record
        if (
            record.kind == "code"
            or shown.result.aggregated
            or first.kind == "code"
            or members[0].result.aggregated
        ):
            return False
        if first.tree != record.tree or first.doc_id == record.doc_id:
            return False
        if any(version_of(m.record.path) == version_of(record.path) for m in members):
            return False  # a group holds one page of each release
        return may_be_copies(len(first.body), len(record.body)) and same_page(text_of(first), text_of(record))

    # first the releases of a page that keep its name, then a page renamed in a release (a group of
    # one) joins the first alike: a like page of another name does not take another's releases
    for shown in out:
        name = unversioned(shown.record.path)
        same = (m for m in groups if unversioned(m[0].record.path) == name and joins(m, shown))
        group = next(same, None)
        if group is not None:
            group.append(shown)
        else:
            groups.append([shown])
    merged: list[list[Shown]] = []
    for members in groups:
        into = next((m for m in merged if joins(m, members[0])), None) if len(members) == 1 else None
        if into is not None:
            into.append(members[0])
        else:
            merged.append(members)
    groups = merged
    return [_version_shown(members, words, record_of) for members in groups] + rest


def _version_shown(
    members: list[Shown], words: frozenset[str], record_of: Callable[[str], ChunkRecord | None]
) -> Shown:
    """One result for the versions of a page (`members`, best first, and the copies each lists in
    `also`): the one the query names, else the newest, at the best one's score, listing the
    others."""
    first = members[0]
    if first.record.kind == "code" or first.result.aggregated:
        return first
    options = [(m, m.record) for m in members]
    unread: list[str] = []  # a copy listed in `also` that cannot be read stays listed
    for m in members:
        for i in m.also:
            r = record_of(i) if m.parts == (m.record,) else None  # a section is shown as it is
            if r is None:
                unread.append(i)
            else:
                options.append((m, r))
    if len(options) == 1:
        return first
    named = [o for o in options if named_version(o[1].path, words)]
    owner, record = named[0] if named else min(options, key=lambda o: newest_first(o[1].path))
    shown = owner
    if record is not owner.record:  # a copy with the same text: shown in its place
        shown = owner._replace(result=owner.result._replace(id=record.id), record=record, parts=(record,))
    others = (*(r.id for _, r in options if r.id != record.id), *unread)
    return shown._replace(result=shown.result._replace(score=first.result.score), also=others)


# a query in Latin script does not say its language: the default language's translation is shown
# in place of a better one only when it matched at least this share of its score (`tar` matches
# every translation of tar alike; `versteckte Dateien anzeigen` matches the German page only)
GUESSED_READER_SHARE = 0.5


def _translations(out: list[Shown], reader: str, said: bool = True) -> list[Shown]:
    """Ranked results with the translations of one page folded into one (issue 33): a docs
    result whose document shares its `translation` key with an earlier result's, in another
    language, is listed under it as "also in"; the reader's language (`reader`) is the one
    shown, at the place of the best of them — when the query `said` it (--lang, its script, its
    function words), or its translation matched GUESSED_READER_SHARE of the best one's score. Sections
    of one document in one language stay apart (they are different answers)."""
    kept: list[Shown] = []
    groups: dict[tuple[str, str], int] = {}  # (tree, translation) → the index in `kept`
    for shown in out:
        record = shown.record
        key = (record.tree, record.translation)
        at = groups.get(key) if record.locale and record.translation else None
        if at is None or kept[at].record.locale == record.locale:
            if record.locale and record.translation and at is None:
                groups[key] = len(kept)
            kept.append(shown)
            continue
        first = kept[at]
        close = said or shown.result.score >= GUESSED_READER_SHARE * first.result.score
        if close and _shown_before(record.locale, first.record.locale, reader):
            folded = (*first.translations, (first.record.locale, first.id), *shown.translations)
            result = shown.result._replace(score=first.result.score)  # at the best one's place
            kept[at] = shown._replace(result=result, translations=folded)
        else:
            kept[at] = first._replace(translations=(*first.translations, (record.locale, shown.id)))
    return kept


def _readers_own(run: _Run, out: list[Shown], seen: int) -> list[Shown]:
    """Ranked results with a docs page in another language than the reader's shown as its
    translation in the reader's language, when that translation is a document of the tree the
    search did not reach (`_translations` folds the ones it did): a German page that matched an
    English question on its commands and flags gives its English page, listing the German one.
    The translation is the document at a path its `translation` key gives for the reader's
    language (tldr's `pages.de/…` → `pages/…` and back, Docusaurus's `i18n/de/…` → `docs/…`,
    `intro.de.md` → `intro.md`: ra_query.text.locales.translation_paths), and the section shown
    the one with the same anchor, else in the same place when the two have as many sections. As in
    `_translations`, a reader who did not say their language (a guess) gets it only when it
    matches the query's words at least GUESSED_READER_SHARE as well. The first `seen` results
    are looked at."""
    # a result, or a translation listed under one, is not shown again in another's place
    taken = {shown.id for shown in out} | {i for shown in out for _, i in shown.translations}
    kept: list[Shown] = []
    for at, shown in enumerate(out):
        record = shown.record
        own = None
        if at < seen and record.kind != "code" and record.locale and not shown.result.aggregated:
            own = _translation_in(run, record) if base(record.locale) != base(run.reader) else None
            own = own if own is None or run.reader_said or _matches_as_well(run, own, record) else None
        if own is None or own.id in taken:
            kept.append(shown)
            continue
        taken.add(own.id)
        result = shown.result._replace(id=own.id)
        translations = (*shown.translations, (record.locale, record.id))
        kept.append(Shown(result, own, (own,), shown.also, translations))
    return kept


_TRANSLATIONS_READ = 64  # chunks read of the documents at one path a translation may be kept at


def _translation_in(run: _Run, record: ChunkRecord) -> ChunkRecord | None:
    """The section of `record`'s translation in the reader's language (`_readers_own`), or None:
    the document at one of the paths its `translation` key gives for that language, in any
    spelling of it (ra_query.text.locales.translation_patterns: a `pt` reader's page is in
    `pages.pt_BR/`), the likeliest first, looked for when the index holds the language."""
    if not _holds_language(run):
        return None
    theirs = next(_translations_of(run, record), None)
    if theirs is None:
        return None
    anchor = record.id.partition("#")[2]
    same = [c for c in theirs if c.id.partition("#")[2] == anchor]
    if same:
        return same[0]
    ours = [c for c in run.store.doc_chunks(record.doc_id) if c.body.strip()]
    at = next((i for i, c in enumerate(ours) if c.id == record.id), None)
    return theirs[at] if at is not None and len(ours) == len(theirs) else None


def _translations_of(run: _Run, record: ChunkRecord) -> Iterator[list[ChunkRecord]]:
    """The chunks with text of each document that is `record`'s translation in the reader's
    language, the likeliest path first (`_translation_in`)."""
    import tantivy

    written = functools.partial(doc_id_of, record.tree)
    for pattern in translation_patterns(record.translation, run.reader, written):
        query = tantivy.Query.regex_query(run.store.index.schema, "doc_id", pattern)
        hits = run.searcher.search(query, _TRANSLATIONS_READ).hits
        for doc_id in dict.fromkeys(run.store.read(run.searcher, address).doc_id for _, address in hits):
            theirs = [c for c in run.store.doc_chunks(doc_id) if c.body.strip()]
            if doc_id != record.doc_id and theirs and all(base(c.locale) == base(run.reader) for c in theirs):
                yield theirs


def _holds_language(run: _Run) -> bool:
    """Whether some docs chunk of the index is in the reader's language (asked once a search)."""
    import tantivy

    if run.holds_reader is None:
        query = tantivy.Query.term_query(run.store.index.schema, "lang", run.reader)
        run.holds_reader = bool(getattr(run.searcher.search(query, limit=1, count=True), "count", 0))
    return run.holds_reader


def _matches_as_well(run: _Run, own: ChunkRecord, other: ChunkRecord) -> bool:
    """Whether the query's words score `own` at least GUESSED_READER_SHARE of `other`."""
    import tantivy

    if run.compiled is None:
        return False
    ids = one_of(run.store.index.schema, "id", [own.id, other.id], 0.0)
    query = tantivy.Query.boolean_query([(tantivy.Occur.Must, run.compiled), (tantivy.Occur.Must, ids)])
    hits = run.searcher.search(query, limit=2).hits
    scores = {run.store.read(run.searcher, address).id: float(score) for score, address in hits}
    return scores.get(own.id, 0.0) >= GUESSED_READER_SHARE * scores.get(other.id, 0.0) > 0.0


def _shown_before(locale: str, other: str, reader: str) -> bool:
    """Whether a translation in `locale` is shown in place of one in `other`."""
    return _language_rank(locale, reader) < _language_rank(other, reader)


def _language_rank(locale: str, reader: str) -> int:
    """A translation's place: the reader's language first (0), then the default language (1: a
    page's original, most often), then the rest (2); a chunk with no natural language (code) 0."""
    language = base(locale)  # a regional reader (`--lang pt-br`) reads their language's pages
    return 0 if not locale or language == base(reader) else 1 if language == DEFAULT_LOCALE else 2


def _same_section(run: _Run, a: Shown, b: Shown) -> bool:
    """Two results whose quick keys agree: aggregated sections are compared in full."""
    if not (a.result.aggregated or b.result.aggregated):
        return True

    def text(shown: Shown) -> list[str]:
        parts = run.section(shown.record) if shown.result.aggregated else shown.parts
        return [" ".join(p.content().split()) for p in parts]

    return text(a) == text(b)


def _content_key(
    run: _Run, result: Result, record: ChunkRecord, parts: tuple[ChunkRecord, ...]
) -> tuple[object, ...]:
    """What two results must share to be the same content: breadcrumb and text, whitespace aside
    — a docs result's breadcrumb below its page's title, which copies of a page may each take
    from their file's name (`CHANGELOG.md`, a symlink to `docs/release-notes.md`). Code keeps its
    path: the same method in two files (two backends of one protocol) is two places to read.

    An aggregated section is keyed by its own text and its matching constituents' (the copies of
    one page match alike), which spares fetching every candidate section in full; only sections
    whose keys agree are then compared in full (`_same_section`).
    """
    shown = parts
    if result.aggregated:
        matched = (run.records[c] for c in result.constituents if c in run.records and c != record.id)
        shown = (record, *matched)
    crumbs = record.breadcrumb if record.kind == "code" else record.breadcrumb[1:]
    return (crumbs, *(" ".join(p.content().split()) for p in shown))


def _best_descendant(run: _Run, record: ChunkRecord, scores: dict[str, float]) -> ChunkRecord | None:
    """The best-scoring candidate below `record` that has text of its own."""
    best: tuple[float, str] | None = None
    for chunk_id, score in scores.items():
        chunk = run.records[chunk_id]
        if chunk.doc_id != record.doc_id or chunk.id == record.id or not chunk.body.strip():
            continue
        if _is_below(run, chunk, record.id) and (best is None or (-score, chunk_id) < (-best[0], best[1])):
            best = (score, chunk_id)
    return run.records[best[1]] if best is not None else None


def _is_below(run: _Run, chunk: ChunkRecord, ancestor: str) -> bool:
    parent = chunk.parent_id
    for _ in range(chunk.depth + 1):  # a chain is never longer than the depth; guards a cycle
        if parent is None:
            return False
        if parent == ancestor:
            return True
        above = run.record(parent)
        parent = above.parent_id if above is not None else None
    return False


def section(store: Store, record: ChunkRecord) -> tuple[ChunkRecord, ...]:
    """`record` and every chunk below it, in document order (the span its heading covers)."""
    chunks = store.doc_chunks(record.doc_id)
    by_id = {c.id: c for c in chunks}

    def below(chunk: ChunkRecord) -> bool:
        parent = chunk.parent_id
        while parent is not None:
            if parent == record.id:
                return True
            ancestor = by_id.get(parent)
            parent = ancestor.parent_id if ancestor is not None else None
        return False

    return (record, *(c for c in chunks if below(c)))


def _first_words(text: str) -> tuple[str, str | None]:
    """`text`, or its first MAX_QUERY_WORDS words and a note saying so."""
    words = text.split(maxsplit=MAX_QUERY_WORDS)
    if len(words) <= MAX_QUERY_WORDS:
        return text, None
    return " ".join(words[:MAX_QUERY_WORDS]), f"a long query: searched its first {MAX_QUERY_WORDS} words"


def _raw_candidates(
    run: _Run, store: Store, text: str, params: SearchParams
) -> tuple[list[tuple[ChunkRecord, float]], int]:
    """`--raw`'s candidates; what tantivy refuses (an unknown field, `foo:*`) is a syntax error."""
    depth = deepest = 0
    for c in text:  # tantivy's parser recurses per parenthesis: a deep nest overflows its stack
        depth += (c == "(") - (c == ")")
        deepest = max(deepest, depth)
    if deepest > MAX_DEPTH:
        raise QuerySyntaxError(
            text,
            text.index("(" * (MAX_DEPTH + 1)) if "(" * (MAX_DEPTH + 1) in text else 0,
            f"parentheses nested deeper than {MAX_DEPTH} levels",
            "remove some of the parentheses",
        )
    query = _raw_query(store, text, params)
    try:
        return run.candidates(query)
    except ValueError as exc:
        raise QuerySyntaxError(
            text,
            0,
            f"tantivy cannot run this raw query ({exc})",
            "check tantivy's query syntax, or drop --raw",
        ) from None


# `body:` where tantivy's parser reads a field name; quoted phrases are matched whole, so that
# a `body:` inside one is left as it is
_RAW_BODY = re.compile(
    r'"(?:[^"\\]|\\.)*"'  # a phrase in double quotes
    r"|'(?:[^'\\]|\\.)*'"  # a phrase in single quotes
    r"|(?<![^\s(+-])body:"  # at the start, or after a space, `(`, `+` or `-`
)


def _raw_query(store: Store, text: str, params: SearchParams) -> "tantivy.Query":
    """`--raw`: tantivy's own query parser over ra's fields and boosts.

    Unfielded words search `text`, `title`, `tags` and `path` with ra's weights. `body:` is
    handed to it as `text:`, as ra's own syntax reads it: the body is stored, not indexed, and
    every word of it is in `text`.
    """
    fields = ["text", "title", "tags", "path", "path_components"]
    boosts = {name: params.boosts.get(name, 0.0) for name in fields[:-1]}
    boosts["path_components"] = boosts["path"]
    parsed = _RAW_BODY.sub(lambda match: "text:" if match[0] == "body:" else match[0], text)
    try:
        return store.index.parse_query(parsed, fields, field_boosts=boosts)
    except ValueError as exc:
        raise QuerySyntaxError(
            text,
            0,
            f"tantivy cannot parse this raw query ({exc})",
            "check tantivy's query syntax, or drop --raw",
        ) from None


def _pipeline(
    run: _Run, found: list[tuple[ChunkRecord, float]], params: SearchParams, named: tuple[str, ...] = ()
) -> PipelineTrace:
    # a chunk that scored nothing matched only a filter (tree:): as an ancestor in aggregation it
    # would hide the chunks below it that matched, and the elbow cuts it anyway
    found = [(record, score) for record, score in found if score > 0]
    cands = [
        Candidate(r.id, r.parent_id, r.depth, r.sibling_count, score, r.kind == "code", r.id in named)
        for r, score in found
    ]
    return pipeline(
        cands,
        threshold=params.aggregation_threshold,
        cutoff_ratio=params.cutoff_ratio,
        limit=params.limit,
        lookup=run.lookup,
        aggregation=params.aggregation,
        show=lambda merged: run.show(merged, found),
    )


def search(store: Store, queries: list[str], params: SearchParams) -> list[TopicResult]:
    """Search every topic; a chunk appears once, under the topic where it ranks best.

    A result stands for its `also` copies too, so the same content is never shown under two
    topics. Results are handed out best rank first (ties to the earlier topic); one whose chunk
    or copies were already handed out is dropped.

    Raises:
        InputError: `params.trees` names a tree this index does not have.
    """
    known = store.trees()
    for name in params.trees:
        if name not in known:
            listed = ", ".join(sorted(known)) or "none"
            raise InputError(f"unknown tree {name!r} (-t/--tree) — the trees of this index: {listed}")
    topics = [search_topic(store, q, params) for q in queries]
    claimed: set[str] = set()
    kept: set[tuple[int, int]] = set()
    depth = max((len(topic.hits) for topic in topics), default=0)
    for rank in range(depth):
        for t, topic in enumerate(topics):
            if rank >= len(topic.hits):
                continue
            ids = {topic.hits[rank].id, *topic.hits[rank].also}
            if ids.isdisjoint(claimed):
                kept.add((t, rank))
                claimed |= ids
    return [
        topic._replace(hits=tuple(h for rank, h in enumerate(topic.hits) if (t, rank) in kept))
        for t, topic in enumerate(topics)
    ]


def matching_words(
    text: str, terms: frozenset[str], analyzer: Any, verdicts: dict[str, bool] | None = None
) -> list[tuple[int, int]]:
    """(start, end) of every word in `text` whose analyzed form is one of `terms`; `verdicts`
    (word → matches) carries what is known from other texts searched for the same terms."""
    return list(_matches(text, terms, analyzer, verdicts))


def _matches(
    text: str, terms: frozenset[str], analyzer: Any, verdicts: dict[str, bool] | None = None
) -> Iterator[tuple[int, int]]:
    """`matching_words`, lazily: a caller that wants the first match reads no further."""
    if verdicts is None:
        verdicts = {}  # most words repeat: analyze each distinct one once
    for m in _WORD.finditer(text):
        word = m.group()
        hit = verdicts.get(word)
        if hit is None:
            tokens: list[str] = analyzer.analyze(word)
            hit = verdicts[word] = any(t in terms for t in tokens)
        if hit:
            yield m.start(), m.end()


def snippet(body: str, terms: frozenset[str], analyzer: Any, width: int = SNIPPET_CHARS) -> str:
    """About `width` characters of `body` around the first match, matches wrapped in <em>.

    Only the text up to the first match and the window after it are analyzed: an aggregated
    section can be a whole page.
    """
    flat = " ".join(body.split())
    first = next(_matches(flat, terms, analyzer), (None, None))[0] if terms else None
    start = max(0, first - width // 4) if first is not None and len(flat) > width else 0
    if start and first is not None:
        space = flat.find(" ", start)
        start = space + 1 if 0 <= space < first else start
    end = min(len(flat), start + width)
    stop = flat.find(" ", end)  # analyze whole words only: a word cut at `end` is not a match
    window = flat[start : len(flat) if stop < 0 else stop]
    spans = [(start + a, start + b) for a, b in matching_words(window, terms, analyzer)] if terms else []
    out: list[str] = ["…" if start else ""]
    pos = start
    for a, b in spans:
        if b > end:
            break
        out += [flat[pos:a], "<em>", flat[a:b], "</em>"]
        pos = b
    out.append(flat[pos:end])
    if end < len(flat):
        out.append("…")
    return "".join(out)

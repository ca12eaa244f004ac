"""The index half of the artifact contract, shared by the build and the query side: the tantivy
schema, the analyzer, ids and breadcrumbs (the file names are in ra_query.artifacts.paths).

Both sides build the schema and register the analyzer through this module, so a reader always
tokenizes queries exactly as the writer tokenized documents.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any, Final, cast

from ra_query.text.locales import cjk_terms

if TYPE_CHECKING:
    from collections.abc import Callable

    import tantivy

FORMAT_VERSION: Final = 1
# Bumped whenever the fields below or their options change; part of the index-content hash.
# 2: one analyzer name ("ra") whatever the stemmer; 3: the combined `text` field, breadcrumbs
# stored joined by BREADCRUMB_JOIN; 4: `kind`, `lang` and `symbol` (code trees); 5: STORED_ONLY
# (`body:` searches `text`); 6: `name`, a chunk's names matched whole (ra_query.text.names); 7:
# Chinese, Japanese and Korean as bigrams, mnemonic-bracket words whole, a docs chunk's natural
# language a second `lang` value and its document's `translation` key (ra_query.text.locales); 8:
# Han characters one by one too, after their run's pairs; 9: a docs chunk in a language with a
# stemmer of its own holds its words' stems in it too (ra_query.text.locales.language_stems); 10:
# Hangul split from a Latin letter or digit it is written against (`gzip으로`); 11: a docs chunk's
# Korean words without their particle or ending too (ra_query.text.locales.korean_stems); 12: Han
# and kana split from a Latin letter or digit they are written against (`用gzip`, `在Linux上`); 13:
# a code chunk is named by the members it declares too (`Opts.max_depth`: ra_query.text.names); 14:
# `forwards`, the same-named definition a code chunk's whole body calls (a wrapper, folded into it);
# 15: `defines`, a code chunk's kind of definition (a type's weighs less: ra_query.search.pipeline);
# 16: letters folded to ASCII before stemming (`télécharger`, `telecharger` → `telecharg`); 17: a
# docs chunk's Korean words' beginnings (ra_query.text.locales.korean_word_starts); 18: Thai and
# Lao as pairs of letters, half-width katakana as full-width (ra_query.text.locales.cjk_terms); 19:
# their titles too (ra_build.pipeline.shards.indexed_title)
SCHEMA_VERSION: Final = 19


# analyzed text fields. `text` is what ranking reads first (DECISIONS 16): the chunk's breadcrumb,
# tags and body as one BM25 field, empty for a chunk whose body is empty (it has no text of its
# own: its title alone would make a short field that BM25 ranks above the text under it).
# path_components shares path's boost.
TEXT_FIELDS: Final = ("text", "title", "tags", "path", "path_components")
STORED_TEXT: Final = ("title", "tags", "path")
# raw fields, matched whole: `id` and `doc_id` are looked up (`ra get`, a parent in aggregation,
# the vectors' hits, the build's deletes), the filter fields filter
RAW_FIELDS: Final = ("id", "doc_id", "tree", "kind", "lang")
# stored for what a result shows and never looked up, so not indexed (issue 24: indexing them
# was a seventh of the build's CPU and a fifth of the index, README "Build cost"). Every word of
# `body` is in `text`, which `body:` searches; the others are only ever read.
STORED_ONLY: Final = ("body", "parent_id", "slug", "breadcrumb", "symbol", "translation", "forwards", "defines")
# the raw fields a query filters on (`tree:x`, `kind:code`, `lang:go`): fast, matched whole
FILTER_FIELDS: Final = ("tree", "kind", "lang")
# indexed, never stored: the keys a chunk is found under when a query is its name (issue 30)
NAME_FIELD: Final = "name"
# the breadcrumb is stored as its parts joined by this (a split is ~10x cheaper than JSON, and a
# query decodes a hundred breadcrumbs); a part never holds it (`join_breadcrumb`)
BREADCRUMB_JOIN: Final = "\x1f"


def join_breadcrumb(parts: list[str]) -> str:
    """The stored form of a breadcrumb: `BREADCRUMB_JOIN` between parts (inside one, a space)."""
    joined = BREADCRUMB_JOIN.join(parts)
    if joined.count(BREADCRUMB_JOIN) < len(parts):  # no part holds one: the usual case, one pass
        return joined
    return BREADCRUMB_JOIN.join(part.replace(BREADCRUMB_JOIN, " ") for part in parts)


def doc_id_of(tree: str, path: str) -> str:
    """The id of the document at `path` in `tree`: `tree:path`.

    `#` starts a chunk's slug in an id, so a `#` in the path is written `%23`, and `%` itself
    `%25`: `notes.md#intro` is `docs:notes.md%23intro`, never the `#intro` chunk of `notes.md`.
    """
    if "%" in path or "#" in path:
        path = path.replace("%", "%25").replace("#", "%23")
    return f"{tree}:{path}"


def split_breadcrumb(stored: str) -> tuple[str, ...]:
    """The parts of a stored breadcrumb (an empty breadcrumb has none)."""
    return tuple(stored.split(BREADCRUMB_JOIN)) if stored else ()


INT_FIELDS: Final = (
    "depth",
    "position",
    "sibling_count",
    "line_start",
    "line_end",
    "byte_start",
    "byte_end",
    "tokens",
    "mtime",
)
MAX_TOKEN_LENGTH: Final = 40


# One analyzer name whatever the stemmer, so the schema does not change with the stemmer and a
# stemmer change can re-add every document inside a single, atomic tantivy commit. Readers
# register it with the stemmer the manifest names.
ANALYZER: Final = "ra"


class Analyzer:
    """ra's analyzer as queries and highlights use it: tantivy's (`tantivy_analyzer`) over the
    text with its Chinese, Japanese and Korean runs written as their bigrams
    (ra_query.text.locales.cjk_terms), the form the build indexes them in."""

    def __init__(self, inner: tantivy.TextAnalyzer) -> None:
        self.inner = inner

    def analyze(self, text: str) -> list[str]:
        """The tokens of `text`, as the index holds them."""
        return self.inner.analyze(cjk_terms(text))


@cache
def build_analyzer(stemmer: str) -> Analyzer:
    """The analyzer of queries (`Analyzer`); cached: queries analyze their words with it, and it
    never changes for a stemmer."""
    return Analyzer(tantivy_analyzer(stemmer))


def tantivy_analyzer(stemmer: str) -> tantivy.TextAnalyzer:
    """Split on non-alphanumerics, drop tokens of 40+ chars, lowercase, fold accented letters to
    ASCII (a reader types `telecharger` for `télécharger`, `Grosse` for `Größe`), stem (DECISIONS 17)."""
    import tantivy

    builder = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
    builder = builder.filter(tantivy.Filter.remove_long(MAX_TOKEN_LENGTH))
    builder = builder.filter(tantivy.Filter.lowercase())
    builder = builder.filter(tantivy.Filter.ascii_fold())
    builder = builder.filter(tantivy.Filter.stemmer(stemmer))
    return builder.build()


def build_schema() -> tantivy.Schema:
    """The tantivy schema of one chunk document; every field a result shows is stored."""
    import tantivy

    builder = tantivy.SchemaBuilder()
    for name in RAW_FIELDS:
        builder.add_text_field(name, stored=True, tokenizer_name="raw", fast=name in FILTER_FIELDS)
    for name in TEXT_FIELDS:
        builder.add_text_field(name, stored=name in STORED_TEXT, tokenizer_name=ANALYZER)
    for name in STORED_ONLY:
        builder.add_text_field(name, stored=True, tokenizer_name="raw")  # its indexing is dropped below
    builder.add_text_field(NAME_FIELD, stored=False, tokenizer_name="raw")
    for name in INT_FIELDS:
        builder.add_integer_field(name, stored=True, indexed=name == "depth", fast=True)
    return _stored_only(builder.build(), STORED_ONLY)


def _stored_only(schema: tantivy.Schema, names: tuple[str, ...]) -> tantivy.Schema:
    """`schema` with the text fields `names` stored and not indexed.

    tantivy has such fields (a text field without indexing options), but tantivy-py's builder
    indexes every text field. A schema pickles as tantivy's own list of fields, the form
    meta.json holds, so that list without the fields' `indexing` rebuilds it: only the
    pickling protocol is used, no private name.
    """
    rebuild, args = cast("tuple[Callable[..., tantivy.Schema], tuple[dict[str, Any]]]", schema.__reduce__())
    fields = cast("list[dict[str, Any]]", args[0]["inner"])
    for field in fields:
        if field["name"] in names:
            del field["options"]["indexing"]
    return rebuild(*args)


def register_analyzer(index: tantivy.Index, stemmer: str) -> None:
    """Register ra's analyzer on `index`; must be called before any write or search."""
    index.register_tokenizer(ANALYZER, build_analyzer(stemmer).inner)


# Lucene's English stop words (tantivy's list) and the words that turn a question or a sentence
# into words no chunk is about: pronouns, question words, auxiliaries ("how do I list files") and
# the pieces of contractions (I'd, don't).
# Measured with bench/quality.py against Lucene's list alone: CACM MAP +0.015, SciFact ±0.
ENGLISH_STOPWORDS: Final = frozenset(
    """a an and are as at be but by for if in into is it no not of on or such that the their then
    there these they this to was will with i me my we our us you your he she him her his its what
    which who whom whose how why when where do does did doing done have has had having been being
    am were can could would should shall may might must about any all some also
    s t d ll m re ve don doesn didn isn aren wasn weren hasn haven hadn wouldn shouldn couldn""".split()  # noqa: SIM905 — a word list reads best as text
)


@cache
def stopwords_of(stemmer: str) -> Callable[[str], bool]:
    """A test for the stop words of the stemmer's language (lower-cased before the test).

    English uses `ENGLISH_STOPWORDS`; another language uses tantivy's list for it when tantivy has
    one; a language without a list has no stop words.
    """
    if stemmer == "english":
        return lambda word: word.lower() in ENGLISH_STOPWORDS
    import tantivy

    try:
        stop = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.raw())
        stop = stop.filter(tantivy.Filter.lowercase()).filter(tantivy.Filter.stopword(stemmer)).build()
    except ValueError:
        return lambda word: False
    return lambda word: not stop.analyze(word.lower())

"""The artifact contract shared by the build and the query side: layout, tantivy schema, analyzer.

Both sides build the schema and register the analyzer through this module, so a reader always
tokenizes queries exactly as the writer tokenized documents.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import tantivy

FORMAT_VERSION: Final = 1
# Bumped whenever the fields below or their options change; part of the index-content hash.
SCHEMA_VERSION: Final = 2  # 2: one analyzer name ("ra") whatever the stemmer

MANIFEST_NAME: Final = "manifest.json"
INDEX_DIR: Final = "index"
CHUNKS_DIR: Final = "chunks"
FILES_TABLE: Final = "files.parquet"

# analyzed text fields and their default boosts (DECISIONS 16); path_components shares path's
TEXT_FIELDS: Final = ("title", "tags", "path", "path_components", "body")
STORED_TEXT: Final = ("title", "tags", "path", "body")
RAW_FIELDS: Final = ("id", "doc_id", "parent_id", "tree", "slug", "breadcrumb")
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


@cache
def build_analyzer(stemmer: str) -> tantivy.TextAnalyzer:
    """Split on non-alphanumerics, drop tokens of 40+ chars, lowercase, stem (DECISIONS 17).

    Cached: queries analyze their words with it, and it never changes for a stemmer.
    """
    import tantivy

    builder = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
    builder = builder.filter(tantivy.Filter.remove_long(MAX_TOKEN_LENGTH))
    builder = builder.filter(tantivy.Filter.lowercase())
    builder = builder.filter(tantivy.Filter.stemmer(stemmer))
    return builder.build()


def build_schema() -> tantivy.Schema:
    """The tantivy schema of one chunk document; every field a result shows is stored."""
    import tantivy

    builder = tantivy.SchemaBuilder()
    for name in RAW_FIELDS:
        builder.add_text_field(name, stored=True, tokenizer_name="raw", fast=name == "tree")
    for name in TEXT_FIELDS:
        builder.add_text_field(name, stored=name in STORED_TEXT, tokenizer_name=ANALYZER)
    for name in INT_FIELDS:
        builder.add_integer_field(name, stored=True, indexed=name == "depth", fast=True)
    return builder.build()


def register_analyzer(index: tantivy.Index, stemmer: str) -> None:
    """Register ra's analyzer on `index`; must be called before any write or search."""
    index.register_tokenizer(ANALYZER, build_analyzer(stemmer))

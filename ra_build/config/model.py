"""The configuration as ra uses it: the merged, validated values of every `.ra.toml` that applies.

ra_build.config.load reads and checks the files and builds these; everything else in ra_build
reads only these. Defaults live here, on the dataclasses.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ra_query.artifacts.paths import DEFAULT_DIR
from ra_query.errors import ConfigError

DEFAULT_INCLUDE = ("**/*.md", "**/*.rst", "**/*.txt")
STEMMERS = frozenset(
    {
        "arabic", "danish", "dutch", "english", "finnish", "french", "german", "greek",
        "hungarian", "italian", "norwegian", "portuguese", "romanian", "russian", "spanish",
        "swedish", "tamil", "turkish",
    }
)  # fmt: skip
TREE_NAME = re.compile(r"[A-Za-z0-9_-]+")
DEFAULT_REFRESH = 7 * 86_400  # an upstream page is due a week after it was fetched
UPSTREAM_INCLUDE = ("**/*.md",)  # what an upstream tree's cache holds: one markdown file a page


@dataclass(frozen=True)
class TreeConfig:
    """A named folder of documents, as the nearest config file defines it."""

    name: str
    path: Path
    include: tuple[str, ...]
    exclude: tuple[str, ...]
    is_global: bool
    source: Path
    line: int
    outside_links: bool = False  # `allow_outside_links`: follow symlinks out of the tree
    semantic: bool | None = None  # embed its chunks; None: as `[settings] semantic` says
    # the walk's skips (ra_query.sources.walk): the tree's key, else `[settings]`'s (load merges)
    default_excludes: bool = True  # skip node_modules/, .git/, build/, … wherever they are
    gitignore: bool = True  # skip what the git work tree's ignore files ignore
    # an upstream tree (ra_build.upstream): pages fetched from `urls` and/or the `sitemap`'s URLs
    # whose path matches `url_include` and not `url_exclude` (the tree's include / exclude);
    # `path` is then its download cache, `<.ra>/upstream/<name>`, and `include` UPSTREAM_INCLUDE
    urls: tuple[str, ...] = ()
    sitemap: str | None = None
    refresh: int = DEFAULT_REFRESH  # seconds until a fetched page is due again (`refresh = "7d"`)
    url_include: tuple[str, ...] = ()
    url_exclude: tuple[str, ...] = ()
    # `header_language`: what a `.h` file is parsed as — "c", "cpp", or "auto": C++ when the tree
    # has at least as many C++ sources as `.c` files, or the header itself is C++ (docs/code.md)
    header_language: str = "auto"
    # `language`: the natural language of its docs unless their frontmatter, path or script says
    # another (ra_query.text.locales): `en`, `ja`, `pt-br`, …
    language: str = "en"

    @property
    def upstream(self) -> bool:
        """Whether the tree's pages are fetched (`urls` or `sitemap`) rather than a folder's."""
        return bool(self.urls or self.sitemap)


@dataclass(frozen=True)
class ContextRule:
    """Terms, tree limits and documents that `ra context` adds for files matching `match`."""

    match: tuple[str, ...]
    trees: tuple[str, ...] | None
    terms: tuple[str, ...]
    include: tuple[str, ...]
    source: Path


@dataclass(frozen=True)
class Settings:
    """`[settings]`: result counts, the local-tree boost and size limits."""

    default_limit: int = 5
    local_boost: float = 1.5
    max_chunk_size: int = 50_000
    min_chunk_size: int = 2_000
    max_file_size: int = 10_000_000
    agent_max_tokens: int = 8_000  # the MCP tools' budget when the caller gives none
    index_shards: int = 0  # tantivy shards built in parallel; 0: the first build's core count, at most 4
    semantic: bool = False  # embed the chunks of every tree that does not say (`[tree.x] semantic`)
    default_excludes: bool = True  # for every tree that does not say (`[tree.x] default_excludes`)
    gitignore: bool = True  # likewise (`[tree.x] gitignore`)
    code_chunk_size: int = 800  # bytes: a longer code definition is cut into parts (docs/code.md)


@dataclass(frozen=True)
class SearchSettings:
    """`[search]` and `[search.boost]`: analyzer, fuzzy matching, pipeline and field boosts."""

    stemmer: str = "english"
    fuzzy_distance: int = 1
    candidate_limit: int = 20
    cutoff_ratio: float = 0.5
    aggregation_threshold: float = 0.9
    phrase_boost: float = 0.2
    stopwords: bool = True
    # one combined BM25 field plus small bonuses: chosen with bench/quality.py (docs/searching.md)
    boost_text: float = 1.0
    boost_title: float = 0.1
    boost_tags: float = 0.0
    boost_path: float = 0.1
    semantic_weight: float = 0.55  # the dense side's share of a hybrid score (0: BM25 alone)
    code_semantic_weight: float = 0.45  # the same for a code chunk (the model reads prose better)
    code_words: float = 0.4  # a query word's code synonyms weigh this (0: off; ra_query.text.codewords)
    # code chunks' scores are multiplied by code_boost, test files' and example programs' by
    # test_weight too
    # (bench/code_search.py, docs/code.md)
    code_boost: float = 1.25
    test_weight: float = 0.5
    type_weight: float = 0.8  # a type's own chunk (a class, struct, interface): its score times this


@dataclass(frozen=True)
class ContextSettings:
    """`[context]`: how `ra context` picks terms from the files it is given."""

    limit: int = 10
    terms: int = 15
    min_term_frequency: int = 2
    min_word_length: int = 4
    max_word_length: int = 30
    sample_size: int = 50_000


@dataclass(frozen=True)
class Config:
    """The effective configuration merged from every file that applies."""

    files: tuple[Path, ...]
    base_dir: Path | None
    settings: Settings
    search: SearchSettings
    context: ContextSettings
    trees: dict[str, TreeConfig]
    rules: tuple[ContextRule, ...]
    warnings: tuple[str, ...]
    key_sources: dict[str, Path]
    global_file: Path | None = None

    def semantic_trees(self) -> list[str]:
        """The trees whose chunks are embedded: `[tree.x] semantic`, else `[settings] semantic`."""
        return [
            name
            for name, tree in self.trees.items()
            if (tree.semantic if tree.semantic is not None else self.settings.semantic)
        ]

    def artifacts(self, override: str | None, env: Mapping[str, str]) -> Path:
        """Where the artifacts go: --artifacts, else $RA_ARTIFACTS, else `.ra/` beside the nearest
        config file.

        Raises:
            ConfigError: none of the three (no `.ra.toml` here or above).
        """
        if override:
            return Path(override).expanduser().resolve()
        if env.get("RA_ARTIFACTS"):
            return Path(env["RA_ARTIFACTS"]).expanduser().resolve()
        if self.base_dir is None:
            raise ConfigError("no .ra.toml found here or above — create one with: ra init")
        return self.base_dir / DEFAULT_DIR

"""The configuration's side of `ra context`: its rules and term settings, and the input files
placed relative to the nearest config (what rule globs match), as ra_query.search.context reads them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ra_build.config.model import Config
    from ra_query.artifacts.store import Store
    from ra_query.search.context import Analysis, ContextOptions, ContextRule, InputFile


def input_files(config: Config, given: list[str]) -> list[InputFile]:
    """The files given to `ra context`, each with its path relative to the nearest config's
    directory (what rule globs match: `./src/x.rs` and `src/x.rs` are the same file)."""
    from ra_query.search.context import InputFile

    base = os.path.realpath(config.base_dir) if config.base_dir is not None else None
    files: list[InputFile] = []
    for shown in given:
        path = os.path.abspath(shown)
        real = os.path.realpath(path)
        if base is not None and real.startswith(base + os.sep):
            relative = os.path.relpath(real, base)
        else:
            relative = os.path.normpath(shown)
        files.append(InputFile(shown, path, relative.replace(os.sep, "/")))
    return files


def context_rules(config: Config) -> list[ContextRule]:
    """The configuration's `[[context.rules]]` and `[context.patterns]`, as `ra_query.search.context`
    reads them."""
    from ra_query.search.context import ContextRule

    return [ContextRule(tuple(r.match), r.trees, tuple(r.terms), tuple(r.include)) for r in config.rules]


def context_options(config: Config, terms: int | None = None) -> ContextOptions:
    """`[context]`'s term settings, `--terms` over the configured count."""
    from ra_query.search.context import ContextOptions

    c = config.context
    return ContextOptions(
        terms=terms or c.terms,
        min_term_frequency=c.min_term_frequency,
        min_word_length=c.min_word_length,
        max_word_length=c.max_word_length,
        sample_size=c.sample_size,
    )


def context_analyzer(config: Config) -> Callable[[Store, list[str]], list[Analysis]]:
    """How `ra mcp`'s `context` tool reads files: with this configuration's rules and settings."""
    from ra_query.search.context import analyze_each

    rules, options = context_rules(config), context_options(config)
    return lambda store, files: analyze_each(store, input_files(config, files), rules=rules, options=options)

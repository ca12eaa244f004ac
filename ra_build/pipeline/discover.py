"""Find the files of a tree: include/exclude globs, symlink and dot-file rules (DECISIONS 9–10).

The walk itself lives in `ra_query.sources.walk`, shared with the read-only side so `ra-query` can
count stale files without importing the build; this module applies it to a `TreeConfig`.
"""

from __future__ import annotations

from ra_build.config.load import TreeConfig
from ra_query.sources.walk import Discovery, FoundFile, Skipped, walk_tree

__all__ = ["Discovery", "FoundFile", "Skipped", "discover_tree"]


def discover_tree(tree: TreeConfig) -> Discovery:
    """Walk `tree.path` and return the matching files in sorted path order."""
    return walk_tree(tree.name, tree.path, tree.include, tree.exclude, outside_links=tree.outside_links)

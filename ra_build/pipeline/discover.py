"""The discover stage: find the files of a tree and record what was found (DECISIONS 9–10).

The walk itself (include/exclude globs, symlink and dot-file rules) lives in
`ra_query.sources.walk`, shared with the read-only side so `ra-query` can count stale files
without importing the build. The stage writes what it found three ways: the JSON snapshot (the
chunk stage's input), the stat table and the directory mtimes (the stale count's inputs). The
tables of trees no longer configured are pruned after the index stage.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from typing import Any

import orjson

from ra_build.artifacts.atomic import write_if_changed
from ra_build.artifacts.layout import Layout
from ra_build.config.model import TreeConfig
from ra_query.artifacts.stat_table import encode_stat_table
from ra_query.sources.walk import Discovery, FoundFile, Skipped, walk_tree

__all__ = [
    "Discovery",
    "FoundFile",
    "Skipped",
    "discover_stage",
    "discover_tree",
    "prune_tables",
    "read_snapshot",
]


def discover_tree(tree: TreeConfig) -> Discovery:
    """Walk `tree.path` and return the matching files in sorted path order."""
    return walk_tree(
        tree.name,
        tree.path,
        tree.include,
        tree.exclude,
        outside_links=tree.outside_links,
        default_excludes=tree.default_excludes,
        gitignore=tree.gitignore,
    )


def discover_stage(tree: TreeConfig, layout: Layout) -> bool:
    """Walk one tree and write its snapshot; True when the snapshot changed."""
    found = discover_tree(tree)
    snapshot = {
        "tree": tree.name,
        "root": str(tree.path),
        # the globs too, so the manifest can tell ra-query how to re-walk the sources
        "include": list(tree.include),
        "exclude": list(tree.exclude),
        "outside_links": tree.outside_links,
        "default_excludes": tree.default_excludes,
        "gitignore": tree.gitignore,
        "files": [[f.path, f.size, f.mtime_ns] for f in found.files],
        "skipped": [[s.path, s.reason] for s in found.skipped],
        "hidden": list(found.hidden),
    }
    # directory mtimes and the stat table let ra-query count stale files without walking (not
    # build inputs: a new swap file must not re-run the chunk stage); the git ignore files read
    # are in the stat table too, so that editing one makes the index stale (and the next
    # refresh discovers again), as editing a source file does
    write_if_changed(layout.dirs(tree.name), orjson.dumps(found.dirs))
    stat_rows = ((f.path, f.size, f.mtime_ns) for f in (*found.files, *found.ignore_files))
    write_if_changed(layout.stat_table(tree.name), encode_stat_table(stat_rows))
    return write_if_changed(layout.snapshot(tree.name), orjson.dumps(snapshot))


def read_snapshot(layout: Layout, tree: str) -> dict[str, Any]:
    """The snapshot discovery last wrote for `tree`."""
    return orjson.loads(layout.snapshot(tree).read_bytes())


def prune_tables(layout: Layout, trees: Iterable[str]) -> list[str]:
    """Delete the tables and snapshots of trees no longer configured; return their names."""
    keep = set(trees)
    gone: set[str] = set()
    if layout.chunks_dir.exists():
        for path in layout.chunks_dir.iterdir():
            tree = path.name.split(".", 1)[0]
            if tree not in keep and not path.name.startswith("."):
                if path.is_dir():
                    shutil.rmtree(path)
                else:
                    path.unlink(missing_ok=True)
                gone.add(tree)
    return sorted(gone)

"""Is the index current? Decided from the build's own records, before anything heavy is imported.

`ra search`, `ra get` and `ra mcp` refresh the index before they answer (DECISIONS 25). Most
of the time nothing changed, and proving that must cost what `ra-query`'s stale count costs,
not doit's: importing doit, pyarrow and the build stages alone is most of a second. So the
readers first ask `current_store`, which opens the index only when

- the manifest records the config hash of the configuration as it is now (trees, globs,
  settings, stemmer, chunker and schema versions: `ra_build.config.fingerprint.config_hash`) and its
  search settings (which `ra mcp` and `ra-query` read from the manifest),
- the manifest was written after every tree's stat table (a build that failed after its
  discovery leaves a newer stat table than manifest), and
- not one source file was added, removed or modified since (`ra_query.sources.stale.stale_files`:
  directory mtimes first, then a stat of each recorded file).

Anything else, or any doubt, and the caller runs the build as before. A file the last build
could not read is retried by the next build that runs, not by this check (making a file
readable changes neither its size nor its mtime). `ra status` and `ra check` ask the same
question of the same records (`freshness`), for a count instead of a yes or no.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Literal, NamedTuple

from ra_query.artifacts.paths import MANIFEST_NAME, stat_table_path
from ra_query.errors import ArtifactError
from ra_query.sources.stale import stale_files, stale_state

if TYPE_CHECKING:
    from pathlib import Path

    from ra_build.artifacts.layout import Layout
    from ra_build.config.model import Config
    from ra_query.artifacts.store import Store
    from ra_query.sources.stale import Files, StaleCheck


def current_store(config: Config, root: Path, early: StaleCheck | None = None) -> Store | None:
    """The opened index at `root` when it is current for `config`, else None (run the build).

    `early`: a stale count for `root` already under way (its result is used, or it is cancelled).
    """
    from ra_build.config.fingerprint import config_hash, search_defaults

    store = store_if_current(os.fspath(root), config_hash(config), early)
    if store is not None and store.search_defaults() != search_defaults(config):
        return None  # search settings edited: the build rewrites the manifest that records them
    return store


def store_if_current(root: str, expected_hash: object, early: StaleCheck | None = None) -> Store | None:
    """The opened index at `root` when it was built from the configuration hashed `expected_hash`
    and nothing changed since (see the module's docstring), else None."""
    store = store_if_built_from(root, expected_hash)
    if store is None:
        return None
    changed = early.result() if early is not None else stale_files(root, store.manifest)
    return store if changed == 0 else None  # None (cannot tell) is not "nothing changed" either


def store_if_built_from(root: str, expected_hash: object) -> Store | None:
    """The opened index at `root` when its last complete build used the configuration hashed
    `expected_hash` and no build failed since; whether sources changed is not looked at."""
    from ra_query.artifacts.store import open_store

    try:
        store = open_store(root)
        trees: object = store.manifest.get("trees")
        if store.manifest.get("config_hash") != expected_hash or not isinstance(trees, dict) or not trees:
            return None
        if _discovered_since(root, [str(name) for name in trees]):
            return None
    except (ArtifactError, OSError):
        return None
    return store


def _discovered_since(root: str, trees: list[str]) -> list[str]:
    """The trees discovered again after the last complete build: a build that stopped after its
    discovery leaves a stat table newer than the manifest.

    Raises:
        OSError: no manifest, or a tree without a stat table.
    """
    written = os.stat(os.path.join(root, MANIFEST_NAME)).st_mtime_ns
    return [name for name in trees if os.stat(stat_table_path(root, name)).st_mtime_ns > written]


IndexState = Literal["current", "stale", "config changed", "missing"]


class Freshness(NamedTuple):
    """How the index compares with the sources and the configuration (`ra status`, `ra check`)."""

    state: IndexState
    changed: int = 0  # files added, removed or modified since the build (state "stale")

    def describe(self) -> str:
        """The state as `ra status` prints it: `stale (N files changed)`, `current`, …"""
        return stale_state(self.changed) if self.state == "stale" else self.state


def freshness(config: Config, layout: Layout) -> Freshness:
    """missing / config changed / stale (N files changed) / current, by the tests `current_store`
    makes, with every file the last complete build saw stat'ed (no `STAT_EVERY_FILE_UP_TO`
    bound); new files are found through directory mtimes, as the stale count finds them.

    A tree discovered again after that build (which then stopped) is compared through the file
    list that build indexed (files.parquet) rather than its newer stat table; a tree that cannot
    be compared at all (its folder gone, its records missing) counts every file it indexed.
    """
    import json

    from ra_build.config.fingerprint import config_hash

    root = os.fspath(layout.root)
    try:
        manifest = json.loads(layout.manifest.read_bytes())
    except (OSError, ValueError):
        manifest = None
    if not isinstance(manifest, dict) or not layout.index_meta.exists():
        return Freshness("missing")
    if manifest.get("config_hash") != config_hash(config):
        return Freshness("config changed")
    entries = manifest.get("trees")
    entries = entries if isinstance(entries, dict) else {}
    again = _indexed_files(layout, [str(name) for name in entries if _rediscovered(layout, str(name))])
    changed = 0
    for name, entry in entries.items():
        recorded = {name: again[name]} if name in again else None
        count = stale_files(root, {"trees": {name: entry}}, every_file=True, recorded=recorded)
        changed += count if count is not None else len(_indexed_files(layout, [name])[name][0])
    return Freshness("stale", changed) if changed else Freshness("current")


def _rediscovered(layout: Layout, tree: str) -> bool:
    """Whether `tree` was discovered again after the last complete build (or has no stat table)."""
    try:
        return _discovered_since(os.fspath(layout.root), [tree]) != []
    except OSError:
        return True


def _indexed_files(layout: Layout, trees: list[str]) -> dict[str, Files]:
    """(paths, sizes, mtimes) of the files the last complete build indexed, of `trees`."""
    if not trees:
        return {}
    from ra_build.artifacts.tables import read_file_rows

    found: dict[str, tuple[list[str], list[int], list[int]]] = {tree: ([], [], []) for tree in trees}
    for row in read_file_rows(layout.files_table):
        if row.tree in found and (row.status != "error" or row.size):
            paths, sizes, mtimes = found[row.tree]
            paths.append(row.path)
            sizes.append(row.size)
            mtimes.append(row.mtime_ns)
    return dict(found)

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
readable changes neither its size nor its mtime).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ra_query.artifacts.paths import MANIFEST_NAME, stat_table_path
from ra_query.errors import ArtifactError
from ra_query.sources.stale import stale_files

if TYPE_CHECKING:
    from pathlib import Path

    from ra_build.config.load import Config
    from ra_query.artifacts.store import Store
    from ra_query.sources.stale import StaleCheck


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
        written = os.stat(os.path.join(root, MANIFEST_NAME)).st_mtime_ns
        trees: object = store.manifest.get("trees")
        if store.manifest.get("config_hash") != expected_hash or not isinstance(trees, dict) or not trees:
            return None
        for name in trees:
            if os.stat(stat_table_path(root, str(name))).st_mtime_ns > written:
                return None  # discovered after the last complete build
    except (ArtifactError, OSError):
        return None
    return store

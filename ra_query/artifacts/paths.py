"""Every file name of an artifact directory and of a packed artifact, in one place (DESIGN
"Artifact contract").

    <artifacts>/                    .ra/ beside the nearest .ra.toml, unless named
      manifest.json                 what the directory holds and how it was built
      index/                        the published tantivy index (meta.json lists its segments)
      chunks/<tree>/part-NN.parquet the chunk table of a tree, in parts
      chunks/<tree>.files.parquet   the file table of a tree
      chunks/<tree>.snapshot.json   what discovery saw (the chunk stage's input)
      chunks/<tree>.stat            the same files as a stat table (the stale count's input)
      chunks/<tree>.dirs.json       the mtime of every directory discovery walked
      chunks/<tree>.stats.json      what the last chunk stage did
      files.parquet                 every tree's file table in one
      vectors/<tree>.f32, .ids      one embedding per chunk and the chunk ids of the rows (the
      vectors/meta.json             trees with `semantic = true`), and the model that made them
      .index-shards/NN/             the index stage's shards (readers never open them)
      index_state.json, .doit.db, .checksums.json, .lock, .config-stamp.json: build state

A packed artifact (`ra pack`) is a `.tar.gz` of `ra-artifacts/` holding the manifest, `index/`
and, with `--with-tables`, the chunk tables; `ra-query` unpacks it into a cache directory named
by its sha256, marked `.complete` once verified.

Only `os` is imported: `ra-query`'s forked stale count reads these names before anything else
is loaded (ra_query.sources.stale).
"""

from __future__ import annotations

import os

CONFIG_NAME = ".ra.toml"
DEFAULT_DIR = ".ra"  # the artifact directory beside the nearest CONFIG_NAME

MANIFEST_NAME = "manifest.json"
INDEX_DIR = "index"
CHUNKS_DIR = "chunks"
FILES_TABLE = "files.parquet"
SHARDS_DIR = ".index-shards"
INDEX_STATE = "index_state.json"
DOIT_DB = ".doit.db"
LOCK = ".lock"
CHECKSUMS = ".checksums.json"
STAMP = ".config-stamp.json"
VECTORS_DIR = "vectors"
VECTORS_META = "meta.json"  # in VECTORS_DIR
# an upstream tree's download cache, in the DEFAULT_DIR beside the config file that defines the
# tree: UPSTREAM_DIR/<tree>/<host>/<path>.md, one page a file, and UPSTREAM_DIR/<tree>.json,
# its manifest (ra_build.upstream.cache)
UPSTREAM_DIR = "upstream"

# tantivy's own files in an index directory: the list of segments, its locks, and its record of
# the files it manages (used only to garbage-collect, which a reader never does)
INDEX_META = "meta.json"
META_LOCK = ".tantivy-meta.lock"
WRITER_LOCK = ".tantivy-writer.lock"
MANAGED = ".managed.json"
TANTIVY_LOCKS = (WRITER_LOCK, META_LOCK)

PACK_TOP = "ra-artifacts"  # the one top directory of a packed artifact
PACK_FORMAT = 1  # what `ra pack` writes
PACK_FORMATS = (1,)  # what `ra-query` reads
PACK_COMPLETE = ".complete"  # in a cache entry: unpacked and verified


def chunk_path(root: str | os.PathLike[str], tree: str, suffix: str) -> str:
    """`chunks/<tree><suffix>` in the artifact directory `root` (`.files.parquet`, `.stat`, …)."""
    return os.path.join(root, CHUNKS_DIR, f"{tree}{suffix}")


def vectors_path(root: str | os.PathLike[str], tree: str, suffix: str) -> str:
    """`vectors/<tree><suffix>`: `.f32` (the rows), `.ids` (their chunk ids), `.hashes` (build state)."""
    name = f".{tree}{suffix}" if suffix == ".hashes" else f"{tree}{suffix}"  # build state: a dot-file
    return os.path.join(root, VECTORS_DIR, name)


def snapshot_path(root: str | os.PathLike[str], tree: str) -> str:
    """Where the build recorded what discovery saw of `tree` (path, size, mtime of each file)."""
    return chunk_path(root, tree, ".snapshot.json")


def stat_table_path(root: str | os.PathLike[str], tree: str) -> str:
    """Where the build wrote the snapshot's files as a stat table (ra_query.artifacts.stat_table)."""
    return chunk_path(root, tree, ".stat")


def dirs_path(root: str | os.PathLike[str], tree: str) -> str:
    """Where the build recorded the mtime of every directory of `tree` it walked."""
    return chunk_path(root, tree, ".dirs.json")


def find_artifacts(explicit: str | None, env: dict[str, str], cwd: str) -> str:
    """--artifacts, else $RA_ARTIFACTS, else the nearest `.ra/` holding a manifest, else ./.ra."""
    if explicit:
        return explicit
    if env.get("RA_ARTIFACTS"):
        return env["RA_ARTIFACTS"]
    directory = cwd
    while True:
        if os.path.isfile(os.path.join(directory, DEFAULT_DIR, MANIFEST_NAME)):
            return os.path.join(directory, DEFAULT_DIR)
        parent = os.path.dirname(directory)
        if parent == directory:
            return os.path.join(cwd, DEFAULT_DIR)
        directory = parent

"""Where each artifact lives inside one artifact directory, as paths the build writes to (the
names are ra_query.artifacts.paths's)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ra_query.artifacts.paths import (
    CHUNKS_DIR,
    DOIT_DB,
    FILES_TABLE,
    INDEX_DIR,
    INDEX_META,
    INDEX_STATE,
    LOCK,
    MANIFEST_NAME,
    SHARDS_DIR,
    VECTORS_DIR,
    chunk_path,
    dirs_path,
    snapshot_path,
    stat_table_path,
    vectors_path,
)


@dataclass(frozen=True)
class Layout:
    """Paths of one artifact directory; everything inside is addressed relative to `root`."""

    root: Path

    @property
    def chunks_dir(self) -> Path:
        return self.root / CHUNKS_DIR

    def chunk_dir(self, tree: str) -> Path:
        """The chunk table of `tree`: a directory of Parquet shards (a pyarrow dataset)."""
        return self.chunks_dir / tree

    def chunk_shard(self, tree: str, shard: int) -> Path:
        return self.chunk_dir(tree) / f"part-{shard:02d}.parquet"

    def chunk_shards(self, tree: str) -> list[Path]:
        directory = self.chunk_dir(tree)
        return sorted(directory.glob("part-*.parquet")) if directory.is_dir() else []

    def file_table(self, tree: str) -> Path:
        return Path(chunk_path(self.root, tree, ".files.parquet"))

    def snapshot(self, tree: str) -> Path:
        """What discovery saw: (path, size, mtime) of every file; the chunk stage's file_dep."""
        return Path(snapshot_path(self.root, tree))

    def stat_table(self, tree: str) -> Path:
        """The snapshot's files as a stat table (ra-query's stale check loads it fastest)."""
        return Path(stat_table_path(self.root, tree))

    def dirs(self, tree: str) -> Path:
        """The mtime of every directory discovery walked (ra-query's stale check reads it)."""
        return Path(dirs_path(self.root, tree))

    def stats(self, tree: str) -> Path:
        """What the last chunk stage did for this tree (parsed / reused / removed)."""
        return Path(chunk_path(self.root, tree, ".stats.json"))

    @property
    def files_table(self) -> Path:
        return self.root / FILES_TABLE

    @property
    def index_dir(self) -> Path:
        return self.root / INDEX_DIR

    @property
    def index_meta(self) -> Path:
        """tantivy's meta.json of the published index: it lists the segments readers open."""
        return self.index_dir / INDEX_META

    @property
    def shards_dir(self) -> Path:
        """The index stage's own tantivy indexes, one per shard; readers never open them.

        Their segment files are hard-linked into `index_dir`, whose meta.json lists them all.
        """
        return self.root / SHARDS_DIR

    def index_shard(self, shard: int) -> Path:
        return self.shards_dir / f"{shard:02d}"

    @property
    def index_state(self) -> Path:
        """What the published index holds: doc id → [doc hash, shard], and each shard's segments."""
        return self.root / INDEX_STATE

    @property
    def vectors_dir(self) -> Path:
        """The vectors of the semantic trees (ra_query.artifacts.vectors has the format)."""
        return self.root / VECTORS_DIR

    def vectors(self, tree: str, suffix: str) -> Path:
        """`vectors/<tree>.f32` (rows), `.ids` (their chunk ids), `.hashes` (the build's record)."""
        return Path(vectors_path(self.root, tree, suffix))

    @property
    def manifest(self) -> Path:
        return self.root / MANIFEST_NAME

    @property
    def lock(self) -> Path:
        return self.root / LOCK

    @property
    def doit_db(self) -> Path:
        return self.root / DOIT_DB

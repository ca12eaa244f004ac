"""manifest.json: what an artifact directory holds and how it was built (DESIGN contract).

Paths inside are relative to the artifact directory, so it can be moved, tarred, published.
"""

from __future__ import annotations

import os
import platform
import shutil
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson

from ra_build.artifacts.atomic import write_bytes
from ra_build.artifacts.layout import Layout
from ra_build.artifacts.tables import concat_file_tables, read_file_rows
from ra_build.upstream.cache import iso_utc, read_manifest
from ra_query.artifacts.packed import file_sha256
from ra_query.artifacts.paths import CHECKSUMS, MANIFEST_NAME
from ra_query.artifacts.schema import FORMAT_VERSION, SCHEMA_VERSION
from ra_query.artifacts.vectors import vectors_meta
from ra_query.sources.languages import file_languages
from ra_query.version import __version__

# the manifest lists every published file but itself; build state is dot-files, not listed either
_UNLISTED = {MANIFEST_NAME}


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "unknown"


def _checksums(layout: Layout) -> dict[str, str]:
    """sha256 of every published file, re-hashing only files whose size or mtime changed.

    tantivy segment files never change once written, so after an edit only the new segment,
    meta.json and the rewritten tables are read again. The cache is a dot-file, unpublished.
    """
    cache_path = layout.root / CHECKSUMS
    try:
        cache: dict[str, list[Any]] = orjson.loads(cache_path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        cache = {}
    fresh: dict[str, list[Any]] = {}
    to_hash: list[tuple[str, Path]] = []
    for path in sorted(layout.root.rglob("*")):
        rel = path.relative_to(layout.root).as_posix()
        if path.name in _UNLISTED or any(part.startswith(".") for part in rel.split("/")):
            continue
        if not path.is_file():
            continue
        st = path.stat()
        known = cache.get(rel)
        if known is not None and known[0] == st.st_size and known[1] == st.st_mtime_ns:
            fresh[rel] = known
        else:
            fresh[rel] = [st.st_size, st.st_mtime_ns, ""]
            to_hash.append((rel, path))
    # hashlib releases the GIL on large buffers: after a full build (~2.5x the corpus) every core helps
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for (rel, _), digest in zip(to_hash, pool.map(file_sha256, [p for _, p in to_hash]), strict=True):
            fresh[rel][2] = digest
    write_bytes(cache_path, orjson.dumps(fresh))
    return {rel: entry[2] for rel, entry in fresh.items()}


def _share_index_reads(layout: Layout) -> None:
    """Make the index files as readable as the index directory is.

    tantivy writes meta.json (and .managed.json) through a 0600 temp file; left so, a reader
    running as another user (a read-only mount in an agent sandbox) could not open the index.
    """
    try:
        wanted = os.stat(layout.index_dir).st_mode & 0o444
        entries = list(os.scandir(layout.index_dir))
    except OSError:
        return
    for entry in entries:
        if entry.is_file(follow_symlinks=False):
            mode = entry.stat(follow_symlinks=False).st_mode & 0o7777
            if mode & wanted != wanted:
                os.chmod(entry.path, mode | wanted)


def _sources(layout: Layout, tree: str) -> dict[str, Any]:
    """Where the tree's sources were and which globs selected them (from discovery's snapshot).

    `ra-query` re-walks them to report staleness (DECISIONS 25) when they are visible.
    """
    snapshot: dict[str, Any] = orjson.loads(layout.snapshot(tree).read_bytes())
    return {
        "root": snapshot["root"],
        "include": list(snapshot.get("include", [])),
        "exclude": list(snapshot.get("exclude", [])),
        "outside_links": bool(snapshot.get("outside_links", False)),
        "default_excludes": bool(snapshot.get("default_excludes", True)),
        "gitignore": bool(snapshot.get("gitignore", True)),
    }


def _vectors(layout: Layout, semantic: bool) -> dict[str, Any] | None:
    """What the manifest says of the vectors (model, its sha256, rows per tree), or None."""
    if not semantic:
        shutil.rmtree(layout.vectors_dir, ignore_errors=True)  # semantic turned off everywhere
        return None
    meta = vectors_meta(layout.root)
    if meta is None or not meta.get("trees"):
        return None
    return {k: meta[k] for k in ("model", "model_sha256", "dimensions", "dtype", "trees")}


def upstream_entry(cache: Path) -> dict[str, Any]:
    """An upstream tree's sync dates and, per cached page (by its path), its URL and fetch date."""
    manifest = read_manifest(cache)
    return {
        "synced_at": iso_utc(manifest.synced_at),
        "pages": {
            page.path: {"url": page.url, "fetched_at": iso_utc(page.fetched_at), "status": page.status}
            for page in sorted(manifest.cached(), key=lambda p: p.path)
        },
        "due": iso_utc(manifest.next_due()),
    }


def manifest_stage(
    layout: Layout,
    trees: list[str],
    config_hash: str,
    stemmer: str,
    search: Mapping[str, Any] | None = None,
    semantic: bool = False,
    upstream: Mapping[str, Path] | None = None,
) -> dict[str, Any]:
    """Concatenate the file tables and write manifest.json atomically; return the manifest.

    `search` (the configured search settings, `ra_build.config.fingerprint.search_defaults`) is
    recorded so that `ra-query`, which has no configuration, searches the artifacts the same
    way. With `semantic` (some tree is) the vectors' model and row counts are recorded; without,
    vectors a build made before are removed. `upstream` names the cache of each upstream tree (its
    manifest beside it): its pages' URLs and sync dates go in the tree's entry
    (`upstream_entry`), so a packed index says where each page came from and when.
    """
    concat_file_tables([layout.file_table(t) for t in trees], layout.files_table)
    vectors = _vectors(layout, semantic)
    state = orjson.loads(layout.index_state.read_bytes())
    per_tree: dict[str, dict[str, Any]] = {}
    for tree in trees:
        rows = read_file_rows(layout.file_table(tree))
        per_tree[tree] = {
            "files": sum(1 for r in rows if r.status == "ok"),
            "chunks": sum(r.chunks for r in rows),
            "skipped": sum(1 for r in rows if r.status != "ok"),
            # what the agent instructions say of its code (ra_query.sources.languages.code_languages)
            "languages": file_languages(r.path for r in rows if r.status == "ok"),
            "sources": _sources(layout, tree),
        }
        if upstream and tree in upstream:
            per_tree[tree]["upstream"] = upstream_entry(upstream[tree])
    _share_index_reads(layout)
    checksums = _checksums(layout)
    manifest: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "schema_version": SCHEMA_VERSION,
        "ra_version": __version__,
        "versions": {
            "tantivy": _version("tantivy"),
            "pyarrow": _version("pyarrow"),
            "python": platform.python_version(),
        },
        "config_hash": config_hash,
        "stemmer": stemmer,
        "generation": state.get("generation", 0),
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "trees": per_tree,
        # each shard's segments and chunks, as the index stage published them
        "index": {"shards": state.get("index_shards") or []},
        **({"search": dict(search)} if search is not None else {}),
        **({"vectors": vectors} if vectors else {}),
        "files": checksums,
    }
    write_bytes(layout.manifest, orjson.dumps(manifest, option=orjson.OPT_INDENT_2))
    return manifest

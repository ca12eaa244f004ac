"""manifest.json: what an artifact directory holds and how it was built (DESIGN contract).

Paths inside are relative to the artifact directory, so it can be moved, tarred, published.
"""

from __future__ import annotations

import hashlib
import platform
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson

from ra_build.atomic import write_bytes
from ra_build.layout import Layout
from ra_build.tables import concat_file_tables, read_file_rows
from ra_query import __version__
from ra_query.schema import FORMAT_VERSION, SCHEMA_VERSION

# files that belong to the build machinery, not to the published artifacts
_UNLISTED = {".lock", ".doit.db", "manifest.json"}


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "unknown"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def manifest_stage(layout: Layout, trees: list[str], config_hash: str, stemmer: str) -> dict[str, Any]:
    """Concatenate the file tables and write manifest.json atomically; return the manifest."""
    concat_file_tables([layout.file_table(t) for t in trees], layout.files_table)
    state = orjson.loads(layout.index_state.read_bytes())
    per_tree: dict[str, dict[str, int]] = {}
    for tree in trees:
        rows = read_file_rows(layout.file_table(tree))
        per_tree[tree] = {
            "files": sum(1 for r in rows if r.status == "ok"),
            "chunks": sum(r.chunks for r in rows),
            "skipped": sum(1 for r in rows if r.status != "ok"),
        }
    checksums = {
        p.relative_to(layout.root).as_posix(): _sha256(p)
        for p in sorted(layout.root.rglob("*"))
        if p.is_file()
        and p.name not in _UNLISTED
        and not p.name.startswith(".")
        and not p.relative_to(layout.root).as_posix().startswith("index.")
    }
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
        "files": checksums,
    }
    write_bytes(layout.manifest, orjson.dumps(manifest, option=orjson.OPT_INDENT_2))
    return manifest

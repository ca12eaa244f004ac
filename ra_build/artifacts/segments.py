"""tantivy's meta.json as ra relies on it: the list of segments, and which files make each one.

Publishing (ra_build.pipeline.publish) lists the segments of every shard in one meta.json, and
`ra pack` ships exactly the files of the segments listed; both decide membership here. The layout
is that of tantivy 0.22–0.25 (tantivy-py 0.27): a list of segments by id, each with its document
count and its deletes. Anything else fails loudly (`FormatChanged`) rather than publishing or
packing an index that lists the wrong files.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

from ra_query.artifacts.paths import INDEX_META

META_KEYS = frozenset({"index_settings", "segments", "schema", "opstamp", "payload"})
SEGMENT_KEYS = frozenset({"segment_id", "max_doc", "deletes"})
DELETE_KEYS = frozenset({"num_deleted_docs", "opstamp"})


class FormatChanged(RuntimeError):
    """tantivy's meta.json is not laid out as publishing expects (a new tantivy version)."""


def read_meta(directory: Path) -> dict[str, Any]:
    """The meta.json of the tantivy index in `directory`, checked against `META_KEYS`."""
    meta = orjson.loads((directory / INDEX_META).read_bytes())
    if not isinstance(meta, dict) or not set(meta) <= META_KEYS or "segments" not in meta:
        raise FormatChanged(f"{directory / INDEX_META}: unexpected keys {sorted(meta)}")
    for segment in meta["segments"]:
        deletes = segment.get("deletes")
        if set(segment) != SEGMENT_KEYS or (deletes is not None and set(deletes) != DELETE_KEYS):
            raise FormatChanged(f"{directory / INDEX_META}: unexpected segment entry {segment}")
    return meta


def segment_files(directory: Path, segment: dict[str, Any]) -> list[str]:
    """The names of the files in `directory` that make up `segment` (its deletes included)."""
    stem = segment["segment_id"].replace("-", "")
    deletes = segment["deletes"]
    dels = f"{stem}.{deletes['opstamp']}.del" if deletes else None
    names = []
    for name in os.listdir(directory):
        head, _, ext = name.partition(".")
        if head == stem and (name == dels or (ext and not ext.endswith("del"))):
            names.append(name)
    if not any(name.endswith(".store") for name in names):
        raise FormatChanged(
            f"{directory}: the files of segment {segment['segment_id']} are missing — "
            "rebuild the index with: ra update --full"
        )
    return names

"""Open an artifact directory for reading: manifest checks, tantivy index, stored chunks."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import orjson

from ra_query.errors import ArtifactError
from ra_query.schema import FORMAT_VERSION, INDEX_DIR, MANIFEST_NAME, register_analyzer

if TYPE_CHECKING:
    import tantivy


@dataclass(frozen=True)
class Store:
    """An opened, read-only artifact directory."""

    root: Path
    manifest: dict[str, Any]
    index: tantivy.Index

    @property
    def stemmer(self) -> str:
        return str(self.manifest.get("stemmer", "english"))


def read_manifest(root: Path) -> dict[str, Any]:
    """Read and check manifest.json of the artifacts at `root`.

    Raises:
        ArtifactError: no manifest, unreadable manifest, or an unknown format version.
    """
    path = root / MANIFEST_NAME
    try:
        raw: object = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        raise ArtifactError(
            f"no index at {root} (missing {MANIFEST_NAME}) — build it with: ra update"
        ) from None
    except (OSError, orjson.JSONDecodeError) as exc:
        raise ArtifactError(f"{path}: unreadable manifest ({exc}) — rebuild with: ra update --full") from None
    if not isinstance(raw, dict):
        raise ArtifactError(f"{path}: manifest is not a JSON object — rebuild with: ra update --full")
    manifest = cast(dict[str, Any], raw)
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        built_by = manifest.get("ra_version", "an unknown ra version")
        raise ArtifactError(
            f"{path}: artifact format_version {version!r} (built by ra {built_by}) is not "
            f"format {FORMAT_VERSION} that this ra reads — rebuild with this ra (ra update --full) "
            f"or install the ra version that built them"
        )
    return manifest


def open_store(root: Path) -> Store:
    """Open the artifacts at `root` for searching."""
    import tantivy

    manifest = read_manifest(root)
    index_dir = root / INDEX_DIR
    try:
        index = tantivy.Index.open(str(index_dir))
    except (OSError, ValueError) as exc:
        raise ArtifactError(
            f"{index_dir}: cannot open the index ({exc}) — rebuild with: ra update --full"
        ) from None
    register_analyzer(index, str(manifest.get("stemmer", "english")))
    return Store(root=root, manifest=manifest, index=index)

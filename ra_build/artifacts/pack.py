"""`ra pack`: a release artifact of a build — only what a query needs, the same bytes every time.

The `.tar.gz` holds, under one top directory `ra-artifacts/`:

    manifest.json   the build's manifest, with `files` listing every shipped file's sha256,
                    `source` (the git commit of each tree's sources and whether they were dirty)
                    and `packed` (what the pack holds)
    index/          tantivy's meta.json and the files of the segments it lists (no locks, no
                    `.managed.json`, no segment a later commit dropped)
    vectors/        where some tree is semantic: its vectors, their chunk ids and meta.json
    chunks/…        with `--with-tables` only: the chunk tables (Parquet) and files.parquet

Build state (`.doit.db`, `index_state.json`, `.checksums.json`, `.lock`, the stamps, the
vectors' `.hashes`) never ships.
Entries are sorted, owned by 0:0, dated at the build time, with modes 0644/0755, and the gzip
header carries no name or time: the same build packs to the same bytes. A sidecar `FILE.sha256`
holds the archive's digest in `sha256sum` format.
"""

from __future__ import annotations

import calendar
import gzip
import hashlib
import io
import json
import subprocess
import tarfile
import time
from pathlib import Path
from typing import Any

from ra_build.artifacts.atomic import write_bytes
from ra_build.artifacts.layout import Layout
from ra_build.artifacts.segments import FormatChanged, read_meta, segment_files
from ra_query.errors import ArtifactError
from ra_query.artifacts.packed import file_sha256
from ra_query.artifacts.paths import MANIFEST_NAME, PACK_FORMAT, PACK_TOP
from ra_query.artifacts.store import read_manifest


def shipped_files(layout: Layout, with_tables: bool) -> list[str]:
    """The artifact files a query needs (relative, sorted): manifest aside."""
    index = layout.index_dir.relative_to(layout.root).as_posix()
    try:
        segments = read_meta(layout.index_dir)["segments"]
        names = [name for s in segments for name in segment_files(layout.index_dir, s)]
    except FormatChanged as exc:
        raise ArtifactError(str(exc)) from None
    files = [layout.index_meta.relative_to(layout.root).as_posix()]
    files += sorted(f"{index}/{name}" for name in names)
    if layout.vectors_dir.is_dir():  # what a hybrid search reads (the .hashes are build state)
        files += sorted(
            p.relative_to(layout.root).as_posix()
            for p in layout.vectors_dir.iterdir()
            if p.is_file() and not p.name.startswith(".")
        )
    if with_tables:
        files += sorted(
            p.relative_to(layout.root).as_posix()
            for p in layout.chunks_dir.rglob("*.parquet")
            if p.is_file()
        )
        if layout.files_table.is_file():
            files.append(layout.files_table.relative_to(layout.root).as_posix())
    return files


def _git_source(root: str) -> dict[str, Any] | None:
    """The commit of the git repository holding `root`, and whether `root` has changes; None outside git."""
    try:
        commit = subprocess.run(
            ["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30, check=True
        ).stdout.strip()
        status = subprocess.run(
            ["git", "-C", root, "status", "--porcelain", "--", "."],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": commit, "dirty": bool(status.strip())}


def packed_manifest(layout: Layout, files: list[str], with_tables: bool) -> dict[str, Any]:
    """The manifest that ships: the build's, with the shipped files' digests and the sources' commits."""
    manifest = read_manifest(layout.root)
    manifest["files"] = {name: file_sha256(layout.root / name) for name in files}
    sources: dict[str, Any] = {}
    for name, entry in sorted(manifest.get("trees", {}).items()):
        root = entry.get("sources", {}).get("root") if isinstance(entry, dict) else None
        sources[name] = _git_source(root) if isinstance(root, str) else None
    manifest["source"] = sources
    manifest["packed"] = {"format": PACK_FORMAT, "tables": with_tables}
    return manifest


def _build_time(manifest: dict[str, Any]) -> int:
    built = manifest.get("built_at")
    try:
        return calendar.timegm(time.strptime(str(built), "%Y-%m-%dT%H:%M:%SZ"))
    except ValueError:
        return 0


def pack(artifacts: Path, output: Path, *, with_tables: bool = False) -> tuple[Path, str]:
    """Write the release artifact of the build at `artifacts` to `output` (and `output.sha256`).

    Returns:
        The archive's path and its sha256.

    Raises:
        ArtifactError: no complete build there.
    """
    layout = Layout(artifacts)
    if not layout.index_meta.is_file():
        raise ArtifactError(f"{artifacts}: no index to pack — build it first with: ra update")
    files = shipped_files(layout, with_tables)
    manifest = packed_manifest(layout, files, with_tables)
    mtime = _build_time(manifest)
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        directories = sorted({str(Path(name).parent) for name in files} - {"."})
        for directory in ["", *directories]:
            info = tarfile.TarInfo(f"{PACK_TOP}/{directory}".rstrip("/"))
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, mtime
            tar.addfile(info)
        entries = [(MANIFEST_NAME, json.dumps(manifest, indent=2, sort_keys=True).encode() + b"\n")]
        entries += [(name, (layout.root / name).read_bytes()) for name in files]
        for name, data in sorted(entries):
            info = tarfile.TarInfo(f"{PACK_TOP}/{name}")
            info.size, info.mode, info.mtime = len(data), 0o644, mtime
            tar.addfile(info, io.BytesIO(data))
    packed = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=packed, mtime=0, compresslevel=9) as gz:
        gz.write(raw.getvalue())
    data = packed.getvalue()
    digest = hashlib.sha256(data).hexdigest()
    write_bytes(output, data)
    write_bytes(output.with_name(output.name + ".sha256"), f"{digest}  {output.name}\n".encode())
    return output, digest

"""Opening a packed artifact (`ra pack`): a `.tar.gz` file, or a `file://` / `http(s)://` URL.

The archive is unpacked once into a cache directory named by its sha256 — `$RA_CACHE`, else
`$XDG_CACHE_HOME/ra`, else `~/.cache/ra` — and opened from there read-only; the next call with
the same digest finds it there. A URL with a pinned digest (`--sha256 HEX`, or `URL#sha256=HEX`)
whose digest is cached touches no network at all. Before anything is trusted:

- the archive's digest must equal the pin, when there is one;
- every member must be a plain file or directory under `ra-artifacts/` (no `..`, no absolute
  path, no link, no device);
- every file the manifest lists must have its sha256, and nothing else may be there.

A failure of any of these is a one-line `ArtifactError` naming what to do.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import tarfile

# hashlib, shutil, tarfile and tempfile are imported where they are used: `is_packed` is asked
# on every cold `ra-query` start, which must not pay for them (tests/test_boundaries.py)

from ra_query.artifacts.paths import MANIFEST_NAME, PACK_COMPLETE, PACK_FORMATS, PACK_TOP
from ra_query.errors import ArtifactError


def is_packed(spec: str) -> bool:
    """True when `spec` names a packed artifact (a URL, or a file), not an artifact directory."""
    if spec.startswith(("http://", "https://", "file://")):
        return True
    return os.path.isfile(spec)


def cache_dir(env: dict[str, str]) -> str:
    """Where unpacked artifacts are kept."""
    if env.get("RA_CACHE"):
        return env["RA_CACHE"]
    base = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ra")


def split_pin(spec: str, sha256: str | None) -> tuple[str, str | None]:
    """(location, pinned digest) from `URL#sha256=HEX` and/or `--sha256 HEX`."""
    location, _, fragment = spec.partition("#")
    pin = sha256
    if fragment.startswith("sha256="):
        named = fragment.removeprefix("sha256=")
        if pin is not None and pin.lower() != named.lower():
            raise ArtifactError(f"{spec}: the URL pins sha256 {named} but --sha256 says {pin} — give one")
        pin = named
    elif fragment:
        location = spec  # a '#' in a file name
    if pin is not None:
        pin = pin.lower()
        if len(pin) != 64 or any(c not in "0123456789abcdef" for c in pin):
            raise ArtifactError(
                f"--sha256 {pin!r} is not a sha256 — give the 64 hex digits of the .sha256 file"
            )
    return location, pin


def unpacked(spec: str, sha256: str | None, env: dict[str, str]) -> str:
    """The artifact directory of the packed artifact `spec`, unpacked into the cache if need be.

    Raises:
        ArtifactError: a digest that does not match, an archive that is truncated, corrupt or
            unsafe, a download that failed, or an unknown pack format.
    """
    location, pin = split_pin(spec, sha256)
    cache = cache_dir(env)
    if pin is not None and os.path.isfile(os.path.join(cache, pin, PACK_COMPLETE)):
        return os.path.join(cache, pin, PACK_TOP)  # cached: no download, no re-reading
    try:
        os.makedirs(cache, exist_ok=True)
        writable = os.access(cache, os.W_OK | os.X_OK)
    except OSError as exc:
        writable, why = False, exc.strerror
    else:
        why = "read-only"
    if not writable:
        raise ArtifactError(
            f"cannot unpack {location} into the cache {cache} ({why}) — set RA_CACHE to a writable "
            "directory, or fill the cache where it is writable and pin the digest (--sha256)"
        )
    archive, temporary = _local_copy(location, cache)
    try:
        digest = file_sha256(archive)
        if pin is not None and digest != pin:
            raise ArtifactError(
                f"{location}: sha256 is {digest}, not the pinned {pin} — the download is corrupt, "
                "truncated or not the release you meant; fetch it again or fix the pin"
            )
        target = os.path.join(cache, digest)
        if not os.path.isfile(os.path.join(target, PACK_COMPLETE)):
            _unpack(archive, location, cache, target)
        return os.path.join(target, PACK_TOP)
    finally:
        if temporary:
            os.unlink(archive)


def _local_copy(location: str, cache: str) -> tuple[str, bool]:
    """(a local path of the archive, whether it is a temporary download to delete)."""
    if location.startswith("file://"):
        from urllib.parse import unquote, urlparse

        return unquote(urlparse(location).path), False
    if not location.startswith(("http://", "https://")):
        if not os.path.isfile(location):
            raise ArtifactError(f"{location}: no such file — give a packed artifact (ra pack) or a directory")
        return location, False
    import tempfile
    import urllib.error
    import urllib.request

    fd, path = tempfile.mkstemp(prefix=".download-", dir=cache)
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(location, timeout=60) as response:
            expected = response.headers.get("Content-Length")
            copied = 0
            while block := response.read(1 << 20):
                out.write(block)
                copied += len(block)
        if expected is not None and copied != int(expected):
            raise ArtifactError(
                f"{location}: the download stopped at {copied} of {expected} bytes — fetch it again"
            )
    except (urllib.error.URLError, OSError, ValueError) as exc:
        os.unlink(path)
        reason = getattr(exc, "reason", None) or exc
        raise ArtifactError(
            f"{location}: cannot download ({reason}) — check the URL and the network"
        ) from None
    except ArtifactError:
        os.unlink(path)
        raise
    return path, True


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 of a file's bytes, read a MiB at a time."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _unpack(archive: str, shown: str, cache: str, target: str) -> None:
    """Unpack `archive` into `target` (atomically: a temp dir renamed), checking every member."""
    import shutil
    import tarfile
    import tempfile

    staging = tempfile.mkdtemp(prefix=".unpack-", dir=cache)
    try:
        try:
            with tarfile.open(archive, "r:gz") as tar:
                members = tar.getmembers()
                for member in members:
                    _check_member(member, shown)
                tar.extractall(staging, members=members, filter="data")
        except (tarfile.TarError, EOFError, OSError, ValueError) as exc:
            raise ArtifactError(
                f"{shown}: not a readable packed artifact ({exc}) — download it again, or pack it "
                "with: ra pack"
            ) from None
        _verify(os.path.join(staging, PACK_TOP), shown)
        with open(os.path.join(staging, PACK_COMPLETE), "w", encoding="utf-8"):
            pass
        try:
            os.rename(staging, target)
        except OSError:  # another process unpacked the same digest meanwhile: use theirs
            if not os.path.isfile(os.path.join(target, PACK_COMPLETE)):
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _check_member(member: tarfile.TarInfo, shown: str) -> None:
    name = member.name
    parts = name.split("/")
    if name.startswith("/") or ".." in parts or parts[0] != PACK_TOP or not (member.isfile() or member.isdir()):
        raise ArtifactError(
            f"{shown}: refused: member {name!r} is not a plain file under {PACK_TOP}/ — this is not an "
            "artifact ra pack made"
        )


def _verify(root: str, shown: str) -> None:
    """Every file the manifest lists is there with its sha256, nothing else is, the format is known."""
    try:
        with open(os.path.join(root, MANIFEST_NAME), "rb") as handle:
            manifest: Any = json.loads(handle.read())
    except (OSError, ValueError):
        raise ArtifactError(
            f"{shown}: no readable manifest.json in the archive — pack it with: ra pack"
        ) from None
    fields = cast("dict[str, object]", manifest) if isinstance(manifest, dict) else {}
    packed = fields.get("packed")
    fmt = cast("dict[str, object]", packed).get("format") if isinstance(packed, dict) else None
    if fmt not in PACK_FORMATS:
        raise ArtifactError(
            f"{shown}: pack format {fmt!r} is not one this ra reads ({', '.join(map(str, PACK_FORMATS))}) — "
            "upgrade ra, or pack it with this version"
        )
    files_field = fields.get("files")
    listed = {
        str(k): str(v)
        for k, v in (
            cast("dict[object, object]", files_field) if isinstance(files_field, dict) else {}
        ).items()
    }
    present = {
        os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/")
        for d, _, files in os.walk(root)
        for f in files
    } - {MANIFEST_NAME}
    if present != set(listed):
        extra = sorted(present - set(listed)) or sorted(set(listed) - present)
        raise ArtifactError(f"{shown}: the archive and its manifest disagree on {extra[0]} — pack it again")
    for name, digest in listed.items():
        if file_sha256(os.path.join(root, name)) != digest:
            raise ArtifactError(
                f"{shown}: {name} does not match its sha256 in the manifest — download it again"
            )

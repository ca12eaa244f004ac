"""`ra search` without reading the configuration: when neither the config files nor the sources
changed since a search found the index current, the index is opened straight away.

Reading `.ra.toml` (tomllib, the validators, dataclasses, pathlib) costs more than the rest of
a search of a current index. So after a search has read the configuration and found the index
current (or brought it up to date), it leaves a stamp in the artifact directory:

    .ra/.config-stamp.json   {"config_hash", "home", "files": [[path, size, mtime_ns], ...],
                              "root": the last file declares root = true,
                              "global": [path, size, mtime_ns] or [path, null, null],
                              "search": the search settings that configuration gives}

The next search walks up from its working directory as configuration discovery does, with a
stat per directory and no parsing: the same files with the same size and mtime, in the same
order, the same `~/.ra.toml`, the same HOME, and a manifest with the stamped config hash mean
the same configuration. Then the usual checks of `ra_build.refresh.current` follow (manifest newer than
the stat tables, no source file changed) and the stamp's search settings are used.
Any difference, and `ra search` reads the configuration as before. Only `os` and `json` here.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from ra_query.artifacts.paths import CONFIG_NAME, DEFAULT_DIR, STAMP

if TYPE_CHECKING:
    from ra_build.config.model import Config
    from ra_query.artifacts.store import Store
    from ra_query.sources.stale import StaleCheck


def _stat(path: str) -> list[Any]:
    try:
        st = os.stat(path)
    except OSError:
        return [path, None, None]
    return [path, st.st_size, st.st_mtime_ns]


def _home() -> str:
    return os.environ.get("HOME") or os.path.expanduser("~")


def _override(explicit: str | None) -> str | None:
    """The artifact directory --artifacts or $RA_ARTIFACTS names (as `Config.artifacts` reads them)."""
    named = explicit or os.environ.get("RA_ARTIFACTS")
    return os.path.realpath(os.path.expanduser(named)) if named else None


class Speculation(NamedTuple):
    """The index a search may answer from, before the stale count has come back."""

    store: Store
    current: Callable[[], bool]  # True when no source file changed (waits for the count)
    search: dict[str, Any]  # the configuration's search settings, as the stamp recorded them


def stamped_store(explicit: str | None, early: StaleCheck | None) -> Speculation | None:
    """The index, opened, when the stamp shows the configuration unchanged since it was current.

    Whether a source file changed is answered by `current()` of the result, so the caller can
    search while the count (`early`, forked first thing) is still walking the sources.
    None: the configuration may have changed, or the last build did not complete.
    """
    home_file = os.path.join(os.path.realpath(_home()), CONFIG_NAME)
    directory = os.path.realpath(os.getcwd())
    found: list[list[Any]] = []  # the local config files on the way up, nearest first
    while True:
        candidate = os.path.join(directory, CONFIG_NAME)
        if candidate != home_file:
            entry = _stat(candidate)
            if entry[1] is not None:
                found.append(entry)
                break  # the nearest: it names the artifacts; the rest is checked below
        parent = os.path.dirname(directory)
        if parent == directory:
            return None  # no local configuration: the full reader decides (and explains)
        directory = parent
    root = _override(explicit) or os.path.join(os.path.dirname(found[0][0]), DEFAULT_DIR)
    try:
        with open(os.path.join(root, STAMP), "rb") as handle:
            stamp = json.loads(handle.read())
    except (OSError, ValueError):
        return None
    if (
        not isinstance(stamp, dict)
        or stamp.get("home") != _home()
        or not isinstance(stamp.get("search"), dict)
    ):
        return None
    if not _same_files(stamp, found, directory, home_file) or stamp.get("global") != _stat(home_file):
        return None
    from ra_build.refresh.current import store_if_built_from
    from ra_query.sources.stale import stale_files

    store = store_if_built_from(root, stamp.get("config_hash"))
    if store is None:
        return None
    if early is not None and os.path.realpath(early.root) != root:
        early.cancel()  # it guessed other artifacts
        early = None
    count = early.result if early is not None else lambda: stale_files(root, store.manifest)
    # the stamp's search settings, not the manifest's: a build records those only when it runs,
    # and an edit of [search] alone leaves the index current without one
    return Speculation(store, lambda: count() == 0, stamp["search"])


def _same_files(stamp: dict[str, Any], found: list[list[Any]], directory: str, home_file: str) -> bool:
    """True when the walk up from `directory` (where `found[0]` was) meets the stamped files."""
    files = stamp.get("files")
    if not isinstance(files, list) or not files or files[0] != found[0]:
        return False
    expected = iter(files[1:])
    want = next(expected, None)
    if want is None and stamp.get("root") is True:
        return True
    while True:
        parent = os.path.dirname(directory)
        if parent == directory:
            return want is None  # every stamped file met, and no other
        directory = parent
        candidate = os.path.join(directory, CONFIG_NAME)
        if candidate == home_file:
            continue  # ~/.ra.toml is stamped on its own ("global")
        entry = _stat(candidate)
        if entry[1] is None:
            continue
        if entry != want:
            return False  # a file added, changed or gone on the way up
        want = next(expected, None)
        if want is None and stamp.get("root") is True:
            return True


def write_stamp(config: Config, root: str, config_hash: str) -> None:
    """Record what `config` was read from, and its search settings, for the next search (best effort)."""
    import tomllib

    from ra_build.config.fingerprint import search_defaults

    home_file = os.path.join(os.path.realpath(_home()), CONFIG_NAME)
    local = [os.fspath(p) for p in config.files if os.fspath(p) != home_file]
    if not local:
        return
    try:
        with open(local[-1], "rb") as handle:
            declares_root = tomllib.load(handle).get("root") is True
    except (OSError, tomllib.TOMLDecodeError):
        return
    stamp = {
        "config_hash": config_hash,
        "home": _home(),
        "files": [_stat(path) for path in local],
        "root": declares_root,
        "global": _stat(home_file),
        "search": search_defaults(config),
    }
    from pathlib import Path

    from ra_build.artifacts.atomic import write_if_changed

    with contextlib.suppress(OSError):  # read-only artifacts: the next search reads the configuration
        write_if_changed(Path(root) / STAMP, json.dumps(stamp).encode())

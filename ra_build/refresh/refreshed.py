"""The index a reader gets: brought up to date first (DECISIONS 25).

`ra search`, `ra get`, `ra context`, `ra likethis`, `ra pack` and `ra mcp` answer from
`refreshed_store`: opened at once when the index is current (ra_build.refresh.current), else
rebuilt first with the build's task graph. `ra mcp` keeps a `LiveStore`, refreshed only after
its watcher saw the sources change.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from ra_query.artifacts.store import manifest_key
from ra_query.errors import RaError, UnwritableError

if TYPE_CHECKING:
    from pathlib import Path

    from ra_build.config.model import Config
    from ra_query.artifacts.store import Store
    from ra_query.sources.stale import StaleCheck

Notify = Callable[[str], None]  # where a refresh's warnings go (the CLI's `ra: warning: …`)


def refreshed_store(
    config: Config, artifacts: str | None, early: StaleCheck | None = None, *, notify: Notify
) -> Store:
    """The index, brought up to date first (DECISIONS 25): opened at once when it is current.

    `early`: the stale count `main` started for the artifacts it guessed, used when the guess
    was right (it has been walking the sources while everything else loaded). `notify` gets
    what a refresh skipped or warned about, one line each.
    """
    from ra_build.config.fingerprint import config_hash
    from ra_build.refresh.current import current_store
    from ra_build.refresh.stamp import write_stamp

    target = config.artifacts(artifacts, os.environ)
    if early is not None and os.path.realpath(early.root) != os.path.realpath(target):
        early.cancel()
        early = None
    store = current_store(config, target, early) or _rebuilt_store(config, target, notify)
    write_stamp(config, os.fspath(target), config_hash(config))  # the next search skips the reading
    return store


class LiveStore:
    """The store `ra mcp` answers from: refreshed only when the watcher saw the sources change.

    Each call costs a flag test and a stat of the manifest while nothing changed. After an
    event under a tree (or without a watcher, on every call) it runs `refreshed_store`: the
    no-change check, and the build when something did change. A manifest replaced by another
    process (`ra update` in a shell) is reopened too.
    """

    def __init__(
        self, config: Config, artifacts: str | None, early: StaleCheck | None = None, *, notify: Notify
    ) -> None:
        from ra_query.sources.watch import SourceWatch

        self.config = config
        self.artifacts = artifacts
        self.notify = notify
        self.target = config.artifacts(artifacts, os.environ)
        self.watch = SourceWatch(os.fspath(tree.path) for tree in config.trees.values())
        self._early = early  # the first call's stale count, started before the server loaded
        self._store: Store | None = None
        self._key: tuple[int, int, int] | None = None

    def __call__(self) -> Store:
        changed = self.watch.changed()  # taken first: an edit during the refresh shows next time
        if changed or self._store is None or manifest_key(self.target) != self._key:
            self._store = None
            early, self._early = self._early, None
            self._store = refreshed_store(self.config, self.artifacts, early, notify=self.notify)
            self._key = manifest_key(self.target)
        return self._store

    def close(self) -> None:
        self.watch.close()
        if self._early is not None:
            self._early.cancel()

    def __enter__(self) -> LiveStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _rebuilt_store(config: Config, target: Path, notify: Notify) -> Store:
    from ra_build.artifacts.tables import arrow_without_pandas
    from ra_build.pipeline.run import run_build

    arrow_without_pandas()  # this process is ra's own
    from ra_query.artifacts.paths import MANIFEST_NAME
    from ra_query.artifacts.store import open_store

    try:
        report = run_build(config, target, notify=notify)
    except UnwritableError as exc:
        if not (target / MANIFEST_NAME).is_file():
            raise
        # a full disk or read-only artifacts: answer from the last build, and say so
        notify(f"{exc.what} — answering from the index as last built (ra update to refresh)")
        return open_store(target)
    if report.failures:
        raise RaError("index refresh failed: " + "; ".join(report.failures))
    # what this refresh parsed and skipped or warned about, on stderr (under `ra mcp` too, where
    # stdout is the protocol); a refresh that changed nothing says nothing
    for key, result in report.results.items():
        if (key.startswith("chunk:") or key == "embed") and isinstance(result, dict):
            for problem in result.get("problems", []):
                notify(problem)
    return open_store(target)

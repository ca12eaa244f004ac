"""The `ra` console entry point, kept light: `ra search` never imports typer, doit or pyarrow
when the index is current, and `ra mcp` never imports typer.

`ra search`, `ra get`, `ra context`, `ra likethis` and `ra mcp` go to their argparse commands
(ra_build.cli.fast), each with a stale count already started for the artifacts it will most
likely read; a plain `ra update` goes to ra_build.cli.update; everything else to the typer app
(ra_build.cli.app).
"""

from __future__ import annotations

import os
import sys

from ra_build.cli.console import PROG
from ra_query.cli_common import artifacts_option, check_arguments, flushed, guarded, leave

# typing costs ~10 ms (re, enum, collections, contextlib): imported here, it delayed the stale
# count's fork by that much, and a no-change `ra search` waited that much longer for the count
TYPE_CHECKING = False
if TYPE_CHECKING:
    from ra_query.semantic.nearby import Nearby
    from ra_query.sources.stale import StaleCheck


FAST = ("search", "get", "mcp", "context", "likethis")  # read by ra_build.cli.fast, never typer


def _early_root(argv: list[str]) -> str | None:
    """The artifacts a `ra search ARGV` will most likely read, from a glance at argv
    (`--artifacts DIR`, else $RA_ARTIFACTS, else the nearest `.ra/`), when they have a manifest;
    `refreshed_store` drops a wrong guess."""
    from ra_query.artifacts.paths import MANIFEST_NAME, find_artifacts

    root = find_artifacts(artifacts_option(argv), dict(os.environ), os.getcwd())
    return root if os.path.isfile(os.path.join(root, MANIFEST_NAME)) else None


def _early_check(root: str | None) -> StaleCheck | None:
    """Start counting stale files for the artifacts at `root` (`_early_root`'s guess), before
    anything else is imported, so that the walk overlaps it on the other core."""
    if root is None:
        return None
    from ra_query.sources.stale import StaleCheck

    return StaleCheck(root)


def _early_nearby(argv: list[str], root: str | None) -> Nearby | None:
    """The model's process of a hybrid `ra search ARGV` (ra_query.semantic.nearby), forked first
    for the artifacts at `root` (`_early_root`'s guess): loading the model is the longest path."""
    if root is None:
        return None
    from ra_query.semantic.nearby import start

    return start(argv, root)


def main() -> None:
    """Console entry point: the fast commands and a plain `ra update` here, the rest through typer."""
    argv = sys.argv[1:]
    code = guarded(lambda: check_arguments(argv) or 0, PROG)
    if code:
        sys.exit(code)
    if argv[:1] == ["update"]:
        from ra_build.cli.update import plain_update, update_command

        plain = plain_update(argv[1:])
        if plain is not None:  # typer and pydantic cost a no-change update a fifth of its time
            sys.exit(flushed(guarded(lambda: update_command(**plain) or 0, PROG)))
    if argv[:1] and argv[0] in FAST:
        # `ra mcp` counts in the process that answers its tools, forked before the SDK loads
        root = _early_root(argv[1:]) if argv[0] != "mcp" else None
        nearby = _early_nearby(argv[1:], root) if argv[0] == "search" else None
        early = _early_check(root)
        try:
            from ra_build.cli import fast

            run = getattr(fast, f"run_{argv[0]}")
            code = flushed(guarded(lambda: run(argv[1:], early), PROG))
        finally:
            if early is not None:
                early.cancel()  # not asked for (an error, --help): stop the walk
            if nearby is not None:
                nearby.stop()
        if argv[0] in ("search", "get"):
            leave(code)  # as `ra-query` does: the teardown is milliseconds nobody waits for
        sys.exit(code)
    from ra_build.cli.app import run_app

    sys.exit(flushed(run_app()))

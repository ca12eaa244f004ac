"""`ra update`: build, report the files with problems, print the one-line summary.

A plain `ra update` (flags and `--opt VALUE` only) is read here without typer, which with
pydantic costs a no-change update a fifth of its time; anything else goes through the typer app.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from ra_build.cli.console import load_config, warn
from ra_query.errors import RaError

if TYPE_CHECKING:
    from pathlib import Path


def update_command(
    *, full: bool, no_wait: bool, artifacts: str | None, cluster: str | None, refresh_upstream: bool = False
) -> None:
    """`ra update`: fetch the upstream pages that are due, build, report the files with
    problems, print the one-line summary."""
    from ra_build.artifacts.tables import arrow_without_pandas

    arrow_without_pandas()  # this process is ra's own

    if cluster is not None:
        from ra_build.pipeline.cluster import parse_spec

        parse_spec(cluster)  # a bad SPEC is an error before anything is read
    config = load_config()
    target = config.artifacts(artifacts, os.environ)
    if any(tree.upstream for tree in config.trees.values()):
        from ra_build.upstream.sync import sync_upstream

        # --no-wait: a tree another sync holds is left to it, as a build another holds is
        sync_upstream(config, force=refresh_upstream, notify=warn, wait=not no_wait)
    from ra_build.pipeline.progress import ProgressBar

    progress = ProgressBar() if sys.stderr.isatty() else None
    if cluster is not None:
        from ra_build.pipeline.cluster import cluster_build

        report = cluster_build(
            config, target, cluster, full=full, wait=not no_wait, progress=progress, notify=warn
        )
    else:
        from ra_build.pipeline.run import run_build

        report = run_build(config, target, full=full, wait=not no_wait, progress=progress, notify=warn)
    if report.failures:
        raise RaError("build failed: " + "; ".join(report.failures))
    from ra_build.cli.reports import file_problems

    for problem in file_problems(target, list(config.trees)):
        warn(problem)
    embedded = report.results.get("embed")
    for problem in embedded.get("problems", []) if isinstance(embedded, dict) else []:
        warn(problem)
    print(_update_summary(target, report.results, report.seconds))


def _update_summary(target: Path, results: dict[str, object], seconds: float) -> str:
    import orjson

    from ra_build.artifacts.layout import Layout

    manifest = orjson.loads(Layout(target).manifest.read_bytes())
    trees = manifest.get("trees", {})
    files = sum(t["files"] for t in trees.values())
    chunks = sum(t["chunks"] for t in trees.values())
    skipped = sum(t["skipped"] for t in trees.values())
    parsed = sum(
        len(r["parsed"]) for k, r in results.items() if k.startswith("chunk:") and isinstance(r, dict)
    )
    embed = results.get("embed")
    embedded = f", {embed['embedded']} embedded" if isinstance(embed, dict) and embed.get("rows") else ""
    return (
        f"{files} files, {chunks} chunks, {skipped} skipped, {parsed} parsed{embedded} in {seconds:.2f}s"
        f" → {target}"
    )


def plain_update(argv: list[str]) -> dict[str, Any] | None:
    """The options of an `ra update` that needs no typer (flags and `--opt VALUE` only), or None:
    `--help`, a usage error or anything unusual goes through typer, which words them."""
    options: dict[str, Any] = {
        "full": False, "no_wait": False, "artifacts": None, "cluster": None, "refresh_upstream": False
    }  # fmt: skip
    flags = {"--full": "full", "--no-wait": "no_wait", "--refresh-upstream": "refresh_upstream"}
    valued = {"--artifacts": "artifacts", "--cluster": "cluster"}
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if arg in flags:
            options[flags[arg]] = True
        elif name in valued and eq and value:
            options[valued[name]] = value
        elif arg in valued and i + 1 < len(argv) and not argv[i + 1].startswith("-"):
            options[valued[arg]] = argv[i + 1]
            i += 1
        else:
            return None
        i += 1
    return options

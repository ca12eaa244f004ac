"""The doit task graph of a build: discover → chunk → index → manifest.

`make_tasks(config, artifacts)` returns `task_*` generators for a doit namespace. The repo's
`dodo.py`, a user's own `dodo.py`, `ra update` and the refresh before a search all run these
same tasks; ra_build.pipeline.run runs them for the CLI.

Each stage declares its inputs as `file_dep`, its outputs as `targets`, and the settings it
reads through `config_changed(...)`, so doit re-runs exactly the stages a change affects.
"""

from __future__ import annotations

import dataclasses
import functools
import sqlite3
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from doit.tools import config_changed

from ra_build.artifacts.layout import Layout
from ra_build.artifacts.writable import write_failure
from ra_build.config.fingerprint import (
    config_hash,
    embed_settings,
    index_settings,
    search_defaults,
    tree_settings,
)
from ra_build.config.model import Config, TreeConfig
from ra_build.pipeline.chunk_stage import (
    ChunkSettings,
    FileProgress,
    ParseFiles,
    chunk_stage,
    nothing_to_retry,
    parse_files,
)
from ra_build.pipeline.discover import discover_stage
from ra_build.pipeline.embed_stage import EmbedTexts, embed_stage
from ra_build.pipeline.index_stage import RunJobs, index_stage
from ra_build.pipeline.lock import BuildLock
from ra_build.pipeline.manifest import manifest_stage
from ra_build.upstream.cache import manifest_path
from ra_query.artifacts.paths import VECTORS_META
from ra_query.errors import RaError
from ra_query.sources.languages import SourceKind


@dataclass
class StageErrors:
    """The errors of one build's stages that its caller re-raises as they are (doit would only
    report them as failed tasks).

    `root`: the artifact directory whose write failures are told as one (`write_failure`);
    None leaves them as doit reports them (a plain `doit` run).
    """

    root: Path | None = None
    raised: list[RaError] = field(default_factory=list)


def _call(errors: StageErrors, fn: Callable[..., Any], *args: Any) -> Callable[[], dict[str, Any]]:
    """Wrap a stage so doit saves its result as task values (and never sees a falsy return)."""

    def action() -> dict[str, Any]:
        try:
            result = fn(*args)
        except RaError as exc:
            errors.raised.append(exc)  # run_build re-raises it with its own message and exit code
            raise
        except (OSError, ValueError, sqlite3.Error) as exc:
            # tantivy reports a failed write as a ValueError; the probe tells a full disk
            failure = write_failure(errors.root, exc) if errors.root is not None else None
            if failure is None:
                raise
            errors.raised.append(failure)
            raise failure from exc
        return {"result": orjson.loads(orjson.dumps(result, default=_plain))}

    action.__name__ = fn.__name__
    return action


def _plain(obj: Any) -> Any:
    if hasattr(obj, "__slots__"):
        return {k: getattr(obj, k) for k in obj.__slots__}
    raise TypeError


def make_tasks(
    config: Config,
    artifacts: Path,
    *,
    lock: bool = True,
    file_progress: FileProgress | None = None,
    parse: ParseFiles = parse_files,
    run_shards: RunJobs | None = None,
    errors: StageErrors | None = None,
    chunk_progress: FileProgress | None = None,
    embed: EmbedTexts | None = None,
) -> dict[str, Any]:
    """doit task generators that build `config`'s trees into the directory `artifacts`.

    With `lock` (the default, for a dodo.py run by the `doit` command), the artifact
    directory's build lock is taken now and held as long as any of the task functions lives
    (a dodo.py keeps them until its process exits), so `doit` and `ra update` never write the
    same artifacts at once; `run_build` holds the lock itself. `parse` and `run_shards` do the two
    stages' heavy work, on this machine's cores by default; `ra update --cluster` passes its
    cluster's (ra_build.pipeline.cluster); `embed` likewise embeds chunk texts, and
    `chunk_progress` hears how many are done. `errors` collects what the stages raise.
    """
    layout = Layout(artifacts.resolve())
    layout.root.mkdir(parents=True, exist_ok=True)  # doit opens its state database there
    held = BuildLock(layout, wait=True, notify=_stderr).__enter__() if lock else None
    errors = errors if errors is not None else StageErrors()
    trees = list(config.trees.values())
    names = [t.name for t in trees]
    chunk_settings = ChunkSettings(
        config.settings.max_file_size, config.settings.max_chunk_size, config.settings.code_chunk_size
    )

    def task_discover() -> Iterator[dict[str, Any]]:
        """Walk each tree; snapshot path, size and mtime of every matching file."""
        for tree in trees:
            yield _discover_task(errors, tree, layout)

    def task_chunk() -> Iterator[dict[str, Any]]:
        """Parse and chunk new or changed files of each tree into its Parquet tables."""
        for tree in trees:
            source: SourceKind = "upstream" if tree.upstream else "docs"
            settings = dataclasses.replace(
                chunk_settings,
                outside_links=tree.outside_links,
                source=source,
                header_language=tree.header_language,
                language=tree.language,
            )
            yield _chunk_task(errors, config, tree, layout, settings, file_progress, parse)

    def task_index() -> dict[str, Any]:
        """Replace changed documents' chunks in the tantivy index and commit."""
        return _index_task(errors, config, layout, names, run_shards)

    def task_embed() -> dict[str, Any]:
        """Embed the new or changed chunks of the semantic trees (vectors beside the index)."""
        return _embed_task(errors, config, layout, names, chunk_progress, embed)

    def task_manifest() -> dict[str, Any]:
        """Write manifest.json: format version, versions, config hash, counts, checksums."""
        return _manifest_task(errors, config, layout, names)

    # the embed stage exists in the graph only where a tree is semantic: without one, the graph
    # (and what `ra update` reports) is the one it always was
    tasks = {"discover": task_discover, "chunk": task_chunk, "index": task_index}
    tasks |= {"embed": task_embed} if config.semantic_trees() else {}
    tasks |= {"manifest": task_manifest}
    for task in tasks.values():
        task.build_lock = held  # type: ignore[attr-defined]  # released when the last task goes
    return {
        **{f"task_{name}": task for name, task in tasks.items()},
        "DOIT_CONFIG": {
            "dep_file": str(layout.doit_db),
            "backend": "sqlite3",  # transactional: a killed build cannot corrupt it
            "default_tasks": list(tasks),
        },
    }


def _discover_task(errors: StageErrors, tree: TreeConfig, layout: Layout) -> dict[str, Any]:
    if tree.upstream:  # not synced yet: an empty tree, not an unreadable one
        tree.path.mkdir(parents=True, exist_ok=True)
    return {
        "name": tree.name,
        "actions": [_call(errors, discover_stage, tree, layout)],
        "targets": [str(layout.snapshot(tree.name)), str(layout.stat_table(tree.name))],
        "uptodate": [False],
        "verbosity": 0,
    }


def _chunk_task(
    errors: StageErrors,
    config: Config,
    tree: TreeConfig,
    layout: Layout,
    settings: ChunkSettings,
    file_progress: FileProgress | None,
    parse: ParseFiles,
) -> dict[str, Any]:
    return {
        "name": tree.name,
        "actions": [_call(errors, chunk_stage, tree, layout, settings, file_progress, parse)],
        "file_dep": [str(layout.snapshot(tree.name))],
        "targets": [str(layout.file_table(tree.name)), str(layout.stats(tree.name))],
        "uptodate": [
            config_changed(tree_settings(tree, config)),
            functools.partial(nothing_to_retry, layout, tree.name),
        ],
        "verbosity": 0,
    }


def _index_task(
    errors: StageErrors, config: Config, layout: Layout, names: list[str], run_shards: RunJobs | None
) -> dict[str, Any]:
    shards = config.settings.index_shards or None
    return {
        "actions": [_call(errors, index_stage, layout, names, config.search.stemmer, shards, run_shards)],
        # the file tables carry each document's hash: they change whenever chunks do
        "file_dep": [str(layout.file_table(n)) for n in names],
        "targets": [str(layout.index_state), str(layout.index_meta)],
        "uptodate": [config_changed(index_settings(config))],
        "verbosity": 0,
    }


def _embed_task(
    errors: StageErrors,
    config: Config,
    layout: Layout,
    names: list[str],
    progress: FileProgress | None,
    embed: EmbedTexts | None,
) -> dict[str, Any]:
    semantic = config.semantic_trees()
    return {
        "actions": [_call(errors, embed_stage, layout, names, semantic, progress, embed)],
        # the file tables carry each document's hash: they change whenever chunks do
        "file_dep": [str(layout.file_table(n)) for n in names],
        "targets": [str(layout.vectors_dir / VECTORS_META)],
        "uptodate": [config_changed(embed_settings(config))],
        "verbosity": 0,
    }


def _manifest_task(errors: StageErrors, config: Config, layout: Layout, names: list[str]) -> dict[str, Any]:
    chash = config_hash(config)
    search = search_defaults(config)
    vectors = [str(layout.vectors_dir / VECTORS_META)] if config.semantic_trees() else []
    # an upstream tree's pages and sync dates, from its cache's manifest (a sync that only
    # heard 304s changes the dates, not the chunks)
    upstream = {t.name: t.path for t in config.trees.values() if t.upstream}
    synced = [str(manifest_path(cache)) for cache in upstream.values() if manifest_path(cache).is_file()]
    args = (layout, names, chash, config.search.stemmer, search, bool(vectors), upstream)
    return {
        "actions": [_call(errors, manifest_stage, *args)],
        "file_dep": [str(layout.index_state)] + [str(layout.file_table(n)) for n in names] + vectors + synced,
        "targets": [str(layout.manifest)],
        "uptodate": [config_changed({"config_hash": chash, "search": search})],
        "verbosity": 0,
    }


def _stderr(message: str) -> None:
    print(f"ra: {message}", file=sys.stderr)


def eval_task(artifacts: Path, questions: Path, floors: Sequence[str] = ()) -> dict[str, Any]:
    """A doit task `eval` (issue 34): `ra eval QUESTIONS --min …` over the index `make_tasks`
    builds into `artifacts`, run again whenever the manifest or the questions change; it fails
    (and so does `doit eval`) when a floor is not met. Not a default task: `doit eval` runs it.
    """
    layout = Layout(artifacts.resolve())

    def ask() -> bool:
        from ra_query.artifacts.store import open_store
        from ra_query.commands import eval_command
        from ra_query.search.pipeline import SearchParams

        store = open_store(layout.root)
        params = SearchParams.from_settings(store.search_defaults())
        output = eval_command(store, str(questions), params, floors=floors)
        sys.stdout.write(output.text)
        return output.code == 0

    def task_eval() -> dict[str, Any]:
        """Ask the index the questions agents ask (ra eval); fail below a floor."""
        return {
            "actions": [ask],
            "file_dep": [str(layout.manifest), str(questions)],
            "task_dep": ["manifest"],
            "verbosity": 2,
        }

    return {"task_eval": task_eval}

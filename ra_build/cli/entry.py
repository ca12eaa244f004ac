"""The `ra` console entry point, kept light: `ra search` never imports typer, doit or pyarrow
when the index is current, and `ra mcp` never imports typer.

`ra search` is what agents call most. It is read here with argparse (as `ra-query search` is),
its index is opened through `ra_build.refresh.current.current_store` when nothing changed, and only a
change brings in the build (`ra_build.pipeline.graph.run_build`). Every other command goes to the
typer app in `ra_build.cli.app`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ra_query.errors import RaError, UnwritableError

if TYPE_CHECKING:
    import argparse
    from pathlib import Path

    from ra_build.config.load import Config
    from ra_query.artifacts.store import Store
    from ra_query.commands import Output as CommandOutput
    from ra_query.search.context import Analysis, ContextOptions, ContextRule, InputFile
    from ra_query.sources.stale import StaleCheck


def warn(message: str) -> None:
    """`ra: warning: …` on stderr, with control characters of file names made visible."""
    from ra_query.text.textsafe import printable

    print(f"ra: warning: {printable(message)}", file=sys.stderr)


def home() -> Path:
    from pathlib import Path

    return Path(os.environ.get("HOME") or Path.home())


def load_config(require_paths: bool = True) -> Config:
    """The configuration for the working directory, its warnings printed."""
    from pathlib import Path

    from ra_build.config.load import load_config as load

    config = load(Path.cwd(), home(), require_paths=require_paths)
    for warning in config.warnings:
        warn(warning)
    return config


def refreshed_store(config: Config, artifacts: str | None, early: StaleCheck | None = None) -> Store:
    """The index, brought up to date first (DECISIONS 25): opened at once when it is current.

    `early`: the stale count `main` started for the artifacts it guessed, used when the guess
    was right (it has been walking the sources while everything else loaded).
    """
    from ra_build.config.fingerprint import config_hash, default_artifacts
    from ra_build.refresh.current import current_store
    from ra_build.refresh.stamp import write_stamp

    target = default_artifacts(config, artifacts, os.environ)
    if early is not None and os.path.realpath(early.root) != os.path.realpath(target):
        early.cancel()
        early = None
    store = current_store(config, target, early) or _rebuilt_store(config, target)
    write_stamp(config, os.fspath(target), config_hash(config))  # the next search skips the reading
    return store


class LiveStore:
    """The store `ra mcp` answers from: refreshed only when the watcher saw the sources change.

    Each call costs a flag test and a stat of the manifest while nothing changed. After an
    event under a tree (or without a watcher, on every call) it runs `refreshed_store`: the
    no-change check, and the build when something did change. A manifest replaced by another
    process (`ra update` in a shell) is reopened too.
    """

    def __init__(self, config: Config, artifacts: str | None, early: StaleCheck | None = None) -> None:
        from ra_build.config.fingerprint import default_artifacts
        from ra_query.sources.watch import SourceWatch

        self.config = config
        self.artifacts = artifacts
        self.target = default_artifacts(config, artifacts, os.environ)
        self.watch = SourceWatch(os.fspath(tree.path) for tree in config.trees.values())
        self._early = early  # the first call's stale count, started before the server loaded
        self._store: Store | None = None
        self._key: tuple[int, int, int] | None = None

    def _manifest_key(self) -> tuple[int, int, int] | None:
        from ra_query.artifacts.paths import MANIFEST_NAME

        try:
            st = os.stat(os.path.join(self.target, MANIFEST_NAME))
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def __call__(self) -> Store:
        changed = self.watch.changed()  # taken first: an edit during the refresh shows next time
        if changed or self._store is None or self._manifest_key() != self._key:
            self._store = None
            early, self._early = self._early, None
            self._store = refreshed_store(self.config, self.artifacts, early)
            self._key = self._manifest_key()
        return self._store

    def close(self) -> None:
        self.watch.close()
        if self._early is not None:
            self._early.cancel()

    def __enter__(self) -> LiveStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_mcp(argv: list[str], early: StaleCheck | None = None) -> int:
    """`ra mcp ARGV`: serve the index over MCP (stdio) until the client goes away.

    Read here, not by the typer app, so a server starts without loading typer; `early` counts
    stale files while the MCP SDK loads, for the first call.
    """
    import argparse

    from ra_query.cli import add_http_options, help_formatter, http_port

    parser = argparse.ArgumentParser(
        prog="ra mcp",
        description="Serve search, context, get and list_sources to an agent over MCP (stdio); a "
        "call after an edit sees it.",
        formatter_class=help_formatter(),
    )
    parser.add_argument(
        "--artifacts", help="artifact directory (default: $RA_ARTIFACTS, else .ra/ beside .ra.toml)"
    )
    add_http_options(parser)
    args = parser.parse_args(argv)
    port = http_port(args)
    # read once: edits to .ra.toml take effect when the agent runtime restarts the server
    config = load_config()
    with LiveStore(config, args.artifacts, early) as live:
        from ra_query.mcp import build_server, run_http, run_stdio

        server = build_server(
            live, stale=lambda _store: 0, context=context_analyzer(config), trees=sorted(config.trees)
        )
        if port is None:
            run_stdio(server)
        else:
            run_http(server, port)
    return 0


def _early_check(argv: list[str]) -> StaleCheck | None:
    """Start counting stale files for the artifacts a `ra search ARGV` will most likely read.

    A guess from a glance at argv (`--artifacts DIR`, else $RA_ARTIFACTS, else the nearest
    `.ra/` with a manifest), started before anything else is imported so that the walk overlaps
    it on the other core; `refreshed_store` drops a wrong guess.
    """
    from ra_query.artifacts.paths import MANIFEST_NAME, find_artifacts

    explicit = None
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg == "--artifacts" and i + 1 < len(argv):
            explicit = argv[i + 1]
        elif arg.startswith("--artifacts="):
            explicit = arg.partition("=")[2]
    root = find_artifacts(explicit, dict(os.environ), os.getcwd())
    if not os.path.isfile(os.path.join(root, MANIFEST_NAME)):
        return None
    from ra_query.sources.stale import StaleCheck

    return StaleCheck(root)


def _rebuilt_store(config: Config, target: Path) -> Store:
    from ra_build.artifacts.tables import arrow_without_pandas
    from ra_build.pipeline.run import run_build

    arrow_without_pandas()  # this process is ra's own
    from ra_query.artifacts.paths import MANIFEST_NAME
    from ra_query.artifacts.store import open_store

    try:
        report = run_build(config, target, notify=warn)
    except UnwritableError as exc:
        if not (target / MANIFEST_NAME).is_file():
            raise
        # a full disk or read-only artifacts: answer from the last build, and say so
        warn(f"{exc.what} — answering from the index as last built (ra update to refresh)")
        return open_store(target)
    if report.failures:
        raise RaError("index refresh failed: " + "; ".join(report.failures))
    # what this refresh parsed and skipped or warned about, on stderr (under `ra mcp` too, where
    # stdout is the protocol); a refresh that changed nothing says nothing
    for key, result in report.results.items():
        if key.startswith("chunk:") and isinstance(result, dict):
            for problem in result.get("problems", []):
                warn(problem)
    return open_store(target)


def run_search(argv: list[str], early: StaleCheck | None = None) -> int:
    """`ra search ARGV`: refresh the index, search, print; returns the exit code.

    `main` calls this with the raw arguments after `search`, so argparse sees a `--` that click
    would have swallowed: in `ra search -- --force` the query `--force` reaches the query parser.
    """
    import argparse

    from ra_query.cli import (
        SEARCH_DESCRIPTION,
        add_search_options,
        help_formatter,
        search_params,
        use_colour,
        view_of,
    )
    from ra_query.commands import search_command

    parser = argparse.ArgumentParser(
        prog="ra search",
        description=SEARCH_DESCRIPTION + " The index is refreshed first.",
        formatter_class=help_formatter(),
    )
    parser.add_argument(
        "--artifacts", help="artifact directory (default: $RA_ARTIFACTS, else .ra/ beside .ra.toml)"
    )
    add_search_options(parser)
    args = parser.parse_args(argv)
    view, as_json = view_of(args)

    def answer(store: Store, defaults: dict[str, Any]) -> CommandOutput:
        return search_command(
            store,
            list(args.queries),
            search_params(args, defaults),
            view=view,
            json=as_json,
            max_tokens=args.max_tokens,
            explain=args.explain,
            colour=use_colour(sys.stdout, dict(os.environ)),
            stale=0,  # current, or just refreshed
        )

    from ra_build.refresh.stamp import stamped_store

    speculation = stamped_store(args.artifacts, early)
    output = None
    if speculation is not None:
        # the answer is computed while the stale count finishes, and kept only when nothing changed
        output = answer(speculation.store, speculation.search)
        if not speculation.current():
            output = None
        early = None  # its count is spent
    if output is None:
        from ra_build.config.fingerprint import search_defaults

        config = load_config()
        output = answer(refreshed_store(config, args.artifacts, early), search_defaults(config))
    sys.stdout.write(output.text)
    return output.code


def input_files(config: Config, given: list[str]) -> list[InputFile]:
    """The files given to `ra context`, each with its path relative to the nearest config's
    directory (what rule globs match: `./src/x.rs` and `src/x.rs` are the same file)."""
    from ra_query.search.context import InputFile

    base = os.path.realpath(config.base_dir) if config.base_dir is not None else None
    files: list[InputFile] = []
    for shown in given:
        path = os.path.abspath(shown)
        real = os.path.realpath(path)
        if base is not None and real.startswith(base + os.sep):
            relative = os.path.relpath(real, base)
        else:
            relative = os.path.normpath(shown)
        files.append(InputFile(shown, path, relative.replace(os.sep, "/")))
    return files


def context_rules(config: Config) -> list[ContextRule]:
    """The configuration's `[[context.rules]]` and `[context.patterns]`, as `ra_query.search.context`
    reads them."""
    from ra_query.search.context import ContextRule

    return [ContextRule(tuple(r.match), r.trees, tuple(r.terms), tuple(r.include)) for r in config.rules]


def context_options(config: Config, terms: int | None = None) -> ContextOptions:
    """`[context]`'s term settings, `--terms` over the configured count."""
    from ra_query.search.context import ContextOptions

    c = config.context
    return ContextOptions(
        terms=terms or c.terms,
        min_term_frequency=c.min_term_frequency,
        min_word_length=c.min_word_length,
        max_word_length=c.max_word_length,
        sample_size=c.sample_size,
    )


def context_analyzer(config: Config) -> Callable[[Store, list[str]], Analysis]:
    """How `ra mcp`'s `context` tool reads files: with this configuration's rules and settings."""
    from ra_query.search.context import analyze

    rules, options = context_rules(config), context_options(config)
    return lambda store, files: analyze(store, input_files(config, files), rules=rules, options=options)


def run_context(argv: list[str], early: StaleCheck | None = None) -> int:
    """`ra context FILE...`: the documentation that fits the files (DECISIONS 24)."""
    import argparse

    from ra_query.cli import check_counts, help_formatter
    from ra_query.search.context import analyze

    parser = argparse.ArgumentParser(
        prog="ra context",
        description="Find the documentation that fits the files you are working on: terms from their "
        "paths, the configured context rules and their content (TF-IDF against the index) form a "
        "weighted query. The index is refreshed first.",
        formatter_class=help_formatter(),
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="the files (e.g. $(git diff --name-only))")
    _add_context_options(parser)
    args = parser.parse_args(argv)
    check_counts(args)
    config = load_config()
    store = refreshed_store(config, args.artifacts, early)
    options = context_options(config, args.terms)
    analysis = analyze(
        store, input_files(config, args.files), rules=context_rules(config), options=options, trees=args.tree
    )
    return _print_context(store, config, analysis, args)


def run_get(argv: list[str], early: StaleCheck | None = None) -> int:
    """`ra get ID`: a chunk, or a whole document; the index is opened as `ra search` opens it."""
    import argparse

    from ra_query.cli import help_formatter
    from ra_query.commands import get_command

    parser = argparse.ArgumentParser(
        prog="ra get",
        description="Print a chunk, or a whole document in document order, by id (the index is "
        "refreshed first).",
        formatter_class=help_formatter(),
    )
    parser.add_argument("id", metavar="ID", help="tree:path (a document) or tree:path#slug (a chunk)")
    parser.add_argument("--full-document", action="store_true", help="the whole document of a chunk id")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--artifacts", help="artifact directory (default: $RA_ARTIFACTS, else .ra/ beside .ra.toml)"
    )
    args = parser.parse_args(argv)
    from ra_build.refresh.stamp import stamped_store

    speculation = stamped_store(args.artifacts, early)
    if speculation is not None and speculation.current():
        store = speculation.store
    else:
        store = refreshed_store(load_config(), args.artifacts, None if speculation else early)
    output = get_command(store, args.id, full_document=args.full_document, json=args.json)
    sys.stdout.write(output.text)
    return output.code


def run_likethis(argv: list[str], early: StaleCheck | None = None) -> int:
    """`ra likethis ID|FILE`: the chunks most like an indexed chunk, a document or a file."""
    import argparse

    from ra_query.cli import check_counts, help_formatter
    from ra_query.search.context import like_this

    parser = argparse.ArgumentParser(
        prog="ra likethis",
        description="Find the chunks most like an indexed chunk or document (by id) or a file: its "
        "most distinctive words (TF-IDF against the index) form a weighted query; the source itself "
        "is left out. The index is refreshed first.",
        formatter_class=help_formatter(),
    )
    parser.add_argument("source", metavar="ID|FILE", help="tree:path#slug, tree:path, or a file")
    _add_context_options(parser)
    args = parser.parse_args(argv)
    check_counts(args)
    config = load_config()
    store = refreshed_store(config, args.artifacts, early)
    analysis = like_this(store, args.source, options=context_options(config, args.terms), trees=args.tree)
    return _print_context(store, config, analysis, args)


def _print_context(store: Store, config: Config, analysis: Analysis, args: argparse.Namespace) -> int:
    """Print what `ra context` / `ra likethis` found for `analysis`; returns the exit code."""
    from ra_build.config.fingerprint import search_defaults
    from ra_query.cli import context_output

    for warning in analysis.warnings:
        warn(warning)
    output = context_output(
        store,
        analysis,
        args,
        search_defaults(config),
        default_limit=config.context.limit,
        env=dict(os.environ),
    )
    sys.stdout.write(output.text)
    return output.code


def _add_context_options(parser: argparse.ArgumentParser) -> None:
    """The options `ra context` and `ra likethis` share."""
    from ra_query.cli import add_context_options

    add_context_options(parser, defaults="[context] limit (10), [context] terms (15)")
    parser.add_argument(
        "--artifacts", help="artifact directory (default: $RA_ARTIFACTS, else .ra/ beside .ra.toml)"
    )


def update_command(*, full: bool, no_wait: bool, artifacts: str | None, cluster: str | None) -> None:
    """`ra update`: build, report the files with problems, print the one-line summary."""
    from ra_build.artifacts.tables import arrow_without_pandas
    from ra_build.config.fingerprint import default_artifacts

    arrow_without_pandas()  # this process is ra's own

    if cluster is not None:
        from ra_build.pipeline.cluster import parse_spec

        parse_spec(cluster)  # a bad SPEC is an error before anything is read
    config = load_config()
    target = default_artifacts(config, artifacts, os.environ)
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
    return f"{files} files, {chunks} chunks, {skipped} skipped, {parsed} parsed in {seconds:.2f}s → {target}"


def plain_update(argv: list[str]) -> dict[str, Any] | None:
    """The options of an `ra update` that needs no typer (flags and `--opt VALUE` only), or None:
    `--help`, a usage error or anything unusual goes through typer, which words them."""
    options: dict[str, Any] = {"full": False, "no_wait": False, "artifacts": None, "cluster": None}
    flags = {"--full": "full", "--no-wait": "no_wait"}
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


def guarded(run: Callable[[], int]) -> int:
    """Run `run`; return its exit code, or the documented one for what it raised (README)."""
    try:
        return run()
    except RaError as exc:
        sys.stderr.write(exc.report("ra"))
        return exc.exit_code
    except KeyboardInterrupt:
        print("ra: interrupted", file=sys.stderr)
        return 130
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2), already printed
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    except BrokenPipeError:  # the reader went away (`ra search … | head`): it has what it wanted
        quiet_stdout()
        return 0
    except Exception as exc:  # the outermost layer: a bug of ours, still not a traceback
        if os.environ.get("RA_DEBUG"):
            raise
        print(
            f"ra: internal error: {type(exc).__name__}: {exc} — please report it; "
            "RA_DEBUG=1 shows the traceback",
            file=sys.stderr,
        )
        return 70


def quiet_stdout() -> None:
    """Point stdout at /dev/null, so flushing at exit does not fail on the closed pipe again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def flushed(code: int) -> int:
    """`code`, after flushing what is still buffered; a reader that went away makes it 0."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        quiet_stdout()
        return 0
    return code


def main() -> None:
    """Console entry point: `ra search` here, everything else through the typer app."""
    from ra_query.cli import check_arguments

    argv = sys.argv[1:]

    def checked() -> int:
        check_arguments(argv)
        return 0

    code = guarded(checked)
    if code:
        sys.exit(code)
    # straight to argparse (`--` and all), without typer
    commands = {
        "search": run_search,
        "get": run_get,
        "mcp": run_mcp,
        "context": run_context,
        "likethis": run_likethis,
    }
    run = commands.get(argv[0]) if argv else None
    plain = plain_update(argv[1:]) if argv[:1] == ["update"] else None
    if plain is not None:  # typer and pydantic cost a no-change update a fifth of its time
        sys.exit(flushed(guarded(lambda: update_command(**plain) or 0)))
    if run is not None:
        early = _early_check(argv[1:])
        try:
            code = flushed(guarded(lambda: run(argv[1:], early)))
        finally:
            if early is not None:
                early.cancel()  # not asked for (an error, --help): stop the walk
        sys.exit(code)
    from ra_build.cli.app import main as typer_main

    typer_main()

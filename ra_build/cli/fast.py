"""The commands agents call most, read with argparse (as `ra-query` reads them), never typer:
`ra search`, `ra get`, `ra context`, `ra likethis` and `ra mcp`.

Each takes the raw arguments after its name, so argparse sees a `--` that click would have
swallowed (`ra search -- --force` searches `--force`), and `early`, the stale count
ra_build.cli.entry started for the artifacts it guessed. `ra search` and `ra get` first try the
stamp (ra_build.refresh.stamp), which proves the index current without reading the configuration.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from ra_build.cli.console import load_config, warn

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from contextlib import ExitStack

    from ra_build.config.model import Config
    from ra_query.artifacts.store import Store
    from ra_query.commands import Output as CommandOutput
    from ra_query.commands import Served
    from ra_query.forked import Helper
    from ra_query.search.context import Analysis
    from ra_query.sources.stale import StaleCheck

ARTIFACTS_HELP = "artifact directory (default: $RA_ARTIFACTS, else .ra/ beside .ra.toml)"


def run_search(argv: list[str], early: StaleCheck | None = None) -> int:
    """`ra search ARGV`: refresh the index, search, print; returns the exit code.

    `main` calls this with the raw arguments after `search`, so argparse sees a `--` that click
    would have swallowed: in `ra search -- --force` the query `--force` reaches the query parser.
    """
    import argparse

    from ra_query.cli_common import (
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
    parser.add_argument("--artifacts", help=ARTIFACTS_HELP)
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
            whole=args.whole,
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
    if output is None:  # the stamp could not prove the index current: read the configuration
        from ra_build.config.fingerprint import search_defaults
        from ra_build.refresh.refreshed import refreshed_store

        config = load_config()
        store = refreshed_store(config, args.artifacts, early, notify=warn)
        output = answer(store, search_defaults(config))
    sys.stdout.write(output.text)
    return output.code


def run_get(argv: list[str], early: StaleCheck | None = None) -> int:
    """`ra get ID`: a chunk, or a whole document; the index is opened as `ra search` opens it."""
    import argparse

    from ra_query.cli_common import help_formatter
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
    parser.add_argument("--artifacts", help=ARTIFACTS_HELP)
    args = parser.parse_args(argv)
    from ra_build.refresh.stamp import stamped_store

    speculation = stamped_store(args.artifacts, early)
    if speculation is not None and speculation.current():
        store = speculation.store
    else:
        from ra_build.refresh.refreshed import refreshed_store

        store = refreshed_store(load_config(), args.artifacts, None if speculation else early, notify=warn)
    output = get_command(store, args.id, full_document=args.full_document, json=args.json)
    sys.stdout.write(output.text)
    return output.code


def run_context(argv: list[str], early: StaleCheck | None = None) -> int:
    """`ra context FILE...`: the documentation that fits the files (DECISIONS 24)."""
    import argparse

    from ra_build.cli.context_config import context_options, context_rules, input_files
    from ra_build.refresh.refreshed import refreshed_store
    from ra_query.cli_common import check_counts, help_formatter
    from ra_query.search.context import analyze_each

    parser = argparse.ArgumentParser(
        prog="ra context",
        description="Find the documentation that fits the files you are working on: terms from their "
        "paths, the configured context rules and their content (TF-IDF against the index) form a "
        "weighted query. Several files get a list each, sharing -n and --max-tokens. The index is "
        "refreshed first.",
        formatter_class=help_formatter(),
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="the files (e.g. $(git diff --name-only))")
    _add_context_options(parser)
    args = parser.parse_args(argv)
    check_counts(args)
    config = load_config()
    store = refreshed_store(config, args.artifacts, early, notify=warn)
    options = context_options(config, args.terms)
    analyses = analyze_each(
        store, input_files(config, args.files), rules=context_rules(config), options=options, trees=args.tree
    )
    return _print_context(store, config, analyses, args)


def run_likethis(argv: list[str], early: StaleCheck | None = None) -> int:
    """`ra likethis ID|FILE`: the chunks most like an indexed chunk, a document or a file."""
    import argparse

    from ra_build.cli.context_config import context_options
    from ra_build.refresh.refreshed import refreshed_store
    from ra_query.cli_common import check_counts, help_formatter
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
    store = refreshed_store(config, args.artifacts, early, notify=warn)
    analysis = like_this(store, args.source, options=context_options(config, args.terms), trees=args.tree)
    return _print_context(store, config, [analysis], args)


def run_mcp(argv: list[str], early: StaleCheck | None = None) -> int:
    """`ra mcp ARGV`: serve the index over MCP (stdio) until the client goes away.

    Read here, not by the typer app, so a server starts without loading typer. The tools are
    answered by a forked process (`_live_answers`: the configuration, the `LiveStore`, the
    background sync), which opens the index and loads the token encoding while this one
    imports the MCP SDK (ra_query.mcp); `main` starts no stale count for it (`early`).
    """
    import argparse

    from ra_query.cli_common import add_http_options, help_formatter, http_port
    from ra_query.forked import Helper

    if early is not None:
        early.cancel()
    parser = argparse.ArgumentParser(
        prog="ra mcp",
        description="Serve search, context, get and list_sources to an agent over MCP (stdio); a "
        "call after an edit sees it.",
        formatter_class=help_formatter(),
    )
    parser.add_argument("--artifacts", help=ARTIFACTS_HELP)
    parser.add_argument(
        "--allow-add-sources",
        action="store_true",
        help="add the add_source tool: an agent adds a page to an upstream tree's urls (the .ra.toml "
        "is backed up first, and each addition logged in .ra/upstream/added.log)",
    )
    add_http_options(parser)
    args = parser.parse_args(argv)
    port = http_port(args)

    def setup(stack: ExitStack) -> Served:
        return _live_answers(args.artifacts, args.allow_add_sources, stack)

    def answer(helper: Helper) -> None:
        from ra_query.commands import answer_requests

        answer_requests(setup, helper)

    helper = Helper(answer)  # before the SDK is imported, and before any thread runs
    from ra_query.mcp import serve

    extend: Callable[[Any], None] | None = None
    if args.allow_add_sources:
        from functools import partial

        from ra_build.cli.add_source import add_source_tool

        extend = partial(add_source_tool, notify=warn)
    return serve(helper, setup, port, extend)


def _live_answers(artifacts: str | None, allow_add_sources: bool, stack: ExitStack) -> Served:
    """`ra mcp`'s answers, in its answering process: the configuration read once (an edit of
    `.ra.toml` takes effect when the agent runtime restarts the server), the index refreshed
    before a call after a change (`LiveStore`, closed by `stack`), the due pages of upstream
    trees fetched in the background."""
    from contextlib import suppress

    from ra_build.cli.agents import code_languages
    from ra_build.cli.context_config import context_analyzer
    from ra_build.refresh.current import current_store
    from ra_build.refresh.refreshed import LiveStore
    from ra_query.commands import Answers, Served, search_once, wait_for
    from ra_query.errors import RaError

    config = load_config()
    upstream = sorted(name for name, tree in config.trees.items() if tree.upstream)
    live = stack.enter_context(LiveStore(config, artifacts, notify=warn))
    if upstream:  # due pages are fetched in the background, never during a call
        from ra_build.upstream.sync import BackgroundSync

        reload: Callable[[], Config] | None = None
        if allow_add_sources:  # add_source edits the urls while the server runs: read anew
            from functools import partial
            from pathlib import Path

            from ra_build.cli.console import home
            from ra_build.config.load import load_config as read_config

            # its warnings were printed once, at start-up
            reload = partial(read_config, Path.cwd(), home(), require_paths=False)
        stack.enter_context(BackgroundSync(config, warn, reload))

    def warm(waiting: Callable[[], bool]) -> None:
        try:
            store = current_store(config, live.target)
        except RaError:
            return  # the first call says what is wrong
        if store is None:
            return  # not current: the build waits for a call
        search_once(store)  # first: the watcher may take a few tenths of a second to start
        wait_for(live.watch, waiting)
        with suppress(RaError):
            live()  # opened now with the watcher's state, so the first call finds it open

    hello = {
        "trees": sorted(config.trees),
        "upstream": upstream,
        "code": code_languages(config, live.target),  # the index as it is: a build waits for a call
    }
    answers = Answers(live, stale=lambda _store: 0, context=context_analyzer(config))
    return Served(hello, answers, warm)


def _print_context(
    store: Store, config: Config, analyses: Sequence[Analysis], args: argparse.Namespace
) -> int:
    """Print what `ra context` / `ra likethis` found for `analyses` (one per input); returns the
    exit code."""
    from ra_build.config.fingerprint import search_defaults
    from ra_query.cli_common import context_output

    for warning in (w for analysis in analyses for w in analysis.warnings):
        warn(warning)
    output = context_output(
        store,
        analyses,
        args,
        search_defaults(config),
        default_limit=config.context.limit,
        env=dict(os.environ),
    )
    sys.stdout.write(output.text)
    return output.code


def _add_context_options(parser: argparse.ArgumentParser) -> None:
    """The options `ra context` and `ra likethis` share."""
    from ra_query.cli_common import add_context_options

    add_context_options(parser, defaults="[context] limit (10), [context] terms (15)")
    parser.add_argument("--artifacts", help=ARTIFACTS_HELP)

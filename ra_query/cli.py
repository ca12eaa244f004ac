"""`ra-query`: read-only searches over prebuilt artifacts. It never writes anything.

Deliberately argparse, not typer: an agent sandbox starts this process for every search, and
cold start is a measured floor (bench/query.py: no slower than `rg`). So this module imports
only `os`, `sys` and the options `ra` shares (ra_query.cli_common) up front; `main` forks the
model's process of a hybrid search (ra_query.semantic.nearby) and the stale-source count
(ra_query.sources.stale) before anything else is imported, and the rest is imported when a
command needs it. Exit codes are ra's (README "Exit codes").
"""

from __future__ import annotations

import os
import sys

from ra_query.artifacts.paths import find_artifacts
from ra_query.cli_common import (
    EVAL_DESCRIPTION,
    SEARCH_DESCRIPTION,
    add_context_options,
    add_eval_options,
    add_http_options,
    add_search_options,
    artifacts_option,
    check_arguments,
    check_counts,
    context_output,
    eval_output,
    guarded,
    help_formatter,
    http_port,
    leave,
    search_params,
    use_colour,
    view_of,
)
from ra_query.version import __version__

TYPE_CHECKING = False  # typing is not imported at run time: see the module docstring
if TYPE_CHECKING:
    import argparse
    from contextlib import ExitStack
    from typing import Any

    from ra_query.commands import Served
    from ra_query.forked import Helper
    from ra_query.sources.stale import StaleCheck

PROG = "ra-query"


def build_parser() -> argparse.ArgumentParser:
    """The `ra-query` argument parser (public: the benchmarks parse a search exactly as the CLI does)."""
    import argparse

    Formatter = help_formatter()
    parser = argparse.ArgumentParser(
        prog=PROG, description="Search prebuilt ra artifacts, read-only.", formatter_class=Formatter
    )
    parser.add_argument(
        "--artifacts",
        help="artifact directory, packed artifact (ra pack) or its http(s)/file URL (default: "
        "$RA_ARTIFACTS, else the nearest .ra/ above the cwd)",
    )
    parser.add_argument(
        "--sha256", help="the digest a packed artifact (file or URL) must have (its .sha256 file)"
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    add_search_options(
        sub.add_parser(
            "search",
            help="search and print matching chunks",
            description=SEARCH_DESCRIPTION,
            formatter_class=Formatter,
        )
    )
    get = sub.add_parser("get", help="print a chunk, or a whole document, by id", formatter_class=Formatter)
    get.add_argument("id", help="tree:path (a document) or tree:path#slug (a chunk)")
    get.add_argument("--full-document", action="store_true", help="the whole document of a chunk id")
    get.add_argument("--json", action="store_true", help="print JSON")
    context = sub.add_parser(
        "context",
        help="find the documentation that fits the files you are working on",
        description="Terms from the files' paths and content (TF-IDF against the index) form a "
        "weighted query; the input files themselves are left out. Several files get a list each, "
        "sharing -n and --max-tokens. No context rules: they live in .ra.toml, which ra-query does "
        "not read.",
        formatter_class=Formatter,
    )
    context.add_argument("files", nargs="+", metavar="FILE")
    add_context_options(context, defaults="10, 15")
    ls = sub.add_parser(
        "ls", help="list the trees, documents or chunks of the index", formatter_class=Formatter
    )
    ls.add_argument("what", choices=("trees", "docs", "chunks"))
    ls.add_argument("prefix", nargs="?", default="", help="only names or ids that start with it")
    ls.add_argument("-l", "--long", action="store_true", help="counts, titles, line ranges, tokens")
    status = sub.add_parser(
        "status", help="the artifacts, the build, each tree's counts and staleness", formatter_class=Formatter
    )
    status.add_argument("--json", action="store_true", help="print JSON")
    add_eval_options(
        sub.add_parser(
            "eval",
            help="score the index on a file of questions (hit@5, MRR, nDCG@10, tokens), misses explained",
            description=EVAL_DESCRIPTION,
            formatter_class=Formatter,
        )
    )
    mcp = sub.add_parser(
        "mcp",
        help="serve search, context, get and list_sources to an agent over MCP (stdio), read-only",
        formatter_class=Formatter,
    )
    add_http_options(mcp)
    return parser


def _early_root(argv: list[str], env: dict[str, str], cwd: str) -> str | None:
    """The artifacts a `search` will read, from a glance at argv before argparse is even imported.

    Only the plain spellings are recognised (`[--artifacts DIR | --artifacts=DIR] search ...`);
    `run` compares this guess with what argparse decides and discards a wrong guess.
    """
    head = 2 if argv[:1] == ["--artifacts"] else 1 if argv[:1] and argv[0].startswith("--artifacts=") else 0
    if argv[head : head + 1] != ["search"]:
        return None
    return find_artifacts(artifacts_option(argv[:head]), env, cwd)


def run(argv: list[str], env: dict[str, str], cwd: str, early: StaleCheck | None = None) -> int:
    """Run ra-query with `argv`; return the exit code.

    `early` is a stale check already forked for the artifacts `_early_root` guessed; it is used
    when the guess was right. Whatever happens, no check is left running when this returns.
    """
    checks = [early] if early is not None else []
    try:
        return _run(argv, env, cwd, early, checks)
    finally:
        for check in checks:
            check.cancel()  # nothing to do for one whose result was taken


def _run(
    argv: list[str], env: dict[str, str], cwd: str, early: StaleCheck | None, checks: list[StaleCheck]
) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if args.command == "ls" and len(extra) == 1 and not args.prefix and not extra[0].startswith("-"):
        args.prefix = extra[0]  # `ls chunks -l PREFIX`: argparse took the empty prefix before -l
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    root = find_artifacts(args.artifacts, env, cwd)
    from ra_query.artifacts.packed import is_packed

    if args.sha256 is not None and not is_packed(root):
        from ra_query.errors import InputError

        raise InputError("--sha256 pins a packed artifact (a .tar.gz or URL) — drop it for a directory")
    if is_packed(root):
        from ra_query.artifacts.packed import unpacked

        root = unpacked(root, args.sha256, env)  # a release artifact: unpacked once into the cache
    stale: StaleCheck | None = None
    if args.command == "search":
        if early is not None and early.root == root:
            stale = early
        else:
            from ra_query.sources.stale import StaleCheck

            if early is not None:
                early.cancel()  # a wrong guess: stop it before forking the right one
            stale = StaleCheck(root)
            checks.append(stale)
    elif early is not None:
        early.cancel()
    if args.command == "mcp":
        return _serve_mcp(root, http_port(args))
    from ra_query.artifacts.store import open_store
    from ra_query.commands import get_command, search_command

    store = open_store(root)
    if args.command == "eval":
        output = eval_output(store, args)
    elif args.command in ("context", "ls", "status"):
        output = _read_only_command(store, args, env)
    elif stale is None:
        output = get_command(store, args.id, full_document=args.full_document, json=args.json)
    else:
        view, as_json = view_of(args)
        output = search_command(
            store,
            list(args.queries),
            search_params(args, store.search_defaults()),
            view=view,
            json=as_json,
            max_tokens=args.max_tokens,
            explain=args.explain,
            colour=use_colour(sys.stdout, env),
            stale=stale.result,  # asked for after the search: the walk overlaps it
            whole=args.whole,
        )
    sys.stdout.write(output.text)
    return output.code


def _serve_mcp(root: str, port: int | None) -> int:
    """`ra-query mcp`: the artifacts at `root` served read-only, never built.

    The tools are answered by a forked process (ra_query.commands.readonly_answers), which opens
    the artifacts, counts the stale files and loads the token encoding while this one imports
    the MCP SDK (ra_query.mcp): the first call is answered when the SDK is ready.
    """
    from ra_query.forked import Helper

    def setup(stack: ExitStack) -> Served:
        from ra_query.commands import readonly_answers

        return readonly_answers(root, stack)

    def answer(helper: Helper) -> None:
        from ra_query.commands import answer_requests

        answer_requests(setup, helper)

    helper = Helper(answer)  # before the SDK is imported, and before any thread runs
    from ra_query.mcp import serve

    return serve(helper, setup, port)


def _read_only_command(store: Any, args: argparse.Namespace, env: dict[str, str]) -> Any:
    """`context`, `ls` or `status` over the opened artifacts."""
    from ra_query.commands import ls_command, status_command

    if args.command == "ls":
        return ls_command(store, args.what, args.prefix, long=args.long)
    if args.command == "status":
        from ra_query.sources.stale import stale_files

        return status_command(store, stale_files(store.root, store.manifest), json=args.json)
    from ra_query.search.context import ContextOptions, analyze_each, given_file

    check_counts(args)
    files = [given_file(f) for f in args.files]
    analyses = analyze_each(store, files, options=ContextOptions(terms=args.terms or 15), trees=args.tree)
    for warning in (w for analysis in analyses for w in analysis.warnings):
        sys.stderr.write(f"{PROG}: warning: {warning}\n")
    return context_output(store, analyses, args, store.search_defaults(), default_limit=10, env=env)


def main() -> None:
    """Console entry point."""
    argv, env, cwd = sys.argv[1:], dict(os.environ), os.getcwd()

    def start() -> int:
        check_arguments(argv)
        early = None
        root = _early_root(argv, env, cwd)
        nearby = None
        if root is not None:
            from ra_query.semantic.nearby import start as start_nearby
            from ra_query.sources.stale import StaleCheck

            nearby = start_nearby(argv, root)  # first thing: loading the model is the longest path

            early = StaleCheck(root)  # the walk then overlaps everything below
        try:
            return run(argv, env, cwd, early)
        finally:
            if nearby is not None:
                nearby.stop()

    leave(guarded(start, PROG))

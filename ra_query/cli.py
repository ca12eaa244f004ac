"""`ra-query`: read-only searches over prebuilt artifacts. It never writes anything.

Deliberately argparse, not typer: an agent sandbox starts this process for every search, and
cold start is a measured floor (bench/query.py: no slower than `rg`). So this module imports
only `os` and `sys` up front; `main` forks the stale-source count (ra_query.sources.stale) before
anything else is imported, and the rest is imported when a command needs it. Exit codes are
ra's (README "Exit codes").
"""

from __future__ import annotations

import os
import sys

from ra_query import __version__
from ra_query.artifacts.paths import find_artifacts
from ra_query.errors import RaError

TYPE_CHECKING = False  # typing is not imported at run time: see the module docstring
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from ra_query.search.render import View
    from ra_query.sources.stale import StaleCheck

PROG = "ra-query"
SEARCH_DESCRIPTION = (
    "Search the knowledge base. Plain words are ranked, not required: chunks with more of them"
    ' (and rarer ones) come first, so a sentence or a pasted error message works. "a phrase" and'
    " field:word (title, tags, body, path, tree) are required, -word excludes, a OR b (upper-case)"
    " joins alternatives, word^2 weighs. Stop words never decide what matches, and a broken query"
    " is repaired with a note (--strict: every word required, syntax errors are errors)."
    " See docs/searching.md."
)


def add_search_options(parser: argparse.ArgumentParser) -> None:
    """The search flags shared by `ra-query search` (and mirrored by `ra search`)."""
    parser.add_argument(
        "queries", nargs="+", metavar="QUERY", help="one or more topics, each searched on its own"
    )
    parser.add_argument(
        "-n", "--limit", type=int, help="results per topic (default: the build's default_limit)"
    )
    parser.add_argument("--max-tokens", type=int, help="one cl100k token budget across all results")
    view = parser.add_mutually_exclusive_group()
    view.add_argument("--list", action="store_true", help="ids, breadcrumbs and ~150-character snippets")
    view.add_argument("--matches", action="store_true", help="only the lines that match")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("-o", "--output", choices=("full", "list", "matches", "json"), help="output mode")
    parser.add_argument("-t", "--tree", action="append", default=[], help="only this tree (repeatable)")
    parser.add_argument("--explain", action="store_true", help="show the parsed query, parameters and counts")
    parser.add_argument("--candidate-limit", type=int, help="candidates fetched before aggregation")
    parser.add_argument(
        "--cutoff-ratio", type=float, help="elbow: cut where score[i+1]/score[i] falls below this"
    )
    parser.add_argument(
        "--aggregation-threshold", type=float, help="share of matching siblings that merges them"
    )
    parser.add_argument("--no-aggregation", action="store_true", help="never merge siblings into parents")
    syntax = parser.add_mutually_exclusive_group()
    syntax.add_argument(
        "--strict",
        action="store_true",
        help="every word must match, and a query syntax error is an error (exit 1)",
    )
    syntax.add_argument(
        "--lenient",
        action="store_true",
        help="repair a query syntax error and say how the query was read (the default)",
    )
    syntax.add_argument("--raw", action="store_true", help="pass the query to tantivy's own parser")


def _columns() -> int:
    """The terminal width as shutil.get_terminal_size() reports it: $COLUMNS, the tty, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
        if columns > 0:  # as shutil: 0 or less means "not set"
            return columns
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return 80


def help_formatter() -> type[argparse.HelpFormatter]:
    """argparse's formatter, sized without `import shutil` (~2 ms of every cold start)."""
    import argparse

    class Formatter(argparse.HelpFormatter):
        def __init__(
            self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None
        ) -> None:
            super().__init__(prog, indent_increment, max_help_position, width or _columns() - 2)

    return Formatter


def _parser() -> argparse.ArgumentParser:
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
        "weighted query; the input files themselves are left out. No context rules: they live in "
        ".ra.toml, which ra-query does not read.",
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
    mcp = sub.add_parser(
        "mcp",
        help="serve search, context, get and list_sources to an agent over MCP (stdio), read-only",
        formatter_class=Formatter,
    )
    add_http_options(mcp)
    return parser


def add_context_options(parser: argparse.ArgumentParser, defaults: str) -> None:
    """The options of `context` and `likethis`; `defaults` names where -n and --terms come from."""
    limit, terms = defaults.split(", ")
    parser.add_argument("-n", "--limit", type=int, help=f"results (default: {limit})")
    parser.add_argument("--terms", type=int, help=f"terms in the query (default: {terms})")
    parser.add_argument("-t", "--tree", action="append", default=[], help="only this tree (repeatable)")
    parser.add_argument("--max-tokens", type=int, help="one cl100k token budget across all results")
    parser.add_argument("--list", action="store_true", help="ids, breadcrumbs and ~150-character snippets")
    parser.add_argument("--json", action="store_true", help="print JSON (with the terms and query)")
    parser.add_argument("--explain", action="store_true", help="show each term, the query and the counts")


def add_http_options(parser: argparse.ArgumentParser) -> None:
    """`--http [--port N]`: serve MCP over streamable HTTP on 127.0.0.1 instead of stdio."""
    parser.add_argument(
        "--http",
        action="store_true",
        help="serve over streamable HTTP at http://127.0.0.1:PORT/mcp, not stdio",
    )
    parser.add_argument("--port", type=int, default=None, help="the HTTP port (default 8765)")


def http_port(args: argparse.Namespace) -> int | None:
    """The port to serve MCP on over HTTP, or None for stdio.

    Raises:
        InputError: a port out of range, or --port without --http.
    """
    from ra_query.errors import InputError

    if args.port is not None and not args.http:
        raise InputError("--port is for --http — add --http to serve over HTTP")
    if not args.http:
        return None
    port = 8765 if args.port is None else args.port
    if not 1 <= port <= 65535:
        raise InputError(f"--port must be between 1 and 65535 (got {port})")
    return port


def _early_root(argv: list[str], env: dict[str, str], cwd: str) -> str | None:
    """The artifacts a `search` will read, from a glance at argv before argparse is even imported.

    Only the plain spellings are recognised (`[--artifacts DIR | --artifacts=DIR] search ...`);
    `run` compares this guess with what argparse decides and discards a wrong guess.
    """
    explicit: str | None = None
    rest = argv
    if rest[:1] == ["--artifacts"] and len(rest) > 1:
        explicit, rest = rest[1], rest[2:]
    elif rest[:1] and rest[0].startswith("--artifacts="):
        explicit, rest = rest[0].partition("=")[2], rest[1:]
    if rest[:1] != ["search"]:
        return None
    return find_artifacts(explicit, env, cwd)


def search_params(args: argparse.Namespace, defaults: dict[str, Any]) -> Any:
    """SearchParams from the build's recorded settings, overridden by the flags given."""
    from ra_query.errors import InputError
    from ra_query.search.pipeline import SearchParams

    base = SearchParams.from_settings(defaults)
    overrides: dict[str, Any] = {}
    for flag, name in (
        ("limit", "limit"),
        ("candidate_limit", "candidate_limit"),
        ("cutoff_ratio", "cutoff_ratio"),
        ("aggregation_threshold", "aggregation_threshold"),
    ):
        value = getattr(args, flag)
        if value is not None:
            overrides[name] = value
    from ra_query.search.pipeline import MAX_CANDIDATE_LIMIT, MAX_LIMIT

    for name, most in (("limit", MAX_LIMIT), ("candidate_limit", MAX_CANDIDATE_LIMIT)):
        if not 1 <= overrides.get(name, 1) <= most:
            raise InputError(f"--{name.replace('_', '-')} must be between 1 and {most}")
    for name in ("cutoff_ratio", "aggregation_threshold"):
        if not 0 <= overrides.get(name, 0) <= 1:
            raise InputError(f"--{name.replace('_', '-')} must be between 0 and 1")
    return base._replace(
        **overrides,
        aggregation=base.aggregation and not args.no_aggregation,
        trees=tuple(args.tree),
        strict=args.strict,
        raw=args.raw,
    )


def view_of(args: argparse.Namespace) -> tuple[View, bool]:
    """(view, json) from --list/--matches/--json/-o."""
    output: str | None = args.output
    view: View = "full"
    if args.list or output == "list":
        view = "list"
    elif args.matches or output == "matches":
        view = "matches"
    return view, bool(args.json or output == "json")


def use_colour(stream: Any, env: dict[str, str]) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (to anything)."""
    return "NO_COLOR" not in env and bool(getattr(stream, "isatty", lambda: False)())


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
    parser = _parser()
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
        from pathlib import Path

        from ra_query.mcp import serve_readonly

        return serve_readonly(Path(root), http_port(args))
    from ra_query.artifacts.store import open_store
    from ra_query.commands import get_command, search_command

    store = open_store(root)
    if args.command in ("context", "ls", "status"):
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
        )
    sys.stdout.write(output.text)
    return output.code


def _read_only_command(store: Any, args: argparse.Namespace, env: dict[str, str]) -> Any:
    """`context`, `ls` or `status` over the opened artifacts."""
    from ra_query.commands import ls_command, status_command

    if args.command == "ls":
        return ls_command(store, args.what, args.prefix, long=args.long)
    if args.command == "status":
        from ra_query.sources.stale import stale_files

        return status_command(store, stale_files(store.root, store.manifest), json=args.json)
    from ra_query.search.context import ContextOptions, analyze, given_file

    check_counts(args)
    files = [given_file(f) for f in args.files]
    analysis = analyze(store, files, options=ContextOptions(terms=args.terms or 15), trees=args.tree)
    for warning in analysis.warnings:
        sys.stderr.write(f"{PROG}: warning: {warning}\n")
    return context_output(store, analysis, args, store.search_defaults(), default_limit=10, env=env)


def check_counts(args: argparse.Namespace) -> None:
    """`-n` and `--terms` of `context` / `likethis`, each from 1 to 1000.

    Raises:
        InputError: naming the option and the value.
    """
    from ra_query.errors import InputError

    for flag, value in (("--limit", args.limit), ("--terms", args.terms)):
        if value is not None and not 1 <= value <= 1000:
            raise InputError(f"{flag} must be between 1 and 1000 (got {value})")


def context_output(
    store: Any,
    analysis: Any,
    args: argparse.Namespace,
    defaults: dict[str, Any],
    *,
    default_limit: int,
    env: dict[str, str],
) -> Any:
    """What `context` / `likethis` print for `analysis`, with `defaults` as the search settings."""
    from ra_query.commands import context_command

    # the search options `search_params` and `view_of` read, which these commands do not offer
    args.matches, args.output, args.strict, args.raw = False, None, False, False
    args.candidate_limit = args.cutoff_ratio = args.aggregation_threshold = None
    args.no_aggregation = False
    args.limit = args.limit or default_limit
    view, as_json = view_of(args)
    return context_command(
        store,
        analysis,
        search_params(args, defaults),
        view=view,
        json=as_json,
        max_tokens=args.max_tokens,
        explain=args.explain,
        colour=use_colour(sys.stdout, env),
    )


def check_arguments(argv: list[str]) -> None:
    """Refuse an argument that is not text: bytes the locale could not decode (`caf\\xe9`).

    Raises:
        InputError: naming the argument, with its bad bytes escaped.
    """
    for number, arg in enumerate(argv, start=1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            from ra_query.errors import InputError

            shown = arg.encode("utf-8", "surrogateescape").decode("ascii", "backslashreplace")
            raise InputError(f"argument {number} ({shown}) is not valid UTF-8 — pass text in UTF-8") from None


def main() -> None:
    """Console entry point."""
    argv, env, cwd = sys.argv[1:], dict(os.environ), os.getcwd()
    try:
        check_arguments(argv)
        early = None
        root = _early_root(argv, env, cwd)
        if root is not None:
            from ra_query.sources.stale import StaleCheck

            early = StaleCheck(root)  # first thing: the walk then overlaps everything below
        code = run(argv, env, cwd, early)
    except RaError as exc:
        sys.stderr.write(exc.report(PROG))
        code = exc.exit_code
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:  # the reader went away (`ra-query … | head`): it has what it wanted
        code = 0
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        if isinstance(exc.code, str):
            sys.stderr.write(exc.code + "\n")
        code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    _exit(code)


def _exit(code: int) -> None:
    """Leave now: flush the output, run the exit handlers, skip the interpreter's teardown.

    Tearing down the modules and the opened index is ~4 ms of a cold search that nobody
    waits for (bench/query.py).
    """
    import atexit
    import contextlib

    atexit._run_exitfuncs()  # pyright: ignore[reportPrivateUsage]  # e.g. store.py's temp-dir cleanup
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BrokenPipeError):  # as above
            stream.flush()
    os._exit(code)

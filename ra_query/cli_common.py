"""What `ra` and `ra-query` share on the command line: the search and context options, their
checks, the `--artifacts` read early from argv, and how an error becomes an exit code.

argparse, not typer: an agent sandbox starts `ra-query` for every search, and cold start is a
measured floor (bench/query.py), so this module imports only `os` and `sys` up front (argparse
when a parser is built). Exit codes are ra's (README "Exit codes").
"""

from __future__ import annotations

import os
import sys

from ra_query.errors import RaError

TYPE_CHECKING = False  # typing is not imported at run time: see the module docstring
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any, NoReturn

    from ra_query.search.render import View

DEFAULT_HTTP_PORT = 8765  # `--http` without `--port`
# the source kinds `--kind` takes (ra_query.sources.languages.KINDS; not imported: cold start)
KINDS = ("docs", "code", "upstream")


SEARCH_DESCRIPTION = (
    "Search the knowledge base. Plain words are ranked, not required: chunks with more of them"
    ' (and rarer ones) come first, so a sentence or a pasted error message works. "a phrase" and'
    " field:word (title, tags, body, path, tree) are required, -word excludes (a flag such as -j or"
    " -xvf, or a -word in a sentence, is a word), a OR b (upper-case)"
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
    parser.add_argument(
        "--whole",
        action="store_true",
        help="print every result whole (a long prose result is otherwise an excerpt: its lead and "
        "the blocks with the query's words; a code file's long outline, its matching lines; ⋯ for "
        "what is left out)",
    )
    parser.add_argument("-o", "--output", choices=("full", "list", "matches", "json"), help="output mode")
    parser.add_argument("-t", "--tree", action="append", default=[], help="only this tree (repeatable)")
    parser.add_argument(
        "--kind", action="append", default=[], choices=KINDS, help="only chunks of this kind (repeatable)"
    )
    parser.add_argument(
        "--lang",
        action="append",
        default=[],
        metavar="CODE",
        help="only docs in this natural language (ja, de, pt-br; repeatable), shown in its translation",
    )
    parser.add_argument("--explain", action="store_true", help="show the parsed query, parameters and counts")
    parser.add_argument(
        "--candidate-limit",
        type=int,
        help="candidates fetched before aggregation (hybrid: the best half of them fused, at least -n)",
    )
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
    meaning = parser.add_mutually_exclusive_group()
    meaning.add_argument(
        "--lexical", action="store_true", help="match by words alone (BM25), even where the index has vectors"
    )
    meaning.add_argument(
        "--semantic-weight",
        type=float,
        metavar="W",
        help="the share of meaning (vectors) in a hybrid ranking, 0-1 (default: the build's, 0.55)",
    )


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


def add_context_options(parser: argparse.ArgumentParser, defaults: str) -> None:
    """The options of `context` and `likethis`; `defaults` names where -n and --terms come from."""
    limit, terms = defaults.split(", ")
    parser.add_argument("-n", "--limit", type=int, help=f"results (default: {limit})")
    parser.add_argument("--terms", type=int, help=f"terms in the query (default: {terms})")
    parser.add_argument("-t", "--tree", action="append", default=[], help="only this tree (repeatable)")
    parser.add_argument(
        "--kind", action="append", default=[], choices=KINDS, help="only chunks of this kind (repeatable)"
    )
    parser.add_argument("--max-tokens", type=int, help="one cl100k token budget across all results")
    parser.add_argument("--list", action="store_true", help="ids, breadcrumbs and ~150-character snippets")
    parser.add_argument("--json", action="store_true", help="print JSON (with the terms and query)")
    parser.add_argument("--explain", action="store_true", help="show each term, the query and the counts")


EVAL_DESCRIPTION = (
    "Run each question of a JSONL file (docs/eval.md) as an agent's search of this index and score "
    "it: hit@1, hit@5, file@5, MRR, nDCG@10, the tokens an answer costs, empty and failed answers; "
    "then each miss, with what came first and where its answer ranked. Exit 1 when a --min floor is "
    "not met."
)


def add_eval_options(parser: argparse.ArgumentParser) -> None:
    """The arguments of `eval` (both CLIs)."""
    parser.add_argument(
        "questions", metavar="QUESTIONS", nargs="?", help="a JSONL file of questions and their answers"
    )
    parser.add_argument(
        "--titles",
        action="store_true",
        help="instead: ask every chunk for its own title and list those that do not come first",
    )
    parser.add_argument(
        "--mode", choices=("auto", "lexical", "hybrid"), default="auto", help="how to search (default: auto)"
    )
    parser.add_argument("-n", "--limit", type=int, help="results per question (default: the index's)")
    parser.add_argument("--max-tokens", type=int, help="a cl100k token budget per answer")
    parser.add_argument(
        "--min",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a floor: hit1, hit5, file5, mrr or ndcg10 (repeatable; e.g. hit5=0.8); exit 1 below it",
    )
    parser.add_argument(
        "--baseline", metavar="FILE", help="a saved --json run: list the questions that got worse"
    )
    parser.add_argument(
        "--qrels",
        metavar="FILE",
        help="TREC or BEIR relevance judgements; QUESTIONS is then their topics (queries.jsonl, ID<TAB>TEXT)",
    )
    parser.add_argument(
        "--ranking",
        action="store_true",
        help="score the ranking as trec_eval does: the top 100 documents, no cutoff, no merging",
    )
    parser.add_argument("--json", action="store_true", help="print JSON (save it as a --baseline)")


def eval_output(store: Any, args: argparse.Namespace) -> Any:
    """What `eval` prints for `args` over `store`, with the index's search settings."""
    from ra_query.commands import eval_command, search_params
    from ra_query.errors import InputError
    from ra_query.search.evaluate import RANKING_DEPTH
    from ra_query.search.pipeline import MAX_LIMIT

    params = search_params(store, None, args.mode)  # the MCP tools' --mode, the same settings
    if args.limit is not None:
        if not 1 <= args.limit <= MAX_LIMIT:
            raise InputError(f"--limit must be between 1 and {MAX_LIMIT}")
        params = params._replace(limit=args.limit)
    if args.titles == bool(args.questions):
        raise InputError(
            "give a questions file or --titles (one of them) — ra eval q.jsonl, ra eval --titles"
        )
    if args.ranking:
        params = params._replace(
            limit=RANKING_DEPTH, candidate_limit=RANKING_DEPTH, cutoff_ratio=0.0, aggregation=False
        )
    if args.qrels and args.titles:
        raise InputError("--qrels judges the topics of a file, --titles asks titles — give one of them")
    return eval_command(
        store,
        args.questions,
        params,
        titles=args.titles,
        max_tokens=args.max_tokens,
        floors=args.min,
        baseline=args.baseline,
        qrels=args.qrels,
        ranking=args.ranking,
        json=args.json,
    )


def add_http_options(parser: argparse.ArgumentParser) -> None:
    """`--http [--port N]`: serve MCP over streamable HTTP on 127.0.0.1 instead of stdio."""
    parser.add_argument(
        "--http",
        action="store_true",
        help="serve over streamable HTTP at http://127.0.0.1:PORT/mcp, not stdio",
    )
    parser.add_argument("--port", type=int, default=None, help=f"the HTTP port (default {DEFAULT_HTTP_PORT})")


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
    port = DEFAULT_HTTP_PORT if args.port is None else args.port
    if not 1 <= port <= 65535:
        raise InputError(f"--port must be between 1 and 65535 (got {port})")
    return port


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
    if args.lexical:
        overrides["semantic_weight"] = 0.0
    elif args.semantic_weight is not None:
        overrides["semantic_weight"], overrides["semantic_asked"] = args.semantic_weight, True
    for name in ("cutoff_ratio", "aggregation_threshold", "semantic_weight"):
        if not 0 <= overrides.get(name, 0) <= 1:
            raise InputError(f"--{name.replace('_', '-')} must be between 0 and 1")
    return base._replace(
        **overrides,
        aggregation=base.aggregation and not args.no_aggregation,
        trees=tuple(args.tree),
        kinds=tuple(dict.fromkeys(args.kind)),
        langs=natural_languages(getattr(args, "lang", None) or []),
        strict=args.strict,
        raw=args.raw,
    )


def natural_languages(given: list[str]) -> tuple[str, ...]:
    """`--lang` values as locales (`pt_BR` → `pt-br`).

    Raises:
        InputError: a value that is not a language code.
    """
    from ra_query.errors import InputError
    from ra_query.text.locales import normalized

    out: list[str] = []
    for value in given:
        locale = normalized(value)
        if locale is None:
            raise InputError(
                f"--lang {value}: not a language code — use an ISO code such as en, ja, de or pt-br"
            )
        out.append(locale)
    return tuple(dict.fromkeys(out))


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
    analyses: Any,
    args: argparse.Namespace,
    defaults: dict[str, Any],
    *,
    default_limit: int,
    env: dict[str, str],
) -> Any:
    """What `context` / `likethis` print for `analyses` (one per input), with `defaults` as the
    search settings."""
    from ra_query.commands import context_command

    # the search options `search_params` and `view_of` read, which these commands do not offer
    args.matches, args.output, args.strict, args.raw = False, None, False, False
    args.candidate_limit = args.cutoff_ratio = args.aggregation_threshold = None
    args.no_aggregation = False
    args.lexical, args.semantic_weight = False, None
    args.kind = getattr(args, "kind", None) or []
    args.limit = args.limit or default_limit
    view, as_json = view_of(args)
    return context_command(
        store,
        analyses,
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


def artifacts_option(argv: list[str]) -> str | None:
    """The value of the last `--artifacts DIR` / `--artifacts=DIR` in `argv` before `--` (as
    argparse reads a repeated option).

    A glance at argv before argparse is even imported: the CLIs start counting stale files
    for the artifacts a search will most likely read, and drop the count when argparse decides
    otherwise.
    """
    found = None
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg == "--artifacts" and i + 1 < len(argv):
            found = argv[i + 1]
        elif arg.startswith("--artifacts="):
            found = arg.partition("=")[2]
    return found


def guarded(run: Callable[[], int], prog: str) -> int:
    """Run `run`; return its exit code, or the documented one for what it raised (README).

    An `RaError` is its one-line message and exit code; an interrupt is 130; argparse's exit
    (`--help` 0, a usage error 2) keeps its code; a reader that went away (`… | head`) is 0;
    anything else is a bug of ours: one line and 70 (`RA_DEBUG=1` re-raises it, traceback
    and all).
    """
    try:
        return run()
    except RaError as exc:
        sys.stderr.write(exc.report(prog))
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2), already printed
        if isinstance(exc.code, str):
            sys.stderr.write(exc.code + "\n")
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    except BrokenPipeError:  # the reader went away: it has what it wanted
        quiet_stdout()
        return 0
    except Exception as exc:  # the outermost layer: a bug of ours, still not a traceback
        if os.environ.get("RA_DEBUG"):
            raise
        print(
            f"{prog}: internal error: {type(exc).__name__}: {exc} — please report it; "
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


def leave(code: int) -> NoReturn:
    """Leave now with `code`: run the exit handlers, flush the output, skip the interpreter's
    teardown.

    Tearing down the modules and the opened index is ~4 ms of a cold search that nobody waits
    for (bench/query.py). Only once nothing else runs: threads still running are not waited for.
    """
    import atexit
    import contextlib

    atexit._run_exitfuncs()  # pyright: ignore[reportPrivateUsage]  # e.g. store.py's temp-dir cleanup
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BrokenPipeError):  # the reader went away: it has what it wanted
            stream.flush()
    os._exit(code)

"""`ra-query`: read-only searches over prebuilt artifacts. It never writes anything.

Deliberately argparse, not typer: an agent sandbox starts this process for every search, so it
imports only what a search needs. Exit codes are ra's (README "Exit codes").
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ra_query.errors import RaError

if TYPE_CHECKING:
    from ra_query.render import View

PROG = "ra-query"


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
    syntax.add_argument("--strict", action="store_true", help="no OR fallback when all words match nothing")
    syntax.add_argument(
        "--lenient", action="store_true", help="on a syntax error search the words as keywords"
    )
    syntax.add_argument("--raw", action="store_true", help="pass the query to tantivy's own parser")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Search prebuilt ra artifacts, read-only.")
    parser.add_argument(
        "--artifacts", help="artifact directory (default: $RA_ARTIFACTS, else the nearest .ra/ above the cwd)"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    add_search_options(sub.add_parser("search", help="search and print matching chunks"))
    get = sub.add_parser("get", help="print a chunk, or a whole document, by id")
    get.add_argument("id", help="tree:path (a document) or tree:path#slug (a chunk)")
    get.add_argument("--full-document", action="store_true", help="the whole document of a chunk id")
    get.add_argument("--json", action="store_true", help="print JSON")
    return parser


def find_artifacts(explicit: str | None, env: dict[str, str], cwd: Path) -> Path:
    """--artifacts, else $RA_ARTIFACTS, else the nearest `.ra/` holding a manifest, else ./.ra."""
    if explicit:
        return Path(explicit)
    if env.get("RA_ARTIFACTS"):
        return Path(env["RA_ARTIFACTS"])
    for directory in (cwd, *cwd.parents):
        if (directory / ".ra" / "manifest.json").is_file():
            return directory / ".ra"
    return cwd / ".ra"


def search_params(args: argparse.Namespace, defaults: dict[str, Any]) -> Any:
    """SearchParams from the build's recorded settings, overridden by the flags given."""
    from ra_query.errors import InputError
    from ra_query.search import SearchParams

    if "global_trees" in defaults:  # JSON gives a list
        defaults = {**defaults, "global_trees": frozenset(defaults["global_trees"])}
    base = SearchParams(**defaults)
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
    if overrides.get("limit", 1) < 1 or overrides.get("candidate_limit", 1) < 1:
        raise InputError("--limit and --candidate-limit must be at least 1")
    for name in ("cutoff_ratio", "aggregation_threshold"):
        if not 0 <= overrides.get(name, 0) <= 1:
            raise InputError(f"--{name.replace('_', '-')} must be between 0 and 1")
    from dataclasses import replace

    return replace(
        base,
        **overrides,
        aggregation=base.aggregation and not args.no_aggregation,
        trees=tuple(args.tree),
        strict=args.strict,
        lenient=args.lenient,
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


def run(argv: list[str], env: dict[str, str], cwd: Path) -> int:
    """Run ra-query with `argv`; return the exit code."""
    args = _parser().parse_args(argv)
    root = find_artifacts(args.artifacts, env, cwd)
    stale = None
    if args.command == "search":
        from ra_query.sources import stale_files_soon

        # fork the source walk first: it then overlaps the imports, the open and the search
        stale = stale_files_soon(root)
    from ra_query.commands import get_command, search_command
    from ra_query.store import open_store

    store = open_store(root)
    if stale is None:
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
            stale=stale(),
        )
    sys.stdout.write(output.text)
    return output.code


def main() -> None:
    """Console entry point."""
    try:
        sys.exit(run(sys.argv[1:], dict(os.environ), Path.cwd()))
    except RaError as exc:
        sys.stderr.write(exc.report(PROG))
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)

"""`ra-query`: read-only searches over prebuilt artifacts. Never writes anything.

Deliberately argparse, not typer: an agent sandbox starts this process for every search, so it
imports only what a search needs.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ra_query.errors import RaError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ra-query",
        description="Search prebuilt ra artifacts, read-only.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    search = sub.add_parser("search", help="search the index and print matching chunks")
    search.add_argument("queries", nargs="+", help="one or more topics")
    search.add_argument("-n", "--limit", type=int, default=5, help="results per topic (default 5)")
    search.add_argument("--json", action="store_true", help="print JSON")
    search.add_argument(
        "--artifacts",
        default=None,
        help="artifact directory (default: $RA_ARTIFACTS, else ./.ra)",
    )
    return parser


def run(argv: list[str]) -> int:
    """Run ra-query with `argv`; return the exit code."""
    args = _parser().parse_args(argv)
    from ra_query.search import render_full, results_to_dict, search
    from ra_query.store import open_store

    root = Path(args.artifacts or os.environ.get("RA_ARTIFACTS") or ".ra")
    store = open_store(root)
    results = [search(store, q, limit=max(1, args.limit)) for q in args.queries]
    if args.json:
        import orjson

        sys.stdout.write(orjson.dumps(results_to_dict(results), option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        sys.stdout.write(render_full(results))
    return 0 if any(r.hits for r in results) else 1


def main() -> None:
    """Console entry point."""
    try:
        sys.exit(run(sys.argv[1:]))
    except RaError as exc:
        print(f"ra-query: error: {exc.message}", file=sys.stderr)
        sys.exit(exc.exit_code)

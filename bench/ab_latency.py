"""Side by side: what one call costs for a git revision and for the working tree, alternating.

    .venv/bin/python bench/ab_latency.py --rev REV [--project DIR | --dir CORPUS | --tarball PATH]
                                         [--rounds N] [--calls N] [--queries "a b" ...] [--no-record]

Made to show whether a change moved latency (the rooms of 89a6c53: `--rev cb1f0fe`). As in
bench/ab_build.py, REV is checked out with `git worktree add` in a temp directory (removed
afterwards) and the sides take turns in one run: each measurement runs for one side and then
the other, REV first in odd rounds and the tree first in even ones (REV, tree, tree, REV, ...).
Both sides search ONE built index, so its format must be the same on both: DIR's (built
already), else the corpus (`--dir`, else /tmp/corpora/ps, else the tarball unpacked) built here
by the working tree's `ra update`. Each command is a fresh interpreter of this venv running
that side's console entry (bench/common.py `entry_command`), both sides compiled first, timed
by bench/latency.py's own `timed` and `mcp_figures`. Per round and side:

- cold `ra-query search --list Q` and cold `ra search --list Q` (the index current: `ra`'s
  no-change path), each query once;
- `ra mcp` and `ra-query mcp`: one session each, its start-up to first answer (and the CPU the
  server process had used by then, from /proc) and the median of `--calls` search calls;
- with `--context-files GLOB`: one `ra-query mcp` session of `--calls` `context` calls, each
  naming one file of GLOB as bench/latency.py picks them (issue 32's floor: p50 ≤ 30 ms);
  `--context-only` times nothing else.

Printed: per side the median of each measurement, the ratio tree/REV and the load average; the
same table is appended to bench/results/ab_latency.txt. The run stops if the index changed under
it (a side that rebuilt it would be timing a build) and warns if the sides rewrote
`.config-stamp.json` (then every `ra search` reads the configuration again).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (
    DEFAULT_TARBALL,
    REPO,
    build_project,
    clean_env,
    compile_sources,
    corpus_folder,
    entry_command,
    git_head,
    worktree,
)
from latency import QUERIES, context_files, mcp_figures, sources_of, timed

RESULTS = REPO / "bench" / "results" / "ab_latency.txt"

# one measurement of one side in one round: the checkout → figures in ms by name
Step = Callable[[Path], dict[str, list[float]]]


def steps(
    project: Path, env: dict[str, str], queries: list[str], calls: int, files: list[str], only_context: bool
) -> list[Step]:
    """What a round measures, in order; each step runs for both sides before the next."""

    def cold(prog: str) -> Step:
        label = "ra-query search, cold" if prog == "ra-query" else "ra search, cold (no change)"

        def run(source: Path) -> dict[str, list[float]]:
            argvs = [entry_command(source, prog, "search", "--list", q) for q in queries]
            return {label: [timed((argv, env), project) * 1000 for argv in argvs]}

        return run

    def mcp(prog: str) -> Step:
        def run(source: Path) -> dict[str, list[float]]:
            cpu: list[tuple[float, float]] = []
            argv = entry_command(source, prog, "mcp")
            first, p50, _ = mcp_figures(argv, project, calls, queries, env=env, cpu=cpu)
            figures = {
                f"{prog} mcp, one search call": [p50],
                f"{prog} mcp, start-up to first answer": [first],
            }
            if cpu:  # the server's CPU by its first answer: its critical path, less stretched by load
                figures[f"{prog} mcp, its CPU by then"] = [cpu[0][0]]
            return figures

        return run

    def context(source: Path) -> dict[str, list[float]]:
        _, p50, p95 = mcp_figures(
            entry_command(source, "ra-query", "mcp"), project, calls, files, "context", env
        )
        return {"ra-query mcp, one context call": [p50], "ra-query mcp, context call p95": [p95]}

    searches = [] if only_context else [cold("ra-query"), cold("ra"), mcp("ra"), mcp("ra-query")]
    return [*searches, *([context] if files else [])]


def warm_up(sides: dict[str, Path], project: Path, env: dict[str, str], query: str) -> None:
    """Each side's cold commands once (page cache, `.config-stamp.json`), checked to work."""
    for name, source in sides.items():
        for prog in ("ra-query", "ra"):
            argv = entry_command(source, prog, "search", "--list", query)
            done = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, check=False)
            if done.returncode not in (0, 1):
                raise SystemExit(f"{prog} search of {name} failed: {done.stderr.strip()}")


def mtimes(artifacts: Path) -> dict[str, int]:
    """The modification times of the files a rebuild or a config read rewrites."""
    names = ("manifest.json", "index/meta.json", ".config-stamp.json")
    return {n: (artifacts / n).stat().st_mtime_ns for n in names if (artifacts / n).exists()}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rev", required=True, help="the git revision to compare with")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--project", type=Path, help="a project whose index is built (`ra update`)")
    source.add_argument("--dir", type=Path, help="an unpacked corpus to build (read in place)")
    source.add_argument("--tarball", type=Path, default=DEFAULT_TARBALL)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--calls", type=int, default=50, help="MCP search calls per session")
    parser.add_argument("--queries", nargs="+", default=QUERIES)
    parser.add_argument("--context-files", help="also time context calls naming files of this glob ('*.py')")
    parser.add_argument("--context-only", action="store_true", help="time only the context calls")
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    if args.context_only and not args.context_files:
        parser.error("--context-only needs --context-files")

    with tempfile.TemporaryDirectory(prefix="ra-bench-ab-lat-") as tmp, worktree(args.rev, Path(tmp)) as rev:
        work = Path(tmp)
        if args.project is not None:
            project, env = args.project.resolve(), clean_env()
        else:
            corpus = corpus_folder(args.dir, work / "corpus", args.tarball)
            _, seconds, summary = build_project(work / "project", work / "home", corpus)
            print(f"built {corpus} in {seconds:.1f} s: {summary}")
            project, env = work / "project", clean_env(work / "home")
        sides = {args.rev: rev, "tree": REPO}
        for checkout in sides.values():
            compile_sources(checkout)
        warm_up(sides, project, env, args.queries[0])
        files = context_files(sources_of(project), args.context_files) if args.context_files else []
        before = mtimes(project / ".ra")
        figures: dict[str, dict[str, list[float]]] = {name: {} for name in sides}
        load_start = os.getloadavg()
        for round_ in range(args.rounds):
            order = list(sides) if round_ % 2 == 0 else list(sides)[::-1]
            for step in steps(project, env, args.queries, args.calls, files, args.context_only):
                for name in order:
                    for label, values in step(sides[name]).items():
                        figures[name].setdefault(label, []).extend(values)
            print(f"round {round_ + 1} of {args.rounds} done, load {os.getloadavg()[0]:.2f}", flush=True)
        load_end = os.getloadavg()
        after = mtimes(project / ".ra")
    changed = [n for n in before if after.get(n) != before[n]]
    if {"manifest.json", "index/meta.json"} & set(changed):
        raise SystemExit(f"the index changed during the run ({', '.join(changed)}): a side rebuilt it")

    medians = {name: {label: statistics.median(v) for label, v in by.items()} for name, by in figures.items()}
    lines = [
        f"# bench/ab_latency.py {time.strftime('%Y-%m-%d %H:%M')} rev {args.rev} vs tree {git_head()} "
        f"project {project} ({args.rounds} rounds × {len(args.queries)} queries, {args.calls} MCP calls "
        f"a session{f', context files {args.context_files}' if files else ''}"
        f"{', context calls only' if args.context_only else ''}) "
        f"load {load_start[0]:.2f} → {load_end[0]:.2f} nproc {os.cpu_count()}",
        f"{'median ms':40}{args.rev:>12}{'tree':>12}{'tree/' + args.rev:>18}",
        *(
            f"{label:40}{rev_ms:12.1f}{medians['tree'][label]:12.1f}{medians['tree'][label] / rev_ms:18.3f}"
            for label, rev_ms in medians[args.rev].items()
        ),
    ]
    if changed:
        lines.append(f"warning: {', '.join(changed)} rewritten during the run: `ra search` read the config")
    print("\n".join(lines))
    if not args.no_record:
        with RESULTS.open("a", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n\n")
        print(f"appended to {RESULTS.relative_to(REPO)}")


if __name__ == "__main__":
    main()

"""Benchmark: what one call costs where agents call — cold `ra search` (no change) vs `ra-query
search` vs `rg -il`, side by side in one run on the same project and words; then the MCP servers.

    python bench/latency.py --project DIR [--runs N] [--calls N] [--starts N] [--queries "a b" ...]
                            [--before TREE]

DIR holds a `.ra.toml` whose index is already built (`ra update`); the sources stay untouched,
so every `ra search` takes the no-change path. Each round runs the commands back to back for
each query, in rotating order, so load on this shared machine hits them alike; the figures are
medians over rounds and queries, and the floor is a ratio (issue 24: `ra search` ≤ 1.15 ×
`ra-query search`; issue 11's was 1.3), with a goal of 1.10 so that a noisy machine does not
cross it. `--before TREE` adds `ra search` as an older checkout
of ra (a git worktree: `git worktree add /tmp/before COMMIT`, before or after the rooms of
89a6c53) runs it, on the
same index; the sources of both are compiled first, so that no run pays for compiling. Then
`ra mcp` and `ra-query mcp` each answer `--calls` search calls through the SDK's client over
stdio (p50 / p95; floors 10 / 25 ms); their start-up to first answer (floor 0.8 s, goal 0.5 s:
the launch of the server to its first answered call, as an agent runtime sees it) is the median
of `--starts` sessions, that one and fresh ones answering one call, in turn with the other
server's, with the CPU the server (the critical path) and the process it forked had used by
then (from /proc, where there is one); and
`ra-query mcp` answers `context` calls for files of `--context-files` (markdown by default;
`'*.py'` for code files, issue 32's floor 30 ms). Prints a
table and appends it to bench/results/latency.txt. bench/ab_latency.py times these calls for a
git revision beside the working tree.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, compile_sources, entry_command, git_head, ra_executable, verdict

QUERIES = ["connection pool size", "Get-DnsServer zone", "remove user account", "install module offline"]
FLOOR = 1.15  # issue 24 (issue 11's was 1.3)
GOAL = 1.10  # the no-change path's margin under FLOOR
MCP_P50_FLOOR, MCP_P95_FLOOR, STARTUP_FLOOR = 10.0, 25.0, 800.0  # ms
STARTUP_GOAL = 500.0  # ms
CONTEXT_P50_FLOOR = 30.0  # ms (issue 12)


def mcp_figures(
    command: list[str],
    project: Path,
    calls: int,
    queries: list[str],
    tool: str = "search",
    env: dict[str, str] | None = None,
    cpu: list[tuple[float, float]] | None = None,
) -> tuple[float, float, float]:
    """(start-up to first answer, p50, p95) in ms of `tool` calls through the SDK client over stdio.

    `search` takes `queries` in turn; `context` takes one of the files `queries` names each call.
    The server gets `env`, by default this process's environment. Given `cpu` (and /proc), the
    CPU ms the server and the processes it started had used when the first answer came are
    appended to it: the server's is the start-up's critical path, which load on a shared
    machine stretches less than the wall time.
    """
    import asyncio

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    def arguments(i: int) -> dict[str, object]:
        item = queries[i % len(queries)]
        return {"files": [item], "list": True} if tool == "context" else {"queries": item, "list": True}

    async def session() -> tuple[float, list[float]]:
        started = time.perf_counter()
        params = StdioServerParameters(
            command=command[0], args=command[1:], cwd=project, env=dict(os.environ if env is None else env)
        )
        with open(os.devnull, "w", encoding="utf-8") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                await client.call_tool(tool, arguments(0))
                first = time.perf_counter() - started
                if cpu is not None and os.path.isdir("/proc/self/task"):
                    cpu.append(server_cpu())
                times: list[float] = []
                for i in range(calls):
                    began = time.perf_counter()
                    result = await client.call_tool(tool, arguments(i))
                    times.append(time.perf_counter() - began)
                    if result.is_error:
                        raise SystemExit(f"{tool} failed: {result.content}")
        return first, times

    first, times = asyncio.run(session())
    times.sort()
    return first * 1000, statistics.median(times) * 1000, times[int(0.95 * (len(times) - 1))] * 1000


def server_cpu() -> tuple[float, float]:
    """(CPU ms of this process's one child, of that child's children), from /proc."""
    tick = os.sysconf("SC_CLK_TCK")

    def children(pid: int | str) -> list[int]:
        tasks = Path(f"/proc/{pid}/task").iterdir()
        return [int(c) for task in tasks for c in (task / "children").read_text(encoding="utf-8").split()]

    def used(pid: int) -> float:
        fields = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000 / tick  # utime + stime

    (server,) = children("self")
    return used(server), sum(used(child) for child in children(server))


def sources_of(project: Path) -> list[str]:
    """The tree roots of the project (for rg), as the manifest records them."""
    import json

    manifest = json.loads((project / ".ra" / "manifest.json").read_text(encoding="utf-8"))
    return [str(tree["sources"]["root"]) for tree in manifest["trees"].values()]


def context_files(roots: list[str], pattern: str) -> list[str]:
    """The files the context calls name: 60 files of `pattern` spread over the trees, in turn."""
    pages = sorted(str(page) for root in roots for page in Path(root).rglob(pattern))
    return pages[:: max(1, len(pages) // 60)][:60]


Command = tuple[list[str], dict[str, str] | None]


def timed(command: Command, cwd: Path) -> float:
    """Wall seconds of one run of `command` in `cwd`, its output thrown away."""
    started = time.perf_counter()
    argv, env = command
    subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def older_ra(tree: Path) -> Callable[[str], Command]:
    """`ra search --list Q` as the checkout at `tree` runs it (its console entry, this venv's packages)."""
    return lambda query: (entry_command(tree, "ra", "search", "--list", query), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--project", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--queries", nargs="+", default=QUERIES)
    parser.add_argument("--before", type=Path, help="a checkout of an older ra to time `ra search` of")
    parser.add_argument("--calls", type=int, default=300, help="MCP search calls per server")
    parser.add_argument("--starts", type=int, default=5, help="MCP sessions whose start-up is timed")
    parser.add_argument(
        "--context-files", default="*.md", help="the files the context calls name, by glob (e.g. '*.py')"
    )
    args = parser.parse_args()
    project: Path = args.project.resolve()
    roots = sources_of(project)
    rg = shutil.which("rg")
    ra, ra_query = str(ra_executable("ra")), str(ra_executable("ra-query"))
    commands: dict[str, Callable[[str], Command]] = {
        "ra search": lambda q: ([ra, "search", "--list", q], None),
        "ra-query search": lambda q: ([ra_query, "search", "--list", q], None),
    }
    if rg:
        commands["rg -il"] = lambda q: ([rg, "-il", "--", q.split()[0], *roots], None)
    compile_sources(REPO)
    if args.before:
        compile_sources(args.before.resolve())
        commands[f"ra search {args.before.name}"] = older_ra(args.before.resolve())
    for name, make in commands.items():  # warm the page cache; check each one works
        argv, env = make(args.queries[0])
        done = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, check=False)
        if done.returncode not in (0, 1):
            raise SystemExit(f"{name} failed: {done.stderr.strip()}")
    times: dict[str, list[float]] = {name: [] for name in commands}
    names = list(commands)
    for run in range(args.runs):
        for query in args.queries:
            order = names[run % len(names) :] + names[: run % len(names)]
            for name in order:
                times[name].append(timed(commands[name](query), project))
    load = os.getloadavg()[0]
    medians = {name: statistics.median(values) * 1000 for name, values in times.items()}
    ratio = medians["ra search"] / medians["ra-query search"]
    lines = [
        f"# bench/latency.py {time.strftime('%Y-%m-%d %H:%M')} {git_head()} load {load:.2f} "
        f"project {project} ({args.runs} rounds × {len(args.queries)} queries)",
        *(f"{name:24} median {ms:7.1f} ms" for name, ms in medians.items()),
        f"ra search / ra-query search = {ratio:.2f} (floor ≤ {FLOOR}) {verdict(ratio <= FLOOR)}; "
        f"goal ≤ {GOAL}: {'met' if ratio <= GOAL else 'not met'}",
    ]
    servers = {"ra mcp": [ra, "mcp"], "ra-query mcp": [ra_query, "mcp"]}
    cpu: dict[str, list[tuple[float, float]]] = {name: [] for name in servers}
    calls = {
        name: mcp_figures(argv, project, args.calls, args.queries, cpu=cpu[name])
        for name, argv in servers.items()
    }
    starts = {name: [figures[0]] for name, figures in calls.items()}
    for _ in range(args.starts - 1):
        for name, argv in servers.items():
            starts[name].append(mcp_figures(argv, project, 1, args.queries, cpu=cpu[name])[0])
    for name, (_, p50, p95) in calls.items():
        first = statistics.median(starts[name])
        ok = p50 <= MCP_P50_FLOOR and p95 <= MCP_P95_FLOOR and first <= STARTUP_FLOOR
        used = (
            f"; CPU by then: server {statistics.median(c[0] for c in cpu[name]):.0f} ms, "
            f"the processes it started {statistics.median(c[1] for c in cpu[name]):.0f} ms"
            if cpu[name]
            else ""
        )
        lines.append(
            f"{name:16} {args.calls} search calls: p50 {p50:5.1f} ms, p95 {p95:5.1f} ms; start-up to first "
            f"answer {first:4.0f} ms (median of {len(starts[name])}, load {os.getloadavg()[0]:.2f}{used}; "
            f"floors {MCP_P50_FLOOR:.0f} / {MCP_P95_FLOOR:.0f} / {STARTUP_FLOOR:.0f}) {verdict(ok)}; "
            f"start-up goal ≤ {STARTUP_GOAL:.0f} ms: {'met' if first <= STARTUP_GOAL else 'not met'}"
        )
    files = context_files(roots, args.context_files)
    first, p50, p95 = mcp_figures(servers["ra-query mcp"], project, args.calls, files, tool="context")
    lines.append(
        f"{'ra-query mcp':16} {args.calls} context calls (one {args.context_files} file each): "
        f"p50 {p50:5.1f} ms, "
        f"p95 {p95:5.1f} ms (floor p50 {CONTEXT_P50_FLOOR:.0f}) {verdict(p50 <= CONTEXT_P50_FLOOR)}"
    )
    print("\n".join(lines))
    results = REPO / "bench" / "results" / "latency.txt"
    with results.open("a", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()

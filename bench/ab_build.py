"""Side by side: full `ra update --full` builds of a git revision and of the working tree, alternating.

    .venv/bin/python bench/ab_build.py --rev REV --dir CORPUS [--rounds N] [--no-record]

Timings on a shared machine move by tens of percent between minutes, so a change to the
build's cost is measured against its revision in the same run: the revision is checked out
with `git worktree add` in a temp directory, each side gets a project of its own over the same
corpus, and the sides take turns (REV, tree, tree, REV, ...), each build in a fresh interpreter
with this venv's python and PYTHONPATH pointing at that side's source (its `ra` entry where
that revision keeps it: bench/common.py ra_entry_module); both sides are compiled first, so
neither pays for compiling. Printed per build: wall seconds, CPU seconds (the build and every
worker it reaped) and the load average; then each side's mean, appended to
bench/results/ab_build.txt.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, clean_env, compile_sources, git_head, ra_entry_module, worktree, write_project

RESULTS = REPO / "bench" / "results" / "ab_build.txt"

# Run in each side's interpreter, in the project directory; argv[1] names its `ra` entry module.
_BUILD = """
import importlib, json, os, resource, sys, time
entry, sys.argv = sys.argv[1], ["ra", "update", "--full"]
started = time.perf_counter()
main = importlib.import_module(entry).main
try:
    main()
except SystemExit as exc:
    if exc.code:
        raise
used = sum(
    getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    for f in ("ru_utime", "ru_stime")
)
print(json.dumps({"wall": time.perf_counter() - started, "cpu": used}), file=sys.__stderr__)
"""


def build(source: Path, project: Path, home: Path) -> dict[str, float]:
    """One full build with the code under `source`: wall and CPU seconds, and the load before it."""
    env = {**clean_env(home), "PYTHONPATH": str(source)}
    load = os.getloadavg()[0]
    proc = subprocess.run(
        [sys.executable, "-c", _BUILD, ra_entry_module(source)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    last = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
    if proc.returncode != 0 or not last.startswith("{"):
        raise SystemExit(f"the build in {project} failed:\n{proc.stderr[-2000:]}")
    return {**json.loads(last), "load": load}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rev", required=True, help="the git revision to compare with")
    parser.add_argument("--dir", required=True, type=Path, help="an unpacked markdown corpus")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    corpus = args.dir.resolve()
    with tempfile.TemporaryDirectory(prefix="ra-bench-ab-") as tmp, worktree(args.rev, Path(tmp)) as checkout:
        work = Path(tmp)
        sides = {args.rev: checkout, "tree": REPO}
        for name, source in sides.items():
            write_project(work / f"project-{name}", corpus, tree="corpus")
            compile_sources(source)
        (work / "home").mkdir()
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in sides}
        for round_ in range(args.rounds):
            order = list(sides) if round_ % 2 == 0 else list(sides)[::-1]
            for name in order:
                run = build(sides[name], work / f"project-{name}", work / "home")
                runs[name].append(run)
                wall, cpu, load = run["wall"], run["cpu"], run["load"]
                print(f"round {round_ + 1} {name:>10}: {wall:6.2f} s wall {cpu:6.2f} CPU-s load {load:.2f}")
    means = {
        name: (statistics.mean(r["wall"] for r in rs), statistics.mean(r["cpu"] for r in rs))
        for name, rs in runs.items()
    }
    (rev_wall, rev_cpu), (tree_wall, tree_cpu) = means[args.rev], means["tree"]
    line = (
        f"{dt.datetime.now(dt.UTC).isoformat(timespec='seconds')}  corpus={corpus.name} rounds={args.rounds} "
        f"rev={args.rev} wall_s={rev_wall:.2f} cpu_s={rev_cpu:.2f}  tree={git_head()} wall_s={tree_wall:.2f} "
        f"cpu_s={tree_cpu:.2f}  cpu_ratio={tree_cpu / rev_cpu:.3f} wall_ratio={tree_wall / rev_wall:.3f} "
        f"load1={statistics.mean(r['load'] for rs in runs.values() for r in rs):.2f} nproc={os.cpu_count()}"
    )
    print(line)
    if not args.no_record:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        with RESULTS.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")
        print(f"appended to {RESULTS.relative_to(REPO)}")


if __name__ == "__main__":
    main()

"""Side by side: full `ra update --full` builds of a git revision and of the working tree, alternating.

    .venv/bin/python bench/ab_build.py --rev REV --dir CORPUS [--rounds N] [--no-record]

Timings on a shared machine move by tens of percent between minutes, so a change to the
build's cost is measured against its revision in the same run: the revision is checked out
with `git worktree add` in a temp directory, each side gets a project of its own over the same
corpus, and the sides take turns (REV, tree, tree, REV, ...), each build in a fresh interpreter
with this venv's python and PYTHONPATH pointing at that side's source. Printed per build: wall
seconds, CPU seconds (the build and every worker it reaped) and the load average; then each
side's mean, appended to bench/results/ab_build.txt.
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

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
from common import git_head  # noqa: E402 — bench/ is not a package

RESULTS = REPO / "bench" / "results" / "ab_build.txt"

# Run in each side's interpreter, in the project directory.
_BUILD = """
import json, os, resource, sys, time
sys.argv = ["ra", "update", "--full"]
started = time.perf_counter()
from ra_build.cli.entry import main
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
    env = {**os.environ, "PYTHONPATH": str(source), "HOME": str(home)}
    load = os.getloadavg()[0]
    proc = subprocess.run(
        [sys.executable, "-c", _BUILD], cwd=project, env=env, capture_output=True, text=True, check=False
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
    with tempfile.TemporaryDirectory(prefix="ra-bench-ab-") as tmp:
        work = Path(tmp)
        worktree = work / "rev"
        subprocess.run(
            ["git", "worktree", "add", "--detach", "--quiet", str(worktree), args.rev], cwd=REPO, check=True
        )
        try:
            sides = {args.rev: worktree, "tree": REPO}
            for name in sides:
                project = work / f"project-{name}"
                project.mkdir()
                (project / ".ra.toml").write_text(
                    f'root = true\n\n[tree.corpus]\npath = "{corpus}"\n', encoding="utf-8"
                )
            (work / "home").mkdir()
            runs: dict[str, list[dict[str, float]]] = {name: [] for name in sides}
            for round_ in range(args.rounds):
                order = list(sides) if round_ % 2 == 0 else list(sides)[::-1]
                for name in order:
                    run = build(sides[name], work / f"project-{name}", work / "home")
                    runs[name].append(run)
                    wall, cpu, load = run["wall"], run["cpu"], run["load"]
                    print(
                        f"round {round_ + 1} {name:>10}: {wall:6.2f} s wall {cpu:6.2f} CPU-s load {load:.2f}"
                    )
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=REPO, check=False)
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

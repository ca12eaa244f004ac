"""Benchmark: the index stage alone, rebuilt with K shards, on a copy of built artifacts.

    .venv/bin/python bench/shards.py ARTIFACTS K [K ...] [--no-record]

ARTIFACTS is a built artifact directory (e.g. the `.ra` of a project `bench/build.py --keep`
leaves). It is copied to a temp directory first (hard links for the chunk tables), so the
original is never touched. Each K in turn rebuilds every shard (a new K rebuilds them all),
in this process and its shard workers; wall time and CPU seconds (this process and the workers
it reaped) are printed and appended to bench/results/shards.txt with the load average.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
from common import git_head  # noqa: E402 — bench/ is not a package

RESULTS = REPO / "bench" / "results" / "shards.txt"


def cpu_seconds() -> float:
    own, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("artifacts", type=Path)
    parser.add_argument("shards", type=int, nargs="+")
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()

    from ra_build.artifacts.layout import Layout
    from ra_build.pipeline.index_stage import index_stage

    source = Layout(args.artifacts.resolve())
    trees = sorted(p.name for p in source.chunks_dir.iterdir() if p.is_dir())
    scratch = Path(tempfile.mkdtemp(prefix="ra-bench-shards-"))
    try:
        layout = Layout(scratch / ".ra")
        shutil.copytree(source.chunks_dir, layout.chunks_dir, copy_function=os.link)
        lines = []
        for k in args.shards:
            load = os.getloadavg()[0]
            started, cpu = time.perf_counter(), cpu_seconds()
            stats = index_stage(layout, trees, "english", shards=k)
            wall, used = time.perf_counter() - started, cpu_seconds() - cpu
            line = (
                f"K={k} wall_s={wall:.2f} cpu_s={used:.2f} chunks={stats.added_chunks} "
                f"shards_written={len(stats.shards_written)} load1={load:.2f}"
            )
            print(line, flush=True)
            lines.append(line)
        if not args.no_record:
            stamp = dt.datetime.now().astimezone().isoformat(timespec="seconds")
            with RESULTS.open("a", encoding="utf-8") as out:
                for line in lines:
                    out.write(f"{stamp}  {line} nproc={os.cpu_count()} git={git_head()}\n")
            print(f"appended to {RESULTS.relative_to(REPO)}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()

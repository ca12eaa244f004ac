"""Profile `run_build` in-process: per-stage wall time and memory, and a cProfile summary.

    .venv/bin/python bench/profile_build.py PROJECT {full,nochange,onefile} [--serial] [--top N]
        [--edit FILE] [--pstats OUT]

PROJECT is a directory holding a `.ra.toml` whose artifacts go to PROJECT/.ra — e.g. the one
`bench/build.py --keep` leaves behind. `full` runs `run_build(..., full=True)` (state dropped,
every stage from scratch); `nochange` runs it as is; `onefile` first appends a line to --edit
(default: the middle .md file of the first tree). `--serial` raises the fork-pool threshold so
the chunker runs in this process and shows up in the profile (otherwise the workers' time
appears as waiting in `pool.map`). Each stage is wrapped to report its wall time, the RSS after
it and the process's peak RSS while it ran (VmHWM, reset before each stage via clear_refs).
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import io
import pstats
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

T0 = time.perf_counter()
import ra_build.pipeline.chunk_stage as stages  # noqa: E402
import ra_build.pipeline.graph as tasks  # noqa: E402
from ra_build.config.load import load_config  # noqa: E402
from ra_build.pipeline.run import run_build  # noqa: E402

IMPORT_S = time.perf_counter() - T0


def _status(key: str) -> int:
    with open("/proc/self/status", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1])
    return 0


def _reset_hwm() -> None:
    try:
        with open("/proc/self/clear_refs", "w", encoding="utf-8") as fh:
            fh.write("5")  # reset the peak RSS (VmHWM) to the current RSS
    except OSError:
        pass


def _timed(name: str, fn: Callable[..., Any], log: list[str]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any) -> Any:
        _reset_hwm()
        started = time.perf_counter()
        result = fn(*args)
        log.append(
            f"  {name:<10}{time.perf_counter() - started:8.2f} s"
            f"   rss after {_status('VmRSS:') / 1024:7.0f} MB"
            f"   peak during {_status('VmHWM:') / 1024:7.0f} MB"
        )
        return result

    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("mode", choices=["full", "nochange", "onefile"])
    parser.add_argument("--serial", action="store_true", help="chunk in this process (no fork pool)")
    parser.add_argument("--no-profile", action="store_true", help="stage timings only")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--edit", type=Path, help="file to append a line to (onefile)")
    parser.add_argument("--pstats", type=Path, help="also dump raw pstats here")
    args = parser.parse_args()

    log: list[str] = []
    for name in ("discover_stage", "chunk_stage", "index_stage", "manifest_stage"):
        setattr(tasks, name, _timed(name.removesuffix("_stage"), getattr(tasks, name), log))
    if args.serial:
        stages.PARALLEL_MIN_FILES = 10**9

    with tempfile.TemporaryDirectory() as home:
        t = time.perf_counter()
        config = load_config(args.project, Path(home))
        config_s = time.perf_counter() - t
    if args.mode == "onefile":
        target = args.edit
        if target is None:
            tree = next(iter(config.trees.values()))
            mds = sorted(tree.path.rglob("*.md"))
            target = mds[len(mds) // 2]
        with target.open("a", encoding="utf-8") as fh:
            fh.write("\nA line appended by bench/profile_build.py.\n")
        print(f"edited {target}")

    profiler = cProfile.Profile()
    started = time.perf_counter()
    if not args.no_profile:
        profiler.enable()
    report = run_build(config, args.project / ".ra", full=args.mode == "full")
    if not args.no_profile:
        profiler.disable()
    total = time.perf_counter() - started
    print(f"imports {IMPORT_S:.2f} s   load_config {config_s:.3f} s   run_build {total:.2f} s")
    print(f"executed {report.executed}  up to date {report.up_to_date}  failures {report.failures}")
    print("\n".join(log))
    if args.no_profile:
        return
    if args.pstats:
        profiler.dump_stats(args.pstats)
    for key in ("cumulative", "tottime"):
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats(key).print_stats(args.top)
        print(out.getvalue())


if __name__ == "__main__":
    main()

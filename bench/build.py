"""Benchmark: `ra update` end to end on a real corpus — full build, no-change and one-file updates.

    .venv/bin/python bench/build.py [--dir DIR | --tarball PATH] [--rev REV] [--repeat N] [--keep]
                                    [--no-record]

Everything happens in a fresh temp directory: the corpus is copied (``--dir``) or unpacked
(``--tarball``) into it, so the source is never touched; a project directory gets a ``.ra.toml``
(``root = true``, one tree ``ps``) and artifacts go to ``<project>/.ra``; HOME is an empty temp
directory, so no global config leaks in. Each run is the venv's real ``ra`` executable in a
subprocess:

1. full build — wall time, MB/s (markdown bytes of the corpus / wall seconds), peak RSS, and the
   index it published: bytes per chunk, whole and per file kind (`.store`, `.idx`, `.pos`, ...);
2. no-change update, run immediately after — wall time;
3. one-file edit — a line appended to one file of the copy, then ``ra update`` — wall time and
   the summary line ``ra update`` printed.

Peak RSS is ``ru_maxrss`` from ``os.wait4`` on the ``ra`` process: the largest resident set of
that process *or any descendant it reaped* (the chunk stage's fork-pool workers), i.e. the max
RSS of any single process in the tree — the same figure ``/usr/bin/time -v`` reports. During the
full build a sampler also sums VmRSS over the live process tree every 0.1 s (an upper bound on
memory in use at once: fork workers share copy-on-write pages, which the sum double counts).

In the same run, a stock single-core `MarkdownIt("commonmark").parse` of every file is timed
(the files read first, the process pinned to one CPU): issue 14's yardstick, since absolute MB/s
moves 2x between days here. The full build's wall time over it is the ratio (floor ≤ 0.6), and
the build's CPU-seconds (the `ra` process and its reaped workers) per MB are reported too.

With `--rev REV`, the same run first builds the corpus with REV's ra (a `git worktree` of it, in
a project of its own): its full build, ratio to the same stock parse, CPU-seconds per MB and
index bytes per chunk are printed and recorded beside this checkout's (`rev_*=` in the line), so
a change to the build is judged against its revision under the same load.

The figures are printed against issue 14's floors (ratio ≤ 0.6, goal ≤ 0.4; CPU-seconds per MB,
goal ≤ 0.43, qmd's; peak RSS ≤ 800 MB; no-change update ≤ 0.5 s; one-file update ≤ 1 s), the
ratio also against issue 24's (≤ 0.8), and appended to bench/results/build.txt. MB/s is printed
for reference: it moves 2x between days.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (
    DEFAULT_TARBALL,
    REPO,
    clean_env,
    compile_sources,
    entry_command,
    git_head,
    place_corpus,
    ra_executable,
    verdict,
    worktree,
    write_project,
)

RESULTS = REPO / "bench" / "results" / "build.txt"

FLOOR_RSS_MB = 800.0  # MiB-based, as ru_maxrss is in KiB
FLOOR_NOCHANGE_S = 0.5
FLOOR_RATIO = 0.6  # issue 14: full build wall time / stock single-core markdown-it parse, same run
GOAL_RATIO = 0.4
FLOOR_RATIO_24 = 0.8  # issue 24's floor for the same ratio, once `body` was stored and not indexed
GOAL_CPU_S_PER_MB = 0.43  # qmd's, on the same corpus
FLOOR_ONEFILE_S = 1.0


@dataclass
class Run:
    """One `ra update` subprocess: what it took and what it printed."""

    label: str
    seconds: float
    maxrss_mb: float  # ru_maxrss of the process or any reaped descendant
    returncode: int
    stdout: str
    stderr: str
    tree_rss_mb: float | None = None  # sampled sum over the live process tree
    cpu_seconds: float = 0.0  # user + system of the process and its reaped workers
    samples: list[float] = field(default_factory=list)

    @property
    def summary(self) -> str:
        lines = self.stdout.strip().splitlines()
        return lines[-1] if lines else ""


def _descendants(pid: int) -> list[int]:
    """pid and every live descendant (via /proc/<pid>/task/*/children)."""
    out, stack = [], [pid]
    while stack:
        p = stack.pop()
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children", encoding="utf-8") as fh:
                    stack.extend(int(c) for c in fh.read().split())
        except OSError:
            continue
    return out


def _vmrss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class TreeSampler(threading.Thread):
    """Sum VmRSS over a process tree every `interval` seconds until stopped."""

    def __init__(self, pid: int, interval: float = 0.1) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak_kb = 0
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.wait(self.interval):
            self.peak_kb = max(self.peak_kb, sum(_vmrss_kb(p) for p in _descendants(self.pid)))

    def stop(self) -> None:
        self._stop_event.set()
        self.join()


def ra_update(
    label: str, project: Path, home: Path, *, sample: bool = False, source: Path | None = None
) -> Run:
    """Run `ra update` in `project` as a real subprocess; wall time and peak RSS via wait4.

    `source`: the checkout whose ra runs (its console entry, with it on PYTHONPATH, so that its
    shard writers import it too); by default the venv's `ra` executable.
    """
    env = clean_env(home)
    command = [str(ra_executable()), "update"]
    if source is not None:
        env["PYTHONPATH"] = str(source)
        command = entry_command(source, "ra", "update")
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(command, cwd=project, env=env, stdout=out, stderr=err)
        sampler = TreeSampler(proc.pid) if sample else None
        if sampler is not None:
            sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)  # so Popen does not wait again
        if sampler is not None:
            sampler.stop()
        out.seek(0)
        err.seek(0)
        run = Run(
            label=label,
            seconds=seconds,
            maxrss_mb=usage.ru_maxrss / 1024,
            returncode=proc.returncode,
            stdout=out.read().decode("utf-8", "replace"),
            stderr=err.read().decode("utf-8", "replace"),
            tree_rss_mb=sampler.peak_kb / 1024 if sampler is not None else None,
            cpu_seconds=usage.ru_utime + usage.ru_stime,  # the process and every worker it reaped
        )
    if run.returncode != 0:
        raise SystemExit(f"{label}: ra update exited {run.returncode}\n{run.stdout}{run.stderr}")
    return run


@dataclass
class IndexSize:
    """The published index of a build: its bytes, whole and per file kind, and its chunks."""

    chunks: int
    kinds: dict[str, int]  # file extension (`store`, `idx`, ... `json` for meta.json) → bytes

    @property
    def total(self) -> int:
        return sum(self.kinds.values())

    def per_chunk(self, kind: str | None = None) -> float:
        return (self.total if kind is None else self.kinds.get(kind, 0)) / max(self.chunks, 1)

    def kinds_text(self) -> str:
        """`store:220,idx:96,...`: bytes per chunk of each kind, largest first."""
        ordered = sorted(self.kinds, key=lambda k: -self.kinds[k])
        return ",".join(f"{kind}:{self.per_chunk(kind):.0f}" for kind in ordered)


def index_size(artifacts: Path) -> IndexSize:
    """The index/ a build published under `artifacts` (every file in it) and its chunk count."""
    kinds: dict[str, int] = {}
    for path in (artifacts / "index").iterdir():
        if path.is_file() and not path.name.startswith("."):
            kind = path.suffix.lstrip(".") or path.name
            kinds[kind] = kinds.get(kind, 0) + path.stat().st_size
    manifest = json.loads((artifacts / "manifest.json").read_bytes())
    return IndexSize(sum(tree["chunks"] for tree in manifest["trees"].values()), kinds)


def markdown_files(root: Path) -> list[Path]:
    """Every .md file under `root`, sorted (dot directories included: they are corpus bytes)."""
    return sorted(p for p in root.rglob("*.md") if p.is_file())


BASELINE = (
    "import sys, time\n"
    "from markdown_it import MarkdownIt\n"
    "md = MarkdownIt('commonmark')\n"
    "paths = sys.stdin.read().splitlines()\n"
    "texts = [open(p, encoding='utf-8', errors='replace').read() for p in paths]\n"
    "started = time.perf_counter()\n"
    "for text in texts:\n"
    "    md.parse(text)\n"
    "print(time.perf_counter() - started)\n"
)


def stock_parse_seconds(files: list[Path]) -> float:
    """Seconds a stock single-core `MarkdownIt("commonmark").parse` of every file takes (the
    files read first), in a subprocess pinned to one CPU: issue 14's yardstick for a build."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); " + BASELINE,
        ],
        input="\n".join(str(f) for f in files),
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tarball", type=Path, default=DEFAULT_TARBALL)
    parser.add_argument("--dir", type=Path, help="an already unpacked corpus (copied, never modified)")
    parser.add_argument("--rev", help="also build with this git revision's ra, in the same run")
    parser.add_argument(
        "--repeat", type=int, default=3, help="no-change / one-file runs (the first is the figure)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temp directory and print its path")
    parser.add_argument("--no-record", action="store_true", help="do not append to bench/results/build.txt")
    args = parser.parse_args()

    load_before = os.getloadavg()[0]  # other work on the machine skews every figure
    if load_before > 0.5:
        print(f"warning: load average {load_before:.2f} before start — figures will be pessimistic")
    scratch = Path(tempfile.mkdtemp(prefix="ra-bench-build-"))
    try:
        corpus, project, home = scratch / "corpus", scratch / "project", scratch / "home"
        home.mkdir()
        place_corpus(corpus, args.tarball, copy_of=args.dir)
        source = str(args.dir if args.dir is not None else args.tarball)
        write_project(project, corpus)
        files = markdown_files(corpus)
        md_bytes = sum(p.stat().st_size for p in files)
        print(f"corpus {source}: {len(files):,} .md files, {md_bytes / 1e6:.1f} MB (copy in {corpus})")

        rev: tuple[Run, IndexSize] | None = None
        if args.rev is not None:
            with worktree(args.rev, scratch) as checkout:
                compile_sources(checkout)
                compile_sources(REPO)
                write_project(scratch / "project-rev", corpus)
                rev_full = ra_update("full", scratch / "project-rev", home, source=checkout)
                rev = (rev_full, index_size(scratch / "project-rev" / ".ra"))
            print(f"full build, {args.rev:<8}{rev_full.seconds:7.2f} s  {rev_full.summary}")
        full = ra_update("full", project, home, sample=True)
        shards = json.loads((project / ".ra" / "index_state.json").read_bytes()).get("shards", 1)
        size = index_size(project / ".ra")
        print(f"full build      {full.seconds:7.2f} s  {full.summary} ({shards} index shards)")
        baseline = stock_parse_seconds(files)
        ratio = full.seconds / baseline
        cpu_per_mb = full.cpu_seconds / (md_bytes / 1e6)
        print(f"stock parse     {baseline:7.2f} s  (MarkdownIt('commonmark').parse of every file, one core)")
        sides = ([(args.rev, *rev)] if rev is not None else []) + [("this tree", full, size)]
        for name, built, index in sides:
            print(
                f"  {name:<10} {built.seconds / baseline:.2f} x the stock parse, "
                f"{built.cpu_seconds / (md_bytes / 1e6):.3f} CPU-s/MB, {built.cpu_seconds:.1f} CPU-s, "
                f"index {index.total / 1e6:.1f} MB = {index.per_chunk():.0f} B/chunk ({index.kinds_text()})"
            )
        nochange = [ra_update("no-change", project, home) for _ in range(max(1, args.repeat))]
        print(f"no-change       {nochange[0].seconds:7.2f} s  {nochange[0].summary}")

        edited = files[len(files) // 2]
        onefile: list[Run] = []
        for i in range(max(1, args.repeat)):
            with edited.open("a", encoding="utf-8") as fh:
                fh.write(f"\nA line appended by bench/build.py (edit {i + 1}).\n")
            onefile.append(ra_update("one-file", project, home))
        print(f"one-file edit   {onefile[0].seconds:7.2f} s  {onefile[0].summary}")
        print(f"  edited: {edited.relative_to(corpus).as_posix()}")

        mb_s = md_bytes / 1e6 / full.seconds
        peak = max(r.maxrss_mb for r in [full, *nochange, *onefile])
        rows = [
            (
                "full build / stock parse",
                f"{ratio:.2f} x ({full.seconds:.2f} s, {mb_s:.2f} MB/s)",
                f"<= {FLOOR_RATIO} x (goal {GOAL_RATIO})",
                ratio <= FLOOR_RATIO,
            ),
            ("  the same, issue 24", f"{ratio:.2f} x", f"<= {FLOOR_RATIO_24} x", ratio <= FLOOR_RATIO_24),
            (
                "CPU per MB (goal)",
                f"{cpu_per_mb:.2f} CPU-s/MB",
                f"<= {GOAL_CPU_S_PER_MB}",
                cpu_per_mb <= GOAL_CPU_S_PER_MB,
            ),
            ("peak RSS, one process", f"{peak:.0f} MB", f"<= {FLOOR_RSS_MB:.0f} MB", peak <= FLOOR_RSS_MB),
            (
                "no-change update",
                f"{nochange[0].seconds:.2f} s",
                f"<= {FLOOR_NOCHANGE_S} s",
                nochange[0].seconds <= FLOOR_NOCHANGE_S,
            ),
            (
                "one-file update",
                f"{onefile[0].seconds:.2f} s",
                f"<= {FLOOR_ONEFILE_S} s",
                onefile[0].seconds <= FLOOR_ONEFILE_S,
            ),
        ]
        print()
        print(f"{'figure':<26}{'measured':<34}{'floor':<22}verdict")
        for name, value, floor, ok in rows:
            print(f"{name:<26}{value:<34}{floor:<22}{verdict(ok)}")
        print(
            f"(peak RSS: ru_maxrss via os.wait4 = max over the ra process and its reaped fork workers; "
            f"sampled sum over the live tree during the full build: {full.tree_rss_mb or 0:.0f} MB)"
        )
        if args.repeat > 1:
            print(
                f"repeats: no-change {[round(r.seconds, 2) for r in nochange]} "
                f"one-file {[round(r.seconds, 2) for r in onefile]}"
            )

        report = (
            f"{dt.datetime.now().astimezone().isoformat(timespec='seconds')}  "
            f"corpus={Path(source).name} files={len(files)} MB={md_bytes / 1e6:.1f} "
            f"full_s={full.seconds:.2f} MB/s={mb_s:.2f} stock_parse_s={baseline:.2f} ratio={ratio:.2f} "
            f"cpu_s_per_MB={cpu_per_mb:.3f} cpu_s={full.cpu_seconds:.1f} index_shards={shards} "
            f"index_MB={size.total / 1e6:.1f} index_B_per_chunk={size.per_chunk():.0f} "
            f"index_kinds={size.kinds_text()} chunks={size.chunks} peak_rss_MB={peak:.0f} "
            f"tree_rss_sum_MB={full.tree_rss_mb or 0:.0f} "
            f"nochange_s={nochange[0].seconds:.2f} "
            f"(median {statistics.median(r.seconds for r in nochange):.2f} of {len(nochange)}) "
            f"onefile_s={onefile[0].seconds:.2f} "
            f"(median {statistics.median(r.seconds for r in onefile):.2f} of {len(onefile)}) "
            f'onefile_summary="{onefile[0].summary.split(" → ")[0]}" '
            f"rss_method=wait4.ru_maxrss load1_before={load_before:.2f} "
            f"python={platform.python_version()} nproc={os.cpu_count()} git={git_head()} "
            + " ".join(f"{name.split()[0]}={verdict(ok)}" for name, _, _, ok in rows)
        )
        if rev is not None:
            rev_full, rev_size = rev
            report += (
                f" rev={args.rev} rev_full_s={rev_full.seconds:.2f} "
                f"rev_ratio={rev_full.seconds / baseline:.2f} "
                f"rev_cpu_s_per_MB={rev_full.cpu_seconds / (md_bytes / 1e6):.3f} "
                f"rev_cpu_s={rev_full.cpu_seconds:.1f} rev_index_MB={rev_size.total / 1e6:.1f} "
                f"rev_index_B_per_chunk={rev_size.per_chunk():.0f} rev_index_kinds={rev_size.kinds_text()}"
            )
        if not args.no_record:
            RESULTS.parent.mkdir(parents=True, exist_ok=True)
            with RESULTS.open("a", encoding="utf-8") as out:
                out.write(report + "\n")
            print(f"appended to {RESULTS.relative_to(REPO)}")
    finally:
        if args.keep:
            print(f"kept {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Benchmark: decode + chunk_document (token counts included) over a real corpus, one core.

    .venv/bin/python bench/chunk.py [--tarball PATH | --dir DIR [--code]] [--limit N] [--runs N]
                                    [--profile] [--worker]

`--code` reads the code files of `--dir` (every extension ra parses as code) instead of its
markdown: the floor for code parsing and chunking with exact token counts is 4 MB/s (issue 30,
DECISIONS 21); markdown's is 5 MB/s (issue 22).

Files are read into memory first (I/O is not timed), the process is pinned to one CPU, the
corpus is chunked `--runs` times (3) and the pass that spent least CPU is reported (on a shared
machine one pass of a 1 MB repository varied 330-460 ms/MB), and the figures are appended to
bench/results/chunk.txt.

With `--worker` it times instead what a chunk-stage worker does with the files, on one core:
`chunk_stage.parse_batch` over batches of 880 paths (stat, read, sha256, decode, chunk and the
Arrow batch), the files already in the page cache; its CPU-seconds/MB is the chunk stage's
cost before the shards are written.

With `--parts` (and `--code`) it also times alone what ra does not write itself: tree-sitter's
parse, the reference query and cl100k's counts of the chunk texts (and of each file once), and
says how many ms/MB of the timed run were left for ra's own code.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import os
import platform
import pstats
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DEFAULT_TARBALL, REPO, git_head, place_corpus

sys.path.insert(0, str(REPO))

from ra_build.document.chunk import chunk_document
from ra_build.document.grammars import GRAMMARS, parser_for, reference_query
from ra_build.document.markdown import decode
from ra_build.pipeline.chunk_stage import ChunkSettings, parse_batch
from ra_query.sources.languages import CODE_EXTENSIONS
from ra_query.text.tokens import count_tokens

RESULTS = REPO / "bench" / "results" / "chunk.txt"
SUFFIXES = (".md", ".markdown", ".txt")
CODE_SUFFIXES = tuple(f".{ext}" for ext in CODE_EXTENSIONS)  # --code: the files ra parses as code
FLOOR_MB_S = 5.0
CODE_FLOOR_MB_S = 4.0  # issue 30: code chunking with exact counts (DECISIONS 21)


def read_corpus(
    root: Path, limit: int | None, suffixes: tuple[str, ...] = SUFFIXES
) -> list[tuple[str, bytes]]:
    """Read every file under `root` with one of `suffixes` (markdown and text by default) as
    (relative path, bytes), sorted by path."""
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in suffixes)
    if limit is not None:
        files = files[:limit]
    return [(p.relative_to(root).as_posix(), p.read_bytes()) for p in files]


def run(corpus: list[tuple[str, bytes]]) -> tuple[float, float, int]:
    """Decode and chunk every file; return (wall seconds, CPU seconds, number of chunks).

    Both clocks are reported because the benchmark machine may be shared: CPU time is what this
    process spent on its one core, wall time includes waiting for it.
    """
    chunks = 0
    wall, cpu = time.perf_counter(), time.process_time()
    for path, data in corpus:
        text, _ = decode(data)
        chunks += len(chunk_document("bench", path, text, size=len(data)).chunks)
    return time.perf_counter() - wall, time.process_time() - cpu, chunks


def run_worker(root: Path, corpus: list[tuple[str, bytes]]) -> tuple[float, float, int]:
    """Run the chunk stage's worker function over the corpus on disk, in batches of 880 files."""
    settings = ChunkSettings(10_000_000, 50_000)
    paths = [path for path, _ in corpus]
    chunks = 0
    wall, cpu = time.perf_counter(), time.process_time()
    for i in range(0, len(paths), WORKER_BATCH):
        chunks += parse_batch(("bench", str(root), paths[i : i + WORKER_BATCH], settings))[1].num_rows
    return time.perf_counter() - wall, time.process_time() - cpu, chunks


WORKER_BATCH = 880  # what parse_files gives each of 2 workers for the PowerShell corpus


def parts(corpus: list[tuple[str, bytes]], cpu_seconds: float) -> str:
    """What the parts of code chunking that are not ra's own code cost alone, best of 5 passes on
    one core: tree-sitter's parse of every file, the reference query over every tree, and
    cl100k's count of every chunk text. Their sum bounds chunking from above; what `cpu_seconds`
    (the timed run) spent beyond it is ra's own work (the walk, cut points, ids, hashes).

    It also times one count of each whole file: chunk texts hold each byte of a file about once
    (the document node's outline aside), so counting the file once and slicing the counts by
    line could save at most the difference."""
    import tree_sitter

    from ra_build.document.code import _masked, grammar_of
    from ra_build.document.grammars import GrammarMissing
    from ra_query.sources.languages import language_of

    texts = [decode(data)[0] for _, data in corpus]
    bodies = [
        c.body
        for (path, _), text in zip(corpus, texts, strict=True)
        for c in chunk_document("b", path, text).chunks
    ]
    mb = sum(len(data) for _, data in corpus) / 1e6
    body_mb = sum(len(body.encode("utf-8", "surrogatepass")) for body in bodies) / 1e6
    inputs: list[tuple[tree_sitter.Parser, bytes, tree_sitter.Query | None]] = []
    for path, data in corpus:
        grammar = grammar_of(path, language_of(path))
        if grammar == "yaml":
            continue  # read by its lines, not parsed (code.yaml_entries)
        try:
            parser = parser_for(grammar)
        except GrammarMissing:
            continue
        macros = grammar in GRAMMARS and GRAMMARS[grammar].macros
        query = reference_query(grammar) if grammar in GRAMMARS else None
        inputs.append((parser, _masked(data) if macros else data, query))
    roots = [(parser.parse(data).root_node, query) for parser, data, query in inputs if query is not None]

    def best(work: Callable[[], object]) -> float:
        times = []
        for _ in range(5):
            start = time.process_time()
            work()
            times.append(time.process_time() - start)
        return min(times)

    def parse_all() -> None:
        for parser, data, _ in inputs:
            parser.parse(data)

    def query_all() -> None:
        for root, query in roots:
            tree_sitter.QueryCursor(query).captures(root)

    def count_all() -> None:
        for body in bodies:
            count_tokens(body)

    def count_files() -> None:
        for text in texts:
            count_tokens(text)

    parse_s, query_s, count_s, files_s = best(parse_all), best(query_all), best(count_all), best(count_files)
    bound = parse_s + query_s + count_s
    return (
        f"parts: tree-sitter parse {mb / parse_s:.2f} MB/s, reference query {mb / query_s:.2f} MB/s, "
        f"cl100k counts {mb / count_s:.2f} MB/s (chunk texts {body_mb / mb:.2f}x the files' bytes; "
        f"each file counted once {mb / files_s:.2f} MB/s), together at most {mb / bound:.2f} MB/s; "
        f"ms/MB: parse {parse_s / mb * 1000:.0f}, query {query_s / mb * 1000:.0f}, "
        f"counts {count_s / mb * 1000:.0f}, the rest {(cpu_seconds - bound) / mb * 1000:.0f} "
        f"of {cpu_seconds / mb * 1000:.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tarball", type=Path, default=DEFAULT_TARBALL)
    parser.add_argument("--dir", type=Path, help="use an already unpacked corpus")
    parser.add_argument(
        "--code", action="store_true", help="the code files of --dir (a repository), not its markdown"
    )
    parser.add_argument("--limit", type=int, help="only the first N files (sorted by path)")
    parser.add_argument("--profile", action="store_true", help="print a cProfile summary")
    parser.add_argument("--runs", type=int, default=3, help="passes over the corpus; the best is reported")
    parser.add_argument("--no-record", action="store_true", help="do not write the results")
    parser.add_argument("--worker", action="store_true", help="time the chunk stage's worker function")
    parser.add_argument(
        "--parts",
        action="store_true",
        help="with --code: also time the parse, the reference query and the token counts alone",
    )
    args = parser.parse_args()

    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    count_tokens("warm up the encoding")  # loading cl100k is not part of the figure
    # nor is loading a grammar, or compiling its reference query: once per worker process, not per
    # MB (a query takes 4-34 ms to compile: timed, it was a fifth of fd's 0.28 MB)
    if args.code:
        for language in GRAMMARS:
            parser_for(language)
            reference_query(language)

    with tempfile.TemporaryDirectory(prefix="ra-bench-") as scratch:
        if args.dir is not None:
            root, source = args.dir, str(args.dir)
        else:
            place_corpus(Path(scratch), args.tarball)
            root, source = Path(scratch), str(args.tarball)
        corpus = read_corpus(root, args.limit, CODE_SUFFIXES if args.code else SUFFIXES)

        def measure() -> tuple[float, float, int]:
            return run_worker(root, corpus) if args.worker else run(corpus)

        if args.profile:
            profiler = cProfile.Profile()
            profiler.enable()
            seconds, cpu_seconds, chunks = measure()
            profiler.disable()
            pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
        else:  # the pass that spent least CPU: the others waited for a shared core's caches
            seconds, cpu_seconds, chunks = min((measure() for _ in range(args.runs)), key=lambda m: m[1])

    total_bytes = sum(len(data) for _, data in corpus)
    mb = total_bytes / 1e6
    mb_s = mb / seconds
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    mode = ("worker" if args.worker else "chunk_document") + ("+code" if args.code else "")
    floor = CODE_FLOOR_MB_S if args.code else FLOOR_MB_S
    report = (
        f"{dt.datetime.now().astimezone().isoformat(timespec='seconds')}  "
        f"corpus={Path(source).name} files={len(corpus)} MB={mb:.1f} seconds={seconds:.2f} "
        f"MB/s={mb_s:.2f} files/s={len(corpus) / seconds:.0f} chunks={chunks} "
        f"cpu_seconds={cpu_seconds:.2f} cpu_MB/s={mb / cpu_seconds:.2f} cpu_s/MB={cpu_seconds / mb:.4f} "
        f"load1={load:.2f} mode={mode} rev={git_head()} "
        f"python={platform.python_version()} machine={platform.machine()} "
        f"nproc={os.cpu_count()} cores_used=1 runs={1 if args.profile else args.runs} floor={floor} MB/s "
        f"{'OK' if mb_s >= floor else 'BELOW FLOOR'}"
    )
    if args.parts and args.code:
        report += "  " + parts(corpus, cpu_seconds)
    print(report)
    if not args.no_record and not args.profile:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        with RESULTS.open("a", encoding="utf-8") as out:
            out.write(report + "\n")


if __name__ == "__main__":
    main()

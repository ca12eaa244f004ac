"""Benchmark: what one machine serves, and what sharding costs — the figures of docs/scaling.md.

    .venv/bin/python bench/scaling.py [--artifacts DIR | --dir DIR | --tarball PATH]
                                      [--parts bytes,open,matches] [--rounds N] [--calls N]
                                      [--rows N] [--keep] [--no-record]

The corpus is indexed by the real pipeline (a temp project, ``ra update`` with HOME an empty temp
dir; bench/common.py's ``build_project``) unless ``--artifacts`` names a build to read (read only).
ra is imported from PYTHONPATH first, so ``PYTHONPATH=DIR`` measures a snapshot (``git archive
HEAD ra_build ra_query | tar -x -C DIR``) while the working tree is being edited.
Then, on that build and on tantivy indexes built here from its chunk tables with ra's schema,
analyzer and documents (``ra_build.pipeline.shards.add_rows``), one writer thread per segment:

1. bytes: the index's bytes per chunk and per corpus MB, whole and per file kind, beside the
   chunk tables.
2. open: a fresh process opens the same documents in 1, 2, 4, 8, 16, 32 segments (composed as
   ra's index stage publishes shards: one meta.json listing every shard's segment) through
   ``ra_query.artifacts.store.open_index`` and answers one query with
   ``ra_query.search.pipeline.search``; page cache cold (the variant's files evicted with
   ``posix_fadvise(DONTNEED)``, nothing else) and warm, variants in rotating order each round.
   Medians of the phases the child times itself.
3. matches: warm in one process on the build, ``search()`` of single words whose chunk counts
   are ~10, hundreds, thousands, tens of thousands and 100k+ (picked from the term dictionary
   with a fixed seed; the count is tantivy's), rounds in rotating order; p50/p95 per query, and
   the tantivy search alone.

The fourth part docs/scaling.md reports, the scatter-gather study (K shards each searched alone
and merged, against one index), is finished and no longer here: `git show cc04ca1:bench/scaling.py`
holds it (`--parts shards`, run from a checkout of cc04ca1 with a snapshot of that revision's ra
on PYTHONPATH).

Prints each table with the load average; bench/results/scaling.json keeps the latest figures of
each part (with the date, load, git head and command of the run that measured it), and every
run appends its figures as one JSON line to bench/results/scaling.txt. Temp indexes are removed
unless ``--keep``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DEFAULT_TARBALL, REPO, TREE, build_project, corpus_folder, git_head

# last, after PYTHONPATH, so `PYTHONPATH=SNAPSHOT` measures a snapshot of ra while the working
# tree is being edited; the result records where ra came from
sys.path.append(str(REPO))

import pyarrow as pa
import pyarrow.parquet as pq
import tantivy

import ra_query
from ra_build.pipeline.shards import add_rows
from ra_query.artifacts.schema import build_analyzer, build_schema, register_analyzer, stopwords_of
from ra_query.artifacts.store import open_store
from ra_query.search.compile import Compiler
from ra_query.search.pipeline import SearchParams, search
from ra_query.search.syntax import read_query

RESULTS_JSON = REPO / "bench" / "results" / "scaling.json"
RESULTS_TXT = REPO / "bench" / "results" / "scaling.txt"
SEED = 20261124
SEGMENT_COUNTS = (1, 2, 4, 8, 16, 32)
COLD_QUERY = "remove user account"
HEAP = 512 * 1024 * 1024  # per writer (one thread): one segment per writer, never a flush mid-way
# (label, lowest, highest) chunk counts of the single-word queries of part 3
MATCH_BUCKETS = (
    ("~10", 8, 14),
    ("hundreds", 200, 500),
    ("thousands", 2000, 5000),
    ("tens of thousands", 20_000, 50_000),
    ("100k+", 100_000, 10**9),
)
WORDS_PER_BUCKET = 3
KINDS = ("store", "idx", "pos", "term", "fast", "fieldnorm")


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def pct(values: list[float], q: float) -> float:
    """The q-quantile (0–1) of `values`, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def table(header: list[str], rows: Iterable[list[str]]) -> str:
    """A markdown table (the doc takes it as printed)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


# ---- building indexes ---------------------------------------------------------------------------


def chunk_table(artifacts: Path) -> pa.Table:
    """Every chunk row of tree `ps`, in the order the shards hold them."""
    parts = sorted((artifacts / "chunks" / TREE).glob("part-*.parquet"))
    if not parts:
        raise SystemExit(f"{artifacts}: no chunk tables under chunks/{TREE}/")
    return pa.concat_tables(pq.read_table(p) for p in parts)


def build_segment(path: Path, rows: pa.Table, stemmer: str) -> dict[str, Any]:
    """A one-segment tantivy index of `rows` at `path` (one writer thread, one commit); its meta."""
    path.mkdir(parents=True)
    index = tantivy.Index(build_schema(), path=str(path))
    register_analyzer(index, stemmer)
    writer = index.writer(heap_size=HEAP, num_threads=1)
    add_rows(writer, rows.to_batches(max_chunksize=8192))
    writer.commit()
    writer.wait_merging_threads()
    del writer
    return json.loads((path / "meta.json").read_text(encoding="utf-8"))


def compose(target: Path, sources: list[Path]) -> Path:
    """One index at `target` whose meta.json lists every segment of `sources` (hard links)."""
    target.mkdir(parents=True)
    metas = [json.loads((s / "meta.json").read_text(encoding="utf-8")) for s in sources]
    for source in sources:
        for f in source.iterdir():
            if f.name != "meta.json" and not f.name.startswith("."):
                os.link(f, target / f.name)
    meta = dict(metas[0])
    meta["segments"] = [seg for m in metas for seg in m["segments"]]
    meta["opstamp"] = max(m["opstamp"] for m in metas)
    (target / "meta.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    return target


def segment_count(path: Path) -> int:
    return len(json.loads((path / "meta.json").read_text(encoding="utf-8"))["segments"])


# ---- 1. bytes -----------------------------------------------------------------------------------


def part_bytes(artifacts: Path, corpus_mb: float) -> dict[str, Any]:
    index = artifacts / "index"
    chunks = sum(
        s["max_doc"] for s in json.loads((index / "meta.json").read_text(encoding="utf-8"))["segments"]
    )
    by_kind = dict.fromkeys(KINDS, 0)
    for f in index.iterdir():
        kind = f.suffix.lstrip(".")
        if kind in by_kind:
            by_kind[kind] += f.stat().st_size
    total = sum(f.stat().st_size for f in index.iterdir() if f.is_file())
    tables = sum(f.stat().st_size for f in (artifacts / "chunks").rglob("*") if f.is_file())
    rows = [
        [f".{k}", f"{b / 1e6:.1f}", f"{b / chunks:.0f}", f"{b / 1e6 / corpus_mb:.2f}"]
        for k, b in by_kind.items()
    ]
    rows.append(
        ["**index**", f"{total / 1e6:.1f}", f"{total / chunks:.0f}", f"{total / 1e6 / corpus_mb:.2f}"]
    )
    rows.append(
        [
            "chunk tables (Parquet)",
            f"{tables / 1e6:.1f}",
            f"{tables / chunks:.0f}",
            f"{tables / 1e6 / corpus_mb:.2f}",
        ]
    )
    print(f"\n## index bytes — {chunks:,} chunks, corpus {corpus_mb:.1f} MB, {segment_count(index)} segments")
    print(table(["file kind", "MB", "bytes per chunk", "MB per corpus MB"], rows))
    return {
        "chunks": chunks,
        "corpus_mb": corpus_mb,
        "index_bytes": total,
        "by_kind": by_kind,
        "tables_bytes": tables,
    }


# ---- 2. cold open by segment count --------------------------------------------------------------

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import tantivy
from ra_query.artifacts.schema import register_analyzer
from ra_query.search.pipeline import SearchParams, search
from ra_query.artifacts.store import Store, open_index
t1 = time.perf_counter()
root, query = sys.argv[1], sys.argv[2]
manifest = json.load(open(root + "/manifest.json", encoding="utf-8"))
index = open_index(root + "/index")
register_analyzer(index, manifest.get("stemmer", "english"))
t2 = time.perf_counter()
store = Store(root, manifest, index)
topics = search(store, [query], SearchParams.from_settings(store.search_defaults()))
t3 = time.perf_counter()
# VmHWM, not ru_maxrss: a forked child keeps its parent's ru_maxrss across exec
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(json.dumps({"import": t1 - t0, "open": t2 - t1, "query": t3 - t2, "hits": len(topics[0].hits),
                  "rss_mb": hwm / 1024}))
"""


def evict(directory: Path) -> None:
    """Drop `directory`'s files from the page cache (theirs only: other agents share the machine)."""
    for f in directory.rglob("*"):
        if f.is_file():
            fd = os.open(f, os.O_RDONLY)
            try:
                os.fdatasync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def resident_bytes(directory: Path) -> int | None:
    """Bytes of `directory`'s files in the page cache (util-linux fincore), None without it."""
    if shutil.which("fincore") is None:
        return None
    files = [str(f) for f in directory.rglob("*") if f.is_file()]
    out = subprocess.run(
        ["fincore", "--bytes", "--noheadings", "--output", "RES", *files], capture_output=True, text=True
    ).stdout
    return sum(int(x) for x in out.split() if x.isdigit())


def child_run(variant: Path) -> dict[str, float]:
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(variant), COLD_QUERY], capture_output=True, text=True, cwd=variant
    )
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"open child failed on {variant}:\n{proc.stderr}")
    figures = json.loads(proc.stdout)
    figures["wall"] = wall
    return figures


def part_open(artifacts: Path, rows: pa.Table, stemmer: str, scratch: Path, rounds: int) -> dict[str, Any]:
    print(f"\n## cold open by segment count — building {len(SEGMENT_COUNTS)} variants …", flush=True)
    manifest = artifacts / "manifest.json"
    variants: dict[int, Path] = {}
    build_seconds: dict[int, float] = {}
    n = rows.num_rows
    for count in SEGMENT_COUNTS:
        root = scratch / f"segments-{count}"
        started = time.perf_counter()
        parts = []
        for i in range(count):  # contiguous slices: each segment holds whole documents, in order
            lo, hi = n * i // count, n * (i + 1) // count
            parts.append(root / "parts" / f"{i:02d}")
            build_segment(parts[-1], rows.slice(lo, hi - lo), stemmer)
        compose(root / "index", parts)
        shutil.rmtree(root / "parts")  # the index holds its own links to the segment files
        shutil.copy(manifest, root / "manifest.json")
        build_seconds[count] = time.perf_counter() - started
        variants[count] = root
        got = segment_count(root / "index")
        print(
            f"  {count:>2} segments: built in {build_seconds[count]:.1f} s (meta.json lists {got})",
            flush=True,
        )
        if got != count:
            raise SystemExit(f"expected {count} segments, got {got}")
    samples: dict[tuple[int, str], list[dict[str, float]]] = {
        (c, m): [] for c in variants for m in ("cold", "warm")
    }
    resident_after_evict: dict[int, int | None] = {}
    started_load = load()
    for r in range(rounds):
        order = list(variants)[r % len(variants) :] + list(variants)[: r % len(variants)]
        for count in order:
            evict(variants[count])
            if r == 0:
                resident_after_evict[count] = resident_bytes(variants[count] / "index")
            samples[(count, "cold")].append(child_run(variants[count]))
            samples[(count, "warm")].append(child_run(variants[count]))
    ended_load = load()
    med: dict[str, dict[str, dict[str, float]]] = {}
    out_rows = []
    for count, root in variants.items():
        size = sum(f.stat().st_size for f in (root / "index").iterdir() if f.is_file())
        entry: dict[str, dict[str, float]] = {}
        for mode in ("cold", "warm"):
            runs = samples[(count, mode)]
            entry[mode] = {
                k: statistics.median(s[k] for s in runs)
                for k in ("import", "open", "query", "wall", "rss_mb")
            }
        med[str(count)] = entry
        out_rows.append(
            [
                str(count),
                f"{size / 1e6:.0f}",
                f"{entry['cold']['open'] * 1e3:.1f}",
                f"{entry['cold']['query'] * 1e3:.1f}",
                f"{entry['cold']['wall'] * 1e3:.0f}",
                f"{entry['warm']['open'] * 1e3:.1f}",
                f"{entry['warm']['query'] * 1e3:.1f}",
                f"{entry['warm']['wall'] * 1e3:.0f}",
                f"{entry['warm']['rss_mb']:.0f}",
            ]
        )
    print(
        f"medians of {rounds} fresh processes each, query {COLD_QUERY!r}; "
        f"load {started_load} → {ended_load}; "
        f"resident after eviction: {resident_after_evict}"
    )
    print(
        table(
            [
                "segments",
                "index MB",
                "cold open ms",
                "cold query ms",
                "cold process ms",
                "warm open ms",
                "warm query ms",
                "warm process ms",
                "peak RSS MB",
            ],
            out_rows,
        )
    )
    return {
        "query": COLD_QUERY,
        "rounds": rounds,
        "load": [started_load, ended_load],
        "build_seconds": build_seconds,
        "resident_after_evict": resident_after_evict,
        "medians": med,
    }


# ---- 3. per-query cost by match count -----------------------------------------------------------


def pick_words(index: tantivy.Index, stemmer: str, bodies: list[str]) -> list[tuple[str, str, int]]:
    """(bucket, word, chunk count) for WORDS_PER_BUCKET words of each MATCH_BUCKETS range.

    A word is one written in `bodies` (letters only, 4+ long, not a stop word; its commonest
    spelling) whose term is in the range; chosen with a fixed seed.
    """
    analyzer = build_analyzer(stemmer)
    is_stop = stopwords_of(stemmer)
    spelled: dict[str, dict[str, int]] = {}
    for body in bodies:
        for word in re.findall(r"\b[a-z]{4,}\b", body.lower()):
            if not is_stop(word):
                forms = spelled.setdefault(word, {})
                forms[word] = forms.get(word, 0) + 1
    surface: dict[str, tuple[int, str]] = {}
    for word, forms in spelled.items():
        tokens = analyzer.analyze(word)
        if len(tokens) == 1:
            count = forms[word]
            if count > surface.get(tokens[0], (0, ""))[0]:
                surface[tokens[0]] = (count, word)
    terms = index.searcher().terms_with_prefix("text", "")
    rng = random.Random(SEED)
    picked: list[tuple[str, str, int]] = []
    for label, low, high in MATCH_BUCKETS:
        fits = sorted((surface[t][1], c) for t, c in terms if low <= c <= high and t in surface)
        for word, c in rng.sample(fits, min(WORDS_PER_BUCKET, len(fits))):
            picked.append((label, word, c))
    return picked


def part_matches(artifacts: Path, calls: int) -> dict[str, Any]:
    store = open_store(artifacts)
    params = SearchParams.from_settings(store.search_defaults())
    sample = chunk_table(artifacts).column("body")
    rng = random.Random(SEED)
    bodies = [str(sample[i]) for i in sorted(rng.sample(range(len(sample)), min(len(sample), 40_000)))]
    words = pick_words(store.index, store.stemmer, bodies)
    top = [w for label, w, _ in words if label == "100k+"]
    queries = [(label, w) for label, w, _ in words]
    if len(top) >= 2:
        queries.append(("100k+", " ".join(top)))  # a sentence of common words: the union of theirs
    searcher = store.index.searcher()
    compiled: dict[str, Any] = {}
    counts: dict[str, int] = {}
    for _label, q in queries:
        node, _note = read_query(q)
        assert node is not None
        compiled[q] = compiler_for(store.index, searcher, params, store.stemmer).compile(node)
        counts[q] = search(store, [q], params)[0].total_matches
    for _label, q in queries:  # warm-up: page cache and the analyzer's caches
        search(store, [q], params)
    full: dict[str, list[float]] = {q: [] for _l, q in queries}
    bare: dict[str, list[float]] = {q: [] for _l, q in queries}
    started_load = load()
    for r in range(calls):
        order = queries[r % len(queries) :] + queries[: r % len(queries)]
        for _label, q in order:
            t0 = time.perf_counter()
            search(store, [q], params)
            t1 = time.perf_counter()
            searcher.search(compiled[q], limit=params.candidate_limit, count=True)
            t2 = time.perf_counter()
            full[q].append((t1 - t0) * 1e3)
            bare[q].append((t2 - t1) * 1e3)
    ended_load = load()
    rows = []
    out = []
    for label, q in queries:
        p50, p95, b50 = statistics.median(full[q]), pct(full[q], 0.95), statistics.median(bare[q])
        rows.append([label, f"`{q}`", f"{counts[q]:,}", f"{p50:.2f}", f"{p95:.2f}", f"{b50:.2f}"])
        out.append(
            {
                "bucket": label,
                "query": q,
                "matches": counts[q],
                "p50_ms": p50,
                "p95_ms": p95,
                "tantivy_p50_ms": b50,
            }
        )
    print(
        f"\n## per-query cost by match count — warm, one process, {calls} calls each; "
        f"load {started_load} → {ended_load}"
    )
    print(
        table(
            ["matches", "query", "chunks matched", "search p50 ms", "search p95 ms", "tantivy alone p50 ms"],
            rows,
        )
    )
    return {"calls": calls, "load": [started_load, ended_load], "queries": out}


def compiler_for(
    index: tantivy.Index, searcher: tantivy.Searcher, params: SearchParams, stemmer: str
) -> Compiler:
    """The compiler of ra's first search pass (no relaxed or fuzzy retry)."""
    return Compiler(
        schema=index.schema,
        analyzer=build_analyzer(stemmer),
        boosts=params.boosts,
        searcher=searcher,
        fuzzy_distance=params.fuzzy_distance,
        phrase_boost=params.phrase_boost,
        is_stopword=stopwords_of(stemmer) if params.stopwords else None,
    )


# ---- main ---------------------------------------------------------------------------------------


def corpus_artifacts(args: argparse.Namespace, scratch: Path) -> tuple[Path, float]:
    """The build to measure and its corpus size in MB."""
    if args.artifacts is not None:
        artifacts = args.artifacts.resolve()
        manifest = json.loads((artifacts / "manifest.json").read_text(encoding="utf-8"))
        corpus = Path(manifest["trees"][TREE]["sources"]["root"])
    else:
        corpus = corpus_folder(args.dir, scratch / "corpus", args.tarball)
        build = scratch / "build"
        artifacts, _seconds, _summary = build_project(build / "project", build / "home", corpus)
    mb = sum(f.stat().st_size for f in corpus.rglob("*.md") if f.is_file()) / 1e6
    return artifacts, mb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--artifacts", type=Path, help="a built .ra directory to read (never written)")
    source.add_argument("--dir", type=Path, help="an unpacked corpus folder")
    source.add_argument("--tarball", type=Path, default=DEFAULT_TARBALL)
    parser.add_argument("--parts", default="bytes,open,matches")
    parser.add_argument("--rounds", type=int, default=15, help="fresh processes per segment count and mode")
    parser.add_argument("--calls", type=int, default=60, help="warm calls per query of part 3")
    parser.add_argument("--rows", type=int, help="only the first N chunk rows for part 2 (a quick check)")
    parser.add_argument("--keep", action="store_true", help="keep the temp indexes (path printed)")
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args(argv)
    parts = set(args.parts.split(","))
    scratch = Path(tempfile.mkdtemp(prefix="ra-scaling-"))
    started = time.perf_counter()
    result: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "git": git_head(),
        "ra_from": str(Path(ra_query.__file__).resolve().parent.parent),
        "python": platform.python_version(),
        "nproc": os.cpu_count(),
        "load_start": load(),
        "command": "python bench/scaling.py " + " ".join(argv if argv is not None else sys.argv[1:]),
    }
    try:
        artifacts, corpus_mb = corpus_artifacts(args, scratch)
        result["artifacts"] = str(artifacts)
        stemmer = json.loads((artifacts / "manifest.json").read_text(encoding="utf-8")).get(
            "stemmer", "english"
        )

        def rows() -> pa.Table:
            whole = chunk_table(artifacts)
            return whole.slice(0, args.rows) if args.rows else whole

        steps: list[tuple[str, Callable[[], dict[str, Any]]]] = [
            ("bytes", lambda: part_bytes(artifacts, corpus_mb)),
            ("open", lambda: part_open(artifacts, rows(), stemmer, scratch, args.rounds)),
            ("matches", lambda: part_matches(artifacts, args.calls)),
        ]
        for name, step in steps:
            if name in parts:
                result[name] = {"date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), **step()}
    finally:
        if args.keep:
            print(f"\nkept {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    result["load_end"] = load()
    result["seconds"] = round(time.perf_counter() - started, 1)
    print(
        f"\n{result['date']} git {result['git']} (ra from {result['ra_from']}) "
        f"load {result['load_start']} → {result['load_end']}, {result['seconds']} s"
    )
    if not args.no_record:
        # the latest figures of every part: a run of some parts keeps the others' (each part has
        # its date; the run's git head and source go with it)
        latest: dict[str, Any] = {}
        if RESULTS_JSON.exists():
            latest = json.loads(RESULTS_JSON.read_text(encoding="utf-8"))
        run = {k: v for k, v in result.items() if k not in ("bytes", "open", "matches")}
        for name in ("bytes", "open", "matches"):
            if name in result:
                latest[name] = {**result[name], "run": run}
        RESULTS_JSON.write_text(json.dumps(latest, indent=2) + "\n", encoding="utf-8")
        with RESULTS_TXT.open("a", encoding="utf-8") as f:
            f.write(json.dumps(result, separators=(",", ":")) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

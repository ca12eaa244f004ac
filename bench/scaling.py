"""Benchmark: what one machine serves, and what sharding costs — the figures of docs/scaling.md.

    .venv/bin/python bench/scaling.py [--artifacts DIR | --dir DIR | --tarball PATH]
                                      [--parts bytes,open,matches,shards] [--rounds N] [--calls N]
                                      [--headings N] [--rows N] [--keep] [--no-record]

The corpus is indexed by the real pipeline (a temp project, ``ra update`` with HOME an empty temp
dir; bench/query.py's ``build_index``) unless ``--artifacts`` names a build to read (read only).
ra is imported from PYTHONPATH first, so ``PYTHONPATH=DIR`` measures a snapshot (``git archive
HEAD ra_build ra_query | tar -x -C DIR``) while the working tree is being edited.
Then, on that build and on tantivy indexes built here from its chunk tables with ra's schema,
analyzer and documents (``ra_build.pipeline.shards._documents``), one writer thread per segment:

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
4. shards: the chunks split by document into 32 base shards (crc32 of doc_id); K = 2..32 shards
   are unions of them. For every query (bench/results/query_set.txt and sampled headings),
   compiled as ra compiles it, (i) exact: one index listing all segments (global statistics);
   (ii) naive: each shard searched alone for its top 10, merged by score; (iii) per-shard
   statistics: the shards' document frequencies and doc counts summed (checked equal to the
   global ones) and each shard's top 10 scored with them, merged. Tie-aware overlap@10 and the
   score difference of (ii) and (iii) against (i).

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
import tarfile
import tempfile
import time
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
from common import git_head  # noqa: E402 — bench/ is not a package
from query import DEFAULT_DIR, DEFAULT_TARBALL, QUERY_SET, TREE, build_index  # noqa: E402

# after PYTHONPATH (bench/query.py put the repo first), so `PYTHONPATH=SNAPSHOT` measures a
# snapshot of ra while the working tree is being edited; the result records where ra came from
while str(REPO) in sys.path:
    sys.path.remove(str(REPO))
sys.path.append(str(REPO))

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
import tantivy  # noqa: E402

import ra_query  # noqa: E402
from ra_query.artifacts.schema import build_analyzer, build_schema, register_analyzer, stopwords_of  # noqa: E402
from ra_query.artifacts.store import open_store  # noqa: E402
from ra_query.search.compile import Compiler  # noqa: E402
from ra_query.search.pipeline import SearchParams, search  # noqa: E402
from ra_query.search.syntax import read_query  # noqa: E402

try:  # the index stage's chunk row → tantivy document; private, so a move must be noticed here
    from ra_build.pipeline.shards import _documents as documents_of  # pyright: ignore[reportPrivateUsage]
except ImportError:  # pragma: no cover
    raise SystemExit(
        "ra_build.pipeline.shards._documents moved — point bench/scaling.py at its new home"
    ) from None

RESULTS_JSON = REPO / "bench" / "results" / "scaling.json"
RESULTS_TXT = REPO / "bench" / "results" / "scaling.txt"
SEED = 20261124
SEGMENT_COUNTS = (1, 2, 4, 8, 16, 32)
BASE_SHARDS = 32
SHARD_COUNTS = (2, 4, 8, 16, 32)
TOP = 10
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
    schema = index.schema
    for batch in rows.to_batches(max_chunksize=8192):
        for doc in documents_of(batch, schema):
            writer.add_document(doc)
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


def open_plain(path: Path, stemmer: str) -> tantivy.Index:
    index = tantivy.Index.open(str(path))
    register_analyzer(index, stemmer)
    return index


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


# ---- 4. scatter-gather --------------------------------------------------------------------------


def query_set(rows: pa.Table, headings: int) -> list[tuple[str, str]]:
    """bench/query.py's mixed set (when written) and `headings` distinct headings of sampled chunks."""
    out: list[tuple[str, str]] = []
    if QUERY_SET.exists():
        for line in QUERY_SET.read_text(encoding="utf-8").splitlines():
            kind, _, text = line.partition("\t")
            if text:
                out.append((kind, text))
    titles = rows.column("title").to_pylist()
    rng = random.Random(SEED)
    seen: set[str] = set()
    for i in rng.sample(range(len(titles)), len(titles)):
        title = (titles[i] or "").strip()
        if title and title not in seen:
            seen.add(title)
            out.append(("heading", title))
            if len(seen) >= headings:
                break
    return out


def top_ids(searcher: tantivy.Searcher, query: tantivy.Query, limit: int) -> list[tuple[float, str]]:
    hits = searcher.search(query, limit=limit).hits
    return [(float(score), str(searcher.doc(addr).get_first("id"))) for score, addr in hits]


def exact_scores(
    searcher: tantivy.Searcher, query: tantivy.Query
) -> tuple[list[tuple[float, str]], dict[str, float]]:
    """The exact top TOP and the exact score of every chunk that could tie its last one."""
    limit = 100
    while True:
        hits = top_ids(searcher, query, limit)
        if (
            len(hits) < limit
            or len(hits) <= TOP
            or hits[-1][0] < hits[TOP - 1][0] - tie_eps(hits[TOP - 1][0])
        ):
            return hits[:TOP], {i: s for s, i in hits}
        limit *= 10


def tie_eps(score: float) -> float:
    return 1e-5 * max(1.0, abs(score))


def overlap(got: list[tuple[float, str]], exact: list[tuple[float, str]], scores: dict[str, float]) -> float:
    """Tie-aware overlap@TOP: a result counts when it is in the exact top or ties its last score."""
    if not exact:
        return 1.0
    last = exact[-1][0]
    hits = sum(1 for _s, i in got[:TOP] if scores.get(i, -math.inf) >= last - tie_eps(last))
    return min(hits, len(exact)) / len(exact)


def merged(per_shard: list[list[tuple[float, str]]]) -> list[tuple[float, str]]:
    return sorted((h for hits in per_shard for h in hits), key=lambda h: (-h[0], h[1]))[:TOP]


def part_shards(
    artifacts: Path, rows: pa.Table, stemmer: str, scratch: Path, headings: int
) -> dict[str, Any]:
    print(f"\n## scatter-gather — building {BASE_SHARDS} base shards …", flush=True)
    doc_ids = rows.column("doc_id").to_pylist()
    base_of = [zlib.crc32(d.encode("utf-8")) % BASE_SHARDS for d in doc_ids]
    started = time.perf_counter()
    base_paths: list[Path] = []
    for b in range(BASE_SHARDS):
        mask = pa.array([x == b for x in base_of])
        base_paths.append(scratch / "base" / f"{b:02d}")
        build_segment(base_paths[-1], rows.filter(mask), stemmer)
    print(f"  built in {time.perf_counter() - started:.1f} s", flush=True)
    exact_index = open_plain(compose(scratch / "exact", base_paths), stemmer)
    exact = exact_index.searcher()
    build = open_store(artifacts)  # the build ra made: its scores must equal the composed index's
    build_searcher = build.index.searcher()
    params = SearchParams.from_settings(build.search_defaults())
    shards: dict[int, list[tantivy.Searcher]] = {}
    shard_docs: dict[int, list[list[str]]] = {}
    for k in SHARD_COUNTS:
        members = [[base_paths[b] for b in range(BASE_SHARDS) if b % k == j] for j in range(k)]
        shards[k] = [
            open_plain(compose(scratch / f"k{k}" / f"{j:02d}", m), stemmer).searcher()
            for j, m in enumerate(members)
        ]
        by_shard: list[set[str]] = [set() for _ in range(k)]
        for d, b in zip(doc_ids, base_of, strict=True):
            by_shard[b % k].add(d)
        shard_docs[k] = [sorted(s) for s in by_shard]
    queries = query_set(rows, headings)
    stats: dict[int, dict[str, list[float]]] = {
        k: {
            "naive_overlap": [],
            "naive_top1": [],
            "naive_diff": [],
            "naive_rel": [],
            "global_overlap": [],
            "global_diff": [],
        }
        for k in SHARD_COUNTS
    }
    df_checks = df_mismatches = 0
    build_diff = 0.0
    build_pairs = 0
    used = skipped = 0
    started_load = load()
    fields = ("text", "title", "path", "path_components")
    for _kind, text in queries:
        node, _note = read_query(text)
        if node is None:
            skipped += 1
            continue
        compiler = compiler_for(exact_index, exact, params, stemmer)
        query = compiler.compile(node)
        if query is None:
            skipped += 1
            continue
        top, scores = exact_scores(exact, query)
        if not top:
            skipped += 1
            continue
        used += 1
        by_id = {i: s for s, i in top_ids(build_searcher, query, TOP)}
        pairs = [abs(s - by_id[i]) for s, i in top if i in by_id]
        build_pairs += len(pairs)
        build_diff = max([build_diff, *pairs])
        for k in SHARD_COUNTS:
            got = merged([top_ids(s, query, TOP) for s in shards[k]])
            st = stats[k]
            st["naive_overlap"].append(overlap(got, top, scores))
            st["naive_top1"].append(
                float(bool(got) and scores.get(got[0][1], -math.inf) >= top[0][0] - tie_eps(top[0][0]))
            )
            for s, i in got:
                if i in scores:
                    st["naive_diff"].append(abs(s - scores[i]))
                    st["naive_rel"].append(abs(s - scores[i]) / scores[i] if scores[i] else 0.0)
            # (iii): what the coordinator sums equals the global statistics …
            for token in compiler.terms:
                for field in fields:
                    df_checks += 1
                    if sum(s.doc_freq(field, token) for s in shards[k]) != exact.doc_freq(field, token):
                        df_mismatches += 1
            if sum(s.num_docs for s in shards[k]) != exact.num_docs:
                df_mismatches += 1
            # … and each shard's top TOP scored with them: the shard's own documents, searched
            # in the index whose statistics are the sum (a filter that scores 0 keeps the score)
            per_shard = []
            for ids in shard_docs[k]:
                only = tantivy.Query.const_score_query(
                    tantivy.Query.term_set_query(exact_index.schema, "doc_id", ids), 0.0
                )
                both = tantivy.Query.boolean_query([(tantivy.Occur.Must, query), (tantivy.Occur.Must, only)])
                per_shard.append(top_ids(exact, both, TOP))
            got = merged(per_shard)
            st["global_overlap"].append(overlap(got, top, scores))
            st["global_diff"] += [abs(s - scores[i]) for s, i in got if i in scores]
    ended_load = load()
    rows_out = []
    out: dict[str, Any] = {}
    n = rows.num_rows
    for k in SHARD_COUNTS:
        st = stats[k]
        no = st["naive_overlap"]
        entry = {
            "chunks_per_shard": n // k,
            "naive_overlap_mean": statistics.fmean(no),
            "naive_overlap_min": min(no),
            "naive_queries_exact": sum(1 for x in no if x == 1.0) / len(no),
            "naive_top1": statistics.fmean(st["naive_top1"]),
            "naive_diff_mean": statistics.fmean(st["naive_diff"]),
            "naive_diff_max": max(st["naive_diff"]),
            "naive_rel_mean": statistics.fmean(st["naive_rel"]),
            "naive_rel_max": max(st["naive_rel"]),
            "global_overlap_mean": statistics.fmean(st["global_overlap"]),
            "global_diff_max": max(st["global_diff"]),
        }
        out[str(k)] = entry
        rows_out.append(
            [
                str(k),
                f"{n // k:,}",
                f"{entry['naive_overlap_mean']:.3f}",
                f"{entry['naive_queries_exact']:.2f}",
                f"{entry['naive_top1']:.2f}",
                f"{entry['naive_diff_mean']:.3f} / {entry['naive_diff_max']:.2f}",
                f"{entry['naive_rel_mean'] * 100:.1f}% / {entry['naive_rel_max'] * 100:.0f}%",
                f"{entry['global_overlap_mean']:.3f}",
                f"{entry['global_diff_max']:.1e}",
            ]
        )
    print(
        f"{used} queries with a match ({skipped} without, left out); load {started_load} → {ended_load}; "
        f"document frequencies summed over shards ≠ global: {df_mismatches} of {df_checks}; "
        f"ra's build vs the {BASE_SHARDS}-segment index: max score difference {build_diff:.1e} "
        f"over {build_pairs} results of both"
    )
    print(
        table(
            [
                "shards K",
                "chunks per shard",
                "naive overlap@10",
                "queries with naive = exact",
                "naive top 1 = exact",
                "naive score diff mean / max",
                "relative mean / max",
                "per-shard stats overlap@10",
                "per-shard stats max diff",
            ],
            rows_out,
        )
    )
    return {
        "queries": used,
        "skipped": skipped,
        "load": [started_load, ended_load],
        "df_checks": df_checks,
        "df_mismatches": df_mismatches,
        "build_vs_exact_max_diff": build_diff,
        "build_vs_exact_pairs": build_pairs,
        "per_k": out,
    }


# ---- main ---------------------------------------------------------------------------------------


def corpus_artifacts(args: argparse.Namespace, scratch: Path) -> tuple[Path, float]:
    """The build to measure and its corpus size in MB."""
    if args.artifacts is not None:
        artifacts = args.artifacts.resolve()
        manifest = json.loads((artifacts / "manifest.json").read_text(encoding="utf-8"))
        corpus = Path(manifest["trees"][TREE]["sources"]["root"])
    else:
        corpus = args.dir
        if corpus is None:
            if DEFAULT_DIR.is_dir():
                corpus = DEFAULT_DIR
            else:
                corpus = scratch / "corpus"
                with tarfile.open(args.tarball) as tar:
                    tar.extractall(corpus, filter="data")
        artifacts, _seconds = build_index(corpus.resolve(), scratch / "build")
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
    parser.add_argument("--parts", default="bytes,open,matches,shards")
    parser.add_argument("--rounds", type=int, default=15, help="fresh processes per segment count and mode")
    parser.add_argument("--calls", type=int, default=60, help="warm calls per query of part 3")
    parser.add_argument("--headings", type=int, default=200, help="sampled headings added to the query set")
    parser.add_argument(
        "--rows", type=int, help="only the first N chunk rows for parts 2 and 4 (a quick check)"
    )
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
        rows = chunk_table(artifacts) if parts & {"open", "shards"} else None
        if rows is not None and args.rows:
            rows = rows.slice(0, args.rows)
        steps: list[tuple[str, Callable[[], dict[str, Any]]]] = [
            ("bytes", lambda: part_bytes(artifacts, corpus_mb)),
            ("open", lambda: part_open(artifacts, rows, stemmer, scratch, args.rounds)),  # type: ignore[arg-type]
            ("matches", lambda: part_matches(artifacts, args.calls)),
            ("shards", lambda: part_shards(artifacts, rows, stemmer, scratch, args.headings)),  # type: ignore[arg-type]
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
        run = {k: v for k, v in result.items() if k not in ("bytes", "open", "matches", "shards")}
        for name in ("bytes", "open", "matches", "shards"):
            if name in result:
                latest[name] = {**result[name], "run": run}
        RESULTS_JSON.write_text(json.dumps(latest, indent=2) + "\n", encoding="utf-8")
        with RESULTS_TXT.open("a", encoding="utf-8") as f:
            f.write(json.dumps(result, separators=(",", ":")) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

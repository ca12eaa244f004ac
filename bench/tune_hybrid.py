"""Benchmark: how hybrid search fuses BM25 with meaning — the variants its defaults were chosen from.

    .venv/bin/python bench/tune_hybrid.py [--work DIR] [--tldr DIR] [--sets reworded,scifact,cacm]

Builds (or brings up to date) SciFact, CACM and the tldr pages with `semantic = true` under
`--work` (bench/quality.py's corpora), then searches each with every variant: min-max fusion
at several weights, reciprocal-rank fusion (k = 60), other normalisations of the two score
lists (`top`: each score over the list's best; `raw`: as they are), and dense only. Reworded
questions: hit@1 / hit@5 / mean results of the default search (`ra-query search QUESTION`);
judged sets: the ranking (top 100, no cutoff) as bench/quality.py scores it. A variant replaces
`hybrid.fuse` for its run; everything else is the shipped pipeline (50 candidates a side).

Prints a table and appends it to bench/results/hybrid_tuning.txt.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import quality
from common import REPO, git_head, run_ra, write_project

from ra_query.artifacts.store import open_store
from ra_query.search import hybrid
from ra_query.search.pipeline import search_topic

Found = Sequence[tuple[Any, float]]  # (record, score), best first
Fuse = Callable[[Found, Found, float], list[hybrid.Fused]]
SHIPPED = hybrid.fuse


def normalised_fuse(bm25_norm: str, dense_norm: str) -> Fuse:
    """Fusion by a weighted sum of each list's scores normalised by `minmax`, `top` or `raw`."""

    def scaled(found: Sequence[tuple[Any, float]], how: str) -> list[float]:
        scores = [score for _, score in found]
        low, high = min(scores), max(scores)
        if how == "minmax":
            return [(s - low) / (high - low) if high > low else 1.0 for s in scores]
        if how == "top":
            return [s / high if high > 0 else 0.0 for s in scores]
        return scores

    def fuse(bm25: Found, dense: Found, weight: float) -> list[hybrid.Fused]:
        return _combine(((bm25, 1.0 - weight, bm25_norm), (dense, weight, dense_norm)), scaled)

    return fuse


def rrf(k: int = 60) -> Fuse:
    """Reciprocal-rank fusion: share / (k + rank) from each list."""

    def reciprocal(found: Found, _how: str) -> list[float]:
        return [1.0 / (k + rank) for rank in range(1, len(found) + 1)]

    def fuse(bm25: Found, dense: Found, weight: float) -> list[hybrid.Fused]:
        return _combine(((bm25, 1.0 - weight, ""), (dense, weight, "")), reciprocal)

    return fuse


def _combine(
    sides: tuple[tuple[Found, float | Callable[[Any], float], str], ...],
    values: Callable[[Found, str], list[float]],
) -> list[hybrid.Fused]:
    """Each side's `values` times its share (a number, or one per record: a code chunk's dense
    share is not a docs chunk's), summed per chunk (as `hybrid.fuse` does)."""
    parts: dict[str, list[float]] = {}
    records: dict[str, Any] = {}
    ranks: dict[str, list[int]] = {}
    for side, (found, share, how) in enumerate(sides):
        if not found:
            continue
        for rank, ((record, _), value) in enumerate(zip(found, values(found, how), strict=True), start=1):
            entry = parts.setdefault(record.id, [0.0, 0.0])
            entry[side] = max(entry[side], (share(record) if callable(share) else share) * value)
            records.setdefault(record.id, record)
            ranked = ranks.setdefault(record.id, [0, 0])
            ranked[side] = ranked[side] or rank
    fused = [hybrid.Fused(records[i], sum(p), ranks[i][0], ranks[i][1]) for i, p in parts.items()]
    fused.sort(key=lambda f: (-f.score, f.record.id))
    return fused


WEIGHTS = (0.3, 0.5, 0.55, 0.6, 0.7)
VARIANTS: list[tuple[str, float, Fuse]] = [
    ("lexical (BM25 alone)", 0.0, SHIPPED),
    *((f"min-max, weight {w}" + (" (default)" if w == 0.55 else ""), w, SHIPPED) for w in WEIGHTS),
    ("RRF k=60, weight 0.5", 0.5, rrf()),
    ("RRF k=60, weight 0.7", 0.7, rrf()),
    ("BM25 over its best + dense min-max, 0.55", 0.55, normalised_fuse("top", "minmax")),
    ("BM25 over its best + dense raw cosine, 0.55", 0.55, normalised_fuse("top", "raw")),
    ("BM25 min-max + dense raw cosine, 0.55", 0.55, normalised_fuse("minmax", "raw")),
    ("dense alone", 1.0, SHIPPED),
]


def built(name: str, source: Path, work: Path) -> Any:
    """The semantic index of `source` as tree `name` under `work`, brought up to date by `ra update`."""
    project = work / f"{name}-project"
    write_project(project, source, name, {"settings": {"semantic": "true"}})
    (work / "home").mkdir(parents=True, exist_ok=True)
    seconds, summary = run_ra(project, work / "home", "update")
    print(f"{name}: {summary} ({seconds:.1f} s)", flush=True)
    return open_store(project / ".ra")


def reworded_row(store: Any, weight: float) -> str:
    params = quality.default_params(store, "hybrid" if weight else "lexical")._replace(semantic_weight=weight)
    items = quality.questions()
    hit1 = hit5 = 0
    results: list[int] = []
    for item in items:
        paths = [hit.record.path for hit in search_topic(store, item["question"], params).hits]
        hit1 += bool(paths[:1]) and paths[0] in item["answers"]
        hit5 += any(p in item["answers"] for p in paths[:5])
        results.append(len(paths))
    n = len(items)
    return f"{hit1 / n:.3f} / {hit5 / n:.3f} / {statistics.fmean(results):.2f}"


def judged_row(name: str, store: Any, weight: float) -> str:
    spec = quality.SETS[name]
    params = quality.ranking_params(store, "hybrid" if weight else "lexical")._replace(semantic_weight=weight)
    run, _failed = quality.ranking_run(store, spec["queries"](), params)
    main = spec["main"]
    return f"{quality.evaluate(spec['qrels'](), run, {main: spec['measures'][main]})[main]:.4f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/ra-bench-tune-hybrid"))
    parser.add_argument("--tldr", type=Path, help="the English tldr pages (the pages/ folder)")
    parser.add_argument("--sets", default="reworded,scifact,cacm")
    args = parser.parse_args()
    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    args.work.mkdir(parents=True, exist_ok=True)
    stores: dict[str, Any] = {}
    for name in sets:
        if name == "reworded":
            stores[name] = built("tldr", quality.tldr_pages(args.tldr, args.work), args.work)
        else:
            source = args.work / name / "docs"
            if not source.is_dir():
                quality.write_tree(quality.SETS[name]["docs"](), source)
            stores[name] = built(name, source, args.work)
    load_before = os.getloadavg()
    titles = {"reworded": "reworded hit@1 / hit@5 / results", "scifact": "SciFact nDCG@10"}
    titles["cacm"] = "CACM MAP"
    lines = [
        f"hybrid tuning at {git_head()}, {time.strftime('%Y-%m-%d %H:%M')}, load {load_before[0]:.2f}",
        "",
        "| variant | " + " | ".join(titles[s] for s in sets) + " |",
        "|---|" + "---|" * len(sets),
    ]
    print("\n".join(lines), flush=True)
    try:
        for label, weight, fuse in VARIANTS:
            hybrid.fuse = fuse
            cells = [
                reworded_row(stores[s], weight) if s == "reworded" else judged_row(s, stores[s], weight)
                for s in sets
            ]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
            print(lines[-1], flush=True)
    finally:
        hybrid.fuse = SHIPPED
    text = "\n".join(lines) + "\n"
    with open(REPO / "bench" / "results" / "hybrid_tuning.txt", "a", encoding="utf-8") as out:
        out.write(text + "\n")


if __name__ == "__main__":
    main()

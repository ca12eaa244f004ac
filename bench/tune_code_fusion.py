"""Benchmark: other ways to fuse BM25 with meaning, and to read the dense side, on code questions.

    .venv/bin/python bench/tune_code_fusion.py --work DIR [--variants NAME,...] [--no-record]

Opens the indexes `bench/code_search.py --semantic` built under `--work` (`DIR/NAME-project/.ra`)
and searches every question of bench/questions/code_NAME.jsonl and docs_NAME.jsonl with
`ra-query search`'s defaults, once per variant, scored as code_search.py scores them (by ra
eval). A variant replaces `hybrid.fuse` (how the two lists' scores are scaled and summed) or
`Vectors._nearest` (how a chunk's nearness is scored) for its run; everything else is the
shipped pipeline. The variants:

- `shipped`: min-max fusion, 0.45 to meaning for a code chunk, 0.55 for a docs chunk;
- `dense^0.5`, `dense^2`, `bm25^2`: a side's min-max score raised to that power (the dense
  side's middle ranks lifted or lowered);
- `bm25/max`: BM25's scores over its best, not min-max;
- `z`, `dense z`: each side (or the dense one) scaled from its mean - 3 sd to mean + 3 sd;
- `both +0.1`: a chunk both sides found gains 0.1;
- `rrf 10`, `rrf 60`: reciprocal-rank fusion, 1 at the first rank;
- `centred`, `centred 0.5`: hubness (a chunk near every question: a run of `var`s naming every
  help function) — the cosine of the query and the chunk less the tree's mean vector
  (Suzuki et al. 2013), alone or half and half with the cosine;
- `hub -0.3`, `-0.6`, `-1`: the cosine less that share of the chunk's cosine to the mean.

Prints definition and file hit@5 and tokens of the code questions, section hit@5 of the docs
questions, all ten codebases and the two groups (the six of before; the four asked from the
docs alone), and the definitions found per codebase; appends the table to
bench/results/code_tuning.txt.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import quality
import tune_code
import tune_hybrid
from code_search import CORPORA, QUESTIONS, questions
from common import REPO, git_head

from ra_query.artifacts import vectors
from ra_query.search import hybrid

RESULTS_TXT = REPO / "bench" / "results" / "code_tuning.txt"
FROM_DOCS = ("starlette", "cli", "uvicorn", "task")  # asked from the docs alone, before the code was read

Found = Sequence[tuple[Any, float]]
Fuse = Callable[..., list[hybrid.Fused]]
Nearest = Callable[..., list[tuple[str, float]]]
SHIPPED_FUSE = hybrid.fuse
SHIPPED_NEAREST = vectors.Vectors._nearest


def scaled_fuse(
    bm25_norm: str = "minmax", dense_norm: str = "minmax", powers: tuple[float, float] = (1.0, 1.0),
    both: float = 0.0, rrf: int = 0,
) -> Fuse:  # fmt: skip
    """`hybrid.fuse` with each side's scores scaled by `*_norm` (`minmax`, `max`, `z`) or by rank
    (`rrf`: k), raised to `powers` (BM25's, the dense side's), and `both` added to a chunk both
    sides found; summed as bench/tune_hybrid.py's variants are (`tune_hybrid._combine`)."""

    def values(found: Found, side: str) -> list[float]:
        scores = [score for _, score in found]
        power = powers[side == "dense"]
        if rrf:
            return [((rrf + 1) / (rrf + rank)) ** power for rank in range(1, len(scores) + 1)]
        low, high = min(scores), max(scores)
        norm = dense_norm if side == "dense" else bm25_norm
        if norm == "max":
            scaled = [s / high if high > 0 else 1.0 for s in scores]
        elif norm == "z":
            mean, sd = statistics.fmean(scores), statistics.pstdev(scores) or 1.0
            scaled = [min(1.0, max(0.0, (s - mean + 3 * sd) / (6 * sd))) for s in scores]
        else:
            scaled = [(s - low) / (high - low) if high > low else 1.0 for s in scores]
        return [value**power for value in scaled]

    def fuse(
        bm25: Found, dense: Found, weight: float, code_weight: float | None = None
    ) -> list[hybrid.Fused]:
        def dense_share(record: Any) -> float:
            return code_weight if code_weight is not None and record.kind == "code" else weight

        fused = tune_hybrid._combine(
            ((bm25, lambda r: 1.0 - dense_share(r), "bm25"), (dense, dense_share, "dense")), values
        )
        if both:
            fused = [f._replace(score=f.score + both) if f.bm25_rank and f.dense_rank else f for f in fused]
            fused.sort(key=lambda f: (-f.score, f.record.id))
        return fused

    return fuse


def hub_nearest(share: float, centred: bool) -> Nearest:
    """`Vectors._nearest` scoring a row by its cosine to the query with the tree's mean vector
    taken out (`centred`: the centred cosine, `share` of it and the rest the plain cosine), else
    by the cosine less `share` of the row's cosine to the mean."""
    import numpy as np

    def nearest(self: vectors.Vectors, query: Any, k: int, trees: Sequence[str]) -> list[tuple[str, float]]:
        kept: dict[str, tuple[Any, Any, Any]] = self.__dict__.setdefault("_hubs", {})
        best: dict[str, float] = {}
        for tree, rows in self.rows.items():
            if (trees and tree not in trees) or not len(rows):
                continue
            if tree not in kept:
                mean = rows.mean(axis=0)
                to_mean = rows @ mean
                norms = np.sqrt(np.maximum((rows * rows).sum(axis=1) - 2 * to_mean + mean @ mean, 1e-9))
                kept[tree] = (mean, to_mean, norms)
            mean, to_mean, norms = kept[tree]
            plain = rows @ query
            if centred:
                size = np.sqrt(max(float(query @ query - 2 * (query @ mean) + mean @ mean), 1e-9))
                scores = share * (plain - to_mean - float(query @ mean) + float(mean @ mean)) / (norms * size)
                scores = scores + (1 - share) * plain
            else:
                scores = plain - share * to_mean
            for row in np.argsort(-scores)[: 4 * k].tolist():
                chunk = self.ids[tree][row]
                best[chunk] = max(best.get(chunk, -9.0), float(scores[row]))
        return sorted(best.items(), key=lambda pair: (-pair[1], pair[0]))[:k]

    return nearest


VARIANTS: dict[str, tuple[Fuse, Nearest]] = {
    "shipped": (SHIPPED_FUSE, SHIPPED_NEAREST),
    "dense^0.5": (scaled_fuse(powers=(1.0, 0.5)), SHIPPED_NEAREST),
    "dense^2": (scaled_fuse(powers=(1.0, 2.0)), SHIPPED_NEAREST),
    "bm25^2": (scaled_fuse(powers=(2.0, 1.0)), SHIPPED_NEAREST),
    "bm25/max": (scaled_fuse(bm25_norm="max"), SHIPPED_NEAREST),
    "z": (scaled_fuse(bm25_norm="z", dense_norm="z"), SHIPPED_NEAREST),
    "dense z": (scaled_fuse(dense_norm="z"), SHIPPED_NEAREST),
    "both +0.1": (scaled_fuse(both=0.1), SHIPPED_NEAREST),
    "rrf 10": (scaled_fuse(rrf=10), SHIPPED_NEAREST),
    "rrf 60": (scaled_fuse(rrf=60), SHIPPED_NEAREST),
    "centred": (SHIPPED_FUSE, hub_nearest(1.0, centred=True)),
    "centred 0.5": (SHIPPED_FUSE, hub_nearest(0.5, centred=True)),
    "hub -0.3": (SHIPPED_FUSE, hub_nearest(0.3, centred=False)),
    "hub -0.6": (SHIPPED_FUSE, hub_nearest(0.6, centred=False)),
    "hub -1": (SHIPPED_FUSE, hub_nearest(1.0, centred=False)),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--work", type=Path, required=True, help="where bench/code_search.py --semantic built"
    )
    parser.add_argument("--variants", default=",".join(VARIANTS), help="of: " + ", ".join(VARIANTS))
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    from ra_query.artifacts.store import open_store

    names = [n for n in CORPORA if (args.work / f"{n}-project" / ".ra").is_dir()]
    stores = {n: open_store(args.work / f"{n}-project" / ".ra") for n in names}
    if not names or not all(store.has_vectors() for store in stores.values()):
        raise SystemExit(
            f"no indexes with vectors under {args.work}: run bench/code_search.py --semantic first"
        )
    code = {n: questions(QUESTIONS / f"code_{n}.jsonl") for n in names}
    docs = {n: questions(QUESTIONS / f"docs_{n}.jsonl") for n in names}
    lines = [
        f"code fusion at {git_head()}, {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M}, load {quality.load()}, "
        f"hybrid, corpora {', '.join(names)}",
        "",
        "| variant | def@5 | file@5 | tokens | docs: section@5 | def@5: the six / the four "
        "| definitions found |",
        "|---|---|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    for variant in args.variants.split(","):
        hybrid.fuse, vectors.Vectors._nearest = VARIANTS[variant]
        found: dict[str, int] = {}
        totals = {"def": 0.0, "file": 0.0, "tokens": 0.0, "docs": 0.0, "from_docs": 0.0}
        for n in names:
            params = quality.default_params(stores[n], "hybrid")
            got = tune_code.scores(stores[n], code[n], params)
            found[n] = round(got["def@5"] * len(code[n]))
            totals["def"] += found[n]
            totals["file"] += got["file@5"] * len(code[n])
            totals["tokens"] += got["tokens"] * len(code[n])
            totals["docs"] += tune_code.scores(stores[n], docs[n], params)["def@5"] * len(docs[n])
            totals["from_docs"] += found[n] if n in FROM_DOCS else 0
        asked = sum(len(code[n]) for n in names)
        four = sum(len(code[n]) for n in names if n in FROM_DOCS)
        line = (
            f"| {variant} | {totals['def'] / asked:.3f} | {totals['file'] / asked:.3f} | "
            f"{totals['tokens'] / asked:.0f} | {totals['docs'] / sum(len(docs[n]) for n in names):.3f} | "
            f"{(totals['def'] - totals['from_docs']) / max(1, asked - four):.3f} / "
            f"{totals['from_docs'] / max(1, four):.3f} | {', '.join(f'{n} {c}' for n, c in found.items())} |"
        )
        lines.append(line)
        print(line, flush=True)
    hybrid.fuse, vectors.Vectors._nearest = SHIPPED_FUSE, SHIPPED_NEAREST
    if not args.no_record:
        with open(RESULTS_TXT, "a", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()

"""The table that chose ra's ranking defaults: field weights and the proximity bonus, measured.

    .venv/bin/python bench/tune_quality.py [--work DIR] [--no-record]

Builds SciFact and CACM once each with the real pipeline (as bench/quality.py does), then runs
every query in ranking mode (top 100, no cutoff, no aggregation) under each setting below —
these are search-time settings, so one build serves them all — and prints SciFact nDCG@10 and
CACM MAP per row. The table is written to bench/results/quality_tuning.txt.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
import quality  # noqa: E402 — bench/ is not a package
from common import git_head  # noqa: E402

RESULTS = REPO / "bench" / "results" / "quality_tuning.txt"
DEFAULT = {"text": 1.0, "title": 0.1, "tags": 0.0, "path": 0.1}
# The per-field sums (seed 000's boosts: title 3, tags 2.5, path 2, body 1; equal weights) and
# "… body 0.25" were rows here until schema 5 stored the body without indexing it (issue 24):
# their figures, in quality_tuning.txt up to 2026-11-23, can no longer be run.
ROWS: list[tuple[str, dict[str, Any]]] = [
    ("combined text field alone", {"boosts": {"text": 1.0}, "phrase_boost": 0.0}),
    ("combined + title 0.1 + path 0.1", {"boosts": DEFAULT, "phrase_boost": 0.0}),
    ("combined + title 0.1 + path 0.1 + proximity 0.2 (default)", {"boosts": DEFAULT, "phrase_boost": 0.2}),
    ("  … title 0", {"boosts": DEFAULT | {"title": 0.0}, "phrase_boost": 0.2}),
    ("  … title 0.25", {"boosts": DEFAULT | {"title": 0.25}, "phrase_boost": 0.2}),
    ("  … title 1.0", {"boosts": DEFAULT | {"title": 1.0}, "phrase_boost": 0.2}),
    ("  … tags 0.25", {"boosts": DEFAULT | {"tags": 0.25}, "phrase_boost": 0.2}),
    ("  … proximity 0.1", {"boosts": DEFAULT, "phrase_boost": 0.1}),
    ("  … proximity 0.35", {"boosts": DEFAULT, "phrase_boost": 0.35}),
    ("  … stop words kept", {"boosts": DEFAULT, "phrase_boost": 0.2, "stopwords": False}),
]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/ra-bench-quality"), help="scratch directory")
    parser.add_argument("--no-record", action="store_true", help="print only")
    args = parser.parse_args()
    from ra_query.artifacts.store import open_store

    stores: dict[str, Any] = {}
    for name in ("scifact", "cacm"):
        spec = quality.SETS[name]
        source = args.work / name / "docs"
        quality.write_tree(spec["docs"](), source)
        stores[name] = open_store(quality.build(name, source, args.work / name))
    lines = [f"{'setting':66} {'SciFact nDCG@10':>16} {'CACM MAP':>9}"]
    print(lines[0])
    for label, overrides in ROWS:
        figures: list[float] = []
        for name, store in stores.items():
            spec = quality.SETS[name]
            params = quality.ranking_params(store)._replace(**overrides)
            run, _ = quality.ranking_run(store, spec["queries"](), params)
            figures.append(quality.evaluate(spec["qrels"](), run, [spec["main"]])[spec["main"]])
        line = f"{label:66} {figures[0]:16.4f} {figures[1]:9.4f}"
        lines.append(line)
        print(line, flush=True)
    if not args.no_record:
        stamp = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
        header = f"# {stamp} git={git_head()} load={quality.load()}"
        with open(RESULTS, "a", encoding="utf-8") as handle:
            handle.write("\n".join([header, *lines, ""]) + "\n")


if __name__ == "__main__":
    main()

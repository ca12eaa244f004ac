"""Benchmark: the search settings of code questions, side by side on built indexes (issue 30).

    .venv/bin/python bench/tune_code.py --work DIR [--corpus NAME]... [--vary KEY=V1,V2,...]...
                                        [--modes lexical,hybrid] [--no-record]

Opens the indexes bench/code_search.py built under `--work` (`DIR/NAME-project/.ra`, one per
corpus: build them first, with `--semantic` for the hybrid mode) and searches every question of
bench/questions/code_NAME.jsonl and docs_NAME.jsonl with `ra-query search`'s defaults, changed
by each combination of the `--vary` settings (SearchParams fields: `file_weight`, `docs_weight`,
`code_boost`, …), scored as code_search.py scores them (by ra eval). Prints, per combination and
mode, definition hit@5, file hit@5 and the mean tokens of the code questions, and the docs
questions' section hit@5, and appends the table to bench/results/code_tuning.txt.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import quality
from code_search import CORPORA, QUESTIONS, questions, ra_scores
from common import REPO, git_head, ra_eval

RESULTS_TXT = REPO / "bench" / "results" / "code_tuning.txt"


def scores(store: Any, items: list[dict[str, Any]], params: Any) -> dict[str, float]:
    """def@5, file@5 and mean tokens of `items` searched with `params` (code_search.py's rows)."""
    rows = ra_scores(store, items, params, ra_eval())
    n = max(1, len(rows))
    return {
        "def@5": sum(bool(r.get("def@5")) for r in rows) / n,
        "file@5": sum(bool(r.get("file@5")) for r in rows) / n,
        "tokens": statistics.fmean(r["tokens"] for r in rows) if rows else 0.0,
    }


def _number(text: str) -> int | float:
    """A --vary value: a whole number as an int (`candidate_limit` slices a list), else a float."""
    return int(text) if text.isdigit() else float(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--work", type=Path, required=True, help="where bench/code_search.py built")
    parser.add_argument(
        "--corpus", action="append", default=[], help=f"of {', '.join(CORPORA)} (default: all built)"
    )
    parser.add_argument(
        "--vary", action="append", default=[], metavar="KEY=V1,V2", help="a SearchParams field's values"
    )
    parser.add_argument("--modes", default="lexical,hybrid")
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    from ra_query.artifacts.store import open_store

    names = args.corpus or [n for n in CORPORA if (args.work / f"{n}-project" / ".ra").is_dir()]
    stores = {n: open_store(args.work / f"{n}-project" / ".ra") for n in names}
    code = {n: questions(QUESTIONS / f"code_{n}.jsonl") for n in names}
    docs = {n: questions(QUESTIONS / f"docs_{n}.jsonl") for n in names}
    keys = [v.split("=", 1)[0] for v in args.vary]
    values = [[_number(x) for x in v.split("=", 1)[1].split(",")] for v in args.vary]
    lines = [
        f"code tuning at {git_head()}, {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M}, load {quality.load()}, "
        f"corpora {', '.join(names)}",
        "",
        "| mode | " + " | ".join(keys) + " | def@5 | file@5 | tokens | docs: section@5 |",
        "|---|" + "---|" * len(keys) + "---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    for mode in args.modes.split(","):
        for combo in itertools.product(*values) if values else [()]:
            totals: dict[str, list[float]] = {"def@5": [], "file@5": [], "tokens": [], "docs": []}
            for n in names:
                if mode == "hybrid" and not stores[n].has_vectors():
                    continue
                params = quality.default_params(stores[n], mode)._replace(
                    **dict(zip(keys, combo, strict=True))
                )
                got = scores(stores[n], code[n], params)
                weight = len(code[n])
                totals["def@5"] += [got["def@5"]] * weight
                totals["file@5"] += [got["file@5"]] * weight
                totals["tokens"] += [got["tokens"]] * weight
                totals["docs"] += [scores(stores[n], docs[n], params)["def@5"]] * len(docs[n])
            if not totals["def@5"]:
                continue
            row = [statistics.fmean(totals[k]) for k in ("def@5", "file@5", "tokens", "docs")]
            line = (
                f"| {mode} | "
                + " | ".join(f"{c:g}" for c in combo)
                + (" | " if combo else "")
                + f"{row[0]:.3f} | {row[1]:.3f} | {row[2]:.0f} | {row[3]:.3f} |"
            )
            lines.append(line)
            print(line, flush=True)
    if not args.no_record:
        with open(RESULTS_TXT, "a", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()

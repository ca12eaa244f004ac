"""Benchmark: `ra likethis tree:path#Definition` — are the definitions that do the same kind of
thing found, rather than its own tests? (issue 32, item 4)

    .venv/bin/python bench/likethis.py [--work DIR] [--rev REV] [--semantic] [--label TEXT] [--no-record]

1. Corpora: encode/httpx, pallets/click and spf13/cobra at the commits of bench/context.py
   (/tmp/code-corpora/NAME).
2. Items: bench/questions/likethis.jsonl — a definition (`source`: path, qualified symbol, the
   line of its `def`/`func`/`class`) and 1–4 definitions that do the same kind of thing (`alike`:
   the async twin, another implementation, a sibling subclass), chosen by an agent that read them.
3. Build: as bench/context.py (the real `ra update`, ra's defaults; `--semantic` embeds too).
4. Each source is found in the index by its path and line (the chunk of its symbol holding that
   line), and `ra likethis ID` is run on it in-process with `ra-query likethis`'s defaults.
5. Scores: **alike top 5** (one of its counterparts among the first five results: a result in the
   counterpart's file whose line range holds its line, or of its symbol: a later part, an
   overload), **alike first**, and the share of the
   first five results that are tests. A table appended to `bench/results/likethis.txt`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import code_search
from common import REPO, checkout
from context import CORPORA, CORPUS_ROOT, LIMIT, TOP, hint
from quality import default_params, load, modes_of

ITEMS = REPO / "bench" / "questions" / "likethis.jsonl"
RESULTS_TXT = REPO / "bench" / "results" / "likethis.txt"


def source_id(store: Any, name: str, source: dict[str, Any]) -> str:
    """The id of the chunk of `source`'s symbol that holds its line."""
    doc = f"{name}:{source['path']}"
    for record in store.doc_chunks(doc):
        if record.symbol == source["symbol"] and record.line_start <= source["line"] <= record.line_end:
            return record.id
    raise SystemExit(f"{source['symbol']} at {doc}:{source['line']} is not a chunk of the index")


def holds(hit: Any, target: dict[str, Any]) -> bool:
    """Whether `hit` is `target`: in its file, holding its line or of its symbol (a later part of
    a long definition, another overload of it)."""
    record = hit.record
    inside = record.line_start <= target["line"] <= record.line_end
    return record.path == target["path"] and (inside or record.symbol == target["symbol"])


def figures_of(store: Any, name: str, items: list[dict[str, Any]], mode: str) -> dict[str, Any]:
    from ra_query.search.context import context_topic, like_this
    from ra_query.search.pipeline import is_test_path

    rows = []
    params = default_params(store, mode)._replace(limit=LIMIT)
    for item in items:
        analysis = like_this(store, source_id(store, name, item["source"]))
        top = list(context_topic(store, analysis, params).hits)[:TOP]
        rows.append(
            {
                "id": item["id"],
                "top5": any(holds(h, a) for h in top for a in item["alike"]),
                "first": bool(top) and any(holds(top[0], a) for a in item["alike"]),
                "tests": sum(is_test_path(h.record.path) for h in top),
                "shown": len(top),
                "top": [h.record.id for h in top],
            }
        )
    n = len(rows) or 1
    shown = sum(r["shown"] for r in rows) or 1
    return {
        "items": len(rows),
        "alike top 5": round(sum(r["top5"] for r in rows) / n, 3),
        "alike first": round(sum(r["first"] for r in rows) / n, 3),
        "tests share of top 5": round(sum(r["tests"] for r in rows) / shown, 3),
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/ra-bench-likethis"), help="scratch directory")
    parser.add_argument("--rev", help="measure the ra of this git revision (a worktree)")
    parser.add_argument("--semantic", action="store_true", help="embed the trees: lexical and hybrid")
    parser.add_argument("--label", default="", help="a note recorded with the figures")
    parser.add_argument("--no-record", action="store_true", help="print only")
    args = parser.parse_args()
    items = [json.loads(line) for line in ITEMS.read_text(encoding="utf-8").splitlines() if line.strip()]
    names = list(dict.fromkeys(item["repo"] for item in items))
    for name in names:
        if not (CORPUS_ROOT / name).is_dir():
            raise SystemExit(hint(name, CORPUS_ROOT / name))
    code_search.CORPORA.update(CORPORA)
    if args.semantic:
        code_search.SETTINGS.setdefault("settings", {})["semantic"] = "true"
    args.work.mkdir(parents=True, exist_ok=True)
    figures: dict[str, dict[str, Any]] = {}
    with ExitStack() as stack:
        # before anything imports ra: with --rev, that side's ra chunks, builds and searches
        source, measured = checkout(stack, args.rev, "ra-bench-likethis-")
        from ra_query.artifacts.store import open_store

        load_before = load()
        for name in names:
            store = open_store(code_search.build(name, CORPUS_ROOT / name, args.work, source))
            mine = [item for item in items if item["repo"] == name]
            for mode in modes_of(store):
                figures.setdefault(mode, {})[name] = figures_of(store, name, mine, mode)
        load_after = load()
    stamp = dt.datetime.now(dt.UTC).replace(microsecond=0)
    lines = [
        f"likethis at {measured}, {stamp:%Y-%m-%d %H:%M}, {os.cpu_count()} cores, "
        f"load {load_before} before / {load_after} after{f' — {args.label}' if args.label else ''}",
        "",
    ]
    for mode, sets in figures.items():
        lines += [f"| {mode} | " + " | ".join(sets) + " |", "|---" * (len(sets) + 1) + "|"]
        for key in ("items", "alike top 5", "alike first", "tests share of top 5"):
            lines.append(f"| {key} | " + " | ".join(str(s[key]) for s in sets.values()) + " |")
        lines.append("")
    report = "\n".join(lines)
    print(report)
    for mode, sets in figures.items():
        for f in sets.values():
            for row in f["rows"]:
                if not row["top5"]:
                    print(f"  {mode} miss {row['id']}: {', '.join(row['top'][:3])}")
    if not args.no_record:
        with open(RESULTS_TXT, "a", encoding="utf-8") as handle:
            handle.write(report + "\n")


if __name__ == "__main__":
    main()

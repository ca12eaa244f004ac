"""Benchmark: `ra context CODE_FILE` — is the docs page that explains the file first? (issue 32)

    .venv/bin/python bench/context.py [--corpus NAME=DIR]... [--work DIR] [--rev REV] [--semantic]
                                      [--label TEXT] [--no-record]

1. Corpora: public repositories that keep real docs beside their code, at a fixed commit
   (CORPORA): pallets/click and spf13/cobra and sindresorhus/got (the corpora of
   bench/code_search.py) and encode/httpx. `--corpus NAME=DIR` points at a checkout; by default
   /tmp/code-corpora/NAME (how to get one is printed when it is missing).
2. Files: bench/questions/context_NAME.jsonl, code files an agent might edit, each with the docs
   pages that explain it (`{"id", "repo", "file", "docs": [...], "why"}`), chosen by agents that
   read both the file and the pages; a file without such a page is not in the set.
3. Build: each corpus becomes one tree of a fresh project (its language's files and `**/*.md`),
   built by the real `ra update` with ra's defaults (bench/code_search.py's `build`); with
   `--semantic` the trees are embedded too (lexical and hybrid). With `--rev REV` the ra measured
   is that revision's (a worktree: it builds, its ra_query searches).
4. Context: each file as `ra context FILE` reads it (its path relative to the tree, the
   defaults of `ra-query context`: 10 results, the tree's search defaults), in-process.
5. Scores, per corpus and overall: **page top 5** (an explaining page among the first five
   results), **page first**, the share of the first five results that are docs (`kind` docs
   or upstream), the share that are tests of the file's project, mean results and tokens (what
   the agent reads, as text). A table, `bench/results/context.json` (the latest figures and,
   per file, the first five results) and the table appended to `bench/results/context.txt`
   with the commit, date and load.
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
from code_search import Corpus
from common import REPO, checkout
from quality import default_params, load, modes_of

QUESTIONS = REPO / "bench" / "questions"
RESULTS_JSON = REPO / "bench" / "results" / "context.json"
RESULTS_TXT = REPO / "bench" / "results" / "context.txt"
CORPUS_ROOT = Path("/tmp/code-corpora")
TOP = 5
LIMIT = 10  # `ra-query context`'s default

CORPORA: dict[str, Corpus] = {
    "click": code_search.CORPORA["click"],
    "cobra": code_search.CORPORA["cobra"],
    "got": code_search.CORPORA["got"],
    "httpx": Corpus(
        "encode/httpx", "ae1b9f66238f75ced3ced5e4485408435de10768", "python", ("**/*.py", "**/*.md")
    ),
}


def hint(name: str, target: Path) -> str:
    """How to put corpus `name` at `target`."""
    return code_search.hint(name, target, CORPORA)


def items_of(name: str, folder: Path) -> list[dict[str, Any]]:
    """The judged files of corpus `name`, each checked against the corpus (file and pages exist)."""
    path = QUESTIONS / f"context_{name}.jsonl"
    items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for item in items:
        for relative in [item["file"], *item["docs"]]:
            if not (folder / relative).is_file():
                raise SystemExit(f"{path.name} {item['id']}: {relative} is not in {folder} — wrong commit?")
    return items


def context_results(store: Any, folder: Path, relative: str, mode: str) -> tuple[list[Any], int]:
    """The results `ra context FILE` gives for the corpus file `relative`, and their tokens."""
    from ra_query.search.context import ContextOptions, InputFile, analyze, context_topic
    from ra_query.text.tokens import count_tokens

    params = default_params(store, mode)._replace(limit=LIMIT)
    file = InputFile(relative, str(folder / relative), relative)
    analysis = analyze(store, [file], options=ContextOptions())
    topic = context_topic(store, analysis, params)
    hits = list(topic.hits)
    text = "\n\n".join(f"{h.record.title}\n{h.record.body}" for h in hits[:LIMIT])
    return hits, count_tokens(text)


def figures_of(store: Any, name: str, folder: Path, items: list[dict[str, Any]], mode: str) -> dict[str, Any]:
    """Page top 5 / first and the mix of the first five, over one corpus's files."""
    from ra_query.search.pipeline import is_test_path

    rows: list[dict[str, Any]] = []
    for item in items:
        hits, tokens = context_results(store, folder, item["file"], mode)
        pages = {f"{name}:{page}" for page in item["docs"]}
        top = hits[:TOP]
        rows.append(
            {
                "id": item["id"],
                "file": item["file"],
                "top5": any(h.record.doc_id in pages for h in top),
                "first": bool(top) and top[0].record.doc_id in pages,
                "docs": sum(h.record.kind != "code" for h in top),
                "tests": sum(h.record.kind == "code" and is_test_path(h.record.path) for h in top),
                "results": len(hits),
                "tokens": tokens,
                "top": [f"{h.record.id} ({h.record.kind})" for h in top],
            }
        )
    return summary(rows)


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows) or 1
    shown = sum(min(r["results"], TOP) for r in rows) or 1
    return {
        "files": len(rows),
        "page top 5": round(sum(r["top5"] for r in rows) / n, 3),
        "page first": round(sum(r["first"] for r in rows) / n, 3),
        "docs share of top 5": round(sum(r["docs"] for r in rows) / shown, 3),
        "tests share of top 5": round(sum(r["tests"] for r in rows) / shown, 3),
        "mean results": round(sum(r["results"] for r in rows) / n, 2),
        "mean tokens": round(sum(r["tokens"] for r in rows) / n, 1),
        "rows": rows,
    }


KEYS = ("files", "page top 5", "page first", "docs share of top 5", "tests share of top 5", "mean results",
        "mean tokens")  # fmt: skip


def table(figures: dict[str, dict[str, dict[str, Any]]]) -> str:
    lines: list[str] = []
    for mode, sets in figures.items():
        names = list(sets)
        lines += [f"| {mode} | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
        for key in KEYS:
            lines.append(f"| {key} | " + " | ".join(f"{sets[n][key]:,}" for n in names) + " |")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--corpus", action="append", default=[], metavar="NAME=DIR", help="a corpus's checkout"
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/ra-bench-context"), help="scratch directory")
    parser.add_argument("--rev", help="measure the ra of this git revision (a worktree)")
    parser.add_argument("--semantic", action="store_true", help="embed the trees: lexical and hybrid")
    parser.add_argument("--label", default="", help="a note recorded with the figures")
    parser.add_argument("--no-record", action="store_true", help="print only")
    args = parser.parse_args()
    folders = code_search.corpora_from(args.corpus, parser, CORPORA)
    for name, folder in folders.items():
        if not folder.is_dir():
            raise SystemExit(hint(name, folder))
    code_search.CORPORA.update(CORPORA)  # its build() reads a corpus's include globs there
    if args.semantic:
        code_search.SETTINGS.setdefault("settings", {})["semantic"] = "true"
    args.work.mkdir(parents=True, exist_ok=True)
    figures: dict[str, dict[str, dict[str, Any]]] = {}
    with ExitStack() as stack:
        # before anything imports ra: with --rev, that side's ra chunks, builds and searches
        source, measured = checkout(stack, args.rev, "ra-bench-context-")
        from ra_query.artifacts.store import open_store

        load_before = load()
        for name, folder in folders.items():
            items = items_of(name, folder)
            store = open_store(code_search.build(name, folder, args.work, source))
            for mode in modes_of(store):
                figures.setdefault(mode, {})[name] = figures_of(store, name, folder, items, mode)
        for sets in figures.values():
            sets["overall"] = summary([row for s in sets.values() for row in s["rows"]])
        load_after = load()
    stamp = dt.datetime.now(dt.UTC).replace(microsecond=0)
    head = (
        f"context at {measured}, {stamp:%Y-%m-%d %H:%M}, {os.cpu_count()} cores, load {load_before} before / "
        f"{load_after} after{f' — {args.label}' if args.label else ''}"
    )
    report = head + "\n\n" + table(figures)
    print(report)
    for mode, sets in figures.items():
        for name, f in sets.items():
            if name == "overall":
                continue
            for row in f["rows"]:
                if not row["first"]:
                    what = "not first" if row["top5"] else "miss"
                    print(f"  {mode} {what} {row['id']} {row['file']}: {', '.join(row['top'][:3])}")
    if not args.no_record:
        RESULTS_JSON.write_text(
            json.dumps({"git": measured, "when": stamp.isoformat(), "figures": figures}, indent=1) + "\n",
            encoding="utf-8",
        )
        with open(RESULTS_TXT, "a", encoding="utf-8") as handle:
            handle.write(report + "\n")


if __name__ == "__main__":
    main()

"""Benchmark: a query that is a name — does its definition or page come first? (issue 30, item 1)

    .venv/bin/python bench/names.py [--corpus NAME=DIR]... [--tldr DIR] [--work DIR] [--rev REV]
                                    [--semantic] [--sample N] [--label TEXT] [--no-record]

1. Code (the corpora of bench/code_search.py, at their commits): up to `--sample` definitions per
   corpus (seeded; code chunks with a symbol and text of their own, not a later part of a long
   one, outside test files and test modules), each searched twice:
   - **as written**: its qualified name (`Command.Find`, `validateRequiredFlagGroups`): a hit is
     that definition first (or another of that qualified name: an overload, a setter);
   - **bare**: its last part (`Find`): that definition first, or in the top 3. A bare name that
     several definitions share cannot put each first, so the share whose first result is *a*
     definition of that name is printed too, and the share first among the names that only one
     definition outside the tests has;
   - **a type's field as written** (`Opts.hidden`, `Options.Height`): up to `--sample` members
     of the chunk tables' `members` (seeded; a struct's field, an enum's variant): a hit is the
     chunk that declares it first, or a definition of that qualified name (a method called so).
2. Docs: the English tldr pages (`--tldr DIR`, else as bench/quality.py finds them): up to
   `--sample` command names (a page's title, `git commit`; seeded), and apart from them the 40
   POPULAR ones (`ssh`, `git commit`: the prefix of many other pages' names); a hit is a page of
   that title first (any platform's).
3. Each in every mode the index has (`--semantic` embeds the trees: lexical and hybrid), through
   `ra_query.commands.search_command` with `ra-query search`'s defaults. With `--rev REV` the ra
   measured is that revision's (a worktree: it builds, its ra_query searches).
4. A table, `bench/results/names.json` (the latest) and the table appended to
   `bench/results/names.txt` with the commit, date and load.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import subprocess
import sys
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import code_search
import quality
from code_search import add_corpus_option, corpora_from, hint
from common import REPO, checkout

RESULTS_JSON = REPO / "bench" / "results" / "names.json"
RESULTS_TXT = REPO / "bench" / "results" / "names.txt"
SEED = 30
DEFAULT_SAMPLE = 150


def definitions(artifacts: Path, count: int) -> list[dict[str, Any]]:
    """Up to `count` definitions of a built corpus (seeded): id, symbol, path, and `shared`: how
    many definitions of the corpus have its last name."""
    import pyarrow.parquet as pq

    from ra_query.search.pipeline import is_test_path, is_test_symbol
    from ra_query.text.names import chunk_keys

    def is_definition(r: dict[str, Any]) -> bool:  # not a later part of one (it has no name)
        return bool(
            chunk_keys(kind="code", depth=1, symbol=r["symbol"], title="", path=r["path"], slug=r["slug"])
        )

    rows: list[dict[str, Any]] = []
    for part in sorted((artifacts / "chunks").glob("*/part-*.parquet")):
        table = pq.read_table(part, columns=["id", "symbol", "path", "kind", "slug", "tokens"]).to_pylist()
        rows += [
            r
            for r in table
            if r["kind"] == "code" and r["symbol"] and r["tokens"] and is_definition(r)
            and not is_test_path(r["path"]) and not is_test_symbol(r["symbol"])
        ]  # fmt: skip
    last = Counter(r["symbol"].rsplit(".", 1)[-1] for r in rows)
    rows.sort(key=lambda r: r["id"])
    random.Random(SEED).shuffle(rows)
    return [r | {"shared": last[r["symbol"].rsplit(".", 1)[-1]]} for r in rows[:count]]


def fields(artifacts: Path, count: int) -> list[dict[str, Any]]:
    """Up to `count` members of a built corpus's types (seeded: the chunk table's `members`, a
    struct's field, an enum's variant, outside test files): the member as written (`Opts.hidden`)
    and the chunk that declares it. None where the tables have no `members` (an older ra)."""
    import pyarrow.parquet as pq

    from ra_query.search.pipeline import is_test_path

    rows: list[dict[str, Any]] = []
    for part in sorted((artifacts / "chunks").glob("*/part-*.parquet")):
        if "members" not in pq.read_schema(part).names:
            return []
        for r in pq.read_table(part, columns=["id", "path", "members"]).to_pylist():
            if not is_test_path(r["path"]):
                rows += [{"member": m, "id": r["id"]} for m in r["members"] or ()]
    rows.sort(key=lambda r: (r["member"], r["id"]))
    random.Random(SEED).shuffle(rows)
    return rows[:count]


def field_figures(store: Any, members: list[dict[str, Any]], mode: str) -> dict[str, Any]:
    """Each member typed as written: the share whose first result declares it (or is a definition
    of that qualified name, a method called as the field is)."""
    params = quality.default_params(store, mode)
    first = 0
    misses: list[str] = []
    for m in members:
        results = _results(store, params, m["member"])
        top = results[0] if results else {}
        ok = top.get("id") == m["id"] or top.get("symbol") == m["member"]
        first += ok
        if not ok:
            misses.append(f"{m['member']} → {top.get('id')}")
    return {"fields": len(members), "fields@1": round(first / max(1, len(members)), 3), "misses": misses}


# commands an agent types most, many of them the prefix of other pages' names (`ssh-add`,
# `tailscale ssh`, `git commits-since`): the hard case for BM25
POPULAR = (
    "ssh", "git", "git commit", "git push", "git log", "git status", "docker", "docker run", "tar", "grep",
    "find", "ls", "cp", "mv", "rm", "cat", "curl", "wget", "make", "npm", "python", "java", "kill", "ps",
    "chmod", "sed", "awk", "sort", "top", "scp", "less", "vim", "cd", "du", "df", "ping", "kubectl",
    "ssh-keygen", "rsync", "zip",
)  # fmt: skip


def tldr_names(pages: Path, count: int) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Up to `count` command names of the English tldr pages (seeded), and the POPULAR ones: each
    → the pages of that title."""
    by_title: dict[str, set[str]] = {}
    for page in sorted(pages.glob("*/*.md")):
        first = page.read_text(encoding="utf-8", errors="replace").split("\n", 1)[0]
        if first.startswith("# "):
            by_title.setdefault(first[2:].strip(), set()).add(page.relative_to(pages).as_posix())
    names = sorted(by_title)
    random.Random(SEED).shuffle(names)
    popular = {name: by_title[name] for name in POPULAR if name in by_title}
    return {name: by_title[name] for name in names[:count]}, popular


def _results(store: Any, params: Any, query: str) -> list[dict[str, Any]]:
    from ra_query.commands import search_command

    payload = json.loads(search_command(store, [query], params, json=True).text)
    return payload["queries"][0]["results"]


def code_figures(store: Any, defs: list[dict[str, Any]], mode: str) -> dict[str, Any]:
    """The name queries of one corpus in `mode`: shares first / top 3, and the misses."""
    params = quality.default_params(store, mode)
    written = bare1 = bare3 = bare_any = once = once1 = 0
    misses: list[str] = []
    for d in defs:
        symbol = d["symbol"]
        last = symbol.rsplit(".", 1)[-1]
        results = _results(store, params, symbol)
        # an overload or a getter and its setter share the name: any of them is the definition
        ok = bool(results) and (results[0]["id"] == d["id"] or results[0].get("symbol") == symbol)
        written += ok
        if not ok:
            misses.append(f"{symbol} → {[r['id'] for r in results[:1]]}")
        found = _results(store, params, last)
        ids = [r["id"] for r in found]
        bare1 += ids[:1] == [d["id"]]
        bare3 += d["id"] in ids[:3]
        bare_any += bool(found) and (found[0].get("symbol") or "").rsplit(".", 1)[-1] == last
        if d["shared"] == 1:  # the only definition of its last name outside tests
            once += 1
            once1 += ids[:1] == [d["id"]]
    n = max(1, len(defs))
    return {
        "names": len(defs),
        "written@1": round(written / n, 3),
        "bare@1": round(bare1 / n, 3),
        "bare@3": round(bare3 / n, 3),
        "bare: a definition of that name @1": round(bare_any / n, 3),
        "bare, defined once": once,
        "bare, defined once @1": round(once1 / max(1, once), 3),
        "misses": misses,
    }


def tldr_figures(store: Any, names: dict[str, set[str]], mode: str) -> dict[str, Any]:
    """The command names in `mode`: share whose first result is a page of that title."""
    params = quality.default_params(store, mode)
    first = 0
    misses: list[str] = []
    for name, pages in names.items():
        found = _results(store, params, name)
        ok = bool(found) and found[0]["path"] in pages
        first += ok
        if not ok:
            misses.append(f"{name} → {found[0]['path'] if found else None}")
    return {"names": len(names), "page@1": round(first / max(1, len(names)), 3), "misses": misses}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    add_corpus_option(parser)
    parser.add_argument("--tldr", type=Path, help="the English tldr pages (the pages/ folder)")
    parser.add_argument("--no-tldr", action="store_true", help="code names only")
    parser.add_argument("--work", type=Path, default=Path("/tmp/ra-bench-names"), help="scratch directory")
    parser.add_argument("--rev", help="measure the ra of this git revision (a worktree)")
    parser.add_argument("--semantic", action="store_true", help="embed the trees: lexical and hybrid")
    parser.add_argument("--sample", type=int, default=DEFAULT_SAMPLE, help="names per corpus")
    parser.add_argument("--label", default="", help="a note recorded with the figures")
    parser.add_argument("--no-record", action="store_true", help="print only")
    args = parser.parse_args()
    corpora = corpora_from(args.corpus, parser)
    corpora = {name: folder for name, folder in corpora.items() if folder.is_dir() or not args.corpus}
    for name, folder in corpora.items():
        if not folder.is_dir():
            raise SystemExit(hint(name, folder))
    if args.semantic:
        code_search.SETTINGS.setdefault("settings", {})["semantic"] = "true"
        quality.SETTINGS.setdefault("settings", {})["semantic"] = "true"
    args.work.mkdir(parents=True, exist_ok=True)
    figures: dict[str, dict[str, Any]] = {}
    with ExitStack() as stack:
        # before anything imports ra: with --rev, that side's ra chunks, builds and searches
        source, measured = checkout(stack, args.rev, "ra-bench-names-")
        from ra_query.artifacts.store import open_store

        load_before = quality.load()
        for name, folder in corpora.items():
            artifacts = code_search.build(name, folder, args.work, source)
            store = open_store(artifacts)
            defs = definitions(artifacts, args.sample)
            members = fields(artifacts, args.sample)
            for mode in quality.modes_of(store):
                figures.setdefault(mode, {})[name] = code_figures(store, defs, mode)
                if members:
                    got = field_figures(store, members, mode)
                    figures[mode][name] |= {k: got[k] for k in ("fields", "fields@1")}
                    figures[mode][name]["misses"] += got["misses"]
        if not args.no_tldr:
            pages = quality.tldr_pages(args.tldr, args.work)
            if source is None:
                artifacts = quality.build("tldr", pages, args.work)
            else:
                artifacts = _build_at(source, pages, args.work)
            store = open_store(artifacts)
            names, popular = tldr_names(pages, args.sample)
            for mode in quality.modes_of(store):
                figures.setdefault(mode, {})["tldr"] = tldr_figures(store, names, mode)
                figures[mode]["tldr popular"] = tldr_figures(store, popular, mode)
        load_after = quality.load()
    stamp = dt.datetime.now(dt.UTC).replace(microsecond=0)
    lines = [
        f"names at {measured}, {stamp:%Y-%m-%d %H:%M}, {os.cpu_count()} cores, load {load_before} before / "
        f"{load_after} after{f' — {args.label}' if args.label else ''}",
        "",
        "| mode | set | names | as written first | bare first | bare top 3 | bare: a def of that name first "
        "| bare, defined once: first (names) | a type's field as written first (fields) | page first |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for mode, sets in figures.items():
        for name, f in sets.items():
            once = (
                f"{f['bare, defined once @1']} ({f['bare, defined once']})"
                if "bare, defined once" in f
                else ""
            )
            cells = [
                f.get(k, "") for k in ("written@1", "bare@1", "bare@3", "bare: a definition of that name @1")
            ]
            field = f"{f['fields@1']} ({f['fields']})" if "fields" in f else ""
            cells += [once, field, f.get("page@1", "")]
            lines.append(f"| {mode} | {name} | {f['names']} | " + " | ".join(str(c) for c in cells) + " |")
    report = "\n".join(lines)
    print(report)
    for mode, sets in figures.items():
        for name, f in sets.items():
            for miss in f["misses"][:8]:
                print(f"  {mode} {name} miss: {miss}")
    if not args.no_record:
        RESULTS_JSON.write_text(
            json.dumps({"git": measured, "when": stamp.isoformat(), "figures": figures}, indent=1) + "\n",
            encoding="utf-8",
        )
        with open(RESULTS_TXT, "a", encoding="utf-8") as handle:
            handle.write(report + "\n\n")


def _build_at(source: Path, pages: Path, work: Path) -> Path:
    """The tldr index built by the ra at `source` (a `--rev` worktree)."""
    from common import clean_env, entry_command

    project = work / "tldr-rev-project"
    project.mkdir(parents=True, exist_ok=True)
    settings = "".join(
        f"[{s}]\n" + "".join(f"{k} = {v}\n" for k, v in keys.items()) for s, keys in quality.SETTINGS.items()
    )
    (project / ".ra.toml").write_text(
        f"root = true\n{settings}[tree.tldr]\npath = {json.dumps(str(pages))}\n", encoding="utf-8"
    )
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        entry_command(source, "ra", "update"),
        cwd=project,
        env=clean_env(home),
        check=True,
        capture_output=True,
    )
    return project / ".ra"


if __name__ == "__main__":
    main()

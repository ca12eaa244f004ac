"""Benchmark: docs in many languages (issue 33) — the whole tldr corpus (40 languages) beside its
English part.

    .venv/bin/python bench/locales.py [--work DIR] [--rev REV] [--semantic] [--label TEXT] [--no-record]

1. Corpora: `../shared/data/corpora/tldr-md.tar.gz`, its `pages*/` folders (38,390 pages in 40
   languages) as one tree `tldr`, and its English `pages/` alone as another index.
2. Build: each by the real `ra update` with ra's defaults (timed, wall seconds, and the index's
   bytes); with `--rev REV` the ra measured is that revision's (a worktree: it builds, its
   ra_query searches). `--semantic` embeds the trees too (lexical and hybrid).
3. Sets, each through `ra-query search`'s defaults (`ra_query.commands.search_command`):
   - **command names**: bench/names.py's POPULAR (`ssh`, `git commit`, `tar`, …, 40): a hit is an
     English page of that name first (`pages/<platform>/<name>.md`);
   - **English known items**: bench/questions/tldr_reworded.jsonl (hit@5 and hit@1 against its
     answers), on the whole corpus and on the English part: the other 39 languages must not
     cost the English answers anything;
   - **known items in Japanese, Chinese, Korean, German and French**:
     bench/questions/locales_LANG.jsonl (35 each, written by agents as a person who needs the
     command would type it, without its name; each answer's page checked): hit@1 and hit@5 on
     the whole corpus; and the Korean ones typed as a search box is, each noun without its
     particle and each verb without its ending (bench/questions/locales_ko_nouns.jsonl: the same
     35, each shortened from its `from`, by rule and then by hand); and a second set in Chinese
     and in Korean (bench/questions/locales_zh2.jsonl, locales_ko2.jsonl: 30 each, other pages,
     written by agents that had seen neither ra's code nor the first sets, after the words of
     one meaning were chosen: ra_query.text.samewords); a third set in Japanese, Chinese and
     Korean (bench/questions/locales_ja3.jsonl, locales_zh3.jsonl, locales_ko3.jsonl: 30 each,
     written the same way, after the pages' Korean words were indexed by their beginnings and
     the Hangul names of products were listed); and the German and French ones typed without
     accents, as many readers type them (`creer`, `Grosse`: the same queries, their accents
     stripped by rule).
4. A table, `bench/results/locales.json` (the latest, with the misses) and the table appended
   to `bench/results/locales.txt` with the commit, date and load.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tarfile
import time
import unicodedata
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import quality
from common import REPO, build_project, checkout, clean_env, entry_command, write_project
from names import POPULAR

RESULTS_JSON = REPO / "bench" / "results" / "locales.json"
RESULTS_TXT = REPO / "bench" / "results" / "locales.txt"
QUESTIONS = REPO / "bench" / "questions"
LANGUAGES = ("ja", "zh", "ko", "de", "fr")
SECOND_SETS = ("zh", "ko")  # bench/questions/locales_LANG2.jsonl
THIRD_SETS = ("ja", "zh", "ko")  # bench/questions/locales_LANG3.jsonl
UNACCENTED = ("de", "fr")  # these sets again, typed without accents (`telecharger`, `Grosse`)


def all_pages(work: Path) -> Path:
    """The tarball's `pages*/` folders under `work/tldr-all` (unpacked once)."""
    target = work / "tldr-all"
    if not (target / "pages.ja").is_dir():
        target.mkdir(parents=True, exist_ok=True)
        with tarfile.open(quality.TLDR_TARBALL) as archive:
            members = [m for m in archive.getmembers() if m.name.removeprefix("./").startswith("pages")]
            archive.extractall(target, members=members, filter="data")
    return target


def build(name: str, corpus: Path, work: Path, source: Path | None) -> tuple[Path, float, int]:
    """`ra update` of `corpus` as tree `tldr` (this checkout's ra, or the one at `source`):
    (artifacts, wall seconds, index bytes)."""
    import shutil
    import subprocess

    project, home = work / f"{name}-project", work / "home"
    settings = quality.SETTINGS
    if source is None:
        artifacts, seconds, _ = build_project(project, home, corpus, "tldr", settings)
    else:
        shutil.rmtree(project, ignore_errors=True)
        write_project(project, corpus, "tldr", settings)
        home.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        subprocess.run(
            entry_command(source, "ra", "update"),
            cwd=project,
            env=clean_env(home),
            check=True,
            capture_output=True,
        )
        seconds, artifacts = time.perf_counter() - started, project / ".ra"
    size = sum(f.stat().st_size for f in (artifacts / "index").rglob("*") if f.is_file())
    print(f"built {name} in {seconds:.1f} s, index {size / 1e6:.1f} MB")
    return artifacts, seconds, size


def _results(store: Any, params: Any, query: str) -> list[dict[str, Any]]:
    from ra_query.commands import search_command

    return json.loads(search_command(store, [query], params, json=True).text)["queries"][0]["results"]


def names_figures(store: Any, params: Any, prefix: str) -> dict[str, Any]:
    """The command names: share whose first result is an English page of that name."""
    first, misses = 0, []
    for name in POPULAR:
        found = _results(store, params, name)
        page = found[0]["path"] if found else ""
        parts = page.split("/")
        ok = page.startswith(prefix) and parts[-1] == name.replace(" ", "-") + ".md"
        first += ok
        if not ok:
            misses.append(f"{name} → {page or None}")
    return {"items": len(POPULAR), "hit@1": round(first / len(POPULAR), 3), "misses": misses}


def known_figures(store: Any, params: Any, items: list[tuple[str, str, set[str]]]) -> dict[str, Any]:
    """Known items (id, query, answering page paths): hit@1 and hit@5 (one page of the answers
    among the first five results), and the misses."""
    hit1 = hit5 = 0
    misses: list[str] = []
    for item_id, query, answers in items:
        paths = [r["path"] for r in _results(store, params, query)[:5]]
        hit1 += bool(paths) and paths[0] in answers
        found = any(p in answers for p in paths)
        hit5 += found
        if not found:
            misses.append(f"{item_id} {query} → {paths[0] if paths else None}")
    n = max(1, len(items))
    return {"items": len(items), "hit@1": round(hit1 / n, 3), "hit@5": round(hit5 / n, 3), "misses": misses}


def english_items(prefix: str) -> list[tuple[str, str, set[str]]]:
    """The reworded English questions, their answers under `prefix` (`pages/` in the whole tree)."""
    rows = [json.loads(line) for line in (QUESTIONS / "tldr_reworded.jsonl").read_text().splitlines() if line]
    return [(r["id"], r["question"], {prefix + a for a in r["answers"]}) for r in rows]


def unaccented(items: list[tuple[str, str, set[str]]]) -> list[tuple[str, str, set[str]]]:
    """`items` with their queries typed as many readers type them, without accents (`créer` as
    `creer`, `Größe` as `Grosse`)."""

    def plain(text: str) -> str:
        decomposed = unicodedata.normalize("NFD", text.replace("ß", "ss"))
        return "".join(c for c in decomposed if not unicodedata.combining(c))

    return [(item_id, plain(query), answers) for item_id, query, answers in items]


def language_items(language: str) -> list[tuple[str, str, set[str]]]:
    path = QUESTIONS / f"locales_{language}.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [(r["id"], r["query"], {r["page"]}) for r in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/ra-bench-locales"), help="scratch directory")
    parser.add_argument("--rev", help="measure the ra of this git revision (a worktree)")
    parser.add_argument("--semantic", action="store_true", help="embed the trees: lexical and hybrid")
    parser.add_argument("--label", default="", help="a note recorded with the figures")
    parser.add_argument("--no-record", action="store_true", help="print only")
    parser.add_argument("--misses", type=int, default=6, help="misses printed per set")
    args = parser.parse_args()
    if args.semantic:
        quality.SETTINGS.setdefault("settings", {})["semantic"] = "true"
    args.work.mkdir(parents=True, exist_ok=True)
    figures: dict[str, dict[str, Any]] = {}
    builds: dict[str, dict[str, float]] = {}
    with ExitStack() as stack:
        source, measured = checkout(stack, args.rev, "ra-bench-locales-")
        from ra_query.artifacts.store import open_store

        load_before = quality.load()
        for name, corpus, prefix in (
            ("english", quality.tldr_pages(None, args.work), ""),
            ("all", all_pages(args.work), "pages/"),
        ):
            artifacts, seconds, size = build(name, corpus, args.work, source)
            builds[name] = {"seconds": round(seconds, 1), "index_mb": round(size / 1e6, 1)}
            store = open_store(artifacts)
            for mode in quality.modes_of(store):
                params = quality.default_params(store, mode)
                sets = figures.setdefault(mode, {})
                sets[f"{name}: command names, English page first"] = names_figures(store, params, prefix)
                sets[f"{name}: English known items"] = known_figures(store, params, english_items(prefix))
                if name == "all":
                    for language in LANGUAGES:
                        sets[f"all: {language} known items"] = known_figures(
                            store, params, language_items(language)
                        )
                    sets["all: ko known items, nouns without their particle"] = known_figures(
                        store, params, language_items("ko_nouns")
                    )
                    for language in SECOND_SETS:
                        sets[f"all: {language} known items, second set"] = known_figures(
                            store, params, language_items(f"{language}2")
                        )
                    for language in THIRD_SETS:
                        sets[f"all: {language} known items, third set"] = known_figures(
                            store, params, language_items(f"{language}3")
                        )
                    for language in UNACCENTED:
                        sets[f"all: {language} known items, typed without accents"] = known_figures(
                            store, params, unaccented(language_items(language))
                        )
        load_after = quality.load()
    stamp = dt.datetime.now(dt.UTC).replace(microsecond=0)
    lines = [
        f"locales at {measured}, {stamp:%Y-%m-%d %H:%M}, {os.cpu_count()} cores, load {load_before} before / "
        f"{load_after} after{f' — {args.label}' if args.label else ''}",
        "",
        "build: "
        + ", ".join(f"{name} {b['seconds']} s, index {b['index_mb']} MB" for name, b in builds.items()),
        "",
        "| mode | set | items | hit@1 | hit@5 |",
        "|---|---|---|---|---|",
    ]
    for mode, sets in figures.items():
        for name, f in sets.items():
            lines.append(f"| {mode} | {name} | {f['items']} | {f['hit@1']} | {f.get('hit@5', '')} |")
    report = "\n".join(lines)
    print(report)
    for mode, sets in figures.items():
        for name, f in sets.items():
            for miss in f["misses"][: args.misses]:
                print(f"  {mode} {name} miss: {miss}")
    if not args.no_record:
        payload = {"git": measured, "when": stamp.isoformat(), "builds": builds, "figures": figures}
        RESULTS_JSON.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        with open(RESULTS_TXT, "a", encoding="utf-8") as handle:
            handle.write(report + "\n\n")


if __name__ == "__main__":
    main()

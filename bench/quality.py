"""Benchmark: search quality on judged sets and on a known-item set, through the real pipeline.

    .venv/bin/python bench/quality.py [--sets scifact,cacm,known] [--work DIR] [--label TEXT]
                                      [--no-record] [--ps DIR]

1. Corpora. `../shared/data/scifact` and `../shared/data/cacm` become markdown trees, one file
   per document (`<id>.md`: the title as a `# heading`, the text as its body; CACM has no title
   field, so its heading is the document id). The powershell docs (`--ps DIR`, default
   /tmp/corpora/ps when it exists, else the tarball unpacked into the work directory) are
   indexed as they are.
2. Build. Each tree is built by `ra update` in a fresh project (`.ra.toml` with `root = true`,
   HOME an empty directory): the real pipeline, with ra's default settings.
3. Search. Every query goes through the real search API twice:
   - **ranking**: `search_topic` with the top 100 candidates, no elbow cutoff and no aggregation
     (a chunk counts for its document, the first time the document appears) — the ranking
     itself, comparable with a plain BM25 run;
   - **default**: `search_command` exactly as `ra-query search QUERY` runs it with the build's
     settings, in JSON (what the results are) and in text (what an agent reads: its cl100k tokens).
4. Scores by pytrec_eval (trec_eval): SciFact nDCG@10 and R@100, CACM MAP and P@30, averaged over
   every judged query (a query with no results scores 0). Default mode also reports mean results,
   mean tokens, empty results (a result with no text beyond its heading) and failed queries (an
   error instead of an answer).
5. Known-item: 50 cmdlet pages of the powershell docs, chosen with a fixed seed; the query is the
   page's SYNOPSIS sentence with the cmdlet name removed; a hit is a result from that cmdlet's
   page (any of its product versions). Against it, grep as an agent uses it: `rg -il` for each
   content word, files ranked by how many of the words they hold (then by path), reading the top 5
   files whole.
6. Reworded questions (issue 21): the questions of bench/questions/tldr_reworded.jsonl, written
   the way an agent asks (no command names), over the English tldr pages (`--tldr DIR`, default
   /tmp/corpora/tldr/pages, else the tarball's pages/ unpacked); a hit is an answering page among
   the default search's results (top 5), as `ra eval` scores it (each answer a document id,
   `tldr:PATH`), against grep + reading the top 5 files.
7. With `--semantic` every build embeds its trees (`[settings] semantic = true`) and every set is
   searched twice, side by side: lexical (BM25 alone) and hybrid (the build's semantic_weight).
8. A table against the floors of issues 8 and 21, `bench/results/quality.json` (the latest
   figures per set) and one dated line appended to `bench/results/quality.txt`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (
    REPO,
    add_set_option,
    add_settings,
    asked,
    build_project,
    corpus_folder,
    git_head,
    ra_eval,
    verdict,
)

sys.path.insert(0, str(REPO))

DATA = REPO.parent / "shared" / "data"
RESULTS_JSON = REPO / "bench" / "results" / "quality.json"
RESULTS_TXT = REPO / "bench" / "results" / "quality.txt"
SEED = 20261123
KNOWN_ITEMS = 50
RANKING_DEPTH = 100

# issue 8's floors
FLOOR_SCIFACT = 0.690
FLOOR_CACM = 0.3123
DEFAULT_GAP = 0.03
DEFAULT_MAX_RESULTS = 5.0
FLOOR_KNOWN_HIT5 = 0.9
FLOOR_KNOWN_TOKEN_SHARE = 0.30
# issue 21's floors
FLOOR_SCIFACT_HYBRID = 0.72
FLOOR_REWORDED_HIT5 = 0.75
FLOOR_REWORDED_TOKEN_SHARE = 0.5
QUESTIONS = REPO / "bench" / "questions" / "tldr_reworded.jsonl"
TLDR_TREE = "tldr"  # the reworded set's tree: its answers are this tree's documents
TLDR_TARBALL = DATA / "corpora" / "tldr-md.tar.gz"
TLDR_DIR = Path("/tmp/corpora/tldr/pages")


# ---- corpora ------------------------------------------------------------------------------------


def scifact_docs(data: Path = DATA) -> Iterator[tuple[str, str, str]]:
    """(id, title, text) of every SciFact abstract."""
    with gzip.open(data / "scifact" / "corpus.jsonl.gz", "rt", encoding="utf-8") as handle:
        for line in handle:
            doc = json.loads(line)
            yield str(doc["_id"]), doc["title"].strip(), doc["text"].strip()


def cacm_docs(data: Path = DATA) -> Iterator[tuple[str, str, str]]:
    """(id, title, text) of every CACM abstract; the collection has no titles: the id is one."""
    with open(data / "cacm" / "cacm.jsonl", encoding="utf-8") as handle:
        for line in handle:
            doc = json.loads(line)
            yield doc["id"], doc["id"], doc["contents"].strip()


def scifact_queries(data: Path = DATA) -> dict[str, str]:
    with open(data / "scifact" / "queries.test.jsonl", encoding="utf-8") as handle:
        return {str(q["_id"]): q["text"] for q in map(json.loads, handle)}


_TOPIC = re.compile(r"<DOC>\s*<DOCNO>\s*(\S+)\s*</DOCNO>(.*?)</DOC>", re.DOTALL)


def cacm_queries(data: Path = DATA) -> dict[str, str]:
    """The 64 TREC topics, each as one line of text (the topic's lines joined by spaces)."""
    text = (data / "cacm" / "topics.cacm.txt").read_text(encoding="utf-8")
    return {number: " ".join(body.split()) for number, body in _TOPIC.findall(text)}


def scifact_qrels(data: Path = DATA) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with open(data / "scifact" / "qrels.test.tsv", encoding="utf-8") as handle:
        next(handle)  # header
        for line in handle:
            qid, doc, rel = line.split()
            qrels.setdefault(qid, {})[doc] = int(rel)
    return qrels


def cacm_qrels(data: Path = DATA) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with open(data / "cacm" / "qrels.cacm.txt", encoding="utf-8") as handle:
        for line in handle:
            qid, _, doc, rel = line.split()
            qrels.setdefault(qid, {})[doc] = int(rel)
    return qrels


def write_tree(docs: Iterable[tuple[str, str, str]], root: Path) -> int:
    """One markdown file per document, `<id>.md`: `# title`, a blank line, the text."""
    root.mkdir(parents=True, exist_ok=True)
    count = 0
    for doc_id, title, text in docs:
        (root / f"{doc_id}.md").write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
        count += 1
    return count


# ---- building -----------------------------------------------------------------------------------


SETTINGS: dict[str, dict[str, str]] = {}  # --set section.key=value: extra .ra.toml settings


def build(tree: str, source: Path, work: Path) -> Path:
    """`ra update` of `source` as tree `tree` in a fresh project under `work`, with the `--set`
    settings; returns the artifacts."""
    artifacts, seconds, _ = build_project(work / f"{tree}-project", work / "home", source, tree, SETTINGS)
    print(f"built {tree} in {seconds:.1f} s")
    return artifacts


# ---- searching ----------------------------------------------------------------------------------


def doc_of(path: str) -> str:
    """The benchmark document id of a chunk's path: the file name without `.md`."""
    return path.rsplit("/", 1)[-1].removesuffix(".md")


MODES = ("lexical", "hybrid")  # how a set is searched when its index has vectors


def ranking_params(store: Any, mode: str = "hybrid") -> Any:
    """The build's settings with the top 100 candidates, no cutoff, no aggregation."""
    return default_params(store, mode)._replace(
        limit=RANKING_DEPTH, candidate_limit=RANKING_DEPTH, cutoff_ratio=0.0, aggregation=False
    )


def default_params(store: Any, mode: str = "hybrid") -> Any:
    """The SearchParams `ra-query search QUERY` uses (the CLI's own parser and search_params);
    `lexical` as `--lexical` makes them (hybrid is the default where the index has vectors)."""
    from ra_query.cli import build_parser, search_params

    flags = ["--lexical"] if mode == "lexical" else []
    args = build_parser().parse_args(["search", "placeholder", *flags])
    return search_params(args, store.search_defaults())


def modes_of(store: Any) -> tuple[str, ...]:
    """The modes a set is searched in: both where its index has vectors, else lexical."""
    return MODES if store.has_vectors() else ("lexical",)


def ranking_run(
    store: Any, queries: dict[str, str], params: Any = None
) -> tuple[dict[str, dict[str, float]], int]:
    """Per query, its documents in rank order (scored by rank for trec_eval); and the failures.

    `params` defaults to `ranking_params(store)` (hybrid where the index has vectors).
    """
    from ra_query.errors import RaError
    from ra_query.search.pipeline import search_topic

    params = params or ranking_params(store)
    run: dict[str, dict[str, float]] = {}
    failed = 0
    for qid, text in queries.items():
        try:
            topic = search_topic(store, text, params)
        except RaError:
            failed += 1
            continue
        ranked: dict[str, float] = {}
        for hit in topic.hits:
            doc = doc_of(hit.record.path)
            if doc not in ranked:
                ranked[doc] = float(RANKING_DEPTH - len(ranked))
        run[qid] = ranked
    return run, failed


def _is_empty(result: dict[str, Any]) -> bool:
    """A result whose content has no text beyond its heading line."""
    content: str = result.get("content", "")
    lines = content.splitlines()
    if lines and lines[0].startswith("#") and result.get("depth", 0) > 0:
        lines = lines[1:]
    return not "".join(lines).strip()


class DefaultRun:
    """What default mode returned: documents per query, and the per-query figures."""

    def __init__(self) -> None:
        self.run: dict[str, dict[str, float]] = {}
        self.paths: dict[str, list[str]] = {}
        self.results: list[int] = []
        self.tokens: list[int] = []
        self.empty = 0
        self.failed = 0
        self.no_result = 0
        self.notes = 0
        self.duplicates = 0  # results whose content equals an earlier result's


def default_run(store: Any, queries: dict[str, str], mode: str = "hybrid") -> DefaultRun:
    """Every query as `ra-query search QUERY` runs it: JSON for the results, text for the tokens."""
    from ra_query.commands import search_command
    from ra_query.errors import RaError
    from ra_query.text.tokens import count_tokens

    params = default_params(store, mode)
    out = DefaultRun()
    for qid, text in queries.items():
        try:
            payload = json.loads(search_command(store, [text], params, json=True).text)
            printed = search_command(store, [text], params).text
        except RaError:
            out.failed += 1
            out.results.append(0)
            continue
        entry = payload["queries"][0]
        results = entry["results"]
        out.results.append(len(results))
        out.tokens.append(count_tokens(printed))
        out.notes += "note" in entry
        out.no_result += not results
        out.empty += sum(_is_empty(r) for r in results)
        contents = [" ".join(r.get("content", "").split()) for r in results]
        out.duplicates += len(contents) - len(set(contents))
        ranked: dict[str, float] = {}
        for r in results:
            ranked.setdefault(doc_of(r["path"]), float(RANKING_DEPTH - len(ranked)))
        out.run[qid] = ranked
        out.paths[qid] = [r["path"] for r in results]
    return out


def evaluate(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], measures: Iterable[str]
) -> dict[str, float]:
    """trec_eval's measures, averaged over every judged query (a missing query scores 0)."""
    import pytrec_eval

    names = list(measures)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(names))
    per_query: dict[str, dict[str, float]] = evaluator.evaluate({q: d for q, d in run.items() if d})
    return {m: sum(per_query.get(q, {}).get(m, 0.0) for q in qrels) / len(qrels) for m in names}


# ---- the judged sets ----------------------------------------------------------------------------

SETS: dict[str, dict[str, Any]] = {
    "scifact": {
        "docs": scifact_docs,
        "queries": scifact_queries,
        "qrels": scifact_qrels,
        "measures": {"ndcg_cut_10": "nDCG@10", "recall_100": "R@100"},
        "main": "ndcg_cut_10",
        "files": ("scifact/queries.test.jsonl", "scifact/qrels.test.tsv"),  # `ra eval --qrels`
        "floor": FLOOR_SCIFACT,
    },
    "cacm": {
        "docs": cacm_docs,
        "queries": cacm_queries,
        "qrels": cacm_qrels,
        "measures": {"map": "MAP", "P_30": "P@30"},
        "main": "map",
        "files": ("cacm/topics.cacm.txt", "cacm/qrels.cacm.txt"),
        "floor": FLOOR_CACM,
    },
}


def judged(name: str, work: Path) -> dict[str, Any]:
    """Build one judged set, run both modes, score them."""
    from ra_query.artifacts.store import open_store

    spec = SETS[name]
    source = work / name / "docs"
    shutil.rmtree(source, ignore_errors=True)
    count = write_tree(spec["docs"](), source)
    return judged_figures(name, open_store(build(name, source, work / name)), count)


def judged_figures(name: str, store: Any, count: int) -> dict[str, Any]:
    """Both modes of judged set `name` over its built index `store` (`count` documents), scored."""
    spec = SETS[name]
    queries = spec["queries"]()
    qrels = spec["qrels"]()
    measures = spec["measures"]
    figures: dict[str, Any] = {"docs": count, "queries": len(queries), "judged": len(qrels)}
    for mode in modes_of(store):
        started = time.perf_counter()
        ranking, ranking_failed = ranking_run(store, queries, ranking_params(store, mode))
        ranking_s = time.perf_counter() - started
        default = default_run(store, queries, mode)
        ranked = evaluate(qrels, ranking, measures)
        short = evaluate(qrels, default.run, measures)
        side = {
            "ranking": {measures[m]: round(v, 4) for m, v in ranked.items()}
            | {"failed": ranking_failed, "ms_per_query": round(1000 * ranking_s / len(queries), 2)}
            | {"ra eval": ra_eval_ranking(store, spec["files"], mode)},
            "default": {measures[m]: round(v, 4) for m, v in short.items()} | _default_figures(default),
        }
        figures |= side if mode == "lexical" else {"hybrid": side}
    return figures | {"main": measures[spec["main"]], "floor": spec["floor"]}


def ra_eval_ranking(store: Any, files: tuple[str, str], mode: str) -> dict[str, float]:
    """nDCG@10 and MAP of the set's topics and qrels as `ra eval --qrels --ranking` scores them
    (issue 34: one implementation of the metrics; the figures pytrec_eval gives, to 4 places)."""
    from ra_query.search.evaluate import evaluate as ra_evaluate
    from ra_query.search.evaluate import read_qrels, summary

    topics, qrels = (DATA / f for f in files)
    questions = read_qrels(topics, qrels)
    scored = ra_evaluate(store, questions, ranking_params(store, mode), _not_printed, by_document=True)
    figures = summary(scored, read=False)
    return {"nDCG@10": figures["ndcg10"], "MAP": figures["map"]}


def _not_printed(query: str, params: Any, as_json: bool) -> str:
    raise AssertionError("a --ranking run prints nothing")


def _default_figures(default: DefaultRun) -> dict[str, Any]:
    return {
        "mean_results": round(statistics.fmean(default.results), 2) if default.results else 0.0,
        "mean_tokens": round(statistics.fmean(default.tokens), 1) if default.tokens else 0.0,
        "empty_results": default.empty,
        "duplicate_results": default.duplicates,
        "failed": default.failed,
        "no_results": default.no_result,
        "with_note": default.notes,
    }


# ---- the known-item set -------------------------------------------------------------------------

_SYNOPSIS = re.compile(r"^## SYNOPSIS[ \t]*\n+(.+?)\n", re.MULTILINE)
_CMDLET_FILE = re.compile(r"^[A-Z][a-z]+-[A-Za-z0-9]+\.md$")
_WORD = re.compile(r"[A-Za-z0-9]+")
_STOP = frozenset(
    """a an and are as at be by can for from has have if in into is it its of on or that the
    their this to was were which will with you your""".split()  # noqa: SIM905 — a word list reads best as text
)


def known_items(corpus: Path, count: int = KNOWN_ITEMS, seed: int = SEED) -> list[tuple[str, str]]:
    """(cmdlet, query): SYNOPSIS sentences of distinct cmdlet pages, the cmdlet name removed."""
    pages: dict[str, list[Path]] = {}
    for path in sorted(corpus.rglob("*.md")):
        if _CMDLET_FILE.match(path.name):
            pages.setdefault(path.stem, []).append(path)
    rng = random.Random(seed)
    names = sorted(pages)
    rng.shuffle(names)
    items: list[tuple[str, str]] = []
    for name in names:
        match = _SYNOPSIS.search(pages[name][0].read_text(encoding="utf-8", errors="replace"))
        if match is None:
            continue
        sentence = match.group(1).replace(f"**{name}**", " ").replace(name, " ")
        sentence = " ".join(sentence.replace("*", " ").replace("`", " ").split())
        if len(_WORD.findall(sentence)) < 4:
            continue
        items.append((name, sentence))
        if len(items) == count:
            break
    return items


def grep_top(corpus: Path, query: str, top: int = 5, globs: Sequence[str] = ("*.md",)) -> list[Path]:
    """Files holding the query's content words, most distinct words first (then path): `rg -il`
    over the files that match `globs`."""
    words = sorted({w.lower() for w in _WORD.findall(query) if len(w) > 2 and w.lower() not in _STOP})
    only = [arg for glob in globs for arg in ("--glob", glob)]
    held: dict[str, int] = {}
    for word in words:
        proc = subprocess.run(
            ["rg", "-il", "--fixed-strings", *only, word, str(corpus)],
            capture_output=True,
            text=True,
        )
        for line in proc.stdout.splitlines():
            held[line] = held.get(line, 0) + 1
    ranked = sorted(held, key=lambda p: (-held[p], p))
    return [Path(p) for p in ranked[:top]]


def known(corpus: Path, work: Path) -> dict[str, Any]:
    """Hit@1, hit@5 and tokens of default `ra search` against grep + reading the top 5 files."""
    from ra_query.artifacts.store import open_store
    from ra_query.commands import search_command
    from ra_query.text.tokens import count_tokens

    store = open_store(build("ps", corpus, work / "known"))
    params = default_params(store)
    items = known_items(corpus)
    have_rg = shutil.which("rg") is not None
    ra_hit1 = ra_hit5 = grep_hit5 = 0
    ra_tokens: list[int] = []
    grep_tokens: list[int] = []
    empty = results = 0
    for name, query in items:
        payload = json.loads(search_command(store, [query], params, json=True).text)
        found = payload["queries"][0]["results"]
        results += len(found)
        empty += sum(_is_empty(r) for r in found)
        pages = [doc_of(r["path"]) for r in found]
        ra_hit1 += pages[:1] == [name]
        ra_hit5 += name in pages[:5]
        ra_tokens.append(count_tokens(search_command(store, [query], params).text))
        if have_rg:
            files = grep_top(corpus, query)
            grep_hit5 += any(f.stem == name for f in files)
            grep_tokens.append(
                sum(count_tokens(f.read_text(encoding="utf-8", errors="replace")) for f in files)
            )
    n = len(items)
    figures: dict[str, Any] = {
        "queries": n,
        "hit@1": round(ra_hit1 / n, 3),
        "hit@5": round(ra_hit5 / n, 3),
        "mean_results": round(results / n, 2),
        "mean_tokens": round(statistics.fmean(ra_tokens), 1),
        "empty_results": empty,
    }
    if have_rg:
        figures |= {
            "grep_hit@5": round(grep_hit5 / n, 3),
            "grep_mean_tokens": round(statistics.fmean(grep_tokens), 1),
            "token_share": round(sum(ra_tokens) / max(1, sum(grep_tokens)), 3),
        }
    return figures


# ---- the reworded questions ------------------------------------------------------------------------


def questions(path: Path = QUESTIONS) -> list[dict[str, Any]]:
    """The reworded questions: id, question, answers (page paths under pages/), why."""
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def tldr_pages(given: Path | None, work: Path) -> Path:
    """The English tldr pages: `given`, else TLDR_DIR, else the tarball's pages/ unpacked."""
    if given is not None:
        return given.resolve()
    if TLDR_DIR.is_dir():
        return TLDR_DIR
    target = work / "tldr"
    if not (target / "pages").is_dir():
        import tarfile

        target.mkdir(parents=True, exist_ok=True)
        with tarfile.open(TLDR_TARBALL) as archive:
            members = [m for m in archive.getmembers() if m.name.split("/", 1)[0] in ("pages", ".")]
            archive.extractall(target, members=members, filter="data")
    return target / "pages"


def reworded(pages: Path, work: Path) -> dict[str, Any]:
    """Hit@1, hit@5 and tokens of default search per mode, against grep + reading the top 5 files."""
    from ra_query.artifacts.store import open_store

    return reworded_figures(open_store(build(TLDR_TREE, pages, work / "reworded")), pages)


def _answer_line_shown(item: dict[str, Any], printed: str) -> bool:
    """Whether `printed` holds the start (25 characters) of a line the item's `why` quotes."""
    quoted = re.findall(r"'([^']{8,})", item["why"])
    return any(line[:25] in printed for line in quoted)


def reworded_questions(items: list[dict[str, Any]]) -> list[Any]:
    """The reworded questions as `ra eval` reads them: each answer page a document of the tldr tree."""
    scoring = ra_eval()
    return [
        scoring.parse_question(
            {
                "id": item["id"],
                "question": item["question"],
                "answers": [f"{TLDR_TREE}:{a}" for a in item["answers"]],
            },
            f"{QUESTIONS}:{number}",
            str(number),
        )
        for number, item in enumerate(items, start=1)
    ]


def reworded_figures(store: Any, pages: Path) -> dict[str, Any]:
    """The reworded questions over the built tldr index `store` (of `pages`), per mode, as `ra eval`
    scores them, and grep's."""
    from ra_query.text.tokens import count_tokens

    items = questions()
    figures: dict[str, Any] = {"queries": len(items)}
    for mode in modes_of(store):
        hit1 = hit5 = results = empty = shown = 0
        tokens: list[int] = []
        outcomes = asked(store, reworded_questions(items), default_params(store, mode), ra_eval())
        for item, (scored, found, printed) in zip(items, outcomes, strict=True):
            row = scored.row()
            results += row["results"]
            empty += sum(_is_empty(r) for r in found)
            hit1 += row["hit1"]
            hit5 += row["hit5"]
            tokens.append(row["tokens"])
            shown += row["hit5"] and _answer_line_shown(item, printed)
        n = len(items)
        side = {
            "hit@1": round(hit1 / n, 3),
            "hit@5": round(hit5 / n, 3),
            "mean_results": round(results / n, 2),
            "mean_tokens": round(statistics.fmean(tokens), 1),
            "empty_results": empty,
            # of the questions whose answer page is in the top 5: the printed text holds a line
            # the answer's `why` quotes (excerpts can leave it out; a few quotes are paraphrased)
            "answer_lines_shown": f"{shown}/{hit5}",
        }
        figures |= side if mode == "lexical" else {"hybrid": side}
    if shutil.which("rg") is not None:
        grep_hit5 = 0
        grep_tokens: list[int] = []
        for item in items:
            files = grep_top(pages, item["question"])
            grep_hit5 += any(f.relative_to(pages).as_posix() in item["answers"] for f in files)
            read = (f.read_text(encoding="utf-8", errors="replace") for f in files)
            grep_tokens.append(sum(count_tokens(text) for text in read))
        figures |= {
            "grep_hit@5": round(grep_hit5 / len(items), 3),
            "grep_mean_tokens": round(statistics.fmean(grep_tokens), 1),
        }
    return figures


# ---- report -------------------------------------------------------------------------------------


def floors(figures: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """(what, measured vs floor, pass) for every floor of issue 8 that was measured."""
    rows: list[tuple[str, str, bool]] = []

    def row(what: str, measured: str, ok: bool) -> None:
        rows.append((what, measured, ok))

    for name in SETS:
        if name not in figures:
            continue
        f = figures[name]
        main, d = f["main"], f["default"]
        rank, short = f["ranking"][main], d[main]
        row(f"{name} ranking {main}", f"{rank:.4f} ≥ {f['floor']}", rank >= f["floor"])
        by_ra = f["ranking"]["ra eval"][main]
        row(f"{name} ranking {main} by ra eval", f"{by_ra:.4f} = {rank:.4f}", by_ra == rank)
        if main.startswith("nDCG"):  # a list of ≤ 5 results cannot reach a MAP over all judged
            gap = rank - DEFAULT_GAP
            row(f"{name} default {main}", f"{short:.4f} ≥ {gap:.4f}", short >= gap)
        results = d["mean_results"]
        row(f"{name} default mean results", f"{results} ≤ 5", results <= DEFAULT_MAX_RESULTS)
        row(f"{name} default empty results", f"{d['empty_results']} = 0", d["empty_results"] == 0)
        failed = d["failed"] + f["ranking"]["failed"]
        row(f"{name} failed queries", f"{failed} = 0", failed == 0)
    for name in ("scifact", "cacm"):
        hybrid = figures.get(name, {}).get("hybrid")
        if hybrid is None:
            continue
        f = figures[name]
        main = f["main"]
        got, lexical = hybrid["ranking"][main], f["ranking"][main]
        if name == "scifact":
            ok = got >= FLOOR_SCIFACT_HYBRID
            row("scifact hybrid ranking nDCG@10", f"{got:.4f} ≥ {FLOOR_SCIFACT_HYBRID}", ok)
        else:
            row(f"{name} hybrid ranking {main}", f"{got:.4f} ≥ lexical {lexical:.4f}", got >= lexical)
        by_ra = hybrid["ranking"]["ra eval"][main]
        row(f"{name} hybrid ranking {main} by ra eval", f"{by_ra:.4f} = {got:.4f}", by_ra == got)
        d = hybrid["default"]
        row(f"{name} hybrid default mean results", f"{d['mean_results']} ≤ 5", d["mean_results"] <= 5)
        row(f"{name} hybrid default empty results", f"{d['empty_results']} = 0", d["empty_results"] == 0)
    if "reworded" in figures:
        r = figures["reworded"]
        side = r.get("hybrid", r)
        ok = side["hit@5"] >= FLOOR_REWORDED_HIT5
        row("reworded hit@5", f"{side['hit@5']} ≥ {FLOOR_REWORDED_HIT5}", ok)
        if "grep_mean_tokens" in r:
            share = round(side["mean_tokens"] / max(1.0, r["grep_mean_tokens"]), 3)
            ok = share <= FLOOR_REWORDED_TOKEN_SHARE
            row("reworded tokens vs grep+read", f"{share} ≤ {FLOOR_REWORDED_TOKEN_SHARE}", ok)
    if "known" in figures:
        k = figures["known"]
        row("known-item hit@5", f"{k['hit@5']} ≥ {FLOOR_KNOWN_HIT5}", k["hit@5"] >= FLOOR_KNOWN_HIT5)
        if "token_share" in k:
            share = k["token_share"]
            ok = share <= FLOOR_KNOWN_TOKEN_SHARE
            row("known-item tokens vs grep+read", f"{share} ≤ {FLOOR_KNOWN_TOKEN_SHARE}", ok)
    return rows


def load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def record(figures: dict[str, Any], label: str) -> None:
    """Write the latest figures per set to quality.json and append one line to quality.txt."""
    stamp = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
    meta = {
        "when": stamp,
        "git": git_head(),
        "label": label,
        "settings": SETTINGS,
        "load": load(),
        "python": platform.python_version(),
    }
    previous: dict[str, Any] = {}
    if RESULTS_JSON.exists():
        previous = json.loads(RESULTS_JSON.read_text(encoding="utf-8"))
    for name, value in figures.items():
        previous[name] = value | {"measured": meta}
    RESULTS_JSON.write_text(json.dumps(previous, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    with open(RESULTS_TXT, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(meta | {"figures": figures}, ensure_ascii=False) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--sets", default="scifact,cacm,known", help="comma-separated: scifact, cacm, known, reworded"
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/ra-bench-quality"), help="scratch directory")
    parser.add_argument("--ps", type=Path, help="an unpacked powershell-docs corpus")
    parser.add_argument("--tldr", type=Path, help="the English tldr pages (the pages/ folder)")
    parser.add_argument(
        "--semantic", action="store_true", help="embed every build; search each set lexical and hybrid"
    )
    parser.add_argument("--label", default="", help="a note recorded with the figures")
    parser.add_argument("--no-record", action="store_true", help="print only")
    add_set_option(parser, "search.boost.title=0.5")
    args = parser.parse_args()
    add_settings(parser, args.set, SETTINGS, "search.boost.title=0.5")
    if args.semantic:
        SETTINGS.setdefault("settings", {})["semantic"] = "true"
    wanted = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = set(wanted) - {*SETS, "known", "reworded"}
    if unknown:
        parser.error(f"unknown set(s): {', '.join(sorted(unknown))}")
    args.work.mkdir(parents=True, exist_ok=True)
    print(f"load before: {load()}")
    figures: dict[str, Any] = {}
    for name in wanted:
        if name == "known":
            figures["known"] = known(corpus_folder(args.ps, args.work / "ps-corpus"), args.work)
        elif name == "reworded":
            figures["reworded"] = reworded(tldr_pages(args.tldr, args.work), args.work)
        else:
            figures[name] = judged(name, args.work)
        print(json.dumps({name: figures[name]}, indent=2))
    print(f"load after: {load()}")
    print()
    for what, measured, ok in floors(figures):
        print(f"{verdict(ok):4}  {what:40} {measured}")
    if not args.no_record:
        record(figures, args.label)


if __name__ == "__main__":
    main()

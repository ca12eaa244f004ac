"""Benchmark: the read-only query side on a real corpus — warm in-process latency and cold `ra-query`.

    .venv/bin/python bench/query.py [--dir DIR | --tarball PATH] [--artifacts DIR]
                                    [--passes N] [--runs N] [--profile] [--no-cold] [--no-record]

1. Index. With ``--artifacts DIR`` holding a manifest, that build is reused (its corpus is the
   folder the manifest records). Otherwise the corpus (``--dir``, default /tmp/corpora/ps when it
   exists, else the tarball unpacked into a temp dir) is indexed by the real pipeline: a temp
   project with ``.ra.toml`` (``root = true``, ``[tree.ps] path = …``) and ``ra update`` as a
   subprocess with HOME an empty temp dir. That build is kept and its path printed, so the next
   run can pass it to ``--artifacts``.
2. Query set: ≥ 300 mixed queries derived from the corpus with a fixed seed (cmdlet nouns and
   verbs, cmdlet names, title words, two and three words of one line, quoted phrases, one-edit
   typos, OR, ``-term`` exclusions, field queries, long sentence-like queries, nonsense), written
   to bench/results/query_set.txt as ``type<TAB>query`` so runs stay comparable.
3. Warm: the store is opened once; every query goes through exactly what ``ra-query search Q
   --json`` runs after opening — ``search_command(store, [q], params, json=True)`` with the
   params of ``ra_query.cli.search_params`` — timed with ``perf_counter`` after a warm-up pass.
   The figure per query is the median over ``--passes`` passes; p50/p95/p99/max are over queries.
   A separate pass times the stages (search, budget, to_json + JSON text) without a profiler.
4. Cold: ``ra-query --artifacts DIR search Q --json`` as a subprocess beside ``rg -il -e w1 …``
   over the same markdown folder, in one hyperfine run per query (``--warmup 3 --runs 30``; own
   timing loop when hyperfine is missing). Also: bare python start, the bare floor (python +
   ``import tantivy`` + ``Index.open`` + one search + ``json.dumps``), ``-X importtime`` of the
   CLI, and a phase breakdown of one cold search measured inside fresh processes.
5. A table of figures vs floors (warm p50 ≤ 5 ms, warm p95 ≤ 20 ms, cold ra-query p50 ≤ rg p50)
   and one dated line appended to bench/results/query.txt.

``--profile`` adds cProfile over one pass of the warm queries (ranked hot spots and the share of
named suspects) — printed only; its overhead never reaches the recorded figures.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import io
import json
import os
import platform
import pstats
import random
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
from common import git_head, verdict  # noqa: E402 — bench/ is not a package

sys.path.insert(0, str(REPO))

DEFAULT_DIR = Path("/tmp/corpora/ps")
DEFAULT_TARBALL = REPO / ".." / "shared" / "data" / "corpora" / "powershell-docs-md.tar.gz"
RESULTS = REPO / "bench" / "results" / "query.txt"
QUERY_SET = REPO / "bench" / "results" / "query_set.txt"
TREE = "ps"
SEED = 20261122

FLOOR_WARM_P50_MS = 5.0
FLOOR_WARM_P95_MS = 20.0

# ---- corpus and index ---------------------------------------------------------------------------


def markdown_files(root: Path) -> list[Path]:
    """Every .md file under `root` that ra indexes (dot files and dot directories skipped), sorted."""
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        out.extend(Path(dirpath, f) for f in filenames if f.endswith(".md") and not f.startswith("."))
    return sorted(out)


def ra_executable(name: str) -> Path:
    """A console script of the interpreter running this benchmark (the repo's venv)."""
    for candidate in (Path(sys.executable).parent / name, REPO / ".venv" / "bin" / name):
        if candidate.exists():
            return candidate
    raise SystemExit(f"no `{name}` executable beside the interpreter — run with .venv/bin/python")


def clean_env(home: Path | None = None) -> dict[str, str]:
    """The environment without RA_* (and with HOME replaced when given).

    PYTHONDONTWRITEBYTECODE is dropped too: with it set, every process recompiles each module
    edited since its .pyc was written, which measures the compiler, not ra (an installed ra
    has its .pyc files; `compile_package` writes ours before the cold runs).
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("RA_") and k != "PYTHONDONTWRITEBYTECODE"}
    if home is not None:
        env["HOME"] = str(home)
    return env


def build_index(corpus: Path, scratch: Path) -> tuple[Path, float]:
    """Index `corpus` with `ra update` in a fresh project under `scratch`; (artifacts, seconds)."""
    project, home = scratch / "project", scratch / "home"
    project.mkdir(parents=True)
    home.mkdir()
    (project / ".ra.toml").write_text(f'root = true\n\n[tree.{TREE}]\npath = "{corpus}"\n', encoding="utf-8")
    started = time.perf_counter()
    proc = subprocess.run(
        [str(ra_executable("ra")), "update"],
        cwd=project,
        env=clean_env(home),
        capture_output=True,
        text=True,
        encoding="utf-8",
    )
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"ra update exited {proc.returncode}\n{proc.stdout}{proc.stderr}")
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    print(f"built in {seconds:.1f} s: {summary}")
    return project / ".ra", seconds


def corpus_of(artifacts: Path) -> Path:
    """The source folder of tree `ps` that the manifest at `artifacts` records."""
    manifest = json.loads((artifacts / "manifest.json").read_text(encoding="utf-8"))
    try:
        return Path(manifest["trees"][TREE]["sources"]["root"])
    except (KeyError, TypeError):
        raise SystemExit(f"{artifacts}: the manifest records no source folder for tree {TREE!r}") from None


# ---- the query set ------------------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_CMDLET = re.compile(r"^([A-Z][a-z]+)-([A-Za-z][A-Za-z0-9]+)$")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MARKUP = re.compile(r"[*_`<>\[\]{}|#]")
_STOP = """a an and are as at be by can for from has have if in into is it its may not of on or such that
    the their then there these this to was were when which will with you your use used using example
    see also more information about following get set"""
STOPWORDS = frozenset(_STOP.split())
# how many of each type; the order here is the order in the file
COUNTS: dict[str, int] = {
    "noun": 40,  # a cmdlet noun: ADUser
    "verb": 10,  # a cmdlet verb: Get (huge posting lists)
    "cmdlet": 20,  # Get-ADUser (the analyzer splits it: a phrase)
    "title_word": 15,  # a word of a conceptual article's file name
    "two_words": 45,  # two words of one prose line
    "three_words": 35,
    "phrase": 30,  # "two to four consecutive words" of a prose line
    "typo": 20,  # one edit of a word (exercises the fuzzy fallback)
    "or": 15,  # a OR b (OR c)
    "exclude": 15,  # a b -c
    "field": 25,  # title:, path:, body:, title:"…", title:(a OR b)
    "long": 35,  # 8–14 words of a prose line (exercises relaxation)
    "nomatch": 15,  # nonsense: exact, fuzzy and relaxed passes all run and find nothing
}


@dataclass(frozen=True)
class Query:
    """One query of the set and what kind it is."""

    kind: str
    text: str


def prose_lines(text: str) -> list[str]:
    """Lines of running text: no frontmatter, code fences, tables or headings; markup removed."""
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), 0)
        lines = lines[end + 1 :]
    out: list[str] = []
    fenced = False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or not stripped or stripped.startswith(("|", "#", ">", "-", "PS ", "<")):
            continue
        clean = _MARKUP.sub(" ", _LINK.sub(r"\1", stripped))
        if len(_WORD.findall(clean)) >= 6:
            out.append(clean)
    return out


def content_words(line: str) -> list[str]:
    """The words of `line` worth searching for: 3+ characters, not stopwords, in order, unique."""
    seen: dict[str, None] = {}
    for w in _WORD.findall(line):
        if len(w) >= 3 and w.lower() not in STOPWORDS:
            seen.setdefault(w, None)
    return list(seen)


def one_edit(word: str, rng: random.Random, vocabulary: set[str]) -> str:
    """`word` with one deletion, substitution or insertion inside it, not itself a corpus word."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    for _ in range(50):
        i = rng.randrange(1, len(word) - 1)  # keep the first letter: typos there are rare
        kind = rng.choice(("delete", "substitute", "insert"))
        if kind == "delete":
            typo = word[:i] + word[i + 1 :]
        elif kind == "substitute":
            typo = word[:i] + rng.choice(letters.replace(word[i].lower(), "")) + word[i + 1 :]
        else:
            typo = word[:i] + rng.choice(letters) + word[i:]
        if typo.lower() not in vocabulary:
            return typo
    return word + "q"


def nonsense(rng: random.Random) -> str:
    """A pronounceable-looking word no corpus contains (consonant clusters no language uses)."""
    return "".join(rng.choice("bcdfghjklmnpqrstvwxz") + rng.choice("qxzj") for _ in range(rng.randint(3, 5)))


def make_query_set(corpus: Path, seed: int = SEED) -> list[Query]:
    """The benchmark's queries, derived deterministically from the files of `corpus`."""
    rng = random.Random(seed)
    files = markdown_files(corpus)
    if not files:
        raise SystemExit(f"{corpus}: no markdown files")
    stems = sorted({p.stem for p in files})
    cmdlets = [m for m in (_CMDLET.match(s) for s in stems) if m]
    nouns = sorted({m.group(2) for m in cmdlets})
    verbs = sorted({m.group(1) for m in cmdlets})
    names = sorted({m.group(0) for m in cmdlets})
    title_words = sorted(
        {
            w
            for p in files
            if not _CMDLET.match(p.stem)
            for w in re.split(r"[^A-Za-z0-9]+", p.stem.replace("about_", ""))
            if len(w) >= 4 and w.lower() not in STOPWORDS and not w.isdigit()
        }
    )
    modules = sorted({p.parent.name for p in files if _CMDLET.match(p.stem)})

    sample = rng.sample(files, min(600, len(files)))
    lines: list[str] = []
    vocabulary: set[str] = {n.lower() for n in nouns}
    for path in sample:
        found = prose_lines(path.read_text(encoding="utf-8", errors="replace"))
        vocabulary.update(w.lower() for line in found for w in _WORD.findall(line))
        lines.extend(found[:8])  # a few per file, so no one long file dominates
    rich = [line for line in lines if len(content_words(line)) >= 4]
    long_lines = [line for line in lines if len(_WORD.findall(line)) >= 10]
    body_words = sorted({w for line in rich for w in content_words(line) if len(w) >= 7 and w.isalpha()})

    def words_of_line(n: int) -> list[str]:
        words = content_words(rng.choice(rich))
        start = rng.randrange(0, len(words) - n + 1)
        return words[start : start + n]

    makers: dict[str, Callable[[], str]] = {
        "noun": lambda: rng.choice(nouns),
        "verb": lambda: rng.choice(verbs),
        "cmdlet": lambda: rng.choice(names),
        "title_word": lambda: rng.choice(title_words),
        "two_words": lambda: " ".join(words_of_line(2)),
        "three_words": lambda: " ".join(words_of_line(3)),
        "phrase": lambda: _phrase(rng, rng.choice(rich)),
        "typo": lambda: one_edit(
            rng.choice(nouns if rng.random() < 0.5 else body_words), rng, vocabulary
        ).lower(),
        "or": lambda: " OR ".join(
            rng.sample(nouns, 2) if rng.random() < 0.5 else words_of_line(rng.choice((2, 3)))
        ),
        "exclude": lambda: _exclusion(rng, words_of_line(3), verbs),
        "field": lambda: _field(rng, nouns, names, modules, words_of_line),
        "long": lambda: _long(rng, rng.choice(long_lines), verbs, nouns),
        "nomatch": lambda: _nomatch(rng),
    }
    queries: list[Query] = []
    for kind, count in COUNTS.items():
        seen: set[str] = set()
        while len(seen) < count:
            text = " ".join(makers[kind]().split())
            if text and text not in seen:
                seen.add(text)
                queries.append(Query(kind, text))
    return queries


def _phrase(rng: random.Random, line: str) -> str:
    words = _WORD.findall(line)
    n = rng.randint(2, 4)
    start = rng.randrange(0, len(words) - n + 1)
    return '"' + " ".join(words[start : start + n]) + '"'


def _exclusion(rng: random.Random, words: list[str], verbs: list[str]) -> str:
    if rng.random() < 0.3:
        return f"{words[0]} -{rng.choice(verbs)}"
    return f"{words[0]} {words[1]} -{words[2]}"


def _field(
    rng: random.Random,
    nouns: list[str],
    names: list[str],
    modules: list[str],
    words_of_line: Callable[[int], list[str]],
) -> str:
    shape = rng.randrange(5)
    if shape == 0:
        return f"title:{rng.choice(nouns)}"
    if shape == 1:
        return f'title:"{rng.choice(names)}"'
    if shape == 2:
        a, b = rng.sample(nouns, 2)
        return f"title:({a} OR {b})"
    if shape == 3:
        return f"path:{rng.choice(modules)} {rng.choice(nouns)}"
    a, b = words_of_line(2)
    return f"body:{a} {b}"


def _long(rng: random.Random, line: str, verbs: list[str], nouns: list[str]) -> str:
    # a lone "or" would turn the sentence into an OR query; these are meant to exercise relaxation
    words = [w for w in _WORD.findall(line) if w.lower() != "or"]
    n = min(len(words), rng.randint(8, 14))
    start = rng.randrange(0, len(words) - n + 1)
    text = " ".join(words[start : start + n])
    if rng.random() < 0.3:  # the way an agent asks
        text = f"how do I {rng.choice(verbs).lower()} {rng.choice(nouns)} {text}"
    return text


def _nomatch(rng: random.Random) -> str:
    shape = rng.randrange(3)
    if shape == 0:
        return nonsense(rng)
    if shape == 1:
        return f"{nonsense(rng)} {nonsense(rng)}"
    return f'"{nonsense(rng)} {nonsense(rng)}"'


def write_query_set(queries: Sequence[Query], path: Path) -> bool:
    """Write the set (``kind<TAB>query`` lines); True when it differs from what was there."""
    text = "".join(f"{q.kind}\t{q.text}\n" for q in queries)
    old = path.read_text(encoding="utf-8") if path.exists() else None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return old is not None and old != text


# ---- warm, in process ---------------------------------------------------------------------------


@dataclass
class Timed:
    """One query's warm figures and what the search did."""

    query: Query
    ms: list[float]
    code: int = 0
    hits: int = 0
    total: int = 0
    fuzzy: bool = False
    relaxed: bool = False
    error: str = ""
    stages: tuple[float, float, float] = (0.0, 0.0, 0.0)  # search, budget, json (ms)

    @property
    def median(self) -> float:
        return statistics.median(self.ms)


def cli_params(store: Any) -> Any:
    """The SearchParams `ra-query search Q --json` uses: the CLI's own parser and search_params."""
    from ra_query.cli import _parser, search_params  # pyright: ignore[reportPrivateUsage]

    args = _parser().parse_args(["search", "placeholder", "--json"])
    return search_params(args, store.search_defaults())


def run_one(store: Any, params: Any, text: str) -> tuple[float, str, int, str]:
    """Time one query exactly as the CLI runs it after opening: (ms, output, exit code, error)."""
    from ra_query.commands import search_command
    from ra_query.errors import QuerySyntaxError

    started = time.perf_counter()
    try:
        out = search_command(store, [text], params, json=True)
    except QuerySyntaxError as exc:  # the CLI prints the message and exits 2: still a timed answer
        return (time.perf_counter() - started) * 1000, "", exc.exit_code, exc.message
    return (time.perf_counter() - started) * 1000, out.text, out.code, ""


def warm(store: Any, queries: Sequence[Query], passes: int) -> list[Timed]:
    """Warm-up pass, then `passes` timed passes over every query."""
    params = cli_params(store)
    timed = [Timed(q, []) for q in queries]
    for t in timed:  # warm-up: page cache, tantivy caches, lazy imports, the token encoding
        _, text, code, error = run_one(store, params, t.query.text)
        t.code, t.error = code, error
        if text:
            entry = json.loads(text)["queries"][0]
            t.hits, t.total = len(entry["results"]), int(entry["total_matches"])
            t.fuzzy, t.relaxed = bool(entry["fuzzy"]), bool(entry["relaxed"])
    for _ in range(passes):
        for t in timed:
            t.ms.append(run_one(store, params, t.query.text)[0])
    stage_pass(store, params, timed)
    return timed


def stage_pass(store: Any, params: Any, timed: Sequence[Timed]) -> None:
    """One more pass timing search_command's stages separately (search, budget, JSON)."""
    from ra_query.artifacts.schema import build_analyzer
    from ra_query.commands import dumps
    from ra_query.search.pipeline import search
    from ra_query.search.render import budgeted, to_json

    for t in timed:
        if t.error:
            continue
        a = time.perf_counter()
        topics = search(store, [t.query.text], params)
        b = time.perf_counter()
        outcome = budgeted(topics, "full", None, build_analyzer(store.stemmer))
        c = time.perf_counter()
        payload = to_json(topics, outcome, list_mode=False, stale=None, explain=False)
        dumps(payload)
        d = time.perf_counter()
        t.stages = ((b - a) * 1000, (c - b) * 1000, (d - c) * 1000)


def percentile(values: Sequence[float], p: float) -> float:
    """The p-th percentile (nearest rank) of `values`."""
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(p / 100 * len(ordered) + 0.5) - 1))
    return ordered[k]


def profile_warm(store: Any, queries: Sequence[Query], top: int = 25) -> None:
    """cProfile one pass over the queries; print ranked hot spots and named suspects' shares."""
    params = cli_params(store)
    profiler = cProfile.Profile()
    profiler.enable()
    for q in queries:
        run_one(store, params, q.text)
    profiler.disable()
    stats = pstats.Stats(profiler)
    raw: dict[tuple[str, int, str], tuple[int, int, float, float, Any]] = stats.stats  # type: ignore[attr-defined]
    total = sum(tt for _, _, tt, _, _ in raw.values())

    def where(key: tuple[str, int, str]) -> str:
        file, line, name = key
        if file == "~":
            return name
        rel = os.path.relpath(file, REPO) if file.startswith(str(REPO)) else Path(file).name
        return f"{rel}:{line}({name})"

    print(f"\nwarm cProfile: {len(queries)} queries, {total * 1000:.0f} ms of profiled time")
    print(f"{'self ms':>9} {'self%':>6} {'cum ms':>9} {'cum%':>6} {'calls':>9}  function")
    for key, (_, nc, tt, ct, _) in sorted(raw.items(), key=lambda kv: -kv[1][2])[:top]:
        print(f"{tt * 1000:9.1f} {tt / total:6.1%} {ct * 1000:9.1f} {ct / total:6.1%} {nc:9d}  {where(key)}")
    suspects = [
        ("tantivy searcher.search", lambda k: "'search' of 'tantivy" in k[2]),
        ("tantivy searcher.doc", lambda k: "'doc' of 'tantivy" in k[2]),
        ("Document.to_dict", lambda k: "'to_dict' of 'tantivy" in k[2]),
        ("ChunkRecord.from_stored", lambda k: k[2] == "from_stored"),
        ("_Run.candidates (fetch + score)", lambda k: k[2] == "candidates" and k[0].endswith("search.py")),
        ("build_analyzer", lambda k: k[2] == "build_analyzer"),
        ("analyzer.analyze (all callers)", lambda k: "'analyze' of 'tantivy" in k[2]),
        ("snippet()", lambda k: k[2] == "snippet" and k[0].endswith("search.py")),
        ("matching_words()", lambda k: k[2] == "matching_words"),
        ("_Run.lookup (parents)", lambda k: k[2] == "lookup" and k[0].endswith("search.py")),
        ("Store.get_chunk (term query)", lambda k: k[2] == "get_chunk"),
        ("aggregate.pipeline", lambda k: k[2] == "pipeline" and k[0].endswith("aggregate.py")),
        ("Compiler.compile", lambda k: k[2] == "compile" and k[0].endswith("compile.py")),
        ("parse_query", lambda k: k[2] == "parse_query"),
        ("budgeted (token counts)", lambda k: k[2] == "budgeted"),
        ("count_tokens", lambda k: k[2] == "count_tokens"),
        ("to_json", lambda k: k[2] == "to_json"),
        ("commands.dumps (json)", lambda k: k[2] == "dumps" and k[0].endswith("commands.py")),
    ]
    print(f"\n{'suspect':<34}{'cum ms':>9}{'share':>8}{'calls':>9}")
    for label, match in suspects:
        keys = [k for k in raw if match(k)]
        ct = sum(raw[k][3] for k in keys)
        nc = sum(raw[k][1] for k in keys)
        print(f"{label:<34}{ct * 1000:9.1f}{ct / total:8.1%}{nc:9d}")
    buf = io.StringIO()
    pstats.Stats(profiler, stream=buf).sort_stats("cumulative").print_stats(r"ra_query", 20)
    print("\ncumulative, ra_query only:")
    print("\n".join(line for line in buf.getvalue().splitlines() if line.strip())[-2200:])


# ---- cold, in subprocesses ----------------------------------------------------------------------


@dataclass
class ColdPair:
    """One cold query: ra-query and rg over the same folder, run side by side."""

    query: Query
    rg_args: list[str]
    ra_s: list[float]
    rg_s: list[float]


def rg_patterns(text: str) -> list[str]:
    """The words rg looks for: field names, OR and excluded words dropped, phrases kept whole."""
    out: list[str] = []
    for token in re.findall(r'"[^"]*"|\S+', text):
        if token == "OR" or token.startswith("-"):
            continue
        token = re.sub(r"^(title|path|body|tags|tree):", "", token).strip("()")
        for part in re.findall(r'"[^"]*"|[^\s()"]+', token):
            part = part.strip('"')
            if part and part != "OR":
                out.append(part)
    return out


_RG_META = re.compile(r"([.^$*+?()[\]{}|\\])")  # not re.escape: rg rejects an escaped space


def cold_queries(queries: Sequence[Query]) -> list[Query]:
    """The first query of each type but the big-posting ones (about ten)."""
    wanted = (
        "noun",
        "cmdlet",
        "two_words",
        "three_words",
        "phrase",
        "typo",
        "or",
        "exclude",
        "field",
        "long",
    )
    return [next(q for q in queries if q.kind == kind) for kind in wanted] + [
        next(q for q in queries if q.kind == "nomatch" and " " not in q.text)
    ]


def hyperfine(
    commands: Sequence[tuple[str, list[str]]], warmup: int, runs: int, cwd: Path
) -> list[list[float]]:
    """Wall seconds of every run of each command: hyperfine in one invocation, else our own loop."""
    exe = shutil.which("hyperfine")
    if exe is None:
        return own_timing(commands, warmup, runs, cwd)
    with tempfile.NamedTemporaryFile(suffix=".json") as export:
        argv = [exe, "-N", "-i", "--style", "none", "--warmup", str(warmup), "--runs", str(runs)]
        argv += ["--export-json", export.name]
        for name, cmd in commands:
            argv += ["-n", name, shlex.join(cmd)]
        # its warnings (outliers, non-zero exits: rg and ra-query exit 1 on no match) would drown the report
        subprocess.run(
            argv, cwd=cwd, env=clean_env(), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        data = json.loads(Path(export.name).read_text(encoding="utf-8"))
    return [list(r["times"]) for r in data["results"]]


def own_timing(
    commands: Sequence[tuple[str, list[str]]], warmup: int, runs: int, cwd: Path
) -> list[list[float]]:
    """Interleaved runs of each command (no hyperfine): `warmup` untimed, then `runs` timed."""
    times: list[list[float]] = [[] for _ in commands]
    for i in range(warmup + runs):
        for j, (_, cmd) in enumerate(commands):
            started = time.perf_counter()
            subprocess.run(
                cmd, cwd=cwd, env=clean_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            if i >= warmup:
                times[j].append(time.perf_counter() - started)
    return times


def cold(artifacts: Path, corpus: Path, queries: Sequence[Query], runs: int, cwd: Path) -> list[ColdPair]:
    """ra-query beside rg for each query, in one hyperfine run per query."""
    ra_query = str(ra_executable("ra-query"))
    rg = shutil.which("rg")
    pairs: list[ColdPair] = []
    for q in queries:
        patterns = list(dict.fromkeys(rg_patterns(q.text)))
        rg_args = ["rg", "-il", *[a for p in patterns for a in ("-e", _RG_META.sub(r"\\\1", p))], str(corpus)]
        commands = [("ra-query", [ra_query, "--artifacts", str(artifacts), "search", q.text, "--json"])]
        if rg is not None:
            commands.append(("rg", [rg, *rg_args[1:]]))
        times = hyperfine(commands, 3, runs, cwd)
        pairs.append(ColdPair(q, rg_args, times[0], times[1] if rg is not None else []))
        ra_ms = statistics.median(times[0]) * 1000
        rg_ms = statistics.median(times[1]) * 1000 if rg is not None else float("nan")
        print(f"  {q.kind:<12} ra-query {ra_ms:7.1f} ms   rg {rg_ms:7.1f} ms   {q.text[:60]}")
    return pairs


FLOOR_SCRIPT = """\
import sys
import json, tantivy
index = tantivy.Index.open(sys.argv[1])
searcher = index.searcher()
result = searcher.search(tantivy.Query.term_query(index.schema, "body", sys.argv[2]), limit=5)
sys.stdout.write(json.dumps([searcher.doc(a).to_dict() for _, a in result.hits]))
"""

# One cold search split into phases, inside a fresh process: what a cold `ra-query` pays for.
PHASE_SCRIPT = """\
import time
t0 = time.perf_counter()
import sys
from pathlib import Path
from ra_query.cli import _parser, search_params
t1 = time.perf_counter()
from ra_query.commands import search_command
from ra_query.sources.stale import stale_files
from ra_query.artifacts.store import open_store
t2 = time.perf_counter()
import tantivy
t3 = time.perf_counter()
store = open_store(Path(sys.argv[1]))
t4 = time.perf_counter()
stale = stale_files(store.root, store.manifest)
t5 = time.perf_counter()
params = search_params(_parser().parse_args(["search", sys.argv[2], "--json"]), store.search_defaults())
out = search_command(store, [sys.argv[2]], params, json=True, stale=stale)
t6 = time.perf_counter()
sys.stdout.write(out.text)
t7 = time.perf_counter()
marks = (t0, t1, t2, t3, t4, t5, t6, t7)
print("PHASES", *(f"{(b - a) * 1000:.3f}" for a, b in zip(marks, marks[1:])), file=sys.stderr)
"""
PHASES = (
    "import ra_query.cli",
    "import commands/stale/store (+render, search, json)",
    "import tantivy",
    "open_store (manifest, symlinks, Index.open)",
    "stale_files (the CLI forks it first; it overlaps everything else)",
    "search_command (search, budget, JSON)",
    "write stdout",
)


def phase_breakdown(artifacts: Path, text: str, repeat: int, cwd: Path) -> tuple[list[float], float]:
    """Median ms per phase over `repeat` fresh processes, and the median whole-process wall ms."""
    rows: list[list[float]] = []
    walls: list[float] = []
    for _ in range(repeat + 1):  # the first run warms the page cache and is dropped
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", PHASE_SCRIPT, str(artifacts), text],
            cwd=cwd,
            env=clean_env(),
            capture_output=True,
            text=True,
            encoding="utf-8",
        )
        walls.append((time.perf_counter() - started) * 1000)
        line = next((ln for ln in proc.stderr.splitlines() if ln.startswith("PHASES")), None)
        if line is None:
            raise SystemExit(f"phase probe failed:\n{proc.stderr}")
        rows.append([float(x) for x in line.split()[1:]])
    rows, walls = rows[1:], walls[1:]
    return [statistics.median(col) for col in zip(*rows, strict=True)], statistics.median(walls)


def importtime(statement: str, repeat: int, cwd: Path) -> tuple[float, list[tuple[str, float, float]]]:
    """`-X importtime` of `statement`: median total ms and modules by median self ms (self, cum)."""
    totals: list[float] = []
    per: dict[str, list[tuple[float, float]]] = {}
    for _ in range(repeat):
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", statement],
            cwd=cwd,
            env=clean_env(),
            capture_output=True,
            text=True,
            encoding="utf-8",
        )
        total = 0.0
        for line in proc.stderr.splitlines():
            m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)", line)
            if not m:
                continue
            self_us, cum_us, indent, name = int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)
            if not indent:  # top level: the cumulative figures add up to the whole
                total += cum_us / 1000
            per.setdefault(name, []).append((self_us / 1000, cum_us / 1000))
        totals.append(total)
    ranked = sorted(
        (
            (name, statistics.median(s for s, _ in v), statistics.median(c for _, c in v))
            for name, v in per.items()
        ),
        key=lambda row: -row[1],
    )
    return statistics.median(totals), ranked


# ---- report -------------------------------------------------------------------------------------


def print_warm(timed: Sequence[Timed]) -> dict[str, float]:
    medians = [t.median for t in timed]
    figures = {
        "p50": percentile(medians, 50),
        "p95": percentile(medians, 95),
        "p99": percentile(medians, 99),
        "max": max(medians),
        "mean": statistics.fmean(medians),
    }
    print(
        f"\nwarm, per query (median of passes) over {len(timed)} queries: "
        + "  ".join(f"{k} {v:.2f} ms" for k, v in figures.items())
    )
    print(f"\n{'type':<12}{'n':>4}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}", end="")
    print(f"{'fuzzy':>7}{'relax':>7}{'no hit':>8}{'error':>7}")
    kinds = sorted(
        {t.query.kind for t in timed},
        key=lambda k: -statistics.median(t.median for t in timed if t.query.kind == k),
    )
    for kind in kinds:
        rows = [t for t in timed if t.query.kind == kind]
        ms = [t.median for t in rows]
        print(
            f"{kind:<12}{len(rows):4d}{statistics.median(ms):9.2f}{percentile(ms, 95):9.2f}{max(ms):9.2f}"
            f"{sum(t.fuzzy for t in rows):7d}{sum(t.relaxed for t in rows):7d}"
            f"{sum(t.hits == 0 for t in rows):8d}{sum(bool(t.error) for t in rows):7d}"
        )
    staged = [t for t in timed if not t.error]
    sums = [sum(t.stages[i] for t in staged) for i in range(3)]
    whole = sum(sums) or 1.0
    print(
        "\nstages (separate pass, no profiler), share of total: "
        + "  ".join(
            f"{name} {s / whole:.0%} ({s / len(staged):.2f} ms/query)"
            for name, s in zip(("search", "budget/token count", "to_json+dumps"), sums, strict=True)
        )
    )
    print("\nslowest 12 queries:")
    for t in sorted(timed, key=lambda t: -t.median)[:12]:
        flags = ",".join(
            f for f, on in (("fuzzy", t.fuzzy), ("relaxed", t.relaxed), ("nohit", t.hits == 0)) if on
        )
        print(
            f"  {t.median:7.2f} ms  {t.query.kind:<11} matches={t.total:<7} stages(search/budget/json)="
            f"{'/'.join(f'{s:.1f}' for s in t.stages)}  {flags:<14} {t.query.text[:70]}"
        )
    errors = [t for t in timed if t.error]
    if errors:
        first = errors[0]
        print(
            f"\n{len(errors)} queries raised a syntax error (timed anyway),"
            f" e.g. {first.query.text!r}: {first.error}"
        )
    return figures


Row = tuple[str, str, str, bool | None]  # figure, measured, floor, verdict (None: no floor)


def prepare(args: argparse.Namespace) -> tuple[Path, Path, float | None]:
    """(artifacts, corpus, build seconds or None): reuse ``--artifacts`` when this ra reads it, else build."""
    from ra_query.artifacts.store import open_store
    from ra_query.errors import ArtifactError

    given: Path | None = args.artifacts
    if given is not None and (given / "manifest.json").is_file():
        try:
            open_store(given)
            artifacts = given.resolve()
            corpus = corpus_of(artifacts)
            print(f"reusing {artifacts} (corpus {corpus})")
            return artifacts, corpus, None
        except ArtifactError as exc:  # built by another ra version: this one cannot read it
            print(f"cannot reuse {given} ({exc.message}); building afresh")
    scratch = Path(tempfile.mkdtemp(prefix="ra-bench-query-"))  # kept: --artifacts reuses it
    if args.dir is not None or DEFAULT_DIR.is_dir():
        corpus = Path(args.dir or DEFAULT_DIR).resolve()
    else:
        corpus = scratch / "corpus"
        corpus.mkdir()
        with tarfile.open(args.tarball) as archive:
            archive.extractall(corpus, filter="data")
    print(f"indexing {corpus} …")
    artifacts, seconds = build_index(corpus, scratch)
    shutil.rmtree(scratch / "home", ignore_errors=True)
    return artifacts, corpus, seconds


def compile_package() -> None:
    """Write the .pyc files of ra_query (as installing a wheel does), so no cold run compiles."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(REPO / "ra_query")],
        env=clean_env(),
        check=True,
        stdout=subprocess.DEVNULL,
    )


def run_cold(
    artifacts: Path, corpus: Path, queries: Sequence[Query], runs: int, work: Path
) -> tuple[list[Row], str]:
    """Every subprocess measurement; (table rows, fields for the results line)."""
    compile_package()
    print(f"\ncold: ra-query vs rg -il, hyperfine -N --warmup 3 --runs {runs} per query")
    pairs = cold(artifacts, corpus, cold_queries(queries), runs, work)
    ra_all = [s * 1000 for p in pairs for s in p.ra_s]
    rg_all = [s * 1000 for p in pairs for s in p.rg_s]
    ra_p50 = statistics.median(ra_all)
    rg_p50 = statistics.median(rg_all) if rg_all else float("nan")
    wins = sum(statistics.median(p.ra_s) <= statistics.median(p.rg_s) for p in pairs if p.rg_s)

    start_ms = statistics.median(hyperfine([("python", [sys.executable, "-c", "pass"])], 3, 20, work)[0])
    floor_py = work / "floor.py"
    floor_py.write_text(FLOOR_SCRIPT, encoding="utf-8")
    floor_cmd = [sys.executable, str(floor_py), str(artifacts / "index"), "aduser"]
    floor_ms = statistics.median(hyperfine([("floor", floor_cmd)], 3, 20, work)[0])
    start_ms, floor_ms = start_ms * 1000, floor_ms * 1000
    imp_cli, _ = importtime("import ra_query.cli", 5, work)
    everything = (
        "import ra_query.cli, ra_query.commands, ra_query.artifacts.store, ra_query.sources.stale, tantivy"
    )
    imp_all, ranked = importtime(everything, 5, work)
    probe = pairs[0].query.text
    phases, wall = phase_breakdown(artifacts, probe, 10, work)

    print(
        f"\ncold ra-query p50 {ra_p50:.1f} ms (p95 {percentile(ra_all, 95):.1f}) vs rg p50 {rg_p50:.1f} ms;"
        f" ra-query ≤ rg on {wins} of {len(pairs)} queries"
    )
    print(f"python -c pass                             {start_ms:7.1f} ms")
    print(f"bare floor (tantivy+open+search+json)      {floor_ms:7.1f} ms")
    print(f"-X importtime: import ra_query.cli         {imp_cli:7.1f} ms")
    print(f"-X importtime: all a search imports        {imp_all:7.1f} ms; top modules by self time:")
    for name, self_ms, cum_ms in ranked[:12]:
        print(f"    {self_ms:6.1f} ms self {cum_ms:7.1f} ms cum  {name}")
    print(
        f"\ncold phases of `ra-query search {probe!r} --json`"
        f" (median of 10 fresh processes, wall {wall:.0f} ms incl. interpreter):"
    )
    for name, ms in zip(PHASES, phases, strict=True):
        print(f"    {ms:7.1f} ms  {name}")
    print(f"    {wall - sum(phases):7.1f} ms  interpreter start-up/teardown (wall − phases)")
    print(f"    → without the stale walk: ~{wall - phases[4]:.0f} ms")
    rows: list[Row] = [
        ("cold ra-query p50", f"{ra_p50:.1f} ms", f"<= rg p50 {rg_p50:.1f} ms", ra_p50 <= rg_p50),
        ("cold bare floor", f"{floor_ms:.1f} ms", "", None),
        ("python start", f"{start_ms:.1f} ms", "", None),
        ("import ra_query.cli", f"{imp_cli:.1f} ms", "", None),
    ]
    extra = (
        f" cold_ra_p50_ms={ra_p50:.1f} cold_rg_p50_ms={rg_p50:.1f} ra_le_rg={wins}/{len(pairs)}"
        f" floor_ms={floor_ms:.1f} python_start_ms={start_ms:.1f} import_cli_ms={imp_cli:.1f}"
        f" import_all_ms={imp_all:.1f} phase_wall_ms={wall:.1f} open_ms={phases[3]:.1f}"
        f" stale_ms={phases[4]:.1f} search_command_ms={phases[5]:.1f}"
    )
    return rows, extra


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--dir", type=Path, help="an unpacked corpus (default /tmp/corpora/ps if present)")
    parser.add_argument("--tarball", type=Path, default=DEFAULT_TARBALL)
    parser.add_argument("--artifacts", type=Path, help="reuse this build (a .ra dir) instead of building")
    parser.add_argument("--passes", type=int, default=3, help="timed warm passes (the figure is the median)")
    parser.add_argument("--runs", type=int, default=30, help="timed cold runs per command (after 3 warm-ups)")
    parser.add_argument("--profile", action="store_true", help="also cProfile one warm pass (printed only)")
    parser.add_argument("--no-cold", action="store_true", help="skip the subprocess measurements")
    parser.add_argument("--no-record", action="store_true", help="do not append to bench/results/query.txt")
    args = parser.parse_args()

    load_before = os.getloadavg()
    if load_before[0] > 0.5:
        print(f"warning: load average {load_before[0]:.2f} before start — figures will be pessimistic")
    work = Path(tempfile.mkdtemp(prefix="ra-bench-query-work-"))  # transient, always removed
    try:
        artifacts, corpus, build_s = prepare(args)
        if not corpus.is_dir():
            raise SystemExit(f"{corpus}: the corpus of this build is gone — run without --artifacts")
        files = markdown_files(corpus)
        md_bytes = sum(p.stat().st_size for p in files)
        print(f"corpus: {len(files):,} .md files, {md_bytes / 1e6:.1f} MB")

        queries = make_query_set(corpus)
        if write_query_set(queries, QUERY_SET):
            print(f"note: {QUERY_SET.name} changed (another corpus?): not comparable with earlier lines")
        print(f"{len(queries)} queries → {QUERY_SET.relative_to(REPO)}")

        from ra_query.artifacts.store import open_store

        started = time.perf_counter()
        store = open_store(artifacts)
        open_ms = (time.perf_counter() - started) * 1000
        chunks = sum(int(t.get("chunks", 0)) for t in store.trees().values())
        print(f"open_store {open_ms:.1f} ms; {chunks:,} chunks")

        figures = print_warm(warm(store, queries, max(1, args.passes)))
        p50, p95 = figures["p50"], figures["p95"]
        rows: list[Row] = [
            ("warm p50", f"{p50:.2f} ms", f"<= {FLOOR_WARM_P50_MS} ms", p50 <= FLOOR_WARM_P50_MS),
            ("warm p95", f"{p95:.2f} ms", f"<= {FLOOR_WARM_P95_MS} ms", p95 <= FLOOR_WARM_P95_MS),
            ("warm p99", f"{figures['p99']:.2f} ms", "", None),
            ("warm max", f"{figures['max']:.2f} ms", "", None),
        ]
        extra = ""
        if not args.no_cold:
            cold_rows, extra = run_cold(artifacts, corpus, queries, args.runs, work)
            rows += cold_rows

        print(f"\n{'figure':<22}{'measured':<14}{'floor':<26}verdict")
        for name, value, floor, ok in rows:
            print(f"{name:<22}{value:<14}{floor:<26}{'' if ok is None else verdict(ok)}")

        if args.profile:
            profile_warm(store, queries)

        load_after = os.getloadavg()
        line = (
            f"{dt.datetime.now().astimezone().isoformat(timespec='seconds')}  corpus={corpus.name} "
            f"files={len(files)} chunks={chunks} queries={len(queries)} passes={args.passes} "
            f"warm_p50_ms={p50:.2f} warm_p95_ms={p95:.2f} "
            f"warm_p99_ms={figures['p99']:.2f} warm_max_ms={figures['max']:.2f} open_store_ms={open_ms:.1f}"
            + extra
            + (f" build_s={build_s:.1f}" if build_s is not None else "")
            + f" load1={load_before[0]:.2f}/{load_after[0]:.2f} python={platform.python_version()} "
            f"nproc={os.cpu_count()} git={git_head()} "
            + " ".join(f"{name.replace(' ', '_')}={verdict(ok)}" for name, _, _, ok in rows if ok is not None)
        )
        if not args.no_record:
            RESULTS.parent.mkdir(parents=True, exist_ok=True)
            with RESULTS.open("a", encoding="utf-8") as out:
                out.write(line + "\n")
            print(f"appended to {RESULTS.relative_to(REPO)}")
        if build_s is not None:
            print(f"kept the build: rerun with --artifacts {artifacts}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Benchmark: the read-only query side on a real corpus — warm in-process latency and cold `ra-query`.

    .venv/bin/python bench/query.py [--dir DIR | --tarball PATH] [--artifacts DIR]
                                    [--passes N] [--runs N] [--profile] [--no-cold] [--rev REV]
                                    [--no-record]

1. Index. With ``--artifacts DIR`` holding a manifest, that build is reused (its corpus is the
   folder the manifest records). Otherwise the corpus (``--dir``, default /tmp/corpora/ps when it
   exists, else the tarball unpacked into a temp dir) is indexed by the real pipeline: a temp
   project with ``.ra.toml`` (``root = true``, ``[tree.ps] path = …``) and ``ra update`` as a
   subprocess with HOME an empty temp dir. That build is kept and its path printed, so the next
   run can pass it to ``--artifacts``.
2. Query set (bench/query_set.py): ≥ 300 mixed queries derived from the corpus with a fixed seed
   (cmdlet nouns and verbs, cmdlet names, title words, two and three words of one line, quoted
   phrases, one-edit typos, OR, ``-term`` exclusions, field queries, long sentence-like queries,
   nonsense), written to bench/results/query_set.txt as ``type<TAB>query`` so runs stay comparable.
3. Warm: the store is opened once; every query goes through exactly what ``ra-query search Q
   --json`` runs after opening — ``search_command(store, [q], params, json=True)`` with the
   params of ``ra_query.cli.search_params`` — timed with ``perf_counter`` after a warm-up pass.
   The figure per query is the median over ``--passes`` passes; p50/p95/p99/max are over queries.
   A separate pass times the stages (search, budget, to_json + JSON text) without a profiler.
4. Cold: ``ra-query --artifacts DIR search Q --json`` as a subprocess beside ``rg -il -e w1 …``
   over the same markdown folder, in one hyperfine run per query (``--warmup 3 --runs 30``; own
   timing loop when hyperfine is missing). Also: bare python start, the bare floor (python +
   ``import tantivy`` + ``Index.open`` + one search + ``json.dumps``), ``-X importtime`` of the
   CLI, and a phase breakdown of one cold search measured inside fresh processes. ``--rev REV``
   adds, in the same hyperfine run per query, the cold search of REV (a ``git worktree`` in a temp
   dir, removed afterwards) and of the working tree, both run alike (this venv's python calling
   each checkout's console entry), and their ratio: was a change neutral for a cold search?
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
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (
    DEFAULT_TARBALL,
    REPO,
    TREE,
    build_project,
    clean_env,
    compile_sources,
    corpus_folder,
    entry_command,
    git_head,
    ra_executable,
    verdict,
    worktree,
)
from query_set import QUERY_SET, Query, make_query_set, markdown_files, write_query_set

sys.path.insert(0, str(REPO))

RESULTS = REPO / "bench" / "results" / "query.txt"
PIPELINE = "search/pipeline.py"  # ra_query.search.pipeline, for the profile's rows

FLOOR_WARM_P50_MS = 5.0
FLOOR_WARM_P95_MS = 20.0

# ---- corpus and index ---------------------------------------------------------------------------


def corpus_of(artifacts: Path) -> Path:
    """The source folder of tree `ps` that the manifest at `artifacts` records."""
    manifest = json.loads((artifacts / "manifest.json").read_text(encoding="utf-8"))
    try:
        return Path(manifest["trees"][TREE]["sources"]["root"])
    except (KeyError, TypeError):
        raise SystemExit(f"{artifacts}: the manifest records no source folder for tree {TREE!r}") from None


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
    from ra_query.cli import build_parser, search_params

    args = build_parser().parse_args(["search", "placeholder", "--json"])
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
    # typeshed's pstats.Stats leaves out the `stats` dict every Stats object has
    raw: dict[tuple[str, int, str], tuple[int, int, float, float, Any]] = stats.stats  # pyright: ignore[reportAttributeAccessIssue]
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
        ("_Run.candidates (fetch + score)", lambda k: k[2] == "candidates" and k[0].endswith(PIPELINE)),
        ("build_analyzer", lambda k: k[2] == "build_analyzer"),
        ("analyzer.analyze (all callers)", lambda k: "'analyze' of 'tantivy" in k[2]),
        ("snippet()", lambda k: k[2] == "snippet" and k[0].endswith(PIPELINE)),
        ("matching_words()", lambda k: k[2] == "matching_words"),
        ("_Run.lookup (parents)", lambda k: k[2] == "lookup" and k[0].endswith(PIPELINE)),
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
    sides: dict[str, list[float]] = field(default_factory=dict)  # --rev: that revision's and the tree's


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


def cold(
    artifacts: Path, corpus: Path, queries: Sequence[Query], runs: int, cwd: Path, sides: dict[str, Path]
) -> list[ColdPair]:
    """ra-query beside rg for each query, in one hyperfine run per query; with `sides` (name →
    checkout), also each checkout's `ra-query` run the same way (bench/common.py entry_command)."""
    ra_query = str(ra_executable("ra-query"))
    rg = shutil.which("rg")
    pairs: list[ColdPair] = []
    for q in queries:
        patterns = list(dict.fromkeys(rg_patterns(q.text)))
        rg_args = ["rg", "-il", *[a for p in patterns for a in ("-e", _RG_META.sub(r"\\\1", p))], str(corpus)]
        commands = [("ra-query", [ra_query, "--artifacts", str(artifacts), "search", q.text, "--json"])]
        if rg is not None:
            commands.append(("rg", [rg, *rg_args[1:]]))
        search = ("--artifacts", str(artifacts), "search", q.text, "--json")
        for name, source in sides.items():
            commands.append((f"ra-query {name}", entry_command(source, "ra-query", *search)))
        times = hyperfine(commands, 3, runs, cwd)
        by_side = dict(zip(sides, times[len(commands) - len(sides) :], strict=True))
        pairs.append(ColdPair(q, rg_args, times[0], times[1] if rg is not None else [], by_side))
        ra_ms = statistics.median(times[0]) * 1000
        rg_ms = statistics.median(times[1]) * 1000 if rg is not None else float("nan")
        also = "".join(f"{name} {statistics.median(s) * 1000:7.1f} ms   " for name, s in by_side.items())
        print(f"  {q.kind:<12} ra-query {ra_ms:7.1f} ms   rg {rg_ms:7.1f} ms   {also}{q.text[:60]}")
    return pairs


FLOOR_SCRIPT = """\
import sys
import json, tantivy
index = tantivy.Index.open(sys.argv[1])
searcher = index.searcher()
result = searcher.search(tantivy.Query.term_query(index.schema, "text", sys.argv[2]), limit=5)
sys.stdout.write(json.dumps([searcher.doc(a).to_dict() for _, a in result.hits]))
"""

# One cold search split into phases, inside a fresh process: what a cold `ra-query` pays for.
PHASE_SCRIPT = """\
import time
t0 = time.perf_counter()
import sys
from pathlib import Path
from ra_query.cli import build_parser, search_params
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
params = search_params(build_parser().parse_args(["search", sys.argv[2], "--json"]), store.search_defaults())
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
    corpus = corpus_folder(args.dir, scratch / "corpus", args.tarball)
    print(f"indexing {corpus} …")
    artifacts, seconds, summary = build_project(scratch / "project", scratch / "home", corpus)
    print(f"built in {seconds:.1f} s: {summary}")
    shutil.rmtree(scratch / "home", ignore_errors=True)
    return artifacts, corpus, seconds


def run_cold(
    artifacts: Path, corpus: Path, queries: Sequence[Query], runs: int, work: Path, rev: str | None
) -> tuple[list[Row], str]:
    """Every subprocess measurement; (table rows, fields for the results line)."""
    compile_sources(REPO)
    print(f"\ncold: ra-query vs rg -il, hyperfine -N --warmup 3 --runs {runs} per query")
    with worktree(rev, work) if rev is not None else nullcontext() as checkout:
        sides: dict[str, Path] = {}
        if rev is not None and checkout is not None:
            compile_sources(checkout)
            sides = {rev: checkout, "tree": REPO}
        for name, source in sides.items():  # a side that fails would be timed failing
            probe = entry_command(source, "ra-query", "--artifacts", str(artifacts), "search", "pool")
            done = subprocess.run(probe, cwd=work, env=clean_env(), capture_output=True, text=True)
            if done.returncode not in (0, 1):
                raise SystemExit(f"ra-query of {name} failed: {done.stderr.strip()}")
        pairs = cold(artifacts, corpus, cold_queries(queries), runs, work, sides)
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
    if rev is not None:
        rev_p50, tree_p50 = (statistics.median(s * 1000 for p in pairs for s in p.sides[n]) for n in sides)
        print(
            f"\ncold ra-query p50, each checkout's console entry run alike: {rev} {rev_p50:.1f} ms,"
            f" working tree {tree_p50:.1f} ms; tree/{rev} = {tree_p50 / rev_p50:.3f}"
        )
        rows.append((f"cold tree/{rev}", f"{tree_p50 / rev_p50:.3f}", "", None))
        extra += (
            f" cold_rev={rev} cold_rev_p50_ms={rev_p50:.1f} cold_tree_p50_ms={tree_p50:.1f}"
            f" cold_tree_rev_ratio={tree_p50 / rev_p50:.3f}"
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
    parser.add_argument("--rev", help="also time the cold ra-query of this git revision beside the tree's")
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
            cold_rows, extra = run_cold(artifacts, corpus, queries, args.runs, work, args.rev)
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

"""Benchmark: what semantic search costs (issue 21) — embedding, searching, starting, storing.

    python bench/semantic.py [--corpus DIR] [--files N] [--runs N] [--calls N] [--work DIR]

Over a sample of the powershell docs (every k-th of its markdown files, `--files` of them —
by default enough for about 10,000 chunks, the size the MCP floor names; `--files 0`: all
14k files, ~312k chunks, most of an hour), it measures:

- embedding throughput: the project is built without vectors, then `semantic = true` is set
  and `ra update` runs again, which runs the embed stage alone; chunks embedded per second of
  that update's wall time (its summary line counts them);
- vector bytes per chunk: the `vectors/` artifacts over the chunks that have a vector (a chunk
  longer than the model reads has one per window);
- hybrid warm search: `search` in this process over the opened index, the model loaded, each
  of QUESTIONS in turn (p50 / p95 over `--runs` rounds), beside the same searches `--lexical`;
- MCP: `ra-query mcp` answering `--calls` search calls through the SDK's client (p50 / p95;
  floor 15 ms), QUESTIONS in turn; then as many calls each asking a question not asked before
  (QUESTIONS worded otherwise: `new_questions`), whose embedding the search's cache of query
  vectors cannot answer;
- cold `ra-query search --list` on the hybrid index, a new process each time, alternating
  with `--lexical` (medians; floor 300 ms).

Prints a table with the machine's load and appends it to bench/results/semantic.txt.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, clean_env, compile_sources, corpus_folder, git_head, ra_executable, run_ra, verdict
from common import write_project as write_ra_toml
from latency import mcp_figures

# an agent's questions about PowerShell, in its own words (not the pages' titles)
QUESTIONS = [
    "how do I find which process is listening on a port",
    "stop a windows service from a script",
    "list the members of an active directory group",
    "make a script run every night",
    "check whether a file exists before reading it",
    "see what modules are installed and their versions",
    "send an http request and parse the json it returns",
    "give a user full control of a folder",
]
MCP_P50_FLOOR, COLD_FLOOR = 15.0, 300.0  # ms (issue 21)
# ways an agent words the same needs: QUESTIONS asked again hit the search's cache of query
# vectors, so a second MCP figure asks each call a question the server has not seen
LEADS = (
    "",
    "in powershell, ",
    "how can I ",
    "what is the cmdlet to ",
    "is there a way to ",
    "show me how to ",
)
TAILS = (
    "",
    " on a remote computer",
    " on windows server",
    " from the command line",
    " in a script",
    " for every user",
)


def new_questions(count: int) -> list[str]:
    """`count` questions, no two alike: QUESTIONS with other lead-ins and endings."""
    import itertools

    variants = [f"{lead}{q}{tail}" for lead, tail, q in itertools.product(LEADS, TAILS, QUESTIONS)]
    return [
        variants[i % len(variants)] + (f" ({i // len(variants)})" if i >= len(variants) else "")
        for i in range(count)
    ]


def sample(corpus: Path, target: Path, files: int) -> int:
    """Copy every k-th markdown file of `corpus` (sorted paths) to `target`, `files` of them
    (0: all); the number copied."""
    paths = sorted(p for p in corpus.rglob("*.md") if p.is_file() and "/." not in str(p.relative_to(corpus)))
    step = max(1, len(paths) // files) if files else 1
    chosen = paths[::step][:files] if files else paths
    for path in chosen:
        copy = target / path.relative_to(corpus)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)
    return len(chosen)


def embedding_figures(project: Path, home: Path, corpus: Path) -> tuple[int, float, float, float]:
    """(chunks embedded, seconds of the update that embedded them, chunks/s, seconds of the
    build without vectors)."""
    write_ra_toml(project, corpus)
    plain, _ = run_ra(project, home, "update")
    write_ra_toml(project, corpus, settings={"settings": {"semantic": "true"}})
    seconds, summary = run_ra(project, home, "update")
    # "... N parsed, M embedded in S s"
    words = summary.replace(",", "").split()
    embedded = int(words[words.index("embedded") - 1]) if "embedded" in words else 0
    if not embedded:
        raise SystemExit(f"the semantic update embedded nothing: {summary}")
    return embedded, seconds, embedded / seconds, plain


def vector_bytes(artifacts: Path) -> tuple[int, int, int]:
    """(bytes of vectors/, rows, chunks): every file the vectors take, and the chunks that have
    one or more rows (a long chunk has a row per window)."""
    import json

    from ra_query.artifacts.vectors import RowIds

    meta = json.loads((artifacts / "vectors" / "meta.json").read_text(encoding="utf-8"))
    rows = sum(int(n) for n in meta["trees"].values())
    chunks = 0
    for tree in meta["trees"]:
        ids = RowIds(str(artifacts / "vectors" / f"{tree}.ids"))
        chunks += len({ids[row] for row in range(len(ids))}) if len(ids) else 0
    size = sum(p.stat().st_size for p in (artifacts / "vectors").iterdir() if p.is_file())
    return size, rows, chunks


def warm_figures(artifacts: Path, runs: int) -> dict[str, tuple[float, float]]:
    """{mode: (p50, p95) ms} of in-process searches of QUESTIONS, hybrid and lexical, warm."""
    from quality import default_params

    from ra_query.artifacts.store import open_store
    from ra_query.search.pipeline import search

    store = open_store(artifacts)
    modes = {"hybrid": default_params(store, "hybrid"), "lexical": default_params(store, "lexical")}
    for mode in modes.values():  # load the model, the index's readers, the page cache
        search(store, QUESTIONS[:1], mode)
    times: dict[str, list[float]] = {name: [] for name in modes}
    for _ in range(runs):
        for question in QUESTIONS:
            for name, mode in modes.items():
                started = time.perf_counter()
                search(store, [question], mode)
                times[name].append((time.perf_counter() - started) * 1000)
    return {name: _p50_p95(values) for name, values in times.items()}


def cold_figures(project: Path, home: Path, runs: int) -> dict[str, float]:
    """{mode: median ms} of `ra-query search --list` in a new process, hybrid and --lexical
    alternating, over QUESTIONS in turn."""
    ra_query = str(ra_executable("ra-query"))
    env = clean_env(home)
    modes = {"hybrid": [], "lexical": ["--lexical"]}
    times: dict[str, list[float]] = {name: [] for name in modes}
    for i in range(runs):
        question = QUESTIONS[i % len(QUESTIONS)]
        order = list(modes.items()) if i % 2 == 0 else list(reversed(modes.items()))
        for name, extra in order:
            started = time.perf_counter()
            done = subprocess.run(
                [ra_query, "search", "--list", *extra, question],
                cwd=project,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                check=False,
            )
            times[name].append((time.perf_counter() - started) * 1000)
            if done.returncode not in (0, 1):
                raise SystemExit(f"ra-query search failed: {done.stderr.strip()}")
    return {name: statistics.median(values) for name, values in times.items()}


def _p50_p95(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help="the powershell docs unpacked (default: /tmp/corpora/ps)")
    parser.add_argument("--files", type=int, default=600, help="files sampled (~17 chunks each); 0: all")
    parser.add_argument("--runs", type=int, default=20, help="rounds of warm searches; cold runs per mode")
    parser.add_argument("--calls", type=int, default=300, help="MCP search calls")
    parser.add_argument("--work", type=Path, help="where the sample and its project go (default: a temp dir)")
    args = parser.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="ra-bench-semantic-")).resolve()
    shutil.rmtree(work / "sample", ignore_errors=True)
    shutil.rmtree(work / "project", ignore_errors=True)
    corpus = corpus_folder(args.corpus, work / "corpus")
    files = sample(corpus, work / "sample", args.files)
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    compile_sources(REPO)
    load_before = os.getloadavg()
    project = work / "project"
    embedded, embed_seconds, rate, plain_seconds = embedding_figures(project, home, work / "sample")
    size, rows, chunks = vector_bytes(project / ".ra")
    warm = warm_figures(project / ".ra", args.runs)
    _, mcp_p50, mcp_p95 = mcp_figures(
        [str(ra_executable("ra-query")), "mcp"], project, args.calls, QUESTIONS, env=clean_env(home)
    )
    _, new_p50, new_p95 = mcp_figures(
        [str(ra_executable("ra-query")), "mcp"],
        project,
        args.calls,
        new_questions(args.calls),
        env=clean_env(home),
    )
    cold = cold_figures(project, home, args.runs)
    load_after = os.getloadavg()

    lines = [
        f"semantic costs at {git_head()}, {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, "
        f"load {load_before[0]:.2f} before / {load_after[0]:.2f} after",
        f"sample: {files} powershell files, {chunks} chunks with a vector, {rows} rows (every k-th file "
        f"of {corpus})",
        "",
        "| cost | figure | floor |",
        "|---|---|---|",
        f"| embedding (the update that adds vectors) | {embedded} chunks in {embed_seconds:.1f} s: "
        f"**{rate:.0f} chunks/s** (the build without vectors: {plain_seconds:.1f} s) | |",
        f"| vector bytes per chunk | {size / max(chunks, 1):.0f} ({rows / max(chunks, 1):.2f} rows of 384 "
        "float32 = 1536 bytes, + their ids) | |",
        f"| warm search, hybrid | p50 {warm['hybrid'][0]:.1f} ms, p95 {warm['hybrid'][1]:.1f} ms "
        f"(lexical: p50 {warm['lexical'][0]:.1f}, p95 {warm['lexical'][1]:.1f}) | |",
        f"| MCP search call, hybrid ({chunks} chunks) | p50 **{mcp_p50:.1f} ms**, p95 {mcp_p95:.1f} ms "
        f"| ≤ {MCP_P50_FLOOR:.0f} ms p50: {verdict(mcp_p50 <= MCP_P50_FLOOR)} |",
        f"| the same, a question not asked before each call (its embedding included) | p50 {new_p50:.1f} ms, "
        f"p95 {new_p95:.1f} ms | |",
        f"| cold `ra-query search`, hybrid | median **{cold['hybrid']:.0f} ms** (--lexical: "
        f"{cold['lexical']:.0f} ms) | ≤ {COLD_FLOOR:.0f} ms: {verdict(cold['hybrid'] <= COLD_FLOOR)} |",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    results = REPO / "bench" / "results"
    results.mkdir(parents=True, exist_ok=True)
    with open(results / "semantic.txt", "a", encoding="utf-8") as out:
        out.write(text + "\n")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

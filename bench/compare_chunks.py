"""Corpus comparison: the chunk stage of a git revision and of the working tree write the same tables.

    .venv/bin/python bench/compare_chunks.py [--rev REV] [--tarball PATH | --dir DIR] [--edits N]

The revision is checked out with `git worktree add` in a temp directory; each side runs the real
discover and chunk stages (all cores, as `ra update` does) in its own process, with this venv's
python and PYTHONPATH pointing at its source, over ONE copy of the corpus, so sizes and mtimes
agree. Every chunk shard and the file table must be equal (`pyarrow.Table.equals`, every column,
mtimes included). Then N files of the copy get a line appended and both sides update their own
artifacts incrementally, and the tables are compared again (the shard merge path).

Prints the verdict and each side's chunk-stage wall time and CPU seconds (its workers included;
the timings are a by-product, not a benchmark); exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DEFAULT_TARBALL, REPO, place_corpus, worktree

TREE = "corpus"

# Run inside each side's interpreter: only APIs both old and new revisions have (a revision
# before the rooms of 89a6c53 has the same functions in flat modules).
_BUILD = """
import json, resource, sys, time
from pathlib import Path
try:
    from ra_build.config.model import DEFAULT_INCLUDE, Settings, TreeConfig
    from ra_build.artifacts.layout import Layout
    from ra_build.pipeline.chunk_stage import ChunkSettings, chunk_stage
    try:
        from ra_build.pipeline.discover import discover_stage
    except ImportError:
        from ra_build.pipeline.chunk_stage import discover_stage
except ImportError:
    from ra_build.config import DEFAULT_INCLUDE, Settings, TreeConfig
    from ra_build.layout import Layout
    from ra_build.stages import ChunkSettings, chunk_stage, discover_stage

corpus, artifacts, tree = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
config = TreeConfig(
    name=tree, path=corpus, include=DEFAULT_INCLUDE, exclude=(), is_global=False, source=corpus, line=0
)
layout = Layout(artifacts)
discover_stage(config, layout)
defaults = Settings()

def cpu():
    return sum(
        resource.getrusage(who).ru_utime + resource.getrusage(who).ru_stime
        for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )

started, cpu_started = time.perf_counter(), cpu()
stats = chunk_stage(config, layout, ChunkSettings(defaults.max_file_size, defaults.max_chunk_size))
seconds, cpu_seconds = time.perf_counter() - started, cpu() - cpu_started
counts = {"parsed": len(stats.parsed), "chunks": stats.chunks}
print(json.dumps({"seconds": seconds, "cpu": cpu_seconds, **counts}))
"""


def build(source: Path, corpus: Path, artifacts: Path) -> dict[str, float]:
    """Run discover + chunk with the code under `source`; return its timing and counts."""
    env = {"PYTHONPATH": str(source), "PATH": "/usr/bin:/bin", "HOME": str(artifacts.parent)}
    done = subprocess.run(
        [sys.executable, "-c", _BUILD, str(corpus), str(artifacts), TREE],
        cwd=source,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        sys.exit(f"the build with {source} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def differences(left: Path, right: Path) -> list[str]:
    """What differs between the chunk tables and file tables under two artifact directories."""
    found: list[str] = []
    left_chunks, right_chunks = left / "chunks", right / "chunks"
    names = sorted(
        {p.relative_to(left_chunks).as_posix() for p in left_chunks.rglob("*.parquet")}
        | {p.relative_to(right_chunks).as_posix() for p in right_chunks.rglob("*.parquet")}
    )
    if not names:
        found.append("no tables were written")
    for name in names:
        a, b = left_chunks / name, right_chunks / name
        if not a.exists() or not b.exists():
            found.append(f"{name}: only in {'the revision' if a.exists() else 'the working tree'}")
            continue
        ta, tb = pq.read_table(a), pq.read_table(b)
        if ta.equals(tb):
            continue
        columns = [c for c in ta.column_names if c not in tb.column_names or not ta[c].equals(tb[c])]
        found.append(f"{name}: {ta.num_rows} vs {tb.num_rows} rows; columns differ: {columns or 'schema'}")
    return found


def edit(corpus: Path, count: int) -> list[str]:
    """Append a line to `count` files spread over the corpus; return their paths."""
    files = sorted(p for p in corpus.rglob("*.md") if p.is_file())
    chosen = files[:: max(1, len(files) // count)][:count] if count else []
    for path in chosen:
        with path.open("a", encoding="utf-8") as out:
            out.write("\n## Edited by compare_chunks\n\nNew text.\n")
    return [p.relative_to(corpus).as_posix() for p in chosen]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rev", default="HEAD", help="the git revision to compare with (default HEAD)")
    parser.add_argument("--tarball", type=Path, default=DEFAULT_TARBALL)
    parser.add_argument("--dir", type=Path, help="a corpus directory (copied, never touched)")
    parser.add_argument("--edits", type=int, default=25, help="files to edit for the incremental round")
    args = parser.parse_args()

    rev = subprocess.run(
        ["git", "rev-parse", "--short", args.rev], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="ra-compare-") as scratch:
        work = Path(scratch)
        corpus = work / "corpus"
        place_corpus(corpus, args.tarball, copy_of=args.dir)
        source = str(args.dir) if args.dir is not None else args.tarball.name
        failed = False
        with worktree(rev, work) as checkout:
            for round_name in ("full build", "incremental"):
                if round_name == "incremental":
                    edited = edit(corpus, args.edits)
                    if not edited:
                        break
                    round_name += f" ({len(edited)} files edited)"
                old = build(checkout, corpus, work / "old")
                new = build(REPO, corpus, work / "new")
                found = differences(work / "old", work / "new")
                failed = failed or bool(found)
                print(
                    f"{source} {round_name}: {'DIFFERENT' if found else 'IDENTICAL'} — chunk stage "
                    f"{rev} {old['seconds']:.2f} s wall / {old['cpu']:.2f} CPU-s, "
                    f"working tree {new['seconds']:.2f} s / {new['cpu']:.2f} CPU-s "
                    f"({new['parsed']} files parsed, {new['chunks']} chunks)"
                )
                for line in found:
                    print(f"  {line}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

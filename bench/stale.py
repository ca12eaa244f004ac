"""Benchmark: the no-change check of a CLI search on a large tree (issue 11 item 5).

    python bench/stale.py [--files 200000] [--dir DIR] [--repeat 5]

Makes (or reuses, in DIR) a synthetic tree of FILES small markdown files, 100 to a directory,
records it with ra's own discovery (the snapshot, stat table and directory mtimes a build
writes) and a manifest naming its sources, then times `ra_query.sources.stale.stale_files` — the count
`ra search` and `ra-query` make before answering — as shipped (past STAT_EVERY_FILE_UP_TO files:
directory mtimes first, files only in moved directories) and stat'ing every file, with nothing
changed and after one added file. Prints the table and appends it to bench/results/stale.txt.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, git_head

from ra_build.artifacts.layout import Layout
from ra_build.config.model import TreeConfig
from ra_build.pipeline.discover import discover_stage
from ra_query.sources import stale

PER_DIR = 100


def make_tree(root: Path, files: int) -> None:
    """FILES small pages, PER_DIR to a directory, two levels deep (kept for the next run)."""
    marker = root / f".made-{files}"
    if marker.exists():
        return
    for i in range(files):
        directory = root / f"d{i // (PER_DIR * 100):03d}" / f"s{(i // PER_DIR) % 100:02d}"
        if i % PER_DIR == 0:
            directory.mkdir(parents=True, exist_ok=True)
        (directory / f"page{i}.md").write_text(f"# Page {i}\n\nword{i}\n", encoding="utf-8")
    marker.write_text("", encoding="utf-8")


def record(root: Path, artifacts: Path) -> dict[str, object]:
    """What a build records for the stale count: discovery's files and directories, the manifest."""
    tree = TreeConfig("syn", root, ("**/*.md",), (), False, root / ".ra.toml", 1)
    layout = Layout(artifacts)
    discover_stage(tree, layout)
    snapshot = json.loads(layout.snapshot("syn").read_bytes())
    sources = {"root": snapshot["root"], "include": snapshot["include"], "exclude": snapshot["exclude"]}
    manifest: dict[str, object] = {"trees": {"syn": {"sources": sources}}}
    (artifacts / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return manifest


def timed(artifacts: Path, manifest: dict[str, object], repeat: int) -> tuple[float, int | None]:
    times: list[float] = []
    count: int | None = None
    for _ in range(repeat):
        started = time.perf_counter()
        count = stale.stale_files(artifacts, manifest)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000, count


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--files", type=int, default=200_000)
    parser.add_argument("--dir", type=Path, help="where to make (or find) the synthetic tree")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    base = args.dir or Path(tempfile.gettempdir()) / "ra-bench-stale"
    root, artifacts = base / "tree", base / "artifacts"
    root.mkdir(parents=True, exist_ok=True)
    artifacts.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    make_tree(root, args.files)
    manifest = record(root, artifacts)
    print(f"tree of {args.files:,} files ready in {time.perf_counter() - started:.1f} s")
    shipped = stale.STAT_EVERY_FILE_UP_TO
    rows: list[str] = []
    added = root / "d000" / "s00" / "added.md"
    added.unlink(missing_ok=True)
    for label, limit in (("as shipped", shipped), ("stat every file", 10**12)):
        stale.STAT_EVERY_FILE_UP_TO = limit
        still, zero = timed(artifacts, manifest, args.repeat)
        added.write_text("# Added\n", encoding="utf-8")
        after, one = timed(artifacts, manifest, args.repeat)
        added.unlink()
        rows.append(
            f"{label:16} no change {still:8.1f} ms (count {zero}); "
            f"one file added {after:8.1f} ms (count {one})"
        )
    stale.STAT_EVERY_FILE_UP_TO = shipped
    load = os.getloadavg()[0]
    lines = [
        f"# bench/stale.py {time.strftime('%Y-%m-%d %H:%M')} {git_head()} load {load:.2f} "
        f"files {args.files:,} in {args.files // PER_DIR:,} directories "
        f"(median of {args.repeat}, warm cache)",
        *rows,
    ]
    print("\n".join(lines))
    with (REPO / "bench" / "results" / "stale.txt").open("a", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()

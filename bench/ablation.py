"""Benchmark: what each change of issue 30 did to code questions, revision by revision.

    .venv/bin/python bench/ablation.py --rev LABEL=REV [--rev LABEL=REV]... [--semantic]
                                       [--work DIR] [--no-record]

Runs bench/code_search.py once per revision (`--rev`, a git worktree: that revision builds and
searches; `HEAD+` is the working tree), all its corpora, and prints one table: per revision and
mode, definition hit@5, file hit@5 and mean tokens per answer, for the first two codebases
(click, cobra: the sets the earlier defaults were chosen on) and for the three written for
issue 30 (fd, got, gson: Rust, TypeScript, Java), and the docs questions' section hit@5 over all
five. Appends the table to bench/results/code_ablation.txt.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import quality
from common import REPO

RESULTS_TXT = REPO / "bench" / "results" / "code_ablation.txt"
GROUPS = {"click + cobra": ("click", "cobra"), "fd + got + gson": ("fd", "got", "gson")}


def pooled(figures: dict[str, Any], names: tuple[str, ...], key: str) -> float:
    """`key` over the codebases `names`, weighted by their questions."""
    rows = [figures[n] for n in names if n in figures]
    total = sum(r["questions"] for r in rows)
    return sum(r[key] * r["questions"] for r in rows) / total if total else 0.0


def run(rev: str, work: Path, semantic: bool) -> dict[str, Any]:
    """bench/code_search.py at `rev` (`HEAD+`: the working tree); its figures."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        argv = [sys.executable, str(REPO / "bench" / "code_search.py"), "--no-record", "--out", out.name]
        argv += ["--work", str(work)] + (["--semantic"] if semantic else [])
        argv += [] if rev == "HEAD+" else ["--rev", rev]
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        return json.loads(Path(out.name).read_text(encoding="utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rev", action="append", required=True, metavar="LABEL=REV")
    parser.add_argument("--semantic", action="store_true", help="lexical and hybrid (embeds the trees)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/ra-bench-ablation"))
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    load_before = quality.load()
    lines = [
        "| change (revision) | mode | "
        + " | ".join(f"{g}: definition / file in top 5, tokens" for g in GROUPS)
        + " | docs questions: section in top 5 |",
        "|---|---|" + "---|" * len(GROUPS) + "---|",
    ]
    for given in args.rev:
        label, _, rev = given.partition("=")
        result = run(rev or label, args.work, args.semantic)
        for mode, figures in result["figures"].items():
            if mode == "per_question":
                continue
            cells = [
                f"{pooled(figures, names, 'def_hit@5'):.3f} / {pooled(figures, names, 'file_hit@5'):.3f}, "
                f"{pooled(figures, names, 'mean_tokens'):,.0f}"
                for names in GROUPS.values()
            ]
            docs = figures["docs overall"]["def_hit@5"]
            line = f"| {label} ({result['meta']['git']}) | {mode} | " + " | ".join(cells) + f" | {docs:.3f} |"
            lines.append(line)
            print(line, flush=True)
    stamp = dt.datetime.now(dt.UTC)
    heading = f"code ablation, {stamp:%Y-%m-%d %H:%M}, load {load_before} before / {quality.load()} after"
    report = heading + "\n\n" + "\n".join(lines)
    print()
    print(report)
    if not args.no_record:
        with open(RESULTS_TXT, "a", encoding="utf-8") as handle:
            handle.write(report + "\n\n")


if __name__ == "__main__":
    main()

"""Benchmark: the shipped int8 model against another export of it (fp32), on chunks (issue 21).

    .venv/bin/python bench/model_choice.py --model PATH [--sets reworded,scifact] [--work DIR]

`PATH` is an ONNX file of the same model, e.g. the fp32 export: `scripts/export-model --fp32
--out DIR` writes DIR/minilm-l6-v2-fp32.onnx. For each model (the shipped int8 one, then
`PATH`), every set is built in this process with `semantic = true` — the model swapped in by
pointing ra_query.semantic.embed at a copy of the model directory that holds it (its sha256 in
model.json, so the two models' vectors are never mixed) — and searched as bench/quality.py
does: the reworded questions (hit@1 / hit@5 of the default search, hybrid and dense only) and
the judged sets (the ranking's nDCG@10 or MAP, hybrid). It also records what each model costs:
the embed stage's chunks per second, the file's bytes, and a query's embedding time.

Prints a table and appends it to bench/results/model_choice.txt.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import quality
from common import REPO, git_head, write_project

from ra_build.config.load import load_config
from ra_build.pipeline.run import run_build
from ra_query.artifacts.store import open_store
from ra_query.semantic import embed


def model_dir(model: Path, target: Path) -> Path:
    """A copy of the shipped model directory whose model is `model` (linked, its sha256 recorded)."""
    shipped = embed.MODEL_DIR
    target.mkdir(parents=True, exist_ok=True)
    info = json.loads((shipped / "model.json").read_text(encoding="utf-8"))
    digest = hashlib.sha256(model.read_bytes()).hexdigest()
    info |= {"file": model.name, "sha256": {**info["sha256"], "onnx": digest}}
    (target / "model.json").write_text(json.dumps(info, indent=2), encoding="utf-8")
    shutil.copyfile(shipped / "tokenizer.json", target / "tokenizer.json")
    link = target / model.name
    link.unlink(missing_ok=True)
    link.symlink_to(model.resolve())
    return target


def use_model(directory: Path) -> None:
    """Embed with the model in `directory` from now on, in this process and the workers it forks."""
    embed.MODEL_DIR = directory
    embed.embedder.cache_clear()


def build(name: str, source: Path, work: Path) -> tuple[Any, float, int]:
    """`source` built as tree `name` with vectors, in this process: (store, embed seconds, embedded)."""
    project = work / f"{name}-project"
    shutil.rmtree(project, ignore_errors=True)
    write_project(project, source, name, {"settings": {"semantic": "true"}})
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    report = run_build(load_config(project, home), project / ".ra")
    if report.failures:
        raise SystemExit(f"the build of {name} failed: {report.failures}")
    stats: dict[str, Any] = report.results["embed"]
    return open_store(project / ".ra"), float(stats["seconds"]), int(stats["embedded"])


def reworded(store: Any) -> dict[str, float]:
    """hit@1 / hit@5 of the default search, hybrid and dense only."""
    from ra_query.search.pipeline import search_topic

    items = quality.questions()
    figures: dict[str, float] = {}
    for label, weight in (("hybrid", None), ("dense", 1.0)):
        params = quality.default_params(store, "hybrid")
        params = params if weight is None else params._replace(semantic_weight=weight)
        hit1 = hit5 = 0
        for item in items:
            paths = [hit.record.path for hit in search_topic(store, item["question"], params).hits]
            hit1 += bool(paths[:1]) and paths[0] in item["answers"]
            hit5 += any(p in item["answers"] for p in paths[:5])
        figures |= {f"{label} hit@1": hit1 / len(items), f"{label} hit@5": hit5 / len(items)}
    return figures


def judged(name: str, store: Any) -> dict[str, float]:
    """The ranking's main measure, hybrid."""
    spec = quality.SETS[name]
    run, _failed = quality.ranking_run(store, spec["queries"](), quality.ranking_params(store, "hybrid"))
    scores = quality.evaluate(spec["qrels"](), run, {spec["main"]: spec["measures"][spec["main"]]})
    return {f"{spec['measures'][spec['main']]} hybrid": scores[spec["main"]]}


def query_ms() -> float:
    """Median ms to embed a short question, warm."""
    model = embed.embedder(1)
    model.embed(["warm up"])
    times = []
    for question in [q["question"] for q in quality.questions()][:40]:
        started = time.perf_counter()
        model.embed([question])
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", type=Path, required=True, help="an ONNX export to compare (e.g. fp32)")
    parser.add_argument("--sets", default="reworded,scifact", help="comma-separated: reworded, scifact, cacm")
    parser.add_argument("--work", type=Path, default=Path("/tmp/ra-bench-model-choice"))
    parser.add_argument("--tldr", type=Path, help="the English tldr pages (the pages/ folder)")
    args = parser.parse_args()
    if not args.model.is_file():
        parser.error(f"--model {args.model}: no such file")
    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    args.work.mkdir(parents=True, exist_ok=True)
    shipped = embed.MODEL_DIR / json.loads((embed.MODEL_DIR / "model.json").read_text())["file"]
    models = {shipped.name: shipped, args.model.name: args.model.resolve()}
    load_before = os.getloadavg()
    rows: dict[str, dict[str, float]] = {}
    for label, model in models.items():
        use_model(model_dir(model, args.work / "models" / label))
        row: dict[str, float] = {"MB": model.stat().st_size / 1e6, "query ms": query_ms()}
        seconds = embedded = 0.0
        for name in sets:
            work = args.work / label
            if name == "reworded":
                store, spent, count = build("tldr", quality.tldr_pages(args.tldr, args.work), work)
                row |= reworded(store)
            else:
                source = work / name / "docs"
                shutil.rmtree(source, ignore_errors=True)
                quality.write_tree(quality.SETS[name]["docs"](), source)
                store, spent, count = build(name, source, work)
                row |= judged(name, store)
            seconds, embedded = seconds + spent, embedded + count
        row["chunks/s"] = embedded / seconds if seconds else 0.0
        rows[label] = row
        print(label, json.dumps({k: round(v, 4) for k, v in row.items()}), flush=True)
    load_after = os.getloadavg()
    columns = list(next(iter(rows.values())))
    lines = [
        f"model choice at {git_head()}, {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, "
        f"load {load_before[0]:.2f} before / {load_after[0]:.2f} after; sets: {', '.join(sets)}",
        "",
        "| model | " + " | ".join(columns) + " |",
        "|---|" + "---|" * len(columns),
        *(f"| {name} | " + " | ".join(f"{row[c]:.3f}" for c in columns) + " |" for name, row in rows.items()),
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    with open(REPO / "bench" / "results" / "model_choice.txt", "a", encoding="utf-8") as out:
        out.write(text + "\n")


if __name__ == "__main__":
    main()

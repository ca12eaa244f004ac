"""The rename map of issue 20: move each module into its room, rewrite every reference to it.

Run once from the repository root (`python scripts/relayout.py`); it moves files with `git mv`,
creates the subpackages' `__init__.py`, and rewrites dotted module paths (`ra_build.tasks` →
`ra_build.pipeline.graph`), file paths (`ra_query/stale.py` → `ra_query/sources/stale.py`) and
`from ra_x import module` lines in code, tests, benchmarks, docs and pyproject.toml. Modules are
renamed whole here; splitting the ones that do several jobs are later commits, one at a time.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

MOVES = {
    "ra_build": {
        "agents": "cli.agents",
        "atomic": "artifacts.atomic",
        "children": "pipeline.workers",
        "chunk": "document.chunk",
        "cli": "cli.app",
        "cluster": "pipeline.cluster",
        "config": "config.load",
        "config_render": "config.render",
        "discover": "pipeline.discover",
        "fresh": "refresh.current",
        "index": "pipeline.index_stage",
        "init": "config.starter",
        "inspect": "cli.inspection",
        "layout": "artifacts.layout",
        "main": "cli.entry",
        "manifest": "pipeline.manifest",
        "memo": "document.memo",
        "pack": "artifacts.pack",
        "parse": "document.markdown",
        "progress": "pipeline.progress",
        "quick": "refresh.stamp",
        "settings": "config.fingerprint",
        "shardwork": "pipeline.shard_workers",
        "stages": "pipeline.chunk_stage",
        "status": "cli.reports",
        "tables": "artifacts.tables",
        "tasks": "pipeline.graph",
        "toml_lines": "config.toml_lines",
    },
    "ra_query": {
        "aggregate": "search.aggregate",
        "budget": "search.budget",
        "compile": "search.compile",
        "context": "search.context",
        "fetch": "artifacts.packed",
        "get": "search.get",
        "globs": "sources.globs",
        "models": "artifacts.models",
        "query": "search.syntax",
        "render": "search.render",
        "schema": "artifacts.schema",
        "search": "search.pipeline",
        "slugs": "text.slugs",
        "sources": "sources.walk",
        "stale": "sources.stale",
        "store": "artifacts.store",
        "textsafe": "text.textsafe",
        "tokens": "text.tokens",
        "watch": "sources.watch",
    },
}
ROOMS = {
    "ra_build.config": "Configuration: the `.ra.toml` model, reading and merging it, and what a build derives from it.",
    "ra_build.document": "One document: reading a markdown file and making its chunk tree.",
    "ra_build.pipeline": "The build: the doit task graph, its stages, the processes and cluster that run them.",
    "ra_build.artifacts": "The artifact directory as the build writes it: layout, Parquet tables, atomic writes, packs.",
    "ra_build.refresh": "Refresh before read: is the index current, the stamp that proves it fast, the refreshed store.",
    "ra_build.cli": "The `ra` command line: the entry point, the fast argparse commands and the typer app.",
    "ra_query.artifacts": "The artifact contract, read-only: file names, the tantivy schema, opening a store, packs.",
    "ra_query.sources": "The sources of the trees: walking them, globs, the stale count and the watcher.",
    "ra_query.search": "Answering: the query language, the search pipeline, budgets, rendering, context and get.",
    "ra_query.text": "Text helpers both sides share: token counts, GitHub slugs, text safe to print.",
}
TEXT_FILES = ["dodo.py", "pyproject.toml", "README.md", "packages/ra-query/pyproject.toml"]
TEXT_DIRS = ["ra_build", "ra_query", "tests", "bench", "docs", "scripts", ".github"]

DOTTED = {f"{pkg}.{old}": f"{pkg}.{new}" for pkg, moves in MOVES.items() for old, new in moves.items()}
_DOTTED = re.compile(r"\b(ra_build|ra_query)\.(\w+)\b(?![\w/])")
_FILE = re.compile(r"\b(ra_build|ra_query)/(\w+)\.py\b")
_FROM = re.compile(r"^(\s*)from (ra_build|ra_query) import ([\w, ]+)$", re.M)


def _dotted(match: re.Match[str]) -> str:
    return DOTTED.get(match.group(0), match.group(0))


def _file(match: re.Match[str]) -> str:
    pkg, mod = match.group(1), match.group(2)
    new = MOVES[pkg].get(mod)
    return f"{pkg}/{new.replace('.', '/')}.py" if new else match.group(0)


def _from(match: re.Match[str]) -> str:
    indent, pkg, names = match.group(1), match.group(2), match.group(3)
    groups: dict[str, list[str]] = {}
    for name in (n.strip() for n in names.split(",")):
        new = MOVES[pkg].get(name)
        if new is None:
            groups.setdefault(pkg, []).append(name)
            continue
        room, leaf = new.rsplit(".", 1)
        groups.setdefault(f"{pkg}.{room}", []).append(leaf if leaf == name else f"{leaf} as {name}")
    return "\n".join(f"{indent}from {where} import {', '.join(items)}" for where, items in groups.items())


def rewrite(text: str) -> str:
    # dotted paths first: a `from ra_query import stale` made into `from ra_query.sources import
    # stale` must not then be read as the old module `ra_query.sources`
    text = _FILE.sub(_file, _DOTTED.sub(_dotted, text))
    return _FROM.sub(_from, text)


def main() -> None:
    root = Path.cwd()
    if not (root / "ra_build").is_dir():
        sys.exit("run from the repository root")
    for dotted, doc in ROOMS.items():
        folder = root / dotted.replace(".", "/")
        folder.mkdir(exist_ok=True)
        (folder / "__init__.py").write_text(f'"""{doc}"""\n', encoding="utf-8")
    for pkg, moves in MOVES.items():
        for old, new in moves.items():
            target = f"{pkg}/{new.replace('.', '/')}.py"
            subprocess.run(["git", "mv", f"{pkg}/{old}.py", target], check=True)
    files = [root / f for f in TEXT_FILES]
    for d in TEXT_DIRS:
        files += [p for p in (root / d).rglob("*") if p.suffix in (".py", ".md", ".toml", ".yml", "") and p.is_file()]
    for path in files:
        if path.name == "relayout.py" or "__pycache__" in path.parts:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        new = rewrite(text)
        if new != text:
            path.write_text(new, encoding="utf-8")
    subprocess.run(["git", "add", "-A", "ra_build", "ra_query"], check=True)


if __name__ == "__main__":
    main()

"""The layout of the two packages (issue 20): rooms by role, no import circles, short functions.

What tests/test_boundaries.py keeps between the packages (ra_query never imports the build),
this file keeps inside them, so that a new stage, store or interface lands in a room that
already exists (docs/architecture.md) instead of growing the flat list again.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("ra_build", "ra_query")
MAX_MODULES_AT_THE_TOP = 8
MAX_FUNCTION_LINES = 100


def _modules() -> dict[str, Path]:
    """Every module of both packages by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            parts = path.relative_to(REPO).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imported(path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of both packages `path` imports, at module level or inside a function."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                whole = f"{node.module}.{alias.name}"  # `from ra_build.pipeline import graph`
                out.add(whole if whole in modules else node.module)
    return {name for name in out if name in modules}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_of_either_package_is_part_of_an_import_circle() -> None:
    modules = _modules()
    graph = {name: _imported(path, modules) for name, path in modules.items()}
    assert _circles(graph) == []


def test_the_circle_finder_finds_a_circle_closed_inside_a_function() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert sorted(_circles(graph)) == [["a", "b", "c"], ["e"]]


# The rooms of each package, highest first: a room imports only rooms below it (and its own
# modules); ra_build may import any room of ra_query, never the other way (test_boundaries.py).
# docs/architecture.md says what each room is for.
LAYERS = {
    "ra_build": ["api", "cli", "refresh", "pipeline", "upstream", "config", "artifacts", "document"],
    "ra_query": [
        "cli",
        "mcp",
        "cli_common",
        "commands",
        "search",
        "semantic",
        "sources",
        "artifacts",
        "text",
        "errors",
    ],
}
LEAVES = {"ra_query.version", "ra_query.forked"}  # imported by any room, import nothing of ra


def _room(module: str) -> str:
    """`ra_build.pipeline.graph` → `ra_build.pipeline`; a top-level module is its own room."""
    return ".".join(module.split(".")[:2])


def test_each_room_imports_only_the_rooms_below_it() -> None:
    modules = _modules()
    rank = {f"{package}.{room}": i for package, rooms in LAYERS.items() for i, room in enumerate(rooms)}
    rooms = {_room(m) for m in modules} - {"ra_build", "ra_query"} - LEAVES
    assert rooms == set(rank), "a room is missing from LAYERS (and from docs/architecture.md)"
    upward = sorted(
        f"{name} -> {other}"
        for name, path in modules.items()
        for other in _imported(path, modules)
        if _room(name) in rank
        and _room(other) in rank
        and _room(other).split(".")[0] == _room(name).split(".")[0]
        and rank[_room(other)] <= rank[_room(name)]
        and _room(other) != _room(name)
    )
    assert upward == []


def test_each_package_holds_at_most_eight_modules_directly() -> None:
    crowded = {
        package: sorted(p.name for p in (REPO / package).glob("*.py") if p.name != "__init__.py")
        for package in PACKAGES
    }
    assert {p: names for p, names in crowded.items() if len(names) > MAX_MODULES_AT_THE_TOP} == {}


def test_every_init_py_holds_nothing_but_its_docstring() -> None:
    """No eager re-exports: importing a room costs nothing (the cold-start lists hold)."""
    busy = []
    for package in PACKAGES:
        for init in sorted((REPO / package).rglob("__init__.py")):
            body = ast.parse(init.read_text(encoding="utf-8")).body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]
            if body:
                busy.append(str(init.relative_to(REPO)))
    assert busy == []


def test_no_function_of_either_package_is_longer_than_a_hundred_lines() -> None:
    long = [
        f"{path.relative_to(REPO)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for path in _modules().values()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert long == []


def test_the_version_ra_reports_is_the_one_both_distributions_declare() -> None:
    from ra_query.version import __version__

    for pyproject in (REPO / "pyproject.toml", REPO / "packages" / "ra-query" / "pyproject.toml"):
        declared = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]
        assert declared == __version__, pyproject


def test_the_architecture_map_names_every_module_of_each_room_and_counts_them() -> None:
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    build_part, query_part = text.split("### `ra_query`", 1)
    wrong: list[str] = []
    for package, part in (("ra_build", build_part), ("ra_query", query_part)):
        for line in part.splitlines():
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            if len(cells) != 3 or not (cells[0].startswith("`") and cells[0].endswith("/`")):
                continue
            room = cells[0].strip("`/")
            if not (REPO / package / room / "__init__.py").is_file():
                continue  # a row of the artifacts' table (`index/`, `chunks/<tree>/…`)
            names = sorted(p.stem for p in (REPO / package / room).glob("*.py") if p.stem != "__init__")
            unnamed = [name for name in names if f"`{name}`" not in cells[1]]
            if unnamed or cells[2] != str(len(names)):
                wrong.append(f"{package}/{room}: says {cells[2]}, holds {len(names)}, unnamed {unnamed}")
    assert wrong == []

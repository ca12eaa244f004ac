"""The one-way import rule: ra_query never imports the build side."""

import ast
import subprocess
import sys
from pathlib import Path

QUERY = Path(__file__).resolve().parent.parent / "ra_query"
FORBIDDEN = (
    "ra_build",
    "doit",
    "markdown_it",
    "pyarrow",
    "tree_sitter",
    "httpx2",
    "lxml",
    "html_to_markdown",
)


def _imports(path: Path) -> list[tuple[str, int, bool]]:
    """(module, line, at module level) for every import in a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = set(map(id, tree.body))
    found: list[tuple[str, int, bool]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno, id(node) in top) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.module, node.lineno, id(node) in top))
    return found


def test_ra_query_never_imports_ra_build_anywhere() -> None:
    bad = [
        f"{p.name}:{line}"
        for p in QUERY.rglob("*.py")
        for mod, line, _ in _imports(p)
        if mod.split(".")[0] == "ra_build"
    ]
    assert bad == []


def test_ra_query_never_imports_tree_sitter_anywhere() -> None:
    """Code is parsed by the build; the read-only side reads the index (ra-query installs
    without the grammars)."""
    bad = [
        f"{p.name}:{line}"
        for p in QUERY.rglob("*.py")
        for mod, line, _ in _imports(p)
        if mod.split(".")[0].startswith("tree_sitter")
    ]
    assert bad == []


def test_ra_query_imports_no_build_dependency_at_module_level() -> None:
    bad = [
        f"{p.name}:{line} {mod}"
        for p in QUERY.rglob("*.py")
        for mod, line, top in _imports(p)
        if top and mod.split(".")[0] in FORBIDDEN
    ]
    assert bad == []


def test_importing_the_query_cli_loads_no_build_module() -> None:
    code = (
        "import sys, ra_query.cli, ra_query.search.pipeline, ra_query.artifacts.store; "
        "print(','.join(m for m in sys.modules if m.split('.')[0] in "
        "('ra_build','doit','markdown_it','pyarrow','typer','tree_sitter')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


# What the MCP servers' own process (the SDK's side) must not load: the search is answered in the
# process forked before it (ra_query.commands.answer_requests).
MCP_SERVER_EXCLUDED = ("tantivy", "tiktoken", "ra_query.commands", "ra_query.search.pipeline")


def printed(code: str) -> list[str]:
    """The words a fresh interpreter running `code` prints."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()


def loaded_by(code: str, modules: tuple[str, ...]) -> list[str]:
    """Those of `modules` that a fresh interpreter running `code` has loaded."""
    return printed(f"import sys; {code}; print(*(m for m in {modules!r} if m in sys.modules))")


def test_the_mcp_servers_process_loads_no_search_module() -> None:
    assert loaded_by("import ra_query.mcp", MCP_SERVER_EXCLUDED) == []


def test_the_mcp_servers_process_loads_no_part_of_the_sdks_client() -> None:
    # the client was ~6% of the start-up (ra_query.mcp._server_side_of_the_sdk)
    assert loaded_by("import ra_query.mcp", ("mcp.client", "mcp.client.session")) == []


def test_the_mcp_package_still_gives_what_its_init_defines_when_asked() -> None:
    code = "import sys, ra_query.mcp, mcp; print(mcp.ClientSession.__name__, 'mcp.client' in sys.modules)"
    assert printed(code) == ["ClientSession", "True"]


def test_the_sdks_models_are_built_at_first_use_in_a_server() -> None:
    assert printed(
        "import ra_query.mcp, mcp_types; print(mcp_types.ListPromptsResult.__pydantic_complete__)"
    ) == ["False"]


def test_models_made_after_the_server_imported_the_sdk_are_built_when_made() -> None:
    code = "import ra_query.mcp, pydantic\nclass Later(pydantic.BaseModel):\n    x: int\nprint(Later.__pydantic_complete__)"
    assert printed(code) == ["True"]


# Modules a cold `ra-query search` must not load: each was measured costing milliseconds of
# every search (bench/query.py; see ra_query/artifacts/models.py and ra_query/sources/stale.py for why).
COLD_START_EXCLUDED = (
    "dataclasses",
    "inspect",
    "orjson",
    "pathlib",
    "tempfile",
    "shutil",
    "tiktoken",
    "ra_query.search.get",
    "ra_query.sources.walk",
    "ra_query.mcp",
    # an index without vectors never loads the semantic side (issue 21)
    "numpy",
    "onnxruntime",
    "tokenizers",
    "ra_query.semantic.embed",
    "ra_query.artifacts.vectors",
    # nothing is fetched at query time (issue 23): no HTTP client, no HTML converter
    "httpx2",
    "lxml",
    "html_to_markdown",
)


def _modules_after(argv: list[str], cwd: Path) -> set[str]:
    """The modules loaded when `ra-query *argv` ends (its exit handlers still run)."""
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: sys.stderr.write('MODULES ' + ' '.join(sorted(sys.modules)) + '\\n'))\n"
        "from ra_query.cli import main\n"
        f"sys.argv = ['ra-query', *{argv!r}]\n"
        "main()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, check=False)
    line = next(line for line in proc.stderr.splitlines() if line.startswith("MODULES "))
    assert proc.returncode in (0, 1), proc.stderr
    return set(line.split()[1:])


def test_a_cold_search_loads_none_of_the_modules_it_was_slimmed_of(
    kb: Path, home: Path, tmp_path: Path
) -> None:
    from tests.conftest import build

    build(kb, home)
    loaded = _modules_after(["--artifacts", str(kb / ".ra"), "search", "pool", "--json"], tmp_path)
    assert "tantivy" in loaded and "ra_query.search.pipeline" in loaded  # it did search
    assert sorted(m for m in COLD_START_EXCLUDED if m in loaded) == []


# The stale count is forked before anything else is imported (ra_query/sources/stale.py): it and
# the artifact names and stat table it reads load nothing but `os` and `sys` of their own.
FORKED_FIRST = ("artifacts/paths.py", "artifacts/stat_table.py", "sources/stale.py", "forked.py")
FORKED_FIRST_MAY_IMPORT = {
    "__future__", "os", "sys", "ra_query.artifacts.paths", "ra_query.artifacts.stat_table", "ra_query.forked",
}  # fmt: skip


def test_the_stale_count_and_the_names_it_reads_import_only_os_and_sys_at_module_level() -> None:
    bad = [
        f"{name}:{line} {mod}"
        for name in FORKED_FIRST
        for mod, line, top in _imports(QUERY / name)
        if top and mod not in FORKED_FIRST_MAY_IMPORT
    ]
    assert bad == []

"""Code trees (issue 22): code files chunked by tree-sitter into definitions with exact ranges,
identifiers found in every spelling, `kind:` / `lang:` / `--kind` filters, and everything that
reads chunks working on them."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ra_build.document.chunk import Chunk, chunk_file
from ra_build.document.code import MAX_NESTING, generated_reason, identifier_terms
from tests.conftest import Run, run_cmd
from tests.test_chunk_properties import SETTINGS

PY = textwrap.dedent(
    '''\
    """Storage of chunks."""
    import os

    CACHE_SIZE = 64


    @functools.cache
    def open_store(path, *, readonly=True):
        """Open the store at path."""
        return Store(path)


    class ChunkCache(Base):
        """Chunks kept in memory."""

        limit = 10

        def search(self, query):
            return [c for c in self.items if query in c]

        # Evict the oldest chunk.
        def evict(self):
            self.items.pop(0)


    if __name__ == "__main__":
        open_store(".")
    '''
)
GO = textwrap.dedent(
    """\
    // Package cache keeps chunks.
    package cache

    import "fmt"

    // ChunkCache holds chunks in memory.
    type ChunkCache struct {
    \titems []string
    }

    // Search returns the chunks holding q.
    func (c *ChunkCache) Search(q string) []string {
    \tfmt.Println(q)
    \treturn c.items
    }

    func NewChunkCache() *ChunkCache { return &ChunkCache{} }
    """
)


def chunks_of(path: str, text: str | bytes, **kwargs: int) -> dict[str, Chunk]:
    data = text.encode() if isinstance(text, str) else text
    doc, _ = chunk_file("src", path, data, **kwargs)
    assert doc is not None
    return {c.slug: c for c in doc.chunks}


def slice_of(text: str, chunk: Chunk) -> str:
    return text.encode()[chunk.byte_start : chunk.byte_end].decode()


def lines_of(text: str, chunk: Chunk) -> str:
    return "\n".join(text.splitlines()[chunk.line_start - 1 : chunk.line_end])


# ── the chunk tree ─────────────────────────────────────────────────────────────────────────────


def test_a_python_file_has_a_chunk_per_function_class_and_method_with_ids_by_qualified_name() -> None:
    chunks = chunks_of("store.py", PY)
    assert list(chunks) == [
        "",
        "open_store",
        "ChunkCache",
        "ChunkCache.search",
        "ChunkCache.evict",
        "__name__",
    ]
    assert chunks["ChunkCache.search"].id == "src:store.py#ChunkCache.search"
    assert chunks["ChunkCache.search"].parent_id == "src:store.py#ChunkCache"


def test_a_definitions_body_is_its_exact_source_with_its_decorator_and_the_comment_above() -> None:
    chunks = chunks_of("store.py", PY)
    assert chunks["open_store"].body.startswith("@functools.cache\ndef open_store(")
    assert chunks["ChunkCache.evict"].body.startswith("    # Evict the oldest chunk.\n    def evict(self):")
    for chunk in list(chunks.values())[1:]:
        assert slice_of(PY, chunk) == chunk.body
        assert lines_of(PY, chunk) == chunk.body


def test_a_title_is_the_signature_and_a_breadcrumb_runs_path_class_method() -> None:
    chunks = chunks_of("store.py", PY)
    assert chunks["open_store"].title == "def open_store(path, *, readonly=True)"
    assert chunks["ChunkCache.search"].breadcrumb == ("store.py", "ChunkCache", "search")


def test_a_class_holds_its_own_part_and_its_methods_are_its_children() -> None:
    cls = chunks_of("store.py", PY)["ChunkCache"]
    assert cls.body == 'class ChunkCache(Base):\n    """Chunks kept in memory."""\n\n    limit = 10'
    assert cls.sibling_count == 3  # open_store, ChunkCache, the __main__ block


def test_the_file_node_holds_the_docstring_imports_and_an_outline_with_lines() -> None:
    doc = chunks_of("store.py", PY)[""]
    assert doc.title == "store.py"
    assert doc.body.startswith('"""Storage of chunks."""\nimport os\n\nCACHE_SIZE = 64')
    assert "  def open_store(path, *, readonly=True)  L7-10" in doc.body
    assert "    def search(self, query)  L18-19" in doc.body


def test_a_statement_too_long_for_the_file_node_takes_its_comment_from_it() -> None:
    entries = "".join(f'\t"v{k}": {{"fr"}},\n' for k in range(60))
    source = (
        "package validator\n\n// Variants and their primary language prefixes.\n"
        f"var ianaVariants = map[string][]string{{\n{entries}}}\n"
    )
    chunks = chunks_of("codes.go", source)
    assert "Variants" not in chunks[""].body  # validator's file node had ended with it
    assert chunks["ianaVariants"].body.startswith("// Variants and their primary language prefixes.\nvar")
    license = "".join(f"// License line {k}.\n" for k in range(12))
    kept = chunks_of(
        "codes.go", f"package validator\n\n{license}var ianaVariants = map[string][]string{{\n{entries}}}\n"
    )
    assert "License line 11" in kept[""].body  # a long note stays: the statement takes a doc comment


def test_statements_between_definitions_become_a_block_chunk() -> None:
    block = chunks_of("store.py", PY)["__name__"]
    assert block.title == 'if __name__ == "__main__":'
    assert block.kind == "code" and block.symbol == ""


def test_every_code_chunk_carries_its_kind_language_and_symbol() -> None:
    chunk = chunks_of("store.py", PY)["ChunkCache.search"]
    assert (chunk.kind, chunk.language, chunk.symbol) == ("code", "python", "ChunkCache.search")


def test_a_go_method_is_named_by_its_receiver_type_and_keeps_its_doc_comment() -> None:
    chunks = chunks_of("cache.go", GO)
    assert list(chunks) == ["", "ChunkCache", "ChunkCache.Search", "NewChunkCache"]
    search = chunks["ChunkCache.Search"]
    assert search.title == "func (c *ChunkCache) Search(q string) []string"
    assert search.body.startswith("// Search returns the chunks holding q.\nfunc (c *ChunkCache)")
    assert (search.line_start, search.line_end) == (11, 15)
    assert chunks[""].body.startswith('// Package cache keeps chunks.\npackage cache\n\nimport "fmt"')


@pytest.mark.parametrize(
    ("path", "source", "slugs"),
    [
        (
            "store.ts",
            "import { x } from 'y';\n/** Opens. */\nexport function openStore(p: string): Store { return x; }\n"
            "export class Store {\n  search(q: string): string[] { return []; }\n}\n"
            "export const helper = (a: number) => a + 1;\ninterface Opts { readonly: boolean }\n",
            ["", "openStore", "Store", "Store.search", "helper", "Opts"],
        ),
        ("app.js", "function main() {}\nclass A { run() {} }\n", ["", "main", "A", "A.run"]),
        ("view.tsx", "export function View() { return <div/>; }\n", ["", "View"]),
        (
            "lib.rs",
            "use std::fmt;\n/// A cache.\npub struct Cache { n: usize }\nimpl Cache {\n    pub fn new() -> Self { Cache { n: 0 } }\n}\n"
            "impl fmt::Display for Cache {\n    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { Ok(()) }\n}\n",
            ["", "Cache", "impl-Cache", "Cache.new", "impl-Display-for-Cache", "Cache.fmt"],
        ),
        (
            "Store.java",
            "package a;\nimport java.util.List;\n/** The store. */\npublic class Store {\n    public void open(String p) {}\n}\n",
            ["", "Store", "Store.open"],
        ),
        (
            "Store.kt",
            "package a\n/** The store. */\nclass Store {\n    fun open(p: String) {}\n    companion object {\n"
            "        fun make() = Store()\n    }\n}\nobject Registry {\n    fun all() = 1\n}\n",
            [
                "",
                "Store",
                "Store.open",
                "Store.Companion",
                "Store.Companion.make",
                "Registry",
                "Registry.all",
            ],
        ),
        (
            "Store.swift",
            "import Foundation\n/// The store.\nstruct Store {\n    func open(_ p: String) {}\n}\n"
            "extension Store {\n    func close() {}\n}\nprotocol Opener {\n    func open(_ p: String)\n}\n",
            ["", "Store", "Store.open", "extension-Store", "Store.close", "Opener"],
        ),
        (
            "client.lua",
            "local M = {}\n--- Sends.\nfunction M:send(m)\n  return m\nend\n\nlocal function helper(x)\n  return x\nend\n"
            "M.close = function(self) end\n",
            ["", "M.send", "helper", "M.close"],
        ),
        ("add.c", "#include <stdio.h>\n/* adds */\nint add(int a, int b) { return a + b; }\n", ["", "add"]),
        (
            "cache.cpp",
            "namespace ra {\nclass Cache {\n public:\n  int get(int k) { return k; }\n};\n}\n",
            ["", "ra", "ra.Cache", "ra.Cache.get"],
        ),
        (
            "Store.cs",
            "using System;\nnamespace Ra {\n  public class Store {\n    public void Open(string p) { }\n  }\n}\n",
            ["", "Ra", "Ra.Store", "Ra.Store.Open"],
        ),
        ("store.rb", "class Store\n  def open(path)\n    path\n  end\nend\n", ["", "Store", "Store.open"]),
        (
            "store.php",
            "<?php\nnamespace App;\nclass Store {\n    public function open($p) { return $p; }\n}\n",
            ["", "Store", "Store.open"],
        ),
        ("deploy.sh", "#!/bin/sh\nset -e\ndeploy() {\n  echo hi\n}\n", ["", "deploy"]),
        (
            "pyproject.toml",
            'name = "x"\n[project]\nversion = "1"\n[tool.ruff]\nline = 1\n',
            ["", "project", "tool.ruff"],
        ),
        ("ci.yaml", "name: x\njobs:\n  build: 1\n", ["", "name", "jobs"]),
        ("package.json", '{"name": "x", "scripts": {"a": 1}}\n', ["", "name", "scripts"]),
    ],
)
def test_each_language_family_is_chunked_into_its_definitions(
    path: str, source: str, slugs: list[str]
) -> None:
    chunks = chunks_of(path, source)
    assert list(chunks) == slugs
    for chunk in list(chunks.values())[1:]:
        assert slice_of(source, chunk) == chunk.body


def test_markdown_and_text_are_chunked_as_before_and_are_docs() -> None:
    doc = chunks_of("guide.md", "# Guide\n\nIntro.\n\n## Setup\n\nRun it.\n")
    assert doc["setup"].kind == "docs" and doc["setup"].language == "markdown"
    assert chunks_of("notes.txt", "plain\n")[""].language == "text"


def test_a_repeated_name_gets_a_numbered_id() -> None:
    chunks = chunks_of("dup.py", "def f():\n    return 1\n\n\ndef f():\n    return 2\n")
    assert list(chunks) == ["", "f", "f-1"]


def test_a_definition_longer_than_max_chunk_size_is_cut_into_parts_at_line_breaks() -> None:
    body = "".join(f"    value_{i} = compute({i})\n" for i in range(200))
    source = f"def long_function():\n{body}"
    chunks = chunks_of("long.py", source, max_chunk_size=1000)
    parts = [c for c in chunks.values() if c.depth == 2]
    assert len(parts) >= 5
    assert all(len(c.body) <= 1000 for c in chunks.values() if c.depth)
    assert all(c.parent_id == "src:long.py#long_function" for c in parts)
    for chunk in list(chunks.values())[1:]:
        assert slice_of(source, chunk) == chunk.body and chunk.body.endswith(")")


def test_a_file_with_syntax_errors_keeps_the_definitions_tree_sitter_found_and_warns() -> None:
    doc, _ = chunk_file("src", "broken.py", b"def good():\n    return 1\n\n\ndef bad(:\n    pass\n")
    assert doc is not None
    assert "good" in [c.slug for c in doc.chunks]
    assert any("syntax errors" in w for w in doc.warnings)


def test_a_file_that_parses_to_nothing_is_cut_at_blank_lines_with_a_warning() -> None:
    doc, _ = chunk_file("src", "junk.go", b"}}} not go {{{\n\n((( still not\n")
    assert doc is not None
    assert doc.chunks[1].body == "}}} not go {{{\n\n((( still not"
    assert any("blank lines" in w for w in doc.warnings)


# a `]` alone in a Kotlin `do {` block, found by mutating timber's Timber.kt: tree-sitter-kotlin's
# error recovery took 33 s over these 700 bytes and made six million empty nodes
RUNAWAY_KOTLIN = (
    "      return if (tag.length <= MAX_TAG_LENGTH || Build.VERSION.SDK_INT >= 26) {\n"
    "        newline = if (newline != -1) newline else length\n"
    "          val end = Math.min(newline, i + MAX_LOG_LENGTH)\n]\n          if (priority == Log.ASSERT) {\n"
    "    @JvmStatic override fun v(t: Throwable?, @NonNls message: String?, vararg args: Any?) {\n"
    "      treeArray.forEach { it.v(t, message, *args) }\n    }\n\n    /** Log a verbose exception. */\n"
    "    @JvmStatic override fun v(t: Throwable?) {\n      treeArray.forEach { it.v(t) }\n    }\n\n"
    "    /** Log a debug message with optional format args. */\n"
    "    @JvmStatic override fun d(@NonNls message: String?, vararg args: Any?) {\n"
    "      treeArray.forEach { it.d(message, *args) }"
)


@pytest.fixture
def quick_timeout(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Parsers that give up after half a second (grammars.PARSE_TIMEOUT_S), for this test only."""
    from ra_build.document import grammars

    monkeypatch.setattr(grammars, "PARSE_TIMEOUT_S", 0.5)
    grammars.parser_for.cache_clear()
    yield
    grammars.parser_for.cache_clear()


@pytest.mark.usefixtures("quick_timeout")
def test_a_parse_that_runs_away_is_given_up_and_the_file_cut_at_blank_lines_with_a_warning() -> None:
    doc, _ = chunk_file("src", "Timber.kt", RUNAWAY_KOTLIN.encode())
    assert doc is not None
    assert doc.warnings == ("syntax errors tree-sitter could not settle in time: chunked at blank lines",)
    assert "".join(c.body for c in doc.chunks[1:]).replace("\n", "") == RUNAWAY_KOTLIN.replace("\n", "")
    healthy, _ = chunk_file("src", "Ok.kt", b"fun ok() = 1\n")  # the same parser, within its time
    assert healthy is not None and [c.slug for c in healthy.chunks] == ["", "ok"]


def test_a_tree_of_more_nodes_a_byte_than_a_parse_makes_is_not_walked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ra_build.document import code

    monkeypatch.setattr(code, "_NODES_PER_BYTE", 0)  # any tree past 10,000 nodes reads as a runaway
    doc, _ = chunk_file("src", "many.py", b"x = 1\n" * 4000)
    assert doc is not None and doc.warnings == (
        "syntax errors tree-sitter could not settle in time: chunked at blank lines",
    )


def test_generated_and_minified_files_are_recognised() -> None:
    assert generated_reason(b"// Code generated by protoc-gen-go. DO NOT EDIT.\npackage x\n") is not None
    assert generated_reason(b"var a=" + b"1," * 5000 + b"\n") is not None
    assert generated_reason(PY.encode()) is None


def test_inspect_doc_says_that_a_build_skips_a_minified_file(tmp_path: Path) -> None:
    (tmp_path / "m.js").write_bytes(b"var a=" + b"1," * 5000 + b"\n")
    run = run_cmd("ra", "inspect", "doc", "m.js", cwd=tmp_path, home=tmp_path)
    assert run.code == 0 and run.out.startswith("File: m.js\nType: code (javascript)\n")
    assert run.err.startswith(
        "ra: warning: m.js: minified (one line of 10,006 bytes holds most of it) — not indexed by"
    )


def test_a_generator_script_and_a_file_with_one_long_line_are_not_generated_nor_minified() -> None:
    generator = b'"""Makes tables."""\n\n\n\n\n\nHEADER = "# This file was automatically generated"\n'
    assert generated_reason(generator) is None
    one_long_line = PY.encode() * 30 + b"WORDS = '" + b"w" * 6000 + b"'\n"
    assert generated_reason(one_long_line) is None


@SETTINGS
@given(
    st.lists(
        st.sampled_from(
            [
                "def f(a):\n    return a\n",
                "class K:\n    x = 1\n\n    def m(self):\n        pass\n",
                "# a comment\n",
                "\n",
                "X = 'é ✓'\n",
                "@dec\ndef g():\n    '''doc'''\n",
                "if x:\n    y()\n",
                "def broken(:\n",
                "    indented = 1\n",
            ]
        ),
        max_size=12,
    )
)
def test_every_code_chunk_slices_the_file_to_its_body_and_ids_are_unique(pieces: list[str]) -> None:
    source = "".join(pieces)
    doc, _ = chunk_file("t", "m.py", source.encode())
    assert doc is not None
    ids = [c.id for c in doc.chunks]
    assert len(ids) == len(set(ids))
    data = source.encode()
    for chunk in doc.chunks[1:]:
        assert data[chunk.byte_start : chunk.byte_end].decode() == chunk.body
        assert chunk.line_start <= chunk.line_end
        assert chunk.body.strip()


def test_identifier_terms_add_the_parts_of_camel_case_and_the_joined_form_of_snake_case() -> None:
    assert identifier_terms("openStore HTTPServer plain") == "open Store HTTP Server"
    assert identifier_terms("open_store open-store") == "openstore"
    assert identifier_terms("open_store openStore", joined=False) == "open Store"


def test_parsing_works_with_the_network_cut() -> None:
    """The grammars are compiled into their wheels: a process that cannot open a socket still
    parses every language (nothing is downloaded)."""
    script = textwrap.dedent(
        """
        import socket
        def refuse(*args, **kwargs):
            raise OSError("network is cut")
        socket.socket.connect = refuse
        socket.create_connection = refuse
        socket.getaddrinfo = refuse
        from ra_build.document.chunk import chunk_file
        from ra_build.document.grammars import DATA_GRAMMARS, GRAMMARS, parser_for
        for language in [*GRAMMARS, *DATA_GRAMMARS]:
            parser_for(language)
        doc, _ = chunk_file("t", "a.go", b"package a\\nfunc F() {}\\n")
        assert [c.slug for c in doc.chunks] == ["", "F"], doc
        print("ok")
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


# ── through the real pipeline ──────────────────────────────────────────────────────────────────


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "src" / "store.py").write_text(PY)
    (root / "src" / "cache.go").write_text(GO)
    (root / "src" / "gen.pb.go").write_text("// Code generated by protoc. DO NOT EDIT.\npackage x\n")
    (root / "docs" / "caching.md").write_text(
        "# Caching\n\nChunks are cached in memory by the chunk cache.\n"
    )
    (root / ".ra.toml").write_text('[tree.repo]\npath = "."\ninclude = ["**/*.py", "**/*.go", "**/*.md"]\n')
    return root


def ra(root: Path, home: Path, *args: str) -> Run:
    return run_cmd("ra", *args, cwd=root, home=home)


def result_ids(run: Run) -> list[str]:
    assert run.code == 0, run.err
    return [r["id"] for q in json.loads(run.out)["queries"] for r in q["results"]]


@pytest.mark.parametrize("query", ["openStore", "open_store", "OpenStore", "open-store", "open store"])
def test_an_identifier_is_found_by_each_of_its_spellings(repo: Path, home: Path, query: str) -> None:
    assert result_ids(ra(repo, home, "search", "--json", query))[0] == "repo:src/store.py#open_store"


def test_a_code_result_carries_its_kind_language_symbol_and_exact_lines(repo: Path, home: Path) -> None:
    run = ra(repo, home, "search", "--json", "ChunkCache Search")
    result = json.loads(run.out)["queries"][0]["results"][0]
    assert result["id"] == "repo:src/cache.go#ChunkCache.Search"
    assert (result["kind"], result["language"], result["symbol"]) == ("code", "go", "ChunkCache.Search")
    assert (result["line_start"], result["line_end"]) == (11, 15)
    assert result["content"].startswith("// Search returns the chunks holding q.")


def test_kind_and_lang_filter_the_results(repo: Path, home: Path) -> None:
    assert all(
        i.startswith("repo:docs/")
        for i in result_ids(ra(repo, home, "search", "--json", "chunk cache kind:docs"))
    )
    assert all(".go" in i for i in result_ids(ra(repo, home, "search", "--json", "chunk cache lang:go")))
    coded = result_ids(ra(repo, home, "search", "--json", "--kind", "code", "chunk cache"))
    assert coded and all(not i.startswith("repo:docs/") for i in coded)


def test_a_lang_filter_takes_the_names_people_use_and_rejects_unknown_ones(repo: Path, home: Path) -> None:
    assert result_ids(ra(repo, home, "search", "--json", "chunk cache lang:golang"))[0].startswith(
        "repo:src/cache.go"
    )
    run = ra(repo, home, "search", "chunk cache lang:klingon")
    assert run.code == 2
    assert "lang:klingon: no such language — the languages: bash, c, cpp, csharp" in run.err
    run = ra(repo, home, "search", "cache kind:pictures")
    assert run.code == 2 and "kind:pictures: no such kind — the kinds: docs, code" in run.err


def test_an_unknown_kind_is_a_usage_error(repo: Path, home: Path) -> None:
    run = ra(repo, home, "search", "--kind", "pictures", "cache")
    assert run.code == 2
    assert "--kind" in run.err and "pictures" in run.err


def test_a_generated_file_is_skipped_and_reported(repo: Path, home: Path) -> None:
    run = ra(repo, home, "update")
    assert run.code == 0, run.err
    assert "1 skipped" in run.out
    assert "repo:src/gen.pb.go: generated code" in run.err


def test_get_returns_a_method_by_its_id(repo: Path, home: Path) -> None:
    run = ra(repo, home, "get", "repo:src/store.py#ChunkCache.search")
    assert run.code == 0, run.err
    assert "    def search(self, query):\n        return [c for c in self.items if query in c]" in run.out


def test_the_chunk_table_has_kind_language_and_symbol_columns(repo: Path, home: Path) -> None:
    ra(repo, home, "update")
    parts = sorted((repo / ".ra" / "chunks" / "repo").glob("part-*.parquet"))
    rows = [row for part in parts for row in pq.read_table(part).to_pylist()]
    by_id = {r["id"]: r for r in rows}
    method = by_id["repo:src/store.py#ChunkCache.search"]
    assert (method["kind"], method["language"], method["symbol"]) == ("code", "python", "ChunkCache.search")
    assert by_id["repo:docs/caching.md"]["kind"] == "docs"


def test_matches_show_a_code_chunks_lines_with_their_numbers_in_the_file(repo: Path, home: Path) -> None:
    run = ra(repo, home, "search", "--matches", "evict oldest")
    assert run.code == 0, run.err
    assert "L21:     # Evict the oldest chunk." in run.out


def test_ra_query_reads_a_packed_code_index(repo: Path, home: Path, tmp_path: Path) -> None:
    assert ra(repo, home, "update").code == 0
    packed = tmp_path / "kb.tar.gz"
    assert ra(repo, home, "pack", "-o", str(packed)).code == 0
    run = run_cmd(
        "ra-query",
        "--artifacts",
        str(packed),
        "search",
        "--json",
        "--kind",
        "code",
        "evict",
        cwd=tmp_path,
        home=home,
    )
    assert result_ids(run)[0] == "repo:src/store.py#ChunkCache.evict"


def test_context_of_a_code_file_puts_the_docs_about_it_before_code(repo: Path, home: Path) -> None:
    found = result_ids(ra(repo, home, "context", "--json", "src/cache.go"))
    assert found[0].startswith("repo:docs/caching.md")
    assert any(i.startswith("repo:src/store.py") for i in found)
    assert not any(i.startswith("repo:src/cache.go") for i in found)  # the input file is left out


def test_context_weighs_a_code_files_definitions_and_imports_not_its_comments_as_headings(
    repo: Path, home: Path
) -> None:
    run = ra(repo, home, "context", "--explain", "--list", "src/store.py")
    assert run.code == 0, run.err
    explained = run.out.split("query:")[0].splitlines()[1:]
    terms = {line.split()[0]: line.split()[2] for line in explained if line.startswith("  ")}
    assert terms["chunkcache"] == "defines"  # class ChunkCache(Base)
    assert terms["readonly"] == "defines"  # def open_store(path, *, readonly=True)
    assert terms.get("oldest") in (None, "docstring")  # only in the comment `# Evict the oldest chunk.`


def test_the_mcp_search_tools_kind_keeps_code_or_docs(repo: Path, home: Path) -> None:
    from tests.conftest import BIN
    from tests.test_mcp import serve

    assert ra(repo, home, "update").code == 0
    with serve([str(BIN / "ra-query"), "mcp"], repo, home) as server:
        code = server.ok("search", {"queries": "chunk cache", "kind": "code"})
        docs = server.ok("search", {"queries": "chunk cache", "kind": "docs"})
    code_results, docs_results = code["queries"][0]["results"], docs["queries"][0]["results"]
    assert code_results and all(r["kind"] == "code" for r in code_results)
    assert [r["id"] for r in docs_results] == ["repo:docs/caching.md#caching"]
    assert code_results[0]["symbol"]


def test_definitions_nested_thousands_deep_are_chunked_without_falling_over() -> None:
    source = "".join(f"namespace n{i} {{\n" for i in range(3000)) + "int f() { return 1; }\n" + "}\n" * 3000
    chunks = chunks_of("deep.cpp", source)
    assert max(c.depth for c in chunks.values()) <= MAX_NESTING + 2
    assert any("int f() { return 1; }" in c.body for c in chunks.values())


def test_a_code_result_shows_its_file_and_lines_in_its_breadcrumb(repo: Path, home: Path) -> None:
    run = ra(repo, home, "search", "--list", "ChunkCache Search")
    assert run.code == 0, run.err
    assert "repo:src/cache.go#ChunkCache.Search  src/cache.go:11-15 › ChunkCache › Search" in run.out


def test_the_examples_of_docs_code_md_are_what_ra_makes() -> None:
    """Each example pair of docs/code.md (a source block, then the chunks listed below it)."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "code.md").read_text(encoding="utf-8")
    section = text.split("## One example per language family", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```(\w*)\n(.*?)```", section, re.S)
    pairs = [(blocks[i][1], blocks[i + 1][1]) for i in range(0, len(blocks) - 1, 2)]
    assert len(pairs) == 11
    for source, listing in pairs:
        rows = [line.split() for line in listing.splitlines() if line.strip()]
        path = rows[0][0].split(":", 1)[1].split("#", 1)[0]
        doc, _ = chunk_file("repo", path, source.encode())
        assert doc is not None
        made = {c.id: (f"L{c.line_start}-{c.line_end}", c.title) for c in doc.chunks[1:]}
        for chunk_id, lines, *title in rows:
            assert chunk_id in made, (path, chunk_id, sorted(made))
            assert made[chunk_id][0] == lines, (chunk_id, made[chunk_id])
            # the title, then maybe a note in parentheses
            assert " ".join(title).startswith(made[chunk_id][1]), (chunk_id, made[chunk_id][1], title)


def test_a_comment_after_the_last_definition_is_still_a_chunk() -> None:
    chunks = chunks_of("tail.py", "def f():\n    pass\n\n# a note about the frobnicator\n")
    assert [c.body for c in chunks.values()][-1] == "# a note about the frobnicator"


def test_a_statement_longer_than_max_chunk_size_is_cut_into_block_parts() -> None:
    table = (
        "TABLE = [\n"
        + "".join(f"    ({i}, 'value {i}'),\n" for i in range(400))
        + "]\n\n\ndef f():\n    return TABLE\n"
    )
    chunks = chunks_of("table.py", table, max_chunk_size=2000)
    assert [s for s in chunks if s.startswith("TABLE")][:3] == ["TABLE", "TABLE.2", "TABLE.3"]
    assert all(len(c.body) <= 2000 for c in chunks.values())
    assert "f" in chunks


def test_a_yaml_file_nested_thousands_deep_is_chunked_not_a_crash() -> None:
    """tree-sitter-yaml 0.7 kills the process on this; ra reads YAML by its lines."""
    source = "- " * 3000 + "x\n" + "".join("  " * i + f"k{i}:\n" for i in range(300)) + "  " * 300 + "v: 1\n"
    doc, _ = chunk_file("t", "deep.yaml", ("top: 1\n" + source).encode())
    assert doc is not None and doc.chunks[1].slug == "top"


def test_a_yaml_comment_is_searchable_text_of_the_key_below_it() -> None:
    chunks = chunks_of("ci.yaml", "name: x\n\n# the frobnicator runs nightly\njobs:\n  build: 1\n")
    assert chunks["jobs"].body.startswith("# the frobnicator runs nightly\njobs:")


def test_a_class_stays_a_result_beside_its_methods_that_matched(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "pool"
    root.mkdir()
    (root / "pool.py").write_text(
        'class ConnectionPool:\n    """Keeps database connections for reuse."""\n\n'
        '    def acquire(self):\n        """Take a connection from the ConnectionPool."""\n\n'
        '    def release(self, conn):\n        """Give a connection back to the ConnectionPool."""\n'
    )
    (root / ".ra.toml").write_text('[tree.pool]\npath = "."\ninclude = ["**/*.py"]\n')
    found = result_ids(
        ra(root, home, "search", "--json", "--cutoff-ratio", "0", "ConnectionPool database connections")
    )
    assert found[0] == "pool:pool.py#ConnectionPool"
    assert "pool:pool.py#ConnectionPool.acquire" in found  # not hidden by the class around it
    assert "pool:pool.py" not in found  # the file's node yields to what is inside it


def test_matches_of_a_code_file_node_without_a_header_show_no_outline_line(repo: Path, home: Path) -> None:
    (repo / "src" / "bare.py").write_text("def frobnicate():\n    return 1\n")
    run = ra(repo, home, "search", "--matches", "frobnicate")
    assert run.code == 0, run.err
    assert "outline" not in run.out
    assert "L1: def frobnicate():" in run.out


def test_matches_number_a_code_line_after_a_form_feed_as_the_file_does(repo: Path, home: Path) -> None:
    (repo / "src" / "ff.py").write_text("def a():\n    pass\n\x0c\ndef zebra():\n    return 'striped'\n")
    run = ra(repo, home, "search", "--matches", "striped")
    assert run.code == 0, run.err
    assert "L5:     return 'striped'" in run.out


def test_a_block_never_renames_a_definition() -> None:
    chunks = chunks_of(
        "k.py",
        "class A:\n    class K:\n        pass\n    x = 1\n\n\nclass K:\n    def x(self):\n        pass\n",
    )
    assert chunks["K.x"].title == "def x(self)"


def test_a_class_whose_own_part_is_longer_than_max_chunk_size_is_cut_and_keeps_its_methods() -> None:
    doc = "\n".join(f"    The pool keeps connection number {i} warm for reuse." for i in range(200))
    source = f'class Pool:\n    """\n{doc}\n    """\n\n    def get(self):\n        return 1\n'
    chunks = chunks_of("pool.py", source, max_chunk_size=2000)
    assert all(len(c.body) <= 2000 for c in chunks.values())
    assert chunks["Pool.2"].parent_id == "src:pool.py#Pool"
    assert chunks["Pool.get"].parent_id == "src:pool.py#Pool"


PIECES = {
    "m.py": [
        "def f(a):\n    return a\n",
        "class K:\n    x = 1\n\n    def m(self):\n        pass\n",
        "# a comment\n",
        "\n",
        "X = 'é ✓'\n",
        "@dec\ndef g():\n    '''doc'''\n",
        "if x:\n    y()\n",
        "# else: run setup first\n",
        "@overload\ndef f(a: int) -> int: ...\n",
        "def broken(:\n",
        "    indented = 1\n",
        "import os\n",
    ],
    "m.go": [
        "package m\n",
        'import "fmt"\n',
        "// Doc.\nfunc F() {\n\tfmt.Println(1)\n}\n",
        "type T struct {\n\tA int\n}\n",
        "func (t *T) M() int { return t.A }\n",
        "var v = 1\n",
        "\n",
        "func {\n",
    ],
    "m.ts": [
        "import { a } from 'b';\n",
        "export function f(x: number): number { return x; }\n",
        "class C {\n  m(): void {}\n}\n",
        "const g = (y) => y;\n",
        "let z = 1;\n",
        "\n",
        "interface I { a: string }\n",
        "declare function d(a: string): void;\n",
        "const o = {\n  m() { return 1; },\n  k: 2,\n};\n",
    ],
    "m.h": [
        "#ifndef M_H\n",
        "#define M_H\n",
        "#endif\n",
        "#if defined(X)\n",
        "#else\n",
        "/** Doc. */\n\n",
        "struct s {\n  int a;\n};\n",
        "static inline int f(int x) {\n  return x;\n}\n",
        "int g(void);\n",
        "namespace n {\n",
        "}\n",
        "template <typename T> class C {\n public:\n  void m() {}\n};\n",
        "FMT_BEGIN_NAMESPACE\n",
        "FMT_API void h();\n",
        "#define MAX(a, b) ((a) > (b) ? (a) : (b))\n",
        "TEST_F(Suite, Case)\n{\n  EXPECT_EQ(1, 1);\n}\n",
        "\n",
    ],
    "m.js": [
        "'use strict'\n",
        "/**\n * Use it.\n */\n\n",
        "app.use = function use(fn) {\n  return fn;\n};\n",
        "View.prototype.render = function (x) { return x; };\n",
        "exports.f = (a) => a;\n",
        "module.exports = function named() {};\n",
        "describe('a thing', function () {\n",
        "});\n",
        "it('does x', () => {\n  assert(1);\n});\n",
        "var v = require('v');\n",
        "(function (root) {\n  function w() {}\n})(jQuery, window);\n",
        "\n",
    ],
    "m.rb": [
        "module M\n",
        "  ##\n  # Doc.\n",
        "  class K < Base\n",
        "    def m\n      1\n    end\n",
        "  end\n",
        "end\n",
        'describe "thing" do\n',
        '  it "works" do\n    x\n  end\n',
        "X = <<~EOS\n  text\nEOS\n",
        "if defined?(Y)\n  def g\n    1\n  end\n  # :nocov:\nelse\n  def g; end\nend\n",
        "\n",
    ],
    "m.java": [
        "package p;\n",
        "/** Doc. */\n\n",
        "public enum E {\n",
        "  A {\n    @Override int f() { return 1; }\n  },\n",
        "  B;\n",
        "  int f() { return 0; }\n",
        "}\n",
        'class K {\n  @SuppressWarnings("x")\n  static final int BIT = 1;\n}\n',
        "\n",
    ],
    "m.lua": [
        "local M = {}\n",
        "function M.f(a)\n  return a\nend\n",
        "do\n  local c = {}\n  function M.get(k) return c[k] end\nend -- do\n",
        'if _VERSION == "5.1" then\n  function M.len(t) return #t end\nelse\n  M.len = rawlen\nend\n',
        'describe("stack", function()\n  it("pops", function()\n    x()\n  end)\nend)\n',
        'for _, db in ipairs(dbs) do\n  it("runs on " .. db, function() end)\nend\n',
        "return M\n",
        "  -- a note on what follows\n",
        "\n",
    ],
    "m.scala": [
        "class S extends munit.FunSuite {\n",
        '  test("adds") {\n    assert(1 + 1 == 2)\n  }\n',
        '  "A stack" should "pop" in {\n    pop()\n  }\n',
        '  describe("x") {\n    it("y") { z }\n  }\n',
        "  def f(a: Int) = a\n",
        "}\n",
        "object O {\n  val x = 1\n}\n",
        "\n",
    ],
    "m.yaml": ["key: 1\n", "# note\nlist:\n  - a\n", "nested:\n  inner: 2\n", "---\n", "\n", "- item\n"],
    "m.toml": ["a = 1\n", "[table]\nb = 2\n", "# note\n", "\n", "[[arr]]\nc = 3\n"],
}


@SETTINGS
@given(
    st.sampled_from(sorted(PIECES)).flatmap(
        lambda path: st.tuples(
            st.just(path), st.lists(st.sampled_from(PIECES[path]), max_size=10), st.booleans(), st.booleans()
        )
    )
)
def test_every_line_of_a_code_file_with_words_is_in_some_chunk_and_every_range_slices_the_file(
    case: tuple[str, list[str], bool, bool],
) -> None:
    path, pieces, crlf, bom = case
    text = "".join(pieces)
    data = text.replace("\n", "\r\n").encode() if crlf else text.encode()
    data = b"\xef\xbb\xbf" + data if bom else data
    doc, _ = chunk_file("t", path, data)
    assert doc is not None
    assert len({c.id for c in doc.chunks}) == len(doc.chunks)
    covered: set[int] = set()
    for chunk in doc.chunks:
        if chunk.depth == 0 and chunk.byte_end <= chunk.byte_start:
            continue
        if chunk.depth:
            assert data[chunk.byte_start : chunk.byte_end].decode().replace(
                "\r\n", "\n"
            ) == chunk.body.replace("\r\n", "\n")
        covered.update(range(chunk.line_start, chunk.line_end + 1))
    lines = data.decode("utf-8-sig").replace("\r\n", "\n").split("\n")
    for number, line in enumerate(lines, start=1):
        # what only closes (Ruby's `end`, Lua's `end)`; C's and C#'s `#endif`, `#else` alone after a
        # blank line) is, as a closing bracket, never a chunk of its own
        directive = path.endswith((".c", ".h", ".cpp", ".cs")) and re.fullmatch(
            r"\s*#\s*(?:endif|else|endregion)\b.*", line
        )
        if re.search(r"\w", line) and not re.fullmatch(r"\s*end[)\]},;]*", line) and not directive:
            assert number in covered, (path, number, line, text)


def test_each_type_of_a_go_type_group_is_a_chunk() -> None:
    source = "package a\n\ntype (\n\t// A is a.\n\tA struct{ x int }\n\tB interface {\n\t\tN() int\n\t}\n)\n"
    chunks = chunks_of("g.go", source)
    assert list(chunks) == ["", "A", "B"]
    assert chunks["B"].title == "type B interface"
    assert chunks["A"].body.endswith("// A is a.\n\tA struct{ x int }")


def test_a_go_var_of_one_name_that_holds_a_function_literal_is_a_function() -> None:
    source = (
        "package lo\n\nfunc Try() {}\n\n// Assert panics.\nvar Assert = func(ok bool) {\n\tif !ok {\n"
        "\t\tpanic(1)\n\t}\n}\n\n// Assertf panics, formatted.\nvar Assertf = func(ok bool, f string) {\n"
        "\tpanic(f)\n}\n\nvar n, m = 1, 2\nvar (\n\tg = func() {}\n\th = 2\n)\n"
    )
    chunks = chunks_of("errors.go", source)
    assert [(s, c.defines) for s, c in chunks.items() if s] == [
        ("Try", "function"),
        ("Assert", "function"),
        ("Assertf", "function"),  # lo's had been the last lines of block `Assert`
        ("n", "block"),  # two names, or a group: statements
    ]
    assert chunks["Assertf"].title == "var Assertf = func(ok bool, f string)"
    sized = chunks_of(
        "utils.go", "package utils\n\nvar Size = func(w interface{}) (int, error) {\n\treturn 80, nil\n}\n"
    )
    assert sized["Size"].title == "var Size = func(w interface{}) (int, error)"  # not `func(w interface`
    assert chunks["Assertf"].body.startswith("// Assertf panics, formatted.\n")


def test_ginkgo_specs_are_go_tests_in_their_groups() -> None:
    source = (
        "package gbytes_test\n\ntype SlowReader struct{ R io.Reader }\n\n"
        'var _ = Describe("Buffer", func() {\n\tvar b *Buffer\n\n\tWhen("empty", func() {\n'
        '\t\tIt("reads nothing", func() {\n\t\t\tExpect(b.Contents()).To(BeEmpty())\n\t\t})\n\t})\n})\n\n'
        'var _ = Describe("Reader", func() {\n\tFIt("times out", func() {})\n})\n'
    )
    chunks = chunks_of("gbytes/buffer_test.go", source)
    assert [(slug, c.defines) for slug, c in chunks.items() if slug] == [
        ("SlowReader", "type"),
        ("buffer", "test"),  # gomega's had been blocks named `_`
        ("buffer.empty", "test"),
        ("buffer.empty.reads-nothing", "test"),
        ("reader", "test"),
        ("reader.times-out", "test"),
    ]
    assert chunks["buffer.empty.reads-nothing"].title == 'It("reads nothing", func()'


def test_a_go_var_whose_comment_begins_with_its_name_begins_a_block() -> None:
    source = (
        'package middleware\n\nfunc f() {}\n\nconst www = "www."\n\n'
        "// RedirectHTTPSConfig is the HTTPS Redirect middleware config.\n"
        "var RedirectHTTPSConfig = RedirectConfig{redirect: redirectHTTPS}\n\n"
        "// RedirectWWWConfig is the WWW Redirect middleware config.\n"
        "var RedirectWWWConfig = RedirectConfig{redirect: redirectWWW}\n"
        "var plain = 1\n"
    )
    blocks = {s: c for s, c in chunks_of("redirect.go", source).items() if c.defines == "block"}
    assert list(blocks) == ["www", "RedirectHTTPSConfig", "RedirectWWWConfig"]  # echo's had been in `www`
    assert blocks["RedirectWWWConfig"].body.startswith("// RedirectWWWConfig is")
    assert blocks["RedirectWWWConfig"].body.endswith("var plain = 1")  # what follows undocumented joins it


def test_the_closing_parenthesis_of_a_go_type_group_ends_its_last_type() -> None:
    source = "package a\n\ntype (\n\tA string\n\t// B is b.\n\tB int64\n)\n\nfunc f() {}\n"
    chunks = chunks_of("g.go", source)
    assert chunks["B"].body == "\t// B is b.\n\tB int64\n)"  # gorm's and zap's had been in no chunk
    assert (chunks["B"].line_start, chunks["B"].line_end) == (5, 7)
    spaced = chunks_of("g.go", "package a\n\ntype (\n\tA int\n\n\t// B is a request.\n\n\tB int\n)\n")
    assert spaced["B"].body.startswith("\t// B is a request.\n\n\tB int")  # nats.go's had been in no chunk


@pytest.mark.parametrize(
    ("path", "source", "slugs"),
    [
        ("a.cpp", 'extern "C" {\nint f() { return 1; }\n}\n', ["", "f"]),
        ("v.cpp", "template <typename T> T V<A<T>>::get() { return t; }\n", ["", "V.get"]),
        ("b.rb", "class B\n  class << self\n    def m; end\n  end\nend\n", ["", "B", "B.m"]),
        (
            "m.ts",
            "declare module 'foo' {\n  export function x(): void;\n}\n",
            ["", "foo", "foo.x"],
        ),  # the declared function: a name
    ],
)
def test_blocks_that_only_hold_definitions_and_decorated_names_give_plain_ids(
    path: str, source: str, slugs: list[str]
) -> None:
    assert list(chunks_of(path, source)) == slugs

"""`ra mcp` and the read-only server behind `ra-query mcp`, driven by the MCP SDK's real client over stdio.

The tests that only read share one `ra mcp` session (and one read-only session) per module, over
a copy of tests/fixtures/corpus built once; a test that edits files starts its own server. The
client runs on an anyio blocking portal, so the tests themselves are plain functions.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar, cast

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent, Tool
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from tests.conftest import BIN, CONFIG_CEILING, CORPUS, Run, build, built_copy, run_cmd

NO_MATCH = "zanzibar"


def read_only(artifacts: Path) -> list[str]:
    """The command line of the read-only server over `artifacts`."""
    return [str(BIN / "ra-query"), "--artifacts", str(artifacts), "mcp"]


@dataclass(frozen=True)
class Server:
    """A connected client session to a server process."""

    portal: BlockingPortal
    session: ClientSession
    errlog: Path

    def call(self, tool: str, arguments: dict[str, Any] | None = None) -> CallToolResult:
        return self.portal.call(partial(self.session.call_tool, tool, arguments or {}))

    def ok(self, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """The structured content of a call that must succeed; its text content is the same JSON."""
        result = self.call(tool, arguments)
        assert not result.is_error, text_of(result)
        assert result.structured_content is not None
        assert json.loads(text_of(result)) == result.structured_content
        return result.structured_content

    def tools(self) -> dict[str, Tool]:
        return {tool.name: tool for tool in self.portal.call(self.session.list_tools).tools}


def text_of(result: CallToolResult) -> str:
    assert len(result.content) == 1 and isinstance(result.content[0], TextContent)
    return result.content[0].text


@contextmanager
def serve(command: list[str], cwd: Path, home: Path) -> Iterator[Server]:
    """Start `command` as an MCP server over stdio and open an initialized client session to it."""
    errlog = cwd.parent / f"{cwd.name}-server-stderr.txt"
    params = StdioServerParameters(
        command=command[0],
        args=command[1:],
        # PYTHONPATH kept: a worktree's tests run the worktree's server, not the installed one
        env={
            "HOME": str(home),
            "NO_COLOR": "1",
            CONFIG_CEILING: os.environ[CONFIG_CEILING],
            **{key: os.environ[key] for key in ("PYTHONPATH",) if key in os.environ},
        },
        cwd=cwd,
    )
    with ExitStack() as stack:
        log = stack.enter_context(errlog.open("w", encoding="utf-8"))
        portal = stack.enter_context(start_blocking_portal())
        read, write = stack.enter_context(portal.wrap_async_context_manager(stdio_client(params, errlog=log)))
        session = stack.enter_context(portal.wrap_async_context_manager(ClientSession(read, write)))
        portal.call(session.initialize)
        yield Server(portal, session, errlog)


@dataclass(frozen=True)
class Kb:
    """A built copy of the fixture corpus (tree `docs`) and the HOME its commands run with."""

    root: Path
    home: Path

    def rq(self, *args: str) -> Run:
        return run_cmd(
            "ra-query", "--artifacts", str(self.root / ".ra"), *args, cwd=self.root, home=self.home
        )

    def ra_mcp(self) -> list[str]:
        return [str(BIN / "ra"), "mcp"]


def make_kb(base: Path) -> Kb:
    return Kb(*built_copy(CORPUS, base))


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Kb:
    """Built once per module: tests using it must not change it."""
    return make_kb(tmp_path_factory.mktemp("mcp"))


@pytest.fixture(scope="module")
def ra_mcp(shared: Kb) -> Iterator[Server]:
    """One `ra mcp` session shared by the tests that only read."""
    with serve(shared.ra_mcp(), shared.root, shared.home) as server:
        yield server


@pytest.fixture(scope="module")
def readonly_kb(tmp_path_factory: pytest.TempPathFactory) -> Kb:
    """A separate build for the read-only server, so nothing else could have written to it."""
    return make_kb(tmp_path_factory.mktemp("mcp_readonly"))


@pytest.fixture(scope="module")
def ra_query_mcp(readonly_kb: Kb) -> Iterator[Server]:
    with serve(read_only(readonly_kb.root / ".ra"), readonly_kb.root, readonly_kb.home) as server:
        yield server


T = TypeVar("T")


def soon(ask: Callable[[], T], expected: T, seconds: float = 5.0) -> T:
    """`ask()` until it answers `expected` or `seconds` pass; the last answer.

    The watcher raises its flag a few ms after a write (docs/mcp.md, Freshness): a call sent
    in that window is answered from the previous state, and on a busy machine the window grows.
    """
    deadline = time.monotonic() + seconds
    while True:
        got = ask()
        if got == expected or time.monotonic() > deadline:
            return got
        time.sleep(0.02)


def ids(payload: dict[str, Any], topic: int = 0) -> list[str]:
    return [r["id"] for r in payload["queries"][topic]["results"]]


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))
    }


# ── tools ────────────────────────────────────────────────────────────────────────────────────


def test_the_server_lists_search_context_get_and_list_sources_as_read_only_tools(ra_mcp: Server) -> None:
    tools = ra_mcp.tools()
    assert sorted(tools) == ["context", "get", "list_sources", "search"]
    for tool in tools.values():
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        assert tool.description


def test_the_search_tool_takes_seed_000s_arguments(ra_mcp: Server) -> None:
    schema = ra_mcp.tools()["search"].input_schema
    assert set(schema["properties"]) == {
        "queries",
        "limit",
        "max_tokens",
        "list",
        "mode",
        "kind",
        "trees",
        "whole",
        "lang",
    }
    assert schema["required"] == ["queries"]
    assert {"type": "string"} in schema["properties"]["queries"]["anyOf"]
    assert {"type": "array", "items": {"type": "string"}} in schema["properties"]["queries"]["anyOf"]
    assert schema["properties"]["list"]["type"] == "boolean"


def test_the_get_tool_takes_an_id_and_full_document(ra_mcp: Server) -> None:
    schema = ra_mcp.tools()["get"].input_schema
    assert set(schema["properties"]) == {"id", "full_document"}
    assert schema["required"] == ["id"]


def test_the_list_sources_tool_takes_no_arguments(ra_mcp: Server) -> None:
    assert ra_mcp.tools()["list_sources"].input_schema["properties"] == {}


# ── search ───────────────────────────────────────────────────────────────────────────────────


def test_search_returns_the_same_json_as_ra_query_search_json(ra_mcp: Server, shared: Kb) -> None:
    cli = shared.rq("search", "--json", "--max-tokens", "8000", "pool OR fixtures OR logging")
    assert cli.code == 0, cli.err
    assert ra_mcp.ok("search", {"queries": "pool OR fixtures OR logging"}) == json.loads(cli.out)


def test_without_max_tokens_an_answer_fits_the_default_agent_budget(ra_mcp: Server) -> None:
    assert ra_mcp.ok("search", {"queries": "pool"})["tokens"]["max"] == 8000


def test_an_answer_that_left_results_out_lists_their_ids_and_says_how_to_get_them(ra_mcp: Server) -> None:
    whole = ids(ra_mcp.ok("search", {"queries": "pool OR fixtures OR logging"}))
    tokens = ra_mcp.ok("search", {"queries": "pool OR fixtures OR logging", "max_tokens": 40})["tokens"]
    assert tokens["omitted_ids"] == whole[len(whole) - tokens["omitted"] :]
    assert tokens["hint"].startswith(f"{tokens['omitted']} result")
    assert "get(id)" in tokens["hint"] and "larger max_tokens" in tokens["hint"]


def test_the_context_tool_takes_seed_000s_arguments(ra_mcp: Server) -> None:
    schema = ra_mcp.tools()["context"].input_schema
    assert set(schema["properties"]) == {"files", "limit", "max_tokens", "list"}
    assert schema["required"] == ["files"]
    assert schema["properties"]["files"] == {
        "description": "File paths to analyze for context",
        "items": {"type": "string"},
        "title": "Files",
        "type": "array",
    }


@pytest.mark.parametrize(
    ("tool", "argument"), [("search", "limit"), ("search", "max_tokens"), ("context", "limit")]
)
def test_integer_arguments_say_their_minimum_is_one(ra_mcp: Server, tool: str, argument: str) -> None:
    assert ra_mcp.tools()[tool].input_schema["properties"][argument]["minimum"] == 1


def test_the_context_tool_finds_the_documentation_of_a_source_file(ra_mcp: Server, shared: Kb) -> None:
    source = shared.root.parent / "pool_settings.py"
    source.write_text(
        "# connection pool settings\nPOOL_SIZE = 10  # connections in the pool\n"
        "def open_pool(): return ConnectionPool(POOL_SIZE)  # the pool opens its connections\n",
        encoding="utf-8",
    )
    payload = ra_mcp.ok("context", {"files": [str(source)], "list": True})
    assert ids(payload)[0] == "docs:notes/pool.txt"
    assert payload["queries"][0]["context"]["query"].startswith("pool^4.00")
    assert payload["tokens"]["max"] == 8000
    # a code file: the docs that explain it are searched apart, its name's words weighing there
    assert (payload["queries"][0]["context"]["code"], payload["queries"][0]["context"]["names"]) == (
        True,
        ["pool", "settings"],
    )


def test_the_context_tool_answers_several_files_with_a_list_each_sharing_the_limit(
    ra_mcp: Server, shared: Kb
) -> None:
    first, second = shared.root.parent / "pool_a.py", shared.root.parent / "pool_b.py"
    for source in (first, second):
        source.write_text(
            "# connection pool settings\nPOOL_SIZE = 10  # connections in the pool\n", encoding="utf-8"
        )
    payload = ra_mcp.ok("context", {"files": [str(first), str(second)], "limit": 3, "list": True})
    assert [q["input"] for q in payload["queries"]] == [str(first), str(second)]
    assert sum(len(q["results"]) for q in payload["queries"]) <= 3
    shown = [r["id"] for q in payload["queries"] for r in q["results"]]
    assert len(shown) == len(set(shown))  # the same pool page fits both: once, for the first
    assert payload["queries"][0]["results"][0]["also_for"] == [str(second)]


def test_a_context_call_for_a_missing_file_is_a_one_line_tool_error(ra_mcp: Server) -> None:
    result = ra_mcp.call("context", {"files": ["nowhere/x.py"]})
    assert result.is_error
    assert text_of(result) == "nowhere/x.py: no such file — give the files you are working on"


def test_search_in_list_mode_returns_the_same_json_as_ra_query_search_json_list(
    ra_mcp: Server, shared: Kb
) -> None:
    cli = shared.rq("search", "--json", "--list", "-n", "2", "--max-tokens", "40", "once", "pool")
    payload = ra_mcp.ok("search", {"queries": ["once", "pool"], "limit": 2, "max_tokens": 40, "list": True})
    assert payload["tokens"].pop("hint")  # for the agent: how to get what was left out
    assert payload == json.loads(cli.out)


def test_an_array_of_queries_answers_each_topic_in_order_showing_a_chunk_once(ra_mcp: Server) -> None:
    payload = ra_mcp.ok("search", {"queries": ["once", "fixtures", "pool"]})
    assert [q["query"] for q in payload["queries"]] == ["once", "fixtures", "pool"]
    everything = [i for t in range(3) for i in ids(payload, t)]
    assert "docs:notes/pool.txt" in everything
    assert len(everything) == len(set(everything))


def test_a_single_query_string_is_one_topic(ra_mcp: Server) -> None:
    payload = ra_mcp.ok("search", {"queries": "connection pool"})
    assert [q["query"] for q in payload["queries"]] == ["connection pool"]
    assert ids(payload) == ["docs:notes/pool.txt"]


def test_limit_keeps_the_best_results_of_each_topic(ra_mcp: Server) -> None:
    every = ids(ra_mcp.ok("search", {"queries": "pool OR fixtures OR logging"}))
    assert len(every) == 3
    assert ids(ra_mcp.ok("search", {"queries": "pool OR fixtures OR logging", "limit": 2})) == every[:2]


def test_max_tokens_fits_the_results_into_the_budget_and_reports_it(ra_mcp: Server) -> None:
    unlimited = ra_mcp.ok("search", {"queries": "pool OR fixtures OR logging"})
    payload = ra_mcp.ok("search", {"queries": "pool OR fixtures OR logging", "max_tokens": 40})
    assert payload["tokens"]["max"] == 40
    assert 0 < payload["tokens"]["used"] <= 40
    assert payload["tokens"]["omitted"] == len(ids(unlimited)) - len(ids(payload)) > 0


def test_list_mode_returns_snippets_without_content(ra_mcp: Server) -> None:
    results = ra_mcp.ok("search", {"queries": "pool", "list": True})["queries"][0]["results"]
    assert results and all("content" not in r and r["snippet"] for r in results)
    full = ra_mcp.ok("search", {"queries": "pool"})["queries"][0]["results"]
    assert all("connection pool" in r["content"] for r in full)


def test_a_query_that_matches_nothing_is_an_empty_answer_with_a_note_not_an_error(ra_mcp: Server) -> None:
    topic = ra_mcp.ok("search", {"queries": NO_MATCH})["queries"][0]
    assert topic["results"] == []
    assert "no results" in topic["note"]


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ('"connection pool', ["docs:notes/pool.txt"]),
        ("(pool size", ["docs:notes/pool.txt"]),
        ("title:", []),
    ],
)
def test_a_query_with_a_syntax_error_is_read_leniently_and_says_how(
    ra_mcp: Server, query: str, found: list[str]
) -> None:
    result = ra_mcp.call("search", {"queries": query})
    assert not result.is_error
    topic = (result.structured_content or {})["queries"][0]
    assert ids({"queries": [topic]}) == found
    assert topic["note"].startswith("query syntax error at column ")
    assert "read as: " in topic["note"] or "found no words" in topic["note"]


def test_a_repaired_query_that_is_then_relaxed_still_says_it_was_repaired(ra_mcp: Server) -> None:
    topic = ra_mcp.ok("search", {"queries": f'(pool "{NO_MATCH} size"'})["queries"][0]
    assert topic["relaxed"] is True
    assert "query syntax error" in topic["note"] and "any of the words" in topic["note"]


def test_a_limit_below_one_is_a_tool_error_naming_the_argument(ra_mcp: Server) -> None:
    result = ra_mcp.call("search", {"queries": "pool", "limit": 0})
    assert result.is_error
    assert text_of(result) == "limit must be between 1 and 1000 (got 0)"


def test_a_budget_below_one_token_is_a_tool_error(ra_mcp: Server) -> None:
    result = ra_mcp.call("search", {"queries": "pool", "max_tokens": 0})
    assert result.is_error
    assert text_of(result) == "max_tokens must be between 1 and 10000000 (got 0)"


def test_an_empty_array_of_queries_is_a_tool_error(ra_mcp: Server) -> None:
    result = ra_mcp.call("search", {"queries": []})
    assert result.is_error
    assert "give at least one query" in text_of(result)


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("search", {"queries": "pool", "limit": "many"}, 'limit must be an integer ≥ 1 (got "many")'),
        (
            "search",
            {"queries": 5},
            "queries must be a string, or an array of strings (one topic each) (got 5)",
        ),
        ("search", {}, "queries is required (a string, or an array of strings (one topic each))"),
        ("context", {"files": "a.py"}, 'files must be an array of file paths (got "a.py")'),
        ("get", {"id": 7}, "id must be a string: tree:path or tree:path#slug (got 7)"),
        (
            "search",
            {"queries": "pool", "kind": "bogus"},
            'kind must be one of any, docs, code, upstream (got "bogus")',
        ),
        (
            "search",
            {"queries": "pool", "mode": "bogus"},
            'mode must be one of auto, hybrid, lexical (got "bogus")',
        ),
        ("search", {"queries": "pool", "whole": "yes"}, 'whole must be true or false (got "yes")'),
        (
            "search",
            {"queries": "pool", "trees": "docs"},
            'trees must be an array of tree names (list_sources names them) (got "docs")',
        ),
        (
            "search",
            {"queries": "pool", "limt": 1},
            "limt is not an argument of search — its arguments: kind, lang, limit, list, max_tokens, mode, "
            "queries, trees, whole",
        ),
        (
            "get",
            {"id": "docs:a.md", "lang": "ja"},
            "lang is not an argument of get — its arguments: full_document, id",
        ),
    ],
)
def test_a_bad_argument_is_a_one_line_tool_error_not_a_validation_dump_nor_silence(
    ra_mcp: Server, tool: str, arguments: dict[str, Any], message: str
) -> None:
    result = ra_mcp.call(tool, arguments)
    assert result.is_error and text_of(result) == message


def test_the_server_instructions_name_the_trees_and_say_how_to_search_in_under_2_kb(
    tmp_path: Path,
) -> None:
    from tests.test_faults import RawMcp

    kb = make_kb(tmp_path)
    for command in ([str(BIN / "ra"), "mcp"], [str(BIN / "ra-query"), "mcp"]):
        server = RawMcp((kb.root, kb.home), command)
        instructions = server.initialized["result"]["instructions"]
        assert server.close() == 0
        assert "Trees: `docs`." in instructions and "`search`" in instructions and "`context`" in instructions
        assert len(instructions.encode()) < 2048


def test_with_hundreds_of_trees_the_instructions_list_what_fits_and_end_in_an_ellipsis() -> None:
    from ra_query.mcp import INSTRUCTIONS_LIMIT, server_instructions

    trees = [f"tree-number-{i}" for i in range(300)]
    text = server_instructions(trees, trees[::2])  # returned: the trimming ends
    assert len(text.encode()) <= INSTRUCTIONS_LIMIT
    assert "`tree-number-0`, " in text and ", …." in text and "`tree-number-299`" not in text
    assert "Upstream trees `tree-number-0`" in text


def instructions_of_both_servers(root: Path, home: Path) -> list[str]:
    """The instructions `ra mcp` and `ra-query mcp` give at initialize, started in `root`."""
    from tests.test_faults import RawMcp

    said: list[str] = []
    for command in ([str(BIN / "ra"), "mcp"], [str(BIN / "ra-query"), "mcp"]):
        server = RawMcp((root, home), command)
        said.append(server.initialized["result"]["instructions"])
        assert server.close() == 0
    return said


def test_both_servers_say_how_to_find_and_narrow_code_where_the_index_has_some(tmp_path: Path) -> None:
    from tests.test_agents import code_project

    root, home = code_project(tmp_path / "kb"), tmp_path / "home"
    home.mkdir()
    build(root, home)
    for instructions in instructions_of_both_servers(root, home):
        assert (
            '\n- Python and Go code in `repo`: find a definition by what it does ("where are retries '
            'scheduled") or by its name (`Client.send`); kind="code", "docs" or "upstream" keeps one kind '
            "of source, lang:python in a query one language; results give file:lines. `get` with "
            "tree:path#Class.method returns one definition.\n"
        ) in instructions
        assert len(instructions.encode()) < 2048


def test_both_servers_say_nothing_of_code_where_the_index_has_none(tmp_path: Path) -> None:
    root, home = tmp_path / "kb", tmp_path / "home"
    shutil.copytree(CORPUS, root)
    home.mkdir()
    config = root / ".ra.toml"
    config.write_text(
        config.read_text(encoding="utf-8") + 'include = ["**/*.md", "**/*.go"]\n', encoding="utf-8"
    )
    build(root, home)  # no .go file: the index has docs only, whatever the globs name
    for instructions in instructions_of_both_servers(root, home):
        assert (
            "code in" not in instructions
            and "lang:" not in instructions
            and 'kind="code"' not in instructions
        )


def test_with_hundreds_of_code_trees_the_code_line_lists_what_fits_and_ends_in_an_ellipsis() -> None:
    from ra_query.mcp import INSTRUCTIONS_LIMIT, server_instructions

    trees = [f"tree-number-{i:03d}" for i in range(300)]
    text = server_instructions(trees, (), {name: ["rust", "go"] for name in trees[::2]})
    assert len(text.encode()) <= INSTRUCTIONS_LIMIT
    assert "\n- Rust and Go code in `tree-number-000`, `tree-number-002`, " in text
    assert ", …: find a definition" in text and "lang:rust" in text


@pytest.mark.parametrize(
    ("tool", "arguments", "name"),
    [
        ("search", {"queries": "pool", "limit": True}, "limit"),
        ("search", {"queries": "pool", "limit": "3"}, "limit"),
        ("search", {"queries": "pool", "list": "yes"}, "list"),
        ("get", {"id": "docs:guides/errors.md", "full_document": 1}, "full_document"),
    ],
)
def test_arguments_are_not_coerced_from_other_types(
    ra_mcp: Server, tool: str, arguments: dict[str, Any], name: str
) -> None:
    result = ra_mcp.call(tool, arguments)
    assert result.is_error and name in text_of(result)


# ── get ──────────────────────────────────────────────────────────────────────────────────────


def test_get_returns_one_chunk_by_its_id(ra_mcp: Server) -> None:
    payload = ra_mcp.ok("get", {"id": "docs:guides/errors.md#logging"})
    assert payload["id"] == "docs:guides/errors.md#logging"
    assert payload["whole_document"] is False
    assert [c["id"] for c in payload["chunks"]] == ["docs:guides/errors.md#logging"]
    assert "Log an error once" in payload["chunks"][0]["content"]


def test_get_returns_a_whole_document_in_document_order_by_its_doc_id(ra_mcp: Server, shared: Kb) -> None:
    payload = ra_mcp.ok("get", {"id": "docs:guides/errors.md"})
    assert payload["whole_document"] is True
    lines = [c["line_start"] for c in payload["chunks"]]
    assert lines == sorted(lines) and len(lines) > 1
    assert payload == json.loads(shared.rq("get", "--json", "docs:guides/errors.md").out)


def test_get_with_full_document_returns_the_document_of_a_chunk_id(ra_mcp: Server) -> None:
    payload = ra_mcp.ok("get", {"id": "docs:guides/errors.md#logging", "full_document": True})
    assert payload["id"] == "docs:guides/errors.md"
    assert payload["whole_document"] is True


@pytest.mark.parametrize(
    "unknown", ["docs:guides/nope.md", "docs:guides/errors.md#nope", "nope:x.md", "docs:../../etc/passwd"]
)
def test_an_unknown_id_is_a_tool_error_with_a_one_line_message(ra_mcp: Server, unknown: str) -> None:
    result = ra_mcp.call("get", {"id": unknown})
    assert result.is_error
    said = "no tree 'nope' in this index" if unknown.startswith("nope:") else "list "
    assert text_of(result).startswith(f"not found: {unknown} — {said}")
    assert "\n" not in text_of(result)


def test_the_server_keeps_answering_after_a_tool_error(ra_mcp: Server) -> None:
    assert ra_mcp.call("get", {"id": "docs:nope.md"}).is_error
    assert ids(ra_mcp.ok("search", {"queries": "pool"})) == ["docs:notes/pool.txt"]


# ── list_sources ─────────────────────────────────────────────────────────────────────────────


def test_list_sources_lists_the_fixture_tree_with_its_counts(ra_mcp: Server, shared: Kb) -> None:
    payload = ra_mcp.ok("list_sources")
    assert payload["trees"] == [
        {"name": "docs", "files": 3, "chunks": 10, "skipped": 0, "global": False, "root": str(shared.root)}
    ]
    assert (payload["files"], payload["chunks"], payload["stale"]) == (3, 10, 0)


# ── freshness, read-only, stdout ─────────────────────────────────────────────────────────────


def test_an_edited_source_file_is_found_by_the_next_search_without_ra_update(tmp_path: Path) -> None:
    kb = make_kb(tmp_path)
    with serve(kb.ra_mcp(), kb.root, kb.home) as server:
        assert ids(server.ok("search", {"queries": NO_MATCH})) == []
        with (kb.root / "guides" / "testing.md").open("a", encoding="utf-8") as fh:
            fh.write(f"\n## Travel\n\nThe {NO_MATCH} suite runs nightly.\n")
        found = soon(
            lambda: ids(server.ok("search", {"queries": NO_MATCH})), ["docs:guides/testing.md#travel"]
        )
        assert found == ["docs:guides/testing.md#travel"]
        assert server.ok("list_sources")["chunks"] == 11


def test_ra_mcp_builds_a_missing_index_into_artifacts_on_the_first_call(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    root = tmp_path / "kb"
    shutil.copytree(CORPUS, root)
    elsewhere = tmp_path / "elsewhere"
    with serve([str(BIN / "ra"), "mcp", "--artifacts", str(elsewhere)], root, tmp_path / "home") as server:
        assert ids(server.ok("search", {"queries": "connection pool"})) == ["docs:notes/pool.txt"]
    assert (elsewhere / "manifest.json").is_file()
    assert not (root / ".ra").exists()


def test_the_read_only_server_answers_like_ra_query_and_writes_nothing(
    ra_query_mcp: Server, readonly_kb: Kb
) -> None:
    before = snapshot(readonly_kb.root)
    cli = readonly_kb.rq("search", "--json", "--max-tokens", "8000", "pool OR fixtures OR logging")
    assert ra_query_mcp.ok("search", {"queries": "pool OR fixtures OR logging"}) == json.loads(cli.out)
    assert ra_query_mcp.ok("get", {"id": "docs:notes/pool.txt"})["whole_document"] is True
    assert ra_query_mcp.ok("list_sources")["stale"] == 0
    assert snapshot(readonly_kb.root) == before


def test_the_read_only_server_counts_stale_files_and_never_rebuilds(tmp_path: Path) -> None:
    kb = make_kb(tmp_path)
    with serve(read_only(kb.root / ".ra"), kb.root, kb.home) as server:
        (kb.root / "notes" / "new.md").write_text(f"# New\n\n{NO_MATCH}\n", encoding="utf-8")

        def answer() -> tuple[list[str], int]:
            payload = server.ok("search", {"queries": NO_MATCH})
            return ids(payload), payload["stale"]

        assert soon(answer, ([], 1)) == ([], 1)


def test_the_read_only_server_without_an_index_answers_every_call_with_a_tool_error(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / ".ra"
    (tmp_path / "home").mkdir()
    with serve(read_only(missing), tmp_path, tmp_path / "home") as server:
        for tool, arguments in (
            ("search", {"queries": "pool"}),
            ("get", {"id": "docs:a.md"}),
            ("list_sources", {}),
        ):
            result = server.call(tool, arguments)
            assert result.is_error
            assert text_of(result).startswith(
                f"no artifacts at {missing}: no such directory — build them with: ra update"
            )


def mcp_process(
    program: str, kb: Kb, stdin: Any = subprocess.PIPE, stderr: Any = subprocess.DEVNULL, **options: Any
) -> subprocess.Popen[Any]:
    """`program mcp` over stdio in `kb`, its stdout a pipe (`options`: Popen's others, `env`
    included: by default this environment with kb's HOME)."""
    options.setdefault("env", {**os.environ, "HOME": str(kb.home)})
    command = [str(BIN / program), "mcp"]
    return subprocess.Popen(
        command, cwd=kb.root, stdin=stdin, stdout=subprocess.PIPE, stderr=stderr, **options
    )


# a session spoken raw: the handshake, a search that finds pool.txt and a get of no page
SEARCH_AND_GET: list[dict[str, Any]] = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": LATEST_HANDSHAKE_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "search", "arguments": {"queries": "pool"}},
    },
    {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "get", "arguments": {"id": "docs:nope.md"}},
    },
]


def test_stdout_carries_only_protocol_while_warnings_go_to_stderr(tmp_path: Path) -> None:
    kb = make_kb(tmp_path)
    config = kb.root / ".ra.toml"
    config.write_text(config.read_text(encoding="utf-8") + "bogus_key = 1\n", encoding="utf-8")
    messages = SEARCH_AND_GET
    env = {k: v for k, v in os.environ.items() if not k.startswith("RA_")} | {"HOME": str(kb.home)}
    errlog = tmp_path / "stderr.txt"
    with (
        errlog.open("w", encoding="utf-8") as stderr,
        mcp_process("ra", kb, stderr=stderr, env=env, text=True) as proc,
    ):
        assert proc.stdin is not None and proc.stdout is not None
        lines: list[str] = []
        for message in messages:  # one at a time: wait for each answer before the next request
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            while "id" in message and not any(json.loads(line).get("id") == message["id"] for line in lines):
                lines.append(proc.stdout.readline())
        out, _ = proc.communicate(timeout=60)
    lines += out.splitlines(keepends=True)
    err = errlog.read_text(encoding="utf-8")
    replies = [json.loads(line) for line in lines]
    assert all(reply["jsonrpc"] == "2.0" for reply in replies)
    by_id = {reply["id"]: reply for reply in replies if "id" in reply}
    assert by_id[2]["result"]["structuredContent"]["queries"][0]["results"][0]["id"] == "docs:notes/pool.txt"
    assert by_id[3]["result"]["isError"] is True
    assert "ra: warning:" in err and "bogus_key" in err
    assert proc.returncode == 0


def _requests_then_end(
    kb: Kb, via: str, requests: Path, extra: tuple[dict[str, Any], ...] = ()
) -> tuple[dict[Any, Any], int]:
    """`ra-query mcp`'s replies by id, and its exit code, to an initialize, a search, a get and
    `extra`, all written at once `via` a pipe closed right after them, or the file `requests`."""
    messages = [*SEARCH_AND_GET, *extra]
    lines = "".join(json.dumps(m) + "\n" for m in messages)
    requests.write_text(lines, encoding="utf-8")
    with ExitStack() as stack:
        stdin = subprocess.PIPE if via == "pipe" else stack.enter_context(requests.open("rb"))
        proc = stack.enter_context(mcp_process("ra-query", kb, stdin))
        try:
            out, _ = proc.communicate(lines.encode() if via == "pipe" else None, timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise AssertionError("the server did not end after its input did") from None
    replies = [json.loads(line) for line in out.splitlines()]
    return {reply.get("id"): reply for reply in replies}, proc.returncode


@pytest.mark.parametrize("via", ["pipe", "file"])
def test_requests_sent_before_the_input_ends_are_all_answered(via: str, shared: Kb, tmp_path: Path) -> None:
    by_id, code = _requests_then_end(shared, via, tmp_path / "requests.jsonl")
    assert sorted(by_id) == [1, 2, 3] and code == 0
    assert by_id[2]["result"]["structuredContent"]["queries"][0]["results"][0]["id"] == "docs:notes/pool.txt"
    assert by_id[3]["result"]["isError"] is True


def test_a_request_cancelled_before_the_input_ends_is_not_waited_for(shared: Kb, tmp_path: Path) -> None:
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}
    by_id, code = _requests_then_end(shared, "pipe", tmp_path / "requests.jsonl", (cancel,))
    assert code == 0 and 3 in by_id  # it ended; the call it cancelled may or may not have answered


@pytest.mark.parametrize("program", ["ra", "ra-query"])
def test_a_server_whose_client_goes_away_exits_with_its_watcher(program: str, tmp_path: Path) -> None:
    from tests.test_faults import RawMcp

    kb = make_kb(tmp_path)
    server = RawMcp((kb.root, kb.home), [str(BIN / program), "mcp"])
    server.send(
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_sources","arguments":{}}}'
    )
    assert server.receive()["id"] == 1
    assert server.close() == 0  # stdin closed: it stops watching and exits, nothing left running


def kb_with_long_page(base: Path, parts: int, repeat: int) -> Kb:
    """The fixture corpus and guides/long.md (`parts` sections of a sentence `repeat` times), built."""
    kb, home = base / "kb", base / "home"
    shutil.copytree(CORPUS, kb)
    home.mkdir()
    sections = [f"## Part {n}\n\n" + f"Paragraph {n} of the long page. " * repeat for n in range(parts)]
    (kb / "guides" / "long.md").write_text("# Long\n\n" + "\n\n".join(sections) + "\n", encoding="utf-8")
    build(kb, home)
    return Kb(kb, home)


def test_a_request_written_in_pieces_and_a_reply_larger_than_a_pipe_cross_whole(tmp_path: Path) -> None:
    # the server reads its stdin and writes its stdout as the event loop finds them ready
    from tests.test_faults import RawMcp

    kb = kb_with_long_page(tmp_path, parts=120, repeat=40)
    server = RawMcp((kb.root, kb.home))
    request = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "get", "arguments": {"id": "docs:guides/long.md"}},
        }
    ).encode()
    assert server.process.stdin is not None
    server.process.stdin.write(request[:40])
    server.process.stdin.flush()
    time.sleep(0.2)
    server.send(request[40:])
    reply = server.receive()
    assert reply["id"] == 1 and not reply["result"].get("isError")
    assert len(json.dumps(reply)) > 2 * 65536
    chunks = reply["result"]["structuredContent"]["chunks"]
    assert "Paragraph 119 of the long page." in chunks[-1]["content"]
    assert server.close() == 0


def test_a_client_that_sends_many_requests_before_reading_an_answer_gets_them_all(tmp_path: Path) -> None:
    # more requests than the server's input pipe holds, whose answers overfill its output pipe:
    # the server must go on reading while it waits to write, or both sides wait forever
    import threading

    kb = kb_with_long_page(tmp_path, parts=30, repeat=20)
    page = {"name": "get", "arguments": {"id": "docs:guides/long.md"}}  # an answer of ~20 KB
    # each request ~1 KB (blanks are JSON whitespace), 160 of them: more than twice what a pipe holds
    requests = [
        json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": page})
        .replace(", ", "," + " " * 250)
        .encode()
        + b"\n"
        for n in range(1, 161)
    ]
    assert sum(map(len, requests)) > 2 * 65536
    server = RawMcpProcess(kb)
    writer = threading.Thread(target=server.write_slowly, args=(requests,), daemon=True)
    writer.start()
    writer.join(60)
    try:
        assert not writer.is_alive(), "the server stopped reading its requests"
        answered = server.read_until_end()
    finally:
        server.process.kill()
        server.process.wait(30)
        assert server.process.stdout is not None
        server.process.stdout.close()
    assert sorted(reply["id"] for reply in answered if "id" in reply) == [0, *range(1, 161)]
    assert all(not reply.get("result", {}).get("isError") for reply in answered)


def test_a_client_that_goes_away_before_reading_its_answers_ends_the_server_quietly(shared: Kb) -> None:
    server = RawMcpProcess(shared, stderr=subprocess.PIPE)
    process = server.process
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # gone: no answer can be written
    server.write_all(b"".join(json.dumps(m).encode() + b"\n" for m in SEARCH_AND_GET[2:]))
    with process.stderr:
        err = process.stderr.read().decode()  # until the server ends
    assert (process.wait(60), err) == (0, "")


class RawMcpProcess:
    """`ra-query mcp` over pipes, written to and read from as a script would: all at once."""

    def __init__(self, kb: Kb, stderr: int = subprocess.DEVNULL) -> None:
        self.process = mcp_process("ra-query", kb, stderr=stderr)
        self.write_all(
            json.dumps({**SEARCH_AND_GET[0], "id": 0}).encode()
            + b"\n"
            + json.dumps(SEARCH_AND_GET[1]).encode()
            + b"\n",
            close=False,
        )

    def write_all(self, data: bytes, close: bool = True) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()
        if close:
            self.process.stdin.close()

    def write_slowly(self, lines: list[bytes]) -> None:
        """`lines` 20 at a time, a tenth of a second apart (the server answers meanwhile), then
        the end of the input."""
        for start in range(0, len(lines), 20):
            self.write_all(b"".join(lines[start : start + 20]), close=False)
            time.sleep(0.1)
        self.write_all(b"")

    def read_until_end(self) -> list[dict[str, Any]]:
        assert self.process.stdout is not None
        return [json.loads(line) for line in self.process.stdout]


# ── the process answering the tools ─────────────────────────────────────────────────────────────
# Each server forks the process that answers its tools before it imports the MCP SDK (start-up:
# docs/mcp.md); where there is no fork it answers them itself.

needs_proc = pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="finds processes by /proc")


def processes_in(cwd: Path) -> list[tuple[int, int]]:
    """(pid, parent pid) of every process whose working directory is `cwd`, the server's first."""
    found: list[tuple[int, int]] = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "cwd").resolve() == cwd.resolve():
                stat = (entry / "stat").read_text(encoding="utf-8")
                found.append((int(entry.name), int(stat.rsplit(")", 1)[1].split()[1])))
        except OSError:  # gone meanwhile, or not ours to look at
            continue
    return sorted(found, key=lambda process: process[0] in {parent for _, parent in found})[::-1]


NO_FORK = "import os, sys; del os.fork; sys.argv[:1] = [{prog!r}]; from {module} import main; main()"


def test_a_ra_toml_that_cannot_be_read_stops_ra_mcp_at_start_up_with_one_line_and_exit_2(
    tmp_path: Path,
) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / ".ra.toml").write_text("root = true\n\n[tree.docs]\npath = 3\n", encoding="utf-8")
    done = run_cmd("ra", "mcp", cwd=tmp_path, home=tmp_path / "home")  # read by the answering process
    assert (done.code, done.out) == (2, "")
    assert done.err.startswith("ra: error: ") and "path" in done.err and done.err.count("\n") == 1


@needs_proc
@pytest.mark.parametrize(("program", "module"), [("ra", "ra_build.cli.entry"), ("ra-query", "ra_query.cli")])
def test_without_fork_a_server_answers_the_tools_itself(program: str, module: str, tmp_path: Path) -> None:
    kb = make_kb(tmp_path)
    command = [sys.executable, "-c", NO_FORK.format(prog=program, module=module), "mcp"]
    with serve(command, kb.root, kb.home) as server:
        assert ids(server.ok("search", {"queries": "pool"})) == ["docs:notes/pool.txt"]
        assert len(processes_in(kb.root)) == 1


@needs_proc
@pytest.mark.parametrize("program", ["ra", "ra-query"])
def test_the_answering_process_leaves_with_the_server_when_the_client_closes_its_input(
    program: str, tmp_path: Path
) -> None:
    # spoken to raw: the SDK's client kills the server's whole process group on its way out, so
    # with it a server that left its answering process behind would pass
    from tests.test_faults import RawMcp

    kb = make_kb(tmp_path)
    server = RawMcp((kb.root, kb.home), [str(BIN / program), "mcp"])
    server.send(
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_sources","arguments":{}}}'
    )
    assert server.receive()["id"] == 1
    assert len(processes_in(kb.root)) == 2  # the server and the process answering its tools
    assert server.close() == 0
    assert processes_in(kb.root) == []


@needs_proc
@pytest.mark.parametrize("program", ["ra", "ra-query"])
def test_a_call_after_the_answering_process_died_is_a_tool_error_saying_to_restart(
    program: str, tmp_path: Path
) -> None:
    kb = make_kb(tmp_path)
    with serve([str(BIN / program), "mcp"], kb.root, kb.home) as server:
        assert ids(server.ok("search", {"queries": "pool"})) == ["docs:notes/pool.txt"]
        (_, _), (answering, _) = processes_in(kb.root)
        os.kill(answering, signal.SIGKILL)
        result = server.call("search", {"queries": "pool"})
        assert result.is_error
        assert text_of(result).startswith("the process answering ra's tools has stopped")
        assert text_of(result).endswith("restart the MCP server")


def test_a_call_cancelled_while_the_process_answers_leaves_its_reply_out_of_the_next_call() -> None:
    import anyio

    from ra_query.forked import Helper
    from ra_query.mcp import Forwarded

    def answer_slowly(helper: Helper) -> None:
        while (request := helper.receive()) is not None:
            time.sleep(0.3)
            helper.send({"payload": cast(dict[str, Any], request)["arguments"]})

    helper = Helper(answer_slowly)
    try:
        forwarded = Forwarded(helper)

        async def talk() -> dict[str, Any]:
            with anyio.move_on_after(0.05):  # the client gave up on the first call
                await forwarded.ask("search", {"call": 1})
            return await forwarded.ask("search", {"call": 2})

        assert anyio.run(talk) == {"call": 2}
    finally:
        helper.close()


# ── streamable HTTP ─────────────────────────────────────────────────────────────────────────────


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def http_server(command: list[str], cwd: Path, home: Path) -> Iterator[str]:
    """Start `command` (an MCP server with --http --port) and yield its URL once it accepts."""
    import socket
    import time

    port = int(command[command.index("--port") + 1])
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env={**os.environ, "HOME": str(home)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the HTTP server did not start"
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(30)
        if process.stderr:
            process.stderr.close()


def http_session(url: str) -> Any:
    """List the tools and call `search` through the SDK's streamable HTTP client."""
    import anyio
    from mcp.client.streamable_http import streamable_http_client

    async def talk() -> tuple[list[str], CallToolResult]:
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = sorted(t.name for t in (await session.list_tools()).tools)
            return tools, await session.call_tool("search", {"queries": "connection pool", "list": True})

    return anyio.run(talk)


@pytest.mark.parametrize("program", ["ra", "ra-query"])
def test_the_http_transport_serves_the_same_tools(program: str, tmp_path: Path) -> None:
    kb = make_kb(tmp_path)
    command = [str(BIN / program), "mcp", "--http", "--port", str(free_port())]
    with http_server(command, kb.root, kb.home) as url:
        tools, result = http_session(url)
    assert tools == ["context", "get", "list_sources", "search"]
    assert not result.is_error and ids(json.loads(text_of(result)))[0] == "docs:notes/pool.txt"


@pytest.mark.parametrize(
    ("header", "value", "status"),
    [("Host", "evil.example", 421), ("Origin", "http://evil.example", 403)],
)
def test_the_http_transport_refuses_requests_from_elsewhere(
    readonly_kb: Kb, header: str, value: str, status: int
) -> None:
    import http.client

    port = free_port()
    command = [str(BIN / "ra-query"), "mcp", "--http", "--port", str(port)]
    with http_server(command, readonly_kb.root, readonly_kb.home):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        headers[header] = value
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        if header == "Host":
            connection.putrequest("POST", "/mcp", skip_host=True)
        else:
            connection.putrequest("POST", "/mcp")
        for name, text in headers.items():
            connection.putheader(name, text)
        connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body.encode())
        assert connection.getresponse().status == status
        connection.close()


def test_a_port_without_http_is_a_usage_error(readonly_kb: Kb) -> None:
    run = readonly_kb.rq("mcp", "--port", "9999")
    assert (run.code, run.err) == (
        2,
        "ra-query: error: --port is for --http — add --http to serve over HTTP\n",
    )

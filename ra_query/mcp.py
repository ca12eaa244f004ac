"""The MCP server (DECISIONS 28, seed 000 "MCP Server"): ra's searches as tools an agent calls.

Tools, all read-only (`readOnlyHint`), with seed 000's input schemas:

    search        queries (a string, or an array of strings: one topic each), limit, max_tokens, list
    context       files (the files being worked on), limit, max_tokens, list
    get           id (`tree:path` or `tree:path#slug`), full_document
    list_sources  the indexed trees with their file and chunk counts

An answer always fits an agent's tool-output cap: when the caller gives no `max_tokens`, the
build's `agent_max_tokens` (`[settings]`, default 8,000 cl100k tokens) applies, and an answer
that had to leave results out lists their ids (`tokens.omitted_ids`) and says how to get them.

Every tool returns the same JSON as the command line's `--json` (built by the same functions:
`ra_query.search.pipeline`, `ra_query.search.render.to_json`, `ra_query.search.get.get_to_dict`)
as structured content, and the same JSON as text for clients that only read text, so the CLI and
MCP cannot drift.
Searches read a query leniently, as the CLI does by default (DECISIONS 18): a query that breaks
the query language is repaired, and the topic's `note` says how it was read. Anything a caller
can get wrong (an unknown id, a bad limit, a missing index) comes back as a tool error
(`isError`) carrying the one-line `RaError` message; it never ends the server.

The tools are answered by ra_query.commands.Answers over a store that `ra mcp` refreshes
before a call after a change (DECISIONS 25) and `ra-query mcp` reopens only when its manifest
changed, never writing. They run in a process forked before this module is imported
(`serve`; where there is no fork, in this one): it opens the index, counts the stale files and
searches once (loading the token encoding and, where there are vectors, the embedding model) on
the other core while this one loads the MCP SDK, and only the SDK's server side is loaded
(`_server_side_of_the_sdk`), so the first call waits for little more than the SDK. If that
process dies, every call says to restart the server. In stdio mode nothing but
protocol goes to stdout: the SDK points fd 1 at stderr while it serves, the answering process
has its stdout on stderr, and logs go to stderr.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Awaitable, Callable, Generator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

from ra_query.errors import RaError
from ra_query.text.textsafe import c1_escaped
from ra_query.version import __version__

if TYPE_CHECKING:
    from ra_query.commands import Served
    from ra_query.forked import Helper


@contextmanager
def _server_side_of_the_sdk() -> Generator[None]:
    """Import what a server needs of the MCP SDK, its pydantic models built at first use.

    Importing the SDK is a server's start-up (mcp 2.3.0: ~1.0 s of CPU at load 4, measured with
    `python -X importtime` and side by side): the `mcp` package's __init__ imports the client
    too (sessions, the stdio and HTTP clients: ~6%), and pydantic builds each of the SDK's 550
    models (every request, result and notification of two protocol eras) when its class is
    made (~10%). Here the package is put in sys.modules without running its __init__, which
    runs when a name only it defines is asked for (`mcp.ClientSession`), and the models made
    meanwhile are `defer_build`: built when first used, as the few a server exchanges are. No
    public import avoids either: every `mcp.server` module runs `mcp/__init__.py` first.
    """
    import importlib.util
    import sys

    from pydantic import BaseModel

    spec = importlib.util.find_spec("mcp") if "mcp" not in sys.modules else None
    if spec is not None and spec.loader is not None:
        package, loader = importlib.util.module_from_spec(spec), spec.loader

        def rest_of_the_package(name: str) -> object:
            delattr(package, "__getattr__")
            loader.exec_module(package)  # its __init__, once: the client, the re-exported types
            return getattr(package, name)

        setattr(package, "__getattr__", rest_of_the_package)  # noqa: B010  # a module's __getattr__
        sys.modules["mcp"] = package
    config = BaseModel.model_config
    deferred = "defer_build" not in config
    if deferred:
        config["defer_build"] = True
    try:
        yield
    finally:
        if deferred:
            config.pop("defer_build", None)


with _server_side_of_the_sdk():
    import anyio
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage
    from mcp.types import (
        INVALID_PARAMS,
        INVALID_REQUEST,
        PARSE_ERROR,
        CallToolResult,
        ErrorData,
        JSONRPCError,
        JSONRPCNotification,
        JSONRPCRequest,
        JSONRPCResponse,
        TextContent,
        ToolAnnotations,
    )
    from pydantic import Field, ValidationError

SERVER_NAME = "ra"
Answer = Callable[[str, dict[str, Any]], dict[str, Any]]  # a tool's name and arguments → its payload
Setup = Callable[[ExitStack], "Served"]  # what answers the tools, its resources on the stack
Payload = Annotated[CallToolResult, dict[str, Any]]  # a CallToolResult whose structured content is an object

_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)

SEARCH_DESCRIPTION = """\
Search the knowledge base. Use an array of queries for multi-topic research in one call: each \
query is a topic with its own results, a chunk appears once, and max_tokens spans all topics.
Query language: plain words are ranked (chunks with more of them first, so a whole sentence \
or a pasted error message works); "exact phrase" (required; in a sentence that few chunks \
match with it, those come first and the rest follow); -excluded (a flag such as -j or \
-xvf, or a -word in a sentence, is a word, searched); a OR b; ( groups ); \
title:, tags:, body:, path:, tree:, kind: (docs, code), lang: (python, go, …) fields; term^2 boosts; \
`kind` keeps docs or code only. A query with a syntax error is read \
leniently and its `note` says how. Returns JSON: queries[] → {query, results[], \
total_matches, note?}, each result with id, breadcrumb, line range, kind, language, score, snippet \
and content (content is left out with list=true), and `also` (ids of copies of the same text, \
and of wrappers that only call it); `tokens` reports the budget used and results omitted."""
GET_DESCRIPTION = """\
Retrieve a specific document or chunk by ID: a chunk by `tree:path#heading-slug`, a whole \
document in document order by `tree:path` (ids come from search results)."""
SOURCES_DESCRIPTION = "List available knowledge trees and their statistics (files and chunks indexed)."
CONTEXT_DESCRIPTION = """\
Get relevant knowledge base context for files being worked on. Analyzes file paths, extensions, \
and content: path words, the project's context rules and the files' most distinctive words \
(TF-IDF against the index) form a weighted query. The files themselves are left out of the \
results. Several files share the limit and max_tokens: each file is one entry of `queries`, \
with its `input` and `context` (the terms and the query); a result several files share is \
shown once, with `also_for` naming the others."""

Queries = Annotated[
    str | list[str],
    Field(description="Search term(s). Quote for exact phrase. Array for multi-topic."),
]
# strict: `true` is not a limit of 1, nor "yes" a boolean (pydantic's lax mode would take them)
# `minimum` is shown in the schema; the check is ra's own, so a bad value gets ra's one-line error
Limit = Annotated[
    int | None,
    Field(
        strict=True,
        description="Results per query (default: the index's default_limit)",
        json_schema_extra={"minimum": 1},
    ),
]
MaxTokens = Annotated[
    int | None,
    Field(
        strict=True,
        description="Total token budget across all results (cl100k tokens; default: the index's "
        "agent_max_tokens, 8000)",
        json_schema_extra={"minimum": 1},
    ),
]
Files = Annotated[list[str], Field(description="File paths to analyze for context")]
ContextLimit = Annotated[
    int | None,
    Field(
        strict=True, description="Maximum chunks to return (default: 10)", json_schema_extra={"minimum": 1}
    ),
]
ListMode = Annotated[
    bool, Field(strict=True, description="Return snippets only, omit full content (default: false)")
]
Trees = Annotated[
    list[str] | None,
    Field(description="Only these trees (list_sources names them), e.g. an upstream tree's framework docs"),
]
Lang = Annotated[
    str | None,
    Field(
        description="Only docs in this natural language (an ISO code: en, ja, de, pt-br), each page "
        "in its translation; by default the query's own language's translation is shown first"
    ),
]
Whole = Annotated[
    bool,
    Field(
        strict=True,
        description="Return every result's full content; otherwise a long docs result is an excerpt "
        "(its lead and the blocks with the query's words, ⋯ for the rest; get has it all), and so is a "
        "code file's long outline (its matching lines) (default: false)",
    ),
]
ChunkId = Annotated[str, Field(description="Chunk ID (tree:path#heading) or document ID (tree:path)")]
Kind = Annotated[
    Literal["any", "docs", "code", "upstream"],
    Field(
        description="Only chunks of this source kind: docs (markdown, text), code (functions, "
        "classes, methods; config files) or upstream (framework pages fetched from the web) "
        "(default: any)"
    ),
]
Mode = Annotated[
    Literal["auto", "hybrid", "lexical"],
    Field(
        description="How to match: hybrid ranks by words and by meaning (BM25 fused with the "
        "index's vectors), lexical by words alone (BM25), auto is hybrid where the index has "
        "vectors (default: auto)"
    ),
]
FullDocument = Annotated[
    bool, Field(strict=True, description="Return full document even if ID specifies a chunk")
]


# what each argument must be, for the one-line error a caller gets when it is not that
ARGUMENT_SHAPES = {
    "queries": "a string, or an array of strings (one topic each)",
    "files": "an array of file paths",
    "limit": "an integer ≥ 1",
    "max_tokens": "an integer ≥ 1",
    "list": "true or false",
    "full_document": "true or false",
    "id": "a string: tree:path or tree:path#slug",
    "lang": "a string: a language code such as en, ja, de or pt-br",
    "kind": "one of any, docs, code, upstream",
    "mode": "one of auto, hybrid, lexical",
    "whole": "true or false",
    "trees": "an array of tree names (list_sources names them)",
}


def argument_error(tool: str, error: ValidationError) -> str:
    """The one-line message for arguments the SDK's validation refused (not its error dump)."""
    problems: list[str] = []
    for name in dict.fromkeys(str(e["loc"][0]) for e in error.errors() if e["loc"]):
        first = next(e for e in error.errors() if e["loc"] and str(e["loc"][0]) == name)
        shape = ARGUMENT_SHAPES.get(name, "of another type")
        if first["type"] == "missing":
            problems.append(f"{name} is required ({shape})")
        elif first["type"] == "extra_forbidden":
            problems.append(f"{name} is not an argument of {tool}")
        else:
            got = json.dumps(first.get("input"), ensure_ascii=False, default=str)
            problems.append(f"{name} must be {shape} (got {got[:60]})")
    return "; ".join(problems) or f"the arguments of {tool} are not valid"


class _Server(MCPServer[Any]):
    """The SDK's server, with arguments that fail validation answered in one line."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        tool = self._tool_manager.get_tool(name)
        properties: dict[str, object] = (tool.parameters.get("properties") or {}) if tool is not None else {}
        known = sorted(properties)
        unknown = [key for key in arguments if tool is not None and key not in properties]
        if unknown:  # a misspelt argument (`limt`) would be left out without a word
            said = "; ".join(f"{key} is not an argument of {name}" for key in unknown)
            raise ToolError(f"{said} — its arguments: {', '.join(known) or 'none'}")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc, UnexpectedToolError) or not isinstance(exc.__cause__, ValidationError):
                raise  # ra's own bug: "Error executing tool NAME", the traceback in the log
            raise ToolError(argument_error(name, exc.__cause__)) from exc.__cause__


INSTRUCTIONS_LIMIT = 2048


def server_instructions(
    trees: Sequence[str], upstream: Sequence[str] = (), code: dict[str, list[str]] | None = None
) -> str:
    """What the server tells an agent at start-up (under 2 KB): what is here, how to search it;
    which trees are `upstream` (framework pages fetched from the web) and when to search them;
    where there is `code` (tree → its programming languages, `code_languages`), how to find a
    definition and narrow a search to code. With very many trees, the lists end in `…`
    (list_sources names them all)."""
    code = code or {}
    lists = (list(trees), list(upstream), sorted(code))
    languages = list(dict.fromkeys(lang for name in lists[2] for lang in code[name]))
    shown = [len(names) for names in lists]
    while True:
        named, fetched, coded = (_named(names[:n], len(names)) for names, n in zip(lists, shown, strict=True))
        text = _instructions(named or "none yet", fetched, coded, languages)
        if len(text.encode()) <= INSTRUCTIONS_LIMIT or max(shown) <= 1:
            return text
        shown[shown.index(max(shown))] -= 1  # the longest list first, the trees on a tie


def _named(names: Sequence[str], total: int) -> str:
    """`names` in backquotes, with `…` when they are fewer than `total`."""
    return ", ".join([*(f"`{n}`" for n in names), *(["…"] if len(names) < total else [])])


def _instructions(named: str, fetched: str, coded: str, languages: Sequence[str]) -> str:
    """The instructions naming the trees, the upstream ones (`fetched`) and those with code
    (`coded`, in `languages`, the first one the `lang:` example); no line for an empty list."""
    from ra_query.sources.languages import spoken_languages

    definitions = (
        f'\n- {spoken_languages(languages)} code in {coded}: find a definition by what it does ("where '
        f'are retries scheduled") or by its name (`Client.send`); kind="code", "docs" or "upstream" '
        f"keeps one kind of source, lang:{languages[0]} in a query one language; results give "
        "file:lines. `get` with tree:path#Class.method returns one definition."
        if coded and languages
        else ""
    )
    framework = (
        f"\n- Upstream trees {fetched} hold the framework docs this project depends on, as of their "
        "last sync: for how a library works (its API, options, errors), search them with "
        'kind="upstream" or trees=[...]; the project\'s own docs win where they differ. Their '
        "results carry the page's url."
        if fetched
        else ""
    )
    text = f"""ra searches this project's knowledge base: its conventions and reference docs, which \
override what you know in general. Trees: {named}.
- Before changing files, call `context` with their paths: the docs that fit them.
- Before deciding how to do something, `search` it; several topics in one call: queries=[...]. \
Plain words are ranked (a sentence or an error message works); a name (`encode_content`, \
`Client.send`, a file, a page title) returns what has it first; "exact phrase", -exclude, \
tree:NAME narrow it.{definitions}
- Results are chunks with ids; `get` returns one in full, or a whole document (tree:path).
- Answers fit max_tokens (default 8000); list=true gives snippets only; tokens.omitted_ids \
lists what was left out.
- `list_sources` shows the trees and whether the index is stale.{framework}"""
    return text


def build_server(
    answers: Answer | Forwarded,
    trees: Sequence[str] = (),
    upstream: Sequence[str] = (),
    code: dict[str, list[str]] | None = None,
) -> MCPServer[Any]:
    """An MCP server whose tools answer with `answers(tool, arguments)`.

    Args:
        answers: a tool's payload for its arguments (ra_query.commands.Answers, run in a worker
            thread), or the process answering them (`Forwarded`, awaited); a `RaError` it raises
            becomes a tool error.
        trees: the tree names the server's instructions give the agent.
        upstream: those of them that are upstream trees (fetched framework pages).
        code: those of them that have code, each with its programming languages (`code_languages`).
    """
    instructions = server_instructions(trees, upstream, code)
    server: MCPServer[Any] = _Server(
        SERVER_NAME, version=__version__, log_level="WARNING", instructions=instructions
    )
    # the tools are coroutines: the SDK would run a function in a worker thread, and each call
    # would wait for its thread twice; the answering process is awaited on its pipe instead
    ask = (
        answers.ask
        if isinstance(answers, Forwarded)
        else functools.partial(anyio.to_thread.run_sync, answers)
    )
    # one call at a time: a refresh runs the build, which must not run twice at once
    lock = anyio.Lock()

    async def answer(tool: str, arguments: dict[str, Any]) -> CallToolResult:
        async with lock:
            return await _result(ask, tool, arguments)

    async def search_tool(
        queries: Queries,
        limit: Limit = None,
        max_tokens: MaxTokens = None,
        list: ListMode = False,
        mode: Mode = "auto",
        kind: Kind = "any",
        trees: Trees = None,
        whole: Whole = False,
        lang: Lang = None,
    ) -> Payload:
        topics = [queries] if isinstance(queries, str) else queries
        asked = {"limit": limit, "max_tokens": max_tokens, "list_mode": list, "mode": mode, "kind": kind}
        return await answer(
            "search", {"queries": topics, **asked, "whole": whole, "trees": trees, "lang": lang}
        )

    async def context_tool(
        files: Files, limit: ContextLimit = None, max_tokens: MaxTokens = None, list: ListMode = False
    ) -> Payload:
        asked = {"limit": limit, "max_tokens": max_tokens, "list_mode": list}
        return await answer("context", {"files": files, **asked})

    async def get_tool(id: ChunkId, full_document: FullDocument = False) -> Payload:
        return await answer("get", {"id": id, "full_document": full_document})

    async def list_sources_tool() -> Payload:
        return await answer("list_sources", {})

    for fn, name, description in (
        (search_tool, "search", SEARCH_DESCRIPTION),
        (context_tool, "context", CONTEXT_DESCRIPTION),
        (get_tool, "get", GET_DESCRIPTION),
        (list_sources_tool, "list_sources", SOURCES_DESCRIPTION),
    ):
        server.add_tool(fn, name=name, description=description, annotations=_READ_ONLY)
    return server


async def _result(
    ask: Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]], tool: str, arguments: dict[str, Any]
) -> CallToolResult:
    """The tool's result: the payload `ask` gives as JSON text and as structured content, or the
    message of the `RaError` it raised as a tool error."""
    try:
        payload = await ask(tool, arguments)
    except RaError as exc:
        return CallToolResult(content=[TextContent(type="text", text=exc.message)], is_error=True)
    text = c1_escaped(json.dumps(payload, ensure_ascii=False, separators=(",", ":")))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=payload)


def _rpc_error(request_id: object, code: int, message: str) -> JSONRPCError:
    usable = isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool))
    return JSONRPCError(
        jsonrpc="2.0",
        id=cast("str | int", request_id) if usable else None,
        error=ErrorData(code=code, message=message),
    )


def unreadable_reply(exc: Exception) -> JSONRPCError | None:
    """The JSON-RPC error that answers a line the transport could not read as a message.

    The SDK hands such a line over as the pydantic error that refused it, and answers nothing,
    so the client would wait forever. The reply carries the request's id when the line still
    shows it (a lone surrogate escape such as `\\ud800` breaks strict JSON, not Python's
    reader), else null as JSON-RPC 2.0 asks. A blank line gets no reply (None).
    """
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    value: object = errors[0].get("input") if errors else None
    if errors and errors[0]["type"] == "json_invalid" and isinstance(value, str):
        if not value.strip():
            return None
        try:
            value = json.loads(value)
        except ValueError:
            return _rpc_error(
                None, PARSE_ERROR, "Parse error: the line is not JSON (send one JSON-RPC message per line)"
            )
        request_id: object = cast(dict[str, object], value).get("id") if isinstance(value, dict) else None
        return _rpc_error(
            request_id,
            PARSE_ERROR,
            "Parse error: the line is not strict JSON (a \\u escape names a lone surrogate such as \\ud800)",
        )
    # each error names a branch of the message union: (branch,) holds the message itself, and a
    # missing field (branch, field) the object it is missing from
    top = next(
        (
            e.get("input")
            for e in errors
            if len(e["loc"]) == 1 or (e["type"] == "missing" and len(e["loc"]) == 2)
        ),
        value,
    )
    if not isinstance(top, dict):
        what = "an array (batches are not part of MCP)" if isinstance(top, list) else type(top).__name__
        return _rpc_error(
            None, INVALID_REQUEST, f"Invalid request: a message must be a JSON object, got {what}"
        )
    message = cast(dict[str, object], top)
    params = message.get("params")
    if isinstance(message.get("method"), str) and "params" in message and not isinstance(params, dict):
        got = "an array" if isinstance(params, list) else json.dumps(params)[:40]
        return _rpc_error(
            message.get("id"), INVALID_PARAMS, f"Invalid params: params must be an object, got {got}"
        )
    branch = "JSONRPCRequest" if "id" in message else "JSONRPCNotification"
    detail = next(
        (f"{'.'.join(map(str, e['loc'][1:]))}: {e['msg']}" for e in errors if e["loc"][:1] == (branch,)),
        "not a JSON-RPC 2.0 request, notification or response",
    )
    return _rpc_error(message.get("id"), INVALID_REQUEST, f"Invalid request: {detail}")


PIPE_SLICE = 4096  # POSIX's PIPE_BUF at least (Linux: 4096): what a writable pipe takes at once


class _PipeLines:
    """The lines of a pipe or socket, read when the event loop sees them waiting: the SDK's own
    stdio transport reads each line in a worker thread and writes each answer in another, and
    every call waited for both."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.pending = bytearray()
        self.scanned = 0  # no newline before this offset of `pending`

    def __aiter__(self) -> _PipeLines:
        return self

    async def __anext__(self) -> str:
        while (end := self.pending.find(b"\n", self.scanned)) < 0:
            self.scanned = len(self.pending)
            await anyio.wait_readable(self.fd)
            block = os.read(self.fd, 1 << 16)
            if not block:  # the client closed its end: what is left is the last line
                if not self.pending:
                    raise StopAsyncIteration
                end = len(self.pending) - 1
                break
            self.pending += block
        line = self.pending[: end + 1].decode("utf-8", "replace")  # as the SDK decodes stdin
        del self.pending[: end + 1]
        self.scanned = 0
        return line


class _PipeWriter:
    """Writes to a pipe or socket a slice at a time, each when the event loop sees room for it,
    so that the loop goes on reading requests while a client is slow to read answers (see
    _PipeLines): a client that sends many requests before it reads one answer is not stuck with
    a server stuck in a write. The descriptor stays blocking (another process may share it:
    `2>&1`): a pipe that polls writable takes `PIPE_SLICE` bytes without blocking."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    async def write(self, text: str) -> None:
        data = memoryview(text.encode())
        while data:
            await anyio.wait_writable(self.fd)
            data = data[os.write(self.fd, data[:PIPE_SLICE]) :]

    async def flush(self) -> None:
        """Nothing is buffered here."""


@contextmanager
def _claimed_stdio() -> Generator[tuple[_PipeLines | None, _PipeWriter | None]]:
    """stdin and stdout, when they are pipes or sockets, as streams the event loop waits on;
    meanwhile fd 0 reads /dev/null and fd 1 writes to stderr (as the SDK's transport does), so
    that nothing a library prints lands in the protocol. None for a stream of another kind (a
    file, a terminal): the SDK's transport serves it."""
    import fcntl
    import stat

    claimed: list[tuple[int, int]] = []  # (fd, its private duplicate)
    try:
        for fd in (0, 1):
            try:
                if not stat.S_ISFIFO(mode := os.fstat(fd).st_mode) and not stat.S_ISSOCK(mode):
                    continue
                private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
            except OSError:
                continue  # the SDK's transport takes it as it is
            claimed.append((fd, private))
            with suppress(OSError):  # not diverted: stray output would reach the client
                diversion = os.open(os.devnull, os.O_RDONLY) if fd == 0 else os.dup(2)
                os.dup2(diversion, fd)
                os.close(diversion)
        wire = dict(claimed)
        yield (
            _PipeLines(wire[0]) if 0 in wire else None,
            _PipeWriter(wire[1]) if 1 in wire else None,
        )
    finally:
        for fd, private in claimed:
            with suppress(OSError):
                os.dup2(private, fd)
                os.close(private)


async def _serve_stdio(server: MCPServer[Any]) -> None:
    lowlevel = server._lowlevel_server  # pyright: ignore[reportPrivateUsage]  # what run_stdio_async serves
    with _claimed_stdio() as (lines, writer):
        # our streams are duck-typed anyio files (None: the SDK opens its own)
        async with stdio_server(cast(Any, lines), cast(Any, writer)) as (read_stream, write_stream):
            send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
            answering = _Answering(write_stream)

            async def answer_unreadable() -> None:
                async with send:
                    async for item in read_stream:
                        if not isinstance(item, Exception):
                            answering.asked(item.message)
                            await send.send(item)
                        elif (reply := unreadable_reply(item)) is not None:
                            await write_stream.send(SessionMessage(reply))
                    await answering.all_answered()  # the input ended: the calls sent still answer

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(answer_unreadable)
                await lowlevel.run(receive, answering, lowlevel.create_initialization_options())
                tasks.cancel_scope.cancel()


DRAIN_SECONDS = 600.0  # how long the requests sent before the input ended are waited for, at most


class _Answering:
    """The stream the server writes to, noting which requests it has answered: when a client
    closes its input after its requests (`ra-query mcp < requests.jsonl`), the server answers them
    before it stops, where the SDK would drop the calls still running."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.waiting: set[str | int] = set()  # ids of the requests not answered yet

    def asked(self, message: object) -> None:
        if isinstance(message, JSONRPCRequest):
            self.waiting.add(message.id)
        elif isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
            params = message.params or {}
            self.waiting.discard(cast(Any, params).get("requestId"))  # a cancelled call has no answer

    async def all_answered(self) -> None:
        with anyio.move_on_after(DRAIN_SECONDS):
            while self.waiting:
                await anyio.sleep(0.01)

    async def send(self, item: SessionMessage) -> None:
        await self.stream.send(item)
        if isinstance(item.message, JSONRPCResponse | JSONRPCError) and item.message.id is not None:
            self.waiting.discard(item.message.id)

    async def aclose(self) -> None:
        await self.stream.aclose()

    async def __aenter__(self) -> _Answering:
        return self

    async def __aexit__(self, exc_type: object, exc_val: object, exc_tb: object) -> None:
        await self.aclose()


LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def run_http(server: MCPServer[Any], port: int) -> None:
    """Serve `server` over streamable HTTP at http://127.0.0.1:PORT/mcp until interrupted.

    Bound to the loopback address only; a request whose Host is not a local name (421) or whose
    Origin is not a local page (403) is refused, so a web page cannot reach the server through
    DNS rebinding.
    """
    import contextlib
    import functools
    import sys

    from mcp.server.transport_security import TransportSecuritySettings

    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{host}:{port}" for host in LOCAL_HOSTS] + list(LOCAL_HOSTS),
        allowed_origins=[f"http://{host}:{port}" for host in LOCAL_HOSTS]
        + [f"http://{h}" for h in LOCAL_HOSTS],
    )
    print(f"ra: serving MCP on http://127.0.0.1:{port}/mcp (Ctrl-C stops it)", file=sys.stderr, flush=True)
    serve = functools.partial(
        server.run_streamable_http_async, host="127.0.0.1", port=port, transport_security=security
    )
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how an HTTP server is stopped
        anyio.run(serve)


def run_stdio(server: MCPServer[Any]) -> None:
    """Serve `server` over stdin/stdout until the client closes stdin.

    As the SDK's own stdio transport, except that a line it cannot read as a JSON-RPC message
    (not JSON, not an object, params that are not an object) is answered with a JSON-RPC error
    (`unreadable_reply`) instead of silence, and that a pipe (or socket) is read and written by
    the event loop (`_claimed_stdio`), not by a worker thread per line. A client that goes away
    before it has read its answers (its end of stdout closed) ends the server quietly: there is
    nobody left to tell.
    """
    try:
        anyio.run(_serve_stdio, server)
    except* (BrokenPipeError, ConnectionResetError):
        pass


class Forwarded:
    """The answers of the process `serve` forked (ra_query.commands.answer_requests), asked
    through its `helper` one call at a time."""

    def __init__(self, helper: Helper) -> None:
        self.helper = helper

    def hello(self) -> dict[str, Any]:
        """What the answering process sent first: the keyword arguments of the instructions.

        Raises:
            RaError: its setup failed (a `.ra.toml` that cannot be read), with its exit code.
            RuntimeError: it ended without a word (a bug: its traceback is on stderr).
        """
        first = cast("dict[str, Any] | None", self.helper.receive())
        if first is None:
            raise RuntimeError("the process answering the tools ended before it started")
        if "error" in first:
            error = RaError(str(first["error"]))
            error.exit_code = int(first["exit"])
            raise error
        return cast(dict[str, Any], first["hello"])

    async def ask(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The payload of `tool` for `arguments`, the event loop running while the process works
        it out. A call cancelled meanwhile still reads its reply, which the next call must not take
        for its own.

        Raises:
            RaError: the call's error, or the process has stopped.
            RuntimeError: a bug of the answering process (the SDK's "Error executing tool").
        """
        reply: object = None
        with anyio.CancelScope(shield=True):
            try:
                self.helper.send({"tool": tool, "arguments": arguments})
                await anyio.wait_readable(self.helper)
                reply = self.helper.receive()
            except OSError:  # the pipe broke: it is gone
                reply = None
        return _payload(reply)


def _payload(reply: object) -> dict[str, Any]:
    """The payload in the answering process's `reply` (None: it is gone).

    Raises:
        RaError: the call's error, or the process has stopped.
        RuntimeError: a bug of the answering process (the SDK's "Error executing tool").
    """
    if reply is None:
        raise RaError(
            "the process answering ra's tools has stopped (why is on the server's stderr) — "
            "restart the MCP server"
        )
    message = cast(dict[str, Any], reply)
    if "error" in message:
        raise RaError(str(message["error"]))
    if "bug" in message:
        raise RuntimeError(str(message["bug"]))
    return cast(dict[str, Any], message["payload"])


def serve(
    helper: Helper,
    setup: Setup,
    http_port: int | None = None,
    extend: Callable[[MCPServer[Any]], None] | None = None,
) -> int:
    """Serve the tools over stdio (or streamable HTTP on `http_port`) until the client goes away;
    returns the exit code.

    `helper` is the process answering them, forked (running `setup`) before this module was
    imported; where there is no fork, `setup` runs here. `extend` adds tools to the server.

    Raises:
        RaError: the answering side could not start (a `.ra.toml` that cannot be read).
    """
    with ExitStack() as stack:
        if helper.forked:
            stack.callback(helper.close)  # the process ends when its pipe closes
            forwarded = Forwarded(helper)
            hello, answers = forwarded.hello(), forwarded
        else:
            served = setup(stack)
            hello, answers = served.hello, served.answers
        server = build_server(answers, **hello)
        if extend is not None:
            extend(server)
        if http_port is None:
            run_stdio(server)
        else:
            run_http(server, http_port)
    return 0

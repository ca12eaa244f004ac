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

The server is built around a callable that returns the `Store` to use for each call: `ra mcp`
refreshes the index before every call (DECISIONS 25), `ra-query mcp` (`serve_readonly`) reopens
the artifacts only when their manifest changed and never writes. In stdio mode nothing but
protocol goes to stdout: the SDK points fd 1 at stderr while it serves, and logs go to stderr.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

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
    TextContent,
    ToolAnnotations,
)
from pydantic import Field, ValidationError

from ra_query.artifacts.schema import build_analyzer
from ra_query.artifacts.store import Store, manifest_key, open_store
from ra_query.commands import sources_payload
from ra_query.errors import InputError, RaError
from ra_query.search.budget import MAX_BUDGET
from ra_query.search.focus import with_excerpts
from ra_query.search.get import get, get_to_dict
from ra_query.search.hybrid import DEFAULT_SEMANTIC_WEIGHT
from ra_query.search.pipeline import MAX_LIMIT, SearchParams, search
from ra_query.search.render import budgeted, to_json
from ra_query.sources.stale import stale_files
from ra_query.sources.watch import SourceWatch
from ra_query.text.locales import normalized
from ra_query.text.textsafe import c1_escaped
from ra_query.version import __version__

if TYPE_CHECKING:
    from ra_query.search.context import Analysis

SERVER_NAME = "ra"
StoreOpener = Callable[[], Store]
StaleCounter = Callable[[Store], "int | None"]
Payload = Annotated[CallToolResult, dict[str, Any]]  # a CallToolResult whose structured content is an object

_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)

SEARCH_DESCRIPTION = """\
Search the knowledge base. Use an array of queries for multi-topic research in one call: each \
query is a topic with its own results, a chunk appears once, and max_tokens spans all topics.
Query language: plain words are ranked (chunks with more of them first, so a whole sentence \
or a pasted error message works); "exact phrase" (required); -excluded; a OR b; ( groups ); \
title:, tags:, body:, path:, tree:, kind: (docs, code), lang: (python, go, …) fields; term^2 boosts; \
`kind` keeps docs or code only. A query with a syntax error is read \
leniently and its `note` says how. Returns JSON: queries[] → {query, results[], \
total_matches, note?}, each result with id, breadcrumb, line range, kind, language, score, snippet \
and content (content is left out with list=true), and `also` (ids of copies of the same text); `tokens` \
reports the budget used and results omitted."""
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
DEFAULT_AGENT_MAX_TOKENS = 8000
ContextAnalyzer = Callable[[Store, list[str]], "list[Analysis]"]

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
        "(its lead and the blocks with the query's words, ⋯ for the rest; get has it all) (default: false)",
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


def search_params(store: Store, limit: int | None, mode: str = "auto", kind: str = "any") -> SearchParams:
    """The build's search settings, always lenient, with `limit`, `mode` and `kind` when given.

    Raises:
        InputError: `limit` is less than 1.
    """
    params = SearchParams.from_settings(store.search_defaults())
    if kind != "any":
        params = params._replace(kinds=(kind,))
    if mode == "lexical":
        params = params._replace(semantic_weight=0.0)
    elif mode == "hybrid":
        weight = params.semantic_weight or DEFAULT_SEMANTIC_WEIGHT
        params = params._replace(semantic_asked=True, semantic_weight=weight)
    if limit is None:
        return params
    if not 1 <= limit <= MAX_LIMIT:
        raise InputError(f"limit must be between 1 and {MAX_LIMIT} (got {limit})")
    return params._replace(limit=limit)


def search_payload(
    store: Store,
    queries: list[str],
    *,
    limit: int | None = None,
    max_tokens: int | None = None,
    list_mode: bool = False,
    stale: int | None = None,
    mode: str = "auto",
    kind: str = "any",
    whole: bool = False,
    trees: list[str] | None = None,
    lang: str | None = None,
) -> dict[str, Any]:
    """What the `search` tool returns: `ra search --json`'s payload for the same arguments.

    Raises:
        InputError: no query, `limit` / `max_tokens` below 1, or `lang` not a language code.
    """
    if not queries:
        raise InputError("queries is empty — give at least one query")
    budget = agent_budget(store, max_tokens)
    params = search_params(store, limit, mode, kind)
    if trees:
        unknown = sorted(set(trees) - set(store.trees()))
        if unknown:
            known = ", ".join(sorted(store.trees())) or "none"
            raise InputError(f"trees names unknown tree {unknown[0]!r} — the trees are: {known}")
        params = params._replace(trees=tuple(dict.fromkeys(trees)))
    if lang is not None:
        locale = normalized(lang)
        if locale is None:
            raise InputError(
                f"lang {lang!r} is not a language code — use an ISO code such as en, ja, de or pt-br"
            )
        params = params._replace(langs=(locale,))
    topics = search(store, queries, params)
    analyzer = build_analyzer(store.stemmer)
    if not list_mode and not whole:
        topics = with_excerpts(topics, analyzer)
    outcome = budgeted(topics, "list" if list_mode else "full", budget, analyzer)
    return with_hint(to_json(topics, outcome, list_mode=list_mode, stale=stale, explain=False))


def agent_budget(store: Store, max_tokens: int | None) -> int:
    """`max_tokens` when the caller gave one, else the build's `agent_max_tokens` (8,000).

    Raises:
        InputError: `max_tokens` out of bounds.
    """
    if max_tokens is None:
        recorded: object = store.search_defaults().get("agent_max_tokens")
        usable = isinstance(recorded, int) and not isinstance(recorded, bool) and 1 <= recorded <= MAX_BUDGET
        return cast(int, recorded) if usable else DEFAULT_AGENT_MAX_TOKENS
    if not 1 <= max_tokens <= MAX_BUDGET:
        raise InputError(f"max_tokens must be between 1 and {MAX_BUDGET} (got {max_tokens})")
    return max_tokens


def with_hint(payload: dict[str, Any]) -> dict[str, Any]:
    """`payload` with a word for the agent on how to get what the budget left out, if anything."""
    tokens: dict[str, Any] = payload["tokens"]
    omitted: list[str] = tokens.get("omitted_ids") or []
    if omitted:
        tokens["hint"] = (
            f"{len(omitted)} result{'s' if len(omitted) != 1 else ''} left out to fit max_tokens="
            f"{tokens['max']}: read one with get(id), or call again with a larger max_tokens or list=true"
        )
    return payload


def context_payload(
    store: Store,
    analyses: Sequence[Analysis],
    *,
    limit: int | None = None,
    max_tokens: int | None = None,
    list_mode: bool = False,
) -> dict[str, Any]:
    """What the `context` tool returns: `ra context --json`'s payload for the same files.

    Raises:
        InputError: `limit` or `max_tokens` out of bounds.
    """
    from ra_query.search.context import context_json, context_topics

    if limit is not None and not 1 <= limit <= MAX_LIMIT:
        raise InputError(f"limit must be between 1 and {MAX_LIMIT} (got {limit})")
    budget = agent_budget(store, max_tokens)
    params = SearchParams.from_settings(store.search_defaults())._replace(limit=limit or 10)
    topics = context_topics(store, analyses, params)
    view = "list" if list_mode else "full"
    outcome = budgeted(topics, view, budget, build_analyzer(store.stemmer))
    payload = with_hint(to_json(topics, outcome, list_mode=list_mode, stale=None, explain=False))
    return context_json(payload, analyses)


def plain_analyzer(store: Store, files: list[str]) -> list[Analysis]:
    """`context`'s analyses without a configuration (`ra-query mcp`): no rules, default settings."""
    from ra_query.search.context import analyze_each, given_file

    return analyze_each(store, [given_file(f) for f in files])


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
    open_store: StoreOpener,
    stale: StaleCounter | None = None,
    context: ContextAnalyzer = plain_analyzer,
    trees: Sequence[str] = (),
    upstream: Sequence[str] = (),
    code: dict[str, list[str]] | None = None,
) -> MCPServer[Any]:
    """An MCP server whose tools search the store `open_store()` returns at each call.

    Args:
        open_store: called once per tool call; `ra` refreshes the index in it, `ra-query`
            reopens the artifacts when they changed. A `RaError` it raises becomes a tool error.
        stale: how many source files changed since the store was built (None: cannot tell);
            reported as `stale` by `search` and `list_sources`. Not given: `stale` is null.
        context: reads the files of a `context` call into a query (`ra mcp` passes one that
            applies the configuration's context rules and settings).
        trees: the tree names the server's instructions give the agent.
        upstream: those of them that are upstream trees (fetched framework pages).
        code: those of them that have code, each with its programming languages (`code_languages`).
    """
    instructions = server_instructions(trees, upstream, code)
    server: MCPServer[Any] = _Server(
        SERVER_NAME, version=__version__, log_level="WARNING", instructions=instructions
    )
    # one call at a time: a refresh runs the build, which must not run twice at once
    lock = threading.Lock()

    def answer(make: Callable[[Store], dict[str, Any]]) -> CallToolResult:
        with lock:
            try:
                payload = make(open_store())
            except RaError as exc:
                return CallToolResult(content=[TextContent(type="text", text=exc.message)], is_error=True)
        text = c1_escaped(json.dumps(payload, ensure_ascii=False, separators=(",", ":")))
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=payload)

    def staleness(store: Store) -> int | None:
        return stale(store) if stale is not None else None

    def search_tool(
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
        return answer(
            lambda store: search_payload(
                store,
                topics,
                limit=limit,
                max_tokens=max_tokens,
                list_mode=list,
                stale=staleness(store),
                mode=mode,
                kind=kind,
                whole=whole,
                trees=trees,
                lang=lang,
            )
        )

    def context_tool(
        files: Files, limit: ContextLimit = None, max_tokens: MaxTokens = None, list: ListMode = False
    ) -> Payload:
        return answer(
            lambda store: context_payload(
                store, context(store, files), limit=limit, max_tokens=max_tokens, list_mode=list
            )
        )

    def get_tool(id: ChunkId, full_document: FullDocument = False) -> Payload:
        return answer(lambda store: get_to_dict(get(store, id, full_document=full_document)))

    def list_sources_tool() -> Payload:
        return answer(lambda store: sources_payload(store, staleness(store)))

    for fn, name, description in (
        (search_tool, "search", SEARCH_DESCRIPTION),
        (context_tool, "context", CONTEXT_DESCRIPTION),
        (get_tool, "get", GET_DESCRIPTION),
        (list_sources_tool, "list_sources", SOURCES_DESCRIPTION),
    ):
        server.add_tool(fn, name=name, description=description, annotations=_READ_ONLY)
    return server


class ReadOnlyStore:
    """Opens the artifacts at `root`, again only when their manifest has been replaced.

    A build writes the manifest last and atomically (a new file), so a changed inode, size or
    mtime means a new generation: the next call searches it, as a fresh `ra-query` would.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._store: Store | None = None
        self._key: tuple[int, int, int] | None = None

    def __call__(self) -> Store:
        key = manifest_key(self.root)
        if self._store is None or key is None or key != self._key:
            self._store = None
            self._store = open_store(self.root)  # raises ArtifactError when there is nothing to open
            self._key = key
        return self._store


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


async def _serve_stdio(server: MCPServer[Any]) -> None:
    lowlevel = server._lowlevel_server  # pyright: ignore[reportPrivateUsage]  # what run_stdio_async serves
    async with stdio_server() as (read_stream, write_stream):
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def answer_unreadable() -> None:
            async with send:
                async for item in read_stream:
                    if not isinstance(item, Exception):
                        await send.send(item)
                    elif (reply := unreadable_reply(item)) is not None:
                        await write_stream.send(SessionMessage(reply))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(answer_unreadable)
            await lowlevel.run(receive, write_stream, lowlevel.create_initialization_options())
            tasks.cancel_scope.cancel()


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
    (`unreadable_reply`) instead of silence.
    """
    anyio.run(_serve_stdio, server)


def source_roots(manifest: dict[str, Any]) -> list[str]:
    """The source directory of every tree the manifest records (those visible from here)."""
    import os

    trees: object = manifest.get("trees")
    roots: list[str] = []
    for entry in cast(dict[str, object], trees).values() if isinstance(trees, dict) else ():
        sources = cast(dict[str, object], entry).get("sources") if isinstance(entry, dict) else None
        root = cast(dict[str, object], sources).get("root") if isinstance(sources, dict) else None
        if isinstance(root, str) and os.path.isdir(root):
            roots.append(root)
    return roots


class StaleCount:
    """`stale` for `ra-query mcp`: counted again only when the sources or the artifacts changed.

    The count of the last call stands while the watcher saw no event under the sources and the
    manifest is the same; otherwise (or without a watcher) it is recounted (`stale_files`).
    """

    def __init__(self, watch: SourceWatch) -> None:
        self.watch = watch
        self._manifest: object = None
        self._count: int | None = None

    def __call__(self, store: Store) -> int | None:
        changed = self.watch.changed()
        if changed or store.manifest is not self._manifest:
            self._manifest = store.manifest
            self._count = stale_files(store.root, store.manifest)
        return self._count


def serve_readonly(root: Path, http_port: int | None = None) -> int:
    """`ra-query mcp`: serve the artifacts at `root` over stdio, read-only; returns the exit code.

    The sources are never built here; `stale` counts the source files changed since the build
    when they are visible from here (null when they are not), again only after a change.
    """
    from ra_query.artifacts.store import read_manifest
    from ra_query.sources.languages import code_languages
    from ra_query.sources.watch import SourceWatch

    try:
        manifest = read_manifest(root)
    except RaError:
        manifest = {}  # no index yet: every call says so
    trees: object = manifest.get("trees")
    entries = cast(dict[str, object], trees) if isinstance(trees, dict) else {}
    names = sorted(str(t) for t in entries)
    upstream = [
        n for n in names if isinstance(entries[n], dict) and "upstream" in cast(dict[str, object], entries[n])
    ]
    with SourceWatch(source_roots(manifest)) as watch:
        server = build_server(
            ReadOnlyStore(root),
            stale=StaleCount(watch),
            trees=names,
            upstream=upstream,
            code=code_languages(manifest),
        )
        if http_port is None:
            run_stdio(server)
        else:
            run_http(server, http_port)
    return 0

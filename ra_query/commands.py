"""The search and get commands as functions: both CLIs (`ra`, `ra-query`) and MCP call these.

Each returns the text to print and the exit code, so the two command lines cannot drift.
"""

from __future__ import annotations

import json as _json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from ra_query.artifacts.schema import build_analyzer
from ra_query.artifacts.store import Store, manifest_key, open_store
from ra_query.errors import InputError, RaError
from ra_query.search.budget import MAX_BUDGET
from ra_query.search.focus import with_excerpts
from ra_query.search.hybrid import DEFAULT_SEMANTIC_WEIGHT
from ra_query.search.pipeline import MAX_LIMIT, SearchParams, search
from ra_query.search.render import View, budgeted, render_text, to_json
from ra_query.text.locales import normalized
from ra_query.text.textsafe import c1_escaped

if TYPE_CHECKING:
    from contextlib import ExitStack
    from pathlib import Path

    from ra_query.forked import Helper
    from ra_query.search.context import Analysis
    from ra_query.search.pipeline import TopicResult
    from ra_query.sources.watch import SourceWatch

    StoreOpener = Callable[[], Store]
    StaleCounter = Callable[[Store], int | None]
    ContextAnalyzer = Callable[[Store, list[str]], list[Analysis]]
    Answer = Callable[[str, dict[str, Any]], dict[str, Any]]
    Warm = Callable[[Callable[[], bool]], None]


def dumps(payload: object) -> str:
    """JSON as both CLIs print it: two-space indent, UTF-8 as is, a final newline.

    The standard library's encoder, not orjson: importing orjson costs a cold `ra-query` more
    (~5 ms: it pulls in datetime, uuid and platform) than encoding a page of results does.
    """
    return c1_escaped(_json.dumps(payload, indent=2, ensure_ascii=False, allow_nan=False)) + "\n"


class Output(NamedTuple):
    """What a command prints on stdout, and its exit code."""

    text: str
    code: int


def search_command(
    store: Store,
    queries: list[str],
    params: SearchParams,
    *,
    view: View = "full",
    json: bool = False,
    max_tokens: int | None = None,
    explain: bool = False,
    colour: bool = False,
    stale: int | Callable[[], int | None] | None = None,
    whole: bool = False,
) -> Output:
    """Search every topic, fit one token budget across them, render; exit 1 when nothing matched.

    A long prose result shows its excerpt (ra_query.search.focus) unless `whole`.

    `stale` is the count of changed source files, or a getter for it that is called only after
    the search (so a count running in another process overlaps the search).
    """
    topics = search(store, queries, params)
    return rendered(store, topics, view=view, json=json, max_tokens=max_tokens, explain=explain,
                    colour=colour, stale=stale, whole=whole)  # fmt: skip


def rendered(
    store: Store,
    topics: Sequence[TopicResult],
    *,
    view: View = "full",
    json: bool = False,
    max_tokens: int | None = None,
    explain: bool = False,
    colour: bool = False,
    stale: int | Callable[[], int | None] | None = None,
    whole: bool = False,
) -> Output:
    """What `search_command` prints for the `topics` it found (see there)."""
    analyzer = build_analyzer(store.stemmer)
    if view == "full" and not whole:
        topics = with_excerpts(topics, analyzer)
    outcome = budgeted(topics, view, max_tokens, analyzer, marks=json or colour)
    code = 0 if any(t.hits for t in topics) else 1
    if callable(stale):
        stale = stale()
    if json:
        payload = to_json(topics, outcome, list_mode=view == "list", stale=stale, explain=explain)
        return Output(dumps(payload), code)
    text = render_text(topics, outcome, colour=colour, explain=explain)
    if stale:
        text += f"stale: {stale} file{'s' if stale != 1 else ''} changed since the build\n"
    return Output(text, code)


def get_command(store: Store, chunk_id: str, *, full_document: bool = False, json: bool = False) -> Output:
    """`get ID`: a chunk, or a whole document in document order."""
    from ra_query.search.get import get, get_to_dict, render_get

    result = get(store, chunk_id, full_document=full_document)
    if json:
        return Output(dumps(get_to_dict(result)), 0)
    return Output(render_get(result), 0)


def context_command(
    store: Store,
    analyses: Sequence[Analysis],
    params: SearchParams,
    *,
    view: View = "full",
    json: bool = False,
    max_tokens: int | None = None,
    explain: bool = False,
    colour: bool = False,
) -> Output:
    """`context FILE...`: each analysis's results (one per input file), fit to one budget,
    rendered as a multi-topic search is, each input its own list.

    `--explain` adds, per input, the terms (word, score, source, frequency, idf), the query and
    the counts; in JSON always as each query's `context` (what its query was built from), with
    its `input`. Exit 1 when nothing matched.
    """
    from ra_query.search.context import context_json, context_topics, explain_lines

    topics = context_topics(store, analyses, params)
    outcome = budgeted(topics, view, max_tokens, build_analyzer(store.stemmer), marks=json or colour)
    code = 0 if any(topic.hits for topic in topics) else 1
    if json:
        payload = to_json(topics, outcome, list_mode=view == "list", stale=None, explain=False)
        return Output(dumps(context_json(payload, analyses)), code)
    text = render_text(topics, outcome, colour=colour, explain=False)
    if explain:
        several = len(analyses) > 1
        lines = [
            line
            for analysis in analyses
            for line in ([f"input: {analysis.input}"] if several else []) + explain_lines(analysis)
        ]
        text = "\n".join(lines) + "\n\n" + text
    return Output(text, code)


def sources_payload(store: Store, stale: int | None = None) -> dict[str, Any]:
    """What `list_sources` returns: each tree with its counts, the totals, and the build's facts."""
    global_trees: set[str] = {str(name) for name in store.search_defaults().get("global_trees") or ()}
    trees: list[dict[str, Any]] = []
    for name, entry in sorted(store.trees().items()):
        sources: object = entry.get("sources")
        root = cast(dict[str, object], sources).get("root") if isinstance(sources, dict) else None
        trees.append(
            {
                "name": name,
                "files": int(entry.get("files", 0)),
                "chunks": int(entry.get("chunks", 0)),
                "skipped": int(entry.get("skipped", 0)),
                "global": name in global_trees,
                "root": root if isinstance(root, str) else None,
            }
        )
    return {
        "trees": trees,
        "files": sum(t["files"] for t in trees),
        "chunks": sum(t["chunks"] for t in trees),
        "built_at": store.manifest.get("built_at"),
        "ra_version": store.manifest.get("ra_version"),
        "stale": stale,
    }


def artifacts_bytes(root: str) -> int:
    """The bytes of every file under the artifact directory `root` (0 when there is none)."""
    import os

    total = 0
    for directory, _, files in os.walk(root):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(directory, name))
            except OSError:  # gone since the listing (a build under way), or a dangling link
                continue
    return total


def ls_line(
    what: str,
    long: bool,
    chunk_id: str,
    title: str,
    lines: tuple[int, int],
    tokens: int,
    breadcrumb: Sequence[str],
) -> str:
    """One line of `ls docs|chunks` (both CLIs): the id; with `-l` also the title of a document,
    or a chunk's line range, tokens and breadcrumb."""
    if not long:
        return chunk_id
    if what == "docs":
        return f"{chunk_id}\t{title}"
    return f"{chunk_id}\tL{lines[0]}-{lines[1]}\t{tokens} tokens\t" + " › ".join(breadcrumb)


def status_command(store: Store, stale: int | None, *, json: bool = False) -> Output:
    """`ra-query status`: the artifacts, the build, each tree's counts, and how stale it is."""
    import os

    payload = sources_payload(store, stale)
    root = os.fspath(store.root)
    payload["artifacts"] = root
    payload["bytes"] = artifacts_bytes(root)
    if json:
        return Output(dumps(payload), 0)
    from ra_query.sources.stale import stale_state

    state = "sources not visible from here" if stale is None else stale_state(stale)
    lines = [
        f"artifacts: {root} ({payload['bytes'] / 1e6:.1f} MB)",
        f"built: {payload['built_at']} by ra {payload['ra_version']}",
        "trees:",
        *(
            f"  {t['name']}\t{t['files']} files\t{t['chunks']} chunks\t{t['skipped']} skipped"
            f"{chr(9) + 'global' if t['global'] else ''}\t{t['root'] or '-'}"
            for t in payload["trees"]
        ),
        f"index: {state}",
    ]
    return Output(c1_escaped("\n".join(lines)) + "\n", 0)


def ls_command(store: Store, what: str, prefix: str = "", *, long: bool = False) -> Output:
    """`ra-query ls trees|docs|chunks [PREFIX] [-l]`, from the index alone (no chunk tables needed)."""
    from ra_query.text.textsafe import printable

    if what == "trees":
        lines = [
            f"{name}\t{entry.get('files', 0)} files\t{entry.get('chunks', 0)} chunks" if long else name
            for name, entry in sorted(store.trees().items())
            if name.startswith(prefix)
        ]
    else:
        records = store.records(docs_only=what == "docs", prefix=prefix)
        lines = [
            ls_line(what, long, r.id, r.title, (r.line_start, r.line_end), r.tokens, r.breadcrumb)
            for r in records
        ]
    text = "".join(printable(line) + "\n" for line in lines)
    return Output(text, 0 if lines else 1)


def eval_command(
    store: Store,
    questions: str | None,
    params: SearchParams,
    *,
    titles: bool = False,
    max_tokens: int | None = None,
    floors: Sequence[str] = (),
    baseline: str | None = None,
    qrels: str | None = None,
    ranking: bool = False,
    json: bool = False,
) -> Output:
    """`eval QUESTIONS` (ra_query.search.evaluate; a topics file with `qrels`): each question as an
    agent's search, the figures, the misses; exit 1 when a `--min` floor is not met, 2 for a bad
    file or argument.

    Raises:
        InputError: the questions or baseline file, or a floor, is not what it must be.
    """
    from pathlib import Path

    from ra_query.search.evaluate import (
        below,
        evaluate,
        parse_floors,
        read_qrels,
        read_questions,
        render,
        render_titles,
        report_json,
        summary,
        title_audit,
        worse_than,
    )

    last: list[Any] = [None, None, ()]  # the query, params and topics of the last search

    def agent_search(query: str, narrowed: SearchParams, as_json: bool) -> str:
        """What `ra search` prints (or its JSON); a question asked for both is searched once."""
        if last[0] != query or last[1] is not narrowed:
            last[:] = [query, narrowed, search(store, [query], narrowed)]
        return rendered(store, last[2], json=as_json, max_tokens=max_tokens).text

    if titles or questions is None:  # the findability audit: every chunk asked for by its title
        checks = title_audit(store, params, agent_search)
        if json:
            return Output(dumps({"titles": [c.row() for c in checks]}), 0)
        return Output(render_titles(checks), 0)
    wanted = parse_floors(floors)
    asked = read_qrels(Path(questions), Path(qrels)) if qrels else read_questions(Path(questions))
    scored = evaluate(store, asked, params, agent_search, by_document=ranking)
    figures = summary(scored, read=not ranking)
    worse = worse_than(scored, Path(baseline)) if baseline else []
    failing = below(figures, wanted)
    code = 1 if failing else 0
    if json:
        return Output(dumps(report_json(scored, figures, failing, worse)), code)
    return Output(render(scored, figures, failing, worse), code)


# ── the MCP tools' answers ───────────────────────────────────────────────────────────────────
# What `ra mcp` and `ra-query mcp` answer, without the MCP SDK: ra_query.mcp serves these from a
# process forked before it loads the SDK (`answer_requests`), so the index is opened, the stale
# files counted and the token encoding loaded on the other core meanwhile.

DEFAULT_AGENT_MAX_TOKENS = 8000


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
            from ra_query.sources.stale import stale_files

            self._manifest = store.manifest
            self._count = stale_files(store.root, store.manifest)
        return self._count


class Answers:
    """What each MCP tool answers, by its name and arguments: the tool's JSON payload, or the
    `RaError` a caller's mistake (or a missing index) raises, which the server turns into a
    one-line tool error.

    `open_store` gives the store of each call (`ra mcp` refreshes the index in it, `ra-query mcp`
    reopens the artifacts when they changed); `stale` counts the source files changed since its
    build for `search` and `list_sources` (None: `stale` is null); `context` reads the files of
    a `context` call into a query (`ra mcp` applies the configuration's context rules).
    """

    def __init__(
        self,
        open_store: StoreOpener,
        stale: StaleCounter | None = None,
        context: ContextAnalyzer = plain_analyzer,
    ) -> None:
        self.open_store = open_store
        self.stale = stale
        self.context = context

    def __call__(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The payload of `tool` (search, context, get, list_sources) for `arguments`, keyed as
        the payload functions take them (`search_payload`'s `list_mode`, not the tool's `list`)."""
        store = self.open_store()
        if tool == "search":
            return search_payload(store, stale=self._staleness(store), **arguments)
        if tool == "context":
            given = dict(arguments)
            return context_payload(store, self.context(store, given.pop("files")), **given)
        if tool == "get":
            from ra_query.search.get import get, get_to_dict

            return get_to_dict(get(store, arguments["id"], full_document=arguments["full_document"]))
        if tool == "list_sources":
            return sources_payload(store, self._staleness(store))
        raise ValueError(f"no tool named {tool!r}")

    def _staleness(self, store: Store) -> int | None:
        return self.stale(store) if self.stale is not None else None


class Served:
    """What an MCP server's answering side gives the server: `hello`, the keyword arguments of
    the server's instructions (trees, upstream, code); `answers`; and `warm`, which does now
    what the first call would (given a test for a call already waiting, to stop early).

    A plain class, not a NamedTuple: this module is on every cold search's path, and making a
    NamedTuple costs a tenth of a millisecond."""

    def __init__(self, hello: dict[str, Any], answers: Answer, warm: Warm) -> None:
        self.hello, self.answers, self.warm = hello, answers, warm


def readonly_answers(root: str, stack: ExitStack) -> Served:
    """`ra-query mcp`'s answers over the artifacts at `root`: opened again when their manifest is
    replaced, never built; `stale` counted again only after the watcher (closed by `stack`) saw
    the sources change (null when they are not visible from here)."""
    from pathlib import Path

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
    watch = stack.enter_context(SourceWatch(source_roots(manifest)))
    store, stale = ReadOnlyStore(Path(root)), StaleCount(watch)

    def warm(waiting: Callable[[], bool]) -> None:
        try:
            opened = store()
        except RaError:
            return  # nothing to open: the first call says so
        search_once(opened)
        wait_for(watch, waiting)
        stale(opened)

    hello = {"trees": names, "upstream": upstream, "code": code_languages(manifest)}
    return Served(hello, Answers(store, stale=stale), warm)


WATCH_WAIT = 2.0  # seconds the warm-up waits for a watcher to start before counting anyway


def wait_for(watch: SourceWatch, waiting: Callable[[], bool]) -> None:
    """Wait until `watch` runs (its first `changed()` then stands for the start-up, and the first
    call does not count again), at most WATCH_WAIT seconds, and not while a call is waiting."""
    import time

    deadline = time.monotonic() + WATCH_WAIT
    while not watch.wait_ready(0.01) and not waiting() and time.monotonic() < deadline:
        pass


def search_once(store: Store) -> None:
    """Search `store` once and drop the answer: what a first call loads is then loaded (the
    searcher, the cl100k encoding, and where there are vectors the embedding model: a few
    tenths of a second on a query of its own)."""
    from contextlib import suppress

    with suppress(RaError):  # the first call meets it and says so
        search_payload(store, ["start up"])


def answer_requests(setup: Callable[[ExitStack], Served], helper: Helper) -> None:
    """The life of an MCP server's answering process (ra_query.forked.Helper's child).

    It sends `{"hello": ...}` (or `{"error", "exit"}` when `setup` raised an `RaError`), warms
    up, then answers each `{"tool", "arguments"}` with `{"payload"}`, `{"error"}` (an
    `RaError`: a tool error) or `{"bug"}` (anything else: its traceback goes to stderr), until
    the server closes its end or is gone.
    """
    import traceback
    from contextlib import ExitStack

    with ExitStack() as stack:
        try:
            served = setup(stack)
        except RaError as exc:
            helper.send({"error": exc.message, "exit": exc.exit_code})
            return
        try:
            helper.send({"hello": served.hello})
        except OSError:
            return  # the server is gone already
        try:
            served.warm(helper.pending)
        except Exception:  # an optimisation: the first call meets the same bug and reports it
            traceback.print_exc()
        while (request := helper.receive()) is not None:
            try:
                helper.send(_reply(served, cast(dict[str, Any], request)))
            except OSError:
                return  # the server is gone (killed): nobody is waiting for the answer


def _reply(served: Served, request: dict[str, Any]) -> dict[str, Any]:
    """The message answering one request of `answer_requests`."""
    import traceback

    try:
        return {"payload": served.answers(request["tool"], request["arguments"])}
    except RaError as exc:
        return {"error": exc.message}
    except Exception as exc:  # a bug of ours: the server reports "Error executing tool"
        traceback.print_exc()
        return {"bug": f"{type(exc).__name__}: {exc}"}

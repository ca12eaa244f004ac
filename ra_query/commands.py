"""The search and get commands as functions: both CLIs (`ra`, `ra-query`) and MCP call these.

Each returns the text to print and the exit code, so the two command lines cannot drift.
"""

import json as _json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from ra_query.artifacts.schema import build_analyzer
from ra_query.artifacts.store import Store
from ra_query.search.focus import with_excerpts
from ra_query.search.pipeline import SearchParams, search
from ra_query.search.render import View, budgeted, render_text, to_json
from ra_query.text.textsafe import c1_escaped

if TYPE_CHECKING:
    from ra_query.search.context import Analysis


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
    analyses: "Sequence[Analysis]",
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

    def agent_search(query: str, narrowed: SearchParams, as_json: bool) -> str:
        return search_command(store, [query], narrowed, json=as_json, max_tokens=max_tokens).text

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

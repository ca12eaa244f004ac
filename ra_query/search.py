"""Keyword search over the index: every word must match in some field, BM25 with field boosts.

This is the first cut of the query side: plain words (AND) and "quoted phrases". The full query
language, aggregation, elbow cutoff and token budget build on `Hit` and `TopicResult`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from ra_query.schema import build_analyzer
from ra_query.store import Store

if TYPE_CHECKING:
    import tantivy

DEFAULT_BOOSTS: dict[str, float] = {"title": 3.0, "tags": 2.5, "path": 2.0, "body": 1.0}
_WORD = re.compile(r'"([^"]*)"|(\S+)')


@dataclass(frozen=True)
class Hit:
    """One matching chunk with everything a result shows (all stored in the index)."""

    id: str
    tree: str
    path: str
    title: str
    breadcrumb: tuple[str, ...]
    depth: int
    parent_id: str | None
    line_start: int
    line_end: int
    byte_start: int
    byte_end: int
    tokens: int
    score: float
    body: str


@dataclass(frozen=True)
class TopicResult:
    """The results of one query (one topic of a multi-topic search)."""

    query: str
    hits: tuple[Hit, ...]
    total_matches: int


def _field_query(schema: tantivy.Schema, field: str, tokens: list[str], boost: float) -> tantivy.Query:
    import tantivy

    if len(tokens) == 1:
        query = tantivy.Query.term_query(schema, field, tokens[0])
    else:
        words: list[str | tuple[int, str]] = list(tokens)
        query = tantivy.Query.phrase_query(schema, field, words)
    return tantivy.Query.boost_query(query, boost)


def build_query(store: Store, text: str, boosts: dict[str, float]) -> tantivy.Query | None:
    """AND of the words (or quoted phrases) of `text`, each matched in any boosted field."""
    import tantivy

    analyzer = build_analyzer(store.stemmer)
    schema = store.index.schema
    fields = {
        **{f: boosts.get(f, 1.0) for f in ("title", "tags", "path", "body")},
        "path_components": boosts.get("path", 2.0),
    }
    musts: list[tuple[tantivy.Occur, tantivy.Query]] = []
    for match in _WORD.finditer(text):
        word = match.group(1) if match.group(1) is not None else match.group(2)
        tokens = analyzer.analyze(word)
        if not tokens:
            continue
        per_field = [(tantivy.Occur.Should, _field_query(schema, f, tokens, b)) for f, b in fields.items()]
        musts.append((tantivy.Occur.Must, tantivy.Query.boolean_query(per_field)))
    if not musts:
        return None
    return tantivy.Query.boolean_query(musts)


def _hit(doc: dict[str, list[Any]], score: float) -> Hit:
    def one(name: str, default: Any = None) -> Any:
        values = doc.get(name) or []
        return values[0] if values else default

    return Hit(
        id=one("id", ""),
        tree=one("tree", ""),
        path=one("path", ""),
        title=one("title", ""),
        breadcrumb=tuple(orjson.loads(one("breadcrumb", "[]"))),
        depth=int(one("depth", 0)),
        parent_id=one("parent_id") or None,
        line_start=int(one("line_start", 1)),
        line_end=int(one("line_end", 1)),
        byte_start=int(one("byte_start", 0)),
        byte_end=int(one("byte_end", 0)),
        tokens=int(one("tokens", 0)),
        score=score,
        body=one("body", ""),
    )


def search(store: Store, text: str, *, limit: int, boosts: dict[str, float] | None = None) -> TopicResult:
    """Search `text` and return up to `limit` hits, best first."""
    query = build_query(store, text, boosts or DEFAULT_BOOSTS)
    if query is None:
        return TopicResult(text, (), 0)
    searcher = store.index.searcher()
    result = searcher.search(query, limit=limit, count=True)
    hits = tuple(_hit(searcher.doc(addr).to_dict(), float(score)) for score, addr in result.hits)
    count: int | None = getattr(result, "count", None)  # present when count=True; not in the stubs
    return TopicResult(text, hits, int(count or 0))


def render_full(results: list[TopicResult]) -> str:
    """Full output (DECISIONS 22): a `─── id ───` header, the breadcrumb, then the content."""
    out: list[str] = []
    for topic in results:
        if len(results) > 1:
            out.append(f"## {topic.query}\n")
        if not topic.hits:
            out.append(f"no results for {topic.query!r} — try fewer or different words\n")
        for hit in topic.hits:
            out.append(f"─── {hit.id} ───")
            out.append("> " + " › ".join(hit.breadcrumb))
            out.append("")
            if hit.depth > 0:
                out.append("#" * hit.depth + " " + hit.title)
                out.append("")
            if hit.body:
                out.append(hit.body)
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def results_to_dict(results: list[TopicResult]) -> dict[str, Any]:
    """The JSON shape of seed 000: `queries[] → {query, results[], total_matches}`."""
    return {
        "queries": [
            {
                "query": topic.query,
                "results": [
                    {
                        "id": h.id,
                        "tree": h.tree,
                        "path": h.path,
                        "title": h.title,
                        "breadcrumb": " › ".join(h.breadcrumb),
                        "depth": h.depth,
                        "line_start": h.line_start,
                        "line_end": h.line_end,
                        "byte_start": h.byte_start,
                        "byte_end": h.byte_end,
                        "score": round(h.score, 4),
                        "tokens": h.tokens,
                        "content": h.body,
                    }
                    for h in topic.hits
                ],
                "total_matches": topic.total_matches,
            }
            for topic in results
        ]
    }

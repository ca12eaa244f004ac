"""The search pipeline: parse → candidates → aggregate → elbow → limit, per topic.

For each topic (DECISIONS 18–20):
1. parse the query language (`--lenient` falls back to keywords and says so; `--raw` hands the
   text to tantivy's own parser);
2. fetch up to `candidate_limit` chunks by BM25 with field boosts; if the exact query finds
   nothing, retry with fuzzy clauses (marked `fuzzy`); if an all-plain-words query still finds
   nothing, run the words as a ranked OR (marked `relaxed`) unless `strict`;
3. multiply the scores of local-tree chunks by `local_boost` and re-rank;
4. aggregate siblings into parents over the real parent chain, cut at the elbow, keep `limit`.

Across topics a chunk is shown once, under the topic where it ranks best.
"""

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from ra_query.aggregate import Candidate, PipelineTrace, Result, pipeline
from ra_query.compile import Compiler, tree_filter
from ra_query.errors import QuerySyntaxError
from ra_query.models import ChunkRecord
from ra_query.query import Node, Or, Term, is_plain_words, parse_lenient, parse_query, plain_words, render
from ra_query.schema import build_analyzer
from ra_query.store import Store

if TYPE_CHECKING:
    import tantivy

DEFAULT_BOOSTS: Mapping[str, float] = MappingProxyType({"title": 3.0, "tags": 2.5, "path": 2.0, "body": 1.0})
SNIPPET_CHARS = 150
_WORD = re.compile(r"\w+")


class SearchParams(NamedTuple):
    """Everything that shapes a search; defaults are DECISIONS 16–19's."""

    limit: int = 5
    candidate_limit: int = 100
    cutoff_ratio: float = 0.5
    aggregation_threshold: float = 0.5
    aggregation: bool = True
    boosts: Mapping[str, float] = DEFAULT_BOOSTS
    local_boost: float = 1.5
    global_trees: frozenset[str] = frozenset()
    fuzzy_distance: int = 1
    trees: tuple[str, ...] = ()
    strict: bool = False
    lenient: bool = False
    raw: bool = False

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> "SearchParams":
        """The params a build recorded (`Store.search_defaults()`), JSON lists made frozensets.

        Keys this ra does not know (from a newer build) are ignored, not a crash.
        """
        known = {name: value for name, value in settings.items() if name in cls._fields}
        if "global_trees" in known:
            known["global_trees"] = frozenset(known["global_trees"])
        return cls(**known)


class SearchHit(NamedTuple):
    """One result: a chunk, its score, and what was merged into it."""

    record: ChunkRecord
    score: float
    constituents: tuple[str, ...] = ()
    aggregated: bool = False
    snippet: str = ""
    parts: tuple[ChunkRecord, ...] = ()  # the chunks shown, in document order (a section's all)

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def breadcrumb(self) -> tuple[str, ...]:
        return self.record.breadcrumb


class TopicResult(NamedTuple):
    """The results of one topic, with how they were found."""

    query: str
    hits: tuple[SearchHit, ...]
    total_matches: int
    terms: frozenset[str] = frozenset()
    relaxed: bool = False
    fuzzy: bool = False
    note: str | None = None
    explain: tuple[str, ...] = ()


class _Run:
    """One topic's search against one store (keeps the searcher and fetched records)."""

    def __init__(self, store: Store, params: SearchParams) -> None:
        self.store = store
        self.params = params
        self.searcher = store.index.searcher()
        self.analyzer = build_analyzer(store.stemmer)
        self.records: dict[str, ChunkRecord] = {}

    def compiler(self, fuzzy: bool) -> Compiler:
        return Compiler(
            schema=self.store.index.schema,
            analyzer=self.analyzer,
            boosts=self.params.boosts,
            fuzzy_distance=self.params.fuzzy_distance if fuzzy else 0,
        )

    def candidates(self, query: "tantivy.Query") -> tuple[list[tuple[ChunkRecord, float]], int]:
        import tantivy

        if self.params.trees:
            query = tantivy.Query.boolean_query(
                [
                    (tantivy.Occur.Must, query),
                    (tantivy.Occur.Must, tree_filter(self.store.index.schema, list(self.params.trees))),
                ]
            )
        result = self.searcher.search(query, limit=self.params.candidate_limit, count=True)
        found: list[tuple[ChunkRecord, float]] = []
        for score, address in result.hits:
            record = ChunkRecord.from_stored(self.searcher.doc(address).to_dict())
            self.records[record.id] = record
            boost = 1.0 if record.tree in self.params.global_trees else self.params.local_boost
            found.append((record, float(score) * boost))
        found.sort(key=lambda pair: (-pair[1], pair[0].id))
        count: int | None = getattr(result, "count", None)
        return found, int(count or 0)

    def lookup(self, chunk_id: str) -> Candidate | None:
        record = self.records.get(chunk_id) or self.store.get_chunk(chunk_id)
        if record is None:
            return None
        self.records[record.id] = record
        return Candidate(record.id, record.parent_id, record.depth, record.sibling_count, 0.0)


def _parse(text: str, params: SearchParams) -> tuple[Node | None, str | None]:
    if params.lenient:
        return parse_lenient(text)
    return parse_query(text), None


def search_topic(store: Store, text: str, params: SearchParams) -> TopicResult:
    """Run one topic through the whole pipeline."""
    run = _Run(store, params)
    explain: list[str] = []
    relaxed = fuzzy = False
    if params.raw:
        found, total = run.candidates(_raw_query(store, text, params))
        node, note, terms = None, None, frozenset[str]()
        explain.append(f"raw query: {text}")
    else:
        node, note = _parse(text, params)
        if node is None:
            return TopicResult(text, (), 0, note=note or "nothing to search for — give at least one word")
        explain.append(f"parsed: {render(node)}")
        exact = run.compiler(fuzzy=False)
        compiled = exact.compile(node)
        terms = frozenset(exact.terms)
        if compiled is None:
            return TopicResult(
                text, (), 0, terms, note=_also(note, "no searchable words (only punctuation?)")
            )
        found, total = run.candidates(compiled)
        fuzzy_on = params.fuzzy_distance > 0
        if not found and fuzzy_on:
            fuzzy_query = run.compiler(fuzzy=True).compile(node)
            if fuzzy_query is not None:
                found, total = run.candidates(fuzzy_query)
                fuzzy = bool(found)
        if not found and not params.strict and is_plain_words(node) and len(plain_words(node)) > 1:
            words = plain_words(node)
            relaxed_node = Or(tuple(Term(w) for w in words))
            # typo matches join only below every exact match, so a fuzzy match never
            # outranks an exact one (DECISIONS 16)
            exact_or = run.compiler(fuzzy=False).compile(relaxed_node)
            found, total = run.candidates(exact_or) if exact_or is not None else ([], 0)
            if fuzzy_on and len(found) < params.candidate_limit:  # else typo matches could not rank
                fuzzy_or = run.compiler(fuzzy=True).compile(relaxed_node)
                if fuzzy_or is not None:
                    typo, typo_total = run.candidates(fuzzy_or)
                    found, fuzzy = _below(found, typo, params.candidate_limit)
                    total = max(total, typo_total)
            if found:
                relaxed = True
                note = _also(
                    note, f"no chunk has all of {len(words)} words; showing chunks with the most of them"
                )
    explain.append(
        f"parameters: candidate_limit={params.candidate_limit} aggregation_threshold="
        f"{params.aggregation_threshold} cutoff_ratio={params.cutoff_ratio} limit={params.limit}"
        f" aggregation={'on' if params.aggregation else 'off'} fuzzy_distance={params.fuzzy_distance}"
    )
    trace = _pipeline(run, found, params)
    explain.append(
        f"counts: matches={total} "
        + " ".join(f"{name}={count}" for name, count in trace.stages())
        + (" (fuzzy)" if fuzzy else "")
        + (" (relaxed to OR)" if relaxed else "")
    )
    hits = tuple(_hit(run, r, terms) for r in trace.results)
    if not hits and note is None:
        note = (
            "no results — try fewer or different words"
            if not params.strict
            else ("no chunk matches every word — try fewer words, or drop --strict to rank partial matches")
        )
    return TopicResult(text, hits, total, terms, relaxed, fuzzy, note, tuple(explain))


def _also(note: str | None, more: str) -> str:
    """`more` after an earlier note (a lenient fallback must still say so once relaxed)."""
    return f"{note}; {more}" if note else more


def _below(
    exact: list[tuple[ChunkRecord, float]], typo: list[tuple[ChunkRecord, float]], limit: int
) -> tuple[list[tuple[ChunkRecord, float]], bool]:
    """`exact`, then the chunks only `typo` found, rescaled to rank below the last exact one.

    Returns the merged candidates and whether any typo-only chunk was added.
    """
    seen = {record.id for record, _ in exact}
    extra = [(record, score) for record, score in typo if record.id not in seen]
    if not extra:
        return exact, False
    ceiling = min((score for _, score in exact), default=extra[0][1]) * 0.99
    top = extra[0][1] or 1.0
    scaled = [(record, ceiling * score / top) for record, score in extra]
    merged = (exact + scaled)[:limit]
    return merged, len(merged) > len(exact)


def _hit(run: _Run, result: Result, terms: frozenset[str]) -> SearchHit:
    """A SearchHit; an aggregated result shows its whole section, constituents included."""
    record = run.records[result.id]
    parts = section(run.store, record) if result.aggregated else (record,)
    if len(parts) > 1:
        body = "\n\n".join([record.body, *(p.content() for p in parts[1:])]).strip("\n")
        record = record._replace(
            body=body,
            line_end=max(p.line_end for p in parts),
            byte_end=max(p.byte_end for p in parts),
            tokens=sum(p.tokens for p in parts),
        )
    return SearchHit(
        record=record,
        score=result.score,
        constituents=result.constituents,
        aggregated=result.aggregated,
        snippet=snippet(record.body, terms, run.analyzer),
        parts=parts,
    )


def section(store: Store, record: ChunkRecord) -> tuple[ChunkRecord, ...]:
    """`record` and every chunk below it, in document order (the span its heading covers)."""
    chunks = store.doc_chunks(record.doc_id)
    by_id = {c.id: c for c in chunks}

    def below(chunk: ChunkRecord) -> bool:
        parent = chunk.parent_id
        while parent is not None:
            if parent == record.id:
                return True
            ancestor = by_id.get(parent)
            parent = ancestor.parent_id if ancestor is not None else None
        return False

    return (record, *(c for c in chunks if below(c)))


def _raw_query(store: Store, text: str, params: SearchParams) -> "tantivy.Query":
    """`--raw`: tantivy's own query parser over ra's fields and boosts."""
    fields = ["title", "tags", "path", "path_components", "body"]
    boosts = {**params.boosts, "path_components": params.boosts.get("path", 2.0)}
    try:
        return store.index.parse_query(text, fields, field_boosts=boosts)
    except ValueError as exc:
        raise QuerySyntaxError(
            text,
            0,
            f"tantivy cannot parse this raw query ({exc})",
            "check tantivy's query syntax, or drop --raw",
        ) from None


def _pipeline(run: _Run, found: list[tuple[ChunkRecord, float]], params: SearchParams) -> PipelineTrace:
    cands = [Candidate(r.id, r.parent_id, r.depth, r.sibling_count, score) for r, score in found]
    return pipeline(
        cands,
        threshold=params.aggregation_threshold,
        cutoff_ratio=params.cutoff_ratio,
        limit=params.limit,
        lookup=run.lookup,
        aggregation=params.aggregation,
    )


def search(store: Store, queries: list[str], params: SearchParams) -> list[TopicResult]:
    """Search every topic; a chunk appears once, under the topic where it ranks best."""
    topics = [search_topic(store, q, params) for q in queries]
    best: dict[str, tuple[int, int]] = {}
    for t, topic in enumerate(topics):
        for rank, hit in enumerate(topic.hits):
            if hit.id not in best or rank < best[hit.id][1]:
                best[hit.id] = (t, rank)
    return [
        TopicResult(
            topic.query,
            tuple(h for h in topic.hits if best[h.id][0] == t),
            topic.total_matches,
            topic.terms,
            topic.relaxed,
            topic.fuzzy,
            topic.note,
            topic.explain,
        )
        for t, topic in enumerate(topics)
    ]


def matching_words(text: str, terms: frozenset[str], analyzer: Any) -> list[tuple[int, int]]:
    """(start, end) of every word in `text` whose analyzed form is one of `terms`."""
    spans: list[tuple[int, int]] = []
    verdicts: dict[str, bool] = {}  # most words repeat: analyze each distinct one once
    for m in _WORD.finditer(text):
        word = m.group()
        hit = verdicts.get(word)
        if hit is None:
            tokens: list[str] = analyzer.analyze(word)
            hit = verdicts[word] = any(t in terms for t in tokens)
        if hit:
            spans.append((m.start(), m.end()))
    return spans


def snippet(body: str, terms: frozenset[str], analyzer: Any, width: int = SNIPPET_CHARS) -> str:
    """About `width` characters of `body` around the first match, matches wrapped in <em>."""
    flat = " ".join(body.split())
    spans = matching_words(flat, terms, analyzer) if terms else []
    start = max(0, spans[0][0] - width // 4) if spans and len(flat) > width else 0
    if start:
        space = flat.find(" ", start)
        start = space + 1 if 0 <= space < spans[0][0] else start
    end = min(len(flat), start + width)
    out: list[str] = ["…" if start else ""]
    pos = start
    for a, b in spans:
        if a < start or b > end:
            continue
        out += [flat[pos:a], "<em>", flat[a:b], "</em>"]
        pos = b
    out.append(flat[pos:end])
    if end < len(flat):
        out.append("…")
    return "".join(out)

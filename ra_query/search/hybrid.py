"""Hybrid retrieval (issue 21): the chunks nearest a query's meaning, fused with BM25's.

Where the artifacts hold vectors (trees built with `semantic = true`) and the semantic extra is
installed, a search also embeds its words (ra_query.semantic.embed) and takes the chunks whose
vectors are nearest (ra_query.artifacts.vectors). Those hits must satisfy what the query
requires — phrases, `field:` terms, `-exclusions`, `tree:` and `-t` filters
(`Compiler.constraints`) — or they are dropped: lexical constraints stay exact.

The two rankings are fused by min-max normalisation: each list's scores scaled to 0–1, then
`(1 - w) * bm25 + w * dense` with `w` = `semantic_weight` (0.55 by default; a code chunk's is
`code_semantic_weight`, 0.45: the model reads prose better than code, docs/code.md) over the top
50 of each side; a chunk only one side found gets 0 from the other. Chosen with bench/quality.py over
min-max weights 0.3–0.7, reciprocal-rank fusion, other normalisations and fewer BM25
candidates (docs/searching.md has the table). The best `FUSED_SHARE` of `candidate_limit` of
the fused list (10 of 20; never fewer than `limit`) then go through ra's aggregation, elbow cutoff
and limit as BM25's candidates do. A fused list is denser in answers than BM25's: every section of
a page is near a question about the page in meaning, so 20 of them merged the sections into the
page (fd's 195-line Installation for a question its "On Ubuntu" answers; ra_query.search.pipeline).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from ra_query.artifacts.schema import FILTER_FIELDS
from ra_query.search.syntax import Node, Not, Phrase, Term

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import numpy as np
    import tantivy

    from ra_query.artifacts.models import ChunkRecord
    from ra_query.artifacts.store import Store

DENSE_K = 50  # nearest chunks taken before the constraints see them; BM25 gives as many
# the share of `candidate_limit` of the fused list that aggregation sees (bench/tune_code.py: of
# 20, 10 kept the code questions' answers and brought the docs questions' sections up the most
# safely; 8 more, 6 lost code answers)
FUSED_SHARE = 0.5
DEFAULT_SEMANTIC_WEIGHT = 0.55
NO_EXTRA_NOTE = (
    "this index has vectors but the semantic extra is not installed: searched with BM25 only "
    "(pip install 'ra-kb[semantic]')"
)
OTHER_MODEL_NOTE = (
    "this index's vectors were made by another embedding model than this ra's: searched with "
    "BM25 only (ra update embeds them again)"
)
NO_VECTORS_NOTE = "this index has no vectors: searched with BM25 only (semantic = true, then ra update)"


class Fused(NamedTuple):
    """A fused candidate and how each side ranked it (1-based; 0: not found by that side)."""

    record: ChunkRecord
    score: float
    bm25_rank: int
    dense_rank: int


def semantic_text(node: Node) -> str:
    """The words of `node` a vector should mean: its terms and phrases, not what it excludes
    nor its `tree:` filters."""
    words: list[str] = []

    def visit(item: Node) -> None:
        if isinstance(item, Not):
            return
        if isinstance(item, Term | Phrase):
            if item.field not in FILTER_FIELDS:
                words.append(item.text)
        else:
            for child in item.items:
                visit(child)

    visit(node)
    return " ".join(words)


def nearest(store: Store, vector: np.ndarray, k: int, trees: Sequence[str]) -> list[tuple[str, float]]:
    """The ids of the `k` chunks whose vectors are nearest `vector` (the model's float32 row),
    over `trees` (all when empty), best first, with their cosines (ra_query.artifacts.vectors)."""
    vectors = store.vectors()
    return [] if vectors is None else vectors.nearest(vector, k, trees)


def dense_candidates(
    store: Store,
    nearest: Sequence[tuple[str, float]],
    constraints: tantivy.Query | None,
    known: Mapping[str, ChunkRecord] | None = None,
) -> list[tuple[ChunkRecord, float]]:
    """The chunks of `nearest` (ids and cosines, best first) that satisfy `constraints`, with
    their cosines, best first.

    `known` are records fetched already (BM25's candidates): without constraints, they are taken
    from it instead of the index (a stored chunk costs a few hundredths of a millisecond to read,
    and a hybrid search otherwise reads fifty)."""
    import tantivy

    from ra_query.search.compile import one_of

    have = (known or {}) if constraints is None else {}
    records: dict[str, ChunkRecord] = {}
    wanted = [i for i, _ in nearest if i not in have]
    if wanted:
        schema = store.index.schema
        clauses = [(tantivy.Occur.Must, one_of(schema, "id", wanted))]
        if constraints is not None:
            clauses.append((tantivy.Occur.Must, constraints))
        searcher = store.index.searcher()
        hits = searcher.search(tantivy.Query.boolean_query(clauses), limit=len(wanted), count=False).hits
        for _, address in hits:
            record = store.read(searcher, address)
            records[record.id] = record
    return [(have.get(i) or records[i], score) for i, score in nearest if i in have or i in records]


def fuse(
    bm25: Sequence[tuple[ChunkRecord, float]],
    dense: Sequence[tuple[ChunkRecord, float]],
    weight: float,
    code_weight: float | None = None,
) -> list[Fused]:
    """Min-max fusion of two rankings (see the module docstring), best first (ties by id); a code
    chunk's dense share is `code_weight` when given (the model reads code less well than prose)."""
    parts: dict[str, list[float]] = {}
    records: dict[str, ChunkRecord] = {}
    ranks: dict[str, list[int]] = {}
    for side, found in ((0, bm25), (1, dense)):
        if not found:
            continue
        scores = [score for _, score in found]
        low, high = min(scores), max(scores)
        for rank, (record, score) in enumerate(found, start=1):
            w = code_weight if code_weight is not None and record.kind == "code" else weight
            share = w if side else 1.0 - w
            scaled = (score - low) / (high - low) if high > low else 1.0
            entry = parts.setdefault(record.id, [0.0, 0.0])
            entry[side] = max(entry[side], share * scaled)
            records.setdefault(record.id, record)
            ranked = ranks.setdefault(record.id, [0, 0])
            ranked[side] = ranked[side] or rank
    fused = [Fused(records[i], sum(p), ranks[i][0], ranks[i][1]) for i, p in parts.items()]
    fused.sort(key=lambda f: (-f.score, f.record.id))
    return fused

"""Names first: a query that is a chunk's name puts that chunk first (issue 30).

`encode_content` must find `def encode_content`, not `encode_response`; `ssh` the `ssh` page, not
`ssh-add`. The build indexes every chunk under its names (ra_query.text.names); here a query that
is shaped like a name looks its keys up in the `name` field, tier by tier (the whole query, then
the shorter suffixes of a qualified name), and the chunks of the first tier that finds any are
**named**. They go first: a definition whose whole qualified name is the query as typed, then
those with a name exactly so (case and all), then the rest, each group in the order BM25 gives it
for the query's words, times the usual boosts (a test file's after the code); the other chunks
follow as they were ranked (in a hybrid search, as fused). A name spelt like code
(`EncodeContent`, `run()`) puts definitions before headings of that name in each group. A named
chunk the ranking did not reach is fetched all the same.

Named chunks are scored from the best of the others to twice it, in proportion to their BM25
scores (each below the one before), so they rank first, stay together, and the elbow (DECISIONS
19, at its default ratio of 0.5 or below) keeps them all and what follows as it would have kept
it. They never merge into their section (ra_query.search.aggregate), and the show step keeps them
above a section that many weaker matches merged into.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING

from ra_query.artifacts.models import ChunkRecord
from ra_query.artifacts.schema import NAME_FIELD
from ra_query.search.compile import one_of
from ra_query.text.names import is_identifier, query_keys

if TYPE_CHECKING:
    import tantivy

    from ra_query.artifacts.store import Store

MAX_NAMED = 20  # a bare name defined in many places (`__init__`, `new`): its best 20
NO_WORDS = 1e-3  # the share a named chunk that matched none of the words keeps
KEEP_ORDER = 0.999  # a named chunk's share is at most this of the one's before it: no ties


def named_first(
    store: "Store",
    searcher: "tantivy.Searcher",
    text: str,
    found: list[tuple[ChunkRecord, float]],
    *,
    ranked: "tantivy.Query | None",
    filters: "tantivy.Query | None",
    boost: Callable[[ChunkRecord], float],
) -> tuple[list[tuple[ChunkRecord, float]], tuple[str, ...]]:
    """`found` with the chunks named by `text` first; (candidates, the named ids in order).

    `ranked` is the query's compiled words (it orders the named chunks BM25 did not reach);
    `filters` what every candidate must satisfy (trees, kinds); `boost` a chunk's score factor.
    """
    import tantivy

    schema = store.index.schema

    def lookup(keys: list[str]) -> list[tuple[ChunkRecord, float]]:
        clauses = [(tantivy.Occur.Must, one_of(schema, NAME_FIELD, keys, 0.0))]
        if ranked is not None:
            clauses.append((tantivy.Occur.Should, ranked))
        if filters is not None:
            clauses.append((tantivy.Occur.Must, filters))
        hits = searcher.search(tantivy.Query.boolean_query(clauses), limit=MAX_NAMED).hits
        records = [store.read(searcher, address) for _, address in hits]
        pairs = [
            (record, float(score) * boost(record)) for record, (score, _) in zip(records, hits, strict=True)
        ]
        # a name spelt like code (`EncodeContent`) wants the definition before a heading of its name
        return sorted(pairs, key=lambda pair: (code_first and pair[0].kind != "code", -pair[1], pair[0].id))

    code_first = is_identifier(text)

    named: list[tuple[ChunkRecord, float]] = []
    for tier in query_keys(text):
        seen: set[str] = set()
        for keys in tier.levels:  # each level's chunks after the level before's
            more = [pair for pair in lookup(keys) if pair[0].id not in seen][: MAX_NAMED - len(named)]
            named += more
            seen.update(record.id for record, _ in more)
        if named:
            break
    if not named:
        return found, ()
    ids = {record.id for record, _ in named}
    rest = [(record, score) for record, score in found if record.id not in ids]
    return _lifted(named, rest) + rest, tuple(record.id for record, _ in named)


def _lifted(
    named: list[tuple[ChunkRecord, float]], rest: list[tuple[ChunkRecord, float]]
) -> list[tuple[ChunkRecord, float]]:
    """The named chunks scored above the rest: from the rest's best (`base`, exclusive) to twice
    it, in proportion to their own scores — so no two neighbours differ by more than the elbow's
    halving, and a named chunk that matched none of the words still ranks above the rest."""
    base = max((score for _, score in rest), default=0.0) or 1.0
    best = max((score for _, score in named), default=0.0) or 1.0
    lifted: list[tuple[ChunkRecord, float]] = []
    share = 1.0 / KEEP_ORDER
    for record, score in named:  # in their order (an exact name's first): each below the one before
        share = min(share * KEEP_ORDER, max(score / best, NO_WORDS))
        lifted.append((record, base * (1.0 + share)))
    return lifted

"""Names first: a query that is a chunk's name puts that chunk first (issue 30).

`encode_content` must find `def encode_content`, not `encode_response`; `ssh` the `ssh` page, not
`ssh-add`. The build indexes every chunk under its names (ra_query.text.names); here a query that
is shaped like a name looks its keys up in the `name` field, tier by tier (the whole query, then
the shorter suffixes of a qualified name), and the chunks of the first tier that finds any are
**named**. They go first: a definition whose whole qualified name is the query as typed, then
those with a name exactly so (case and all), then the rest, each group in the order BM25 gives it
for the query's words, times the usual boosts (a test file's after the code); the other chunks
follow as they were ranked (in a hybrid search, as fused). When they are pages in more than one
language, the reader's language's go first, then the default language's, then the rest's (the
translations of one `cd` page must not take every place). A name spelt like code
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
from ra_query.text.locales import base
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
    language_rank: Callable[[ChunkRecord], int] = lambda record: 0,
    preferred: "tantivy.Query | None" = None,
) -> tuple[list[tuple[ChunkRecord, float]], tuple[str, ...]]:
    """`found` with the chunks named by `text` first; (candidates, the named ids in order).

    `ranked` is the query's compiled words (it orders the named chunks BM25 did not reach);
    `filters` what every candidate must satisfy (trees, kinds); `boost` a chunk's score factor;
    `language_rank` a docs chunk's language's place (the reader's first, 0) and `preferred` what
    the chunks ranked 0 or 1 match (ra_query.search.pipeline).
    """
    import tantivy

    schema = store.index.schema

    def search(keys: list[str], only: "tantivy.Query | None") -> list[tuple[ChunkRecord, float]]:
        clauses = [(tantivy.Occur.Must, one_of(schema, NAME_FIELD, keys, 0.0))]
        if ranked is not None:
            clauses.append((tantivy.Occur.Should, ranked))
        clauses += [(tantivy.Occur.Must, q) for q in (filters, only) if q is not None]
        hits = searcher.search(tantivy.Query.boolean_query(clauses), limit=MAX_NAMED).hits
        records = [store.read(searcher, address) for _, address in hits]
        scores = [float(score) for score, _ in hits]
        return [(record, score * boost(record)) for record, score in zip(records, scores, strict=True)]

    def lookup(keys: list[str]) -> list[tuple[ChunkRecord, float]]:
        pairs = search(keys, None)
        translated = len({base(record.locale) for record, _ in pairs if record.locale}) > 1
        if translated and preferred is not None and len(pairs) == MAX_NAMED:
            # the translations of one page can take every place (`cd` in 40 languages, the short
            # ones scoring best): the reader's language's and the default's are looked up too
            ids = {record.id for record, _ in pairs}
            pairs += [pair for pair in search(keys, preferred) if pair[0].id not in ids]

        def order(pair: tuple[ChunkRecord, float]) -> tuple[bool, int, float, str]:
            # a name spelt like code (`EncodeContent`) wants the definition before a heading of
            # its name; among pages in several languages, the reader's before the translations
            record, score = pair
            rank = language_rank(record) if translated else 0
            return code_first and record.kind != "code", rank, -score, record.id

        return sorted(pairs, key=order)

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
    # a test block is named by its title (`test('.add()', …)` is `add`): after the definitions
    named.sort(key=lambda pair: pair[0].defines == "test")
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

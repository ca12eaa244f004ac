"""Evidence from above a definition: its file, and the project's docs (issue 30, seed 004's
hierarchical search).

Half the code questions an agent misses land in the wrong file: the words of the question are in
the file's summary (its path, docstring, imports and outline: the file's own chunk,
ra_build.document.code) more than in the one definition that answers it. And a question asked in
the user's words often matches a docs section that names the identifiers that do the work
(`raise_for_status`, `Client.timeout`) better than it matches their code. So two levels lend
their evidence to definitions:

- **files** (`file_weight`): the query's words are searched in the code files' own chunks as
  well; a code chunk in one of the best `FILES` files has its score multiplied by
  `1 + file_weight × (its file's score / the best file's)`, and then the code's scores are scaled
  back so that the best of them is what it was: the code's order changes, not its standing
  beside the docs. (Letting the best files' best definitions join the candidates, and not
  scaling back, both measured worse.)
- **docs** (`docs_weight`): the identifiers in code spans (`` `x` ``) of the best `DOCS` docs
  candidates are looked up by name (ra_query.text.names) among the definitions; each found one
  gains `docs_weight × that docs chunk's score`, and joins the candidates if it was not one.

Both work on BM25's candidates, before a hybrid search fuses them with the nearest by meaning:
what they add is scored in BM25's units.
"""

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from ra_query.artifacts.models import ChunkRecord
from ra_query.artifacts.schema import NAME_FIELD
from ra_query.search.compile import one_of
from ra_query.text.names import query_keys

if TYPE_CHECKING:
    import tantivy

    from ra_query.artifacts.store import Store

FILES = 10  # the best code files by their own chunk's score
DOCS = 5  # the best docs candidates whose code spans lend evidence
SPANS = 8  # the most identifiers one docs chunk lends to
PER_NAME = 3  # the most definitions one identifier reaches
_CODE_SPAN = re.compile(r"`([^`\n]{2,80})`")

Found = list[tuple[ChunkRecord, float]]


class Evidence:
    """What one search needs to look further than its candidates."""

    def __init__(
        self,
        store: "Store",
        searcher: "tantivy.Searcher",
        filters: "tantivy.Query | None",
        boost: Callable[[ChunkRecord], float],
    ) -> None:
        self.store = store
        self.searcher = searcher
        self.schema = store.index.schema
        self.filters = filters
        self.boost = boost

    def _search(self, *must: "tantivy.Query", should: "tantivy.Query | None" = None, limit: int) -> Found:
        import tantivy

        clauses = [(tantivy.Occur.Must, q) for q in must]
        if self.filters is not None:
            clauses.append((tantivy.Occur.Must, self.filters))
        if should is not None:
            clauses.append((tantivy.Occur.Should, should))
        hits = self.searcher.search(tantivy.Query.boolean_query(clauses), limit=limit).hits
        found: Found = []
        for score, address in hits:
            record = self.store.read(self.searcher, address)
            found.append((record, float(score) * self.boost(record)))
        return found

    def files(self, ranked: "tantivy.Query", found: Found, weight: float) -> Found:
        """`found` with each definition weighed by how well its file's own chunk matched."""
        import tantivy

        if weight <= 0 or not found:
            return found
        code = tantivy.Query.term_query(self.schema, "kind", "code")
        top_level = tantivy.Query.range_query(self.schema, "depth", tantivy.FieldType.Integer, 0, 0)
        files = self._search(ranked, code, top_level, limit=FILES)
        if not files:
            return found
        best = max(score for _, score in files) or 1.0
        share = {record.doc_id: score / best for record, score in files}
        weighed = [
            (r, s * (1.0 + weight * share.get(r.doc_id, 0.0)) if r.depth > 0 and r.kind == "code" else s)
            for r, s in found
        ]
        # the definitions keep their standing beside the rest (their best score stays): only their
        # order changes
        before = max((s for r, s in found if r.depth > 0 and r.kind == "code"), default=0.0)
        after = max((s for r, s in weighed if r.depth > 0 and r.kind == "code"), default=0.0)
        if after > 0:
            weighed = [(r, s * before / after if r.depth > 0 and r.kind == "code" else s) for r, s in weighed]
        weighed.sort(key=lambda pair: (-pair[1], pair[0].id))
        return weighed

    def docs(self, found: Found, weight: float) -> Found:
        """`found` with the definitions the best docs candidates name in code spans gaining their
        evidence."""
        import tantivy

        if weight <= 0:
            return found
        records = {record.id: record for record, _ in found}
        scores = {record.id: score for record, score in found}
        docs = [(record, score) for record, score in found if record.kind != "code"][:DOCS]
        code = tantivy.Query.term_query(self.schema, "kind", "code")
        for record, score in docs:
            spans = list(dict.fromkeys(_CODE_SPAN.findall(record.body)))[:SPANS]
            for span in spans:
                tiers = query_keys(span)
                if not tiers or len(span.split()) > 1:
                    continue
                keys = [key for level in tiers[0].levels for key in level]
                names = one_of(self.schema, NAME_FIELD, keys)
                for definition, _ in self._search(names, code, limit=PER_NAME):
                    records.setdefault(definition.id, definition)
                    scores[definition.id] = scores.get(definition.id, 0.0) + weight * score
        lent = [(records[i], score) for i, score in scores.items()]
        lent.sort(key=lambda pair: (-pair[1], pair[0].id))
        return lent

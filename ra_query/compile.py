"""Turn a parsed query (ra_query.query) into a tantivy query, with ra's field boosts.

Every word is analyzed exactly as the index analyzed the documents (ra_query.schema); a word
the analyzer splits into several tokens (`error-handling`, `api/handlers`) becomes a phrase
(DECISIONS 17). An unfielded word matches in any of title, tags, path (and its components)
and body, each with its configured boost (DECISIONS 16). `tree:` matches a tree name exactly.

With `fuzzy` set, each word also matches terms within the configured Levenshtein distance (a
word the analyzer splits needs all its parts, each fuzzy when long enough, in any order).
tantivy scores fuzzy matches with a constant, so the search layer only uses the fuzzy variant
when the exact query finds nothing; fuzzy results never compete with exact ones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ra_query.query import And, Node, Not, Phrase, Term

if TYPE_CHECKING:
    from collections.abc import Mapping

    import tantivy

TEXT_FIELDS = ("title", "tags", "path", "body")
# a fuzzy clause counts for this share of the field's boost: enough to rank among fuzzy hits
FUZZY_WEIGHT = 0.5
MIN_FUZZY_LENGTH = 4  # fuzzy matching of very short words finds mostly noise


class Compiler:
    """Compiles query nodes for one index; collects the analyzed terms for highlighting."""

    def __init__(
        self,
        schema: tantivy.Schema,
        analyzer: tantivy.TextAnalyzer,
        boosts: Mapping[str, float],
        fuzzy_distance: int = 0,
    ) -> None:
        self.schema = schema
        self.analyzer = analyzer
        self.boosts = boosts
        self.fuzzy_distance = fuzzy_distance
        self.terms: set[str] = set()

    def compile(self, node: Node) -> tantivy.Query | None:
        """The tantivy query for `node`, or None when it has nothing left to search for."""
        import tantivy

        if isinstance(node, Term | Phrase):
            return self._leaf(node)
        if isinstance(node, Not):
            return self.compile(node.item)
        if isinstance(node, And):
            clauses: list[tuple[tantivy.Occur, tantivy.Query]] = []
            for item in node.items:
                query = self.compile(item)
                if query is None:
                    continue
                occur = tantivy.Occur.MustNot if isinstance(item, Not) else tantivy.Occur.Must
                clauses.append((occur, query))
            if not any(occur == tantivy.Occur.Must for occur, _ in clauses):
                return None
            return _boosted(tantivy.Query.boolean_query(clauses), node.boost)
        should = [q for q in (self.compile(item) for item in node.items) if q is not None]
        if not should:
            return None
        query = tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in should])
        return _boosted(query, node.boost)

    def _leaf(self, node: Term | Phrase) -> tantivy.Query | None:
        import tantivy

        if node.field == "tree":
            return tantivy.Query.const_score_query(
                tantivy.Query.term_query(self.schema, "tree", node.text), 0.0
            )
        tokens: list[str] = self.analyzer.analyze(node.text)
        if not tokens:
            return None
        self.terms.update(tokens)
        fields = [node.field] if node.field else list(TEXT_FIELDS)
        clauses: list[tantivy.Query] = []
        for name in fields:
            boost = self.boosts.get(name, 1.0)
            targets = ["path", "path_components"] if name == "path" else [name]
            for target in targets:
                clauses.append(_boosted(self._match(target, tokens), boost))
                if self._fuzzy_ok(node, tokens):
                    clauses.append(_boosted(self._fuzzy(target, tokens), boost * FUZZY_WEIGHT))
        query = clauses[0] if len(clauses) == 1 else _any(clauses)
        return _boosted(query, node.boost)

    def _match(self, target: str, tokens: list[str]) -> tantivy.Query:
        import tantivy

        if len(tokens) == 1:
            return tantivy.Query.term_query(self.schema, target, tokens[0])
        words: list[str | tuple[int, str]] = list(tokens)
        return tantivy.Query.phrase_query(self.schema, target, words)

    def _fuzzy(self, target: str, tokens: list[str]) -> tantivy.Query:
        """Tokens within the fuzzy distance; a word the analyzer split (`Get-ADUsr`) needs all its
        parts, each fuzzy when long enough, in any order (tantivy has no fuzzy phrase)."""
        import tantivy

        def one(token: str) -> tantivy.Query:
            if len(token) < MIN_FUZZY_LENGTH:
                return tantivy.Query.term_query(self.schema, target, token)
            return tantivy.Query.fuzzy_term_query(self.schema, target, token, distance=self.fuzzy_distance)

        if len(tokens) == 1:
            return one(tokens[0])
        return tantivy.Query.boolean_query([(tantivy.Occur.Must, one(token)) for token in tokens])

    def _fuzzy_ok(self, node: Term | Phrase, tokens: list[str]) -> bool:
        return (
            self.fuzzy_distance > 0
            and isinstance(node, Term)
            and any(len(token) >= MIN_FUZZY_LENGTH for token in tokens)
        )


def _any(queries: list[tantivy.Query]) -> tantivy.Query:
    import tantivy

    return tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in queries])


def _boosted(query: tantivy.Query, boost: float) -> tantivy.Query:
    import tantivy

    return query if boost == 1.0 else tantivy.Query.boost_query(query, boost)


def tree_filter(schema: tantivy.Schema, trees: list[str]) -> tantivy.Query:
    """A zero-score clause that keeps only chunks of `trees` (the -t/--tree option)."""
    import tantivy

    terms = [tantivy.Query.term_query(schema, "tree", name) for name in trees]
    return tantivy.Query.const_score_query(_any(terms) if len(terms) > 1 else terms[0], 0.0)

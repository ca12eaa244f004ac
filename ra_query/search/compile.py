"""Turn a parsed query (ra_query.search.syntax) into one tantivy query that ranks chunks (DECISIONS 16–18).

What each part of a query does:

- **Plain words are ranked, not required.** Every chunk holding any of them is a candidate; BM25
  ranks chunks with more, and rarer, words first. A word typed twice counts twice.
- **Stop words never decide what matches**: when a query has other words, the stop words of the
  stemmer's language (`stopwords_of`) are left out.
- **Quoted phrases and `field:` terms are required**, `-draft` excludes, `a OR b` needs one side,
  `^N` weighs, `tree:` filters. (The search layer relaxes requirements that match nothing.)
- **In a query with Chinese or Japanese text**, its other words (`BIOS`, `gzip`) weigh
  `CJK_QUERY_OTHER_WEIGHT`: CJK text is searched as its pairs and characters, three terms a word.
- **A word the analyzer splits** (`IGF-1`, `error-handling`) counts as its parts, each a ranked
  word, plus a bonus where they stand together as that phrase, so chunks with the phrase rank
  first. Excluded (`-error-handling`), it excludes the phrase, not each part.
- **Inside `-x`** nothing is relaxed, fuzzy or typo-matched: an exclusion removes exactly what it
  names, never look-alikes.
- `strict` makes every plain word required: the AND that DECISIONS 18 started with.

How a word scores: BM25 over the combined `text` field (breadcrumb, tags and body as one field;
weight `boosts["text"]`) plus BM25 bonuses over `title`, `tags` and `path` (and its components)
with their weights (0 leaves a clause out). Each pair of consecutive plain words adds a
proximity bonus (`phrase_boost`: the two words at most one word apart). The weights were chosen
with bench/quality.py (docs/searching.md has the table). `body:x` searches `text`: the body is
stored, not indexed, and every word of it is in `text`, so `body:x` is x in the chunk's
searchable text (its body, breadcrumb and tags).

Words written together: a plain word of `COMPOUND_MIN` letters or more that no chunk holds, but
that is two or three words chunks hold joined (German `Shellskript`, `Zwischenrechner`; a linking
`s`, `es`, `n`, `en` or `e` allowed), is searched as those words, each at the word's weight
(`_compound`: the cut whose rarest part is the most common). Only a word no cut fits is a typo.

Typos (`fuzzy_distance` > 0): a plain word of four letters or more that no chunk holds matches
the words within that Levenshtein distance, with a tiny constant score (tantivy scores fuzzy
matches with a constant), so a chunk with the misspelt word ranks above one without it, but
below every chunk that matched a word exactly. With `fuzzy` set (the search layer's retry when
nothing matched), phrases and `field:` terms match within the distance too (a word the analyzer
split needs all its parts, each fuzzy when long enough, in any order).
"""

from __future__ import annotations

import itertools
import re
from typing import TYPE_CHECKING, Final

from ra_query.artifacts.schema import FILTER_FIELDS
from ra_query.errors import InputError
from ra_query.search.syntax import And, Node, Not, Or, Phrase, Term
from ra_query.sources.languages import KINDS, LANGUAGES, canonical_language
from ra_query.text.dictionary import is_english_word, spelling_variants
from ra_query.text.locales import has_cjk, has_hangul, korean_ending_first, normalized
from ra_query.text.platforms import PLATFORM_WEIGHT, platform_folders
from ra_query.text.samewords import SAME_WORDS_WEIGHT, same_words

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping, Sequence

    import tantivy

    from ra_query.artifacts.schema import Analyzer

# the fields a word is scored in, in clause order; `path` also covers `path_components`
SCORED_FIELDS = ("text", "title", "tags", "path")
# the index field a `field:` term searches, where it is not the field of that name: `body` is
# stored, not indexed (ra_query.artifacts.schema.STORED_ONLY)
SEARCHED_AS = {"body": "text"}
# the score of a typo match: below any exact match (BM25 of one word is rarely under 0.1), but
# enough to rank a chunk with a misspelt word above one without it
TYPO_SCORE = 0.01
# in the retry, a fuzzy clause counts for this share of the field's weight
FUZZY_WEIGHT = 0.5
MIN_FUZZY_LENGTH = 4  # fuzzy matching of very short words finds mostly noise
MAX_TYPOS = 16  # a fuzzy automaton costs memory: words past these are only matched exactly
PROXIMITY_SLOP = 1
MAX_PROXIMITY_PAIRS = 32  # a pasted page of text must not become thousands of phrase queries
# the bonus of a split word's parts standing together (`IGF-1`), on top of the parts' own scores
SPLIT_PHRASE_BOOST = 1.0
# a query word's stem in its own language (`Compiler.stems`), as a share of the word's weight
STEM_WEIGHT = 1.0
# a word of a query that also holds Chinese or Japanese: such text is searched as its pairs and
# its Han characters too (ra_query.text.locales.cjk_terms), three terms for a word of two, so
# `BIOS` beside `版本` weighs what `版本` does (bench/locales.py, with the Latin words split from
# the CJK text around them: Chinese hit@5 0.657 → 0.714; 2: 0.686); a number is no word (`5回`)
CJK_QUERY_OTHER_WEIGHT = 3.0
# a word no chunk holds may be words written together (German `Shellskript`, `Logdatei`,
# `shellscript`): at least this long, in parts of at least COMPOUND_PART characters that chunks
# hold, joined directly or by a linking letter or two (`Arbeit·s·verzeichnis`); at most
# MAX_COMPOUNDS such words a query (each tries every cut: a pasted page must not try thousands)
COMPOUND_MIN = 8
MAX_COMPOUNDS = 16
COMPOUND_PART = 4
HANGUL_COMPOUND_MIN = 4
HANGUL_COMPOUND_PART = 2
COMPOUND_LINKS = ("", "s", "es", "n", "en", "e")


class Compiler:
    """Compiles query nodes for one index; records what it did for highlighting and --explain."""

    def __init__(
        self,
        schema: tantivy.Schema,
        analyzer: Analyzer,
        boosts: Mapping[str, float],
        *,
        searcher: tantivy.Searcher | None = None,
        fuzzy_distance: int = 0,
        fuzzy: bool = False,
        phrase_boost: float = 0.0,
        is_stopword: Callable[[str], bool] | None = None,
        strict: bool = False,
        relax: bool = False,
        code_words: Mapping[str, tuple[tuple[str, str], ...]] | None = None,
        code_words_weight: float = 0.0,
        stems: Callable[[str], str] | None = None,
        same_words_language: str | None = None,
        trees: Collection[str] | None = None,
    ) -> None:
        self.schema = schema
        self.analyzer = analyzer
        self.boosts = boosts
        self.searcher = searcher
        self.fuzzy_distance = fuzzy_distance
        self.fuzzy = fuzzy  # every word may match within the distance (the retry)
        self.phrase_boost = phrase_boost
        self.is_stopword = is_stopword
        self.strict = strict
        self.relax = relax  # nothing is required: every part is ranked (a query that found nothing)
        self.code_words = code_words or {}  # token → its code synonyms' tokens (ra_query.text.codewords)
        self.code_words_weight = code_words_weight
        # a word's stems in the query's language, when it has a stemmer of its own (German in an
        # English index) or is Korean (the word without its particle): the documents in it hold
        # theirs (ra_query.text.locales.language_stems, korean_stems)
        self.stems = stems
        # the Chinese, Japanese or Korean query's language: its words of one meaning are searched
        # too (ra_query.text.samewords)
        self.same_words_language = same_words_language
        self.trees = trees  # the index's trees, which `tree:x` must name (None: not checked)
        self.synonyms: dict[str, tuple[str, str]] = {}  # token searched → (query word, its code word)
        self.same: dict[str, list[str]] = {}  # a word of the query → its words of one meaning searched
        self.platforms: list[str] = []  # the path folders of the systems the query names
        self.terms: set[str] = set()  # analyzed tokens of every searched word, for highlighting
        self.dropped: list[str] = []  # stop words left out
        self.typos: list[str] = []  # words no chunk holds, matched within the fuzzy distance
        self.spellings: dict[str, str] = {}  # a word no chunk holds → its other spelling searched
        self.unmatched: list[str] = []  # words no chunk holds that are words, not typos (Korean, English)
        self.compounds: dict[str, list[str]] = {}  # a word no chunk holds → the words it is made of
        self._cut_tries = 0  # words `_compound` tried to cut (MAX_COMPOUNDS)
        self._held_as: dict[str, str | None] = {}  # `_held`'s answers: a cut tries each part often
        self.required = False  # whether any compiled part is required
        self._drop_stopwords = False
        self._negated = 0  # inside a `-x`: exclude exactly what it names (see the module docstring)
        self._constraints_only = False  # `constraints`: leave the ranked words out

    def compile(self, node: Node) -> tantivy.Query | None:
        """The tantivy query for `node`, or None when it has nothing left to search for (no word
        that scores: only punctuation, only `tree:` filters)."""
        self._drop_stopwords = self.is_stopword is not None and _has_content(node, self.is_stopword)
        query, _ = self._node(node)
        return query if self.terms else None

    def constraints(self, node: Node) -> tantivy.Query | None:
        """What `node` requires of a chunk, its ranked words left out: phrases, `field:` terms,
        exclusions and `tree:` filters, or every word under `strict` (None: nothing) — what a
        hit found by its vector must satisfy too (ra_query.search.hybrid)."""
        self._constraints_only = True
        try:
            query, _ = self._node(node)
        finally:
            self._constraints_only = False
        return query

    # ---- nodes ----------------------------------------------------------------------------------

    def _node(self, node: Node) -> tuple[tantivy.Query | None, bool]:
        """(query, required): a required part must match; a ranked one only scores."""
        if isinstance(node, Term) and _is_plain(node) and not self.strict and not self._negated:
            return self._and(And((node,)))  # its boost weighs its tokens
        if isinstance(node, Phrase) and node.field is None and self.relax and not self._negated:
            return self._and(And(tuple(Term(word) for word in node.text.split()), node.boost))
        if isinstance(node, Term | Phrase):
            return self._leaf(node)
        if isinstance(node, Not):  # only reached as an And's item; see _and
            return self._node(node.item)
        if isinstance(node, And):
            return self._and(node)
        return self._or(node)

    def _and(self, node: And) -> tuple[tantivy.Query | None, bool]:
        import tantivy

        must: list[tantivy.Query] = []  # required parts
        should: list[tantivy.Query] = []  # ranked parts
        filters: list[tantivy.Query] = []  # tree: — required, but never relaxed, and score nothing
        must_not: list[tantivy.Query] = []
        words: list[Term] = []  # plain words, ranked together
        for item in _flattened(node.items):
            if isinstance(item, Not):
                self._negated += 1
                query, _ = self._node(item.item)
                self._negated -= 1
                if query is not None:
                    must_not.append(query)
            elif isinstance(item, Term) and item.field in FILTER_FIELDS:
                filters.append(self._filter(item.field, item.text))
            elif isinstance(item, Term) and _is_plain(item) and not self.strict and not self._negated:
                words.append(item)
            else:
                query, required = self._node(item)
                if query is not None:
                    (must if required else should).append(query)
        if self._constraints_only:
            return self._required_only(must + filters, must_not, node.boost)
        ranked, bonus = self._ranked(words)
        should += ranked
        required = bool(must)
        self.required = self.required or required
        if not must and not should:
            if not filters:
                return None, False
        elif not must:  # ranked words alone: any one of them admits a chunk
            must, should = [should[0] if len(should) == 1 else _any(should)], []
        should += bonus
        clauses = [(tantivy.Occur.Must, q) for q in must + filters]
        clauses += [(tantivy.Occur.Should, q) for q in should]
        clauses += [(tantivy.Occur.MustNot, q) for q in must_not]
        if len(clauses) == 1:
            return _boosted(clauses[0][1], node.boost), required
        return _boosted(tantivy.Query.boolean_query(clauses), node.boost), required

    def _required_only(
        self, must: list[tantivy.Query], must_not: list[tantivy.Query], boost: float
    ) -> tuple[tantivy.Query | None, bool]:
        """An And's required parts and exclusions alone (`constraints`)."""
        import tantivy

        if not must and not must_not:
            return None, False
        clauses = [(tantivy.Occur.Must, q) for q in must or [tantivy.Query.all_query()]]
        clauses += [(tantivy.Occur.MustNot, q) for q in must_not]
        return _boosted(tantivy.Query.boolean_query(clauses), boost), True

    def _ranked(self, words: list[Term]) -> tuple[list[tantivy.Query], list[tantivy.Query]]:
        """Plain words as ranked clauses, and the bonuses for words found together.

        Each distinct token counts as often as it was typed (a word's boost multiplies). A word
        the analyzer splits (`IGF-1`) contributes its parts as words, plus a bonus where they
        stand together as a phrase, so chunks with the phrase rank first. Consecutive tokens found
        at most one word apart add `phrase_boost`.
        """
        weights: dict[str, float] = {}
        typed: dict[str, str] = {}  # token → the word it came from, for --explain
        sequence: list[str] = []  # the tokens in query order, for the proximity bonus
        phrases: dict[tuple[str, ...], float] = {}
        # in a query with Chinese or Japanese text, its other words weigh as much as a CJK word
        other = CJK_QUERY_OTHER_WEIGHT if any(has_cjk(word.text) for word in words) else 1.0
        for word in words:
            tokens: list[str] = self.analyzer.analyze(word.text)
            if self._drop_stopwords and self.is_stopword is not None:
                kept = _without_stopwords(word.text, tokens, self.is_stopword)
                if not kept:
                    self.dropped.append(word.text)
                    continue
            else:
                kept = tokens
            if len(tokens) > 1:
                phrases[tuple(tokens)] = max(phrases.get(tuple(tokens), 0.0), word.boost)
            for token in kept:
                plain = other == 1.0 or has_cjk(token) or token.isdigit()  # `5回`: a count, no word
                weight = word.boost if plain else word.boost * other
                weights[token] = weights.get(token, 0.0) + weight
                typed.setdefault(token, word.text)
            sequence += kept
            if self.stems is not None:
                for token in self.analyzer.analyze(self.stems(word.text)):
                    if token not in kept:
                        weights[token] = weights.get(token, 0.0) + word.boost * STEM_WEIGHT
                        typed.setdefault(token, word.text)
        self.terms.update(weights)
        fields = self._fields(None)
        ranked = [self._ranked_token(fields, token, w, typed[token]) for token, w in weights.items()]
        ranked += self._code_synonyms(weights, typed)
        ranked += self._same_words(words, weights)
        bonus = [
            _boosted(self._scored({"text": 1.0}, list(tokens), fuzzy_ok=False), boost * SPLIT_PHRASE_BOOST)
            for tokens, boost in phrases.items()
        ]
        return ranked, bonus + self._proximity(sequence) + self._platforms(words)

    def _same_words(self, words: list[Term], weights: Mapping[str, float]) -> list[tantivy.Query]:
        """The words of one meaning (ra_query.text.samewords) of what a Chinese, Japanese or
        Korean query says, that some chunk holds, each weighing what the word it stands for
        weighs (`SAME_WORDS_WEIGHT`): a Chinese or Japanese one as its pairs of characters (its
        single characters would match anything)."""
        if not self.same_words_language or self._negated:
            return []
        text = " ".join(word.text for word in words)
        extra: dict[str, float] = {}
        for word, other in same_words(text, self.same_words_language):
            tokens = self.analyzer.analyze(other)
            tokens = [t for t in tokens if len(t) > 1 or not has_cjk(t)]
            held = [t for t in tokens if t not in weights and self._held_somewhere(t)]
            if not held:
                continue
            # a word of three characters is two pairs, one of two a single pair: each pair of the
            # shorter word weighs as many of the longer's
            own = [t for t in self.analyzer.analyze(word) if len(t) > 1 or not has_cjk(t)]
            weight = SAME_WORDS_WEIGHT * max(1.0, len(own) / len(tokens))
            for token in held:
                extra[token] = max(extra.get(token, 0.0), weight)
            self.same.setdefault(word, []).append(other)
        self.terms.update(extra)
        return self._extra_words(extra)

    def _platforms(self, words: list[Term]) -> list[tantivy.Query]:
        """A bonus for the path folders of the operating systems the query names (`맥에서` →
        `osx/`, `macos/`; ra_query.text.platforms) that some chunk's path has, each weighing
        `PLATFORM_WEIGHT` words: a chunk its words found ranks higher in one, and no chunk is
        found for its path alone."""
        if self._negated:
            return []
        # a path is indexed as its words are, stemmed: the folder `windows` is the token `window`
        found = [
            (folder, tokens) for folder in platform_folders(" ".join(word.text for word in words))
            if (tokens := self.analyzer.analyze(folder))
            and all(self._held_somewhere(token, "path_components") for token in tokens)
        ]  # fmt: skip
        if not found:
            return []
        self.platforms = [folder for folder, _ in found]
        path = {"path": 1.0}  # the path and its components
        return [_boosted(self._scored(path, tokens, fuzzy_ok=False), PLATFORM_WEIGHT) for _, tokens in found]

    def _code_synonyms(self, weights: Mapping[str, float], typed: Mapping[str, str]) -> list[tantivy.Query]:
        """The code synonyms of the ranked tokens (`folder` → `dir`, `directory`) that some chunk
        holds, each weighing `code_words_weight` of its word: the words an agent says reach the
        words code is written in. (A search only gets the table where the index has code.)"""
        if not self.code_words or self.code_words_weight <= 0 or self._negated:
            return []
        extra: dict[str, float] = {}
        for token, weight in weights.items():
            for other, word in self.code_words.get(token, ()):
                if other in weights or not self._held_somewhere(other):
                    continue
                if weight * self.code_words_weight > extra.get(other, 0.0):
                    extra[other] = weight * self.code_words_weight
                    self.synonyms[other] = (typed[token], word)
        return self._extra_words(extra)

    def _extra_words(self, weights: Mapping[str, float]) -> list[tantivy.Query]:
        """Words the query did not type (code words, words of one meaning), each ranked at its
        weight in every scored field."""
        fields = self._fields(None)
        return [_boosted(self._scored(fields, [token], fuzzy_ok=False), w) for token, w in weights.items()]

    def _held_somewhere(self, token: str, field: str = "text") -> bool:
        """Whether some chunk holds `token` in `field` (always, without a searcher to ask)."""
        return self.searcher is None or self.searcher.doc_freq(field, token) > 0

    def _ranked_token(
        self, fields: Mapping[str, float], token: str, weight: float, word: str
    ) -> tantivy.Query:
        """One ranked token: scored in `fields`; when no chunk holds it, as the words it is written
        together from, as its other spelling, as itself (a word, not a typo) or as a typo of `word`."""
        import tantivy

        def as_is() -> tantivy.Query:
            return _boosted(self._scored(fields, [token], fuzzy_ok=True), weight)

        if self.fuzzy or self._negated or self.searcher is None or self._held_somewhere(token):
            return as_is()
        if (
            len(token) >= (HANGUL_COMPOUND_MIN if has_hangul(token) else COMPOUND_MIN)
            and token.isalpha()
            and self._cut_tries < MAX_COMPOUNDS
            and (parts := self._cut(token))
        ):
            self.compounds[word] = parts
            self.terms.update(parts)
            return _any([_boosted(self._scored(fields, [part], fuzzy_ok=False), weight) for part in parts])
        if (spelt := self._other_spelling(word)) is not None:
            self.spellings[word] = spelt
            self.terms.add(spelt)
            return _boosted(self._scored(fields, [spelt], fuzzy_ok=False), weight)
        if self.fuzzy_distance <= 0 or len(token) < MIN_FUZZY_LENGTH or len(self.typos) >= MAX_TYPOS:
            return as_is()
        if has_hangul(token) or is_english_word(word):
            # a word, not a typo: one edit away is another word (a Hangul syllable is a morpheme;
            # ra_query.text.dictionary)
            self.unmatched.append(word)
            return as_is()
        self.typos.append(word)
        fuzzy = tantivy.Query.fuzzy_term_query(self.schema, "text", token, distance=self.fuzzy_distance)
        return _boosted(fuzzy, TYPO_SCORE * weight)

    def _other_spelling(self, word: str) -> str | None:
        """The token of `word`'s other spelling (`color` → `colour`, `serialise` → `serialize`;
        ra_query.text.dictionary) that some chunk holds, or None."""
        for variant in spelling_variants(word):
            held = self._held(variant)
            if held is not None:
                return held
        return None

    def _cut(self, token: str) -> list[str] | None:
        """`_compound`, counted against MAX_COMPOUNDS."""
        self._cut_tries += 1
        return self._compound(token)

    def _compound(self, token: str, depth: int = 2) -> list[str] | None:
        """`token` (no chunk holds it) as the words it is made of that chunks hold, at most three
        (`shellskript` → `shell`, `skript`): of the ways to cut it, the one whose rarest part is
        the most common, a cut without a linking letter before one with; None when none fits."""
        best: tuple[bool, int, list[str]] | None = None
        hangul = has_hangul(token)
        least, links = (HANGUL_COMPOUND_PART, ("",)) if hangul else (COMPOUND_PART, COMPOUND_LINKS)
        for cut in range(least, len(token) - least + 1):
            left = self._held(token[:cut])
            if left is None:
                continue
            rest = token[cut:]
            for link in links:
                right = rest[len(link) :]
                if not rest.startswith(link) or len(right) < least or (hangul and korean_ending_first(right)):
                    continue  # (a Korean word's particle or ending: its stem is searched already)
                whole = self._held(right)
                parts = [left, whole] if whole is not None else None
                if parts is None and depth > 1 and len(right) >= 2 * least:
                    more = self._compound(right, depth - 1)
                    parts = [left, *more] if more else None
                if parts is None:
                    continue
                rarest = min(self._df(part) for part in parts)
                key = (not link, rarest, parts)
                if best is None or key[:2] > best[:2]:
                    best = key
        return best[2] if best is not None else None

    def _df(self, token: str) -> int:
        """How many chunks hold `token` in `text`."""
        assert self.searcher is not None
        return int(self.searcher.doc_freq("text", token))

    def _held(self, text: str) -> str | None:
        """`text` as the one analyzed token some chunk holds, else None."""
        assert self.searcher is not None
        if text not in self._held_as:
            tokens: list[str] = self.analyzer.analyze(text)
            held = len(tokens) == 1 and self._df(tokens[0]) > 0
            self._held_as[text] = tokens[0] if held else None
        return self._held_as[text]

    def _or(self, node: Or) -> tuple[tantivy.Query | None, bool]:
        import tantivy

        compiled = [self._node(item) for item in node.items]
        alternatives = [(q, required) for q, required in compiled if q is not None]
        if not alternatives:
            return None, False
        query = tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q, _ in alternatives])
        return _boosted(query, node.boost), all(required for _, required in alternatives)

    def _filter(self, field: str, value: str) -> tantivy.Query:
        """`tree:x`, `kind:code`, `lang:go`, `lang:ja`: a zero-score clause on a raw field. Kinds
        and languages are lower case (`lang:Go` is `lang:go`), a natural language as its locale
        (`lang:pt_BR` is `lang:pt-br`; `lang:pt` any Portuguese); tree names are matched as written."""
        import tantivy

        if field == "lang":
            locale = normalized(value) if canonical_language(value) is None else None
            known = [*sorted(LANGUAGES), "or a language code (ja, de, pt-br)"]
            value = locale or _known(canonical_language(value), f"lang:{value}", "languages", known)
        elif field == "kind":
            value = _known(value.lower() if value.lower() in KINDS else None, f"kind:{value}", "kinds", KINDS)
        elif field == "tree" and self.trees is not None:
            value = _known(
                value if value in self.trees else None, f"tree:{value}", "trees", sorted(self.trees)
            )
        return tantivy.Query.const_score_query(tantivy.Query.term_query(self.schema, field, value), 0.0)

    def _fields(self, field: str | None) -> dict[str, float]:
        """The fields a word is scored in, with their weights: one named field, or all of them."""
        if field is not None:
            return {SEARCHED_AS.get(field, field): 1.0}
        fields = {name: self.boosts.get(name, 0.0) for name in SCORED_FIELDS}
        return {name: w for name, w in fields.items() if w > 0} or {"text": 1.0}

    def _leaf(self, node: Term | Phrase) -> tuple[tantivy.Query | None, bool]:
        """A required word or phrase (a quoted phrase, a `field:` term, a word under `strict`), or
        what an exclusion names (a split word as its phrase)."""
        if node.field in FILTER_FIELDS:
            return self._filter(node.field, node.text), True
        tokens: list[str] = self.analyzer.analyze(node.text)
        if not tokens:
            return None, False
        query = self._scored(self._fields(node.field), tokens, fuzzy_ok=isinstance(node, Term))
        if self._negated:  # excluded: nothing to highlight, nothing a relaxed query could drop
            return _boosted(query, node.boost), False
        self.terms.update(tokens)
        self.required = self.required or not self.relax
        return _boosted(query, node.boost), not self.relax

    # ---- scoring --------------------------------------------------------------------------------

    def _scored(self, fields: Mapping[str, float], tokens: list[str], fuzzy_ok: bool) -> tantivy.Query:
        """`tokens` (one word, or a phrase) in each of `fields`, each clause with its weight.

        When `text` is among the fields, a chunk must hold the word in its text; the other fields
        only add their bonus. So a chunk with no text of its own (a heading with only
        sub-headings, a document node whose text sits under its h1) is never a candidate for its
        title alone: the chunks below it, whose text includes their breadcrumb, stand for it.
        """
        import tantivy

        clauses: list[tantivy.Query] = []
        for name, weight in fields.items():
            for target in ("path", "path_components") if name == "path" else (name,):
                clauses.append(_boosted(self._match(target, tokens), weight))
        fuzzy = fuzzy_ok and self.fuzzy and not self._negated and self._fuzzy_ok(tokens)
        if fuzzy:  # a chunk's text holds its title: no need to look at both
            targets = ["text"] if "text" in fields else list(fields)
            for name in targets:
                weight = fields[name] * FUZZY_WEIGHT
                for target in ("path_components",) if name == "path" else (name,):
                    clauses.append(_boosted(self._fuzzy(target, tokens), weight))
        if "text" in fields and not fuzzy:
            bonus = [(tantivy.Occur.Should, q) for q in clauses[1:]]
            return tantivy.Query.boolean_query([(tantivy.Occur.Must, clauses[0]), *bonus])
        return _any(clauses)

    def _match(self, target: str, tokens: list[str]) -> tantivy.Query:
        import tantivy

        if len(tokens) == 1:
            return tantivy.Query.term_query(self.schema, target, tokens[0])
        words: list[str | tuple[int, str]] = list(tokens)
        return tantivy.Query.phrase_query(self.schema, target, words)

    def _proximity(self, tokens: list[str]) -> list[tantivy.Query]:
        """A bonus for each pair of consecutive words found close together in the text."""
        import tantivy

        if self.phrase_boost <= 0 or self.fuzzy:
            return []
        pairs = dict.fromkeys((a, b) for a, b in itertools.pairwise(tokens) if a != b)
        pairs = dict.fromkeys(itertools.islice(pairs, MAX_PROXIMITY_PAIRS))
        return [
            _boosted(
                tantivy.Query.phrase_query(self.schema, "text", [a, b], slop=PROXIMITY_SLOP),
                self.phrase_boost,
            )
            for a, b in pairs
        ]

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

    def _fuzzy_ok(self, tokens: list[str]) -> bool:
        return self.fuzzy_distance > 0 and any(len(token) >= MIN_FUZZY_LENGTH for token in tokens)


def _is_plain(node: Node) -> bool:
    """An unfielded word outside quotes: ranked, not required."""
    return isinstance(node, Term) and node.field is None


def _flattened(items: tuple[Node, ...]) -> list[Node]:
    """`items` with each unboosted group of plain words opened up: `(a b) c` ranks as `a b c`.

    Parentheses in a sentence ("TSS (Time Sharing System)") group nothing when words are
    ranked; opened up, their words count with the others and stand beside their neighbours.
    """
    out: list[Node] = []
    for item in items:
        if isinstance(item, And) and item.boost == 1.0 and all(_is_plain(i) for i in item.items):
            out += item.items
        else:
            out.append(item)
    return out


_PIECE = re.compile(r"[^\W_]+")  # what the analyzer's tokenizer keeps, before it lowercases and stems


_CONTRACTION = re.compile(r"[^\W_]['’][^\W_]")


def _pieces(text: str) -> list[str]:
    return _PIECE.findall(text)


# abbreviations a sentence is written with, in any language (`e.g.`, `i.e.`, `z.B.`): each is
# letters the tokenizer splits (`e`, `g`) and searched as a phrase, so the chunks that happen to
# say "e.g." ranked above the one the question is about (a question of bench/code_search.py)
ABBREVIATIONS: Final = frozenset(
    "e.g. eg. i.e. ie. etc. cf. vs. viz. al. z.b. d.h. u.a. usw. bzw. p.ex. c.-à-d.".split()  # noqa: SIM905
)


def _without_stopwords(text: str, tokens: list[str], is_stopword: Callable[[str], bool]) -> list[str]:
    """`tokens` (the analyzed `text`) less those whose piece is a stop word.

    A contraction of stop words (`I'd`, `don't`) goes, as does an abbreviation of a sentence
    (`ABBREVIATIONS`: `e.g.`, `etc.`, written with its dots); any other word made only of stop
    words (`AT&T`) is kept whole: it names something.
    """
    if text.lower().rstrip(",;:)?!") in ABBREVIATIONS:
        return []
    pieces = _pieces(text)
    if len(pieces) != len(tokens):  # the tokenizer split differently: judge the word as a whole
        return [] if is_stopword(text) else tokens
    kept = [token for piece, token in zip(pieces, tokens, strict=True) if not is_stopword(piece)]
    if kept or len(pieces) == 1 or _CONTRACTION.search(text):
        return kept
    return tokens


def _has_content(node: Node, is_stopword: Callable[[str], bool]) -> bool:
    """Whether `node` holds something besides stop words (then the stop words can go).

    A `tree:` filter scores nothing, so it is not something else to search for.
    """
    if isinstance(node, Term) and node.field in FILTER_FIELDS:
        return False
    if isinstance(node, Term | Phrase):
        return not _is_plain(node) or not all(is_stopword(piece) for piece in _pieces(node.text))
    if isinstance(node, Not):
        return False
    return any(_has_content(item, is_stopword) for item in node.items)


def _any(queries: list[tantivy.Query]) -> tantivy.Query:
    import tantivy

    return tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in queries])


def _known(value: str | None, written: str, what: str, known: Sequence[str]) -> str:
    """`value`, or an error naming the values there are when it is None."""
    if value is None:
        raise InputError(f"{written}: no such {what[:-1]} — the {what}: {', '.join(known)}")
    return value


def _boosted(query: tantivy.Query, boost: float) -> tantivy.Query:
    import tantivy

    return query if boost == 1.0 else tantivy.Query.boost_query(query, boost)


def tree_filter(schema: tantivy.Schema, trees: list[str], field: str = "tree") -> tantivy.Query:
    """A zero-score clause that keeps only chunks of `trees` (the -t/--tree option), or of
    the kinds given to `--kind` (`field` "kind")."""
    return one_of(schema, field, trees, 0.0)


def one_of(schema: tantivy.Schema, field: str, values: Sequence[str], score: float = 1.0) -> tantivy.Query:
    """The chunks whose raw `field` is one of `values`, each scored `score`: what tantivy's
    term_set_query matches and scores, a third of its cost for a few dozen values (it walks the
    term dictionary with an automaton; a term query per value looks each up)."""
    import tantivy

    terms = [tantivy.Query.term_query(schema, field, value) for value in values]
    return tantivy.Query.const_score_query(_any(terms) if len(terms) != 1 else terms[0], score)

"""ra's query language (DECISIONS 18): a hand-written parser from query text to a small AST.

Grammar, loosest binding first::

    query    := or_expr                                  empty or blank text is no query at all
    or_expr  := and_expr ( OR and_expr )*                upper-case OR only; or, and, not are words
    and_expr := unary unary*                             juxtaposition: the items side by side
    unary    := "-" operand | operand                    "-" negates only at the start of a token,
                                                         and not a flag (`-j`, `-xvf`, `-O2`)
    operand  := primary ( "^" NUMBER )?                  no space before "^"; NUMBER > 0
    primary  := WORD | "phrase" | "(" or_expr ")" | FIELD ":" ( WORD | "phrase" | "(" or_expr ")" )

What juxtaposition means is the compiler's business (ra_query.search.compile): plain words are ranked,
not required. FIELD is one of `FIELDS`, spelt in lowercase as tantivy spells it. Any other `x:y`
(`std::vector`, `http://x`, `DEC:1`) is a plain word for the analyzer to split. A `-` inside a
word (`error-handling`) or doubled (`--strict`) is part of the word; a lone `-` (`Homebrew - a
package manager`) separates words. A `-` before one to three ASCII letters or digits that end there
(`-j`, `-xvf`, `-O2`, `-h/--help`) is a command-line flag, not an exclusion: a word, searched
(an agent asking "where is the -j option declared" wants `j`, and excluding a one-letter word
would exclude nothing worth naming); `-(js)` excludes a short word. Given the stop words, a
query that reads as a sentence (a stop word outside fields, phrases and exclusions) reads every
`-word` of ASCII letters as a word (`like find -xdev`); `-(word)` still excludes. A field on a
group applies to every word and phrase in it that names no field of its own.

Every and-group (the whole query, a group, one side of an OR) needs at least one thing that must
match: a group made only of negations is an error rather than a query that silently matches
nothing. Groups nest at most `MAX_DEPTH` deep, so parsing never approaches Python's recursion
limit, and the parser runs in time linear in the length of the query.

`parse_query` raises on a syntax error (`--strict`); `read_query`, what searches use by default,
never does: it repairs the text (`read_leniently`) and says how it read it.
"""

import enum
import re
from collections.abc import Callable
from typing import NamedTuple, NoReturn, TypeAlias, TypeVar

from ra_query.errors import QuerySyntaxError

FIELDS: tuple[str, ...] = ("title", "tags", "body", "path", "tree", "kind", "lang")
MAX_DEPTH = 64
# tantivy scores are 32-bit floats: a larger boost would only push scores towards infinity
MAX_BOOST = 1000.0

_SPACE = re.compile(r"\s+")
_RUN = re.compile(r'[^\s()"^]+')  # a word: up to whitespace, a parenthesis, a quote or a caret
_NUMBER = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_OR = frozenset({"OR"})
_FALLBACK_SPLIT = re.compile(r'[\s()"]+')
# after a `-`: one to three ASCII letters or digits that end there — a flag (`-j`, `-xvf`), not an
# exclusion (`-max_depth` and `-日本` are words excluded)
_FLAG = re.compile(r"[A-Za-z0-9]{1,3}(?![A-Za-z0-9_])")


def _same_node(self: tuple[object, ...], other: object) -> bool:
    return type(other) is type(self) and tuple.__eq__(self, other)  # pyright: ignore[reportUnknownMemberType]


def _other_node(self: tuple[object, ...], other: object) -> bool:
    return not _same_node(self, other)


def _node_hash(self: tuple[object, ...]) -> int:
    return hash((type(self).__name__, *self))


_Class = TypeVar("_Class", bound=type)


def _typed_equality(cls: _Class) -> _Class:
    """Make a node class's ==, != and hash compare its type too.

    The nodes are NamedTuples (cheap to define: see ra_query.artifacts.models), and tuples compare by
    their items alone: Term("a") would equal Phrase("a"), both being ("a", None, 1.0).
    """
    for name, method in (("__eq__", _same_node), ("__ne__", _other_node), ("__hash__", _node_hash)):
        setattr(cls, name, method)
    return cls


@_typed_equality
class Term(NamedTuple):
    """One word, matched after analysis; `field` None means every searchable field."""

    text: str
    field: str | None = None
    boost: float = 1.0


@_typed_equality
class Phrase(NamedTuple):
    """Words that must appear together in this order (whitespace inside is normalised)."""

    text: str
    field: str | None = None
    boost: float = 1.0


@_typed_equality
class And(NamedTuple):
    """Every item must match (negated items must not)."""

    items: "tuple[Node, ...]"
    boost: float = 1.0


@_typed_equality
class Or(NamedTuple):
    """At least one item must match."""

    items: "tuple[Node, ...]"
    boost: float = 1.0


@_typed_equality
class Not(NamedTuple):
    """The item must not match; only ever appears among the items of an `And`."""

    item: "Node"


Node: TypeAlias = Term | Phrase | And | Or | Not


# ---- errors -------------------------------------------------------------------------------------

ONLY_NEGATIONS = "only negations"  # the repair in read_query drops such a group's exclusion whole
_OR_HINT = "put a word, phrase or group on both sides of OR, e.g. a OR b"
_BOOST_HINT = "put a positive number right after '^', e.g. word^2 or word^0.5"
_STRAY_HINT = "this ) closes nothing; remove it or add a ( before it"
_UNCLOSED_HINT = "this ( is never closed; add a ) to end the group"
_EMPTY_GROUP_HINT = "put at least one word between the parentheses, or remove them"


def _field_hint(field: str) -> str:
    return f'write {field}:word, {field}:"a phrase" or {field}:(a OR b), with no space after the colon'


# ---- lexer --------------------------------------------------------------------------------------


class _Kind(enum.Enum):
    WORD = enum.auto()
    PHRASE = enum.auto()
    LPAREN = enum.auto()
    RPAREN = enum.auto()
    MINUS = enum.auto()
    CARET = enum.auto()  # text: what follows the caret up to the end of the word
    FIELD = enum.auto()  # text: the field name; the token covers `name:`
    ERROR = enum.auto()  # text: what went wrong; raised only when the parser reaches it


class _Token(NamedTuple):
    kind: _Kind
    text: str
    start: int
    end: int


_OPERAND_START = frozenset({_Kind.WORD, _Kind.PHRASE, _Kind.LPAREN, _Kind.FIELD})
_LEX_HINTS = {
    "unterminated phrase": 'this " is never closed; add a " to end the phrase',
    "empty phrase": "put words between the quotes, or remove them",
}


def _lex(query: str) -> list[_Token]:
    """Split `query` into tokens; a lexical error becomes a final ERROR token.

    Deferring the error lets the parser report whichever problem comes first in the text.
    """
    tokens: list[_Token] = []
    i, n = 0, len(query)
    while i < n:
        c = query[i]
        if c.isspace():
            space = _SPACE.match(query, i)
            i = space.end() if space else i + 1
        elif c in "()":
            tokens.append(_Token(_Kind.LPAREN if c == "(" else _Kind.RPAREN, c, i, i + 1))
            i += 1
        elif c == '"':
            close = query.find('"', i + 1)
            if close < 0:
                tokens.append(_Token(_Kind.ERROR, "unterminated phrase", i, n))
                break
            text = " ".join(query[i + 1 : close].split())
            if not text:
                tokens.append(_Token(_Kind.ERROR, "empty phrase", i, close + 1))
                break
            tokens.append(_Token(_Kind.PHRASE, text, i, close + 1))
            i = close + 1
        elif c == "^":
            number = _RUN.match(query, i + 1)
            end = number.end() if number else i + 1
            tokens.append(_Token(_Kind.CARET, query[i + 1 : end], i, end))
            i = end
        elif c == "-" and (i + 1 == n or query[i + 1].isspace()):
            i += 1  # a lone `-` separates words
        elif c == "-" and not query.startswith("-", i + 1) and not _FLAG.match(query, i + 1):
            tokens.append(_Token(_Kind.MINUS, c, i, i + 1))
            i += 1
        else:
            run = _RUN.match(query, i)
            end = run.end() if run else i + 1
            word = query[i:end]
            field, colon, rest = word.partition(":")
            if colon and field in FIELDS:
                value_start = i + len(field) + 1
                tokens.append(_Token(_Kind.FIELD, field, i, value_start))
                if rest:
                    tokens.append(_Token(_Kind.WORD, rest, value_start, end))
            else:
                tokens.append(_Token(_Kind.WORD, word, i, end))
            i = end
    return tokens


def _flags_of_a_sentence(tokens: list[_Token], is_stopword: Callable[[str], bool]) -> list[_Token]:
    """`tokens` with each `-word` read as the word (`like find -xdev`) when the query reads as a
    sentence: one of its words, outside fields, phrases and exclusions, is a stop word. An agent
    that asks in words what `-xdev` does wants that word found; `-(word)` still excludes it."""
    # a field's value and an excluded word do not count
    operated = [False, *(t.kind in (_Kind.FIELD, _Kind.MINUS) for t in tokens)][: len(tokens)]
    pairs = zip(tokens, operated, strict=True)
    words = [token.text for token, operand in pairs if token.kind is _Kind.WORD and not operand]
    if not any(map(is_stopword, words)):
        return tokens
    read: list[_Token] = []
    for token in tokens:
        minus = read[-1] if read else None
        if (
            minus is not None
            and minus.kind is _Kind.MINUS
            and token.kind is _Kind.WORD
            and token.start == minus.end
            and token.text[:1].isascii()
            and token.text[:1].isalpha()
        ):
            read[-1] = _Token(_Kind.WORD, token.text, token.start, token.end)
        else:
            read.append(token)
    return read


# ---- parser -------------------------------------------------------------------------------------


class _Parser:
    """Recursive descent over the token list; recursion happens only per nested group."""

    def __init__(self, query: str, is_stopword: Callable[[str], bool] | None = None) -> None:
        self.query = query
        self.tokens = _lex(query)
        if is_stopword is not None:
            self.tokens = _flags_of_a_sentence(self.tokens, is_stopword)
        self.pos = 0
        self.prev_end = 0

    def fail(self, column: int, what: str, hint: str) -> NoReturn:
        raise QuerySyntaxError(self.query, column, what, hint)

    def peek(self) -> _Token | None:
        if self.pos >= len(self.tokens):
            return None
        token = self.tokens[self.pos]
        if token.kind is _Kind.ERROR:
            self.fail(token.start, token.text, _LEX_HINTS[token.text])
        return token

    def advance(self) -> _Token:
        token = self.tokens[self.pos]
        self.pos += 1
        self.prev_end = token.end
        return token

    def parse(self) -> Node | None:
        if not self.tokens:
            return None
        node = self.or_expr(0, None)
        stray = self.peek()
        if stray is not None:  # or_expr stops only at the end or at a `)`
            self.fail(stray.start, "unbalanced parenthesis", _STRAY_HINT)
        return node

    def or_expr(self, depth: int, opener: _Token | None) -> Node:
        alternatives: list[Node] = []
        last_or: _Token | None = None
        while True:
            alternatives.append(self.and_expr(depth, opener, last_or))
            token = self.peek()
            if token is None or not _is_or(token):
                break
            last_or = self.advance()
        return alternatives[0] if len(alternatives) == 1 else Or(tuple(alternatives))

    def and_expr(self, depth: int, opener: _Token | None, last_or: _Token | None) -> Node:
        items: list[Node] = []
        first = self.peek()
        while True:
            token = self.peek()
            if token is None or token.kind is _Kind.RPAREN or _is_or(token):
                break
            if token.kind is _Kind.CARET:
                self.fail(
                    token.start,
                    "'^' with nothing to boost",
                    "put ^N right after a word, phrase or group, e.g. word^2 or (a b)^2",
                )
            items.append(self.unary(depth))
        if not items:
            self.nothing(first, opener, last_or)
        if first is not None and all(isinstance(item, Not) for item in items):
            self.fail(first.start, ONLY_NEGATIONS, "add at least one word to search for; '-' only excludes")
        return items[0] if len(items) == 1 else And(tuple(items))

    def nothing(self, token: _Token | None, opener: _Token | None, last_or: _Token | None) -> NoReturn:
        """Explain why an and-group came out empty."""
        if token is not None and _is_or(token):
            if last_or is None:
                self.fail(token.start, "OR with nothing before it", _OR_HINT)
            self.fail(token.start, "OR twice in a row", "keep one OR between two alternatives, e.g. a OR b")
        if last_or is not None:
            self.fail(last_or.start, "OR with nothing after it", _OR_HINT)
        if opener is not None and token is not None:
            self.fail(opener.start, "empty group", _EMPTY_GROUP_HINT)
        if opener is not None:
            self.unclosed(opener)
        column = token.start if token is not None else len(self.query)
        self.fail(column, "unbalanced parenthesis", _STRAY_HINT)

    def unclosed(self, opener: _Token) -> NoReturn:
        self.fail(opener.start, "unbalanced parenthesis", _UNCLOSED_HINT)

    def unary(self, depth: int) -> Node:
        token = self.advance() if self._at(_Kind.MINUS) else None
        if token is None:
            return self.operand(depth)
        after = self.peek()
        if after is None or after.start != token.end or after.kind not in _OPERAND_START:
            self.fail(
                token.start,
                "'-' with nothing after it",
                "put '-' right before what to exclude, e.g. -draft, -\"old api\" or -(a OR b)",
            )
        return Not(self.operand(depth))

    def operand(self, depth: int) -> Node:
        node = self.primary(depth)
        caret = self.peek()
        if caret is None or caret.kind is not _Kind.CARET or caret.start != self.prev_end:
            return node
        self.advance()
        if not caret.text:
            self.fail(caret.start, "'^' without a number", _BOOST_HINT)
        if not _NUMBER.fullmatch(caret.text) or float(caret.text) <= 0:
            self.fail(caret.start, "boost is not a positive number", _BOOST_HINT)
        boost = _boost_of(node) * float(caret.text)
        if not 0 < boost <= MAX_BOOST:
            self.fail(
                caret.start,
                "boost out of range",
                f"use a boost above 0 and at most {MAX_BOOST:g}, such as 2 or 0.5",
            )
        return _with_boost(node, boost)

    def primary(self, depth: int) -> Node:
        token = self.advance()
        if token.kind is _Kind.WORD:
            return Term(token.text)
        if token.kind is _Kind.PHRASE:
            return Phrase(token.text)
        if token.kind is _Kind.LPAREN:
            return self.group(token, depth + 1)
        if token.kind is not _Kind.FIELD:  # callers only call at an operand start
            raise AssertionError(f"no operand at {token}")
        value = self.peek()
        if value is None or value.start != token.end or value.kind not in _OPERAND_START - {_Kind.FIELD}:
            self.fail(token.start, f"nothing after {token.text}:", _field_hint(token.text))
        self.advance()
        if value.kind is _Kind.WORD:
            return Term(value.text, token.text)
        if value.kind is _Kind.PHRASE:
            return Phrase(value.text, token.text)
        return _with_field(self.group(value, depth + 1), token.text)

    def group(self, opener: _Token, depth: int) -> Node:
        """The inside of a group whose `(` was just consumed."""
        if depth > MAX_DEPTH:
            what = f"parentheses nested deeper than {MAX_DEPTH} levels"
            self.fail(opener.start, what, "remove some of the parentheses")
        node = self.or_expr(depth, opener)
        if self.peek() is None:
            self.unclosed(opener)
        self.advance()  # the `)`: or_expr stops only there or at the end
        return node

    def _at(self, kind: _Kind) -> bool:
        token = self.peek()
        return token is not None and token.kind is kind


def _is_or(token: _Token) -> bool:
    return token.kind is _Kind.WORD and token.text in _OR


def _boost_of(node: Node) -> float:
    return 1.0 if isinstance(node, Not) else node.boost


def _with_boost(node: Node, boost: float) -> Node:
    if isinstance(node, Not):  # a group of only negations is rejected before it can be boosted
        raise AssertionError("a negation cannot carry a boost")
    return node._replace(boost=boost)


def _with_field(node: Node, field: str) -> Node:
    """`node` with `field` on every word and phrase that names no field of its own."""
    if isinstance(node, Term | Phrase):
        return node if node.field is not None else node._replace(field=field)
    if isinstance(node, Not):
        return Not(_with_field(node.item, field))
    return node._replace(items=tuple(_with_field(item, field) for item in node.items))


# ---- public API ---------------------------------------------------------------------------------


def parse_query(text: str, is_stopword: Callable[[str], bool] | None = None) -> Node | None:
    """Parse a query in ra's query language.

    With `is_stopword`, a query that holds a stop word reads as a sentence, and its `-word`s are
    words, searched (`like find -xdev`), not exclusions; `-(word)` still excludes.

    Returns:
        The AST, or None when `text` is empty or only whitespace.

    Raises:
        QuerySyntaxError: with the column, what is wrong and a hint; `caret()` draws the spot.
    """
    return _Parser(text, is_stopword).parse()


def read_query(text: str, is_stopword: Callable[[str], bool] | None = None) -> tuple[Node | None, str | None]:
    """Read `text` the way a search does by default: a syntax error is repaired, never raised.

    Each error's culprit — a quote or parenthesis with no partner, an OR with nothing on one
    side, a `-` or `^` with nothing to act on, a `field:` with nothing after it — is read as a
    space, and the rest is parsed again, so everything that was well formed keeps its meaning.
    A query that still fails after `MAX_REPAIRS` repairs (or is too long to repair cheaply) is
    read as its plain words.

    Returns:
        The AST (None when there is nothing to search for) and a one-line note saying how a
        broken query was read (None when it parsed as written).
    """
    try:
        return parse_query(text, is_stopword), None
    except QuerySyntaxError as exc:
        first = exc
    repaired, node = _repaired(text, is_stopword) if len(text) <= MAX_REPAIR_LENGTH else (False, None)
    if not repaired:
        words = _fallback_words(text)
        node = None if not words else Term(words[0]) if len(words) == 1 else And(tuple(map(Term, words)))
    where = f"query syntax error at column {first.column + 1} ({first.what})"
    if node is None:
        return None, f"{where}; found no words to search for"
    return node, f"{where}; read as: {_shorten(to_query(node))}"


MAX_REPAIRS = 64
MAX_REPAIR_LENGTH = 4096  # each repair parses the text again: longer text is read as its words
_NOTE_QUERY_CHARS = 80


def _repaired(text: str, is_stopword: Callable[[str], bool] | None) -> tuple[bool, Node | None]:
    """(repaired, AST): `text` parsed after blanking the culprit of each syntax error in turn.

    The AST is None when what is left holds nothing to search for; `repaired` is False when the
    errors could not be repaired.
    """
    for _ in range(MAX_REPAIRS):
        try:
            return True, parse_query(text, is_stopword)
        except QuerySyntaxError as exc:
            blanked = _blank_culprit(text, exc.column, exc.what)
            if blanked == text:
                return False, None
            text = blanked
    return False, None


def _blank_culprit(text: str, column: int, what: str) -> str:
    """`text` with the part a syntax error names replaced by spaces.

    A group of only exclusions loses its first exclusion whole — `-x` alone asks for nothing, and
    searching `x` would be the opposite; a bad boost loses its `^` and what follows it; a
    `field:` with nothing after it loses its colon (the name stays a word); any other culprit
    (a quote, a parenthesis, an OR, a `-`) is the token itself.
    """
    if column >= len(text):
        return text
    if what == ONLY_NEGATIONS and text[column] == "-":
        width = _operand_end(text, column + 1) - column
    elif text.startswith("OR", column):
        width = 2
    elif text[column] == "^":
        run = _RUN.match(text, column + 1)
        width = 1 + (len(run.group()) if run else 0)
    elif text[column] in '"()-':
        width = 1
    else:
        colon = text.find(":", column)
        if colon < 0:
            return text
        column, width = colon, 1
    return text[:column] + " " * width + text[column + width :]


def _operand_end(text: str, start: int) -> int:
    """Where the operand that starts at `start` ends: a word, a phrase, a field term or a group."""
    depth = 0
    for token in _lex(text[start:]):
        if token.kind is _Kind.ERROR:
            return len(text)
        depth += {_Kind.LPAREN: 1, _Kind.RPAREN: -1}.get(token.kind, 0)
        if depth <= 0 and token.kind is not _Kind.FIELD:
            return start + token.end
    return len(text)


def _shorten(query: str) -> str:
    return query if len(query) <= _NOTE_QUERY_CHARS else query[: _NOTE_QUERY_CHARS - 1].rstrip() + "…"


def _fallback_words(text: str) -> list[str]:
    words: list[str] = []
    for piece in _FALLBACK_SPLIT.split(text):
        if piece.startswith("-") and not piece.startswith("--") and not _FLAG.match(piece, 1):
            continue  # an exclusion: searching its word would be the opposite
        word = piece.split("^", 1)[0]
        field, colon, rest = word.partition(":")
        if colon and field in FIELDS:
            word = rest
        if word not in _OR and any(c.isalnum() for c in word):
            words.append(word)
    return words


def _fmt_boost(boost: float) -> str:
    if boost == 1.0:
        return ""
    # repr() round-trips a float exactly; whole numbers read better without ".0"
    return "^" + (str(int(boost)) if boost.is_integer() and boost < 1e16 else repr(boost))


def _leaf(node: Term | Phrase) -> str:
    field = f"{node.field}:" if node.field else ""
    text = f'"{node.text}"' if isinstance(node, Phrase) else node.text
    return f"{field}{text}{_fmt_boost(node.boost)}"


def render(node: Node | None) -> str:
    """The explicit form `--explain` shows: every AND, OR and NOT spelt out, groups in parentheses.

    For example `(title:rust AND ("error handling" OR log^2)) AND NOT draft`. This is for people:
    AND and NOT are plain words to the parser, so use `to_query` for text that parses back.
    """
    if node is None:
        return ""
    if isinstance(node, And | Or):
        inner = _render_inner(node)
        return f"({inner}){_fmt_boost(node.boost)}" if node.boost != 1.0 else inner
    return _render_atom(node)


def _render_inner(node: And | Or) -> str:
    """`node`'s items joined by AND or OR, without its own parentheses or boost."""
    joiner = " AND " if isinstance(node, And) else " OR "
    return joiner.join(_render_atom(item) for item in node.items)


def _render_atom(node: Node) -> str:
    if isinstance(node, Term | Phrase):
        return _leaf(node)
    if isinstance(node, Not):
        return "NOT " + _render_atom(node.item)
    return f"({_render_inner(node)}){_fmt_boost(node.boost)}"


def to_query(node: Node | None) -> str:
    """Canonical query-language text for `node`: `parse_query(to_query(n)) == n` for every `n`
    that `parse_query` returns. Juxtaposition for AND, `-` for NOT, parentheses only where needed.
    """
    if node is None:
        return ""
    if isinstance(node, And | Or) and node.boost == 1.0:
        return _query_inner(node)
    return _query_atom(node)


def _query_inner(node: And | Or) -> str:
    if isinstance(node, And):
        return " ".join(_query_atom(item) for item in node.items)
    # juxtaposition binds tighter than OR, so an unboosted AND needs no parentheses here
    return " OR ".join(
        _query_inner(item) if isinstance(item, And) and item.boost == 1.0 else _query_atom(item)
        for item in node.items
    )


def _query_atom(node: Node) -> str:
    if isinstance(node, Term | Phrase):
        return _leaf(node)
    if isinstance(node, Not):
        atom = _query_atom(node.item)
        # `-(js)`, `-(-x)`: `-js` would be a flag, `--x` a word
        return f"-({atom})" if _FLAG.match(atom) or atom.startswith("-") else "-" + atom
    return f"({_query_inner(node)}){_fmt_boost(node.boost)}"

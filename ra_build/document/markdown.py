"""Reading a markdown file: decoding, and its CommonMark headings (the frontmatter is
ra_build.document.frontmatter's).

Everything here is a pure function of the file's text. Offsets are character offsets into the
ORIGINAL text (frontmatter included) and line numbers are 0-based indices into it, so the
chunker can map them back to the file even though the frontmatter is removed before headings
are looked for (DECISIONS 4).

Lines are split the way markdown-it splits them: `\\r\\n`, `\\r` and `\\n` each end a line.
"""

from __future__ import annotations

import html
import logging
import operator
import re
from collections.abc import Callable
from itertools import accumulate, repeat
from typing import Any, Literal, NamedTuple

from markdown_it import MarkdownIt, rules_block
from markdown_it.common.utils import mdTrim
from markdown_it.parser_block import ParserBlock
from markdown_it.ruler import Ruler
from markdown_it.rules_block import StateBlock
from markdown_it.token import Token

from ra_build.document.html_tags import inline_html_text
from ra_build.document.memo import TextMemo

_BlockRule = Callable[[StateBlock, int, int, bool], bool]
_RuleTable = dict[str, tuple[_BlockRule, ...]]

# An ATX heading's opening sequence: one to six `#`, then a space, a tab or the end of the line.
_ATX_OPEN = re.compile(r"#{1,6}(?=[ \t]|\Z)")


def _heading(state: StateBlock, line: int, end: int, silent: bool) -> bool:
    """markdown-it's ATX heading rule (`rules_block.heading`) with string methods in place of
    its character loops: the same answers and tokens, at half the cost."""
    if state.is_code_block(line):
        return False
    pos = state.bMarks[line] + state.tShift[line]
    maximum = state.eMarks[line]
    opening = _ATX_OPEN.match(state.src, pos, maximum)  # the line ends at `maximum`
    if opening is None:
        return False
    if silent:
        return True
    text = state.src[opening.end() : maximum].rstrip(" \t")
    unclosed = text.rstrip("#")  # a closing sequence counts only after a space or a tab
    if unclosed.endswith((" ", "\t")):
        text = unclosed
    markup = opening[0]
    state.line = line + 1
    token = state.push("heading_open", f"h{len(markup)}", 1)
    token.markup = markup
    token.map = [line, state.line]
    token = state.push("inline", "", 0)
    token.content = mdTrim(text)
    token.map = [line, state.line]
    token.children = []
    token = state.push("heading_close", f"h{len(markup)}", -1)
    token.markup = markup
    return True


# The block rules that open a block on a line of their own, in markdown-it's order, with the
# first characters (after the indent) each can accept. Every one of them declines a line that
# starts with any other character, before it looks further or changes the state.
_OPENERS: tuple[tuple[_BlockRule, str], ...] = (
    (_heading, "#"),
    (rules_block.fence, "`~"),
    (rules_block.blockquote, ">"),
    (rules_block.hr, "*-_"),
    (rules_block.list_block, "*-+0123456789"),
    (rules_block.reference, "["),
    (rules_block.html_block, "<"),
)
# The rules that may end a paragraph, reference or block quote, and those that may end a list
# item (markdown-it's `alt` chains).
_ENDS_PARAGRAPH = (
    _heading,
    rules_block.fence,
    rules_block.blockquote,
    rules_block.hr,
    rules_block.list_block,
    rules_block.html_block,
)
_ENDS_LIST = (rules_block.fence, rules_block.blockquote, rules_block.hr)


def _by_first_char(rules: tuple[_BlockRule, ...], tail: tuple[_BlockRule, ...] = ()) -> _RuleTable:
    """Map each first character to those of `rules` (taken from `_OPENERS`) that accept it, in
    `_OPENERS` order, followed by `tail`."""
    table: _RuleTable = {}
    for rule, chars in _OPENERS:
        if rule in rules:
            for char in chars:
                table[char] = (*table.get(char, ()), rule)
    return {char: (*found, *tail) for char, found in table.items()}


def _first_match(table: _RuleTable, lead: tuple[_BlockRule, ...] = ()) -> _BlockRule:
    """A block rule that tries `lead` (whatever the line starts with), then the rules of `table`
    for the line's first character."""
    rules_for = {char: (*lead, *rules) for char, rules in table.items()}.get

    def match(state: StateBlock, line: int, end: int, silent: bool) -> bool:
        pos = state.bMarks[line] + state.tShift[line]
        # A loop rather than any(): no generator per call. Past the end of the text, "": no rule.
        for rule in rules_for(state.src[pos : pos + 1], lead):  # noqa: SIM110
            if rule(state, line, end, silent):
                return True
        return False

    return match


class _HeadingBlockParser(ParserBlock):
    """markdown-it's block tokenizer, but each line tries only the rules that accept its first
    character.

    `ParserBlock.tokenize` offers every block's first line to each block rule in turn, and a
    paragraph offers each of its lines to six terminator rules: about five million calls for the
    PowerShell documentation corpus, a fifth of the time headings take, nearly all declining at
    the first character. A table keyed by that character gives the rules that could match, in
    markdown-it's order; the others would decline without side effects, so the tokens are the
    same. Nested blocks (block quotes, list items) run through this `tokenize` too.
    """

    def __init__(self, *, setext: bool, tables: bool) -> None:
        super().__init__()
        # Setext headings are found by `lheading`, which reads a paragraph to its end first.
        tail = (_lheading, rules_block.paragraph) if setext else (rules_block.paragraph,)
        # A table (GitHub's) may start on a line beginning with anything: its rule comes first.
        lead = (rules_block.table,) if tables else ()
        self._tail = (*lead, *tail)
        openers = _by_first_char(tuple(rule for rule, _ in _OPENERS), tail)
        self._openers = {char: (*lead, *rules) for char, rules in openers.items()}
        # Rules ask the ruler for their terminators by chain name; one dispatching rule answers
        # for each chain. `code` stays registered: StateBlock treats indented lines as code
        # only while a rule of that name is active. A table ends a paragraph (and a link
        # reference), not a block quote; a table itself ends where a block quote would.
        ruler: Ruler[_BlockRule] = Ruler()
        ruler.push("code", rules_block.code)
        ends = _by_first_char(_ENDS_PARAGRAPH)
        if tables:
            ruler.push("ends_paragraph", _first_match(ends, lead), {"alt": ["paragraph", "reference"]})
            ruler.push("ends_quote", _first_match(ends), {"alt": ["blockquote"]})
        else:
            ruler.push("ends_block", _first_match(ends), {"alt": ["paragraph", "reference", "blockquote"]})
        ruler.push("ends_list", _first_match(_by_first_char(_ENDS_LIST)), {"alt": ["list"]})
        self.ruler = ruler

    def tokenize(self, state: StateBlock, startLine: int, endLine: int) -> None:
        """Generate the tokens for lines [startLine, endLine), as `ParserBlock.tokenize` does."""
        openers, tail = self._openers, self._tail
        max_nesting = state.md.options.maxNesting
        has_empty_lines = False
        line = startLine
        while line < endLine:
            state.line = line = state.skipEmptyLines(line)
            if line >= endLine:
                break
            if state.sCount[line] < state.blkIndent:
                break  # the end of a nested block (block quote, list item)
            if state.level >= max_nesting:
                # Too deep to tokenize. markdown-it skips to `endLine`, which for a list item is
                # the end of the file, so every later heading was lost (issue 10). Skip only
                # this nested block: to the first line indented less than it.
                while line < endLine and (state.isEmpty(line) or state.sCount[line] >= state.blkIndent):
                    line += 1
                state.line = line
                break
            if state.is_code_block(line):
                rules: tuple[_BlockRule, ...] = (rules_block.code,)
            else:
                # Not past the end: skipEmptyLines stopped on a line with text.
                rules = openers.get(state.src[state.bMarks[line] + state.tShift[line]], tail)
            for rule in rules:
                if rule(state, line, endLine, False):
                    break
            else:
                raise RuntimeError("none of the block rules matched")  # paragraph always does
            if state.line <= line:
                raise RuntimeError("block rule didn't increment state.line")
            # `tight` is False when an empty line came before this block.
            state.tight = not has_empty_lines
            line = state.line
            # A paragraph may take the empty line after it in nested lists.
            if line - 1 < endLine and state.isEmpty(line - 1):
                has_empty_lines = True
            if line < endLine and state.isEmpty(line):
                has_empty_lines = True
                line += 1
                state.line = line


class _HeadingState(StateBlock):
    """markdown-it's block state, made for finding headings: the same line tables and levels,
    but only the tokens `find_headings` reads.

    `StateBlock.__init__` measures every line's indent in a Python loop; here `str.split` and
    maps over its lines build the same tables in C. `push`
    builds a real `Token` only for a top-level `heading_open` and the `inline` token after it
    (its text); every other token is one shared, never-stored `Token` the rules may write to,
    so 94% of the token objects and their list are never made. `level` is kept exactly as
    `StateBlock.push` keeps it: the block rules and the nesting limit read it. The only rule
    that reads tokens back, `markTightParagraphs` (lists), only marks paragraphs hidden, which
    no heading depends on. `getLines` (a block's text, put in the tokens we drop) returns ""
    unless a rule that needs it asks for the lines (`keep_lines`: setext headings).
    """

    def __init__(self, src: str, md: MarkdownIt, env: dict[str, Any], tokens: list[Token]) -> None:
        # StateBlock.__init__ is not called: everything it sets is set here, the tables faster.
        self.src, self.md, self.env, self.tokens = src, md, env, tokens
        self.blkIndent = 0
        self.line = 0
        self.tight = False
        self.ddIndent = -1
        self.listIndent = -1
        self.parentType = "root"
        self.level = 0
        self.result = ""
        self.keep_lines = False
        self._inline_next = False  # the next token pushed is a kept heading's text
        lines = src.split("\n")
        lengths = list(map(len, lines))
        t_shift = list(map(operator.sub, lengths, map(len, map(str.lstrip, lines, repeat(" \t")))))
        b_marks = list(accumulate(map((1).__add__, lengths), initial=0))  # one too many
        e_marks = list(map(operator.add, b_marks, lengths))
        length = len(src)
        if lengths[-1] == t_shift[-1]:
            # StateBlock gives no line to what follows the last line break when it is empty or
            # only spaces and tabs
            del lines[-1], t_shift[-1], e_marks[-1]
        del b_marks[len(t_shift) :]
        if "\t" in src:  # a tab moves to the next multiple of 4 columns, as expandtabs(4) does
            s_count = [len(line[:shift].expandtabs(4)) for line, shift in zip(lines, t_shift, strict=True)]
        else:
            s_count = t_shift.copy()  # rules change both tables, so two lists
        # the fake line after the last, as StateBlock adds it to simplify bounds checks
        b_marks.append(length)
        e_marks.append(length)
        t_shift.append(0)
        s_count.append(0)
        self.bMarks, self.eMarks, self.tShift, self.sCount = b_marks, e_marks, t_shift, s_count
        self.bsCount = [0] * len(b_marks)
        self.lineMax = len(b_marks) - 1
        self._code_enabled = "code" in md.block.ruler.get_active_rules()

    def push(self, ttype: str, tag: str, nesting: Literal[-1, 0, 1]) -> Token:
        """Track the nesting level as `StateBlock.push` does; keep only top-level headings."""
        level = self.level
        if nesting < 0:
            self.level = level - 1
            return _IGNORED
        if nesting:
            self.level = level + 1
        if self._inline_next or (not level and ttype == "heading_open"):
            self._inline_next = not self._inline_next
            token = Token(ttype, tag, nesting, level=level, block=True)
            self.tokens.append(token)
            return token
        return _IGNORED

    def getLines(self, begin: int, end: int, indent: int, keepLastLF: bool) -> str:
        """The text of lines [begin, end) when a rule keeps it (`keep_lines`), else ""."""
        return super().getLines(begin, end, indent, keepLastLF) if self.keep_lines else ""


# What `_HeadingState.push` returns for the tokens it does not keep.
_IGNORED = Token("ignored", "", 0)


def _lheading(state: StateBlock, line: int, end: int, silent: bool) -> bool:
    """markdown-it's setext heading rule, with the lines of the heading's text kept."""
    keep = getattr(state, "keep_lines", False)
    state.keep_lines = True  # pyright: ignore[reportAttributeAccessIssue]
    try:
        return rules_block.lheading(state, line, end, silent)
    finally:
        state.keep_lines = keep  # pyright: ignore[reportAttributeAccessIssue]


def _block_parser(*, setext: bool, tables: bool = True) -> MarkdownIt:
    """A CommonMark parser with GitHub's tables for finding headings: only its block level runs
    (`find_headings` calls the block tokenizer itself), through `_HeadingBlockParser`.

    The inline rule is the slow half of markdown-it and we only need the raw text of each
    heading, which `heading_texts` reads into a title and a slug text. Tables count because a
    table's rows are no paragraph: a line of `---` under them is a rule, not their heading.
    """
    parser = MarkdownIt("commonmark")
    if tables:
        parser.enable("table")
    parser.block = _HeadingBlockParser(setext=setext, tables=tables)
    return parser


_MD = _block_parser(setext=True)
# The setext rule runs before every paragraph and reads it to its end looking for an underline,
# so each paragraph is read twice. Without a line that could be an underline (only `=` or only
# `-` after indentation and `>` markers) it can never match and skipping it changes no token:
# 99% of the PowerShell documentation corpus has no such line. Likewise the table rule, tried
# on every line, where no line could be a table's delimiter row or no line has a `|`.
_MD_NO_SETEXT = _block_parser(setext=False)
_MD_NO_TABLES = _block_parser(setext=True, tables=False)
_MD_NEITHER = _block_parser(setext=False, tables=False)
_UNDERLINE_FIRST = re.compile(r"[ \t>]*(?:=+|-+)[ \t]*(?:\n|\Z)")
_UNDERLINE_LATER = re.compile(r"\n[ \t>]*(?:=+|-+)[ \t]*(?:\n|\Z)")
# a table's delimiter row: `|`, `:` or `-` first, then only those and spaces (`| :-- | --- |`),
# maybe in a block quote
_DELIMITER_ROW = re.compile(r"^[ \t>]*[|:-][-:| \t]*$", re.MULTILINE)


def _may_have_setext(source: str) -> bool:
    """Whether some line of `source` (line breaks normalized to `\\n`) could be a setext
    underline."""
    return bool(_UNDERLINE_FIRST.match(source) or _UNDERLINE_LATER.search(source))


def _may_have_tables(source: str) -> bool:
    """Whether `source` has a `|` and a line that could be a table's delimiter row."""
    return "|" in source and _DELIMITER_ROW.search(source) is not None


def parser_for(source: str) -> MarkdownIt:
    """The heading parser for `source` (line breaks normalized): one that skips the rules no line
    of it can start (`_may_have_setext`, `_may_have_tables`); the tokens are the same."""
    if _may_have_tables(source):
        return _MD if _may_have_setext(source) else _MD_NO_SETEXT
    return _MD_NO_TABLES if _may_have_setext(source) else _MD_NEITHER


def _silence_rule_debug_logs() -> None:
    """Make markdown-it's per-rule `LOGGER.debug(...)` calls free.

    Every block rule logs its entry at DEBUG level: about seven million calls for 90 MB of
    documentation, 4% of the build's parse time, for records nobody asks for. Loggers that are
    already enabled for DEBUG when ra starts are left alone.
    """
    for name in ("parser_block", *(f"rules_block.{rule}" for rule in _BLOCK_RULE_MODULES)):
        logger = logging.getLogger(f"markdown_it.{name}")
        if not logger.isEnabledFor(logging.DEBUG):
            setattr(logger, "debug", _ignore)  # noqa: B010 - an instance attribute, on purpose


def _ignore(*_args: object, **_kwargs: object) -> None:
    return None


_BLOCK_RULE_MODULES = ("blockquote", "code", "fence", "heading", "hr", "html_block")
_BLOCK_RULE_MODULES += ("lheading", "list", "paragraph", "reference")
_silence_rule_debug_logs()


_NEWLINE = re.compile(r"\r\n|\r|\n")
_LF = re.compile("\n")
_match_end = operator.methodcaller("end")


class Heading(NamedTuple):
    """A top-level CommonMark heading: its level, plain text, 0-based line range and the text its
    slug is made from.

    `first_line` is the heading's first line; `end_line` is the line after its last one (a
    setext heading spans its text lines and the underline). `start` is the character offset of
    the first line, `span_start` that of the line after the heading (or the end of the text).
    `text` is the title (`heading_texts`); `slug_text` the rendered text content GitHub slugs.
    """

    level: int
    text: str
    first_line: int
    end_line: int
    start: int
    span_start: int
    slug_text: str


UTF8_BOM = b"\xef\xbb\xbf"


# what surrogateescape decodes an undecodable byte to (U+DC80..U+DCFF) → U+FFFD
_ESCAPED_BYTES = dict.fromkeys(range(0xDC80, 0xDD00), "\ufffd")


def decode(data: bytes) -> tuple[str, bool]:
    """Decode file bytes as UTF-8, dropping a leading BOM.

    Returns:
        The text, and True when invalid bytes were replaced: one U+FFFD for each byte, so
        that `file_bytes` can tell the file's byte offsets of the text.
    """
    if data.startswith(UTF8_BOM):
        data = data[3:]
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return data.decode("utf-8", "surrogateescape").translate(_ESCAPED_BYTES), True


def file_bytes(data: bytes) -> Callable[[int, int], int]:
    """For the text `decode(data)` replaced bytes in: how many bytes of the file text[a:b] is.

    A U+FFFD that stands for an undecodable byte is that one byte, not the three bytes of its
    UTF-8 form; a U+FFFD the file itself holds is three. The BOM is not part of the text.
    """
    escaped = data.removeprefix(UTF8_BOM).decode("utf-8", "surrogateescape")
    return lambda start, end: len(escaped[start:end].encode("utf-8", "surrogateescape"))


def line_starts(text: str) -> list[int]:
    """Return the character offset of every line start; the first is always 0.

    A text ending in a line break gets a final entry equal to `len(text)` (an empty last line).
    """
    pattern = _NEWLINE if "\r" in text else _LF
    return [0, *map(_match_end, pattern.finditer(text))]


# --- headings ----------------------------------------------------------------------------------


def find_headings(text: str, start: int = 0, first_line: int = 0) -> list[Heading]:
    """Find the top-level ATX and setext headings of the markdown in `text[start:]`.

    Args:
        text: the whole file.
        start: offset where the markdown begins (after the frontmatter).
        first_line: the 0-based line index of `start`; heading lines are shifted by it so they
            index the whole file.

    Headings inside code blocks, HTML blocks, block quotes and list items are not returned.
    The headings of a markdown text are remembered (`_HEADINGS`): versioned documentation
    repeats whole pages under new frontmatter.
    """
    source = text[start:] if start else text
    if not source:
        return []
    found = _HEADINGS.get(source)
    if found is None:
        found = _headings_of(source)
        _HEADINGS.put(source, found)
    if not start and not first_line:
        return list(found)
    return [
        Heading(
            h.level,
            h.text,
            h.first_line + first_line,
            h.end_line + first_line,
            h.start + start,
            h.span_start + start,
            h.slug_text,
        )
        for h in found
    ]


# The headings of markdown texts, by text; 16 M characters per process that chunks.
_HEADINGS: TextMemo[tuple[Heading, ...]] = TextMemo(16_000_000)


def _headings_of(source: str) -> tuple[Heading, ...]:
    """`find_headings` of a whole markdown text (no frontmatter before it)."""
    # What `MarkdownIt.parse` does, minus the core chain: we keep the block state because its
    # line-start table saves us computing our own.
    has_cr = "\r" in source
    normalized = _NEWLINE.sub("\n", source) if has_cr else source
    if "\0" in normalized:
        normalized = normalized.replace("\0", "\ufffd")  # same length: offsets are unchanged
    parser = parser_for(normalized)
    tokens: list[Token] = []
    env: dict[str, Any] = {}  # the reference rule collects link definitions here
    state = _HeadingState(normalized, parser, env, tokens)
    parser.block.tokenize(state, state.line, state.lineMax)
    # Normalizing `\r\n` to `\n` shifts offsets, so CR files use their own line table.
    marks = line_starts(source) if has_cr else state.bMarks
    mark_count = len(marks)
    size = len(source)
    references = env.get("references")
    headings: list[Heading] = []
    # `tokens` holds each top-level heading_open followed by its inline token (`_HeadingState`).
    for token, inline in zip(tokens[::2], tokens[1::2], strict=True):
        if token.map is None:
            continue
        first, end = token.map
        title, slug_text = heading_texts(inline.content, references)
        headings.append(
            Heading(
                int(token.tag[1]),
                title,
                first,
                end,
                marks[first],
                marks[end] if end < mark_count else size,
                slug_text,
            )
        )
    return tuple(headings)


# a heading without any of these is plain text already
_MARKUP = re.compile(r"[\\`*_\[<&!]")
_INLINE = MarkdownIt("commonmark")


def heading_texts(content: str, references: dict[str, Any] | None = None) -> tuple[str, str]:
    """The title of a heading's raw inline markdown, and the text GitHub makes its slug from.

    Both are read by markdown-it's inline parser. The title is what reads well: code spans
    keep their content; links keep their text and images their alt text (so a badge heading
    `[![alt](img)](url)` is `alt`) — reference links too, when `references` (the document's
    link definitions, as markdown-it collects them) defines their label; autolinks keep their
    URL; emphasis markers, the tags of HTML elements and comments vanish, while angle-bracket
    text that is no element (`Result<T>`) stays (`inline_html_text`); escapes and entities are
    decoded; line breaks (a multi-line setext heading) become one space; the ends are stripped.

    The slug text is the heading's rendered text content, the way GitHub feeds it to
    github-slugger: the same, except that images add nothing, each line break is a `\n`
    (which the slug rule drops), and nothing is stripped. The one departure from GitHub's
    (DECISIONS 7): GitHub renders `<T>` as a tag and drops it; ra keeps it as text, as in the
    title, so `The Result<T> Type!` slugs to `the-resultt-type` as seed 000 says.
    """
    if _MARKUP.search(content) is None:
        if "\n" in content:
            lines = content.split("\n")
            title = " ".join(line.strip() for line in lines).strip()
            # markdown-it drops the spaces before a line break and the spaces and tabs after it
            return title, "\n".join(line.rstrip(" ").lstrip(" \t") for line in lines)
        return content.strip(), content
    # Only links read `references`, and every link has a `[`: without one the texts are the
    # same for every document, and versioned documentation repeats its headings.
    shared = not references or "[" not in content
    texts = _HEADING_TEXTS.get(content) if shared else None
    if texts is None:
        tokens = _INLINE.parseInline(content, {"references": references} if references else {})
        children = (tokens[0].children or []) if tokens else []
        texts = _title(children).strip(), _slug_text(children)
        if shared:
            if len(_HEADING_TEXTS) >= _HEADING_TEXTS_MAX:
                _HEADING_TEXTS.clear()  # a bound on memory; a miss only costs the parse
            _HEADING_TEXTS[content] = texts
    return texts


# The title and slug text of heading markdown the inline parser read, by that markdown.
_HEADING_TEXTS: dict[str, tuple[str, str]] = {}
_HEADING_TEXTS_MAX = 50_000


# the alt text of an HTML image (`<img alt="chi" src="logo.svg">`), quoted or not
_IMG_ALT = re.compile(
    r"""<img\s(?:[^>"']|"[^"]*"|'[^']*')*?(?<![\w-])alt\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))""",
    re.IGNORECASE,
)


def _title(children: list[Token]) -> str:
    out: list[str] = []
    for token in children:
        if token.type in ("text", "code_inline"):
            out.append(token.content)
        elif token.type in ("softbreak", "hardbreak"):
            out.append(" ")
        elif token.type == "image":
            out.append(_title(token.children or []))
        elif token.type == "html_inline":
            # an image's alt text, as a markdown image's (a README's `# <img alt="chi" …>` logo)
            alt = _IMG_ALT.match(token.content)
            if alt is None:
                out.append(inline_html_text(token.content))
            else:
                out.append(html.unescape(next(filter(None, alt.groups()), "")))
    return "".join(out)


def _slug_text(children: list[Token]) -> str:
    """The text content of the HTML GitHub renders for these inline tokens."""
    out: list[str] = []
    for token in children:
        if token.type in ("text", "code_inline"):
            out.append(token.content)
        elif token.type in ("softbreak", "hardbreak"):
            out.append("\n")  # `\n`, or `<br />\n`: an element has no text of its own
        elif token.type == "html_inline":
            # GitHub's text but for angle-bracket text that is no element (DECISIONS 7)
            out.append(inline_html_text(token.content))
    return "".join(out)


__all__ = [
    "Heading",
    "decode",
    "find_headings",
    "heading_texts",
    "line_starts",
]

"""reStructuredText sections: the headings of a `.rst` page (Sphinx's docs), for its chunk tree.

A section title is a line of text under (and maybe over) a line of one punctuation character
repeated (`=====`, `-----`, `~~~~~`), after a blank line or at the file's start, the title not
indented (an indented line is in a literal block, a directive or a quote) and no explicit markup
(`.. note::`). An underline shorter than its title counts from four characters on, as docutils
takes it (with a warning). Levels are what docutils gives them: the order in which the styles
first appear (an underline of `=` with an overline is another style than one without). The
hyperlink targets right above a title (`.. _keep-alive:`, what Sphinx's `:ref:` links to) are
the section's first lines.
"""

from __future__ import annotations

import re
from typing import Final

from ra_build.document.markdown import Heading

# a line of one punctuation character, two or more (docutils takes any of these)
_ADORNMENT: Final = re.compile(r"([!-/:-@\[-`{-~])\1+[ \t]*")
# a hyperlink target (`.. _keep-alive:`): the anchor Sphinx's `:ref:` links to the section below it
_TARGET: Final = re.compile(r"\.\. _[^:`\s][^:`]*:[ \t]*\r?\n?")
SHORT_UNDERLINE: Final = 4  # an underline shorter than its title is one from this length on
MAX_LEVEL: Final = 6  # deeper styles are level 6, as markdown has no h7


def rst_headings(text: str) -> list[Heading]:
    """The section titles of the reStructuredText in `text`, in order."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    styles: dict[tuple[str, bool], int] = {}
    found: list[Heading] = []
    at = 0
    while at < len(lines):
        span = _title_at(lines, at)
        if span is None:
            at += 1
            continue
        title_line, end, style = span
        level = styles.setdefault(style, min(len(styles) + 1, MAX_LEVEL))
        title = lines[title_line].strip()
        first = _targets_above(lines, at, found[-1].end_line if found else 0)
        found.append(Heading(level, title, first, end, offsets[first], offsets[end], title))
        at = end
    return found


def _targets_above(lines: list[str], at: int, floor: int) -> int:
    """The first line of the hyperlink targets right above line `at` (blank lines between them
    allowed, none above `floor`), or `at`: a section's label is the section's."""
    first = line = at
    while line > floor:
        line -= 1
        if _TARGET.fullmatch(lines[line]):
            first = line
        elif lines[line].strip():
            break
    return first


def _title_at(lines: list[str], at: int) -> tuple[int, int, tuple[str, bool]] | None:
    """(the title's line, the line after the heading, its style) when a section title starts at
    line `at` (its overline or its text), else None."""
    if at > 0 and lines[at - 1].strip():
        return None  # a title follows a blank line (or starts the file)
    first = lines[at].rstrip("\r\n")
    over = _ADORNMENT.fullmatch(first)
    if over is not None and at + 2 < len(lines):  # overline, title, underline
        title, under = lines[at + 1].rstrip("\r\n"), lines[at + 2].rstrip("\r\n")
        if title.strip() and not _ADORNMENT.fullmatch(title) and under.rstrip() == first.rstrip():
            return at + 1, at + 3, (over.group(1), True)
        return None
    if over is not None or not first.strip() or first[0] in " \t" or at + 1 >= len(lines):
        return None
    if first.startswith(".. ") or first.rstrip() == "..":
        return None  # explicit markup: a directive, a comment, a target
    under = lines[at + 1].rstrip("\r\n").rstrip()
    matched = _ADORNMENT.fullmatch(under)
    if matched is None or len(under) < min(len(first.rstrip()), SHORT_UNDERLINE):
        return None
    return at, at + 2, (matched.group(1), False)

"""An HTML page as the markdown ra indexes (the `upstream` extra: html-to-markdown and lxml).

Chosen by bench/html_convert.py on 49 real framework pages of 8 site generators (Sphinx, MkDocs,
mkdocs-material, mdBook, rustdoc, javadoc, Node's and Go's): the page's main content (the first
`[role=main]`, `<article>`, `<main>`, else `<body>`), layout unwrapped (lists whose every item
holds a heading, tables holding code, links inside code), permalinks, line numbers, buttons and
navigation dropped, then html-to-markdown with hidden tab panels kept, then permalink marks and
self-links taken out of heading lines: 99 % of headings at their level, 100 % of code blocks
intact, 92 % of tables as pipe tables, ~1 % of words from page chrome, 7.2-7.6 MB/s on one core.
trafilatura lost half the headings and most code; html2text is GPL; markdownify is 15× slower.

A page that converts to almost nothing (a script-rendered shell) or that asks for a password (a
login wall) is `Unusable`: the sync keeps the cached copy and says why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ra_build.document.markdown import find_headings

MAIN_RULE = ("//*[@role='main']", "//article", "//main", "//body")
CLEAN_SELECTORS = [
    "a.headerlink",
    "span.linenos",
    "td.linenos",
    "button",
    "nav",
    "[role=navigation]",
    "[role=search]",
    "footer",
    "script",
    "style",
    "noscript",
]
MIN_WORDS = 20  # fewer words than this in the main content: an empty shell, not a page
_ATX = re.compile(r"^ {0,3}#{1,6}(\s|$)")
_SELF_LINK = re.compile(r"\[((?:[^\[\]]|\[[^\]]*\])*)\]\(#[^)\s]*(?:\s+\"[^\"]*\")?\)")
_PERMALINK_TEXT = {"", "¶", "#", "§", "🔗"}
_WORD = re.compile(r"\w+")


class Unusable(Exception):
    """The page holds no documentation: its `reason` says what it holds instead."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class MissingExtra(Exception):
    """The `upstream` extra is not installed."""


@dataclass(frozen=True)
class Converted:
    """A page as markdown, with the title its HTML gives (`<title>`, else its first `<h1>`)."""

    markdown: str
    title: str


def converter_available() -> bool:
    """Whether html-to-markdown and lxml can be imported (the `upstream` extra)."""
    try:
        import html_to_markdown  # noqa: F401
        import lxml.html  # noqa: F401
    except ImportError:
        return False
    return True


def to_markdown(page: str, url: str = "") -> Converted:
    """The markdown of an HTML page's main content (module docstring); its links made absolute
    against `url`, so they still lead somewhere from the cache.

    Raises:
        MissingExtra: html-to-markdown or lxml is not installed.
        Unusable: a login wall or an empty shell.
    """
    try:
        import html_to_markdown
        import lxml.html
    except ImportError as exc:
        raise MissingExtra(str(exc)) from exc
    if not page.strip():
        raise Unusable("an empty page")
    try:
        root = lxml.html.fromstring(page)
    except (ValueError, lxml.etree.ParserError) as exc:  # pyright: ignore[reportAttributeAccessIssue]
        raise Unusable(f"not HTML ({exc})") from exc
    if url:
        root.make_links_absolute(url, resolve_base_href=True, handle_failures="ignore")
    title = _title(root)
    region = _main_region(root)
    if region.xpath(".//input[@type='password']") and len(_WORD.findall(region.text_content())) < 300:
        raise Unusable("a login wall (a password field and little else)")
    options = html_to_markdown.ConversionOptions(
        extract_metadata=False, hidden_content="reachable", exclude_selectors=CLEAN_SELECTORS
    )
    html = str(lxml.html.tostring(region, encoding="unicode"))
    markdown = _tidy_headings(html_to_markdown.convert(html, options).content or "").strip()
    if len(_WORD.findall(markdown)) < MIN_WORDS:
        raise Unusable("an empty shell (its text is drawn by scripts, or it has none)")
    return Converted(markdown + "\n", title)


def _title(root: Any) -> str:
    for xpath in ("//title", "//h1"):
        found = root.xpath(xpath)
        if found:
            text = " ".join(found[0].text_content().split())
            if text:
                return text.removesuffix("¶").strip()
    return ""


def _main_region(root: Any) -> Any:
    """The main content, with layout unwrapped so that headings and code convert as such."""
    region = root
    for xpath in MAIN_RULE:
        found = root.xpath(xpath)
        if found:
            region = found[0]
            break
    # a list each of whose items holds a heading is layout (javadoc's sections), not a list
    for listing in region.xpath(".//ul|.//ol"):
        items = [child for child in listing if child.tag == "li"]
        if items and all(item.xpath(".//h1|.//h2|.//h3|.//h4|.//h5|.//h6") for item in items):
            for item in items:
                item.drop_tag()
            listing.drop_tag()
    # a table with code in its cells is layout too: a pipe table cannot hold a code block
    for table in region.xpath(".//table[.//pre]"):
        if table.xpath("ancestor::table"):
            continue
        for cell in table.xpath(".//td|.//th"):
            cell.tag = "div"
        for part in table.xpath(".//tr|.//thead|.//tbody|.//tfoot"):
            part.drop_tag()
        table.tag = "div"
    for link in region.xpath(".//pre//a"):  # a declaration's links: code keeps their text only
        link.drop_tag()
    for outer in region.xpath(".//pre[pre]"):  # mdBook's <pre><pre class="playground">: one block
        outer.drop_tag()
    return region


def _tidy_headings(markdown: str) -> str:
    """Each heading the chunker will see (ra's own heading finder: never a `#` line in code)
    loses its permalinks (`[¶](#x)`) and its links to itself (`## [Title](#title)` → `## Title`):
    a chunk's title is the heading's text."""
    lines = markdown.split("\n")
    for heading in find_headings(markdown):
        line = lines[heading.first_line]
        if _ATX.match(line):
            line = _SELF_LINK.sub(lambda m: "" if m.group(1).strip() in _PERMALINK_TEXT else m.group(1), line)
            lines[heading.first_line] = line.rstrip().removesuffix("¶").rstrip()
    return "\n".join(lines)

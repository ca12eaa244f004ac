"""HTML → markdown on real framework pages (tests/fixtures/upstream, PROVENANCE.md there): every
heading and every code block of a page's main content survives, and the page chrome does not."""

from __future__ import annotations

import re
from pathlib import Path

import lxml.html
import pytest

from ra_build.document.markdown import find_headings
from ra_build.upstream.convert import MAIN_RULE, Unusable, to_markdown

FIXTURES = Path(__file__).parent / "fixtures" / "upstream"
PAGES = sorted(FIXTURES.glob("*.html"))
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def squash(text: str) -> str:
    """Letters and digits only, lower case: texts compared across markup."""
    return re.sub(r"[^0-9a-z]+", "", text.lower())


def main_content(page: Path) -> lxml.html.HtmlElement:
    """The page's main content without what no reader counts as content (buttons, permalinks,
    line numbers)."""
    root = lxml.html.fromstring(page.read_text(encoding="utf-8"))
    region = next(found[0] for xpath in MAIN_RULE if (found := root.xpath(xpath)))
    for junk in region.xpath(".//button|.//a[@class='headerlink']|.//*[contains(@class, 'linenos')]"):
        junk.drop_tree()
    return region


def code_of(markdown: str) -> str:
    """The text of every fenced code block, one after another."""
    out: list[str] = []
    fence = ""
    for line in markdown.split("\n"):
        opening = FENCE.match(line)
        if opening and not fence:
            fence = opening.group(1)
        elif fence and opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
            fence = ""
        elif fence:
            out.append(line)
    return "\n".join(out)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_every_heading_of_the_main_content_is_a_heading_of_the_markdown(page: Path) -> None:
    wanted = [
        squash(h.text_content()) for h in main_content(page).xpath(".//h1|.//h2|.//h3|.//h4|.//h5|.//h6")
    ]
    markdown = to_markdown(page.read_text(encoding="utf-8")).markdown
    got = {squash(h.text) for h in find_headings(markdown)}
    assert wanted and [h for h in wanted if h and h not in got] == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_every_code_block_of_the_main_content_is_a_fenced_block_of_the_markdown(page: Path) -> None:
    blocks = [squash(pre.text_content()) for pre in main_content(page).xpath(".//pre[not(ancestor::pre)]")]
    code = squash(code_of(to_markdown(page.read_text(encoding="utf-8")).markdown))
    assert blocks and [b for b in blocks if b not in code] == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_headings_carry_no_permalink_marks(page: Path) -> None:
    markdown = to_markdown(page.read_text(encoding="utf-8")).markdown
    assert [h.text for h in find_headings(markdown) if "¶" in h.text or "](#" in h.text] == []


def test_tables_become_pipe_tables() -> None:
    markdown = to_markdown((FIXTURES / "mkdocs-cli.html").read_text(encoding="utf-8")).markdown
    assert re.search(r"^\| .* \|$\n^\| -+", markdown, re.MULTILINE)


def test_the_menus_around_the_main_content_stay_out() -> None:
    page = (FIXTURES / "mkdocs-cli.html").read_text(encoding="utf-8")
    root = lxml.html.fromstring(page)
    menus = "//*[contains(@class, 'navbar')]//a | //*[contains(@class, 'bs-sidebar')]//a"
    content = squash(main_content(FIXTURES / "mkdocs-cli.html").text_content())
    nav_words = {squash(a.text_content()) for a in root.xpath(menus) if len(a.text_content()) > 12}
    nav_words = {w for w in nav_words if w not in content}  # not the page's own title
    markdown = squash(to_markdown(page).markdown)
    assert nav_words and [w for w in nav_words if w and w in markdown] == []


def test_links_are_made_absolute_against_the_pages_url() -> None:
    page = (FIXTURES / "sphinx-helloworld.html").read_text(encoding="utf-8")
    markdown = to_markdown(
        page, "https://www.sphinx-doc.org/en/5.3/development/tutorials/helloworld.html"
    ).markdown
    assert "](https://www.sphinx-doc.org/en/5.3/" in markdown
    assert "](../" not in markdown


@pytest.mark.parametrize(
    ("html", "reason"),
    [
        ("", "an empty page"),
        ("<html><body><script>render()</script><div id='root'></div></body></html>", "an empty shell"),
        ("<html><body><form><input type='password'></form></body></html>", "a login wall"),
    ],
)
def test_a_page_with_no_documentation_is_unusable_with_its_reason(html: str, reason: str) -> None:
    with pytest.raises(Unusable, match=reason):
        to_markdown(html)

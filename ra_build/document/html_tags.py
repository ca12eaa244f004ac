"""What a piece of inline HTML in a heading adds to its text (DECISIONS 7).

CommonMark reads `<T>` in `Result<T>` as a tag, and GitHub renders it as one, so GitHub's slug
drops it. ra keeps such angle-bracket text: only the tags of real HTML elements (and comments,
processing instructions, declarations and CDATA) add nothing to a heading's title and slug.
"""

from __future__ import annotations

import re

# an open or closing tag and its name; anything else CommonMark calls inline HTML (a comment,
# `<?…?>`, `<!…>`, `<![CDATA[…]]>`) has no name
_TAG = re.compile(r"</?([A-Za-z][A-Za-z0-9\-]*)(?:\s[^<>]*)?/?>", re.DOTALL)

# The elements of the HTML standard, the obsolete ones browsers still build, and the roots of
# SVG and MathML; names are matched case-insensitively, as an HTML parser does (`<BR>` is `br`).
HTML_ELEMENTS = frozenset(
    (
        *("a", "abbr", "address", "area", "article", "aside", "audio", "b", "base", "bdi", "bdo"),
        *("blockquote", "body", "br", "button", "canvas", "caption", "cite", "code", "col"),
        *("colgroup", "data", "datalist", "dd", "del", "details", "dfn", "dialog", "div", "dl"),
        *("dt", "em", "embed", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2"),
        *("h3", "h4", "h5", "h6", "head", "header", "hgroup", "hr", "html", "i", "iframe", "img"),
        *("input", "ins", "kbd", "label", "legend", "li", "link", "main", "map", "mark", "menu"),
        *("meta", "meter", "nav", "noscript", "object", "ol", "optgroup", "option", "output", "p"),
        *("param", "picture", "pre", "progress", "q", "rp", "rt", "ruby", "s", "samp", "script"),
        *("search", "section", "select", "slot", "small", "source", "span", "strong", "style"),
        *("sub", "summary", "sup", "table", "tbody", "td", "template", "textarea", "tfoot", "th"),
        *("thead", "time", "title", "tr", "track", "u", "ul", "var", "video", "wbr"),
        # obsolete, still elements to a browser
        *("acronym", "applet", "basefont", "bgsound", "big", "blink", "center", "dir", "font"),
        *("frame", "frameset", "image", "isindex", "keygen", "listing", "marquee", "menuitem"),
        *("multicol", "nextid", "nobr", "noembed", "noframes", "plaintext", "rb", "rtc"),
        *("spacer", "strike", "tt", "xmp"),
        *("svg", "math"),
    )
)

# The tags GitHub's tagfilter (a GFM extension) escapes: GitHub shows them as text.
_FILTERED_TAG = re.compile(
    r"</?(?:title|textarea|style|xmp|iframe|noembed|noframes|script|plaintext)(?=[\s/>])",
    re.IGNORECASE,
)


def is_html_element(name: str) -> bool:
    """Whether a tag name names an HTML element: a standard one, or a custom element (its name
    holds a `-`, as the HTML standard requires of one)."""
    return "-" in name or name.lower() in HTML_ELEMENTS


def inline_html_text(html: str) -> str:
    """The text a piece of inline HTML (a markdown-it `html_inline` token) adds to a heading.

    A tag of an HTML element adds nothing, and neither do comments, processing instructions,
    declarations and CDATA; angle-bracket text that is no element (`<T>`, `</Foo>`) and the
    tags GitHub's tagfilter escapes (`<script>`, shown as text) are text.
    """
    if _FILTERED_TAG.match(html):
        return html
    tag = _TAG.fullmatch(html)
    if tag is None or is_html_element(tag[1]):
        return ""
    return html


__all__ = ["HTML_ELEMENTS", "inline_html_text", "is_html_element"]

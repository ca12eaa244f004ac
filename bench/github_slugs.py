"""Measurement: ra's heading slugs against GitHub's over the CommonMark spec's examples (DECISIONS 7).

    .venv/bin/python bench/github_slugs.py --spec SPEC.txt --gfm SITE_PACKAGES [--show] [--no-record]

GitHub's side is made the way tests/fixtures/github-slugger/README.md says: every example of the
CommonMark 0.31.2 spec (`spec.txt` of the npm package `commonmark-spec@0.31.2`; `→` is a tab) is
made into an ATX heading (`# ` before it) and a setext heading (`===` after it); cmark-gfm renders
each document with GitHub's extensions and raw HTML allowed; each top-level heading element's text
content (lxml) is slugged by github-slugger's rule (ra's `slugify`, which passes every fixture of
github-slugger's own, and its repeat counting: `-1`, `-2`). ra's side is `find_headings` and
`Slugger` on the same document. cmark-gfm is no dependency of ra: install it apart and point
`--gfm` at its site-packages:

    python3 -m venv /tmp/gfm && /tmp/gfm/bin/pip install cmarkgfm==2025.10.22
    npm pack commonmark-spec@0.31.2 && tar xzf commonmark-spec-0.31.2.tgz   # package/spec.txt
    .venv/bin/python bench/github_slugs.py --spec package/spec.txt \\
        --gfm /tmp/gfm/lib/python3.11/site-packages

An empty GitHub slug and ra's `heading` agree. Each difference is classed: `non-element tag`
when ra's slug text holds angle-bracket text that is no HTML element (ra keeps it as text, by
DECISIONS 7; GitHub drops it as a tag) and dropping it gives GitHub's slug; else `other`.
Writes `bench/results/github_slugs.json` and appends the figures to `github_slugs.txt`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, git_head

from ra_build.document.chunk import Slugger, slugify
from ra_build.document.html_tags import is_html_element
from ra_build.document.markdown import find_headings

RESULTS_JSON = REPO / "bench" / "results" / "github_slugs.json"
RESULTS_TXT = REPO / "bench" / "results" / "github_slugs.txt"
EXTENSIONS = ["table", "autolink", "tagfilter", "strikethrough", "tasklist"]
_EXAMPLE = re.compile(r"^`{32} example\n([\s\S]*?)^\.\n[\s\S]*?^`{32}$", re.M)
# cmark-gfm writes each block on lines of its own: top-level headings are those outside a quote or list
_BLOCK = re.compile(
    r'^(?:(?P<open><(?:blockquote|ul|ol(?: start="\d+")?)>)|(?P<close></(?:blockquote|ul|ol)>)'
    r"|<h([1-6])>(?P<inner>.*?)</h\3>)$",
    re.M | re.S,
)
_TAG = re.compile(r"</?([A-Za-z][A-Za-z0-9\-]*)(?:\s[^<>]*)?/?>")


def spec_examples(spec: Path) -> list[str]:
    """The markdown of every example of the spec, in order (`→` made a tab)."""
    text = spec.read_text(encoding="utf-8").replace("\r\n", "\n")
    text = re.sub(r"^<!-- END TESTS -->[\s\S]*", "", text, flags=re.M)
    return [m[1].replace("\u2192", "\t") for m in _EXAMPLE.finditer(text)]


def github_texts(markdown: str) -> list[str]:
    """The text content of each top-level heading cmark-gfm renders, as lxml reads it."""
    import cmarkgfm  # pyright: ignore[reportMissingImports]
    from cmarkgfm.cmark import Options  # pyright: ignore[reportMissingImports]
    from lxml import html

    rendered: str = cmarkgfm.markdown_to_html_with_extensions(  # pyright: ignore[reportUnknownMemberType]
        markdown, options=Options.CMARK_OPT_UNSAFE, extensions=EXTENSIONS
    )
    texts: list[str] = []
    depth = 0
    for block in _BLOCK.finditer(rendered):
        if block["open"]:
            depth += 1
        elif block["close"]:
            depth -= 1
        elif depth == 0:
            texts.append(html.fromstring(f"<div>{block['inner']}</div>").text_content())
    return texts


def github_slugs(texts: list[str]) -> list[str]:
    """github-slugger's slugs of one document's heading texts (its repeat counting)."""
    seen: dict[str, int] = {}
    slugs: list[str] = []
    for text in texts:
        slug = original = slugify(text)
        while slug in seen:
            seen[original] += 1
            slug = f"{original}-{seen[original]}"
        seen[slug] = 0
        slugs.append(slug)
    return slugs


def kind_of(ra_text: str, github_slug: str) -> str:
    """`non-element tag` when dropping ra's non-element tags gives GitHub's slug, else `other`."""
    dropped = _TAG.sub(lambda m: m[0] if is_html_element(m[1]) else "", ra_text)
    return "non-element tag" if dropped != ra_text and slugify(dropped) == github_slug else "other"


def measure(examples: list[str]) -> dict[str, Any]:
    """Headings compared, and every heading whose slug differs, classed."""
    headings = 0
    differences: list[dict[str, Any]] = []
    for number, example in enumerate(examples, start=1):
        for form, markdown in (("atx", "# " + example), ("setext", example + "===\n")):
            found = find_headings(markdown)
            texts = github_texts(markdown)
            headings += len(texts)
            slugger = Slugger()
            ra = [slugger.slug(h.slug_text) for h in found]
            if len(found) != len(texts):
                differences.append({"example": number, "form": form, "kind": "heading count"})
                continue
            for heading, ours, theirs in zip(found, ra, github_slugs(texts), strict=True):
                if ours != (theirs or "heading"):
                    kind = kind_of(heading.slug_text, theirs)
                    differences.append(
                        {"example": number, "form": form, "kind": kind, "github": theirs, "ra": ours}
                    )
    return {"examples": len(examples), "headings": headings, "differences": differences}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--spec", type=Path, required=True, help="spec.txt of commonmark-spec 0.31.2")
    parser.add_argument("--gfm", type=Path, required=True, help="a site-packages holding cmarkgfm")
    parser.add_argument("--show", action="store_true", help="print every difference")
    parser.add_argument("--no-record", action="store_true", help="write no results file")
    args = parser.parse_args()
    sys.path.append(str(args.gfm))
    result = measure(spec_examples(args.spec))
    kinds: dict[str, int] = {}
    for difference in result["differences"]:
        kinds[difference["kind"]] = kinds.get(difference["kind"], 0) + 1
    other = len(result["differences"]) - kinds.get("non-element tag", 0)
    report = (
        f"{dt.date.today()} {git_head()}: {result['examples']} spec examples, {result['headings']} headings; "
        f"slugs unlike GitHub's: {len(result['differences'])} "
        f"({kinds.get('non-element tag', 0)} non-element tags, by DECISIONS 7; {other} other)"
    )
    print(report)
    if args.show:
        for difference in result["differences"]:
            print(json.dumps(difference, ensure_ascii=False))
    if not args.no_record:
        RESULTS_JSON.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        with open(RESULTS_TXT, "a", encoding="utf-8") as handle:
            handle.write(report + "\n")


if __name__ == "__main__":
    main()

"""Benchmark: HTML → markdown converters on real documentation pages (issue 23), one core.

    python bench/html_convert.py --pages DIR [--only NAME,...] [--repeat N] [--by-source]
                                 [--dump OUT] [--no-record]

Run it in a venv that has the candidates, not ra's .venv (ra depends on html-to-markdown and
lxml only, through its `upstream` extra; the shipped candidate also needs what ra's heading
finder imports: markdown-it-py, pyyaml, orjson):

    python3 -m venv /tmp/conv-venv
    /tmp/conv-venv/bin/pip install 'html-to-markdown>=3.21,<4' 'markdownify>=1.2,<2' \\
        'html2text>=2025.4' 'trafilatura>=2.3,<3' beautifulsoup4 lxml markdown-it-py pyyaml orjson
    /tmp/conv-venv/bin/python bench/html_convert.py --pages /tmp/upstream-pages

DIR holds `SOURCE/…/PAGE.html`: built documentation pages as a framework's site serves them
(Sphinx, mkdocs, mkdocs-material, mdBook, rustdoc, javadoc, …), the first folder naming the
source (its PROVENANCE.md says where each came from). A candidate that is not installed is
skipped. Each candidate turns every page into markdown (pages read into memory first, the
process pinned to one CPU), and is scored against a reference taken from the page itself:

- the reference region is the page's real main content, found with a selector checked by hand
  for each generator (REFERENCE_SELECTORS; the page's <body> when none matches), with what is
  not content even there removed (REFERENCE_NOISE: Sphinx's "¶" permalinks, line numbers,
  buttons, scripts). It is the yardstick only: the `main+…` candidates use instead the one
  generic rule a converter would ship (`[role=main]`, else <article>, else <main>, else <body>);
- head: the region's h1–h6 whose text (letters and digits, links reduced to their text) is an
  ATX heading of the output at the same level (`head~`: at any level); `noise`: output headings
  that carry a permalink (¶, §, a trailing link to `#…`); `extra`: output headings that are no
  heading of the region (a sidebar's "Navigation", "Table of Contents", …), per page;
- code: the region's <pre> whose text (each line right-stripped, blank edges dropped) occurs
  unchanged inside one fenced block (indentation kept); `code~`: its letters and digits occur
  anywhere in the output (the code is there, maybe not fenced or not intact);
- table: the region's top-level <table> whose cell texts (90 % of them) sit in one pipe table;
  `cells`: the fraction of all cell texts that occur anywhere in the output;
- recall / leak: the output's words (letters and digits, link targets removed) as a bag against
  the bag of the region's words: recall = region words found / region words; leak = output words
  beyond the region's count of that word / output words, i.e. navigation, sidebar and footer
  text that came along (a proxy: a word that the region also holds enough times is not counted);
- speed: the best of `--repeat` timed passes (wall) over all pages, as pages/s and MB/s of HTML,
  with the CPU seconds; `net`: network calls the candidate tried (sockets are refused while it
  runs: nothing may fetch at run time).

Prints a table (and one per source with `--by-source`) and appends it, with the date, the load
(`uptime`) and every candidate's version, licence, wheel kind and installed size, to
bench/results/html_convert.txt. `--dump OUT` writes each candidate's markdown to
OUT/<candidate>/<page>.md for reading.
"""

from __future__ import annotations

import argparse
import datetime as dt
import html
import importlib
import importlib.metadata as md
import os
import platform
import re
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import REPO, git_head

RESULTS = REPO / "bench" / "results" / "html_convert.txt"

# The page's real main content, per generator (checked by hand on the pages of PROVENANCE.md);
# the first selector that matches wins, the <body> when none does (a page that is all content).
REFERENCE_SELECTORS = (
    "article.md-content__inner",  # mkdocs-material
    "section#main-content",  # rustdoc
    "#apicontent",  # node.js API docs
    "#yui-main",  # Django's own Sphinx theme
    "div.body[role=main]",  # Sphinx basic-derived themes (alabaster, python-docs-theme, …)
    "[role=main]",  # Sphinx (zzzeeksphinx), mkdocs' own theme
    "main",  # mdBook, javadoc (JDK 16+ doclet)
)
# Inside the region, what a reader does not want in the markdown either: permalink marks, line
# numbers, copy buttons, scripts. Removed from the reference, so that keeping them costs.
REFERENCE_NOISE = (
    "script, style, noscript, template, button, a.headerlink, a.anchor, span.linenos, td.linenos, .copybutton"
)
# The generic rule the `main+…` candidates use (XPath, first match wins).
MAIN_RULE = ("//*[@role='main']", "//article", "//main", "//body")

WORD = re.compile(r"[^\W_]+")
REF_LINK = re.compile(r"^\s*\[[^\]]+\]:\s*\S+.*$", re.M)
AUTOLINK = re.compile(r"<((?:https?|mailto):[^>\s]+)>")
ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!<>|~])")
QUOTE = re.compile(r"^\s*(?:> ?)+")
QUOTE_MARK = re.compile(r"\s*> ?")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
PERMALINK = re.compile(r"¶|§|\]\(#[^)]*\)\s*$")


def module(name: str) -> Any:
    """Import a candidate's (or the reference's) module; ra's own venv has none of them."""
    return importlib.import_module(name)


# ---- the candidates ------------------------------------------------------------------------------


def main_region(page: str) -> str:
    """The generic main-content rule: the first `[role=main]`, <article>, <main> or <body>."""
    lxml_html = module("lxml.html")
    tree = lxml_html.fromstring(page)
    for xpath in MAIN_RULE:
        found = tree.xpath(xpath)
        if found:
            return lxml_html.tostring(found[0], encoding="unicode")
    return page


def html2text_converter() -> Callable[[str], str]:
    html2text = module("html2text")

    def convert(page: str) -> str:
        parser = html2text.HTML2Text()
        parser.body_width = 0  # no wrapping: a wrapped line is not the page's text
        parser.backquote_code_style = True  # fenced code, not indented
        return parser.handle(page)

    return convert


def markdownify_converter() -> Callable[[str], str]:
    markdownify = module("markdownify").markdownify

    def convert(page: str) -> str:
        return markdownify(page, heading_style="ATX")

    return convert


def h2m_converter(**options: Any) -> Callable[[], Callable[[str], str]]:
    def make() -> Callable[[str], str]:
        h2m = module("html_to_markdown")
        given = dict(options)
        if "preprocessing" in given:
            given["preprocessing"] = h2m.PreprocessingOptions(**given["preprocessing"])
        settings = h2m.ConversionOptions(extract_metadata=False, **given)  # no YAML front matter

        def convert(page: str) -> str:
            return h2m.convert(page, settings).content or ""

        return convert

    return make


def trafilatura_converter(**options: Any) -> Callable[[], Callable[[str], str]]:
    def make() -> Callable[[str], str]:
        extract = module("trafilatura").extract

        def convert(page: str) -> str:
            return (
                extract(
                    page,
                    output_format="markdown",
                    include_formatting=True,
                    include_tables=True,
                    include_comments=False,
                    include_links=False,
                    with_metadata=False,
                    **options,
                )
                or ""
            )

        return convert

    return make


def on_main(make: Callable[[], Callable[[str], str]]) -> Callable[[], Callable[[str], str]]:
    def make_main() -> Callable[[str], str]:
        convert = make()
        return lambda page: convert(main_region(page))

    return make_main


def shipped() -> Callable[[str], str]:
    """What ra ships (ra_build.upstream.convert): the main rule with layout unwrapped, permalinks,
    line numbers, buttons and navigation dropped, hidden tabs kept, headings tidied."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from ra_build.upstream.convert import Unusable, to_markdown

    def convert(page: str) -> str:
        try:
            return to_markdown(page).markdown
        except Unusable:
            return ""

    return convert


@dataclass(frozen=True)
class Candidate:
    name: str
    distribution: str  # the PyPI name whose version and footprint are reported
    make: Callable[[], Callable[[str], str]]
    note: str


CANDIDATES = (
    Candidate("html2text", "html2text", html2text_converter, "whole page, body_width=0, fenced code"),
    Candidate("markdownify", "markdownify", markdownify_converter, "whole page, ATX headings"),
    Candidate("h2m", "html-to-markdown", h2m_converter(), "whole page, defaults"),
    Candidate(
        "h2m+nav",
        "html-to-markdown",
        h2m_converter(preprocessing={"enabled": True, "preset": "standard", "remove_navigation": True}),
        "whole page, its own navigation removal",
    ),
    Candidate("trafilatura", "trafilatura", trafilatura_converter(), "its own main-content extraction"),
    Candidate(
        "trafilatura+recall",
        "trafilatura",
        trafilatura_converter(favor_recall=True),
        "its extraction, favor_recall",
    ),
    Candidate("main+html2text", "html2text", on_main(html2text_converter), "generic main rule, then it"),
    Candidate("main+markdownify", "markdownify", on_main(markdownify_converter), "generic main rule"),
    Candidate("main+h2m", "html-to-markdown", on_main(h2m_converter()), "generic main rule"),
    Candidate(
        "main+h2m+clean",
        "html-to-markdown",
        shipped,
        "what ra ships (ra_build.upstream.convert): main rule, layout lists/tables and links in <pre> "
        "unwrapped, hidden tabs kept, permalinks, line numbers, buttons, nav dropped, headings tidied",
    ),
)


# ---- the reference -------------------------------------------------------------------------------


def squash(text: str) -> str:
    """Letters and digits only, lower case: how texts are compared across markup."""
    return "".join(WORD.findall(text.lower()))


def code_lines(text: str) -> str:
    """A code block's text for the intact test: lines right-stripped, blank edges dropped."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


@dataclass
class Reference:
    selector: str
    headings: list[tuple[int, str]]  # (level, squashed text)
    code: list[str]  # code_lines of each <pre>
    tables: list[list[str]]  # squashed cell texts of each top-level table
    words: Counter[str]


def reference(page: str) -> Reference:
    soup = module("bs4").BeautifulSoup(page, "lxml")
    root, selector = None, "body"
    for candidate in REFERENCE_SELECTORS:
        root = soup.select_one(candidate)
        if root is not None:
            selector = candidate
            break
    if root is None:
        root = soup.body or soup
    for noise in root.select(REFERENCE_NOISE):
        noise.decompose()
    headings = []
    for tag in root.find_all(re.compile(r"^h[1-6]$")):
        text = squash(tag.get_text(" "))
        if text:
            headings.append((int(tag.name[1]), text))
    # the innermost <pre> only: mdBook nests `<pre><pre class="playground"><code>`
    pres = [pre for pre in root.find_all("pre") if pre.find("pre") is None]
    code = [c for c in (code_lines(pre.get_text()) for pre in pres) if c.strip()]
    tables = []
    for table in root.find_all("table"):
        if table.find_parent("table") is not None:
            continue
        cells = [squash(cell.get_text(" ")) for cell in table.find_all(["td", "th"])]
        cells = [cell for cell in cells if cell]
        if cells:
            tables.append(cells)
    return Reference(selector, headings, code, tables, Counter(WORD.findall(root.get_text(" ").lower())))


# ---- reading the markdown ------------------------------------------------------------------------


def drop_targets(markdown: str) -> str:
    """Markdown without the `(target "title")` of its links and images (parentheses balanced, as
    in rustdoc's playground links); the brackets stay, they are no words."""
    out, i = [], 0
    while (j := markdown.find("](", i)) >= 0:
        out.append(markdown[i : j + 1])
        k, depth = j + 2, 1
        while k < len(markdown) and depth and markdown[k] != "\n":
            depth += {"(": 1, ")": -1}.get(markdown[k], 0)
            k += 1
        if depth:  # no closing parenthesis on the line: not a link
            out.append("](")
            k = j + 2
        i = k
    out.append(markdown[i:])
    return "".join(out)


def plain(markdown: str) -> str:
    """The reader's text of markdown: link and image targets dropped, escapes undone."""
    text = REF_LINK.sub("", drop_targets(markdown))
    text = AUTOLINK.sub(r"\1", text)
    return html.unescape(ESCAPE.sub(r"\1", text))


@dataclass
class Markdown:
    headings: list[tuple[int, str, str]] = field(default_factory=list)  # (level, squashed, raw)
    fences: list[str] = field(default_factory=list)  # code_lines of each fenced block
    pipe_tables: list[str] = field(default_factory=list)  # squashed text of each pipe table
    squashed: str = ""
    words: Counter[str] = field(default_factory=Counter)


def unquote(line: str, depth: int) -> str:
    """`line` without its first `depth` blockquote markers (`> `), and no more: a `>>>` of a
    Python prompt inside the quoted code stays."""
    for _ in range(depth):
        marker = QUOTE_MARK.match(line)
        if marker is None:
            break
        line = line[marker.end() :]
    return line


def read_markdown(markdown: str) -> Markdown:
    out = Markdown()
    prose: list[str] = []
    lines = markdown.split("\n")
    i = 0
    while i < len(lines):
        # a fence may sit in a blockquote (javadoc's `<blockquote><pre>`): `> ` opens its lines
        quote = QUOTE.match(lines[i])
        depth = quote.group(0).count(">") if quote else 0
        opening = FENCE.match(unquote(lines[i], depth))
        if opening is None:
            prose.append(lines[i])
            i += 1
            continue
        indent, marker = len(opening.group(1)), opening.group(2)
        body: list[str] = []
        i += 1
        while i < len(lines):
            line = unquote(lines[i], depth)
            closing = FENCE.match(line)
            if (
                closing
                and closing.group(2)[0] == marker[0]
                and len(closing.group(2)) >= len(marker)
                and not closing.group(3).strip()
            ):
                break
            # a fence indented in a list item: its lines lose that indentation, no more
            body.append(line[min(indent, len(line) - len(line.lstrip(" "))) :])
            i += 1
        out.fences.append(code_lines("\n".join(body)))
        prose.append("")
        i += 1
    block: list[str] = []
    for line in [*prose, ""]:
        heading = ATX.match(line)
        if heading:
            raw = heading.group(2) or ""
            out.headings.append((len(heading.group(1)), squash(plain(raw)), raw))
        if "|" in line and line.strip():
            block.append(line)
            continue
        if any(TABLE_RULE.match(row) for row in block) and len(block) >= 2:
            out.pipe_tables.append(squash(plain("\n".join(block))))
        block = []
    text = plain(markdown)
    out.squashed = squash(text)
    out.words = Counter(WORD.findall(text.lower()))
    return out


# ---- scoring -------------------------------------------------------------------------------------


@dataclass
class Score:
    """Counts over pages, added up per candidate (and per source)."""

    pages: int = 0
    failed: int = 0
    headings: int = 0
    heading_level: int = 0
    heading_any: int = 0
    out_headings: int = 0
    heading_noise: int = 0
    heading_extra: int = 0
    code: int = 0
    code_intact: int = 0
    code_text: int = 0
    tables: int = 0
    tables_pipe: int = 0
    cells: int = 0
    cells_found: int = 0
    region_words: int = 0
    words_found: int = 0
    out_words: int = 0
    leaked: int = 0

    def add(self, other: Score) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


def score(ref: Reference, markdown: str) -> Score:
    got = read_markdown(markdown)
    s = Score(pages=1)
    unused: dict[str, list[int]] = {}
    for index, (_, text, _) in enumerate(got.headings):
        unused.setdefault(text, []).append(index)
    matched: set[int] = set()
    for level, text in ref.headings:
        s.headings += 1
        choices = unused.get(text, [])
        if not choices:
            continue
        same = [i for i in choices if got.headings[i][0] == level]
        pick = same[0] if same else choices[0]
        choices.remove(pick)
        matched.add(pick)
        s.heading_any += 1
        s.heading_level += bool(same)
    s.out_headings = len(got.headings)
    s.heading_noise = sum(bool(PERMALINK.search(raw)) for _, _, raw in got.headings)
    s.heading_extra = len(got.headings) - len(matched)
    for pre in ref.code:
        s.code += 1
        s.code_intact += any(pre in fence for fence in got.fences)
        s.code_text += squash(pre) in got.squashed
    for cells in ref.tables:
        s.tables += 1
        s.cells += len(cells)
        s.cells_found += sum(cell in got.squashed for cell in cells)
        need = 0.9 * len(cells)
        s.tables_pipe += any(sum(cell in pipe for cell in cells) >= need for pipe in got.pipe_tables)
    s.region_words = sum(ref.words.values())
    s.words_found = sum(min(n, got.words[w]) for w, n in ref.words.items())
    s.out_words = sum(got.words.values())
    s.leaked = sum(max(0, n - ref.words[w]) for w, n in got.words.items())
    return s


# ---- running -------------------------------------------------------------------------------------


class NetworkRefused(OSError):
    pass


class NoNetwork:
    """Refuse (and count) every socket connect and name look-up while a candidate runs."""

    def __init__(self) -> None:
        self.attempts = 0

    def __enter__(self) -> NoNetwork:
        self.saved = (socket.socket.connect, socket.getaddrinfo, socket.create_connection)

        def refuse(*_args: Any, **_kwargs: Any) -> Any:
            self.attempts += 1
            raise NetworkRefused("network refused by bench/html_convert.py")

        socket.socket.connect = refuse  # type: ignore[method-assign]
        socket.getaddrinfo = refuse
        socket.create_connection = refuse
        return self

    def __exit__(self, *_exc: object) -> None:
        socket.socket.connect, socket.getaddrinfo, socket.create_connection = self.saved  # type: ignore[method-assign]


def convert_all(
    convert: Callable[[str], str], pages: list[tuple[str, str]], guard: NoNetwork
) -> tuple[list[str | None], float, float]:
    """Convert every page; (outputs, None for a page that raised; wall seconds; CPU seconds)."""
    outputs: list[str | None] = []
    with guard:
        wall, cpu = time.perf_counter(), time.process_time()
        for _, page in pages:
            try:
                outputs.append(convert(page))
            except Exception:
                outputs.append(None)
        return outputs, time.perf_counter() - wall, time.process_time() - cpu


def footprint(distribution: str) -> str:
    """Version, licence, wheel kind and installed size (with its dependencies) of a distribution."""
    try:
        dist = md.distribution(distribution)
    except md.PackageNotFoundError:
        return f"{distribution}: not installed"
    meta: Any = dist.metadata  # an email.message.Message underneath
    licence = meta.get("License-Expression") or ""
    if not licence:
        classifiers = [c.split(" :: ")[-1] for c in meta.get_all("Classifier") or [] if "License ::" in c]
        licence = ", ".join(classifiers) or (meta.get("License") or "?").splitlines()[0][:40]
    wheel = dist.read_text("WHEEL") or ""
    pure = "pure" if "Root-Is-Purelib: true" in wheel else "compiled"

    seen: set[str] = set()

    def size(name: str) -> int:
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            return 0
        try:
            found = md.distribution(name)
        except md.PackageNotFoundError:  # a requirement whose marker excludes this python
            return 0
        seen.add(key)
        total = sum(f.size or 0 for f in found.files or [])
        for requirement in found.requires or []:
            if "extra ==" in requirement:
                continue
            total += size(re.split(r"[\s;<>=!~\[(]", requirement, maxsplit=1)[0])
        return total

    own = sum(f.size or 0 for f in dist.files or [])
    total = size(distribution)
    deps = sorted(seen - {re.sub(r"[-_.]+", "-", distribution).lower()})
    return (
        f"{distribution} {dist.version}: {licence}, {pure} wheel, {own / 1e6:.1f} MB installed, "
        f"{total / 1e6:.1f} MB with {len(deps)} dependencies ({', '.join(deps) or 'none'})"
    )


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


HEADER = (
    "| candidate | head | head~ | noise | extra/page | code | code~ | table | cells | recall | leak "
    "| pages/s | MB/s | cpu s | load1 | fail | net |"
)


def row(name: str, s: Score, timing: tuple[float, float, float] | None, net: int | None) -> str:
    speed = "| - | - | - | - "
    if timing is not None:
        seconds, cpu, megabytes = timing
        load = os.getloadavg()[0]  # the 1-minute load as the timing ends: the machine is shared
        speed = f"| {s.pages / seconds:.1f} | {megabytes / seconds:.2f} | {cpu:.2f} | {load:.2f} "
    return (
        f"| {name} | {pct(s.heading_level, s.headings)} | {pct(s.heading_any, s.headings)} "
        f"| {pct(s.heading_noise, s.out_headings)} | {s.heading_extra / max(s.pages, 1):.1f} "
        f"| {pct(s.code_intact, s.code)} | {pct(s.code_text, s.code)} "
        f"| {pct(s.tables_pipe, s.tables)} | {pct(s.cells_found, s.cells)} "
        f"| {pct(s.words_found, s.region_words)} | {pct(s.leaked, s.out_words)} "
        f"{speed}| {s.failed} | {'-' if net is None else net} |"
    )


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pages", type=Path, required=True, help="SOURCE/…/PAGE.html pages")
    parser.add_argument("--only", help="comma-separated candidate names")
    parser.add_argument("--repeat", type=int, default=3, help="timed passes per candidate (best kept)")
    parser.add_argument("--by-source", action="store_true", help="also a table per source")
    parser.add_argument("--dump", type=Path, help="write each candidate's markdown under this folder")
    parser.add_argument("--no-record", action="store_true", help="do not append to the results")
    args = parser.parse_args()

    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    files = sorted(p for p in args.pages.rglob("*") if p.suffix.lower() in (".html", ".htm"))
    if not files:
        raise SystemExit(f"no .html pages under {args.pages}")
    pages = [(p.relative_to(args.pages).as_posix(), p.read_bytes().decode("utf-8", "replace")) for p in files]
    megabytes = sum(len(page.encode()) for _, page in pages) / 1e6
    references = [reference(page) for _, page in pages]
    sources = sorted({path.split("/")[0] for path, _ in pages})
    wanted = set(args.only.split(",")) if args.only else None
    load_before, uptime_before = os.getloadavg()[0], uptime()

    lines = [HEADER, "|" + "---|" * (HEADER.count("|") - 1)]
    per_source: dict[str, list[str]] = {source: [] for source in sources}
    footprints: dict[str, str] = {}
    notes: list[str] = []
    for candidate in CANDIDATES:
        if wanted is not None and candidate.name not in wanted:
            continue
        try:
            convert = candidate.make()
        except ImportError as error:
            notes.append(f"{candidate.name}: skipped ({error})")
            continue
        footprints.setdefault(candidate.distribution, footprint(candidate.distribution))
        guard = NoNetwork()
        outputs, best_wall, best_cpu = convert_all(convert, pages, guard)  # the scored pass, timed too
        for _ in range(max(args.repeat, 1) - 1):
            _, wall, cpu = convert_all(convert, pages, guard)
            if wall < best_wall:
                best_wall, best_cpu = wall, cpu
        total = Score()
        by_source: dict[str, Score] = {source: Score() for source in sources}
        for (path, _), ref, out in zip(pages, references, outputs, strict=True):
            s = score(ref, out or "")
            s.failed = out is None
            total.add(s)
            by_source[path.split("/")[0]].add(s)
            if args.dump is not None:
                target = args.dump / candidate.name / (path.rsplit(".", 1)[0] + ".md")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(out or "", encoding="utf-8")
        lines.append(row(candidate.name, total, (best_wall, best_cpu, megabytes), guard.attempts))
        for source in sources:
            per_source[source].append(row(candidate.name, by_source[source], None, None))
        print(lines[-1], flush=True)

    now = dt.datetime.now().astimezone().isoformat(timespec="seconds")
    by_selector = Counter(ref.selector for ref in references)
    totals = Score()
    for ref in references:
        totals.headings += len(ref.headings)
        totals.code += len(ref.code)
        totals.tables += len(ref.tables)
    report = [
        f"html_convert at {now}, rev {git_head()}, python {platform.python_version()} "
        f"{platform.machine()}, nproc={os.cpu_count()}, cores_used=1, repeat={args.repeat}",
        f"pages: {len(pages)} ({megabytes:.1f} MB of HTML) from {args.pages}, sources: {', '.join(sources)}; "
        f"reference regions: {', '.join(f'{sel} x{n}' for sel, n in by_selector.most_common())}; "
        f"{totals.headings} headings, {totals.code} <pre>, {totals.tables} tables",
        f"load before: {load_before:.2f} ({uptime_before})",
        f"load after:  {os.getloadavg()[0]:.2f} ({uptime()})",
        *(f"version: {line}" for line in footprints.values()),
        *(f"candidate {c.name}: {c.note}" for c in CANDIDATES if wanted is None or c.name in wanted),
        *notes,
        "",
        *lines,
    ]
    if args.by_source:
        for source in sources:
            report += ["", f"source {source}:", lines[0], lines[1], *per_source[source]]
    report += [""]
    print("\n".join(report))
    if not args.no_record:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        with RESULTS.open("a", encoding="utf-8") as out:
            out.write("\n".join(report) + "\n")


if __name__ == "__main__":
    main()

"""`ra update`'s first step for upstream trees: fetch what is missing or due into the cache.

For each upstream tree: its pages are its `urls` and the sitemap's URLs whose path matches the
tree's include and not its exclude. A page is fetched when it is not cached yet or its
`next_refresh_after` has passed (`force`: every page, `ra update --refresh-upstream`), with the
ETag / Last-Modified of the cached copy, so an unchanged page answers 304 and its file is left
untouched (nothing to re-parse). A page that fails — no network, DNS, 4xx/5xx, a timeout, a login
wall, an empty shell — keeps its cached copy and is retried at the next update; each failure is one
warning naming the page and why. Pages no longer listed leave the cache. Nothing here runs at
query time: `ra-query` never fetches.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ra_build.artifacts.atomic import write_if_changed
from ra_build.document.markdown import find_headings
from ra_build.upstream.cache import (
    RETRY_AFTER_FAILURE,
    Manifest,
    Page,
    http_code,
    is_due,
    read_manifest,
    unique_paths,
    write_manifest,
)
from ra_build.upstream.convert import Unusable, converter_available, to_markdown
from ra_build.upstream.fetch import Request, Response, fetch_all
from ra_query.errors import RaError
from ra_query.sources.globs import compile_globs

if TYPE_CHECKING:
    from ra_build.config.model import Config, TreeConfig

MAX_PAGES = 2_000  # a sitemap's pages beyond this are left out, with a warning
MAX_SITEMAPS = 50  # the sitemaps a sitemap index may name
EXTRA_HINT = "install the upstream extra to fetch pages: pip install 'ra-kb[upstream]'"


@dataclass
class TreeSync:
    """What one tree's sync did."""

    tree: str
    pages: int = 0  # listed
    fetched: int = 0  # 200, converted and cached (changed or not)
    changed: int = 0  # of those, whose cached markdown changed
    not_modified: int = 0  # 304
    failed: int = 0
    removed: int = 0
    warnings: list[str] = field(default_factory=list)


def sync_upstream(
    config: Config,
    *,
    force: bool = False,
    trees: list[str] | None = None,
    notify: Callable[[str], None] | None = None,
    wait: bool = True,
) -> list[TreeSync]:
    """Fetch the due pages of every upstream tree (or of `trees`) into their caches; each
    warning goes to `notify` as it happens and is kept in the result. One sync of a tree at a
    time (`ra update` and `ra mcp`'s thread take the tree's lock, `<tree>.lock` beside its
    manifest); without `wait` a tree another sync holds is left to it."""
    chosen = [t for t in config.trees.values() if t.upstream and (trees is None or t.name in trees)]
    if not chosen:
        return []
    if not converter_available():
        message = f"upstream trees {', '.join(t.name for t in chosen)}: not fetched — {EXTRA_HINT}"
        if notify is not None:
            notify(message)
        return [TreeSync(t.name, warnings=[message]) for t in chosen]
    reports: list[TreeSync] = []
    for tree in chosen:
        with _tree_lock(tree.path, wait, notify) as held:
            reports.append(_sync_tree(tree, force, notify) if held else TreeSync(tree.name))
    return reports


@contextmanager
def _tree_lock(cache: Path, wait: bool, notify: Callable[[str], None] | None = None) -> Iterator[bool]:
    """Hold the tree's sync lock (True), or say another sync holds it (False, without `wait`);
    waiting for it is said to `notify` first."""
    import fcntl

    cache.parent.mkdir(parents=True, exist_ok=True)
    with open(cache.parent / f"{cache.name}.lock", "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not wait:
                yield False
                return
            if notify is not None:
                notify(f"waiting for another sync of upstream tree {cache.name} (ra mcp's or an ra update)")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _sync_tree(tree: TreeConfig, force: bool, notify: Callable[[str], None] | None) -> TreeSync:
    cache = tree.path
    cache.mkdir(parents=True, exist_ok=True)
    manifest = read_manifest(cache)
    report = TreeSync(tree.name)

    def warn(message: str) -> None:
        line = f"upstream {tree.name}: {message}"
        report.warnings.append(line)
        if notify is not None:
            notify(line)

    now = time.time()
    urls = _listed(tree, manifest, warn, force, now)
    report.pages = len(urls)
    paths = unique_paths(urls)
    pages = {url: manifest.pages.get(url) or Page(url, paths[url]) for url in urls}
    named = set(tree.urls)
    for url, page in pages.items():
        page.from_sitemap = url not in named
        moved = page.path != paths[url]
        if moved:
            (cache / page.path).unlink(missing_ok=True)
            page.path = paths[url]
        if page.sha256 and (moved or not (cache / page.path).is_file()):
            page.sha256, page.next_refresh_after = "", 0.0  # fetched again, in full
    due = [page for page in pages.values() if force or is_due(page, now)]
    requests = [Request(p.url, p.etag, p.last_modified) if p.sha256 else Request(p.url) for p in due]
    for response in fetch_all(requests):
        _apply(cache, pages[response.url], response, tree.refresh, report, warn)
    report.removed = _drop_unlisted(cache, manifest, pages)
    if due and any(p.checked_at >= now and p.status in ("ok", "not-modified") for p in due):
        manifest.synced_at = time.time()
    manifest.pages = pages
    write_manifest(cache, manifest)
    if urls and not any(p.sha256 for p in pages.values()):
        if due:
            warn(
                f"no page could be fetched ({len(due)} tried) — the tree is empty until one is; check "
                "the URLs and the network, then run ra update again"
            )
        else:
            after = time.strftime(
                "%Y-%m-%d %H:%M", time.localtime(min(p.next_refresh_after for p in pages.values()))
            )
            warn(f"no page is cached yet; the next attempt is due {after} (--refresh-upstream: now)")
    return report


def _listed(
    tree: TreeConfig, manifest: Manifest, warn: Callable[[str], None], force: bool, now: float
) -> list[str]:
    """The tree's pages in order: its urls, then the sitemap's that its patterns keep.

    The sitemap is read when the tree's refresh has passed since it was last read (or `force`,
    or another sitemap is configured); otherwise, and when it cannot be read, the pages it
    listed last time stay.
    """
    urls = list(dict.fromkeys(tree.urls))
    if tree.sitemap:
        due = force or manifest.sitemap != tree.sitemap or now >= manifest.listed_at + tree.refresh
        found = _sitemap_urls(tree.sitemap, warn) if due else None
        if found is None:
            found = [url for url, page in manifest.pages.items() if page.from_sitemap]
        else:
            manifest.sitemap, manifest.listed_at = tree.sitemap, now
        found = _kept(found, tree.url_include, tree.url_exclude)
        urls += [u for u in dict.fromkeys(found) if u not in set(urls)]
    if len(urls) > MAX_PAGES:
        warn(f"{len(urls)} pages listed — only the first {MAX_PAGES} are kept; narrow include")
        urls = urls[:MAX_PAGES]
    return urls


def _kept(urls: list[str], include: tuple[str, ...], exclude: tuple[str, ...]) -> list[str]:
    """The URLs whose path (without its leading `/`) matches an include pattern and no exclude."""
    keep = compile_globs([p.lstrip("/") for p in include]) if include else None
    drop = compile_globs([p.lstrip("/") for p in exclude]) if exclude else None

    def path_of(url: str) -> str:
        return urlsplit(url).path.lstrip("/")

    return [
        u
        for u in urls
        if (keep is None or keep.match(path_of(u))) and (drop is None or not drop.match(path_of(u)))
    ]


def _sitemap_urls(url: str, warn: Callable[[str], None]) -> list[str] | None:
    """The page URLs of a sitemap (and of the sitemaps a sitemap index names), or None when it
    cannot be read (warned)."""
    response = fetch_all([Request(url)])[0]
    if response.status != 200:
        why = response.error or f"HTTP {response.status}"
        warn(f"sitemap {url} — {why}; keeping the pages it listed before")
        return None
    try:
        pages, nested = _locations(response.body)
    except ValueError as exc:
        warn(f"sitemap {url} is not a sitemap ({exc}); keeping the pages it listed before")
        return None
    if len(nested) > MAX_SITEMAPS:
        warn(f"sitemap index {url} names {len(nested)} sitemaps — reading the first {MAX_SITEMAPS}")
    for answer in fetch_all([Request(u) for u in nested[:MAX_SITEMAPS]]):
        if answer.status != 200:
            warn(f"sitemap {answer.url} — {answer.error or f'HTTP {answer.status}'}; its pages are left out")
            continue
        try:
            pages += _locations(answer.body)[0]
        except ValueError as exc:
            warn(f"sitemap {answer.url} is not a sitemap ({exc}); its pages are left out")
    return [p for p in pages if urlsplit(p).scheme in ("http", "https")]


def _locations(body: bytes) -> tuple[list[str], list[str]]:
    """(page URLs, sitemap URLs) of a sitemap's XML.

    Raises:
        ValueError: not XML, or neither a urlset nor a sitemapindex.
    """
    import xml.etree.ElementTree as ET

    if b"<!ENTITY" in body[:4096].upper():
        raise ValueError("it declares entities")
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        raise ValueError(str(exc)) from exc
    kind = root.tag.rsplit("}", 1)[-1]
    locs = [(e.text or "").strip() for e in root.iter() if e.tag.rsplit("}", 1)[-1] == "loc"]
    locs = [loc for loc in locs if loc]
    if kind == "urlset":
        return locs, []
    if kind == "sitemapindex":
        return [], locs
    raise ValueError(f"its root is <{kind}>")


def _apply(
    cache: Path,
    page: Page,
    response: Response,
    refresh: int,
    report: TreeSync,
    warn: Callable[[str], None],
) -> None:
    """Record a response in the page's entry, and write its markdown when it changed."""
    now = time.time()
    page.checked_at = now
    # a 503 or 429 that outlasted its retries comes back as status 0, its code in the error
    page.http_status = response.status or http_code(response.error)
    if response.status == 304 and page.sha256:
        page.status, page.fetched_at, page.next_refresh_after = "not-modified", now, now + refresh
        report.not_modified += 1
        return
    reason = response.error or (f"HTTP {response.status}" if response.status != 200 else "")
    markdown = ""
    if not reason:
        try:
            markdown = _page_markdown(response, page)
        except Unusable as exc:
            reason = exc.reason
    if reason:
        page.status = reason
        page.next_refresh_after = now + min(refresh, RETRY_AFTER_FAILURE)
        report.failed += 1
        kept = (
            f"serving the copy fetched {time.strftime('%Y-%m-%d %H:%M', time.localtime(page.fetched_at))}"
            if page.sha256
            else "no copy cached yet"
        )
        warn(f"{page.url} — {reason}; {kept}")
        return
    data = markdown.encode("utf-8")
    if write_if_changed(cache / page.path, data):
        report.changed += 1
    report.fetched += 1
    page.final_url = response.final_url
    page.etag, page.last_modified = response.etag, response.last_modified
    page.sha256, page.size = hashlib.sha256(data).hexdigest(), len(data)
    page.status, page.fetched_at, page.next_refresh_after = "ok", now, now + refresh


def _page_markdown(response: Response, page: Page) -> str:
    """The cached file of a fetched page: a front matter with its title and URL, then the page
    as markdown (HTML converted; markdown and plain text as they are).

    Raises:
        Unusable: not a page (another content type), a login wall or an empty shell.
    """
    kind = response.content_type.split(";", 1)[0].strip().lower()
    text = response.body.decode(_charset(response.content_type), errors="replace")
    if kind in ("text/markdown", "text/x-markdown", "text/plain"):
        if not text.strip():
            raise Unusable("an empty page")
        body, title = text.strip() + "\n", ""
    elif kind in ("text/html", "application/xhtml+xml", ""):
        converted = to_markdown(text, response.final_url or page.url)
        body, title = converted.markdown, converted.title
    else:
        raise Unusable(f"not a page ({kind})")
    page.title = title
    # the page's own `# heading` titles it where it has one; else the HTML's <title>
    has_h1 = any(h.level == 1 for h in find_headings(body))
    front = [f"title: {json.dumps(title, ensure_ascii=False)}"] if title and not has_h1 else []
    front.append(f"url: {json.dumps(page.url, ensure_ascii=False)}")
    return "---\n" + "\n".join(front) + "\n---\n\n" + body


def _charset(content_type: str) -> str:
    for part in content_type.split(";")[1:]:
        name, _, value = part.strip().partition("=")
        if name.lower() == "charset" and value:
            import codecs

            try:
                return codecs.lookup(value.strip("\"'")).name
            except LookupError:
                break
    return "utf-8"


def _drop_unlisted(cache: Path, manifest: Manifest, pages: dict[str, Page]) -> int:
    """Remove the cached files of pages no longer listed; how many."""
    kept = {p.path for p in pages.values()}
    removed = 0
    for url, page in manifest.pages.items():
        if url not in pages and page.path not in kept:
            (cache / page.path).unlink(missing_ok=True)
            removed += 1
    if not removed:
        return 0
    for folder in sorted((p for p in cache.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
        if not any(folder.iterdir()):
            shutil.rmtree(folder, ignore_errors=True)
    return removed


class BackgroundSync:
    """`ra mcp`'s refresh of upstream pages: a daemon thread syncs what is due at start-up and
    every `interval` seconds (the shortest `refresh` of the trees, at least a minute, at most 10),
    so no tool call waits for the network; what it writes to the caches the server's watcher sees
    like any edit. A failure is a warning, never the end of the server."""

    def __init__(
        self, config: Config, notify: Callable[[str], None], reload: Callable[[], Config] | None = None
    ) -> None:
        self.config = config
        self.notify = notify
        self.reload = reload
        shortest = min((t.refresh for t in config.trees.values() if t.upstream), default=600)
        self.interval = float(min(600, max(60, shortest)))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ra-upstream-sync", daemon=True)

    def __enter__(self) -> BackgroundSync:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()

    def tick(self) -> None:
        """One sync of what is due, under the configuration as `reload` reads it now: a page
        `add_source` added since the server started is listed, not dropped as unlisted."""
        if self.reload is not None:
            try:
                self.config = self.reload()
            except RaError as exc:  # a .ra.toml half edited: keep the last one that loaded
                self.notify(f"upstream sync keeps the configuration it last read: {exc}")
        sync_upstream(self.config, notify=self.notify, wait=False)  # ra update may be at it

    def _run(self) -> None:
        if not converter_available():  # said once, not at every tick
            sync_upstream(self.config, notify=self.notify)
            return
        while not self._stop.is_set():
            try:
                self.tick()
            except Exception as exc:  # a bug or a full disk must not end the server
                self.notify(f"upstream sync failed: {type(exc).__name__}: {exc}")
            self._stop.wait(self.interval)

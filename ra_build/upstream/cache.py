"""An upstream tree's download cache: one markdown file a page, and a manifest of what was fetched.

The cache of tree `t` is `UPSTREAM_DIR/t/` in the `.ra/` beside the config file that defines it
(the tree's `path`); its manifest is `UPSTREAM_DIR/t.json` beside that folder, so the walk of the
tree sees only pages. A page's file is named after its URL (`page_path`): the host, then the URL
path with `.html` dropped and `.md` added (`https://fastapi.tiangolo.com/tutorial/body/` →
`fastapi.tiangolo.com/tutorial/body.md`), so its id reads as the URL does
(`fastapi:fastapi.tiangolo.com/tutorial/body.md#request-body`).
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import orjson

from ra_build.artifacts.atomic import write_if_changed

MANIFEST_VERSION = 2  # 2: which pages the sitemap listed, and when it was read
_UNSAFE = re.compile(r"[^\w.\-]+")  # what a path segment keeps: letters, digits, _ . -


@dataclass
class Page:
    """What the manifest knows of one page (issue 23's fields; times are Unix seconds)."""

    url: str
    path: str  # the cached markdown, relative to the tree's cache
    final_url: str = ""
    fetched_at: float = 0.0  # the last answer from the server (200 or 304)
    checked_at: float = 0.0  # the last attempt, answered or not
    etag: str = ""
    last_modified: str = ""
    sha256: str = ""  # of the cached markdown
    size: int = 0  # bytes of the cached markdown
    status: str = "new"  # new | ok | not-modified | <why the last attempt failed>
    next_refresh_after: float = 0.0
    title: str = ""
    from_sitemap: bool = False  # listed by the tree's sitemap, not by its urls
    http_status: int = 0  # of the last answer (200, 304, 404…); 0: none (a timeout, no connection)


@dataclass
class Manifest:
    """An upstream tree's manifest: its pages by URL, and when the tree was last synced."""

    tree: str
    pages: dict[str, Page] = field(default_factory=dict)
    synced_at: float = 0.0  # the last sync that reached the network for any page
    sitemap: str = ""  # the sitemap last read, and when: it is read again when the tree's refresh
    listed_at: float = 0.0  # has passed, not at every sync (ra mcp syncs every few minutes)

    def cached(self) -> list[Page]:
        """The pages whose markdown is in the cache."""
        return [page for page in self.pages.values() if page.sha256]

    def next_due(self) -> float:
        """When the first cached page is due again (0: none is cached)."""
        return min((page.next_refresh_after for page in self.cached()), default=0.0)

    def to_json(self) -> bytes:
        data = {
            "version": MANIFEST_VERSION,
            "tree": self.tree,
            "synced_at": self.synced_at,
            "sitemap": self.sitemap,
            "listed_at": self.listed_at,
            "pages": [asdict(page) for page in sorted(self.pages.values(), key=lambda p: p.url)],
        }
        return orjson.dumps(data, option=orjson.OPT_INDENT_2)


_HTTP_CODE = re.compile(r"HTTP (\d{3})\b")


def http_code(status: str) -> int:
    """The HTTP status a page's `status` (or a fetch's error) names: 200 for `ok`, 304 for
    `not-modified`, 404 for `HTTP 404`, `HTTP 503, retry after 120 s`; 0 when it names none."""
    if status in ("ok", "not-modified"):
        return 200 if status == "ok" else 304
    code = _HTTP_CODE.match(status)
    return int(code[1]) if code else 0


def iso_utc(seconds: float) -> str | None:
    """A manifest time as ISO 8601 UTC (`2026-11-25T20:12:27Z`), None for 0 (never)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds)) if seconds else None


def manifest_path(cache: Path) -> Path:
    """Where the manifest of the tree whose cache is `cache` lives: beside it, `<tree>.json`."""
    return cache.parent / f"{cache.name}.json"


def read_manifest(cache: Path) -> Manifest:
    """The tree's manifest; an empty one when there is none yet or it cannot be read (the next
    sync fetches every page again: the cache is a cache)."""
    try:
        data: dict[str, Any] = orjson.loads(manifest_path(cache).read_bytes())
        if data.get("version") != MANIFEST_VERSION:
            raise ValueError("another manifest version")
        pages = {p["url"]: Page(**p) for p in data["pages"]}
        return Manifest(
            cache.name,
            pages,
            float(data.get("synced_at", 0.0)),
            str(data.get("sitemap", "")),
            float(data.get("listed_at", 0.0)),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return Manifest(cache.name)


def write_manifest(cache: Path, manifest: Manifest) -> None:
    """Write the manifest atomically (a stopped sync leaves the old one), unless it holds just
    this already: `ra mcp`'s sync runs every few minutes, mostly to find nothing due."""
    write_if_changed(manifest_path(cache), manifest.to_json())


def page_path(url: str) -> str:
    """The cache file of a page: `<host>/<path>.md`, readable as its URL (module docstring).

    `/` and an empty path are `index.md`; a port joins the host with `_`; a query string adds an
    8-character hash of itself (`search--1a2b3c4d.md`); characters other than letters, digits,
    `_`, `.` and `-` become `-`; `.` and `..` segments are dropped.
    """
    parts = urlsplit(url)
    host = (parts.hostname or "host").lower()
    if parts.port is not None:
        host = f"{host}_{parts.port}"
    segments = [_UNSAFE.sub("-", unquote(s)).strip("-") or "-" for s in parts.path.split("/") if s]
    segments = [s for s in segments if s not in (".", "..")]
    if not segments:
        segments = ["index"]
    last = re.sub(r"\.(html?|md|markdown|txt)$", "", segments[-1], flags=re.IGNORECASE) or "index"
    if parts.query:
        last += "--" + hashlib.sha256(parts.query.encode()).hexdigest()[:8]
    segments[-1] = last + ".md"
    return "/".join([_UNSAFE.sub("-", host), *segments])


def unique_paths(urls: list[str]) -> dict[str, str]:
    """Each URL's cache path; two URLs with the same path (`/a` and `/a/`) get a hash suffix."""
    seen: dict[str, str] = {}
    out: dict[str, str] = {}
    for url in urls:
        path = page_path(url)
        if path in seen and seen[path] != url:
            stem = path.removesuffix(".md")
            path = f"{stem}--{hashlib.sha256(url.encode()).hexdigest()[:8]}.md"
        seen[path] = url
        out[url] = path
    return out


RETRY_AFTER_FAILURE = 3_600  # seconds before a page whose fetch failed is tried again (at most `refresh`)


def is_due(page: Page, now: float | None = None) -> bool:
    """Whether a page must be fetched: its refresh time has come (at once for a new page; an hour
    after a failed attempt, so a server that fails is not asked every few minutes)."""
    return (now if now is not None else time.time()) >= page.next_refresh_after

"""Fetching pages: one httpx2 client, a bounded pool, per-host politeness, conditional requests.

httpx2 is the HTTP client the `mcp` SDK already installs (httpx's successor, the same API).
Every request says `User-Agent: ra/VERSION`; a page is at most `MAX_BYTES`; redirects are
followed up to `MAX_REDIRECTS` hops and only to http(s); a timeout, a connection error, a 429 or
a 5xx is retried `RETRIES` times with doubling back-off; a 304 answers a conditional request.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ra_query.version import __version__

USER_AGENT = f"ra/{__version__} (+https://github.com/ra-kb/ra; upstream docs for an agent)"
MAX_BYTES = 10_000_000
MAX_REDIRECTS = 5
RETRIES = 2
BACKOFF = 0.5  # seconds before the first retry; doubled each time
MAX_RETRY_AFTER = 60  # a longer Retry-After ends the attempts: the page waits for its next sync
WORKERS = 4  # requests in flight at once
HOST_GAP = 0.25  # seconds between two requests to one host
DEFAULT_TIMEOUT = 20.0  # seconds; RA_UPSTREAM_TIMEOUT overrides it
_RETRIED = {429, 500, 502, 503, 504}
ACCEPT = "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.8,*/*;q=0.5"
_UNRESOLVED = ("name or service not known", "nodename nor servname", "getaddrinfo", "name resolution")


@dataclass(frozen=True)
class Request:
    url: str
    etag: str = ""
    last_modified: str = ""


@dataclass(frozen=True)
class Response:
    """A fetch's outcome: `status` 200 with `body`, 304, or 0 with `error` (why it failed)."""

    url: str
    status: int
    final_url: str = ""
    body: bytes = b""
    content_type: str = ""
    etag: str = ""
    last_modified: str = ""
    error: str = ""
    retry_after: float = 0.0  # seconds a 429 or 503 asked to wait (Retry-After)


def timeout_seconds() -> float:
    """The request timeout: $RA_UPSTREAM_TIMEOUT seconds (a positive number), else 20."""
    raw = os.environ.get("RA_UPSTREAM_TIMEOUT", "")
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_TIMEOUT
    return value if value > 0 else DEFAULT_TIMEOUT


class _Politeness:
    """At most one request at a time to a host, and HOST_GAP seconds between their starts."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hosts: dict[str, tuple[threading.Lock, list[float]]] = {}

    def slot(self, url: str) -> tuple[threading.Lock, list[float]]:
        host = (urlsplit(url).hostname or "").lower()
        with self._lock:
            return self._hosts.setdefault(host, (threading.Lock(), [0.0]))


def fetch_all(
    requests: Iterable[Request], on_done: Callable[[Response], None] | None = None
) -> list[Response]:
    """Fetch every request on a bounded pool, politely; the responses in the requests' order."""
    import httpx2

    items = list(requests)
    if not items:
        return []
    timeout = timeout_seconds()
    polite = _Politeness()
    client = httpx2.Client(
        headers={"User-Agent": USER_AGENT, "Accept": ACCEPT},
        timeout=httpx2.Timeout(timeout, connect=min(timeout, 10.0)),
        follow_redirects=True,
        max_redirects=MAX_REDIRECTS,
        limits=httpx2.Limits(max_connections=WORKERS, max_keepalive_connections=WORKERS),
        trust_env=True,
    )

    def one(request: Request) -> Response:
        response = _fetch(client, polite, request)
        if on_done is not None:
            on_done(response)
        return response

    with (
        client,
        ThreadPoolExecutor(max_workers=min(WORKERS, len(items)), thread_name_prefix="ra-fetch") as pool,
    ):
        return list(pool.map(one, items))


def _fetch(client: Any, polite: _Politeness, request: Request) -> Response:
    import httpx2

    headers = {}
    if request.etag:
        headers["If-None-Match"] = request.etag
    if request.last_modified:
        headers["If-Modified-Since"] = request.last_modified
    lock, last = polite.slot(request.url)
    error = ""
    pause = 0.0  # what the server asked for (Retry-After), when it asked for no more than a minute
    for attempt in range(RETRIES + 1):
        if attempt:
            time.sleep(max(pause, BACKOFF * 2 ** (attempt - 1)))
        with lock:
            wait = last[0] + HOST_GAP - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            last[0] = time.monotonic()
            try:
                result = _get(client, request.url, headers)
            except httpx2.TooManyRedirects:
                return Response(request.url, 0, error=f"more than {MAX_REDIRECTS} redirects")
            except httpx2.UnsupportedProtocol as exc:
                return Response(request.url, 0, error=f"redirected off http(s) ({exc})")
            except httpx2.TimeoutException:
                error = f"timed out after {timeout_seconds():g} s"
                continue
            except httpx2.HTTPError as exc:
                error = _network_error(exc)
                continue
        if result.status in _RETRIED:
            error = f"HTTP {result.status}"
            if result.retry_after > MAX_RETRY_AFTER:
                return Response(request.url, 0, error=f"{error}, retry after {result.retry_after:g} s")
            pause = result.retry_after
            continue
        return result
    return Response(request.url, 0, error=error)


def _get(client: Any, url: str, headers: dict[str, str]) -> Response:
    """One GET, the body read up to MAX_BYTES (a bigger page is an error, not a cut page)."""
    with client.stream("GET", url, headers=headers) as response:
        status = response.status_code
        final = str(response.url)
        if status == 304:
            return Response(url, 304, final, etag=response.headers.get("etag", ""))
        if status != 200:
            wait = response.headers.get("retry-after", "")
            after = float(wait) if wait.isdigit() else 0.0
            return Response(url, status, final, error=f"HTTP {status}", retry_after=after)
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_BYTES:
            return Response(url, 0, final, error=f"larger than {MAX_BYTES:,} bytes")
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > MAX_BYTES:
                return Response(url, 0, final, error=f"larger than {MAX_BYTES:,} bytes")
            chunks.append(chunk)
        return Response(
            url,
            200,
            final,
            b"".join(chunks),
            response.headers.get("content-type", ""),
            response.headers.get("etag", ""),
            response.headers.get("last-modified", ""),
        )


def _network_error(exc: Exception) -> str:
    """One line for a failed connection: DNS, refused, reset, TLS."""
    text = str(exc) or type(exc).__name__
    lowered = text.lower()
    if any(marker in lowered for marker in _UNRESOLVED):
        return "the host name does not resolve (no network, or a wrong host)"
    if "connection refused" in lowered:
        return "the connection was refused"
    return " ".join(f"{type(exc).__name__}: {text}".split())[:200]

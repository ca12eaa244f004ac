"""A real HTTP server on 127.0.0.1 for the upstream tests: pages with ETag and Last-Modified,
304s, redirects, slow answers, errors, a login wall, an empty shell and sitemaps; it records every
request (path and headers) so a test can say what ra asked for."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Route:
    """What a path answers: a status, a body, headers; `delay` seconds first."""

    body: str = ""
    status: int = 200
    content_type: str = "text/html; charset=utf-8"
    etag: str = ""
    last_modified: str = ""
    location: str = ""
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    length: bool = True  # False: no Content-Length, the body ends when the connection closes


@dataclass
class Seen:
    path: str
    headers: dict[str, str]


@dataclass
class Site:
    """The routes a server answers, editable while it runs, and the requests it saw."""

    routes: dict[str, Route] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)
    port: int = 0

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def requests(self, path: str) -> list[Seen]:
        return [s for s in self.seen if s.path == path]


def page(title: str, *sections: tuple[str, str]) -> str:
    """A documentation page as a site generator writes it: navigation, a main region with
    headings (Sphinx's ¶ permalinks) and code, a footer."""
    body = "".join(
        f'<h2 id="{h.lower().replace(" ", "-")}">{h}<a class="headerlink" href="#x">¶</a></h2>\n{text}\n'
        for h, text in sections
    )
    return (
        f"<!doctype html><html><head><title>{title} — Framework docs</title></head><body>"
        '<nav><a href="/">Home</a> <a href="/guide/">Guide</a> Navigation menu links</nav>'
        f'<div role="main"><h1>{title}<a class="headerlink" href="#t">¶</a></h1>\n{body}</div>'
        "<footer>Copyright footer text</footer></body></html>"
    )


class _Handler(BaseHTTPRequestHandler):
    site: Site

    def do_GET(self) -> None:
        self.site.seen.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}))
        route = self.site.routes.get(self.path)
        if route is None:
            self._answer(404, b"not found", "text/plain")
            return
        if route.delay:
            time.sleep(route.delay)
        if route.status in (301, 302, 307, 308):
            self.send_response(route.status)
            self.send_header("Location", route.location)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if route.status == 200 and (
            (route.etag and self.headers.get("If-None-Match") == route.etag)
            or (route.last_modified and self.headers.get("If-Modified-Since") == route.last_modified)
        ):
            self.send_response(304)
            if route.etag:
                self.send_header("ETag", route.etag)
            self.end_headers()
            return
        extra = {"ETag": route.etag, "Last-Modified": route.last_modified, **route.headers}
        self._answer(route.status, route.body.encode(), route.content_type, extra, length=route.length)

    def _answer(
        self, status: int, data: bytes, kind: str, extra: dict[str, str] | None = None, *, length: bool = True
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        if length:
            self.send_header("Content-Length", str(len(data)))
        for name, value in (extra or {}).items():
            if value:
                self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serving(site: Site) -> Iterator[Site]:
    """Serve `site` on a free port of 127.0.0.1 in a thread until the block ends."""
    handler = type("Handler", (_Handler,), {"site": site})
    server = ThreadingHTTPServer(("127.0.0.1", site.port), handler)
    server.daemon_threads = True
    site.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield site
    finally:
        server.shutdown()
        server.server_close()

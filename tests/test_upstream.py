"""Upstream trees (issue 23): pages fetched from real HTTP servers on 127.0.0.1, cached as
markdown with a manifest, refreshed with conditional requests, searched beside the docs, and kept
when the network or the page fails. Real `ra` and `ra-query` processes throughout."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import IO, Any

import pytest

from tests.conftest import BIN, Run, child_env, run_cmd
from tests.test_mcp import serve, soon, text_of
from tests.upstream_server import Route, Site, page, serving

DEPS = page(
    "Dependencies",
    (
        "First steps",
        "<p>Declare a dependency with <code>Depends</code> and the framework injects it into your path "
        "operation function when a request arrives.</p><pre><code>def common(q: str):\n    return q\n</code></pre>",
    ),
    (
        "Sub dependencies",
        "<p>Dependencies can depend on other dependencies, and each is cached per request.</p>",
    ),
)
BODY = page(
    "Request body",
    (
        "Pydantic models",
        "<p>Declare the request body as a Pydantic model and the framework reads and validates the JSON "
        "body for you.</p><table><tr><th>type</th><th>meaning</th></tr><tr><td>str</td><td>text</td></tr></table>",
    ),
)
LAST_MODIFIED = "Wed, 21 Oct 2025 07:28:00 GMT"


@pytest.fixture
def site() -> Iterator[Site]:
    routes = {
        "/guide/dependencies/": Route(DEPS, etag='"deps-1"', last_modified=LAST_MODIFIED),
        "/guide/body/": Route(BODY, last_modified=LAST_MODIFIED),
    }
    with serving(Site(routes)) as running:
        yield running


class Project:
    """A project folder with a `.ra.toml` and the HOME its commands run with."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.home.mkdir(parents=True)

    def config(self, text: str) -> None:
        (self.root / ".ra.toml").write_text(text)

    def ra(self, *args: str, env: dict[str, str] | None = None) -> Run:
        return run_cmd("ra", *args, cwd=self.root, home=self.home, env=env)

    def rq(self, *args: str) -> Run:
        return run_cmd(
            "ra-query", "--artifacts", str(self.root / ".ra"), *args, cwd=self.root, home=self.home
        )

    @property
    def cache(self) -> Path:
        return self.root / ".ra" / "upstream" / "fw"

    def manifest(self) -> dict[str, Any]:
        return json.loads((self.root / ".ra" / "upstream" / "fw.json").read_text())

    def make_due(self) -> None:
        """Move every cached page's refresh time into the past, as time passing would."""
        manifest = self.manifest()
        for entry in manifest["pages"]:
            entry["next_refresh_after"] = 0
        (self.root / ".ra" / "upstream" / "fw.json").write_text(json.dumps(manifest))

    def pages(self) -> dict[str, dict[str, Any]]:
        return {p["url"]: p for p in self.manifest()["pages"]}


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path / "project")


def urls_tree(site: Site, *paths: str, refresh: str = "7d") -> str:
    urls = ", ".join(f'"{site.url(p)}"' for p in paths)
    return f'[tree.fw]\nurls = [{urls}]\nrefresh = "{refresh}"\n'


def search_json(project: Project, *args: str) -> list[dict[str, Any]]:
    run = project.ra("search", "--json", *args)
    assert run.code in (0, 1), run.err
    return json.loads(run.out)["queries"][0]["results"]


# ---- configuration --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tree", "message"),
    [
        (
            'urls = ["ftp://example.org/a"]',
            "urls \"ftp://example.org/a\" has scheme 'ftp' — only http:// and https://",
        ),
        ('urls = ["example.org/a"]', 'urls "example.org/a" has no scheme — only http:// and https://'),
        ('urls = ["https:///a"]', 'urls "https:///a" has no host'),
        ("urls = []", "urls is empty"),
        ('urls = "https://example.org/a"', "urls must be an array of strings"),
        ('sitemap = ["https://example.org/s.xml"]', "sitemap must be a string"),
        (
            'urls = ["https://example.org/a"]\nrefresh = "7 days"',
            'refresh "7 days" is not a duration — use Nd, Nh or Nm',
        ),
        ('urls = ["https://example.org/a"]\nrefresh = "0d"', 'refresh "0d" is not a duration'),
        ('urls = ["https://example.org/a"]\npath = "docs"', "has both path and urls"),
    ],
)
def test_a_bad_upstream_key_is_an_error_with_file_line_and_key(
    project: Project, tree: str, message: str
) -> None:
    project.config(f"[tree.fw]\n{tree}\n")
    run = project.ra("update")
    assert run.code == 2
    assert f"{project.root / '.ra.toml'}:" in run.err and "[tree.fw]" in run.err
    assert message in run.err


def test_config_shows_an_upstream_trees_pages_refresh_and_cache(project: Project) -> None:
    project.config(
        '[tree.fw]\nsitemap = "https://example.org/sitemap.xml"\ninclude = ["/guide/**"]\nrefresh = "12h"\n'
    )
    run = project.ra("config")
    assert run.code == 0, run.err
    assert 'sitemap = "https://example.org/sitemap.xml"' in run.out
    assert 'include = ["/guide/**"]  # URL paths' in run.out
    assert 'refresh = "12h"' in run.out
    assert f"# cache: {project.cache}" in run.out


# ---- fetch, cache, index --------------------------------------------------------------------------


def test_update_fetches_the_pages_converts_them_and_indexes_them_as_upstream(
    project: Project, site: Site
) -> None:
    project.config(urls_tree(site, "/guide/dependencies/", "/guide/body/"))
    run = project.ra("update")
    assert run.code == 0, run.err
    cached = (project.cache / f"127.0.0.1_{site.port}" / "guide" / "dependencies.md").read_text()
    assert cached.startswith(f'---\nurl: "{site.url("/guide/dependencies/")}"\n---\n\n# Dependencies\n')
    assert "## First steps" in cached and "```\ndef common(q: str):\n    return q\n```" in cached
    assert "¶" not in cached and "Navigation menu" not in cached and "Copyright footer" not in cached
    results = search_json(project, "--kind", "upstream", "validates the JSON body")
    assert results[0]["id"] == f"fw:127.0.0.1_{site.port}/guide/body.md#pydantic-models"
    assert results[0]["kind"] == "upstream"
    assert results[0]["url"] == site.url("/guide/body/")
    assert "| type | meaning |" in results[0]["content"]


def test_every_request_says_it_is_ra(project: Project, site: Site) -> None:
    project.config(urls_tree(site, "/guide/body/"))
    assert project.ra("update").code == 0
    assert site.requests("/guide/body/")[0].headers["user-agent"].startswith("ra/")


def test_the_manifest_records_each_pages_fetch(project: Project, site: Site) -> None:
    project.config(urls_tree(site, "/guide/dependencies/"))
    assert project.ra("update").code == 0
    entry = project.pages()[site.url("/guide/dependencies/")]
    assert entry["path"] == f"127.0.0.1_{site.port}/guide/dependencies.md"
    assert entry["final_url"] == site.url("/guide/dependencies/")
    assert entry["etag"] == '"deps-1"' and entry["last_modified"] == LAST_MODIFIED
    assert entry["status"] == "ok"
    data = (project.cache / entry["path"]).read_bytes()
    assert entry["size"] == len(data)
    import hashlib

    assert entry["sha256"] == hashlib.sha256(data).hexdigest()
    assert entry["next_refresh_after"] - entry["fetched_at"] == pytest.approx(7 * 86400)


def test_a_page_that_is_not_due_is_not_asked_for_again(project: Project, site: Site) -> None:
    project.config(urls_tree(site, "/guide/dependencies/"))
    assert project.ra("update").code == 0
    assert project.ra("update").code == 0
    assert len(site.requests("/guide/dependencies/")) == 1


def test_a_due_page_is_asked_for_conditionally_and_a_304_parses_nothing(project: Project, site: Site) -> None:
    project.config(urls_tree(site, "/guide/dependencies/", "/guide/body/"))
    assert project.ra("update").code == 0
    cached = project.cache / f"127.0.0.1_{site.port}" / "guide" / "dependencies.md"
    before = cached.stat().st_mtime_ns
    run = project.ra("update", "--refresh-upstream")
    assert run.code == 0, run.err
    assert ", 0 parsed" in run.out
    again = site.requests("/guide/dependencies/")[-1].headers
    assert again["if-none-match"] == '"deps-1"' and again["if-modified-since"] == LAST_MODIFIED
    assert site.requests("/guide/body/")[-1].headers["if-modified-since"] == LAST_MODIFIED
    assert cached.stat().st_mtime_ns == before
    assert project.pages()[site.url("/guide/dependencies/")]["status"] == "not-modified"


def test_a_page_past_its_refresh_time_is_fetched_by_a_plain_update(project: Project, site: Site) -> None:
    project.config(urls_tree(site, "/guide/dependencies/", refresh="1m"))
    assert project.ra("update").code == 0
    project.make_due()
    assert project.ra("update").code == 0
    assert len(site.requests("/guide/dependencies/")) == 2


def test_a_changed_page_replaces_its_cached_copy_and_its_chunks(project: Project, site: Site) -> None:
    project.config(urls_tree(site, "/guide/dependencies/"))
    assert project.ra("update").code == 0
    site.routes["/guide/dependencies/"] = Route(
        page(
            "Dependencies",
            (
                "Yield dependencies",
                "<p>A dependency with yield runs its teardown code after the response is sent to the client, so it can close a database session.</p>",
            ),
        ),
        etag='"deps-2"',
    )
    run = project.ra("update", "--refresh-upstream")
    assert run.code == 0, run.err
    assert ", 1 parsed" in run.out
    assert search_json(project, "teardown after the response")[0]["title"] == "Yield dependencies"
    assert search_json(project, "--strict", "injects") == []


def test_a_page_that_left_the_list_leaves_the_cache_and_the_index(project: Project, site: Site) -> None:
    project.config(urls_tree(site, "/guide/dependencies/", "/guide/body/"))
    assert project.ra("update").code == 0
    project.config(urls_tree(site, "/guide/dependencies/"))
    assert project.ra("update").code == 0
    assert not (project.cache / f"127.0.0.1_{site.port}" / "guide" / "body.md").exists()
    assert search_json(project, "--strict", "pydantic") == []


# ---- failures -------------------------------------------------------------------------------------


def _fetched_then(project: Project, site: Site, route: Route, env: dict[str, str] | None = None) -> Run:
    """Fetch the dependencies page, then make it answer `route` and refresh: the run."""
    project.config(urls_tree(site, "/guide/dependencies/"))
    assert project.ra("update").code == 0
    site.routes["/guide/dependencies/"] = route
    return project.ra("update", "--refresh-upstream", env=env)


@pytest.mark.parametrize(
    ("route", "reason"),
    [
        (Route("gone", status=404, content_type="text/plain"), "HTTP 404"),
        (Route("down", status=503, content_type="text/plain"), "HTTP 503"),
        (Route('<html><body><form><input type="password" name="p"></form></body></html>'), "a login wall"),
        (
            Route('<html><body><div id="app"></div><script src="app.js"></script></body></html>'),
            "an empty shell",
        ),
        (Route("%PDF-1.4", content_type="application/pdf"), "not a page (application/pdf)"),
    ],
)
def test_a_failing_page_keeps_its_cached_copy_with_a_one_line_warning(
    project: Project, site: Site, route: Route, reason: str
) -> None:
    run = _fetched_then(project, site, route)
    assert run.code == 0, run.err
    lines = [line for line in run.err.splitlines() if "upstream fw:" in line]
    assert len(lines) == 1
    assert (
        site.url("/guide/dependencies/") in lines[0]
        and reason in lines[0]
        and "serving the copy fetched" in lines[0]
    )
    assert search_json(project, "injects into your path operation")[0]["title"] == "First steps"


def test_a_server_that_is_gone_leaves_the_cache_serving(project: Project, tmp_path: Path) -> None:
    routes = {"/guide/dependencies/": Route(DEPS, etag='"deps-1"')}
    with serving(Site(routes)) as site:
        project.config(urls_tree(site, "/guide/dependencies/"))
        assert project.ra("update").code == 0
    run = project.ra("update", "--refresh-upstream")
    assert run.code == 0, run.err
    assert "the connection was refused; serving the copy fetched" in run.err
    assert search_json(project, "injects into your path operation")[0]["title"] == "First steps"


def test_a_slow_page_times_out_and_is_retried(project: Project, site: Site) -> None:
    run = _fetched_then(project, site, Route(DEPS, delay=2.0), env={"RA_UPSTREAM_TIMEOUT": "0.3"})
    assert run.code == 0, run.err
    assert "timed out after 0.3 s; serving the copy fetched" in run.err
    assert len(site.requests("/guide/dependencies/")) == 1 + 3  # the first fetch, then 3 attempts


def test_a_host_that_does_not_resolve_is_a_warning(project: Project) -> None:
    project.config('[tree.fw]\nurls = ["http://no-such-host.invalid/page/"]\n')
    run = project.ra("update")
    assert run.code == 0, run.err
    assert "http://no-such-host.invalid/page/ — the host name does not resolve" in run.err
    assert "no page could be fetched (1 tried) — the tree is empty until one is" in run.err


def test_redirects_are_followed_and_the_final_url_recorded(project: Project, site: Site) -> None:
    site.routes["/old/"] = Route(status=301, location="/guide/dependencies/")
    project.config(urls_tree(site, "/old/"))
    assert project.ra("update").code == 0
    assert project.pages()[site.url("/old/")]["final_url"] == site.url("/guide/dependencies/")


def test_a_redirect_loop_is_a_warning_not_a_hang(project: Project, site: Site) -> None:
    site.routes["/a/"] = Route(status=302, location="/b/")
    site.routes["/b/"] = Route(status=302, location="/a/")
    project.config(urls_tree(site, "/a/"))
    run = project.ra("update")
    assert run.code == 0, run.err
    assert "more than 5 redirects" in run.err


def test_a_redirect_off_http_is_refused(project: Project, site: Site) -> None:
    site.routes["/ftp/"] = Route(status=302, location="ftp://127.0.0.1/file")
    project.config(urls_tree(site, "/ftp/"))
    run = project.ra("update")
    assert run.code == 0, run.err
    assert "redirected off http(s)" in run.err


# ---- sitemaps -------------------------------------------------------------------------------------


def sitemap(site: Site, *paths: str) -> str:
    locs = "".join(f"<url><loc>{site.url(p)}</loc></url>" for p in paths)
    return f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'


def test_a_sitemap_tree_fetches_the_pages_its_include_keeps(project: Project, site: Site) -> None:
    site.routes["/sitemap.xml"] = Route(
        sitemap(site, "/guide/dependencies/", "/guide/body/", "/blog/news/"), content_type="application/xml"
    )
    site.routes["/blog/news/"] = Route(
        page("News", ("Release", "<p>A release announcement with many words in it for the index.</p>"))
    )
    project.config(f'[tree.fw]\nsitemap = "{site.url("/sitemap.xml")}"\ninclude = ["/guide/**"]\n')
    assert project.ra("update").code == 0
    assert sorted(project.pages()) == [site.url("/guide/body/"), site.url("/guide/dependencies/")]
    assert site.requests("/blog/news/") == []


def test_a_sitemap_index_names_the_sitemaps_to_read(project: Project, site: Site) -> None:
    site.routes["/part.xml"] = Route(sitemap(site, "/guide/body/"), content_type="application/xml")
    index = f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>{site.url("/part.xml")}</loc></sitemap></sitemapindex>'
    site.routes["/sitemap.xml"] = Route(index, content_type="application/xml")
    project.config(f'[tree.fw]\nsitemap = "{site.url("/sitemap.xml")}"\n')
    assert project.ra("update").code == 0
    assert list(project.pages()) == [site.url("/guide/body/")]


def test_an_unreadable_sitemap_keeps_the_pages_it_listed_before(project: Project, site: Site) -> None:
    site.routes["/sitemap.xml"] = Route(sitemap(site, "/guide/body/"), content_type="application/xml")
    project.config(f'[tree.fw]\nsitemap = "{site.url("/sitemap.xml")}"\n')
    assert project.ra("update").code == 0
    site.routes["/sitemap.xml"] = Route("<html>not xml", content_type="text/html")
    run = project.ra("update", "--refresh-upstream")
    assert run.code == 0, run.err
    assert "is not a sitemap" in run.err and "keeping the pages it listed before" in run.err
    assert list(project.pages()) == [site.url("/guide/body/")]


def test_a_sitemap_is_read_again_only_once_the_trees_refresh_has_passed(project: Project, site: Site) -> None:
    site.routes["/sitemap.xml"] = Route(sitemap(site, "/guide/body/"), content_type="application/xml")
    project.config(f'[tree.fw]\nsitemap = "{site.url("/sitemap.xml")}"\n')
    assert project.ra("update").code == 0
    more = sitemap(site, "/guide/body/", "/guide/dependencies/")
    site.routes["/sitemap.xml"] = Route(more, content_type="application/xml")
    assert project.ra("update").code == 0  # ra mcp's sync, every few minutes, reads no sitemap
    assert len(site.requests("/sitemap.xml")) == 1
    assert list(project.pages()) == [site.url("/guide/body/")]
    manifest = project.manifest()
    manifest["listed_at"] = 0  # as a refresh period passing would
    (project.root / ".ra" / "upstream" / "fw.json").write_text(json.dumps(manifest))
    assert project.ra("update").code == 0
    assert len(site.requests("/sitemap.xml")) == 2
    assert set(project.pages()) == {site.url("/guide/body/"), site.url("/guide/dependencies/")}


# ---- reading without the network ------------------------------------------------------------------


def test_ra_query_answers_from_upstream_pages_and_never_fetches(project: Project, site: Site) -> None:
    project.config(urls_tree(site, "/guide/body/"))
    assert project.ra("update").code == 0
    asked = len(site.seen)
    run = project.rq("search", "--json", "kind:upstream pydantic")
    assert run.code == 0, run.err
    assert json.loads(run.out)["queries"][0]["results"][0]["url"] == site.url("/guide/body/")
    assert len(site.seen) == asked


def test_a_search_does_not_fetch_even_when_pages_are_due(project: Project, site: Site) -> None:
    project.config(urls_tree(site, "/guide/body/", refresh="1m"))
    assert project.ra("update").code == 0
    project.make_due()
    asked = len(site.seen)
    assert project.ra("search", "pydantic").code == 0
    assert len(site.seen) == asked


def test_the_index_manifest_says_where_each_page_came_from_and_when(project: Project, site: Site) -> None:
    project.config(urls_tree(site, "/guide/body/"))
    assert project.ra("update").code == 0
    entry = json.loads((project.root / ".ra" / "manifest.json").read_text())["trees"]["fw"]["upstream"]
    page_entry = entry["pages"][f"127.0.0.1_{site.port}/guide/body.md"]
    assert page_entry["url"] == site.url("/guide/body/") and page_entry["status"] == "ok"
    assert entry["synced_at"].endswith("Z") and entry["due"].endswith("Z")


def test_upstream_pages_need_no_network_once_packed(project: Project, site: Site, tmp_path: Path) -> None:
    project.config(urls_tree(site, "/guide/body/"))
    assert project.ra("update").code == 0
    archive = tmp_path / "kb.tar.gz"
    assert project.ra("pack", "--output", str(archive)).code == 0
    asked = len(site.seen)
    run = run_cmd(
        "ra-query",
        "--artifacts",
        str(archive),
        "search",
        "--json",
        "pydantic",
        cwd=tmp_path,
        home=project.home,
    )
    assert run.code == 0, run.err
    result = json.loads(run.out)["queries"][0]["results"][0]
    assert result["kind"] == "upstream" and result["url"] == site.url("/guide/body/")
    assert len(site.seen) == asked


# ---- status, agents, MCP --------------------------------------------------------------------------


def test_status_shows_an_upstream_trees_pages_last_sync_next_due_and_failures(
    project: Project, site: Site
) -> None:
    project.config(urls_tree(site, "/guide/body/", "/missing/"))
    assert project.ra("update").code == 0
    run = project.ra("status")
    assert run.code == 0, run.err
    assert re.search(
        r"upstream: 2 pages, 1 cached, last sync \d{4}-\d\d-\d\d \d\d:\d\d UTC, next page due ", run.out
    )
    assert f"failing: {site.url('/missing/')} — HTTP 404" in run.out


LOGIN_WALL = '<html><body><form><input type="password" name="p"></form></body></html>'
# 2025-11-20 09:14:00, 09:15:00 and 2025-11-27 09:14:00 UTC: the times a status golden pins
FETCHED, CHECKED, DUE = 1_763_630_040.0, 1_763_630_100.0, 1_764_234_840.0


def four_pages(project: Project, site: Site) -> None:
    """A tree of four pages after two syncs: body fetched (200), dependencies not modified (304),
    one page missing (404) and one a login wall (a 200 that is no page)."""
    site.routes["/wall/"] = Route(LOGIN_WALL)
    project.config(urls_tree(site, "/guide/body/", "/guide/dependencies/", "/missing/", "/wall/"))
    assert project.ra("update").code == 0
    manifest = project.manifest()
    for entry in manifest["pages"]:
        if entry["url"] == site.url("/guide/dependencies/"):
            entry["next_refresh_after"] = 0  # due: asked again with its ETag
    (project.root / ".ra" / "upstream" / "fw.json").write_text(json.dumps(manifest))
    assert project.ra("update").code == 0


def pin_times(project: Project) -> None:
    """Set every time of the manifest to FETCHED, CHECKED and DUE (a failed page: never fetched)."""
    manifest = project.manifest()
    manifest["synced_at"] = CHECKED
    for entry in manifest["pages"]:
        entry["fetched_at"] = FETCHED if entry["sha256"] else 0
        entry["checked_at"], entry["next_refresh_after"] = CHECKED, DUE
    (project.root / ".ra" / "upstream" / "fw.json").write_text(json.dumps(manifest))


def test_the_manifest_records_the_http_status_of_each_pages_last_answer(project: Project, site: Site) -> None:
    four_pages(project, site)
    codes = {url.removeprefix(site.url("")): p["http_status"] for url, p in project.pages().items()}
    assert codes == {"/guide/body/": 200, "/guide/dependencies/": 304, "/missing/": 404, "/wall/": 200}


def test_status_json_lists_each_upstream_page_with_its_id_fetches_http_status_and_next_due(
    project: Project, site: Site
) -> None:
    four_pages(project, site)
    pin_times(project)
    run = project.ra("status", "--json")
    assert run.code == 0, run.err
    host = f"127.0.0.1_{site.port}"
    fetched, checked, due = "2025-11-20T09:14:00Z", "2025-11-20T09:15:00Z", "2025-11-27T09:14:00Z"
    assert json.loads(run.out)["trees"][0]["upstream"]["page_list"] == [
        {
            "url": site.url("/guide/body/"),
            "id": f"fw:{host}/guide/body.md",
            "fetched_at": fetched,
            "checked_at": checked,
            "http_status": 200,
            "status": "ok",
            "next_due": due,
            "failing": False,
        },
        {
            "url": site.url("/guide/dependencies/"),
            "id": f"fw:{host}/guide/dependencies.md",
            "fetched_at": fetched,
            "checked_at": checked,
            "http_status": 304,
            "status": "not-modified",
            "next_due": due,
            "failing": False,
        },
        {
            "url": site.url("/missing/"),
            "id": None,
            "fetched_at": None,
            "checked_at": checked,
            "http_status": 404,
            "status": "HTTP 404",
            "next_due": due,
            "failing": True,
        },
        {
            "url": site.url("/wall/"),
            "id": None,
            "fetched_at": None,
            "checked_at": checked,
            "http_status": 200,
            "status": "a login wall (a password field and little else)",
            "next_due": due,
            "failing": True,
        },
    ]


def test_status_long_shows_each_upstream_page_to_a_person(
    project: Project, site: Site, golden: Callable[[str, str], None]
) -> None:
    four_pages(project, site)
    pin_times(project)
    run = project.ra("status", "-l")
    assert run.code == 0, run.err
    tree = run.out[run.out.index("  fw (local)") : run.out.index("Artifacts:")]
    golden(
        "status_upstream_long.txt", tree.replace(str(project.root), "PROJECT").replace(str(site.port), "PORT")
    )


def test_status_without_long_counts_the_upstream_pages_and_lists_none(project: Project, site: Site) -> None:
    four_pages(project, site)
    run = project.ra("status")
    assert run.code == 0, run.err
    assert "upstream: 4 pages, 2 cached," in run.out
    assert " → " not in run.out and site.url("/guide/body/") not in run.out


def test_status_json_reads_the_http_status_of_a_manifest_written_before_ra_kept_it(
    project: Project, site: Site
) -> None:
    four_pages(project, site)
    manifest = project.manifest()
    for entry in manifest["pages"]:
        del entry["http_status"]
    (project.root / ".ra" / "upstream" / "fw.json").write_text(json.dumps(manifest))
    listed = json.loads(project.ra("status", "--json").out)["trees"][0]["upstream"]["page_list"]
    assert [p["http_status"] for p in listed] == [200, 304, 404, None]


def test_status_long_says_of_a_page_that_got_no_answer_or_was_never_asked_just_that() -> None:
    from ra_build.cli.reports import UpstreamPage

    timed_out = UpstreamPage(
        "https://a.b/x", "fw:a.b/x.md", "2025-11-20T09:14:00Z", "2025-11-20T09:15:00Z", None,
        "timed out after 20 s", "2025-11-20T10:15:00Z", True,
    )  # fmt: skip
    busy = UpstreamPage(
        "https://a.b/y", None, None, "2025-11-20T09:15:00Z", 503, "HTTP 503, retry after 120 s", None, True
    )
    new = UpstreamPage("https://a.b/z", None, None, None, None, "new", None, False)
    assert [line for page in (timed_out, busy, new) for line in page.describe()] == [
        "https://a.b/x → fw:a.b/x.md",
        "  no answer, failing: timed out after 20 s, fetched 2025-11-20 09:14 UTC,"
        " checked 2025-11-20 09:15 UTC, next due 2025-11-20 10:15 UTC",
        "https://a.b/y → not cached",
        "  HTTP 503, failing, retry after 120 s, never fetched, checked 2025-11-20 09:15 UTC,"
        " due at the next ra update",
        "https://a.b/z → not cached",
        "  not fetched yet, due at the next ra update",
    ]


def test_ls_docs_long_of_an_upstream_tree_gives_each_pages_url_and_fetch_date(
    project: Project, site: Site
) -> None:
    four_pages(project, site)
    pin_times(project)
    run = project.ra("ls", "docs", "fw:", "-l")
    assert run.code == 0, run.err
    host = f"127.0.0.1_{site.port}"
    assert run.out == (
        f"fw:{host}/guide/body.md\tRequest body\t{site.url('/guide/body/')}\tfetched 2025-11-20 09:14 UTC\n"
        f"fw:{host}/guide/dependencies.md\tDependencies\t{site.url('/guide/dependencies/')}"
        "\tfetched 2025-11-20 09:14 UTC\n"
    )


def test_agents_names_the_upstream_trees_and_when_to_search_them(project: Project, site: Site) -> None:
    project.config(urls_tree(site, "/guide/body/"))
    run = project.ra("agents", "--stdout")
    assert run.code == 0, run.err
    assert f"`fw` (upstream docs: {site.url('/guide/body/')})" in run.out
    assert 'ra search --kind upstream "..."' in run.out


def test_the_mcp_server_names_upstream_trees_and_searches_one_tree(project: Project, site: Site) -> None:
    (project.root / "docs").mkdir()
    (project.root / "docs" / "ours.md").write_text(
        "# Our body rules\n\nWe validate every request body twice.\n"
    )
    project.config(urls_tree(site, "/guide/body/") + '\n[tree.docs]\npath = "docs"\n')
    assert project.ra("update").code == 0
    command = [str(BIN / "ra-query"), "--artifacts", str(project.root / ".ra"), "mcp"]
    with serve(command, project.root, project.home) as server:
        instructions = server.portal.call(server.session.initialize).instructions or ""
        only = server.ok("search", {"queries": "request body", "trees": ["fw"]})["queries"][0]["results"]
        both = server.ok("search", {"queries": "request body"})["queries"][0]["results"]
        wrong = server.call("search", {"queries": "body", "trees": ["nope"]})
    assert "Upstream trees `fw` hold the framework docs" in instructions
    assert {r["tree"] for r in only} == {"fw"} and {r["tree"] for r in both} == {"fw", "docs"}
    assert wrong.is_error and "trees names unknown tree 'nope' — the trees are: docs, fw" in text_of(wrong)


@pytest.mark.slow
def test_ra_mcp_fetches_due_pages_in_the_background_and_serves_them(project: Project, site: Site) -> None:
    project.config(urls_tree(site, "/guide/body/"))
    with serve([str(BIN / "ra"), "mcp"], project.root, project.home) as server:
        server.ok("list_sources")  # a call is answered while the pages are being fetched
        found = soon(
            lambda: [r["url"] for r in server.ok("search", {"queries": "pydantic"})["queries"][0]["results"]],
            [site.url("/guide/body/")],
            seconds=30,
        )
    assert found == [site.url("/guide/body/")]


def test_get_of_an_upstream_chunk_says_its_url(project: Project, site: Site) -> None:
    project.config(urls_tree(site, "/guide/body/"))
    assert project.ra("update").code == 0
    chunk_id = f"fw:127.0.0.1_{site.port}/guide/body.md#pydantic-models"
    text = project.ra("get", chunk_id)
    assert text.code == 0, text.err
    assert text.out.startswith(f"─── {chunk_id} ───\n> {site.url('/guide/body/')}\n")
    payload = json.loads(project.ra("get", "--json", chunk_id).out)
    assert payload["url"] == site.url("/guide/body/")


def test_without_the_upstream_extra_update_says_how_to_install_it_and_builds_the_rest(
    project: Project, site: Site
) -> None:
    (project.root / "docs").mkdir()
    (project.root / "docs" / "ours.md").write_text("# Ours\n\nOur own conventions.\n")
    project.config(urls_tree(site, "/guide/body/") + '\n[tree.docs]\npath = "docs"\n')
    hide = "import sys; sys.modules['html_to_markdown'] = None; sys.argv = ['ra', 'update']; "
    proc = subprocess.run(
        [str(BIN / "python"), "-c", hide + "from ra_build.cli.entry import main; main()"],
        cwd=project.root,
        env=child_env(HOME=str(project.home)),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert (
        "upstream trees fw: not fetched — install the upstream extra to fetch pages: pip install 'ra-kb[upstream]'"
        in proc.stderr
    )
    assert site.seen == []
    assert search_json(project, "conventions")[0]["tree"] == "docs"


def test_a_page_over_the_size_limit_is_refused_not_cut(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    from ra_build.upstream import fetch

    monkeypatch.setattr(fetch, "MAX_BYTES", 1_000)
    site.routes["/big/"] = Route("x" * 5_000)
    (response,) = fetch.fetch_all([fetch.Request(site.url("/big/"))])
    assert response.status == 0 and response.error == "larger than 1,000 bytes"


def test_a_page_that_does_not_declare_its_size_is_refused_once_it_outgrows_the_limit(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ra_build.upstream import fetch

    monkeypatch.setattr(fetch, "MAX_BYTES", 1_000)
    site.routes["/streamed/"] = Route("x" * 5_000, length=False)
    site.routes["/small/"] = Route("y" * 900, length=False)
    big, small = fetch.fetch_all([fetch.Request(site.url("/streamed/")), fetch.Request(site.url("/small/"))])
    assert big.status == 0 and big.error == "larger than 1,000 bytes"
    assert small.status == 200 and small.body == b"y" * 900


def test_a_page_that_failed_is_not_asked_for_again_by_the_next_plain_update(
    project: Project, site: Site
) -> None:
    project.config(urls_tree(site, "/missing/"))
    assert project.ra("update").code == 0
    assert project.ra("update").code == 0
    assert len(site.requests("/missing/")) == 1
    assert project.ra("update", "--refresh-upstream").code == 0
    assert len(site.requests("/missing/")) == 2


def test_a_long_retry_after_ends_the_attempts(project: Project, site: Site) -> None:
    site.routes["/busy/"] = Route(
        "busy", status=503, content_type="text/plain", headers={"Retry-After": "120"}
    )
    project.config(urls_tree(site, "/busy/"))
    run = project.ra("update")
    assert run.code == 0, run.err
    assert "HTTP 503, retry after 120 s" in run.err
    assert len(site.requests("/busy/")) == 1


def test_an_empty_tree_whose_pages_wait_says_when_the_next_attempt_is(project: Project, site: Site) -> None:
    project.config(urls_tree(site, "/missing/"))
    assert "no page could be fetched (1 tried)" in project.ra("update").err
    run = project.ra("update")
    assert run.code == 0, run.err
    assert (
        "no page is cached yet; the next attempt is due " in run.err
        and "(--refresh-upstream: now)" in run.err
    )


def test_check_names_failing_pages_and_a_tree_with_nothing_cached(project: Project, site: Site) -> None:
    project.config(urls_tree(site, "/guide/body/", "/missing/"))
    before = project.ra("check")
    assert "tree fw: no page is cached yet — run: ra update (it fetches them)" in before.out
    assert "unreadable directory" not in before.out
    assert project.ra("update").code == 0
    after = project.ra("check")
    assert after.code == 1
    assert f"{site.url('/missing/')}: the last fetch failed (HTTP 404)" in after.out
    assert "no page is cached yet" not in after.out


def test_status_json_gives_upstream_times_as_iso_utc(project: Project, site: Site) -> None:
    project.config(urls_tree(site, "/guide/body/"))
    assert project.ra("update").code == 0
    upstream = json.loads(project.ra("status", "--json").out)["trees"][0]["upstream"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", upstream["synced_at"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", upstream["next_due"])
    assert (upstream["pages"], upstream["cached"], upstream["failing"]) == (1, 1, [])


def test_a_sync_that_finds_the_tree_locked_leaves_it_to_the_other(
    project: Project, site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ra_build.config.load import load_config
    from ra_build.upstream.sync import _tree_lock, sync_upstream

    project.config(urls_tree(site, "/guide/body/"))
    config = load_config(project.root, project.home)
    with _tree_lock(config.trees["fw"].path, True):
        assert sync_upstream(config, wait=False)[0].fetched == 0
    assert site.seen == []
    assert sync_upstream(config, wait=False)[0].fetched == 1


def test_pages_under_url_folders_a_code_tree_would_skip_are_indexed(project: Project) -> None:
    # `build/` and `vendor/` are skipped in folder trees by default; in the cache they are URL paths
    routes = {"/build/body/": Route(BODY), "/vendor/deps/": Route(DEPS)}
    with serving(Site(routes)) as site:
        project.config(urls_tree(site, "/build/body/", "/vendor/deps/"))
        run = project.ra("update")
        assert run.code == 0, run.err
        assert [r["url"] for r in search_json(project, "pydantic")] == [site.url("/build/body/")]
        assert site.url("/vendor/deps/") in [r["url"] for r in search_json(project, "sub dependencies")]


def test_an_upstream_tree_with_an_empty_include_takes_every_page_without_a_warning(
    project: Project, site: Site
) -> None:
    project.config(urls_tree(site, "/guide/body/") + "include = []\n")
    run = project.ra("update")
    assert run.code == 0 and "include is empty" not in run.err, run.err
    assert [r["url"] for r in search_json(project, "pydantic")] == [site.url("/guide/body/")]


def test_the_background_sync_keeps_a_page_added_to_the_urls_after_it_started(
    project: Project, site: Site
) -> None:
    from ra_build.config.load import load_config
    from ra_build.upstream.sync import BackgroundSync, sync_upstream

    def read() -> Any:
        return load_config(project.root, project.home, require_paths=False)

    project.config(urls_tree(site, "/guide/body/"))
    background = BackgroundSync(read(), lambda _line: None, reload=read)
    background.tick()
    # what add_source does while the server runs: the urls line rewritten, the new page fetched
    project.config(urls_tree(site, "/guide/body/", "/guide/dependencies/"))
    sync_upstream(read(), trees=["fw"])
    background.tick()
    pages = project.pages()
    assert set(pages) == {site.url("/guide/body/"), site.url("/guide/dependencies/")}
    assert (project.cache / pages[site.url("/guide/dependencies/")]["path"]).is_file()


def test_update_no_wait_leaves_a_tree_another_sync_holds_to_it(project: Project, site: Site) -> None:
    from ra_build.config.load import load_config
    from ra_build.upstream.sync import _tree_lock

    project.config(urls_tree(site, "/guide/body/"))
    config = load_config(project.root, project.home, require_paths=False)
    with _tree_lock(config.trees["fw"].path, True):
        run = project.ra("update", "--no-wait")
    assert run.code == 0, run.err
    assert site.seen == []


def test_an_update_that_finds_the_tree_locked_says_it_waits_then_syncs(project: Project, site: Site) -> None:
    from ra_build.config.load import load_config
    from ra_build.upstream.sync import _tree_lock

    project.config(urls_tree(site, "/guide/body/"))
    config = load_config(project.root, project.home, require_paths=False)
    said: list[str] = []
    waits = threading.Event()

    def read(stream: IO[str]) -> None:
        for line in stream:
            said.append(line)
            if line.startswith("ra: warning: waiting for another sync of upstream tree fw"):
                waits.set()

    with ExitStack() as other_sync:
        other_sync.enter_context(_tree_lock(config.trees["fw"].path, True))
        with subprocess.Popen(
            [str(BIN / "ra"), "update"],
            cwd=project.root,
            env=child_env(HOME=str(project.home)),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        ) as update:
            assert update.stderr is not None
            reader = threading.Thread(target=read, args=(update.stderr,))
            reader.start()
            told = waits.wait(timeout=60)  # said before it blocks: no line would come until released
            other_sync.close()
            reader.join()
    assert told, "".join(said)
    assert update.returncode == 0 and len(site.requests("/guide/body/")) == 1


def test_a_sync_with_nothing_due_leaves_the_cache_manifest_untouched(project: Project, site: Site) -> None:
    """`ra mcp`'s sync runs every few minutes, mostly to find nothing due: it rewrites nothing."""
    from ra_build.config.load import load_config
    from ra_build.upstream.sync import sync_upstream

    project.config(urls_tree(site, "/guide/body/"))
    config = load_config(project.root, project.home, require_paths=False)
    assert sync_upstream(config)[0].fetched == 1
    manifest = project.root / ".ra" / "upstream" / "fw.json"
    before = manifest.stat()
    assert sync_upstream(config)[0].fetched == 0
    after = manifest.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_the_background_sync_says_a_missing_extra_once_not_at_every_tick(
    project: Project, site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ra_build.config.load import load_config
    from ra_build.upstream.sync import EXTRA_HINT, BackgroundSync

    monkeypatch.setitem(sys.modules, "html_to_markdown", None)  # as if the upstream extra were missing
    project.config(urls_tree(site, "/guide/body/"))
    said: list[str] = []
    background = BackgroundSync(load_config(project.root, project.home, require_paths=False), said.append)
    background.interval = 0.0  # tick after tick: a notice said at each tick is said many times
    with background:
        background._thread.join(timeout=10)  # its work done, the thread ends
    assert said == [f"upstream trees fw: not fetched — {EXTRA_HINT}"]
    assert site.seen == []


NO_H1 = (
    '<!doctype html><html><head><title>Install — Framework docs</title></head><body><div role="main">'
    "<h2>From PyPI</h2><p>Install the framework with pip, then check the version it reports.</p>"
    "<pre><code># in a virtual environment\npip install framework\n</code></pre></div></body></html>"
)


def test_the_html_title_heads_a_page_only_when_it_has_no_h1_of_its_own(project: Project, site: Site) -> None:
    """A `# ` line in a code block is no heading: that page still gets its <title>."""
    from ra_build.config.load import load_config
    from ra_build.upstream.sync import sync_upstream

    site.routes["/guide/install/"] = Route(NO_H1)
    project.config(urls_tree(site, "/guide/install/", "/guide/body/"))
    assert sync_upstream(load_config(project.root, project.home, require_paths=False))[0].fetched == 2
    pages = project.pages()
    install, body = (
        (project.cache / pages[site.url(p)]["path"]).read_text(encoding="utf-8")
        for p in ("/guide/install/", "/guide/body/")
    )
    assert install.startswith(
        f'---\ntitle: "Install — Framework docs"\nurl: "{site.url("/guide/install/")}"\n---\n'
    )
    assert "\n# in a virtual environment\n" in install
    assert body.startswith(f'---\nurl: "{site.url("/guide/body/")}"\n---\n\n# Request body\n')


# ---- ra mcp --allow-add-sources --------------------------------------------------------------------


def test_with_url_rewrites_the_trees_urls_array_and_leaves_the_rest() -> None:
    from ra_build.upstream.add import _with_url

    text = '# mine\n[tree.a]\nurls = [\n  "https://x.org/1", # first\n  "https://x.org/2",\n]\nrefresh = "7d"\n\n[tree.b]\npath = "docs"\n'
    edited = _with_url(text, "a", ["https://x.org/1", "https://x.org/2", "https://x.org/3"])
    assert edited == (
        '# mine\n[tree.a]\nurls = [\n  "https://x.org/1",\n  "https://x.org/2",\n  "https://x.org/3",\n]\n'
        'refresh = "7d"\n\n[tree.b]\npath = "docs"\n'
    )


def test_with_url_gives_a_sitemap_tree_its_first_urls_line() -> None:
    from ra_build.upstream.add import _with_url

    text = '[tree.a]\nsitemap = "https://x.org/s.xml"\n'
    assert (
        _with_url(text, "a", ["https://x.org/p"])
        == '[tree.a]\nurls = [\n  "https://x.org/p",\n]\nsitemap = "https://x.org/s.xml"\n'
    )


def test_add_source_is_a_tool_only_when_allowed(project: Project, site: Site) -> None:
    project.config(urls_tree(site, "/guide/body/"))
    assert project.ra("update").code == 0
    with serve([str(BIN / "ra"), "mcp"], project.root, project.home) as server:
        assert "add_source" not in server.tools()
    with serve([str(BIN / "ra"), "mcp", "--allow-add-sources"], project.root, project.home) as server:
        tool = server.tools()["add_source"]
    assert tool.annotations is not None and tool.annotations.read_only_hint is False


@pytest.mark.slow
def test_add_source_backs_up_edits_logs_and_fetches_the_page(project: Project, site: Site) -> None:
    project.config(urls_tree(site, "/guide/body/"))
    original = (project.root / ".ra.toml").read_text()
    assert project.ra("update").code == 0
    command = [str(BIN / "ra"), "mcp", "--allow-add-sources"]
    with serve(command, project.root, project.home) as server:
        added = server.ok("add_source", {"tree": "fw", "url": site.url("/guide/dependencies/")})
        again = server.ok("add_source", {"tree": "fw", "url": site.url("/guide/dependencies/")})
        found = soon(
            lambda: [
                r["url"]
                for r in server.ok("search", {"queries": "injects dependency"})["queries"][0]["results"]
            ][:1],
            [site.url("/guide/dependencies/")],
            seconds=30,
        )
    assert added["added"] is True and again == {
        "tree": "fw",
        "url": site.url("/guide/dependencies/"),
        "added": False,
        "note": "already listed",
    }
    assert Path(added["backup"]).read_text() == original
    config = (project.root / ".ra.toml").read_text()
    assert f'"{site.url("/guide/body/")}",\n  "{site.url("/guide/dependencies/")}",\n]' in config
    log = (project.root / ".ra" / "upstream" / "added.log").read_text()
    assert f"added {site.url('/guide/dependencies/')} to [tree.fw]" in log
    assert found == [site.url("/guide/dependencies/")]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"tree": "fw", "url": "ftp://x.org/a"},
            "url 'ftp://x.org/a' has scheme 'ftp' — only http:// and https://",
        ),
        (
            {"tree": "nope", "url": "https://x.org/a"},
            "tree 'nope' is not configured — the upstream trees are: fw",
        ),
        ({"tree": "docs", "url": "https://x.org/a"}, "tree 'docs' is a folder, not an upstream tree"),
    ],
)
def test_add_source_refuses_a_bad_url_or_tree_and_leaves_the_config(
    project: Project, site: Site, arguments: dict[str, str], message: str
) -> None:
    (project.root / "docs").mkdir()
    project.config(urls_tree(site, "/guide/body/") + '\n[tree.docs]\npath = "docs"\n')
    before = (project.root / ".ra.toml").read_text()
    with serve([str(BIN / "ra"), "mcp", "--allow-add-sources"], project.root, project.home) as server:
        result = server.call("add_source", arguments)
    assert result.is_error and message in text_of(result)
    assert (project.root / ".ra.toml").read_text() == before
    assert list(project.root.glob(".ra.toml.*.bak")) == []


# ---- context: the pages of the frameworks a code file imports (issue 32) ---------------------------


def _framework_project(project: Project, site: Site) -> None:
    """A project whose code imports the framework `fw` has pages of (and one that does not)."""
    project.config(
        urls_tree(site, "/guide/dependencies/", "/guide/body/")
        + '\n[tree.app]\npath = "app"\ninclude = ["**/*.py", "**/*.md"]\n'
    )
    app = project.root / "app"
    app.mkdir(parents=True)
    (app / "routes.md").write_text("# Routes\n\nEach route reads its request body and its dependencies.\n")
    handler = (
        "def read_item(body, common=Depends(common_parameters)):\n"
        "    # the request body is validated before the dependency runs\n"
        "    return body\n"
    )
    (app / "items.py").write_text("from fw.params import Depends\n\n" + handler)
    (app / "plain.py").write_text(handler)
    assert project.ra("update").code == 0


def test_a_code_file_that_imports_a_framework_gets_its_upstream_pages_after_the_projects_docs(
    project: Project, site: Site
) -> None:
    _framework_project(project, site)
    run = project.ra("context", "--json", "app/items.py")
    assert run.code == 0, run.err
    query = json.loads(run.out)["queries"][0]
    assert (query["context"]["imports"], query["context"]["frameworks"]) == (["fw.params"], ["fw"])
    kinds = [r["kind"] for r in query["results"]]
    assert kinds[0] == "docs" and "upstream" in kinds
    assert kinds.index("upstream") < kinds.index("code") if "code" in kinds else True


def test_explain_names_the_upstream_trees_a_code_file_imports(project: Project, site: Site) -> None:
    _framework_project(project, site)
    run = project.ra("context", "--explain", "app/items.py")
    assert run.code == 0, run.err
    assert "imports: fw.params" in run.out
    assert "then at most 2 pages of the upstream trees it imports (fw)" in run.out


def test_a_code_file_that_imports_no_framework_has_no_framework_pages_set_apart(
    project: Project, site: Site
) -> None:
    _framework_project(project, site)
    run = project.ra("context", "--json", "app/plain.py")
    assert run.code == 0, run.err
    assert json.loads(run.out)["queries"][0]["context"]["frameworks"] == []

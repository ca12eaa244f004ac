"""What `ra status`, `ra ls` and `ra check` report: index freshness, counts, findings.

Everything here only reads: the configuration, the sources (a discovery walk) and the
artifacts. Results are typed so the CLI can print text or JSON from the same objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import orjson

from ra_build.artifacts.layout import Layout
from ra_build.artifacts.tables import FileRow, read_chunk_table, read_file_rows
from ra_build.config.model import Config
from ra_build.pipeline.discover import discover_tree
from ra_build.refresh.current import Freshness, freshness
from ra_query.text.textsafe import printable


@dataclass(frozen=True)
class TreeStatus:
    """One configured tree and what the index holds of it."""

    name: str
    path: Path
    scope: Literal["local", "global"]
    source: Path
    files: int
    chunks: int
    skipped: int
    hidden: int = 0  # dot-directories and default excludes the last build did not walk
    upstream: UpstreamStatus | None = None  # an upstream tree's pages and syncs


@dataclass(frozen=True)
class UpstreamPage:
    """One page of an upstream tree, as its cache manifest says (times ISO 8601 UTC, None: never)."""

    url: str
    id: str | None  # the document it is indexed as, once its markdown is cached
    fetched_at: str | None  # the last answer from the server (200 or 304)
    checked_at: str | None  # the last attempt, answered or not
    http_status: int | None  # of the last answer; None: none (never asked, a timeout, no connection)
    status: str  # ok, not-modified, new (never fetched), or why the last attempt failed
    next_due: str | None  # when it is fetched again; None: at the next sync
    failing: bool  # the last attempt failed (a cached copy, if any, keeps serving)

    def describe(self) -> list[str]:
        """Two lines of `ra status -l`: the URL and its document, then how its fetches went."""
        head = f"{self.url} → {self.id or 'not cached'}"
        if self.status == "new":
            return [head, "  not fetched yet, due at the next ra update"]
        answer = f"HTTP {self.http_status}" if self.http_status else "no answer"
        how = answer + (" not modified" if self.status == "not-modified" else "")
        if self.failing:  # why, unless the status says it already (`HTTP 404`)
            why = self.status.removeprefix(answer)
            how += ", failing" + (why if why.startswith(",") or not why else f": {why}")
        fetched = f"fetched {_utc(self.fetched_at)}" if self.fetched_at else "never fetched"
        checked = f", checked {_utc(self.checked_at)}" if self.checked_at else ""
        due = f"next due {_utc(self.next_due)}" if self.next_due else "due at the next ra update"
        return [head, f"  {how}, {fetched}{checked}, {due}"]


@dataclass(frozen=True)
class UpstreamStatus:
    """An upstream tree's cache: its pages, the last sync, the next page due, what fails."""

    pages: int
    cached: int
    synced_at: str | None  # ISO 8601, UTC, as the index manifest says it
    next_due: str | None
    failing: tuple[tuple[str, str], ...]  # (url, why) of the pages whose last fetch failed
    page_list: tuple[UpstreamPage, ...] = ()  # every page, by URL

    def describe(self) -> str:
        when = _utc(self.synced_at) if self.synced_at else "never"
        due = f", next page due {_utc(self.next_due)}" if self.next_due else ""
        return f"upstream: {self.pages} pages, {self.cached} cached, last sync {when}{due}" + (
            f", {len(self.failing)} failing" if self.failing else ""
        )


_ANSWERED = ("ok", "not-modified", "new")  # the page statuses that are no failure


def upstream_status(cache: Path, tree: str) -> UpstreamStatus:
    """What the cache manifest of upstream tree `tree` says (ra_build.upstream.cache)."""
    from ra_build.upstream.cache import http_code, iso_utc, read_manifest
    from ra_query.artifacts.schema import doc_id_of

    manifest = read_manifest(cache)
    pages = sorted(manifest.pages.values(), key=lambda p: p.url)
    failing = tuple((p.url, p.status) for p in pages if p.status not in _ANSWERED)
    listed = tuple(
        UpstreamPage(
            url=p.url,
            id=doc_id_of(tree, p.path) if p.sha256 else None,
            fetched_at=iso_utc(p.fetched_at),
            checked_at=iso_utc(p.checked_at),
            # a manifest written before ra kept the code: what the status says
            http_status=(p.http_status or http_code(p.status)) or None,
            status=p.status,
            next_due=iso_utc(p.next_refresh_after),
            failing=p.status not in _ANSWERED,
        )
        for p in pages
    )
    return UpstreamStatus(
        pages=len(pages),
        cached=len(manifest.cached()),
        synced_at=iso_utc(manifest.synced_at),
        next_due=iso_utc(manifest.next_due()),
        failing=failing,
        page_list=listed,
    )


def _utc(iso: str) -> str:
    """`2026-11-25T20:12:27Z` as `ra status` prints it: `2026-11-25 20:12 UTC`."""
    return iso[:16].replace("T", " ") + " UTC"


@dataclass(frozen=True)
class Status:
    """Everything `ra status` shows."""

    config_files: tuple[Path, ...]
    trees: tuple[TreeStatus, ...]
    artifacts: Path
    artifacts_bytes: int
    index: Freshness
    built_at: str | None
    warnings: tuple[str, ...] = field(default=())


def _hidden(layout: Layout, tree: str) -> list[str]:
    """The dot-directories the last build of `tree` did not walk (from its discovery snapshot)."""
    try:
        snapshot = orjson.loads(layout.snapshot(tree).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return []
    hidden = snapshot.get("hidden") if isinstance(snapshot, dict) else None
    return [h for h in hidden if isinstance(h, str)] if isinstance(hidden, list) else []


def status(config: Config, artifacts: Path) -> Status:
    """Collect the status of `config`'s trees and the artifacts at `artifacts`."""
    from ra_query.commands import artifacts_bytes

    layout = Layout(artifacts)
    try:
        manifest = orjson.loads(layout.manifest.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        manifest = {}
    counts = manifest.get("trees", {})
    assert isinstance(counts, dict)
    trees = tuple(
        TreeStatus(
            name=t.name,
            path=t.path,
            scope="global" if t.is_global else "local",
            source=t.source,
            files=int(counts.get(t.name, {}).get("files", 0)),
            chunks=int(counts.get(t.name, {}).get("chunks", 0)),
            skipped=int(counts.get(t.name, {}).get("skipped", 0)),
            hidden=len(_hidden(layout, t.name)),
            upstream=upstream_status(t.path, t.name) if t.upstream else None,
        )
        for t in config.trees.values()
    )
    built_at = manifest.get("built_at")
    return Status(
        config_files=config.files,
        trees=trees,
        artifacts=layout.root,
        artifacts_bytes=artifacts_bytes(str(layout.root)),
        index=freshness(config, layout),
        built_at=str(built_at) if built_at else None,
        warnings=config.warnings,
    )


def render_status(st: Status, long: bool = False) -> str:
    """Text of `ra status`; `long` (`-l`) lists each upstream page, its document and its fetches."""
    lines = ["Config files:"]
    lines += [f"  {p}" for p in st.config_files] or ["  (none)"]
    lines.append("Trees:")
    for t in st.trees:
        lines.append(
            f"  {t.name} ({t.scope}) {t.path}: {t.files} files, {t.chunks} chunks"
            + (f", {t.skipped} skipped" if t.skipped else "")
            + (f", {t.hidden} directories not walked (dot, default excludes)" if t.hidden else "")
        )
        if t.upstream is not None:
            lines.append(f"    {t.upstream.describe()}")
            if long:  # each page, failing or not
                lines.append("    pages:")
                lines += [f"      {line}" for page in t.upstream.page_list for line in page.describe()]
            else:
                lines += [f"    failing: {url} — {why}" for url, why in t.upstream.failing]
    if not st.trees:
        lines.append("  (none) — add a [tree.NAME] section to .ra.toml")
    lines.append(f"Artifacts: {st.artifacts} ({_human(st.artifacts_bytes)})")
    lines.append(f"Index: {st.index.describe()}")
    lines.append(f"Last build: {st.built_at or 'never'}")
    return "\n".join(lines) + "\n"


def _human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


# ── ra ls ───────────────────────────────────────────────────────────────────────────────────


def ls_lines(
    config: Config,
    artifacts: Path,
    what: Literal["trees", "docs", "chunks"],
    long: bool,
    prefix: str = "",
) -> list[str]:
    """Lines of `ra ls trees|docs|chunks [PREFIX] [-l]`, from the configuration and the chunk tables.

    `prefix` keeps the names or ids that start with it (`docs:guide/`, `ps:docset/winserver2025`).
    """
    layout = Layout(artifacts)
    if what == "trees":
        st = status(config, artifacts) if long else None
        if st is None:
            return [t.name for t in config.trees.values() if t.name.startswith(prefix)]
        return [
            f"{t.name}\t{t.scope}\t{t.files} files\t{t.chunks} chunks\t{t.path}"
            for t in st.trees
            if t.name.startswith(prefix)
        ]
    from ra_query.commands import ls_line

    lines: list[str] = []
    for tree, tree_config in config.trees.items():
        if not (f"{tree}:".startswith(prefix) or prefix.startswith(f"{tree}:")):
            continue  # no id of this tree can start with the prefix: its table is not read
        rows = read_chunk_table(layout.chunk_shards(tree)).to_pylist()
        pages = _pages_by_path(tree_config.path) if long and what == "docs" and tree_config.upstream else {}
        for row in rows:
            if (what == "docs" and row["depth"] != 0) or not row["id"].startswith(prefix):
                continue
            span = (row["line_start"], row["line_end"])
            line = ls_line(what, long, row["id"], row["title"], span, row["tokens"], row["breadcrumb"])
            page = pages.get(row["path"])
            lines.append(line if page is None else f"{line}\t{page}")
    return lines


def _pages_by_path(cache: Path) -> dict[str, str]:
    """`URL<TAB>fetched DATE` of each cached page of an upstream tree, by its cache path: what
    `ra ls docs TREE: -l` adds to the page's line."""
    from ra_build.upstream.cache import iso_utc, read_manifest

    pages: dict[str, str] = {}
    for page in read_manifest(cache).cached():
        fetched = iso_utc(page.fetched_at)
        pages[page.path] = f"{page.url}\tfetched {_utc(fetched) if fetched else 'never'}"
    return pages


# ── ra check ────────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class Finding:
    """One thing `ra check` reports."""

    level: Literal["note", "warning", "error"]  # a note is information: it sets no exit code
    where: str
    message: str

    def render(self) -> str:
        """The documented form of a diagnostic: `ra: warning: <file>[:<line>]: <what>`."""
        return printable(f"ra: {self.level}: {self.where}: {self.message}")


def file_problems(artifacts: Path, trees: list[str]) -> list[str]:
    """`tree:path: what` for every file the last build skipped or warned about, in path order.

    Read from the file tables, so an incremental build that re-parsed nothing still names them.
    """
    layout = Layout(artifacts)
    return [
        f"{tree}:{row.path}: {why}"
        for tree in trees
        for row in read_file_rows(layout.file_table(tree))
        for why in _row_problems(row)
    ]


def _row_problems(row: FileRow) -> tuple[str, ...]:
    """Why a file was skipped, or what it was warned about."""
    return (row.error,) if row.status != "ok" and row.error else row.warnings


def _upstream_findings(cache: Path, tree: str, cached: bool) -> list[Finding]:
    """An upstream tree's pages whose last fetch failed, and a tree with no page cached yet."""
    up = upstream_status(cache, tree)
    where = f"tree {tree}"
    findings = [
        Finding("warning", url, f"the last fetch failed ({why}) — ra update tries again when it is due")
        for url, why in up.failing
    ]
    if not cached:
        findings.append(Finding("warning", where, "no page is cached yet — run: ra update (it fetches them)"))
    return findings


def check(config: Config, artifacts: Path) -> list[Finding]:
    """Diagnose configuration, sources and index; the CLI maps the worst level to an exit code."""
    layout = Layout(artifacts)
    findings = [Finding("warning", w.split(": ", 1)[0], w.split(": ", 1)[-1]) for w in config.warnings]
    if not config.trees:
        findings.append(Finding("error", "config", "no trees configured — add a [tree.NAME] section"))
    for tree in config.trees.values():
        found = discover_tree(tree)
        where = f"tree {tree.name}"
        if tree.upstream:
            findings += _upstream_findings(tree.path, tree.name, bool(found.files))
        elif not found.files:
            findings.append(
                Finding(
                    "warning", where, f"include patterns {list(tree.include)} match no file in {tree.path}"
                )
            )
        # a walk's skip is also in the last build's file table: each (file, what) once
        # an upstream tree's cache appears with its first sync: its absence is said above
        unsynced = tree.upstream and not tree.path.is_dir()
        problems = [] if unsynced else [(skip.path, skip.reason) for skip in found.skipped]
        for row in read_file_rows(layout.file_table(tree.name)):
            problems += [(row.path, why) for why in _row_problems(row)]
        for path, what in dict.fromkeys(problems):
            findings.append(Finding("warning", str(tree.path / path), what))  # the file, to open
        if found.hidden:
            shown = ", ".join(found.hidden[:3]) + (", …" if len(found.hidden) > 3 else "")
            findings.append(
                Finding(
                    "note",
                    where,
                    f"{len(found.hidden)} directories not walked ({shown}) — name one in include "
                    '(".github/**/*.md", "vendor/acme/**/*.go") to index it, or set default_excludes = false',
                )
            )
    fresh = freshness(config, layout)
    if fresh.state != "current":
        findings.append(Finding("warning", "index", f"{fresh.describe()} — run: ra update"))
    return findings

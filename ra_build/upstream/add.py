"""`ra mcp --allow-add-sources`: an agent adds a page to an upstream tree (issue 23's option).

The page's URL is checked as the configuration checks it, the `.ra.toml` that defines the tree
is copied to a timestamped backup beside it, its `urls` array is rewritten with the page added
(the rest of the file is left as it is; a comment inside that array is not kept), the edited
file must load again or the backup is put back, and a line in `.ra/upstream/added.log` says who
added what, where. Nothing is fetched here: the caller starts the sync.
"""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ra_build.artifacts.atomic import write_bytes
from ra_build.config.load import load_config, url_problem
from ra_build.config.toml_lines import LineIndex, toml_str
from ra_build.upstream.cache import iso_utc
from ra_query.artifacts.paths import DEFAULT_DIR, UPSTREAM_DIR
from ra_query.errors import ConfigError, InputError

if TYPE_CHECKING:
    from ra_build.config.model import Config

_URLS = re.compile(r"^\s*urls\s*=\s*")


def add_page(config: Config, home: Path, tree: str, url: str) -> dict[str, Any]:
    """Add `url` to the `urls` of upstream tree `tree` in the file that defines it.

    Raises:
        InputError: no such upstream tree, a bad URL, or an edit the configuration rejects.
    """
    found = config.trees.get(tree)
    upstream = sorted(name for name, t in config.trees.items() if t.upstream)
    if found is None or not found.upstream:
        kind = "not configured" if found is None else "a folder, not an upstream tree"
        raise InputError(f"tree {tree!r} is {kind} — the upstream trees are: {', '.join(upstream) or 'none'}")
    url = url.strip()
    problem = url_problem(url)
    if problem:
        raise InputError(f"url {url!r} {problem}")
    if url in found.urls:
        return {"tree": tree, "url": url, "added": False, "note": "already listed"}
    source = found.source
    text = source.read_text(encoding="utf-8")
    edited = _with_url(text, tree, [*found.urls, url])
    stamp = time.strftime("%Y%m%dT%H%M%S")
    backup = source.with_name(f"{source.name}.{stamp}.bak")
    shutil.copy2(source, backup)
    write_bytes(source, edited.encode("utf-8"))
    try:
        load_config(source.parent, home, require_paths=False)
    except ConfigError as exc:
        shutil.copy2(backup, source)
        raise InputError(f"adding {url} would break {source} ({exc.message}); it is unchanged") from None
    log = source.parent / DEFAULT_DIR / UPSTREAM_DIR / "added.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a", encoding="utf-8") as out:
        line = f"added {url} to [tree.{tree}] in {source} (backup {backup.name}) by an MCP client"
        out.write(f"{iso_utc(time.time())} {line}\n")
    return {"tree": tree, "url": url, "added": True, "config": str(source), "backup": str(backup)}


def _with_url(text: str, tree: str, urls: list[str]) -> str:
    """`text` with the `urls` of `[tree.<tree>]` set to `urls`: the old array replaced, or a
    `urls` line added under the table's header when the tree has none (the lines found by the
    configuration's own LineIndex)."""
    lines = text.split("\n")
    array = "urls = [\n" + "".join(f"  {toml_str(u)},\n" for u in urls) + "]"
    index = LineIndex(text)
    header, key = index.line(("tree", tree)), index.line(("tree", tree, "urls"))
    if key == header:  # no urls key: LineIndex answers with the table's line
        lines.insert(header, array)
        return "\n".join(lines)
    match = _URLS.match(lines[key - 1])
    if match is None:
        raise InputError(
            f"the urls of [tree.{tree}] are not written as `urls = [...]` — edit the .ra.toml by hand"
        )
    offset = sum(len(line) + 1 for line in lines[: key - 1]) + match.start()
    close = _array_end(text, offset + len(match.group(0)))
    return text[:offset] + array + text[close:]


def _array_end(text: str, start: int) -> int:
    """The offset just past the `]` that closes the array opening at `start` (strings, escapes
    and comments skipped)."""
    depth, i, quote = 0, start, ""
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c == "#":
            while i < len(text) and text[i] != "\n":
                i += 1
        elif c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise InputError("the tree's urls array is not closed — fix the .ra.toml by hand")

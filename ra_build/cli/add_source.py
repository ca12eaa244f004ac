"""The `add_source` MCP tool of `ra mcp --allow-add-sources` (ra_build.upstream.add)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Annotated, Any

from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from ra_query.errors import RaError

DESCRIPTION = """\
Add a documentation page to an upstream tree (framework docs fetched from the web), when this \
project depends on a library whose page you needed and the tree lacks it. The URL is checked, \
the .ra.toml is backed up and edited, the addition is logged, and the page is fetched in the \
background: search it a few seconds later. Returns {tree, url, added, config, backup}."""
_EDITS = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)


def add_source_tool(server: Any, notify: Callable[[str], None]) -> None:
    """Register `add_source` on `server` (an MCP server of ra_query.mcp.build_server)."""
    editing = threading.Lock()  # one edit of a .ra.toml at a time

    def add_source(
        tree: Annotated[str, Field(description="An upstream tree's name (list_sources names them)")],
        url: Annotated[str, Field(description="The page's absolute http(s) URL")],
    ) -> Annotated[CallToolResult, dict[str, Any]]:
        from ra_build.cli.console import home, load_config
        from ra_build.upstream.add import add_page

        try:
            with editing:
                result = add_page(load_config(require_paths=False), home(), tree, url)
        except RaError as exc:
            return CallToolResult(content=[TextContent(type="text", text=exc.message)], is_error=True)
        if result["added"]:
            where = f"{result['config']} (backup {result['backup']})"
            notify(f"add_source: added {url} to tree {tree} in {where}")
            threading.Thread(target=_fetch, args=(tree, notify), name="ra-add-source", daemon=True).start()
        text = json.dumps(result, ensure_ascii=False, separators=(",", ":"))
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=result)

    server.add_tool(add_source, name="add_source", description=DESCRIPTION, annotations=_EDITS)


def _fetch(tree: str, notify: Callable[[str], None]) -> None:
    """Sync the tree the page was added to, with the configuration as it is now."""
    from ra_build.cli.console import load_config
    from ra_build.upstream.sync import sync_upstream

    try:
        sync_upstream(load_config(require_paths=False), trees=[tree], notify=notify)
    except Exception as exc:  # a thread's failure must not end the server
        notify(f"add_source: fetching tree {tree} failed: {type(exc).__name__}: {exc}")

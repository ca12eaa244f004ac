"""The text of `ra inspect doc FILE`: how ra parses and chunks one document.

The layout follows seed 000's example, extended with the chunk tree (parent, depth, lines,
tokens) and the parse warnings. Output is deterministic so it can be compared with goldens.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ra_build.artifacts.tables import locale_of
from ra_build.document.chunk import Document
from ra_query.text.locales import DEFAULT_LOCALE, translation_key

_SOURCE_LABEL = {
    "frontmatter": "from frontmatter",
    "h1": "from first h1",
    "filename": "from file name",
}
# List items that read fine without quotes, like YAML flow style: `[intro, setup]`.
_BARE = re.compile(r"[\w][\w./#+\-]*")


def render_inspect(
    doc: Document, *, display_path: str, max_chunk_size: int, language: str = DEFAULT_LOCALE
) -> str:
    """Render a parsed document for `ra inspect doc`.

    Args:
        doc: the chunked document.
        display_path: the file as the user named it.
        max_chunk_size: chunks whose body has more characters than this are flagged.
        language: the natural language of its tree's docs (`[tree.x] language`), as the build
            reads a page that does not say its own.

    Returns:
        The report, ending with a newline.
    """
    kind = f"code ({doc.language})" if doc.kind == "code" else doc.kind
    lines = [f"File: {display_path}", f"Type: {kind}"]
    locale = locale_of(doc, language)
    if locale:  # a docs file's natural language (its frontmatter's, its path's or its script's)
        lines.append(f"Language: {locale}")
        key = translation_key(doc.path, doc.frontmatter, locale)
        if key != doc.path:  # what its translations share: the original's path, or a frontmatter key
            lines.append(f"Translation of: {key.removeprefix('key:')}")
    if doc.frontmatter:
        lines.append("Frontmatter:")
        lines.extend(f"  {key}: {_value(value)}" for key, value in doc.frontmatter.items())
    elif doc.kind != "code":  # code has no frontmatter to speak of
        lines.append("Frontmatter: none")
    if doc.tags:
        lines.append(f"Tags: {', '.join(doc.tags)}")
    if doc.warnings:
        lines.append("Warnings:")
        lines.extend(f"  {warning}" for warning in doc.warnings)
    lines.append("")
    lines.append(f"Chunks ({len(doc.chunks)}):")
    for number, chunk in enumerate(doc.chunks, start=1):
        if number > 1:
            lines.append("")
        source = _SOURCE_LABEL.get(chunk.title_source)
        title = _quote(chunk.title) + (f" ({source})" if source else "")
        size = f"{len(chunk.body):,} chars, {chunk.tokens:,} tokens"
        if len(chunk.body) > max_chunk_size:
            size += f"  (over max_chunk_size {max_chunk_size:,})"
        lines.extend(
            [
                f"  {number}. {chunk.id}",
                *(
                    [f"     Symbol: {chunk.symbol}" + (f" ({chunk.defines})" if chunk.defines else "")]
                    if chunk.symbol
                    else []
                ),
                *([f"     Declares: {', '.join(chunk.members)}"] if chunk.members else []),
                *([f"     Forwards to: {chunk.forwards}"] if chunk.forwards else []),
                f"     Title: {title}",
                f"     Breadcrumb: {' › '.join(chunk.breadcrumb)}",
                f"     Parent: {chunk.parent_id or '-'}",
                f"     Depth: {chunk.depth}",
                f"     Lines: {chunk.line_start}-{chunk.line_end}",
                f"     Size: {size}",
            ]
        )
    return "\n".join(lines) + "\n"


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _value(value: Any) -> str:
    """A frontmatter value on one line: strings quoted, flat lists in flow style."""
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, list) and all(not isinstance(item, dict | list) for item in value):
        items = [item if isinstance(item, str) and _BARE.fullmatch(item) else _json(item) for item in value]
        return f"[{', '.join(items)}]"
    return _json(value)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


__all__ = ["render_inspect"]

"""Typed records the query side returns; the CLI, JSON output and MCP all render these.

Records on the query side are `NamedTuple`s, not dataclasses: `ra-query` starts for every
search, and `import dataclasses` (which pulls in `inspect`) plus ~0.4 ms per decorated class
was a fifth of its cold start (bench/query.py). A NamedTuple class costs ~0.06 ms — as long
as its module does not use `from __future__ import annotations`: NamedTuple then compiles every
field's annotation string (1.3 ms for ChunkRecord instead of 0.2 ms), so the modules that define
records write their few forward references in quotes instead.
"""

from typing import Any, NamedTuple

from ra_query.artifacts.schema import split_breadcrumb


class ChunkRecord(NamedTuple):
    """One chunk as stored in the index: everything a result shows, no Parquet needed."""

    id: str
    tree: str
    path: str
    doc_id: str
    parent_id: str | None
    title: str
    breadcrumb: tuple[str, ...]
    depth: int
    position: int
    sibling_count: int
    line_start: int
    line_end: int
    byte_start: int
    byte_end: int
    tokens: int
    body: str
    kind: str = "docs"  # docs | code
    language: str = "markdown"
    symbol: str = ""  # a code chunk's qualified name
    locale: str = ""  # a docs chunk's natural language (`en`, `ja`: ra_query.text.locales)
    translation: str = ""  # what its document's translations share (a path, or a key)
    forwards: str = ""  # a code chunk whose whole body calls a same-named definition: the callee
    defines: str = ""  # a code chunk's kind of definition (`method`, `struct`), `part`, `block`, `file`

    @classmethod
    def from_stored(cls, doc: dict[str, list[Any]]) -> "ChunkRecord":
        """Build from `tantivy.Document.to_dict()` (every field is a list of values).

        Every query builds a hundred of these, so the usual case (the build stores every field,
        each with one value of the schema's type) reads them directly; anything else takes the
        careful path.
        """
        try:
            return cls(
                doc["id"][0],
                doc["tree"][0],
                doc["path"][0],
                doc["doc_id"][0],
                doc["parent_id"][0] or None,
                doc["title"][0],
                split_breadcrumb(doc["breadcrumb"][0]),
                doc["depth"][0],
                doc["position"][0],
                doc["sibling_count"][0],
                doc["line_start"][0],
                doc["line_end"][0],
                doc["byte_start"][0],
                doc["byte_end"][0],
                doc["tokens"][0],
                doc["body"][0],
                doc["kind"][0],
                doc["lang"][0],
                doc["symbol"][0],
                doc["lang"][1] if len(doc["lang"]) > 1 else "",
                doc["translation"][0],
                doc["forwards"][0],
                doc["defines"][0],
            )
        except (KeyError, IndexError):
            return cls._from_partial(doc)

    @classmethod
    def _from_partial(cls, doc: dict[str, list[Any]]) -> "ChunkRecord":
        """`from_stored` for a document that lacks some field: defaults fill the gaps."""

        def one(name: str, default: Any = None) -> Any:
            values = doc.get(name) or []
            return values[0] if values else default

        return cls(
            id=str(one("id", "")),
            tree=str(one("tree", "")),
            path=str(one("path", "")),
            doc_id=str(one("doc_id", "")),
            parent_id=str(one("parent_id", "")) or None,
            title=str(one("title", "")),
            breadcrumb=split_breadcrumb(str(one("breadcrumb", ""))),
            depth=int(one("depth", 0)),
            position=int(one("position", 0)),
            sibling_count=int(one("sibling_count", 1)),
            line_start=int(one("line_start", 1)),
            line_end=int(one("line_end", 1)),
            byte_start=int(one("byte_start", 0)),
            byte_end=int(one("byte_end", 0)),
            tokens=int(one("tokens", 0)),
            body=str(one("body", "")),
            kind=str(one("kind", "docs")),
            language=str(one("lang", "markdown")),
            symbol=str(one("symbol", "")),
            locale=str((doc.get("lang") or ["", ""])[1]) if len(doc.get("lang") or []) > 1 else "",
            translation=str(one("translation", "")),
            forwards=str(one("forwards", "")),
            defines=str(one("defines", "")),
        )

    @property
    def heading_line(self) -> str | None:
        """The chunk's heading as an ATX line (None for a document node, and for code: its body
        starts with its signature)."""
        return "#" * self.depth + " " + self.title if self.depth > 0 and self.kind != "code" else None

    def crumb(self, separator: str = " › ") -> str:
        """The breadcrumb as shown; a definition's file with its lines (`src/db.py:45-67 › Pool ›
        get`), so an agent can go to it without asking for the range."""
        parts = list(self.breadcrumb)
        if self.kind == "code" and self.depth > 0 and parts:
            parts[0] = f"{parts[0]}:{self.line_start}-{self.line_end}"
        return separator.join(parts)

    def content(self) -> str:
        """The chunk as an agent reads it: heading line, blank line, body."""
        heading = self.heading_line
        if heading is None:
            return self.body
        return f"{heading}\n\n{self.body}" if self.body else heading

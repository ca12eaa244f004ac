"""ChunkRecord: built from what the index stores."""

from __future__ import annotations

from typing import Any

from ra_query.artifacts.models import ChunkRecord

STORED: dict[str, list[Any]] = {
    "id": ["docs:a.md#intro"],
    "tree": ["docs"],
    "path": ["a.md"],
    "doc_id": ["docs:a.md"],
    "parent_id": ["docs:a.md"],
    "title": ["Intro"],
    "breadcrumb": ["A\x1fIntro"],
    "depth": [1],
    "position": [1],
    "sibling_count": [2],
    "line_start": [3],
    "line_end": [5],
    "byte_start": [10],
    "byte_end": [40],
    "tokens": [7],
    "body": ["Hello."],
    "slug": ["intro"],
    "mtime": [0],
}


def test_a_stored_chunk_becomes_a_record_with_every_field() -> None:
    record = ChunkRecord.from_stored(STORED)
    assert record == ChunkRecord(
        "docs:a.md#intro", "docs", "a.md", "docs:a.md", "docs:a.md", "Intro", ("A", "Intro"),
        1, 1, 2, 3, 5, 10, 40, 7, "Hello.",
    )  # fmt: skip


def test_an_empty_parent_id_means_no_parent() -> None:
    assert ChunkRecord.from_stored({**STORED, "parent_id": [""]}).parent_id is None


def test_a_chunk_missing_fields_gets_their_defaults() -> None:
    partial = {k: v for k, v in STORED.items() if k not in ("parent_id", "breadcrumb", "sibling_count")}
    partial["title"] = []  # a field with no value at all
    record = ChunkRecord.from_stored(partial)
    assert (record.parent_id, record.breadcrumb, record.sibling_count, record.title) == (None, (), 1, "")
    assert record.body == "Hello." and record.line_end == 5


def test_the_content_of_a_section_chunk_starts_with_its_heading() -> None:
    record = ChunkRecord.from_stored(STORED)
    assert record.content() == "# Intro\n\nHello."
    assert record._replace(depth=0).content() == "Hello."

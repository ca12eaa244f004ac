"""`ra get`: chunk and document look-ups, full_document, ids that are never found, JSON and text."""

from __future__ import annotations

from typing import Any

import pytest

from ra_query.artifacts.models import ChunkRecord
from ra_query.errors import NotFoundError
from ra_query.search.get import StoreLike, get, get_to_dict, parse_id, render_get


def chunk(
    id: str,
    *,
    title: str,
    depth: int,
    body: str,
    breadcrumb: tuple[str, ...],
    lines: tuple[int, int] = (1, 1),
    tokens: int = 3,
) -> ChunkRecord:
    # a document node's id is its doc_id (paths may contain `#`); a heading's is doc_id#slug
    doc_id = id if depth == 0 else id.rpartition("#")[0]
    tree, _, path = doc_id.partition(":")
    return ChunkRecord(
        id=id,
        tree=tree,
        path=path,
        doc_id=doc_id,
        parent_id=None if id == doc_id else doc_id,
        title=title,
        breadcrumb=breadcrumb,
        depth=depth,
        position=0,
        sibling_count=1,
        line_start=lines[0],
        line_end=lines[1],
        byte_start=lines[0] * 10,
        byte_end=lines[1] * 10,
        tokens=tokens,
        body=body,
    )


GUIDE = [
    chunk("docs:guide.md", title="Guide", depth=0, body="Intro text.\n", breadcrumb=("Guide",), lines=(1, 3)),
    chunk(
        "docs:guide.md#install",
        title="Install",
        depth=2,
        body="Run the installer.\n",
        breadcrumb=("Guide", "Install"),
        lines=(4, 6),
        tokens=5,
    ),
    chunk(
        "docs:guide.md#on-linux",
        title="On Linux",
        depth=3,
        body="Use apt.\n",
        breadcrumb=("Guide", "Install", "On Linux"),
        lines=(7, 9),
        tokens=4,
    ),
    chunk(
        "docs:guide.md#usage",
        title="Usage",
        depth=2,
        body="Call it.\n",
        breadcrumb=("Guide", "Usage"),
        lines=(10, 11),
        tokens=2,
    ),
]
HASH_DOC = [chunk("docs:c#sharp.md", title="C sharp", depth=0, body="Notes.\n", breadcrumb=("C sharp",))]
# a file literally named `x#top` (no extension): its id looks like a chunk id
AMBIGUOUS = [chunk("docs:x#top", title="x#top", depth=0, body="Odd name.\n", breadcrumb=("x#top",))]


class FakeStore:
    """The two look-ups `get` uses, over an in-memory list of documents in document order."""

    def __init__(self, *documents: list[ChunkRecord], trees: tuple[str, ...] = ("docs",)) -> None:
        self.manifest: dict[str, Any] = {"trees": {name: {"files": 1} for name in trees}}
        self.documents = documents
        self.by_id = {c.id: c for doc in documents for c in doc}
        self.lookups: list[str] = []

    def get_chunk(self, id: str) -> ChunkRecord | None:
        self.lookups.append(id)
        return self.by_id.get(id)

    def doc_chunks(self, doc_id: str) -> list[ChunkRecord]:
        return next((list(doc) for doc in self.documents if doc[0].doc_id == doc_id), [])


@pytest.fixture
def store() -> FakeStore:
    return FakeStore(GUIDE, HASH_DOC, AMBIGUOUS)


def test_the_fake_store_satisfies_the_store_protocol(store: FakeStore) -> None:
    typed: StoreLike = store
    assert typed.manifest["trees"]


# ---- ids ----------------------------------------------------------------------------------------


def test_parse_id_splits_tree_path_and_slug() -> None:
    assert parse_id("docs:guide.md#install") == ("docs", "guide.md", "install")
    assert parse_id("docs:sub/dir/guide.md") == ("docs", "sub/dir/guide.md", None)


def test_parse_id_keeps_a_hash_that_cannot_start_a_slug_in_the_path() -> None:
    assert parse_id("docs:c#sharp.md") == ("docs", "c#sharp.md", None)
    assert parse_id("docs:a#b/c.md#intro") == ("docs", "a#b/c.md", "intro")


def test_parse_id_accepts_unicode_slugs() -> None:
    assert parse_id("docs:guide.md#überblick-2") == ("docs", "guide.md", "überblick-2")


def test_parse_id_splits_the_tree_at_the_first_colon() -> None:
    assert parse_id("docs:notes/10:30.md") == ("docs", "notes/10:30.md", None)


# ---- lookups ------------------------------------------------------------------------------------


def test_a_chunk_id_returns_that_chunk_only(store: FakeStore) -> None:
    result = get(store, "docs:guide.md#install")
    assert result.id == "docs:guide.md#install"
    assert not result.whole_document
    assert [c.id for c in result.chunks] == ["docs:guide.md#install"]


def test_a_document_id_returns_every_chunk_in_document_order(store: FakeStore) -> None:
    result = get(store, "docs:guide.md")
    assert result.whole_document
    assert result.id == "docs:guide.md"
    assert [c.id for c in result.chunks] == [
        "docs:guide.md",
        "docs:guide.md#install",
        "docs:guide.md#on-linux",
        "docs:guide.md#usage",
    ]


def test_full_document_turns_a_chunk_id_into_its_whole_document(store: FakeStore) -> None:
    result = get(store, "docs:guide.md#on-linux", full_document=True)
    assert result.whole_document
    assert result.id == "docs:guide.md"
    assert [c.id for c in result.chunks] == [c.id for c in GUIDE]


def test_full_document_on_a_document_id_changes_nothing(store: FakeStore) -> None:
    assert get(store, "docs:guide.md", full_document=True) == get(store, "docs:guide.md")


def test_an_id_with_a_control_character_is_found_from_the_escaped_form_ra_prints() -> None:
    odd = [chunk("docs:a\x1bb.md", title="Odd", depth=0, body="Odd.\n", breadcrumb=("Odd",))]
    store = FakeStore(odd)
    assert get(store, "docs:a\\x1bb.md").id == "docs:a\x1bb.md"
    assert get(store, "docs:a\x1bb.md").id == "docs:a\x1bb.md"


def test_a_path_that_really_holds_a_backslash_x_is_found_as_it_is_first() -> None:
    literal = [chunk("docs:a\\x1bb.md", title="Lit", depth=0, body="Lit.\n", breadcrumb=("Lit",))]
    odd = [chunk("docs:a\x1bb.md", title="Odd", depth=0, body="Odd.\n", breadcrumb=("Odd",))]
    store = FakeStore(literal, odd)
    assert get(store, "docs:a\\x1bb.md").chunks[0].title == "Lit"
    assert store.lookups == ["docs:a\\x1bb.md"]
    printable = FakeStore(odd)
    with pytest.raises(NotFoundError):
        get(printable, "docs:a\\x41b.md")
    assert printable.lookups == ["docs:a\\x41b.md"]  # `\x41` is no control character: kept as typed


def test_a_path_containing_a_hash_is_found_as_a_document(store: FakeStore) -> None:
    result = get(store, "docs:c#sharp.md")
    assert result.whole_document
    assert [c.id for c in result.chunks] == ["docs:c#sharp.md"]


def test_the_index_decides_whether_a_hash_names_a_heading(store: FakeStore) -> None:
    # `x#top` parses like a chunk id, but the index holds it as a document node
    result = get(store, "docs:x#top")
    assert result.whole_document
    assert result.id == "docs:x#top"


# ---- not found ----------------------------------------------------------------------------------


NOT_FOUND = [
    "docs:../../etc/passwd",
    "docs:/etc/passwd",
    "nope:a.md",
    "docs:guide.md#missing",
    "docs:missing.md",
    "docs:",
    ":a.md",
    "docs:a/./b.md",
    "docs:a\\b.md",
    "docs:a/../guide.md",
    "docs:./guide.md",
    "docs:a//b.md",
    "docs:guide.md\x00",
    "docs:guide.md#",
    "docs",
    "",
]


@pytest.mark.parametrize("id", NOT_FOUND)
def test_ids_that_do_not_name_indexed_content_are_not_found(store: FakeStore, id: str) -> None:
    with pytest.raises(NotFoundError) as info:
        get(store, id)
    message = str(info.value)
    assert message.startswith("not found: ")
    tree, colon, _ = id.partition("#")[0].partition(":")
    if not (tree and colon):  # no tree: what an id is
        assert message.endswith(" — an id is tree:path or tree:path#slug, as ra search and ra ls print them")
    elif tree not in ("docs", "notes"):  # the trees there are
        assert message.endswith(f" — no tree {tree!r} in this index (the trees: docs)")
    else:
        assert " — list " in message and " with: ra ls " in message
    assert "\n" not in message
    assert info.value.exit_code == 1


def test_the_not_found_message_quotes_the_id() -> None:
    store = FakeStore(GUIDE)
    with pytest.raises(NotFoundError) as info:
        get(store, "docs:../../etc/passwd")
    assert str(info.value) == "not found: docs:../../etc/passwd — list document ids with: ra ls docs docs:"


def test_the_not_found_message_of_a_chunk_id_names_how_to_list_its_documents_ids() -> None:
    with pytest.raises(NotFoundError) as info:
        get(FakeStore(GUIDE), "docs:guides/errors.md#nope")
    assert str(info.value) == (
        "not found: docs:guides/errors.md#nope — list the ids of docs:guides/errors.md with: "
        "ra ls chunks docs:guides/errors.md"
    )


def test_unsafe_paths_are_rejected_before_the_index_is_asked() -> None:
    store = FakeStore(GUIDE)
    for id in ("docs:../../etc/passwd", "docs:/etc/passwd", "docs:a/./b.md"):
        with pytest.raises(NotFoundError):
            get(store, id)
    assert store.lookups == []


def test_a_tree_not_in_the_manifest_is_not_found_even_if_the_index_has_its_chunks() -> None:
    # a tree removed from the configuration must not stay reachable through stale chunks
    store = FakeStore(GUIDE, trees=("other",))
    with pytest.raises(NotFoundError):
        get(store, "docs:guide.md")


def test_a_newline_in_an_id_does_not_break_the_one_line_message(store: FakeStore) -> None:
    with pytest.raises(NotFoundError) as info:
        get(store, "docs:a\nb.md")
    assert "\n" not in str(info.value)


def test_parse_id_raises_not_found_for_malformed_ids() -> None:
    for id in ("docs:", ":a.md", "docs", "docs:a.md#", "docs:/a.md"):
        with pytest.raises(NotFoundError):
            parse_id(id)


# ---- JSON ---------------------------------------------------------------------------------------


def test_json_of_a_chunk_has_every_field_and_the_total(store: FakeStore) -> None:
    data = get_to_dict(get(store, "docs:guide.md#on-linux"))
    assert data == {
        "id": "docs:guide.md#on-linux",
        "whole_document": False,
        "chunks": [
            {
                "id": "docs:guide.md#on-linux",
                "tree": "docs",
                "path": "guide.md",
                "title": "On Linux",
                "breadcrumb": "Guide › Install › On Linux",
                "depth": 3,
                "line_start": 7,
                "line_end": 9,
                "byte_start": 70,
                "byte_end": 90,
                "tokens": 4,
                "kind": "docs",
                "language": "markdown",
                "content": "### On Linux\n\nUse apt.\n",
            }
        ],
        "tokens": 4,
    }


def test_json_of_a_document_lists_chunks_in_order_and_sums_tokens(store: FakeStore) -> None:
    data = get_to_dict(get(store, "docs:guide.md"))
    assert data["whole_document"] is True
    assert [c["id"] for c in data["chunks"]] == [c.id for c in GUIDE]
    assert data["tokens"] == 3 + 5 + 4 + 2
    assert data["chunks"][0]["content"] == "Intro text.\n"


# ---- text ---------------------------------------------------------------------------------------


def test_text_of_a_chunk_is_header_breadcrumb_and_content(store: FakeStore) -> None:
    text = render_get(get(store, "docs:guide.md#install"))
    assert text == "─── docs:guide.md#install ───\n> Guide › Install\n\n## Install\n\nRun the installer.\n"


def test_text_of_a_document_reads_like_the_document(store: FakeStore) -> None:
    text = render_get(get(store, "docs:guide.md"))
    assert text == (
        "─── docs:guide.md ───\n"
        "\n"
        "Intro text.\n"
        "\n"
        "## Install\n"
        "\n"
        "Run the installer.\n"
        "\n"
        "### On Linux\n"
        "\n"
        "Use apt.\n"
        "\n"
        "## Usage\n"
        "\n"
        "Call it.\n"
    )
    assert text.count("───") == 2


def test_text_of_a_document_skips_an_empty_preamble() -> None:
    doc = [
        chunk("docs:b.md", title="B", depth=0, body="", breadcrumb=("B",)),
        chunk("docs:b.md#b", title="B", depth=1, body="Body.\n", breadcrumb=("B",)),
    ]
    assert render_get(get(FakeStore(doc), "docs:b.md")) == "─── docs:b.md ───\n\n# B\n\nBody.\n"

"""The versions of one docs page: one result, the newest or the one the query names, the others
listed under it (ra_query.search.versions)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ra_query.artifacts.store import Store, open_store
from ra_query.search.pipeline import SearchParams, search_topic
from ra_query.search.versions import (
    COMPARED_CHARS,
    may_be_copies,
    named_version,
    newest_first,
    pairs,
    same_page,
    version_of,
)
from tests.conftest import build

CATEGORIES = """# Categories

For apps with many subcommands, give each command a category: the help lists the commands of one
category together under its heading, sorted by name.

```go
cmd := &cli.{root}{{
    Commands: []*cli.Command{{
        {{Name: "noop"}},
        {{Name: "add", Category: "template"}},
        {{Name: "remove", Category: "template"}},
    }},
}}
```
"""

ALIASES = """# Aliases

A subcommand can have short aliases: `add` answers to `a` as well, and the help lists the
aliases after the name of each command, separated by commas.
"""


@pytest.mark.parametrize(
    ("path", "version"),
    [
        ("docs/v2/examples/flags.md", (2.0,)),
        ("docs/v3.1/flags.md", (3.0, 1.0)),
        ("versioned_docs/version-1.4/intro.md", (1.0, 4.0)),
        ("website/versioned_docs/version_2.0.0/intro.md", (2.0, 0.0, 0.0)),
        ("docs/2.x/guide.md", (2.0,)),
        ("docs/1.10/guide.md", (1.0, 10.0)),
    ],
)
def test_a_folder_that_names_a_release_gives_the_paths_version(path: str, version: tuple[float, ...]) -> None:
    assert version_of(path) == version


@pytest.mark.parametrize("path", ["docs/guide.md", "docs/2/chapter.md", "src/v2ray/notes.md", "docs/v2.md"])
def test_a_path_without_a_release_folder_has_no_version(path: str) -> None:
    assert version_of(path) is None


def test_the_newest_version_sorts_first_and_the_unversioned_docs_before_every_release() -> None:
    paths = ["docs/v1/a.md", "docs/v10/a.md", "docs/v2/a.md", "docs/a.md"]
    assert sorted(paths, key=newest_first) == ["docs/a.md", "docs/v10/a.md", "docs/v2/a.md", "docs/v1/a.md"]


def test_a_query_names_a_version_as_its_folder_is_written_or_as_version_and_its_number() -> None:
    assert named_version("docs/v2/a.md", frozenset({"in", "v2", "flags"}))
    assert named_version("versioned_docs/version-1.4/a.md", frozenset({"version", "1.4"}))
    assert not named_version("docs/v2/a.md", frozenset({"v3", "flags"}))
    assert not named_version("docs/a.md", frozenset({"v2"}))


def test_two_copies_of_a_page_are_the_same_page_and_two_pages_are_not() -> None:
    v2, v3 = CATEGORIES.format(root="App"), CATEGORIES.format(root="Command")
    assert same_page(pairs(v2), pairs(v3))
    assert not same_page(pairs(v3), pairs(ALIASES))
    assert not same_page(frozenset(), frozenset())


def test_texts_whose_lengths_differ_too_much_to_be_copies_are_not_compared() -> None:
    assert may_be_copies(1000, 900) and may_be_copies(900, 1000)
    assert not may_be_copies(1000, 300)
    assert may_be_copies(COMPARED_CHARS * 5, COMPARED_CHARS)  # only their beginnings are compared
    v2, v3 = CATEGORIES.format(root="App"), CATEGORIES.format(root="Command")
    assert may_be_copies(len(v2), len(v3)) and not may_be_copies(len(v3), len(ALIASES) // 3)


@pytest.fixture(scope="module")
def versioned(tmp_path_factory: pytest.TempPathFactory) -> Store:
    root = tmp_path_factory.mktemp("versioned")
    (root / "home").mkdir()
    kb = root / "kb"
    (kb / ".ra.toml").parent.mkdir(parents=True)
    (kb / ".ra.toml").write_text('root = true\n\n[tree.docs]\npath = "docs"\n', encoding="utf-8")
    for version, name in (("v1", "App"), ("v2", "App"), ("v3", "Command")):
        folder = kb / "docs" / version
        folder.mkdir(parents=True)
        (folder / "categories.md").write_text(CATEGORIES.format(root=name), encoding="utf-8")
        (folder / "aliases.md").write_text(ALIASES, encoding="utf-8")
    build(kb, root / "home")
    return open_store(kb / ".ra")


def _paths(store: Store, query: str) -> list[tuple[str, tuple[str, ...]]]:
    topic = search_topic(store, query, SearchParams(cutoff_ratio=0.0))
    return [(hit.record.path, hit.also) for hit in topic.hits]


def test_the_versions_of_a_page_are_one_result_the_newest_listing_the_others(versioned: Store) -> None:
    results = _paths(versioned, "how are subcommands grouped under a category heading in the help")
    assert results[0] == (
        "v3/categories.md",
        ("docs:v1/categories.md#categories", "docs:v2/categories.md#categories"),
    )
    assert [path for path, _ in results].count("v3/aliases.md") <= 1
    assert not any(path.endswith("categories.md") for path, _ in results[1:])


def test_a_query_that_names_a_version_is_shown_that_version(versioned: Store) -> None:
    results = _paths(versioned, "in v2, how are subcommands grouped under a category heading")
    assert results[0][0] == "v2/categories.md"
    assert set(results[0][1]) == {"docs:v1/categories.md#categories", "docs:v3/categories.md#categories"}


def test_different_pages_under_the_version_folders_stay_apart(versioned: Store) -> None:
    results = _paths(versioned, "subcommands help category aliases commas")
    assert {"v3/categories.md", "v3/aliases.md"} <= {path for path, _ in results}


Q = "how are subcommands grouped under a category heading in the help"


def _hits(store: Store, query: str, **params: int) -> tuple[Any, ...]:
    return search_topic(store, query, SearchParams(cutoff_ratio=0.0, **params)).hits


def test_at_one_result_the_newest_version_still_lists_the_others(versioned: Store) -> None:
    (first,) = _hits(versioned, Q, limit=1)
    assert set(first.also) == {"docs:v1/categories.md#categories", "docs:v2/categories.md#categories"}
    assert "v1/categories.md" not in [h.record.path for h in _hits(versioned, Q, limit=2)]


def test_a_version_named_at_a_sentences_end_is_shown(versioned: Store) -> None:
    assert (
        _paths(versioned, "how are subcommands grouped under a category heading in v2.")[0][0]
        == "v2/categories.md"
    )


@pytest.mark.parametrize("named", ["version 1.4", "version-1.4"])
def test_a_docusaurus_release_named_by_its_number_is_shown(tmp_path: Path, named: str) -> None:
    (tmp_path / "home").mkdir()
    kb = tmp_path / "kb"
    for version, name in (("version-1.4", "App"), ("version-2.0", "Command")):
        folder = kb / "site" / "versioned_docs" / version
        folder.mkdir(parents=True)
        (folder / "categories.md").write_text(CATEGORIES.format(root=name), encoding="utf-8")
    (kb / ".ra.toml").write_text('root = true\n\n[tree.docs]\npath = "site"\n', encoding="utf-8")
    build(kb, tmp_path / "home")
    hits = _hits(open_store(kb / ".ra"), f"in {named}, how are subcommands grouped under a category heading")
    assert hits[0].record.path == "versioned_docs/version-1.4/categories.md"


def test_a_path_without_its_release_folder_is_what_its_versions_share() -> None:
    from ra_query.search.versions import unversioned

    assert unversioned("docs/v2/x.md") == unversioned("docs/v10/x.md") == "docs/x.md"
    assert unversioned("versioned_docs/version-1.4/a/b.md") == "versioned_docs/a/b.md"
    assert unversioned("docs/x.md") == "docs/x.md"


def test_copies_in_two_trees_are_not_versions_of_one_page(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    kb = tmp_path / "kb"
    for tree, version, name in (("a", "v1", "App"), ("b", "v2", "Command")):
        folder = kb / tree / version
        folder.mkdir(parents=True)
        (folder / "categories.md").write_text(CATEGORIES.format(root=name), encoding="utf-8")
    (kb / ".ra.toml").write_text(
        'root = true\n\n[tree.a]\npath = "a"\n\n[tree.b]\npath = "b"\n', encoding="utf-8"
    )
    build(kb, tmp_path / "home")
    assert {h.record.tree for h in _hits(open_store(kb / ".ra"), Q)} == {"a", "b"}


def test_two_alike_pages_of_one_release_are_not_versions_of_each_other(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    kb = tmp_path / "kb"
    for version in ("v1", "v3"):
        (kb / "docs" / version).mkdir(parents=True)
    (kb / "docs" / "v1" / "categories.md").write_text(CATEGORIES.format(root="App"), encoding="utf-8")
    (kb / "docs" / "v3" / "categories.md").write_text(CATEGORIES.format(root="Command"), encoding="utf-8")
    grouping = CATEGORIES.format(root="Command").replace("# Categories", "# Grouping")
    (kb / "docs" / "v3" / "grouping.md").write_text(grouping.replace("sorted by name", "in the order given"))
    (kb / ".ra.toml").write_text('root = true\n\n[tree.docs]\npath = "docs"\n', encoding="utf-8")
    build(kb, tmp_path / "home")
    hits = _hits(open_store(kb / ".ra"), Q)
    assert {"v3/grouping.md", "v3/categories.md"} <= {h.record.path for h in hits}
    # the older release of categories.md is listed under categories.md, not under a page alike
    assert [h.record.path for h in hits if "docs:v1/categories.md#categories" in h.also] == [
        "v3/categories.md"
    ]
    older_first = _hits(open_store(kb / ".ra"), "cli.App category heading sorted by name")  # v1 ranks first
    assert not any("docs:v3/grouping.md#grouping" in h.also for h in older_first)  # one page a release


def _shown(path: str, score: float, *, aggregated: bool = False) -> Any:
    from ra_query.artifacts.models import ChunkRecord
    from ra_query.search.aggregate import Result
    from ra_query.search.pipeline import Shown

    cid = f"t:{path}#categories"
    body = CATEGORIES.format(root="App")
    record = ChunkRecord(cid, "t", path, f"t:{path}", None, "x", ("x",), 1, 0, 1, 1, 1, 0, 1, 1, body)
    return Shown(Result(cid, score, aggregated=aggregated), record, (record,))


def test_the_newest_version_is_shown_at_the_best_versions_score() -> None:
    from ra_query.search.pipeline import _versions

    kept = _versions(
        [_shown("v1/categories.md", 3.0), _shown("v3/categories.md", 2.0)], frozenset(), lambda i: None, 15
    )
    assert [(s.id, s.result.score, s.also) for s in kept] == [
        ("t:v3/categories.md#categories", 3.0, ("t:v1/categories.md#categories",))
    ]


def test_a_page_that_many_sections_merged_into_is_not_folded_as_a_version() -> None:
    from ra_query.search.pipeline import _versions

    out = [_shown("v3/categories.md", 3.0), _shown("v1/categories.md", 2.0, aggregated=True)]
    kept = _versions(out, frozenset(), lambda i: None, 15)
    assert [s.id for s in kept] == ["t:v3/categories.md#categories", "t:v1/categories.md#categories"]

"""Code words (issue 30): a query word also searches the words code uses for the same idea, where
the index has code; docs-only indexes rank as they did."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ra_query.artifacts.schema import build_analyzer, stopwords_of
from ra_query.artifacts.store import Store, open_store
from ra_query.search.pipeline import SearchParams, search_topic
from ra_query.text.codewords import GROUPS, table
from tests.conftest import build

CODE = {
    "src/walker.py": '''\
        def skip_dotfiles(entries):
            """Leave out the hidden entries of a directory listing."""
            return [e for e in entries if not e.startswith(".")]
        ''',
    "src/numbers.py": '''\
        def total(values):
            """Add the values up."""
            return sum(values)
        ''',
    "src/flags.py": """\
        def check_required(seen, ctx):
            for name in ctx.flags:
                if name not in seen:
                    raise SystemExit(ctx.msg)
        """,
}
DOCS = {
    "docs/walking.md": """\
        # Walking

        Every directory is listed, then its entries are read one by one.
        """,
    "docs/sums.md": """\
        # Sums

        The values are added up in order.
        """,
}


def _kb(root: Path, files: dict[str, str], include: str) -> Store:
    kb, home = root / "kb", root / "home"
    home.mkdir()
    for path, text in files.items():
        (kb / path).parent.mkdir(parents=True, exist_ok=True)
        (kb / path).write_text(textwrap.dedent(text), encoding="utf-8")
    (kb / ".ra.toml").write_text(f'root = true\n[tree.kb]\npath = "."\ninclude = [{include}]\n')
    build(kb, home)
    return open_store(kb / ".ra")


@pytest.fixture(scope="module")
def code_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    return _kb(tmp_path_factory.mktemp("codewords"), CODE | DOCS, '"**/*.py", "**/*.md"')


@pytest.fixture(scope="module")
def docs_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    return _kb(tmp_path_factory.mktemp("docswords"), DOCS, '"**/*.md"')


def _ids(store: Store, query: str, **params: float) -> list[str]:
    return [hit.id for hit in search_topic(store, query, SearchParams(cutoff_ratio=0, **params)).hits]


def test_no_word_is_in_two_groups() -> None:
    words = [word for group in GROUPS for word in group]
    assert sorted(w for w in set(words) if words.count(w) > 1) == []


def test_every_word_is_lower_case_and_one_word() -> None:
    assert [w for group in GROUPS for w in group if w != w.lower() or not w.isalnum()] == []


def test_the_table_maps_a_stemmed_word_to_the_rest_of_its_group() -> None:
    words = table(build_analyzer("english").analyze, stopwords_of("english"))
    folders = build_analyzer("english").analyze("folders")[0]
    assert [word for _, word in words[folders]] == ["directory", "dir"]


def test_a_word_finds_the_chunks_that_only_use_its_code_words(code_store: Store) -> None:
    assert sorted(_ids(code_store, "folder")) == [
        "kb:docs/walking.md#walking",
        "kb:src/walker.py#skip_dotfiles",
    ]


def test_a_word_finds_the_code_that_abbreviates_it(code_store: Store) -> None:
    assert _ids(code_store, "context message") == ["kb:src/flags.py#check_required"]


def test_a_word_finds_the_code_that_says_it_another_way(code_store: Store) -> None:
    assert _ids(code_store, "mandatory") == ["kb:src/flags.py#check_required"]


def test_code_words_are_off_at_zero(code_store: Store) -> None:
    assert _ids(code_store, "folder", code_words=0) == []


def test_a_docs_only_index_does_not_search_code_words(docs_store: Store) -> None:
    assert _ids(docs_store, "folder") == []


def test_a_code_word_weighs_less_than_the_word_itself(code_store: Store) -> None:
    hits = search_topic(code_store, "directory", SearchParams(cutoff_ratio=0)).hits
    by_id = {hit.id: hit.score for hit in hits}
    via_synonym = search_topic(code_store, "folder", SearchParams(cutoff_ratio=0)).hits
    assert via_synonym[0].score < by_id["kb:src/walker.py#skip_dotfiles"]


def test_explain_names_the_code_words_searched(code_store: Store) -> None:
    explain = search_topic(code_store, "folder", SearchParams(cutoff_ratio=0)).explain
    assert "code words: folder → directory" in explain  # `dir` is in no chunk

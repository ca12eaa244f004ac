"""Evidence from above a definition (issue 30; off by default): its file's own chunk, and the
docs sections that name it."""

from __future__ import annotations

import textwrap

import pytest

from ra_query.artifacts.store import Store, open_store
from ra_query.search.pipeline import SearchParams, search_topic
from tests.conftest import build

FILES = {
    "src/misc.py": '''\
        """Assorted helpers."""


        def pause_briefly(n):
            """Wait a little: the delay before the next try."""
            return n * 2
        ''',
    "src/backoff.py": '''\
        """Retry backoff: how long to wait before the next retry, the delay growing each time."""

        import random


        def grow(attempt):
            """Twice as long before the next try, each time."""
            return 2 ** attempt + random.random()
        ''',
    "docs/retries.md": """\
        # Retries

        A failed request is tried again after a pause that doubles each time: see `grow`.
        """,
}
QUERY = "wait before the next try"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    root = tmp_path_factory.mktemp("evidence")
    kb, home = root / "kb", root / "home"
    home.mkdir()
    for path, text in FILES.items():
        (kb / path).parent.mkdir(parents=True, exist_ok=True)
        (kb / path).write_text(textwrap.dedent(text), encoding="utf-8")
    (kb / ".ra.toml").write_text('root = true\n[tree.kb]\npath = "."\ninclude = ["**/*.py", "**/*.md"]\n')
    build(kb, home)
    return open_store(kb / ".ra")


def _ids(store: Store, **weights: float) -> list[str]:
    # code words off: these tests weigh the evidence alone (`wait` would reach `pause`, `delay`)
    return [
        hit.id
        for hit in search_topic(store, QUERY, SearchParams(code_words=0, cutoff_ratio=0, **weights)).hits
    ]


def test_by_default_neither_file_nor_docs_lends_anything(store: Store) -> None:
    assert _ids(store)[:2] == ["kb:src/misc.py#pause_briefly", "kb:src/backoff.py#grow"]


def test_a_definition_whose_file_matches_the_question_better_moves_up(store: Store) -> None:
    assert _ids(store, file_weight=1.0)[:2] == ["kb:src/backoff.py#grow", "kb:src/misc.py#pause_briefly"]


def test_file_evidence_keeps_the_best_definitions_score(store: Store) -> None:
    plain = search_topic(store, QUERY, SearchParams(code_words=0, cutoff_ratio=0)).hits[0].score
    weighed = (
        search_topic(store, QUERY, SearchParams(code_words=0, cutoff_ratio=0, file_weight=1.0)).hits[0].score
    )
    assert weighed == pytest.approx(plain)


def test_a_definition_a_matching_docs_section_names_gains_its_score(store: Store) -> None:
    plain = {
        hit.id: hit.score
        for hit in search_topic(store, QUERY, SearchParams(code_words=0, cutoff_ratio=0)).hits
    }
    lent = {
        hit.id: hit.score
        for hit in search_topic(
            store, QUERY, SearchParams(code_words=0, cutoff_ratio=0, docs_weight=1.0)
        ).hits
    }
    assert lent["kb:src/backoff.py#grow"] > plain["kb:src/backoff.py#grow"]
    assert lent["kb:src/misc.py#pause_briefly"] == pytest.approx(plain["kb:src/misc.py#pause_briefly"])


def test_the_file_of_a_definition_is_not_weighed_itself(store: Store) -> None:
    params = SearchParams(code_words=0, cutoff_ratio=0, file_weight=1.0, limit=20, aggregation=False)
    files = [
        hit for hit in search_topic(store, "retry backoff", params).hits if hit.id == "kb:src/backoff.py"
    ]
    plain = [
        hit
        for hit in search_topic(store, "retry backoff", params._replace(file_weight=0)).hits
        if hit.id == "kb:src/backoff.py"
    ]
    assert files and plain and files[0].score == pytest.approx(plain[0].score)

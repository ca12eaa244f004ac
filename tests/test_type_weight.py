"""A type's own chunk — a class's or struct's declaration, an interface, an enum — weighs
`type_weight` (0.8): the function that does what a question asks about comes before the type
whose doc comment uses the same words; a question that asks which class or type keeps the types'
weight (ra_query.search.pipeline). Each code chunk says what it defines (`defines`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ra_build.document.chunk import chunk_document
from ra_query.artifacts.store import open_store
from ra_query.search.pipeline import DEFAULT_TYPE_WEIGHT, SearchParams, asks_for_a_type, search
from tests.conftest import build, run_cmd

SENTENCE = "The delay before a failed upload is retried doubles each time."


@pytest.mark.parametrize(
    "query",
    [
        "which exception class is raised when the upload fails",
        "What type holds the retry settings?",
        "which struct keeps the delay",
        "what interface must my uploader satisfy",
        "which enums list the states",
    ],
)
def test_a_question_of_which_class_or_type_is_recognised(query: str) -> None:
    assert asks_for_a_type(query)


@pytest.mark.parametrize(
    "query",
    [
        "where is the delay before a retry computed",
        "how are the java.util time classes converted",  # classes it works on, not which one
        "the type of a failed upload",
        "what happens to a type error in the upload",
    ],
)
def test_a_question_that_does_not_ask_which_type_is_not_one(query: str) -> None:
    assert not asks_for_a_type(query)


def test_each_code_chunk_says_what_it_defines() -> None:
    source = (
        "class Uploader:\n"
        '    """Uploads files."""\n\n'
        "    def send(self, path):\n"
        "        return path\n\n\n"
        "def retry(upload):\n"
        "    return upload()\n"
    )
    doc = chunk_document("kb", "upload.py", source)
    assert {c.symbol or c.id: c.defines for c in doc.chunks} == {
        "kb:upload.py": "file",
        "Uploader": "class",
        "Uploader.send": "method",
        "retry": "function",
    }


def test_a_docs_chunk_defines_nothing() -> None:
    doc = chunk_document("kb", "guide.md", "# Guide\n\n## Retries\n\nRetried.\n")
    assert {c.defines for c in doc.chunks} == {""}


def test_a_part_of_a_long_definition_says_it_is_a_part() -> None:
    body = "".join(f"    step_{k} = compute_{k}(value)\n" for k in range(400))
    doc = chunk_document("kb", "long.py", f"def long(value):\n{body}    return value\n")
    assert doc.chunks[1].defines == "function"
    assert {c.defines for c in doc.chunks[2:]} == {"part"}


@pytest.fixture
def built(tmp_path: Path, home: Path) -> Path:
    """A built project of a class and a function whose doc comments say the same sentence."""
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "upload.py").write_text(
        f'class Backoff:\n    """{SENTENCE}"""\n\n\n'
        f'def backoff(attempt):\n    """{SENTENCE}"""\n    return 2**attempt\n',
        encoding="utf-8",
    )
    (kb / ".ra.toml").write_text(
        'root = true\n\n[tree.kb]\npath = "."\ninclude = ["**/*.py"]\n', encoding="utf-8"
    )
    build(kb, home)
    return kb


def _scores(kb: Path, query: str, **changes: float) -> dict[str, float]:
    store = open_store(kb / ".ra")
    params = SearchParams.from_settings(store.search_defaults())._replace(cutoff_ratio=0.0, **changes)
    return {hit.record.symbol: hit.score for hit in search(store, [query], params)[0].hits}


def test_a_type_weighs_type_weight_beside_a_function_that_says_the_same(built: Path) -> None:
    query = "where is the delay before a failed upload retried"
    weighed, even = _scores(built, query), _scores(built, query, type_weight=1.0)
    assert weighed["Backoff"] / weighed["backoff"] == pytest.approx(
        DEFAULT_TYPE_WEIGHT * even["Backoff"] / even["backoff"], rel=1e-3
    )
    assert next(iter(weighed)) == "backoff"


def test_a_question_of_which_class_keeps_the_types_weight(built: Path) -> None:
    query = "which class says the delay before a failed upload is retried"
    assert _scores(built, query) == pytest.approx(_scores(built, query, type_weight=1.0), rel=1e-6)


def test_explain_says_a_question_of_which_type_keeps_its_weight(built: Path, home: Path) -> None:
    run = run_cmd(
        "ra-query", "search", "--explain", "which class holds the retry delay", cwd=built, home=home
    )
    assert run.code == 0, run.err
    assert "asks which type: a type's chunk keeps its weight (type_weight 0.8 → 1)" in run.out + run.err


def test_the_index_stores_what_a_chunk_defines(built: Path, home: Path) -> None:
    run = run_cmd("ra-query", "search", "--json", "backoff", cwd=built, home=home)
    assert run.code == 0, run.err
    ids = [r["id"] for r in json.loads(run.out)["queries"][0]["results"]]
    store = open_store(built / ".ra")
    assert {store.get_chunk(i).defines for i in ids} >= {"class", "function"}  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "folder", ["examples/basic", "_examples/upload", "example", "demo", "samples", "Examples"]
)
def test_an_example_programs_code_weighs_as_a_tests_does(tmp_path: Path, home: Path, folder: str) -> None:
    kb = tmp_path / "kb"
    (kb / folder).mkdir(parents=True)
    (kb / "upload.py").write_text(f'def backoff(attempt):\n    """{SENTENCE}"""\n    return 2**attempt\n')
    (kb / folder / "main.py").write_text(
        f'def backoff_demo(attempt):\n    """{SENTENCE}"""\n    return 2**attempt\n'
    )
    assert _test_weight_share(kb, home, "**/*.py", "backoff_demo", "backoff") == pytest.approx(0.5, rel=1e-3)


def _test_weight_share(kb: Path, home: Path, include: str, caller: str, callee: str) -> float:
    """Build `kb` (files matching `include`): how much less `caller` scores beside `callee` with
    the default `test_weight` than with none."""
    (kb / ".ra.toml").write_text(f'root = true\n\n[tree.kb]\npath = "."\ninclude = ["{include}"]\n')
    build(kb, home)
    query = "where is the delay before a failed upload retried"
    weighed, even = _scores(kb, query), _scores(kb, query, test_weight=1.0)
    return (weighed[caller] / weighed[callee]) / (even[caller] / even[callee])


def test_a_zig_test_block_beside_the_code_weighs_as_a_test_does(tmp_path: Path, home: Path) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "upload.zig").write_text(
        f"/// {SENTENCE}\npub fn backoff(attempt: u6) u64 {{\n    return 1 << attempt;\n}}\n\n"
        f'/// {SENTENCE}\ntest "backoff doubles" {{\n    try expect(backoff(2) == 4);\n}}\n'
    )
    share = _test_weight_share(kb, home, "**/*.zig", "backoff-doubles", "backoff")
    assert share == pytest.approx(0.5, rel=1e-3)  # the function first: the test only calls it

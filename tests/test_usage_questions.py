"""A question of how to use the software (`how do I …`, `can I …`) gives code no head start over
the docs: their docs answer it as often as their code (ra_query.search.pipeline.USAGE_CODE_SHARE)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ra_query.search.pipeline import USAGE_CODE_SHARE, WHERE_CODE_SHARE, asks_how_to_use, asks_where_in_code
from tests.conftest import build, run_cmd


@pytest.mark.parametrize(
    "query",
    [
        "how do I retry a request when the server fails",
        "How can we keep the old setting name working?",
        "how should I structure my commands",
        "can I store the settings encrypted",
        "is there a way to turn off the hints",
        "do I need my own locking",
        "how to enable tab completion in zsh",
        "what's the recommended way to add a subcommand",
    ],
)
def test_a_question_of_how_to_use_it_is_recognised(query: str) -> None:
    assert asks_how_to_use(query)


@pytest.mark.parametrize(
    "query",
    [
        "how does it retry a request when the server fails",
        "where is the retry delay computed",
        "what happens if the server fails twice",
        "retry request server",
        "showhow do I",  # a word that only begins like one
        "how do you handle redirects",  # asked of the project: how it does it
    ],
)
def test_a_question_of_how_it_works_is_not_one_of_use(query: str) -> None:
    assert not asks_how_to_use(query)


def _built(tmp_path: Path, home: Path) -> Path:
    """A built project of a docs section and a function that say the same sentence."""
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "guide.md").write_text(
        "# Guide\n\n## Retries\n\nA request is retried three times when the server fails.\n", encoding="utf-8"
    )
    (kb / "client.py").write_text(
        'def retried(request):\n    """A request is retried three times when the server fails."""\n'
        "    return send(request, attempts=3)\n",
        encoding="utf-8",
    )
    (kb / ".ra.toml").write_text(
        'root = true\n\n[tree.kb]\npath = "."\ninclude = ["**/*.md", "**/*.py"]\n', encoding="utf-8"
    )
    build(kb, home)
    return kb


def _scores(kb: Path, home: Path, query: str) -> dict[str, float]:
    """Each kind's score of `ra-query search --json` for `query` (no elbow: both kinds shown)."""
    run = run_cmd("ra-query", "search", "--json", "--cutoff-ratio", "0", query, cwd=kb, home=home)
    assert run.code == 0, run.err
    return {r["kind"]: r["score"] for r in json.loads(run.out)["queries"][0]["results"]}


def test_a_usage_question_weighs_code_against_the_docs_by_the_usage_share(tmp_path: Path, home: Path) -> None:
    kb = _built(tmp_path, home)

    # the same words once stop words are left out: only code's boost differs
    works = _scores(
        kb, home, "what retries a request when the server fails"
    )  # neither a use nor a where question
    use = _scores(kb, home, "how do I retry a request when the server fails")
    assert works["code"] / works["docs"] == pytest.approx(
        use["code"] / use["docs"] / USAGE_CODE_SHARE, rel=1e-3
    )


def test_explain_says_a_usage_question_gives_code_no_head_start(tmp_path: Path, home: Path) -> None:
    kb = _built(tmp_path, home)
    run = run_cmd("ra-query", "search", "--explain", "how do I retry a request", cwd=kb, home=home)
    assert run.code == 0, run.err
    assert "asks how to use it: code's boost 1 (× 0.8)" in run.out + run.err


@pytest.mark.parametrize(
    "query",
    [
        "where is the retry delay computed",
        "Where does it pick the subcommand?",
        "where are the headers parsed",
        "which function parses the header",
        "Which part decides the identity key of a job?",
        "how does it pick the subcommand",  # how it works
        "How are bursts of file events collapsed?",
    ],
)
def test_a_question_of_where_in_the_code_or_how_it_works_is_recognised(query: str) -> None:
    assert asks_where_in_code(query)


@pytest.mark.parametrize(
    "query",
    [
        "how do I retry a request",  # how to use it
        "how do we keep the old name",
        "where can I find the changelog",  # where in the docs
        "somewhere is the retry delay computed",
        "which version added retries",
        "retry delay",
    ],
)
def test_a_question_that_does_not_ask_where_in_the_code_is_not_one(query: str) -> None:
    assert not asks_where_in_code(query)


def test_a_where_question_weighs_code_against_the_docs_by_the_where_share(tmp_path: Path, home: Path) -> None:
    kb = _built(tmp_path, home)

    # the same words once stop words are left out (`how`, `where`): only code's boost differs
    works = _scores(kb, home, "what retries a request when the server fails")
    where = _scores(kb, home, "where is a request retried when the server fails")
    assert where["code"] / where["docs"] == pytest.approx(
        works["code"] / works["docs"] * WHERE_CODE_SHARE, rel=1e-3
    )


def test_explain_says_a_where_question_gives_code_a_further_head_start(tmp_path: Path, home: Path) -> None:
    kb = _built(tmp_path, home)
    run = run_cmd("ra-query", "search", "--explain", "where is a request retried", cwd=kb, home=home)
    assert run.code == 0, run.err
    assert "asks about the code: code's boost 1.625 (× 1.3)" in run.out + run.err

"""Search quality: judged retrieval on CACM (a smoke version of bench/quality.py), and the answers
a careful human would pick for the words agents type, each with its text.

The CACM collection (`../shared/data/cacm`) becomes a tree of single-`# heading` files, built
through the real pipeline; pytrec_eval (trec_eval) scores the ranking. The command pages under
tests/fixtures/commands are tldr-shaped pages written for these tests.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ra_query.artifacts.store import Store, open_store
from ra_query.commands import search_command, search_payload
from ra_query.search.pipeline import SearchParams, search_topic
from tests.conftest import build

REPO = Path(__file__).resolve().parent.parent
COMMANDS = Path(__file__).parent / "fixtures" / "commands"
SMOKE_MAP_FLOOR = 0.30


def _bench(name: str) -> ModuleType:
    """bench/NAME.py as a module (bench/ is scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(f"bench_{name}", module)
    spec.loader.exec_module(module)
    return module


quality = _bench("quality")
needs_cacm = pytest.mark.skipif(
    not (quality.DATA / "cacm" / "cacm.jsonl").is_file(), reason="../shared/data/cacm is not here"
)


@pytest.fixture(scope="module")
def cacm(tmp_path_factory: pytest.TempPathFactory) -> Store:
    root = tmp_path_factory.mktemp("cacm")
    (root / "home").mkdir()
    kb = root / "kb"
    quality.write_tree(quality.cacm_docs(), kb / "docs")
    (kb / ".ra.toml").write_text('root = true\n\n[tree.cacm]\npath = "docs"\n', encoding="utf-8")
    build(kb, root / "home")
    return open_store(kb / ".ra")


@pytest.fixture(scope="module")
def commands(tmp_path_factory: pytest.TempPathFactory) -> Store:
    root = tmp_path_factory.mktemp("commands")
    (root / "home").mkdir()
    shutil.copytree(COMMANDS, root / "kb")
    build(root / "kb", root / "home")
    return open_store(root / "kb" / ".ra")


def _empty(result: dict[str, Any]) -> bool:
    return quality._is_empty(result)  # pyright: ignore[reportPrivateUsage]


# ---- judged ranking (CACM) ----------------------------------------------------------------------


@needs_cacm
def test_cacm_ranking_reaches_a_map_of_at_least_0_30(cacm: Store) -> None:
    run, failed = quality.ranking_run(cacm, quality.cacm_queries())
    score = quality.evaluate(quality.cacm_qrels(), run, ["map"])["map"]
    assert failed == 0
    assert score >= SMOKE_MAP_FLOOR, f"CACM MAP {score:.4f} < {SMOKE_MAP_FLOOR}"


@needs_cacm
def test_ra_evals_ranking_of_cacm_gives_pytrec_evals_map_and_ndcg(cacm: Store) -> None:
    run, _ = quality.ranking_run(cacm, quality.cacm_queries(), quality.ranking_params(cacm, "lexical"))
    expected = quality.evaluate(quality.cacm_qrels(), run, ["map", "ndcg_cut_10"])
    by_ra = quality.ra_eval_ranking(cacm, quality.SETS["cacm"]["files"], "lexical")
    assert (by_ra["MAP"], by_ra["nDCG@10"]) == (
        round(expected["map"], 4),
        round(expected["ndcg_cut_10"], 4),
    )


@needs_cacm
def test_every_cacm_topic_gets_a_short_answer_without_an_empty_result(cacm: Store) -> None:
    default = quality.default_run(cacm, quality.cacm_queries())
    assert (default.failed, default.no_result, default.empty) == (0, 0, 0)
    assert sum(default.results) / len(default.results) <= 5


@needs_cacm
@pytest.mark.parametrize(
    "overrides",
    [{}, {"aggregation": False}, {"cutoff_ratio": 0.0, "limit": 20}, {"candidate_limit": 5}],
    ids=["default", "no-aggregation", "no-cutoff", "few-candidates"],
)
def test_a_tree_of_single_heading_files_never_answers_with_an_empty_result(
    cacm: Store, overrides: dict[str, Any]
) -> None:
    params = quality.default_params(cacm)._replace(**overrides)
    for text in list(quality.cacm_queries().values())[:20]:
        payload = json.loads(search_command(cacm, [text], params, json=True).text)
        assert not any(_empty(r) for r in payload["queries"][0]["results"]), text


@needs_cacm
def test_the_mcp_search_answers_a_single_heading_tree_with_text_too(cacm: Store) -> None:
    texts = list(quality.cacm_queries().values())[:10]
    payload = search_payload(cacm, texts)
    results = [r for topic in payload["queries"] for r in topic["results"]]
    assert results and not any(_empty(r) for r in results)


# ---- the words agents type ----------------------------------------------------------------------


def test_a_command_name_answers_with_the_text_of_its_page(commands: Store) -> None:
    payload = json.loads(search_command(commands, ["tar"], SearchParams(), json=True).text)
    results = payload["queries"][0]["results"]
    assert results[0]["path"] == "tar.md"
    assert all(not _empty(r) for r in results)
    assert "tar xf path/to/source.tar" in results[0]["content"]


def test_a_question_finds_the_page_that_answers_it_not_the_page_named_after_a_stop_word(
    commands: Store,
) -> None:
    topic = search_topic(commands, "how do I list files sorted by size", SearchParams())
    assert topic.hits[0].record.path == "ls.md"
    assert "pages:do.md" not in [hit.record.doc_id for hit in topic.hits]


def test_a_sentence_with_lower_case_or_is_ranked_words_not_an_error(commands: Store) -> None:
    topic = search_topic(commands, "compress or decompress a file", SearchParams())
    assert topic.hits[0].record.path == "gzip.md" and topic.note is None


def test_a_pasted_line_with_a_lone_dash_and_an_unclosed_quote_still_answers(commands: Store) -> None:
    topic = search_topic(commands, 'tar - extract "archive', SearchParams())
    assert topic.hits[0].record.path == "tar.md"
    assert topic.note is not None and topic.note.startswith("query syntax error")


# ---- the benchmarks' questions, as ra eval reads them -------------------------------------------


def test_a_code_question_is_asked_for_its_definitions_own_lines() -> None:
    code_search = _bench("code_search")
    item = {"id": "c-1", "question": "where is the help put together", "path": "src/core.py"}
    item |= {"line_start": 120, "line_end": 168, "kind": "where"}
    (question,) = code_search.eval_questions([item], code_search.ra_eval())
    (answer,) = question.answers
    assert (question.id, answer.kind, answer.path, answer.start, answer.end) == (
        "c-1",
        "lines",
        "src/core.py",
        120,
        168,
    )
    assert answer.tight
    assert question.kind == ""  # where / how groups the benchmark's figures; it narrows no search


def test_a_reworded_question_is_answered_by_its_pages_in_the_tldr_tree() -> None:
    item = {"id": "q001", "question": "set aside my edits", "answers": ["common/git-stash.md"], "why": "…"}
    (question,) = quality.reworded_questions([item])
    assert [(a.text, a.kind) for a in question.answers] == [("tldr:common/git-stash.md", "document")]
    assert question.answers[0].answers(
        {"id": "tldr:common/git-stash.md#stash", "path": "common/git-stash.md"}
    )


@pytest.mark.parametrize("comma", ["", ","])
def test_an_e_g_in_a_question_is_how_it_is_written_not_a_word_to_search(tmp_path: Path, comma: str) -> None:
    (tmp_path / "home").mkdir()
    kb = tmp_path / "kb"
    (kb / "docs").mkdir(parents=True)
    (kb / ".ra.toml").write_text('root = true\n\n[tree.docs]\npath = "docs"\n', encoding="utf-8")
    (kb / "docs" / "watch.md").write_text(
        "# Watching\n\nThe live reload follows a symlink when the settings file is replaced.\n",
        encoding="utf-8",
    )
    (kb / "docs" / "prefix.md").write_text(
        "# Prefix\n\nThe prefix, e.g. APP, that the names start with, i.e. APP_PORT.\n",
        encoding="utf-8",
    )
    build(kb, tmp_path / "home")
    store = open_store(kb / ".ra")
    question = (
        f"does the live reload notice a replaced settings file, e.g.{comma} when a volume is updated, "
        f"i.e.{comma} swapped?"
    )
    topic = search_topic(store, question, SearchParams(cutoff_ratio=0.0))
    assert [hit.record.path for hit in topic.hits] == ["watch.md"]

"""`ra eval QUESTIONS` (issue 34): a knowledge base tested like code — each question run as an
agent's search and scored; misses explained; floors that fail a CI build."""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Run, run_cmd

PAGES = {
    "install.md": "# Install\n\n## Offline\n\nCopy the wheel files to the machine and run pip with "
    "--no-index and --find-links pointing at them.\n\n## Upgrade\n\nRun pip install --upgrade ra-kb.\n",
    "search.md": "# Search\n\n## Budget\n\nThe token budget caps what a search prints: --max-tokens.\n",
    "faq.md": "# FAQ\n\n## Colours\n\nSet NO_COLOR to turn colours off.\n",
}
QUESTIONS = [
    {"id": "offline", "question": "install without internet access", "answers": ["docs:install.md#offline"]},
    {"id": "budget", "question": "limit how much a search prints", "answers": ["docs:search.md"]},
    {"id": "colours", "question": "turn colours off", "answers": ["faq.md:5-5"], "grades": {"faq.md:5-5": 2}},
    {"id": "gone", "question": "render diagrams", "answers": ["docs:diagrams.md#mermaid"]},
]


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("eval") / "kb"
    home = root.parent / "home"
    home.mkdir()
    (root / "docs").mkdir(parents=True)
    for name, text in PAGES.items():
        (root / "docs" / name).write_text(text, encoding="utf-8")
    (root / ".ra.toml").write_text('root = true\n[tree.docs]\npath = "docs"\n', encoding="utf-8")
    (root / "questions.jsonl").write_text(
        "\n".join(json.dumps(q) for q in QUESTIONS) + "\n", encoding="utf-8"
    )
    assert run_cmd("ra", "update", cwd=root, home=home).code == 0
    return root, home


def ra(kb: tuple[Path, Path], *args: str) -> Run:
    return run_cmd("ra", *args, cwd=kb[0], home=kb[1])


def rq(kb: tuple[Path, Path], *args: str) -> Run:
    return run_cmd("ra-query", "--artifacts", str(kb[0] / ".ra"), *args, cwd=kb[0], home=kb[1])


def write(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# ---- the questions file -----------------------------------------------------------------------


def test_an_answer_is_a_chunk_a_document_or_a_line_range() -> None:
    from ra_query.search.evaluate import Answer, _answer

    assert _answer("docs:a.md#x", 1, "f:1") == Answer("docs:a.md#x", "chunk")
    assert _answer("docs:a.md", 1, "f:1") == Answer("docs:a.md", "document")
    assert _answer("src/app.py:10-40", 2, "f:1") == Answer(
        "src/app.py:10-40", "lines", "", "src/app.py", 10, 40, 2
    )
    assert _answer("repo:src/app.py:3-4", 1, "f:1").tree == "repo"


def test_a_result_answers_when_it_is_holds_or_overlaps_the_answer() -> None:
    from ra_query.search.evaluate import _answer

    result = {"id": "docs:a.md#x", "tree": "docs", "path": "a.md", "line_start": 5, "line_end": 9}
    assert _answer("docs:a.md#x", 1, "").answers(result)
    assert _answer("docs:a.md#y", 1, "").answers({**result, "constituents": ["docs:a.md#y"]})
    assert _answer("docs:a.md", 1, "").answers(result)
    assert _answer("a.md:9-12", 1, "").answers(result)
    assert not _answer("a.md:10-12", 1, "").answers(result)
    assert not _answer("docs:b.md", 1, "").answers(result)


def _lines(start: int, end: int, path: str = "src/app.py") -> dict[str, object]:
    return {"id": f"code:{path}#x", "tree": "code", "path": path, "line_start": start, "line_end": end}


def test_a_tight_range_is_not_answered_by_a_result_that_holds_much_more_than_it() -> None:
    from ra_query.search.evaluate import _answer

    whole_file = _lines(1, 400)
    assert _answer("src/app.py:120-168", 1, "").answers(whole_file)
    assert not _answer("src/app.py:120-168", 1, "", tight=True).answers(whole_file)


def test_a_tight_range_is_answered_by_a_result_of_up_to_twice_its_lines_and_20_more() -> None:
    from ra_query.search.evaluate import _answer

    definition = _answer("src/app.py:120-168", 1, "", tight=True)  # 49 lines: at most 118
    assert definition.answers(_lines(100, 217))
    assert not definition.answers(_lines(100, 218))
    assert not definition.answers(_lines(169, 180))  # about its size, but after it


def test_tight_in_a_question_makes_its_line_ranges_tight_and_nothing_else(tmp_path: Path) -> None:
    from ra_query.search.evaluate import read_questions

    line = '{"question": "x", "answers": ["src/app.py:1-9", "code:src/app.py"], "tight": true}'
    (question,) = read_questions(write(tmp_path / "q.jsonl", line))
    assert [a.tight for a in question.answers] == [True, False]
    assert question.answers[1].answers(_lines(1, 400))  # a document is answered by any of its chunks


def test_a_result_in_an_answers_file_is_in_its_file_whatever_its_lines() -> None:
    from ra_query.search.evaluate import _answer

    elsewhere = _lines(300, 320)
    for answer in ("src/app.py:120-168", "code:src/app.py#y", "code:src/app.py"):
        assert _answer(answer, 1, "").in_file(elsewhere), answer
    assert not _answer("src/other.py:120-168", 1, "").in_file(elsewhere)
    assert not _answer("docs:src/app.py:1-9", 1, "").in_file(elsewhere)  # the same path in another tree


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "q.jsonl:1: not JSON — write one JSON object per line"),
        ('["a"]', "q.jsonl:1: not a JSON object"),
        ('{"answers": ["docs:a.md"]}', 'q.jsonl:1: no "question" — give the question as a string'),
        ('{"question": "x", "answers": []}', 'q.jsonl:1: "answers" must be a non-empty list'),
        ('{"question": "x", "answers": ["a.md"]}', "q.jsonl:1: answer 'a.md' is not an id or a range"),
        ('{"question": "x", "answers": ["a.md:9-3"]}', "a line range is START-END with 1 ≤ START ≤ END"),
        ('{"question": "x", "answers": ["d:a.md"], "grades": {"d:a.md": -1}}', '"grades" must map answers'),
        ('{"question": "x", "answers": ["a.py:1-9"], "tight": "yes"}', '"tight" must be true or false'),
        # a label of the question's own would narrow every search to nothing, as `--kind where`
        (
            '{"question": "x", "answers": ["a.py:1-9"], "kind": "where"}',
            "\"kind\" is 'where', not one of docs",
        ),
    ],
)
def test_a_bad_question_line_is_an_error_with_its_file_and_line(
    tmp_path: Path, line: str, message: str
) -> None:
    from ra_query.errors import InputError
    from ra_query.search.evaluate import read_questions

    path = write(tmp_path / "q.jsonl", line)
    with pytest.raises(InputError) as raised:
        read_questions(path)
    assert message in str(raised.value).replace(str(tmp_path) + "/", "")


def test_a_questions_file_that_starts_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    from ra_query.search.evaluate import read_questions

    path = tmp_path / "q.jsonl"  # as Windows editors save UTF-8
    path.write_bytes(b"\xef\xbb\xbf" + b'{"question": "x", "answers": ["d:a.md"]}\n')
    assert [q.text for q in read_questions(path)] == ["x"]


def test_two_questions_with_one_id_are_an_error(tmp_path: Path) -> None:
    from ra_query.errors import InputError
    from ra_query.search.evaluate import read_questions

    line = '{"id": "a", "question": "x", "answers": ["d:a.md"]}'
    with pytest.raises(InputError, match="id 'a' is used twice"):
        read_questions(write(tmp_path / "q.jsonl", line, line))


# ---- the figures ------------------------------------------------------------------------------


def test_ndcg_counts_each_answers_grade_once_at_its_first_result() -> None:
    from ra_query.search.evaluate import _answer, _ndcg

    answers = [_answer("d:a.md", 2, ""), _answer("d:b.md", 1, "")]
    results = [{"id": "d:c.md#x"}, {"id": "d:a.md#x"}, {"id": "d:a.md#y"}, {"id": "d:b.md#x"}]
    dcg = 2 / math.log2(3) + 1 / math.log2(5)  # a.md at rank 2; its second chunk earns nothing
    ideal = 2 / math.log2(2) + 1 / math.log2(3)
    assert _ndcg(results, answers) == pytest.approx(dcg / ideal)
    assert _ndcg([{"id": "d:a.md#x"}, {"id": "d:b.md#x"}], answers) == pytest.approx(1.0)
    assert _ndcg([], answers) == 0.0


def test_eval_prints_the_figures_and_explains_each_miss(kb: tuple[Path, Path]) -> None:
    run = ra(kb, "eval", "questions.jsonl")
    assert run.code == 0, run.err
    first = run.out.splitlines()[0]
    assert first.startswith("questions 4  hit@1 ") and "failed 0" in first
    assert "  gone: render diagrams\n      first: " in run.out
    assert "docs:diagrams.md#mermaid: not indexed" in run.out


def test_eval_json_gives_each_questions_rank_and_the_means(kb: tuple[Path, Path]) -> None:
    run = rq(kb, "eval", "--json", "questions.jsonl")
    assert run.code == 0, run.err
    payload = json.loads(run.out)
    rows = {row["id"]: row for row in payload["results"]}
    assert rows["offline"]["rank"] == 1 and rows["offline"]["hit1"] is True
    assert rows["gone"]["rank"] is None and rows["gone"]["rr"] == 0.0
    hit5 = sum(row["hit5"] for row in rows.values()) / 4
    assert payload["figures"]["hit5"] == round(hit5, 4) and payload["figures"]["questions"] == 4


def test_a_question_answered_by_another_part_of_a_page_it_found_is_a_file_hit_not_a_hit(
    kb: tuple[Path, Path], tmp_path: Path
) -> None:
    line = '{"id": "upgrade", "question": "copy the wheel files", "answers": ["docs:install.md#upgrade"]}'
    run = rq(kb, "eval", "--json", str(write(tmp_path / "q.jsonl", line)))
    (row,) = json.loads(run.out)["results"]
    assert (row["first"], row["hit5"], row["file5"]) == ("docs:install.md#offline", False, True)
    text = rq(kb, "eval", str(tmp_path / "q.jsonl")).out
    assert "  hit@5 0.000  file@5 1.000  " in text.splitlines()[0]


def test_a_file_floor_that_is_not_met_exits_1(kb: tuple[Path, Path]) -> None:
    run = ra(kb, "eval", "--min", "file5=1.0", "questions.jsonl")
    assert run.code == 1 and "below the floor: file5 0.7500 < 1" in run.out


def test_evaluate_without_explain_leaves_a_miss_unexplained(kb: tuple[Path, Path]) -> None:
    from ra_query.artifacts.store import open_store
    from ra_query.commands import search_command, search_params
    from ra_query.search.evaluate import evaluate, parse_question

    store = open_store(kb[0] / ".ra")
    gone = parse_question(QUESTIONS[3], "q", "4")

    def search(query: str, params: Any, as_json: bool) -> str:
        return search_command(store, [query], params, json=as_json).text

    params = search_params(store, None)
    (explained,) = evaluate(store, [gone], params, search)
    (bare,) = evaluate(store, [gone], params, search, explain=False)
    assert explained.why and not bare.why
    assert bare._replace(why="") == explained._replace(why="")


def test_a_questions_tokens_are_those_of_what_ra_query_search_prints_for_it(kb: tuple[Path, Path]) -> None:
    from ra_query.text.tokens import count_tokens

    rows = json.loads(rq(kb, "eval", "--json", "questions.jsonl").out)["results"]
    for row in rows:
        assert row["tokens"] == count_tokens(rq(kb, "search", row["question"]).out), row["id"]


def test_a_floor_that_is_not_met_exits_1_and_says_which(kb: tuple[Path, Path]) -> None:
    run = ra(kb, "eval", "--min", "hit5=1.0", "--min", "mrr=0.1", "questions.jsonl")
    assert run.code == 1
    assert "below the floor: hit5 0.7500 < 1" in run.out
    assert ra(kb, "eval", "--min", "hit5=0.5", "questions.jsonl").code == 0


@pytest.mark.parametrize(
    ("floor", "message"),
    [
        ("recall=0.5", "--min recall=0.5: no such figure — use one of hit1, hit5, file5, mrr, ndcg10"),
        ("hit5=high", "--min hit5=high: the floor must be a number from 0 to 1"),
    ],
)
def test_a_bad_floor_is_an_error(kb: tuple[Path, Path], floor: str, message: str) -> None:
    run = ra(kb, "eval", "--min", floor, "questions.jsonl")
    assert (run.code, run.err.strip()) == (2, f"ra: error: {message} (hit5=0.8)")


def test_a_baseline_lists_the_questions_that_got_worse(kb: tuple[Path, Path], tmp_path: Path) -> None:
    saved = json.loads(rq(kb, "eval", "--json", "questions.jsonl").out)
    for row in saved["results"]:
        if row["id"] == "colours":
            row["rank"] = 0  # as if it had been found better than first: now it is worse
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(saved), encoding="utf-8")
    run = ra(kb, "eval", "--baseline", str(baseline), "questions.jsonl")
    assert run.code == 0, run.err
    assert "worse than the baseline (1):\n  colours: rank 0 → " in run.out


def test_a_missing_questions_file_is_an_error(kb: tuple[Path, Path]) -> None:
    run = ra(kb, "eval", "nowhere.jsonl")
    assert (run.code, run.err.strip()) == (
        2,
        "ra: error: nowhere.jsonl: no such file — give a JSONL file of questions (docs/eval.md)",
    )


def test_ndcg_agrees_with_pytrec_eval() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from ra_query.search.evaluate import _answer, _ndcg

    qrels = {"q": {"d:a.md": 2, "d:b.md": 1, "d:e.md": 3}}
    runs = [
        ["d:c.md", "d:a.md", "d:b.md"],
        ["d:e.md", "d:x.md", "d:y.md", "d:z.md", "d:a.md"],
        ["d:b.md", "d:a.md", "d:e.md"],
        [f"d:n{k}.md" for k in range(9)] + ["d:e.md"],
    ]
    answers = [_answer(doc, grade, "") for doc, grade in qrels["q"].items()]
    for ranked in runs:
        run = {"q": {doc: float(len(ranked) - k) for k, doc in enumerate(ranked)}}
        expected = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)["q"]["ndcg_cut_10"]
        assert _ndcg([{"id": f"{doc}#x"} for doc in ranked], answers) == pytest.approx(expected)


def test_hit_at_1_hit_at_5_and_reciprocal_rank_agree_with_pytrec_eval() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from ra_query.search.evaluate import Scored, _answer, _rank, parse_question

    qrels = {"q": {"d:a.md": 1, "d:b.md": 2}}
    question = parse_question({"question": "q", "answers": list(qrels["q"])}, "", "q")
    runs = [["d:a.md"], ["d:c.md", "d:b.md"], [f"d:n{k}.md" for k in range(4)] + ["d:a.md"], ["d:x.md"] * 6]
    measures = {"success.1,5", "recip_rank"}
    for ranked in runs:
        run = {"q": {doc: float(len(ranked) - k) for k, doc in enumerate(dict.fromkeys(ranked))}}
        expected = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)["q"]
        rank = _rank([{"id": f"{doc}#x"} for doc in ranked], [_answer(a, 1, "") for a in qrels["q"]])
        row = Scored(question, rank, 0.0, 0, len(ranked), None).row()
        got = (float(row["hit1"]), float(row["hit5"]), row["rr"])
        assert got == pytest.approx(
            (expected["success_1"], expected["success_5"], expected["recip_rank"]), abs=5e-5
        )


def test_titles_asks_every_chunk_for_its_own_title_and_lists_the_ones_that_fall(
    kb: tuple[Path, Path],
) -> None:
    run = ra(kb, "eval", "--titles")
    assert run.code == 0, run.err
    head = run.out.splitlines()[0]
    assert head.startswith("titles ") and " first " in head and " not first " in head
    payload = json.loads(ra(kb, "eval", "--titles", "--json").out)
    rows = {row["id"]: row for row in payload["titles"]}
    assert rows["docs:install.md#offline"]["rank"] == 1
    assert rows["docs:install.md#offline"]["title"] == "Offline"


def test_titles_puts_a_title_other_chunks_share_first(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    for name in ("a.md", "b.md"):
        (tmp_path / "docs" / name).write_text(f"# {name}\n\n## Upgrade\n\nRun the upgrade of {name} now.\n")
    (tmp_path / ".ra.toml").write_text('root = true\n[tree.docs]\npath = "docs"\n')
    run = run_cmd("ra", "eval", "--titles", cwd=tmp_path, home=tmp_path)
    assert run.code == 0, run.err
    assert "a title other chunks share (1): give each its own\n  docs:" in run.out
    assert "'Upgrade': rank 2, first: docs:" in run.out


def test_eval_needs_a_questions_file_or_titles_not_both(kb: tuple[Path, Path]) -> None:
    for args in ((), ("--titles", "questions.jsonl")):
        run = ra(kb, "eval", *args)
        assert (run.code, run.err.strip()) == (
            2,
            "ra: error: give a questions file or --titles (one of them) — ra eval q.jsonl, ra eval --titles",
        )


def _dodo_project(tmp_path: Path, question: dict[str, object]) -> Path:
    project = tmp_path / "project"
    (project / "docs").mkdir(parents=True)
    for name, text in PAGES.items():
        (project / "docs" / name).write_text(text, encoding="utf-8")
    (project / ".ra.toml").write_text('root = true\n[tree.docs]\npath = "docs"\n', encoding="utf-8")
    (project / "questions.jsonl").write_text(json.dumps(question) + "\n", encoding="utf-8")
    (project / "dodo.py").write_text(
        "from pathlib import Path\nfrom ra_build import api\n"
        "globals().update(api.make_tasks(api.load_config(Path.cwd(), Path.home()), Path('artifacts')))\n"
        "globals().update(api.eval_task(Path('artifacts'), Path('questions.jsonl'), ['hit5=0.5']))\n",
        encoding="utf-8",
    )
    return project


@pytest.mark.parametrize(("question", "passes"), [(QUESTIONS[0], True), (QUESTIONS[3], False)])
def test_a_doit_eval_task_asks_the_built_index_and_fails_below_its_floor(
    tmp_path: Path, question: dict[str, object], passes: bool
) -> None:
    from tests.conftest import BIN

    project = _dodo_project(tmp_path, question)
    env = {**os.environ, "HOME": str(tmp_path)}
    done = subprocess.run([str(BIN / "doit"), "eval"], cwd=project, env=env, capture_output=True, text=True)
    assert (done.returncode == 0) is passes, done.stdout + done.stderr
    assert "questions 1  hit@1 " in done.stdout


# ---- judged sets: --qrels and --ranking --------------------------------------------------------


def test_beir_topics_and_qrels_become_questions_answered_by_file_names(tmp_path: Path) -> None:
    from ra_query.search.evaluate import read_qrels

    topics = write(
        tmp_path / "queries.jsonl", '{"_id": "1", "text": "offline install"}', '{"_id": "2", "text": "x"}'
    )
    qrels = write(tmp_path / "qrels.tsv", "query-id\tcorpus-id\tscore", "1\tinstall\t2", "1\tfaq\t0")
    (question,) = read_qrels(topics, qrels)  # topic 2 is judged by nobody: left out, as trec_eval does
    assert (question.id, question.text, [(a.text, a.grade) for a in question.answers]) == (
        "1",
        "offline install",
        [("install", 2)],
    )
    assert question.answers[0].answers({"id": "docs:install.md#offline", "path": "install.md"})
    assert not question.answers[0].answers({"id": "docs:installer.md", "path": "installer.md"})


def test_trec_sgml_topics_and_four_column_qrels_are_read(tmp_path: Path) -> None:
    from ra_query.search.evaluate import read_qrels

    topics = write(tmp_path / "topics.txt", "<DOC>", "<DOCNO> 7 </DOCNO>", " turn colours", "  off", "</DOC>")
    qrels = write(tmp_path / "qrels.txt", "7 Q0 faq 1")
    (question,) = read_qrels(topics, qrels)
    assert (question.id, question.text, question.answers[0].text) == ("7", "turn colours off", "faq")


def test_a_bad_qrels_line_is_an_error_with_its_file_and_line(kb: tuple[Path, Path], tmp_path: Path) -> None:
    topics = write(tmp_path / "t.tsv", "1\tinstall offline")
    qrels = write(tmp_path / "q.txt", "1 Q0 install 1", "1 install")
    run = ra(kb, "eval", str(topics), "--qrels", str(qrels))
    assert (run.code, run.err.strip()) == (
        2,
        f"ra: error: {qrels}:2: not a judgement — write QID ITER DOCID REL (TREC) or "
        "QUERY-ID<TAB>CORPUS-ID<TAB>SCORE (BEIR)",
    )


def test_qrels_of_other_topics_are_an_error(kb: tuple[Path, Path], tmp_path: Path) -> None:
    topics = write(tmp_path / "t.tsv", "1\tinstall offline")
    qrels = write(tmp_path / "q.txt", "9 Q0 install 1")
    run = ra(kb, "eval", str(topics), "--qrels", str(qrels))
    assert run.code == 2 and "no topic of" in run.err


def test_ranking_scores_documents_and_reports_map_without_tokens(
    kb: tuple[Path, Path], tmp_path: Path
) -> None:
    topics = write(tmp_path / "t.tsv", "1\tpip wheel files", "2\tcolours")
    qrels = write(tmp_path / "q.txt", "1 0 install 1", "2 0 faq 1", "2 0 search 1")
    run = rq(kb, "eval", str(topics), "--qrels", str(qrels), "--ranking", "--json")
    figures = json.loads(run.out)["figures"]
    assert run.code == 0 and "tokens" not in figures
    assert (figures["hit1"], figures["questions"]) == (1.0, 2)
    # topic 2: faq first (AP 1/1), search (no word of it) not ranked: AP (1 + 0) / 2
    assert figures["map"] == pytest.approx((1.0 + 0.5) / 2)


def test_average_precision_agrees_with_pytrec_eval() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from ra_query.search.evaluate import Answer, _average_precision

    qrels = {"q": {"a": 2, "b": 1, "e": 1}}
    answers = [Answer(doc, "name", grade=grade) for doc, grade in qrels["q"].items()]
    for ranked in (["c", "a", "b"], ["e", "x", "y", "a"], ["x", "y"], ["b", "a", "e"]):
        run = {"q": {doc: float(len(ranked) - k) for k, doc in enumerate(ranked)}}
        expected = pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(run)["q"]["map"]
        rows = [{"id": f"t:{doc}.md#x", "path": f"{doc}.md"} for doc in ranked]
        assert _average_precision(rows, answers) == pytest.approx(expected)


def test_qrels_and_titles_together_are_an_error(kb: tuple[Path, Path]) -> None:
    run = ra(kb, "eval", "--titles", "--qrels", "q.txt")
    assert (run.code, run.err.strip()) == (
        2,
        "ra: error: --qrels judges the topics of a file, --titles asks titles — give one of them",
    )


def test_a_ranking_miss_says_its_answer_is_not_in_the_top_100(kb: tuple[Path, Path], tmp_path: Path) -> None:
    topics = write(tmp_path / "t.tsv", "1\tcolours")
    qrels = write(tmp_path / "q.txt", "1 0 install 1")
    run = rq(kb, "eval", str(topics), "--qrels", str(qrels), "--ranking")
    assert "first: docs:faq.md#colours; its answer is not in the top 100" in run.out


@pytest.mark.parametrize(
    ("pages", "answer", "why"),
    [
        (
            {"docs/g.md": "# Gizmo\n\nConfigure the gizmo with gizmo.yaml.\n", "docs/v1/g.md": None},
            "d:docs/v1/g.md",
            "its answer d:docs/v1/g.md#gizmo is folded under result 1 (d:docs/g.md#gizmo) as another version of it",
        ),
        (
            {
                "g.md": "# Gizmo\n\nConfigure the gizmo with gizmo.yaml.\n",
                "g.ja.md": "# ギズモ\n\n`gizmo.yaml` でギズモを設定します。\n",
            },
            "d:g.ja.md",
            "its answer d:g.ja.md#ギズモ is folded under result 1 (d:g.md#gizmo) as its translation (ja)",
        ),
    ],
)
def test_a_miss_whose_answer_is_folded_under_a_result_says_so(
    tmp_path: Path, pages: dict[str, str | None], answer: str, why: str
) -> None:
    first = next(text for text in pages.values() if text)
    for name, text in pages.items():
        (tmp_path / "d" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "d" / name).write_text(text or first, encoding="utf-8")
    (tmp_path / ".ra.toml").write_text('root = true\n[tree.d]\npath = "d"\n', encoding="utf-8")
    write(tmp_path / "q.jsonl", json.dumps({"question": "configure the gizmo", "answers": [answer]}))
    run = run_cmd("ra", "eval", "q.jsonl", cwd=tmp_path, home=tmp_path)
    assert why in run.out, run.out + run.err


def test_a_miss_says_whether_the_elbow_or_the_candidate_limit_left_its_answer_out(tmp_path: Path) -> None:
    # strong.md is second to the shorter second.md (BM25's length norm), and far above the rest
    pages = {
        "strong.md": "# Gizmo gizmo\n\nThe gizmo gizmo gizmo.\n",
        "second.md": "# Gizmo\n\nThe gizmo gizmo.\n",
    }
    pages["weak.md"] = "# Notes\n\n" + "Unrelated words about other things. " * 40 + "A gizmo.\n"
    for k in range(30):  # middling pages: the weakest is past the 20 candidates a search takes
        pages[f"p{k:02}.md"] = f"# Page {k}\n\nThe gizmo of page {k}.\n"
    (tmp_path / "d").mkdir()
    for name, text in pages.items():
        (tmp_path / "d" / name).write_text(text, encoding="utf-8")
    config = 'root = true\n[search]\ncutoff_ratio = 0.99\n[tree.d]\npath = "d"\n'
    (tmp_path / ".ra.toml").write_text(config, encoding="utf-8")
    lines = [json.dumps({"id": i, "question": "gizmo", "answers": [f"d:{i}.md"]}) for i in ("weak", "strong")]
    run = run_cmd("ra", "eval", str(write(tmp_path / "q.jsonl", *lines)), cwd=tmp_path, home=tmp_path)
    why = {line.split(";", 1)[1].strip() for line in run.out.splitlines() if "first:" in line}
    assert why == {
        "its answer ranked 2 (the elbow cut the results before it)",
        "its answer ranked 33 of the best 100 candidates (the search takes 20)",
    }, run.out + run.err
    deeper = config.replace("0.99", "0.0\ncandidate_limit = 50")  # no elbow, all 33 pages
    (tmp_path / ".ra.toml").write_text(deeper, encoding="utf-8")
    assert run_cmd("ra", "update", cwd=tmp_path, home=tmp_path).code == 0
    deep = run_cmd("ra", "eval", "-n", "40", str(tmp_path / "q.jsonl"), cwd=tmp_path, home=tmp_path)
    assert "its answer ranked 33\n" in deep.out, deep.out  # shown at 33: neither the elbow nor the pool

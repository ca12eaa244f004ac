"""`ra eval QUESTIONS` (issue 34): does a knowledge base answer the questions its agents ask?

A questions file is JSONL, one question a line:

    {"id": "install", "question": "how do I install it offline", "answers": ["docs:install.md#offline"]}

`answers` name what answers it: a chunk id (`docs:install.md#offline`; an aggregated result
that holds it answers too), a document id (`docs:install.md`: any of its chunks), or a line
range `path:START-END` (`src/app.py:10-40`, or `tree:path:START-END`: a result answers when its
lines overlap). Optional: `grades` (answer → 1, 2, 3: nDCG's gains, 1 by default), `tight`
(`true`: a line range answers only a result about its size, the definition itself; see
`TIGHT_LINES`), `kind`, `lang`, `tree` (the search is narrowed as `--kind`, `--lang` and `-t`
narrow it).

Or the judged sets of IR research (`--qrels`, `read_qrels`): a topics file (BEIR's
`queries.jsonl`, `{"_id": …, "text": …}`, or `ID<TAB>TEXT` lines) and relevance judgements,
TREC's `QID ITER DOCID REL` or BEIR's `query-id<TAB>corpus-id<TAB>score` (its header line is
skipped). A judged document answers with its relevance as its grade; its id names a document
of the index by its document id (`tree:path`), its path, or its file name without the
extension (SciFact's `4983` is `scifact:4983.md`). Topics nobody judged are left out, as
trec_eval leaves them out.

Each question runs through exactly the search an agent gets (`search_command` with the
index's settings and the caller's limit, mode and budget), and is scored on the results it
returns:

- **hit@1**, **hit@5**: an answer first, among the first five;
- **file@5**: a result among the first five in an answer's file (the right file, if not the
  right part of it);
- **MRR**: 1 / the rank of the first answer (0 when none is returned);
- **nDCG@10**: the graded gains of the first ten results against the best order of the answers;
- **tokens**: what the agent reads (the printed answer, excerpts as excerpts, cl100k);
- **empty** (no result) and **failed** (the search raised an error) answers.

A question whose answer is not among the first five is a **miss**: what came first, and where
its answer ranked in the same search without limit, elbow or budget, else in the top 100 of a
search of 100 candidates — or that it is not indexed, is in a tree the question leaves out, or
was left out by the budget.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import orjson

from ra_query.errors import InputError, RaError
from ra_query.sources.languages import KINDS

if TYPE_CHECKING:
    from ra_query.artifacts.store import Store
    from ra_query.search.pipeline import SearchParams

METRICS = ("hit1", "hit5", "file5", "mrr", "ndcg10", "tokens", "empty", "failed")
FLOOR_METRICS = ("hit1", "hit5", "file5", "mrr", "ndcg10")  # what `--min NAME=VALUE` takes
TIGHT_LINES = (2, 20)  # a `tight` range answers a result of at most 2 × its lines + 20
DEEP = 100  # how deep a miss's answer is looked for
RANKING_DEPTH = 100  # `--ranking`: the documents scored, as deep as trec_eval's usual run
_DOCNO = re.compile(r"<DOC>\s*<DOCNO>\s*(\S+)\s*</DOCNO>(.*?)</DOC>", re.DOTALL)
_TOP = re.compile(r"<top>.*?<num>\s*(?:Number:)?\s*(\S+)(.*?)</top>", re.DOTALL | re.IGNORECASE)
_RANGE = re.compile(r"^(?:(?P<tree>[A-Za-z0-9_-]+):)?(?P<path>[^:#]+):(?P<start>\d+)-(?P<end>\d+)$")


class Answer(NamedTuple):
    """One thing that answers a question: a chunk id, a document id, or a line range."""

    text: str  # as written
    kind: str  # chunk | document | lines | name (a judged document's id: --qrels)
    tree: str = ""
    path: str = ""
    start: int = 0
    end: int = 0
    grade: int = 1
    tight: bool = False  # a line range: answered only by a result about its size (TIGHT_LINES)

    def answers(self, result: dict[str, Any]) -> bool:
        """Whether a search result (its JSON) is this answer, holds it, or overlaps it (a `tight`
        range: overlaps it and is at most TIGHT_LINES longer)."""
        if self.kind == "chunk":
            return result["id"] == self.text or self.text in result.get("constituents", ())
        if self.kind != "lines":
            return self.in_file(result)
        start, end = result["line_start"], result["line_end"]
        overlaps = self.in_file(result) and start <= self.end and self.start <= end
        times, plus = TIGHT_LINES
        about_its_size = end - start + 1 <= times * (self.end - self.start + 1) + plus
        return overlaps and (about_its_size or not self.tight)

    def in_file(self, result: dict[str, Any]) -> bool:
        """Whether a search result is in this answer's file (its document)."""
        document = str(result["id"]).split("#", 1)[0]
        if self.kind == "chunk":
            return document == self.text.split("#", 1)[0]
        if self.kind == "document":
            return document == self.text
        if self.kind == "name":
            return _named(document, str(result["path"]), self.text)
        return result["path"] == self.path and (not self.tree or result["tree"] == self.tree)


class Question(NamedTuple):
    """One question of a questions file (or a judged topic), and what answers it."""

    id: str
    text: str
    answers: tuple[Answer, ...]
    kind: str = ""
    lang: str = ""
    tree: str = ""


def read_questions(path: Path) -> list[Question]:
    """The questions of a JSONL file.

    Raises:
        InputError: a missing or unreadable file, a line that is not a JSON object, a question
            without text or answers, an answer or grade of the wrong shape (file:line and what to do).
    """
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()  # a byte-order mark is no JSON
    except FileNotFoundError:
        raise InputError(f"{path}: no such file — give a JSONL file of questions (docs/eval.md)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot be read ({exc}) — give a UTF-8 JSONL file of questions") from None
    questions: list[Question] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            item = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise InputError(f"{where}: not JSON — write one JSON object per line") from None
        if not isinstance(item, dict):
            raise InputError(f'{where}: not a JSON object — write {{"question": …, "answers": […]}}')
        question = parse_question(cast("dict[str, Any]", item), where, str(number))
        if question.id in seen:
            raise InputError(f"{where}: id {question.id!r} is used twice — give each question its own id")
        seen.add(question.id)
        questions.append(question)
    if not questions:
        raise InputError(f"{path}: no questions — write one JSON object per line (docs/eval.md)")
    return questions


def _named(document: str, path: str, name: str) -> bool:
    """Whether a judged document id `name` is the document `document` (`tree:path`) at `path`."""
    if name in (document, path):
        return True
    file = path.rsplit("/", 1)[-1]
    return "." in file and file.rsplit(".", 1)[0] == name


def read_qrels(topics: Path, qrels: Path) -> list[Question]:
    """The judged topics of `topics` as questions, their relevant documents (`qrels`) as answers.

    Raises:
        InputError: a missing or unreadable file, a line of the wrong shape (file:line and what
            to do), or no topic that has a relevant document.
    """
    texts = _topics(topics)
    judged: dict[str, dict[str, int]] = {}
    for number, line in enumerate(_lines(qrels, "qrels (TREC or BEIR)"), start=1):
        fields = line.split()
        if not fields or (number == 1 and fields[0].lower() in ("query-id", "query_id", "qid")):
            continue
        if len(fields) not in (3, 4) or not _whole(fields[-1]):
            raise InputError(
                f"{qrels}:{number}: not a judgement — write QID ITER DOCID REL (TREC) or "
                "QUERY-ID<TAB>CORPUS-ID<TAB>SCORE (BEIR)"
            )
        if int(fields[-1]) > 0:
            judged.setdefault(fields[0], {})[fields[-2]] = int(fields[-1])
    questions = [
        Question(qid, text, tuple(Answer(doc, "name", grade=rel) for doc, rel in judged[qid].items()))
        for qid, text in texts.items()
        if qid in judged
    ]
    if not questions:
        raise InputError(
            f"{qrels}: no topic of {topics} has a relevant document — are these the qrels of those topics?"
        )
    return questions


def _whole(text: str) -> bool:
    return text.lstrip("-").isdigit()


def _lines(path: Path, what: str) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file — give the {what} file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot be read ({exc}) — give a UTF-8 {what} file") from None


def _topics(path: Path) -> dict[str, str]:
    """Topic id → text, from BEIR's queries.jsonl, `ID<TAB>TEXT` lines, or TREC's SGML topics
    (`<DOC><DOCNO> 1 </DOCNO> text </DOC>`, or `<top><num> Number: 301 <title> text`), each
    topic's text on one line."""
    lines = _lines(path, "topics")
    whole = "\n".join(lines)
    sgml = _DOCNO.findall(whole) or [(n, t.split("<desc>", 1)[0]) for n, t in _TOP.findall(whole)]
    if sgml:
        return {number: " ".join(re.sub(r"<[^>]*>", " ", text).split()) for number, text in sgml}
    texts: dict[str, str] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if line.lstrip().startswith("{"):
            try:
                item: object = orjson.loads(line)
            except orjson.JSONDecodeError:
                item = None
            fields = cast("dict[str, Any]", item) if isinstance(item, dict) else {}
            qid, text = fields.get("_id", fields.get("id")), fields.get("text", fields.get("query"))
        else:
            qid, _, text = line.partition("\t")
        if qid is None or not isinstance(text, str) or not text.strip():
            raise InputError(
                f'{path}:{number}: not a topic — write {{"_id": …, "text": …}} (BEIR) or ID<TAB>TEXT'
            )
        texts[str(qid).strip()] = text.strip()
    if not texts:
        raise InputError(f"{path}: no topics — write one topic a line (docs/eval.md)")
    return texts


def parse_question(item: dict[str, Any], where: str, number: str) -> Question:
    """One line of a questions file, parsed (`number`: its id when it gives none).

    Raises:
        InputError: a question of the wrong shape, said at `where` (file:line).
    """
    text = item.get("question", item.get("query"))
    if not isinstance(text, str) or not text.strip():
        raise InputError(f'{where}: no "question" — give the question as a string')
    given: object = item.get("answers")
    answers: list[object] = [given] if isinstance(given, str) else cast("list[object]", given)
    if not isinstance(given, str | list) or not answers or not all(isinstance(a, str) for a in answers):
        raise InputError(f'{where}: "answers" must be a non-empty list of ids or path:START-END ranges')
    graded: object = item.get("grades", {})
    grades = cast("dict[str, object]", graded) if isinstance(graded, dict) else None
    if grades is None or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in grades.values()
    ):
        raise InputError(f'{where}: "grades" must map answers to whole numbers ≥ 0')
    extra = {key: item.get(key, "") for key in ("kind", "lang", "tree")}
    for key, value in extra.items():
        if not isinstance(value, str):
            raise InputError(f'{where}: "{key}" must be a string')
    if extra["kind"] and extra["kind"] not in KINDS:
        # it narrows the search as --kind does: a label of the question's own ("where", "how")
        # would narrow every search to nothing
        raise InputError(
            f'{where}: "kind" is {extra["kind"]!r}, not one of {", ".join(KINDS)} (it narrows the search as'
            " --kind does) — keep a label of your own under another key"
        )
    tight: object = item.get("tight", False)
    if not isinstance(tight, bool):
        raise InputError(f'{where}: "tight" must be true or false')
    parsed = tuple(_answer(str(a), int(cast(int, grades.get(str(a), 1))), where, tight) for a in answers)
    return Question(str(item.get("id", number)), text.strip(), parsed, **extra)


def _answer(text: str, grade: int, where: str, tight: bool = False) -> Answer:
    text = text.strip()
    lines = _RANGE.match(text)
    if lines and "#" not in text:
        start, end = int(lines["start"]), int(lines["end"])
        if start < 1 or end < start:
            raise InputError(f"{where}: answer {text!r}: a line range is START-END with 1 ≤ START ≤ END")
        return Answer(text, "lines", lines["tree"] or "", lines["path"], start, end, grade, tight)
    if ":" not in text:
        raise InputError(
            f"{where}: answer {text!r} is not an id or a range — write tree:path#slug, tree:path or "
            "path:START-END"
        )
    return Answer(text, "chunk" if "#" in text else "document", grade=grade)


class Scored(NamedTuple):
    """One question's outcome."""

    question: Question
    rank: int | None  # of the first answer among the results returned (1-based)
    ndcg: float
    tokens: int
    results: int
    first: str | None
    failed: str | None = None  # the error's message
    why: str = ""  # a miss: where its answer ranked, or why it was not found
    ap: float | None = None  # average precision over the ranking (`--ranking` only)
    file_rank: int | None = None  # of the first result in an answer's file

    def row(self) -> dict[str, Any]:
        """What `--json` says of it."""
        return {
            "id": self.question.id,
            "question": self.question.text,
            "rank": self.rank,
            "hit1": self.rank == 1,
            "hit5": self.rank is not None and self.rank <= 5,
            "file5": self.file_rank is not None and self.file_rank <= 5,
            "rr": round(1 / self.rank, 4) if self.rank else 0.0,
            "ndcg10": round(self.ndcg, 4),
            "tokens": self.tokens,
            "results": self.results,
            "first": self.first,
            "failed": self.failed,
            "why": self.why,
        }


# an agent's search of one question: (query, params, as JSON?) → what it prints
Searcher = Callable[[str, "SearchParams", bool], str]


def evaluate(
    store: Store,
    questions: Sequence[Question],
    params: SearchParams,
    search: Searcher,
    *,
    by_document: bool = False,
    explain: bool = True,
) -> list[Scored]:
    """Run every question through `search` (what `ra search` prints, ra_query.commands) and
    score it (see the module docstring). `by_document` (`--ranking`) ranks documents, as
    trec_eval does: a document's later chunks take no place of their own. Without `explain` a
    miss is not searched again to say why it missed (the figures alone)."""
    return [_scored(store, q, params, search, by_document, explain) for q in questions]


def _narrowed(params: SearchParams, question: Question) -> SearchParams:
    from ra_query.text.locales import normalized

    if question.kind:
        params = params._replace(kinds=(question.kind,))
    if question.lang:
        params = params._replace(langs=(normalized(question.lang) or question.lang,))
    if question.tree:
        params = params._replace(trees=(question.tree,))
    return params


def _scored(
    store: Store,
    question: Question,
    params: SearchParams,
    search: Searcher,
    by_document: bool = False,
    explain: bool = True,
) -> Scored:
    from ra_query.text.tokens import count_tokens

    narrowed = _narrowed(params, question)
    if by_document:
        return _ranked(store, question, narrowed)
    try:
        payload = orjson.loads(search(question.text, narrowed, True))
        printed = search(question.text, narrowed, False)
    except RaError as exc:
        return Scored(question, None, 0.0, 0, 0, None, failed=str(exc), why="the search failed")
    topic = payload["queries"][0]
    results: list[dict[str, Any]] = topic["results"]
    rank = _rank(results, question.answers)
    scored = Scored(
        question,
        rank,
        _ndcg(results[:10], question.answers),
        count_tokens(printed),
        len(results),
        results[0]["id"] if results else None,
        file_rank=_rank(results, question.answers, Answer.in_file),
    )
    if (rank is not None and rank <= 5) or not explain:
        return scored
    omitted = {str(i) for i in payload["tokens"].get("omitted_ids") or ()}
    return scored._replace(why=_why_missed(store, question, narrowed, omitted, len(results)))


def _ranked(store: Store, question: Question, params: SearchParams) -> Scored:
    """`--ranking`: the question's ranking of documents (each document at its first chunk), as
    trec_eval scores a run; nothing is printed, so no tokens are counted."""
    from ra_query.search.pipeline import search

    try:
        hits = search(store, [question.text], params)[0].hits
    except RaError as exc:
        return Scored(question, None, 0.0, 0, 0, None, failed=str(exc), why="the search failed")
    kept: dict[str, dict[str, Any]] = {}
    for row in _rows(hits):
        kept.setdefault(str(row["id"]).split("#", 1)[0], row)
    results = list(kept.values())
    rank = _rank(results, question.answers)
    missed = f"its answer ranked {rank}" if rank else f"its answer is not in the top {RANKING_DEPTH}"
    why = "" if rank is not None and rank <= 5 else missed
    first = results[0]["id"] if results else None
    ndcg = _ndcg(results[:10], question.answers)
    ap = _average_precision(results, question.answers)
    file_rank = _rank(results, question.answers, Answer.in_file)
    return Scored(question, rank, ndcg, 0, len(results), first, why=why, ap=ap, file_rank=file_rank)


def _rank(
    results: Sequence[dict[str, Any]],
    answers: Sequence[Answer],
    test: Callable[[Answer, dict[str, Any]], bool] = Answer.answers,
) -> int | None:
    """The rank (1-based) of the first result an answer passes `test` with (answers it, by
    default), or None."""
    return next((k for k, r in enumerate(results, 1) if any(test(a, r) for a in answers)), None)


def _average_precision(results: Sequence[dict[str, Any]], answers: Sequence[Answer]) -> float:
    """The mean, over the relevant answers, of the precision at each one's first result (0 for
    an answer not ranked): trec_eval's `map` of one topic."""
    relevant = [a for a in answers if a.grade > 0]
    found: set[str] = set()
    total = 0.0
    for k, result in enumerate(results, start=1):
        new = [a.text for a in relevant if a.text not in found and a.answers(result)]
        if new:
            found.update(new)
            total += len(found) / k
    return total / len(relevant) if relevant else 0.0


def _rows(hits: Sequence[Any]) -> list[dict[str, Any]]:
    """Search hits as the fields an answer is matched on."""
    return [
        {"id": h.id, "tree": h.record.tree, "path": h.record.path, "line_start": h.record.line_start,
         "line_end": h.record.line_end, "constituents": h.constituents}
        for h in hits
    ]  # fmt: skip


def _ndcg(results: Sequence[dict[str, Any]], answers: Sequence[Answer]) -> float:
    """nDCG of `results` (the first ten): each answer's gain counted once, at its first result."""
    gains: list[float] = []
    credited: set[str] = set()
    for result in results:
        gain = 0.0
        for answer in answers:
            if answer.text not in credited and answer.answers(result):
                credited.add(answer.text)
                gain = max(gain, float(answer.grade))
        gains.append(gain)
    dcg = sum(g / math.log2(k + 2) for k, g in enumerate(gains))
    ideal = sorted((float(a.grade) for a in answers), reverse=True)[:10]
    best = sum(g / math.log2(k + 2) for k, g in enumerate(ideal))
    return dcg / best if best else 0.0


def _why_missed(
    store: Store, question: Question, params: SearchParams, omitted: set[str], shown: int = 0
) -> str:
    """Where a missed question's answer ranked: among the same search's candidates with no limit
    or elbow, else in the top `DEEP` (a deeper search, whose ranks may differ); or why it is not
    there."""
    from ra_query.search.pipeline import search

    same = params._replace(limit=DEEP, cutoff_ratio=0.0)
    rows = _rows(search(store, [question.text], same)[0].hits)
    if any(r["id"] in omitted and any(a.answers(r) for a in question.answers) for r in rows):
        return "left out by the token budget"
    rank = _rank(rows, question.answers)
    if rank is not None:
        elbow = params.cutoff_ratio > 0 and shown < rank <= params.limit  # a place was free for it
        cut = " (the elbow cut the results before it)" if elbow else ""
        return f"its answer ranked {rank}{cut}"
    deep = same._replace(candidate_limit=max(params.candidate_limit, DEEP))
    hits = search(store, [question.text], deep)[0].hits
    rank = _rank(_rows(hits), question.answers)
    if rank is not None:
        taken = params.candidate_limit
        return f"its answer ranked {rank} of the best {DEEP} candidates (the search takes {taken})"
    folded = _folded(hits, question.answers)
    if folded:
        return folded
    trees = set(store.trees())
    for answer in question.answers:
        if answer.kind == "name":
            continue
        tree = answer.tree or answer.text.split(":", 1)[0]
        if answer.kind != "lines" and tree not in trees:
            return f"{answer.text}: no tree {tree!r} in this index"
        if params.trees and tree and tree not in params.trees:
            return f"{answer.text}: in tree {tree!r}, which the question leaves out"
        if answer.kind != "lines" and not _indexed(store, answer):
            return f"{answer.text}: not indexed"
    return f"its answer is not in the top {DEEP}"


def _folded(hits: Sequence[Any], answers: Sequence[Answer]) -> str:
    """Where an answer was shown as another result's version (`also`) or translation, or ""."""
    for rank, hit in enumerate(hits, start=1):
        folded = [(copy, "another version of it") for copy in hit.also]
        folded += [(copy, f"its translation ({locale})") for locale, copy in hit.translations]
        for copy, what in folded:
            document, _, _ = copy.partition("#")
            row = {"id": copy, "tree": document.split(":", 1)[0], "path": document.split(":", 1)[-1]}
            if any(a.kind != "lines" and a.answers(row) for a in answers):
                return f"its answer {copy} is folded under result {rank} ({hit.id}) as {what}"
    return ""


def _indexed(store: Store, answer: Answer) -> bool:
    if answer.kind == "chunk":
        return store.get_chunk(answer.text) is not None
    return bool(store.doc_chunks(answer.text))


def summary(scored: Sequence[Scored], *, read: bool = True) -> dict[str, float]:
    """The figures of a run: the means of hit@1, hit@5, file@5, reciprocal rank, nDCG@10 and tokens (not
    when the answers were not `read`: a `--ranking` run), and the counts of empty and failed
    answers."""
    n = max(1, len(scored))
    rows = [s.row() for s in scored]
    figures = {
        "questions": len(scored),
        "hit1": round(sum(r["hit1"] for r in rows) / n, 4),
        "hit5": round(sum(r["hit5"] for r in rows) / n, 4),
        "file5": round(sum(r["file5"] for r in rows) / n, 4),
        "mrr": round(sum(r["rr"] for r in rows) / n, 4),
        "ndcg10": round(sum(r["ndcg10"] for r in rows) / n, 4),
        "tokens": round(sum(r["tokens"] for r in rows) / n, 1),
        "empty": sum(1 for s in scored if not s.results and not s.failed),
        "failed": sum(1 for s in scored if s.failed),
    }
    if not read:
        del figures["tokens"]
    if scored and all(s.ap is not None for s in scored):
        figures["map"] = round(sum(s.ap or 0.0 for s in scored) / n, 4)
    return figures


def parse_floors(given: Sequence[str]) -> dict[str, float]:
    """`--min NAME=VALUE` floors (hit1, hit5, mrr, ndcg10; a value from 0 to 1).

    Raises:
        InputError: an unknown name or a value that is not a number from 0 to 1.
    """
    floors: dict[str, float] = {}
    for text in given:
        name, _, value = text.partition("=")
        name = name.strip().lower().replace("@", "").replace("_", "")
        if name not in FLOOR_METRICS:
            raise InputError(
                f"--min {text}: no such figure — use one of {', '.join(FLOOR_METRICS)} (hit5=0.8)"
            )
        try:
            number = float(value)
        except ValueError:
            number = -1.0
        if not 0 <= number <= 1:
            raise InputError(f"--min {text}: the floor must be a number from 0 to 1 (hit5=0.8)")
        floors[name] = number
    return floors


def below(figures: dict[str, float], floors: dict[str, float]) -> list[str]:
    """The floors a run falls below, as lines (`hit5 0.7500 < 0.8`)."""
    return [
        f"{name} {figures[name]:.4f} < {floor:g}" for name, floor in floors.items() if figures[name] < floor
    ]


def worse_than(scored: Sequence[Scored], baseline: Path) -> list[str]:
    """The questions that ranked their answer worse than in a saved `--json` run.

    Raises:
        InputError: the baseline file is missing or not a `ra eval --json` output.
    """
    try:
        saved = orjson.loads(baseline.read_bytes())
        before = {row["id"]: row for row in saved["results"]}
    except FileNotFoundError:
        raise InputError(f"{baseline}: no such file — give a file `ra eval --json` wrote") from None
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError):
        raise InputError(
            f"{baseline}: not the output of `ra eval --json` — save one with: ra eval Q --json > FILE"
        ) from None
    lines: list[str] = []
    for s in scored:
        old = before.get(s.question.id)
        if old is None:
            continue
        was, now = old.get("rank"), s.rank
        if was is not None and (now is None or now > was):
            lines.append(
                f"{s.question.id}: rank {was} → {now if now is not None else 'none'}  {s.question.text}"
            )
    return lines


def _map(figures: dict[str, float]) -> str:
    return f"MAP {figures['map']:.3f}  " if "map" in figures else ""


def _tokens(figures: dict[str, float]) -> str:
    return f"{figures['tokens']:.0f}" if "tokens" in figures else "—"


def render(
    scored: Sequence[Scored], figures: dict[str, float], failing: Sequence[str], worse: Sequence[str]
) -> str:
    """The text report: the figures, each miss, the questions that got worse, the floors missed."""
    out = [
        f"questions {figures['questions']}  hit@1 {figures['hit1']:.3f}  hit@5 {figures['hit5']:.3f}  "
        f"file@5 {figures['file5']:.3f}  MRR {figures['mrr']:.3f}  nDCG@10 {figures['ndcg10']:.3f}  "
        f"{_map(figures)}tokens {_tokens(figures)}  "
        f"empty {figures['empty']}  failed {figures['failed']}"
    ]
    misses = [s for s in scored if s.why]
    if misses:
        out += ["", f"misses ({len(misses)}):"]
        for s in misses:
            first = s.first or "(nothing)"
            out.append(f"  {s.question.id}: {s.question.text}")
            out.append(f"      first: {first}; {s.failed or s.why}")
    if worse:
        out += ["", f"worse than the baseline ({len(worse)}):", *(f"  {line}" for line in worse)]
    if failing:
        out += ["", "below the floor: " + "; ".join(failing)]
    return "\n".join(out) + "\n"


def report_json(
    scored: Sequence[Scored], figures: dict[str, float], failing: Sequence[str], worse: Sequence[str]
) -> dict[str, Any]:
    """`--json`: the figures, each question's row, the floors missed, the questions that got worse."""
    return {
        "figures": figures,
        "results": [s.row() for s in scored],
        "below": list(failing),
        "worse": list(worse),
    }


# ---- the findability audit: every chunk asked for by its own title ------------------------------


class TitleCheck(NamedTuple):
    """One chunk asked for by its own title (`--titles`)."""

    id: str
    title: str  # what was asked: a heading's text, a definition's qualified name
    rank: int | None  # of the chunk (or a result that holds it) among the first ten; None: not there
    first: str | None  # what came first instead
    namesakes: int  # other chunks with the same title

    def row(self) -> dict[str, Any]:
        return self._asdict()


def title_audit(store: Store, params: SearchParams, search: Searcher) -> list[TitleCheck]:
    """Ask every chunk that has a title and text of its own for its title, as an agent would,
    and say where it ranked among the first ten (the ones that did not come first: the audit)."""
    records = [r for r in store.records() if r.body.strip() and _asked_as(r)]
    by_title: dict[str, int] = {}
    for record in records:
        by_title[_asked_as(record).lower()] = by_title.get(_asked_as(record).lower(), 0) + 1
    deep = params._replace(limit=10)
    checks: list[TitleCheck] = []
    for record in records:
        title = _asked_as(record)
        try:
            results: list[dict[str, Any]] = orjson.loads(search(title, deep, True))["queries"][0]["results"]
        except RaError:
            results = []
        rank = next(
            (
                k
                for k, r in enumerate(results, 1)
                if r["id"] == record.id or record.id in r.get("constituents", ())
            ),
            None,
        )
        first = results[0]["id"] if results else None
        checks.append(TitleCheck(record.id, title, rank, first, by_title[title.lower()] - 1))
    return checks


def _asked_as(record: Any) -> str:
    """What an agent types to find a chunk by name: a definition's qualified name, else its title."""
    return str(record.symbol or record.title).strip()


def render_titles(checks: Sequence[TitleCheck]) -> str:
    """The audit as text: how many chunks come first for their own title; then the ones that do
    not, their title shared with others first (rename one), then by how far they fell."""
    fell = [c for c in checks if c.rank != 1]
    found = len(checks) - len(fell)
    out = [f"titles {len(checks)}  first {found} ({found / max(1, len(checks)):.3f})  not first {len(fell)}"]
    shared = sorted((c for c in fell if c.namesakes), key=lambda c: (c.title.lower(), c.id))
    alone = sorted((c for c in fell if not c.namesakes), key=lambda c: (c.rank is None, -(c.rank or 0), c.id))
    if shared:
        out += ["", f"a title other chunks share ({len(shared)}): give each its own"]
        out += [f"  {c.id}  {c.title!r}: {_fell(c)}" for c in shared]
    if alone:
        out += ["", f"not first for its own title ({len(alone)}), the furthest first"]
        out += [f"  {c.id}  {c.title!r}: {_fell(c)}" for c in alone]
    return "\n".join(out) + "\n"


def _fell(check: TitleCheck) -> str:
    where = f"rank {check.rank}" if check.rank else "not in the first 10"
    return f"{where}, first: {check.first or '(nothing)'}"

"""Search output (DECISIONS 22): full, list, matches and JSON, from the same result objects.

Every mode renders each hit to plain text first; the token budget (ra_query.search.budget) is charged
on that text, so what is counted is exactly what is printed. Colour is added afterwards and
only when the caller asks for it (a terminal, and no NO_COLOR).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any, Literal

from ra_query.artifacts.models import ChunkRecord
from ra_query.search.budget import Budgeted, BudgetOutcome, apply_budget
from ra_query.search.pipeline import SearchHit, TopicResult, matching_words
from ra_query.text.textsafe import printable

View = Literal["full", "list", "matches"]

_BOLD, _DIM, _CYAN, _YELLOW, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[36m", "\x1b[33m", "\x1b[0m"
_HEADER = re.compile(r"^(─── .* ───)$", re.MULTILINE)
_EM = re.compile(r"<em>(.*?)</em>")


def hit_text(hit: SearchHit, mode: View, terms: frozenset[str], analyzer: Any, marks: bool = True) -> str:
    """One hit as plain text in view `mode`, control characters escaped (ra_query.text.textsafe);
    `marks` keeps the <em> around matches in snippets (colour turns them into highlights; text
    for a pipe or a file is better without them). The full view shows a hit's `excerpt` (made by
    ra_query.search.focus.with_excerpts) in place of its content."""
    return printable(_hit_text(hit, mode, terms, analyzer, marks))


def _hit_text(hit: SearchHit, mode: View, terms: frozenset[str], analyzer: Any, marks: bool) -> str:
    record = hit.record
    crumb = record.crumb()
    also = f"  also: {', '.join(hit.also)}\n" if hit.also else ""
    also += f"  also for: {', '.join(hit.serves)}\n" if hit.serves else ""
    also += f"  also in: {', '.join(locale for locale, _ in hit.translations)}\n" if hit.translations else ""
    if mode == "list":
        snippet = hit.snippet if marks else _EM.sub(r"\1", hit.snippet)
        return f"{record.id}  {crumb}\n  {snippet}\n{also}"
    if mode == "matches":
        shown = [
            f"  L{number}: {line}"
            for part in hit.parts or (record,)
            for number, line in numbered_lines(part)
            if matching_words(line, terms, analyzer)
        ]
        return (
            f"─── {record.id} ───\n{also}"
            + ("\n".join(shown) if shown else "  (matched by title or path)")
            + "\n"
        )
    also = f"> also: {', '.join(hit.also)}\n" if hit.also else ""
    also += f"> also for: {', '.join(hit.serves)}\n" if hit.serves else ""
    also += f"> also in: {', '.join(locale for locale, _ in hit.translations)}\n" if hit.translations else ""
    shown = hit.excerpt
    # a page's top heading is its whole breadcrumb: the heading line below says it already
    crumb_line = "" if record.breadcrumb == (record.title,) and record.heading_line else f"> {crumb}\n"
    url = f"> {hit.url}\n" if hit.url else ""
    return f"─── {record.id} ───\n{crumb_line}{url}{also}\n{shown or record.content()}\n"


def numbered_lines(chunk: ChunkRecord) -> list[tuple[int, str]]:
    """The chunk's heading line and body lines, each with its line number in the source file.

    A body is stored without the blank lines around it and ends on `line_end`, so its first
    line is `line_end - (lines in body) + 1`; the heading is on `line_start`.
    """
    if chunk.kind == "code":  # a code body starts on line_start; a file's outline is not in the file
        if chunk.byte_end <= chunk.byte_start:
            return []
        lines = chunk.body.split("\n")[: chunk.line_end - chunk.line_start + 1]  # lines as ra counts them
        return [(chunk.line_start + i, line.rstrip("\r")) for i, line in enumerate(lines)]
    body = chunk.body.splitlines()
    first = chunk.line_end - len(body) + 1
    numbered = [(first + i, line) for i, line in enumerate(body)]
    heading = chunk.heading_line
    return [(chunk.line_start, heading), *numbered] if heading is not None else numbered


def budgeted(
    topics: Sequence[TopicResult], view: View, max_tokens: int | None, analyzer: Any, marks: bool = True
) -> BudgetOutcome:
    """Render every hit in `view` and fit the texts into one budget across all topics.

    Without a budget nothing is counted: each result reports the cl100k count the build
    stored for its content, and loading the encoding (~100 ms) is left to searches that
    need it.
    """

    def text_of(topic: TopicResult, hit: SearchHit) -> str:
        return hit_text(hit, view, topic.terms, analyzer, marks)

    if max_tokens is None:
        kept = tuple(
            Budgeted(t, rank, h.record, text_of(topic, h), h.record.tokens, False)
            for t, topic in enumerate(topics)
            for rank, h in enumerate(topic.hits, start=1)
        )
        return BudgetOutcome(kept, sum(k.tokens for k in kept), 0, False, None)
    texts = [[(h.record, text_of(topic, h)) for h in topic.hits] for topic in topics]
    outcome = apply_budget(texts, max_tokens)
    # a result cut inside its first line (its `─── id ───`: a budget of a few tokens) names no
    # chunk an agent could ask for: it is left out instead
    heads = {
        (t, rank): text.split("\n", 1)[0]
        for t, hits in enumerate(texts)
        for rank, (_, text) in enumerate(hits, 1)
    }
    headless = [k for k in outcome.kept if k.truncated and not k.text.startswith(heads[k.topic, k.rank])]
    if not headless:
        return outcome
    kept = tuple(k for k in outcome.kept if k not in headless)
    return outcome._replace(
        kept=kept,
        used_tokens=sum(k.tokens for k in kept),
        omitted=outcome.omitted + len(headless),
        truncated=any(k.truncated for k in kept),
    )


def render_text(topics: Sequence[TopicResult], outcome: BudgetOutcome, *, colour: bool, explain: bool) -> str:
    """Full, list or matches output: topics in order, each with its kept hits and notes."""
    kept: dict[int, list[str]] = {}
    for item in outcome.kept:
        kept.setdefault(item.topic, []).append(item.text)
    out: list[str] = []
    for t, topic in enumerate(topics):
        if len(topics) > 1:
            out.append(f"═══ {topic.label or topic.query} ═══\n")
        if explain:
            out += [f"explain: {line}" for line in topic.explain]
            out.append("")
        if topic.note:
            out.append(f"note: {topic.note}\n")
        for text in kept.get(t, []):
            out.append(text)
    if outcome.max_tokens is not None:
        if outcome.omitted and not outcome.kept:  # the budget showed nothing: what it left out
            ids = [hit.id for topic in topics for hit in topic.hits]
            out.append(f"omitted: {', '.join(ids)} — read one with ra get ID, or raise --max-tokens")
        out.append(_budget_line(outcome))
    text = "\n".join(out).rstrip("\n") + "\n"
    return _colourize(text) if colour else text


def _budget_line(outcome: BudgetOutcome) -> str:
    parts = [f"tokens: {outcome.used_tokens} of {outcome.max_tokens}"]
    if outcome.omitted:
        parts.append(f"{outcome.omitted} result{'s' if outcome.omitted != 1 else ''} omitted")
    if outcome.truncated:
        parts.append("truncated")
    return "[" + ", ".join(parts) + "]\n"


def _colourize(text: str) -> str:
    text = _HEADER.sub(lambda m: f"{_BOLD}{_CYAN}{m.group(1)}{_RESET}", text)
    text = re.sub(r"^(> .*)$", lambda m: f"{_DIM}{m.group(1)}{_RESET}", text, flags=re.MULTILINE)
    return _EM.sub(lambda m: f"{_YELLOW}{_BOLD}{m.group(1)}{_RESET}", text)


def to_json(
    topics: Sequence[TopicResult],
    outcome: BudgetOutcome,
    *,
    list_mode: bool,
    stale: int | None,
    explain: bool,
) -> dict[str, Any]:
    """Seed 000's shape, `queries[] → {query, results[], total_matches}`, plus ra's extras.

    A hit with an excerpt (ra_query.search.focus.with_excerpts) has it as its `content`, with
    `excerpt: true`, as the full view prints it."""
    kept = {(item.topic, item.record.id): item for item in outcome.kept}
    queries: list[dict[str, Any]] = []
    for t, topic in enumerate(topics):
        results: list[dict[str, Any]] = []
        for hit in topic.hits:
            item = kept.get((t, hit.id))
            if item is None:
                continue
            r = hit.record
            result: dict[str, Any] = {
                "id": r.id,
                "tree": r.tree,
                "path": r.path,
                "title": r.title,
                "breadcrumb": " › ".join(r.breadcrumb),
                "depth": r.depth,
                "line_start": r.line_start,
                "line_end": r.line_end,
                "byte_start": r.byte_start,
                "byte_end": r.byte_end,
                # JSON has no infinity: nested boosts can still overflow tantivy's 32-bit scores
                "score": round(hit.score, 4) if math.isfinite(hit.score) else None,
                "snippet": hit.snippet,
                "tokens": r.tokens,
                "kind": r.kind,
                "language": r.language,
            }
            if r.symbol:
                result["symbol"] = r.symbol
            if hit.url:
                result["url"] = hit.url
            if not list_mode:
                if item.truncated:
                    result["content"] = _content_of(item.text)
                else:
                    result["content"] = hit.excerpt or r.content()
                result["truncated"] = item.truncated
                if hit.excerpt:
                    result["excerpt"] = True
            if hit.aggregated:
                result["constituents"] = list(hit.constituents)
            if hit.also:
                result["also"] = list(hit.also)
            if hit.serves:
                result["also_for"] = list(hit.serves)
            if hit.translations:  # the same page in other languages: their ids
                result["translations"] = [chunk_id for _, chunk_id in hit.translations]
            if r.locale:
                result["locale"] = r.locale
            results.append(result)
        entry: dict[str, Any] = {
            "query": topic.query,
            "results": results,
            "total_matches": topic.total_matches,
            "relaxed": topic.relaxed,
            "fuzzy": topic.fuzzy,
        }
        if topic.note:
            entry["note"] = topic.note
        if explain:
            entry["explain"] = list(topic.explain)
        queries.append(entry)
    payload: dict[str, Any] = {"queries": queries}
    tokens: dict[str, Any] = {
        "used": outcome.used_tokens,
        "max": outcome.max_tokens,
        "omitted": outcome.omitted,
        "truncated": outcome.truncated,
    }
    payload["tokens"] = tokens
    if outcome.omitted:  # what the budget left out, to get one by one (`get`) or with a larger one
        tokens["omitted_ids"] = [
            hit.id for t, topic in enumerate(topics) for hit in topic.hits if (t, hit.id) not in kept
        ]
    payload["stale"] = stale
    return payload


def _content_of(full_text: str) -> str:
    """The content part of a (possibly truncated) full-mode hit text: after the breadcrumb."""
    parts = full_text.split("\n\n", 1)
    return parts[1] if len(parts) == 2 else full_text

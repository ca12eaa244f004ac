"""The result pipeline after candidate retrieval: hierarchical aggregation, elbow cutoff, limit.

    candidates → aggregate (sibling merge, cascade, ancestor dedup) → show → elbow → limit

This is DECISIONS item 19. The rules, exactly as implemented:

Sibling merge
    Matching chunks are grouped by their parent (`parent_id`). When
    (matching children of a parent) / (that parent's child count) ≥ `threshold`, the children
    merge into the parent: the parent becomes a result with `aggregated=True`. The child count is
    the children's `sibling_count` (which includes the child itself).
    *Decision*: a merge needs at least 2 matching children. A single matching child never pulls
    in its parent, not even an only child (1/1 ≥ any threshold ≤ 1 would otherwise replace every
    only child by its parent, which is no aggregation at all).
    *Decision*: should the children of one parent disagree on `sibling_count` (a corrupt index),
    the largest value is used, so bad data makes merging harder, never easier.
    Children one of which the query named (`named`: `Installation` is its heading) do not merge:
    the named chunk is the answer, not the section around it; nor is a named chunk dropped
    when its page is a result too (below).

Score and constituents
    An aggregated result's score is the root-sum-square of its constituents' scores. If the
    parent also matched as a candidate, its own score is one of the constituents.
    *Decision*: `constituents` is flattened to the candidate ids that contributed a score, in rank
    order (score descending, then id) — the parent's own id included when it matched itself.
    Intermediate sections that merged on the way up but did not match themselves add no score
    and are not listed: they are what the result's content spans anyway. Because
    √(a² + b²)² = a² + b², the root-sum-square over this flattened list equals the
    root-sum-square over the direct merged children at every level of a cascade, so the two
    readings of the rule give the same score.

Cascade
    Merging repeats upward: an aggregated parent counts as a matching child of its own parent,
    so sections can merge into their grandparent, and so on. Levels are processed deepest first,
    so a section's own merge is settled before it is counted among its siblings. A document node
    (depth 0, or any node without a parent) never merges further.

Real parent chain
    The parent of a chunk is its `parent_id`, never something inferred from ids or slugs
    (`doc#install` and `doc#install-linux` are siblings, not parent and child). A parent that is
    not among the candidates is fetched with `lookup`, only when it is actually needed (a merge
    into it, or a step of an ancestor walk), and at most once per id. A parent that `lookup`
    cannot find ends the chain: nothing merges into it and the walk stops there.

Ancestor dedup
    After aggregation, a result with an ancestor (at any distance, along the parent chain) that
    is also a result is dropped. Its score is not added to the ancestor — only chunks merged as
    constituents contribute score.

Ranking
    Results sort by score descending, ties broken by id, so equal inputs give equal outputs.
    *Decision*: a candidate id given more than once keeps its highest score.

Show
    An optional step the caller supplies (ra_query.search.pipeline: a result with an empty body yields to
    its best descendant, results with the same content collapse into one). It gets the ranked
    results and returns them as they will be shown, still ranked.

Elbow
    Walk the ranked scores; cut before result i+1 when `score[i+1] / score[i] < cutoff_ratio`
    (strict: a ratio exactly equal to `cutoff_ratio` is kept) or when `score[i+1]` is zero.
    A first result scoring zero yields nothing. `cutoff_ratio = 0` disables the ratio cut; zero
    scores still cut. (Scores are BM25 and never negative; a negative one is cut like a zero.)

Limit
    Keep the first `limit` results (`limit ≥ 1`).

Code
    A code file's chunks are definitions: an agent asking where something is wants the
    definition, not the file around it. So the members of a code chunk never merge into it, and
    when a code chunk and a chunk inside it are both results, the inner one stays; the outer one
    goes when it is a file's node (its outline names every definition in it) or scored below
    the inner one, and stays beside it when it scored as high (a class's chunk is its own part —
    signature, docstring, fields — which its methods do not repeat) — the reverse of the
    ancestor dedup above. A file's node or a class the query named (`named`: `cli.py`, a Java
    class `Adapter` whose constructor `Adapter.Adapter` it named too) stays.

`aggregation=False` skips aggregation and dedup: the candidates become plain results.
"""

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

__all__ = [
    "Candidate",
    "ParentLookup",
    "PipelineTrace",
    "Result",
    "aggregate",
    "elbow",
    "pipeline",
]


class Candidate(NamedTuple):
    """One retrieved chunk, with its place in its document's tree and its BM25 score."""

    id: str
    parent_id: str | None
    depth: int
    sibling_count: int  # children of its parent, itself included
    score: float
    code: bool = False  # a chunk of a code file (see "Code" in the module's docstring)
    named: bool = False  # the query is its name (ra_query.search.named): a file's node or class stays


class Result(NamedTuple):
    """One ranked result; an aggregated one stands for the section its constituents matched in."""

    id: str
    score: float
    constituents: tuple[str, ...] = ()  # candidate ids merged into this result, in rank order
    aggregated: bool = False


ParentLookup = Callable[[str], Candidate | None]
"""Fetch a chunk's own record by id (score 0.0), e.g. from the index; None if it does not exist."""


class PipelineTrace(NamedTuple):
    """The final results and how many survived each stage, for `--explain`."""

    results: tuple[Result, ...]
    candidates: int
    after_aggregation: int
    after_elbow: int
    after_limit: int
    after_show: int | None = None  # None: no show step

    def stages(self) -> tuple[tuple[str, int], ...]:
        """The stage counts in pipeline order, as (name, count) pairs."""
        shown = () if self.after_show is None else (("after_show", self.after_show),)
        return (
            ("candidates", self.candidates),
            ("after_aggregation", self.after_aggregation),
            *shown,
            ("after_elbow", self.after_elbow),
            ("after_limit", self.after_limit),
        )


class _Node:
    """A chunk that currently stands as a result during aggregation."""

    __slots__ = ("aggregated", "leaves", "record")

    def __init__(self, record: Candidate, leaves: list[tuple[float, str]], aggregated: bool = False) -> None:
        self.record = record
        self.leaves = leaves  # (score, candidate id)
        self.aggregated = aggregated


class _Records:
    """Chunk records by id: the candidates first, then `lookup`, each id fetched at most once."""

    def __init__(self, candidates: dict[str, Candidate], lookup: ParentLookup) -> None:
        self._known: dict[str, Candidate | None] = dict(candidates)
        self._lookup = lookup

    def get(self, chunk_id: str) -> Candidate | None:
        if chunk_id not in self._known:
            self._known[chunk_id] = self._lookup(chunk_id)
        return self._known[chunk_id]


def _rank_key(score: float, chunk_id: str) -> tuple[float, str]:
    return (-score, chunk_id)


def _ranked(results: list[Result]) -> list[Result]:
    return sorted(results, key=lambda r: _rank_key(r.score, r.id))


def _unique(cands: Sequence[Candidate]) -> dict[str, Candidate]:
    """The candidates by id; a repeated id keeps its best score."""
    best: dict[str, Candidate] = {}
    for cand in cands:
        held = best.get(cand.id)
        if held is None or cand.score > held.score:
            best[cand.id] = cand
    return best


def aggregate(cands: Sequence[Candidate], *, threshold: float, lookup: ParentLookup) -> list[Result]:
    """Merge matching siblings into their parents, cascading upward, then drop nested results.

    Args:
        cands: the retrieved chunks, in any order.
        threshold: the share of a parent's children that must match for them to merge into it.
        lookup: fetches the record of a parent that is not among the candidates.

    Returns:
        The results ranked by score descending, ties by id.
    """
    unique = _unique(cands)
    records = _Records(unique, lookup)
    active: dict[str, _Node] = {c.id: _Node(record=c, leaves=[(c.score, c.id)]) for c in unique.values()}

    levels: dict[int, set[str]] = {}
    for node in active.values():
        levels.setdefault(node.record.depth, set()).add(node.record.id)

    for depth in range(max(levels, default=0), 0, -1):
        groups: dict[str, list[str]] = {}
        for chunk_id in sorted(levels.get(depth, ())):
            parent_id = active[chunk_id].record.parent_id
            if parent_id is not None:
                groups.setdefault(parent_id, []).append(chunk_id)
        for parent_id in sorted(groups):
            children = groups[parent_id]
            if len(children) < 2 or parent_id in children or active[children[0]].record.code:
                continue
            if any(active[c].record.named for c in children):
                continue  # the query named one of them: it is the answer, not its section
            child_count = max(active[c].record.sibling_count for c in children)
            if child_count < 1 or len(children) / child_count < threshold:
                continue
            parent_record = records.get(parent_id)
            if parent_record is None:
                continue
            parent = active.get(parent_id)
            if parent is None:
                parent = _Node(record=parent_record, leaves=[])
                active[parent_id] = parent
                levels.setdefault(parent_record.depth, set()).add(parent_id)
            parent.aggregated = True
            for child_id in children:
                parent.leaves.extend(active.pop(child_id).leaves)
                levels[depth].discard(child_id)

    kept = _without_nested(active, records)
    return _ranked([_result(active[chunk_id]) for chunk_id in kept])


def _result(node: _Node) -> Result:
    if not node.aggregated:
        return Result(id=node.record.id, score=node.record.score)
    leaves = sorted(node.leaves, key=lambda leaf: _rank_key(*leaf))
    # a section the query named keeps its place among the named (`BaseHTTPMiddleware`: the class
    # before the docs section of that name, however many of its subsections matched too)
    named = node.record.named and node.record.score > 0
    return Result(
        id=node.record.id,
        score=node.record.score if named else math.hypot(*(score for score, _ in leaves)),
        constituents=tuple(chunk_id for _, chunk_id in leaves),
        aggregated=True,
    )


def _without_nested(active: dict[str, _Node], records: _Records) -> list[str]:
    """The ids in `active` with no ancestor in `active`, walking the real parent chain.

    No result sits above the shallowest result, so a walk stops at that depth: when every result
    is at one depth, no lookup happens at all.
    """
    if not active:
        return []
    shallowest = min(node.record.depth for node in active.values())
    kept: list[str] = []
    outer_code: set[str] = set()  # code chunks with a result inside them: they yield to it
    for chunk_id, node in active.items():
        current: Candidate | None = node.record
        seen = {chunk_id}
        nested = False
        while current is not None and current.depth > shallowest:
            parent_id = current.parent_id
            if parent_id is None or parent_id in seen:
                break
            if parent_id in active:
                ancestor = active[parent_id].record
                if not ancestor.code:
                    nested = not node.record.named  # what the query named stays beside its page
                elif not ancestor.named and (ancestor.depth == 0 or ancestor.score < node.record.score):
                    outer_code.add(parent_id)  # a code file's node (its outline names what matched),
                    # or a class that matched less than its member, unless the query named it
                break
            if current.depth - 1 <= shallowest:
                break
            seen.add(parent_id)
            current = records.get(parent_id)
        if not nested:
            kept.append(chunk_id)
    return [chunk_id for chunk_id in kept if chunk_id not in outer_code]


def elbow(results: Sequence[Result], *, cutoff_ratio: float) -> list[Result]:
    """Cut ranked results where relevance drops: at a score ratio below `cutoff_ratio`, or at zero.

    Args:
        results: ranked results, best first.
        cutoff_ratio: the smallest kept ratio of a score to the one before it; 0 disables it.

    Raises:
        ValueError: if `cutoff_ratio` is negative or not a number.
    """
    if not cutoff_ratio >= 0.0:
        raise ValueError(f"cutoff_ratio must be ≥ 0, got {cutoff_ratio}")
    kept: list[Result] = []
    for result in results:
        if result.score <= 0.0:
            break
        if kept and result.score / kept[-1].score < cutoff_ratio:
            break
        kept.append(result)
    return kept


def pipeline(
    cands: Sequence[Candidate],
    *,
    threshold: float,
    cutoff_ratio: float,
    limit: int,
    lookup: ParentLookup,
    aggregation: bool = True,
    show: Callable[[list[Result]], list[Result]] | None = None,
) -> PipelineTrace:
    """Run candidates → aggregate → show → elbow → limit and count what survives each stage.

    Args:
        cands: the retrieved chunks (at most `candidate_limit` of them).
        threshold: `aggregation_threshold`, see `aggregate`.
        cutoff_ratio: see `elbow`.
        limit: the most results to return, at least 1.
        lookup: fetches parents that are not among the candidates.
        aggregation: False skips aggregation and dedup (`--no-aggregation`).
        show: turns the ranked results into the ranked results to show (see "Show").

    Raises:
        ValueError: if `limit` < 1 or `cutoff_ratio` is negative.
    """
    if limit < 1:
        raise ValueError(f"limit must be ≥ 1, got {limit}")
    if aggregation:
        merged = aggregate(cands, threshold=threshold, lookup=lookup)
    else:
        merged = _ranked([Result(id=c.id, score=c.score) for c in _unique(cands).values()])
    shown = merged if show is None else show(merged)
    cut = elbow(shown, cutoff_ratio=cutoff_ratio)
    final = cut[:limit]
    return PipelineTrace(
        results=tuple(final),
        candidates=len(cands),
        after_aggregation=len(merged),
        after_elbow=len(cut),
        after_limit=len(final),
        after_show=None if show is None else len(shown),
    )

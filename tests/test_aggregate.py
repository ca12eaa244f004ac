"""Hierarchical aggregation, elbow cutoff and limit (DECISIONS 19), on hand-worked examples."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ra_query.search.aggregate import Candidate, Result, aggregate, elbow, pipeline

# The fake index. Ids look like ra's slugs, but the tree is given only by the parent links:
# `doc#install-linux` is a sibling of `doc#install`, and `doc#troubleshooting` sits under
# `doc#faq` although its id does not say so.
#
#   doc
#   ├── doc#install
#   ├── doc#install-linux
#   ├── doc#usage
#   │   ├── doc#usage-cli
#   │   │   ├── doc#usage-cli-flags
#   │   │   └── doc#usage-cli-env
#   │   └── doc#usage-api
#   │       ├── doc#usage-api-python
#   │       └── doc#usage-api-rust
#   └── doc#faq
#       ├── doc#faq-a
#       ├── doc#faq-b
#       └── doc#troubleshooting
#   other
#   └── other#only
PARENTS: dict[str, str | None] = {
    "doc": None,
    "doc#install": "doc",
    "doc#install-linux": "doc",
    "doc#usage": "doc",
    "doc#usage-cli": "doc#usage",
    "doc#usage-cli-flags": "doc#usage-cli",
    "doc#usage-cli-env": "doc#usage-cli",
    "doc#usage-api": "doc#usage",
    "doc#usage-api-python": "doc#usage-api",
    "doc#usage-api-rust": "doc#usage-api",
    "doc#faq": "doc",
    "doc#faq-a": "doc#faq",
    "doc#faq-b": "doc#faq",
    "doc#troubleshooting": "doc#faq",
    "other": None,
    "other#only": "other",
}


class FakeIndex:
    """Chunk records from a parent map, with a lookup that records every call."""

    def __init__(self, parents: dict[str, str | None]) -> None:
        self.parents = parents
        self.calls: list[str] = []

    def depth(self, chunk_id: str) -> int:
        parent = self.parents[chunk_id]
        return 0 if parent is None else 1 + self.depth(parent)

    def sibling_count(self, chunk_id: str) -> int:
        parent = self.parents[chunk_id]
        if parent is None:
            return 1
        return sum(1 for p in self.parents.values() if p == parent)

    def cand(self, chunk_id: str, score: float) -> Candidate:
        return Candidate(
            id=chunk_id,
            parent_id=self.parents[chunk_id],
            depth=self.depth(chunk_id),
            sibling_count=self.sibling_count(chunk_id),
            score=score,
        )

    def lookup(self, chunk_id: str) -> Candidate | None:
        self.calls.append(chunk_id)
        return self.cand(chunk_id, 0.0) if chunk_id in self.parents else None

    def ancestors(self, chunk_id: str) -> list[str]:
        found: list[str] = []
        parent = self.parents[chunk_id]
        while parent is not None:
            found.append(parent)
            parent = self.parents[parent]
        return found


def run(scores: dict[str, float], threshold: float = 0.5) -> tuple[list[Result], FakeIndex]:
    index = FakeIndex(PARENTS)
    cands = [index.cand(chunk_id, score) for chunk_id, score in scores.items()]
    return aggregate(cands, threshold=threshold, lookup=index.lookup), index


def plain(chunk_id: str, score: float) -> Result:
    return Result(id=chunk_id, score=score, constituents=(), aggregated=False)


# --- sibling merge ---------------------------------------------------------------------------


def test_two_of_three_siblings_at_half_merge_into_their_parent_with_root_sum_square_score() -> None:
    results, _ = run({"doc#faq-a": 3.0, "doc#faq-b": 4.0})
    # 2/3 ≥ 0.5; √(3² + 4²) = 5
    assert results == [Result("doc#faq", 5.0, ("doc#faq-b", "doc#faq-a"), aggregated=True)]


def test_one_of_three_siblings_does_not_merge() -> None:
    results, index = run({"doc#faq-a": 3.0})
    assert results == [plain("doc#faq-a", 3.0)]
    assert index.calls == []


def test_a_single_matching_only_child_does_not_pull_in_its_parent() -> None:
    # 1/1 ≥ 0.5, but a merge needs two matching siblings
    results, _ = run({"other#only": 2.0}, threshold=0.5)
    assert results == [plain("other#only", 2.0)]


def test_a_parent_that_matched_itself_contributes_its_own_score() -> None:
    results, _ = run({"doc#faq": 6.0, "doc#faq-a": 2.0, "doc#faq-b": 3.0})
    # √(6² + 3² + 2²) = √49 = 7
    [result] = results
    assert result.id == "doc#faq"
    assert result.aggregated
    assert result.score == pytest.approx(7.0)
    assert result.constituents == ("doc#faq", "doc#faq-b", "doc#faq-a")


def test_merging_cascades_to_the_grandparent_when_aggregated_parents_are_enough_siblings() -> None:
    results, _ = run(
        {
            "doc#usage-cli-flags": 1.0,
            "doc#usage-cli-env": 2.0,
            "doc#usage-api-python": 2.0,
            "doc#usage-api-rust": 4.0,
        }
    )
    # usage-cli = √5 and usage-api = √20 both aggregate: 2/2 of usage's children, so usage
    # aggregates with √(5 + 20) = 5. usage is 1/4 of doc's children, so the cascade stops there.
    [result] = results
    assert result.id == "doc#usage"
    assert result.aggregated
    assert result.score == pytest.approx(5.0)
    # flattened to the matching chunks, in rank order (the 2.0 tie broken by id)
    assert result.constituents == (
        "doc#usage-api-rust",
        "doc#usage-api-python",
        "doc#usage-cli-env",
        "doc#usage-cli-flags",
    )


def test_an_aggregated_section_and_a_matching_sibling_chunk_merge_together() -> None:
    results, _ = run({"doc#usage-cli-flags": 3.0, "doc#usage-cli-env": 4.0, "doc#usage-api": 12.0})
    # usage-cli = 5 (aggregated), usage-api = 12 (plain match): 2/2 of usage → √(25 + 144) = 13
    [result] = results
    assert (result.id, result.aggregated) == ("doc#usage", True)
    assert result.score == pytest.approx(13.0)
    assert result.constituents == ("doc#usage-api", "doc#usage-cli-env", "doc#usage-cli-flags")


def test_a_document_node_never_merges_further() -> None:
    results, _ = run({"doc#install": 1.0, "doc#install-linux": 1.0, "doc#usage": 1.0, "doc#faq": 1.0})
    [result] = results
    assert (result.id, result.aggregated) == ("doc", True)
    assert result.score == pytest.approx(2.0)


def test_threshold_one_requires_every_sibling_to_match() -> None:
    two_of_three, _ = run({"doc#faq-a": 3.0, "doc#faq-b": 4.0}, threshold=1.0)
    assert {r.id for r in two_of_three} == {"doc#faq-a", "doc#faq-b"}
    all_three, _ = run({"doc#faq-a": 3.0, "doc#faq-b": 4.0, "doc#troubleshooting": 12.0}, threshold=1.0)
    assert [(r.id, r.score) for r in all_three] == [("doc#faq", pytest.approx(13.0))]


# --- ancestor dedup and the real parent chain ---------------------------------------------------


def test_a_chunk_whose_ancestor_is_already_a_result_is_dropped() -> None:
    # flags alone does not merge (1 of 2 under usage-cli), but its grandparent matched
    results, _ = run({"doc#usage": 1.0, "doc#usage-cli-flags": 9.0})
    assert results == [plain("doc#usage", 1.0)]


def test_a_descendant_whose_id_does_not_look_nested_is_still_dropped_under_its_ancestor() -> None:
    results, _ = run({"doc#faq": 1.0, "doc#troubleshooting": 9.0})
    assert results == [plain("doc#faq", 1.0)]


def test_ids_that_look_nested_but_are_siblings_are_not_parent_and_child() -> None:
    # 2/4 of doc's children: below 0.75, so no merge; both stay although one id prefixes the other
    results, _ = run({"doc#install": 2.0, "doc#install-linux": 1.0}, threshold=0.75)
    assert results == [plain("doc#install", 2.0), plain("doc#install-linux", 1.0)]


def test_lookup_is_called_only_for_parents_that_are_not_candidates() -> None:
    _, index = run({"doc#faq-a": 3.0, "doc#faq-b": 4.0})
    assert index.calls == ["doc#faq"]
    _, index = run({"doc#faq": 1.0, "doc#faq-a": 3.0, "doc#faq-b": 4.0})
    assert index.calls == []


def test_lookup_fetches_each_missing_ancestor_once_during_a_cascade() -> None:
    _, index = run(
        {
            "doc#usage-cli-flags": 1.0,
            "doc#usage-cli-env": 2.0,
            "doc#usage-api-python": 2.0,
            "doc#usage-api-rust": 4.0,
        }
    )
    assert sorted(index.calls) == ["doc#usage", "doc#usage-api", "doc#usage-cli"]


def test_a_parent_the_index_cannot_find_ends_the_chain() -> None:
    index = FakeIndex(PARENTS)
    orphans = [
        Candidate("lost#a", "lost", depth=1, sibling_count=2, score=1.0),
        Candidate("lost#b", "lost", depth=1, sibling_count=2, score=2.0),
    ]
    results = aggregate(orphans, threshold=0.5, lookup=index.lookup)
    assert results == [plain("lost#b", 2.0), plain("lost#a", 1.0)]
    assert index.calls == ["lost"]


# --- ranking ---------------------------------------------------------------------------------


def test_ties_are_ranked_by_id_whatever_the_input_order() -> None:
    scores = {"doc#install-linux": 1.0, "doc#install": 1.0, "other#only": 1.0}
    forward, _ = run(scores, threshold=0.75)
    backward, _ = run(dict(reversed(scores.items())), threshold=0.75)
    assert [r.id for r in forward] == ["doc#install", "doc#install-linux", "other#only"]
    assert backward == forward


def test_a_candidate_given_twice_keeps_its_best_score() -> None:
    index = FakeIndex(PARENTS)
    cands = [index.cand("doc#install", 1.0), index.cand("doc#install", 3.0)]
    assert aggregate(cands, threshold=0.5, lookup=index.lookup) == [plain("doc#install", 3.0)]


# --- elbow -----------------------------------------------------------------------------------


def scored(*scores: float) -> list[Result]:
    return [plain(f"r{i}", score) for i, score in enumerate(scores)]


def test_elbow_keeps_a_ratio_exactly_at_the_cutoff() -> None:
    assert elbow(scored(4.0, 2.0, 1.0), cutoff_ratio=0.5) == scored(4.0, 2.0, 1.0)


def test_elbow_cuts_a_ratio_just_below_the_cutoff() -> None:
    # 4.9 / 10 = 0.49 < 0.5
    assert elbow(scored(10.0, 4.9, 4.8), cutoff_ratio=0.5) == scored(10.0)


def test_elbow_cuts_at_a_zero_score_even_with_the_ratio_cut_disabled() -> None:
    assert elbow(scored(3.0, 0.0, 0.0), cutoff_ratio=0.0) == scored(3.0)


def test_elbow_yields_nothing_when_the_first_score_is_zero() -> None:
    assert elbow(scored(0.0, 0.0), cutoff_ratio=0.5) == []


def test_elbow_keeps_all_of_equal_scores() -> None:
    assert elbow(scored(2.0, 2.0, 2.0, 2.0), cutoff_ratio=0.99) == scored(2.0, 2.0, 2.0, 2.0)


def test_elbow_with_cutoff_zero_keeps_any_drop() -> None:
    assert elbow(scored(100.0, 0.001), cutoff_ratio=0.0) == scored(100.0, 0.001)


def test_elbow_rejects_a_negative_cutoff() -> None:
    with pytest.raises(ValueError, match="cutoff_ratio"):
        elbow(scored(1.0), cutoff_ratio=-0.1)


# --- pipeline --------------------------------------------------------------------------------


def test_limit_keeps_the_first_results_and_the_trace_counts_each_stage() -> None:
    index = FakeIndex(PARENTS)
    cands = [
        index.cand("doc#install", 10.0),
        index.cand("doc#install-linux", 9.0),
        index.cand("doc#usage", 8.0),
        index.cand("other#only", 7.0),
        index.cand("doc#usage-cli-flags", 6.0),  # dropped under doc#usage
        index.cand("doc#faq-a", 1.0),  # dropped by the elbow (1/7 < 0.5)
    ]
    trace = pipeline(cands, threshold=0.8, cutoff_ratio=0.5, limit=2, lookup=index.lookup)
    assert [r.id for r in trace.results] == ["doc#install", "doc#install-linux"]
    assert trace.stages() == (
        ("candidates", 6),
        ("after_aggregation", 5),
        ("after_elbow", 4),
        ("after_limit", 2),
    )


def test_pipeline_aggregates_before_the_elbow() -> None:
    # alone, 3 after 9 would be cut at 0.5; merged into faq (√(9² + 3²) ≈ 9.49) it survives
    index = FakeIndex(PARENTS)
    cands = [index.cand("doc#faq-a", 9.0), index.cand("doc#faq-b", 3.0)]
    trace = pipeline(cands, threshold=0.5, cutoff_ratio=0.5, limit=10, lookup=index.lookup)
    assert [(r.id, r.constituents) for r in trace.results] == [("doc#faq", ("doc#faq-a", "doc#faq-b"))]
    assert trace.results[0].score == pytest.approx(math.sqrt(90.0))


def test_aggregation_disabled_returns_the_candidates_as_plain_results() -> None:
    index = FakeIndex(PARENTS)
    cands = [index.cand("doc#faq-a", 3.0), index.cand("doc#faq-b", 4.0), index.cand("doc#faq", 2.0)]
    trace = pipeline(cands, threshold=0.5, cutoff_ratio=0.0, limit=10, lookup=index.lookup, aggregation=False)
    assert trace.results == (plain("doc#faq-b", 4.0), plain("doc#faq-a", 3.0), plain("doc#faq", 2.0))
    assert trace.after_aggregation == 3
    assert index.calls == []


def test_pipeline_rejects_a_limit_below_one() -> None:
    index = FakeIndex(PARENTS)
    with pytest.raises(ValueError, match="limit"):
        pipeline([], threshold=0.5, cutoff_ratio=0.5, limit=0, lookup=index.lookup)


def test_pipeline_with_no_candidates_returns_nothing() -> None:
    index = FakeIndex(PARENTS)
    trace = pipeline([], threshold=0.5, cutoff_ratio=0.5, limit=5, lookup=index.lookup)
    assert trace.results == ()
    assert trace.stages() == (
        ("candidates", 0),
        ("after_aggregation", 0),
        ("after_elbow", 0),
        ("after_limit", 0),
    )


# --- properties ------------------------------------------------------------------------------


@st.composite
def forests(draw: st.DrawFn) -> dict[str, str | None]:
    """A random forest; ids `n0, n1, …` so that `n1` prefixes `n10` without being its parent."""
    size = draw(st.integers(min_value=1, max_value=30))
    parents: dict[str, str | None] = {"n0": None}
    for i in range(1, size):
        parent = draw(st.integers(min_value=-1, max_value=i - 1))
        parents[f"n{i}"] = None if parent < 0 else f"n{parent}"
    return parents


@settings(max_examples=200, deadline=None)
@given(
    parents=forests(),
    data=st.data(),
    threshold=st.floats(min_value=0.0, max_value=1.5),
)
def test_aggregation_keeps_its_invariants_on_random_trees(
    parents: dict[str, str | None], data: st.DataObject, threshold: float
) -> None:
    index = FakeIndex(parents)
    nodes = sorted(parents)
    picks = data.draw(st.lists(st.booleans(), min_size=len(nodes), max_size=len(nodes)))
    chosen = [chunk_id for chunk_id, picked in zip(nodes, picks, strict=True) if picked]
    scores = st.floats(min_value=0.0, max_value=100.0, allow_nan=False)
    cands = [index.cand(chunk_id, data.draw(scores)) for chunk_id in chosen]
    by_id = {c.id: c for c in cands}

    results = aggregate(cands, threshold=threshold, lookup=index.lookup)

    ids = {r.id for r in results}
    assert len(ids) == len(results)
    for result in results:
        assert not ids.intersection(index.ancestors(result.id)), "a result sits under another"
    for before, after in itertools.pairwise(results):
        assert (before.score, after.id) >= (after.score, before.id), "not ranked"

    owner: dict[str, str] = {}
    for result in results:
        if not result.aggregated:
            assert result.constituents == ()
            assert result.score == by_id[result.id].score
            continue
        assert len(result.constituents) >= 2
        assert result.score == pytest.approx(math.hypot(*(by_id[c].score for c in result.constituents)))
        for constituent in result.constituents:
            assert constituent not in owner, "merged into two results"
            owner[constituent] = result.id
            assert constituent == result.id or result.id in index.ancestors(constituent)
    for chunk_id in by_id:
        assert chunk_id in ids or chunk_id in owner or ids.intersection(index.ancestors(chunk_id))

    assert not set(index.calls).intersection(by_id), "looked up a candidate"
    assert len(index.calls) == len(set(index.calls)), "looked up an id twice"

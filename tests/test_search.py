"""The search pipeline (ra_query.search.pipeline) over a real index of tests/fixtures/query_corpus.

The corpus is built once for the module; every test here only reads it. The CLI side of the same
behaviour is in tests/test_search_cli.py.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ra_query.artifacts.store import Store, open_store
from ra_query.errors import QuerySyntaxError
from ra_query.search.pipeline import SearchParams, TopicResult, search, search_topic, with_snippet
from tests.conftest import build

QUERY_CORPUS = Path(__file__).parent / "fixtures" / "query_corpus"
# no aggregation, no elbow, no fuzzing: what BM25 alone returns
DEFAULT = SearchParams()
PLAIN = SearchParams(limit=20, aggregation=False, cutoff_ratio=0.0)

Search = Callable[..., TopicResult]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    root = tmp_path_factory.mktemp("search")
    home = root / "home"
    home.mkdir()
    kb = root / "kb"
    shutil.copytree(QUERY_CORPUS, kb)
    build(kb, home)
    return open_store(kb / ".ra")


@pytest.fixture
def find(store: Store) -> Search:
    """search_topic with keyword overrides of `base` (default: SearchParams())."""

    def _find(text: str, base: SearchParams = DEFAULT, **overrides: object) -> TopicResult:
        return search_topic(store, text, base._replace(**overrides))

    return _find


def ids(topic: TopicResult) -> list[str]:
    return [hit.id for hit in topic.hits]


# --- aggregation, elbow, limit -------------------------------------------------------------------


def test_siblings_that_match_at_the_threshold_merge_into_their_parent(find: Search) -> None:
    topic = find("image", aggregation_threshold=0.75)  # three of the four sections under "Deployment"
    assert ids(topic) == ["docs:deploy.md#deployment"]
    assert topic.hits[0].aggregated
    assert set(topic.hits[0].constituents) == {
        "docs:deploy.md#building-the-image",
        "docs:deploy.md#rolling-out",
        "docs:deploy.md#rolling-back",
    }


def test_an_aggregated_score_is_the_root_sum_square_of_its_constituents(find: Search) -> None:
    plain = {hit.id: hit.score for hit in find("image", aggregation=False, cutoff_ratio=0.0).hits}
    merged = find("image", aggregation_threshold=0.75).hits[0]
    expected = math.sqrt(sum(plain[c] ** 2 for c in merged.constituents))
    assert merged.score == pytest.approx(expected)


def test_constituents_are_listed_in_rank_order(find: Search) -> None:
    plain = ids(find("image", aggregation=False, cutoff_ratio=0.0))
    assert list(find("image", aggregation_threshold=0.75).hits[0].constituents) == plain


def test_a_threshold_above_the_matching_share_keeps_the_siblings_apart(find: Search) -> None:
    # three of the four sections under "Deployment" mention the image: 0.75 < 0.8
    topic = find("image", aggregation_threshold=0.8, cutoff_ratio=0.0)
    assert ids(topic) == [
        "docs:deploy.md#building-the-image",
        "docs:deploy.md#rolling-back",
        "docs:deploy.md#rolling-out",
    ]
    assert not any(hit.aggregated for hit in topic.hits)


def test_a_threshold_equal_to_the_matching_share_merges(find: Search) -> None:
    # two of four sections mention the canary: exactly 0.5
    assert ids(find("canary", aggregation_threshold=0.5)) == ["docs:deploy.md#deployment"]


def test_without_aggregation_the_sections_are_results_themselves(find: Search) -> None:
    topic = find("canary", aggregation=False)
    assert ids(topic) == ["docs:deploy.md#rolling-back", "docs:deploy.md#rolling-out"]
    assert all(hit.constituents == () for hit in topic.hits)


def test_aggregation_cascades_into_the_grandparent(find: Search) -> None:
    # Quotas and Affinity (all of Scheduling's children) merge into Scheduling, which with
    # Networking makes up all of Cluster's children; Cluster is the only child of the document,
    # and a single child never pulls in its parent
    topic = find("quota OR zones")
    assert ids(topic) == ["docs:kubernetes.md#cluster"]
    assert set(topic.hits[0].constituents) == {
        "docs:kubernetes.md#quotas",
        "docs:kubernetes.md#affinity",
        "docs:kubernetes.md#networking",
    }


def test_the_elbow_cuts_where_the_score_falls_below_the_ratio(find: Search) -> None:
    everything = find("image", aggregation=False, cutoff_ratio=0.0)
    scores = [hit.score for hit in everything.hits]
    drop = scores[1] / scores[0]
    assert ids(find("image", aggregation=False, cutoff_ratio=drop + 0.01)) == ids(everything)[:1]
    assert ids(find("image", aggregation=False, cutoff_ratio=drop - 0.01))[:2] == ids(everything)[:2]


def test_a_cutoff_ratio_of_zero_keeps_everything_up_to_the_limit(find: Search) -> None:
    assert len(find("image", aggregation=False, cutoff_ratio=0.0).hits) == 3
    assert len(find("image", aggregation=False, cutoff_ratio=0.0, limit=2).hits) == 2


def test_the_candidate_limit_caps_what_the_pipeline_sees(find: Search) -> None:
    topic = find("image", aggregation=False, cutoff_ratio=0.0, candidate_limit=1)
    assert ids(topic) == ["docs:deploy.md#building-the-image"]
    assert topic.total_matches == 3  # the match count is not capped


def test_a_candidate_limit_of_one_leaves_nothing_to_aggregate(find: Search) -> None:
    assert ids(find("image", candidate_limit=1)) == ["docs:deploy.md#building-the-image"]


def test_explain_lists_the_parsed_query_the_parameters_and_the_stage_counts(find: Search) -> None:
    topic = find("image", aggregation_threshold=0.75)
    assert topic.explain == (
        "parsed: image",
        "parameters: candidate_limit=20 aggregation_threshold=0.75 cutoff_ratio=0.5 limit=5"
        " aggregation=on fuzzy_distance=1",
        "counts: matches=3 candidates=3 after_aggregation=1 after_show=1 after_elbow=1 after_limit=1",
    )


def test_explain_shows_plain_words_as_ranked_and_spells_out_the_and_of_strict(find: Search) -> None:
    assert (
        find("image canary", base=PLAIN).explain[0]
        == "parsed: image canary (ranked words: a chunk needs any one, more rank higher)"
    )
    assert find("image canary", base=PLAIN, strict=True).explain[0] == "parsed: image AND canary"
    assert find("image -canary", base=PLAIN).explain[0] == "parsed: image -canary"  # one ranked word


def test_by_default_a_parent_merges_only_when_nearly_all_its_sections_match(find: Search) -> None:
    # three of four sections (0.75) stay apart under the default threshold of 0.9
    assert DEFAULT.aggregation_threshold == 0.9
    assert not any(hit.aggregated for hit in find("image", cutoff_ratio=0.0).hits)
    assert ids(find("quota OR zones")) == ["docs:kubernetes.md#cluster"]  # all of them: merged


def test_explain_lists_the_stop_words_left_out_and_the_typos(find: Search) -> None:
    explain = find("how do I roll out the imagge").explain
    assert "stop words left out: how do I the" in explain
    assert "in no chunk, matched as typos: imagge" in explain


def test_an_excluded_word_that_no_chunk_holds_excludes_nothing_else(find: Search) -> None:
    with_typo = find("image -kubernetis", base=PLAIN)
    assert ids(with_typo) == ids(find("image", base=PLAIN)) and not with_typo.fuzzy


def test_a_sentence_searches_its_minus_word_as_a_flag_where_keywords_exclude_it(find: Search) -> None:
    asked = find("how do I push the image -canary", base=PLAIN)
    assert set(ids(asked)) >= {"docs:deploy.md#rolling-back", "docs:deploy.md#rolling-out"}
    assert (
        "parsed: how do I push the image canary (ranked words: a chunk needs any one, more rank higher)"
        in asked.explain
    )
    excluded = ids(find("image -canary", base=PLAIN))
    assert excluded and not {"docs:deploy.md#rolling-back", "docs:deploy.md#rolling-out"} & set(excluded)


# --- ranking -----------------------------------------------------------------------------------


def test_a_chunk_that_says_the_word_often_outranks_one_with_the_word_only_in_its_heading(
    find: Search,
) -> None:
    # "Latency budget" has the word in its heading; "Measuring" says it four times
    assert ids(find("latency", base=PLAIN)) == [
        "docs:performance.md#measuring",
        "docs:performance.md#latency-budget",
    ]


def test_raising_the_title_boost_lets_the_heading_match_win(find: Search) -> None:
    boosts = {"text": 1.0, "title": 3.0}
    assert ids(find("latency", base=PLAIN, boosts=boosts)) == [
        "docs:performance.md#latency-budget",
        "docs:performance.md#measuring",
    ]


def test_a_sum_over_separate_fields_is_still_a_setting(find: Search) -> None:
    boosts = {"text": 0.0, "title": 3.0, "tags": 2.5, "path": 2.0}
    assert ids(find("latency", base=PLAIN, boosts=boosts))[0] == "docs:performance.md#latency-budget"


def test_a_body_weight_weighs_nothing_the_body_is_ranked_in_text(find: Search) -> None:
    # schema 5 stores the body without indexing it; a weight for it (an older manifest's, the
    # Python API's) leaves the ranking as it is
    plain = find("canary image", base=PLAIN)
    weighed = find("canary image", base=PLAIN, boosts={**DEFAULT.boosts, "body": 5.0})
    assert [(h.id, h.score) for h in weighed.hits] == [(h.id, h.score) for h in plain.hits]


def test_any_of_the_words_makes_a_chunk_a_candidate(find: Search) -> None:
    # no chunk has both words; each has one of them
    topic = find("canary dashboards", base=PLAIN)
    assert set(ids(topic)) == {
        "docs:deploy.md#monitoring",
        "docs:deploy.md#rolling-back",
        "docs:deploy.md#rolling-out",
    }
    assert not topic.relaxed and topic.note is None


def test_a_chunk_with_more_of_the_words_ranks_first(find: Search) -> None:
    # only "Rolling out" has both "canary" and "region"
    assert ids(find("canary region dashboards", base=PLAIN))[0] == "docs:deploy.md#rolling-out"


def test_a_word_typed_twice_weighs_twice(find: Search) -> None:
    once = {hit.id: hit.score for hit in find("canary dashboards", base=PLAIN).hits}
    twice = {hit.id: hit.score for hit in find("canary canary dashboards", base=PLAIN).hits}
    assert twice["docs:deploy.md#rolling-back"] == pytest.approx(2 * once["docs:deploy.md#rolling-back"])
    assert twice["docs:deploy.md#monitoring"] == pytest.approx(once["docs:deploy.md#monitoring"])


def test_stop_words_do_not_decide_what_matches(find: Search) -> None:
    # "the" is in nearly every chunk; with it left out only the image chunks match
    assert ids(find("the image", base=PLAIN)) == ids(find("image", base=PLAIN))


def test_a_query_of_only_stop_words_searches_them(find: Search) -> None:
    assert find("the", base=PLAIN).hits


def test_words_close_together_rank_above_the_same_words_apart(find: Search) -> None:
    # both chunks hold "image" and "canary"; only Rolling back has "previous image" side by side
    with_bonus = find("previous image canary", base=PLAIN, phrase_boost=0.2)
    without = find("previous image canary", base=PLAIN, phrase_boost=0.0)
    gain = {h.id: h.score for h in with_bonus.hits}
    base = {h.id: h.score for h in without.hits}
    assert gain["docs:deploy.md#rolling-back"] > base["docs:deploy.md#rolling-back"]
    assert gain["docs:deploy.md#rolling-out"] == pytest.approx(base["docs:deploy.md#rolling-out"])


def test_a_chunk_with_no_text_of_its_own_is_not_a_candidate_for_its_title(find: Search) -> None:
    # "Deployment" has only sub-headings: its sections, whose text holds the heading, stand for it
    assert "docs:deploy.md#deployment" not in ids(find("deployment", base=PLAIN))


def test_stemming_finds_other_forms_of_a_word(find: Search) -> None:
    topic = find("handling", aggregation=False)
    assert ids(topic) == ["docs:logging.md#errors"]  # "An exception is handled once"
    assert not topic.fuzzy


def test_local_trees_score_local_boost_times_a_global_tree(find: Search) -> None:
    local = find("pager", aggregation=False)
    demoted = find("pager", aggregation=False, global_trees=frozenset({"notes"}))
    assert demoted.hits[0].score * 1.5 == pytest.approx(local.hits[0].score)


def test_a_tree_filter_keeps_only_that_tree(find: Search) -> None:
    # "every" is in both trees
    assert {hit.record.tree for hit in find("every", base=PLAIN).hits} == {"docs", "notes"}
    assert {hit.record.tree for hit in find("every", base=PLAIN, trees=("notes",)).hits} == {"notes"}


def test_a_tree_term_in_the_query_filters_like_the_option(find: Search) -> None:
    assert {hit.record.tree for hit in find("every tree:notes", base=PLAIN).hits} == {"notes"}


# --- fuzzy, relaxation, lenient, raw --------------------------------------------------------------


def test_a_one_letter_typo_is_found_by_fuzzy_matching_and_marked(find: Search) -> None:
    topic = find("kubernetis", aggregation=False, cutoff_ratio=0.0)
    assert "docs:kubernetes.md#scheduling" in ids(topic)
    assert topic.fuzzy and not topic.relaxed


def test_a_typo_inside_a_hyphenated_word_is_found_by_fuzzy_matching(find: Search) -> None:
    topic = find("On-calll", aggregation=False, cutoff_ratio=0.0)
    assert ids(topic) and all(i.startswith("notes:oncall.md") for i in ids(topic))
    assert topic.fuzzy


def test_a_split_word_with_an_unknown_part_finds_the_part_that_exists(find: Search) -> None:
    topic = find("canary-zyxwvut", aggregation=False, cutoff_ratio=0.0)
    assert set(ids(topic)) == {"docs:deploy.md#rolling-back", "docs:deploy.md#rolling-out"}


def test_an_exact_query_is_not_marked_fuzzy(find: Search) -> None:
    assert not find("kubernetes").fuzzy


def test_fuzzy_distance_zero_turns_typo_matching_off(find: Search) -> None:
    topic = find("kubernetis", fuzzy_distance=0)
    assert topic.hits == () and not topic.fuzzy


def test_an_exact_match_of_a_word_that_exists_wins_over_fuzzy_neighbours(find: Search) -> None:
    # "quota" exists; "quote" would be one edit away but fuzzy runs only when nothing matched
    topic = find("quota", aggregation=False, cutoff_ratio=0.0)
    assert ids(topic) == ["docs:kubernetes.md#quotas"] and not topic.fuzzy


def test_every_exact_match_outranks_every_typo_only_match(find: Search) -> None:
    topic = find("canary kubernetis", aggregation=False, cutoff_ratio=0.0, limit=20)
    order = ids(topic)
    exact = [i for i in order if i.startswith("docs:deploy.md")]  # contain "canary"
    fuzzy_only = [i for i in order if i.startswith("docs:kubernetes.md")]  # contain "kubernetes"
    assert exact and fuzzy_only
    assert max(order.index(i) for i in exact) < min(order.index(i) for i in fuzzy_only)


def test_an_english_word_no_chunk_holds_is_a_word_not_a_typo(find: Search) -> None:
    # `mandatory` is in no chunk; one edit away is another word, so nothing is typo-matched
    topic = find("canary mandatory", aggregation=False, cutoff_ratio=0.0, limit=20)
    assert set(ids(topic)) == {"docs:deploy.md#rolling-back", "docs:deploy.md#rolling-out"}
    assert not topic.fuzzy
    assert "in no chunk as typed, and words, not typos: mandatory" in topic.explain


def test_an_english_word_is_known_in_any_case_and_with_punctuation_around_it() -> None:
    from ra_query.text.dictionary import is_english_word

    assert is_english_word("Mandatory,") and is_english_word("(nearest)")
    assert not is_english_word("kubernetis") and not is_english_word("recieve")


@given(st.text(alphabet=st.sampled_from("abcdeimnorstuyzABCZ.,'()- "), max_size=12))
def test_any_text_is_an_english_word_or_not_and_a_word_of_it_so_in_any_case(text: str) -> None:
    from ra_query.text.dictionary import is_english_word

    assert is_english_word(text) == is_english_word(text.upper()) == is_english_word(f"({text},")


def test_a_query_that_matched_through_a_typo_is_marked_fuzzy(find: Search) -> None:
    topic = find("canary kubernetis", aggregation=False, cutoff_ratio=0.0, limit=20)
    assert "docs:kubernetes.md#scheduling" in ids(topic)  # reachable only through the typo
    assert topic.fuzzy and not topic.relaxed


def test_the_elbow_drops_typo_only_matches_below_exact_ones(find: Search) -> None:
    assert ids(find("canary kubernetis", aggregation=False)) == [
        "docs:deploy.md#rolling-back",
        "docs:deploy.md#rolling-out",
    ]


def test_a_phrase_that_matches_nothing_is_relaxed_to_its_words_and_says_so(find: Search) -> None:
    topic = find('"canary dashboards"', aggregation=False, cutoff_ratio=0.0)
    assert topic.relaxed
    assert set(ids(topic)) == {
        "docs:deploy.md#monitoring",
        "docs:deploy.md#rolling-back",
        "docs:deploy.md#rolling-out",
    }
    assert topic.note == "nothing has every phrase and field term; showing chunks with any of the words"


def test_a_phrase_is_required_when_something_has_it(find: Search) -> None:
    topic = find('"container image" canary', aggregation=False, cutoff_ratio=0.0)
    assert ids(topic) == ["docs:deploy.md#building-the-image"] and not topic.relaxed


def test_a_sentence_whose_phrase_few_chunks_have_shows_them_first_then_the_rest(find: Search) -> None:
    sentence = 'how do we roll out the "container image" to the canary cluster'
    topic = find(sentence, aggregation=False, cutoff_ratio=0.0)
    assert ids(topic)[0] == "docs:deploy.md#building-the-image"
    assert len(ids(topic)) > 1 and topic.relaxed
    assert topic.note == "only 1 chunk has every phrase and field term; chunks with any of the words follow"


def test_strict_requires_every_word_and_does_not_relax(find: Search) -> None:
    topic = find("canary dashboards", strict=True)
    assert topic.hits == () and not topic.relaxed
    assert topic.note == "no chunk has every word — drop --strict to rank chunks with any of them"
    assert ids(find("canary region", strict=True, aggregation=False)) == ["docs:deploy.md#rolling-out"]


def test_strict_never_relaxes_a_phrase(find: Search) -> None:
    topic = find('"canary dashboards"', strict=True)
    assert topic.hits == () and not topic.relaxed


def test_a_query_of_unknown_words_returns_nothing_and_suggests_fewer_words(find: Search) -> None:
    topic = find("xylophone quixotic")
    assert topic.hits == () and not topic.relaxed
    assert topic.note == "no results — try fewer or different words"


def test_a_syntax_error_is_read_leniently_and_raises_only_when_strict(find: Search) -> None:
    topic = find("(canary")
    assert ids(topic) == ["docs:deploy.md#rolling-back", "docs:deploy.md#rolling-out"]
    assert topic.note == "query syntax error at column 1 (unbalanced parenthesis); read as: canary"
    with pytest.raises(QuerySyntaxError):
        find("(canary", strict=True)


def test_a_repaired_query_that_is_then_relaxed_says_both(find: Search) -> None:
    topic = find('("canary xylophone"')
    assert topic.relaxed and ids(topic)[0] == "docs:deploy.md#rolling-back"
    assert topic.note is not None
    assert (
        'read as: "canary xylophone"' in topic.note and "showing chunks with any of the words" in topic.note
    )


def test_raw_hands_tantivy_syntax_to_tantivys_parser(find: Search) -> None:
    # for ra, NOT is a (stop) word and both field terms are required; for tantivy NOT excludes
    assert ids(find("title:logging NOT body:request")) == ["docs:logging.md#request-logging"]
    assert "docs:logging.md#request-logging" not in ids(find("title:logging NOT body:request", raw=True))


def test_a_negated_word_excludes_chunks(find: Search) -> None:
    assert ids(find("image -canary", aggregation=False, cutoff_ratio=0.0)) == [
        "docs:deploy.md#building-the-image"
    ]


def test_a_field_term_matches_only_that_field(find: Search) -> None:
    # "monitoring" is a heading, in no path
    assert find("path:monitoring").hits == ()
    assert ids(find("title:monitoring", base=PLAIN)) == ["docs:deploy.md#monitoring"]


def test_body_is_the_chunks_searchable_text_its_body_breadcrumb_and_tags(find: Search) -> None:
    # "dashboards" is in the Monitoring section's body, "monitoring" only in its heading (its
    # breadcrumb's end), "ops" only in the page's tags
    assert ids(find("body:dashboards", base=PLAIN)) == ["docs:deploy.md#monitoring"]
    assert ids(find("body:monitoring", base=PLAIN)) == ["docs:deploy.md#monitoring"]
    sections = ("", "#building-the-image", "#rolling-out", "#rolling-back", "#monitoring")
    with_text = {f"docs:deploy.md{section}" for section in sections}
    assert set(ids(find("body:ops", base=PLAIN))) == with_text
    # a chunk without a body of its own has no searchable text: the sections below stand for it
    below = ids(find("body:deployment", base=PLAIN))
    assert "docs:deploy.md#rolling-out" in below and "docs:deploy.md#deployment" not in below


def test_raw_body_searches_the_searchable_text_as_ras_own_syntax_does(find: Search) -> None:
    assert ids(find("body:monitoring", base=PLAIN, raw=True)) == ["docs:deploy.md#monitoring"]
    assert ids(find("+body:canary -body:image", base=PLAIN, raw=True)) == []
    assert ids(find("+body:canary -body:cluster", base=PLAIN, raw=True)) == ["docs:deploy.md#rolling-back"]
    # in a quoted phrase, `body:` is words
    assert find('"body:monitoring"', base=PLAIN, raw=True).hits == ()


# --- snippets ------------------------------------------------------------------------------------


def test_a_snippet_marks_every_match_with_em(find: Search) -> None:
    hit = find("image", aggregation=False).hits[0]
    assert hit.snippet == (
        "Build the container <em>image</em> with the release tag. The <em>image</em> bundles the worker binary."
    )


def test_a_snippet_marks_stemmed_forms_too(find: Search) -> None:
    assert "<em>handled</em>" in find("handling").hits[0].snippet


def test_a_search_without_snippets_leaves_them_to_with_snippet_which_makes_the_same_ones(
    store: Store, find: Search
) -> None:
    bare = search_topic(store, "image handling", DEFAULT, snippets=False)
    made = [with_snippet(store, hit, bare.terms) for hit in bare.hits]
    assert bare.hits and all(hit.snippet == "" for hit in bare.hits)
    assert made == list(find("image handling").hits)


# --- several topics ------------------------------------------------------------------------------


def test_topics_come_back_in_the_order_given(store: Store) -> None:
    topics = search(store, ["latency", "image", "pager"], PLAIN)
    assert [t.query for t in topics] == ["latency", "image", "pager"]


def test_a_chunk_appears_once_under_the_topic_where_it_ranks_best(store: Store) -> None:
    # image: building (1st), rolling-back (2nd), rolling-out (3rd); canary: rolling-back (1st), rolling-out (2nd)
    image, canary = search(store, ["image", "canary"], PLAIN)
    assert ids(image) == ["docs:deploy.md#building-the-image"]
    assert ids(canary) == ["docs:deploy.md#rolling-back", "docs:deploy.md#rolling-out"]


def test_a_chunk_ranked_equally_in_two_topics_stays_with_the_first(store: Store) -> None:
    first, second = search(store, ["canary", "canary OR cluster"], PLAIN)
    assert ids(first)[0] == "docs:deploy.md#rolling-back"
    assert "docs:deploy.md#rolling-back" not in ids(second)


def test_the_same_topic_twice_leaves_the_second_empty(store: Store) -> None:
    first, second = search(store, ["image", "image"], SearchParams(aggregation_threshold=0.75))
    assert ids(first) == ["docs:deploy.md#deployment"] and second.hits == ()


def test_search_settings_recorded_by_a_build_become_params_and_unknown_keys_are_ignored() -> None:
    params = SearchParams.from_settings(
        {"limit": 3, "global_trees": ["home"], "boosts": {"title": 5.0}, "setting_of_a_newer_ra": 1}
    )
    assert params == SearchParams(limit=3, global_trees=frozenset({"home"}), boosts={"title": 5.0})


def test_a_section_is_its_chunk_and_every_chunk_below_it_in_document_order(store: Store) -> None:
    from ra_query.search.pipeline import section

    doc = store.doc_chunks("docs:kubernetes.md")
    assert len(doc) > 2
    by_id = {c.id: c for c in doc}

    def ancestors(chunk_id: str) -> set[str]:
        found: set[str] = set()
        parent = by_id[chunk_id].parent_id
        while parent is not None:
            found.add(parent)
            parent = by_id[parent].parent_id
        return found

    for chunk in doc:
        expected = [chunk, *(c for c in doc if chunk.id in ancestors(c.id))]
        assert list(section(store, chunk)) == expected


# --- any query -----------------------------------------------------------------------------------

WORDS = ["image", "canary", "the", "how", "do", "I", "kubernetis", "On-call", "latency", "OR", "or"]
PIECES = [*WORDS, '"', "(", ")", "-", "^2", "^", "title:", "tree:docs", "body:", " ", " ", "x:y", "é"]
queries = st.one_of(st.text(max_size=40), st.lists(st.sampled_from(PIECES), max_size=12).map(" ".join))


@settings(max_examples=120, deadline=None)
@given(text=queries)
def test_any_query_is_answered_without_an_error_and_every_result_has_text(store: Store, text: str) -> None:
    topic = search_topic(store, text, SearchParams())
    assert topic.hits or topic.note
    for hit in topic.hits:
        assert hit.record.content().strip() and (hit.record.body.strip() or hit.parts[1:])


# --- exclusions, filters and relaxing stay exact ---------------------------------------------------


def test_the_fuzzy_retry_does_not_exclude_look_alikes_of_an_excluded_word(find: Search) -> None:
    # "requst" is a typo found only by the retry; "everx" must not exclude chunks with "every"
    assert ids(find("title:requst -everx", base=PLAIN)) == ["docs:logging.md#request-logging"]


def test_relaxing_a_query_keeps_an_excluded_phrase_a_phrase(find: Search) -> None:
    topic = find('title:zzzz canary -"previous image"', base=PLAIN)
    assert topic.relaxed and ids(topic) == ["docs:deploy.md#rolling-out"]


def test_an_excluded_split_word_excludes_its_phrase_not_each_part(find: Search) -> None:
    # Rolling back has "previous" but not "previous zzz"
    assert "docs:deploy.md#rolling-back" in ids(find("image -previous-zzz", base=PLAIN))


def test_a_tree_filter_does_not_make_stop_words_go(find: Search) -> None:
    in_docs = {h.id for h in find("how do I", base=PLAIN).hits if h.record.tree == "docs"}
    assert in_docs and {h.id for h in find("tree:docs how do I", base=PLAIN).hits} == in_docs


def test_a_query_of_only_a_tree_filter_asks_for_a_word(find: Search) -> None:
    topic = find("tree:docs")
    assert topic.hits == ()
    assert topic.note == "no words to search for (tree:, kind:, lang: and -word only filter) — add a word"


@pytest.mark.parametrize("query", ["!!!", "😀", "*"])
def test_a_query_with_no_letter_or_digit_says_so(find: Search, query: str) -> None:
    topic = find(query)
    assert topic.hits == ()
    assert topic.note == f"no words to search for ({query!r} has no letter or digit) — add a word"


def test_chunks_that_only_pass_a_filter_do_not_hide_the_chunks_that_match(find: Search) -> None:
    assert set(ids(find("tree:docs OR canary"))) == {
        "docs:deploy.md#rolling-back",
        "docs:deploy.md#rolling-out",
    }


def test_a_relaxed_query_that_matched_through_a_typo_is_marked_fuzzy(find: Search) -> None:
    topic = find('"canry zzzz"', base=PLAIN)
    assert topic.relaxed and topic.fuzzy
    assert "relaxed: in no chunk, matched as typos: canry zzzz" in topic.explain


def test_excluded_words_are_not_highlighted(find: Search) -> None:
    assert "canari" not in find("image -canary").terms


# --- duplicates ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def versions(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """Three versions of one page: v1 and v2 identical, v3 with other Limits text."""
    root = tmp_path_factory.mktemp("versions")
    (root / "home").mkdir()
    kb = root / "kb"
    page = "# Client API\n\n## Connect\n\nOpen a sprocket handle.\n\n## Close\n\nClose the sprocket handle.\n\n## Limits\n\n{}\n"
    for version, limits in (("v1", "At most four."), ("v2", "At most four."), ("v3", "At most eight.")):
        (kb / "docs" / version).mkdir(parents=True)
        (kb / "docs" / version / "api.md").write_text(page.format(limits), encoding="utf-8")
    (kb / ".ra.toml").write_text('root = true\n\n[tree.docs]\npath = "docs"\n', encoding="utf-8")
    build(kb, root / "home")
    return open_store(kb / ".ra")


def test_copies_of_a_chunk_are_shown_once_as_the_newest_version_listing_the_others(versions: Store) -> None:
    topic = search_topic(versions, "open sprocket", SearchParams())
    first = topic.hits[0]
    assert (first.id, first.also) == (
        "docs:v3/api.md#connect",
        ("docs:v1/api.md#connect", "docs:v2/api.md#connect"),
    )


@pytest.fixture(scope="module")
def linked(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """A changelog with no title of its own and a symlink to it (uvicorn's `CHANGELOG.md` →
    `docs/release-notes.md`), and one function in two modules, word for word."""
    root = tmp_path_factory.mktemp("linked")
    (root / "home").mkdir()
    kb = root / "kb"
    (kb / "docs").mkdir(parents=True)
    (kb / "docs" / "release-notes.md").write_text(
        "## 0.2 (May)\n\nThe sprocket pool drains on exit.\n\n## 0.1 (April)\n\nFirst release.\n",
        encoding="utf-8",
    )
    (kb / "CHANGELOG.md").symlink_to("docs/release-notes.md")
    function = "def drain(pool):\n    # empty the sprocket pool before exit\n    pool.clear()\n"
    (kb / "h11_backend.py").write_text(function, encoding="utf-8")
    (kb / "tools_backend.py").write_text(function, encoding="utf-8")
    (kb / ".ra.toml").write_text(
        'root = true\n\n[tree.kb]\npath = "."\ninclude = ["**/*.md", "**/*.py"]\n', encoding="utf-8"
    )
    build(kb, root / "home")
    return open_store(kb / ".ra")


def test_a_page_and_a_symlink_to_it_are_one_result_though_each_is_titled_by_its_file_name(
    linked: Store,
) -> None:
    topic = search_topic(linked, "sprocket pool drains", SearchParams(kinds=("docs",)))
    assert [(h.record.breadcrumb[0], h.also) for h in topic.hits] in (
        [("CHANGELOG", ("kb:docs/release-notes.md#02-may",))],
        [("release-notes", ("kb:CHANGELOG.md#02-may",))],
    )


def test_the_same_function_in_two_files_is_two_results(linked: Store) -> None:
    topic = search_topic(linked, "empty the sprocket pool", SearchParams(kinds=("code",)))
    assert sorted(h.record.path for h in topic.hits) == ["h11_backend.py", "tools_backend.py"]
    assert all(h.also == () for h in topic.hits)


def test_sections_that_differ_only_in_parts_that_did_not_match_are_not_collapsed(versions: Store) -> None:
    topic = search_topic(versions, "sprocket handle", SearchParams(aggregation_threshold=0.5))
    shown = {h.id: h.also for h in topic.hits}
    assert shown == {
        "docs:v1/api.md#client-api": ("docs:v2/api.md#client-api",),
        "docs:v3/api.md#client-api": (),
    }


@settings(max_examples=40, deadline=None)
@given(
    stored=st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=12),
    asked=st.lists(st.text(min_size=1, max_size=6), max_size=8),
    score=st.sampled_from([0.0, 1.0, 2.5]),
)
def test_one_of_matches_what_a_term_set_matches_each_with_the_same_score(
    stored: list[str], asked: list[str], score: float
) -> None:
    import tantivy

    from ra_query.search.compile import one_of

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("id", stored=True, tokenizer_name="raw")
    schema = builder.build()
    index = tantivy.Index(schema)
    writer = index.writer(15_000_000, 1)
    for value in stored:
        writer.add_document(tantivy.Document(id=value))
    writer.commit()
    index.reload()
    searcher = index.searcher()

    def found(query: tantivy.Query) -> list[tuple[float, str]]:
        hits = searcher.search(query, limit=len(stored)).hits
        return sorted((s, searcher.doc(a)["id"][0]) for s, a in hits)

    expected = found(tantivy.Query.term_set_query(schema, "id", asked))
    assert found(one_of(schema, "id", asked, score)) == [(score, value) for _, value in expected]

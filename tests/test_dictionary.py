"""A word no chunk holds in one spelling is searched in its other (ra_query.text.dictionary):
`color` finds the page that says `colour`, and a word that is a word is no typo."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ra_query.text.dictionary import spelling_variants
from tests.test_locales import explained, kb_search, results


@pytest.mark.parametrize(
    ("word", "other"),
    [
        ("color", "colour"),
        ("Colour", "color"),
        ("serialise", "serialize"),
        ("normalization", "normalisation"),
        ("analyze", "analyse"),
        ("canceled", "cancelled"),
        ("centre", "center"),
        ("licence", "license"),
        ("catalog", "catalogue"),
        ("gray", "grey"),
    ],
)
def test_a_word_has_its_other_spelling(word: str, other: str) -> None:
    assert other in spelling_variants(word)


def test_the_word_list_is_the_whole_words_of_the_shipped_models_vocabulary() -> None:
    import orjson

    from ra_query.text.dictionary import english_words

    tokenizer = Path(__file__).parent.parent / "ra_query" / "semantic" / "model" / "tokenizer.json"
    vocabulary = orjson.loads(tokenizer.read_bytes())["model"]["vocab"]
    assert english_words() == {word for word in vocabulary if word.isascii() and word.isalpha()}


@given(st.text(max_size=20))
def test_any_text_gives_other_spellings_of_letters_never_the_word_itself(text: str) -> None:
    variants = spelling_variants(text)
    assert text.lower() not in variants
    assert all(v.isascii() and v.isalpha() for v in variants)


PAINT = {
    "docs/paint.md": "# paint\n\n> Pick a colour for the brush.\n",
    "docs/size.md": "# size\n\n> Pick a size for the brush, or pick another brush.\n",
}


def test_a_word_in_no_chunk_finds_the_chunk_that_spells_it_otherwise(tmp_path: Path) -> None:
    query = results(kb_search(tmp_path, PAINT, "pick a color"))
    assert query[0]["id"] == "kb:docs/paint.md#paint"


def test_explain_says_which_spelling_was_searched(tmp_path: Path) -> None:
    kb_search(tmp_path, PAINT, "brush")
    assert "in no chunk, searched as spelt otherwise: color → colour" in explained(tmp_path, "pick a color")

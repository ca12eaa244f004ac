"""Whether a word no chunk holds is a word of English, not a typo.

A query word that no chunk holds is matched as a typo (ra_query.search.compile): the words one
edit away stand for it. That is right for `recieve` and wrong for `mandatory`, `nearest` or
`computed` in a codebase that never says them: one edit away from a real word is another word,
the search pays a fuzzy match for nothing (milliseconds on a large index), and the response is
marked `fuzzy` when nothing was misspelt. The whole words of the English model's WordPiece
vocabulary (ra_query/semantic/model/tokenizer.json, shipped with ra_query: about 20,000 words of
four letters or more) say which words are words; a misspelling is rarely one of them.
"""

from __future__ import annotations

import os
from functools import cache
from typing import Final

# (os.path: a cold search does not import pathlib)
_PACKAGE: Final = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VOCABULARY: Final = os.path.join(_PACKAGE, "semantic", "model", "tokenizer.json")


@cache
def english_words() -> frozenset[str]:
    """The vocabulary's whole words of letters (lower case; empty when the file is missing or
    unreadable: every unknown word is then matched as a typo, as before)."""
    import orjson

    try:
        with open(VOCABULARY, "rb") as handle:
            vocabulary = orjson.loads(handle.read())["model"]["vocab"]
    except (OSError, ValueError, KeyError, TypeError):
        return frozenset()
    return frozenset(word for word in vocabulary if word.isascii() and word.isalpha())


def is_english_word(text: str) -> bool:
    """Whether `text` (any case; punctuation around it left out: `mandatory,`) is a whole word
    of the vocabulary."""
    return text.strip(_AROUND).lower() in english_words()


_AROUND: Final = "\"'.,;:!?()[]{}<>`*_~"

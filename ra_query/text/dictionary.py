"""Whether a word no chunk holds is a word of English, not a typo.

A query word that no chunk holds is matched as a typo (ra_query.search.compile): the words one
edit away stand for it. That is right for `recieve` and wrong for `mandatory`, `nearest` or
`computed` in a codebase that never says them: one edit away from a real word is another word,
the search pays a fuzzy match for nothing (milliseconds on a large index), and the response is
marked `fuzzy` when nothing was misspelt. The whole words of the English model's WordPiece
vocabulary (ra_query/semantic/model/tokenizer.json, shipped with ra_query: about 20,000 words of
four letters or more) say which words are words; a misspelling is rarely one of them. They are
kept one a line in `english_words.txt` beside this module, read in ~5 ms where parsing the
tokenizer's JSON took 20-35 ms of a cold search (orjson's import included); a test keeps the two
the same (regenerate it from the vocabulary's keys that are ASCII letters, sorted). And a word
spelt the other way (`color` for the project's `colour`) is searched in that spelling
(`spelling_variants`), where the typo match used to find it at a hundredth of its weight.
"""

from __future__ import annotations

import os
from functools import cache
from typing import Final

# (os.path: a cold search does not import pathlib)
WORDS_FILE: Final = os.path.join(os.path.dirname(os.path.abspath(__file__)), "english_words.txt")


@cache
def english_words() -> frozenset[str]:
    """The vocabulary's whole words of letters (lower case; empty when the file is missing or
    unreadable: every unknown word is then matched as a typo, as before)."""
    try:
        with open(WORDS_FILE, encoding="ascii") as handle:
            return frozenset(handle.read().split())
    except (OSError, ValueError):
        return frozenset()


def is_english_word(text: str) -> bool:
    """Whether `text` (any case; punctuation around it left out: `mandatory,`) is a whole word
    of the vocabulary."""
    return text.strip(_AROUND).lower() in english_words()


_AROUND: Final = "\"'.,;:!?()[]{}<>`*_~"


# American and British spellings of one word (`color` / `colour`): (American ending, British
# ending), each tried both ways at the end of a word of five letters or more
_SPELLINGS: Final = (
    ("or", "our"),
    ("ize", "ise"), ("ized", "ised"), ("izes", "ises"), ("izing", "ising"),
    ("ization", "isation"), ("izations", "isations"), ("izer", "iser"), ("izers", "isers"),
    ("yze", "yse"), ("yzed", "ysed"), ("yzes", "yses"), ("yzing", "ysing"),
    ("er", "re"), ("ers", "res"),
    ("ense", "ence"), ("og", "ogue"), ("ogs", "ogues"),
    ("eled", "elled"), ("eling", "elling"), ("eler", "eller"),
)  # fmt: skip


def spelling_variants(word: str) -> list[str]:
    """The other spellings of an English `word` (lower case): `color` → `colour`, `serialise` →
    `serialize`, `canceled` → `cancelled`, `gray` → `grey`; empty for a word of four letters or
    fewer (`here` is not `hree`)."""
    word = word.strip(_AROUND).lower()
    if len(word) < 5 or not word.isascii() or not word.isalpha():
        return [_WORDS[word]] if word in _WORDS else []
    out: list[str] = []
    for american, british in _SPELLINGS:
        for ending, other in ((american, british), (british, american)):
            if word.endswith(ending) and len(word) - len(ending) >= 3:
                variant = word[: len(word) - len(ending)] + other
                if variant not in out:
                    out.append(variant)
    if word in _WORDS:
        out.append(_WORDS[word])
    return out


# whole words spelt two ways
_WORDS: Final = {"gray": "grey", "grey": "gray", "program": "programme", "programme": "program"}

"""The versions of one docs page: a site that keeps a copy of its docs per release.

Versioned documentation keeps each release's pages in a folder of its own — `docs/v1/`,
`docs/v2/`, `docs/v3/` (urfave/cli), Docusaurus's `versioned_docs/version-2.1/` beside `docs/`,
`1.x/` — and a page changes little from one release to the next, so a question matches every
copy alike and they take the top five as if they were different answers. Two docs results are
versions of one page (`same_page`) when their paths say different versions and their texts are
mostly the same (`SAME_PAGE_OVERLAP` of their pairs of consecutive words). The search shows one
of them: the version the query names (`in v2, …`), else the newest — a path with no version is
the current docs, newest of all — at the place of the best of them, with the others listed under
it (ra_query.search.pipeline).
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from typing import Final

# a folder that names a release: v2, v3.1, version-2.1, version_1.0.0, 1.x, 2.0 (not a bare 2:
# numbered folders are chapters as often as releases)
_VERSION_FOLDER: Final = re.compile(
    r"(?:v|version[-_]?)(\d+(?:\.\d+)*)(?:\.x)?|(\d+(?:\.\d+)+|\d+\.x)", re.IGNORECASE
)
# the share of two texts' pairs of consecutive words they have in common (Jaccard) above which
# they are one page: urfave/cli's v1, v2 and v3 copies of a page share 0.6-1.0 of theirs; its
# different pages with code examples in common, under 0.6 (bench/code_search.py's cli docs)
SAME_PAGE_OVERLAP: Final = 0.6
COMPARED_CHARS: Final = 2000  # how much of two texts is compared: copies begin alike
_WORD: Final = re.compile(r"\w+")


def _release_folder(path: str) -> tuple[int, re.Match[str]] | None:
    """The first folder of `path` that names a release (`v2`, `version-1.4`): its place among the
    path's parts and its match."""
    for at, folder in enumerate(path.split("/")[:-1]):
        match = _VERSION_FOLDER.fullmatch(folder)
        if match is not None:
            return at, match
    return None


@functools.lru_cache(maxsize=4096)  # a search asks of each pair of results
def version_of(path: str) -> tuple[float, ...] | None:
    """The release a docs path is the copy of, as numbers (`docs/v2/x.md` → (2,),
    `versioned_docs/version-1.4/x.md` → (1, 4)), or None when no folder of it names one."""
    found = _release_folder(path)
    if found is None:
        return None
    match = found[1]
    digits = (match.group(1) or match.group(2)).removesuffix(".x")
    return tuple(float(part) for part in digits.split("."))


@functools.lru_cache(maxsize=4096)  # asked of each pair of results, as version_of is
def unversioned(path: str) -> str:
    """`path` without the folder that names its release (`docs/v2/x.md` → `docs/x.md`): what the
    versions of one page share when they keep its name."""
    found = _release_folder(path)
    if found is None:
        return path
    parts = path.split("/")
    return "/".join(parts[: found[0]] + parts[found[0] + 1 :])


def named_version(path: str, words: frozenset[str]) -> bool:
    """Whether a query of `words` (lower-cased) names the release of `path`'s folder: `v2` or
    `version-2.1` typed as the folder is, or its number after `version`."""
    found = _release_folder(path)
    if found is None:
        return False
    folder = found[1][0].lower()
    number = re.sub(r"^(?:version[-_]?|v)", "", folder)
    return folder in words or ("version" in words and number in words)


def newest_first(path: str) -> tuple[float, ...]:
    """A sort key that puts the newest version first: a path with no version folder is the
    current docs."""
    version = version_of(path)
    return (-math.inf,) if version is None else tuple(-part for part in version)


def pairs(text: str) -> frozenset[tuple[str, str]]:
    """The pairs of consecutive words of `text`'s first `COMPARED_CHARS`, lower-cased (copies of a
    page begin alike; a search compares a few dozen results at most)."""
    return frozenset(itertools.pairwise(_WORD.findall(text[:COMPARED_CHARS].lower())))


def may_be_copies(a_chars: int, b_chars: int) -> bool:
    """Whether two texts of these lengths can be `same_page`: their word pairs can overlap by
    SAME_PAGE_OVERLAP only where the shorter is at least that share of the longer (both cut at
    COMPARED_CHARS), less a margin for how words and pairs differ from characters."""
    short, long = sorted((min(a_chars, COMPARED_CHARS), min(b_chars, COMPARED_CHARS)))
    return short >= SAME_PAGE_OVERLAP * 0.8 * long


def same_page(a: frozenset[tuple[str, str]], b: frozenset[tuple[str, str]]) -> bool:
    """Whether two texts' word pairs (`pairs`) are mostly the same."""
    union = len(a | b)
    return union > 0 and len(a & b) / union >= SAME_PAGE_OVERLAP

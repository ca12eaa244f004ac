"""The operating system a query names, and the folders docs keep its pages in (issue 33).

"on a Mac", "맥에서", "Windows 노트북", "Linux查看…": a reader who names the system they use wants
its page, and docs keep pages per system in folders named for it (tldr's `osx/`, `windows/`,
`linux/`, `android/`; a guide's `docs/macos/`). The words name the system in the reader's
language, the folder in the project's: `mac` is not `osx`, `윈도우` is not `windows`. A query
that names a system also weighs the chunks whose path has one of its folders
(ra_query.search.compile, `PLATFORM_WEIGHT`).
"""

from __future__ import annotations

import re
from functools import cache
from typing import Final

# the weight of a path folder the query's system names: two words (bench/locales.py, weights 1, 2
# and 3: Korean known items 0.743, 0.771, 0.771 in the top 5, its second set 0.400, 0.433, 0.467;
# no set lost at any of them)
PLATFORM_WEIGHT: Final = 2.0

# (the folder names a system's pages are kept under, the words that name it: Latin words whole,
# lower case; Hangul, Han and kana as written (Latin in them lower case), found inside the
# query's words: `맥에서`)
_PLATFORMS: Final = (
    (
        ("osx", "macos"),
        ("mac", "macos", "macbook", "imac", "osx", "darwin"),
        ("맥북", "맥에서", "맥의", "맥용", "맥os", "맥에", "맥으로", "苹果电脑", "マック"),
    ),
    (
        ("windows",),
        ("windows", "win10", "win11", "powershell"),
        ("윈도우", "윈도", "视窗", "ウィンドウズ"),
    ),
    (
        ("linux",),
        ("linux", "ubuntu", "debian", "fedora", "centos", "archlinux", "rhel"),
        ("리눅스", "우분투", "데비안", "페도라", "乌班图", "リナックス"),
    ),
    (
        ("android",),
        ("android",),
        ("안드로이드", "安卓", "アンドロイド"),
    ),
)
# words that name a system only standing alone: `맥 터미널` is a Mac's, `맥락` (context) is not
_ALONE: Final = {"맥": ("osx", "macos")}
_LATIN_WORD: Final = re.compile(r"[a-z0-9]+")
_WORD: Final = re.compile(r"\w+")
# a network card's MAC address is no Mac
_MAC_ADDRESS: Final = re.compile(r"mac\s*(?:address|addr|주소|地址|アドレス)")


@cache
def _latin() -> dict[str, tuple[str, ...]]:
    return {word: folders for folders, words, _ in _PLATFORMS for word in words}


def platform_folders(text: str) -> tuple[str, ...]:
    """The folder names of the systems `text` names (`맥에서 dmg 열기` → `osx`, `macos`),
    each once, in the order of `_PLATFORMS`; empty when it names none."""
    latin = _latin()
    lowered = _MAC_ADDRESS.sub(" ", text.lower())
    named = {latin[word] for word in _LATIN_WORD.findall(lowered) if word in latin}
    named.update(folders for folders, _, written in _PLATFORMS if any(w in lowered for w in written))
    named.update(_ALONE[word] for word in _WORD.findall(lowered) if word in _ALONE)
    return tuple(folder for folders, _, _ in _PLATFORMS if folders in named for folder in folders)

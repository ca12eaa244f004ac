"""Which characters a GitHub heading slug keeps (github-slugger's rule), for both sides.

The build slugs headings with it (ra_build.document.chunk.slugify); `ra get` uses it to tell the slug of
an id from a `#` that belongs to a file name.
"""

import unicodedata

# the general categories github-slugger removes (its script/generate-regex.js): other numbers,
# all punctuation but connector punctuation (`_`, `‿`) and `-`, symbols, controls, format,
# unassigned and private-use characters, separators but the space
_DROPPED = frozenset(
    {
        "No",
        "Pd",
        "Pe",
        "Pf",
        "Pi",
        "Po",
        "Ps",
        "Sc",
        "Sk",
        "Sm",
        "So",
        "Cc",
        "Cf",
        "Cn",
        "Co",
        "Cs",
        "Zl",
        "Zp",
        "Zs",
    }
)
# symbols with the Alphabetic property, which it keeps: circled, squared and negative letters
_ALPHABETIC_SYMBOLS = ((0x24B6, 0x24E9), (0x1F130, 0x1F149), (0x1F150, 0x1F169), (0x1F170, 0x1F189))


def slug_keeps(c: str) -> bool:
    """Whether a (lowercased) heading character survives into the slug; a space becomes `-`."""
    if c in " -":
        return True
    category = unicodedata.category(c)
    if category not in _DROPPED:
        return True
    return category == "So" and any(lo <= ord(c) <= hi for lo, hi in _ALPHABETIC_SYMBOLS)

"""The query set of bench/query.py: ≥ 300 mixed queries derived from a corpus with a fixed seed.

Cmdlet nouns and verbs, cmdlet names, title words, two and three words of one line, quoted
phrases, one-edit typos, OR, ``-term`` exclusions, field queries, long sentence-like queries and
nonsense, in that order, written to bench/results/query_set.txt as ``type<TAB>query`` so that runs
stay comparable: the same corpus and seed give the same file, byte for byte.
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from common import REPO

QUERY_SET = REPO / "bench" / "results" / "query_set.txt"
SEED = 20261122


def markdown_files(root: Path) -> list[Path]:
    """Every .md file under `root` that ra indexes (dot files and dot directories skipped), sorted."""
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        out.extend(Path(dirpath, f) for f in filenames if f.endswith(".md") and not f.startswith("."))
    return sorted(out)


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_CMDLET = re.compile(r"^([A-Z][a-z]+)-([A-Za-z][A-Za-z0-9]+)$")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MARKUP = re.compile(r"[*_`<>\[\]{}|#]")
_STOP = """a an and are as at be by can for from has have if in into is it its may not of on or such that
    the their then there these this to was were when which will with you your use used using example
    see also more information about following get set"""
STOPWORDS = frozenset(_STOP.split())
# how many of each type; the order here is the order in the file
COUNTS: dict[str, int] = {
    "noun": 40,  # a cmdlet noun: ADUser
    "verb": 10,  # a cmdlet verb: Get (huge posting lists)
    "cmdlet": 20,  # Get-ADUser (the analyzer splits it: a phrase)
    "title_word": 15,  # a word of a conceptual article's file name
    "two_words": 45,  # two words of one prose line
    "three_words": 35,
    "phrase": 30,  # "two to four consecutive words" of a prose line
    "typo": 20,  # one edit of a word (exercises the fuzzy fallback)
    "or": 15,  # a OR b (OR c)
    "exclude": 15,  # a b -c
    "field": 25,  # title:, path:, body:, title:"…", title:(a OR b)
    "long": 35,  # 8–14 words of a prose line (exercises relaxation)
    "nomatch": 15,  # nonsense: exact, fuzzy and relaxed passes all run and find nothing
}


@dataclass(frozen=True)
class Query:
    """One query of the set and what kind it is."""

    kind: str
    text: str


def prose_lines(text: str) -> list[str]:
    """Lines of running text: no frontmatter, code fences, tables or headings; markup removed."""
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), 0)
        lines = lines[end + 1 :]
    out: list[str] = []
    fenced = False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or not stripped or stripped.startswith(("|", "#", ">", "-", "PS ", "<")):
            continue
        clean = _MARKUP.sub(" ", _LINK.sub(r"\1", stripped))
        if len(_WORD.findall(clean)) >= 6:
            out.append(clean)
    return out


def content_words(line: str) -> list[str]:
    """The words of `line` worth searching for: 3+ characters, not stopwords, in order, unique."""
    seen: dict[str, None] = {}
    for w in _WORD.findall(line):
        if len(w) >= 3 and w.lower() not in STOPWORDS:
            seen.setdefault(w, None)
    return list(seen)


def one_edit(word: str, rng: random.Random, vocabulary: set[str]) -> str:
    """`word` with one deletion, substitution or insertion inside it, not itself a corpus word."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    for _ in range(50):
        i = rng.randrange(1, len(word) - 1)  # keep the first letter: typos there are rare
        kind = rng.choice(("delete", "substitute", "insert"))
        if kind == "delete":
            typo = word[:i] + word[i + 1 :]
        elif kind == "substitute":
            typo = word[:i] + rng.choice(letters.replace(word[i].lower(), "")) + word[i + 1 :]
        else:
            typo = word[:i] + rng.choice(letters) + word[i:]
        if typo.lower() not in vocabulary:
            return typo
    return word + "q"


def nonsense(rng: random.Random) -> str:
    """A pronounceable-looking word no corpus contains (consonant clusters no language uses)."""
    return "".join(rng.choice("bcdfghjklmnpqrstvwxz") + rng.choice("qxzj") for _ in range(rng.randint(3, 5)))


def make_query_set(corpus: Path, seed: int = SEED) -> list[Query]:
    """The benchmark's queries, derived deterministically from the files of `corpus`."""
    rng = random.Random(seed)
    files = markdown_files(corpus)
    if not files:
        raise SystemExit(f"{corpus}: no markdown files")
    stems = sorted({p.stem for p in files})
    cmdlets = [m for m in (_CMDLET.match(s) for s in stems) if m]
    nouns = sorted({m.group(2) for m in cmdlets})
    verbs = sorted({m.group(1) for m in cmdlets})
    names = sorted({m.group(0) for m in cmdlets})
    title_words = sorted(
        {
            w
            for p in files
            if not _CMDLET.match(p.stem)
            for w in re.split(r"[^A-Za-z0-9]+", p.stem.replace("about_", ""))
            if len(w) >= 4 and w.lower() not in STOPWORDS and not w.isdigit()
        }
    )
    modules = sorted({p.parent.name for p in files if _CMDLET.match(p.stem)})

    sample = rng.sample(files, min(600, len(files)))
    lines: list[str] = []
    vocabulary: set[str] = {n.lower() for n in nouns}
    for path in sample:
        found = prose_lines(path.read_text(encoding="utf-8", errors="replace"))
        vocabulary.update(w.lower() for line in found for w in _WORD.findall(line))
        lines.extend(found[:8])  # a few per file, so no one long file dominates
    rich = [line for line in lines if len(content_words(line)) >= 4]
    long_lines = [line for line in lines if len(_WORD.findall(line)) >= 10]
    body_words = sorted({w for line in rich for w in content_words(line) if len(w) >= 7 and w.isalpha()})

    def words_of_line(n: int) -> list[str]:
        words = content_words(rng.choice(rich))
        start = rng.randrange(0, len(words) - n + 1)
        return words[start : start + n]

    makers: dict[str, Callable[[], str]] = {
        "noun": lambda: rng.choice(nouns),
        "verb": lambda: rng.choice(verbs),
        "cmdlet": lambda: rng.choice(names),
        "title_word": lambda: rng.choice(title_words),
        "two_words": lambda: " ".join(words_of_line(2)),
        "three_words": lambda: " ".join(words_of_line(3)),
        "phrase": lambda: _phrase(rng, rng.choice(rich)),
        "typo": lambda: one_edit(
            rng.choice(nouns if rng.random() < 0.5 else body_words), rng, vocabulary
        ).lower(),
        "or": lambda: " OR ".join(
            rng.sample(nouns, 2) if rng.random() < 0.5 else words_of_line(rng.choice((2, 3)))
        ),
        "exclude": lambda: _exclusion(rng, words_of_line(3), verbs),
        "field": lambda: _field(rng, nouns, names, modules, words_of_line),
        "long": lambda: _long(rng, rng.choice(long_lines), verbs, nouns),
        "nomatch": lambda: _nomatch(rng),
    }
    queries: list[Query] = []
    for kind, count in COUNTS.items():
        seen: set[str] = set()
        while len(seen) < count:
            text = " ".join(makers[kind]().split())
            if text and text not in seen:
                seen.add(text)
                queries.append(Query(kind, text))
    return queries


def _phrase(rng: random.Random, line: str) -> str:
    words = _WORD.findall(line)
    n = rng.randint(2, 4)
    start = rng.randrange(0, len(words) - n + 1)
    return '"' + " ".join(words[start : start + n]) + '"'


def _exclusion(rng: random.Random, words: list[str], verbs: list[str]) -> str:
    if rng.random() < 0.3:
        return f"{words[0]} -{rng.choice(verbs)}"
    return f"{words[0]} {words[1]} -{words[2]}"


def _field(
    rng: random.Random,
    nouns: list[str],
    names: list[str],
    modules: list[str],
    words_of_line: Callable[[int], list[str]],
) -> str:
    shape = rng.randrange(5)
    if shape == 0:
        return f"title:{rng.choice(nouns)}"
    if shape == 1:
        return f'title:"{rng.choice(names)}"'
    if shape == 2:
        a, b = rng.sample(nouns, 2)
        return f"title:({a} OR {b})"
    if shape == 3:
        return f"path:{rng.choice(modules)} {rng.choice(nouns)}"
    a, b = words_of_line(2)
    return f"body:{a} {b}"


def _long(rng: random.Random, line: str, verbs: list[str], nouns: list[str]) -> str:
    # a lone "or" would turn the sentence into an OR query; these are meant to exercise relaxation
    words = [w for w in _WORD.findall(line) if w.lower() != "or"]
    n = min(len(words), rng.randint(8, 14))
    start = rng.randrange(0, len(words) - n + 1)
    text = " ".join(words[start : start + n])
    if rng.random() < 0.3:  # the way an agent asks
        text = f"how do I {rng.choice(verbs).lower()} {rng.choice(nouns)} {text}"
    return text


def _nomatch(rng: random.Random) -> str:
    shape = rng.randrange(3)
    if shape == 0:
        return nonsense(rng)
    if shape == 1:
        return f"{nonsense(rng)} {nonsense(rng)}"
    return f'"{nonsense(rng)} {nonsense(rng)}"'


def write_query_set(queries: Sequence[Query], path: Path) -> bool:
    """Write the set (``kind<TAB>query`` lines); True when it differs from what was there."""
    text = "".join(f"{q.kind}\t{q.text}\n" for q in queries)
    old = path.read_text(encoding="utf-8") if path.exists() else None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return old is not None and old != text

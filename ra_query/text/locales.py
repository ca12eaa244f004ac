"""Natural languages (issue 33): what language a document and a query are in, which documents
are translations of one page, and the text transforms that make a language's words searchable.

Both sides use this module, so a query's words are split exactly as the build split the text:

- **A document's language** (`document_locale`): its frontmatter's `lang`, `language` or
  `locale`; else its path, by the conventions of the common doc tools (`pages.ja/` as tldr,
  `i18n/ja/` as Docusaurus, a `ja/` top folder as Hugo and MkDocs, `intro.ja.md` as
  mkdocs-static-i18n); else its script, when the text is mostly of one that names a language
  (kana: Japanese, Hangul: Korean, Han alone: Chinese, …); else its tree's `language` (`en`).
  A locale is written lower case with `-` (`pt-br`, `zh-tw`).
- **A query's language**: its script's (`script_locale`), else unknown (the search shows the
  default language's translation where it matched nearly as well: ra_query.search.pipeline).
- **Translations** (`translation_key`): the same path with its language part taken out
  (`pages.ja/common/tar.md` and `pages/common/tar.md` are `pages/common/tar.md`), or the
  frontmatter's `translation_key`.
- **Chinese and Japanese** are written without spaces between words, and the analyzer splits
  only at spaces and punctuation: `cjk_terms` writes each run of their characters as its
  overlapping pairs (`ファイルを圧縮` → `ファ ァイ イル ルを を圧 圧縮`), as Lucene's CJK analyzer
  does, then its Han characters one by one (`圧 縮`, as Lucene's `outputUnigrams`), in the text
  the build indexes and in every query; a lone character stays. The single characters found
  0.714 → 0.800 of bench/locales.py's Japanese known items and 0.600 → 0.657 of its Chinese
  (lexical; a query's single characters weighed less than its pairs found fewer). **Korean**
  is written with spaces: its words stay as written (pairs of syllables found fewer pages on
  bench/locales.py's Korean set), and a word that ends in a particle or a verb's ending is
  searched without it too (`korean_stems`: `폴더를` → `폴더`), as a stem is, and the index holds
  each beginning of a word (`korean_word_starts`: `폴더를` → `폴더`, `열고있는` → `열고`, `열고있`):
  the stems found 0.629 → 0.714 of bench/locales.py's Korean known items (0.514 → 0.686 typed
  as bare nouns), the beginnings 0.771 → 0.800 (0.800 → 0.829).
- **Thai and Lao** are written without spaces as well: a run of their letters is written as its
  overlapping pairs, its tone marks left out (the tokenizer splits a word at them). **Half-width
  katakana** (`ﾌｧｲﾙ`) is written full-width (NFKC) first.
- **Stems per language**: a document in a language with a Snowball stemmer of its own that is not
  the index's (`own_stemmer`: German in an English index) holds its words' stems in that
  language beside its words (`language_stems`), and a query that says its language searches its
  words' stems in it too; both pass the index's analyzer after, so the two meet.
- **Mnemonic brackets** (`E[x]tract`, `[f]ile`, tldr's way to show an option's letter): the
  word is indexed whole too (`mnemonic_words`); `array[i]` and `[a link](…)` are not words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, Final

DEFAULT_LOCALE: Final = "en"
# the languages the embedding model ra ships knows (all-MiniLM-L6-v2 was trained on English): a
# document in another is not embedded, a query in another is searched by words only
EMBEDDED_LANGUAGES: Final = frozenset({"en"})
# ISO 639-1 codes a folder or file name is taken for (a longer list would take `it/` of
# integration tests, `id/` of ids, … as languages more often than it finds one)
LANGUAGES: Final = frozenset(
    """af ar az be bg bn bs ca cs cy da de el en eo es et eu fa fi fr ga gl gu he hi hr hu hy id is
    it ja ka kk km kn ko ku ky lo lt lv mk ml mn mr ms my nb ne nl nn no pa pl ps pt ro ru si sk sl
    sq sr sv sw ta te th tl tr uk ur uz vi zh""".split()  # noqa: SIM905  # a code list reads best as text
)
_LOCALE = re.compile(r"^([a-z]{2})(?:[-_]([a-z]{2}|[a-z]{4}))?$", re.IGNORECASE)
_TLDR = re.compile(r"^pages\.([A-Za-z_-]+)$")
_WORD = re.compile(r"[^\W\d_]+")
_I18N_FOLDERS: Final = frozenset({"i18n", "locales", "locale", "translations", "lang", "l10n"})
_TOP_FOLDERS: Final = frozenset({"docs", "doc", "content", "site", "website", "documentation"})
_SUFFIXED = re.compile(r"^(.+)\.([A-Za-z]{2}(?:[-_][A-Za-z]{2,4})?)\.([A-Za-z]+)$")
_DOCUSAURUS = re.compile(r"^docusaurus-plugin-content-(docs|blog|pages)$")
# where a Docusaurus site keeps the originals its plugins' translations stand for
_DOCUSAURUS_SOURCES: Final = {"docs": ("docs",), "blog": ("blog",), "pages": ("src", "pages")}
_DOCUSAURUS_VERSIONS: Final = "versioned_docs"  # the docs of earlier releases: `version-2.0/…`

# the scripts that name a language (a script several languages share names the most common one).
# These and the CJK classes below are compiled on first use (`_pattern`): a class of thousands of
# characters takes Python 1.5-3 ms to compile, 15 ms in all, which every `ra-query` start paid
# (a query or a text with no character from U+0370 on needs none of them: `_beyond`)
_SCRIPTS: Final = (
    ("ja", r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]"),  # kana: Japanese
    ("ko", r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]"),  # Hangul: Korean
    ("zh", r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"),  # Han alone: Chinese
    ("ru", r"[\u0400-\u04ff]"),
    ("ar", r"[\u0600-\u06ff]"),
    ("he", r"[\u0590-\u05ff]"),
    ("el", r"[\u0370-\u03ff]"),
    ("hi", r"[\u0900-\u097f]"),
    ("th", r"[\u0e00-\u0e7f]"),
)
_FIRST_SCRIPT: Final = "\u0370"  # the first character of any of them
_LETTER = re.compile(r"[^\W\d_]")
# the words that say a Latin-script text's language: its commonest function words, none of them
# an English word (`die` and `an` are left out), and the letters only it writes
_FUNCTION_WORDS: Final = {
    locale: frozenset(words.split())
    for locale, words in (
        ("de", "der das und ist nicht ich wie mit auf für von den dem des ein eine einen einem einer zu im "
         "ins aus bei nach über oder auch wenn kann mein meine alle sich wird werden datei dateien ordner "
         "du unter welche gerade"),
        ("fr", "les une et est pas je comment avec pour dans sur aux qui que cette mes sans tous toutes "
         "fichier fichiers dossier dossiers un le la du des au à en se il qu quel quels quelle ce"),
        ("es", "el los las una y es cómo como con para por que mis sin todos todas archivo archivos carpeta "
         "un la le en se del al"),
        ("pt", "uma é não como com para por da dos das que sem meu minha arquivo arquivos pasta um à em se"),
        ("it", "il gli una è con della che senza mio mia tutti cartella un la le se del al"),
        ("nl", "het een niet hoe met voor van uit bij naar alle bestand bestanden en"),
    )
}  # fmt: skip
MIN_SAID_WORDS = 3  # a shorter query is a name (`du`, `git commit`), not a sentence in a language
# a function word of at most this many letters counts half: alone it is as often a code word
# (`com` of `example.com`, `y` of `x if c else y`) or another language's (`un`) as a word of its own
SHORT_WORD = 3
_LETTERS: Final = (
    ("de", re.compile("[äöüß]", re.IGNORECASE)),
    ("fr", re.compile("[èêçœùû]", re.IGNORECASE)),
    ("es", re.compile("[ñ¿¡]", re.IGNORECASE)),
    ("pt", re.compile("[ãõ]", re.IGNORECASE)),
)
SCRIPT_SHARE: Final = 0.2  # of a text's letters, for its script to name its language
# the languages of LANGUAGES written in another script than Latin letters, and those written in
# either (a top folder named as one of these is checked against its document's script)
_OTHER_SCRIPT: Final = frozenset(
    """ar be bg bn el fa gu he hi hy ja ka kk km kn ko ky lo mk ml mn mr my ne pa ps ru si ta te th
    uk ur zh""".split()  # noqa: SIM905  # a code list reads best as text
)
_EITHER_SCRIPT: Final = frozenset({"sr", "bs", "uz", "az", "ku"})
# English function words no other language written in Latin letters writes as a word of its own
# (not `is`, `was`, `of`, `are`: Dutch, Afrikaans, German and Romanian write them too)
_ENGLISH_WORDS: Final = frozenset(
    "the and with this that these those you your from which what how when".split()  # noqa: SIM905
)
ENGLISH_SHARE: Final = 0.05  # of a text's words, for it to read as English
_CODE: Final = r"(?s)```.*?(?:```|$)|~~~.*?(?:~~~|$)|`[^`\n]*`"  # fenced blocks and code spans
FOLDER_SCRIPT_SHARE: Final = 0.05  # of a text's letters in its script, for a folder's language to stand
SAMPLE: Final = 4000  # characters of a document read for its script

# the characters written without spaces between words: Han and kana (Korean has spaces)
_CJK_RUN: Final = r"[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]{2,}"
# the Han characters (Chinese hanzi, Japanese kanji), each a term of its own too: a word of two
# written with one of its characters changed (`统计` and `计数`, count) still shares one
_HAN: Final = r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"
_CJK_ANY: Final = r"[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]"
_FIRST_CJK: Final = "\u3040"
# where Hangul meets a Latin letter or a digit: Korean writes its particles against a Latin word
# (`gzip으로`, `PDF에서`), which the analyzer would keep as one word
_HANGUL_LATIN: Final = r"(?<=[A-Za-z0-9])(?=[\uac00-\ud7a3])|(?<=[\uac00-\ud7a3])(?=[A-Za-z0-9])"
_FIRST_HANGUL: Final = "\u1100"
# Thai and Lao: letters, vowel signs and marks, written without spaces between words; the marks
# tantivy's tokenizer drops inside a word (tone marks, thanthakhat: it would split the word there)
_THAI_RUN: Final = r"[\u0e01-\u0e3a\u0e40-\u0e4e\u0e81-\u0ebd\u0ec0-\u0ecd]{2,}"
_THAI_MARKS: Final = r"[\u0e47-\u0e4c\u0e4e\u0ec8-\u0ecd]"
_FIRST_THAI: Final = "\u0e01"
# half-width katakana (and its voicing marks), which NFKC writes full-width as a Japanese page does
_HALFWIDTH_KANA: Final = r"[\uff61-\uff9f]+"
_FIRST_HALFWIDTH_KANA: Final = "\uff61"
_HANGUL_SYLLABLE: Final = r"[\uac00-\ud7a3]"
# where Han or kana meets a Latin letter or a digit (`用gzip`, `在Linux上`): a run of one character
# gets no pairs, and the analyzer would keep it and the Latin word as one word
_CJK_LATIN: Final = (
    r"(?<=[A-Za-z0-9])(?=[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f])"
    r"|(?<=[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f])(?=[A-Za-z0-9])"
)
# a word with a bracketed letter or two inside or in front (`E[x]tract`, `[f]ile`, `g[z]ipped`):
# letters must follow the last bracket, so `array[i]` is no such word, and a link's `](` never is
_MNEMONIC = re.compile(r"(?<![\w\]])((?:[^\W\d_]*\[[^\W\d_]{1,2}\])+[^\W\d_]+)(?![\[(])")


def normalized(locale: str) -> str | None:
    """`locale` as ra writes it (`pt_BR` → `pt-br`), or None when it is not a language code."""
    match = _LOCALE.match(locale.strip())
    if not match or match.group(1).lower() not in LANGUAGES:
        return None
    region = match.group(2)
    return match.group(1).lower() + (f"-{region.lower()}" if region else "")


def base(locale: str) -> str:
    """The language of a locale, without its region (`pt-br` → `pt`)."""
    return locale.split("-", 1)[0]


def path_locale(path: str, text: str | None = None) -> str | None:
    """The language a document's path says (`/`-separated, relative to its tree), if any. A top
    folder named as a language (`ja/…`, `docs/ja/…`) is also an English word often enough (`ml/`,
    `it/`, `id/`, `no/`): given the document's `text`, such a folder does not count when the text
    is written in another script than the language's or, for a language written in Latin letters,
    is plainly English (`_contradicts`). `pages.ja/`, `i18n/ja/` and `….ja.md` always count."""
    parts = path.split("/")
    for depth, part in enumerate(parts[:-1]):
        tldr = _TLDR.match(part)
        if tldr:
            return normalized(tldr.group(1))
        if part.lower() in _I18N_FOLDERS and depth + 1 < len(parts) - 1:
            found = normalized(parts[depth + 1])
            if found:
                return found
        if depth == 0 or (depth == 1 and parts[0].lower() in _TOP_FOLDERS):
            found = normalized(part) if len(part) in (2, 5) or len(part) == 7 else None
            if found and not (text is not None and _contradicts(found, text)):
                return found
    suffixed = _SUFFIXED.match(parts[-1])
    return normalized(suffixed.group(2)) if suffixed else None


def _contradicts(locale: str, text: str) -> bool:
    """Whether `text` cannot be in `locale`'s language: it is in another script than the
    language's (Latin text in a `ml/` folder is not Malayalam), or it is English in a folder of
    a language written in Latin letters (`it/`, `id/`, `no/` of an English site)."""
    language = base(locale)
    if language in _EITHER_SCRIPT:
        return False
    text = _pattern(_CODE).sub(" ", text[: SAMPLE * 4])[:SAMPLE]  # a translation keeps its code as it was
    letters = _LETTER.findall(text)
    import unicodedata  # the build's question (a search never asks it): Vietnamese `ệ` is Latin, `я` not

    other = sum(1 for c in letters if c >= _FIRST_SCRIPT and not unicodedata.name(c, "").startswith("LATIN"))
    if language in _OTHER_SCRIPT:  # a translation keeps its commands and names in Latin letters
        return other < FOLDER_SCRIPT_SHARE * len(letters)
    if other >= SCRIPT_SHARE * len(letters) and letters:
        return True
    return language != "en" and _english(text)


def _english(text: str) -> bool:
    """Whether `text` reads as English prose: at least ENGLISH_SHARE of its words (and three)
    are English function words no other language written in Latin letters writes."""
    words = _WORD.findall(text[:SAMPLE].lower())
    found = sum(1 for word in words if word in _ENGLISH_WORDS)
    return found >= 3 and found >= ENGLISH_SHARE * len(words)


def script_locale(text: str) -> str | None:
    """The language a text's script names, when at least `SCRIPT_SHARE` of its letters are of
    that script (kana before Han: Japanese is written with both), else None (Latin: any)."""
    sample = text[:SAMPLE]
    if not _beyond(sample, _FIRST_SCRIPT):
        return None
    letters = len(_LETTER.findall(sample))
    if not letters:
        return None
    for locale, script in _SCRIPTS:
        found = len(_pattern(script).findall(sample))
        if locale == "zh":  # Han with kana is Japanese (handled above), with Hangul Korean
            if found and found / letters >= SCRIPT_SHARE:
                return locale
        elif found and found / letters >= (SCRIPT_SHARE if locale not in ("ja", "ko") else 0.05):
            return locale
    return None


def latin_locale(text: str) -> str | None:
    """The language a Latin-script query says by its function words (`wie`, `comment`) or by
    letters only one language writes (`ß`, `ç`, `ñ`), else None (English, or it does not say)."""
    found = [w.lower() for w in _WORD.findall(text)]
    counts = {
        locale: sum(1.0 if len(w) > SHORT_WORD else 0.5 for w in found if w in words)
        for locale, words in _FUNCTION_WORDS.items()
    }
    best = max(counts, key=lambda locale: counts[locale])
    if len(found) >= MIN_SAID_WORDS and counts[best] >= 1 and list(counts.values()).count(counts[best]) == 1:
        return best
    return next((locale for locale, letters in _LETTERS if letters.search(text)), None)


FRONTMATTER_KEYS: Final = ("lang", "language", "locale")  # the keys a page says its language by


def frontmatter_locale(value: object) -> str | None:
    """A frontmatter `lang` value as a locale (`pt_BR` → `pt-br`, `zh-Hant-TW` → `zh-hant`: a
    BCP 47 tag's first two parts), or None when it is not a language code. An unquoted `lang: no`
    (Norwegian) is YAML 1.1's false: it is `no`."""
    if value is False:
        return "no"
    if not isinstance(value, str):
        return None
    found = normalized(value)
    parts = re.split(r"[-_]", value.strip())
    if found is None and len(parts) > 2:
        found = normalized("-".join(parts[:2]))
    return found


def document_locale(path: str, meta: Mapping[str, object], text: str, default: str = DEFAULT_LOCALE) -> str:
    """A document's language: frontmatter, path (a top folder checked against the text:
    `path_locale`), script, else `default` (the tree's)."""
    for key in FRONTMATTER_KEYS:
        found = frontmatter_locale(meta.get(key))
        if found:
            return found
    return path_locale(path, text) or script_locale(text) or default


def translation_key(path: str, meta: Mapping[str, object] | None = None, locale: str | None = None) -> str:
    """What a document and its translations share: the frontmatter's `translation_key`, else its
    path with the language part taken out (`pages.ja/common/tar.md` → `pages/common/tar.md`,
    `i18n/ja/docusaurus-plugin-content-docs/current/intro.md` → `docs/intro.md`,
    `i18n/ja/docusaurus-plugin-content-docs/version-2.0/intro.md` →
    `versioned_docs/version-2.0/intro.md`, `docs/ja/intro.md` → `docs/intro.md`, `intro.ja.md` →
    `intro.md`). Given the document's `locale`, a part is taken out only when it names that
    language (an English page in `ml/` keeps its path: `path_locale`)."""
    key = (meta or {}).get("translation_key")
    if isinstance(key, str) and key.strip():
        return "key:" + key.strip()

    def says(part: str) -> bool:
        found = normalized(part)
        return found is not None and (locale is None or base(found) == base(locale))

    parts = path.split("/")
    for depth, part in enumerate(parts[:-1]):
        tldr = _TLDR.match(part)
        if tldr and says(tldr.group(1)):
            return "/".join([*parts[:depth], "pages", *parts[depth + 1 :]])
        if part.lower() in _I18N_FOLDERS and depth + 1 < len(parts) - 1 and says(parts[depth + 1]):
            rest = parts[depth + 2 :]
            plugin = _DOCUSAURUS.match(rest[0]) if len(rest) > 1 else None
            if plugin is not None:  # the docs' translations sit in a version folder (`current/`)
                docs = plugin.group(1) == "docs"
                if docs and len(rest) > 2 and rest[1] != "current":  # an earlier release's
                    rest = [_DOCUSAURUS_VERSIONS, *rest[1:]]
                elif not docs or len(rest) > 2:
                    rest = [*_DOCUSAURUS_SOURCES[plugin.group(1)], *rest[2 if docs else 1 :]]
            return "/".join(rest)
        if (depth == 0 or (depth == 1 and parts[0].lower() in _TOP_FOLDERS)) and says(part):
            return "/".join([*parts[:depth], *parts[depth + 1 :]])
    suffixed = _SUFFIXED.match(parts[-1])
    if suffixed and says(suffixed.group(2)):
        return "/".join([*parts[:-1], f"{suffixed.group(1)}.{suffixed.group(3)}"])
    return path


def has_cjk(text: str) -> bool:
    """Whether `text` holds a Han or kana character (Chinese, Japanese, or Korean written in
    Han): the scripts written without spaces."""
    return _beyond(text, _FIRST_CJK) and _pattern(_CJK_ANY).search(text) is not None


def has_hangul(text: str) -> bool:
    """Whether `text` holds a Hangul syllable."""
    return _beyond(text, _FIRST_HANGUL) and _pattern(_HANGUL_SYLLABLE).search(text) is not None


def cjk_terms(text: str) -> str:
    """`text` with each run of Chinese or Japanese characters written as its overlapping pairs,
    then its Han characters one by one, space-separated (a run of one character stays as it is,
    apart from Latin letters and digits written against it: `用gzip` → `用 gzip`); half-width
    katakana as full-width first (`ﾌｧｲﾙ` → `ファイル`, NFKC); Korean words stay as written, apart
    from Latin letters and digits they are written against (`gzip으로` → `gzip 으로`); a run of
    Thai or Lao letters — written without spaces between words — as its overlapping pairs, its
    tone marks left out (the analyzer drops them, and would drop a run of over 40 bytes whole)."""
    top = max(text) if text else ""  # a Latin text (most) is answered without a class compiled
    if top >= _FIRST_THAI and _pattern(_THAI_RUN).search(text) is not None:
        text = _pattern(_THAI_RUN).sub(_thai_pairs, text)
    if top >= _FIRST_HANGUL and _pattern(_HANGUL_LATIN).search(text) is not None:
        text = _pattern(_HANGUL_LATIN).sub(" ", text)
    if top >= _FIRST_HALFWIDTH_KANA and _pattern(_HALFWIDTH_KANA).search(text) is not None:
        import unicodedata  # only for half-width kana: a search's import stays as it was

        text = _pattern(_HALFWIDTH_KANA).sub(lambda match: unicodedata.normalize("NFKC", match[0]), text)
    if not has_cjk(text):
        return text
    text = _pattern(_CJK_LATIN).sub(" ", text)

    def pairs(match: re.Match[str]) -> str:
        run = match[0]
        return (
            " "
            + " ".join([*(run[i : i + 2] for i in range(len(run) - 1)), *_pattern(_HAN).findall(run)])
            + " "
        )

    return _pattern(_CJK_RUN).sub(pairs, text)


def _thai_pairs(match: re.Match[str]) -> str:
    """A run of Thai or Lao letters as its overlapping pairs, without its tone marks."""
    run = _pattern(_THAI_MARKS).sub("", match[0])
    return " " + " ".join(run[i : i + 2] for i in range(len(run) - 1)) + " " if len(run) > 1 else run


def translation_paths(key: str, locale: str) -> list[str]:
    """Where the translation in `locale` of the page whose `translation_key` is `key` is kept, by
    the conventions `translation_key` reads (its inverse), the likeliest first: the key's own
    path (the original's: `pages/common/tar.md`, `docs/intro.md`, `intro.md`), `pages.ja/…`
    (tldr), `i18n/ja/docusaurus-plugin-content-docs/current/…` and the blog's and pages'
    (Docusaurus), `i18n/ja/…`, `ja/…` (Hugo, MkDocs), `docs/ja/…`, `….ja.md`
    (mkdocs-static-i18n); none for a frontmatter key. Each has `key` as its translation key."""
    if not key or key.startswith("key:"):
        return []
    parts = key.split("/")
    folders, name = parts[:-1], parts[-1]
    found = [key]
    if "pages" in folders:
        at = folders.index("pages")
        found.append("/".join([*parts[:at], f"pages.{locale}", *parts[at + 1 :]]))
    for plugin, source in _DOCUSAURUS_SOURCES.items():
        if len(parts) > len(source) and tuple(parts[: len(source)]) == source:
            version = ["current"] if plugin == "docs" else []
            inside = parts[len(source) :]
            found.append("/".join(["i18n", locale, f"docusaurus-plugin-content-{plugin}", *version, *inside]))
    if len(parts) > 2 and parts[0] == _DOCUSAURUS_VERSIONS and parts[1] != "current":
        found.append("/".join(["i18n", locale, "docusaurus-plugin-content-docs", *parts[1:]]))
    found += ["/".join(["i18n", locale, *parts]), "/".join([locale, *parts])]
    if folders and parts[0].lower() in _TOP_FOLDERS:
        found.append("/".join([parts[0], locale, *parts[1:]]))
    stem, dot, extension = name.rpartition(".")
    if dot and stem and extension.isalpha():
        found.append("/".join([*folders, f"{stem}.{locale}.{extension}"]))
    return found


_SLOT: Final = "\x00"  # where `translation_patterns` writes a locale's spellings


def translation_patterns(key: str, locale: str, written: Callable[[str], str]) -> list[str]:
    """`translation_paths` as regular expressions (one syntax for tantivy's and Python's) over
    each path as `written` writes it (a document id), the likeliest first, that match the
    folder and file names a doc tool spells the locale with: `pt-br` is `pt_BR` in tldr,
    `pt-BR` in Docusaurus, `pt-br` in Hugo. A locale with a region gives its own spellings first,
    then its language's with any region or none; a language (`pt`) matches it with any region
    (`pages.pt_BR/…`, `i18n/pt-PT/…`)."""
    language, _, region = locale.partition("-")
    spellings = [_either_case(language) + f"[_-]{_either_case(region)}"] if region else []
    spellings.append(_either_case(language) + "(?:[_-][A-Za-z0-9]+)?")
    paths = [_literal(written(path)) for path in translation_paths(key, _SLOT)]
    slot = _literal(_SLOT)
    return list(dict.fromkeys(path.replace(slot, spelled) for spelled in spellings for path in paths))


def _either_case(letters: str) -> str:
    """A pattern of `letters` in either case, each (`pt` → `[pP][tT]`)."""
    cased = (f"[{c.lower()}{c.upper()}]" if c.isalpha() and c.isascii() else _literal(c) for c in letters)
    return "".join(cased)


def _literal(text: str) -> str:
    """`text` as a pattern that matches it alone: every ASCII character but a letter, a digit,
    `/` or `_` as its code (`.` → `\\x2e`), which both syntaxes read alike."""
    return "".join(c if c.isalnum() or c in "/_" or not c.isascii() else f"\\x{ord(c):02x}" for c in text)


@cache
def _pattern(source: str) -> re.Pattern[str]:
    """`source` compiled, once per process (the classes above, on first use)."""
    return re.compile(source)


def _beyond(text: str, first: str) -> bool:
    """Whether `text` holds a character at `first` or later (`max` runs in C: a Latin text is
    answered without compiling a class)."""
    return bool(text) and max(text) >= first


# the Snowball stemmer tantivy has for a language (by its ISO code); a document in one of these is
# indexed with its own language's stems beside the index's (`language_stems`)
LANGUAGE_STEMMERS: Final = {
    "ar": "arabic", "da": "danish", "de": "german", "el": "greek", "en": "english", "es": "spanish",
    "fi": "finnish", "fr": "french", "hu": "hungarian", "it": "italian", "nb": "norwegian",
    "nl": "dutch", "no": "norwegian", "pt": "portuguese", "ro": "romanian", "ru": "russian",
    "sv": "swedish", "ta": "tamil", "tr": "turkish",
}  # fmt: skip


def own_stemmer(locale: str, index_stemmer: str) -> str | None:
    """The stemmer of `locale`'s language when it has one and it is not the index's, else None."""
    stemmer = LANGUAGE_STEMMERS.get(base(locale))
    return stemmer if stemmer is not None and stemmer != index_stemmer else None


def language_stems(text: str, stemmer: str) -> str:
    """The words of `text` that `stemmer` (a language's, `own_stemmer`) shortens, as its stems,
    space-separated, each once: `Dateien anzeigen` → `datei anzeig`. The index adds them to a
    document in that language and a query in it searches them too, so `Datei` finds `Dateien`."""
    words, stems = _word_analyzers(stemmer)
    seen: set[str] = set()
    out: list[str] = []
    for word, stem in zip(words.analyze(text), stems.analyze(text), strict=True):
        if stem != word and stem not in seen:
            seen.add(stem)
            out.append(stem)
    return " ".join(out)


@cache
def _word_analyzers(stemmer: str) -> tuple[Any, Any]:
    """tantivy's word split lowercased, without and with `stemmer` (token for token)."""
    import tantivy

    def analyzer(stem: bool) -> Any:
        builder = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).filter(tantivy.Filter.lowercase())
        return (builder.filter(tantivy.Filter.stemmer(stemmer)) if stem else builder).build()

    return analyzer(False), analyzer(True)


# Korean writes a noun's particle, and the ending that makes a verb of it (`압축해서`, `압축된`:
# compressing, compressed), against the word; longest first
_KOREAN_ENDINGS: Final = (
    "에서는", "으로는", "에게서", "합니다", "하세요", "됩니다",
    "에서", "에게", "으로", "까지", "부터", "처럼", "보다", "이나", "하고", "한테", "라고", "해서",
    "하여", "하는", "하기", "하게", "하면", "하려", "된다", "되는", "되어", "되면", "에는", "로는",
    "은", "는", "이", "가", "을", "를", "의", "에", "로", "와", "과", "도", "만", "한", "할", "된",
)  # fmt: skip
_HANGUL_WORD: Final = r"[\uac00-\ud7a3]{3,}"


def korean_ending_first(word: str) -> bool:
    """Whether a Korean `word` begins with a particle or a verb's ending of two syllables or
    more (`하기`, `으로`), or is one of one syllable: the end of another word, not a word."""
    return word in _KOREAN_ENDINGS or any(word.startswith(e) for e in _KOREAN_ENDINGS if len(e) > 1)


def korean_stems(text: str) -> str:
    """The Korean words of `text` that end in a particle or a verb's ending (`_KOREAN_ENDINGS`),
    without it, space-separated, each once: `폴더를 압축해서` → `폴더 압축`; two syllables stay at
    least. A Korean query searches its words' too, as stems (ra_query.search.pipeline), so
    `폴더를` finds `폴더에` (whose beginnings the page holds: `korean_word_starts`)."""
    if not _beyond(text, _FIRST_HANGUL):
        return ""
    seen: dict[str, None] = {}
    for word in _pattern(_HANGUL_WORD).findall(text):
        for ending in _KOREAN_ENDINGS:
            if word.endswith(ending) and len(word) - len(ending) >= 2:
                seen.setdefault(word[: -len(ending)])
                break
    return " ".join(seen)


def korean_word_starts(text: str) -> str:
    """Each beginning of two syllables or more of the Korean words of `text` of three or more,
    space-separated, each once: `열고있는` → `열고 열고있`, `압축해서` → `압축 압축해`. The index
    adds them to a page beside its words, so a word typed without the particle or ending the
    page writes (`폴더` for `폴더를`: its stem, whatever the ending), or without the space the
    page leaves out (`열고` for `열고있는`), finds it. bench/locales.py, against the stems by the
    endings list alone (`korean_stems`): Korean known items 0.771 → 0.800, typed as bare nouns
    0.800 → 0.829, the second set 0.633 → 0.700; every beginning of the query's words searched
    too found fewer (0.714, 0.714, 0.567), as did every pair of syllables (0.743)."""
    if not _beyond(text, _FIRST_HANGUL):
        return ""
    seen: dict[str, None] = {}
    for word in _pattern(_HANGUL_WORD).findall(text):
        for end in range(2, len(word)):
            seen.setdefault(word[:end])
    return " ".join(seen)


def mnemonic_words(text: str) -> str:
    """The words `text` writes with mnemonic brackets, whole (`E[x]tract [f]ile` → `Extract file`),
    space-separated; empty when there are none."""
    if "[" not in text:
        return ""
    return " ".join(m.replace("[", "").replace("]", "") for m in _MNEMONIC.findall(text))

"""Which language a source file is written in, by its name: the table both sides share.

The build chooses a file's parser by it (markdown, plain text, or a tree-sitter grammar for
code); `ra init` offers a code tree for the extensions it finds; a search's `lang:` and `kind:`
filters take the names below. Only the standard library is imported.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal, cast

SourceKind = Literal["docs", "code", "upstream"]  # upstream: pages fetched by an upstream tree

# extension (lower case, without the dot) -> language name; the names are what `lang:` filters on
CODE_EXTENSIONS: Final[dict[str, str]] = {
    "py": "python",
    "pyi": "python",
    "js": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "jsx": "javascript",
    "ts": "typescript",
    "mts": "typescript",
    "cts": "typescript",
    "tsx": "typescript",  # parsed with the TSX grammar (ra_build.document.code)
    "go": "go",
    "rs": "rust",
    "java": "java",
    "c": "c",
    "h": "c",
    "cc": "cpp",
    "cpp": "cpp",
    "cxx": "cpp",
    "hpp": "cpp",
    "hh": "cpp",
    "hxx": "cpp",
    "cs": "csharp",
    "rb": "ruby",
    "php": "php",
    "kt": "kotlin",
    "kts": "kotlin",
    "swift": "swift",
    "lua": "lua",
    "zig": "zig",
    "ex": "elixir",
    "exs": "elixir",
    "scala": "scala",
    "sc": "scala",
    "sh": "bash",
    "bash": "bash",
    "zsh": "bash",
    "bats": "bash",  # bats-core's tests: `@test "title" {…}` (ra_build.document.code._BATS_TEST)
    "toml": "toml",
    "yaml": "yaml",
    "yml": "yaml",
    "json": "json",
}
DOC_EXTENSIONS: Final[dict[str, str]] = {
    "md": "markdown", "markdown": "markdown", "txt": "text", "rst": "rst",
}  # fmt: skip
DOC_LANGUAGES: Final = frozenset(DOC_EXTENSIONS.values())  # prose: chunked by headings, a locale each
# the include pattern `ra init` writes for a language (one per language, its usual extensions)
LANGUAGE_GLOBS: Final[dict[str, tuple[str, ...]]] = {
    language: tuple(f"**/*.{ext}" for ext, lang in CODE_EXTENSIONS.items() if lang == language)
    for language in dict.fromkeys(CODE_EXTENSIONS.values())
}
# data formats: code-kind chunks (one per top-level key or table), but never a reason alone for
# `ra init` to offer a code tree
DATA_LANGUAGES: Final = frozenset({"toml", "yaml", "json"})
CODE_LANGUAGES: Final = frozenset(CODE_EXTENSIONS.values())
LANGUAGES: Final = CODE_LANGUAGES | frozenset(DOC_EXTENSIONS.values())


# what people also call the languages (`lang:c++`, `lang:golang`)
ALIASES: Final[dict[str, str]] = {
    "c++": "cpp", "cxx": "cpp", "c#": "csharp", "cs": "csharp", "golang": "go", "ts": "typescript",
    "tsx": "typescript", "js": "javascript", "jsx": "javascript", "py": "python", "python3": "python",
    "sh": "bash", "shell": "bash", "zsh": "bash", "yml": "yaml", "rb": "ruby", "rs": "rust", "md": "markdown",
    "txt": "text", "restructuredtext": "rst", "kt": "kotlin", "ex": "elixir", "exs": "elixir",
}  # fmt: skip
KINDS: Final = ("docs", "code", "upstream")


def canonical_language(name: str) -> str | None:
    """The language a `lang:` filter names, by its name or an alias, in any case; None when ra
    knows no such language."""
    lowered = name.lower()
    lowered = ALIASES.get(lowered, lowered)
    return lowered if lowered in LANGUAGES else None


def language_of(path: str) -> str:
    """The language of the file at `path` by its extension: a code language, `text` for `.txt`,
    and `markdown` for everything else (a tree includes what its patterns say; what is not code
    nor text is read as markdown, as before code trees)."""
    name = path.rsplit("/", 1)[-1]
    _, dot, ext = name.rpartition(".")
    if not dot:
        return "markdown"
    ext = ext.lower()
    return CODE_EXTENSIONS.get(ext) or DOC_EXTENSIONS.get(ext, "markdown")


CPP_SOURCES: Final = frozenset(ext for ext, lang in CODE_EXTENSIONS.items() if lang == "cpp" and ext != "h")
# what only C++ has, at a line's start: a namespace, a template, a class, an access label, a
# definition of a qualified name (`SPDLOG_INLINE spdlog::logger::logger(`: spdlog's `-inl.h`)
_CPP_LINE = re.compile(
    r"^[ \t]*(?:namespace(?:[ \t]+[\w:]+)?[ \t]*\{|template[ \t]*<|class[ \t]+\w+[^;()]*$"
    r"|(?:public|private|protected)[ \t]*:|using[ \t]+namespace\b|extern[ \t]+\"C\+\+\""
    r"|[A-Za-z_][\w \t*&<>,:]*::~?[A-Za-z_]\w*[ \t]*\()",
    re.M,
)


def header_language_of(paths: Iterable[str]) -> str:
    """What a tree's `.h` files are, by the tree's other files: `cpp` when it has C++ sources
    (`.cc`, `.cpp`, `.hpp`, …) and no more `.c` files than those, else `auto` (each header by
    its own text: `header_language`)."""
    cpp = c = 0
    for path in paths:
        ext = path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
        if ext in CPP_SOURCES:
            cpp += 1
        elif ext == "c":
            c += 1
    return "cpp" if cpp and cpp >= c else "auto"


def header_language(text: str, setting: str = "auto") -> str:
    """The language a `.h` file is parsed as: `setting` when it is `c` or `cpp`, else `cpp` when
    the header itself says C++ (a line that opens a namespace, a template or a class, an access
    label, `using namespace`, `extern "C++"`, defines a qualified name `ns::Type::f(`), else `c`."""
    if setting in ("c", "cpp"):
        return setting
    return "cpp" if _CPP_LINE.search(text) else "c"


def kind_of(language: str) -> SourceKind:
    """`code` for a programming or data language, `docs` for markdown, reStructuredText and text."""
    return "code" if language in CODE_LANGUAGES else "docs"


# how the instructions and agent files name a programming language
DISPLAY_NAMES: Final[dict[str, str]] = {
    "python": "Python", "javascript": "JavaScript", "typescript": "TypeScript", "go": "Go", "rust": "Rust",
    "java": "Java", "c": "C", "cpp": "C++", "csharp": "C#", "ruby": "Ruby", "php": "PHP", "bash": "shell",
}  # fmt: skip


def spoken_languages(languages: Iterable[str]) -> str:
    """The languages as a reader says them: `Python`, `Python and Go`, `Python, Go and C++`."""
    said = [DISPLAY_NAMES.get(language, language) for language in languages]
    return " and ".join([", ".join(said[:-1]), said[-1]] if len(said) > 1 else said)


def file_languages(paths: Iterable[str]) -> dict[str, int]:
    """How many of the files at `paths` each language has, by name; `.h` files are C++ where
    the others are (`header_language_of`)."""
    listed = list(paths)
    header = "cpp" if header_language_of(listed) == "cpp" else "c"
    counts = Counter(header if path.lower().endswith(".h") else language_of(path) for path in listed)
    return dict(sorted(counts.items()))


def glob_languages(include: Iterable[str]) -> list[str]:
    """The languages include globs name by their extension (`**/*.py`: python), in order, once
    each; a glob that names no extension ra knows (`**/*`, `src/**`) names none."""
    found: dict[str, None] = {}
    for pattern in include:
        _, dot, ext = pattern.rsplit("/", 1)[-1].rpartition(".")
        language = CODE_EXTENSIONS.get(ext.lower()) or DOC_EXTENSIONS.get(ext.lower()) if dot else None
        if language:
            found.setdefault(language, None)
    return list(found)


def programming_languages(languages: Iterable[str]) -> list[str]:
    """Of `languages`, the programming ones (no data format, no docs), in their order."""
    return [language for language in languages if language in CODE_LANGUAGES - DATA_LANGUAGES]


def code_languages(manifest: Mapping[str, Any]) -> dict[str, list[str]]:
    """The programming languages of each tree of `manifest` that has code, the most files first:
    those of its indexed files (the tree's `languages`: name → files) or, in a manifest written
    before it counted them, those its include globs name (`**/*.py`: python)."""
    trees: object = manifest.get("trees")
    entries = cast(dict[str, object], trees) if isinstance(trees, dict) else {}
    found: dict[str, list[str]] = {}
    for name, entry in entries.items():
        if not isinstance(entry, dict):
            continue
        fields = cast(dict[str, Any], entry)
        counts: object = fields.get("languages")
        if isinstance(counts, dict):
            files = cast(dict[str, object], counts)
            languages = sorted(files, key=lambda lang: -int(cast(int, files[lang])))
        else:
            sources: object = fields.get("sources")
            include: object = cast(dict[str, Any], sources).get("include") if isinstance(sources, dict) else 0
            globs = cast(list[object], include) if isinstance(include, list) else []
            languages = glob_languages(map(str, globs))
        code = programming_languages(languages)
        if code:
            found[name] = code
    return found

"""Which language a source file is written in, by its name: the table both sides share.

The build chooses a file's parser by it (markdown, plain text, or a tree-sitter grammar for
code); `ra init` offers a code tree for the extensions it finds; a search's `lang:` and `kind:`
filters take the names below. Only the standard library is imported.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final, Literal

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
    "sh": "bash",
    "bash": "bash",
    "zsh": "bash",
    "toml": "toml",
    "yaml": "yaml",
    "yml": "yaml",
    "json": "json",
}
DOC_EXTENSIONS: Final[dict[str, str]] = {"md": "markdown", "markdown": "markdown", "txt": "text"}
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
    "txt": "text",
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
# what only C++ has, at a line's start: a namespace, a template, a class, an access label
_CPP_LINE = re.compile(
    r"^[ \t]*(?:namespace(?:[ \t]+[\w:]+)?[ \t]*\{|template[ \t]*<|class[ \t]+\w+[^;()]*$"
    r"|(?:public|private|protected)[ \t]*:|using[ \t]+namespace\b|extern[ \t]+\"C\+\+\")",
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
    label, `using namespace`, `extern "C++"`), else `c`."""
    if setting in ("c", "cpp"):
        return setting
    return "cpp" if _CPP_LINE.search(text) else "c"


def kind_of(language: str) -> SourceKind:
    """`code` for a programming or data language, `docs` for markdown and text."""
    return "code" if language in CODE_LANGUAGES else "docs"

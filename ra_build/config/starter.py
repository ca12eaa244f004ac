"""`ra init`: write a starter `.ra.toml` that defines a working tree and documents the schema.

A local config goes in the given directory and, inside a git repository, `.ra/` (the index)
is added to that directory's `.gitignore`. A directory that holds code (a programming language
of ra_query.sources.languages; data files alone do not count) gets a tree over all of it that
includes those languages and the docs (markdown, reStructuredText, text); else a `docs/`
folder is the tree, else the directory with the default include. The look for code is the
build's own walk (default excludes, .gitignore), stopped after `CODE_SCAN_LIMIT` entries.
`--global` writes `~/.ra.toml` with a `notes` tree at `~/notes`, creating the folder. Every
section is present as commented-out defaults, so the file itself shows what can be configured;
it loads without warnings as written.
"""

from __future__ import annotations

import re
import textwrap
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ra_build.artifacts.atomic import write_bytes
from ra_build.config.model import DEFAULT_INCLUDE, STEMMERS, ContextSettings, SearchSettings, Settings
from ra_query.artifacts.paths import CONFIG_NAME, DEFAULT_DIR
from ra_query.errors import ConfigError, InputError
from ra_query.sources.languages import DATA_LANGUAGES, LANGUAGE_GLOBS, language_of
from ra_query.sources.walk import walk_tree

GITIGNORE_LINE = f"{DEFAULT_DIR}/"
# Lines that already keep the index out of git, however the user spelled them.
_IGNORES_INDEX = frozenset(f"{lead}{DEFAULT_DIR}{tail}" for lead in ("", "/") for tail in ("", "/", "/**"))
# node_modules/, .venv/ and the like are skipped by every tree (`default_excludes`)
LOCAL_EXCLUDE = (f"{DEFAULT_DIR}/**",)
CODE_SCAN_LIMIT = 20_000  # entries `ra init` looks at for code, at most
_PROGRAMMING = {lang: globs for lang, globs in LANGUAGE_GLOBS.items() if lang not in DATA_LANGUAGES}


@dataclass(frozen=True)
class CodeFound:
    """The code `ra init` found in a directory, which its tree includes."""

    languages: tuple[tuple[str, int], ...]  # (language, files), the most files first
    partial: bool  # the look stopped after CODE_SCAN_LIMIT entries

    @property
    def include(self) -> tuple[str, ...]:
        """The tree's include: each language's globs, then the docs' (markdown, rst, text)."""
        return (*(glob for lang, _ in self.languages for glob in _PROGRAMMING[lang]), *DEFAULT_INCLUDE)

    def summary(self) -> str:
        """One line for `ra init` to print."""
        found = ", ".join(f"{lang} ({n:,} file{'s' if n != 1 else ''})" for lang, n in self.languages)
        where = f" in the first {CODE_SCAN_LIMIT:,} entries" if self.partial else ""
        return f"found code{where}: {found} — the tree includes it, with the docs (.md, .rst, .txt)"


def find_code(directory: Path) -> CodeFound | None:
    """The programming languages of the files in `directory`, or None when it holds none."""
    globs = [glob for globs in _PROGRAMMING.values() for glob in globs]
    found = walk_tree("init", directory, globs, (), limit=CODE_SCAN_LIMIT)
    counts = Counter(language_of(f.path) for f in found.files)
    order = list(_PROGRAMMING)
    found_here = [(lang, n) for lang, n in counts.items() if lang in _PROGRAMMING]
    languages = sorted(found_here, key=lambda c: (-c[1], order.index(c[0])))
    return CodeFound(tuple(languages), found.truncated) if languages else None


@dataclass(frozen=True)
class InitResult:
    """What `init_config` wrote, for the CLI to report."""

    path: Path
    tree_name: str
    tree_path: Path
    gitignore: Path | None
    created_dirs: tuple[Path, ...]
    code: CodeFound | None = None  # the code the tree includes


def init_config(directory: Path, home: Path, *, global_: bool = False, force: bool = False) -> InitResult:
    """Write a starter `.ra.toml` in `directory` (or `home` with `global_`).

    Args:
        directory: where a local config goes; ignored with `global_`.
        home: the user's home directory (for `--global` and `~/notes`).
        global_: write `~/.ra.toml` with a `notes` tree at `~/notes`.
        force: overwrite an existing file.

    Raises:
        ConfigError: the file exists and `force` is not set.
        InputError: `directory` is missing, or is `home` (whose file is the global one).
    """
    if global_:
        return _init_global(home, force=force)
    directory = directory.resolve()
    if not directory.is_dir():
        raise InputError(f"{directory} is not a directory — create it first or pick another")
    if directory == home.resolve():
        # ~/.ra.toml is the global file; a local-style tree at "." would index all of home.
        raise InputError(f"{directory} is your home folder — use: ra init --global")
    target = directory / CONFIG_NAME
    _refuse_overwrite(target, force)
    code = find_code(directory)
    if code is None and (directory / "docs").is_dir():
        name, raw_path, exclude = "docs", "./docs", ()
    else:
        name, raw_path, exclude = tree_name_for(directory), ".", LOCAL_EXCLUDE
    include = code.include if code is not None else None
    text = starter_text(name, raw_path, exclude, global_=False, include=include)
    write_bytes(target, text.encode("utf-8"))
    gitignore = ensure_gitignored(directory) if in_git_repo(directory) else None
    return InitResult(target, name, (directory / raw_path).resolve(), gitignore, (), code)


def _init_global(home: Path, *, force: bool) -> InitResult:
    home = home.resolve()
    target = home / CONFIG_NAME
    _refuse_overwrite(target, force)
    notes = home / "notes"
    created: tuple[Path, ...] = ()
    if not notes.is_dir():
        notes.mkdir(parents=True)
        created = (notes,)
    write_bytes(target, starter_text("notes", "~/notes", (), global_=True).encode("utf-8"))
    return InitResult(target, "notes", notes, None, created)


def _refuse_overwrite(target: Path, force: bool) -> None:
    if target.exists() and not force:
        raise ConfigError(f"{target} already exists — use --force to overwrite")


def tree_name_for(directory: Path) -> str:
    """A valid tree name made from a directory's name (`My Project` → `my-project`)."""
    name = re.sub(r"[^a-z0-9_-]+", "-", directory.name.lower()).strip("-")
    return name or "project"


def in_git_repo(directory: Path) -> bool:
    """True when `directory` or any parent holds a `.git` directory or file."""
    return any((d / ".git").exists() for d in (directory, *directory.parents))


def ensure_gitignored(directory: Path) -> Path | None:
    """Add `.ra/` to `directory/.gitignore`; the file if it changed, None if already there."""
    gitignore = directory / ".gitignore"
    try:
        current = gitignore.read_text(encoding="utf-8")
    except FileNotFoundError:
        current = ""
    if any(line.strip() in _IGNORES_INDEX for line in current.splitlines()):
        return None
    separator = "\n" if current and not current.endswith("\n") else ""
    write_bytes(gitignore, f"{current}{separator}{GITIGNORE_LINE}\n".encode())
    return gitignore


def _toml_list(items: tuple[str, ...]) -> str:
    return "[" + ", ".join(f'"{item}"' for item in items) + "]"


def _aligned(rows: list[tuple[str, str]]) -> list[str]:
    """Commented-out `key = value` lines with their explanations in one column."""
    return [
        (f"# {line:<{max(30, len(line) + 1)}}# {note}" if note else f"# {line}") if line else ""
        for line, note in rows
    ]


def starter_text(
    name: str,
    raw_path: str,
    exclude: tuple[str, ...],
    *,
    global_: bool,
    include: tuple[str, ...] | None = None,
) -> str:
    """The commented starter config: one live tree, every other section as defaults.

    `include`: the tree's include list (None: the default, as a comment).
    """
    s, q, c = Settings(), SearchSettings(), ContextSettings()
    where = "~/.ra.toml: your global" if global_ else ".ra.toml: this project's"
    scope = (
        "Trees here are global: every project sees them, ranked below its local trees."
        if global_
        else "Trees here are local: they rank above trees from ~/.ra.toml."
    )
    tree = [
        f"[tree.{name}]",
        f'path = "{raw_path}"',
        f"include = {_toml_list(include)}" if include else f"# include = {_toml_list(DEFAULT_INCLUDE)}",
        f"exclude = {_toml_list(exclude)}" if exclude else '# exclude = ["drafts/**"]',
        *_aligned(
            [
                ("default_excludes = true", "skip node_modules/, .git/, build/, dist/, target/, vendor/, …"),
                ("gitignore = true", "skip what the git repository's .gitignore files ignore"),
            ]
        ),
    ]
    others = ", ".join(sorted(STEMMERS - {q.stemmer}))
    return "\n".join(
        [
            f"# {where} ra configuration.",
            "#",
            "# A tree is a named folder of documents; ids look like `name:path/to/doc.md`.",
            f"# {scope}",
            "# Relative paths resolve against this file's folder; `~` is your home folder.",
            "# Commented lines show the defaults. Check the result with: ra config",
            "",
            *tree,
            "",
            *_aligned(
                [
                    ("[settings]", ""),
                    (f"default_limit = {s.default_limit}", "results per query"),
                    (f"local_boost = {s.local_boost}", "score multiplier for local trees"),
                    (f"max_chunk_size = {s.max_chunk_size}", "warn about longer chunks (chars)"),
                    (f"max_file_size = {s.max_file_size}", "skip larger files (bytes)"),
                    ("", ""),
                    ("[search]", ""),
                    (f'stemmer = "{q.stemmer}"', "see the list below"),
                    (f"fuzzy_distance = {q.fuzzy_distance}", "typo tolerance: 0, 1 or 2 edits"),
                    (f"candidate_limit = {q.candidate_limit}", "hits ranked before the cutoff"),
                    (f"cutoff_ratio = {q.cutoff_ratio}", "cut where the score ratio drops below"),
                    (f"aggregation_threshold = {q.aggregation_threshold}", "merge siblings up"),
                    ("", ""),
                    ("[search.boost]", "field weights, all > 0"),
                    (f"text = {q.boost_text}", "breadcrumb, tags and body as one field"),
                    (f"title = {q.boost_title}", ""),
                    (f"tags = {q.boost_tags}", ""),
                    (f"path = {q.boost_path}", ""),
                    ("", ""),
                    ("[context]", "how `ra context` reads your files"),
                    (f"limit = {c.limit}", "results"),
                    (f"terms = {c.terms}", "terms in the generated query"),
                    (f"min_term_frequency = {c.min_term_frequency}", ""),
                    (f"min_word_length = {c.min_word_length}", ""),
                    (f"max_word_length = {c.max_word_length}", ""),
                    (f"sample_size = {c.sample_size}", "bytes read from large files"),
                    ("", ""),
                    ("[context.patterns]", "glob = extra search terms"),
                    ('"*.py" = ["python"]', ""),
                    ("", ""),
                    ("[[context.rules]]", "match globs are relative to this folder"),
                    ('match = "src/api/**"', ""),
                    (f'trees = ["{name}"]', "search only these trees"),
                    ('terms = ["http", "routing"]', ""),
                    (f'include = ["{name}:api/overview.md"]', "always show these documents"),
                ]
            ),
            "",
            *textwrap.wrap(
                f"Stemmers: {q.stemmer}, {others}.",
                width=88,
                initial_indent="# ",
                subsequent_indent="#   ",
            ),
            "",
        ]
    )

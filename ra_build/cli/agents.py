"""`ra agents` (DECISIONS 27, seed 000 "Agent File Generation"): agent instruction files that teach
an agent to search ra before it acts.

The file is the project template `.agents.md` (beside the nearest `.ra.toml`), then the global
template `~/.agents.md`, then a generated section naming this project's trees and saying why,
how and when to search, and, where trees hold code, how to find a definition
(`code_languages`). It is written to `AGENTS.md` (and `CLAUDE.md`, `GEMINI.md` on request)
beside the nearest `.ra.toml`, only when its text changed, so a second run changes nothing.
The generated section stays under `SECTION_LIMIT` bytes: agent runtimes cut long instructions.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from ra_build.artifacts.atomic import write_bytes
from ra_build.config.model import Config

SECTION_LIMIT = 2048
TEMPLATE_NAME = ".agents.md"
TARGETS = {"agents": "AGENTS.md", "claude": "CLAUDE.md", "gemini": "GEMINI.md"}


def code_languages(config: Config, artifacts: Path | None) -> dict[str, list[str]]:
    """Each configured tree with code and its programming languages, the most files first: as the
    index at `artifacts` counted them, or, for a tree not indexed yet, as its include globs name."""
    from ra_query.artifacts.store import read_manifest
    from ra_query.errors import RaError
    from ra_query.sources.languages import code_languages as indexed
    from ra_query.sources.languages import glob_languages, programming_languages

    try:
        manifest = read_manifest(artifacts) if artifacts is not None else {}
    except RaError:  # no index yet, or one this ra cannot read: the configuration alone
        manifest = {}
    built: object = manifest.get("trees")
    found = indexed(manifest)
    code: dict[str, list[str]] = {}
    for name, tree in sorted(config.trees.items()):
        if isinstance(built, dict) and name in built:
            languages = found.get(name, [])
        else:
            languages = programming_languages(glob_languages(tree.include))
        if languages:
            code[name] = languages
    return code


def generated_section(config: Config, home: Path, code: dict[str, list[str]] | None = None) -> str:
    """The ra section: why, how and when to search, with this project's trees and, where some
    have `code` (tree → its programming languages, `code_languages`), how to search code."""
    base = config.base_dir
    trees: list[str] = []
    for name, tree in sorted(config.trees.items()):
        if tree.upstream:
            source = tree.sitemap or (tree.urls[0] if len(tree.urls) == 1 else f"{len(tree.urls)} pages")
            trees.append(f"`{name}` (upstream docs: {source})")
            continue
        where = tree.path
        if base is not None and where.is_relative_to(base):
            shown = where.relative_to(base).as_posix() or "."
        else:
            shown = (
                "~/" + where.relative_to(Path.home()).as_posix()
                if where.is_relative_to(Path.home())
                else str(where)
            )
        trees.append(f"`{name}` ({shown}{', global' if tree.is_global else ''})")
    code = code or {}
    coded = [f"`{name}`" for name in sorted(code)]
    languages = list(dict.fromkeys(lang for name in sorted(code) for lang in code[name]))
    upstream = any(tree.upstream for tree in config.trees.values())
    shown = [len(trees), len(coded)]
    while True:  # many trees: name the first ones
        listed = _some(trees[: shown[0]], len(trees), " (`ra ls trees`)") or "none configured yet (`ra init`)"
        section = _section(listed, upstream, _some(coded[: shown[1]], len(coded)), languages)
        if len(section.encode()) <= SECTION_LIMIT or max(shown) <= 1:
            return section
        shown[shown.index(max(shown))] -= 1  # the longest list first, the trees on a tie


def _some(names: list[str], total: int, where: str = "") -> str:
    """`names` joined, with `and N more` when they are fewer than `total`."""
    listed = ", ".join(names)
    return f"{listed} and {total - len(names)} more{where}" if len(names) < total else listed


UPSTREAM_WHEN = """- A question about a framework or library this project uses (its API, options, errors):
  `ra search --kind upstream "..."` — its docs as of the last `ra update`, each with its url
"""


def _code_how(coded: str, languages: list[str]) -> str:
    """The line of How for a project with code: how a definition is found and shown."""
    from ra_query.sources.languages import spoken_languages

    return f"""- {spoken_languages(languages)} code in {coded}: a definition by what it does
  (`ra search "where are retries scheduled"`) or by its name (`ra search Client.send`);
  `--kind code|docs|upstream` and `lang:{languages[0]}` narrow a search;
  `ra get tree:path#Class.method` prints one definition
"""


def _section(listed: str, upstream: bool = False, coded: str = "", languages: list[str] | None = None) -> str:
    how_code = _code_how(coded, languages) if coded and languages else ""
    return f"""## ra knowledge base

This project keeps its conventions and reference docs in ra. **Search ra before you decide.**
Trees: {listed}.

### Why
This project's conventions WILL differ from your training data; ra holds the versions that
apply here. Acting on general knowledge misses project-specific requirements.

### How
- `ra context path/to/file.py` — the docs that fit the files you will change
  (`ra context $(git diff --name-only)` for a change set)
- `ra search "error handling"` — one topic; `ra search "logging" "retries"` — several in one call
- `ra search encode_content` — a name (a function, `Class.method`, a file, a page title): that one first
{how_code}- `ra search --list "topic"` — ids and snippets first; `ra get tree:path#slug` — one chunk in full
- `--max-tokens N` keeps an answer small; `--json` for structured output
- As MCP tools (`ra mcp`): `search`, `context`, `get`, `list_sources`

### When
- Starting on a file: `ra context` on the files you will modify
- Before writing new code, refactoring or choosing between approaches: search for the pattern
- Meeting an unfamiliar project term, or a style question: search it
- Before saying "the project does X": check it with ra
{UPSTREAM_WHEN if upstream else ""}"""


def compose(config: Config, home: Path, code: dict[str, list[str]] | None = None) -> str:
    """The whole file: the project template, the global template, the generated section (which
    says how to search `code`, `code_languages`, where there is some)."""
    parts: list[str] = []
    base = config.base_dir or Path.cwd()
    for template in (base / TEMPLATE_NAME, home / TEMPLATE_NAME):
        if template.is_file():
            text = template.read_text(encoding="utf-8").strip("\n")
            if text:
                parts.append(text)
    parts.append(generated_section(config, home, code).strip("\n"))
    return "\n\n".join(parts) + "\n"


@dataclass(frozen=True)
class Planned:
    """One agent file: where it goes, what it holds now, what it will hold."""

    path: Path
    old: str | None
    new: str

    @property
    def changed(self) -> bool:
        return self.old != self.new

    def diff(self) -> str:
        return "".join(
            difflib.unified_diff(
                (self.old or "").splitlines(keepends=True),
                self.new.splitlines(keepends=True),
                fromfile=f"a/{self.path.name}" if self.old is not None else "/dev/null",
                tofile=f"b/{self.path.name}",
            )
        )


def plan(
    config: Config, home: Path, which: list[str], code: dict[str, list[str]] | None = None
) -> list[Planned]:
    """The agent files `which` (`agents`, `claude`, `gemini`) would become."""
    text = compose(config, home, code)
    base = config.base_dir or Path.cwd()
    planned: list[Planned] = []
    for key in which:
        path = base / TARGETS[key]
        old = path.read_text(encoding="utf-8") if path.is_file() else None
        planned.append(Planned(path, old, text))
    return planned


def write(planned: list[Planned]) -> list[Planned]:
    """Write the files whose text changed; return those."""
    written = [p for p in planned if p.changed]
    for p in written:
        write_bytes(p.path, p.new.encode("utf-8"))
    return written

"""Configuration: find the `.ra.toml` files that apply, parse, validate and merge them.

Discovery walks up from the working directory to the filesystem root collecting `.ra.toml`
files, nearest first; a file with `root = true` ends the walk and also shuts out the global
file; the folder `$RA_CONFIG_CEILING` names ends it too, keeping the global file (a test
harness's temporary folder: nothing above it joins). `~/.ra.toml` is the global file and has
the lowest precedence. Scalars take the nearest file's value key by key; trees merge by name
with the nearest definition replacing the whole tree; `[context.patterns]` merge by glob
(nearest wins); `[[context.rules]]` concatenate.

Every problem is reported with the file and line it comes from: a wrong type or a bad value
raises `ConfigError` (exit 2), an unknown key becomes a warning string in `Config.warnings`.
tomllib reports no positions for a valid document, so `LineIndex` finds the lines itself.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import os
import re
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ra_build.config.model import (
    DEFAULT_INCLUDE,
    STEMMERS,
    TREE_NAME,
    UPSTREAM_INCLUDE,
    Config,
    ContextRule,
    ContextSettings,
    SearchSettings,
    Settings,
    TreeConfig,
)
from ra_build.config.toml_lines import LineIndex, Loc, toml_str
from ra_query.artifacts.paths import CONFIG_NAME, DEFAULT_DIR, UPSTREAM_DIR
from ra_query.errors import ConfigError
from ra_query.text.locales import DEFAULT_LOCALE, normalized

_DOC_ID = re.compile(r"[A-Za-z0-9_-]+:.+")


# --- schema -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Key:
    section: str
    name: str
    kind: type
    field: str  # attribute on the section's dataclass; "" for accepted keys without effect
    check: Callable[[Any], str | None] | None = None

    @property
    def dotted(self) -> str:
        return f"{self.section}.{self.name}"


# A check returns None for a good value, else the end of the message after "[section] key".
def _at_least(n: int) -> Callable[[Any], str | None]:
    return lambda v: None if v >= n else f"must be at least {n}, got {v!r}"


def _between(lo: float, hi: float) -> Callable[[Any], str | None]:
    return lambda v: None if lo <= v <= hi else f"must be between {lo:g} and {hi:g}, got {v!r}"


def _positive(v: Any) -> str | None:
    return None if v > 0 else f"must be greater than 0, got {v!r}"


def _not_negative(v: Any) -> str | None:
    return None if v >= 0 else f"must be 0 or more, got {v!r}"


def _stemmer(v: Any) -> str | None:
    if v.lower() in STEMMERS:
        return None
    return f"{toml_str(v)} is not supported — use one of: {', '.join(sorted(STEMMERS))}"


KEYS: tuple[Key, ...] = (
    Key("settings", "default_limit", int, "default_limit", _between(1, 1000)),
    Key("settings", "local_boost", float, "local_boost", _positive),
    Key("settings", "max_chunk_size", int, "max_chunk_size", _at_least(1)),
    Key("settings", "code_chunk_size", int, "code_chunk_size", _at_least(100)),
    Key("settings", "min_chunk_size", int, "min_chunk_size", _at_least(0)),
    Key("settings", "max_file_size", int, "max_file_size", _at_least(1)),
    Key("settings", "chunk_at_headings", bool, ""),
    Key("settings", "agent_max_tokens", int, "agent_max_tokens", _between(1, 10_000_000)),
    Key("settings", "index_shards", int, "index_shards", _between(0, 16)),
    Key("settings", "semantic", bool, "semantic"),
    Key("settings", "default_excludes", bool, "default_excludes"),
    Key("settings", "gitignore", bool, "gitignore"),
    Key("search", "stemmer", str, "stemmer", _stemmer),
    Key("search", "fuzzy_distance", int, "fuzzy_distance", _between(0, 2)),
    Key("search", "candidate_limit", int, "candidate_limit", _between(1, 10_000)),
    Key("search", "cutoff_ratio", float, "cutoff_ratio", _between(0, 1)),
    Key("search", "aggregation_threshold", float, "aggregation_threshold", _between(0, 1)),
    Key("search", "phrase_boost", float, "phrase_boost", _not_negative),
    Key("search", "stopwords", bool, "stopwords"),
    Key("search", "semantic_weight", float, "semantic_weight", _between(0, 1)),
    Key("search", "code_semantic_weight", float, "code_semantic_weight", _between(0, 1)),
    Key("search", "code_words", float, "code_words", _between(0, 1000)),
    Key("search", "code_boost", float, "code_boost", _between(0, 1000)),
    Key("search", "test_weight", float, "test_weight", _between(0, 1)),
    Key("search", "type_weight", float, "type_weight", _between(0, 1)),
    Key("search.boost", "text", float, "boost_text", _not_negative),
    Key("search.boost", "title", float, "boost_title", _not_negative),
    Key("search.boost", "tags", float, "boost_tags", _not_negative),
    Key("search.boost", "path", float, "boost_path", _not_negative),
    Key("search.boost", "body", float, "", _not_negative),
    Key("context", "limit", int, "limit", _at_least(1)),
    Key("context", "terms", int, "terms", _at_least(1)),
    Key("context", "min_term_frequency", int, "min_term_frequency", _at_least(1)),
    Key("context", "min_word_length", int, "min_word_length", _at_least(1)),
    Key("context", "max_word_length", int, "max_word_length", _at_least(1)),
    Key("context", "sample_size", int, "sample_size", _at_least(1)),
)
_SUBTABLES = {"search": ("boost",), "context": ("patterns", "rules")}
NO_EFFECT = {
    "settings.chunk_at_headings": "ra always builds the heading chunk tree",
    "settings.min_chunk_size": "ra always builds the heading chunk tree, whatever the size",
    # schema 5 stores the body without indexing it: its words are ranked in `text` (issue 24)
    "search.boost.body": "a chunk's body is ranked as part of `text` (weigh that instead)",
}
# tree keys that default to the `[settings]` key of the same name (set in `_merge`)
_WALK_KEYS = ("default_excludes", "gitignore")
_UPSTREAM_KEYS = ("urls", "sitemap", "refresh")
_TREE_KEYS = (
    "path", *_UPSTREAM_KEYS, "include", "exclude", "allow_outside_links", "semantic", "header_language",
    "language", *_WALK_KEYS,
)  # fmt: skip
HEADER_LANGUAGES = ("auto", "c", "cpp")
_DURATION = re.compile(r"([0-9]+)([dhm])")
_SECONDS = {"d": 86_400, "h": 3_600, "m": 60}
_RULE_KEYS = ("match", "trees", "terms", "include")
_TYPE_WANTED = {
    int: "an integer",
    float: "a number",
    str: "a string",
    bool: "a boolean (true or false)",
    list: "an array of strings",
    dict: "a table",
}


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    for kind, name in ((int, "integer"), (float, "float"), (str, "string"), (list, "array")):
        if isinstance(value, kind):
            return name
    if isinstance(value, dict):
        return "table"
    if isinstance(value, dt.datetime):
        return "datetime"
    if isinstance(value, dt.date):
        return "date"
    if isinstance(value, dt.time):
        return "time"
    return type(value).__name__


def _fits(value: Any, kind: type) -> bool:
    if isinstance(value, bool):
        return kind is bool
    if kind is float:
        return isinstance(value, int | float)
    return isinstance(value, kind)


def _key_text(name: str) -> str:
    """`name` as TOML writes a key: bare when it can be, quoted otherwise."""
    return name if TREE_NAME.fullmatch(name) else toml_str(name)


# --- reading one file ---------------------------------------------------------------------

_TOML_POSITION = re.compile(r"\s*\(at (?:line (\d+), column \d+|end of document)\)$")


@dataclass
class _RawFile:
    path: Path
    text: str
    doc: dict[str, Any]
    is_global: bool


def _read_toml(path: Path, is_global: bool) -> _RawFile:
    """Read and parse one config file; ConfigError when it is unreadable or not TOML."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid UTF-8 (byte {exc.start}) — save the file as UTF-8") from exc
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ConfigError(f"{path}: cannot read: {reason} — fix its permissions or remove it") from exc
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        m = _TOML_POSITION.search(message)
        line = len(text.splitlines()) or 1
        if m:
            message = message[: m.start()]
            if m.group(1):
                line = int(m.group(1))
        raise ConfigError(f"{path}:{line}: invalid TOML: {message} — fix the syntax") from exc
    return _RawFile(path, text, doc, is_global)


@dataclass
class _FileData:
    path: Path
    is_global: bool
    values: dict[str, tuple[Any, int]]  # dotted key → (value, line)
    trees: list[tuple[TreeConfig, int, frozenset[str]]]  # with the line of `path =`, the `_WALK_KEYS` set
    patterns: dict[str, tuple[tuple[str, ...], int]]
    rules: list[tuple[ContextRule, int]]
    warnings: list[str]


class _Validator:
    """Validates one parsed file against the schema, with file:line in every message."""

    def __init__(self, raw: _RawFile, home: Path) -> None:
        self.raw = raw
        self.home = home
        self.lines = LineIndex(raw.text)
        self.data = _FileData(raw.path, raw.is_global, {}, [], {}, [], [])

    def where(self, loc: Loc) -> str:
        return f"{self.raw.path}:{self.lines.line(loc)}"

    def error(self, loc: Loc, message: str) -> ConfigError:
        return ConfigError(f"{self.where(loc)}: {message}")

    def unknown(self, loc: Loc, key: str, section: str, known: Iterable[str]) -> None:
        import difflib  # only for a typo: not on every command's path

        close = difflib.get_close_matches(key, list(known), n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        where = f"in [{section}]" if section else "at top level"
        self.data.warnings.append(f"{self.where(loc)}: unknown key '{key}' {where}{hint} — ignored")

    def typed(self, loc: Loc, label: str, value: Any, kind: type) -> None:
        if not _fits(value, kind):
            raise self.error(loc, f"{label} must be {_TYPE_WANTED[kind]}, got {_type_name(value)}")

    def strings(self, loc: Loc, label: str, value: Any, *, allow_str: bool = False) -> tuple[str, ...]:
        if allow_str and isinstance(value, str):
            value = [value]
        wanted = "a string or an array of strings" if allow_str else "an array of strings"
        if not isinstance(value, list):
            raise self.error(loc, f"{label} must be {wanted}, got {_type_name(value)}")
        for item in value:
            if not isinstance(item, str):
                raise self.error(loc, f"{label} must be {wanted}, got an array containing {_type_name(item)}")
        return tuple(value)

    def run(self) -> _FileData:
        for key, value in self.raw.doc.items():
            loc: Loc = (key,)
            if key == "root":
                self.typed(loc, "root", value, bool)
            elif key in ("settings", "search", "context"):
                self.typed(loc, f"[{key}]", value, dict)
                self.section(key, value)
            elif key == "tree":
                self.typed(loc, "[tree]", value, dict)
                for name, body in value.items():
                    self.tree(name, body)
            else:
                self.unknown(loc, key, "", ("root", "settings", "search", "context", "tree"))
        return self.data

    def section(self, section: str, table: dict[str, Any]) -> None:
        specs = {k.name: k for k in KEYS if k.section == section}
        subtables = _SUBTABLES.get(section, ())
        for key, value in table.items():
            loc: Loc = (*section.split("."), key)
            if key in specs:
                self.scalar(specs[key], loc, value)
            elif key == "boost" and section == "search":
                self.typed(loc, "[search.boost]", value, dict)
                self.section("search.boost", value)
            elif key == "patterns" and section == "context":
                self.patterns(value)
            elif key == "rules" and section == "context":
                self.rules(value)
            else:
                self.unknown(loc, key, section, [*specs, *subtables])

    def scalar(self, spec: Key, loc: Loc, value: Any) -> None:
        label = f"[{spec.section}] {spec.name}"
        self.typed(loc, label, value, spec.kind)
        if spec.kind is float:
            value = float(value)
            if not math.isfinite(value):
                raise self.error(loc, f"{label} must be a finite number, got {value}")
        problem = spec.check(value) if spec.check else None
        if problem:
            raise self.error(loc, f"{label} {problem}")
        if spec.kind is str:
            value = value.lower()
        self.data.values[spec.dotted] = (value, self.lines.line(loc))
        if spec.dotted in NO_EFFECT:
            self.data.warnings.append(
                f"{self.where(loc)}: {label} has no effect — {NO_EFFECT[spec.dotted]}; remove it"
            )

    def tree(self, name: str, body: Any) -> None:
        loc: Loc = ("tree", name)
        header = f"[tree.{_key_text(name)}]"
        if not TREE_NAME.fullmatch(name):
            raise self.error(
                loc,
                f"{header} {toml_str(name)} is not a valid tree name — use only letters, "
                "digits, '_' and '-' (the name prefixes ids as name:path)",
            )
        if not isinstance(body, dict):
            raise self.error(loc, f"{header} must be a table, got {_type_name(body)}")
        upstream = "urls" in body or "sitemap" in body
        if "path" in body and upstream:
            raise self.error(
                (*loc, "urls" if "urls" in body else "sitemap"),
                f"{header} has both path and {'urls' if 'urls' in body else 'sitemap'} — a tree is a folder "
                "(path) or pages to fetch (urls, sitemap): split it into two trees",
            )
        if "path" not in body and not upstream:
            raise self.error(loc, f"{header} is missing the required key 'path' — add path = \"./docs\"")
        include, exclude = DEFAULT_INCLUDE, ()
        fetched: dict[str, Any] = {}
        outside_links = False
        header_language = "auto"
        language = DEFAULT_LOCALE
        semantic: bool | None = None
        walk: dict[str, bool] = {}
        raw_path: str = ""
        for key, value in body.items():
            key_loc: Loc = (*loc, key)
            if key == "path":
                self.typed(key_loc, f"{header} path", value, str)
                raw_path = value
                if not raw_path.strip():
                    raise self.error(key_loc, f'{header} path is empty — use "." for this folder')
            elif key == "include":
                include = self.strings(key_loc, f"{header} include", value)
                if not include and not upstream:  # an upstream tree's empty include: every page
                    self.data.warnings.append(
                        f"{self.where(key_loc)}: {header} include is empty, so the tree "
                        "indexes nothing — remove it to use the default"
                    )
            elif key == "exclude":
                exclude = self.strings(key_loc, f"{header} exclude", value)
            elif key == "allow_outside_links":
                self.typed(key_loc, f"{header} allow_outside_links", value, bool)
                outside_links = value
            elif key == "semantic":
                self.typed(key_loc, f"{header} semantic", value, bool)
                semantic = value
            elif key == "header_language":
                header_language = self.header_language(key_loc, header, value)
            elif key == "language":
                language = self.language(key_loc, header, value)
            elif key in _WALK_KEYS:
                self.typed(key_loc, f"{header} {key}", value, bool)
                walk[key] = value
            elif key in _UPSTREAM_KEYS:
                fetched.update(self.upstream_key(key_loc, f"{header} {key}", key, value))
            else:
                self.unknown(key_loc, str(key), f"tree.{name}", _TREE_KEYS)
        if upstream:  # include and exclude pick the sitemap's URLs by path; the walk reads the cache
            fetched.update(url_include=include if "include" in body else (), url_exclude=exclude)
            include, exclude = UPSTREAM_INCLUDE, ()
            # the cache holds only the pages, at their URL paths: a `/build/` or `/vendor/` there
            # is a page's folder, not a build's output, and no git ignore file was written for it
            walk = {"default_excludes": False, "gitignore": False}
            path = self.raw.path.parent / DEFAULT_DIR / UPSTREAM_DIR / name
        else:
            path = _resolve_path(raw_path, self.raw.path.parent, self.home)
        tree = TreeConfig(
            name,
            path,
            include,
            exclude,
            self.raw.is_global,
            self.raw.path,
            self.lines.line(loc),
            outside_links,
            semantic,
            **walk,
            **fetched,
            header_language=header_language,
            language=language,
        )
        self.data.trees.append((tree, self.lines.line((*loc, "path")), frozenset(walk)))

    def header_language(self, loc: Loc, header: str, value: Any) -> str:
        """A tree's `header_language`: "auto", "c" or "cpp"."""
        self.typed(loc, f"{header} header_language", value, str)
        if value not in HEADER_LANGUAGES:
            raise self.error(
                loc,
                f"{header} header_language {toml_str(value)} is not one of "
                f'{", ".join(map(toml_str, HEADER_LANGUAGES))} — use "cpp" to parse .h files as C++',
            )
        return str(value)

    def language(self, loc: Loc, header: str, value: Any) -> str:
        """A tree's `language`: a language code, as ra writes it (`pt_BR` → `pt-br`)."""
        self.typed(loc, f"{header} language", value, str)
        found = normalized(value)
        if found is None:
            raise self.error(
                loc,
                f"{header} language {toml_str(value)} is not a language code — use an ISO code such as "
                '"en", "ja", "de" or "pt-br"',
            )
        return found

    def upstream_key(self, loc: Loc, label: str, key: str, value: Any) -> dict[str, Any]:
        """An upstream tree's `urls`, `sitemap` or `refresh`, checked, as TreeConfig fields."""
        if key == "refresh":
            self.typed(loc, label, value, str)
            match = _DURATION.fullmatch(value.strip())
            if match is None or int(match[1]) == 0:
                wanted = 'use Nd, Nh or Nm ("7d", "12h", "30m")'
                raise self.error(loc, f"{label} {toml_str(value)} is not a duration — {wanted}")
            return {"refresh": int(match[1]) * _SECONDS[match[2]]}
        if key == "urls":
            urls = self.strings(loc, label, value)
            if not urls:
                raise self.error(loc, f"{label} is empty — list the pages to fetch, or remove the tree")
        else:
            self.typed(loc, label, value, str)
            urls = (value,)
        for url in urls:
            problem = url_problem(url)
            if problem:
                raise self.error(loc, f"{label} {toml_str(url)} {problem}")
        return {"urls": tuple(urls)} if key == "urls" else {"sitemap": urls[0]}

    def patterns(self, value: Any) -> None:
        loc: Loc = ("context", "patterns")
        self.typed(loc, "[context.patterns]", value, dict)
        for glob, terms in value.items():
            key_loc: Loc = (*loc, glob)
            label = f"[context.patterns] {_key_text(glob)}"
            self.data.patterns[glob] = (
                self.strings(key_loc, label, terms),
                self.lines.line(key_loc),
            )

    def rules(self, value: Any) -> None:
        base: Loc = ("context", "rules")
        if not isinstance(value, list):
            raise self.error(base, f"[[context.rules]] must be an array of tables, got {_type_name(value)}")
        for i, rule in enumerate(value):
            loc: Loc = (*base, i)
            label = "[[context.rules]]"
            if not isinstance(rule, dict):
                raise self.error(loc, f"{label} entries must be tables, got {_type_name(rule)}")
            if "match" not in rule:
                raise self.error(loc, f"{label} is missing the required key 'match' — add match = \"*.py\"")
            match: tuple[str, ...] = ()
            trees: tuple[str, ...] | None = None
            terms: tuple[str, ...] = ()
            include: tuple[str, ...] = ()
            for key, item in rule.items():
                key_loc: Loc = (*loc, key)
                if key == "match":
                    match = self.strings(key_loc, f"{label} match", item, allow_str=True)
                    if not match:
                        raise self.error(key_loc, f"{label} match is empty — give at least one glob")
                elif key == "trees":
                    trees = self.strings(key_loc, f"{label} trees", item)
                elif key == "terms":
                    terms = self.strings(key_loc, f"{label} terms", item)
                elif key == "include":
                    include = self.strings(key_loc, f"{label} include", item)
                    for doc_id in include:
                        if not _DOC_ID.fullmatch(doc_id):
                            raise self.error(
                                key_loc,
                                f"{label} include {toml_str(doc_id)} is not a document id — "
                                'write it as "tree:path/to/doc.md"',
                            )
                else:
                    self.unknown(key_loc, str(key), "[context.rules]", _RULE_KEYS)
            rule_obj = ContextRule(match, trees, terms, include, self.raw.path)
            self.data.rules.append((rule_obj, self.lines.line(loc)))


def _resolve_path(raw: str, base_dir: Path, home: Path) -> Path:
    """Expand `~` with `home` and resolve a relative path against `base_dir`."""
    if raw == "~" or raw.startswith(("~/", "~\\")):
        path = home / raw[2:]
    else:
        path = Path(raw)
        if not path.is_absolute():
            path = base_dir / path
    return path.resolve()


# --- discovery and merge ------------------------------------------------------------------


CEILING_VARIABLE = "RA_CONFIG_CEILING"


def _discover(cwd: Path, home: Path) -> list[_RawFile]:
    home_file = home.resolve() / CONFIG_NAME
    found: list[_RawFile] = []
    global_allowed = True
    start = cwd.resolve()
    directories = [start, *start.parents]
    # read here, not at the CLI edge, so every caller (ra, ra mcp's reload, a library user) stops alike
    ceiling = os.environ.get(CEILING_VARIABLE)
    if ceiling and (top := Path(ceiling).resolve()) in directories:
        directories = directories[: directories.index(top) + 1]
    for directory in directories:
        candidate = directory / CONFIG_NAME
        if not candidate.exists():
            continue
        is_home = candidate == home_file
        raw = _read_toml(candidate, is_global=is_home)
        if not is_home:
            found.append(raw)
        root = raw.doc.get("root", False)
        if not isinstance(root, bool):
            lines = LineIndex(raw.text)
            raise ConfigError(
                f"{candidate}:{lines.line(('root',))}: root must be {_TYPE_WANTED[bool]}, "
                f"got {_type_name(root)}"
            )
        if root:
            global_allowed = is_home
            break
    if global_allowed and home_file.exists():
        found.append(_read_toml(home_file, is_global=True))
    return found


def load_config(cwd: Path, home: Path, *, require_paths: bool = True) -> Config:
    """Discover, validate and merge the configuration that applies in `cwd`.

    Args:
        cwd: the working directory the walk starts from.
        home: the user's home directory (for `~/.ra.toml` and `~` in tree paths).
        require_paths: check that every effective tree path is an existing directory.

    Raises:
        ConfigError: malformed TOML, a wrong type or value, or a missing tree path.
    """
    raws = _discover(cwd, home)
    datas = [_Validator(raw, home).run() for raw in raws]
    return _merge(datas, require_paths=require_paths)


def _merge(datas: list[_FileData], *, require_paths: bool) -> Config:
    values: dict[str, tuple[Any, int, Path]] = {}
    for data in datas:
        for key, (value, line) in data.values.items():
            values.setdefault(key, (value, line, data.path))
    warnings = [w for data in datas for w in data.warnings]

    def build(section: str) -> dict[str, Any]:
        return {
            k.field: values[k.dotted][0]
            for k in KEYS
            if k.section.split(".")[0] == section and k.field and k.dotted in values
        }

    context = ContextSettings(**build("context"))
    if context.min_word_length > context.max_word_length:
        key = "context.max_word_length" if "context.max_word_length" in values else "context.min_word_length"
        _, line, path = values[key]
        raise ConfigError(
            f"{path}:{line}: [context] max_word_length ({context.max_word_length}) is smaller "
            f"than min_word_length ({context.min_word_length}) — raise max_word_length"
        )

    settings = Settings(**build("settings"))
    trees: dict[str, TreeConfig] = {}
    path_lines: dict[str, int] = {}
    for data in datas:
        for tree, path_line, walk_keys in data.trees:
            if tree.name not in trees:
                unset = {key: getattr(settings, key) for key in _WALK_KEYS if key not in walk_keys}
                trees[tree.name], path_lines[tree.name] = dataclasses.replace(tree, **unset), path_line
    if require_paths:
        for tree in trees.values():
            if not tree.upstream:  # its cache is made by the first sync
                _check_tree_path(tree, path_lines[tree.name])

    rules: list[ContextRule] = []
    rule_lines: list[int] = []
    for data in datas:
        for rule, line in data.rules:
            rules.append(rule)
            rule_lines.append(line)
    patterns: dict[str, tuple[tuple[str, ...], int, Path]] = {}
    for data in datas:
        for glob, (terms, line) in data.patterns.items():
            patterns.setdefault(glob, (terms, line, data.path))
    for glob, (terms, line, path) in patterns.items():
        rules.append(ContextRule((glob,), None, terms, (), path))
        rule_lines.append(line)
    for rule, line in zip(rules, rule_lines, strict=True):
        warnings.extend(_rule_warnings(rule, line, trees))

    files = tuple(data.path for data in datas)
    global_file = next((data.path for data in datas if data.is_global), None)
    local = [data.path for data in datas if not data.is_global]
    base_dir = local[0].parent if local else global_file.parent if global_file else None
    return Config(
        files=files,
        base_dir=base_dir,
        settings=settings,
        search=SearchSettings(**build("search")),
        context=context,
        trees=trees,
        rules=tuple(rules),
        warnings=tuple(warnings),
        key_sources={key: path for key, (_, _, path) in values.items()},
        global_file=global_file,
    )


def url_problem(url: str) -> str | None:
    """Why `url` cannot be fetched (the end of a message), or None: only absolute http(s) URLs."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 — a bad port raises here
    except ValueError as exc:
        return f"is not a URL ({exc}) — use https://host/path"
    if parts.scheme.lower() not in ("http", "https"):
        scheme = f"scheme {parts.scheme!r}" if parts.scheme else "no scheme"
        return f"has {scheme} — only http:// and https:// pages are fetched"
    if not parts.hostname:
        return "has no host — use https://host/path"
    return None


def _check_tree_path(tree: TreeConfig, line: int) -> None:
    where = f"{tree.source}:{line}: [tree.{tree.name}]"
    if not tree.path.exists():
        raise ConfigError(f"{where} path {tree.path} does not exist — create it or fix the path")
    if not tree.path.is_dir():
        raise ConfigError(
            f"{where} path {tree.path} is not a directory — point it at the folder that holds the documents"
        )


def _rule_warnings(rule: ContextRule, line: int, trees: dict[str, TreeConfig]) -> list[str]:
    where = f"{rule.source}:{line}"
    out = [
        f"{where}: [[context.rules]] trees names unknown tree '{name}' — ignored"
        for name in rule.trees or ()
        if name not in trees
    ]
    out += [
        f"{where}: [[context.rules]] include '{doc_id}' names unknown tree "
        f"'{doc_id.split(':', 1)[0]}' — ignored"
        for doc_id in rule.include
        if doc_id.split(":", 1)[0] not in trees
    ]
    return out

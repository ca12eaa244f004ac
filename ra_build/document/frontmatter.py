"""YAML frontmatter: the block at the top of a markdown file, parsed, made JSON-safe and removed.

Offsets and line numbers refer to the whole file, so the chunker can map the markdown after the
block back to it (DECISIONS 4). Malformed YAML is a warning, never an error.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import re
from dataclasses import dataclass
from typing import Any

import yaml

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_FM_OPEN = re.compile(r"---[ \t]*(?:\r\n|\r|\n)")
# A line break, then a closing line: `---` or `...`, trailing blanks allowed.
_FM_CLOSE = re.compile(r"[\r\n](?:---|\.\.\.)[ \t]*(?:\r\n|\r|\n|\Z)")
_TAG_SPLIT = re.compile(r"[,\s]+")

# Frontmatter is small; these bounds only stop pathological YAML (alias bombs, recursive
# anchors) from blowing up the JSON-safe copy.
_MAX_YAML_NODES = 100_000
_MAX_YAML_DEPTH = 64
_INT64 = 2**63


@dataclass(frozen=True, slots=True)
class Frontmatter:
    """The YAML block at the top of a markdown file, already parsed and removed.

    `body_start` is the character offset where the markdown begins (0 when there is no block),
    `body_line` the 0-based line index of that offset.
    """

    data: dict[str, Any]
    title: str | None
    tags: tuple[str, ...]
    body_start: int
    body_line: int
    warnings: tuple[str, ...]


NO_FRONTMATTER = Frontmatter({}, None, (), 0, 0, ())


def parse_frontmatter(text: str) -> Frontmatter:
    """Find, parse and remove a leading YAML frontmatter block.

    Only a block that opens on the very first line with `---` and is closed by a later `---`
    (or `...`) line counts. Malformed YAML, or YAML that is not a mapping, yields no data and a
    warning, but the block is still removed so it never turns into a setext heading.
    """
    opening = _FM_OPEN.match(text)
    if opening is None:
        return NO_FRONTMATTER
    # Start on the opening line's own line break, so an empty block (`---` twice) closes too.
    closing = _FM_CLOSE.search(text, opening.end() - 1)
    if closing is None:
        return NO_FRONTMATTER
    body_start = closing.end()
    body_line = _count_lines(text, body_start)
    raw = text[opening.end() : closing.start() + 1]
    data, warning = _load_yaml(raw)
    if warning is not None:
        return Frontmatter({}, None, (), body_start, body_line, (warning,))
    return Frontmatter(
        data,
        frontmatter_title(data.get("title")),
        normalize_tags(data.get("tags")),
        body_start,
        body_line,
        _language_warnings(data, raw),
    )


def _language_warnings(data: dict[str, Any], raw: str) -> tuple[str, ...]:
    """A warning for each of the keys a page says its language by (`lang`, `language`, `locale`)
    whose value is not a language code, when none of them is one; an unquoted `lang: no`
    (Norwegian, YAML 1.1's false) is written back as `no`, as ra reads it."""
    from ra_query.text.locales import FRONTMATTER_KEYS, frontmatter_locale

    warnings: list[str] = []
    for key in FRONTMATTER_KEYS:
        if data.get(key) is False:
            data[key] = "no"
    if any(frontmatter_locale(data.get(key)) for key in FRONTMATTER_KEYS):
        return ()  # a key says it (`lang: en` beside a `language: python` of the page's own)
    for key in FRONTMATTER_KEYS:
        if key not in data:
            continue
        said = data[key] not in (None, "")  # `lang:` left empty says nothing
        if said and frontmatter_locale(data[key]) is None:
            at = re.search(rf"(?m)^{key}[ \t]*:", raw)
            line = 2 + raw.count("\n", 0, at.start()) if at else 2
            shown = json.dumps(data[key], ensure_ascii=False)
            warnings.append(
                f"line {line}: frontmatter {key} {shown} is not a language code — write an ISO code such "
                "as ja, de or pt-br; the page's language is read from its path or script"
            )
    return tuple(warnings)


def _count_lines(text: str, end: int) -> int:
    """Number of line breaks in text[:end] (a `\\r\\n` pair counts once)."""
    head = text[:end]
    count = head.count("\n")
    if "\r" in head:
        count += head.count("\r") - head.count("\r\n")
    return count


def _load_yaml(raw: str) -> tuple[dict[str, Any], str | None]:
    """Parse the YAML of a frontmatter block into a JSON-safe mapping, or return a warning."""
    try:
        value: Any = yaml.load(raw, Loader=_Loader)
        if value is None:
            return {}, None
        if not isinstance(value, dict):
            kind = "a list" if isinstance(value, list) else f"a {type(value).__name__}"
            return {}, _yaml_warning(2, f"expected a mapping of keys to values, got {kind}")
        counter = [0]
        safe = _json_safe(value, 0, counter)
        assert isinstance(safe, dict)
        return safe, None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = 2 + mark.line if mark is not None else 2
        return {}, _yaml_warning(line, exc.problem or exc.context or "invalid YAML")
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError) as exc:
        # PyYAML raises ValueError for impossible dates such as 2023-02-30.
        return {}, _yaml_warning(2, str(exc) or type(exc).__name__)


def _yaml_warning(line: int, problem: str) -> str:
    problem = " ".join(problem.split())
    return f"line {line}: malformed YAML frontmatter: {problem} — fix the YAML or remove the block"


def _json_safe(value: Any, depth: int, counter: list[int]) -> Any:
    """Return a copy of a YAML value made only of dict/list/str/int/float/bool/None."""
    counter[0] += 1
    if counter[0] > _MAX_YAML_NODES or depth > _MAX_YAML_DEPTH:
        raise ValueError("frontmatter is too large or nested too deeply")
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value if -_INT64 <= value < _INT64 else str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {_json_key(key): _json_safe(item, depth + 1, counter) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_json_safe(item, depth + 1, counter) for item in value]
    return str(value)


def _json_key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, dt.date | dt.datetime):
        return key.isoformat()
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def frontmatter_title(value: Any) -> str | None:
    """Return the document title given by a frontmatter `title` value, if it is usable.

    Strings are used with whitespace runs collapsed; numbers too (`title: 1984`); anything
    else (lists, mappings, booleans, empty strings) is ignored.
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float | str):
        title = " ".join(str(value).split())
        return title or None
    return None


def normalize_tags(value: Any) -> tuple[str, ...]:
    """Normalize a frontmatter `tags` value into a tuple of distinct tag strings.

    Accepts a list, or a single string split on commas and whitespace; a leading `#`
    (Obsidian) is dropped, nested tags such as `rust/errors` stay whole, empty tags vanish.
    """
    if value is None or isinstance(value, dict):
        return ()
    items: list[Any] = (
        _TAG_SPLIT.split(value)
        if isinstance(value, str)
        else (list(value) if isinstance(value, list) else [value])
    )
    seen: dict[str, None] = {}
    for item in items:
        if item is None:
            continue
        tag = (item if isinstance(item, str) else str(item)).strip().lstrip("#").strip()
        if tag:
            seen.setdefault(tag, None)
    return tuple(seen)


__all__ = ["NO_FRONTMATTER", "Frontmatter", "frontmatter_title", "normalize_tags", "parse_frontmatter"]

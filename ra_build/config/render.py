"""`ra config`: the effective merged configuration as TOML text or a JSON-able dict."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ra_build.config.load import KEYS, NO_EFFECT, Key
from ra_build.config.model import Config, TreeConfig
from ra_build.config.toml_lines import toml_str


def _value_text(value: Any) -> str:
    """`value` as a TOML literal (the scalar and string-array types the schema uses)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return toml_str(value)
    if isinstance(value, Path):
        return toml_str(str(value))
    return "[" + ", ".join(_value_text(v) for v in value) + "]"


def _section_values(config: Config, section: str) -> list[tuple[Key, Any]]:
    owner = {"settings": config.settings, "context": config.context}.get(section, config.search)
    return [(k, getattr(owner, k.field)) for k in KEYS if k.section == section and k.field]


def render_config(config: Config) -> str:
    """The effective configuration as TOML, commented with where each value came from."""
    out = ["# Effective ra configuration: every key with the value ra uses."]
    if config.files:
        out.append("# Files, highest precedence first:")
        for path in config.files:
            out.append(f"#   {path}{' (global)' if path == config.global_file else ''}")
    else:
        out.append("# No .ra.toml applies here: built-in defaults only. Create one with: ra init")
    for section in ("settings", "search", "search.boost", "context"):
        out += ["", f"[{section}]"]
        for key, value in _section_values(config, section):
            line = f"{key.name} = {_value_text(value)}"
            source = config.key_sources.get(key.dotted)
            if key.dotted in NO_EFFECT:
                out.append(f"# {line}  # no effect: {NO_EFFECT[key.dotted]}")
                continue
            out.append(f"{line}  # {f'from {source}' if source else 'default'}")
    if not config.trees:
        out += ["", "# No trees configured. Add one with: ra init"]
    for tree in config.trees.values():
        out += ["", f"[tree.{tree.name}]  # from {tree.source} ({'global' if tree.is_global else 'local'})"]
        if tree.upstream:
            out += _upstream_lines(tree)
        else:
            out += [
                f"path = {_value_text(tree.path)}",
                f"include = {_value_text(tree.include)}",
                f"exclude = {_value_text(tree.exclude)}",
                f"default_excludes = {_value_text(tree.default_excludes)}",
                f"gitignore = {_value_text(tree.gitignore)}",
            ]
        if tree.outside_links:
            out.append("allow_outside_links = true")
        if tree.header_language != "auto":
            out.append(f"header_language = {_value_text(tree.header_language)}")
        if tree.language != "en":
            out.append(f"language = {_value_text(tree.language)}")
        if tree.semantic is not None:
            out.append(f"semantic = {_value_text(tree.semantic)}")
    if config.rules:
        out += ["", "# [context.patterns] entries appear as rules with terms only."]
    for rule in config.rules:
        out += [
            "",
            f"[[context.rules]]  # from {rule.source}",
            f"match = {_value_text(rule.match)}",
        ]
        if rule.trees is not None:
            out.append(f"trees = {_value_text(rule.trees)}")
        out.append(f"terms = {_value_text(rule.terms)}")
        out.append(f"include = {_value_text(rule.include)}")
    return "\n".join(out) + "\n"


def _upstream_lines(tree: TreeConfig) -> list[str]:
    """An upstream tree's keys: what it fetches, how often, and where its cache is."""
    out = [f"urls = {_value_text(tree.urls)}"] if tree.urls else []
    if tree.sitemap:
        out.append(f"sitemap = {_value_text(tree.sitemap)}")
    out += [
        f"include = {_value_text(tree.url_include)}  # URL paths, of the sitemap's pages",
        f"exclude = {_value_text(tree.url_exclude)}",
        f"refresh = {_value_text(duration_text(tree.refresh))}",
        f"# cache: {tree.path}",
    ]
    return out


def duration_text(seconds: int) -> str:
    """`refresh` as written: 604800 → `7d`, 43200 → `12h`, 5400 → `90m`: in the largest whole unit."""
    for unit, size in (("d", 86_400), ("h", 3_600)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds // 60}m"


def config_to_dict(config: Config) -> dict[str, Any]:
    """The effective configuration as plain JSON-safe data (the shape of `ra config --json`)."""

    def section(name: str) -> dict[str, Any]:
        return {k.name: v for k, v in _section_values(config, name)}

    semantic = set(config.semantic_trees())

    return {
        "files": [str(p) for p in config.files],
        "global_file": str(config.global_file) if config.global_file else None,
        "base_dir": str(config.base_dir) if config.base_dir else None,
        "settings": section("settings"),
        "search": {**section("search"), "boost": section("search.boost")},
        "context": section("context"),
        "trees": {
            name: {
                "path": str(t.path),
                "include": list(t.include),
                "exclude": list(t.exclude),
                "allow_outside_links": t.outside_links,
                "header_language": t.header_language,
                "language": t.language,
                "default_excludes": t.default_excludes,
                "gitignore": t.gitignore,
                "semantic": name in semantic,
                "global": t.is_global,
                "source": str(t.source),
                "line": t.line,
                **(
                    {
                        "urls": list(t.urls),
                        "sitemap": t.sitemap,
                        "url_include": list(t.url_include),
                        "url_exclude": list(t.url_exclude),
                        "refresh": duration_text(t.refresh),
                    }
                    if t.upstream
                    else {}
                ),
            }
            for name, t in config.trees.items()
        },
        "rules": [
            {
                "match": list(r.match),
                "trees": list(r.trees) if r.trees is not None else None,
                "terms": list(r.terms),
                "include": list(r.include),
                "source": str(r.source),
            }
            for r in config.rules
        ],
        "warnings": list(config.warnings),
        "key_sources": {k: str(v) for k, v in config.key_sources.items()},
    }

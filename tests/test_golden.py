"""Golden files pin the exact text and JSON the CLI prints (regenerate: pytest --update-goldens)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import Run

RaFn = Callable[..., Run]
Golden = Callable[[str, str], None]


def _clean(text: str, tmp_path: Path) -> str:
    return text.replace(str(tmp_path), "<TMP>")


def test_inspect_doc_output_is_pinned(ra: RaFn, kb: Path, golden: Golden) -> None:
    result = ra("inspect", "doc", "guides/errors.md", cwd=kb)
    assert result.code == 0, result.err
    golden("inspect_errors.txt", result.out)


def test_config_output_is_pinned(ra: RaFn, kb: Path, tmp_path: Path, golden: Golden) -> None:
    result = ra("config", cwd=kb)
    assert result.code == 0, result.err
    golden("config.txt", _clean(result.out, tmp_path))


def test_config_json_output_is_pinned(ra: RaFn, kb: Path, tmp_path: Path, golden: Golden) -> None:
    result = ra("config", "--json", cwd=kb)
    assert result.code == 0, result.err
    golden("config.json", _clean(result.out, tmp_path))


def test_search_full_output_is_pinned(ra: RaFn, kb: Path, golden: Golden) -> None:
    result = ra("search", "logging", "pool", cwd=kb)
    assert result.code == 0, result.err
    golden("search_logging_pool.txt", result.out)


def test_search_json_output_is_pinned(ra: RaFn, kb: Path, golden: Golden) -> None:
    result = ra("search", "--json", "result type", cwd=kb)
    assert result.code == 0, result.err
    golden("search_result_type.json", result.out)


def test_error_messages_are_pinned(ra: RaFn, tmp_path: Path, golden: Golden) -> None:
    (tmp_path / ".ra.toml").write_text('[search]\nstemmer = "klingon"\n', encoding="utf-8")
    bad_value = ra("config")
    (tmp_path / ".ra.toml").write_text("[tree.docs\npath = 1\n", encoding="utf-8")
    bad_toml = ra("config")
    (tmp_path / ".ra.toml").unlink()
    (tmp_path / "latin1.md").write_bytes(b"caf\xe9\n")
    not_utf8 = ra("inspect", "doc", "latin1.md")
    text = "".join(f"[exit {r.code}] {r.err}" for r in (bad_value, bad_toml, not_utf8))
    golden("errors.txt", _clean(text, tmp_path))

"""A word no chunk holds that is words chunks hold written together (`Shellskript`,
`sonnenschein`) is searched as those words (ra_query.search.compile.Compiler._compound)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import build, run_cmd


@pytest.fixture
def kb(tmp_path: Path, home: Path) -> Path:
    """A built project: a page about shell scripts, one about working directories, one that holds
    `scriptbook` as one word."""
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "run.md").write_text(
        "# Run\n\nMake the shell script executable before you run it.\n", encoding="utf-8"
    )
    (kb / "arbeit.md").write_text(
        "# Arbeit\n\nDas Verzeichnis der Arbeit wechseln, in der Sonne oder im Schein.\n", encoding="utf-8"
    )
    (kb / "other.md").write_text("# Other\n\nThe scriptbook tool keeps a book of them.\n", encoding="utf-8")
    (kb / ".ra.toml").write_text('root = true\n\n[tree.kb]\npath = "."\n', encoding="utf-8")
    build(kb, home)
    return kb


def _search(kb: Path, home: Path, *args: str) -> tuple[list[str], str]:
    run = run_cmd("ra-query", "search", "--json", "--explain", *args, cwd=kb, home=home)
    assert run.code == 0, run.err
    return [r["id"] for r in json.loads(run.out)["queries"][0]["results"]], run.out + run.err


def test_a_word_made_of_two_held_words_finds_the_page_that_holds_them(kb: Path, home: Path) -> None:
    ids, said = _search(kb, home, "shellscript")
    assert ids[0].startswith("kb:run.md")
    assert "in no chunk, matched as its words: shellscript → shell script" in said
    assert "matched as typos" not in said


def test_a_linking_letter_between_the_words_is_allowed(kb: Path, home: Path) -> None:
    ids, said = _search(kb, home, "sonnenschein")  # `sonne`, a linking `n`, `schein`
    assert ids[0].startswith("kb:arbeit.md")
    assert "sonnenschein → sonn schein" in said


def test_a_word_a_chunk_holds_is_not_cut(kb: Path, home: Path) -> None:
    ids, said = _search(kb, home, "scriptbook")  # `script` and `book` are held words too
    assert "matched as its words" not in said
    assert [i.split("#")[0] for i in ids] == ["kb:other.md"]


def test_a_word_no_cut_fits_is_matched_as_a_typo(kb: Path, home: Path) -> None:
    ids, said = _search(kb, home, "verzeichnix")
    assert "matched as its words" not in said
    assert "in no chunk, matched as typos: verzeichnix" in said
    assert ids[0].startswith("kb:arbeit.md")

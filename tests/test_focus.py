"""Excerpts of long prose results (ra_query.search.focus): what a search shows of a page-sized chunk.

Unit tests on the block rule with the real analyzer, a property over random markdown, and real
`ra-query` processes and a real MCP client over a small built tree.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ra_query.artifacts.schema import build_analyzer
from ra_query.search.focus import GAP, blocks_of, focused, outlined
from tests.conftest import BIN, Run, build, run_cmd
from tests.test_mcp import serve

ANALYZER = build_analyzer("english")

# a tldr-shaped page: a lead, then items of a description ending in ":" and its command
ITEMS = [
    ("Unstage everything", "git reset"),
    ("Interactively unstage portions of a file", "git reset --patch path/to/file"),
    ("Undo the last commit, keeping its changes in the filesystem", "git reset HEAD~"),
    ("Discard any uncommitted changes, staged or not", "git reset --hard"),
    ("Reset the repository to a given commit", "git reset --hard commit"),
    ("Print the reflog to find a lost state", "git reflog"),
]
PAGE = "# git reset\n\n> Undo commits or unstage changes by resetting the current HEAD.\n\n" + "".join(
    f"- {text}:\n\n`{command}`\n\n" for text, command in ITEMS
)


def words(*terms: str) -> frozenset[str]:
    return frozenset(t for term in terms for t in ANALYZER.analyze(term))


def body_of(page: str) -> str:
    return page.split("\n\n", 1)[1].strip("\n")


def test_blocks_are_runs_of_lines_between_blank_lines() -> None:
    assert blocks_of("a\nb\n\nc\n\n\nd") == ["a\nb", "c", "d"]


def test_a_fenced_code_block_is_one_block_even_with_blank_lines_inside() -> None:
    body = "intro\n\n```python\nx = 1\n\ny = 2\n```\n\nafter"
    assert blocks_of(body) == ["intro", "```python\nx = 1\n\ny = 2\n```", "after"]


def test_a_fence_is_closed_only_by_a_fence_of_its_own_character_and_length() -> None:
    body = "````\n```\n\nstill code\n````\n\nafter"
    assert blocks_of(body) == ["````\n```\n\nstill code\n````", "after"]


def test_an_excerpt_keeps_the_heading_the_lead_and_the_matching_item_with_its_command() -> None:
    shown = focused("# git reset", body_of(PAGE), words("undo", "last", "commit", "keep"), ANALYZER)
    assert shown is not None
    assert shown.startswith("# git reset\n\n> Undo commits")
    assert "- Undo the last commit, keeping its changes in the filesystem:\n\n`git reset HEAD~`" in shown
    assert "reflog" not in shown


def test_each_run_of_blocks_left_out_is_one_gap_line() -> None:
    shown = focused("# git reset", body_of(PAGE), words("reflog"), ANALYZER)
    assert shown is not None
    assert shown.split("\n\n") == [
        "# git reset",
        "> Undo commits or unstage changes by resetting the current HEAD.",
        GAP,
        "- Print the reflog to find a lost state:",
        "`git reflog`",
    ]


def test_at_most_two_matching_blocks_are_shown_the_ones_with_most_query_words() -> None:
    shown = focused("# git reset", body_of(PAGE), words("unstage", "portions", "file", "reset"), ANALYZER)
    assert shown is not None
    assert "- Interactively unstage portions of a file:" in shown  # all four, with its command
    assert "- Unstage everything:" in shown  # unstage, and reset in its command
    assert "Reset the repository" not in shown  # reset alone


def test_a_page_that_shares_no_word_with_the_query_shows_its_lead() -> None:
    shown = focused("# git reset", body_of(PAGE), words("dice"), ANALYZER)
    assert (
        shown == "# git reset\n\n> Undo commits or unstage changes by resetting the current HEAD.\n\n" + GAP
    )


def test_an_excerpt_that_would_leave_nothing_out_is_not_made() -> None:
    assert focused("# a", "lead\n\nmatch here", words("match"), ANALYZER) is None


def test_a_block_of_megabytes_is_shown_as_its_beginning_and_what_is_left_out() -> None:
    from ra_query.search.focus import LONG_BLOCK

    line = "zebra huge line " * 20_000  # one paragraph of 320,000 characters
    shown = focused("# Huge", f"lead\n\n{line}", words("zebra"), ANALYZER)
    assert shown is not None and shown.startswith(f"# Huge\n\nlead\n\n{line[:1000]}")
    cut = shown.split("\n\n")[-1]
    assert len(cut) < LONG_BLOCK + 100
    assert cut.endswith(
        f"{GAP} [{len(line) - cut.index(' ' + GAP):,} characters left out: ra get shows them]"
    )


_LINE = st.text(alphabet="abc xyz:-", min_size=1, max_size=12).filter(str.strip)
_BLOCK = st.one_of(
    st.lists(_LINE, min_size=1, max_size=3).map("\n".join),
    st.lists(st.one_of(_LINE, st.just("")), max_size=3).map(
        lambda lines: "```\n" + "\n".join(lines) + "\n```"
    ),
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(_BLOCK, min_size=1, max_size=12, unique=True), st.sets(st.sampled_from(["abc", "xyz", "a", "b"]))
)
def test_an_excerpt_is_the_lead_and_whole_blocks_in_order_with_a_gap_for_each_run_left_out(
    blocks: list[str], query: set[str]
) -> None:
    body = "\n\n".join(blocks)
    parts = blocks_of(body)
    shown = focused("# h", body, words(*query), ANALYZER)
    if shown is None:
        return
    heading, *rest = blocks_of(shown)
    assert heading == "# h" and rest[0] == parts[0]
    previous, gap = 0, False
    for block in rest[1:]:
        if block == GAP:
            gap = True
            continue
        index = parts.index(block, previous + 1)
        assert gap == (index != previous + 1)
        previous, gap = index, False
    assert (rest[-1] == GAP) == (previous != len(parts) - 1)


# ---- as a user runs it ---------------------------------------------------------------------------


# four blocks that each match "reflog", under FOCUS_TOKENS: only the length rule keeps it whole
SHORT = (
    "# Short\n\nA reflog note.\n\nA second reflog note.\n\nA third reflog note.\n\nA fourth reflog note.\n"
)


def _tree(factory: pytest.TempPathFactory, name: str, folder: str, include: str) -> tuple[Path, Path]:
    """A project whose one tree is `folder` (`include`: a TOML array of globs), and its home."""
    base = factory.mktemp(name)
    root, home = base / "kb", base / "home"
    (root / folder).mkdir(parents=True)
    home.mkdir()
    (root / ".ra.toml").write_text(f'[tree.{folder}]\npath = "{folder}"\ninclude = {include}\n')
    return root, home


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A tree with the tldr-shaped page, a short page and a Python file; built once."""
    root, home = _tree(tmp_path_factory, "focus", "docs", '["**/*.md", "**/*.py"]')
    (root / "docs" / "git-reset.md").write_text(PAGE)
    (root / "docs" / "short.md").write_text(SHORT)
    # blocks apart, each matching: only the rule for code keeps the function whole
    code = "def reflog_entries(repo):\n" + "".join(
        f"    step_{i} = repo.reflog({i})\n" + ("\n" if i % 10 == 9 else "") for i in range(60)
    )
    (root / "docs" / "reflog.py").write_text(code)
    build(root, home)
    return root, home


def rq(kb: tuple[Path, Path], *args: str) -> Run:
    root, home = kb
    return run_cmd("ra-query", "--artifacts", str(root / ".ra"), *args, cwd=root, home=home)


def test_search_prints_a_long_page_as_its_excerpt(kb: tuple[Path, Path]) -> None:
    run = rq(kb, "search", "-t", "docs", "--kind", "docs", "print the reflog")
    assert run.code == 0, run.err
    assert "- Print the reflog to find a lost state:\n\n`git reflog`" in run.out
    assert f"\n\n{GAP}\n\n" in run.out
    assert "Unstage everything" not in run.out


def test_a_pages_top_heading_is_not_repeated_as_its_breadcrumb(kb: tuple[Path, Path]) -> None:
    run = rq(kb, "search", "print the reflog")
    assert run.out.startswith("─── docs:git-reset.md#git-reset ───\n\n# git reset\n\n> Undo commits")


def test_whole_prints_the_page_whole(kb: tuple[Path, Path]) -> None:
    run = rq(kb, "search", "--whole", "print the reflog")
    assert run.code == 0, run.err
    assert "Unstage everything" in run.out and GAP not in run.out


def test_a_short_page_and_a_code_chunk_are_never_cut(kb: tuple[Path, Path]) -> None:
    run = rq(kb, "search", "--json", "--cutoff-ratio", "0", "reflog")
    results = json.loads(run.out)["queries"][0]["results"]
    by_path = {r["path"]: r for r in results}
    assert by_path["short.md"]["content"] == SHORT.strip()
    code = by_path["reflog.py"]  # a part of the long function (one result per definition)
    source = (
        (kb[0] / "docs" / "reflog.py").read_text().splitlines()[code["line_start"] - 1 : code["line_end"]]
    )
    assert [line for line in source if line.strip()] == [
        line for line in code["content"].splitlines() if line.strip()
    ]  # every line of its range, none left out
    assert not any(r.get("excerpt") for r in results if r["path"] != "git-reset.md")


def test_json_content_is_the_excerpt_and_says_so(kb: tuple[Path, Path]) -> None:
    run = rq(kb, "search", "--json", "print the reflog")
    page = next(r for r in json.loads(run.out)["queries"][0]["results"] if r["path"] == "git-reset.md")
    assert page["excerpt"] is True
    assert GAP in page["content"] and "Unstage everything" not in page["content"]


def test_get_prints_the_chunk_whole(kb: tuple[Path, Path]) -> None:
    run = rq(kb, "get", "docs:git-reset.md#git-reset")
    assert run.code == 0, run.err
    assert "Unstage everything" in run.out and GAP not in run.out


def test_the_mcp_search_tool_excerpts_unless_asked_for_whole_results(kb: tuple[Path, Path]) -> None:
    root, home = kb
    with serve([str(BIN / "ra-query"), "--artifacts", str(root / ".ra"), "mcp"], root, home) as server:
        cut = server.ok("search", {"queries": "print the reflog"})["queries"][0]["results"]
        whole = server.ok("search", {"queries": "print the reflog", "whole": True})["queries"][0]["results"]
    page = next(r for r in cut if r["path"] == "git-reset.md")
    assert page["excerpt"] is True and "Unstage everything" not in page["content"]
    page = next(r for r in whole if r["path"] == "git-reset.md")
    assert "excerpt" not in page and "Unstage everything" in page["content"]


def test_a_kept_block_brings_the_nearest_heading_above_it() -> None:
    body = "Lead paragraph.\n\n## Install\n\nRun the installer.\n\n## Retry policy\n\nOne line.\n\nRetries back off twice.\n\nLast words."
    shown = focused("# Guide", body, words("retries"), ANALYZER)
    assert (
        shown
        == f"# Guide\n\nLead paragraph.\n\n{GAP}\n\n## Retry policy\n\n{GAP}\n\nRetries back off twice.\n\n{GAP}"
    )


# ---- a code file's own chunk: its leading lines, and the outline lines that match -----------------

OUTLINE_ROWS = [
    f"  def handler_{i}(request: Request, timeout: float = 5.0) -> Response  L{10 * i}-{10 * i + 8}"
    for i in range(12)
]
OUTLINE_ROWS[4] = "  def parse_color(name: str) -> tuple[int, int, int]  L40-48"
OUTLINE_ROWS[9] = "  def color_escape(rgb: tuple[int, int, int]) -> str  L90-98"
FILE_HEAD = '"""Terminal helpers."""\n\nimport os'
FILE_BODY = FILE_HEAD + "\n\noutline:\n" + "\n".join(OUTLINE_ROWS)


def test_a_files_excerpt_keeps_its_leading_lines_and_the_outline_lines_that_match() -> None:
    shown = outlined(FILE_BODY, "src/term.py", words("color"), ANALYZER)
    assert shown == "\n".join(
        [
            FILE_HEAD,
            "",
            "outline:",
            f"  {GAP}",
            OUTLINE_ROWS[4],
            f"  {GAP}",
            OUTLINE_ROWS[9],
            f"  {GAP} 10 of 12 lines left out (ra get shows them)",
        ]
    )


def test_a_file_the_query_names_or_whose_every_outline_line_matches_is_shown_whole() -> None:
    assert outlined(FILE_BODY, "src/color.py", words("color"), ANALYZER) is None
    assert outlined(FILE_BODY, "color/term.py", words("color"), ANALYZER) is not None  # a folder
    every = FILE_HEAD + "\n\noutline:\n" + "\n".join(OUTLINE_ROWS[4::5])  # the two color lines
    assert outlined(every, "src/term.py", words("color"), ANALYZER) is None  # none left out
    assert outlined(FILE_HEAD, "src/term.py", words("terminal"), ANALYZER) is None  # no outline


@pytest.fixture(scope="module")
def big_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A tree with one Python file of forty functions under a module docstring; built once."""
    root, home = _tree(tmp_path_factory, "outline", "src", '["**/*.py"]')
    functions = "".join(
        f"\n\ndef step_{i}(source: str, target: str, retries: int = 3) -> bool:\n"
        f"    return source.startswith(target[:{i}])\n"
        for i in range(40)
    )
    (root / "src" / "pipeline.py").write_text(
        '"""Copies the quarterly ledgers between warehouses."""\n' + functions
    )
    build(root, home)
    return root, home


def test_search_prints_a_long_file_chunk_as_its_leading_lines_and_matching_outline(
    big_file: tuple[Path, Path],
) -> None:
    run = rq(big_file, "search", "--json", "quarterly ledgers")
    file_chunk = next(r for r in json.loads(run.out)["queries"][0]["results"] if r["id"] == "src:pipeline.py")
    assert file_chunk["excerpt"] is True
    assert file_chunk["content"].startswith('"""Copies the quarterly ledgers between warehouses."""')
    assert "def step_8(" not in file_chunk["content"]
    assert file_chunk["content"].endswith(f"outline:\n  {GAP} 40 of 40 lines left out (ra get shows them)")
    whole = rq(big_file, "get", "src:pipeline.py")
    assert "def step_8(" in whole.out and GAP not in whole.out


def _file_record(body: str, tokens: int) -> Any:
    from ra_query.artifacts.models import ChunkRecord

    return ChunkRecord(
        "s:src/term.py", "s", "src/term.py", "s:src/term.py", None, "term.py", ("src/term.py",),
        0, 0, 1, 1, 1, 0, 1, tokens, body, kind="code", language="python", defines="file",
    )  # fmt: skip


def test_a_files_own_chunk_of_at_most_300_tokens_is_shown_whole() -> None:
    from ra_query.search.focus import excerpt_of

    assert excerpt_of(_file_record(FILE_BODY, 200), words("color"), ANALYZER) is None
    assert excerpt_of(_file_record(FILE_BODY, 301), words("color"), ANALYZER) is not None


def test_the_eight_outline_lines_with_most_of_the_querys_words_are_kept() -> None:
    rows = [f"  def color_{i}(x: int) -> int  L{i}-{i}" for i in range(10)]
    rows += ["  def plain(x: int) -> int  L20-20", "  def paint(color: int, escape: bool) -> str  L30-30"]
    shown = outlined(
        FILE_HEAD + "\n\noutline:\n" + "\n".join(rows), "src/term.py", words("color escape"), ANALYZER
    )
    assert shown is not None
    kept = [r for r in shown.split("outline:\n")[1].split("\n") if "def " in r]
    assert len(kept) == 8 and rows[-1] in kept, shown  # the row with both words among them


def test_an_outline_whose_last_line_is_kept_ends_with_it() -> None:
    rows = [*OUTLINE_ROWS[:11], "  def color_last() -> None  L200-201"]
    shown = outlined(FILE_HEAD + "\n\noutline:\n" + "\n".join(rows), "src/term.py", words("color"), ANALYZER)
    assert shown is not None and shown.endswith(rows[-1]), shown  # no "k of n left out" line after it


def test_a_docstring_that_says_outline_does_not_split_the_file_chunk_there() -> None:
    head = '"""Draw a box around the text, as this outline:\n\n    +--+\n"""\n\nimport os'
    shown = outlined(
        head + "\n\noutline:\n" + "\n".join(OUTLINE_ROWS), "src/term.py", words("color"), ANALYZER
    )
    assert shown is not None and shown.startswith(head + "\n\noutline:\n")
    assert shown.endswith(
        f"{len(OUTLINE_ROWS) - 2} of {len(OUTLINE_ROWS)} lines left out (ra get shows them)"
    )


def test_an_outline_row_of_a_camel_case_name_matches_its_words() -> None:
    rows = [
        *(f"  func helper{i}(x int) int  L{i}-{i}" for i in range(10)),
        "  func ParseColor(name string) (int, error)  L40-48",  # `color` only inside the name
    ]
    shown = outlined(FILE_HEAD + "\n\noutline:\n" + "\n".join(rows), "term.go", words("color"), ANALYZER)
    assert shown is not None and rows[-1] in shown


def test_the_outlines_count_of_definitions_left_out_stays_last() -> None:
    rows = [*OUTLINE_ROWS, "  … 40 more"]
    shown = outlined(FILE_HEAD + "\n\noutline:\n" + "\n".join(rows), "src/term.py", words("color"), ANALYZER)
    assert shown is not None and shown.endswith(
        f"{len(OUTLINE_ROWS) - 2} of {len(OUTLINE_ROWS)} lines left out (ra get shows them)\n  … 40 more"
    )

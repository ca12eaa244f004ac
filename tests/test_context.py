"""`ra context FILE...` (issue 12, DECISIONS 24): the documentation that fits the files at hand."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import Run, run_cmd

DOCS = {
    "database.md": "# Database\n\n## Connection pool\n\nThe connection pool keeps database connections "
    "open. Size the pool for the workers; migrations run before the pool opens.\n",
    "auth.md": "# Authentication\n\n## OAuth tokens\n\nLogin issues an OAuth token; refresh tokens "
    "expire after a day. Sessions store the token.\n",
    "http.md": "# HTTP routing\n\n## Handlers\n\nEach route maps to a handler; middleware runs before "
    "the handler and can reject the request.\n",
    "overview.md": "# Overview\n\nA map of the project: database, authentication, routing.\n",
}
NOTES = {"pool-notes.md": "# Pool notes\n\nWe tuned the connection pool size for the batch workers.\n"}

CONFIG = """root = true

[tree.docs]
path = "docs"

[tree.notes]
path = "notes"

[context.patterns]
"*.sql" = ["migrations"]

[[context.rules]]
match = "src/auth/**"
include = ["docs:overview.md"]

[[context.rules]]
match = "src/batch/**"
trees = ["notes"]
"""

POOL_SOURCE = '''"""Database access for the workers."""

def open_pool(size):
    # the connection pool: one connection per worker, the pool size from settings
    pool = ConnectionPool(size=size)
    pool.connect()
    return pool

def close_pool(pool):
    # close every pooled connection
    pool.close()
'''

TOKEN_SOURCE = '''"""Login and OAuth tokens."""

def login(user):
    # issue an oauth token, store it in the session
    token = OAuthToken.issue(user)
    return token

def refresh(token):
    # refresh the oauth token before it expires
    return token.refresh()
'''


@pytest.fixture
def project(tmp_path: Path, home: Path) -> Path:
    root = tmp_path / "project"
    for tree, pages in (("docs", DOCS), ("notes", NOTES)):
        (root / tree).mkdir(parents=True)
        for name, text in pages.items():
            (root / tree / name).write_text(text, encoding="utf-8")
    (root / ".ra.toml").write_text(CONFIG, encoding="utf-8")
    for relative, text in {
        "src/db/pool.py": POOL_SOURCE,
        "src/auth/tokens.py": TOKEN_SOURCE,
        "src/batch/workers.py": POOL_SOURCE,
    }.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    assert run_cmd("ra", "update", cwd=root, home=home).code == 0
    return root


def context(project: Path, home: Path, *args: str) -> Run:
    return run_cmd("ra", "context", *args, cwd=project, home=home)


def ids(run: Run) -> list[str]:
    assert run.code == 0, run.err
    return [r["id"] for query in json.loads(run.out)["queries"] for r in query["results"]]


POOL_PAGES = {"notes:pool-notes.md#pool-notes", "docs:database.md#connection-pool"}


def test_a_source_file_about_a_topic_gets_that_topics_documentation_first(project: Path, home: Path) -> None:
    assert set(ids(context(project, home, "--json", "src/db/pool.py"))[:2]) == POOL_PAGES
    assert ids(context(project, home, "--json", "src/auth/tokens.py"))[1].startswith("docs:auth.md")


def test_a_rules_include_comes_first(project: Path, home: Path) -> None:
    assert ids(context(project, home, "--json", "src/auth/tokens.py"))[0] == "docs:overview.md"


def test_a_rules_trees_restrict_the_search(project: Path, home: Path) -> None:
    found = ids(context(project, home, "--json", "src/batch/workers.py"))
    assert found and all(i.startswith("notes:") for i in found)


def test_rule_globs_match_the_path_from_the_configs_directory_however_it_is_written(
    project: Path, home: Path
) -> None:
    plain = ids(context(project, home, "--json", "src/auth/tokens.py"))
    assert ids(context(project, home, "--json", "./src/auth/tokens.py")) == plain
    assert (
        ids(run_cmd("ra", "context", "--json", "tokens.py", cwd=project / "src" / "auth", home=home)) == plain
    )


def test_a_page_named_after_a_code_file_comes_before_a_section_titled_alike(
    project: Path, home: Path
) -> None:
    # `pool-notes.md` is named after `pool.py`; the database page only has a section "Connection pool"
    found = ids(context(project, home, "--json", "src/db/pool.py"))
    assert found[:2] == ["notes:pool-notes.md#pool-notes", "docs:database.md#connection-pool"]


def test_several_files_each_get_their_documentation_first_without_duplicates(
    project: Path, home: Path
) -> None:
    run = context(project, home, "--json", "-n", "6", "src/db/pool.py", "src/auth/tokens.py")
    found = ids(run)
    assert len(found) == len(set(found))
    pool, tokens = ([r["id"] for r in q["results"]] for q in json.loads(run.out)["queries"])
    assert set(pool[:2]) == POOL_PAGES
    assert tokens[0] == "docs:overview.md" and tokens[1].startswith(
        "docs:auth.md"
    )  # its rule's include first


def test_an_input_file_that_is_indexed_is_left_out_before_the_limit(project: Path, home: Path) -> None:
    found = ids(context(project, home, "--json", "-n", "1", "docs/database.md"))
    assert found == ["notes:pool-notes.md#pool-notes"]  # the best match after the file itself


def test_a_binary_input_is_skipped_with_a_warning_and_its_path_still_counts(
    project: Path, home: Path
) -> None:
    (project / "src" / "db" / "pool.bin").write_bytes(b"\0\x01pool\0")
    run = context(project, home, "--list", "src/db/pool.bin")
    assert "ra: warning: src/db/pool.bin: binary file — skipped (only its path counts)\n" in run.err
    assert run.code == 0 and "docs:database.md" in run.out


def test_a_file_whose_words_nothing_else_holds_gets_a_note_not_silence(tmp_path: Path, home: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "w.h").write_text("class Widget { public: void draw(); };\n", encoding="utf-8")
    (tmp_path / ".ra.toml").write_text(
        'root = true\n[tree.d]\npath = "d"\ninclude = ["**/*.h"]\n', encoding="utf-8"
    )
    assert run_cmd("ra", "update", cwd=tmp_path, home=home).code == 0  # its words are its own alone
    run = context(tmp_path, home, "d/w.h")
    assert run.code == 1
    assert run.out.startswith("note: nothing else in the index matches d/w.h — context leaves its own")


def test_a_result_with_a_line_of_megabytes_is_shown_as_its_beginning(tmp_path: Path, home: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "huge.md").write_text("# Huge zebra\n\n" + "zebra huge line " * 100_000 + "\n")
    (tmp_path / "d" / "notes.md").write_text("# Zebra notes\n\nzebra huge line notes\n")
    (tmp_path / ".ra.toml").write_text('root = true\n[tree.d]\npath = "d"\n', encoding="utf-8")
    assert run_cmd("ra", "update", cwd=tmp_path, home=home).code == 0
    run = context(tmp_path, home, "d/notes.md")
    assert run.code == 0 and run.out.startswith("─── d:huge.md#huge-zebra ───")
    assert len(run.out) < 6_000 and "characters left out: ra get shows them]" in run.out  # not 1.6 MB


def test_a_missing_file_is_a_one_line_error(project: Path, home: Path) -> None:
    run = context(project, home, "src/nope.py")
    assert (run.code, run.out) == (2, "")
    assert run.err == "ra: error: src/nope.py: no such file — give the files you are working on\n"


def test_explain_shows_each_term_its_source_and_the_query(project: Path, home: Path) -> None:
    run = context(project, home, "--explain", "--list", "src/db/pool.py")
    assert run.code == 0
    head = run.out.split("\n\n", 1)[0]
    assert head.startswith("terms (score  source  frequency  idf):\n")
    assert " pool " in head and "query: pool^4.00" in head
    assert "files 1 (read 1, skipped 0)" in head


def test_json_carries_the_terms_and_the_query(project: Path, home: Path) -> None:
    payload = json.loads(context(project, home, "--json", "src/db/pool.py").out)
    assert payload["queries"][0]["context"]["query"].startswith("pool^4.00")
    assert {"word", "score", "source", "frequency", "idf"} <= set(
        payload["queries"][0]["context"]["terms"][0]
    )


def test_terms_the_index_does_not_hold_are_dropped(project: Path, home: Path) -> None:
    payload = json.loads(context(project, home, "--json", "src/db/pool.py").out)
    words = {t["word"] for t in payload["queries"][0]["context"]["terms"]}
    assert "pool" in words
    assert "close" not in words  # three times in the source, in no document


def test_the_number_of_terms_is_bounded_by_terms(project: Path, home: Path) -> None:
    payload = json.loads(context(project, home, "--json", "--terms", "2", "src/db/pool.py").out)
    assert len(payload["queries"][0]["context"]["terms"]) == 2


def test_a_pattern_adds_its_terms_to_matching_files(project: Path, home: Path) -> None:
    (project / "src" / "db" / "schema.sql").write_text("create table users (id int);\n", encoding="utf-8")
    payload = json.loads(context(project, home, "--json", "src/db/schema.sql").out)
    assert "migrations" in {
        t["word"] for t in payload["queries"][0]["context"]["terms"] if t["source"] == "rule"
    }


# ---- ra likethis ---------------------------------------------------------------------------------


def test_likethis_a_chunk_finds_similar_chunks_and_leaves_the_chunk_out(project: Path, home: Path) -> None:
    found = ids(
        run_cmd("ra", "likethis", "--json", "docs:database.md#connection-pool", cwd=project, home=home)
    )
    assert found[0] == "notes:pool-notes.md#pool-notes"
    assert "docs:database.md#connection-pool" not in found


def test_likethis_a_document_leaves_the_whole_document_out(project: Path, home: Path) -> None:
    found = ids(run_cmd("ra", "likethis", "--json", "docs:database.md", cwd=project, home=home))
    assert found and not any(i.startswith("docs:database.md") for i in found)


def test_likethis_a_file_reads_it_as_context_does(project: Path, home: Path) -> None:
    found = ids(run_cmd("ra", "likethis", "--json", "src/db/pool.py", cwd=project, home=home))
    assert found == ids(context(project, home, "--json", "src/db/pool.py"))
    assert set(found[:2]) == POOL_PAGES


def test_likethis_an_unknown_id_is_not_found(project: Path, home: Path) -> None:
    run = run_cmd("ra", "likethis", "docs:nope.md", cwd=project, home=home)
    assert (run.code, run.out) == (1, "")
    assert run.err == "ra: error: not found: docs:nope.md — list document ids with: ra ls docs docs:\n"


# ---- ra inspect ctx, and the read-only side: ra-query context, ls, status ------------------------


def rq(project: Path, home: Path, *args: str) -> Run:
    return run_cmd("ra-query", *args, cwd=project, home=home)


def test_inspect_ctx_shows_the_signals_of_a_file(project: Path, home: Path) -> None:
    run = run_cmd("ra", "inspect", "ctx", "src/db/pool.py", cwd=project, home=home)
    assert run.code == 0, run.err
    assert run.out.startswith("terms (score  source  frequency  idf):\n")
    assert "query: pool^4.00" in run.out


def test_ra_query_context_reads_files_against_prebuilt_artifacts(project: Path, home: Path) -> None:
    found = ids(rq(project, home, "context", "--json", "src/db/pool.py"))
    assert found == ids(context(project, home, "--json", "src/db/pool.py"))
    assert set(found[:2]) == POOL_PAGES


def test_ra_query_ls_lists_from_the_index_alone(project: Path, home: Path) -> None:
    shutil.rmtree(project / ".ra" / "chunks")  # a published artifact may ship without tables
    assert rq(project, home, "ls", "trees").out == "docs\nnotes\n"
    assert rq(project, home, "ls", "docs", "docs:a").out == "docs:auth.md\n"
    chunks = rq(project, home, "ls", "chunks", "-l", "docs:database.md").out.splitlines()
    assert chunks[0].startswith("docs:database.md\tL1-")
    assert chunks[-1].startswith("docs:database.md#connection-pool\tL3-5\t")
    assert rq(project, home, "ls", "docs", "nope:").code == 1


def test_ra_query_status_says_what_the_artifacts_hold_and_how_stale_they_are(
    project: Path, home: Path
) -> None:
    payload = json.loads(rq(project, home, "status", "--json").out)
    assert [t["name"] for t in payload["trees"]] == ["docs", "notes"]
    assert payload["stale"] == 0 and payload["bytes"] > 0
    (project / "docs" / "new.md").write_text("# New\n", encoding="utf-8")
    text = rq(project, home, "status").out
    assert "index: stale (1 file changed)\n" in text and text.startswith("artifacts: ")


def test_the_tree_limits_of_several_matching_rules_intersect() -> None:
    from ra_query.search.context import ContextRule, _rule_trees  # pyright: ignore[reportPrivateUsage]

    both = ContextRule(("a/**",), ("docs", "notes"), (), ())
    notes = ContextRule(("a/x/**",), ("notes",), (), ())
    anywhere = ContextRule(("*.py",), None, (), ())
    assert _rule_trees([both, notes, anywhere]) == ("notes",)
    assert _rule_trees([anywhere]) == ()
    docs = ContextRule(("b/**",), ("docs",), (), ())
    assert _rule_trees([docs, notes]) == ("docs", "notes")  # nothing in common: any of them

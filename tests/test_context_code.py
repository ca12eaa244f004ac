"""`ra context CODE_FILE` (issue 32): "what must I know to change this?" — the docs that explain
the file first, then the code of other files it is about, its tests last; the file left out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import pytest

from tests.conftest import Run, run_cmd

AUTH = '''"""Authentication for the client: basic and digest auth flows."""


class DigestAuth:
    """Digest authentication: answer the server's challenge with a hashed nonce."""

    def auth_flow(self, request):
        response = yield request
        if response.status_code == 401:
            challenge = parse_challenge(response.headers["www-authenticate"])
            request.headers["Authorization"] = build_digest_header(challenge, self.nonce_count)
            yield request


def parse_challenge(header):
    """Split a digest challenge header into its realm, nonce and qop."""
    return dict(part.split("=", 1) for part in header.split(","))


def build_digest_header(challenge, nonce_count):
    """The digest header: the response hash of the challenge's realm and nonce."""
    return f"Digest realm={challenge['realm']}, nonce={challenge['nonce']}, nc={nonce_count:08x}"
'''

CLIENT = '''"""The client that sends requests, with auth."""


class Client:
    def send(self, request, auth=None):
        """Send a request; an auth flow such as DigestAuth answers the challenge."""
        flow = auth.auth_flow(request)
        return next(flow)
'''

ASYNC_CLIENT = '''"""The async client."""


class AsyncClient:
    async def send(self, request, auth=None):
        """Send a request without blocking; an auth flow answers the challenge."""
        flow = auth.auth_flow(request)
        return await flow.asend(None)
'''

SEND_TESTS = """def test_client_send_runs_the_auth_flow():
    client = Client()
    assert client.send(request, auth=DigestAuth()) is not None
"""

TESTS = '''"""Tests of digest auth: challenge, nonce and header."""


def test_digest_auth_answers_the_challenge_with_the_nonce():
    challenge = parse_challenge("realm=x,nonce=abc,qop=auth")
    header = build_digest_header(challenge, 1)
    assert "nonce=abc" in header and "Digest realm" in header


def test_digest_auth_counts_the_nonce():
    challenge = parse_challenge("realm=x,nonce=abc")
    assert "nc=00000002" in build_digest_header(challenge, 2)
'''

AUTH_DOCS = """# Authentication

Pass `auth=` to send credentials.

## Digest authentication

`DigestAuth` answers a server's challenge: the client reads the realm and the nonce from the
`WWW-Authenticate` header and sends an `Authorization` header with the hashed response.
"""

OTHER_DOCS = {
    "docs/quickstart.md": "# Quickstart\n\nInstall the client and send a request.\n",
    "docs/timeouts.md": "# Timeouts\n\nEvery request has a connect and a read timeout.\n",
}


def build_repo(root: Path, home: Path, files: dict[str, str]) -> None:
    """`files` written under `root` as one tree of Python and markdown, built by `ra update`."""
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    (root / ".ra.toml").write_text(
        'root = true\n\n[tree.repo]\npath = "."\ninclude = ["**/*.py", "**/*.md"]\n', encoding="utf-8"
    )
    assert run_cmd("ra", "update", cwd=root, home=home).code == 0


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The repository, built once for the module (no test changes it), and its HOME."""
    root = tmp_path_factory.mktemp("context-code") / "repo"
    home = root.parent / "home"
    home.mkdir()
    files = {
        "src/auth.py": AUTH,
        "src/client.py": CLIENT,
        "src/async_client.py": ASYNC_CLIENT,
        "tests/test_auth.py": TESTS,
        "tests/test_send.py": SEND_TESTS,
        "docs/authentication.md": AUTH_DOCS,
        **OTHER_DOCS,
    }
    build_repo(root, home, files)
    return root, home


@pytest.fixture
def repo(built: tuple[Path, Path]) -> Path:
    return built[0]


@pytest.fixture
def home(built: tuple[Path, Path]) -> Path:  # the built repository's, not a fresh one
    return built[1]


def context(root: Path, home: Path, *args: str) -> Run:
    return run_cmd("ra", "context", *args, cwd=root, home=home)


def results(run: Run) -> list[dict[str, object]]:
    assert run.code == 0, run.err
    return json.loads(run.out)["queries"][0]["results"]


def test_the_docs_page_that_explains_a_code_file_comes_first(repo: Path, home: Path) -> None:
    found = results(context(repo, home, "--json", "src/auth.py"))
    assert str(found[0]["id"]).startswith("repo:docs/authentication.md")


def test_the_tests_of_a_code_file_come_after_the_other_code(repo: Path, home: Path) -> None:
    kinds = [
        (r["kind"], str(r["path"]).startswith("tests/"))
        for r in results(context(repo, home, "--json", "src/auth.py"))
    ]
    assert ("code", False) in kinds and ("code", True) in kinds
    assert kinds.index(("code", False)) < kinds.index(("code", True))
    assert kinds.index(("docs", False)) < kinds.index(("code", False))


def test_a_code_file_is_not_its_own_context(repo: Path, home: Path) -> None:
    assert all(r["path"] != "src/auth.py" for r in results(context(repo, home, "--json", "src/auth.py")))


def test_kind_restricts_a_code_files_context(repo: Path, home: Path) -> None:
    found = results(context(repo, home, "--json", "--kind", "code", "src/auth.py"))
    assert found and all(r["kind"] == "code" for r in found)
    found = results(context(repo, home, "--json", "--kind", "docs", "src/auth.py"))
    assert found and all(r["kind"] == "docs" for r in found)


def test_explain_says_how_a_code_files_context_is_made(repo: Path, home: Path) -> None:
    run = context(repo, home, "--explain", "src/auth.py")
    assert run.code == 0, run.err
    assert (
        "code files: the docs first (at most 3 pages, searched apart; the files' names weigh 3 there: auth)"
        in run.out
    )


def test_the_json_of_a_code_files_context_says_it_is_code_and_its_name_words(repo: Path, home: Path) -> None:
    run = context(repo, home, "--json", "src/auth.py")
    assert run.code == 0, run.err
    analysis = json.loads(run.out)["queries"][0]["context"]
    assert (analysis["code"], analysis["names"]) == (True, ["auth"])


def test_a_code_files_docs_are_searched_with_its_words_scored_among_the_pages(repo: Path, home: Path) -> None:
    run = context(repo, home, "--json", "src/auth.py")
    assert run.code == 0, run.err
    analysis = json.loads(run.out)["queries"][0]["context"]
    everywhere = [t["word"] for t in analysis["terms"]]
    pages = [t["word"] for t in analysis["docs_terms"]]
    # `split` is the file's second term in the whole index, and no page holds it; `challenge`,
    # which every definition of the file uses, is what tells the docs page apart
    assert everywhere[1] == "split" and "split" not in pages
    assert pages[0] == "challenge" and analysis["docs_query"].startswith("challenge^4.00 ")


def test_a_code_files_own_identifiers_do_not_crowd_its_docs_query(tmp_path: Path) -> None:
    # the file's seventeen identifiers are the rarest words of the index and on no page: scored
    # over the whole index they fill the 15 terms, and `wrap`, which every module uses and one
    # page explains, is left out of the docs search
    root, home = tmp_path / "repo", tmp_path / "home"
    home.mkdir()
    files = {f"src/m{k}.py": f"def f{k}(text):\n    return wrap(text)  # wrap\n" for k in range(20)}
    names = [f"quux{c * 3}" for c in "abcdefghijklmnopq"]
    files["src/text.py"] = (
        "def fit(text):\n    # wrap the text, wrap it again, then wrap the rest\n"
        + "".join(f"    {name} = {name}(text)\n" for name in names)
        + "    return wrap(text)\n"
    )
    files["docs/wrapping.md"] = "# Wrapping\n\nLong lines wrap at the width.\n"
    files["docs/colours.md"] = "# Colours\n\nEach colour has a name.\n"
    build_repo(root, home, files)
    run = context(root, home, "--json", "src/text.py")
    analysis = json.loads(run.out)["queries"][0]["context"]
    assert "wrap" not in [t["word"] for t in analysis["terms"]]
    assert analysis["docs_query"] == "wrap^4.00"
    assert results(run)[0]["id"] == "repo:docs/wrapping.md#wrapping"


def test_explain_shows_a_code_files_docs_query(repo: Path, home: Path) -> None:
    run = context(repo, home, "--explain", "src/auth.py")
    assert run.code == 0, run.err
    assert "docs query (the words scored among the pages): challenge^4.00 digest^" in run.out


def test_a_markdown_files_context_has_no_docs_query_of_its_own(repo: Path, home: Path) -> None:
    run = context(repo, home, "--json", "docs/authentication.md")
    analysis = json.loads(run.out)["queries"][0]["context"]
    assert (analysis["docs_terms"], analysis["docs_query"]) == ([], "")


def test_a_markdown_file_keeps_docs_before_code_in_one_search(repo: Path, home: Path) -> None:
    run = context(repo, home, "--json", "docs/authentication.md")
    analysis = json.loads(run.out)["queries"][0]["context"]
    assert analysis["code"] is False
    kinds = [r["kind"] for r in results(run)]
    assert kinds == sorted(kinds, key=lambda kind: kind == "code")


def test_likethis_a_definition_finds_its_twin_first_and_its_tests_last(repo: Path, home: Path) -> None:
    run = run_cmd("ra", "likethis", "--json", "repo:src/client.py#Client.send", cwd=repo, home=home)
    found = results(run)
    assert found[0]["id"] == "repo:src/async_client.py#AsyncClient.send"
    assert all(r["kind"] == "code" for r in found)
    tests = [k for k, r in enumerate(found) if str(r["path"]).startswith("tests/")]
    assert (
        tests and min(tests) > 0 and all(not str(r["path"]).startswith("tests/") for r in found[: min(tests)])
    )
    assert json.loads(run.out)["queries"][0]["context"]["definition"] == "src/client.py#Client.send"


def test_a_pages_file_named_alike_a_code_file_weighs_more_than_a_section_title_named_alike() -> None:
    from ra_query.search.context import NAME_MATCH, TITLE_MATCH, name_factor

    names = ("calculate", "retry", "delay")
    assert name_factor(names, "documentation/7-retry.md", "Backoff") == NAME_MATCH
    assert name_factor(names, "documentation/9-hooks.md", "beforeRetry") == TITLE_MATCH
    assert name_factor(names, "documentation/2-options.md", "timeout") == 1.0
    assert NAME_MATCH > TITLE_MATCH > 1.0


def test_a_page_is_named_alike_a_code_file_when_a_word_of_its_name_or_title_begins_with_the_files() -> None:
    from ra_query.search.context import _named_alike

    assert _named_alike(("auth",), "docs/authentication.md", "Authentication")
    assert _named_alike(("timeouts",), "docs/advanced/limits.md", "Timeout")
    assert not _named_alike(("auth",), "docs/quickstart.md", "Quickstart")


def test_a_code_files_name_words_come_from_its_folder_when_its_own_name_says_nothing() -> None:
    from ra_query.search.context import _name_words

    never = lambda word: False  # noqa: E731  # no stop words
    assert _name_words("httpx/_auth.py", never) == ["auth"]
    assert _name_words("httpx/_transports/default.py", never) == ["transports"]
    assert _name_words("source/as-promise/index.ts", never) == ["promise"]


# ---- several files: one list each, one limit, one budget (issue 32 item 3) ------------------------


def queries(run: Run) -> list[dict[str, object]]:
    assert run.code == 0, run.err
    return json.loads(run.out)["queries"]


def test_several_files_give_one_result_list_each_labelled_with_its_input(repo: Path, home: Path) -> None:
    found = queries(context(repo, home, "--json", "src/auth.py", "docs/timeouts.md"))
    assert [q["input"] for q in found] == ["src/auth.py", "docs/timeouts.md"]
    assert [q["context"]["input"] for q in found] == ["src/auth.py", "docs/timeouts.md"]  # type: ignore[index]
    assert str(found[0]["results"][0]["id"]).startswith("repo:docs/authentication.md")  # type: ignore[index]


def test_several_files_share_the_limit(repo: Path, home: Path) -> None:
    # two files whose best results differ (the client's pages are the auth module's: all four
    # would be shown once, under src/auth.py, and name the client)
    found = queries(context(repo, home, "--json", "-n", "4", "src/auth.py", "tests/test_send.py"))
    counts = [len(q["results"]) for q in found]  # type: ignore[arg-type]
    assert sum(counts) == 4 and all(count >= 1 for count in counts)


def test_several_files_share_one_token_budget(repo: Path, home: Path) -> None:
    run = context(repo, home, "--json", "--max-tokens", "120", "src/auth.py", "src/client.py")
    payload = json.loads(run.out)
    assert payload["tokens"]["used"] <= 120
    assert all(q["results"] for q in payload["queries"])  # each input keeps its first result


def test_a_result_two_files_share_is_shown_once_and_names_the_other_file(repo: Path, home: Path) -> None:
    found = queries(context(repo, home, "--json", "-n", "20", "src/client.py", "src/async_client.py"))
    ids = [str(r["id"]) for q in found for r in q["results"]]  # type: ignore[attr-defined]
    assert len(ids) == len(set(ids))
    shared = [r for r in found[0]["results"] if r.get("also_for")]  # type: ignore[union-attr]
    assert shared and all(r["also_for"] == ["src/async_client.py"] for r in shared)


def test_no_input_file_is_a_result_for_another(repo: Path, home: Path) -> None:
    found = queries(context(repo, home, "--json", "-n", "20", "src/client.py", "src/async_client.py"))
    paths = {str(r["path"]) for q in found for r in q["results"]}  # type: ignore[attr-defined]
    assert not paths & {"src/client.py", "src/async_client.py"}


def test_the_text_of_several_files_heads_each_list_with_its_input(repo: Path, home: Path) -> None:
    run = context(repo, home, "src/auth.py", "docs/timeouts.md")
    assert run.code == 0, run.err
    assert run.out.index("═══ src/auth.py ═══") < run.out.index("═══ docs/timeouts.md ═══")


def test_a_file_given_twice_is_read_once(repo: Path, home: Path) -> None:
    found = queries(context(repo, home, "--json", "src/auth.py", "src/auth.py"))
    assert len(found) == 1 and "input" in found[0]


# ---- signals and their sources (issue 32 item 2) ---------------------------------------------------


def test_a_code_files_terms_say_whether_they_come_from_imports_definitions_or_docstrings() -> None:
    from ra_query.search.context import DEFINES, DOCSTRING, IMPORT, _content_terms

    text = (
        "from telemetry import exporter\n\n"
        "class SpanBuffer:\n"
        '    """Buffered spans, flushed in batches."""\n\n'
        "    def flush(self):\n"
        "        # batches leave when the buffer fills\n"
        "        return self.queue\n"
    )
    parts = {word: part for word, _, part, _ in _content_terms(text, lambda w: len(w) >= 4, 1, code=True)}
    assert (parts["telemetry"], parts["span"], parts["batches"], parts["queue"]) == (
        IMPORT,
        DEFINES,
        DOCSTRING,
        4,
    )


@pytest.mark.parametrize(
    ("path", "text", "word"),
    [
        (
            "Tree.kt",
            "object Forest {\n  @JvmStatic fun plant(tree: Tree) {\n    trees.add(tree)\n  }\n}\n",
            "plant",
        ),
        ("Tree.swift", "extension Forest {\n  var size: Int {\n    trees.count\n  }\n}\n", "forest"),
        ("tree.lua", "local function plant(forest, tree)\n  table.insert(forest, tree)\nend\n", "plant"),
    ],
)
def test_the_definitions_of_kotlin_swift_and_lua_are_a_code_files_definitions(
    path: str, text: str, word: str
) -> None:
    from ra_query.search.context import DEFINES, _content_terms

    parts = {word: part for word, _, part, _ in _content_terms(text, lambda w: len(w) >= 4, 1, code=True)}
    assert parts[word] == DEFINES, path  # `@… fun`, `extension`, `local function` had been body text


def test_a_words_source_does_not_change_its_score() -> None:
    from ra_query.search.context import _content_terms

    plain = "def flush(self):\n    batches = 1\n    batches = 2\n"
    commented = "def flush(self):\n    # batches\n    batches = 2\n"
    score = {w: weight for w, weight, _, _ in _content_terms(plain, lambda w: len(w) >= 4, 2, code=True)}
    moved = {w: weight for w, weight, _, _ in _content_terms(commented, lambda w: len(w) >= 4, 2, code=True)}
    assert score["batches"] == moved["batches"]


@pytest.mark.parametrize(
    ("text", "modules"),
    [
        (
            "import os, fastapi.security as sec\nfrom pydantic import BaseModel\nfrom .models import X\n",
            ["os", "fastapi.security", "pydantic"],
        ),
        (
            "import express from 'express';\nconst ky = require('ky');\nimport './local.css';\n",
            ["express", "ky"],
        ),
        (
            "\n  import 'reflect-metadata';\nconst a = myrequire('no');\ndatafrom 'no'\nx import 'no'\n"
            "export * from 'lodash';\n",
            ["reflect-metadata", "lodash"],
        ),
        ('import (\n\t"fmt"\n\tcobra "github.com/spf13/cobra"\n)\n', ["github.com/spf13/cobra"]),
        ("use serde::Deserialize;\nuse crate::walk;\nextern crate regex;\n", ["serde::Deserialize", "regex"]),
        (
            "using System.Text;\nimport static org.junit.Assert.assertEquals;\n",
            ["org.junit.Assert.assertEquals", "System.Text"],
        ),
        ('#include <boost/asio.hpp>\n#include "local.h"\n', ["boost/asio.hpp"]),
    ],
)
def test_the_modules_a_code_file_imports_are_read_from_its_import_lines(
    text: str, modules: list[str]
) -> None:
    from ra_query.search.context import imported_modules

    assert imported_modules(text) == modules


def test_explain_lists_a_code_files_imports_and_each_terms_source(
    repo: Path, home: Path, tmp_path: Path
) -> None:
    source = tmp_path / "digest_check.py"  # outside the repository: its index stays as built
    source.write_text(
        "from hashlib import sha256\n\nclass NonceCounter:\n    # digest nonce counting\n"
        "    def digest(self):\n        return sha256(self.nonce)\n",
        encoding="utf-8",
    )
    run = context(repo, home, "--explain", str(source))
    assert run.code == 0, run.err
    assert "imports: hashlib" in run.out
    terms = [line.split() for line in run.out.splitlines() if line.startswith("  ")]
    assert ("nonce", "defines") in {
        (term[0], term[2]) for term in terms if len(term) == 5
    }  # hashlib: not indexed


RETRY = '''"""Retries with exponential backoff."""


def backoff_delay(attempt, base=0.5):
    """The backoff delay before retry `attempt`: doubled each time, jittered."""
    return base * 2**attempt


def should_retry(status, attempt, max_retries=3):
    """Whether a response status is retried: 429 and 503, up to max_retries attempts."""
    return status in (429, 503) and attempt < max_retries
'''

RETRY_DOCS = """# Failures

What the client does when a request fails.

## Which responses are retried

A 429 or a 503 response is retried, up to `max_retries` attempts.

## Backoff

Each retry waits a backoff delay that doubles with every attempt, with jitter.

## Giving up

After `max_retries` attempts the last response is returned.

## Proxies

A proxy URL can be set for every connection.
"""


def test_a_code_files_docs_page_is_the_answer_when_most_of_its_sections_match(tmp_path: Path) -> None:
    # three of the page's four sections say the file's words: the page explains the file, and it
    # is shown merged, as a search shows a page only when nearly all its sections match
    root, home = tmp_path / "repo", tmp_path / "home"
    home.mkdir()
    files = {"src/retry.py": RETRY, "docs/retries.md": RETRY_DOCS, **OTHER_DOCS}
    build_repo(root, home, files)
    first = results(context(root, home, "--json", "src/retry.py"))[0]
    merged = cast("list[str]", first["constituents"])
    assert first["id"] == "repo:docs/retries.md#failures"
    assert "repo:docs/retries.md#backoff" in merged and "repo:docs/retries.md#proxies" not in merged
    searched = json.loads(
        run_cmd("ra", "search", "--json", "retry backoff attempts", cwd=root, home=home).out
    )
    assert "constituents" not in searched["queries"][0]["results"][0]  # a search shows the section

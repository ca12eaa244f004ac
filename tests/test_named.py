"""Names first (issue 30): a query that is a definition's, a file's, a page's or a heading's name
returns it first, ahead of longer names that hold it — by every interface."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from ra_query.text.names import chunk_keys, forms, is_identifier, query_keys, symbol_keys
from tests.conftest import BIN, Run, build, run_cmd

CLIENT = textwrap.dedent(
    '''\
    """The client: requests, redirects and content encoding."""


    def encode_response(content, content_type):
        """Encode the content of a response: encode content, encode content again."""
        return encode_content(content) + encode_content(content_type)


    def encode_content(content):
        """Bytes of the request body."""
        return bytes(content)


    def plugins():
        """The registered ones."""
        return []


    class BaseClient:
        def _redirect_method(self, request):
            """The method a redirect uses."""
            return request.method

        def decode(self, data):
            return data


    def decode_r(data):
        return data


    class Decoder:
        def decode(self, data):
            """decode decode decode: the bytes as text."""
            return data.decode()
    '''
)
TEST_CLIENT = textwrap.dedent(
    """\
    from client import encode_content


    def encode_content_test():
        assert encode_content(b"x") == encode_content(b"x")
    """
)


def _page(title: str, body: str) -> str:
    return f"# {title}\n\n> {body}\n\n- Run it:\n\n`{title} {{{{arg}}}}`\n"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A code tree and a folder of command pages, built once."""
    root = tmp_path_factory.mktemp("named")
    home = root / "home"
    home.mkdir()
    kb = root / "kb"
    (kb / "src").mkdir(parents=True)
    (kb / "tests").mkdir()
    (kb / "pages").mkdir()
    (kb / "src" / "client.py").write_text(CLIENT, encoding="utf-8")
    (kb / "tests" / "test_client.py").write_text(TEST_CLIENT, encoding="utf-8")
    (kb / "src" / "queue.ts").write_text(
        "export class Queue {\n    add(task: Task): void {\n        this.tasks.push(task);\n    }\n}\n",
        encoding="utf-8",
    )
    (kb / "tests" / "queue.test.ts").write_text(  # a test titled after the method: its name is `add`
        "test('.add()', () => {\n    const queue = new Queue();\n    queue.add(task);\n"
        "    expect(queue.size).toBe(1);\n});\n",
        encoding="utf-8",
    )
    pages = {
        "ssh": "Secure Shell is a protocol used to log in to remote systems.",
        "ssh-add": "Add ssh keys to the ssh agent; ssh ssh ssh.",
        "ssh-keygen": "Generate ssh keys for ssh authentication and ssh.",
        "tailscale ssh": "ssh to a tailscale machine with tailscale ssh.",
        "git commit": "Commit files to the repository.",
        "git commits-since": "List git commit entries since a date: git commit git commit.",
    }
    for title, body in pages.items():
        (kb / "pages" / f"{title.replace(' ', '-')}.md").write_text(_page(title, body), encoding="utf-8")
    (kb / "pages" / "guide.md").write_text(
        "# Guide\n\n## Installation\n\nInstall it with pip; installation takes a minute.\n\n"
        "## Usage\n\nInstallation done, run it: the installation of plugins is below.\n",
        encoding="utf-8",
    )
    (kb / "pages" / "encoding.md").write_text(
        "# Encoding\n\n## EncodeContent\n\nHow the client encodes content: encode content, EncodeContent.\n",
        encoding="utf-8",
    )
    # five sections about plugins: matching alike, they merge into their page, which scores above
    # any one of them
    sections = "".join(f"## Step {k}\n\nPlugins, plugins and more plugins, step {k}.\n\n" for k in range(5))
    (kb / "pages" / "extensions.md").write_text(f"# Extensions\n\n{sections}", encoding="utf-8")
    (kb / ".ra.toml").write_text(
        'root = true\n[tree.kb]\npath = "."\ninclude = ["**/*.py", "**/*.ts", "**/*.md"]\n', encoding="utf-8"
    )
    build(kb, home)
    return kb, home


def _ids(project: tuple[Path, Path], *args: str, program: str = "ra") -> list[str]:
    kb, home = project
    extra = ("--artifacts", str(kb / ".ra")) if program == "ra-query" else ()
    run: Run = run_cmd(program, *extra, "search", "--json", *args, cwd=kb, home=home)
    assert run.code == 0, run.err
    return [r["id"] for q in json.loads(run.out)["queries"] for r in q["results"]]


# ── keys ──────────────────────────────────────────────────────────────────────────────────────


def test_a_name_has_its_lowercased_form_and_its_letters_and_digits_alone() -> None:
    assert forms("Encode_Content") == ["encode_content", "encodecontent"]
    assert forms("git  commit") == ["git commit", "gitcommit"]
    assert forms("ssh") == ["ssh"]


def test_a_definition_is_found_under_its_qualified_name_and_every_shorter_suffix() -> None:
    keys = symbol_keys("Outer.Inner.run")
    assert {"outer.inner.run", "inner.run", "run"} <= set(keys)
    assert "outerinnerrun" in keys


def test_rust_and_cpp_separators_name_the_same_parts_as_dots() -> None:
    full, exact, loose = query_keys("Opts::max_depth")[0].levels
    assert (full, exact) == (["==Opts.max_depth"], ["=Opts.max_depth"])
    assert "opts.max_depth" in loose
    assert "opts.max_depth" in symbol_keys("Opts.max_depth")


def test_names_know_the_extensions_of_every_file_ra_chunks() -> None:
    from ra_query.sources.languages import CODE_EXTENSIONS, DOC_EXTENSIONS
    from ra_query.text.names import _EXTENSIONS  # pyright: ignore[reportPrivateUsage]

    assert {*CODE_EXTENSIONS, *DOC_EXTENSIONS} == set(_EXTENSIONS)  # `Tree.kt` is a file, not `kt`


def test_names_know_the_fields_of_the_query_language() -> None:
    from ra_query.search.syntax import FIELDS
    from ra_query.text.names import QUERY_FIELDS

    assert set(FIELDS) == QUERY_FIELDS


def test_a_lua_method_typed_as_written_is_the_dotted_name_unless_a_field_names_it() -> None:
    assert query_keys("Path:new")[0].levels[:2] == [["==Path.new"], ["=Path.new"]]  # `function Path:new`
    assert query_keys("M.Job:sync")[0].levels[0] == ["==M.Job.sync"]
    assert query_keys("path:new") == query_keys("lang:lua") == []  # the query language's fields


def test_a_file_is_named_by_its_path_and_its_file_name_and_a_page_by_its_title_too() -> None:
    keys = chunk_keys(kind="docs", depth=0, symbol="", title="Git Commit", path="pages/git-commit.md")
    assert {"pages/git-commit.md", "git-commit.md", "git commit"} <= set(keys)


def test_a_code_block_that_names_nothing_has_no_key() -> None:
    assert chunk_keys(kind="code", depth=1, symbol="", title="x = 1", path="a.py") == []


@pytest.mark.parametrize(
    "query",
    ["title:ssh", "ssh -agent", "ssh OR scp", "(ssh)", "a b c d e f g h i j k l m", "x" * 200],
)
def test_a_query_in_the_query_language_or_a_long_one_is_not_a_name(query: str) -> None:
    assert query_keys(query) == []


@pytest.mark.parametrize(
    "query", ["`encode_content`", "encode_content()", "  encode_content  ", '"encode_content"']
)
def test_quotes_a_call_and_spaces_around_a_name_are_looked_through(query: str) -> None:
    assert query_keys(query)[0].levels[-1][0] == "encode_content"


def test_a_php_name_qualified_by_its_namespace_finds_the_class_and_its_last_part() -> None:
    for query in (r"Monolog\Handler\StreamHandler", r"\Monolog\Handler\StreamHandler"):
        assert is_identifier(query)
        tiers = query_keys(query)
        assert tiers[0].levels[0] == ["==Monolog.Handler.StreamHandler"]
        assert tiers[-1].levels[0] == ["=StreamHandler"]


def test_an_options_name_is_a_name() -> None:
    assert query_keys("--max-depth")[0].levels[-1] == ["--max-depth", "maxdepth"]


_IDENTIFIER = st.from_regex(
    r"[A-Za-z_][A-Za-z0-9_]{0,12}(\.[A-Za-z_][A-Za-z0-9_]{0,12}){0,3}", fullmatch=True
)


@given(_IDENTIFIER)
def test_a_definitions_name_as_written_and_its_last_part_find_its_keys(symbol: str) -> None:
    assume(symbol.rsplit(".", 1)[-1] != "OR")  # alone, `OR` is the query's operator, not a name
    keys = set(chunk_keys(kind="code", depth=1, symbol=symbol, title="", path="a.py"))
    for level in query_keys(symbol)[0].levels:
        assert set(level) <= keys
    for level in query_keys(symbol.rsplit(".", 1)[-1])[0].levels[-2:]:  # exact and loose
        assert set(level) <= keys


@given(st.text(max_size=300))
def test_any_text_gives_query_keys_without_falling_over(text: str) -> None:
    for tier in query_keys(text):
        assert tier.levels and all(key for level in tier.levels for key in level)


# ── searching ─────────────────────────────────────────────────────────────────────────────────


def test_a_definitions_name_puts_it_first_ahead_of_a_longer_name_that_uses_it(
    project: tuple[Path, Path],
) -> None:
    assert _ids(project, "encode_content")[0] == "kb:src/client.py#encode_content"


def test_a_definitions_name_as_written_with_its_class_puts_it_first(project: tuple[Path, Path]) -> None:
    assert _ids(project, "BaseClient._redirect_method")[0] == "kb:src/client.py#BaseClient._redirect_method"


def test_the_bare_last_part_of_a_name_finds_the_definition(project: tuple[Path, Path]) -> None:
    assert _ids(project, "_redirect_method")[0] == "kb:src/client.py#BaseClient._redirect_method"


def test_a_name_in_another_spelling_finds_the_definition(project: tuple[Path, Path]) -> None:
    assert _ids(project, "EncodeContent")[0] == "kb:src/client.py#encode_content"


def test_a_bare_name_several_classes_define_lists_their_definitions_first(project: tuple[Path, Path]) -> None:
    assert set(_ids(project, "decode")[:2]) == {
        "kb:src/client.py#BaseClient.decode",
        "kb:src/client.py#Decoder.decode",
    }


def test_a_name_typed_exactly_comes_before_the_names_it_only_resembles(project: tuple[Path, Path]) -> None:
    assert _ids(project, "Decoder")[0] == "kb:src/client.py#Decoder"
    assert _ids(project, "decoder")[0] == "kb:src/client.py#Decoder"
    assert _ids(project, "decode_r")[0] == "kb:src/client.py#decode_r"


def test_a_definition_comes_before_a_heading_of_its_name_when_typed_as_written(
    project: tuple[Path, Path],
) -> None:
    assert _ids(project, "encode_content")[0] == "kb:src/client.py#encode_content"
    assert "kb:pages/encoding.md#encodecontent" in _ids(project, "EncodeContent")[:3]


@pytest.mark.parametrize(
    "text", ["encode_content", "openStore", "Client.send", "Opts::max_depth", "run()", "x->y"]
)
def test_a_name_spelt_like_code_is_an_identifier(text: str) -> None:
    assert is_identifier(text)


@pytest.mark.parametrize("text", ["ssh", "Installation", "git commit", "HTTP", "ssh-add", "Go"])
def test_a_word_or_a_command_is_not_an_identifier(text: str) -> None:
    assert not is_identifier(text)


def test_a_name_finds_the_code_before_the_test_that_calls_it(project: tuple[Path, Path]) -> None:
    found = _ids(project, "encode_content")
    assert found.index("kb:src/client.py#encode_content") == 0


def test_a_name_spelt_like_code_keeps_its_definition_first_above_a_named_section_whose_parts_matched(
    tmp_path: Path,
) -> None:
    kb, home = tmp_path / "kb", tmp_path / "home"
    (kb / "src").mkdir(parents=True)
    home.mkdir()
    (kb / "src" / "base.py").write_text("class BaseHTTPMiddleware:\n    def dispatch(self):\n        pass\n")
    parts = "".join(f"### Step {k}\n\nSubclass BaseHTTPMiddleware, step {k}.\n\n" for k in range(3))
    (kb / "middleware.md").write_text(f"# Middleware\n\n## BaseHTTPMiddleware\n\nUse it.\n\n{parts}")
    (kb / ".ra.toml").write_text('root = true\n[tree.kb]\npath = "."\ninclude = ["**/*.py", "**/*.md"]\n')
    build(kb, home)
    found = _ids((kb, home), "BaseHTTPMiddleware")
    assert found[:2] == ["kb:src/base.py#BaseHTTPMiddleware", "kb:middleware.md#basehttpmiddleware"]


def test_a_name_finds_the_method_before_a_test_titled_by_it(project: tuple[Path, Path]) -> None:
    assert _ids(project, "add")[:2] == ["kb:src/queue.ts#Queue.add", "kb:tests/queue.test.ts#add"]


def test_a_command_name_puts_its_page_first_ahead_of_pages_named_after_it(project: tuple[Path, Path]) -> None:
    assert _ids(project, "ssh")[0].startswith("kb:pages/ssh.md")  # the page, or its h1's section
    assert _ids(project, "git commit")[0].startswith("kb:pages/git-commit.md")


def test_a_headings_title_puts_that_section_first(project: tuple[Path, Path]) -> None:
    assert _ids(project, "Installation")[0] == "kb:pages/guide.md#installation"


def test_a_named_chunk_stays_first_above_a_section_many_matches_merged_into(
    project: tuple[Path, Path],
) -> None:
    found = _ids(project, "plugins")
    assert found[0] == "kb:src/client.py#plugins"
    assert "kb:pages/extensions.md#extensions" in found  # the merged section, after it


def test_a_file_name_puts_the_files_outline_first(project: tuple[Path, Path]) -> None:
    assert _ids(project, "client.py")[0] == "kb:src/client.py"


def test_names_come_first_in_ra_query_too(project: tuple[Path, Path]) -> None:
    assert _ids(project, "ssh", program="ra-query")[0].startswith("kb:pages/ssh.md")
    assert _ids(project, "encode_content", program="ra-query")[0] == "kb:src/client.py#encode_content"


def test_a_name_still_obeys_the_kind_filter(project: tuple[Path, Path]) -> None:
    found = _ids(project, "--kind", "code", "ssh", "encode_content")
    assert found[0] == "kb:src/client.py#encode_content"
    assert not any(i.startswith("kb:pages/") for i in found)


def test_explain_lists_the_named_chunks(project: tuple[Path, Path]) -> None:
    kb, home = project
    run = run_cmd("ra", "search", "--explain", "ssh", cwd=kb, home=home)
    assert run.code == 0, run.err
    assert "named: kb:pages/ssh.md" in run.out + run.err


def test_names_come_first_over_mcp(project: tuple[Path, Path]) -> None:
    from tests.test_mcp import serve

    kb, home = project
    with serve([str(BIN / "ra-query"), "--artifacts", str(kb / ".ra"), "mcp"], kb, home) as server:
        found = server.ok("search", {"queries": ["ssh", "encode_content"]})
    firsts = [q["results"][0]["id"] for q in found["queries"]]
    assert firsts[0].startswith("kb:pages/ssh.md") and firsts[1] == "kb:src/client.py#encode_content"


@pytest.mark.parametrize("query", ["setup.py", "v1.2.3", "e.g.", ".", "::", "a..b"])
def test_a_file_name_or_a_version_has_no_shorter_name_in_it(query: str) -> None:
    assert len(query_keys(query)) <= 1


def test_a_language_name_with_a_hash_keeps_it() -> None:
    assert "c#" in query_keys("C#")[0].levels[-1]


def test_a_title_with_words_in_brackets_is_no_name() -> None:
    assert query_keys("Installation (Linux)") == []


def test_a_named_heading_stays_beside_its_page_when_both_match() -> None:
    from ra_query.search.aggregate import Candidate, aggregate

    page = Candidate("t:README.md", None, 0, 1, 5.0)
    heading = Candidate("t:README.md#installation", "t:README.md", 1, 6, 20.0, named=True)
    records = {c.id: c for c in (page, heading)}
    kept = [r.id for r in aggregate([page, heading], threshold=0.5, lookup=records.get)]
    assert "t:README.md#installation" in kept


def test_a_named_class_stays_beside_its_named_constructor_that_scored_higher() -> None:
    """`RecordAdapter` names a Java class and its constructor `RecordAdapter.RecordAdapter`: the
    class is not dropped as the code around a result, as an unnamed class that matched less is."""
    from ra_query.search.aggregate import Candidate, aggregate

    cls = "t:A.java#Outer.RecordAdapter"
    for named, kept_class in ((True, True), (False, False)):
        outer = Candidate(cls, "t:A.java", 1, 3, 5.0, True, named)
        member = Candidate(f"{cls}.RecordAdapter", cls, 2, 4, 20.0, True, True)
        records = {c.id: c for c in (outer, member)}
        kept = [r.id for r in aggregate([outer, member], threshold=0.5, lookup=records.get)]
        assert (cls in kept) is kept_class and f"{cls}.RecordAdapter" in kept


def test_a_heading_with_a_colon_and_up_to_twelve_words_is_a_name() -> None:
    assert query_keys("Hybrid search: meaning as well as words")
    assert query_keys("Where each artifact file is written and read")
    assert query_keys("Stopping the walk at a folder: RA_CONFIG_CEILING")

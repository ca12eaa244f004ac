"""Hostile input (issue 10): every entry point answers in one line, with bounded work.

The reproductions of faults found by an adversarial pass, each next to its fix.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ra_query.artifacts.store import Store, open_store
from ra_query.commands import search_payload
from ra_query.errors import InputError
from ra_query.search.get import get
from ra_query.search.pipeline import MAX_QUERY_WORDS, SearchParams, search_topic
from tests.conftest import BIN, Run, build, run_cmd

COMMANDS = Path(__file__).parent / "fixtures" / "commands"


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("faults")
    (root / "home").mkdir()
    shutil.copytree(COMMANDS, root / "kb")
    build(root / "kb", root / "home")
    return root / "kb", root / "home"


@pytest.fixture(scope="module")
def store(kb: tuple[Path, Path]) -> Store:
    return open_store(kb[0] / ".ra")


def project(tmp_path: Path) -> Path:
    """An empty project with one tree, `docs`, to put files in."""
    kb = tmp_path / "kb"
    (kb / "docs").mkdir(parents=True)
    (kb / ".ra.toml").write_text('root = true\n\n[tree.docs]\npath = "docs"\n', encoding="utf-8")
    return kb


def rq(kb: tuple[Path, Path], *args: str) -> Run:
    return run_cmd("ra-query", *args, cwd=kb[0], home=kb[1])


def test_a_query_of_a_hundred_thousand_distinct_words_is_searched_by_its_first_words(store: Store) -> None:
    words = " ".join(f"zq{i}x" for i in range(100_000)) + " tar"
    topic = search_topic(store, words, SearchParams())
    assert topic.note is not None and f"searched its first {MAX_QUERY_WORDS} words" in topic.note


def test_a_long_query_still_finds_what_its_first_words_name(store: Store) -> None:
    topic = search_topic(store, "tar archive " + "filler " * 5000, SearchParams())
    assert topic.hits and topic.hits[0].record.path == "tar.md"


def test_a_limit_the_index_could_not_allocate_is_bounded_in_the_api(store: Store) -> None:
    topic = search_topic(store, "tar", SearchParams(limit=10**30, candidate_limit=10**30))
    assert topic.hits


def test_an_mcp_limit_past_the_bound_is_a_tool_error(store: Store) -> None:
    with pytest.raises(InputError, match=r"^limit must be between 1 and 1000 \(got 100000000000\)$"):
        search_payload(store, ["tar"], limit=100_000_000_000)


def test_a_raw_query_nested_ten_thousand_deep_is_a_one_line_error(kb: tuple[Path, Path]) -> None:
    run = rq(kb, "search", "--raw", "(" * 10_000 + "tar")
    assert run.code == 1 and run.out == ""
    assert run.err.startswith(
        "ra-query: error: query syntax error at column 1: parentheses nested deeper than 64"
    )


def test_a_raw_query_tantivy_cannot_run_is_a_one_line_error(kb: tuple[Path, Path]) -> None:
    run = rq(kb, "search", "--raw", "foo:*")
    assert run.code == 1 and run.out == ""
    assert run.err.startswith(
        "ra-query: error: query syntax error at column 1: tantivy cannot run this raw query"
    )
    assert "Traceback" not in run.err


# ---- a killed build never leaves the lock held ---------------------------------------------------


def test_a_forked_worker_does_not_keep_the_build_lock(tmp_path: Path) -> None:
    import fcntl
    import multiprocessing
    import os
    from concurrent.futures import ProcessPoolExecutor

    from ra_build.pipeline.workers import LOCK_FDS, worker_init

    path = tmp_path / ".lock"
    held = os.open(path, os.O_RDWR | os.O_CREAT)
    fcntl.flock(held, fcntl.LOCK_EX)
    LOCK_FDS.add(held)
    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(
            1, mp_context=context, initializer=worker_init, initargs=(os.getpid(),)
        ) as pool:
            assert pool.submit(os.getpid).result() != os.getpid()  # the worker is up, and forked
            os.close(held)  # what the death of the build does to its own descriptor
            probe = os.open(path, os.O_RDWR)
            try:
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises if the worker kept it
            finally:
                os.close(probe)
    finally:
        LOCK_FDS.discard(held)


KILLED_PARENT = """
import multiprocessing, os, signal
from concurrent.futures import ProcessPoolExecutor
from ra_build.pipeline.workers import worker_init
context = multiprocessing.get_context("fork")
pool = ProcessPoolExecutor(1, mp_context=context, initializer=worker_init, initargs=(os.getpid(),))
print(pool.submit(os.getpid).result(), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.slow
def test_a_worker_dies_with_its_killed_parent(tmp_path: Path) -> None:
    import subprocess
    import sys
    import time

    proc = subprocess.run([sys.executable, "-c", KILLED_PARENT], capture_output=True, text=True, timeout=60)
    assert proc.returncode == -9
    worker = int(proc.stdout.strip())
    deadline = time.monotonic() + 20  # the kernel signals it at once; reaping it takes a moment
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{worker}/stat", encoding="utf-8") as handle:
                if handle.read().split(") ", 1)[1].startswith("Z"):
                    break  # dead, waiting for init to reap it
        except FileNotFoundError:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"worker {worker} outlived its killed parent")


# ---- bytes that are not UTF-8 --------------------------------------------------------------------


def test_a_file_name_that_is_not_utf8_is_skipped_with_a_warning_and_the_rest_is_built(
    tmp_path: Path, home: Path
) -> None:
    kb = project(tmp_path)
    (kb / "docs" / "ok.md").write_text("# Fine\n\nfine text\n", encoding="utf-8")
    with open(bytes(kb / "docs") + b"/bad\xff name.md", "w", encoding="utf-8") as handle:
        handle.write("# Bad\n\nbad text\n")
    run = run_cmd("ra", "update", cwd=kb, home=home)
    assert run.code == 0, run.err
    assert "ra: warning: docs:bad\ufffd name.md: name is not valid UTF-8 — rename it to index it\n" in run.err
    assert run_cmd("ra", "get", "docs:ok.md", cwd=kb, home=home).code == 0


@pytest.mark.parametrize("program", ["ra", "ra-query"])
@pytest.mark.parametrize(
    "args", [["search", "caf\udce9"], ["get", "docs:caf\udce9.md"]], ids=["search", "get"]
)
def test_an_argument_that_is_not_utf8_is_a_one_line_error(
    kb: tuple[Path, Path], program: str, args: list[str]
) -> None:
    run = run_cmd(program, *args, cwd=kb[0], home=kb[1])
    shown = args[1].replace("\udce9", "\\xe9")
    assert (run.code, run.out) == (2, "")
    assert run.err == f"{program}: error: argument 2 ({shown}) is not valid UTF-8 — pass text in UTF-8\n"


# ---- no terminal injection -----------------------------------------------------------------------

HOSTILE = "# Hostile \x1b]0;pwned\x07 page\n\nSome text \x1b[2J that clears the screen.\n"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("hostile")
    (root / "home").mkdir()
    kb = project(root)
    (kb / "docs" / "hostile.md").write_text(HOSTILE, encoding="utf-8")
    build(kb, root / "home")
    return kb, root / "home"


@pytest.mark.parametrize(
    "args",
    [
        ["search", "clears screen"],
        ["search", "--list", "clears screen"],
        ["get", "docs:hostile.md"],
        ["ls", "chunks", "-l"],
    ],
    ids=["search", "list", "get", "ls"],
)
def test_control_characters_from_a_document_never_reach_the_terminal(
    hostile: tuple[Path, Path], args: list[str]
) -> None:
    run = run_cmd("ra", *args, cwd=hostile[0], home=hostile[1])
    assert run.code == 0, run.err
    assert "\x1b" not in run.out and "\x07" not in run.out
    assert "\\x1b" in run.out


def test_json_keeps_control_characters_as_json_escapes(hostile: tuple[Path, Path]) -> None:
    run = run_cmd("ra", "search", "--json", "clears screen", cwd=hostile[0], home=hostile[1])
    assert "\x1b" not in run.out and "\\u001b" in run.out


# ---- offsets are the file's ----------------------------------------------------------------------


def test_byte_ranges_of_a_file_with_a_byte_order_mark_slice_the_file_itself(tmp_path: Path) -> None:
    from ra_build.pipeline.chunk_stage import ChunkSettings, parse_file

    data = "\ufeff# Café\n\nintro\n\n## Naïve section\n\nbody text\n".encode()
    (tmp_path / "bom.md").write_bytes(data)
    parsed = parse_file("docs", str(tmp_path), "bom.md", ChunkSettings(10_000_000, 50_000))
    by_slug = {row["slug"]: row for row in parsed.chunks}
    section = by_slug["naïve-section"]
    assert data[section["byte_start"] : section["byte_end"]].decode() == "## Naïve section\n\nbody text"
    top = by_slug["café"]
    assert data[top["byte_start"] :].decode().startswith("# Café")


# ---- a hand-edited manifest -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"stemmer": "klingon"}, "the manifest names stemmer 'klingon', which this ra cannot use"),
        ({"search": {"limit": -1}}, "the manifest records search.limit = -1, not an integer from 1 to 1000"),
        (
            {"search": {"limit": "x"}},
            "the manifest records search.limit = 'x', not an integer from 1 to 1000",
        ),
        ({"search": {"boosts": [1]}}, "search.boosts = [1], not a table of field weights from 0 to 1000"),
        ({"search": {"cutoff_ratio": 7}}, "search.cutoff_ratio = 7, not a number from 0 to 1"),
    ],
    ids=["stemmer", "negative-limit", "string-limit", "boosts-list", "cutoff"],
)
def test_a_tampered_manifest_is_a_one_line_error_with_exit_2(
    kb: tuple[Path, Path], tmp_path: Path, edit: dict[str, object], message: str
) -> None:
    import json

    copy = tmp_path / "artifacts"
    shutil.copytree(kb[0] / ".ra", copy)
    manifest = json.loads((copy / "manifest.json").read_text(encoding="utf-8"))
    for key, value in edit.items():
        if isinstance(value, dict):
            manifest[key].update(value)
        else:
            manifest[key] = value
    (copy / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    run = rq(kb, "--artifacts", str(copy), "search", "tar")
    assert (run.code, run.out) == (2, "")
    assert run.err.startswith("ra-query: error: ") and message in run.err
    assert run.err.rstrip().endswith("rebuild the artifacts with: ra update --full")
    assert run.err.count("\n") == 1


# ---- odd names round-trip --------------------------------------------------------------------------


def test_a_file_named_with_a_backslash_can_be_got_by_its_id(tmp_path: Path, home: Path) -> None:
    kb = project(tmp_path)
    (kb / "docs" / "back\\slash.md").write_text("# Odd\n\nan odd name\n", encoding="utf-8")
    assert run_cmd("ra", "update", cwd=kb, home=home).code == 0
    run = run_cmd("ra", "get", "docs:back\\slash.md", cwd=kb, home=home)
    assert run.code == 0 and "an odd name" in run.out


def test_a_file_named_like_a_heading_of_another_has_its_own_escaped_id(tmp_path: Path, home: Path) -> None:
    kb = project(tmp_path)
    (kb / ".ra.toml").write_text(
        'root = true\n\n[tree.docs]\npath = "docs"\ninclude = ["**/*"]\n', encoding="utf-8"
    )
    (kb / "docs" / "notes.md").write_text("# Notes\n\n## Intro\n\nthe heading\n", encoding="utf-8")
    (kb / "docs" / "notes.md#intro").write_text("# Other\n\nthe file\n", encoding="utf-8")
    (kb / "docs" / "100%.md").write_text("# Full\n\nall of it\n", encoding="utf-8")
    (kb / "docs" / "notes.md%23intro").write_text("# Lookalike\n\nthe lookalike\n", encoding="utf-8")
    assert run_cmd("ra", "update", cwd=kb, home=home).code == 0
    ids = run_cmd("ra", "ls", "docs", cwd=kb, home=home).out.split()
    assert sorted(ids) == [
        "docs:100%25.md",
        "docs:notes.md",
        "docs:notes.md%23intro",
        "docs:notes.md%2523intro",
    ]
    chunks = run_cmd("ra", "ls", "chunks", cwd=kb, home=home).out.split()
    assert len(chunks) == len(set(chunks))
    for program in ("ra", "ra-query"):
        for chunk_id, text in [
            ("docs:notes.md#intro", "the heading"),
            ("docs:notes.md%23intro", "the file"),
            ("docs:notes.md%2523intro", "the lookalike"),
            ("docs:100%25.md", "all of it"),
        ]:
            run = run_cmd(program, "get", chunk_id, cwd=kb, home=home)
            assert run.code == 0 and text in run.out, (program, chunk_id, run.err)


def test_every_indexed_id_can_be_got(tmp_path: Path, home: Path) -> None:
    kb = project(tmp_path)
    (kb / ".ra.toml").write_text(
        'root = true\n\n[tree.docs]\npath = "docs"\ninclude = ["**/*"]\n', encoding="utf-8"
    )
    for name in ["a#b.md", "%41.md", "sp ace.md", "back\\slash.md", "q?.md", "ü.md", "x#1#2.md", "dots..md"]:
        (kb / "docs" / name).write_text(f"# T\n\n## Sec #1\n\nbody of {name}\n", encoding="utf-8")
    assert run_cmd("ra", "update", cwd=kb, home=home).code == 0
    store = open_store(kb / ".ra")
    chunks = run_cmd("ra", "ls", "chunks", cwd=kb, home=home).out.splitlines()
    assert len(chunks) == 24 == len(set(chunks))  # each: the document, its h1, its h2
    for chunk_id in chunks:
        result = get(store, chunk_id)
        assert result.chunks[0].id == chunk_id or result.whole_document


def test_control_characters_in_file_names_never_reach_the_terminal_in_warnings(
    tmp_path: Path, home: Path
) -> None:
    kb = project(tmp_path)
    (kb / "docs" / "\x1b[31mred.md").write_bytes(b"# n\n\nbin\0")
    update = run_cmd("ra", "update", cwd=kb, home=home)
    check = run_cmd("ra", "check", cwd=kb, home=home)
    for text in (update.err, check.out):
        assert "\x1b" not in text and "\\x1b[31mred.md" in text


def test_an_id_that_ra_ls_shows_escaped_can_be_pasted_into_ra_get(tmp_path: Path, home: Path) -> None:
    kb = project(tmp_path)
    (kb / "docs" / "a\x1bb.md").write_text("# Odd\n\nodd text\n", encoding="utf-8")
    build(kb, home)
    [shown] = [
        line
        for line in run_cmd("ra", "ls", "docs", cwd=kb, home=home).out.splitlines()
        if "Odd" in line or "a\\x1bb" in line
    ]
    assert shown.split()[0] == "docs:a\\x1bb.md"
    for program in ("ra", "ra-query"):
        run = run_cmd(program, "get", shown.split()[0], cwd=kb, home=home)
        assert run.code == 0, run.err
        assert "odd text" in run.out and "\x1b" not in run.out


def test_json_escapes_c1_control_characters_too(hostile: tuple[Path, Path]) -> None:
    from ra_query.commands import dumps

    assert dumps({"x": "a\x9bb"}) == '{\n  "x": "a\\u009bb"\n}\n'


def test_a_non_utf8_name_the_tree_would_not_index_is_not_reported(tmp_path: Path, home: Path) -> None:
    kb = project(tmp_path)
    (kb / "docs" / "ok.md").write_text("# Fine\n\nfine text\n", encoding="utf-8")
    with open(bytes(kb / "docs") + b"/picture\xff.png", "wb") as handle:
        handle.write(b"\x89PNG")
    run = run_cmd("ra", "update", cwd=kb, home=home)
    assert run.code == 0 and "not valid UTF-8" not in run.err


# ---- MCP answers every message -------------------------------------------------------------------

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


class RawMcp:
    """`ra-query mcp` over stdio, spoken to line by line: what a broken client could send."""

    def __init__(self, kb: tuple[Path, Path], command: list[str] | None = None) -> None:
        self.process = subprocess.Popen(
            command or [str(BIN / "ra-query"), "mcp"],
            cwd=kb[0],
            env={**os.environ, "HOME": str(kb[1])},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.send(json.dumps(INITIALIZE).encode())
        self.initialized = self.receive()  # the server's answer to `initialize`
        assert self.initialized["id"] == 0
        self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def receive(self) -> dict[str, Any]:
        """The next message from the server; fails (not hangs) when none comes within 30 s."""
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], 30)
        assert ready, "the server did not answer"
        return json.loads(self.process.stdout.readline())

    def close(self) -> int:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        code = self.process.wait(30)
        self.process.stdout.close()
        return code


@pytest.fixture(scope="module")
def raw_mcp(kb: tuple[Path, Path]) -> Iterator[RawMcp]:
    server = RawMcp(kb)
    yield server
    assert server.close() == 0


@pytest.mark.parametrize(
    ("line", "request_id", "code"),
    [
        (b"not json at all", None, -32700),
        (b"\xff\xfe not UTF-8", None, -32700),
        (
            b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get","arguments":{"id":"\\ud800"}}}',
            7,
            -32700,
        ),
        (b'{"jsonrpc":"2.0","id":8,"method":"tools/list","params":[1]}', 8, -32602),
        (b'{"jsonrpc":"2.0","id":9,"method":"tools/list","params":"x"}', 9, -32602),
        (b'{"jsonrpc":"2.0","id":"ten"}', "ten", -32600),
        (b'{"jsonrpc":"1.0","id":11,"method":"tools/list"}', 11, -32600),
        (b"[1, 2]", None, -32600),
        (b'"a string"', None, -32600),
    ],
    ids=[
        "not-json",
        "not-utf8",
        "lone-surrogate",
        "params-array",
        "params-string",
        "no-method",
        "version",
        "batch",
        "string",
    ],
)
def test_an_mcp_message_the_server_cannot_read_gets_a_json_rpc_error_and_serving_goes_on(
    raw_mcp: RawMcp, line: bytes, request_id: object, code: int
) -> None:
    raw_mcp.send(line)
    reply = raw_mcp.receive()
    assert (reply["id"], reply["error"]["code"]) == (request_id, code)
    assert "\n" not in reply["error"]["message"]
    raw_mcp.send(b'{"jsonrpc":"2.0","id":100,"method":"tools/list"}')
    assert raw_mcp.receive()["id"] == 100


def test_a_blank_line_to_the_mcp_server_is_not_a_message_and_gets_no_reply(raw_mcp: RawMcp) -> None:
    raw_mcp.send(b"   ")
    raw_mcp.send(b'{"jsonrpc":"2.0","id":101,"method":"tools/list"}')
    assert raw_mcp.receive()["id"] == 101


# ---- ra update --full never shows readers an empty or missing index ------------------------------


def many_files(tmp_path: Path, count: int) -> Path:
    """A project whose full build takes long enough (a second or more) to be watched or killed."""
    kb = project(tmp_path)
    for i in range(count):
        sections = "".join(
            f"## Part {j}\n\nword{i} topic{j} shared body text of part {j}.\n\n" for j in range(8)
        )
        (kb / "docs" / f"page{i:04d}.md").write_text(
            f"# Page {i}\n\nIntro {i}.\n\n{sections}", encoding="utf-8"
        )
    return kb


def full_rebuild(kb: Path, home: Path) -> subprocess.Popen[bytes]:
    """`ra update --full` started in the background (its stderr kept for a failure message)."""
    return subprocess.Popen(
        [str(BIN / "ra"), "update", "--full"],
        cwd=kb,
        env={**os.environ, "HOME": str(home)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def readable_chunks(artifacts: Path) -> int:
    """How many chunks a fresh reader finds, as any `ra-query` opening the artifacts now would."""
    return open_store(artifacts).index.searcher().num_docs


@pytest.mark.slow
def test_readers_during_a_full_rebuild_always_see_the_whole_previous_or_new_index(
    tmp_path: Path, home: Path
) -> None:
    kb = many_files(tmp_path, 400)
    build(kb, home)
    whole = readable_chunks(kb / ".ra")
    rebuild = full_rebuild(kb, home)
    seen: list[int] = []
    while rebuild.poll() is None:
        seen.append(readable_chunks(kb / ".ra"))
    _, err = rebuild.communicate()
    assert rebuild.returncode == 0, err
    assert len(seen) > 5 and set(seen) == {whole}


def index_files(artifacts: Path) -> set[str]:
    """The published index's files and the shard indexes' (which the build writes first)."""
    return {
        str(p.relative_to(artifacts)) for d in ("index", ".index-shards/*") for p in artifacts.glob(f"{d}/*")
    }


def build_state(artifacts: Path, when: str) -> object:
    """What a watcher of a full rebuild sees change at stage `when` (only that is looked at, so
    the watcher polls fast enough to catch the short ones)."""
    if when == "forgot":
        return not (artifacts / ".doit.db").exists()
    if when == "chunking":
        shards = sorted((artifacts / "chunks").glob("*/part-*.parquet"))
        return [(p.name, p.stat().st_mtime_ns) for p in shards if p.exists()]
    return index_files(artifacts)


@pytest.mark.slow
@pytest.mark.parametrize("when", ["forgot", "chunking", "index-writing"])
def test_a_full_rebuild_killed_at_any_point_leaves_the_previous_index_readable(
    tmp_path: Path, home: Path, when: str
) -> None:
    """Killed the moment a stage is seen at work: state dropped, chunk tables, the index."""
    import signal

    kb = many_files(tmp_path, 300)
    build(kb, home)
    whole = readable_chunks(kb / ".ra")
    before = build_state(kb / ".ra", when)
    rebuild = full_rebuild(kb, home)
    while rebuild.poll() is None:
        try:
            if build_state(kb / ".ra", when) != before:
                break
        except FileNotFoundError:  # a file went away between the listing and its stat
            continue
    rebuild.send_signal(signal.SIGKILL)
    rebuild.communicate()
    assert rebuild.returncode == -signal.SIGKILL, "the build ended before it could be killed"
    assert readable_chunks(kb / ".ra") == whole
    assert run_cmd("ra-query", "search", "--list", "word7 topic3", cwd=kb, home=home).code == 0
    again = run_cmd("ra", "update", cwd=kb, home=home)  # and the next update finishes the job
    assert again.code == 0, again.err
    assert readable_chunks(kb / ".ra") == whole


# ---- an unreadable file --------------------------------------------------------------------------


def test_an_unreadable_file_is_reported_and_does_not_keep_the_index_stale(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unreadable as permissions make it for any user but root (the suite may run as root).

    The open of that one file fails as the kernel would fail it: in the build and nowhere else.
    """
    import builtins

    from ra_build.artifacts.layout import Layout
    from ra_build.cli.reports import file_problems, freshness
    from ra_build.config.load import load_config
    from ra_build.pipeline import chunk_stage as stages
    from ra_query.sources.stale import stale_files

    kb = project(tmp_path)
    (kb / "docs" / "ok.md").write_text("# Fine\n\nfine text\n", encoding="utf-8")
    (kb / "docs" / "locked.md").write_text("# Locked\n\nsecret text\n", encoding="utf-8")
    locked = str(kb / "docs" / "locked.md")

    def guarded_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if os.fspath(file) == locked:
            raise PermissionError(13, "Permission denied", locked)
        return builtins.open(file, *args, **kwargs)

    monkeypatch.setattr(stages, "open", guarded_open, raising=False)
    config = load_config(kb, home)
    for _update in range(2):
        build(kb, home)
        store = open_store(kb / ".ra")
        assert freshness(config, Layout(kb / ".ra")).describe() == "current"
        assert stale_files(store.root, store.manifest) == 0
    assert file_problems(kb / ".ra", ["docs"]) == [
        "docs:locked.md: cannot read: Permission denied — make it readable; every ra update tries it again"
    ]
    monkeypatch.undo()  # the permissions are fixed: the next update indexes it
    build(kb, home)
    assert file_problems(kb / ".ra", ["docs"]) == []
    assert open_store(kb / ".ra").get_chunk("docs:locked.md") is not None


# ---- a full disk, a read-only artifact directory ---------------------------------------------------


def limited(max_file_bytes: int) -> Callable[[], None]:
    """A preexec_fn: writes past `max_file_bytes` fail with EFBIG, as a full disk fails them."""
    import resource
    import signal

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # fail the write instead of killing

    return apply


def run_limited(max_file_bytes: int, kb: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / args[0]), *args[1:]],
        cwd=kb,
        env={**os.environ, "HOME": str(home)},
        preexec_fn=limited(max_file_bytes),
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def grown(tmp_path: Path, home: Path) -> Path:
    """A built project, then 40 more pages of distinct words: the next update has much to write."""
    import random

    kb = many_files(tmp_path, 200)
    build(kb, home)
    words = random.Random(1)
    for i in range(40):
        text = " ".join(f"fresh{words.randrange(10**6)}" for _ in range(800))
        (kb / "docs" / f"new{i}.md").write_text(f"# New {i}\n\nfreshword {text}\n", encoding="utf-8")
    return kb


# the first write to fail: a chunk table (OSError), tantivy's writer thread, a tantivy segment file
# (the update's largest files: a ~110 KB `.store` and a ~140 KB `.term` in each of two shards)
@pytest.mark.slow
@pytest.mark.parametrize("max_file_bytes", [8_000, 40_000, 100_000], ids=["chunk", "writer", "segment"])
def test_a_build_that_cannot_write_is_one_line_with_exit_2_and_the_previous_index_stays(
    grown: Path, home: Path, max_file_bytes: int
) -> None:
    run = run_limited(max_file_bytes, grown, home, "ra", "update")
    root = grown / ".ra"
    assert (run.returncode, run.stderr) == (
        2,
        f"ra: error: cannot write the artifacts in {root}: File too large — raise the file size limit "
        "(ulimit -f), then run ra update again; the previous index is still readable\n",
    )
    assert readable_chunks(root) == 200 * 10
    assert run_cmd("ra-query", "search", "--list", "word7 topic3", cwd=grown, home=home).code == 0
    assert run_cmd("ra", "update", cwd=grown, home=home).code == 0  # space again: it completes
    assert run_cmd("ra-query", "search", "--list", "freshword", cwd=grown, home=home).code == 0


def test_ra_search_answers_from_the_last_build_when_it_cannot_refresh_the_index(
    grown: Path, home: Path
) -> None:
    run = run_limited(8_000, grown, home, "ra", "search", "--list", "word7 topic3")
    assert run.returncode == 0
    assert "docs:page0007.md" in run.stdout
    assert run.stderr == (
        f"ra: warning: cannot write the artifacts in {grown / '.ra'}: File too large — answering from the "
        "index as last built (ra update to refresh)\n"
    )


def test_a_read_only_artifact_directory_is_a_one_line_error(
    grown: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build's first write is its lock file: there a read-only mount refuses it with EROFS."""
    import builtins
    import errno

    from ra_build.config.load import load_config
    from ra_build.pipeline import lock as build_lock
    from ra_build.pipeline.run import run_build
    from ra_query.errors import UnwritableError

    lock = str(grown / ".ra" / ".lock")

    def read_only_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if os.fspath(file) == lock:
            raise OSError(errno.EROFS, "Read-only file system", lock)
        return builtins.open(file, *args, **kwargs)

    monkeypatch.setattr(build_lock, "open", read_only_open, raising=False)
    with pytest.raises(UnwritableError) as raised:
        run_build(load_config(grown, home), grown / ".ra")
    assert raised.value.exit_code == 2
    assert raised.value.message == (
        f"cannot write the artifacts in {grown / '.ra'}: Read-only file system — build on a writable file "
        "system with --artifacts DIR, then run ra update again; the previous index is still readable"
    )


def test_a_failure_that_is_not_about_writing_stays_an_error_of_ra(tmp_path: Path) -> None:
    from ra_build.artifacts.writable import write_failure

    assert write_failure(tmp_path, ValueError("a bug")) is None
    assert write_failure(tmp_path, OSError(22, "Invalid argument")) is None


def test_a_tantivy_write_error_in_a_directory_that_takes_no_more_bytes_is_a_write_failure(
    tmp_path: Path,
) -> None:
    """tantivy says only "an index writer was killed": the directory itself is tried."""
    probe = (
        "import sys; from pathlib import Path; from ra_build.artifacts.writable import write_failure; "
        "print(write_failure(Path(sys.argv[1]), ValueError('An index writer was killed')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path)],
        preexec_fn=limited(100_000),
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.startswith(f"cannot write the artifacts in {tmp_path}: File too large — ")
    assert list(tmp_path.iterdir()) == []  # the probe cleans up after itself


def test_doits_own_traceback_is_kept_for_ra_to_report_and_other_output_passes() -> None:
    import io

    from ra_build.pipeline.run import _DoitTraceback  # pyright: ignore[reportPrivateUsage]

    out = io.StringIO()
    proxy = _DoitTraceback(out)
    proxy.write("ra: warning: something\n")
    try:
        raise sqlite3.OperationalError("database or disk is full")
    except sqlite3.OperationalError:
        proxy.write(
            "Traceback (most recent call last):\n  ...\nsqlite3.OperationalError: database or disk is full\n"
        )
    assert out.getvalue() == "ra: warning: something\n"
    assert isinstance(proxy.exception, sqlite3.OperationalError)

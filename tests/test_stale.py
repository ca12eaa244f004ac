"""Staleness seen from the read-only side: ra-query counts changed sources (DECISIONS 25)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ra_build.config.load import load_config
from ra_build.pipeline.discover import discover_tree
from ra_query.artifacts.stat_table import decode_stat_table, encode_stat_table
from ra_query.artifacts.store import read_manifest
from ra_query.sources import stale
from ra_query.sources.stale import (
    StaleCheck,
    stale_files,
)
from ra_query.sources.walk import walk_tree
from tests.conftest import BIN, build, run_cmd


def _stale(kb: Path) -> int | None:
    artifacts = kb / ".ra"
    return stale_files(artifacts, read_manifest(artifacts))


def _bump_mtime(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_the_manifest_records_where_each_trees_sources_are(kb: Path, home: Path) -> None:
    build(kb, home)
    sources = read_manifest(kb / ".ra")["trees"]["docs"]["sources"]
    tree = load_config(kb, home).trees["docs"]
    assert sources == {
        "root": str(tree.path),
        "include": list(tree.include),
        "exclude": list(tree.exclude),
        "outside_links": False,
        "default_excludes": True,
        "gitignore": True,
    }


def test_nothing_is_stale_right_after_a_build(kb: Path, home: Path) -> None:
    build(kb, home)
    assert _stale(kb) == 0


def test_edited_added_and_deleted_files_are_each_counted(kb: Path, home: Path) -> None:
    build(kb, home)
    pool = kb / "notes" / "pool.txt"
    pool.write_text(pool.read_text(encoding="utf-8") + "One more line.\n", encoding="utf-8")
    assert _stale(kb) == 1
    (kb / "notes" / "new.md").write_text("# New\n\nfresh\n", encoding="utf-8")
    assert _stale(kb) == 2
    victim = next(p for p in sorted(kb.rglob("*.md")) if p.name != "new.md")
    victim.unlink()
    assert _stale(kb) == 3


def test_a_touched_file_counts_as_modified(kb: Path, home: Path) -> None:
    build(kb, home)
    _bump_mtime(kb / "notes" / "pool.txt")
    assert _stale(kb) == 1


def test_files_the_tree_globs_do_not_select_are_not_counted(kb: Path, home: Path) -> None:
    build(kb, home)
    (kb / "image.png").write_bytes(b"\x89PNG")
    (kb / ".hidden.md").write_text("# hidden\n", encoding="utf-8")
    assert _stale(kb) == 0


def test_a_rebuild_makes_the_artifacts_current_again(kb: Path, home: Path) -> None:
    build(kb, home)
    (kb / "notes" / "new.md").write_text("# New\n\nfresh\n", encoding="utf-8")
    assert _stale(kb) == 1
    build(kb, home)
    assert _stale(kb) == 0


def test_staleness_is_unknown_when_the_sources_are_not_visible(kb: Path, home: Path, tmp_path: Path) -> None:
    build(kb, home)
    moved = tmp_path / "elsewhere" / "artifacts"
    shutil.copytree(kb / ".ra", moved)
    shutil.rmtree(kb)  # as on the machine the artifacts were downloaded to
    assert stale_files(moved, read_manifest(moved)) is None


def test_staleness_is_unknown_for_a_manifest_without_sources(kb: Path, home: Path) -> None:
    build(kb, home)
    manifest = read_manifest(kb / ".ra")
    del manifest["trees"]["docs"]["sources"]
    assert stale_files(kb / ".ra", manifest) is None


def test_staleness_is_unknown_without_the_discovery_snapshot(kb: Path, home: Path) -> None:
    build(kb, home)
    (kb / ".ra" / "chunks" / "docs.snapshot.json").unlink()
    (kb / ".ra" / "chunks" / "docs.stat").unlink()
    assert stale_files(kb / ".ra", read_manifest(kb / ".ra")) is None


def test_the_snapshot_records_the_tree_globs(kb: Path, home: Path) -> None:
    build(kb, home)
    snapshot = orjson.loads((kb / ".ra" / "chunks" / "docs.snapshot.json").read_bytes())
    tree = load_config(kb, home).trees["docs"]
    assert (snapshot["include"], snapshot["exclude"]) == (list(tree.include), list(tree.exclude))


def test_walk_tree_is_what_discovery_runs(kb: Path, home: Path) -> None:
    tree = load_config(kb, home).trees["docs"]
    assert walk_tree(tree.name, tree.path, tree.include, tree.exclude) == discover_tree(tree)


def test_ra_query_reads_sources_without_writing_to_them(kb: Path, home: Path, tmp_path: Path) -> None:
    build(kb, home)
    (kb / "notes" / "new.md").write_text("# New\n\nfresh\n", encoding="utf-8")
    before = sorted((p.as_posix(), p.stat().st_mtime_ns) for p in kb.rglob("*"))
    result = run_cmd("ra-query", "--artifacts", str(kb / ".ra"), "search", "pool", cwd=tmp_path, home=home)
    assert result.code == 0, result.err
    assert sorted((p.as_posix(), p.stat().st_mtime_ns) for p in kb.rglob("*")) == before


def test_a_file_added_in_a_new_subdirectory_is_counted(kb: Path, home: Path) -> None:
    build(kb, home)
    (kb / "guides" / "deep" / "er").mkdir(parents=True)
    (kb / "guides" / "deep" / "er" / "new.md").write_text("# New\n", encoding="utf-8")
    (kb / "guides" / "deep" / "ignored.adoc").write_text("not selected\n", encoding="utf-8")
    assert _stale(kb) == 1


def test_a_removed_directory_counts_each_of_its_files(kb: Path, home: Path) -> None:
    build(kb, home)
    shutil.rmtree(kb / "guides")
    assert _stale(kb) == 2


def test_counting_without_the_directory_record_walks_and_agrees(kb: Path, home: Path) -> None:
    build(kb, home)
    (kb / "notes" / "extra.md").write_text("# Extra\n", encoding="utf-8")
    (kb / "guides" / "testing.md").write_text("# Testing\n\nchanged\n", encoding="utf-8")
    fast = _stale(kb)
    (kb / ".ra" / "chunks" / "docs.dirs.json").unlink()
    assert fast == _stale(kb) == 2


def test_a_new_dot_file_changes_nothing(kb: Path, home: Path) -> None:
    build(kb, home)
    (kb / "guides" / ".testing.md.swp").write_bytes(b"\0swap")
    assert _stale(kb) == 0


def test_the_forked_check_counts_what_the_inline_check_counts(kb: Path, home: Path) -> None:
    build(kb, home)
    (kb / "notes" / "extra.md").write_text("# Extra\n", encoding="utf-8")
    _bump_mtime(kb / "guides" / "testing.md")
    check = StaleCheck(str(kb / ".ra"))
    assert check.result() == _stale(kb) == 2


def test_a_cancelled_check_leaves_no_child_behind(kb: Path, home: Path) -> None:
    build(kb, home)
    check = StaleCheck(str(kb / ".ra"))
    pid = check._pid  # pyright: ignore[reportPrivateUsage]
    assert pid > 0
    check.cancel()
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass  # already reaped by cancel(): what we want
    else:
        raise AssertionError(f"child {pid} was not reaped")


def test_the_forked_check_of_missing_artifacts_cannot_tell(tmp_path: Path) -> None:
    assert StaleCheck(str(tmp_path / "nothing-here")).result() is None


@pytest.mark.parametrize("row", [["a.md", 1], "abc", ["a.md", "1", 2], {"p": "a.md", "s": 1, "m": 2}, None])
def test_a_malformed_snapshot_means_cannot_tell(kb: Path, home: Path, row: object) -> None:
    build(kb, home)
    (kb / ".ra" / "chunks" / "docs.stat").unlink()  # the snapshot is read only without the stat table
    snapshot = kb / ".ra" / "chunks" / "docs.snapshot.json"
    snapshot.write_bytes(orjson.dumps({**orjson.loads(snapshot.read_bytes()), "files": [row]}))
    assert _stale(kb) is None


def test_a_damaged_stat_table_is_passed_over_for_the_snapshot(kb: Path, home: Path) -> None:
    build(kb, home)
    (kb / "notes" / "extra.md").write_text("# Extra\n", encoding="utf-8")
    table = kb / ".ra" / "chunks" / "docs.stat"
    table.write_bytes(table.read_bytes()[:20])  # truncated
    assert _stale(kb) == 1


def test_the_build_writes_the_stat_table_of_its_snapshot(kb: Path, home: Path) -> None:
    build(kb, home)
    chunks = kb / ".ra" / "chunks"
    rows = [tuple(row) for row in orjson.loads((chunks / "docs.snapshot.json").read_bytes())["files"]]
    decoded = decode_stat_table((chunks / "docs.stat").read_bytes())
    assert decoded is not None and list(zip(*decoded, strict=True)) == rows


@given(
    st.lists(
        st.tuples(
            st.text(st.characters(blacklist_characters="\0", blacklist_categories=["Cs"]), min_size=1),
            st.integers(0, 2**63 - 1),
            st.integers(-(2**63), 2**63 - 1),
        ),
        max_size=30,
    )
)
def test_a_stat_table_round_trips_its_rows(rows: list[tuple[str, int, int]]) -> None:
    decoded = decode_stat_table(encode_stat_table(rows))
    assert decoded is not None and list(zip(*decoded, strict=True)) == rows


def test_bytes_that_are_not_a_whole_stat_table_decode_to_none() -> None:
    whole = encode_stat_table([("a.md", 1, 2), ("b.md", 3, 4)])
    assert decode_stat_table(whole) is not None
    for broken in (b"", b"ra-stat0" + whole[8:], whole[:30], whole[:-1] + b"\0x"):
        assert decode_stat_table(broken) is None


def _stale_line(kb: Path, home: Path, cwd: Path, *args: str) -> str:
    result = run_cmd("ra-query", *args, "search", "pool", "--list", cwd=cwd, home=home)
    assert result.code == 0, result.err
    return result.out.splitlines()[-1]


def test_ra_query_reports_stale_files_however_the_artifacts_are_named(
    kb: Path, home: Path, tmp_path: Path
) -> None:
    build(kb, home)
    (kb / "notes" / "extra.md").write_text("# Extra\n", encoding="utf-8")
    artifacts = str(kb / ".ra")
    expected = "stale: 1 file changed since the build"
    assert _stale_line(kb, home, tmp_path, "--artifacts", artifacts) == expected
    assert _stale_line(kb, home, tmp_path, f"--artifacts={artifacts}") == expected
    assert _stale_line(kb, home, tmp_path, "--art", artifacts) == expected  # argparse's prefix match
    assert _stale_line(kb, home, kb / "notes") == expected  # found by walking up from the cwd


def test_the_split_count_agrees_with_the_inline_count(
    kb: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build(kb, home)
    (kb / "notes" / "extra.md").write_text("# Extra\n", encoding="utf-8")
    for name in ("guides/testing.md", "notes/pool.txt"):
        _bump_mtime(kb / name)
    monkeypatch.setattr(stale, "SPLIT_AT", 1)  # the fixture is small: split it anyway
    assert StaleCheck(str(kb / ".ra")).result() == _stale(kb) == 3


def test_a_malformed_snapshot_means_cannot_tell_in_the_split_count_too(
    kb: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build(kb, home)
    (kb / ".ra" / "chunks" / "docs.stat").unlink()
    snapshot = kb / ".ra" / "chunks" / "docs.snapshot.json"
    data = orjson.loads(snapshot.read_bytes())
    data["files"][-1] = ["truncated", 1]
    snapshot.write_bytes(orjson.dumps(data))
    monkeypatch.setattr(stale, "SPLIT_AT", 1)
    assert StaleCheck(str(kb / ".ra")).result() is None


def test_cancel_stops_the_helper_process_too(kb: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build(kb, home)
    never, keep_open = os.pipe()  # nothing is ever written: a read blocks until the reader dies

    def stuck(top: str, rows: object) -> int:
        return len(os.read(never, 1))

    monkeypatch.setattr(stale, "_count_edits", stuck)  # both halves now block for good
    monkeypatch.setattr(stale, "SPLIT_AT", 1)
    monkeypatch.setattr(stale, "_cores", lambda: 2)
    check = StaleCheck(str(kb / ".ra"))
    group = check._pid  # pyright: ignore[reportPrivateUsage]
    try:
        deadline = time.monotonic() + 60
        while len(_members(group)) < 2:  # the check and its helper
            assert time.monotonic() < deadline, "the helper never started"
        check.cancel()
        deadline = time.monotonic() + 10
        while _members(group):  # SIGKILL lands asynchronously; init reaps the orphaned helper
            assert time.monotonic() < deadline, f"still running after cancel: {_members(group)}"
    finally:
        for pid in _members(group):
            os.kill(pid, 9)
        os.close(never)
        os.close(keep_open)


def _members(group: int) -> list[int]:
    """Live (not zombie) processes of a process group, from /proc."""
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            found.append(int(entry))
    return found


def test_a_caller_that_ignores_sigchld_still_gets_the_count(kb: Path, home: Path, tmp_path: Path) -> None:
    build(kb, home)
    (kb / "notes" / "extra.md").write_text("# Extra\n", encoding="utf-8")
    ra_query = str(BIN / "ra-query")
    launcher = (
        "import os, signal, sys; signal.signal(signal.SIGCHLD, signal.SIG_IGN); "
        "os.execv(sys.argv[1], sys.argv[1:])"
    )

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", launcher, ra_query, "--artifacts", *args],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip

    found = run(str(kb / ".ra"), "search", "pool", "--list")
    assert found.returncode == 0 and found.stderr == ""
    assert found.stdout.splitlines()[-1] == "stale: 1 file changed since the build"
    missing = run(str(tmp_path / "none"), "search", "x")  # the check is cancelled on this error
    assert missing.returncode == 2 and missing.stderr.startswith("ra-query: error: no artifacts at")


# ---- past STAT_EVERY_FILE_UP_TO files: directories first -------------------------------------------


@pytest.fixture
def bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Count as a tree of more than STAT_EVERY_FILE_UP_TO files would be counted."""
    monkeypatch.setattr(stale, "STAT_EVERY_FILE_UP_TO", 1)


def test_a_large_tree_counts_a_file_added_to_a_directory_and_the_files_there_that_changed(
    kb: Path, home: Path, bounded: None
) -> None:
    build(kb, home)
    notes = kb / "notes"
    (notes / "new.md").write_text("# New\n\nfresh\n", encoding="utf-8")
    _bump_mtime(notes / "pool.txt")  # in the directory that moved: stat'ed
    assert _stale(kb) == 2


def test_a_large_tree_counts_a_removed_file(kb: Path, home: Path, bounded: None) -> None:
    build(kb, home)
    next(p for p in sorted(kb.rglob("*.md")) if ".ra" not in p.parts).unlink()
    assert _stale(kb) == 1


def test_a_large_tree_does_not_stat_files_of_directories_that_did_not_move(
    kb: Path, home: Path, bounded: None
) -> None:
    """The documented cost of the bound: an edit in place, with nothing added or removed beside
    it, is seen by `ra update` and the MCP watcher, not by this count."""
    build(kb, home)
    _bump_mtime(kb / "notes" / "pool.txt")
    assert _stale(kb) == 0
    stale.STAT_EVERY_FILE_UP_TO = 10**9
    assert _stale(kb) == 1


def test_a_large_tree_is_counted_the_same_in_the_forked_check(
    kb: Path, home: Path, bounded: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    build(kb, home)
    (kb / "notes" / "new.md").write_text("# New\n\nfresh\n", encoding="utf-8")
    monkeypatch.setattr(stale, "SPLIT_AT", 1)
    assert StaleCheck(str(kb / ".ra")).result() == _stale(kb) == 1

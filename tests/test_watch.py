"""The source watcher of the MCP servers (issue 11): a flag after a change, nothing leaked."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from ra_query.sources.watch import SourceWatch


def eventually(check: object, seconds: float = 10.0) -> bool:
    """Poll `check()` until it is true or `seconds` pass (events take milliseconds to arrive)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return True
        time.sleep(0.01)
    return False


def watcher_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "ra-source-watch"]


def test_the_first_call_counts_as_changed_whether_or_not_the_watcher_runs_yet(tmp_path: Path) -> None:
    """Nothing is known of the sources before the watcher ran: the first call must check them."""
    with SourceWatch([str(tmp_path)]) as watch:
        assert watch.changed()


def test_an_idle_tree_reports_no_change_once_the_first_check_is_done(tmp_path: Path) -> None:
    with SourceWatch([str(tmp_path)]) as watch:
        assert watch.wait_ready(10)
        assert watch.changed()  # nothing was known before: the first call checks
        assert not watch.changed()


def test_a_written_file_is_reported_as_a_change(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    with SourceWatch([str(tmp_path)]) as watch:
        assert watch.wait_ready(10)
        watch.changed()
        (tmp_path / "sub" / "page.md").write_text("# New\n", encoding="utf-8")
        assert eventually(watch.changed)
        assert not watch.changed()  # reported once


def test_an_edit_in_place_is_reported_as_a_change(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Old\n", encoding="utf-8")
    with SourceWatch([str(tmp_path)]) as watch:
        assert watch.wait_ready(10)
        watch.changed()
        with page.open("a", encoding="utf-8") as handle:
            handle.write("more\n")
        assert eventually(watch.changed)


def test_without_anything_to_watch_every_call_counts_as_changed(tmp_path: Path) -> None:
    with SourceWatch([str(tmp_path / "missing")]) as watch:
        watch.wait_ready(10)
        assert not watch.watching
        assert watch.changed() and watch.changed()
    with SourceWatch([]) as nothing:
        assert nothing.changed()


def test_closing_the_watcher_stops_its_thread(tmp_path: Path) -> None:
    before = len(watcher_threads())
    watch = SourceWatch([str(tmp_path)])
    assert watch.wait_ready(10)
    watch.close()
    assert len(watcher_threads()) == before
    assert not watch.watching

"""Bad files never stop a build; each one is reported (DECISIONS 11)."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from ra_build.artifacts.layout import Layout
from ra_build.config.load import load_config
from ra_build.pipeline.chunk_stage import ChunkSettings, chunk_stage
from ra_build.pipeline.discover import discover_stage
from ra_build.pipeline.run import run_build
from tests.conftest import find


def _bad_tree(root: Path) -> None:
    (root / "good.md").write_text("# Good\n\nA perfectly fine document about walruses.\n", encoding="utf-8")
    (root / "binary.md").write_bytes(b"PNG\0\0\0binary")
    (root / "latin1.md").write_bytes(b"# Caf\xe9\n\nwalrus menu\n")
    (root / "empty.md").write_bytes(b"")
    (root / "huge.md").write_bytes(b"# Huge\n\n" + b"walrus " * (20 * 1024 * 1024 // 7))
    os.symlink(root / "loop.md", root / "loop.md")
    (root / "target.txt").write_text("linked walrus text\n", encoding="utf-8")
    (root / "sub dir").mkdir()
    os.symlink(root / "target.txt", root / "sub dir" / "link to target.txt")
    (root / "sub dir" / "ünïcödé naïve.md").write_text("# Ünïcödé\n\nwalrus in unicode\n", encoding="utf-8")
    (root / ".ra.toml").write_text('root = true\n[tree.bad]\npath = "."\n', encoding="utf-8")


def test_a_tree_full_of_bad_files_builds_and_reports_each_one(tmp_path: Path, home: Path) -> None:
    _bad_tree(tmp_path)
    report = run_build(load_config(tmp_path, home), tmp_path / ".ra")
    assert report.failures == []
    problems = "\n".join(report.results["chunk:bad"]["problems"])
    assert "bad:binary.md: binary file" in problems
    assert "bad:latin1.md: invalid UTF-8" in problems
    assert "bad:huge.md: larger than max_file_size" in problems
    assert "bad:loop.md: broken or looping symlink" in problems
    files = pd.read_parquet(tmp_path / ".ra" / "files.parquet").set_index("path")
    assert files.loc["binary.md", "status"] == "skipped"
    assert files.loc["huge.md", "status"] == "skipped"
    assert files.loc["empty.md", "status"] == "ok"
    assert files.loc["latin1.md", "status"] == "ok"
    hits = find(tmp_path / ".ra", "walrus", limit=20).hits
    ids = {h.id for h in hits} | {
        copy for h in hits for copy in h.also
    }  # the link and its target: one result
    assert ids >= {
        "bad:good.md#good",
        "bad:latin1.md#caf",
        "bad:sub dir/link to target.txt",
        "bad:sub dir/ünïcödé naïve.md#ünïcödé",
        "bad:target.txt",
    }
    assert not any(i.startswith("bad:huge.md") for i in ids)


def test_a_file_that_vanishes_between_discovery_and_parsing_is_reported_and_retried(
    tmp_path: Path, home: Path
) -> None:
    (tmp_path / "stays.md").write_text("# Stays\n\ntext\n", encoding="utf-8")
    (tmp_path / "goes.md").write_text("# Goes\n\ntext\n", encoding="utf-8")
    (tmp_path / ".ra.toml").write_text('root = true\n[tree.t]\npath = "."\n', encoding="utf-8")
    tree = load_config(tmp_path, home).trees["t"]
    layout = Layout(tmp_path / ".ra")
    discover_stage(tree, layout)
    (tmp_path / "goes.md").unlink()
    stats = chunk_stage(tree, layout, ChunkSettings(max_file_size=10_000_000, max_chunk_size=50_000))
    assert stats.parsed == ("stays.md",)
    assert any(p.startswith("t:goes.md: cannot read") for p in stats.problems)
    (tmp_path / "goes.md").write_text("# Goes\n\nback again\n", encoding="utf-8")
    report = run_build(load_config(tmp_path, home), tmp_path / ".ra")
    assert "goes.md" in report.results["chunk:t"]["parsed"]


def test_an_unreadable_file_is_reported_and_does_not_stop_the_build(tmp_path: Path, home: Path) -> None:
    (tmp_path / "ok.md").write_text("# Ok\n\nfine\n", encoding="utf-8")
    locked = tmp_path / "locked.md"
    locked.write_text("# Locked\n", encoding="utf-8")
    locked.chmod(0)
    (tmp_path / ".ra.toml").write_text('root = true\n[tree.t]\npath = "."\n', encoding="utf-8")
    try:
        report = run_build(load_config(tmp_path, home), tmp_path / ".ra")
    finally:
        locked.chmod(0o644)
    assert report.failures == []
    if os.geteuid() != 0:  # root reads anything; the build must succeed either way
        assert any("locked.md: cannot read" in p for p in report.results["chunk:t"]["problems"])

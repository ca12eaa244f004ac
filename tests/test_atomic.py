"""A killed build never breaks the previous generation; two builds never write at once."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ra_build.config.load import load_config
from ra_build.pipeline.run import run_build
from tests.conftest import find

BIN = Path(sys.executable).parent
FILES = 1200
CHUNKS_WITH_WORD = FILES * 9  # each file: the h1 chunk ("Intro WORD") and 8 sections


def _write_corpus(root: Path, files: int, word: str) -> None:
    for i in range(files):
        sections = "".join(
            f"## Section {j} of {i}\n\n{word} paragraph {j} about topic{i % 37} and item{j}.\n\n"
            for j in range(8)
        )
        path = root / f"d{i % 20:02d}" / f"doc{i:04d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Document {i}\n\nIntro {word}.\n\n{sections}", encoding="utf-8")


def _env(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "PATH": os.environ.get("PATH", ""), "NO_COLOR": "1"}


def _generation_answers(artifacts: Path, word: str) -> None:
    result = find(artifacts, word, limit=3)
    assert result.total_matches > 0


def _one_whole_generation(artifacts: Path, old: str, new: str) -> None:
    """The index holds all of one generation and nothing of the other: never a mix."""
    counts = (find(artifacts, old, limit=1).total_matches, find(artifacts, new, limit=1).total_matches)
    assert counts in {(CHUNKS_WITH_WORD, 0), (0, CHUNKS_WITH_WORD)}


@pytest.mark.parametrize("fraction", [0.15, 0.35, 0.55, 0.75, 0.95])
def test_killing_ra_update_leaves_the_previous_generation_readable(
    tmp_path: Path, home: Path, fraction: float
) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / ".ra.toml").write_text('root = true\n[tree.kb]\npath = "."\n', encoding="utf-8")
    _write_corpus(kb, FILES, "alpha")
    run_build(load_config(kb, home), kb / ".ra")
    _generation_answers(kb / ".ra", "alpha")

    _write_corpus(kb, FILES, "beta")  # every file changes: a long second build
    started = time.perf_counter()
    timing = subprocess.run(
        [str(BIN / "ra"), "update"], cwd=kb, env=_env(home), capture_output=True, check=True
    )
    duration = time.perf_counter() - started
    assert timing.returncode == 0

    _write_corpus(kb, FILES, "gamma")
    proc = subprocess.Popen([str(BIN / "ra"), "update"], cwd=kb, env=_env(home), start_new_session=True)
    try:
        proc.wait(timeout=duration * fraction)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the build and its worker processes
        proc.wait()
    # killed before the commit: the previous generation; after it: the new one — whole either way
    _one_whole_generation(kb / ".ra", "beta", "gamma")

    done = subprocess.run([str(BIN / "ra"), "update"], cwd=kb, env=_env(home), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    _generation_answers(kb / ".ra", "gamma")
    assert find(kb / ".ra", "beta", limit=3).total_matches == 0


def test_a_second_update_with_no_wait_exits_3_while_another_holds_the_lock(
    tmp_path: Path, home: Path
) -> None:
    (tmp_path / "a.md").write_text("# A\n\nx\n", encoding="utf-8")
    (tmp_path / ".ra.toml").write_text('root = true\n[tree.t]\npath = "."\n', encoding="utf-8")
    (tmp_path / ".ra").mkdir()
    with open(tmp_path / ".ra" / ".lock", "a+b") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        result = subprocess.run(
            [str(BIN / "ra"), "update", "--no-wait"],
            cwd=tmp_path,
            env=_env(home),
            capture_output=True,
            text=True,
        )
    assert result.returncode == 3
    assert "another ra update is writing" in result.stderr


def test_a_second_update_waits_for_the_first_and_then_completes(tmp_path: Path, home: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\nx\n", encoding="utf-8")
    (tmp_path / ".ra.toml").write_text('root = true\n[tree.t]\npath = "."\n', encoding="utf-8")
    (tmp_path / ".ra").mkdir()
    held = open(tmp_path / ".ra" / ".lock", "a+b")  # noqa: SIM115
    fcntl.flock(held, fcntl.LOCK_EX)
    with subprocess.Popen(
        [str(BIN / "ra"), "update"], cwd=tmp_path, env=_env(home), stderr=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stderr is not None
        line = proc.stderr.readline()  # blocks until the waiting message: no sleep needed
        assert "waiting for another ra update" in line
        assert proc.poll() is None
        fcntl.flock(held, fcntl.LOCK_UN)
        held.close()
        assert proc.wait(timeout=120) == 0
    assert (tmp_path / ".ra" / "manifest.json").exists()


def _tree(root: Path, files: dict[str, str]) -> Path:
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_swapping_in_a_directory_replaces_the_old_tree_and_removes_it(tmp_path: Path) -> None:
    from ra_build.artifacts.atomic import swap_in_directory

    target = _tree(tmp_path / "index", {"meta.json": "old", "a.seg": "old"})
    new = _tree(tmp_path / "index.next", {"meta.json": "new", "b.seg": "new"})
    swap_in_directory(new, target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index"]
    assert {p.name: p.read_text() for p in target.iterdir()} == {"meta.json": "new", "b.seg": "new"}


def test_swapping_in_a_directory_where_none_was_renames_it(tmp_path: Path) -> None:
    from ra_build.artifacts.atomic import swap_in_directory

    new = _tree(tmp_path / "index.next", {"meta.json": "new"})
    swap_in_directory(new, tmp_path / "index")
    assert [p.name for p in tmp_path.iterdir()] == ["index"]


def test_an_index_published_by_an_older_ra_is_rebuilt_as_shards_and_replaced(tmp_path: Path) -> None:
    import orjson
    import tantivy

    from ra_build.artifacts.layout import Layout
    from ra_build.pipeline.index_stage import index_stage

    kb = tmp_path / "kb"
    _write_corpus(kb / "docs", 20, "swapword")
    (kb / ".ra.toml").write_text('root = true\n[tree.docs]\npath = "docs"\n', encoding="utf-8")
    config = load_config(kb, tmp_path)
    run_build(config, kb / ".ra")
    layout = Layout(kb / ".ra")
    # an older ra's index (another schema, written in place, its state without shards), with a
    # leftover from a build killed before its swap
    for path in layout.index_dir.iterdir():
        path.unlink()
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("old_field", stored=True)
    tantivy.Index(builder.build(), path=str(layout.index_dir)).writer().commit()
    state = orjson.loads(layout.index_state.read_bytes())
    state["docs"] = {doc: entry[0] for doc, entry in state["docs"].items()}
    del state["shards"]
    layout.index_state.write_bytes(orjson.dumps(state))
    (kb / ".ra" / "index.next").mkdir()
    (kb / ".ra" / "index.next" / "junk").write_text("x", encoding="utf-8")
    stats = index_stage(layout, ["docs"], "english")
    assert stats.rebuilt and stats.added_docs == 20
    assert not (kb / ".ra" / "index.next").exists()
    assert not (layout.index_dir / ".managed.json").exists()  # the old writer's files are gone
    assert len(find(kb / ".ra", "swapword", limit=5).hits) == 5

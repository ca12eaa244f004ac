"""Incremental builds, asserted by which doit tasks ran and what the index holds afterwards."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from ra_query.artifacts.store import open_store
from tests.conftest import build, find


def index_ids(kb: Path) -> list[str]:
    """Every chunk id in the tantivy index, sorted (read back through the query side)."""
    import tantivy

    store = open_store(kb / ".ra")
    searcher = store.index.searcher()
    hits = searcher.search(tantivy.Query.all_query(), limit=10_000).hits
    return sorted(searcher.doc(addr)["id"][0] for _, addr in hits)


def test_editing_a_file_replaces_exactly_its_chunks_headings_included(kb: Path, home: Path) -> None:
    build(kb, home)
    before = index_ids(kb)
    (kb / "guides" / "testing.md").write_text(
        "# Testing\n\nIntro.\n\n## Fixtures\n\nf\n\n## Mocks\n\nm\n\n## Golden files\n\ng\n", encoding="utf-8"
    )
    report = build(kb, home)
    assert report.results["chunk:docs"]["parsed"] == ["guides/testing.md"]
    after = index_ids(kb)
    others = [i for i in before if not i.startswith("docs:guides/testing.md")]
    assert after == sorted(
        [
            *others,
            "docs:guides/testing.md",
            "docs:guides/testing.md#testing",
            "docs:guides/testing.md#fixtures",
            "docs:guides/testing.md#mocks",
            "docs:guides/testing.md#golden-files",
        ]
    )
    assert len(after) == len(before) + 1  # property-tests went, mocks and golden-files came


def test_editing_a_pages_translation_key_alone_reaches_the_index(kb: Path, home: Path) -> None:
    page = kb / "guides" / "tr.md"
    page.write_text("---\ntranslation_key: a\n---\n# Tr\n\nText.\n", encoding="utf-8")
    build(kb, home)
    page.write_text("---\ntranslation_key: b\n---\n# Tr\n\nText.\n", encoding="utf-8")
    build(kb, home)
    chunk = open_store(kb / ".ra").get_chunk("docs:guides/tr.md#tr")
    assert chunk is not None and chunk.translation == "key:b"  # its chunks' text had not changed


def test_deleting_a_file_removes_all_its_chunks(kb: Path, home: Path) -> None:
    build(kb, home)
    (kb / "guides" / "errors.md").unlink()
    report = build(kb, home)
    assert report.results["chunk:docs"]["removed"] == ["guides/errors.md"]
    assert not any(i.startswith("docs:guides/errors.md") for i in index_ids(kb))


def test_adding_a_file_adds_its_chunks_and_parses_nothing_else(kb: Path, home: Path) -> None:
    build(kb, home)
    (kb / "notes" / "new.md").write_text("# New\n\ntext\n\n## Part\n\nmore\n", encoding="utf-8")
    report = build(kb, home)
    assert report.results["chunk:docs"]["parsed"] == ["notes/new.md"]
    assert {"docs:notes/new.md", "docs:notes/new.md#new", "docs:notes/new.md#part"} <= set(index_ids(kb))


def test_touching_a_file_without_changing_it_reindexes_nothing(kb: Path, home: Path) -> None:
    build(kb, home)
    (kb / "notes" / "pool.txt").touch()
    report = build(kb, home)
    assert report.results["chunk:docs"]["parsed"] == []
    assert "index" in report.up_to_date or report.results["index"]["added_docs"] == 0


def test_changing_include_patterns_rebuilds_what_they_affect(kb: Path, home: Path) -> None:
    build(kb, home)
    (kb / ".ra.toml").write_text(
        'root = true\n[tree.docs]\npath = "."\ninclude = ["**/*.md"]\n', encoding="utf-8"
    )
    report = build(kb, home)
    assert "chunk:docs" in report.executed
    assert report.results["chunk:docs"]["removed"] == ["notes/pool.txt"]
    assert report.results["chunk:docs"]["parsed"] == []
    assert not any(i.startswith("docs:notes/pool.txt") for i in index_ids(kb))


def test_changing_the_stemmer_rebuilds_the_index_without_reparsing(kb: Path, home: Path) -> None:
    build(kb, home)
    (kb / ".ra.toml").write_text(
        'root = true\n[search]\nstemmer = "german"\n[tree.docs]\npath = "."\n', encoding="utf-8"
    )
    report = build(kb, home)
    assert report.up_to_date[:2] == ["chunk:docs"] or "chunk:docs" in report.up_to_date
    assert report.results["index"]["rebuilt"] is True
    manifest = orjson.loads((kb / ".ra" / "manifest.json").read_bytes())
    assert manifest["stemmer"] == "german"
    assert len(index_ids(kb)) == 10


def test_full_rebuild_reparses_everything(kb: Path, home: Path) -> None:
    build(kb, home)
    report = build(kb, home, full=True)
    assert len(report.results["chunk:docs"]["parsed"]) == 3
    assert len(index_ids(kb)) == 10


def test_two_trees_holding_the_same_file_do_not_collide(kb: Path, home: Path) -> None:
    (kb / ".ra.toml").write_text(
        'root = true\n[tree.docs]\npath = "."\n[tree.guides]\npath = "guides"\n', encoding="utf-8"
    )
    build(kb, home)
    ids = index_ids(kb)
    assert "docs:guides/errors.md#logging" in ids and "guides:errors.md#logging" in ids
    (kb / "guides" / "errors.md").unlink()
    build(kb, home)
    assert not any("errors.md" in i for i in index_ids(kb))


def test_removing_a_tree_from_the_config_removes_its_chunks(kb: Path, home: Path) -> None:
    (kb / ".ra.toml").write_text(
        'root = true\n[tree.docs]\npath = "guides"\n[tree.notes]\npath = "notes"\n', encoding="utf-8"
    )
    build(kb, home)
    (kb / ".ra.toml").write_text('root = true\n[tree.docs]\npath = "guides"\n', encoding="utf-8")
    build(kb, home)
    assert not any(i.startswith("notes:") for i in index_ids(kb))
    assert not (kb / ".ra" / "chunks" / "notes").exists()


def test_artifacts_are_relocatable(kb: Path, home: Path, tmp_path: Path) -> None:
    build(kb, home)
    moved = tmp_path / "elsewhere" / "artifacts"
    moved.parent.mkdir()
    shutil.move(kb / ".ra", moved)
    shutil.rmtree(kb)

    hits = find(moved, "result type", limit=1).hits
    assert hits[0].id == "docs:guides/errors.md#the-result-type"


def test_doit_list_at_the_repo_root_shows_the_stages_with_docstrings() -> None:
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run(
        [str(Path(sys.executable).parent / "doit"), "list"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert [line.split()[0] for line in out.splitlines()] == ["chunk", "discover", "index", "manifest"]
    assert all(len(line.split(None, 1)) == 2 for line in out.splitlines())


def test_a_users_own_dodo_py_builds_their_knowledge_base_with_the_readme_recipe(kb: Path, home: Path) -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    recipe = readme.split("```python\n", 1)[1].split("```", 1)[0]
    assert len(recipe.strip().splitlines()) == 3
    (kb / "dodo.py").write_text(recipe, encoding="utf-8")
    env = {"HOME": str(home), "PATH": str(Path(sys.executable).parent)}
    done = subprocess.run(
        [str(Path(sys.executable).parent / "doit")],
        cwd=kb,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (kb / "artifacts" / "manifest.json").exists()


def test_editing_a_file_rewrites_only_the_shard_that_holds_it(kb: Path, home: Path) -> None:
    from ra_build.artifacts.layout import Layout
    from ra_build.artifacts.tables import shard_of

    build(kb, home)
    layout = Layout(kb / ".ra")
    before = {p.name: p.stat().st_mtime_ns for p in layout.chunk_shards("docs")}
    (kb / "notes" / "pool.txt").write_text("The pool has nine connections.\n", encoding="utf-8")
    build(kb, home)
    after = {p.name: p.stat().st_mtime_ns for p in layout.chunk_shards("docs")}
    assert [name for name in sorted(after) if after[name] != before[name]] == [
        f"part-{shard_of('notes/pool.txt'):02d}.parquet"
    ]


def _forty_pages(tmp_path: Path) -> tuple[Path, Path]:
    """A one-shard tree of forty pages, built; (kb, home)."""
    kb, home = tmp_path / "kb", tmp_path / "home"
    home.mkdir()
    (kb / "pages").mkdir(parents=True)
    (kb / ".ra.toml").write_text(
        'root = true\n[settings]\nindex_shards = 1\n[tree.docs]\npath = "pages"\n', encoding="utf-8"
    )
    for k in range(40):
        (kb / "pages" / f"p{k:02d}.md").write_text(f"# Page {k}\n\nAbout topic {k}.\n", encoding="utf-8")
    build(kb, home)
    return kb, home


def _edit(kb: Path, pages: range, round_: int) -> None:
    for k in pages:
        (kb / "pages" / f"p{k:02d}.md").write_text(f"# Page {k}\n\nRevised {round_}.\n", encoding="utf-8")


def _deleted(kb: Path) -> float:
    from ra_build.artifacts.layout import Layout
    from ra_build.pipeline.index_stage import deleted_share

    return deleted_share(Layout(kb / ".ra").index_shard(0))


def test_an_edit_of_a_few_documents_deletes_their_old_chunks_in_place(tmp_path: Path) -> None:
    kb, home = _forty_pages(tmp_path)
    _edit(kb, range(1), 1)
    build(kb, home)
    assert 0 < _deleted(kb) < 0.1
    assert len(index_ids(kb)) == 80  # each page: its own chunk and its heading's


def test_an_edit_of_a_tenth_of_a_shards_documents_rebuilds_it_without_deleted_chunks(tmp_path: Path) -> None:
    kb, home = _forty_pages(tmp_path)
    _edit(kb, range(4), 1)
    build(kb, home)
    assert _deleted(kb) == 0
    assert len(index_ids(kb)) == 80


def test_edits_in_place_stop_once_a_tenth_of_a_shards_chunks_are_deleted(tmp_path: Path) -> None:
    kb, home = _forty_pages(tmp_path)
    shares = []
    for round_ in range(1, 7):
        _edit(kb, range(round_, round_ + 1), round_)
        build(kb, home)
        shares.append(_deleted(kb))
    assert max(shares) < 0.15 and 0 in shares  # rebuilt once the share reached a tenth
    assert len(index_ids(kb)) == 80


def test_a_corrupt_doit_state_file_is_replaced_and_the_build_still_succeeds(kb: Path, home: Path) -> None:
    build(kb, home)
    (kb / ".ra" / ".doit.db").write_text('{"not": "a database"}', encoding="utf-8")
    report = build(kb, home)
    assert "chunk:docs" in report.executed
    assert report.results["chunk:docs"]["parsed"] == []  # the tables were still there: nothing re-parsed


def test_changing_a_chunk_setting_reparses_every_file_of_the_tree(kb: Path, home: Path) -> None:
    build(kb, home)
    (kb / ".ra.toml").write_text(
        'root = true\n[settings]\nmax_chunk_size = 10\n[tree.docs]\npath = "."\n', encoding="utf-8"
    )
    report = build(kb, home)
    assert len(report.results["chunk:docs"]["parsed"]) == 3
    assert len(index_ids(kb)) == 10
    assert any("max_chunk_size 10" in p for p in report.results["chunk:docs"]["problems"])


def test_a_file_table_read_back_after_writing_equals_what_parquet_holds(tmp_path: Path) -> None:
    """The stages of one build share what they read or wrote; a rewrite is never missed."""
    from ra_build.artifacts import tables
    from ra_build.artifacts.tables import FileRow, read_file_rows, write_file_table

    path = tmp_path / "t.files.parquet"
    rows = [
        FileRow("t", "a.md", 3, 1, "s", "ok", None, ("w",), 2, "h"),
        FileRow("t", "b.md", 4, 2, "", "error", "cannot read", (), 0),
    ]
    write_file_table(path, iter(rows))  # a generator too
    remembered = read_file_rows(path)
    tables._FILE_ROWS.clear()
    assert remembered == read_file_rows(path) == rows
    write_file_table(path, rows[:1])
    assert read_file_rows(path) == rows[:1]


def test_parse_batches_keep_the_files_that_share_a_name_together_and_every_path_once() -> None:
    """Versions of one page are parsed by one process, so its memos serve the repeats."""
    from ra_build.pipeline.chunk_stage import batch_paths

    paths = [f"v{version}/{name}.md" for version in range(5) for name in ("a", "b", "c", "d")]
    paths += [f"big/{i}/index.md" for i in range(9)]
    batches = batch_paths(paths, 6)
    assert sorted(p for batch in batches for p in batch) == sorted(paths)
    for name in ("a", "b", "c", "d"):
        assert sum(any(p.endswith(f"/{name}.md") for p in batch) for batch in batches) == 1
    assert all(len(batch) <= 6 for batch in batches)  # a name shared by 9 files fills batches


def test_each_chunk_table_part_is_written_in_path_order_with_file_rows_in_the_order_given(
    tmp_path: Path,
) -> None:
    """Parsing returns files in batch order; the parts on disk are still sorted by path, each
    file's chunks in document order."""
    from ra_build.artifacts.layout import Layout
    from ra_build.artifacts.tables import read_parquet
    from ra_build.config.model import DEFAULT_INCLUDE, TreeConfig
    from ra_build.pipeline.chunk_stage import ChunkSettings, chunk_stage, parse_files
    from ra_build.pipeline.discover import discover_stage

    tree = tmp_path / "tree"
    paths = sorted({f"d{i % 7}/page{i:02d}.md" if i % 3 else f"d{i % 5}/index.md" for i in range(60)})
    for path in paths:
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text(
            f"# {path}\n\nText.\n\n## More\n\nBody.\n\n## Last\n\nEnd.\n", encoding="utf-8"
        )
    rows, table = parse_files("t", str(tree), paths, ChunkSettings(10**7, 10**6), workers=1)
    assert [r.path for r in rows] == paths
    assert table.column("path").to_pylist() != sorted(table.column("path").to_pylist())  # batch order
    parsed_ids: dict[str, list[str]] = {}
    for path, chunk_id in zip(table.column("path").to_pylist(), table.column("id").to_pylist(), strict=True):
        parsed_ids.setdefault(path, []).append(chunk_id)
    assert all(len(ids) == 4 for ids in parsed_ids.values())  # document, h1, two sections
    config = TreeConfig("t", tree, DEFAULT_INCLUDE, (), is_global=False, source=tree, line=0)
    layout = Layout(tmp_path / ".ra")
    discover_stage(config, layout)
    chunk_stage(config, layout, ChunkSettings(10**7, 10**6))
    seen = 0
    for part in layout.chunk_shards("t"):
        written = read_parquet(part)
        in_part = written.column("path").to_pylist()
        assert in_part == sorted(in_part)
        ids = written.column("id").to_pylist()
        for path in set(in_part):
            assert [i for p, i in zip(in_part, ids, strict=True) if p == path] == parsed_ids[path]
        seen += len(set(in_part))
    assert seen == len(paths)


def test_the_build_lock_a_dodo_py_takes_lasts_as_long_as_any_of_its_tasks(kb: Path, home: Path) -> None:
    import gc

    from ra_build.api import load_config, make_tasks
    from ra_build.artifacts.layout import Layout
    from ra_build.pipeline.lock import BuildLock
    from ra_build.pipeline.workers import LOCK_FDS
    from ra_query.errors import BusyError

    namespace = make_tasks(load_config(kb, home), kb / ".ra")
    kept = namespace["task_chunk"]  # a dodo.py that keeps one task and drops the rest
    del namespace
    gc.collect()
    with pytest.raises(BusyError):
        BuildLock(Layout(kb / ".ra"), wait=False, notify=None).__enter__()
    del kept
    gc.collect()
    assert set() == LOCK_FDS  # no stale descriptor for forked workers to close
    with BuildLock(Layout(kb / ".ra"), wait=False, notify=None):
        pass

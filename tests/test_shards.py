"""The index is built as K shards in parallel and published as one index (issue 14, item 1).

Every shard is its own tantivy index under `.index-shards/`; `index/meta.json` lists all their
segments, so tantivy's BM25 statistics cover the whole corpus and scores equal a one-shard build.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

import orjson
import pyarrow as pa
import pytest
import tantivy
from hypothesis import given, settings
from hypothesis import strategies as st

from ra_build.artifacts.layout import Layout
from ra_build.artifacts.segments import FormatChanged, read_meta, segment_files
from ra_build.artifacts.tables import CHUNK_SCHEMA
from ra_build.pipeline.publish import publish
from ra_build.pipeline.shards import INDEX_COLUMNS, write_shard
from ra_query.artifacts.schema import BREADCRUMB_JOIN, join_breadcrumb, register_analyzer, split_breadcrumb
from ra_query.artifacts.store import open_index, open_store
from tests.conftest import Run, build, find

QUERIES = ["testing", "fixtures", "golden files", "release notes", "install", "config", "mocks", "the"]


def configure(kb: Path, shards: int | None) -> None:
    text = 'root = true\n\n[tree.docs]\npath = "."\n'
    if shards is not None:
        text = f'root = true\n\n[settings]\nindex_shards = {shards}\n\n[tree.docs]\npath = "."\n'
    (kb / ".ra.toml").write_text(text, encoding="utf-8")


def top10(artifacts: Path, query: str) -> list[tuple[str, float]]:
    """tantivy's own top 10 over the `text` field: (chunk id, BM25 score)."""
    store = open_store(artifacts)
    searcher = store.index.searcher()
    parsed = store.index.parse_query(query, ["text"])
    return [(searcher.doc(addr)["id"][0], score) for score, addr in searcher.search(parsed, 10).hits]


def same_ranking(one: list[tuple[str, float]], many: list[tuple[str, float]]) -> None:
    """Equal scores, and equal ids wherever the score does not tie with the last one kept."""
    assert [s for _, s in many] == pytest.approx([s for _, s in one], rel=1e-5, abs=1e-6)
    if one:
        last = one[-1][1]
        assert {i for i, s in many if s > last + 1e-5} == {i for i, s in one if s > last + 1e-5}


def test_a_four_shard_build_ranks_like_a_one_shard_build(tmp_path: Path, home: Path) -> None:
    from tests.conftest import CORPUS

    results = {}
    for shards in (1, 4):
        kb = tmp_path / f"kb{shards}"
        shutil.copytree(CORPUS, kb)
        configure(kb, shards)
        report = build(kb, home)
        assert report.results["index"]["shards"] == shards
        results[shards] = {q: top10(kb / ".ra", q) for q in QUERIES}
        results[shards]["ra search"] = [(h.id, h.score) for h in find(kb / ".ra", "golden testing").hits]
    assert any(results[1][q] for q in QUERIES)
    for query in results[1]:
        same_ranking(results[1][query], results[4][query])


def test_shards_written_by_spawned_workers_rank_like_a_one_shard_build(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fixture is far below the size that pays for worker processes: force them."""
    import ra_build.pipeline.index_stage
    import ra_build.pipeline.shard_workers
    from tests.conftest import CORPUS

    started: list[int] = []
    spawn = ra_build.pipeline.shard_workers.run_in_workers

    def counted(jobs: list[object], workers: int) -> list[int]:
        started.append(workers)
        return spawn(jobs, workers)  # type: ignore[arg-type]

    monkeypatch.setattr(ra_build.pipeline.shard_workers, "run_in_workers", counted)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)  # two workers, whatever this machine has
    results = {}
    for shards in (1, 3):
        monkeypatch.setattr(ra_build.pipeline.index_stage, "PARALLEL_MIN_CHUNKS", 0 if shards > 1 else 10**9)
        kb = tmp_path / f"kb{shards}"
        shutil.copytree(CORPUS, kb)
        configure(kb, shards)
        build(kb, home)
        results[shards] = {q: top10(kb / ".ra", q) for q in QUERIES}
    assert started == [2]
    for query in QUERIES:
        same_ranking(results[1][query], results[3][query])


def test_the_published_meta_json_lists_the_segments_of_every_shard(kb: Path, home: Path) -> None:
    configure(kb, 3)
    build(kb, home)
    layout = Layout(kb / ".ra")
    shard_segments = [s["segment_id"] for k in range(3) for s in read_meta(layout.index_shard(k))["segments"]]
    published = read_meta(layout.index_dir)["segments"]
    assert [s["segment_id"] for s in published] == shard_segments
    linked = {name for k in range(3) for s in read_meta(layout.index_shard(k))["segments"]
              for name in segment_files(layout.index_shard(k), s)}  # fmt: skip
    assert linked == set(os.listdir(layout.index_dir)) - {"meta.json", ".tantivy-meta.lock"}
    some = sorted(linked)[0]
    shard = next(layout.index_shard(k) for k in range(3) if (layout.index_shard(k) / some).exists())
    assert os.stat(layout.index_dir / some).st_ino == os.stat(shard / some).st_ino  # linked, not copied


def test_an_edit_rewrites_only_the_shard_that_holds_the_file(kb: Path, home: Path) -> None:
    configure(kb, 4)
    build(kb, home)
    layout = Layout(kb / ".ra")
    metas = {k: (layout.index_shard(k) / "meta.json").stat().st_mtime_ns for k in range(4)}
    with (kb / "guides" / "testing.md").open("a", encoding="utf-8") as fh:
        fh.write("\n## Shardproof\n\nA new section.\n")
    report = build(kb, home)
    written = report.results["index"]["shards_written"]
    assert len(written) == 1
    for k in range(4):
        changed = (layout.index_shard(k) / "meta.json").stat().st_mtime_ns != metas[k]
        assert changed == (k in written)
    assert [h.id for h in find(kb / ".ra", "shardproof").hits] == ["docs:guides/testing.md#shardproof"]


def test_a_deleted_file_leaves_its_shard_and_the_published_index(kb: Path, home: Path) -> None:
    configure(kb, 2)
    build(kb, home)
    assert find(kb / ".ra", "fixtures").hits
    (kb / "guides" / "testing.md").unlink()
    report = build(kb, home)
    assert report.results["index"]["removed_docs"] == 1
    assert not [h for h in find(kb / ".ra", "fixtures", limit=50).hits if "testing.md" in h.id]


def test_changing_index_shards_rebuilds_every_shard_and_ranks_the_same(kb: Path, home: Path) -> None:
    configure(kb, 2)
    build(kb, home)
    before = {q: top10(kb / ".ra", q) for q in QUERIES}
    configure(kb, 5)
    report = build(kb, home)
    assert report.results["index"]["rebuilt"] and report.results["index"]["shards_written"] == [0, 1, 2, 3, 4]
    assert sorted(p.name for p in Layout(kb / ".ra").shards_dir.iterdir()) == ["00", "01", "02", "03", "04"]
    for query, hits in before.items():
        same_ranking(hits, top10(kb / ".ra", query))


def test_an_index_without_the_key_keeps_the_shard_count_it_was_built_with(kb: Path, home: Path) -> None:
    configure(kb, 3)
    build(kb, home)
    configure(kb, None)
    report = build(kb, home)
    assert report.results["index"]["shards"] == 3 and not report.results["index"]["rebuilt"]


def test_a_lost_shard_is_rebuilt_from_its_chunk_tables(kb: Path, home: Path) -> None:
    from ra_build.pipeline.index_stage import index_stage

    configure(kb, 2)
    build(kb, home)
    before = {q: top10(kb / ".ra", q) for q in QUERIES}
    layout = Layout(kb / ".ra")
    shutil.rmtree(layout.index_shard(1))
    stats = index_stage(layout, ["docs"], "english")
    assert stats.shards_written == (1,) and not stats.rebuilt
    for query, hits in before.items():
        same_ranking(hits, top10(kb / ".ra", query))


# ---- the format publishing relies on (tantivy's meta.json) --------------------------------------


def test_tantivy_is_the_minor_version_whose_segment_list_publishing_was_written_for() -> None:
    """A new tantivy must be checked against `read_meta`/`segment_files` before the pin moves."""
    assert metadata.version("tantivy").startswith("0.27."), (
        "tantivy moved past 0.27: check that meta.json still lists segments as "
        "ra_build.artifacts.segments.read_meta expects, then widen the pin in pyproject.toml"
    )


def test_a_fresh_tantivy_index_has_the_meta_json_layout_publishing_reads(tmp_path: Path) -> None:
    shard = tmp_path / "shard"
    write_shard(shard, "english", [batch([("a.md", "alpha beta"), ("b.md", "beta gamma")])], fresh=True)
    raw = orjson.loads((shard / "meta.json").read_bytes())
    assert set(raw) == {"index_settings", "segments", "schema", "opstamp"}  # "payload" when set
    [segment] = raw["segments"]
    assert set(segment) == {"segment_id", "max_doc", "deletes"} and segment["max_doc"] == 2
    names = segment_files(shard, segment)
    assert {n.split(".", 1)[1] for n in names} >= {"idx", "store", "term", "fieldnorm"}
    write_shard(shard, "english", [], deletes=["t:a.md"])
    [segment] = read_meta(shard)["segments"]
    assert segment["deletes"]["num_deleted_docs"] == 1
    assert any(n.endswith(".del") for n in segment_files(shard, segment))


def test_a_fresh_shard_is_written_when_a_dying_writer_leaves_a_file_after_the_first_removal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shard = tmp_path / "shard"
    write_shard(shard, "english", [batch([("a.md", "alpha")])], fresh=True)
    from ra_build.pipeline import shards

    real_rmtree = shutil.rmtree
    calls: list[Path] = []

    def rmtree_then_a_late_write(path: Path, ignore_errors: bool = False) -> None:
        real_rmtree(path, ignore_errors=ignore_errors)
        calls.append(path)
        if len(calls) == 1:  # the killed build's writer finishes one last write
            Path(path).mkdir()
            (Path(path) / "late.tmp").write_bytes(b"x")

    monkeypatch.setattr(shards.shutil, "rmtree", rmtree_then_a_late_write)
    write_shard(shard, "english", [batch([("b.md", "beta")])], fresh=True)
    assert len(calls) == 2 and not (shard / "late.tmp").exists()
    assert read_meta(shard)["segments"][0]["max_doc"] == 1


def test_an_unknown_meta_json_key_stops_publishing_with_a_clear_error(tmp_path: Path) -> None:
    shard = tmp_path / "shard"
    write_shard(shard, "english", [batch([("a.md", "alpha")])], fresh=True)
    meta = orjson.loads((shard / "meta.json").read_bytes())
    (shard / "meta.json").write_bytes(orjson.dumps({**meta, "segment_list_v2": []}))
    with pytest.raises(FormatChanged, match="unexpected keys"):
        publish(tmp_path / "index", [shard])


# ---- scores: property test on generated corpora --------------------------------------------------


def batch(docs: list[tuple[str, str]], tree: str = "t") -> pa.RecordBatch:
    """Chunk-table rows (the index stage's columns) for documents given as (path, body)."""
    rows = [
        {
            "id": f"{tree}:{path}", "doc_id": f"{tree}:{path}", "parent_id": None, "tree": tree,
            "slug": "", "breadcrumb": [path], "title": path, "tags": [], "path": path, "body": body,
            "depth": 0, "position": 0, "sibling_count": 0, "line_start": 1, "line_end": 1,
            "byte_start": 0, "byte_end": len(body), "tokens": 1, "mtime_ns": 0,
        }
        for path, body in docs
    ]  # fmt: skip
    schema = pa.schema([CHUNK_SCHEMA.field(c) for c in INDEX_COLUMNS])
    return pa.RecordBatch.from_pylist(rows, schema=schema)


WORDS = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "lambda"]


def ranking(index_dir: Path, query: str) -> list[tuple[str, float]]:
    index = open_index(index_dir)
    register_analyzer(index, "english")
    searcher = index.searcher()
    hits = searcher.search(index.parse_query(query, ["text", "title"]), 10).hits
    return [(searcher.doc(addr)["id"][0], score) for score, addr in hits]


@settings(max_examples=25, deadline=None)
@given(
    bodies=st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12), min_size=1, max_size=40),
    shards=st.integers(min_value=2, max_value=5),
    queries=st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3), min_size=1, max_size=4),
)
def test_any_corpus_split_into_shards_scores_like_one_index(
    tmp_path_factory: pytest.TempPathFactory, bodies: list[list[str]], shards: int, queries: list[list[str]]
) -> None:
    base = tmp_path_factory.mktemp("shards")
    docs = [(f"d{i}.md", " ".join(words)) for i, words in enumerate(bodies)]
    write_shard(base / "one", "english", [batch(docs)], fresh=True)
    publish(base / "one-index", [base / "one"])
    parts = [base / f"s{k}" for k in range(shards)]
    for k, part in enumerate(parts):
        write_shard(part, "english", [batch(docs[k::shards])], fresh=True)
    publish(base / "many-index", parts)
    for words in queries:
        query = " ".join(words)
        same_ranking(ranking(base / "one-index", query), ranking(base / "many-index", query))


@settings(max_examples=25, deadline=None)
@given(
    bodies=st.lists(
        st.text(min_size=1, max_size=40).filter(lambda s: not s.isspace()), min_size=1, max_size=8
    ),
    crumb=st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=4),
)
def test_any_text_is_stored_in_the_shard_exactly_as_the_chunk_table_holds_it(
    tmp_path_factory: pytest.TempPathFactory, bodies: list[str], crumb: list[str]
) -> None:
    # rows go to tantivy as JSON (`add_rows`): quotes, backslashes, control characters, the
    # breadcrumb separator and characters outside the BMP come back unchanged
    base = tmp_path_factory.mktemp("json")
    rows = batch([(f"d{i}.md", body) for i, body in enumerate(bodies)])
    rows = rows.set_column(INDEX_COLUMNS.index("breadcrumb"), "breadcrumb", pa.array([crumb] * len(bodies)))
    write_shard(base / "s", "english", [rows], fresh=True)
    searcher = open_index(base / "s").searcher()
    hits = searcher.search(tantivy.Query.all_query(), 99).hits
    stored = {doc["id"][0]: doc for doc in (searcher.doc(address) for _, address in hits)}
    for i, body in enumerate(bodies):
        doc = stored[f"t:d{i}.md"]
        assert doc["body"] == [body]
        assert split_breadcrumb(doc["breadcrumb"][0]) == tuple(p.replace(BREADCRUMB_JOIN, " ") for p in crumb)
        assert (doc["depth"], doc["byte_end"], doc["mtime"]) == ([0], [len(body)], [0])


@given(st.lists(st.text(alphabet=["a", " ", BREADCRUMB_JOIN, "é"], max_size=6), max_size=5))
def test_a_breadcrumb_comes_back_in_its_parts_with_separators_inside_a_part_made_spaces(
    parts: list[str],
) -> None:
    joined = join_breadcrumb(parts)
    assert joined.count(BREADCRUMB_JOIN) == max(len(parts) - 1, 0)
    if len(parts) != 1 or parts[0]:  # one empty part and no part both store as ""
        assert split_breadcrumb(joined) == tuple(p.replace(BREADCRUMB_JOIN, " ") for p in parts)


def test_publishing_again_replaces_the_segments_and_removes_the_old_files(tmp_path: Path) -> None:
    shard = tmp_path / "s0"
    write_shard(shard, "english", [batch([("a.md", "alpha")])], fresh=True)
    assert publish(tmp_path / "index", [shard])
    old = set(os.listdir(tmp_path / "index"))
    write_shard(shard, "english", [batch([("b.md", "beta")])], fresh=True)
    assert publish(tmp_path / "index", [shard])
    assert not publish(tmp_path / "index", [shard])  # nothing changed: meta.json left alone
    new = set(os.listdir(tmp_path / "index"))
    assert old & new == {"meta.json", ".tantivy-meta.lock"}
    assert [i for i, _ in ranking(tmp_path / "index", "beta")] == ["t:b.md"]
    assert tantivy.Index.exists(str(tmp_path / "index"))


def test_the_manifest_lists_each_shard_with_its_segments_and_chunks(kb: Path, home: Path) -> None:
    configure(kb, 3)
    build(kb, home)
    artifacts = kb / ".ra"
    manifest = orjson.loads((artifacts / "manifest.json").read_bytes())
    shards = manifest["index"]["shards"]
    assert [s["shard"] for s in shards] == [0, 1, 2]
    published = [s["segment_id"] for s in read_meta(artifacts / "index")["segments"]]
    assert [seg for s in shards for seg in s["segments"]] == published
    assert sum(s["chunks"] for s in shards) == open_store(artifacts).index.searcher().num_docs
    assert sum(s["chunks"] for s in shards) == sum(t["chunks"] for t in manifest["trees"].values())


def test_where_hard_links_fail_the_segment_files_are_copied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file system without hard links (or the shards on another device) still publishes."""
    import errno

    shard = tmp_path / "s0"
    write_shard(shard, "english", [batch([("a.md", "alpha")])], fresh=True)

    def no_links(source: object, target: object) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", no_links)
    assert publish(tmp_path / "index", [shard])
    segment = read_meta(shard)["segments"][0]
    for name in segment_files(shard, segment):
        assert os.stat(tmp_path / "index" / name).st_ino != os.stat(shard / name).st_ino
    assert [i for i, _ in ranking(tmp_path / "index", "alpha")] == ["t:a.md"]


def test_a_shard_writer_process_that_fails_reports_its_error_and_errno(tmp_path: Path) -> None:
    import errno

    from ra_build.pipeline.shard_workers import run_in_workers
    from ra_build.pipeline.shards import ShardJob

    (tmp_path / "a-file").write_text("not a directory", encoding="utf-8")
    fine = ShardJob(0, str(tmp_path / "s0"), "english", True)
    blocked = ShardJob(1, str(tmp_path / "a-file" / "s1"), "english", True)
    with pytest.raises(OSError) as caught:
        run_in_workers([fine, blocked], 2)
    assert caught.value.errno == errno.ENOTDIR and "a-file" in str(caught.value.filename)
    with pytest.raises(ValueError):  # as tantivy raised it: the build probes the disk for it
        run_in_workers([fine, ShardJob(1, str(tmp_path / "s1"), "no-such-language", True)], 2)
    assert run_in_workers([fine, ShardJob(1, str(tmp_path / "s1"), "english", True)], 2) == [0, 0]


def test_a_module_in_the_working_directory_never_shadows_one_of_the_shard_writers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ra_build.pipeline.shard_workers import run_in_workers
    from ra_build.pipeline.shards import ShardJob

    (tmp_path / "tantivy.py").write_text("raise ImportError('shadowed by the cwd')\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    jobs = [ShardJob(k, str(tmp_path / f"s{k}"), "english", True) for k in range(2)]
    assert run_in_workers(jobs, 2) == [0, 0]


def test_a_build_stopped_before_publishing_leaves_nothing_of_its_edit_once_the_edit_is_undone(
    kb: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shards committed, the build died before publishing; then the file went back."""
    import ra_build.pipeline.index_stage
    from ra_build.config.load import load_config
    from ra_build.pipeline.run import run_build

    configure(kb, 2)
    build(kb, home)
    page = kb / "guides" / "testing.md"
    original = page.read_text(encoding="utf-8")
    page.write_text(original + "\n## Zebraword\n\nStripes.\n", encoding="utf-8")

    def stopped(*args: object) -> bool:
        raise RuntimeError("the build was stopped here")

    monkeypatch.setattr(ra_build.pipeline.index_stage, "publish", stopped)
    assert run_build(load_config(kb, home), kb / ".ra").failures
    monkeypatch.undo()
    page.write_text(original, encoding="utf-8")
    build(kb, home)
    assert not find(kb / ".ra", "zebraword").hits
    assert [h.id for h in find(kb / ".ra", "fixtures").hits][:1] == ["docs:guides/testing.md#fixtures"]


def test_a_full_rebuild_without_the_key_keeps_the_shard_count_too(kb: Path, home: Path) -> None:
    configure(kb, 3)
    build(kb, home)
    configure(kb, None)
    report = build(kb, home, full=True)
    assert report.results["index"]["shards"] == 3 and report.results["index"]["rebuilt"]


def test_a_shard_missing_its_segment_files_is_rebuilt_from_the_chunk_tables(
    ra: Callable[..., Run], kb: Path
) -> None:
    configure(kb, 2)
    assert ra("update", cwd=kb).code == 0
    whole = {q: top10(kb / ".ra", q) for q in QUERIES}
    shard = Layout(kb / ".ra").index_shard(0)
    for path in shard.glob("*.store"):
        path.unlink()
    touched = kb / "guides" / "testing.md"  # same bytes, a new mtime: the index stage runs
    os.utime(touched, ns=(touched.stat().st_atime_ns, touched.stat().st_mtime_ns + 10**9))
    done = ra("update", cwd=kb)
    assert done.code == 0, done.err
    for query, hits in whole.items():
        same_ranking(hits, top10(kb / ".ra", query))


def test_what_a_killed_cluster_build_staged_is_removed_by_the_next_plain_build(kb: Path, home: Path) -> None:
    configure(kb, 2)
    build(kb, home)
    layout = Layout(kb / ".ra")
    for name in ("00.new", "01.old"):
        (layout.shards_dir / name).mkdir()
        (layout.shards_dir / name / "junk").write_text("x", encoding="utf-8")
    touched = kb / "guides" / "testing.md"  # same bytes, a new mtime: the index stage runs
    os.utime(touched, ns=(touched.stat().st_atime_ns, touched.stat().st_mtime_ns + 10**9))
    build(kb, home)
    assert sorted(p.name for p in layout.shards_dir.iterdir()) == ["00", "01"]


def test_a_shard_writer_killed_inside_its_commit_leaves_nothing_the_next_write_trips_on(
    tmp_path: Path,
) -> None:
    """A writer killed after writing a delete file but before meta.json names it: the same
    deletes again write a file of the same name, which tantivy refuses to overwrite."""
    shard, copy = tmp_path / "shard", tmp_path / "copy"
    write_shard(shard, "english", [batch([("a.md", "alpha"), ("b.md", "beta")])], fresh=True)
    shutil.copytree(shard, copy)
    write_shard(copy, "english", [batch([("a.md", "alpha again")])], deletes=["t:a.md"])
    leftovers = sorted(set(os.listdir(copy)) - set(os.listdir(shard)) - {"meta.json"})
    assert any(name.endswith(".del") for name in leftovers)
    for name in leftovers:  # what the killed commit had written when it died
        shutil.copy(copy / name, shard / name)
    assert write_shard(shard, "english", [batch([("a.md", "alpha again")])], deletes=["t:a.md"]) == 1
    hits = ranking(shard, "again")
    assert [doc for doc, _ in hits] == ["t:a.md"]

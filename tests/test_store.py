"""Opening artifacts read-only: no writes, clear errors, chunk and document lookups."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from ra_query.artifacts.models import ChunkRecord
from ra_query.artifacts.schema import SCHEMA_VERSION
from ra_query.artifacts.store import TEMP_PREFIX, Store, open_store
from ra_query.errors import ArtifactError
from tests.conftest import CORPUS, build, run_cmd

SYSTEM_PYTHON = Path("/usr/bin/python3.11")
SITE_PACKAGES = Path(sysconfig.get_path("purelib"))  # the venv's, where ra's dependencies live
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture corpus built once for this module's read-only tests; returns its artifacts."""
    base = tmp_path_factory.mktemp("store")
    kb = base / "kb"
    shutil.copytree(CORPUS, kb)
    home = base / "home"
    home.mkdir()
    build(kb, home)
    return kb / ".ra"


@pytest.fixture(scope="module")
def store(built: Path) -> Store:
    return open_store(built)


def _listing(root: Path) -> dict[str, tuple[int, int, int]]:
    """Every entry below `root` with its mode, size and mtime (symlinks not followed)."""
    out: dict[str, tuple[int, int, int]] = {}
    for directory, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(directory) / name
            st = path.lstat()
            out[path.relative_to(root).as_posix()] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return out


def _chmod_tree(root: Path, clear: int) -> None:
    for directory, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(directory) / name
            path.chmod(stat.S_IMODE(path.lstat().st_mode) & ~clear)
    root.chmod(stat.S_IMODE(root.stat().st_mode) & ~clear)


# ── read-only open ──────────────────────────────────────────────────────────────────────────


@pytest.fixture
def private_dir() -> Iterator[Path]:
    """A world-traversable temp dir (pytest's tmp_path sits under root's 0700 directories)."""
    path = Path(tempfile.mkdtemp(prefix="ra-test-ro-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)  # root (the only user that runs it) may delete anyway


def _unprivileged_command() -> list[str]:
    if os.geteuid() != 0:
        pytest.skip("needs root to switch to the unprivileged user `nobody`")
    if not SYSTEM_PYTHON.exists():
        pytest.skip(f"{SYSTEM_PYTHON} (readable by nobody, unlike the venv's interpreter) is missing")
    version = subprocess.run(
        [str(SYSTEM_PYTHON), "-c", "import sys; print(sys.version_info[1])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if version != str(sys.version_info.minor):
        pytest.skip(
            f"{SYSTEM_PYTHON} is 3.{version}, the venv's packages are built for 3.{sys.version_info.minor}"
        )
    if shutil.which("setpriv"):
        return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    if shutil.which("runuser"):
        return ["runuser", "-u", "nobody", "--"]
    pytest.skip("neither setpriv nor runuser is available to drop privileges")


def test_ra_query_searches_read_only_artifacts_as_another_user_and_changes_nothing(
    private_dir: Path,
) -> None:
    sudo = _unprivileged_command()
    kb = private_dir / "kb"
    shutil.copytree(CORPUS, kb)
    home = private_dir / "home"
    home.mkdir()
    build(kb, home)
    artifacts = kb / ".ra"
    for lock in (artifacts / "index").glob(".tantivy-*.lock"):
        lock.unlink()  # as in a published tarball: the reader must not need (or create) them
    _chmod_tree(private_dir / "kb", 0o222)
    scratch = private_dir / "scratch"  # the user's own HOME and TMPDIR
    scratch.mkdir()
    shutil.chown(scratch, user="nobody")
    before = _listing(artifacts)

    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(scratch),
        "TMPDIR": str(scratch),
        "PYTHONPATH": f"{REPO}{os.pathsep}{SITE_PACKAGES}",
        "PYTHONDONTWRITEBYTECODE": "1",
        "RA_ARTIFACTS": str(artifacts),
        "NO_COLOR": "1",
    }
    proc = subprocess.run(
        [*sudo, str(SYSTEM_PYTHON), "-c", "from ra_query.cli import main; main()", "search", "pool"],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert proc.returncode == 0, proc.stderr
    assert "docs:notes/pool.txt" in proc.stdout
    assert _listing(artifacts) == before
    assert [p.name for p in scratch.iterdir() if p.name.startswith(TEMP_PREFIX)] == []


def test_opening_leaves_no_temporary_directory_behind(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a temporary directory of this test's own: another ra-query on the machine cannot touch it
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    stores = [open_store(built) for _ in range(5)]
    assert all(s.get_chunk("docs:notes/pool.txt") is not None for s in stores)
    assert list(scratch.iterdir()) == []


def test_ra_query_process_leaves_no_temporary_directory_behind(built: Path, tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    result = run_cmd(
        "ra-query",
        "--artifacts",
        str(built),
        "search",
        "pool",
        cwd=tmp_path,
        home=tmp_path,
        env={"TMPDIR": str(scratch)},
    )
    assert result.code == 0, result.err
    assert "docs:notes/pool.txt" in result.out
    assert list(scratch.iterdir()) == []


def test_opening_writes_nothing_into_a_writable_artifact_directory(built: Path) -> None:
    locks = list((built / "index").glob(".tantivy-*.lock"))
    for lock in locks:
        lock.unlink()
    try:
        before = _listing(built)
        open_store(built).get_chunk("docs:notes/pool.txt")
        assert _listing(built) == before  # in particular: no lock file created
    finally:
        for lock in locks:
            lock.touch()


def test_the_build_leaves_the_index_files_readable_by_whoever_can_read_the_directory(built: Path) -> None:
    index = built / "index"
    wanted = index.stat().st_mode & 0o444
    unreadable = [p.name for p in index.iterdir() if p.stat().st_mode & wanted != wanted]
    assert unreadable == []


# ── errors ──────────────────────────────────────────────────────────────────────────────────


def _copy(built: Path, target: Path) -> Path:
    shutil.copytree(built, target)
    return target


def test_an_unknown_format_version_is_refused_with_what_to_do(built: Path, tmp_path: Path) -> None:
    artifacts = _copy(built, tmp_path / "a")
    manifest = orjson.loads((artifacts / "manifest.json").read_bytes())
    manifest["format_version"] = 99
    manifest["ra_version"] = "9.9.9"
    (artifacts / "manifest.json").write_bytes(orjson.dumps(manifest))

    with pytest.raises(ArtifactError) as caught:
        open_store(artifacts)
    assert "format_version 99" in caught.value.message
    assert "9.9.9" in caught.value.message
    assert "ra update --full" in caught.value.message

    result = run_cmd("ra-query", "--artifacts", str(artifacts), "search", "pool", cwd=tmp_path, home=tmp_path)
    assert result.code == 2
    assert "format_version 99" in result.err
    assert "Traceback" not in result.err
    assert len(result.err.strip().splitlines()) == 1


def test_an_index_of_another_schema_is_refused_with_what_to_do(built: Path, tmp_path: Path) -> None:
    artifacts = _copy(built, tmp_path / "a")
    manifest = orjson.loads((artifacts / "manifest.json").read_bytes())
    manifest["schema_version"] = SCHEMA_VERSION - 1
    (artifacts / "manifest.json").write_bytes(orjson.dumps(manifest))
    with pytest.raises(ArtifactError) as caught:
        open_store(artifacts)
    assert f"the index uses schema {SCHEMA_VERSION - 1}, this ra reads schema {SCHEMA_VERSION}" in (
        caught.value.message
    )
    assert caught.value.message.endswith("rebuild with: ra update (it rebuilds the index by itself)")


def test_a_missing_manifest_says_to_run_ra_update(built: Path, tmp_path: Path) -> None:
    artifacts = _copy(built, tmp_path / "a")
    (artifacts / "manifest.json").unlink()
    result = run_cmd("ra-query", "--artifacts", str(artifacts), "search", "pool", cwd=tmp_path, home=tmp_path)
    assert result.code == 2
    assert "ra update" in result.err
    assert "manifest.json" in result.err
    assert len(result.err.strip().splitlines()) == 1


def test_a_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ArtifactError) as caught:
        open_store(tmp_path / "nowhere")
    assert "no such directory" in caught.value.message
    assert "ra update" in caught.value.message
    assert caught.value.exit_code == 2


def test_a_missing_index_is_a_clear_error(built: Path, tmp_path: Path) -> None:
    artifacts = _copy(built, tmp_path / "a")
    shutil.rmtree(artifacts / "index")
    with pytest.raises(ArtifactError) as caught:
        open_store(artifacts)
    assert "missing meta.json" in caught.value.message
    assert "ra update --full" in caught.value.message
    result = run_cmd("ra-query", "--artifacts", str(artifacts), "search", "pool", cwd=tmp_path, home=tmp_path)
    assert result.code == 2
    assert len(result.err.strip().splitlines()) == 1


def test_a_corrupt_index_is_a_clear_error(built: Path, tmp_path: Path) -> None:
    artifacts = _copy(built, tmp_path / "a")
    (artifacts / "index" / "meta.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ArtifactError) as caught:
        open_store(artifacts)
    assert "cannot open the index" in caught.value.message
    assert "ra update --full" in caught.value.message
    assert "\n" not in caught.value.message


# ── lookups ─────────────────────────────────────────────────────────────────────────────────


def test_get_chunk_returns_the_chunk_with_exactly_that_id(store: Store) -> None:
    record = store.get_chunk("docs:notes/pool.txt")
    assert record is not None
    assert record.id == "docs:notes/pool.txt"
    assert record.doc_id == "docs:notes/pool.txt"
    assert "connection pool" in record.body


def test_get_chunk_returns_none_for_an_unknown_or_partial_id(store: Store) -> None:
    assert store.get_chunk("docs:notes/missing.md") is None
    assert store.get_chunk("docs:notes/pool") is None
    assert store.get_chunk("docs:../../etc/passwd") is None
    assert store.get_chunk("") is None


def test_doc_chunks_returns_a_whole_document_in_document_order(store: Store) -> None:
    docs = {record.doc_id for record in _all_records(store)}
    assert docs
    for doc_id in docs:
        chunks = store.doc_chunks(doc_id)
        assert chunks[0].id == doc_id  # the document node comes first
        assert {c.doc_id for c in chunks} == {doc_id}
        keys = [(c.line_start, c.depth) for c in chunks]
        assert keys == sorted(keys)
    deepest = max(docs, key=lambda d: len(store.doc_chunks(d)))
    assert len(store.doc_chunks(deepest)) > 2


def test_what_a_result_shows_but_no_query_looks_up_is_stored_not_indexed(store: Store) -> None:
    import tantivy

    _rebuild, (state,) = store.index.schema.__reduce__()  # tantivy's own field list
    options = {field["name"]: field["options"] for field in state["inner"]}
    for name in ("body", "slug", "breadcrumb", "parent_id", "symbol"):
        assert options[name]["stored"] and "indexing" not in options[name], name
        with pytest.raises(ValueError, match="not indexed"):
            store.index.searcher().search(tantivy.Query.term_query(store.index.schema, name, "pool"))
    looked_up_or_searched = ("id", "doc_id", "tree", "kind", "lang", "text", "title", "tags", "path")
    for name in looked_up_or_searched:
        assert options[name]["indexing"] is not None, name
    record = store.get_chunk("docs:guides/errors.md#log-levels")
    assert record is not None and record.body.startswith("Use `warn`")
    assert record.parent_id == "docs:guides/errors.md#logging"
    assert record.breadcrumb == ("Error Handling", "Logging", "Log levels")


def test_doc_chunks_of_an_unknown_document_is_empty(store: Store) -> None:
    assert store.doc_chunks("docs:nope.md") == []


def test_trees_come_from_the_manifest_with_counts_and_sources(store: Store, built: Path) -> None:
    trees = store.trees()
    assert set(trees) == {"docs"}
    assert trees["docs"]["files"] == store.manifest["trees"]["docs"]["files"]
    assert trees["docs"]["sources"]["root"] == str(built.parent)


def _all_records(store: Store) -> list[ChunkRecord]:
    import tantivy

    searcher = store.index.searcher()
    hits = searcher.search(tantivy.Query.all_query(), limit=1000).hits
    return [ChunkRecord.from_stored(searcher.doc(address).to_dict()) for _score, address in hits]


def test_the_temporary_directory_goes_where_tmpdir_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ra_query.artifacts.store import _private_dir  # pyright: ignore[reportPrivateUsage]

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    made = Path(_private_dir())
    assert made.parent == tmp_path and made.name.startswith(TEMP_PREFIX)
    made.rmdir()


class _CountingSearcher:
    """A tantivy searcher that counts the stored documents read through it."""

    def __init__(self, searcher: object) -> None:
        self.searcher = searcher
        self.reads = 0

    def doc(self, address: object) -> object:
        self.reads += 1
        return self.searcher.doc(address)


def _addresses(built: Path, count: int) -> tuple[Store, list[object]]:
    import tantivy

    store = open_store(built)
    hits = store.index.searcher().search(tantivy.Query.all_query(), limit=count).hits
    return store, [address for _score, address in hits]


def test_a_chunk_read_twice_from_one_store_is_read_from_the_index_once(built: Path) -> None:
    store, addresses = _addresses(built, 3)
    counting = _CountingSearcher(store.index.searcher())
    first = [store.read(counting, address) for address in addresses]
    again = [store.read(counting, address) for address in addresses]
    assert counting.reads == 3
    assert again == first and all(isinstance(record, ChunkRecord) for record in first)
    assert [r.id for r in first] == [store.get_chunk(r.id).id for r in first]


def test_a_store_keeps_at_most_max_records_kept_chunks(built: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ra_query.artifacts import store as store_module

    monkeypatch.setattr(store_module, "MAX_RECORDS_KEPT", 2)
    store, addresses = _addresses(built, 3)
    counting = _CountingSearcher(store.index.searcher())
    for address in addresses:  # the third drops the two kept
        store.read(counting, address)
    store.read(counting, addresses[0])
    assert counting.reads == 4


def test_a_store_keeps_at_most_max_text_kept_characters_of_chunks(
    built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ra_query.artifacts import store as store_module

    store, addresses = _addresses(built, 50)
    searcher = store.index.searcher()
    with_text = [a for a in addresses if store.read(searcher, a).body][:3]
    store = open_store(built)  # nothing kept yet
    counting = _CountingSearcher(store.index.searcher())
    first, second = (store.read(counting, a) for a in with_text[:2])
    monkeypatch.setattr(store_module, "MAX_TEXT_KEPT", len(first.body) + len(second.body))
    store.read(counting, with_text[0])  # kept
    store.read(counting, with_text[2])  # over the text kept: the kept ones are dropped
    store.read(counting, with_text[0])
    assert counting.reads == 4


def test_a_store_opened_again_reads_its_chunks_anew(built: Path) -> None:
    store, addresses = _addresses(built, 1)
    store.read(store.index.searcher(), addresses[0])
    other = open_store(built)
    counting = _CountingSearcher(other.index.searcher())
    other.read(counting, addresses[0])
    assert counting.reads == 1

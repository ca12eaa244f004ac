"""Open an artifact directory for reading: manifest checks, tantivy index, stored chunks.

Read-only, always. tantivy's `Index.open` takes a lock file inside the index directory
(`.tantivy-meta.lock`, created when missing, opened for writing), which fails on a read-only
mount and would otherwise write into the artifacts. So the index is opened through a private
temporary directory of symlinks to its segment files plus a copy of `meta.json` (a few KB):
tantivy's lock files land there. The segment files are memory-mapped while opening, so the
temporary directory is removed as soon as the index is open; nothing is left behind even if
the process is killed later. Meanwhile a shared `flock` on the real meta lock (opened
read-only, never created) keeps a concurrent build's garbage collection from deleting segment
files between reading `meta.json` and mapping them, exactly as tantivy's own readers do.

The opened index is one fixed generation: a build that commits later is seen by the next
`open_store`, never half-way through a search.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import json
import os
import time
from collections.abc import Generator, Hashable
from typing import TYPE_CHECKING, Any, cast

from ra_query.errors import ArtifactError
from ra_query.artifacts.models import ChunkRecord
from ra_query.artifacts.paths import INDEX_DIR, INDEX_META, MANAGED, MANIFEST_NAME, META_LOCK, WRITER_LOCK
from ra_query.artifacts.schema import FORMAT_VERSION, SCHEMA_VERSION, register_analyzer

if TYPE_CHECKING:
    from pathlib import Path

    import tantivy

    from ra_query.artifacts.vectors import Vectors

    StrPath = str | os.PathLike[str]

# tantivy's lock files, and its record of files it manages (tantivy writes it 0600, so it may be
# unreadable to another user), are not linked; meta.json is copied
_NOT_LINKED = {META_LOCK, WRITER_LOCK, MANAGED, INDEX_META}
_OPEN_ATTEMPTS = 3
TEMP_PREFIX = "ra-query-index-"
_LOCK_WAIT = 2.0  # seconds
# the chunks a long-running server keeps (ra_query.artifacts.store.Store.read): up to 20,000 of
# them and 32 M characters of their text (tens of MB); past either the kept ones are dropped
MAX_RECORDS_KEPT = 20_000
MAX_TEXT_KEPT = 32 << 20


class Store:
    """An opened, read-only artifact directory."""

    __slots__ = ("_kept_text", "_records", "_root", "_vectors", "_vectors_opened", "index", "manifest", "memo")

    def __init__(self, root: StrPath, manifest: dict[str, Any], index: tantivy.Index) -> None:
        self._root = os.fspath(root)
        self.manifest = manifest
        self.index = index
        self._vectors: Vectors | None = None
        self._vectors_opened = False
        # what the searches work out from these artifacts alone and ask again (a word's document
        # frequency among some chunks: ra_query.search.context): kept while the store is open, and
        # a changed index is a new store
        self.memo: dict[Hashable, Any] = {}
        self._records: dict[tuple[int, int], ChunkRecord] = {}
        self._kept_text = 0  # characters of the kept chunks' text

    @property
    def root(self) -> Path:
        """The artifact directory (pathlib is imported only when this is asked for)."""
        from pathlib import Path

        return Path(self._root)

    @property
    def stemmer(self) -> str:
        return str(self.manifest.get("stemmer", "english"))

    def trees(self) -> dict[str, dict[str, Any]]:
        """The manifest's trees: name → counts (`files`, `chunks`, `skipped`) and `sources`."""
        raw: object = self.manifest.get("trees")
        if not isinstance(raw, dict):
            return {}
        entries = cast(dict[str, object], raw)
        return {name: cast(dict[str, Any], e) for name, e in entries.items() if isinstance(e, dict)}

    def page_url(self, tree: str, path: str) -> str | None:
        """The URL an upstream tree's page was fetched from (its cached file's `path`), as the
        manifest records it; None for a file of a folder tree."""
        trees: object = self.manifest.get("trees")  # not trees(): one tree's entry, for each hit
        found = cast(dict[str, Any], trees).get(tree) if isinstance(trees, dict) else None
        entry = cast(dict[str, Any], found).get("upstream") if isinstance(found, dict) else None
        if not isinstance(entry, dict):
            return None
        pages = cast(dict[str, Any], entry).get("pages")
        page = cast(dict[str, Any], pages).get(path) if isinstance(pages, dict) else None
        url = cast(dict[str, Any], page).get("url") if isinstance(page, dict) else None
        return url if isinstance(url, str) else None

    def has_vectors(self) -> bool:
        """Whether the build embedded some tree (the manifest says; nothing is opened)."""
        return isinstance(self.manifest.get("vectors"), dict)

    def vectors(self) -> Vectors | None:
        """The vectors of the semantic trees, memory-mapped on first use (imports numpy), or None."""
        if not self._vectors_opened:
            from ra_query.artifacts.vectors import open_vectors

            self._vectors = open_vectors(self._root) if self.has_vectors() else None
            self._vectors_opened = True
        return self._vectors

    def search_defaults(self) -> dict[str, Any]:
        """The build's search settings (`SearchParams` keyword arguments) as the manifest records them."""
        raw: object = self.manifest.get("search")
        return dict(cast(dict[str, Any], raw)) if isinstance(raw, dict) else {}

    def read(self, searcher: tantivy.Searcher, address: tantivy.DocAddress) -> ChunkRecord:
        """The chunk stored at `address` (a hit of `searcher`, one of this index's searchers).

        A search reads a hundred chunks, and reading one costs ~40 µs (tantivy's stored fields,
        then their Python values): a chunk read once is kept (`MAX_RECORDS_KEPT`,
        `MAX_TEXT_KEPT`), so that a server's later searches find it here. The index is one fixed
        generation (the module's docstring), so an address names the same chunk as long as the
        store is open.
        """
        key = (address.segment_ord, address.doc)
        record = self._records.get(key)
        if record is None:
            record = ChunkRecord.from_stored(searcher.doc(address).to_dict())
            if len(self._records) >= MAX_RECORDS_KEPT or self._kept_text + len(record.body) > MAX_TEXT_KEPT:
                self._records.clear()
                self._kept_text = 0
            self._records[key] = record
            self._kept_text += len(record.body)
        return record

    def get_chunk(self, id: str) -> ChunkRecord | None:
        """The chunk whose id is exactly `id`, or None."""
        records = self._term_records("id", id, limit=1)
        return records[0] if records else None

    def doc_chunks(self, doc_id: str) -> list[ChunkRecord]:
        """Every chunk of the document `doc_id`, in document order (empty when unknown)."""
        records = self._term_records("doc_id", doc_id, limit=None)
        records.sort(key=lambda r: (r.line_start, r.depth, r.byte_start))
        return records

    def records(self, *, docs_only: bool = False, prefix: str = "") -> list[ChunkRecord]:
        """Every chunk (or document node) whose id starts with `prefix`, in document order."""
        import re

        import tantivy

        schema = self.index.schema
        clauses: list[tuple[tantivy.Occur, tantivy.Query]] = []
        if docs_only:
            clauses.append((tantivy.Occur.Must, tantivy.Query.term_query(schema, "depth", 0)))
        if prefix:
            pattern = re.escape(prefix) + ".*"
            clauses.append((tantivy.Occur.Must, tantivy.Query.regex_query(schema, "id", pattern)))
        query = tantivy.Query.boolean_query(clauses) if clauses else tantivy.Query.all_query()
        searcher = self.index.searcher()
        counted: object = getattr(searcher.search(query, limit=1, count=True), "count", 0)
        total = int(cast(int, counted) or 0)
        if total == 0:
            return []
        hits = searcher.search(query, limit=total, count=False).hits
        found = [self.read(searcher, address) for _score, address in hits]
        found.sort(key=lambda r: (r.tree, r.doc_id, r.line_start, r.depth, r.byte_start))
        return found

    def _term_records(self, field: str, value: str, *, limit: int | None) -> list[ChunkRecord]:
        """Records whose raw `field` equals `value`; all of them when `limit` is None."""
        import tantivy

        searcher = self.index.searcher()
        query = tantivy.Query.term_query(self.index.schema, field, value)
        if limit is None:
            counted: int | None = getattr(searcher.search(query, limit=1, count=True), "count", None)
            limit = int(counted or 0)
            if limit == 0:
                return []
        result = searcher.search(query, limit=limit, count=False)
        return [self.read(searcher, address) for _score, address in result.hits]


def read_manifest(root: StrPath) -> dict[str, Any]:
    """Read and check manifest.json of the artifacts at `root`.

    Raises:
        ArtifactError: no manifest, unreadable manifest, or an unknown format version.
    """
    path = os.path.join(root, MANIFEST_NAME)
    try:
        with open(path, "rb") as handle:
            raw: object = json.loads(handle.read())
    except FileNotFoundError:
        raise ArtifactError(
            f"no index at {root} (missing {MANIFEST_NAME}) — build it with: ra update"
        ) from None
    except (OSError, ValueError) as exc:  # ValueError: not JSON, or not UTF-8
        raise ArtifactError(f"{path}: unreadable manifest ({exc}) — rebuild with: ra update --full") from None
    if not isinstance(raw, dict):
        raise ArtifactError(f"{path}: manifest is not a JSON object — rebuild with: ra update --full")
    manifest = cast(dict[str, Any], raw)
    version = manifest.get("format_version")
    if version == FORMAT_VERSION and manifest.get("schema_version") != SCHEMA_VERSION:
        raise ArtifactError(
            f"{path}: the index uses schema {manifest.get('schema_version')!r}, this ra reads schema "
            f"{SCHEMA_VERSION} — rebuild with: ra update (it rebuilds the index by itself)"
        )
    if version != FORMAT_VERSION:
        built_by = manifest.get("ra_version", "an unknown ra version")
        raise ArtifactError(
            f"{path}: artifact format_version {version!r} (built by ra {built_by}) is not "
            f"format {FORMAT_VERSION} that this ra reads — rebuild with this ra (ra update --full) "
            f"or install the ra version that built them"
        )
    return manifest


def manifest_key(root: StrPath) -> tuple[int, int, int] | None:
    """(inode, size, mtime) of the manifest at `root`, or None when there is none.

    A build writes the manifest last and atomically (a new file), so a changed key means a new
    generation: a long-running server reopens the store when it sees one.
    """
    try:
        st = os.stat(os.path.join(root, MANIFEST_NAME))
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def open_store(root: StrPath) -> Store:
    """Open the artifacts at `root` for searching, without writing anything there.

    Raises:
        ArtifactError: the directory, its manifest or its index is missing, unreadable, or
            of an unknown format; or no temporary directory can be created.
    """
    if not os.path.isdir(root):
        raise ArtifactError(
            f"no artifacts at {root}: no such directory — build them with: ra update "
            f"(or point --artifacts / RA_ARTIFACTS at them)"
        )
    manifest = read_manifest(root)
    index = open_index(os.path.join(root, INDEX_DIR))
    stemmer = manifest.get("stemmer", "english")
    try:
        register_analyzer(index, str(stemmer))
    except ValueError:
        raise ArtifactError(
            f"{os.path.join(root, MANIFEST_NAME)}: the manifest names stemmer {stemmer!r}, which this ra "
            "cannot use — rebuild the artifacts with: ra update --full"
        ) from None
    return Store(root=root, manifest=manifest, index=index)


def open_index(index_dir: StrPath) -> tantivy.Index:
    """Open the tantivy index in `index_dir` read-only, through a private symlink directory.

    Raises:
        ArtifactError: no index there, an unreadable or corrupt one, or no usable temp dir.
    """
    index_dir = os.fspath(index_dir)
    if not os.path.isfile(os.path.join(index_dir, INDEX_META)):
        raise ArtifactError(
            f"{index_dir}: no tantivy index (missing {INDEX_META}) — rebuild with: ra update --full"
        )
    error = ""
    for _attempt in range(_OPEN_ATTEMPTS):
        try:
            with _meta_lock(index_dir):
                return _open_linked(index_dir)
        except PermissionError as exc:
            raise ArtifactError(
                f"{exc.filename or index_dir}: cannot read the index ({exc.strerror}) — make the "
                f"artifacts readable by this user: chmod -R a+rX {os.path.dirname(index_dir)}"
            ) from None
        except _TempDirError as exc:
            raise ArtifactError(
                f"cannot prepare a temporary directory to open the index in ({exc}) — set "
                f"TMPDIR to a writable directory"
            ) from None
        except (OSError, ValueError) as exc:
            # most likely a build replaced the generation while we linked it: try again
            error = str(exc)
    raise ArtifactError(f"{index_dir}: cannot open the index ({error}) — rebuild with: ra update --full")


class _TempDirError(Exception):
    """No private temporary directory could be created."""


@contextlib.contextmanager
def _meta_lock(index_dir: str) -> Generator[None]:
    """Hold tantivy's meta lock (shared, read-only descriptor) while a generation is opened.

    A writer's garbage collection takes the same lock before deleting segment files. The lock
    file exists once any writer has opened the index; when it does not, there is no writer.
    """
    try:
        fd = os.open(os.path.join(index_dir, META_LOCK), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        yield
        return
    try:
        # writers hold it for milliseconds; should one hang on to it, open anyway (and retry)
        deadline = time.monotonic() + _LOCK_WAIT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.001)
        yield
    finally:
        os.close(fd)  # releases the lock


def _open_linked(index_dir: str) -> tantivy.Index:
    """Link the current generation into a fresh temp dir, open it there, remove the temp dir."""
    import tantivy

    source = os.path.abspath(index_dir)
    with open(os.path.join(source, INDEX_META), "rb") as handle:
        meta = handle.read()
    names = [n for n in os.listdir(source) if n not in _NOT_LINKED]
    tmp = _private_dir()
    try:
        try:
            for name in names:
                os.symlink(os.path.join(source, name), os.path.join(tmp, name))
            with open(os.path.join(tmp, INDEX_META), "wb") as fh:
                fh.write(meta)
        except OSError as exc:
            raise _TempDirError(f"{tmp}: {exc.strerror}") from None
        return tantivy.Index.open(tmp)
    finally:
        _remove_temp_dir(tmp)


def _temp_bases() -> list[str]:
    """Where temporary directories may go, in tempfile.gettempdir()'s order of preference."""
    named = [os.environ.get(name, "") for name in ("TMPDIR", "TEMP", "TMP")]
    try:
        here = os.getcwd()
    except OSError:  # the working directory was deleted
        here = ""
    return [base for base in (*named, "/tmp", "/var/tmp", "/usr/tmp", here) if base]


def _private_dir() -> str:
    """A new directory that only this user can enter, as tempfile.mkdtemp makes one.

    Not tempfile itself: importing it (random, shutil, …) was ~3 ms of a cold `ra-query`.
    """
    errors: list[str] = []
    for base in _temp_bases():
        for _attempt in range(10):
            path = os.path.join(base, TEMP_PREFIX + os.urandom(6).hex())
            try:
                os.mkdir(path, 0o700)
                return path
            except FileExistsError:
                continue
            except OSError as exc:
                errors.append(f"{base}: {exc.strerror}")
                break
    raise _TempDirError("; ".join(errors) or "no temporary directory is usable")


def _remove_flat_dir(path: str) -> None:
    """Remove a directory of plain files and symlinks (what the index is opened through)."""
    with contextlib.suppress(OSError):
        for name in os.listdir(path):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(path, name))
        os.rmdir(path)


def _remove_temp_dir(tmp: str) -> None:
    """Remove the temp dir the index was opened through; its files stay mapped.

    tantivy's meta-file watcher thread may be reloading the reader right now, which re-creates
    the lock file here. Removing meta.json first stops any later reload (the watcher cannot
    read it), so at most one lock file can reappear: a second pass removes it.
    """
    with contextlib.suppress(OSError):
        os.unlink(os.path.join(tmp, INDEX_META))
    for _attempt in range(3):
        _remove_flat_dir(tmp)
        if not os.path.lexists(tmp):
            return
    atexit.register(_remove_flat_dir, tmp)

"""The embed stage: one vector per chunk of the semantic trees, beside the index (issue 21).

It runs after the chunk stage, for the trees with `semantic = true` (ra_build.config.model
`Config.semantic_trees`). A chunk is embedded as what an agent would match: its breadcrumb (the
document's title and the headings down to its own; a code chunk's path and qualified name, then
its signature) and its body — whole: a body longer than the model's 256-token limit is embedded
in overlapping windows, each with that prefix, one row each (issue 30; a search takes a chunk's
best window). A chunk with no body of its own has no vector, as it has no BM25 text.

Rows are re-used by content: the previous run's rows are kept for every chunk whose content
hash (title, breadcrumb, tags, body) they were made from — a row's key is that hash and its
window's place (`row_hash`) — so an edit re-embeds the chunks it changed and a rename or a move
re-embeds nothing. A tree whose file table did not change since
the last run is not read at all. A change of model (its sha256 is in the recorded key) or a tree
turned off drops the tree's rows; the vectors are written atomically, tree by tree
(ra_query.artifacts.vectors has the format).

The embedding itself is `embed` (`local_embed` on this machine's cores by default; a cluster
build passes its own), so the stage runs the same wherever the model runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ra_build.artifacts.atomic import write_bytes, write_with
from ra_build.artifacts.layout import Layout
from ra_build.config.fingerprint import model_key
from ra_query.artifacts.paths import VECTORS_META
from ra_query.artifacts.vectors import DTYPE, LATER_WINDOW, VECTORS_FORMAT, encode_ids, vectors_meta
from ra_query.text.locales import EMBEDDED_LANGUAGES, base

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

Progress = Callable[[int, int], None]  # (done, total) chunks
# texts → one normalised row each; `progress(done)` after each batch
EmbedTexts = Callable[[Sequence[str], Callable[[int], None] | None], "npt.NDArray[np.float32]"]
_HASH_BYTES = 32


@dataclass(frozen=True, slots=True)
class EmbedStats:
    """What one run of the embed stage did, over every tree."""

    embedded: int  # texts run through the model
    reused: int  # rows kept from the last run
    rows: int  # rows now, all semantic trees together
    trees: tuple[str, ...]  # the trees whose vectors were rewritten
    problems: tuple[str, ...] = ()  # one line each (the extra missing: BM25 only)
    seconds: float = 0.0


def embed_prefix(breadcrumb: Sequence[str], title: str, kind: str) -> str:
    """What every window of a chunk starts with (`EMBED_TEXT_VERSION`): its breadcrumb (a page's
    title and headings; a code chunk's path and qualified name), and a code chunk's title (its
    signature; a part's says which part and where it begins)."""
    head = " › ".join(breadcrumb)
    return f"{head}\n{title}" if kind == "code" and title and title != head else head


def embed_texts(breadcrumb: Sequence[str], title: str, kind: str, body: str) -> list[str]:
    """What a chunk is embedded as: its prefix and its body, in windows the model reads whole
    (ra_query.semantic.embed.windows)."""
    from ra_query.semantic.embed import windows

    return windows(embed_prefix(breadcrumb, title, kind), body)


def row_hash(digest: bytes, window: int) -> bytes:
    """The key of a chunk's `window`-th row: its content hash and the window's place."""
    return hashlib.sha256(digest + window.to_bytes(4, "little")).digest()


def local_embed(texts: Sequence[str], progress: Callable[[int], None] | None) -> npt.NDArray[np.float32]:
    """Embed `texts` on this machine's cores (ra_query.semantic.embed), one text at a time.

    Past `PARALLEL_MIN_TEXTS`, each core gets a worker process of its own with a one-thread
    model: 1.4x the texts per second of one process whose model runs on two threads, measured
    on powershell chunk texts when the stage was written (bench/semantic.py records the
    stage's throughput).
    """
    import numpy as np

    from ra_query.semantic.embed import embedder

    cores = os.cpu_count() or 1
    if cores < 2 or len(texts) < PARALLEL_MIN_TEXTS:
        return embedder().embed(texts, progress=progress)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    step = max(16, len(texts) // (cores * 8))
    pieces = [(start, min(start + step, len(texts))) for start in range(0, len(texts), step)]
    out = np.zeros((len(texts), embedder_dimensions()), dtype=np.float32)
    done = 0
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(cores, context, initializer=_embed_worker, initargs=(os.getpid(),)) as pool:
        slices = (list(texts[start:end]) for start, end in pieces)
        for (start, end), rows in zip(pieces, pool.map(_embed_piece, slices), strict=True):
            out[start:end] = rows
            done += end - start
            if progress is not None:
                progress(done)
    return out


PARALLEL_MIN_TEXTS = 64  # below this, forking workers costs more than a second core saves


def _embed_worker(parent: int) -> None:
    from ra_build.pipeline.workers import worker_init

    worker_init(parent)


def _embed_piece(texts: list[str]) -> npt.NDArray[np.float32]:
    from ra_query.semantic.embed import embedder

    return embedder(1).embed(texts)


def embedder_dimensions() -> int:
    """The dimensions of the model's vectors (model.json; the model is not loaded)."""
    from ra_query.semantic.embed import model_info

    return int(model_info()["dimensions"])


def embed_stage(
    layout: Layout,
    trees: Sequence[str],
    semantic: Sequence[str],
    progress: Progress | None = None,
    embed: EmbedTexts | None = None,
) -> EmbedStats:
    """Bring the vectors of the `semantic` trees (of all configured `trees`) up to date."""
    started = time.perf_counter()
    old = vectors_meta(layout.root) or {}
    directory = layout.vectors_dir
    if not semantic:
        if directory.exists():  # semantic turned off everywhere: no vectors at all
            for path in directory.iterdir():
                path.unlink()
            directory.rmdir()
        return EmbedStats(0, 0, 0, (), seconds=time.perf_counter() - started)
    from ra_query.semantic.embed import EXTRA, available

    key = model_key()
    if not available():
        shutil.rmtree(directory, ignore_errors=True)  # rows the extra made before are not kept up to date
        _write_meta(directory, key, {}, {})
        why = f"semantic = true needs the semantic extra — install it with: {EXTRA}"
        return EmbedStats(0, 0, 0, (), (f"trees {', '.join(semantic)}: {why}; searched with BM25 only",))
    same_model = all(old.get(k) == v for k, v in key.items())
    counts: dict[str, int] = {}
    tables: dict[str, list[Any]] = dict(old.get("tables") or {}) if same_model else {}
    embedded = reused = 0
    written: list[str] = []
    for tree in semantic:
        table = _table_key(layout, tree)
        rows_path = Path(layout.vectors(tree, ".f32"))
        kept = old.get("trees") or {}
        if same_model and tables.get(tree) == table and rows_path.exists() and tree in kept:
            counts[tree] = int(old["trees"][tree])
            continue
        dimensions = key["dimensions"] if same_model else 0  # 0: another model's rows are not re-used
        done = _embed_tree(layout, tree, dimensions, progress, embed or local_embed)
        counts[tree], tables[tree] = done[0], table
        embedded, reused = embedded + done[1], reused + done[2]
        written.append(tree)
    for path in directory.iterdir() if directory.is_dir() else ():
        name = path.name.removeprefix(".").rsplit(".", 1)[0]
        if path.name != "meta.json" and name not in counts:
            path.unlink()  # a tree no longer configured or no longer semantic
    _write_meta(directory, key, counts, tables)
    return EmbedStats(
        embedded, reused, sum(counts.values()), tuple(written), seconds=time.perf_counter() - started
    )


def _write_meta(directory: Path, key: dict[str, Any], counts: dict[str, int], tables: dict[str, Any]) -> None:
    """vectors/meta.json: the format, the model, the rows of each tree, and the tables embedded."""
    meta = {"format": VECTORS_FORMAT, **key, "dtype": DTYPE, "trees": counts, "tables": tables}
    write_bytes(directory / VECTORS_META, json.dumps(meta, indent=1, sort_keys=True).encode())


def _table_key(layout: Layout, tree: str) -> list[int]:
    """The file table of `tree` as the stage saw it: (size, mtime) — it changes when chunks do."""
    try:
        st = os.stat(layout.file_table(tree))
    except OSError:
        return [0, 0]
    return [st.st_size, st.st_mtime_ns]


def _embed_tree(
    layout: Layout, tree: str, old_dimensions: int, progress: Progress | None, embed: EmbedTexts
) -> tuple[int, int, int]:
    """Write the vectors of `tree`; (rows, texts embedded, rows re-used)."""
    import numpy as np

    from ra_build.artifacts.tables import read_parquet

    columns: dict[str, list[Any]] = {
        "id": [], "content_hash": [], "breadcrumb": [], "title": [], "kind": [], "body": [], "locale": []
    }  # fmt: skip
    for part in layout.chunk_shards(tree):
        table = read_parquet(part, list(columns))
        for name, values in columns.items():
            values += table.column(name).to_pylist()
    ids: list[str] = []
    hashes: list[bytes] = []
    later: list[bool] = []  # a window after its chunk's first
    texts: dict[bytes, str] = {}  # row hash → text, for the windows to embed
    old_rows, previous = _previous_rows(layout, tree, old_dimensions)
    for chunk_id, content, breadcrumb, title, kind, body, locale in zip(*columns.values(), strict=True):
        if not body.strip() or (locale and base(locale) not in EMBEDDED_LANGUAGES):
            continue  # nothing to embed, or a language the model does not know: found by words
        digest = bytes.fromhex(content)
        if row_hash(digest, 0) in previous:  # the same content as before: its rows, every window
            window = 0
            while (key := row_hash(digest, window)) in previous:
                ids.append(chunk_id)
                hashes.append(key)
                later.append(window > 0)
                window += 1
            continue
        for window, text in enumerate(embed_texts(breadcrumb, title, kind or "docs", body)):
            key = row_hash(digest, window)
            ids.append(chunk_id)
            hashes.append(key)
            later.append(window > 0)
            texts.setdefault(key, text)
    new = list(texts)
    total = len(new)
    report = (lambda done: progress(done, total)) if progress is not None and total else None
    made = embed([texts[h] for h in new], report) if new else np.zeros((0, 1), dtype=np.float32)
    dimensions = made.shape[1] if new else (old_dimensions or embedder_dimensions())
    fresh = {digest: i for i, digest in enumerate(new)}
    rows = np.zeros((len(ids), dimensions), dtype="<f4")
    for row, digest in enumerate(hashes):
        if digest in fresh:  # a later window counts less (ra_query.artifacts.vectors.LATER_WINDOW)
            rows[row] = made[fresh[digest]] * (LATER_WINDOW if later[row] else 1.0)
        else:  # kept as it was written, scaled already
            rows[row] = old_rows[previous[digest]]
    layout.vectors_dir.mkdir(parents=True, exist_ok=True)
    write_with(Path(layout.vectors(tree, ".f32")), lambda tmp: rows.tofile(tmp))
    write_bytes(Path(layout.vectors(tree, ".ids")), encode_ids(ids))
    write_bytes(Path(layout.vectors(tree, ".hashes")), b"".join(hashes))
    return len(ids), total, len(ids) - sum(1 for digest in hashes if digest in fresh)


def _previous_rows(
    layout: Layout, tree: str, dimensions: int
) -> tuple[npt.NDArray[np.float32], dict[bytes, int]]:
    """The last run's rows of `tree`, and the row of each content hash; none when there are
    none or another model made them (`dimensions` 0)."""
    import numpy as np

    nothing = (np.zeros((0, max(dimensions, 1)), dtype=np.float32), {})
    if not dimensions:
        return nothing
    try:
        digests = Path(layout.vectors(tree, ".hashes")).read_bytes()
        matrix = np.fromfile(layout.vectors(tree, ".f32"), dtype="<f4")
    except OSError:
        return nothing
    count = len(digests) // _HASH_BYTES
    if matrix.size != count * dimensions or len(digests) != count * _HASH_BYTES:
        return nothing  # damaged: embed everything again
    rows: dict[bytes, int] = {}
    for row in range(count):
        rows.setdefault(digests[row * _HASH_BYTES : (row + 1) * _HASH_BYTES], row)
    return matrix.reshape(count, dimensions), rows

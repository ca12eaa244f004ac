"""The vectors of the semantic trees: the embeddings of the chunks, beside the index (issue 21).

    vectors/meta.json        {"format": 1, "model": NAME, "model_sha256": HEX, "dimensions": D,
                              "dtype": "float32", "trees": {TREE: ROWS, ...}}
    vectors/<tree>.f32       ROWS x D little-endian float32: row i is the embedding of a window
                             of the chunk whose id is ids[i] (a chunk longer than the model
                             reads has a row per window, issue 30), L2-normalised for its first
                             window, of norm LATER_WINDOW for a later one
    vectors/<tree>.ids       b"ra-ids1", ROWS (uint64), ROWS + 1 offsets (uint64), the ids (UTF-8)
    vectors/.<tree>.hashes   ROWS x 32 bytes: each row's key (its chunk's content hash and its
                             window's place) — the build's record for re-using rows; a dot-file,
                             never shipped nor read by a query

A search memory-maps the rows (the page cache serves them; nothing is copied) and reads only the
ids of the rows it returns. numpy is imported when vectors are opened, so a search of an index
without vectors never loads it.
"""

from __future__ import annotations

import json
import mmap
import os
import sys
from typing import TYPE_CHECKING, Any, cast

from ra_query.artifacts.paths import VECTORS_DIR, VECTORS_META, vectors_path
from ra_query.errors import ArtifactError

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    import numpy as np
    import numpy.typing as npt

VECTORS_FORMAT = 1
# a window after a chunk's first counts at this share of its cosine: the first holds what the
# chunk is about (its heading, signature, lead), a later one only matched a passage. The build
# scales a later window's row by it, so a search pays nothing for it. Measured on 332 code
# questions (hybrid definition@5 0.572 at 1.0, 0.587 at 0.95, 0.581 at 0.9, 0.560 with the first
# window alone) and SciFact (nDCG@10 0.7305, 0.7315, 0.7280, 0.7256): docs/searching.md
LATER_WINDOW = 0.95
IDS_MAGIC = b"ra-ids1"
DTYPE = "float32"
# at most this many numbers scored per BLAS call: OpenBLAS runs a matrix-vector product under
# 9216 numbers on the calling thread; a larger one wakes its threads, which then spin on a core
# for a while. On a 2-core machine that spin took a core from the rest of an MCP `context` call
# (its CPU time 72 ms a call instead of 24).
BLOCK_NUMBERS = 8192


def encode_ids(ids: Iterable[str]) -> bytes:
    """The `.ids` file of the rows whose chunk ids are `ids`, in row order."""
    import array

    encoded = [chunk_id.encode("utf-8", "surrogateescape") for chunk_id in ids]
    offsets = array.array("Q", [0])
    for data in encoded:
        offsets.append(offsets[-1] + len(data))
    if sys.byteorder == "big":
        offsets.byteswap()
    return IDS_MAGIC + len(encoded).to_bytes(8, "little") + offsets.tobytes() + b"".join(encoded)


class RowIds:
    """The chunk ids of a tree's rows, read one at a time from the memory-mapped `.ids` file."""

    def __init__(self, path: str) -> None:
        import numpy as np

        with open(path, "rb") as handle:
            self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if os.fstat(
                handle.fileno()
            ).st_size else None
        data = self._map if self._map is not None else b""
        if data[:7] != IDS_MAGIC or len(data) < 15:
            raise ArtifactError(f"{path}: not a vector id table — rebuild with: ra update --full")
        self.count = int.from_bytes(data[7:15], "little")
        start = 15 + 8 * (self.count + 1)
        if len(data) < start:
            raise ArtifactError(f"{path}: truncated — rebuild with: ra update --full")
        self._offsets = np.frombuffer(data, dtype="<u8", count=self.count + 1, offset=15)
        self._names_at = start
        if start + int(self._offsets[-1]) != len(data):
            raise ArtifactError(f"{path}: truncated — rebuild with: ra update --full")

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, row: int) -> str:
        assert self._map is not None  # a table of no rows is never indexed
        a, b = int(self._offsets[row]), int(self._offsets[row + 1])
        return self._map[self._names_at + a : self._names_at + b].decode("utf-8", "surrogateescape")


class Vectors:
    """The vectors of an artifact directory, opened read-only (`open_vectors`)."""

    def __init__(self, root: str, meta: dict[str, Any]) -> None:
        import numpy as np

        self.model: str = str(meta["model"])
        self.model_sha256: str = str(meta["model_sha256"])
        self.dimensions = int(meta["dimensions"])
        self.rows: dict[str, npt.NDArray[np.float32]] = {}
        self.ids: dict[str, RowIds] = {}
        for tree, count in dict(meta["trees"]).items():
            rows, path = int(count), vectors_path(root, tree, ".f32")
            ids = RowIds(vectors_path(root, tree, ".ids"))
            size = os.path.getsize(path)
            if len(ids) != rows or size != rows * self.dimensions * 4:
                raise ArtifactError(
                    f"{path}: {size} bytes and {len(ids)} ids for {rows} rows of {self.dimensions} "
                    "numbers — rebuild with: ra update --full"
                )
            self.ids[tree] = ids
            self.rows[tree] = (
                # a plain array over the mapping: numpy's memmap subclass costs each block of the
                # scan a wrapper (a tenth of a dense search's scan)
                np.memmap(path, dtype="<f4", mode="r", shape=(rows, self.dimensions)).view(np.ndarray)
                if rows
                else np.zeros((0, self.dimensions), dtype=np.float32)
            )
        # the last answer: `ra context` on a code file searches its docs and its code apart with
        # one vector, and the scan of every row is most of a dense search's cost
        self._last: tuple[tuple[str, bytes, int, tuple[str, ...]], list[tuple[str, float]]] | None = None

    def nearest(self, query: np.ndarray, k: int, trees: Sequence[str] = ()) -> list[tuple[str, float]]:
        """The `k` chunk ids whose vectors are nearest `query` (cosine: a first window's row is
        normalised, a later one's scaled by `LATER_WINDOW`), best first, over `trees` (all when
        empty). A chunk with several rows (its windows) counts once, by its best. The same
        question asked again is answered from the last answer."""
        key = (query.dtype.str, query.tobytes(), k, tuple(trees))
        last = self._last
        if last is not None and last[0] == key:
            return list(last[1])
        found = self._nearest(query, k, trees)
        self._last = (key, found)
        return list(found)

    def _nearest(self, query: np.ndarray, k: int, trees: Sequence[str]) -> list[tuple[str, float]]:
        import numpy as np

        chosen = [tree for tree, rows in self.rows.items() if (not trees or tree in trees) and len(rows)]
        if not chosen:
            return []
        scores = np.concatenate([row_scores(self.rows[tree], query) for tree in chosen])  # one ranking
        starts = np.cumsum([0] + [len(self.rows[tree]) for tree in chosen])
        wanted = 2 * k  # most chunks have a row or two: twice k rows mostly hold k chunks
        while True:
            count = min(wanted, len(scores))
            top = np.argpartition(-scores, count - 1)[:count] if count < len(scores) else np.arange(len(scores))
            top = top[np.argsort(-scores[top], kind="stable")]
            chunks: dict[str, float] = {}
            trees_of = (np.searchsorted(starts, top, side="right") - 1).tolist()  # each row's tree
            for row, at, score in zip(top.tolist(), trees_of, scores[top].tolist(), strict=True):
                chunks.setdefault(self.ids[chosen[at]][row - int(starts[at])], score)
                if len(chunks) == k:
                    break
            if len(chunks) == k or count == len(scores):
                return sorted(chunks.items(), key=lambda pair: (-pair[1], pair[0]))
            wanted *= 4


def row_scores(rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """`rows @ query`, a block of rows per BLAS call (`BLOCK_NUMBERS`), so that no BLAS thread
    is woken to spin. The scores are the bits one single-threaded product gives: OpenBLAS scores
    rows four at a time (a block is a multiple of four) and the last `len(rows) % 4` one by one."""
    import numpy as np

    block = max(4, BLOCK_NUMBERS // max(1, rows.shape[1]) // 4 * 4)
    whole = len(rows) - len(rows) % block
    blocks = rows[:whole].reshape(-1, block, rows.shape[1]) @ query  # numpy loops over the blocks in C
    return np.concatenate([blocks.reshape(-1), rows[whole:] @ query])


def vectors_meta(root: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The `vectors/meta.json` of the artifacts at `root`, or None when they hold no vectors."""
    path = os.path.join(root, VECTORS_DIR, VECTORS_META)
    try:
        with open(path, "rb") as handle:
            meta = json.loads(handle.read())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise ArtifactError(f"{path}: unreadable ({exc}) — rebuild with: ra update --full") from None
    fields = cast("dict[str, Any]", meta) if isinstance(meta, dict) else {}
    if fields.get("format") != VECTORS_FORMAT or fields.get("dtype") != DTYPE:
        raise ArtifactError(
            f"{path}: vectors of a format this ra does not read — rebuild with: ra update --full"
        )
    return fields


def open_vectors(root: str | os.PathLike[str]) -> Vectors | None:
    """The vectors of the artifacts at `root`, or None when they hold none (numpy is imported
    only when they do)."""
    meta = vectors_meta(root)
    return None if meta is None or not meta.get("trees") else Vectors(os.fspath(root), meta)

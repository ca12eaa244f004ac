"""The chunks nearest a query's meaning, worked out by a forked process while the parent ranks by words.

A cold `ra-query search` on an index with vectors spends most of its time making the query's
vector: importing numpy and onnxruntime, loading the tokenizer and the model's session (about
0.25 s on two cores, ra_query.semantic.embed), where BM25 needs a third of that. `ra-query`
and `ra search` therefore fork `Nearby` first thing, before their own imports, when the command
looks like a hybrid search of artifacts with vectors. The child imports numpy and onnxruntime
and loads the session while the parent imports, opens the index and ranks by words; the parent
then tokenizes the query (the tokenizer loads in a tenth of the model's time), sends the token
ids and reads back the `k` nearest chunks' ids and cosines (ra_query.search.pipeline's dense
side), so it imports neither numpy nor the model. The answer is the one the parent would
compute: the same model, run alone on one thread, and the same scan (ra_query.artifacts.vectors).

Anything that goes wrong in the child (no semantic extra, a damaged model) makes it answer
nothing, and the parent computes the answer itself as it always did, meeting the same error and
reporting it the usual way. The child is killed when the command ends.
"""

from __future__ import annotations

import os

from ra_query.artifacts.paths import VECTORS_DIR, VECTORS_META
from ra_query.forked import Helper

TYPE_CHECKING = False  # typing is not imported here: this module is on the cold path
if TYPE_CHECKING:
    from collections.abc import Sequence


class Nearby:
    """A forked child answering `nearest(text, k, trees)` over the vectors at `root`."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.helper = Helper(lambda helper: _answer(root, helper))

    def nearest(self, text: str, k: int, trees: Sequence[str]) -> tuple[str, list[tuple[str, float]]] | None:
        """(the model's sha256, the `k` nearest chunk ids and their cosines, best first), or
        None when the child has no answer (the caller then works it out itself)."""
        if not self.helper.forked:
            return None
        from ra_query.errors import RaError
        from ra_query.semantic.embed import token_ids

        try:
            ids = token_ids(text)  # here, while the child loads the model: off its path
        except RaError:  # no semantic extra: the caller meets it and says so
            return None
        try:
            self.helper.send({"ids": ids, "k": k, "trees": list(trees)})
            reply = self.helper.receive()
        except OSError:
            return None
        if not isinstance(reply, dict) or "nearest" not in reply:
            return None
        found: list[list[object]] = reply["nearest"]  # pyright: ignore[reportUnknownVariableType]
        return str(reply["sha256"]), [(str(i), float(s)) for i, s in found]  # pyright: ignore

    def stop(self) -> None:
        """Kill the child (loading or waiting: nobody needs it any more); no longer served."""
        if _serving is self:
            serve(None)
        self.helper.stop()


_serving: Nearby | None = None
WORDS_ONLY = ("--lexical", "--raw", "--mode=lexical")  # a search's options that leave meaning out


def start(argv: Sequence[str], root: str | None) -> Nearby | None:
    """Fork and serve the dense side of a hybrid search of the artifacts at `root` (a CLI's
    guess from a glance at its arguments `argv`), or None: no guess, argv asks for words alone,
    or the artifacts hold no vectors. Fork it first thing: it is a cold
    search's longest path. A wrong guess costs the other core some work, never the answer: the
    search asks only a child serving the artifacts it opened, and works out what it cannot."""
    if root is None or any(arg in WORDS_ONLY for arg in argv):
        return None
    if not os.path.isfile(os.path.join(root, VECTORS_DIR, VECTORS_META)):
        return None
    forked = Nearby(root)
    serve(forked if forked.helper.forked else None)
    return forked


def serve(nearby: Nearby | None) -> None:
    """Make `nearby` the process's dense side for the artifacts at its root (None: none)."""
    global _serving
    _serving = nearby


def nearest(
    root: str | os.PathLike[str], text: str, k: int, trees: Sequence[str]
) -> tuple[str, list[tuple[str, float]]] | None:
    """The served child's answer for the artifacts at `root`, or None (none served for them, or
    no answer): see `Nearby.nearest`."""
    if _serving is None or os.path.realpath(_serving.root) != os.path.realpath(root):
        return None
    return _serving.nearest(text, k, trees)


def _answer(root: str, helper: Helper) -> None:
    """The child: load the model, then answer each request until the parent closes its end. A
    failure to load leaves every request unanswered (an empty reply)."""
    try:
        from ra_query.semantic.embed import embedder

        model = embedder(1)  # one thread, as the parent's own would be (ra_query.search.pipeline)
    except Exception:  # the parent meets it itself and reports it: ra_query.search.pipeline
        model = None
    vectors = None
    while (request := helper.receive()) is not None:
        if model is None or not isinstance(request, dict):
            helper.send({})
            continue
        from typing import Any, cast

        from ra_query.artifacts.vectors import open_vectors

        if vectors is None:  # opened once asked: `ra search` may have refreshed the index first
            vectors = open_vectors(root)
        if vectors is None:
            helper.send({})
            continue
        asked = cast("dict[str, Any]", request)
        vector = model.embed_ids([int(i) for i in asked["ids"]])
        trees = [str(tree) for tree in asked["trees"]]
        helper.send({"sha256": model.sha256, "nearest": vectors.nearest(vector, int(asked["k"]), trees)})

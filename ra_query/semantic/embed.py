"""Embedding text with the model ra ships: all-MiniLM-L6-v2, int8 ONNX (ra_query/semantic/model/).

Needs the optional extra `ra-kb[semantic]` (onnxruntime, tokenizers, numpy): nothing here is
imported by a search of an index without vectors, and nothing is downloaded at run time — the
model and its tokenizer are package data (model.json says what they are and their sha256).

A text is tokenized (WordPiece, truncated to the model's 256 tokens), run through the model,
mean-pooled over its tokens and L2-normalised: cosine similarity is then a dot product.
Each text runs alone: the int8 model quantizes its activations per run, so a text embedded in
a batch would come out a little different with other neighbours (up to 0.02 a dimension); alone,
a chunk's vector is the same in an incremental build as in a full one, and no run pays for
padding (on two cores one text at a time is as fast as batches of 32). The CUDA provider is
used when onnxruntime-gpu offers it and `RA_EMBED_DEVICE` is not `cpu`.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ra_query.errors import RaError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import numpy as np
    import numpy.typing as npt

MODEL_DIR = Path(__file__).resolve().parent / "model"
EXTRA = "pip install 'ra-kb[semantic]'"


class SemanticUnavailable(RaError):
    """The semantic extra (onnxruntime, tokenizers, numpy) is not installed."""


def model_info() -> dict[str, Any]:
    """model.json: the model's name, files, dimensions, token limit and sha256s."""
    info: dict[str, Any] = json.loads((MODEL_DIR / "model.json").read_text(encoding="utf-8"))
    return info


def available() -> bool:
    """True when the semantic extra is installed (checked without importing it)."""
    from importlib.util import find_spec

    return all(find_spec(name) is not None for name in ("onnxruntime", "tokenizers", "numpy"))


class Embedder:
    """The model, loaded once per process (`embedder()`); its tokenizer is `tokenizer()`."""

    def __init__(self, threads: int | None = None) -> None:
        if not available():
            raise SemanticUnavailable(f"semantic search needs its extra — install it with: {EXTRA}")
        import importlib

        ort: Any = importlib.import_module("onnxruntime")  # untyped: held as Any

        info = model_info()
        self.name: str = info["name"]
        self.sha256: str = info["sha256"]["onnx"]
        self.dimensions = int(info["dimensions"])
        self.max_tokens = int(info["max_tokens"])
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or os.cpu_count() or 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # warnings about unused initializers are not the user's
        providers = _providers(list(ort.get_available_providers()))
        self.session: Any = ort.InferenceSession(str(MODEL_DIR / info["file"]), options, providers=providers)
        self._inputs: set[str] = {str(i.name) for i in self.session.get_inputs()}

    def embed(
        self, texts: Sequence[str], *, progress: Callable[[int], None] | None = None
    ) -> npt.NDArray[np.float32]:
        """One L2-normalised row per text (`len(texts)` x `dimensions`), in the order given.

        `progress` is called with the number of texts done, every 64 texts and at the end.
        """
        import numpy as np

        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, encoding in enumerate(tokenizer().encode_batch(list(texts))):
            out[row] = self.embed_ids(encoding.ids)
            if progress is not None and (row % 64 == 63 or row == len(texts) - 1):
                progress(row + 1)
        return out

    def embed_ids(self, tokens: Sequence[int]) -> npt.NDArray[np.float32]:
        """The model over one text's token ids (`token_ids`), mean-pooled and normalised."""
        import numpy as np

        ids = np.asarray([tokens], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        outputs: list[Any] = self.session.run(None, {k: v for k, v in feed.items() if k in self._inputs})
        pooled = np.asarray(outputs[0], dtype=np.float32)[0].mean(axis=0)
        return pooled / max(float(np.linalg.norm(pooled)), 1e-12)


@cache
def tokenizer() -> Any:
    """The model's tokenizer as a text is embedded: truncated to the model's limit, unpadded.

    Raises:
        SemanticUnavailable: the semantic extra is not installed.
    """
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise SemanticUnavailable(f"semantic search needs its extra — install it with: {EXTRA}") from None
    loaded = Tokenizer.from_file(str(MODEL_DIR / "tokenizer.json"))
    loaded.enable_truncation(int(model_info()["max_tokens"]))  # pyright: ignore[reportUnknownMemberType]
    loaded.no_padding()
    return loaded


def token_ids(text: str) -> list[int]:
    """The token ids the model reads of `text` (`Embedder.embed_ids`); loads no model and no numpy
    (ra_query.semantic.nearby: a cold search tokenizes while the model loads elsewhere)."""
    return list(tokenizer().encode(text).ids)


MAX_WINDOWS = 8  # the most windows of one chunk embedded (a section of ~1,500 tokens)
OVERLAP = 4  # a window starts three quarters of a window after the one before: they overlap by a quarter


@cache
def _counter() -> Any:
    """The model's tokenizer without truncation: where a long text's windows begin and end."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(MODEL_DIR / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def windows(prefix: str, body: str, most: int = MAX_WINDOWS) -> list[str]:
    """What a chunk is embedded as: `prefix` (what the chunk is: its path or title, headings,
    signature), a line break and its body — in windows the model reads whole when the body is
    longer than the model's limit. Each window is the prefix and a stretch of the body that fits
    beside it, the next starting three quarters of a window later; at most `most` of them."""
    limit = int(model_info()["max_tokens"]) - 2  # [CLS] and [SEP]
    counter = _counter()
    head_offsets: list[tuple[int, int]] = (
        counter.encode(prefix, add_special_tokens=False).offsets if prefix else []
    )
    if len(head_offsets) > limit // 2:  # a long prefix is cut: every window keeps half for the body
        prefix = prefix[: head_offsets[limit // 2 - 1][1]]
    room = limit - min(len(head_offsets), limit // 2)
    offsets: list[tuple[int, int]] = counter.encode(body, add_special_tokens=False).offsets
    if len(offsets) <= room:
        return [f"{prefix}\n{body}"]
    stride = max(1, room - room // OVERLAP)
    out: list[str] = []
    for start in range(0, len(offsets), stride):
        end = min(start + room, len(offsets))
        out.append(f"{prefix}\n{body[offsets[start][0] : offsets[end - 1][1]]}")
        if end == len(offsets) or len(out) == most:
            break
    return out


def _providers(available: list[str]) -> list[str]:
    """CUDA when onnxruntime-gpu offers it and RA_EMBED_DEVICE is not `cpu`; else the CPU."""
    wanted = os.environ.get("RA_EMBED_DEVICE", "").lower()
    if wanted != "cpu" and "CUDAExecutionProvider" in available:
        return ["CUDAExecutionProvider", "CPUExecutionProvider"]
    return ["CPUExecutionProvider"]


@cache
def embedder(threads: int | None = None) -> Embedder:
    """This process's embedder with `threads` (default: every core); the model loads once (~0.1 s)."""
    return Embedder(threads)

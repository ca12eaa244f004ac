"""cl100k_base token counting works with no network and writes no cache."""

import socket

import pytest

from ra_query.text import tokens


def test_counts_known_strings_like_cl100k_base() -> None:
    assert tokens.count_tokens("hello world") == 2
    assert tokens.count_tokens("") == 0


def test_special_token_text_is_counted_as_ordinary_text() -> None:
    assert tokens.count_tokens("<|endoftext|>") > 1


def test_encoding_loads_with_sockets_blocked(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    tokens.encoding.cache_clear()
    try:
        assert tokens.count_tokens("offline token counting") > 0
    finally:
        tokens.encoding.cache_clear()


def test_bundled_file_matches_the_published_checksum() -> None:
    import hashlib

    assert hashlib.sha256(tokens.bpe_file().read_bytes()).hexdigest() == tokens.CL100K_SHA256

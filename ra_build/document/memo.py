"""A memo of answers keyed by text, bounded by the characters it holds.

Versioned documentation repeats most pages word for word from one product version to the next:
43% of the files of the PowerShell documentation corpus have a body (the text after the
frontmatter) that an earlier file already had, and 73% of its chunk text occurs in an earlier
file. A chunk-stage process remembers what it computed from such texts (the headings of a body,
the token count of a chunk) so a repeat costs a dictionary lookup. The key is the text itself,
so a hit is exact (no digest that could collide).
"""

from __future__ import annotations

import threading
from typing import Generic, TypeVar

T = TypeVar("T")


class TextMemo(Generic[T]):
    """Answers remembered by the text they were computed from, for the life of the process.

    Memory is bounded by the characters of the texts held: past `limit`, the oldest entries are
    forgotten first. Files that share a name are parsed together (`chunk_stage.batch_paths`), so the
    repeats a memo serves come soon after the text they repeat.
    """

    __slots__ = ("_answers", "_chars", "_limit", "_lock")

    def __init__(self, limit: int) -> None:
        self._answers: dict[str, T] = {}
        self._chars = 0
        self._limit = limit
        # a Dask worker runs parse tasks on several threads of one process
        self._lock = threading.Lock()

    def get(self, text: str) -> T | None:
        """The answer remembered for `text`, or None."""
        return self._answers.get(text)

    def put(self, text: str, answer: T) -> None:
        """Remember `answer` for `text`, forgetting the oldest answers past the bound."""
        with self._lock:
            answers = self._answers
            if text in answers:
                return
            self._chars += len(text)
            while self._chars > self._limit and answers:
                oldest = next(iter(answers))
                self._chars -= len(oldest)
                del answers[oldest]
            answers[text] = answer

    def __len__(self) -> int:
        return len(self._answers)

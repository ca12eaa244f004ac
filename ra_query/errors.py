"""The one exception tree of ra. Every error a user can cause is an `RaError`.

    RaError                      exit 2 unless a subclass says otherwise
    ├── ConfigError              a .ra.toml that cannot be read, parsed or validated
    ├── InputError               a file or argument given on the command line is unusable
    ├── NotFoundError            exit 1: an id, document or tree that does not exist
    ├── QuerySyntaxError         exit 1: a search query that breaks the query language
    ├── ArtifactError            index artifacts missing, unreadable or of an unknown format
    │   └── UnwritableError      a build cannot write them: a full disk, a read-only directory
    ├── ClusterError             `ra update --cluster`: no Dask installed, no scheduler, a lost worker
    └── BusyError                exit 3: another `ra update` holds the build lock

The CLI prints `RaError.report(prog)` (`ra: error: <message>`; a query syntax error adds the
query and a caret) on stderr and exits with `exit_code`; it never shows a
traceback for an `RaError`. Messages say what is wrong, where, and what to do next.
"""

from __future__ import annotations


class RaError(Exception):
    """Base of every error a user can cause; carries the process exit code."""

    exit_code: int = 2

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message

    def report(self, prog: str) -> str:
        """What a command line prints on stderr for this error: `prog: error: message`."""
        return f"{prog}: error: {self.message}\n"


class ConfigError(RaError):
    """A configuration file is malformed, has a wrong type, or names a missing path."""


class InputError(RaError):
    """A file or argument given by the user cannot be used (missing, binary, not UTF-8)."""


class NotFoundError(RaError):
    """A chunk id, document id or tree name that is not in the index."""

    exit_code = 1


class QuerySyntaxError(RaError):
    """A search query that breaks ra's query language; knows where, and shows it with a caret."""

    exit_code = 1

    def __init__(self, query: str, column: int, what: str, hint: str) -> None:
        # the message counts columns from 1 for people; `column` stays 0-based for code
        super().__init__(f"query syntax error at column {column + 1}: {what} — {hint}")
        self.query = query
        self.column = column
        self.what = what
        self.hint = hint

    def caret(self, width: int = 80) -> str:
        """Two lines: the query (a window of `width` around the error if longer) and a `^` under it."""
        shown = "".join(c if c == "\t" or c.isprintable() else " " for c in self.query)
        column = self.column
        if len(shown) > width:
            start = max(0, min(column - width // 2, len(shown) - width))
            end = start + width
            prefix = "…" if start > 0 else ""
            shown = prefix + shown[start:end] + ("…" if end < len(shown) else "")
            column = column - start + len(prefix)
        pad = "".join("\t" if c == "\t" else " " for c in shown[:column])
        return f"{shown}\n{pad}^"

    def report(self, prog: str) -> str:
        """The one-line error, then the query with a caret under the offending column."""
        return super().report(prog) + self.caret() + "\n"


class ArtifactError(RaError):
    """Index artifacts are missing, corrupt, or were written in an unknown format."""


class ClusterError(RaError):
    """A cluster build cannot start (no Dask, no scheduler) or lost a worker; the last build stays."""


class BusyError(RaError):
    """Another build holds the lock on the artifact directory."""

    exit_code = 3


class UnwritableError(ArtifactError):
    """A build cannot write its artifacts (full disk, read-only directory); the last build stays."""

    def __init__(self, what: str, todo: str) -> None:
        super().__init__(f"{what} — {todo}")
        self.what = what

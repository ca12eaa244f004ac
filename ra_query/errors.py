"""The one exception tree of ra. Every error a user can cause is an `RaError`.

    RaError                      exit 2 unless a subclass says otherwise
    ├── ConfigError              a .ra.toml that cannot be read, parsed or validated
    ├── InputError               a file or argument given on the command line is unusable
    ├── NotFoundError            exit 1: an id, document or tree that does not exist
    ├── ArtifactError            index artifacts missing, unreadable or of an unknown format
    └── BusyError                exit 3: another `ra update` holds the build lock

The CLI prints `ra: error: <message>` on stderr and exits with `exit_code`; it never shows a
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


class ConfigError(RaError):
    """A configuration file is malformed, has a wrong type, or names a missing path."""


class InputError(RaError):
    """A file or argument given by the user cannot be used (missing, binary, not UTF-8)."""


class NotFoundError(RaError):
    """A chunk id, document id or tree name that is not in the index."""

    exit_code = 1


class ArtifactError(RaError):
    """Index artifacts are missing, corrupt, or were written in an unknown format."""


class BusyError(RaError):
    """Another build holds the lock on the artifact directory."""

    exit_code = 3

"""What every `ra` command says on the terminal, and the configuration it reads.

Warnings go to stderr as `ra: warning: …`, with the control characters of file names made
visible; the configuration is read from the working directory with `~` as $HOME, and its
warnings are printed as it is read. How an error becomes an exit code is shared with
`ra-query` (ra_query.cli_common.guarded).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing is not imported before `ra search` forks its stale count (entry)
if TYPE_CHECKING:
    from pathlib import Path

    from ra_build.config.model import Config

PROG = "ra"


def warn(message: str) -> None:
    """`ra: warning: …` on stderr, with control characters of file names made visible."""
    from ra_query.text.textsafe import printable

    print(f"ra: warning: {printable(message)}", file=sys.stderr)


def home() -> Path:
    """$HOME (where `~/.ra.toml` is), else what the system says."""
    from pathlib import Path

    return Path(os.environ.get("HOME") or Path.home())


def load_config(require_paths: bool = True) -> Config:
    """The configuration for the working directory, its warnings printed."""
    from pathlib import Path

    from ra_build.config.load import load_config as load

    config = load(Path.cwd(), home(), require_paths=require_paths)
    for warning in config.warnings:
        warn(warning)
    return config

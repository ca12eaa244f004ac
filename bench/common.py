"""Helpers the benchmark scripts share (run them as `python bench/NAME.py`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def git_head() -> str:
    """Short sha of HEAD, `+dirty` when ra's own code differs from it (what was measured)."""
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", "ra_query", "ra_build"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        return sha + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def verdict(ok: bool) -> str:
    """PASS or FAIL, for the floor tables."""
    return "PASS" if ok else "FAIL"

"""scripts/bootstrap installs once per change of pyproject.toml's content, not of its mtime
(issue 35 item 8): a checkout or a `git stash pop` that only touches the file costs nothing."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _project(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A copy of the script and pyproject.toml, and a venv whose python logs every call and
    answers `-m pip …` without installing anything."""
    root = tmp_path / "project"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "bootstrap", root / "scripts" / "bootstrap")
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    log = tmp_path / "calls.log"
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(
        f'#!/usr/bin/env bash\necho "$*" >> {log}\nif [ "$1" = "-m" ]; then exit 0; fi\nexec {sys.executable} "$@"\n'
    )
    python.chmod(0o755)
    return root, tmp_path / "venv", log


def _bootstrap(root: Path, venv: Path) -> None:
    env = {**os.environ, "RA_VENV": str(venv)}
    subprocess.run(
        [str(root / "scripts" / "bootstrap"), "--dev"], cwd=root, env=env, check=True, capture_output=True
    )


def test_bootstrap_does_not_reinstall_when_pyproject_is_only_touched(tmp_path: Path) -> None:
    root, venv, log = _project(tmp_path)
    digest = hashlib.sha256((root / "pyproject.toml").read_bytes()).hexdigest()
    for stamp in (".ra-installed", ".ra-installed-dev"):
        (venv / stamp).write_text(digest + "\n")
    (root / "pyproject.toml").touch()  # newer than the stamps, the same content
    _bootstrap(root, venv)
    assert "pip install" not in log.read_text()


def test_bootstrap_reinstalls_when_pyproject_changes(tmp_path: Path) -> None:
    root, venv, log = _project(tmp_path)
    digest = hashlib.sha256((root / "pyproject.toml").read_bytes()).hexdigest()
    for stamp in (".ra-installed", ".ra-installed-dev"):
        (venv / stamp).write_text(digest + "\n")
    with (root / "pyproject.toml").open("a") as handle:
        handle.write("\n# a change\n")
    _bootstrap(root, venv)
    calls = log.read_text()
    assert "-m pip install --quiet --disable-pip-version-check -e ." in calls
    assert "--group dev" in calls
    changed = hashlib.sha256((root / "pyproject.toml").read_bytes()).hexdigest()
    assert (venv / ".ra-installed").read_text().strip() == changed

"""Shared fixtures: an environment without proxies or outside `.ra.toml` files, an isolated HOME,
and running the real `ra` / `ra-query` executables."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ra_build.pipeline.run import BuildReport
    from ra_query.search.pipeline import TopicResult

BIN = Path(sys.executable).parent
GOLDEN = Path(__file__).parent / "golden"
CORPUS = Path(__file__).parent / "fixtures" / "corpus"
CONFIG_CEILING = "RA_CONFIG_CEILING"  # ra_build.config.load reads no .ra.toml above this folder
PROXY_VARIABLES = tuple(
    v for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy") for v in (name, name.upper())
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        default=False,
        help="rewrite tests/golden/* from the current output instead of comparing",
    )


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Callable[[str, str], None]:
    """Compare text with tests/golden/NAME; `pytest --update-goldens` rewrites the file."""
    update = bool(request.config.getoption("--update-goldens"))

    def check(name: str, text: str) -> None:
        path = GOLDEN / name
        if update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            return
        assert path.exists(), f"no golden file {path} — create it with: pytest --update-goldens"
        assert text == path.read_text(encoding="utf-8")

    return check


@pytest.fixture(scope="session", autouse=True)
def hermetic(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """No test, nor any command it runs, depends on the machine: no proxy takes the upstream
    tests' requests for 127.0.0.1 elsewhere, and no `.ra.toml` above pytest's temporary folder
    (in /tmp, say) joins the configuration of a project without `root = true`."""
    with pytest.MonkeyPatch.context() as patch:
        for name in PROXY_VARIABLES:
            patch.delenv(name, raising=False)
        patch.setenv(CONFIG_CEILING, str(tmp_path_factory.getbasetemp()))
        yield


def child_env(**values: str) -> dict[str, str]:
    """The environment of a command a test runs: this one (made `hermetic`) without ra's own
    variables but the configuration ceiling, then `values`."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith("RA_") or k == CONFIG_CEILING}
    return kept | values


@dataclass(frozen=True)
class Run:
    """The outcome of one command."""

    code: int
    out: str
    err: str


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh, empty HOME so no real ~/.ra.toml leaks into a test."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    monkeypatch.delenv("RA_ARTIFACTS", raising=False)
    return path


def run_cmd(program: str, *args: str, cwd: Path, home: Path, env: dict[str, str] | None = None) -> Run:
    """Run `program` (ra or ra-query) from the venv as a real subprocess."""
    full_env = child_env(HOME=str(home), NO_COLOR="1", COLUMNS="100") | (env or {})
    proc = subprocess.run(
        [str(BIN / program), *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def ra(home: Path, tmp_path: Path) -> Callable[..., Run]:
    """Run `ra ARGS...` in a subprocess; cwd defaults to tmp_path."""

    def _ra(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> Run:
        return run_cmd("ra", *args, cwd=cwd or tmp_path, home=home, env=env)

    return _ra


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    """A private copy of the fixture corpus (its .ra.toml defines tree `docs`); tests may edit it."""
    target = tmp_path / "kb"
    shutil.copytree(CORPUS, target)
    return target


def built_copy(corpus: Path, base: Path) -> tuple[Path, Path]:
    """Copy `corpus` to base/kb, build it with HOME base/home; (kb, home)."""
    home = base / "home"
    home.mkdir()
    kb = base / "kb"
    shutil.copytree(corpus, kb)
    build(kb, home)
    return kb, home


def build(kb: Path, home: Path, *, full: bool = False) -> BuildReport:
    """Build `kb` into kb/.ra in-process through the real task graph; fail on any failure."""
    from ra_build.config.load import load_config
    from ra_build.pipeline.run import run_build

    report = run_build(load_config(kb, home), kb / ".ra", full=full)
    assert report.failures == []
    return report


def find(artifacts: Path, text: str, limit: int = 10) -> TopicResult:
    """What the index holds for `text`: plain BM25 matches, no aggregation, elbow or fuzzing."""
    from ra_query.artifacts.store import open_store
    from ra_query.search.pipeline import SearchParams, search_topic

    params = SearchParams(limit=limit, aggregation=False, cutoff_ratio=0.0, fuzzy_distance=0)
    return search_topic(open_store(artifacts), text, params)


def drain(fd: int) -> bytes:
    """Everything a pseudo-terminal's main side yields until the other side is closed."""
    screen = b""
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO once every child has closed the terminal
            break
        if not data:
            break
        screen += data
    return screen

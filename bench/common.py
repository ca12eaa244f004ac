"""Helpers the benchmark scripts share (run them as `python bench/NAME.py`)."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
# the powershell docs (94 MB of markdown), as the project's shared data holds them
DEFAULT_TARBALL = REPO.parent / "shared" / "data" / "corpora" / "powershell-docs-md.tar.gz"
# where a developer keeps that tarball unpacked: the scripts that only read a corpus use it when present
DEFAULT_DIR = Path("/tmp/corpora/ps")
TREE = "ps"  # the tree name of the benchmark projects


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


# ---- running ra ---------------------------------------------------------------------------------


def add_set_option(parser: argparse.ArgumentParser, example: str) -> None:
    """The `--set SECTION.KEY=VALUE` option (repeatable) of a benchmark that builds projects."""
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help=f"a .ra.toml setting for the builds (TOML value), e.g. {example}",
    )


def add_settings(
    parser: argparse.ArgumentParser, given: list[str], into: dict[str, dict[str, str]], example: str
) -> None:
    """Put each `--set SECTION.KEY=VALUE` of `given` into `into` (section → key → TOML value)."""
    for setting in given:
        dotted, _, value = setting.partition("=")
        section, _, key = dotted.rpartition(".")
        if not section or not key or not value:
            parser.error(f"--set {setting!r}: write SECTION.KEY=VALUE, e.g. {example}")
        into.setdefault(section, {})[key] = value


def ra_executable(name: str = "ra") -> Path:
    """A console script (`ra`, `ra-query`) of the interpreter running the benchmark (the repo's
    venv), so that what runs is this checkout's ra and not another one on PATH."""
    for candidate in (Path(sys.executable).parent / name, REPO / ".venv" / "bin" / name):
        if candidate.exists():
            return candidate
    raise SystemExit(f"no `{name}` executable beside the interpreter — run with .venv/bin/python")


def clean_env(home: Path | None = None) -> dict[str, str]:
    """The environment without RA_* (and with HOME replaced when given).

    PYTHONDONTWRITEBYTECODE is dropped too: with it set, every process recompiles each module
    edited since its .pyc was written, which measures the compiler, not ra (an installed ra
    has its .pyc files; `compile_sources` writes ours before anything is timed).
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("RA_") and k != "PYTHONDONTWRITEBYTECODE"}
    if home is not None:
        env["HOME"] = str(home)
    return env


def compile_sources(source: Path) -> None:
    """Write the .pyc files of the checkout at `source` (as installing a wheel does), so that no
    timed process compiles: a fresh `git worktree` has none, the working tree may have stale ones."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(source / "ra_build"), str(source / "ra_query")],
        env=clean_env(),
        check=True,
        stdout=subprocess.DEVNULL,
    )


def ra_entry_module(source: Path) -> str:
    """The module of the `ra` console entry (`main`) in the checkout at `source`.

    It moved in the rooms of 89a6c53: `ra_build.main` before (cb1f0fe), `ra_build.cli.entry`
    after. The files decide, not an import tried and caught: in a checkout before the rooms,
    importing `ra_build.cli.entry` loads the old `ra_build/cli.py` (typer and all) before it
    fails, and a timed command would pay for that.
    """
    return "ra_build.cli.entry" if (source / "ra_build" / "cli" / "entry.py").is_file() else "ra_build.main"


def entry_command(source: Path, prog: str, *args: str) -> list[str]:
    """`prog ARGS` (`ra` or `ra-query`) as the checkout at `source` runs it: this interpreter
    calling that checkout's console entry (`ra_query.cli` is the same module on both sides of
    the rooms).

    The checkout is put first on `sys.path` by the command itself, not through PYTHONPATH, so a
    runner that gives every command one environment (hyperfine -N) can time two checkouts side
    by side; a process the command starts with `sys.executable` (a rebuild's shard workers)
    would import the venv's ra, which is why the sides are timed on an index that is current.
    """
    module = ra_entry_module(source) if prog == "ra" else "ra_query.cli"
    code = (
        f"import sys; sys.path.insert(0, {str(source)!r}); sys.argv = {[prog, *args]!r}; "
        f"from {module} import main; sys.exit(main())"
    )
    return [sys.executable, "-c", code]


@contextmanager
def worktree(rev: str, parent: Path) -> Iterator[Path]:
    """A checkout of `rev` at `parent`/rev (`git worktree add --detach`), removed on the way out:
    the other side of a side-by-side benchmark, leaving this checkout's index and HEAD alone."""
    path = parent / "rev"
    subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(path), rev], cwd=REPO, check=True)
    try:
        yield path
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=REPO, check=False)


def checkout(stack: ExitStack, rev: str | None, prefix: str) -> tuple[Path | None, str]:
    """The ra a benchmark measures: with `rev`, a worktree of it (removed when `stack` closes),
    put first on sys.path so that what imports ra from here on imports that side's, and its short
    hash; else (None, this checkout's HEAD)."""
    if not rev:
        return None, git_head()
    tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=prefix)))
    source = stack.enter_context(worktree(rev, tmp))
    sys.path.insert(0, str(source))
    short = subprocess.run(
        ["git", "rev-parse", "--short", rev], cwd=REPO, capture_output=True, text=True, check=True
    )
    return source, short.stdout.strip()


# ---- scoring: ra eval's code --------------------------------------------------------------------


def ra_eval(source: Path | None = None) -> ModuleType:
    """`ra eval`'s scoring (ra_query.search.evaluate) of this checkout. With `source`, another
    revision's checkout first on sys.path (`--rev`), that revision's ra searches and this
    checkout's file still scores, so every revision is scored by the same code (the file imports
    ra_query.errors, ra_query.text.tokens and ra_query.sources.languages' KINDS, which every
    revision since 7d6fd22 has)."""
    name, path = "ra_query.search.evaluate", REPO / "ra_query" / "search" / "evaluate.py"
    if source is None:
        return importlib.import_module(name)
    loaded = sys.modules.get(name)
    if loaded is not None and loaded.__file__ == str(path):
        return loaded
    importlib.import_module("ra_query.search")  # that revision's package, which holds the module
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def asked(
    store: Any, questions: list[Any], params: Any, scoring: ModuleType
) -> list[tuple[Any, list[dict[str, Any]], str]]:
    """Each question as `ra eval` asks and scores it (`scoring`: `ra_eval()`; the search is what
    `ra-query search` prints for it, in JSON and in text, with `params`), with what the agent was
    shown: (its outcome, its results as JSON, the text it read); a failed search shows nothing."""
    from ra_query.commands import search_command

    shown: dict[tuple[str, bool], str] = {}

    def search(query: str, narrowed: Any, as_json: bool) -> str:
        shown[query, as_json] = search_command(store, [query], narrowed, json=as_json).text
        return shown[query, as_json]

    out: list[tuple[Any, list[dict[str, Any]], str]] = []
    for scored in scoring.evaluate(store, questions, params, search, explain=False):
        payload = None if scored.failed else shown.get((scored.question.text, True))
        results = json.loads(payload)["queries"][0]["results"] if payload else []
        out.append((scored, results, "" if scored.failed else shown[scored.question.text, False]))
    return out


# ---- a corpus and a project to build ------------------------------------------------------------


def place_corpus(target: Path, tarball: Path = DEFAULT_TARBALL, copy_of: Path | None = None) -> None:
    """Put a corpus at `target`: a copy of the folder `copy_of` (so the original is never
    touched by the edits a benchmark makes), else `tarball` unpacked."""
    if copy_of is not None:
        shutil.copytree(copy_of, target, symlinks=True)
        return
    target.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tarball) as archive:
        archive.extractall(target, filter="data")


def corpus_folder(given: Path | None, target: Path, tarball: Path = DEFAULT_TARBALL) -> Path:
    """A corpus to read in place: `given`, else DEFAULT_DIR when it exists, else `tarball`
    unpacked at `target` (once: a later call with the same `target` finds it there)."""
    if given is not None:
        return given.resolve()
    if DEFAULT_DIR.is_dir():
        return DEFAULT_DIR
    if not target.is_dir():
        place_corpus(target, tarball)
    return target


def write_project(
    project: Path, corpus: Path, tree: str = TREE, settings: Mapping[str, Mapping[str, str]] | None = None
) -> Path:
    """`project` with a `.ra.toml` naming `corpus` as its one tree, and any extra `settings`
    (section → key → TOML value); `root = true`, so no configuration above it leaks in."""
    lines = ["root = true", ""]
    for section, keys in (settings or {}).items():
        lines += [f"[{section}]", *(f"{k} = {v}" for k, v in keys.items()), ""]
    project.mkdir(parents=True, exist_ok=True)
    text = "\n".join([*lines, f"[tree.{tree}]", f'path = "{corpus}"', ""])
    (project / ".ra.toml").write_text(text, encoding="utf-8")
    return project


def run_ra(project: Path, home: Path, *args: str) -> tuple[float, str]:
    """`ra ARGS` in `project` with HOME=`home`, in a subprocess: (wall seconds, its last line of
    output); a failure ends the benchmark with what ra printed."""
    started = time.perf_counter()
    proc = subprocess.run(
        [str(ra_executable("ra")), *args],
        cwd=project,
        env=clean_env(home),
        capture_output=True,
        text=True,
        encoding="utf-8",
    )
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        command = " ".join(["ra", *args])
        raise SystemExit(f"{command} in {project} exited {proc.returncode}\n{proc.stdout}{proc.stderr}")
    lines = proc.stdout.strip().splitlines()
    return seconds, lines[-1] if lines else ""


def build_project(
    project: Path,
    home: Path,
    corpus: Path,
    tree: str = TREE,
    settings: Mapping[str, Mapping[str, str]] | None = None,
) -> tuple[Path, float, str]:
    """A fresh project at `project` over `corpus` (anything there before removed), built by
    `ra update` with HOME=`home` (an empty directory): (artifacts, seconds, ra's summary line)."""
    shutil.rmtree(project, ignore_errors=True)
    write_project(project, corpus, tree, settings)
    home.mkdir(parents=True, exist_ok=True)
    seconds, summary = run_ra(project, home, "update")
    return project / ".ra", seconds, summary

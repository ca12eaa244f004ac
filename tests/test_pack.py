"""`ra pack` and opening a packed artifact with `ra-query` (issue 13): a release artifact holds
only what queries need, packs to the same bytes, and is refused when it is not what it claims."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import BIN, Run, run_cmd

DOCS = {
    "database.md": "# Database\n\n## Connection pool\n\nThe connection pool keeps connections open.\n",
    "auth.md": "# Authentication\n\nLogin issues an OAuth token.\n",
}


@pytest.fixture
def project(tmp_path: Path, home: Path) -> Path:
    root = tmp_path / "project"
    (root / "docs").mkdir(parents=True)
    for name, text in DOCS.items():
        (root / "docs" / name).write_text(text, encoding="utf-8")
    (root / ".ra.toml").write_text('root = true\n\n[tree.docs]\npath = "docs"\n', encoding="utf-8")
    assert run_cmd("ra", "update", cwd=root, home=home).code == 0
    return root


def pack(project: Path, home: Path, *args: str) -> Path:
    run = run_cmd("ra", "pack", "-o", str(project / "kb.tar.gz"), *args, cwd=project, home=home)
    assert run.code == 0, run.err
    return project / "kb.tar.gz"


def rq(cwd: Path, home: Path, cache: Path, *args: str) -> Run:
    return run_cmd("ra-query", *args, cwd=cwd, home=home, env={"RA_CACHE": str(cache)})


def members(archive: Path) -> list[str]:
    with tarfile.open(archive) as tar:
        return [m.name for m in tar.getmembers() if m.isfile()]


def test_the_same_build_packs_to_the_same_bytes(project: Path, home: Path) -> None:
    first = pack(project, home).read_bytes()
    time.sleep(1.1)  # a pack made a second later still has the same bytes
    second = pack(project, home).read_bytes()
    assert first == second
    digest = hashlib.sha256(first).hexdigest()
    assert (project / "kb.tar.gz.sha256").read_text(encoding="utf-8") == f"{digest}  kb.tar.gz\n"


def test_a_pack_holds_the_manifest_and_the_files_it_lists_and_nothing_else(project: Path, home: Path) -> None:
    archive = pack(project, home)
    with tarfile.open(archive) as tar:
        manifest = json.load(tar.extractfile("ra-artifacts/manifest.json"))  # type: ignore[arg-type]
    shipped = {name.removeprefix("ra-artifacts/") for name in members(archive)}
    assert shipped == {"manifest.json", *manifest["files"]}
    assert "index/meta.json" in shipped
    assert not any(
        name.startswith(("chunks/", ".")) or name in ("index_state.json", "files.parquet") or "/." in name
        for name in shipped
    )
    assert manifest["packed"] == {"format": 1, "tables": False}


def test_with_tables_a_pack_holds_the_chunk_tables_too(project: Path, home: Path) -> None:
    shipped = members(pack(project, home, "--with-tables"))
    assert "ra-artifacts/chunks/docs/part-00.parquet" in shipped and "ra-artifacts/files.parquet" in shipped


def test_the_manifest_records_the_sources_git_commit_and_whether_they_were_dirty(
    project: Path, home: Path
) -> None:
    git = ["git", "-C", str(project), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "docs"], check=True)
    head = subprocess.run(
        [*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    with tarfile.open(pack(project, home)) as tar:
        manifest = json.load(tar.extractfile("ra-artifacts/manifest.json"))  # type: ignore[arg-type]
    assert manifest["source"] == {"docs": {"commit": head, "dirty": False}}


def test_ra_query_searches_a_packed_artifact_and_unpacks_it_once(
    project: Path, home: Path, tmp_path: Path
) -> None:
    archive = pack(project, home)
    cache = tmp_path / "cache"
    elsewhere = tmp_path / "sandbox"
    elsewhere.mkdir()
    run = rq(elsewhere, home, cache, "--artifacts", str(archive), "search", "--list", "connection pool")
    assert run.code == 0 and "docs:database.md#connection-pool" in run.out
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    assert [p.name for p in cache.iterdir()] == [digest]
    stamp = (cache / digest / ".complete").stat().st_mtime_ns
    assert rq(elsewhere, home, cache, "--artifacts", str(archive), "get", "docs:auth.md").code == 0
    assert (cache / digest / ".complete").stat().st_mtime_ns == stamp  # reused, not unpacked again


def test_a_digest_that_does_not_match_is_a_one_line_error(project: Path, home: Path, tmp_path: Path) -> None:
    archive = pack(project, home)
    run = rq(
        tmp_path, home, tmp_path / "cache", "--artifacts", str(archive), "--sha256", "0" * 64, "ls", "docs"
    )
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    assert (run.code, run.out) == (2, "")
    assert run.err == (
        f"ra-query: error: {archive}: sha256 is {digest}, not the pinned {'0' * 64} — the download is "
        "corrupt, truncated or not the release you meant; fetch it again or fix the pin\n"
    )


def test_a_truncated_archive_is_a_one_line_error(project: Path, home: Path, tmp_path: Path) -> None:
    data = pack(project, home).read_bytes()
    broken = tmp_path / "broken.tar.gz"
    broken.write_bytes(data[: len(data) // 2])
    run = rq(tmp_path, home, tmp_path / "cache", "--artifacts", str(broken), "ls", "docs")
    assert run.code == 2 and run.err.count("\n") == 1
    assert run.err.startswith(f"ra-query: error: {broken}: not a readable packed artifact (")
    assert not any((tmp_path / "cache").glob("*/.complete"))


def tarball(path: Path, entries: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in entries:
            info.size = len(data) if data is not None else 0
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


@pytest.mark.parametrize("name", ["../evil.txt", "/etc/evil", "ra-artifacts/../../evil", "elsewhere/x"])
def test_an_archive_that_reaches_out_of_its_directory_is_refused(
    tmp_path: Path, home: Path, name: str
) -> None:
    archive = tarball(tmp_path / "evil.tar.gz", [(tarfile.TarInfo(name), b"pwned")])
    run = rq(tmp_path, home, tmp_path / "cache", "--artifacts", str(archive), "ls", "docs")
    assert run.code == 2
    assert f"refused: member {name!r} is not a plain file under ra-artifacts/" in run.err
    assert not (tmp_path / "evil.txt").exists() and not (tmp_path.parent / "evil").exists()


def test_an_archive_with_a_link_is_refused(tmp_path: Path, home: Path) -> None:
    link = tarfile.TarInfo("ra-artifacts/manifest.json")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    archive = tarball(tmp_path / "link.tar.gz", [(link, None)])
    run = rq(tmp_path, home, tmp_path / "cache", "--artifacts", str(archive), "ls", "docs")
    assert run.code == 2 and "refused: member 'ra-artifacts/manifest.json'" in run.err


def test_an_unknown_pack_format_says_to_upgrade(project: Path, home: Path, tmp_path: Path) -> None:
    archive = pack(project, home)
    with tarfile.open(archive) as tar:
        entries = [(m, tar.extractfile(m).read() if m.isfile() else None) for m in tar.getmembers()]  # type: ignore[union-attr]
    patched = []
    for info, data in entries:
        if info.name == "ra-artifacts/manifest.json" and data is not None:
            manifest = json.loads(data)
            manifest["packed"]["format"] = 99
            data = json.dumps(manifest).encode()
        patched.append((info, data))
    future = tarball(tmp_path / "future.tar.gz", patched)
    run = rq(tmp_path, home, tmp_path / "cache", "--artifacts", str(future), "ls", "docs")
    assert run.code == 2
    assert "pack format 99 is not one this ra reads (1) — upgrade ra, or pack it with this version" in run.err


@pytest.fixture
def served(project: Path, home: Path, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """The packed artifact served by `python -m http.server` on 127.0.0.1: (url, sha256)."""
    import socket

    site = tmp_path / "site"
    site.mkdir()
    archive = shutil.copy(pack(project, home), site / "kb.tar.gz")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(site)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/kb.tar.gz", hashlib.sha256(Path(archive).read_bytes()).hexdigest()
    finally:
        server.terminate()
        server.wait(30)


def test_ra_query_fetches_a_pinned_url_once_and_then_needs_no_network(
    served: tuple[str, str], home: Path, tmp_path: Path
) -> None:
    url, digest = served
    cache = tmp_path / "cache"
    run = rq(
        tmp_path, home, cache, "--artifacts", f"{url}#sha256={digest}", "search", "--list", "connection pool"
    )
    assert run.code == 0 and "docs:database.md#connection-pool" in run.out
    offline = f"http://127.0.0.1:9/kb.tar.gz#sha256={digest}"  # nothing listens there
    assert (
        rq(tmp_path, home, cache, "--artifacts", offline, "ls", "docs").out
        == "docs:auth.md\ndocs:database.md\n"
    )


def test_a_url_that_cannot_be_fetched_is_a_one_line_error(home: Path, tmp_path: Path) -> None:
    run = rq(tmp_path, home, tmp_path / "cache", "--artifacts", "http://127.0.0.1:9/kb.tar.gz", "ls", "docs")
    assert run.code == 2 and run.err.count("\n") == 1
    assert run.err.startswith("ra-query: error: http://127.0.0.1:9/kb.tar.gz: cannot download (")


def test_a_file_url_opens_like_a_file(project: Path, home: Path, tmp_path: Path) -> None:
    archive = pack(project, home)
    run = rq(tmp_path, home, tmp_path / "cache", "--artifacts", archive.as_uri(), "ls", "trees")
    assert (run.code, run.out) == (0, "docs\n")


def test_the_cache_defaults_to_xdg_cache_home(project: Path, home: Path, tmp_path: Path) -> None:
    archive = pack(project, home)
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    run = run_cmd("ra-query", "--artifacts", str(archive), "ls", "trees", cwd=tmp_path, home=home, env=env)
    assert run.code == 0 and any((tmp_path / "xdg" / "ra").glob("*/.complete"))
    assert os.path.isdir(tmp_path / "xdg" / "ra")


def _repo_copy(tmp_path: Path) -> Path:
    """A copy of what the release script reads: the repo's docs, config, dodo.py and scripts."""
    repo = Path(__file__).resolve().parent.parent
    copy = tmp_path / "repo"
    for name in ("README.md", ".ra.toml", "dodo.py"):
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(repo / name, copy / name)
    for directory in ("docs", "scripts"):
        shutil.copytree(repo / directory, copy / directory)
    return copy


def _release(copy: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """scripts/release-artifact run in `copy` with this venv and a fresh HOME."""
    env = {**os.environ, "RA_VENV": str(BIN.parent), "HOME": str(tmp_path / "home")}
    (tmp_path / "home").mkdir()
    return subprocess.run(
        [str(copy / "scripts" / "release-artifact")],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_release_script_builds_packs_and_checks_the_repos_docs(tmp_path: Path) -> None:
    """What release.yml runs, on a copy of the repo's docs (the repo itself is not written)."""
    copy = _repo_copy(tmp_path)
    done = _release(copy, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "dist/ra-docs.tar.gz\n"
    archive = copy / "dist" / "ra-docs.tar.gz"
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    assert (copy / "dist" / "ra-docs.tar.gz.sha256").read_text(
        encoding="utf-8"
    ) == f"{digest}  ra-docs.tar.gz\n"
    assert {"ra-artifacts/manifest.json", "ra-artifacts/index/meta.json"} <= set(members(archive))


def test_the_release_script_makes_no_archive_when_the_docs_stop_answering_their_questions(
    tmp_path: Path,
) -> None:
    """scripts/release-artifact runs docs/eval-questions.jsonl with --min hit5=0.8 before it packs."""
    copy = _repo_copy(tmp_path)
    # the only answers of four of the fourteen questions, gone: at most 10 of 14 can be found,
    # however the rest rank (with scaling.md's, whose question README.md answers too, it passed)
    for page in ("mcp.md", "upstream.md", "chunking.md", "architecture.md"):
        (copy / "docs" / page).unlink()
    done = _release(copy, tmp_path)
    assert done.returncode == 1
    assert not (copy / "dist" / "ra-docs.tar.gz").exists()


@pytest.mark.slow
def test_the_query_only_install_searches_a_packed_artifact_without_the_build_side(
    project: Path, home: Path, tmp_path: Path
) -> None:
    """packages/ra-query: what an agent sandbox installs (from the package registry, like any user)."""
    repo = Path(__file__).resolve().parent.parent
    wheels, venv = tmp_path / "wheels", tmp_path / "venv"
    quiet = ["--quiet", "--disable-pip-version-check"]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            *quiet,
            "--no-deps",
            "-w",
            str(wheels),
            str(repo / "packages" / "ra-query"),
        ],
        check=True,
        timeout=600,
    )
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    (wheel,) = wheels.glob("ra_query-*.whl")
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", *quiet, str(wheel)], check=True, timeout=900
    )
    probe = "import importlib.util as u; print(' '.join(m for m in ('doit', 'pyarrow', 'markdown_it', 'typer', 'orjson', 'yaml', 'ra_build') if u.find_spec(m)))"
    missing = subprocess.run(
        [str(venv / "bin" / "python"), "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert missing.stdout.strip() == ""
    archive = pack(project, home)
    done = subprocess.run(
        [str(venv / "bin" / "ra-query"), "--artifacts", str(archive), "search", "--list", "connection pool"],
        cwd=tmp_path,
        env={"HOME": str(home), "PATH": os.environ.get("PATH", ""), "RA_CACHE": str(tmp_path / "cache")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "docs:database.md#connection-pool" in done.stdout


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories: run as a user")
def test_a_read_only_cache_serves_a_pinned_artifact_it_holds_and_says_what_to_do_when_empty(
    served: tuple[str, str], home: Path, tmp_path: Path
) -> None:
    url, digest = served
    filled, empty = tmp_path / "filled", tmp_path / "empty"
    pinned = f"{url}#sha256={digest}"
    assert rq(tmp_path, home, filled, "--artifacts", pinned, "ls", "trees").code == 0
    empty.mkdir()
    for directory in (filled, empty):
        for path in [directory, *directory.rglob("*")]:
            path.chmod(path.stat().st_mode & ~0o222)
    try:
        assert rq(tmp_path, home, filled, "--artifacts", pinned, "ls", "trees").out == "docs\n"
        run = rq(tmp_path, home, empty, "--artifacts", pinned, "ls", "trees")
        assert run.code == 2
        assert run.err == (
            f"ra-query: error: cannot unpack {url} into the cache {empty} (read-only) — set RA_CACHE to a "
            "writable directory, or fill the cache where it is writable and pin the digest (--sha256)\n"
        )
    finally:
        for directory in (filled, empty):
            for path in [directory, *directory.rglob("*")]:
                path.chmod(path.stat().st_mode | 0o200)

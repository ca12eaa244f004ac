"""`ra update --cluster` (issue 14, item 4): parsing and shard builds on Dask workers.

One 2-worker LocalCluster serves the module (through its `tcp://` address, as a scheduler a
team runs would); one test starts its own through `local:2`. A cluster build must write what a
plain build writes: the same chunk tables, the same search results.
"""

from __future__ import annotations

import dataclasses
import errno
import fcntl
import logging
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import orjson
import pyarrow.parquet as pq
import pytest

import ra_build.pipeline.cluster
from ra_build.config.load import load_config
from ra_build.pipeline.chunk_stage import ChunkSettings, parse_file, unreadable
from ra_build.pipeline.cluster import ClusterSpec, Engine, cluster_build, parse_spec, read_and_parse
from ra_build.pipeline.run import BuildReport, run_build
from ra_query.artifacts.store import open_store
from ra_query.errors import ClusterError, InputError
from tests.conftest import BIN, CORPUS, find, run_cmd

QUERIES = ["testing", "errors logging", "pool", "word7 topic3", "shared body", "the", "zeppelin"]
EXTRA_HINT = "pip install 'ra-kb[dask]'"


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The address of a 2-worker LocalCluster whose scheduler never retries a lost task.

    Its workers keep their scratch space and temp directories (a killed worker leaves its
    shard directory behind) under pytest's temp directory, not the machine's /tmp."""
    import dask.config
    from distributed import LocalCluster

    scratch = tmp_path_factory.mktemp("dask")
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            memory_limit=0,
            dashboard_address=":0",  # any free port, not 8787 (machine-wide state)
            silence_logs=logging.CRITICAL,
            local_directory=str(scratch),
            env={"TMPDIR": str(scratch)},
        )
    with cluster:
        yield cluster.scheduler_address


def corpus(base: Path) -> Path:
    """The fixture corpus, 60 pages spread over every chunk-table part, and files a build skips
    or reports: binary, too large, a byte-order mark, bad UTF-8, a link out of the tree."""
    kb = base / "kb"
    shutil.copytree(CORPUS, kb)
    (kb / ".ra.toml").write_text(
        'root = true\n\n[settings]\nmax_file_size = 20000\nindex_shards = 3\n\n[tree.docs]\npath = "."\n'
        'include = ["**/*.md", "**/*.txt", "**/*.bin"]\n',
        encoding="utf-8",
    )
    pages = kb / "pages"
    pages.mkdir()
    for i in range(60):
        sections = "".join(
            f"## Part {j}\n\nword{i} topic{j} shared body text of part {j}.\n\n" for j in range(4)
        )
        (pages / f"page{i:03d}.md").write_text(f"# Page {i}\n\nIntro {i}.\n\n{sections}", encoding="utf-8")
    (kb / "odd").mkdir()
    (kb / "odd" / "blob.bin").write_bytes(b"\0\1\2" * 100)
    (kb / "odd" / "huge.md").write_text("# Huge\n\n" + "word " * 10_000, encoding="utf-8")
    (kb / "odd" / "bom.md").write_bytes(b"\xef\xbb\xbf# Marked\n\nA byte order mark first.\n")
    (kb / "odd" / "latin1.md").write_bytes(b"# Caf\xe9\n\nNot UTF-8 at all.\n")
    (base / "secret.md").write_text("# Secret\n\nOutside the tree.\n", encoding="utf-8")
    (kb / "odd" / "escape.md").symlink_to(base / "secret.md")
    for name in ("std::vector.md", "notes.md#draft.md", "100%.md"):  # fsspec and ids read these
        (kb / "odd" / name).write_text(f"# {name}\n\nAn odd name: {name}.\n", encoding="utf-8")
    return kb


def plain(kb: Path, home: Path, artifacts: Path) -> BuildReport:
    report = run_build(load_config(kb, home), artifacts)
    assert report.failures == []
    return report


def on_cluster(kb: Path, home: Path, artifacts: Path, spec: str) -> BuildReport:
    report = cluster_build(load_config(kb, home), artifacts, spec)
    assert report.failures == []
    return report


def same_tables(one: Path, other: Path) -> None:
    """Every chunk-table part and every file table equal, row for row."""
    parts = sorted(p.relative_to(one) for p in one.glob("chunks/*/part-*.parquet"))
    assert parts and parts == sorted(p.relative_to(other) for p in other.glob("chunks/*/part-*.parquet"))
    tables = [Path("files.parquet"), *(p.relative_to(one) for p in one.glob("chunks/*.files.parquet"))]
    for rel in [*parts, *tables]:
        assert pq.read_table(one / rel).equals(pq.read_table(other / rel)), rel


def same_search(one: Path, other: Path) -> None:
    for query in QUERIES:
        mine = [(h.id, h.score) for h in find(one, query, limit=20).hits]
        theirs = [(h.id, h.score) for h in find(other, query, limit=20).hits]
        assert [i for i, _ in mine] == [i for i, _ in theirs], query
        assert [s for _, s in mine] == pytest.approx([s for _, s in theirs], rel=1e-6), query


def manifest(artifacts: Path) -> dict[str, Any]:
    return orjson.loads((artifacts / "manifest.json").read_bytes())


def build_both(base: Path, scheduler: str) -> tuple[Path, Path, Path, Path]:
    """(kb, home, plain artifacts, cluster artifacts), both built from the same sources."""
    home = base / "home"
    home.mkdir()
    kb = corpus(base)
    plain(kb, home, base / "plain")
    on_cluster(kb, home, base / "cluster", scheduler)
    return kb, home, base / "plain", base / "cluster"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, scheduler: str) -> tuple[Path, Path, Path, Path]:
    """Both builds, for the tests that change nothing."""
    return build_both(tmp_path_factory.mktemp("built"), scheduler)


def test_a_cluster_build_writes_the_chunk_tables_a_plain_build_writes(
    built: tuple[Path, Path, Path, Path],
) -> None:
    _, _, one, other = built
    same_tables(one, other)
    assert manifest(one)["trees"] == manifest(other)["trees"]


def test_a_cluster_build_answers_searches_as_a_plain_build_does(built: tuple[Path, Path, Path, Path]) -> None:
    _, _, one, other = built
    same_search(one, other)
    assert open_store(other).index.searcher().num_docs == open_store(one).index.searcher().num_docs


def test_the_manifest_lists_every_shard_with_its_segments_and_documents(
    built: tuple[Path, Path, Path, Path],
) -> None:
    _, _, one, other = built
    for artifacts in (one, other):
        shards = manifest(artifacts)["index"]["shards"]
        assert isinstance(shards, list) and [s["shard"] for s in shards] == [0, 1, 2]
        assert sum(s["chunks"] for s in shards) == open_store(artifacts).index.searcher().num_docs
        published = {
            s["segment_id"]
            for s in orjson.loads((artifacts / "index" / "meta.json").read_bytes())["segments"]
        }
        assert {seg for s in shards for seg in s["segments"]} == published


def test_a_cluster_build_after_an_edit_parses_only_what_changed_and_still_matches(
    tmp_path: Path, scheduler: str
) -> None:
    kb, home, one, other = build_both(tmp_path, scheduler)
    (kb / "guides" / "testing.md").write_text("# Testing\n\nAll new words: zeppelin.\n", encoding="utf-8")
    (kb / "pages" / "page007.md").unlink()
    (kb / "pages" / "new.md").write_text("# New\n\nA zeppelin page.\n", encoding="utf-8")
    report = on_cluster(kb, home, other, scheduler)
    assert sorted(report.results["chunk:docs"]["parsed"]) == ["guides/testing.md", "pages/new.md"]
    assert "pages/page007.md" in report.results["chunk:docs"]["removed"]
    index = report.results["index"]
    assert index["added_docs"] == 2 and index["removed_docs"] == 1 and not index["rebuilt"]
    plain(kb, home, one)
    same_tables(one, other)
    same_search(one, other)


def test_a_plain_update_after_a_cluster_build_finds_everything_up_to_date(
    built: tuple[Path, Path, Path, Path],
) -> None:
    kb, home, _, other = built
    report = plain(kb, home, other)
    assert report.executed == ["discover:docs"]
    assert sorted(report.up_to_date) == ["chunk:docs", "index", "manifest"]


def test_a_cluster_build_with_nothing_changed_keeps_the_generation(
    built: tuple[Path, Path, Path, Path], scheduler: str
) -> None:
    kb, home, _, other = built
    generation = manifest(other)["generation"]
    report = on_cluster(kb, home, other, scheduler)
    assert report.executed == ["discover:docs"]
    assert manifest(other)["generation"] == generation


def test_a_file_touched_but_unchanged_is_parsed_on_the_cluster_and_keeps_the_generation(
    built: tuple[Path, Path, Path, Path], scheduler: str
) -> None:
    kb, home, _, other = built
    generation = manifest(other)["generation"]
    touched = kb / "guides" / "testing.md"
    os.utime(touched, ns=(touched.stat().st_atime_ns, touched.stat().st_mtime_ns + 10**9))
    report = on_cluster(kb, home, other, scheduler)
    assert "chunk:docs" in report.executed and report.results["chunk:docs"]["reused"] > 0
    assert report.results["index"]["shards_written"] == []
    assert manifest(other)["generation"] == generation


# ---- what a worker does -------------------------------------------------------------------------


SETTINGS = ChunkSettings(max_file_size=2000, max_chunk_size=8000)


def test_a_worker_reads_through_any_fsspec_file_system_and_chunks_as_a_plain_build(tmp_path: Path) -> None:
    import fsspec

    data = (CORPUS / "guides" / "errors.md").read_bytes()
    (tmp_path / "guides").mkdir()
    (tmp_path / "guides" / "errors.md").write_bytes(data)
    with fsspec.open("memory://ra-test/kb/guides/errors.md", "wb") as fh:
        fh.write(data)
    local = parse_file("docs", str(tmp_path), "guides/errors.md", SETTINGS)
    remote = read_and_parse(
        "docs", "memory://ra-test/kb", "guides/errors.md", SETTINGS, "memory://ra-test/kb"
    )
    assert local.doc is not None and remote.doc == local.doc
    assert remote.row == dataclasses.replace(local.row, mtime_ns=remote.row.mtime_ns)
    assert remote.row.mtime_ns > 0


def test_a_worker_skips_a_remote_file_over_the_size_limit_and_reports_a_missing_one(tmp_path: Path) -> None:
    import fsspec

    with fsspec.open("memory://ra-test/big/huge.md", "wb") as fh:
        fh.write(b"# Huge\n\n" + b"word " * 1000)
    huge = read_and_parse("docs", "memory://ra-test/big", "huge.md", SETTINGS, "memory://ra-test/big")
    assert (huge.row.status, huge.row.error) == ("skipped", "larger than max_file_size (5,008 > 2,000 bytes)")
    gone = read_and_parse("docs", "memory://ra-test/big", "gone.md", SETTINGS, "memory://ra-test/big")
    assert gone.row.status == "error" and gone.doc is None
    assert gone.row.error is not None and gone.row.error.startswith("cannot read: ")


def test_workers_that_can_read_none_of_the_files_this_machine_sees_fail_the_build(tmp_path: Path) -> None:
    """They do not see the sources (no shared mount): an error, not a tree of unreadable files."""
    (tmp_path / "a.md").write_text("# A\n", encoding="utf-8")
    lost = FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT))
    rows = [unreadable("docs", "a.md", 0, 0, lost).row, unreadable("docs", "b.md", 0, 0, lost).row]
    engine = Engine(cast(Any, None), "tcp://elsewhere:8786")
    with pytest.raises(
        ClusterError, match=r"^the workers of tcp://elsewhere:8786 cannot read tree docs's files at "
    ):
        engine.check_reachable("docs", str(tmp_path), rows)
    engine.check_reachable(
        "docs", str(tmp_path), [rows[1], parse_file("docs", str(tmp_path), "a.md", SETTINGS).row]
    )


# ---- the command line ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "parsed"),
    [
        ("local:2", ClusterSpec("local:2", workers=2)),
        ("tcp://127.0.0.1:8786", ClusterSpec("tcp://127.0.0.1:8786", address="tcp://127.0.0.1:8786")),
        (
            "tcp://scheduler.internal:8786",
            ClusterSpec("tcp://scheduler.internal:8786", address="tcp://scheduler.internal:8786"),
        ),
    ],
)
def test_a_cluster_spec_names_local_workers_or_a_scheduler(spec: str, parsed: ClusterSpec) -> None:
    assert parse_spec(spec) == parsed


@pytest.mark.parametrize(
    "spec",
    [
        "local:0",
        "local:x",
        "local:",
        "local:2000",
        "tcp://host",
        "udp://host:1",
        "tcp://host:99999",
        "host:8786",
        "",
    ],
)
def test_a_bad_cluster_spec_is_an_input_error_that_shows_both_forms(spec: str) -> None:
    with pytest.raises(
        InputError, match=r"use local:N \(N worker processes on this machine\) or tcp://HOST:PORT"
    ):
        parse_spec(spec)


def test_ra_update_with_a_bad_cluster_spec_is_one_line_with_exit_2(tmp_path: Path, home: Path) -> None:
    kb = tmp_path / "kb"
    shutil.copytree(CORPUS, kb)
    run = run_cmd("ra", "update", "--cluster", "local:many", cwd=kb, home=home)
    assert run.code == 2 and run.out == ""
    assert run.err == (
        "ra: error: --cluster 'local:many': N must be a whole number from 1 to 1024 — use local:N "
        "(N worker processes on this machine) or tcp://HOST:PORT (a running Dask scheduler)\n"
    )
    assert not (kb / ".ra").exists()


def without_dask(*argv: str) -> str:
    """Python code that runs `ra ARGV` with Dask, distributed and fsspec made unimportable."""
    return (
        "import sys\n"
        "for name in ('dask', 'distributed', 'fsspec'):\n"
        "    sys.modules[name] = None\n"
        f"sys.argv = ['ra', *{list(argv)!r}]\n"
        "from ra_build.cli.entry import main\n"
        "main()\n"
    )


def test_ra_update_cluster_without_the_extra_names_the_install_command(tmp_path: Path, home: Path) -> None:
    kb = tmp_path / "kb"
    shutil.copytree(CORPUS, kb)
    env = {**os.environ, "HOME": str(home)}
    proc = subprocess.run(
        [sys.executable, "-c", without_dask("update", "--cluster", "local:2")],
        cwd=kb, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"ra: error: ra update --cluster needs Dask — install it with: {EXTRA_HINT}\n"
    assert not (kb / ".ra" / "manifest.json").exists()


def test_a_plain_update_and_doit_import_no_dask(tmp_path: Path, home: Path) -> None:
    """Not even with Dask installed (as here): `-X importtime` lists every module imported."""
    kb = tmp_path / "kb"
    shutil.copytree(CORPUS, kb)
    (kb / "dodo.py").write_text(
        "from pathlib import Path\n\nfrom ra_build.config.load import load_config\nfrom ra_build.pipeline.graph import make_tasks\n\n"
        "_HERE = Path(__file__).resolve().parent\n"
        "globals().update(make_tasks(load_config(_HERE, Path.home()), _HERE / 'doit-artifacts'))\n",
        encoding="utf-8",
    )
    env = {**os.environ, "HOME": str(home)}
    for argv in ([str(BIN / "ra"), "update"], [str(BIN / "doit")]):
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", *argv], cwd=kb, env=env, capture_output=True, text=True,
            timeout=120, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        imported = {
            line.rsplit("|", 1)[-1].strip()
            for line in proc.stderr.splitlines()
            if line.startswith("import time:")
        }
        assert "ra_build.pipeline.graph" in imported and "tantivy" in imported  # it did build
        assert {m.split(".")[0] for m in imported} & {"dask", "distributed", "fsspec", "ra_build"} == {
            "ra_build"
        }
        assert "ra_build.pipeline.cluster" not in imported
    assert (kb / ".ra" / "manifest.json").exists() and (kb / "doit-artifacts" / "manifest.json").exists()


@pytest.mark.slow
def test_ra_update_on_a_local_cluster_builds_what_ra_update_builds(tmp_path: Path, home: Path) -> None:
    kb = corpus(tmp_path)
    run = run_cmd("ra", "update", "--cluster", "local:2", cwd=kb, home=home)
    assert run.code == 0, run.err
    assert run.out.startswith("68 files, ") and run.out.rstrip().endswith(str(kb / ".ra"))
    plain(kb, home, tmp_path / "plain")
    same_tables(tmp_path / "plain", kb / ".ra")
    same_search(tmp_path / "plain", kb / ".ra")


def test_a_local_cluster_starts_while_another_program_holds_dasks_dashboard_port() -> None:
    import socket

    holder = socket.socket()
    try:
        holder.bind(("0.0.0.0", 8787))  # Dask's default: its scheduler would warn, or fail, there
        holder.listen()
    except OSError:
        pass  # another program holds it already: the case itself
    try:
        with ra_build.pipeline.cluster.connect(parse_spec("local:1")):
            pass
    finally:
        holder.close()


def test_a_local_cluster_that_cannot_start_is_a_cluster_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import distributed

    def refuse(**options: object) -> object:
        raise RuntimeError("Cluster failed to start: Nanny failed to start worker process")

    monkeypatch.setattr(distributed, "LocalCluster", refuse)
    with (
        pytest.raises(
            ClusterError, match=r"^cannot start 3 local Dask workers \(RuntimeError: Cluster failed to start"
        ),
        ra_build.pipeline.cluster.connect(parse_spec("local:3")),
    ):
        pass


def test_an_unreachable_scheduler_is_a_cluster_error(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ra_build.pipeline.cluster, "CONNECT_SECONDS", 1)  # Dask retries until then
    kb = tmp_path / "kb"
    shutil.copytree(CORPUS, kb)
    with pytest.raises(ClusterError, match=r"^cannot reach the Dask scheduler at tcp://127\.0\.0\.1:9 \("):
        cluster_build(load_config(kb, home), kb / ".ra", "tcp://127.0.0.1:9")
    assert not (kb / ".ra" / "manifest.json").exists()


# ---- a worker killed mid-build ----------------------------------------------------------------


def readable_chunks(artifacts: Path) -> int:
    return open_store(artifacts).index.searcher().num_docs


def shard_files(artifacts: Path) -> dict[str, int]:
    return {str(p.relative_to(artifacts)): p.stat().st_ino for p in artifacts.glob(".index-shards/**/*")}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("target", "stage"), [("parse_file", "parsing tree docs"), ("write_shard", "building the index shards")]
)
def test_a_worker_killed_mid_build_fails_it_in_one_line_and_the_previous_index_stays(
    tmp_path: Path, home: Path, scheduler: str, target: str, stage: str
) -> None:
    """One worker is made to hang in its first parse (or shard) task and is killed there; the
    scheduler (allowed-failures 0) fails the task, and the build stops before it publishes."""
    from distributed import Client, Event

    kb = corpus(tmp_path)
    plain(kb, home, kb / ".ra")
    whole = readable_chunks(kb / ".ra")
    shards = shard_files(kb / ".ra")
    reached = f"ra-test-{target}"

    def hang() -> int:
        import threading

        import ra_build.pipeline.cluster

        def stuck(*args: object, **kwargs: object) -> object:
            from distributed import Event

            Event(reached).set()
            threading.Event().wait()  # until the test kills this process
            raise AssertionError("unreachable")

        setattr(ra_build.pipeline.cluster, target, stuck)
        return os.getpid()

    with Client(scheduler) as client:
        victim = sorted(client.scheduler_info()["workers"])[0]
        pid = client.run(hang, workers=[victim])[victim]
        build = subprocess.Popen(
            [str(BIN / "ra"), "update", "--full", "--cluster", scheduler],
            cwd=kb, env={**os.environ, "HOME": str(home)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert Event(reached, client).wait(timeout=120), f"no task reached {target} on the worker"
        os.kill(pid, signal.SIGKILL)
        out, err = build.communicate(timeout=120)
        client.wait_for_workers(2, timeout=60)  # the nanny restarts it, for the tests after this one
    assert build.returncode == 2 and out == ""
    assert err.startswith(f"ra: error: the cluster {scheduler} failed while {stage} (KilledWorker")
    assert err.endswith(
        "the previous index is still readable; run ra update again (with or without --cluster)\n"
    )
    assert err.count("\n") == 1
    assert readable_chunks(kb / ".ra") == whole
    assert shard_files(kb / ".ra") == shards  # not one file of a shard changed, none staged
    assert run_cmd("ra-query", "search", "--list", "word7 topic3", cwd=kb, home=home).code == 0
    again = run_cmd("ra", "update", cwd=kb, home=home)
    assert again.code == 0, again.err
    assert readable_chunks(kb / ".ra") == whole


def test_ra_update_help_names_both_cluster_forms_and_the_extra(tmp_path: Path, home: Path) -> None:
    run = run_cmd("ra", "update", "--help", cwd=tmp_path, home=home)
    assert run.code == 0
    text = " ".join(run.out.replace("│", " ").split())
    assert "local:N (N worker processes here) or tcp://HOST:PORT (a running scheduler)" in text
    assert "Needs: pip install 'ra-kb[dask]'." in text


def test_a_busy_artifact_directory_fails_a_no_wait_cluster_build_before_any_cluster_starts(
    tmp_path: Path, home: Path
) -> None:
    kb = corpus(tmp_path)
    (kb / ".ra").mkdir()
    with open(kb / ".ra" / ".lock", "a+b") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", str(BIN / "ra"), "update", "--no-wait", "--cluster", "local:2"],
            cwd=kb, env={**os.environ, "HOME": str(home)}, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    assert proc.returncode == 3
    errors = [line for line in proc.stderr.splitlines() if not line.startswith("import time:")]
    assert errors == [
        f"ra: error: another ra update is writing {kb / '.ra'} — wait for it to finish "
        "(ra update without --no-wait waits)"
    ]
    assert "import time:" in proc.stderr and "distributed" not in proc.stderr  # no cluster was made

"""Shard writer processes: `python -m ra_build.pipeline.shard_workers PARENT_PID` writes shards.

The index stage hands its shard jobs to `run_jobs`, which starts one process per core, each
with its share of the jobs as JSON on stdin; the worker writes them one after the other and
answers with JSON on stdout: the chunks each job added, or the error that stopped it (with its
errno, so a full disk is reported as one, ra_build.artifacts.writable). A worker dies
with its parent (`worker_init`), so a killed build leaves no writer holding a shard's tantivy
lock.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import orjson

from ra_build.pipeline.shards import ShardJob, write_job
from ra_build.pipeline.workers import worker_init

_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # the directory holding ra_build/


def run_jobs(jobs: Sequence[ShardJob], *, parallel: bool = True) -> list[int]:
    """Run shard jobs, in parallel processes when there is more than one; chunks each added.

    The workers are fresh interpreters (`python -m ra_build.pipeline.shard_workers`), not forks:
    after the chunk stage this process holds hundreds of MB that a forked child would count as
    its own resident memory, and multiprocessing's spawn would re-run the caller's main script.
    A worker costs ~0.3 s of imports, so small jobs (`parallel=False`) run here, in turn.
    """
    workers = min(len(jobs), os.cpu_count() or 1)
    if workers < 2 or not parallel:
        return [write_job(job) for job in jobs]
    return run_in_workers(jobs, workers)


def run_in_workers(jobs: Sequence[ShardJob], workers: int) -> list[int]:
    """Run `jobs` on `workers` processes (job i on worker i % workers); chunks each added."""
    env = dict(os.environ)
    # this very ra_build, whatever put it on the parent's sys.path
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [_PACKAGE_ROOT, env.get("PYTHONPATH")]))
    shares = [list(jobs[w::workers]) for w in range(workers)]
    with contextlib.ExitStack() as stack:
        procs = []
        for share in shares:
            errors = stack.enter_context(tempfile.TemporaryFile())  # a file: no pipe to fill up
            proc = stack.enter_context(
                subprocess.Popen(
                    # -P: nothing from the working directory shadows a module of ra's
                    [sys.executable, "-P", "-m", "ra_build.pipeline.shard_workers", str(os.getpid())],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=errors,
                    env=env,
                )
            )
            assert proc.stdin is not None
            with contextlib.suppress(BrokenPipeError):  # died at start: its stderr says why
                proc.stdin.write(orjson.dumps(share))
                proc.stdin.close()
            procs.append((proc, errors))
        answers = [_answer(proc, errors) for proc, errors in procs]
    counts: dict[int, int] = {}
    for share, answer in zip(shares, answers, strict=True):
        if "error" in answer:
            if answer.get("errno"):
                raise OSError(answer["errno"], answer["error"], answer.get("filename"))
            if answer.get("type") == "ValueError":  # tantivy's word for a failed write
                raise ValueError(answer["error"])
            raise RuntimeError(f"a shard writer failed: {answer['error']}")
        counts.update((job.shard, n) for job, n in zip(share, answer["counts"], strict=True))
    return [counts[job.shard] for job in jobs]


def _answer(proc: subprocess.Popen[bytes], errors: IO[bytes]) -> dict[str, Any]:
    """What the worker printed, or its last line of stderr when it printed no answer."""
    assert proc.stdout is not None
    out = proc.stdout.read()
    code = proc.wait()
    try:
        return orjson.loads(out)
    except orjson.JSONDecodeError:
        errors.seek(0)
        lines = errors.read().decode("utf-8", "replace").strip().splitlines()
        return {"error": lines[-1] if lines else f"exit status {code}"}


def _job(raw: dict[str, Any]) -> ShardJob:
    parts = tuple((part, None if ids is None else tuple(ids)) for part, ids in raw["parts"])
    return ShardJob(
        raw["shard"], raw["directory"], raw["stemmer"], raw["fresh"], tuple(raw["deletes"]), parts
    )


def main() -> None:
    from ra_build.artifacts.tables import arrow_without_pandas

    worker_init(int(sys.argv[1]))
    arrow_without_pandas()
    jobs = [_job(raw) for raw in orjson.loads(sys.stdin.buffer.read())]
    try:
        answer: dict[str, Any] = {"counts": [write_job(job) for job in jobs]}
    except OSError as exc:
        answer = {"error": exc.strerror or str(exc), "errno": exc.errno, "filename": exc.filename}
    except ValueError as exc:  # tantivy reports a failed write so: the build probes the disk
        answer = {"error": str(exc), "type": "ValueError"}
    except Exception as exc:  # reported to the build, which names it in one line
        answer = {"error": f"{type(exc).__name__}: {exc}"}
    sys.stdout.buffer.write(orjson.dumps(answer))


if __name__ == "__main__":
    main()

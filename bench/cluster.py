"""Benchmark: `ra update --cluster local:N` against plain `ra update` on a real corpus.

    .venv/bin/python bench/cluster.py [--dir DIR | --tarball PATH] [--workers N] [--no-record]

Needs the `dask` extra (the dev group has it). The corpus is copied (``--dir``) or unpacked
(``--tarball``) into a temp directory, the one tree ``ps`` of a temp project; HOME is an empty
temp directory. It measures, each with the venv's real ``ra`` in a subprocess unless said
otherwise:

1. how long a ``local:N`` cluster takes to start and close (in this process);
2. a full plain build and a full ``--cluster local:N`` build, into two artifact directories;
3. that the two wrote equal chunk tables (``pyarrow.Table.equals``, every part and the file
   tables) and the same number of indexed chunks;
4. a one-file edit, then ``ra update`` on the plain artifacts and ``ra update --cluster`` on
   the cluster's.

The figures (and the load average around them: this machine is shared) are printed and
appended to bench/results/cluster.txt. A cluster build pays for moving rows and index files
between processes; on one machine it is not meant to be faster than the plain build.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DEFAULT_TARBALL, REPO, git_head, place_corpus, run_ra, write_project

sys.path.insert(0, str(REPO))

RESULTS = REPO / "bench" / "results" / "cluster.txt"


def startup_seconds(workers: int) -> tuple[float, float]:
    """(start, close) seconds of ra's own local cluster of `workers` processes."""
    from ra_build.pipeline.cluster import ClusterSpec, connect

    started = time.perf_counter()
    with connect(ClusterSpec(f"local:{workers}", workers=workers)) as client:
        client.wait_for_workers(workers)
        up = time.perf_counter() - started
        closing = time.perf_counter()
    return up, time.perf_counter() - closing


def same_tables(one: Path, other: Path) -> bool:
    import pyarrow.parquet as pq

    rels = sorted(p.relative_to(one) for p in one.glob("chunks/*/part-*.parquet"))
    rels += [Path("files.parquet"), *(p.relative_to(one) for p in one.glob("chunks/*.files.parquet"))]
    return all(pq.read_table(one / r).equals(pq.read_table(other / r)) for r in rels)


def indexed(artifacts: Path) -> int:
    from ra_query.artifacts.store import open_store

    return open_store(artifacts).index.searcher().num_docs


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--dir", type=Path, help="an unpacked corpus directory (copied, never touched)")
    source.add_argument("--tarball", type=Path, default=DEFAULT_TARBALL)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-record", action="store_true", help="do not append to bench/results/")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="ra-bench-cluster-") as tmp:
        base = Path(tmp)
        home = base / "home"
        home.mkdir()
        corpus = base / "corpus"
        place_corpus(corpus, args.tarball, copy_of=args.dir)
        project = write_project(base / "project", corpus)
        markdown = sorted(corpus.rglob("*.md"))
        files = len(markdown)
        spec = f"local:{args.workers}"

        load_before = os.getloadavg()[0]
        up, down = startup_seconds(args.workers)
        plain_full, plain_line = run_ra(project, home, "update", "--artifacts", str(base / "plain"))
        cluster_full, cluster_line = run_ra(
            project, home, "update", "--artifacts", str(base / "cluster"), "--cluster", spec
        )
        equal = same_tables(base / "plain", base / "cluster")
        chunks = (indexed(base / "plain"), indexed(base / "cluster"))
        with open(markdown[files // 2], "a", encoding="utf-8") as fh:
            fh.write("\nAn appended line for the benchmark.\n")
        plain_edit, _ = run_ra(project, home, "update", "--artifacts", str(base / "plain"))
        cluster_edit, edit_line = run_ra(
            project, home, "update", "--artifacts", str(base / "cluster"), "--cluster", spec
        )
        load_after = os.getloadavg()[0]

    line = (
        f"{dt.datetime.now(dt.UTC).isoformat(timespec='seconds')}  files={files} workers={args.workers} "
        f"start_s={up:.2f} close_s={down:.2f} "
        f"plain_full_s={plain_full:.2f} cluster_full_s={cluster_full:.2f} "
        f"plain_onefile_s={plain_edit:.2f} cluster_onefile_s={cluster_edit:.2f} tables_equal={equal} "
        f"chunks={chunks[0]}/{chunks[1]} load1_before={load_before:.2f} load1_after={load_after:.2f} "
        f'nproc={os.cpu_count()} git={git_head()} plain="{plain_line}" cluster="{cluster_line}" '
        f'cluster_onefile="{edit_line}"'
    )
    print(line)
    if not (equal and chunks[0] == chunks[1]):
        raise SystemExit("the cluster build differs from the plain build")
    if not args.no_record:
        with open(RESULTS, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")


if __name__ == "__main__":
    main()

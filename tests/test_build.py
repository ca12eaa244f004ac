"""The build task graph end to end on the fixture corpus: stages, incrementality, artifacts."""

from __future__ import annotations

from pathlib import Path

import orjson
import pandas as pd

from tests.conftest import build, find


def test_first_build_runs_every_stage(kb: Path, home: Path) -> None:
    report = build(kb, home)
    assert report.executed == ["discover:docs", "chunk:docs", "index", "manifest"]


def test_second_build_with_no_change_parses_nothing_and_keeps_the_generation(kb: Path, home: Path) -> None:
    build(kb, home)
    generation = orjson.loads((kb / ".ra" / "manifest.json").read_bytes())["generation"]
    report = build(kb, home)
    assert report.executed == ["discover:docs"]
    assert sorted(report.up_to_date) == ["chunk:docs", "index", "manifest"]
    assert orjson.loads((kb / ".ra" / "manifest.json").read_bytes())["generation"] == generation


def test_editing_one_file_reparses_only_that_file(kb: Path, home: Path) -> None:
    build(kb, home)
    (kb / "guides" / "testing.md").write_text("# Testing\n\nAll new words: zeppelin.\n", encoding="utf-8")
    report = build(kb, home)
    assert report.results["chunk:docs"]["parsed"] == ["guides/testing.md"]
    assert report.results["index"]["added_docs"] == 1
    assert [h.id for h in find(kb / ".ra", "zeppelin", limit=5).hits] == ["docs:guides/testing.md#testing"]
    assert find(kb / ".ra", "hypothesis", limit=5).hits == ()


def test_chunk_table_reads_with_pandas_and_has_every_chunk(kb: Path, home: Path) -> None:
    build(kb, home)
    frame = pd.read_parquet(kb / ".ra" / "chunks" / "docs")  # a directory of shards
    assert set(frame["path"]) == {"guides/errors.md", "guides/testing.md", "notes/pool.txt"}
    errors = frame[frame["path"] == "guides/errors.md"].sort_values("line_start")
    assert list(errors["id"]) == [
        "docs:guides/errors.md",
        "docs:guides/errors.md#error-handling",
        "docs:guides/errors.md#the-result-type",
        "docs:guides/errors.md#logging",
        "docs:guides/errors.md#log-levels",
    ]


def test_manifest_lists_counts_versions_and_checksums(kb: Path, home: Path) -> None:
    build(kb, home)
    manifest = orjson.loads((kb / ".ra" / "manifest.json").read_bytes())
    assert manifest["format_version"] == 1
    assert manifest["trees"]["docs"]["files"] == 3
    assert "index/meta.json" in manifest["files"]
    assert all(not Path(p).is_absolute() for p in manifest["files"])


def test_search_finds_a_heading_chunk_by_its_words(kb: Path, home: Path) -> None:
    build(kb, home)
    hits = find(kb / ".ra", "result type", limit=3).hits
    assert hits[0].id == "docs:guides/errors.md#the-result-type"
    assert hits[0].breadcrumb == ("Error Handling", "The Result Type")


def python_in(kb: Path, home: Path, code: str, *args: str) -> tuple[int, list[str], str]:
    """Run `code` in a fresh interpreter in `kb` (HOME `home`): exit code, stdout lines, stderr."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=kb, env={"HOME": str(home), "PATH": ""},
        capture_output=True, text=True,
    )  # fmt: skip
    return done.returncode, done.stdout.splitlines(), done.stderr


# runs `ra ARGS` through its console entry, then says how it exited
RA_MAIN = (
    "import sys\n"
    "from ra_build.cli.entry import main\n"
    "sys.argv = ['ra', *sys.argv[1:]]\n"
    "try:\n    main()\nexcept SystemExit as exc:\n    print('exit', exc.code)\n"
)


def test_a_build_never_imports_pandas_even_where_it_is_installed(kb: Path, home: Path) -> None:
    """pyarrow would import it (0.3-0.8 s) at the first array it builds from Python values."""
    probe = RA_MAIN + (
        "import pyarrow as pa\n"
        "pa.array(['after the build'])\n"
        "print('pandas imported' if 'pandas' in sys.modules else 'no pandas')\n"
    )
    code, out, err = python_in(kb, home, probe, "update")
    assert code == 0, err
    assert out[-2:] == ["exit 0", "no pandas"], err
    assert pd.__version__  # installed here: the dev group has it


def test_a_plain_ra_update_runs_without_typer_and_help_still_comes_from_it(kb: Path, home: Path) -> None:
    """typer (and the pydantic it imports) cost a no-change update a fifth of its time."""
    probe = RA_MAIN + "print('typer imported' if 'typer' in sys.modules else 'no typer')\n"

    def run(*args: str) -> list[str]:
        return python_in(kb, home, probe, *args)[1]

    first = run("update", "--artifacts", str(kb / ".ra"))
    assert first[-2:] == ["exit 0", "no typer"]
    assert first[-3].startswith("3 files, ") and first[-3].endswith(str(kb / ".ra"))  # the summary
    assert run("update", "--full", f"--artifacts={kb / '.ra'}")[-2:] == ["exit 0", "no typer"]
    helped = run("update", "--help")
    assert helped[-2:] == ["exit 0", "typer imported"] and any("--cluster" in line for line in helped)


def test_ra_build_as_a_library_leaves_pyarrows_pandas_integration_alone(kb: Path, home: Path) -> None:
    """A dodo.py or a notebook that imports ra_build and builds still converts pandas data."""
    probe = (
        "import pyarrow as pa\n"
        "from ra_build.config.load import load_config\n"
        "from ra_build.pipeline.run import run_build\n"
        "from pathlib import Path\n"
        "assert not run_build(load_config(Path.cwd(), Path.home()), Path('.ra')).failures\n"
        "import pandas as pd\n"  # only after the build: what pyarrow decided about pandas stays
        "print(pa.array(pd.Series([1, pd.NA], dtype='Int64')).null_count)\n"
    )
    code, out, err = python_in(kb, home, probe)
    assert code == 0, err
    assert out[-1] == "1"

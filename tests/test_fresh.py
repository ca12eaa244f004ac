"""The freshness fast path (issue 11): a no-change `ra search` proves "nothing changed" from the
build's records and never loads the build; any change still reaches the answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import tantivy

from ra_build.config.load import load_config
from ra_build.refresh.current import current_store
from tests.conftest import build, run_cmd

# what a search of a current index has no use for: the build and the command-line framework
# (a name stands for the module and everything below it)
NOT_IMPORTED = [
    "doit",
    "pyarrow",
    "numpy",
    "markdown_it",
    "typer",
    "click",
    "orjson",
    "ra_build.pipeline",
    "ra_build.document",
    "ra_build.artifacts",
    "ra_build.cli.app",
    "ra_build.config",  # the configuration is not even read: the stamp says it did not change
    "tomllib",
]


def _not_wanted(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in NOT_IMPORTED)


# `ra search` leaves by os._exit once its exit handlers ran (no teardown), so the modules are
# listed by one of them
IMPORTED_BY = """
import atexit, sys
atexit.register(lambda: print("MODULES", " ".join(sorted(sys.modules)), file=sys.stderr))
sys.argv = ["ra", "search", "--list", "connection pool"]
from ra_build.cli.entry import main
main()
"""


def modules_of_a_search(kb: Path, home: Path) -> tuple[int, set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", IMPORTED_BY],
        cwd=kb,
        env={**os.environ, "HOME": str(home)},
        capture_output=True,
        text=True,
        check=False,
    )
    line = next(line for line in done.stderr.splitlines() if line.startswith("MODULES "))
    return done.returncode, set(line.split()[1:])


def test_a_search_of_a_current_index_imports_neither_the_build_nor_typer(kb: Path, home: Path) -> None:
    build(kb, home)
    assert run_cmd("ra", "search", "--list", "connection pool", cwd=kb, home=home).code == 0  # stamps
    code, modules = modules_of_a_search(kb, home)
    assert code == 0
    assert sorted(m for m in modules if _not_wanted(m)) == []


def test_a_search_after_an_edit_runs_the_build_and_finds_the_edit(kb: Path, home: Path) -> None:
    build(kb, home)
    page = next(kb.rglob("*.md"))
    page.write_text(
        page.read_text(encoding="utf-8") + "\n## Quokka\n\nquokkaword appears now\n", encoding="utf-8"
    )
    _, modules = modules_of_a_search(kb, home)
    assert "ra_build.pipeline.graph" in modules  # changed: the build ran
    run = run_cmd("ra", "search", "--list", "quokkaword", cwd=kb, home=home)
    assert run.code == 0 and "quokka" in run.out.lower()


def test_a_new_file_is_found_by_the_next_search(kb: Path, home: Path) -> None:
    build(kb, home)
    (kb / "brand-new.md").write_text("# Wombat\n\nwombatword lives here\n", encoding="utf-8")
    run = run_cmd("ra", "search", "--list", "wombatword", cwd=kb, home=home)
    assert run.code == 0 and "brand-new.md" in run.out


def test_a_removed_file_is_gone_from_the_next_search(kb: Path, home: Path) -> None:
    (kb / "doomed.md").write_text("# Dodo\n\ndodoword lives here\n", encoding="utf-8")
    build(kb, home)
    (kb / "doomed.md").unlink()
    assert run_cmd("ra", "search", "--list", "dodoword", cwd=kb, home=home).code == 1


def test_a_changed_configuration_is_not_current(kb: Path, home: Path) -> None:
    build(kb, home)
    assert current_store(load_config(kb, home), kb / ".ra") is not None
    config_file = kb / ".ra.toml"
    config_file.write_text(config_file.read_text(encoding="utf-8") + '\n[search]\nstemmer = "french"\n')
    assert current_store(load_config(kb, home), kb / ".ra") is None


def test_an_index_whose_build_failed_after_discovery_is_not_current(kb: Path, home: Path) -> None:
    """A failed build rewrites the stat table and not the manifest: the stat table says nothing changed."""
    build(kb, home)
    stat_table = next((kb / ".ra" / "chunks").glob("*.stat"))
    later = time.time_ns() + 1_000_000_000
    os.utime(stat_table, ns=(later, later))
    assert current_store(load_config(kb, home), kb / ".ra") is None


def test_no_index_at_all_is_not_current(kb: Path, home: Path) -> None:
    assert current_store(load_config(kb, home), kb / ".ra") is None


def _schema_4() -> tantivy.Schema:
    """The index schema of SCHEMA_VERSION 4: the body, slug, breadcrumb, parent_id and symbol indexed."""
    from ra_query.artifacts.schema import ANALYZER, FILTER_FIELDS, INT_FIELDS

    builder = tantivy.SchemaBuilder()
    for name in ("id", "doc_id", "parent_id", "tree", "slug", "breadcrumb", "kind", "lang", "symbol"):
        builder.add_text_field(name, stored=True, tokenizer_name="raw", fast=name in FILTER_FIELDS)
    for name in ("text", "title", "tags", "path", "path_components", "body"):
        builder.add_text_field(
            name, stored=name in ("title", "tags", "path", "body"), tokenizer_name=ANALYZER
        )
    for name in INT_FIELDS:
        builder.add_integer_field(name, stored=True, indexed=name == "depth", fast=True)
    return builder.build()


def test_an_index_of_the_schema_before_is_rebuilt_by_the_next_search(
    kb: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ra_build.config import fingerprint
    from ra_build.pipeline import index_stage, manifest, shards
    from ra_query.artifacts.schema import SCHEMA_VERSION

    # one shard: its job runs in this process, where the build of schema 4 is patched in
    config = 'root = true\n[settings]\nindex_shards = 1\n[tree.docs]\npath = "."\n'
    (kb / ".ra.toml").write_text(config, encoding="utf-8")
    with monkeypatch.context() as patch:
        for module in (fingerprint, index_stage, manifest):
            patch.setattr(module, "SCHEMA_VERSION", 4)
        patch.setattr(shards, "build_schema", _schema_4)
        build(kb, home)
    old = tantivy.Index.open(str(kb / ".ra" / "index"))
    assert old.searcher().search(tantivy.Query.term_query(old.schema, "body", "pool")).count > 0

    run = run_cmd("ra", "search", "--list", "body:pool", cwd=kb, home=home)
    assert run.code == 0 and "pool" in run.out, run.err
    assert json.loads((kb / ".ra" / "manifest.json").read_bytes())["schema_version"] == SCHEMA_VERSION
    new = tantivy.Index.open(str(kb / ".ra" / "index"))
    with pytest.raises(ValueError, match="not indexed"):
        new.searcher().search(tantivy.Query.term_query(new.schema, "body", "pool"))


def test_ra_search_help_still_says_the_index_is_refreshed_first(kb: Path, home: Path) -> None:
    run = run_cmd("ra", "search", "--help", cwd=kb, home=home)
    assert run.code == 0 and "The index is refreshed first." in " ".join(run.out.split())


# ---- the configuration stamp -----------------------------------------------------------------------


def stamped(kb: Path, home: Path, monkeypatch: pytest.MonkeyPatch, cwd: Path | None = None) -> bool:
    """Whether a search from `cwd` (default: kb) would open the index without reading the config."""
    from ra_build.refresh.stamp import stamped_store

    monkeypatch.chdir(cwd or kb)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("RA_ARTIFACTS", raising=False)
    speculation = stamped_store(None, None)
    return speculation is not None and speculation.current()


@pytest.fixture
def searched(kb: Path, home: Path) -> Path:
    """A built kb that one `ra search` has found current (and stamped)."""
    build(kb, home)
    assert run_cmd("ra", "search", "--list", "connection pool", cwd=kb, home=home).code == 0
    return kb


def test_a_search_of_an_unchanged_project_needs_no_configuration_reading(
    searched: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert stamped(searched, home, monkeypatch)
    sub = next(p for p in searched.rglob("*") if p.is_dir() and ".ra" not in p.parts)
    assert stamped(searched, home, monkeypatch, cwd=sub)  # from a subdirectory: the same files


def test_an_edited_config_file_is_read_again(
    searched: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = searched / ".ra.toml"
    config.write_text(config.read_text(encoding="utf-8") + "\n# a comment\n", encoding="utf-8")
    assert not stamped(searched, home, monkeypatch)


def test_a_config_file_added_below_is_read(
    searched: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sub = next(p for p in searched.rglob("*") if p.is_dir() and ".ra" not in p.parts)
    (sub / ".ra.toml").write_text("[search]\ndefault_limit = 3\n", encoding="utf-8")
    assert not stamped(searched, home, monkeypatch, cwd=sub)


def test_a_new_global_config_file_is_read(
    searched: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (home / ".ra.toml").write_text("[settings]\ndefault_limit = 3\n", encoding="utf-8")
    assert not stamped(searched, home, monkeypatch)


def test_another_home_is_another_configuration(
    searched: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other-home"
    other.mkdir()
    assert not stamped(searched, other, monkeypatch)


def test_an_edited_source_file_is_not_stamped_current(
    searched: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = next(searched.rglob("*.md"))
    page.write_text(page.read_text(encoding="utf-8") + "\nmore\n", encoding="utf-8")
    assert not stamped(searched, home, monkeypatch)


def test_a_search_after_a_config_edit_uses_the_new_settings_and_so_does_the_next(
    searched: Path, home: Path
) -> None:
    """An edit of search settings alone leaves the index current: no build records them."""
    query = ("search", "--json", "pool OR fixtures OR logging")
    assert len(json.loads(run_cmd("ra", *query, cwd=searched, home=home).out)["queries"][0]["results"]) > 1
    config = searched / ".ra.toml"
    config.write_text(
        config.read_text(encoding="utf-8") + "\n[settings]\ndefault_limit = 1\n", encoding="utf-8"
    )
    for _ in range(2):  # the first reads the configuration; the second goes by the stamp
        run = run_cmd("ra", *query, cwd=searched, home=home)
        assert run.code == 0 and len(json.loads(run.out)["queries"][0]["results"]) == 1


def test_an_edit_of_search_settings_alone_reaches_the_manifest_for_ra_query_and_ra_mcp(
    searched: Path, home: Path
) -> None:
    config = searched / ".ra.toml"
    config.write_text(
        config.read_text(encoding="utf-8") + "\n[settings]\ndefault_limit = 1\n", encoding="utf-8"
    )
    assert current_store(load_config(searched, home), searched / ".ra") is None  # the manifest says 5
    assert run_cmd("ra", "search", "--list", "pool", cwd=searched, home=home).code == 0
    manifest = json.loads((searched / ".ra" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["search"]["limit"] == 1
    assert current_store(load_config(searched, home), searched / ".ra") is not None


def test_the_ra_entry_point_imports_no_typing_before_it_forks_the_stale_count() -> None:
    # typing (re, enum, collections) costs ~10 ms: the stale count's walk is forked before it,
    # as `ra-query` forks its own, so a no-change `ra search` does not wait that much longer
    probe = "import sys, ra_build.cli.entry; print(sorted(m for m in ('typing', 're', 'enum') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"

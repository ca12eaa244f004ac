"""ra status, ra ls and ra check: what they report about trees, sources and the index."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ra_build.artifacts.layout import Layout
from ra_build.cli.reports import check, freshness, ls_lines, status
from ra_build.config.load import load_config
from ra_build.pipeline.run import run_build
from tests.conftest import Run


def test_index_is_missing_before_the_first_build(kb: Path, home: Path) -> None:
    assert freshness(load_config(kb, home), Layout(kb / ".ra")).describe() == "missing"


def test_index_is_current_after_a_build(kb: Path, home: Path) -> None:
    config = load_config(kb, home)
    run_build(config, kb / ".ra")
    assert freshness(config, Layout(kb / ".ra")).describe() == "current"


def test_index_is_stale_with_the_number_of_changed_files(kb: Path, home: Path) -> None:
    config = load_config(kb, home)
    run_build(config, kb / ".ra")
    (kb / "new.md").write_text("# New\n", encoding="utf-8")
    (kb / "notes" / "pool.txt").unlink()
    assert freshness(config, Layout(kb / ".ra")).describe() == "stale (2 files changed)"


def test_index_reports_config_changed_when_the_stemmer_changes(kb: Path, home: Path) -> None:
    run_build(load_config(kb, home), kb / ".ra")
    (kb / ".ra.toml").write_text(
        'root = true\n[search]\nstemmer = "german"\n[tree.docs]\npath = "."\n', encoding="utf-8"
    )
    assert freshness(load_config(kb, home), Layout(kb / ".ra")).describe() == "config changed"


def test_status_counts_files_and_chunks_per_tree(kb: Path, home: Path) -> None:
    config = load_config(kb, home)
    run_build(config, kb / ".ra")
    st = status(config, kb / ".ra")
    (tree,) = st.trees
    assert (tree.name, tree.scope, tree.files, tree.chunks) == ("docs", "local", 3, 10)
    assert st.artifacts_bytes > 0 and st.built_at is not None


def test_ls_docs_lists_document_ids_and_chunks_lists_every_chunk(kb: Path, home: Path) -> None:
    config = load_config(kb, home)
    run_build(config, kb / ".ra")
    assert ls_lines(config, kb / ".ra", "docs", False) == [
        "docs:guides/errors.md",
        "docs:guides/testing.md",
        "docs:notes/pool.txt",
    ]
    assert len(ls_lines(config, kb / ".ra", "chunks", False)) == 10
    assert ls_lines(config, kb / ".ra", "chunks", True)[2].startswith(
        "docs:guides/errors.md#the-result-type\tL10-12\t"
    )


def test_check_warns_about_bad_files_and_a_stale_index(kb: Path, home: Path) -> None:
    config = load_config(kb, home)
    (kb / "binary.md").write_bytes(b"\0\1\2")
    run_build(config, kb / ".ra")
    (kb / "later.md").write_text("# Later\n", encoding="utf-8")
    findings = [f.render() for f in check(config, kb / ".ra")]
    assert f"ra: warning: {kb / 'binary.md'}: binary file" in findings
    assert "ra: warning: index: stale (1 file changed) — run: ra update" in findings


def test_check_warns_when_include_patterns_match_nothing(tmp_path: Path, home: Path) -> None:
    (tmp_path / ".ra.toml").write_text(
        'root = true\n[tree.t]\npath = "."\ninclude = ["**/*.rst"]\n', encoding="utf-8"
    )
    findings = [f.render() for f in check(load_config(tmp_path, home), tmp_path / ".ra")]
    assert any("match no file" in f for f in findings)


def test_ra_check_exits_0_when_all_is_well_and_1_on_warnings(ra: Callable[..., Run], kb: Path) -> None:
    assert ra("update", cwd=kb).code == 0
    ok = ra("check", cwd=kb)
    assert (ok.code, ok.out) == (0, "ok: configuration, sources and index are fine\n")
    (kb / "new.md").write_text("# New\n", encoding="utf-8")
    assert ra("check", cwd=kb).code == 1


def test_ra_check_exits_2_on_a_configuration_error(ra: Callable[..., Run], tmp_path: Path) -> None:
    (tmp_path / ".ra.toml").write_text("[tree.x]\npath = 3\n", encoding="utf-8")
    assert ra("check").code == 2


def test_ra_status_prints_trees_and_index_state(ra: Callable[..., Run], kb: Path) -> None:
    ra("update", cwd=kb)
    out = ra("status", cwd=kb).out
    assert "docs (local)" in out and "3 files, 10 chunks" in out and "Index: current" in out


def test_check_warns_about_chunks_over_max_chunk_size(tmp_path: Path, home: Path) -> None:
    (tmp_path / ".ra.toml").write_text(
        'root = true\n[settings]\nmax_chunk_size = 100\n[tree.t]\npath = "."\n', encoding="utf-8"
    )
    (tmp_path / "big.md").write_text("# Big\n\n" + "word " * 50 + "\n", encoding="utf-8")
    config = load_config(tmp_path, home)
    run_build(config, tmp_path / ".ra")
    findings = [f.render() for f in check(config, tmp_path / ".ra")]
    assert (
        f"ra: warning: {tmp_path / 'big.md'}: chunk t:big.md#big is 249 characters (max_chunk_size 100)"
        in findings
    )


def test_artifacts_go_where_ra_artifacts_or_the_flag_says(
    ra: Callable[..., Run], kb: Path, tmp_path: Path
) -> None:
    env_dir, flag_dir = tmp_path / "from-env", tmp_path / "from-flag"
    assert ra("update", cwd=kb, env={"RA_ARTIFACTS": str(env_dir)}).code == 0
    assert ra("update", "--artifacts", str(flag_dir), cwd=kb, env={"RA_ARTIFACTS": str(env_dir)}).code == 0
    assert (env_dir / "manifest.json").exists() and (flag_dir / "manifest.json").exists()
    assert not (kb / ".ra").exists()


def test_ls_keeps_the_ids_that_start_with_a_prefix(ra: Callable[..., Run], kb: Path) -> None:
    assert ra("update", cwd=kb).code == 0
    everything = ra("ls", "chunks", cwd=kb).out.split()
    prefix = everything[0].partition("#")[0]
    run = ra("ls", "chunks", prefix, cwd=kb)
    assert run.code == 0 and run.out.split() == [i for i in everything if i.startswith(prefix)]
    nothing = ra("ls", "docs", "nosuchtree:", cwd=kb)
    assert (nothing.code, nothing.out) == (1, "")  # nothing matched: exit 1, as ra-query ls says it


def test_ls_into_a_pipe_that_closes_early_exits_0(kb: Path, home: Path) -> None:
    import subprocess

    from tests.conftest import BIN

    # 6,000 ids: far more than a pipe holds, so `ra` writes on after `head` has gone
    (kb / "many.md").write_text("".join(f"## Section {i}\n\ntext\n\n" for i in range(6000)), encoding="utf-8")
    assert (
        subprocess.run([str(BIN / "ra"), "update"], cwd=kb, capture_output=True, check=False).returncode == 0
    )
    pipeline = subprocess.run(
        f"'{BIN / 'ra'}' ls chunks | head -1; exit ${{PIPESTATUS[0]}}",
        shell=True,
        executable="/bin/bash",
        cwd=kb,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (pipeline.returncode, pipeline.stderr) == (0, "")


def test_status_and_check_count_the_directories_not_walked(ra: Callable[..., Run], kb: Path) -> None:
    for hidden in (".git", ".github", "build"):
        (kb / hidden).mkdir(exist_ok=True)
        (kb / hidden / "x.md").write_text("# Hidden\n", encoding="utf-8")
    assert ra("update", cwd=kb).code == 0
    assert "3 directories not walked (dot, default excludes)" in ra("status", cwd=kb).out
    check = ra("check", cwd=kb)
    assert "ra: note: tree docs: 3 directories not walked (.git, .github, build)" in check.out
    assert check.code == 0  # a note sets no exit code


def test_a_build_stopped_after_its_discovery_leaves_the_index_stale_with_what_changed_since_the_last_one(
    kb: Path, home: Path
) -> None:
    import os

    from ra_build.pipeline.discover import discover_stage

    config = load_config(kb, home)
    run_build(config, kb / ".ra")
    manifest = kb / ".ra" / "manifest.json"
    then = manifest.stat().st_mtime_ns - 10**9  # the next stat table is newer on any clock
    os.utime(manifest, ns=(then, then))
    (kb / "later.md").write_text("# Later\n", encoding="utf-8")
    discover_stage(config.trees["docs"], Layout(kb / ".ra"))  # the build stops here
    assert freshness(config, Layout(kb / ".ra")).describe() == "stale (1 file changed)"


def test_status_as_json_gives_the_index_state_and_the_changed_count(
    kb: Path, home: Path, ra: Callable[..., Run]
) -> None:
    import json

    build = ra("update", cwd=kb)
    assert build.code == 0
    (kb / "later.md").write_text("# Later\n", encoding="utf-8")
    payload = json.loads(ra("status", "--json", cwd=kb).out)
    assert payload["index"] == {"state": "stale", "changed": 1}


def test_a_tree_whose_folder_is_gone_counts_its_own_files_and_no_other_trees(
    tmp_path: Path, home: Path
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "one.md").write_text("# One\n", encoding="utf-8")
    for name in ("x", "y", "z"):
        (tmp_path / "b" / f"{name}.md").write_text(f"# {name}\n", encoding="utf-8")
    (tmp_path / ".ra.toml").write_text(
        'root = true\n[tree.a]\npath = "a"\n[tree.b]\npath = "b"\n', encoding="utf-8"
    )
    run_build(load_config(tmp_path, home), tmp_path / ".ra")
    (tmp_path / "a").rename(tmp_path / "a-moved")
    config = load_config(tmp_path, home, require_paths=False)
    assert freshness(config, Layout(tmp_path / ".ra")).describe() == "stale (1 file changed)"

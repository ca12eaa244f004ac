"""Docs in many languages (issue 33): each page knows its natural language, Chinese, Japanese and
Korean text is searchable without spaces, the reader's language is shown first with the other
translations folded under it, and tldr's mnemonic brackets (`E[x]tract`) do not split words."""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import Run, run_cmd

TAR = {
    "pages/common/tar.md": "# tar\n\n> Archiving utility.\n\n- E[x]tract a (compressed) archive [f]ile into the "
    "current directory:\n\n`tar xf path/to/source.tar`\n",
    "pages.ja/common/tar.md": "# tar\n\n> アーカイブの為のユーティリティー。\n\n- アーカイブファイルをカレントディレクトリに"
    "展開する:\n\n`tar xf path/to/source.tar`\n",
    "pages.zh/common/tar.md": "# tar\n\n> 归档工具。\n\n- 将压缩的归档文件解压到当前目录:\n\n`tar xf path/to/source.tar`\n",
    "pages.de/common/tar.md": "# tar\n\n> Archivierungswerkzeug.\n\n- Entpacke ein Archiv in das aktuelle "
    "Verzeichnis:\n\n`tar xf path/to/source.tar`\n",
    "pages/common/ls.md": "# ls\n\n> List directory contents.\n\n- List all files, including hidden files:\n\n"
    "`ls -a`\n",
    "pages.ja/common/ls.md": "# ls\n\n> ディレクトリの内容を一覧表示する。\n\n- 隠しファイルを含むすべてのファイルを一覧"
    "表示する:\n\n`ls -a`\n",
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A tldr-like tree of English, Japanese and Chinese pages, built once (no test changes it)."""
    root = tmp_path_factory.mktemp("locales") / "project"
    home = root.parent / "home"
    home.mkdir()
    for relative, text in TAR.items():
        (root / "kb" / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / "kb" / relative).write_text(text, encoding="utf-8")
    (root / ".ra.toml").write_text('root = true\n\n[tree.tldr]\npath = "kb"\n', encoding="utf-8")
    assert run_cmd("ra", "update", cwd=root, home=home).code == 0
    return root, home


def search(built: tuple[Path, Path], *args: str) -> Run:
    return run_cmd("ra", "search", *args, cwd=built[0], home=built[1])


def results(run: Run) -> list[dict[str, object]]:
    assert run.code == 0, run.err
    return json.loads(run.out)["queries"][0]["results"]


def kb_search(tmp_path: Path, pages: dict[str, str], query: str, settings: str = "") -> Run:
    """`ra search --json QUERY` in a fresh project whose tree `kb` holds `pages` (`settings`: the
    `[settings]` lines)."""
    for relative, text in pages.items():
        (tmp_path / "kb" / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "kb" / relative).write_text(text, encoding="utf-8")
    head = f"root = true\n[settings]\n{settings}\n" if settings else "root = true\n"
    (tmp_path / ".ra.toml").write_text(f'{head}[tree.kb]\npath = "kb"\n', encoding="utf-8")
    (tmp_path / "home").mkdir()
    return run_cmd("ra", "search", "--json", query, cwd=tmp_path, home=tmp_path / "home")


def first_found(tmp_path: Path, pages: dict[str, str], query: str, settings: str = "") -> dict[str, object]:
    """The first result of `ra search --json QUERY` over `pages` (`kb_search`)."""
    return results(kb_search(tmp_path, pages, query, settings))[0]


def explained(tmp_path: Path, query: str) -> str:
    """What `ra search --explain QUERY` prints in the project `kb_search` made under `tmp_path`."""
    run = run_cmd("ra", "search", "--explain", query, cwd=tmp_path, home=tmp_path / "home")
    assert run.code == 0, run.err
    return run.out + run.err


# ---- a document's language -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "locale"),
    [
        ("pages.ja/common/tar.md", "ja"),
        ("pages.pt_BR/linux/apt.md", "pt-br"),
        ("i18n/ja/docusaurus-plugin-content-docs/current/intro.md", "ja"),
        ("docs/ja/intro.md", "ja"),
        ("zh/guide.md", "zh"),
        ("content/zh-tw/guide.md", "zh-tw"),
        ("intro.ja.md", "ja"),
        ("pages/common/tar.md", None),
        ("docs/api.md", None),
        ("src/go/readme.md", None),  # `go` is no language code; `src/` no docs folder
    ],
)
def test_a_path_says_its_language_by_the_conventions_of_the_common_doc_tools(
    path: str, locale: str | None
) -> None:
    from ra_query.text.locales import path_locale

    assert path_locale(path) == locale


def test_frontmatter_says_a_documents_language_before_its_path() -> None:
    from ra_query.text.locales import document_locale

    assert document_locale("pages.ja/x.md", {"lang": "de"}, "Text") == "de"
    assert document_locale("pages.ja/x.md", {}, "Text") == "ja"


@pytest.mark.parametrize(
    ("path", "text", "locale"),
    [
        ("ml/overview.md", "Machine learning: how to train the model on the GPUs of the cluster.", "en"),
        ("ml/overview.md", "മെഷീൻ ലേണിംഗ് മോഡൽ പരിശീലിപ്പിക്കുക", "ml"),
        ("it/setup.md", "This is how the tests are run and what they check.", "en"),
        ("it/setup.md", "Come eseguire i test e cosa controllano.", "it"),
        ("docs/ja/intro.md", "Read this first: the setup of the tool and its options.", "en"),
        ("docs/ja/intro.md", "はじめに: `ra update` でインデックスを作る。", "ja"),
        ("docs/ru/intro.md", "Ich bin ein Text.", "en"),  # no Cyrillic: not Russian
        # Dutch, German and Vietnamese write `is`, `of`, `was` and letters past U+0370 as their own
        (
            "nl/intro.md",
            "Het is eenvoudig: je downloadt het pakket of je bouwt het zelf, als het klaar was.",
            "nl",
        ),
        ("de/intro.md", "Was sie kann, was nicht und was man tut, wenn sie hakt: die Anleitung.", "de"),
        ("vi/intro.md", "Hướng dẫn sử dụng phần mềm để quản lý dữ liệu trên máy chủ.", "vi"),
        (
            "pages.ml/common/tar.md",
            "Archive files with the tar command.",
            "ml",
        ),  # tldr's folders always count
        # a translation keeps its code as it was: the folder's language is read from its prose
        (
            "docs/ja/api.md",
            "APIの説明。\n\n```py\n" + "def the_value(self):  # the value of it\n" * 40 + "```\n",
            "ja",
        ),
        (
            "docs/de/api.md",
            "Gibt den Wert zurück.\n\n```py\n" + "return self.value  # the value of it\n" * 40 + "```\n",
            "de",
        ),
    ],
)
def test_a_top_folder_named_as_a_language_counts_only_when_its_text_can_be_in_it(
    path: str, text: str, locale: str
) -> None:
    from ra_query.text.locales import document_locale

    assert document_locale(path, {}, text) == locale


def test_a_page_in_a_folder_that_only_looks_like_a_language_is_not_folded_under_another(
    tmp_path: Path,
) -> None:
    pages = {
        "overview.md": "# Overview\n\nHow to train the model: run the pipeline.\n",
        "ml/overview.md": "# Overview\n\nMachine learning: how to train the model on GPUs and tune it.\n",
    }
    found = results(kb_search(tmp_path, pages, "how to train the model"))
    assert sorted(r["path"] for r in found) == ["ml/overview.md", "overview.md"]
    assert all(not r.get("translations") for r in found)
    run = run_cmd("ra", "inspect", "doc", "kb/ml/overview.md", cwd=tmp_path, home=tmp_path / "home")
    assert "\nLanguage: en\nFrontmatter: none\n" in run.out  # and no `Translation of:` line


@pytest.mark.parametrize(
    ("meta", "locale"),
    [({"lang": False}, "no"), ({"lang": "zh-Hant-TW"}, "zh-hant"), ({"locale": "de-DE-1996"}, "de-de")],
)
def test_frontmatter_says_norwegian_unquoted_and_bcp_47_tags_with_a_script_or_variant(
    meta: dict[str, object], locale: str
) -> None:
    from ra_query.text.locales import document_locale

    assert document_locale("x.md", meta, "Text") == locale


def test_a_frontmatter_language_that_is_no_language_code_is_a_warning_with_its_line() -> None:
    from ra_build.document.frontmatter import parse_frontmatter

    parsed = parse_frontmatter("---\ntitle: T\nlang: Japanese\n---\n# T\n")
    assert parsed.warnings == (
        'line 3: frontmatter lang "Japanese" is not a language code — write an ISO code such as ja, de '
        "or pt-br; the page's language is read from its path or script",
    )
    assert parse_frontmatter("---\nlang: no\n---\n# T\n").data == {"lang": "no"}  # as ra reads it
    assert parse_frontmatter("---\nlang: en\nlanguage: python\n---\n# T\n").warnings == ()  # lang says it
    assert parse_frontmatter("---\nlang:\nlocale: ''\n---\n# T\n").warnings == ()  # left empty: nothing said


def test_a_documents_script_says_its_language_when_its_path_does_not() -> None:
    from ra_query.text.locales import document_locale

    assert document_locale("notes/x.md", {}, "ファイルを圧縮する。tar を使う。") == "ja"
    assert document_locale("notes/x.md", {}, "파일을 압축합니다") == "ko"
    assert document_locale("notes/x.md", {}, "压缩文件") == "zh"
    assert document_locale("notes/x.md", {}, "Compress a file", default="fr") == "fr"  # Latin: the tree's


@pytest.mark.parametrize(
    ("translation", "original"),
    [
        ("i18n/ja/docusaurus-plugin-content-docs/current/guide/intro.md", "docs/guide/intro.md"),
        ("i18n/ja/docusaurus-plugin-content-blog/2021/launch.md", "blog/2021/launch.md"),  # no version
        ("i18n/ja/docusaurus-plugin-content-pages/about.md", "src/pages/about.md"),
        ("i18n/ja/docusaurus-plugin-content-docs/version-2.0/g.md", "versioned_docs/version-2.0/g.md"),
    ],
)
def test_a_docusaurus_translation_has_the_key_of_the_page_it_translates(
    translation: str, original: str
) -> None:
    from ra_query.text.locales import translation_key, translation_paths

    assert translation_key(translation) == translation_key(original) == original
    assert translation in translation_paths(original, "ja")


def test_the_translations_of_a_page_share_a_key() -> None:
    from ra_query.text.locales import translation_key

    assert translation_key("pages.ja/common/tar.md") == translation_key("pages/common/tar.md")
    assert translation_key("i18n/ja/docusaurus-plugin-content-docs/current/intro.md") == "docs/intro.md"
    assert translation_key("intro.ja.md") == translation_key("intro.md")
    assert translation_key("a.md", {"translation_key": "k"}) == translation_key(
        "b.md", {"translation_key": "k"}
    )


def test_inspect_doc_shows_a_documents_language_and_the_page_it_translates(built: tuple[Path, Path]) -> None:
    run = run_cmd("ra", "inspect", "doc", "kb/pages.ja/common/tar.md", cwd=built[0], home=built[1])
    assert run.code == 0, run.err
    assert "\nLanguage: ja\nTranslation of: pages/common/tar.md\n" in run.out


def test_inspect_doc_reads_a_page_that_does_not_say_its_language_in_its_trees(tmp_path: Path) -> None:
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "p.md").write_text("# Page\n\nWords that do not say their language.\n")
    (tmp_path / ".ra.toml").write_text('root = true\n[tree.kb]\npath = "kb"\nlanguage = "ja"\n')
    run = run_cmd("ra", "inspect", "doc", "kb/p.md", cwd=tmp_path, home=tmp_path)
    assert run.code == 0, run.err
    assert "\nLanguage: ja\n" in run.out  # as the build stores it


def test_a_trees_language_is_checked_with_the_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "kb").mkdir()
    (tmp_path / ".ra.toml").write_text('root = true\n[tree.kb]\npath = "kb"\nlanguage = "klingon"\n')
    run = run_cmd("ra", "update", cwd=tmp_path, home=tmp_path)
    assert run.code == 2
    assert run.err.strip() == (
        f'ra: error: {tmp_path / ".ra.toml"}:4: [tree.kb] language "klingon" is not a language code — use an '
        'ISO code such as "en", "ja", "de" or "pt-br"'
    )


# ---- words: CJK bigrams and mnemonic brackets --------------------------------------------------


def test_cjk_runs_are_written_as_their_overlapping_pairs_then_their_han_characters() -> None:
    from ra_query.text.locales import cjk_terms

    assert cjk_terms("ファイルを圧縮 tar").split() == [
        "ファ",
        "ァイ",
        "イル",
        "ルを",
        "を圧",
        "圧縮",
        "圧",
        "縮",
        "tar",
    ]
    assert cjk_terms("中 plain English") == "中 plain English"


def test_thai_runs_are_written_as_pairs_of_letters_without_their_tone_marks() -> None:
    from ra_query.text.locales import cjk_terms

    assert cjk_terms("ไฟล์ tar").split() == ["ไฟ", "ฟล", "tar"]  # ไฟล์: file
    assert cjk_terms("ก tar") == "ก tar"


def test_half_width_katakana_is_written_full_width() -> None:
    from ra_query.text.locales import cjk_terms

    assert cjk_terms("ﾌｧｲﾙ") == cjk_terms("ファイル")
    assert cjk_terms("ｶﾞｲﾄﾞ") == cjk_terms("ガイド")  # a voicing mark joins its letter


@pytest.mark.parametrize(
    ("query", "page"),
    [
        ("คัดลอกไฟล์", "pages.th/common/cp.md"),  # "copy a file", a word of the page's longer line
        ("บีบอัดไฟล์", "pages.th/common/tar.md"),  # "compress a file"
        ("ﾌｧｲﾙ", "pages.ja/common/gzip.md"),  # half-width, as some keyboards type it
    ],
)
def test_an_unspaced_thai_or_half_width_japanese_query_finds_its_page(
    tmp_path: Path, query: str, page: str
) -> None:
    pages = {
        "pages.th/common/cp.md": "# cp\n\n> หน้านี้เกี่ยวกับการคัดลอกไฟล์และไดเรกทอรี\n",
        "pages.th/common/tar.md": "# tar\n\n> หน้านี้เกี่ยวกับการบีบอัดไฟล์ด้วยเครื่องมือนี้\n",
        "pages.ja/common/gzip.md": "# gzip\n\n> ファイルを圧縮します。\n",
        "pages.ja/common/ls.md": "# ls\n\n> ディレクトリの中身を一覧表示します。\n",
    }
    assert first_found(tmp_path, pages, query)["path"] == page


@pytest.mark.parametrize(("query", "page"), [("title:คู่มือ", "th.md"), ("title:ﾌｧｲﾙ", "hw.md")])
def test_a_thai_or_half_width_katakana_title_is_found_by_a_word_of_it(
    tmp_path: Path, query: str, page: str
) -> None:
    pages = {"th.md": "# คู่มือการติดตั้งโปรแกรม\n\nข้อความ\n", "hw.md": "# ﾌｧｲﾙ\n\n本文\n", "x.md": "# x\n\ny\n"}
    assert first_found(tmp_path, pages, query)["path"] == page


def test_a_chinese_query_finds_a_page_that_writes_its_word_with_one_character_changed(tmp_path: Path) -> None:
    # 统计 and 计数 both mean "count": no pair is shared, the character 计 is
    pages = {
        "pages.zh/common/wc.md": "# wc\n\n> 计数文件中的行数。\n",
        "pages.zh/common/cat.md": "# cat\n\n> 打印文本内容。\n",
    }
    assert results(kb_search(tmp_path, pages, "统计"))[0]["id"] == "kb:pages.zh/common/wc.md#wc"


def test_han_or_kana_written_against_a_latin_word_is_split_from_it() -> None:
    from ra_query.text.locales import cjk_terms

    assert cjk_terms("用gzip压缩").split() == ["用", "gzip", "压缩", "压", "缩"]
    assert cjk_terms("在Linux上运行").split()[:2] == ["在", "Linux"]
    assert cjk_terms("x2に") == "x2 に"


def test_a_latin_word_in_a_chinese_query_weighs_as_much_as_a_chinese_word(tmp_path: Path) -> None:
    # 压缩文件 (compress a file) is seven terms, its pairs and characters; gzip is one
    pages = {
        "pages.zh/common/zstd.md": "# zstd\n\n> 压缩文件或解压缩文件。\n\n- 压缩文件：\n\n`zstd {{文件}}`\n\n"
        "- 解压缩文件：\n\n`zstd -d {{文件}}`\n\n- 压缩文件并删除原文件：\n\n`zstd --rm {{文件}}`\n",
        "pages.zh/common/gzip.md": "# gzip\n\n> 用 gzip 格式压缩。\n\n`gzip {{文件}}`\n",
        **{f"pages.{lang}/common/tar.md": "# tar\n\n> Archive, gzip.\n" for lang in ("de", "fr", "es", "it")},
        **{f"pages.zh/common/{name}.md": f"# {name}\n\n> 显示{name}的内容。\n" for name in "abcdefgh"},
    }
    assert results(kb_search(tmp_path, pages, "用gzip压缩文件"))[0]["id"] == "kb:pages.zh/common/gzip.md#gzip"


def test_a_number_in_a_chinese_query_weighs_as_a_word_does_not_three_times(tmp_path: Path) -> None:
    # 请求5次 (five requests): the page that says 5 most often is not the answer
    pages = {
        "pages.zh/common/ping.md": "# ping\n\n> 测试主机是否可达。\n\n- 只发送 5 个请求后停止：\n\n`ping -c 5 {{主机}}`\n",
        "pages.zh/common/seq.md": "# seq\n\n> 输出数字序列。\n\n- 从 5 数到 50，步长 5：\n\n`seq 5 5 50`\n\n"
        "- 输出 5 行：\n\n`seq 5`\n",
        **{f"pages.zh/common/{name}.md": f"# {name}\n\n> 显示{name}的内容。\n" for name in "abcdefgh"},
    }
    assert results(kb_search(tmp_path, pages, "请求5次"))[0]["id"] == "kb:pages.zh/common/ping.md#ping"


def test_a_page_in_the_language_a_query_says_ranks_before_pages_that_say_its_latin_words_more(
    tmp_path: Path,
) -> None:
    pages = {
        "pages.ja/common/curl.md": "# curl\n\n> データを転送する。\n\n- JSON のデータを POST で送る:\n\n"
        "`curl -d '{\"name\": \"bob\"}' -H 'Content-Type: application/json' {{url}}`\n",
        "pages/common/gh-api.md": "# gh api\n\n> Make authenticated requests to the GitHub API.\n\n"
        "- POST JSON to the API:\n\n`gh api --method POST --input file.json {{endpoint}}`\n",
        **{f"pages/common/{name}.md": f"# {name}\n\n> Show {name}.\n" for name in "abcdef"},
    }
    assert (
        results(kb_search(tmp_path, pages, "APIにJSONをPOSTで送る"))[0]["id"]
        == "kb:pages.ja/common/curl.md#curl"
    )


GRUB = {
    "pages/linux/grub-bios-setup.md": "# grub-bios-setup\n\n> Set up a device to use GRUB with a BIOS configuration.\n",
    "pages.ko/linux/grub-bios-setup.md": "# grub-bios-setup\n\n> BIOS 설정.\n",
    "pages.zh/common/ls.md": "# ls\n\n> 列出目录内容。\n",
}
TAR_PT = {
    "pages/common/tar.md": "# tar\n\n> Archiving utility, often combined with a compression method such as "
    "gzip or bzip2.\n\n- Create an archive and write it to a file:\n\n`tar cf path/to/target.tar path/to/file1`\n",
    "pages.pt_BR/common/tar.md": "# tar\n\n> Compacta arquivos.\n\n- Compactar um arquivo:\n\n`tar czf alvo.tar.gz arquivo`\n",
    "pages/common/ls.md": "# ls\n\n> List files.\n",
}


@pytest.mark.parametrize(
    ("pages", "query", "shown", "also"),
    [  # no Chinese page: the English one; Brazil's page is in Portuguese
        (
            GRUB,
            "查看BIOS",
            "pages/linux/grub-bios-setup.md#grub-bios-setup",
            "pages.ko/linux/grub-bios-setup.md",
        ),
        (TAR_PT, "como compactar um arquivo com tar", "pages.pt_BR/common/tar.md#tar", "pages/common/tar.md"),
    ],
)
def test_a_page_is_shown_in_the_readers_language_when_it_has_one_else_in_its_original(
    tmp_path: Path, pages: dict[str, str], query: str, shown: str, also: str
) -> None:
    first = first_found(tmp_path, pages, query)
    assert (first["id"], first["translations"]) == (f"kb:{shown}", [f"kb:{also}#{shown.partition('#')[2]}"])


def test_a_languages_own_stemmer_gives_the_stems_it_shortens_each_once() -> None:
    from ra_query.text.locales import language_stems

    assert (
        language_stems("Dateien anzeigen, Datei, versteckte Ordner", "german")
        == "datei anzeig versteckt ordn"
    )
    assert language_stems("fichiers compressés", "french") == "fichi compress"
    assert language_stems("Dateien und Dateien, Ordnern", "german") == "datei ordn"  # each stem once


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(max_size=200), stemmer=st.sampled_from(["german", "french", "russian", "arabic", "greek"])
)
def test_language_stems_take_any_text(text: str, stemmer: str) -> None:
    from ra_query.text.locales import language_stems

    stems = language_stems(text, stemmer).split()
    assert len(stems) == len(set(stems))


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.characters(max_codepoint=0xFFFF), max_size=60))
def test_the_quick_answer_for_latin_text_is_the_classes_answer(text: str) -> None:
    import re

    from ra_query.text.locales import _CJK_ANY, _SCRIPTS, has_cjk, script_locale

    assert has_cjk(text) == (re.search(_CJK_ANY, text) is not None)
    if not any(re.search(script, text) for _, script in _SCRIPTS):
        assert script_locale(text) is None


def test_a_latin_query_compiles_none_of_the_script_classes() -> None:
    run = subprocess.run(
        [sys.executable, "-c", (
            "from ra_query.text.locales import _pattern, cjk_terms, has_cjk, script_locale\n"
            "script_locale('how do I list hidden files'); has_cjk('déjà vu'); cjk_terms('naïve Ωmega')\n"
            "print(_pattern.cache_info().currsize)"
        )],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert run.stdout.strip() == "0"


def test_a_language_has_its_own_stemmer_only_where_it_is_not_the_indexs() -> None:
    from ra_query.text.locales import own_stemmer

    assert own_stemmer("de", "english") == "german"
    assert own_stemmer("pt-br", "english") == "portuguese"
    assert own_stemmer("de", "german") is None
    assert own_stemmer("en", "english") is None
    assert own_stemmer("ja", "english") is None


@pytest.mark.parametrize(
    ("query", "found"),
    [
        # the query's `Dateien` finds the page's `Datei` by its German stem (the query side)
        ("wie sehe ich versteckte Dateien", "kb:pages.de/common/ls.md#ls"),
        # the page's `supprimés` is found by `supprimer` by its French stem (the index side)
        ("comment supprimer les fichiers", "kb:pages.fr/common/trash.md#trash"),
    ],
)
def test_a_query_in_a_language_with_its_own_stemmer_finds_the_words_inflected_otherwise(
    tmp_path: Path, query: str, found: str
) -> None:
    pages = {  # without the stems, the shorter page that shares a word comes first
        "pages.de/common/ls.md": "# ls\n\n> Listet jede versteckte Datei auf.\n",
        "pages.de/common/find.md": "# find\n\n> Versteckte Ordner anzeigen.\n",
        "pages.fr/common/trash.md": "# trash\n\n> Les fichiers supprimés récemment.\n",
        "pages.fr/common/cat.md": "# cat\n\n> Affiche les fichiers.\n",
    }
    assert results(kb_search(tmp_path, pages, query))[0]["id"] == found


def test_accented_letters_are_indexed_and_searched_as_ascii() -> None:
    from ra_query.artifacts.schema import build_analyzer

    analyze = build_analyzer("english").analyze
    assert analyze("Télécharger") == analyze("telecharger") == ["telecharg"]
    assert analyze("Größe") == analyze("Grosse")
    assert analyze("폴더를 ファイル") == ["폴더를", "ファ", "ァイ", "イル"]  # other scripts: not folded


def test_a_query_typed_without_accents_finds_the_page_written_with_them(tmp_path: Path) -> None:
    # (German needs it less: its stemmer drops umlauts and writes ß as ss in the stems it adds)
    pages = {
        "pages.fr/common/wget.md": "# wget\n\n> Télécharger un fichier depuis le web.\n",
        "pages.fr/common/cat.md": "# cat\n\n> Affiche un fichier.\n",
    }
    assert (
        results(kb_search(tmp_path, pages, "telecharger un fichier"))[0]["id"]
        == "kb:pages.fr/common/wget.md#wget"
    )


def test_mnemonic_brackets_give_the_whole_word_and_leave_indexes_and_links_alone() -> None:
    from ra_query.text.locales import mnemonic_words

    assert mnemonic_words("- E[x]tract a g[z]ipped [f]ile") == "Extract gzipped file"
    assert mnemonic_words("array[i] and [a link](https://x) and x[0]") == ""


def test_an_unspaced_japanese_query_finds_its_page(built: tuple[Path, Path]) -> None:
    assert results(search(built, "--json", "隠しファイルを含む"))[0]["id"] == "tldr:pages.ja/common/ls.md#ls"


def test_an_unspaced_chinese_query_finds_its_page(built: tuple[Path, Path]) -> None:
    assert results(search(built, "--json", "解压归档文件"))[0]["id"] == "tldr:pages.zh/common/tar.md#tar"


def test_a_word_written_with_mnemonic_brackets_is_found_whole(built: tuple[Path, Path]) -> None:
    found = results(search(built, "--json", "extract file"))  # without the brackets: ls (files)
    assert found[0]["id"] == "tldr:pages/common/tar.md#tar"


# ---- the reader's language first ------------------------------------------------------------------


def test_an_english_query_shows_the_english_page_with_its_translations_folded_under_it(
    built: tuple[Path, Path],
) -> None:
    found = results(search(built, "--json", "tar"))
    assert found[0]["id"] == "tldr:pages/common/tar.md#tar"
    assert sorted(found[0]["translations"]) == [  # type: ignore[arg-type]
        "tldr:pages.de/common/tar.md#tar",
        "tldr:pages.ja/common/tar.md#tar",
        "tldr:pages.zh/common/tar.md#tar",
    ]
    assert all("tar.md" not in str(r["id"]) for r in found[1:])


def test_a_name_translated_into_more_languages_than_names_are_kept_shows_the_english_page(
    tmp_path: Path,
) -> None:
    # 24 short translations of `cd` score above the long English page, and a name keeps its best
    # 20 chunks: the English one must not be left out before the translations fold under it
    from ra_query.text.locales import LANGUAGES

    languages = sorted(LANGUAGES - {"en"})[:24]
    pages = {f"pages.{lang}/common/cd.md": f"# cd\n\n> cd {lang}.\n" for lang in languages}
    pages["pages/common/cd.md"] = "# cd\n\n> Change the current working directory of the shell.\n"
    pages["pages/common/ls.md"] = "# ls\n\n> List the files of a directory.\n"
    first = first_found(tmp_path, pages, "cd")
    assert first["id"] == "kb:pages/common/cd.md#cd"
    assert len(first["translations"]) >= 19  # type: ignore[arg-type]


SEND_EMAIL = {
    "pages/common/git-send-email.md": "# git send-email\n\n> Send a series of patches from the working tree "
    "as mail, one message each, to the recipients the repository configures.\n\n`git send-email patch`\n",
    "pages.de/common/git-send-email.md": "# git send-email\n\n> Patches als Mail senden.\n\n"
    "`git send-email patch`\n",
    "pages/common/ls.md": "# ls\n\n> List the files of a directory.\n",
}


def test_a_page_in_another_language_is_shown_as_its_translation_the_search_did_not_reach(
    tmp_path: Path,
) -> None:
    # one candidate only: the short German page; its English translation matches nearly as well
    first = first_found(tmp_path, SEND_EMAIL, "patch mail", "[search]\ncandidate_limit = 1")
    assert first["id"] == "kb:pages/common/git-send-email.md#git-send-email"
    assert first["translations"] == ["kb:pages.de/common/git-send-email.md#git-send-email"]


def test_a_page_whose_translation_does_not_match_the_guessed_reader_stays_in_its_language(
    tmp_path: Path,
) -> None:
    # `senden` is German only: a reader who did not say their language gets the page that matched
    first = first_found(tmp_path, SEND_EMAIL, "Patches senden", "[search]\ncandidate_limit = 1")
    assert first["id"] == "kb:pages.de/common/git-send-email.md#git-send-email"


CURL_IN_GERMAN = {  # only the English page holds `file.zip`
    "pages/common/curl.md": "# curl\n\n> Transfer data from or to a server.\n\n- Download the contents of a "
    "URL to a file:\n\n`curl --remote-name https://example.com/file.zip`\n",
    "pages.de/common/curl.md": "# curl\n\n> Überträgt Daten von oder zu einem Server.\n",
    "pages.de/common/ls.md": "# ls\n\n> Listet Dateien auf.\n",
}


CURL_IN_PORTUGUESE = {  # tldr keeps Portuguese in regional folders
    "pages/common/curl.md": CURL_IN_GERMAN["pages/common/curl.md"],
    "pages.pt_BR/common/curl.md": "# curl\n\n> Transfere dados de ou para um servidor.\n",
    "pages.pt_PT/common/ls.md": "# ls\n\n> Lista os ficheiros.\n",
}


@pytest.mark.parametrize(
    ("pages", "query", "own"),
    [
        (CURL_IN_GERMAN, "wie lade ich mit curl eine file.zip herunter", "pages.de"),  # its words: German
        (CURL_IN_PORTUGUESE, "como eu baixo um file.zip com o curl", "pages.pt_BR"),  # Portuguese: `pt`
    ],
)
def test_an_english_page_is_shown_as_its_translation_in_the_language_the_query_says(
    tmp_path: Path, pages: dict[str, str], query: str, own: str
) -> None:
    first = first_found(tmp_path, pages, query, "[search]\ncandidate_limit = 1")
    assert first["id"] == f"kb:{own}/common/curl.md#curl"
    assert first["translations"] == ["kb:pages/common/curl.md#curl"]


_SEGMENT = st.sampled_from(["docs", "content", "guide", "api", "pages", "common", "setup", "blog"])


@given(
    st.lists(_SEGMENT, max_size=3),
    st.sampled_from(["intro.md", "tar.md", "a.b.md", "README"]),
    st.sampled_from(["ja", "de", "zh-tw", "pt-br"]),
)
def test_every_path_a_translation_is_looked_for_at_has_the_key_it_was_made_from(
    folders: list[str], name: str, locale: str
) -> None:
    from ra_query.text.locales import translation_key, translation_paths

    key = "/".join([*folders, name])
    paths = translation_paths(key, locale)
    assert paths[0] == key
    assert len(paths) >= 3 and all(locale in p for p in paths[1:])  # `i18n/ja/…`, `ja/…` at least
    assert [p for p in paths if translation_key(p) != key] == []


@given(
    st.lists(_SEGMENT, max_size=3),
    st.sampled_from(["intro.md", "tar.md", "a.b.md", "README", "a+b (1)#x.md"]),
    st.sampled_from(["pt_BR", "pt-BR", "pt-br", "zh_TW", "ja", "de"]),
)
def test_a_translation_is_looked_for_in_each_spelling_of_its_language(
    folders: list[str], name: str, folder: str
) -> None:
    from ra_query.artifacts.schema import doc_id_of
    from ra_query.text.locales import translation_paths, translation_patterns

    key = "/".join([*folders, name])
    written = functools.partial(doc_id_of, "t")
    kept = [written(p) for p in translation_paths(key, folder)[1:]]  # where a doc tool keeps it
    for reader in {folder.lower().replace("_", "-"), folder[:2]}:  # its locale; its language alone
        patterns = translation_patterns(key, reader, written)
        assert all(any(re.fullmatch(p, path) for p in patterns) for path in kept)
        elsewhere = [written(p) for p in translation_paths(key, "ko")[1:]]  # another language's
        assert not any(re.fullmatch(p, path) for p in patterns for path in elsewhere)
        if "-" in reader:  # its own region's before another's
            other = [written(p) for p in translation_paths(key, f"{reader[:2]}_ZZ")[1:]]
            assert _first_matched(patterns, kept) < _first_matched(patterns, other)


def _first_matched(patterns: list[str], paths: list[str]) -> int:
    """The place of the first of `patterns` that matches one of `paths`."""
    return min(i for i, p in enumerate(patterns) for path in paths if re.fullmatch(p, path))


def test_the_text_says_which_languages_a_page_is_also_in(built: tuple[Path, Path]) -> None:
    run = search(built, "--list", "tar")
    assert run.code == 0, run.err
    assert "  also in: " in run.out and "ja" in run.out.split("also in: ")[1].splitlines()[0]


def test_a_query_that_asks_for_a_language_gets_that_language(built: tuple[Path, Path]) -> None:
    found = results(search(built, "--json", "tar lang:ja"))
    assert [r["id"] for r in found] == ["tldr:pages.ja/common/tar.md#tar"]
    assert found[0]["locale"] == "ja"


def test_a_language_filter_names_what_it_takes_when_it_is_not_a_language(built: tuple[Path, Path]) -> None:
    run = search(built, "tar lang:klingon")
    assert run.code == 2
    assert "or a language code (ja, de, pt-br)" in run.err


def test_sections_of_one_page_in_one_language_stay_apart() -> None:
    from ra_query.artifacts.models import ChunkRecord
    from ra_query.search.aggregate import Result
    from ra_query.search.pipeline import Shown, _translations

    def shown(chunk_id: str, path: str, locale: str, score: float) -> Shown:
        record = ChunkRecord(
            chunk_id, "t", path, f"t:{path}", None, "x", ("x",), 1, 0, 1, 1, 1, 0, 1, 1, "b",
            locale=locale, translation="pages/a.md",
        )  # fmt: skip
        return Shown(Result(chunk_id, score), record, (record,))

    ranked = [
        shown("t:pages.ja/a.md#one", "pages.ja/a.md", "ja", 3.0),
        shown("t:pages.ja/a.md#two", "pages.ja/a.md", "ja", 2.0),
        shown("t:pages/a.md#one", "pages/a.md", "en", 1.0),
    ]
    kept = _translations(ranked, "en")
    assert [s.id for s in kept] == ["t:pages/a.md#one", "t:pages.ja/a.md#two"]
    assert kept[0].result.score == 3.0 and kept[0].translations == (("ja", "t:pages.ja/a.md#one"),)


def test_lang_keeps_the_docs_of_one_language(built: tuple[Path, Path]) -> None:
    found = results(search(built, "--json", "--lang", "ja", "tar"))
    assert [r["id"] for r in found] == ["tldr:pages.ja/common/tar.md#tar"]


def test_lang_that_is_not_a_language_code_is_an_error(built: tuple[Path, Path]) -> None:
    run = search(built, "--lang", "klingon", "tar")
    assert (run.code, run.err.strip()) == (
        2,
        "ra: error: --lang klingon: not a language code — use an ISO code such as en, ja, de or pt-br",
    )


def test_the_mcp_search_tool_takes_a_language(built: tuple[Path, Path]) -> None:
    from tests.conftest import BIN
    from tests.test_mcp import serve, text_of

    command = [str(BIN / "ra-query"), "--artifacts", str(built[0] / ".ra"), "mcp"]
    with serve(command, built[0], built[1]) as server:
        found = server.ok("search", {"queries": "tar", "lang": "zh"})["queries"][0]["results"]
        wrong = server.call("search", {"queries": "tar", "lang": "klingon"})
    assert [r["id"] for r in found] == ["tldr:pages.zh/common/tar.md#tar"]
    assert wrong.is_error and "lang 'klingon' is not a language code" in text_of(wrong)


def test_a_query_in_german_words_shows_the_german_page(built: tuple[Path, Path]) -> None:
    found = results(search(built, "--json", "wie ich ein Archiv mit tar xf auspacke"))
    assert found[0]["id"] == "tldr:pages.de/common/tar.md#tar"


def test_a_latin_query_says_its_language_by_its_function_words_or_letters() -> None:
    from ra_query.text.locales import latin_locale

    assert latin_locale("wie entpacke ich ein Archiv") == "de"
    assert latin_locale("comment forcer l'arrêt d'un processus") == "fr"
    assert latin_locale("Größe") == "de"
    assert latin_locale("extract a file into the current folder") is None
    assert latin_locale("du") is None  # a name, not a sentence: `du` is French too


@pytest.mark.parametrize(
    "text",
    [
        "why does deserializing a hostname like example.com into an IP host object fail",  # `com`
        "are conditional expressions (x if c else y) allowed in the code",  # `y`
        "rendre un script exécutable",  # `un`: French, Spanish or Italian
    ],
)
def test_one_short_function_word_does_not_say_a_language(text: str) -> None:
    from ra_query.text.locales import latin_locale

    assert latin_locale(text) is None


def test_short_function_words_together_say_a_language() -> None:
    from ra_query.text.locales import latin_locale

    assert latin_locale("activer un service pour qu'il se lance au démarrage") == "fr"
    assert latin_locale("Ordner als gzip-Archiv verpacken") == "de"


def test_hangul_written_against_a_latin_word_is_split_from_it() -> None:
    from ra_query.text.locales import cjk_terms

    assert cjk_terms("폴더를 gzip으로 압축 PDF에서").split() == [
        "폴더를",
        "gzip",
        "으로",
        "압축",
        "PDF",
        "에서",
    ]
    assert cjk_terms("gzip 압축") == "gzip 압축"


def test_a_korean_word_is_indexed_as_each_of_its_beginnings_of_two_syllables_or_more() -> None:
    from ra_query.text.locales import korean_word_starts

    assert korean_word_starts("폴더를 압축해서 폴더를") == "폴더 압축 압축해"  # each once
    assert korean_word_starts("파일을 열고있는 프로세스") == "파일 열고 열고있 프로 프로세"
    assert korean_word_starts("맥 폴더 gzip으로 tar czf") == ""  # two syllables or fewer: the word itself


def test_a_korean_query_word_is_searched_without_its_particle_or_ending_too() -> None:
    from ra_query.text.locales import korean_stems

    assert (
        korean_stems("디렉토리에서 상대 경로를 사용하여 (압축된) 아카이브 생성") == "디렉토리 경로 사용 압축"
    )
    assert korean_stems("폴더를 압축해서 폴더를") == "폴더 압축"  # each once


@pytest.mark.parametrize("text", ["맥에서 줄을", "아카이브 생성", "gzip으로", "tar czf file", ""])
def test_a_korean_word_keeps_two_syllables_and_a_word_without_an_ending_has_no_stem(text: str) -> None:
    from ra_query.text.locales import korean_stems

    assert korean_stems(text) == ""


KOREAN_TAR = {
    "pages.ko/common/tar.md": "# tar\n\n> 아카이브 유틸리티.\n\n- 디렉토리에서 상대 경로를 사용하여 압축된 "
    "아카이브 생성:\n\n`tar czf target.tar.gz -C path .`\n\n- 폴더에 있는 파일들을 아카이브로 묶기:\n\n"
    "`tar cf target.tar folder`\n",
    "pages.ko/common/ls.md": "# ls\n\n> 디렉토리 내용 나열.\n\n- 숨김 파일 포함 나열:\n\n`ls -a`\n",
}


@pytest.mark.parametrize(
    "query",
    [
        "경로 압축",  # nouns typed bare: the page's words without their particle
        "폴더를 압축해서",  # the query's words without theirs: `폴더에`, `압축된` on the page
    ],
)
def test_a_korean_word_finds_the_page_that_writes_it_with_another_particle(
    tmp_path: Path, query: str
) -> None:
    found = json.loads(kb_search(tmp_path, KOREAN_TAR, query).out)["queries"][0]["results"]
    assert [str(r["id"]).split("#")[0] for r in found] == ["kb:pages.ko/common/tar.md"]


KOREAN_SPACED = {  # a compound noun or a verb with its helper, spaced or not: 파일 이름, 열고있는
    "pages.ko/common/mv.md": "# mv\n\n> 파일 이름을 바꿉니다.\n",
    "pages.ko/common/cp.md": "# cp\n\n> 파일을 복사합니다.\n",
    "pages.ko/common/ls.md": "# ls\n\n> 파일 목록을 봅니다.\n",
    "pages.ko/common/lsof.md": "# lsof\n\n- 주어진 파일을 열고있는 모든 프로세스 찾기:\n",
    "pages.ko/common/fuser.md": "# fuser\n\n- 파일을 쓰는 프로세스 찾기:\n",
}


@pytest.mark.parametrize(
    ("query", "page"),
    [
        ("파일이름 확인", "mv"),  # typed together, the page spaces them (파일이름 is 파일 이름: file name)
        ("파일을 열고 있는 프로세스", "lsof"),  # typed apart, the page writes them together
    ],
)
def test_korean_words_spaced_otherwise_than_the_page_find_it(tmp_path: Path, query: str, page: str) -> None:
    assert first_found(tmp_path, KOREAN_SPACED, query)["id"] == f"kb:pages.ko/common/{page}.md#{page}"


def test_a_korean_word_is_not_cut_before_its_particle_or_ending(tmp_path: Path) -> None:
    from ra_query.text.locales import korean_ending_first

    assert korean_ending_first("하기") and korean_ending_first("으로") and korean_ending_first("하려면")
    assert not korean_ending_first("이름") and not korean_ending_first("디스크")
    # 백업하기 is 백업 with the ending 하기, which its stem leaves off: not the words 백업 and 하기
    pages = {"pages.ko/common/a.md": "# a\n\n> 백업 하기.\n", "pages.ko/common/b.md": "# b\n\n> 백업.\n"}
    kb_search(tmp_path, pages, "백업")
    assert "matched as its words" not in explained(tmp_path, "백업하기")


@given(st.text(alphabet=st.characters(min_codepoint=0xAC00, max_codepoint=0xD7A3), max_size=6))
def test_a_hangul_word_that_begins_with_an_ending_of_two_syllables_or_more_is_an_ending(word: str) -> None:
    from ra_query.text.locales import korean_ending_first

    assert korean_ending_first("하기" + word) and korean_ending_first("에서" + word)


def test_a_korean_word_no_chunk_holds_beside_words_that_match_is_no_typo(tmp_path: Path) -> None:
    # 이어받기 (resume) is in no page; a syllable is a morpheme, so one syllable away is another
    # word: the search is not marked fuzzy, and --explain says why the word matched nothing
    query = json.loads(kb_search(tmp_path, KOREAN_TAR, "압축 아카이브 이어받기").out)["queries"][0]
    assert str(query["results"][0]["id"]).startswith("kb:pages.ko/common/tar.md")
    assert not query["fuzzy"]
    assert "in no chunk as typed, and words, not typos: 이어받기" in explained(
        tmp_path, "압축 아카이브 이어받기"
    )


def test_a_misspelt_korean_word_alone_is_still_matched_as_a_typo(tmp_path: Path) -> None:
    # nothing found: the whole-query retry matches within one syllable (아카이브 as 아카이부)
    query = json.loads(kb_search(tmp_path, KOREAN_TAR, "아카이부").out)["queries"][0]
    assert query["fuzzy"]
    assert str(query["results"][0]["id"]).startswith("kb:pages.ko/common/tar.md")


def test_a_query_in_another_script_is_searched_by_words_only_where_there_are_vectors(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    kb = tmp_path / "kb"
    (kb / "docs").mkdir(parents=True)
    (kb / "docs" / "tar.md").write_text(
        "# tar\n\nアーカイブを展開する。\n\nExtract an archive.\n", encoding="utf-8"
    )
    (kb / ".ra.toml").write_text('root = true\n[settings]\nsemantic = true\n[tree.docs]\npath = "docs"\n')
    run = run_cmd("ra", "search", "--json", "アーカイブを展開", cwd=kb, home=tmp_path)
    assert run.code == 0, run.err
    query = json.loads(run.out)["queries"][0]
    assert query["results"][0]["id"] == "docs:tar.md#tar"
    assert query["note"] == "searched by words only: the embedding model knows en, not ja"


def test_an_unsaid_query_whose_words_match_pages_of_one_unembedded_language_is_searched_by_words(
    tmp_path: Path,
) -> None:
    # `rendre un script exécutable` says no language (one short `un`), but its words match the
    # French pages: embedded as English, the English chmod page would come first
    pytest.importorskip("onnxruntime")
    pages = {
        "pages/common/chmod.md": "# chmod\n\n> Change the access permissions of a file.\n\n- Make a script executable:\n",
        "pages.fr/common/chmod.md": "# chmod\n\n> Modifie les droits.\n\n- Rendre un script exécutable :\n",
        "pages.fr/common/bash.md": "# bash\n\n> Lance un script.\n",
        "pages.fr/common/sh.md": "# sh\n\n> Exécute un script shell.\n",
    }
    run = kb_search(tmp_path, pages, "rendre un script exécutable", "semantic = true")
    assert run.code == 0, run.err
    query = json.loads(run.out)["queries"][0]
    assert query["note"] == "searched by words only: the embedding model knows en, not fr"
    assert query["results"][0]["id"] == "kb:pages.fr/common/chmod.md#chmod"


def test_a_query_whose_words_match_every_translation_alike_is_searched_by_meaning_too() -> None:
    from ra_query.artifacts.models import ChunkRecord
    from ra_query.search.pipeline import _matched_language

    def found(*locales: str) -> list[tuple[ChunkRecord, float]]:
        return [
            (ChunkRecord(f"t:{i}.md", "t", f"{i}.md", f"t:{i}.md", None, "x", ("x",), 1, 0, 1, 1, 1, 0, 1, 1, "b",
                         locale=locale), 1.0)
            for i, locale in enumerate(locales)
        ]  # fmt: skip

    assert _matched_language(found("fr", "fr", "fr", "en")) == "fr"
    assert _matched_language(found("en", "fr", "ja", "zh", "de")) is None  # `tar`: every translation
    assert _matched_language(found("fr", "fr")) is None  # too few to say
    assert _matched_language(found("", "", "", "")) is None  # code: no natural language


# ---- which page, and which section of it, stands for a result in the reader's language ----------


def test_a_docs_chunks_language_rank_is_by_its_language_and_code_has_the_readers() -> None:
    from ra_query.search.pipeline import _language_rank

    assert _language_rank("", "de") == _language_rank("", "en") == 0  # code: no natural language
    assert _language_rank("pt-br", "pt") == 0  # a regional page is in the reader's language
    assert _language_rank("pt-br", "pt-br") == _language_rank("pt", "pt-br") == 0  # and for a regional reader


def test_a_later_result_in_another_language_is_shown_as_its_translation_too(tmp_path: Path) -> None:
    pages = {
        **SEND_EMAIL,
        "pages/common/git-format-patch.md": "# git format-patch\n\n> Patch mail: patch mail.\n",
    }
    ids = [
        r["id"] for r in results(kb_search(tmp_path, pages, "patch mail", "[search]\ncandidate_limit = 2"))
    ]
    assert "kb:pages/common/git-send-email.md#git-send-email" in ids
    assert "kb:pages.de/common/git-send-email.md#git-send-email" not in ids


def test_a_page_without_a_translation_in_the_readers_language_is_not_shown_in_a_third(tmp_path: Path) -> None:
    pages = {
        "pages/common/curl.md": "# curl\n\n> Transfer data from or to a server.\n",
        "pages.ja/common/curl.md": "# curl\n\n> データを転送する。\n\n- ダウンロード:\n\n`curl --remote-name https://example.com/file.zip`\n",
        "pages.de/common/ls.md": "# ls\n\n> Listet Dateien auf.\n",
    }
    query = "wie lade ich mit curl eine file.zip herunter"  # German: there is no German curl page
    assert (
        first_found(tmp_path, pages, query, "[search]\ncandidate_limit = 1")["id"]
        == "kb:pages.ja/common/curl.md#curl"
    )


DOCUSAURUS_GUIDE = {
    "docs/guide.md": "# Guide\n\nIntro to the tool.\n\n## Install\n\nRun the installer script from the release "
    "page.\n\n## Configure\n\nEdit the settings file to set the proxy URL and the timeout of every request.\n",
    "i18n/de/docusaurus-plugin-content-docs/current/guide.md": "# Anleitung\n\nEinführung.\n\n## Installieren\n\n"
    "Das Installationsprogramm starten.\n\n## Konfigurieren\n\nproxy URL und timeout setzen.\n",
}


def test_a_translated_section_is_shown_as_the_section_in_the_same_place_of_the_original(
    tmp_path: Path,
) -> None:
    first = first_found(tmp_path, DOCUSAURUS_GUIDE, "proxy URL timeout", "[search]\ncandidate_limit = 1")
    assert first["id"] == "kb:docs/guide.md#configure"  # headings translated: the third section of three
    assert first["translations"] == [
        "kb:i18n/de/docusaurus-plugin-content-docs/current/guide.md#konfigurieren"
    ]


def test_a_translated_section_is_shown_as_the_section_of_the_same_anchor(tmp_path: Path) -> None:
    pages = {
        "docs/cli.md": "# cli\n\nThe options.\n\n## --verbose\n\nPrint every step.\n\n## --force\n\nOverwrite "
        "existing files without asking, even read-only ones.\n\n## --dry-run\n\nShow what would happen.\n",
        "i18n/de/docusaurus-plugin-content-docs/current/cli.md": "# cli\n\nDie Optionen.\n\n## --force\n\n"
        "Overwrite: read-only files.\n",
    }
    first = first_found(tmp_path, pages, "overwrite read-only files", "[search]\ncandidate_limit = 1")
    assert first["id"] == "kb:docs/cli.md#--force"  # not the page's lead: the sections differ in number


@pytest.mark.parametrize("query", ['"senden patch"', "--raw senden"])
def test_a_guessed_reader_gets_no_translation_the_query_did_not_match(tmp_path: Path, query: str) -> None:
    kb_search(tmp_path, SEND_EMAIL, "ls", "[search]\ncandidate_limit = 1")
    args = query.split(" ", 1) if query.startswith("--") else [query]
    run = run_cmd(
        "ra", "search", "--json", "--candidate-limit", "1", *args, cwd=tmp_path, home=tmp_path / "home"
    )
    assert results(run)[0]["id"] == "kb:pages.de/common/git-send-email.md#git-send-email"


def test_a_name_in_many_languages_names_each_page_once(tmp_path: Path) -> None:
    from ra_query.text.locales import LANGUAGES

    pages = {
        f"pages.{lang}/common/cd.md": f"# cd\n\n> cd {lang}.\n" for lang in sorted(LANGUAGES - {"en"})[:24]
    }
    pages["pages/common/cd.md"] = "# cd\n\n> cd en.\n"
    kb_search(tmp_path, pages, "cd")
    line = next(line for line in explained(tmp_path, "cd").splitlines() if "named:" in line)
    ids = line.split("named:")[1].split()
    assert len(ids) == len(set(ids)), line


def test_a_translation_is_looked_for_in_a_docs_language_folder_and_by_a_suffix() -> None:
    from ra_query.text.locales import translation_paths

    paths = translation_paths("docs/intro.md", "ja")
    assert "docs/ja/intro.md" in paths and "docs/intro.ja.md" in paths


def test_inspect_doc_shows_a_frontmatter_translation_key_as_written(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "intro.md").write_text("---\nlang: de\ntranslation_key: intro\n---\n# Einführung\n\nText.\n")
    run = run_cmd("ra", "inspect", "doc", "intro.md", cwd=tmp_path, home=tmp_path / "home")
    assert "\nTranslation of: intro\n" in run.out, run.out + run.err


def _shown(cid: str, locale: str, *, aggregated: bool = False, also: tuple[str, ...] = ()) -> Any:
    from ra_query.artifacts.models import ChunkRecord
    from ra_query.search.aggregate import Result
    from ra_query.search.pipeline import Shown

    path = cid.split(":", 1)[1].split("#")[0]
    record = ChunkRecord(
        cid,
        "t",
        path,
        f"t:{path}",
        None,
        "x",
        ("x",),
        1,
        0,
        1,
        1,
        1,
        0,
        1,
        1,
        "b",
        locale=locale,
        translation="pages/a.md",
    )
    return Shown(Result(cid, 1.0, aggregated=aggregated), record, (record,), also)


def _readers_own(monkeypatch: pytest.MonkeyPatch, out: list[Any], own_id: str) -> list[Any]:
    """`_readers_own` for an English reader whose translation of every page is `own_id`."""
    from types import SimpleNamespace

    import ra_query.search.pipeline as pipeline

    own = _shown(own_id, "en").record
    monkeypatch.setattr(pipeline, "_translation_in", lambda run, record: own)
    return pipeline._readers_own(cast(Any, SimpleNamespace(reader="en", reader_said=True)), out, 15)


def test_a_translation_that_is_already_a_result_is_not_shown_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    out = [_shown("t:pages.de/a.md#a", "de"), _shown("t:pages/a.md#a", "en")]
    assert [s.id for s in _readers_own(monkeypatch, out, "t:pages/a.md#a")] == [
        "t:pages.de/a.md#a",
        "t:pages/a.md#a",
    ]


def test_a_page_that_sections_merged_into_keeps_its_language(monkeypatch: pytest.MonkeyPatch) -> None:
    out = [_shown("t:pages.de/a.md#a", "de", aggregated=True)]
    assert [s.id for s in _readers_own(monkeypatch, out, "t:pages/a.md#a")] == ["t:pages.de/a.md#a"]


def test_the_copies_of_a_page_stay_listed_under_its_translation(monkeypatch: pytest.MonkeyPatch) -> None:
    out = [_shown("t:pages.de/a.md#a", "de", also=("u:pages.de/a.md#a",))]
    kept = _readers_own(monkeypatch, out, "t:pages/a.md#a")
    assert [(s.id, s.also, s.translations) for s in kept] == [
        ("t:pages/a.md#a", ("u:pages.de/a.md#a",), (("de", "t:pages.de/a.md#a"),))
    ]


def test_context_of_a_translated_page_does_not_list_the_page_itself_as_a_translation(tmp_path: Path) -> None:
    pages = {
        "pages/common/tar.md": "# tar\n\n> Archive files: create and extract tar archives.\n",
        "pages.ja/common/tar.md": "# tar\n\n> ファイルをアーカイブする: tar archives.\n",
        "pages/common/ls.md": "# ls\n\n> List files.\n",
    }
    kb_search(tmp_path, pages, "tar")
    run = run_cmd(
        "ra", "context", "--json", "kb/pages.ja/common/tar.md", cwd=tmp_path, home=tmp_path / "home"
    )
    first = results(run)[0]
    assert first["id"] == "kb:pages/common/tar.md#tar"  # the page it translates, and no "also in: ja"
    assert first.get("translations", []) == []


def test_a_translation_already_listed_under_a_result_does_not_take_its_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    listed = _shown("t:pages.de/a.md#a", "de")._replace(translations=(("en", "t:pages/a.md#a"),))
    kept = _readers_own(monkeypatch, [listed], "t:pages/a.md#a")
    assert [(s.id, s.translations) for s in kept] == [("t:pages.de/a.md#a", (("en", "t:pages/a.md#a"),))]

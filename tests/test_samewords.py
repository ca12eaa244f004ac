"""Words of one meaning in Chinese, Japanese and Korean (issue 33): a query in one of those
languages also searches the words its pages may use instead of the reader's."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ra_query.text.samewords import GROUPS, same_words
from tests.test_locales import explained, kb_search, results

# pages that say 文件 (file), as most pages do: its pairs and characters are common
FILLER = {f"pages.zh/common/{name}.md": f"# {name}\n\n> 显示{name}文件的内容。\n" for name in "abcdefgh"}


@pytest.mark.parametrize("language", sorted(GROUPS))
def test_no_word_is_in_two_groups_of_a_language(language: str) -> None:
    words = [word for group in GROUPS[language] for word in group]
    assert sorted(w for w in set(words) if words.count(w) > 1) == []


@pytest.mark.parametrize("language", sorted(GROUPS))
def test_every_word_is_two_characters_or_more(language: str) -> None:
    assert [w for group in GROUPS[language] for w in group if len(w) < 2] == []


WORDS = [word for groups in GROUPS.values() for group in groups for word in group]


@given(st.lists(st.sampled_from(WORDS) | st.text(max_size=8), max_size=6), st.sampled_from(sorted(GROUPS)))
def test_a_word_named_is_of_the_words_group_and_not_in_the_text(parts: list[str], language: str) -> None:
    text = "".join(parts)
    groups = GROUPS[language]
    for word, other in same_words(text, language):
        assert word in text.lower() and other.lower() not in text.lower()
        assert any(word in (w.lower() for w in g) and other in g for g in groups)


def test_a_word_of_the_query_names_the_rest_of_its_group() -> None:
    found = same_words("把整个文件夹打包", "zh")
    assert ("文件夹", "目录") in found
    assert ("打包", "归档") in found


def test_a_word_inside_a_longer_word_of_the_query_names_nothing() -> None:
    # 登录名 (login name) holds 登录 (log in): only the login name's group is named
    assert same_words("修改登录名", "zh") == [("登录名", "用户名"), ("登录名", "账户名")]


def test_a_word_the_query_also_says_is_not_named_again() -> None:
    assert ("文件夹", "目录") not in same_words("文件夹和目录", "zh")


def test_a_korean_word_is_found_with_its_particle() -> None:
    assert ("폴더", "디렉토리") in same_words("폴더를 압축", "ko")


def test_a_chinese_query_finds_the_page_that_says_its_word_another_way(tmp_path: Path) -> None:
    # 文件夹 (folder) in the query, 目录 (directory) on the page that answers: its one pair
    # weighs what 文件夹's two pairs do
    pages = {
        "pages.zh/common/ls.md": "# ls\n\n> 列出目录中的所有条目及其详细信息。\n",
        "pages.zh/common/cat.md": "# cat\n\n> 打印文件，连接文件。\n",
        **FILLER,
    }
    assert results(kb_search(tmp_path, pages, "文件夹里有什么"))[0]["id"] == "kb:pages.zh/common/ls.md#ls"


def test_a_korean_query_finds_the_page_that_says_its_word_another_way(tmp_path: Path) -> None:
    # 폴더 (folder) in the query, 디렉토리 (directory) on the page that answers
    pages = {
        "pages.ko/common/ls.md": "# ls\n\n> 디렉토리의 파일 목록을 보여줍니다.\n",
        "pages.ko/common/cat.md": "# cat\n\n> 파일 내용을 출력하고 파일을 연결합니다.\n",
        **{
            f"pages.ko/common/{name}.md": f"# {name}\n\n> {name}의 내용을 출력합니다.\n"
            for name in "abcdefgh"
        },
    }
    assert results(kb_search(tmp_path, pages, "폴더 안의 파일"))[0]["id"] == "kb:pages.ko/common/ls.md#ls"


def test_explain_names_the_words_of_the_same_meaning_searched(tmp_path: Path) -> None:
    pages = {"pages.zh/common/ls.md": "# ls\n\n> 列出目录中的文件。\n", **FILLER}
    kb_search(tmp_path, pages, "ls")
    assert "words of the same meaning: 文件夹 → 目录" in explained(tmp_path, "文件夹里的文件")


def test_a_korean_query_finds_the_page_that_keeps_a_name_in_latin_letters(tmp_path: Path) -> None:
    # 와이파이 is Wi-Fi as Korean writes it; the translated page keeps the name as it is
    pages = {
        "pages.ko/osx/networksetup.md": "# networksetup\n\n- 특정 Wi-Fi 네트워크에 연결:\n",
        "pages.ko/linux/bluetoothctl.md": "# bluetoothctl\n\n- 장치에 연결:\n",
    }
    found = results(kb_search(tmp_path, pages, "와이파이 연결하는 법"))
    assert found[0]["id"] == "kb:pages.ko/osx/networksetup.md#networksetup"

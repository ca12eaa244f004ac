"""The operating system a query names (issue 33): its folders' pages rank first, whatever
language names it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ra_query.text.platforms import platform_folders
from tests.test_locales import explained, kb_search, results


@pytest.mark.parametrize(
    ("query", "folders"),
    [
        ("맥에서 dmg 파일 마운트하는 방법", ("osx", "macos")),
        ("맥 외장하드 마운트 해제", ("osx", "macos")),
        ("eject a disk on a Mac", ("osx", "macos")),
        ("윈도우 예약 종료 취소", ("windows",)),
        ("Linux查看显卡驱动", ("linux",)),
        ("Ubuntu에서 패키지 고정", ("linux",)),
        ("안드로이드 화면 캡처", ("android",)),
    ],
)
def test_a_query_that_names_a_system_gives_its_folders(query: str, folders: tuple[str, ...]) -> None:
    assert platform_folders(query) == folders


@pytest.mark.parametrize(
    "query", ["MAC address of eth0", "MAC 주소 확인", "맥락을 파악", "맥박 측정", "tar a folder"]
)
def test_a_mac_address_or_a_word_that_starts_like_a_system_names_none(query: str) -> None:
    assert platform_folders(query) == ()


@given(st.text(max_size=40))
def test_any_text_names_only_known_folders_each_once(text: str) -> None:
    folders = platform_folders(text)
    assert set(folders) <= {"osx", "macos", "windows", "linux", "android"}
    assert len(folders) == len(set(folders))


MOUNTS = {
    "pages.ko/osx/hdiutil.md": "# hdiutil\n\n> 디스크 이미지 관리.\n\n- 이미지 마운트:\n\n`hdiutil attach {{a.dmg}}`\n",
    "pages.ko/linux/xmount.md": "# xmount\n\n> 디스크 이미지를 마운트.\n\n- 디스크 이미지 마운트:\n\n"
    "`xmount {{a.img}} {{dir}}`\n",
    **{f"pages.ko/common/{name}.md": f"# {name}\n\n> {name}의 내용을 출력합니다.\n" for name in "abcdefgh"},
}


def test_the_page_in_the_folder_of_the_system_a_query_names_comes_first(tmp_path: Path) -> None:
    found = results(kb_search(tmp_path, MOUNTS, "맥에서 디스크 이미지 마운트"))
    assert found[0]["id"] == "kb:pages.ko/osx/hdiutil.md#hdiutil"


def test_a_page_is_not_found_for_its_folder_alone(tmp_path: Path) -> None:
    assert "kb:pages.ko/osx/hdiutil.md#hdiutil" not in [
        r["id"] for r in results(kb_search(tmp_path, MOUNTS, "맥에서 출력"))
    ]


def test_explain_names_the_folders_of_the_system(tmp_path: Path) -> None:
    kb_search(tmp_path, MOUNTS, "마운트")
    assert "the system it names, in paths: osx/" in explained(tmp_path, "맥에서 마운트")


SHUTDOWNS = {
    "pages.ko/windows/shutdown.md": "# shutdown\n\n> 컴퓨터를 종료합니다.\n\n- 종료 시퀀스 중단:\n\n`shutdown /a`\n",
    "pages.ko/linux/shutdown.md": "# shutdown\n\n> 시스템 종료.\n\n- 예약된 종료 취소:\n\n`shutdown -c`\n",
    **{f"pages.ko/common/{name}.md": f"# {name}\n\n> {name}의 내용을 출력합니다.\n" for name in "abcdefgh"},
}


def test_a_folder_whose_name_the_index_stems_still_gets_its_system(tmp_path: Path) -> None:
    # paths are indexed stemmed: the folder `windows` is the token `window`
    found = results(kb_search(tmp_path, SHUTDOWNS, "윈도우 종료 취소"))
    assert found[0]["id"] == "kb:pages.ko/windows/shutdown.md#shutdown"

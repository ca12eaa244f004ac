"""Words of one meaning in Chinese, Japanese and Korean docs (issue 33).

A reader asks in their own words and a translated page answers in its translator's: a Chinese
reader says 文件夹 (folder) where the page says 目录 (directory), a Korean reader 폴더 where the
page says 디렉토리, 사진 (photo) where it says 이미지. Pairs of characters find neither: they
are different words. These groups are the everyday computing vocabulary of each language —
written from general usage, not from any page — and a query in that language also searches the
rest of a group it names, each weighing what the word it stands for weighs, where some chunk
holds them (ra_query.search.compile). English and the other languages written with spaces have
their stemmer and the code words (ra_query.text.codewords) instead.

A member is found in the query as written (a Chinese or Japanese query has no spaces, a Korean
word carries its particle: `폴더를`), so each is a whole word of at least two characters.
"""

from __future__ import annotations

from functools import cache
from typing import Final

# the share of a word's weight a word of the same meaning is searched at, pair for pair: all of it
# (bench/locales.py: 0.5 and 0.7 found one to three known items fewer in Chinese and Korean)
SAME_WORDS_WEIGHT: Final = 1.0

# one idea per line, Simplified Chinese (the pages of `zh`); keep each word in one group
_ZH: Final = (
    ("文件夹", "目录"),
    ("归档", "存档", "打包", "封存"),
    ("解压", "解压缩", "提取"),
    ("删除", "移除", "删掉"),
    ("显示", "打印", "输出", "列出"),
    ("查看", "浏览"),
    ("硬盘", "磁盘", "存储设备", "驱动器"),
    ("分区", "磁盘分区"),
    ("网卡", "网络接口", "网络适配器", "网络设备"),
    ("物理地址", "硬件地址", "MAC地址"),
    ("公网", "公共IP", "外网"),
    ("局域网", "内网", "本地网络"),
    ("地址转换", "NAT"),
    ("树形", "树状"),
    ("权限", "许可"),
    ("登录", "登入", "登陆"),
    ("密码", "口令"),
    ("免密", "无密码", "免密码"),
    ("用户名", "账户名", "登录名"),
    ("账户", "帐户", "账号", "帐号"),
    ("服务器", "远程主机", "主机"),
    ("配置", "设置", "设定"),
    ("实时", "即时", "持续"),
    ("重启", "重新启动"),
    ("启动", "开启", "运行"),
    ("终止", "结束", "停止", "杀死"),
    ("截图", "截屏", "屏幕截图", "屏幕快照"),
    ("图片", "图像", "照片"),
    ("视频", "影片"),
    ("定时", "定期", "计划任务"),
    ("卸载", "解除安装"),
    ("挂载", "装载"),
    ("端口", "端口号"),
    ("复制", "拷贝"),
    ("重命名", "改名", "更名"),
    ("搜索", "查找", "搜寻", "检索"),
    ("替换", "取代"),
    ("仓库", "存储库", "代码库"),
    ("脚本", "脚本文件"),
    ("命令", "指令"),
    ("选项", "参数"),
    ("隐藏", "不可见"),
    ("守护进程", "后台进程", "后台服务"),
    ("公钥", "公共密钥"),
    ("私钥", "私有密钥"),
    ("可执行", "执行权限"),
)

# Japanese, as its pages write it (`ja`)
_JA: Final = (
    ("フォルダ", "フォルダー", "ディレクトリ"),
    ("解凍", "展開", "抽出"),
    ("削除", "消去", "除去"),
    ("表示", "出力", "印刷"),
    ("パスワード", "暗証番号"),
    ("画像", "写真", "イメージ"),
    ("スクリーンショット", "画面キャプチャ", "スクショ"),
    ("ログイン", "サインイン", "ログオン"),
    ("ユーザー", "ユーザ", "利用者"),
    ("設定", "構成", "コンフィグ"),
    ("再起動", "リブート"),
    ("停止", "終了", "中止"),
    ("検索", "探索"),
    ("コピー", "複製"),
    ("名前を変更", "名前変更", "リネーム", "改名"),
    ("隠し", "非表示"),
    ("権限", "パーミッション", "アクセス権"),
    ("リポジトリ", "レポジトリ"),
    ("ディスク", "ドライブ", "ストレージ", "ハードディスク"),
    ("パーティション", "区画"),
    ("サーバー", "サーバ", "ホスト"),
    ("定期", "スケジュール", "予約"),
    ("リアルタイム", "継続的", "追跡"),
    ("ネットワークインターフェース", "ネットワークカード", "ネットワークアダプタ"),
)

# Korean (`ko`): a word as it stands before its particle or ending
_KO: Final = (
    ("폴더", "디렉토리", "디렉터리"),
    ("아카이브", "묶음", "보관"),
    ("압축해제", "압축 해제", "추출"),
    ("삭제", "제거", "지우"),
    ("표시", "출력", "보여"),
    ("비밀번호", "암호", "패스워드"),
    ("사진", "이미지"),
    ("캡처", "캡쳐", "스크린샷"),
    ("로그인", "로그온"),
    ("사용자", "유저"),
    ("계정", "사용자 계정"),
    ("로그인 이름", "사용자 이름", "사용자명"),
    ("바꾸", "바꿔", "변경"),
    ("디스크", "하드디스크", "드라이브", "저장장치", "저장 장치"),
    ("파티션", "분할"),
    ("랜카드", "네트워크 카드", "네트워크 인터페이스", "네트워크 어댑터"),
    ("설정", "구성", "환경설정"),
    ("다운로드", "내려받"),
    ("업로드", "올리"),
    ("재시작", "다시 시작"),
    ("재부팅", "리부트"),
    ("종료", "중지", "정지"),
    ("검색", "찾기", "찾아"),
    ("복사", "복제"),
    ("이동", "옮기"),
    ("숨김", "숨겨진", "숨은"),
    ("권한", "퍼미션"),
    ("실행", "구동"),
    ("명령", "명령어", "커맨드"),
    ("저장소", "리포지토리", "레포지토리", "리포지터리"),
    ("로그", "기록"),
    ("예약", "스케줄"),
    ("공개키", "공개 키"),
    ("개인키", "개인 키", "비밀키"),
    ("원격", "리모트"),
    ("서버", "호스트"),
    ("실시간", "계속"),
    ("용량", "크기", "사이즈"),
    ("랜덤", "무작위", "임의"),
)

# Korean writes the name of a product, a language or a technology in Hangul as it sounds (자바,
# 와이파이), where a translated page keeps the name in Latin letters: general usage, none of a
# page's (one syllable alone is left out: it is too often part of another word, 램 of 프로그램)
_KO_NAMES: Final = (
    ("자바스크립트", "javascript"),
    ("타입스크립트", "typescript"),
    ("자바", "java"),
    ("파이썬", "python"),
    ("코틀린", "kotlin"),
    ("스위프트", "swift"),
    ("러스트", "rust"),
    ("루비", "ruby"),
    ("깃허브", "github"),
    ("깃랩", "gitlab"),
    ("도커", "docker"),
    ("쿠버네티스", "kubernetes"),
    ("엔진엑스", "nginx"),
    ("아파치", "apache"),
    ("포스트그레스", "postgres", "postgresql"),
    ("마이에스큐엘", "mysql"),
    ("레디스", "redis"),
    ("몽고디비", "mongodb"),
    ("우분투", "ubuntu"),
    ("데비안", "debian"),
    ("페도라", "fedora"),
    ("크롬", "chrome"),
    ("파이어폭스", "firefox"),
    ("사파리", "safari"),
    ("파인더", "finder"),
    ("타임머신", "time machine"),
    ("스포트라이트", "spotlight"),
    ("이맥스", "emacs"),
    ("와이파이", "wi-fi", "wifi"),
    ("블루투스", "bluetooth"),
    ("이더넷", "ethernet"),
    ("유튜브", "youtube"),
    ("피디에프", "pdf"),
    ("제이슨", "json"),
    ("엑셀", "excel"),
    ("유에스비", "usb"),
    ("시피유", "cpu"),
    ("지피유", "gpu"),
    ("와이어샤크", "wireshark"),
    ("브이피엔", "vpn"),
    ("에스에스에이치", "ssh"),
    ("아이피", "ip"),
    ("디엔에스", "dns"),
)

GROUPS: Final[dict[str, tuple[tuple[str, ...], ...]]] = {"zh": _ZH, "ja": _JA, "ko": _KO + _KO_NAMES}


@cache
def _members(language: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each member of `language`'s groups with its group, the longest first."""
    pairs = [(word.lower(), group) for group in GROUPS.get(language, ()) for word in group]
    return tuple(sorted(pairs, key=lambda pair: -len(pair[0])))


def same_words(text: str, language: str) -> list[tuple[str, str]]:
    """(the word `text` holds, a word of the same meaning) for each group of `language` that one
    of its words is found in `text`; a word inside a longer one found (`屏幕截图` holds `截图`)
    names nothing more."""
    text = text.lower()  # `MAC地址`, `mac地址`
    found: list[tuple[str, str]] = []
    covered: list[tuple[int, int]] = []
    named: set[tuple[str, ...]] = set()
    for word, group in _members(language):
        at = text.find(word)
        while at >= 0 and any(start <= at and at + len(word) <= end for start, end in covered):
            at = text.find(word, at + 1)
        if at < 0:
            continue
        covered.append((at, at + len(word)))
        if group in named:
            continue
        named.add(group)
        found += [(word, other) for other in group if other.lower() != word and other.lower() not in text]
    return found

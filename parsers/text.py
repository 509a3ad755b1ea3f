"""Text normalisation shared by the post-text parsers (votes, inquiries, speed requests).

Two different notions of "the same text" live here, on purpose:

* :func:`normalize` is for *reading structure* (labels, keywords, punctuation). It is lenient:
  NFKC (full-width letters, digits and punctuation fold to ASCII, so ``投票对象：`` and
  ``投票对象:`` read alike, as the rules demand: 投票格式中标点符号不区分全半角), invisible
  characters removed, whitespace collapsed.
* :func:`name_key` is for *accepting a name*. It is strict: only canonical equivalence (NFC),
  surrounding whitespace and letter case are forgiven. Full-width letters, zero-width characters
  and traditional/simplified variants make a *different* name, because a lookalike that is
  accepted silently is how a vote that looks like "Snow_风" ends up counted for someone else (or
  for no one). Lookalikes are surfaced by :func:`similar_names` as suggestions for the director.

Pure: no I/O, no clock.
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "MappedText",
    "fold_lookalikes",
    "is_invisible",
    "is_separator",
    "loose_key",
    "name_key",
    "normalize",
    "normalize_lines",
    "normalize_mapped",
    "similar_names",
    "visible_repr",
]

# Invisible characters that are not in the Unicode "Cf" (format) category but render as nothing.
_EXTRA_INVISIBLE = frozenset(
    "\u034f"  # combining grapheme joiner
    "\u115f\u1160\u3164\uffa0"  # Hangul fillers
    "\u17b4\u17b5"  # Khmer inherent vowels
    "\u180b\u180c\u180d\u180e\u180f"  # Mongolian free variation selectors / vowel separator
    "\u2800"  # braille pattern blank (used to fake empty names)
)

# Characters that end a line for our purposes (str.splitlines() agrees on all of them).
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")

# Punctuation that NFKC leaves alone but that is the same mark in another width or shape.
_PUNCT_TABLE = str.maketrans(
    {
        "“": '"',
        "”": '"',
        "„": '"',
        "‟": '"',
        "〝": '"',
        "〞": '"',
        "‘": "'",
        "’": "'",
        "‚": "'",
        "‛": "'",
        "∶": ":",  # ratio sign, offered by some input methods as a colon
        "꞉": ":",  # modifier letter colon
        "〜": "~",
        "‐": "-",
        "‑": "-",
        "‒": "-",
        "–": "-",
        "—": "-",
        "―": "-",
    }
)


def is_invisible(ch: str) -> bool:
    """True for a character that renders as nothing (zero-width, bidi control, selector...)."""
    cp = ord(ch)
    if ch in _EXTRA_INVISIBLE:
        return True
    if 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF:  # variation selectors
        return True
    cat = unicodedata.category(ch)
    if cat == "Cf":  # U+200B-U+200F, U+202A-U+202E, U+2060-U+206F, U+FEFF, U+00AD, tags ...
        return True
    return cat == "Cc" and not ch.isspace()


def is_separator(ch: str) -> bool:
    """Whitespace, punctuation or symbol: something that can end a lead-in before a label."""
    return ch.isspace() or unicodedata.category(ch)[0] in "PS"


def _remove_invisible(s: str) -> str:
    return "".join(ch for ch in s if not is_invisible(ch))


def _normalize_once(s: str) -> str:
    s = _remove_invisible(s)
    s = unicodedata.normalize("NFKC", s).translate(_PUNCT_TABLE)
    s = _remove_invisible(s)
    return " ".join(s.split())


def normalize(s: str) -> str:
    """Lenient reading form: invisible characters removed, NFKC, punctuation of either width
    unified, every whitespace run (line breaks included) turned into one space, stripped.

    Idempotent: ``normalize(normalize(s)) == normalize(s)``.
    """
    out = _normalize_once(s)
    # NFKC is idempotent, but removing a character can bring two others together; settle.
    for _ in range(3):
        again = _normalize_once(out)
        if again == out:
            break
        out = again
    return out


def normalize_lines(s: str) -> str:
    """:func:`normalize` applied per line; line breaks kept as ``\\n`` (empty lines kept)."""
    return "\n".join(normalize(line) for line in s.splitlines())


@dataclass(frozen=True, slots=True)
class MappedText:
    """A line-preserving reading form of ``raw`` with, for each of its characters, the index in
    ``raw`` of the character it came from. Parsers match labels in ``text`` and cut names out of
    ``raw`` (names must keep their exact characters, see :func:`name_key`)."""

    raw: str
    text: str
    index: tuple[int, ...]

    def raw_span(self, start: int, end: int) -> tuple[int, int]:
        """The raw ``[start, end)`` covering reading-form ``[start, end)`` (empty -> empty)."""
        if start >= end:
            pos = self.index[start] if start < len(self.index) else len(self.raw)
            return pos, pos
        return self.index[start], self.index[end - 1] + 1

    def raw_slice(self, start: int, end: int) -> str:
        a, b = self.raw_span(start, end)
        return self.raw[a:b]


def normalize_mapped(raw: str) -> MappedText:
    """Character-wise reading form that keeps line breaks and a map back to ``raw``.

    Each character is NFKC-normalised on its own (so combining sequences are not composed, which
    does not matter for finding labels); invisible characters are dropped; any line break becomes
    ``\\n``; other whitespace runs become one space; spaces at line starts and ends are dropped.
    """
    out: list[str] = []
    idx: list[int] = []

    def trim_trailing_space() -> None:
        while out and out[-1] == " ":
            out.pop()
            idx.pop()

    prev_cr = False
    for i, ch in enumerate(raw):
        if ch in _LINE_BREAKS:
            if ch == "\n" and prev_cr:
                prev_cr = False
                continue  # \r\n is one break
            prev_cr = ch == "\r"
            trim_trailing_space()
            out.append("\n")
            idx.append(i)
            continue
        prev_cr = False
        if is_invisible(ch):
            continue
        for c in unicodedata.normalize("NFKC", ch).translate(_PUNCT_TABLE):
            if is_invisible(c):
                continue
            if c.isspace():
                if c in _LINE_BREAKS:
                    trim_trailing_space()
                    out.append("\n")
                    idx.append(i)
                elif out and out[-1] not in " \n":
                    out.append(" ")
                    idx.append(i)
                continue
            out.append(c)
            idx.append(i)
    trim_trailing_space()
    return MappedText(raw=raw, text="".join(out), index=tuple(idx))


def name_key(s: str) -> str:
    """Comparison key for accepting a name: NFC, surrounding whitespace stripped, casefolded.

    Discuz usernames are unique regardless of letter case (the member table uses a
    case-insensitive collation), so case is forgiven. Nothing else is: a full-width letter, a
    zero-width character or a traditional-character variant gives a different key.
    """
    s = unicodedata.normalize("NFC", s.strip())
    return unicodedata.normalize("NFC", s.casefold())


# --- lookalike folding: for suggestions only, never for accepting a name ----------------------

# Each entry: simplified character first, then its traditional / variant forms.
_TRAD_SIMP_GROUPS = (
    "饺餃 馄餛 饨飩 面麵麪 条條 烧燒 卖賣 汤湯 圆圓 卷捲 风風 树樹 见見 猪豬 龙龍 马馬 鸟鳥 "
    "鱼魚 云雲 东東 书書 长長 门門 问問 间間 开開 关關 乐樂 华華 国國 学學 爱愛 梦夢 灵靈 "
    "离離 难難 杀殺 说說 话話 语語 词詞 发發髮 后後 里裏裡 这這 为為爲 们們 个個 来來 时時 "
    "会會 对對 过過 还還 点點 无無 与與 从從 儿兒 几幾 车車 飞飛 凤鳳 鸡雞 猫貓 狮獅 虾蝦 "
    "饼餅 馒饅 头頭 饭飯 馅餡 团團糰 叶葉 红紅 绿綠 蓝藍 银銀 铁鐵 钱錢 宝寶 剑劍 枪槍 弹彈 "
    "让讓 亚亞 伦倫 维維 尔爾 罗羅 兰蘭 丽麗 晓曉 岁歲 乡鄉 镇鎮 师師 导導 贝貝 丝絲 线線 "
    "纸紙 经經 级級 结結 给給 约約 纪紀 记記 认認 证證 读讀 谁誰 请請 谢謝 变變 凉涼 冻凍 "
    "净淨 泪淚 灯燈 烟煙 热熱 爷爺 独獨 玛瑪 环環 现現 画畫 盘盤 礼禮 种種 笔筆 简簡 紧緊 "
    "缘緣 网網 义義 习習 圣聖 闻聞 肠腸 胜勝 脑腦 节節 苏蘇 药藥 莲蓮 萝蘿 虫蟲 装裝 观觀 "
    "规規 视視 计計 论論 设設 诗詩 谈談 谜謎 贵貴 赛賽 赵趙 轻輕 辉輝 边邊 达達 运運 进進 "
    "远遠 连連 选選 遗遺 郑鄭 酱醬 钟鐘鍾 钢鋼 铃鈴 锁鎖 错錯 镜鏡 闪閃 阳陽 阴陰 阵陣 陆陸 "
    "陈陳 随隨 隐隱 雾霧 静靜 顶頂 顺順 须須鬚 顾顧 领領 颜顏 题題 飘飄 馆館 驴驢 骑騎 鲁魯 "
    "鲜鮮 鸣鳴 鸭鴨 鹅鵝 鹤鶴 鹰鷹 麦麥 齐齊 龟龜 乌烏 乔喬 买買 乱亂 亲親 仪儀 价價 众眾 "
    "优優 伟偉 传傳 伤傷 体體 余餘 侠俠 侣侶 儿兒 党黨 兴興 养養 兽獸 写寫 军軍 农農 冯馮 "
    "击擊 刘劉 刚剛 剧劇 办辦 动動 劳勞 区區 医醫 协協 单單 卫衛 历歷曆 压壓 县縣 参參 双雙 "
    "号號 吗嗎 员員 响響 园園 围圍 图圖 场場 坏壞 块塊 坚堅 声聲 处處 备備 复復複 夹夾 夺奪 "
    "奖獎 妈媽 孙孫 宁寧 实實 审審 宽寬 宾賓 寻尋 寿壽 将將 尘塵 层層 属屬 岛島 岭嶺 币幣 帅帥 "
    "带帶 帮幫 干幹乾 广廣 庄莊 庆慶 库庫 应應 废廢 异異 弃棄 张張 弯彎 归歸 当當 录錄 忆憶 "
    "忧憂 怀懷 态態 总總 恋戀 恶惡 悬懸 惊驚 惨慘 愿願 戏戲 战戰 执執 扫掃 扬揚 护護 报報 "
    "担擔 拥擁 择擇 挂掛 挥揮 换換 据據 摄攝 摇搖 敌敵 数數 斗鬥 断斷 旧舊 显顯 晋晉 暂暫 "
    "术術 机機 杂雜 权權 杨楊 极極 构構 标標 样樣 桥橋 检檢 楼樓 横橫 欢歡 欧歐 毕畢 气氣 "
    "汉漢 沟溝 没沒 泽澤 洁潔 测測 浓濃 涛濤 润潤 渐漸 温溫 湾灣 满滿 滚滾 潜潛 澜瀾 灭滅 "
    "灿燦 炼煉 烂爛 烛燭 烦煩 牵牽 状狀 犹猶 猎獵 献獻 电電 疗療 疯瘋 监監 盖蓋 着著 码碼 "
    "确確 祸禍 稳穩 窃竊 竞競 筑築 签簽 类類 系係繫 纠糾 纯純 纳納 纵縱 练練 组組 细細 织織 "
    "终終 绝絕 统統 继繼 续續 绳繩 编編 缩縮 罚罰 联聯 聪聰 肃肅 胶膠 脏臟髒 脸臉 腾騰 艺藝 "
    "芦蘆 苍蒼 范範 荣榮 获獲穫 营營 虑慮 虚虛 虽雖 蚁蟻 袜襪 觉覺 览覽 译譯 试試 询詢 谊誼 "
    "谱譜 贼賊 赌賭 赖賴 赶趕 踪蹤 转轉 轮輪 软軟 较較 输輸 辞辭 辩辯 迈邁 违違 迹跡 遥遙 "
    "邮郵 邻鄰 郁鬱 钓釣 钻鑽 铜銅 链鏈 锅鍋 锐銳 锦錦 闯闖 闹鬧 阅閱 队隊 阶階 际際 险險 "
    "雏雛 韩韓 页頁 项項 顽頑 预預 频頻 颗顆 饥飢饑 饮飲 饰飾 饱飽 饿餓 骂罵 骗騙 鲸鯨 鸽鴿 "
    "鹏鵬 龄齡 皑皚 凯凱 岚嵐 瑶瑤 莹瑩 钰鈺 琼瓊 玺璽 怡 靓靚 倾傾 烨燁 炜煒 晖暉 颖穎"
)


def _build_trad_table() -> dict[int, str]:
    table: dict[int, str] = {}
    for group in _TRAD_SIMP_GROUPS.split():
        simp = group[0]
        for trad in group[1:]:
            table[ord(trad)] = simp
    return table


_TRAD_TO_SIMP = _build_trad_table()

# A few Cyrillic / Greek letters that look exactly like Latin ones.
_CONFUSABLES = str.maketrans(
    {
        "а": "a",
        "е": "e",
        "о": "o",
        "р": "p",
        "с": "c",
        "х": "x",
        "у": "y",
        "і": "i",
        "ѕ": "s",
        "ј": "j",
        "ο": "o",
        "ν": "v",
        "α": "a",
        "κ": "k",
        "τ": "t",
        "ι": "i",
    }
)


def fold_lookalikes(s: str) -> str:
    """Fold characters a reader cannot tell apart: invisible characters, width, case,
    traditional -> simplified (a small table of common characters), a few Cyrillic/Greek
    letters that look Latin. For suggestions only."""
    s = normalize(s).casefold()
    s = unicodedata.normalize("NFKC", s)
    return s.translate(_TRAD_TO_SIMP).translate(_CONFUSABLES)


def loose_key(s: str) -> str:
    """:func:`fold_lookalikes` with all whitespace removed."""
    return "".join(fold_lookalikes(s).split())


def similar_names(
    raw: str, candidates: Sequence[str], *, limit: int = 3, cutoff: float = 0.4
) -> tuple[str, ...]:
    """Up to ``limit`` candidates nearest to ``raw``, best first; lookalikes of ``raw`` (equal
    after :func:`loose_key`) come first. Deterministic: ties keep the candidates' order.
    Suggestions only: a caller must never treat the first one as a match."""
    key = loose_key(raw)
    scored: list[tuple[float, int, str]] = []
    seen: set[str] = set()
    for pos, cand in enumerate(candidates):
        if cand in seen:
            continue
        seen.add(cand)
        ckey = loose_key(cand)
        if not key or not ckey:
            continue
        score = 2.0 if key == ckey else difflib.SequenceMatcher(None, key, ckey).ratio()
        if score >= cutoff:
            scored.append((-score, pos, cand))
    scored.sort()
    return tuple(cand for _, _, cand in scored[:limit])


def visible_repr(s: str) -> str:
    """``s`` with invisible characters shown as ``<U+200D>`` so a director can see them."""
    return "".join(f"<U+{ord(ch):04X}>" if is_invisible(ch) else ch for ch in s)

"""Offline text normalization: words, stopwords and a light English stemmer.

The stemmer only folds case, plurals, possessives and the commonest verb endings ("-ing", "-ed"); it is meant to
merge surface forms of one word, not to conflate related words. Both the lexical channel and the keyword extractor
use it, so query and memory agree on what a "term" is.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import regex

# Words are runs of letters and digits of any script ("café", "машину", "سيارة", "Ωμέγα"), with an English
# apostrophe suffix ("don't", "Caroline's"; "l'été" stays "l", "été"). Combining marks are part of their word
# (Python's \w leaves them out): Latin diacritics written apart, Hebrew points, Arabic harakat, and the vowel signs
# of the Indic and Southeast Asian scripts (their blocks whole, but for the Devanagari dandas that end a sentence).
# Scripts written without spaces between words are the exception: a run of them is a clause, not a word, and is cut
# into overlapping character bigrams (a lone character stays a unigram), the usual dictionary-free unit of full-text
# search in those scripts (Lucene's CJKAnalyzer: "北京大学" -> "北京", "京大", "大学"). They are Han, Hiragana and
# Katakana; Thai, Lao, Khmer and Myanmar, whose word boundaries otherwise need a dictionary (ICU's), so a run of
# them held no word a question could name ("ข้าวผัดกุ้ง" inside "ฉันชอบกินข้าวผัดกุ้งมาก"); and Hangul, as
# CJKAnalyzer does: Korean separates phrases (eojeol) with spaces, but attaches its particles and endings to the
# word ("김치찌개를", "김치찌개가"), and bigrams find the noun in all of them (Lee & Ahn 1996, n-grams for Korean
# retrieval). A character is a code point: the vowel and tone marks of the Southeast Asian scripts are characters
# of a bigram like the letters (bigrams of code points match their cl100k tokens in context more often than bigrams
# of whole syllables, docs/retrieval.md).
# ASCII text (most of it) is split by the ASCII rule alone; other text by one class of word characters, and only
# the few runs holding an underscore or a script without spaces are split further.
_CJK = ("\u0e01-\u0e4e\u0e81-\u0ecf\u0edc-\u0edf\u1000-\u103f\u1050-\u109f\u1100-\u11ff\u1780-\u17d3"
        "\u17d7\u17dc\u17dd\u17f0-\u17f9\u19e0-\u19ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf"
        "\u4e00-\u9fff\ua960-\ua97f\ua9e0-\ua9fe\uaa60-\uaa7f\uac00-\ud7af\ud7b0-\ud7ff\uf900-\ufaff"
        "\uff66-\uff9f\uffa0-\uffdc")  # their sentence punctuation (Thai ๏ ๚ ๛, Myanmar ၊ ။, Khmer ។ ៕) left out
# and their decimal digits (Thai ๐-๙, Lao, Khmer, Myanmar): a number in them is a word, as in the other scripts'
# digits ("๒๕๖๗" is 2567: digit_forms)
_MARKS = ("\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed"
          "\u0900-\u0963\u0966-\u0dff\u0f00-\u0fff")
WORD_RE = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)?")  # ASCII text
_ANY_WORD_RE = re.compile(rf"[\w{_MARKS}{_CJK}]+(?:['’][A-Za-z]+)?")
_CJK_RE = re.compile(rf"[{_CJK}]")
_SPLIT_RE = re.compile(rf"[_{_CJK}]")
_PARTS_RE = re.compile(rf"[{_CJK}]+|[^_{_CJK}]+")

STOPWORDS = frozenset(
    """
a about above after again against all am an and any are aren't as at be because been before being below between
both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each few for from
further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself him himself his how
how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most mustn't my myself no nor not of
off on once only or other ought our ours ourselves out over own same shan't she she'd she'll she's should shouldn't
so some such than that that's the their theirs them themselves then there there's these they they'd they'll they're
they've this those through to too under until up very was wasn't we we'd we'll we're we've were weren't what what's
when when's where where's which while who who's whom why why's with won't would wouldn't you you'd you'll you're
you've your yours yourself yourselves also just really yeah yes oh ok okay hey hi hello thanks thank wow lol like
get got gonna wanna will would could should might may must shall s t d ll m re ve
does did done doing thing things lot lots much many well still even ever every one ones something anything
""".split()
)

# Question scaffolding: words that shape a question but never name what it asks about.
QUESTION_WORDS = frozenset(
    """what when where which who whom whose why how kind type sort name names tell describe mention mentioned
    give many much""".split()
)

_IRREGULAR = {
    "children": "child", "men": "man", "women": "woman", "people": "person", "mice": "mouse", "feet": "foot",
    "teeth": "tooth", "geese": "goose", "went": "go", "gone": "go", "ran": "run", "saw": "see", "seen": "see",
    "bought": "buy", "made": "make", "took": "take", "taken": "take", "gave": "give", "given": "give",
    "met": "meet", "felt": "feel", "kept": "keep", "left": "leave", "told": "tell", "thought": "think",
    "brought": "bring", "began": "begin", "begun": "begin", "wrote": "write", "written": "write",
    "ate": "eat", "eaten": "eat", "drew": "draw", "drawn": "draw", "sang": "sing", "sung": "sing",
    "won": "win", "lost": "lose", "found": "find", "built": "build", "taught": "teach", "caught": "catch",
    # the other common irregular verbs and plurals; a form that is also another common word is left out ("rose",
    # "bound", "ground", "wound", "bore", "lay", "lit", "bit", "shot", "fed", "broke", "drunk", "lives", "leaves")
    "arose": "arise", "arisen": "arise", "awoke": "awake", "awoken": "awake", "beaten": "beat", "became": "become",
    "bent": "bend", "bled": "bleed", "blew": "blow", "blown": "blow", "broken": "break", "bred": "breed",
    "burnt": "burn", "chose": "choose", "chosen": "choose", "clung": "cling", "came": "come", "crept": "creep",
    "dealt": "deal", "dug": "dig", "drank": "drink", "drove": "drive", "driven": "drive", "dreamt": "dream",
    "fell": "fall", "fallen": "fall", "fought": "fight", "fled": "flee", "flung": "fling", "flew": "fly",
    "flown": "fly", "forbade": "forbid", "forbidden": "forbid", "forgot": "forget", "forgotten": "forget",
    "forgave": "forgive", "forgiven": "forgive", "froze": "freeze", "frozen": "freeze", "got": "get",
    "gotten": "get", "grew": "grow", "grown": "grow", "hung": "hang", "heard": "hear", "hid": "hide",
    "hidden": "hide", "held": "hold", "knelt": "kneel", "knew": "know", "known": "know", "laid": "lay",
    "led": "lead", "leapt": "leap", "learnt": "learn", "lent": "lend", "meant": "mean", "paid": "pay",
    "proven": "prove", "rode": "ride", "ridden": "ride", "rang": "ring", "risen": "rise", "said": "say",
    "sought": "seek", "sold": "sell", "sent": "send", "sewn": "sew", "shook": "shake", "shaken": "shake",
    "shone": "shine", "shown": "show", "shrank": "shrink", "shrunk": "shrink", "sank": "sink", "sunk": "sink",
    "sat": "sit", "slept": "sleep", "slid": "slide", "spoke": "speak", "spoken": "speak", "sped": "speed",
    "spent": "spend", "spun": "spin", "sprang": "spring", "sprung": "spring", "stood": "stand", "stole": "steal",
    "stolen": "steal", "stuck": "stick", "stung": "sting", "stank": "stink", "struck": "strike",
    "swore": "swear", "sworn": "swear", "swept": "sweep", "swam": "swim", "swum": "swim", "swung": "swing",
    "tore": "tear", "torn": "tear", "threw": "throw", "thrown": "throw", "understood": "understand",
    "woke": "wake", "woken": "wake", "wore": "wear", "worn": "wear", "wove": "weave", "woven": "weave",
    "wept": "weep", "withdrew": "withdraw", "withdrawn": "withdraw",
    "knives": "knife", "wolves": "wolf", "halves": "half", "shelves": "shelf", "thieves": "thief",
    "wives": "wife",
}


#: Words up to this long have their stems kept (the last 200,000 of them); a longer one (a pasted key, a blob of
#: base64 in a message) is stemmed each time, so the cache holds at most 200,000 short words and their stems, not
#: every long word the process read twice over (200 messages with a 20,000-character key: 8 MB).
STEM_KEPT_CHARS = 64


def stem(word: str) -> str:
    """Fold ``word`` to a light stem: lower case, no possessive, no plural, no -ing/-ed."""
    return _kept_stem(word) if len(word) <= STEM_KEPT_CHARS else stem_once(word)


@lru_cache(maxsize=200_000)
def _kept_stem(word: str) -> str:
    return stem_once(word)


def stem_once(word: str) -> str:
    """:func:`stem`, without keeping it: for forms that are not words of a text (the inflections a question's word
    might take: most are no word, and kept they would push out the stems of the words read)."""
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    elif "'" in w:
        w = w.split("'", 1)[0]
    if w in _IRREGULAR:  # the stem of its regular form: "made" is "make" as "making" is
        return stem(_IRREGULAR[w])
    if len(w) <= 3 or not w.isalpha():
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("ches") or w.endswith("shes") or w.endswith("xes"):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith("ss") and not w.endswith("us") and not w.endswith("is"):
        w = w[:-1]
    if w.endswith("ing") and len(w) > 5:
        w = _undouble(w[:-3])
    elif w.endswith("ed") and len(w) > 4 and not w.endswith("eed"):
        w = _undouble(w[:-2])
    if len(w) > 3 and w.endswith("e") and not w.endswith("ee"):
        w = w[:-1]
    return w


def _undouble(w: str) -> str:
    if len(w) > 2 and w[-1] == w[-2] and w[-1] not in "lsz":
        return w[:-1]
    return w


# Latin letters without a decomposition that a keyboard without them types as plain letters: German's sharp s as
# "ss" ("Straße" / "Strasse", "Fußball" / "Fussball"; Swiss German writes "ss" always) and its capital "ẞ" as "SS",
# Turkish's dotless "ı" as "i" ("Kadıköy" / "Kadikoy"; its dotted capital "İ" is "I" and a mark already), Dutch's
# "ĳ" as "ij" ("ĳsbaan") and the typesetting ligatures of PDFs and word processors as their letters ("ﬁle").
# Letters of their own elsewhere ("ø", "æ", "ł") are kept: "Kobenhavn" is how a foreigner writes "København", not
# how a Dane's chat does.
# Vietnamese's "đ" is typed "d" by a keyboard without it (Vietnamese chats are often typed without any of their
# marks: "dien thoai" for "điện thoại"), as is Croatian's.
_PLAIN_LATIN = str.maketrans({"ß": "ss", "ẞ": "SS", "ı": "i", "ĳ": "ij", "Ĳ": "IJ", "ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl",
                              "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st", "đ": "d", "Đ": "D"})
# Latin letters past U+024F that fold to ASCII letters: Latin Extended Additional (U+1E00-U+1EFF: Vietnamese's
# letters with two marks, "ệ", "ẵ", "ợ", and those with a dot below or a hook above, "ạ", "ỏ"; "ẞ") and the ligatures
LATIN_BEYOND = frozenset(map(chr, range(0x1E00, 0x1F00))) | frozenset("ﬀﬁﬂﬃﬄﬅﬆ")


def fold(word: str) -> str:
    """``word`` without its diacritics ("café" -> "cafe", "Medellín" -> "Medellin", "naïve" -> "naive"): the
    combining marks of its canonical decomposition dropped, and the Latin letters a keyboard without them types as
    plain ones written so ("Straße" -> "Strasse", "Kadıköy" -> "Kadikoy"); other letters without a decomposition
    ("ø") kept."""
    if word.isascii():
        return word
    return unicodedata.normalize("NFC", "".join(c for c in unicodedata.normalize("NFD", word)
                                                if unicodedata.category(c) != "Mn")).translate(_PLAIN_LATIN)


# Marks a writer adds or leaves out without making another word: Arabic's harakat (the short vowels, tanwin, shadda
# and sukun, U+064B-U+0652), the superscript alef and the Quranic marks, and the tatweel that stretches a word
# ("سيـــارة"). Everyday text leaves the harakat out, teaching and religious text and some chats write them
# ("مَدْرَسَة"): a word is the same word with or without them. Hamza and madda (U+0653-U+0655) are left alone: they are
# letters' parts ("أ" is alef with hamza), which text.clitics spells both ways where chats drop them. Hebrew's points
# likewise (niqqud, the dagesh, the shin and sin dots, and the cantillation marks, U+0591-U+05C7 but for its
# punctuation): children's books, poetry and prayer write them ("שָׁלוֹם"), everyday Hebrew does not ("שלום").
# The nukta of the Indic scripts (Devanagari U+093C, Bengali, Gurmukhi, Gujarati, Oriya, Kannada) too: Hindi and
# Urdu loanwords write it under the letter for a sound Sanskrit lacks ("ज़रूरत", "फ़िल्म"), and chats and much print
# leave it out ("जरूरत", "फिल्म").
_OPTIONAL_MARKS = re.compile("[\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7"
                             "\u0610-\u061a\u0640\u064b-\u0652\u0670\u06d6-\u06ed"
                             "\u093c\u09bc\u0a3c\u0abc\u0b3c\u0cbc]")
# Letters with such marks in one code point: Hebrew's pointed letters (U+FB1D-U+FB4E, "שׁ", "בּ") and the Indic
# letters with a nukta ("ज़", U+095B, which NFC writes as "ज" and the nukta): the letter alone
_POINTED_LETTERS = {c: unicodedata.normalize("NFD", chr(c))[0] for c in (*range(0x0900, 0x0D00), *range(0xFB1D, 0xFB4F))
                    if len(unicodedata.normalize("NFD", chr(c))) > 1
                    and _OPTIONAL_MARKS.fullmatch(unicodedata.normalize("NFD", chr(c))[1:]) is not None}


# The fullwidth forms of the ASCII letters, digits and signs (U+FF01-U+FF5E), which CJK keyboards type in their
# full-width mode ("ＡＢＣ", "ｉＰｈｏｎｅ１５"): the same characters as their ASCII ones, U+FEE0 below.
_FULLWIDTH = re.compile("[\uff01-\uff5e]")
_FULLWIDTH_OFF = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)}


# Half-width katakana (U+FF61-U+FF9F: old terminals, receipts, bank statements, some phones' keyboards: "ｶﾒﾗ",
# "ｺｰﾋｰ"), the voiced ones a letter and a sound mark ("ｶﾞ" is "ガ"), and the full-width ones they stand for.
_HALFWIDTH = re.compile("[\uff61-\uff9f]+")
_TO_HALFWIDTH = {unicodedata.normalize("NFKC", chr(c)): chr(c) for c in range(0xFF61, 0xFFA0)}
_KATAKANA = re.compile("[\u3001-\u3002\u300c-\u300d\u3099-\u309c\u30a1-\u30fc]")


def full_width_kana(text: str) -> str:
    """``text`` with its half-width katakana written in full width ("ｶﾞﾒﾗ" -> "ガメラ")."""
    if text.isascii() or _HALFWIDTH.search(text) is None:
        return text
    return _HALFWIDTH.sub(lambda m: unicodedata.normalize("NFC", unicodedata.normalize("NFKC", m.group())), text)


def half_width_kana(text: str) -> str:
    """``text`` with its katakana written in half width, where they have a half-width form ("ガメラ" -> "ｶﾞﾒﾗ")."""
    if text.isascii() or _KATAKANA.search(text) is None:
        return text
    return "".join(_TO_HALFWIDTH.get(c, c) for c in unicodedata.normalize("NFD", text))


# Japanese writes a word in hiragana or in katakana as the writer likes: katakana for emphasis or a casual tone
# ("ネコ", "ラーメン", "ヤバい"), hiragana for softness ("ねこ", "らーめん", "ありがとー"). The two syllabaries are one
# another's letters 0x60 apart (U+3041-U+3096 and U+30A1-U+30F6; the iteration marks U+309D-U+309E, U+30FD-U+30FE).
_HIRAGANA = re.compile("[\u3041-\u3096\u309d\u309e]")
_KATAKANA_LETTERS = re.compile("[\u30a1-\u30f6\u30fd\u30fe]")
_TO_KATAKANA = {c: c + 0x60 for c in (*range(0x3041, 0x3097), 0x309D, 0x309E)}
_TO_HIRAGANA = {c + 0x60: c for c in _TO_KATAKANA}


def other_kana(text: str) -> set[str]:
    """``text`` with its hiragana written in katakana and with its katakana written in hiragana, where it has them
    ("ねこ" -> {"ネコ"}, "ラーメン" -> {"らーめん"}); the empty set for text without kana."""
    if text.isascii():
        return set()
    out = set()
    if _HIRAGANA.search(text):
        out.add(text.translate(_TO_KATAKANA))
    if _KATAKANA_LETTERS.search(text):
        out.add(text.translate(_TO_HIRAGANA))
    return out - {text}


# Greek accents (the tonos, the dialytika, polytonic breathings and accents): Greek chats and capitals leave them out
# ("Αθηνα", "ΑΘΗΝΑ" for "Αθήνα"). As with Latin accents (lexicon.ACCENT_MIN_LETTERS), a shorter word keeps them:
# Greek tells "ή" (or) from "η" (the) and "πού" (where) from "που" (that) by the accent alone.
_GREEK = re.compile("[\u0370-\u03ff\u1f00-\u1fff]")
_GREEK_ACCENTS = re.compile("[\u0300-\u036f]")
GREEK_MIN_LETTERS = 4


def plain(word: str) -> str:
    """``word`` without the marks a writer adds or leaves out (:data:`_OPTIONAL_MARKS`: "مَدْرَسَة" -> "مدرسة",
    "שָׁלוֹם" -> "שלום"), in ASCII where it writes ASCII in full width ("ｉＰｈｏｎｅ１５" -> "iPhone15"), in
    full-width katakana where it writes them in half width ("ｶﾒﾗ" -> "カメラ") and, in Greek of four letters or more,
    without its accents ("Αθήνα" -> "Αθηνα"); a word made of marks alone is kept as it is."""
    if word.isascii():
        return word
    out = _OPTIONAL_MARKS.sub("", word.translate(_POINTED_LETTERS))
    if _FULLWIDTH.search(out):
        out = out.translate(_FULLWIDTH_OFF)
    if len(out) >= GREEK_MIN_LETTERS and _GREEK.search(out):
        out = unicodedata.normalize("NFC", _GREEK_ACCENTS.sub("", unicodedata.normalize("NFD", out)))
    return full_width_kana(out) or word


# The decimal digits of Arabic-Indic (Arabic), Extended Arabic-Indic (Persian, Urdu), the Indic scripts', and Thai,
# Lao, Khmer and Myanmar. Their chats write numbers in their own digits or in ASCII ones, often both in one
# conversation ("٢٠٢٤" and "2024", "๒๕๖๗" and "2567"): the same number. A run of Thai, Lao, Khmer or Myanmar digits
# is a word of its own, not a run of its script's letters (_CJK): "วันที่ ๕" holds the word "๕".
_DIGIT_ZEROS = (0x30, 0x660, 0x6F0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66, 0xE50, 0xED0,
                0x17E0, 0x1040)
_TO_ASCII_DIGITS = {z + d: 0x30 + d for z in _DIGIT_ZEROS for d in range(10)}


def digit_forms(word: str) -> set[str]:
    """A number ``word`` (decimal digits of one of :data:`_DIGIT_ZEROS`' scripts, "2024", "٢٠٢٤") written in each of
    those scripts' digits; for any other word, the empty set."""
    if not word.isdecimal():
        return set()
    ascii_digits = word.translate(_TO_ASCII_DIGITS)
    if not ascii_digits.isascii():
        return set()
    return {ascii_digits.translate({0x30 + d: z + d for d in range(10)}) for z in _DIGIT_ZEROS}


_CLUSTER = regex.compile(r"\X")  # a grapheme cluster: what a reader sees as one character


# Emoji: a pictograph ("🎸", "❤", "©") or a flag's two regional indicators ("🇯🇵"), with what its grapheme cluster
# joins to it (a presentation selector, a skin tone, a sequence joined by U+200D: "👨‍👩‍👧"). cl100k cuts
# most into bytes ("🎸" is three tokens), which the word rules read as no word: a question of emoji alone ("🎸?",
# "🐶🏥") had no word to look for.
_EMOJI = regex.compile(r"[\p{Extended_Pictographic}\p{Regional_Indicator}]")
# The skin tones (U+1F3FB-U+1F3FF) follow the emoji they colour: "👍🏽" holds "👍"
_SKIN_TONES = regex.compile("[\U0001F3FB-\U0001F3FF]")
EMOJI_SELECTORS = "\ufe0e\ufe0f"  # the text and emoji presentation selectors: "🏖️" is "🏖" shown as an emoji


def emoji(text: str) -> list[str]:
    """The emoji of ``text`` in order, each once: its grapheme clusters that hold a pictograph or a regional
    indicator, without their skin tones ("👍🏽" -> "👍")."""
    if text.isascii():
        return []
    out: list[str] = []
    for m in _CLUSTER.finditer(text):
        c = m.group()
        if _EMOJI.search(c):
            c = _SKIN_TONES.sub("", c)
            if c and c not in out:
                out.append(c)
    return out


def is_emoji(word: str) -> bool:
    """Whether ``word`` opens with an emoji (:func:`emoji`): its tokens are bytes of a symbol, matched anywhere."""
    return bool(word) and not word.isascii() and _EMOJI.match(word) is not None


# The zero-width joiner and non-joiner (U+200D, U+200C) ask a font to join two letters or to keep them apart, and
# change no word. The Indic scripts write them next to a virama: Sinhala's "ශ්‍රී" (Sri) and "ක්‍රම" are a consonant,
# the al-lakuna, a ZWJ and "ර" (the rakaransaya a keyboard types), Devanagari shows a half form ("क्‍ष") or an
# explicit virama ("क्‌ष") with them, Malayalam wrote its chillu letters as a consonant, a virama and a ZWJ
# ("അവന്‍"), and Bengali writes "র‍্য" (ra, ZWJ, virama, ya) for the ya-phala after ra. Keyboards, fonts and
# converters put them in or leave them out, so the same word is typed both ways. Persian writes a ZWNJ before its
# plural and after its verb prefix (:mod:`hippo.text.clitics`). A question is read without them between letters
# (:func:`without_joiners`: they would cut its word in two), and a word with a virama is also looked for with one
# next to its viramas (:func:`joiner_forms`). The ZWJ of an emoji sequence ("👨‍👩‍👧") is no joiner of
# letters and stays.
ZWNJ, ZWJ = "\u200c", "\u200d"
_LETTER_JOINER = re.compile(rf"(?<=[\w{_MARKS}])\u200d(?=[\w{_MARKS}])|\u200c")
_VIRAMA_JOINTS = 8  # the viramas of a word given joiners: a word has one or two (a longer run is no word of speech)


def without_joiners(text: str) -> str:
    """``text`` without its zero-width non-joiners and the zero-width joiners between two letters (or marks)."""
    if ZWJ not in text and ZWNJ not in text:
        return text
    return _LETTER_JOINER.sub("", text)


def joiner_forms(word: str) -> set[str]:
    """``word`` (of a script written with spaces) with a zero-width joiner or non-joiner next to its viramas: one
    after or before one virama at a time, and one after each of them; the empty set for a word without a virama
    ("ශ්රී" -> "ශ්‍රී", ...)."""
    if word.isascii() or is_cjk(word):
        return set()
    at = [k for k, c in enumerate(word) if unicodedata.combining(c) == 9][:_VIRAMA_JOINTS]
    out: set[str] = set()
    for j in (ZWJ, ZWNJ):
        for k in at:
            out.add(word[: k + 1] + j + word[k + 1:])
            out.add(word[:k] + j + word[k:])
        if len(at) > 1:
            out.add("".join(c + (j if k in at else "") for k, c in enumerate(word)))
    return out - {word}


def is_cjk(word: str) -> bool:
    """Whether ``word`` is written in a script whose runs are cut into bigrams (:func:`words`): they match
    anywhere."""
    return bool(word) and _CJK_RE.match(word) is not None


def grapheme_head(text: str, limit: int, *, whole: bool = False) -> str:
    """The longest head of ``text`` within ``limit`` characters that ends between two grapheme clusters (an emoji
    sequence joined by U+200D, a letter with its combining marks, a flag's two letters stay whole). When the first
    cluster alone is longer: its first ``limit`` characters (a length bound holds whatever the text), or with
    ``whole`` nothing."""
    if len(text) <= limit:
        return text
    end = 0
    for m in _CLUSTER.finditer(text):
        if m.end() > limit:
            break
        end = m.end()
    return text[:end] if end or whole else text[:limit]


def regex_folded(text: str) -> str:
    """``text`` lowercased as the regex engine's case-insensitive matching sees it (``re.I``): it also takes the
    dotless i and the long s for "i" and "s", and the dotted capital I for "i". Every case-insensitive match of a
    pattern's literal ASCII text in ``text`` is that literal, lowercased, in the result: a substring test on it
    rules a pattern out before the pattern runs."""
    return text.replace("\u0130", "i").lower().replace("\u0131", "i").replace("\u017f", "s")


def words(text: str) -> list[str]:
    """The words of ``text`` in order: runs of letters and digits, runs of the scripts without spaces (and Hangul)
    as character bigrams."""
    if text.isascii():
        return WORD_RE.findall(text)
    found = _ANY_WORD_RE.findall(text)
    if _SPLIT_RE.search(text) is None:
        return found
    out: list[str] = []
    for w in found:
        if _SPLIT_RE.search(w) is None:
            out.append(w)
            continue
        for part in _PARTS_RE.findall(w):
            if part[0] in "'’":  # an apostrophe suffix cut from a CJK run
                continue
            if len(part) > 2 and _CJK_RE.match(part):
                out.extend(part[i:i + 2] for i in range(len(part) - 1))
            else:
                out.append(part)
    return out


def terms(text: str, *, drop_stopwords: bool = True) -> list[str]:
    """Stemmed content terms of ``text`` in order (with repeats)."""
    out = []
    for w in words(text):
        lw = w.lower().replace("’", "'")
        if drop_stopwords and (lw in STOPWORDS or lw.split("'", 1)[0] in STOPWORDS):
            continue
        out.append(stem(lw))
    return out

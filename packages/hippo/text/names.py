"""Nicknames: "Mel" for Melanie, "Johnny" for John, "Andy" for Andrew, "Bob" for Robert.

A messaging app's export names each person as the phone's owner saved them ("Melanie Hart"), while the people in the
chat, and whoever asks about it, call them what friends do ("What did Mel say about the trip?"). A question naming
a person by a nickname should find that person's messages as the full name does.

:func:`is_nickname` tells whether a capitalised word of a question is a nickname of one word of a speaker's name, by
the regular ways English shortens a given name, and a short list of the common irregular ones:

* the name's first three letters or more: Mel (Melanie), Sam (Samantha), Chris (Christopher), Alex (Alexander);
* those, a doubled last letter or not, and a pet ending "-y", "-ie", "-ey", "-i", "-o" or "-e": Andy (Andrew),
  Jenny (Jennifer), Johnny (John), Timmy (Tim), Katie (Katherine), Dave (David), Steve (Steven), Nate (Nathan);
* the irregular ones, from a list (:data:`IRREGULAR`): Bob (Robert), Bill (William), Mike (Michael), Liz
  (Elizabeth), Peggy (Margaret), Jack (John), Tony (Anthony).

Two letters are too few to tell ("Jo" might be Joanna, Joseph or John), and month and weekday names ("May" is no
Maya, "Jan" no Janet) are never nicknames. A name the question writes out in full matches that name, not the names it
is a nickname of ("Carl" is a speaker's name when a speaker is called Carl).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from hippo.base.errors import InvalidInput
from hippo.text import timeexpr

# Common English given-name diminutives that do not start with the name's first letters.
IRREGULAR: dict[str, tuple[str, ...]] = {
    "bob": ("robert",), "bobby": ("robert",), "rob": ("robert",), "robbie": ("robert",), "bert": ("robert", "albert"),
    "bill": ("william",), "billy": ("william",), "will": ("william",), "liam": ("william",),
    "mike": ("michael",), "mikey": ("michael",), "mick": ("michael",), "dick": ("richard",), "rick": ("richard",),
    "ricky": ("richard",), "jack": ("john",), "ted": ("edward", "theodore"), "ned": ("edward",),
    "liz": ("elizabeth",), "lizzie": ("elizabeth",), "beth": ("elizabeth",), "betty": ("elizabeth",),
    "peggy": ("margaret",), "meg": ("margaret",), "maggie": ("margaret",), "tony": ("anthony", "antonio"),
    "jim": ("james",), "jimmy": ("james",), "jamie": ("james",), "harry": ("henry", "harold"), "hank": ("henry",),
    "chuck": ("charles",), "charlie": ("charles", "charlotte"), "nick": ("nicholas", "nicolas"),
    "tom": ("thomas",), "tommy": ("thomas",), "joe": ("joseph",), "joey": ("joseph",), "becky": ("rebecca",),
    "molly": ("mary",), "polly": ("mary",), "sally": ("sarah",), "larry": ("lawrence", "laurence"),
    "jerry": ("gerald", "jeremy"), "terry": ("terence", "theresa"), "sasha": ("alexander", "alexandra"),
    "xander": ("alexander",), "sandy": ("alexander", "alexandra", "sandra"), "kit": ("christopher",),
    "topher": ("christopher",), "kate": ("katherine", "catherine", "kathryn"), "katie": ("katherine", "catherine"),
    "cathy": ("catherine",), "kathy": ("katherine", "kathryn"), "nancy": ("anne", "ann"), "ellie": ("eleanor",),
    "nell": ("eleanor", "helen"), "trish": ("patricia",), "patty": ("patricia",), "wendy": ("gwendolyn",),
    "gus": ("augustus", "angus"), "zach": ("zachary",), "zack": ("zachary",), "izzy": ("isabel", "isabella"),
    "bella": ("isabella", "isabel"), "sue": ("susan", "suzanne"), "susie": ("susan", "suzanne"),
}

# Pet endings of a shortened name: Andy, Katie, Joey, Dani, Jacko, Dave.
_ENDINGS = ("y", "ie", "ey", "i", "o", "e")
MIN_LETTERS = 3


def _calendar_words() -> frozenset[str]:
    return frozenset(timeexpr.MONTHS) | frozenset(timeexpr.WEEKDAYS) | frozenset(d[:3] for d in timeexpr.WEEKDAYS)


_CALENDAR = _calendar_words()


def is_nickname(short: str, full: str) -> bool:
    """Whether ``short`` is a nickname of the given name ``full`` (one word each, any case); never of itself."""
    for name, value in (("short", short), ("full", full)):
        if not isinstance(value, str):
            raise InvalidInput(f"{name} must be a str, got {type(value).__name__}")
    s, f = short.lower(), full.lower()
    if s == f or not (s.isalpha() and f.isalpha()) or len(s) < 2 or s in _CALENDAR:
        return False
    if f in IRREGULAR.get(s, ()):
        return True
    if len(s) < MIN_LETTERS:
        return False
    if len(s) < len(f) and f.startswith(s):
        return True
    for e in _ENDINGS:
        if not s.endswith(e) or len(s) - len(e) < MIN_LETTERS:
            continue
        stem = s[: -len(e)]
        if f.startswith(stem) or (len(stem) > MIN_LETTERS and stem[-1] == stem[-2] and f.startswith(stem[:-1])):
            return True
    return False


def is_nickname_of_name(word: str, name_words: Iterable[str]) -> bool:
    """Whether ``word`` is a nickname (:func:`is_nickname`) of a capitalised word of a name, given as its words:
    "Mel" of ("Melanie", "Hart"); never of a lower-case name such as a role ("user", "assistant")."""
    return any(w[:1].isupper() and is_nickname(word, w) for w in name_words)


# Chinese, Japanese, Korean and Thai have no capital letters: a question writes a name as any other word. Their first
# person is a word of its own (Chinese 我 and 咱, Japanese 私, 僕, 俺, Korean 나, 내, 저, 제, 우리 with a particle, Thai
# ฉัน, ผม, ดิฉัน, หนู, เรา), so a question asked in the first person is told apart, as "What did I tell Sam?" is. The
# scripts whose first person is an ending of the verb (Arabic, Hebrew, Persian) are not among them.
_NAME_SCRIPT = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7a3\u0e00-\u0e7f]")
_FIRST_PERSON = re.compile(r"[我咱私僕俺]|わたし|あたし|ぼく|おれ|ฉัน|ผม|ดิฉัน|หนู|เรา|"
                           r"(?<![\uac00-\ud7a3])(?:나|내|저|제|우리)(?:는|가|의|를|한테|에게|도|랑|와|하고|만)?"
                           r"(?![\uac00-\ud7a3])")


def uncased_name_word(word: str) -> bool:
    """Whether ``word`` is written in Chinese, Japanese, Korean or Thai, where a name is written as any word is."""
    return _NAME_SCRIPT.match(word) is not None


def first_person_uncased(text: str) -> bool:
    """Whether ``text`` holds a first-person word of Chinese, Japanese, Korean or Thai ("我", "私", "내가", "ฉัน")."""
    return not text.isascii() and _FIRST_PERSON.search(text) is not None

"""The little words Arabic and Hebrew write onto the next word, and the letters Arabic chats type more than one
way. "السيارة" is "the car", "وبالسيارة" "and by the car", "הבית" "the house", "ובבית" "and in the house". A
question that names the car ("سيارة") or the house ("בית") then finds no message that says "the car" or "in the
house", since words are matched whole. A query word in these scripts is also matched with the proclitics each
language attaches, in the order its grammar allows
(:func:`variants`). Of the suffixes, only Persian's plurals, possessives and ezafe (:func:`_persian_forms`); the
Arabic ones (pronouns, plurals) are left as they are.

* **Arabic**: an optional conjunction (و "and", ف "so"), an optional preposition (ب "by, with", ك "like", ل "for"),
  an optional article (ال "the"; ل before ال is written لل). A query word that carries an unambiguous proclitic
  itself (a run ending in the article, or و with three letters or more after it) is first stripped of it, as light
  stemming does (Larkey, Ballesteros & Connell 2002, light10), so "السيارة" also finds "سيارة" and "بسيارة"; a
  word stripped of a lone و keeps its own forms as well ("وزير", minister, finds "الوزير"). The word is also
  spelled as chats type it, with the letters light10 normalises: its first alef with or without hamza or madda
  ("أحمد", "احمد"), a final ة or ه ("مدرسة", "مدرسه"), a final ى or ي ("على", "علي"), and with the kaf, yeh and
  heh of the Arabic, Persian and Urdu keyboards ("كتاب", "کتاب"; "شيراز", "شیراز"; "سالگره", "سالگرہ").
* **Hebrew**: the prefix letters of "משה וכלב": an optional ו "and", an optional ש "that", an optional preposition
  (מ "from", ב "in", כ "as", ל "to"), an optional article ה "the" (written after מ, and left out after ב, כ and ל,
  whose vowel absorbs it: "בבית" is "in the house"). A Hebrew query word is not stripped: its first letters are as
  often the word's own ("שלום" is no ש + "לום"). It is also looked for in its regular plurals (:func:`_hebrew_plurals`:
  "ספר", "ספרים").
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["variants", "is_arabic", "is_hebrew"]

_ARABIC = re.compile(r"[\u0620-\u064a\u066e-\u06d3\u06fa-\u06ff]")  # Arabic letters (not digits or punctuation)
_HEBREW = re.compile(r"[\u05d0-\u05ea]")

_AR_CONJUNCTIONS = ("", "و", "ف")
_AR_PREPOSITIONS = ("", "ب", "ك", "ل")
_AR_ARTICLE = "ال"
# Proclitic runs stripped from a query word (longest first): a conjunction and / or preposition before the article,
# then the article alone (at least two letters left); a lone و with at least three letters left.
_AR_STRIP = tuple(sorted({c + p + _AR_ARTICLE for c in _AR_CONJUNCTIONS for p in _AR_PREPOSITIONS if p != "ل"}
                         | {c + "لل" for c in _AR_CONJUNCTIONS}, key=len, reverse=True))

_HE_CONJUNCTION = ("", "ו")
_HE_RELATIVE = ("", "ש")
_HE_PREPOSITION_ARTICLE = ("", "ה", "מ", "מה", "ב", "כ", "ל")  # ב / כ / ל absorb the article in writing


def is_arabic(word: str) -> bool:
    return bool(word) and _ARABIC.match(word) is not None


def is_hebrew(word: str) -> bool:
    return bool(word) and _HEBREW.match(word) is not None


def _arabic_bases(word: str) -> tuple[str, ...]:
    """The words ``word`` may be with its proclitics taken off: after a run that ends in the article, the rest (the
    article is never a word's own letters); after a lone و, the word as written and the rest (و is often its first
    root letter: "وزير", minister)."""
    for run in _AR_STRIP:
        if word.startswith(run) and len(word) - len(run) >= 2:
            return (word[len(run):],)
    if word.startswith("و") and len(word) >= 4:
        return (word, word[1:])
    return (word,)


_ALEFS = "اأإآ"   # alef, with hamza above or below, with madda: a chat often writes the bare one for all four


# The letters Arabic, Persian and Urdu keyboards type differently for the same letter of the word: kaf (Arabic ك,
# Persian and Urdu ک), yeh (Arabic ي, Persian and Urdu ی, whose final form has no dots) and heh (Arabic and Persian
# ه, Urdu's ہ). A Persian or Urdu chat typed on an Arabic keyboard (or a phone without a Persian layout) writes
# "كتاب" and "شيراز" for "کتاب" and "شیراز"; one keyboard types a whole word, so a word is spelled with each
# keyboard's letters throughout.
_KEYBOARDS = tuple(str.maketrans(dict(zip("كکيیهہ", to))) for to in ("ككييهه", "ککییهه", "ککییہہ"))


def _keyboard_spellings(word: str) -> set[str]:
    """``word`` and as each keyboard of :data:`_KEYBOARDS` types it."""
    return {word} | {word.translate(k) for k in _KEYBOARDS}


def _arabic_spellings(base: str) -> set[str]:
    """``base`` as Arabic is also typed: its first alef with or without hamza or madda, a final ة as ه, a final ى as
    ي and back (the letters light10 normalises; typed chats drop the hamza and the dots), and its kaf, yeh and heh
    as the Arabic, Persian and Urdu keyboards type them (:data:`_KEYBOARDS`)."""
    out = _keyboard_spellings(base)
    if base[:1] in _ALEFS:
        out = {a + w[1:] for w in out for a in _ALEFS}
    for pair in ("ةه", "ىيی"):
        if base[-1:] in pair:
            out |= {w[:-1] + c for w in out for c in pair}
    return out


# Persian writes a zero-width non-joiner (U+200C) between a verb and its prefix می / نمی ("می‌خواهم", I want) and
# between a noun and its plural ها ("کتاب‌ها", books), and chats as often leave it out ("میخواهم", "کتابها"). A
# question's words are read without it (hippo.text.query); a word is also looked for with it at those joints.
ZWNJ = "\u200c"
_FA_PREFIXES = ("نمی", "می")
_FA_SUFFIXES = ("هایی", "های", "ها")


def _with_zwnj(word: str) -> set[str]:
    """``word`` (without a ZWNJ) with one written after its prefix می / نمی and before its plural ها, where it has
    them and at least two letters are left for the stem."""
    out = {word}
    for p in _FA_PREFIXES:
        if word.startswith(p) and len(word) - len(p) >= 2:
            out |= {p + ZWNJ + w[len(p):] for w in out}
            break
    for sfx in _FA_SUFFIXES:
        if word.endswith(sfx) and len(word) - len(sfx) >= 2:
            out |= {w[: -len(sfx)] + ZWNJ + sfx for w in out}
            break
    return out


# Persian writes its plural, its possessive pronouns and the ezafe onto the noun, glued ("دوستانم", my friends;
# "ماشینش", his car; "کتابهایم", my books) or after a ZWNJ ("کتاب‌های", "خانه‌ام"). A question names the noun bare
# ("دوست", "ماشین", "کتاب") or with another of them. A query word in Arabic script of three letters or more is
# also looked for with each of them (:func:`_persian_forms`), after a ZWNJ and glued; a word asked with a plural
# ("کتابها", "کفش‌ها", "کتابهایم") with each of them on its noun. Glued, Persian's plural ها is Arabic's "her" and
# its ی Arabic's "my": on a short Arabic word they write common words ("علي" Ali, "عليها" on her), so a word of
# three letters gets them glued only where a letter Arabic does not write (پ چ ژ گ ک ی) says it is Persian; the
# Arabic suffixes themselves (ه، هم، ك) are left as they are.
_FA_ENDINGS = ("ها", "های", "هایی", "هایم", "هایت", "هایش", "هایمان", "هایتان", "هایشان", "ان", "انم", "انت", "انش",
               "انمان", "انتان", "انشان", "م", "ت", "ش", "مان", "تان", "شان", "ی", "ام", "ات", "اش", "ای")
# the plural ها with what follows it, longest first: what a word asked is stripped of ("کتابهایم" is "کتاب")
_FA_PLURAL = tuple(sorted((e for e in _FA_ENDINGS if e.startswith("ها")), key=len, reverse=True))
_FA_AFTER_ZWNJ = frozenset(e for e in _FA_ENDINGS if e.startswith("ها") or e in ("ام", "ات", "اش", "ای", "ی"))
_FA_MIN_BASE = 3
_FA_LETTERS = frozenset("پچژگکی")  # letters of Persian's alphabet that Arabic does not write
_FA_MIN_GLUED = 4  # the letters of a noun given glued endings when none of them is Persian's own


def _persian_forms(word: str) -> set[str]:
    """The noun of ``word`` (without the plural it ends in, and what follows it, where three letters are left:
    "کتابهایم" is "کتاب") with each Persian ending of :data:`_FA_ENDINGS` after a ZWNJ (the plurals and the
    endings after a vowel) and glued (a noun of :data:`_FA_MIN_GLUED` letters, or of three with a letter of
    :data:`_FA_LETTERS`), in each keyboard's letters; the empty set for a word of fewer than three letters."""
    base = word.replace(ZWNJ, "")
    for sfx in _FA_PLURAL:
        if base.endswith(sfx) and len(base) - len(sfx) >= _FA_MIN_BASE:
            base = base[: -len(sfx)]
            break
    if len(base) < _FA_MIN_BASE:
        return set()
    glued = ("",) if len(base) >= _FA_MIN_GLUED or not _FA_LETTERS.isdisjoint(base) else ()
    return {b + j + e for b in _keyboard_spellings(base) for e in _FA_ENDINGS
            for j in glued + ((ZWNJ,) if e in _FA_AFTER_ZWNJ else ())} | {base}


# Hebrew's regular plurals: "-ים" ("ספר", "ספרים"; "ילד", "ילדים") and "-ות", which takes the place of a final ה or
# ת ("מתנה", "מתנות"; "מכונית", "מכוניות"). A letter with a final form takes its other form before them ("שכן",
# "שכנים"). A noun of three letters or more is also looked for in them, and a word asked in them also in the noun
# (with and without a final ה). The irregular ones ("בית", "בתים") are left as they are.
_HE_PLURALS = ("ים", "ות")
_HE_MIN_BASE = 3
_HE_FINAL = str.maketrans("ךםןףץ", "כמנפצ")
_HE_NOT_FINAL = str.maketrans("כמנפצ", "ךםןףץ")


def _hebrew_plurals(word: str) -> set[str]:
    """``word`` and, for a word of :data:`_HE_MIN_BASE` letters or more, its regular plurals, or (for a word asked in
    one) its noun and the noun's other plural."""
    out = {word}
    for p in _HE_PLURALS:
        if word.endswith(p) and len(word) - len(p) >= _HE_MIN_BASE:
            stem = word[: -len(p)]
            noun = stem[:-1] + stem[-1].translate(_HE_NOT_FINAL)
            return out | {noun, stem + "ה", stem + "ת"} | {stem + q for q in _HE_PLURALS}
    if len(word) >= _HE_MIN_BASE:
        stem = word[:-1] + word[-1].translate(_HE_FINAL)
        out |= {stem + p for p in _HE_PLURALS}
        if word[-1] in "הת":
            out.add(word[:-1] + "ות")
    return out


@lru_cache(maxsize=4096)
def variants(word: str) -> frozenset[str]:
    """``word`` and its forms with the proclitics of its script (Arabic or Hebrew; see the module); in Arabic
    script also with Persian's zero-width non-joiner at its usual joints (:func:`_with_zwnj`) and with Persian's
    endings (:func:`_persian_forms`); for a word of any other script, ``{word}``."""
    if is_arabic(word):
        out = {word}
        if ZWNJ not in word:
            out |= {v for typed in _keyboard_spellings(word) for v in _with_zwnj(typed)}
        # its noun with Persian's plural, possessives and ezafe (after an Arabic article run: "السيارة" is "سيارة")
        out |= {f for root in _arabic_bases(word) for f in _persian_forms(root)}
        for base in {b for root in _arabic_bases(word) for b in _arabic_spellings(root)}:
            for c in _AR_CONJUNCTIONS:
                for p in _AR_PREPOSITIONS:
                    out.add(c + p + base)
                    out.add(c + ("لل" if p == "ل" else p + _AR_ARTICLE) + base)
        return frozenset(out)
    if is_hebrew(word):
        return frozenset(c + r + pa + w for w in _hebrew_plurals(word) for c in _HE_CONJUNCTION for r in _HE_RELATIVE
                         for pa in _HE_PREPOSITION_ARTICLE)
    return frozenset((word,))

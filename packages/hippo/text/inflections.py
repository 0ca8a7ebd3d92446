"""The endings Greek, Bengali and Hindi put on a noun. Greek declines it ("Αθήνα", to Athens "στην Αθήνα", of
Athens "της Αθήνας"; "φίλος", "φίλου", "φίλους"), Bengali writes its case and plural markers onto it ("বিড়াল" a cat,
"বিড়ালের" the cat's, "চট্টগ্রামে" in Chittagong, "বইগুলো" the books), Hindi its plural and oblique case ("किताब" a
book, "किताबें" books, "दोस्तों से" from friends; "बच्चा", "बच्चे", "बच्चों"). A question names the thing in one form
and the chat in another, and words are matched whole. A query word of these scripts is also matched with every
ending of its language (:func:`variants`), as :mod:`hippo.text.russian` does for Russian: the index holds the text
as written, so the forms are generated, not stripped.

The base is the word without the longest ending it ends in, where :data:`MIN_BASE` letters are left
("Αθηνας" is "αθην" + "ας"; "বিড়ালের" "বিড়াল" + "ের"), or else the word itself; every ending of the language is put
on it. In Hindi the base alone is no form (a noun in "-ा" is never written without it: "कमरा" is no "कमर", waist),
so the forms are the word and its base with the endings. Greek words are taken without their accents (a word of
four letters or more is looked for without them: :func:`hippo.text.textnorm.plain`), so an ending that moves the
accent ("ταινία", "ταινιών") is found. Verbs are left as they are (their endings are many more), and so are the
stems whose letters change.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = ["variants", "GREEK_ENDINGS", "BENGALI_ENDINGS", "HINDI_ENDINGS", "MIN_BASE"]

_GREEK = re.compile(r"[\u0370-\u03ff]+")
_DEVANAGARI = re.compile(r"[\u0900-\u097f]+")
_BENGALI = re.compile(r"[\u0980-\u09ff]+")

# The case endings of Greek nouns and adjectives, without accents, in lower case: the second declension ("φίλος",
# "φίλου", "φίλο", "φίλε", "φίλοι", "φίλων", "φίλους"; "βιβλίο", "βιβλία"), the first ("Αθήνα", "Αθήνας";
# "θάλασσα", "θάλασσες"; "αδελφή", "αδελφής"; "μαθητής", "μαθητές"), the neuters in -ι and -μα ("σπίτι", "σπιτιού",
# "σπίτια"; "πρόγραμμα", "προγράμματος", "προγράμματα").
GREEK_ENDINGS: tuple[str, ...] = (
    "ος", "ου", "ο", "ε", "οι", "ων", "ους", "α", "ας", "ες", "η", "ης", "εις", "ι", "ια", "ιου", "ιων", "ιας", "ιες",
    "ις", "μα", "ματος", "ματα", "ματων", "ς")
# Bengali's case markers, plural markers and classifiers, written onto the noun: the genitive ("বিড়ালের", "ঢাকার"),
# the locative ("চট্টগ্রামে", "ঢাকায়", "বাড়িতে"), the objective ("রহিমকে"), the plurals ("ছেলেরা", "বইগুলো",
# "বন্ধুদের") and the classifiers ("বইটা", "বইটি") with their cases.
BENGALI_ENDINGS: tuple[str, ...] = (
    "ের", "র", "য়ের", "ে", "তে", "য়", "য়ে", "কে", "রা", "েরা", "দের", "েদের", "গুলো", "গুলি", "গুলোর", "গুলির",
    "গুলোকে", "গুলোতে", "গুলিতে", "টা", "টি", "টার", "টির", "টাকে", "টিকে", "টাতে", "টিতে")
# Hindi's endings of number and case: a masculine noun in "-ा" ("बच्चा", "बच्चे", "बच्चों"), a feminine one in "-ी"
# ("लड़की", "लड़कियाँ", "लड़कियों"), one ending in a consonant ("किताब", "किताबें", "दोस्तों"), a feminine one in
# "-ा" ("माता", "माताएँ", "माताओं"); the plural's nasal with candrabindu or anusvara, as both are typed.
HINDI_ENDINGS: tuple[str, ...] = (
    "ा", "े", "ी", "ों", "ें", "ियाँ", "ियां", "ियों", "ाएँ", "ाएं", "ाओं", "ओं", "एँ", "एं")
# ... in NFC, and without the nukta of "য়" as chats type it ("ঢাকায", a question is read without it:
# hippo.text.textnorm.plain)
_BENGALI_FORMS: tuple[str, ...] = tuple(sorted(
    {unicodedata.normalize("NFC", e) for e in BENGALI_ENDINGS}
    | {unicodedata.normalize("NFC", unicodedata.normalize("NFD", e).replace("\u09bc", "")) for e in BENGALI_ENDINGS}))
# Letters a base keeps, by script: a shorter one ("Αθ") would find words it is no part of. Bengali writes its
# vowels after a consonant as signs, which are no letters here ("ঢাকা" is two), and its nouns are short ("বই").
MIN_BASE = {"el": 3, "bn": 2, "hi": 2}


def _letters(word: str) -> int:
    return sum(1 for c in word if not unicodedata.combining(c) and unicodedata.category(c)[0] == "L")


def _base(word: str, endings: tuple[str, ...], least: int) -> str:
    """``word`` without the longest of ``endings`` it ends in, where ``least`` letters are left; else ``word``."""
    for e in sorted(endings, key=len, reverse=True):
        if word.endswith(e) and _letters(word[: -len(e)]) >= least:
            return word[: -len(e)]
    return word


@lru_cache(maxsize=4096)
def variants(word: str) -> frozenset[str]:
    """``word``, and its base (see the module) with every ending of its language, for a Greek, Bengali or Hindi word of
    :data:`MIN_BASE` letters or more; ``{word}`` for any other."""
    if _GREEK.fullmatch(word) and _letters(word) >= MIN_BASE["el"]:
        low = word.lower().replace("ς", "σ")
        low = low[:-1] + "ς" if low.endswith("σ") else low
        base = _base(low, GREEK_ENDINGS, MIN_BASE["el"])
        return frozenset({word, low, base} | {base + e for e in GREEK_ENDINGS})
    if _BENGALI.fullmatch(word) and _letters(word) >= MIN_BASE["bn"]:
        base = _base(word, _BENGALI_FORMS, MIN_BASE["bn"])
        return frozenset({word, base} | {base + e for e in _BENGALI_FORMS})
    if _DEVANAGARI.fullmatch(word) and _letters(word) >= MIN_BASE["hi"]:
        base = _base(word, HINDI_ENDINGS, MIN_BASE["hi"])
        return frozenset({word} | {base + e for e in HINDI_ENDINGS})
    return frozenset((word,))

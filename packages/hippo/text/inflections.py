"""The endings Greek, Bengali, Hindi, Georgian and Armenian put on a noun. Greek declines it ("Αθήνα", to Athens
"στην Αθήνα", of Athens "της Αθήνας"; "φίλος", "φίλου", "φίλους"), Bengali writes its case and plural markers onto it ("বিড়াল" a cat,
"বিড়ালের" the cat's, "চট্টগ্রামে" in Chittagong, "বইগুলো" the books), Hindi its plural and oblique case ("किताब" a
book, "किताबें" books, "दोस्तों से" from friends; "बच्चा", "बच्चे", "बच्चों"), Georgian and Armenian their cases and
postpositions ("თბილისი", in Tbilisi "თბილისში", with Nino "ნინოსთან"; "Երևան", in Yerevan "Երևանում"). A question
names the thing in one form
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

__all__ = ["variants", "GREEK_ENDINGS", "BENGALI_ENDINGS", "HINDI_ENDINGS", "GEORGIAN_ENDINGS", "ARMENIAN_ENDINGS",
           "MIN_BASE"]

_GREEK = re.compile(r"[\u0370-\u03ff]+")
_DEVANAGARI = re.compile(r"[\u0900-\u097f]+")
_GEORGIAN = re.compile(r"[\u10a0-\u10ff\u1c90-\u1cbf]+")
_ARMENIAN = re.compile(r"[\u0531-\u0587]+")
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
# Georgian's cases and the postpositions written onto them, singular and plural: "თბილისი" (the nominative's -ი),
# "თბილისში" in, "თბილისის" of, "თბილისიდან" from, "ნინოსთან" with Nino, "ბიჭებმა" the boys (ergative).
GEORGIAN_ENDINGS: tuple[str, ...] = (
    "ი", "მა", "მ", "ს", "ის", "ით", "თ", "ად", "დ", "ო", "ში", "ზე", "თან", "სთან", "ისთან", "დან", "იდან", "ისთვის",
    "სთვის", "ისგან", "სგან", "ივით", "ები", "ებს", "ებმა", "ების", "ებით", "ებად", "ებში", "ებზე", "ებთან",
    "ებიდან", "ებისთვის")
# Armenian's cases, article and possessives, singular and plural: "Երևանում" in, "Երևանի" of, "Երևանից" from,
# "Երևանով" by, "Երևանը" the, "Գյումրու" of Gyumri, "ընկերներս" my friends, "ընկերներիս հետ" with my friends. A
# stem whose vowel drops ("գիրք", "գրքեր") is left as it is.
ARMENIAN_ENDINGS: tuple[str, ...] = (
    "ը", "ն", "ի", "ին", "ից", "ով", "ում", "ս", "դ", "ու", "ուց", "ուն", "իս", "իդ", "ներ", "ները", "ների", "ներին",
    "ներից", "ներով", "ներում", "ներս", "ներդ", "ներիս", "ներիդ", "եր", "երը", "երի", "երին", "երից", "երով", "երում",
    "երս", "երդ", "երիս", "երիդ")
# ... in NFC, and without the nukta of "য়" as chats type it ("ঢাকায", a question is read without it:
# hippo.text.textnorm.plain)
_BENGALI_FORMS: tuple[str, ...] = tuple(sorted(
    {unicodedata.normalize("NFC", e) for e in BENGALI_ENDINGS}
    | {unicodedata.normalize("NFC", unicodedata.normalize("NFD", e).replace("\u09bc", "")) for e in BENGALI_ENDINGS}))
# Letters a base keeps, by script: a shorter one ("Αθ") would find words it is no part of. Bengali writes its
# vowels after a consonant as signs, which are no letters here ("ঢাকা" is two), and its nouns are short ("বই").
MIN_BASE = {"el": 3, "bn": 2, "hi": 2, "ka": 3, "hy": 3}


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
    """``word``, and its base (see the module) with every ending of its language, for a Greek, Bengali, Hindi, Georgian
    or Armenian word of
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
    for lang, script, endings in (("ka", _GEORGIAN, GEORGIAN_ENDINGS), ("hy", _ARMENIAN, ARMENIAN_ENDINGS)):
        if script.fullmatch(word) and _letters(word) >= MIN_BASE[lang]:
            low = word.lower()
            base = _base(low, endings, MIN_BASE[lang])
            # a noun whose stem ends in a vowel keeps it before the endings ("ნინო", "ნინოსთან"; "Գյումրի")
            return frozenset({word, low, base} | {b + e for b in {base, low} for e in endings})
    return frozenset((word,))

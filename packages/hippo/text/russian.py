"""Russian case endings. A Russian noun or adjective changes its ending with its role in the sentence: "машина" (a
car, the subject) is "машину" when bought, "машиной" when driven, "машине" when sat in. A question names the thing
in one case ("Какого цвета машина?") and the chat in another ("Я купила новую машину"), and words are matched whole.
A Cyrillic query word of four letters or more is also matched in the other case endings of its stem
(:func:`variants`).

The stem is Dolamic & Savoy's light stemmer ("Indexing and Searching Strategies for the Russian Language", JASIST
2009; Lucene's RussianLightStemmer), which they found to serve Russian retrieval as well as an aggressive one:
- a case ending comes off: one of four letters from a word of more than six, of three from one of more than five,
  of two from more than four, of one from more than three (:data:`STRIP`);
- then a final "ь" or "и" (more than three letters left), or the second "н" of a final "нн".

Where hippo departs from it: its index is of the text as written, so forms are generated, not stripped. The stem
before and after the last step is matched with every ending of :data:`ENDINGS`: Savoy's endings and the ones his
last step makes unneeded in stripping ("ии", "ью": "истории", "тетрадью"); "длинн" + "ая" is "длинная", "истор" +
"ии" is "истории". A soft "ю" also comes off the query word ("неделю" is "недел"). A vowel that drops before an
ending (:func:`_fleeting`: "подарок", "подарка"; "отец", "отца"; "кошелёк", "кошелька") is dropped and put back both
ways. Verbs are left as they are (their endings are many more), and so are the stems whose consonant changes or that
are shorter than four letters ("друг", "друзья"; "день", "дня").
The endings are Russian's; the other Cyrillic languages share most of them.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["variants", "stem", "is_cyrillic", "ENDINGS", "STRIP"]

_CYRILLIC = re.compile(r"[\u0400-\u04ff]+")

# Dolamic & Savoy's case endings, by length, and the word length above which each length comes off.
STRIP: tuple[tuple[int, tuple[str, ...]], ...] = (
    (6, ("иями", "оями")),
    (5, ("иям", "иях", "оях", "ями", "оям", "оьв", "ами", "его", "ему", "ери", "ими", "ого", "ому", "ыми", "оев")),
    (4, ("ая", "яя", "ях", "юю", "ах", "ею", "их", "ия", "ию", "ьв", "ою", "ую", "ям", "ых", "ея", "ам", "ем", "ей",
         "ём", "ев", "ий", "им", "ое", "ой", "ом", "ов", "ые", "ый", "ым", "ми")),
    (3, ("а", "е", "и", "о", "у", "й", "ы", "я", "ь", "ю")),
)
ENDINGS: tuple[str, ...] = tuple(sorted({e for _, group in STRIP for e in group} | {"ии", "ью"},
                                        key=lambda e: (-len(e), e)))


def is_cyrillic(word: str) -> bool:
    return bool(word) and _CYRILLIC.fullmatch(word) is not None


def _without_case(low: str) -> str:
    for above, group in STRIP:
        if len(low) > above and low.endswith(group):
            return low[:-len(next(e for e in group if low.endswith(e)))]
    return low


def stem(word: str) -> str:
    """The light stem of ``word`` in lower case (see the module)."""
    low = _without_case(word.lower())
    if len(low) > 3 and low[-1] in "ьи":
        low = low[:-1]
    elif len(low) > 3 and low.endswith("нн"):
        low = low[:-1]
    return low


_CONSONANTS = frozenset("бвгджзйклмнпрстфхцчшщ")
# The nouns in -ок, -ёк, -ек, -ец whose vowel drops before an ending ("подарок", "подарка"; "кошелёк", "кошелька";
# "отец", "отца"; "боец", "бойца"): the stem without it, a "ё" or "е" after "л" as "ь" and after a vowel as "й"
_FLEETING = re.compile(r"([оёе])([кц])$")


def _fleeting(low: str) -> tuple[set[str], set[str]]:
    """(the stems without the vowel that ``low``, a nominative, drops before an ending; the nominatives that
    ``low``, a stem without that vowel, is of)."""
    stems: set[str] = set()
    m = _FLEETING.search(low)
    if m is not None and len(low) >= 4:
        head, vowel, last = low[:m.start()], m.group(1), m.group(2)
        if head[-1:] in _CONSONANTS and (vowel == "о" or last == "ц" or head[-1] == "л"):
            stems.add(head + ("ь" if head[-1] == "л" and vowel != "о" else "") + last)  # "подарк", "кошельк"
        elif head[-1:] in "аоуыэяёюие" and head and vowel == "е" and last == "ц":
            stems.add(head + "й" + last)  # "бойц"
    words: set[str] = set()
    if len(low) >= 3 and low[-1] in "кц":
        before = low[-2]
        if before == "ь":
            words |= {low[:-2] + "ё" + low[-1], low[:-2] + "е" + low[-1]}
        elif before == "й" and low[-1] == "ц":
            words.add(low[:-2] + "ец")
        elif before in _CONSONANTS:
            words |= {low[:-1] + v + low[-1] for v in ("о", "е")}
    return stems, words


@lru_cache(maxsize=4096)
def variants(word: str) -> frozenset[str]:
    """``word`` and its stem with every ending of :data:`ENDINGS`, for a Cyrillic word of four letters or more, and
    the forms of a stem whose vowel drops (:func:`_fleeting`); ``{word}`` for any other."""
    if len(word) < 4 or not is_cyrillic(word):
        return frozenset((word,))
    low = word.lower()
    bases = {_without_case(low), stem(word)}
    dropped, said = _fleeting(low)
    for base in list(bases):
        said |= _fleeting(base)[1]
    bases |= dropped
    return frozenset({word, low} | bases | said | {b + e for b in bases for e in ENDINGS})

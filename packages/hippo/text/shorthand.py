"""The short and familiar forms people type in chats for a word a question writes out: "bday" / "birthday", "pic" /
"picture", "convo" / "conversation", "tmrw" / "tomorrow", "mom" / "mother", "kids" / "children".

A question is written with care ("What did Caroline's children make for her birthday?"); the chat it asks about
was typed on a phone ("the kids made me the cutest bday card"). The two share no word, and no stemmer or spelling
rule joins them: a clipping drops most of the word, a texting spelling replaces letters by digits, and the familiar
words of a family are other words for the same person. :func:`variants` gives a lower-case word form's other forms,
and the lexicon matches a query word in all of them as one term (``hippo.text.lexicon.surface_forms``; one document
frequency: it is the same word), as it does a British spelling.

The forms are a list, not rules, in three kinds:

* **clippings** that chats use for the whole word (bday, pic, vid, convo, fave, congrats, uni, vacay, appt, prof,
  grad, fridge, bike, insta, xmas, fest, sesh);
* **texting spellings** (tmrw, 2day, tonite, ppl, msg, wknd, hrs, yrs, gr8, luv, tix, deets);
* **the familiar words of a family** (mom, dad, grandma, grandpa, bro, sis, hubby, kid, fam), for the person the
  formal word names.

A form that is also another common word is left out: "min" (minimum), "yr" (your), "hr" (HR), "sec", "prob" (problem
or probably), "doc" (doctor or document), "app" (an application or a job application), "tmr" (a timer in code), "ad"
(a stem of "add"), "bio" (biology or biography), "lit", "hw", "mo", "bc"; and so are synonyms that are not forms of
one word ("photo" is no "picture", "trip" no "vacation"). Words a question never asks about on their own (pronouns,
"because", "please", "okay") are not listed: they are stopwords.
"""

from __future__ import annotations

from hippo.base.errors import InvalidInput


def _plural(word: str) -> str:
    """A noun's plural by the regular rules ("universities", "bdays", "pics")."""
    if word.endswith("y") and len(word) > 2 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    return word + "s"


# Nouns: each form also in its plural (the formal word's plural by English rules unless given after a "/").
_NOUNS: tuple[tuple[str, ...], ...] = (
    ("birthday", "bday", "b-day"),
    ("picture", "pic"),
    ("video", "vid"),
    ("conversation", "convo"),
    ("message", "msg"),
    ("favorite", "fave", "fav"),
    ("university", "uni"),
    ("vacation", "vacay"),
    ("appointment", "appt"),
    ("apartment", "apt"),
    ("festival", "fest"),
    ("session", "sesh"),
    ("professor", "prof"),
    ("graduation", "grad"),
    ("graduate", "grad"),
    ("refrigerator", "fridge"),
    ("bicycle", "bike"),
    ("weekend", "wknd"),
    ("week", "wk"),
    ("government", "govt"),
    ("department", "dept"),
    ("mother", "mom", "mum", "mommy", "mummy", "mama"),
    ("father", "dad", "daddy"),
    ("grandmother", "grandma", "granny", "nana", "grandmom"),
    ("grandfather", "grandpa", "granddad", "grandad", "gramps"),
    ("brother", "bro"),
    ("sister", "sis"),
    ("husband", "hubby"),
    ("child/children", "kid", "kiddo"),
)
# Words without a plural of their own (or whose plural is listed as a word).
_WORDS: tuple[tuple[str, ...], ...] = (
    ("congratulations", "congrats", "congratz"),
    ("information", "info"),
    ("tickets", "tix"),
    ("details", "deets"),
    ("christmas", "xmas"),
    ("instagram", "insta"),
    ("family", "fam"),
    ("tomorrow", "tmrw", "tmrrw", "2moro", "2morrow", "tomoz"),
    ("today", "2day"),
    ("tonight", "tonite", "2nite"),
    ("night", "nite"),
    ("people", "ppl"),
    ("hours", "hrs"),
    ("minutes", "mins"),
    ("years", "yrs"),
    ("great", "gr8"),
    ("love", "luv"),
    ("later", "l8r"),
    ("basketball", "bball"),
    ("chemistry", "chem"),
    ("psychology", "psych"),
    ("economics", "econ"),
    ("calculus", "calc"),
)


def _table() -> dict[str, tuple[str, ...]]:
    groups: list[set[str]] = []
    for row in _NOUNS:
        formal, _, irregular = row[0].partition("/")
        groups.append({formal, *row[1:]})
        groups.append({irregular or _plural(formal), *(_plural(w) for w in row[1:] if "-" not in w),
                       *(w + "s" for w in row[1:] if "-" in w)})
    groups.extend(set(row) for row in _WORDS)
    out: dict[str, set[str]] = {}
    for g in groups:
        for w in g:
            out.setdefault(w, set()).update(g - {w})
    return {w: tuple(sorted(v)) for w, v in out.items()}


_TABLE = _table()


def variants(form: str) -> tuple[str, ...]:
    """The other forms of the lower-case word form ``form`` in chats and in writing ("bday" for "birthday",
    "birthday" for "bday"; none for most words); never ``form`` itself. See the module's docstring for the list."""
    if not isinstance(form, str):
        raise InvalidInput(f"form must be a str, got {type(form).__name__}")
    return _TABLE.get(form, ())


__all__ = ["variants"]

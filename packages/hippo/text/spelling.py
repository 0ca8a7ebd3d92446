"""British and American spellings of one word: "colour" / "color", "organise" / "organize", "travelled" /
"traveled", "centre" / "center", "grey" / "gray".

A question written in one spelling ("What is Emma's favorite color?") misses the message written in the other ("my
favourite colour is green"): the two are different tokens, and a stemmer keeps them apart. English spells a few
regular families differently on the two sides of the Atlantic; :func:`variants` gives a lower-case word form's
spellings in the other convention, and the lexicon matches a query word in all of them as one term
(``hippo.text.lexicon.surface_forms``).

The rules are the regular families of the Oxford and Merriam-Webster differences, each narrowed to where it cannot
turn one real word into another:

* ``-our`` / ``-or`` (colour, favourite, behaviour, neighbourhood): the -our nouns, a closed set, listed with any
  prefix (watercolour, dishonour) and only the endings they take (never "-ous": "humorous" is spelled so on both
  sides), so "four", "tour", "hour", "memory" and "doctor" have none;
* ``-ise`` / ``-ize``, ``-isation`` / ``-ization``, ``-yse`` / ``-yze``: three letters or more before it ("size",
  "prize", "seize", "raise" and "noise" are out);
* ``-lled`` / ``-led`` and the like (travelled, cancelling, modeller, marvellous): only after a single vowel in a word of
  two syllables or more, where British English doubles an unstressed final "l" ("filled" / "filed", "killed",
  "spelled" are out);
* ``-ogue`` / ``-og`` (catalogue, dialogue, analogue): three letters or more before it ("rogue", "vogue", "blog"
  are out);
* ``-re`` / ``-er`` and ``-ence`` / ``-ense``, and whole words (grey, mum, programme, jewellery, pyjamas): listed, because the
  same endings are common in unrelated words ("water", "offer", "timber" / "timbre", "sense", "fence").

A variant that is no word ("doctour", "promize") matches nothing, so a rule that fires where it need not costs a
pattern's lookup, never a wrong match. Words that differ in meaning as well as spelling are left out: "tyre" /
"tire", "cheque" / "check", "draught" / "draft", "kerb" / "curb", "storey" / "story", "whisky" / "whiskey".
"""

from __future__ import annotations

import re

from hippo.base.errors import InvalidInput

# Endings that -our / -or nouns and adjectives take in both conventions (colours, coloured, colourful, favourite,
# favouritism, honourable, behavioural, neighbourhood, labourer, savoury).
_OUR_ENDINGS = ("", "s", "ed", "ing", "ings", "ite", "ites", "itism", "able", "ably", "al", "ally", "ful", "fully",
                "less", "er", "ers", "ist", "ists", "hood", "hoods", "y")
_OUR = re.compile(r"([a-z]+)(ou?r)(" + "|".join(e for e in _OUR_ENDINGS if e) + r")?")
# The -our nouns themselves (a closed set), so that "memory", "doctor" or "explored" are not looked for as
# "memoury", "doctour", "exploured": any prefix is allowed ("watercolour", "dishonour", "unfavourable").
_OUR_NOUNS = ("ardour", "armour", "arbour", "behaviour", "candour", "clamour", "colour", "demeanour", "endeavour",
              "favour", "fervour", "flavour", "glamour", "harbour", "honour", "humour", "labour", "neighbour", "odour",
              "parlour", "rancour", "rigour", "rumour", "saviour", "savour", "splendour", "succour", "tumour",
              "valour", "vapour", "vigour")

_ISE_ENDINGS = ("e", "es", "ed", "ing", "er", "ers", "ation", "ations", "ational", "able")
_ISE = re.compile(r"([a-z]{3,})(i[sz])(" + "|".join(_ISE_ENDINGS) + r")")
_YSE = re.compile(r"([a-z]{3,})(y[sz])(e|es|ed|ing|er|ers)")

# A single vowel before the "l" and another syllable before that: "travel", "cancel", "model", "marvel", "signal".
_LL_ENDINGS = ("ed", "ing", "ings", "er", "ers", "or", "ors", "ous", "ously")
_LL = re.compile(r"([a-z]*[aeiouy][^aeiouy]+[aeiou])(ll?)(" + "|".join(_LL_ENDINGS) + ")")
_OGUE = re.compile(r"([a-z]{3,}o)(gue|g)(s?)")

# British -re and -ence words whose American -er / -ense twin is the same word (a list: "water", "offer", "sense" and
# "fence" end alike).
_RE_WORDS = ("centre", "epicentre", "theatre", "amphitheatre", "metre", "kilometre", "centimetre", "millimetre",
             "litre", "millilitre", "fibre", "calibre", "sombre", "spectre", "lustre", "meagre", "sabre", "sceptre",
             "mitre", "ochre", "manoeuvre", "goitre", "saltpetre")
_ENCE_WORDS = ("defence", "offence", "licence", "pretence")

# Whole words (and the endings they take) that differ in more than one regular family.
_WORD_PAIRS = (
    ("grey", "gray"), ("mum", "mom"), ("mummy", "mommy"), ("programme", "program"), ("aluminium", "aluminum"),
    ("aeroplane", "airplane"), ("jewellery", "jewelry"), ("pyjama", "pajama"), ("cosy", "cozy"),
    ("cosier", "cozier"), ("cosiest", "coziest"), ("mould", "mold"), ("plough", "plow"), ("sceptic", "skeptic"),
    ("sceptical", "skeptical"), ("scepticism", "skepticism"), ("ageing", "aging"), ("moustache", "mustache"),
    ("doughnut", "donut"), ("maths", "math"), ("fulfil", "fulfill"), ("fulfilment", "fulfillment"),
    ("enrol", "enroll"), ("enrolment", "enrollment"), ("skilful", "skillful"), ("wilful", "willful"),
    ("instalment", "installment"), ("practise", "practice"), ("paediatric", "pediatric"),
    ("paediatrician", "pediatrician"), ("anaesthetic", "anesthetic"), ("anaesthesia", "anesthesia"),
    ("encyclopaedia", "encyclopedia"), ("foetus", "fetus"), ("oestrogen", "estrogen"), ("haemorrhage", "hemorrhage"),
    ("learnt", "learned"), ("spelt", "spelled"), ("dreamt", "dreamed"), ("burnt", "burned"), ("leapt", "leaped"),
    ("spoilt", "spoiled"), ("smelt", "smelled"), ("judgement", "judgment"), ("acknowledgement", "acknowledgment"),
    ("artefact", "artifact"),
)
_PAIR_ENDINGS = ("", "s", "es", "ed", "ing", "ings", "er", "ers", "ish", "y")


def _pair_table() -> dict[str, tuple[str, ...]]:
    table: dict[str, list[str]] = {}

    def link(a: str, b: str) -> None:
        table.setdefault(a, []).append(b)
        table.setdefault(b, []).append(a)

    def inflect(w: str, e: str) -> str:  # "practise" + "ed" is "practised"
        return w[:-1] + e if w.endswith("e") and e[:1] in ("a", "e", "i", "o", "u", "y") else w + e

    for uk, us in _WORD_PAIRS:
        for e in _PAIR_ENDINGS:
            link(inflect(uk, e), inflect(us, e))
    for w in _RE_WORDS:
        for uk_e, us_e in (("", ""), ("s", "s"), ("d", "ed")):
            link(w + uk_e, w[:-2] + "er" + us_e)
    for w in _ENCE_WORDS:
        for e in ("", "s"):
            link(w + e, w[:-2] + "se" + e)
    return {k: tuple(dict.fromkeys(v)) for k, v in table.items()}


_PAIRS = _pair_table()


def _swap(m: re.Match[str] | None, a: str, b: str) -> str | None:
    """The match with its middle group spelled ``b`` when it is ``a`` and ``a`` when it is ``b``."""
    if m is None:
        return None
    head, mid, tail = m.group(1), m.group(2), m.group(3) or ""
    if mid == a:
        return head + b + tail
    if mid == b:
        return head + a + tail
    return None


def variants(form: str) -> tuple[str, ...]:
    """The other convention's spellings of the lower-case word form ``form`` (none for most words); never ``form``
    itself. See the module's docstring for the rules."""
    if not isinstance(form, str):
        raise InvalidInput(f"form must be a str, got {type(form).__name__}")
    if not (form.isascii() and form.isalpha() and form.islower()) or len(form) < 4:
        return _PAIRS.get(form, ())
    out: list[str] = list(_PAIRS.get(form, ()))
    # each family is tried only where its letters occur (most words have none: a regular expression costs more)
    if "or" in form or "our" in form:
        m = _OUR.fullmatch(form)
        if m is not None and (m.group(1) + "our").endswith(_OUR_NOUNS):
            out.append(_swap(m, "our", "or") or form)
    tail = form[3:]
    for pattern, a, b, present in ((_ISE, "is", "iz", "is" in tail or "iz" in tail),
                                   (_YSE, "ys", "yz", "ys" in tail or "yz" in tail),
                                   (_LL, "ll", "l", "l" in form and form.endswith(_LL_ENDINGS)),
                                   (_OGUE, "gue", "g", "og" in tail)):
        if present:
            v = _swap(pattern.fullmatch(form), a, b)
            if v is not None:
                out.append(v)
    return tuple(v for v in dict.fromkeys(out) if v != form)

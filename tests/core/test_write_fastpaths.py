"""The write path's cheap pre-checks against the code they stand in front of: salience, the span-of-time test and
the fact fingerprints skip a regular expression when the message holds none of the texts every match of it holds
(on the text as case-insensitive matching folds it), and a message's surprise is computed in Python floats instead
of numpy. Each is compared with the plain computation on generated texts built from the patterns' own words, in
every case, glued to letters, and with the characters case-insensitive matching folds onto ASCII letters."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hippo.engine.truth.state import surprise_of, surprise_one
from hippo.text import fingerprints, salience, textnorm, timeexpr

_WORDS = ["i will", "I'll", "i promise", "I'm going to", "i am going to", "let's", "we will", "we'll", "remind me",
          "don't forget", "do not forget", "i plan to", "I decided", "we decided", "deadline", "must", "actually",
          "correction", "i meant", "not that one but", "not", "but", "wrong", "instead", "mistake", "sorry, it's",
          "no, it", "update:", "wife", "husband", "partner", "girlfriend", "boyfriend", "mother", "Father", "mom",
          "dad", "sister", "brother", "son", "daughter", "kid", "kids", "children", "friend", "family", "married",
          "divorced", "boss", "colleague", "love", "hate", "afraid", "scared", "angry", "sad", "happy", "excited",
          "worried", "proud", "upset", "thrilled", "anxious", "grateful", "devastated", "!", "January", "may", "MAY",
          "June", "december", "Monday", "sunday", "yesterday", "tomorrow", "today", "tonight", "next week",
          "last week", "2023", "12/5", "3.4", "7", "٣", "for 3 years", "a few months", "two-week", "half an hour",
          "min", "mins", "hours", "hr", "day", "nights", "weeks", "wk", "month", "YEARS", "yr", "decade",
          "my dog is called Rex", "our car was named Blue", "his", "her", "their", "Her sister is Ann", "ok", "lol",
          "yes", "Caroline", "Paris", "?", ".", ",", "-", "  ", "\n"]
_FOLDS = {"i": "\u0131", "I": "\u0130", "s": "\u017f", "k": "\u212a", "K": "\u212a"}


def _mangle(word: str, how: int) -> str:
    if how == 1:
        return word.upper()
    if how == 2:
        return word.title()
    if how == 3:  # the characters re.I takes for ASCII letters
        return "".join(_FOLDS.get(c, c) for c in word)
    if how == 4:  # glued to letters: no word boundary
        return "x" + word + "y"
    return word


_PIECE = st.tuples(st.sampled_from(_WORDS), st.integers(0, 4)).map(lambda t: _mangle(*t))
_TEXT = st.lists(st.tuples(_PIECE, st.sampled_from([" ", "", ". ", "\n", " and then "])), max_size=40).map(
    lambda parts: "".join(p + sep for p, sep in parts))

# -- the plain computations, as they were before the pre-checks --------------------------------------------------


def _salience_plain(text: str) -> tuple[float, str]:
    S = salience
    t = text.strip()
    words = [w.lower() for w in textnorm.words(t)]
    category = "other"
    if S._CORRECT_RE.search(t):
        category = "correction"
    elif S._COMMIT_RE.search(t):
        category = "decision"
    elif S._RELATION_RE.search(t):
        category = "relationship"
    if len(t) <= 50:
        if category == "decision":
            return 0.8, category
        if category == "correction":
            return 0.6, category
        if words and all(w in S._NOISE for w in words):
            return 0.02, "noise"
        if t.endswith("?"):
            return 0.2, "question"
        return (0.4 if category == "relationship" else 0.3), category
    score = min(0.35, 0.35 * len(t) / 300.0)
    score += 0.2 if re.search(r"\d", t) else 0.0
    score += 0.15 if S._DATE_RE.search(t) else 0.0
    score += 0.1 if S._EMOTION_RE.search(t) else 0.0
    score += 0.1 if any(w[:1].isupper() for w in textnorm.words(t)[1:]) else 0.0
    score += {"decision": 0.25, "correction": 0.2, "relationship": 0.1}.get(category, 0.0)
    return float(min(1.0, score)), category


def _fingerprints_plain(text: str, date_labels: list[str]) -> set[str]:
    F = fingerprints
    fp = {"n:" + m.group(0).lower().strip("$") for m in F._NUMBER_RE.finditer(text)}
    fp.update("p:" + w.lower() for w in F.proper_nouns(text))
    fp.update("d:" + d for d in date_labels)
    lw = {w.lower() for w in textnorm.words(text)}
    fp.update("e:" + w for w in lw & F.EVENT_WORDS)
    fp.update("def:" + m.group(1).lower() + "=" + m.group(2).lower().strip() for m in F._DEF_RE.finditer(text))
    return fp


@settings(max_examples=3000, deadline=None)
@given(_TEXT)
def test_prechecked_text_functions_equal_the_plain_ones(text):
    assert salience.salience(text) == _salience_plain(text)
    assert timeexpr.states_span(text) == (timeexpr._SPAN.search(text) is not None)
    assert fingerprints.fingerprints(text, ["8 May 2023"]) == _fingerprints_plain(text, ["8 May 2023"])


def test_regex_folded_is_what_case_insensitive_matching_sees():
    # every character re.I matches to an ASCII letter folds to that letter, and no other character does
    for x in "abcdefghijklmnopqrstuvwxyz":
        rx = re.compile(x, re.I)
        for cp in [*range(0x2000), 0x212A, 0x212B, 0x1E9E, 0xFB05, 0xFB06]:
            c = chr(cp)
            assert (rx.fullmatch(c) is not None) == (textnorm.regex_folded(c) == x), (x, hex(cp))


@settings(max_examples=2000, deadline=None)
@given(st.integers(0, 60), st.integers(0, 60), st.integers(0, 5000), st.booleans())
def test_surprise_one_equals_the_vectorized_arithmetic(new, total, text_len, event):
    new = min(new, total)
    got = np.float32(surprise_one(new, total, text_len, event))
    assert got == np.float32(surprise_of(new, total, text_len, event))
    assert surprise_one(new, total, text_len, event) == float(surprise_of(new, total, text_len, event))


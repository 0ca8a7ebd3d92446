"""British and American spellings (hippo.text.spelling): real pairs found, distinct words kept apart, the relation
symmetric, and a message written in one convention scored exactly like the same message written in the other."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hippo.base.errors import InvalidInput
from hippo.text import spelling, tokenizer

from forms import lexical, pattern_holds, recalled

# Pairs from the dictionaries (Oxford / Merriam-Webster), one or more per family, written out by hand.
REAL_PAIRS = [
    ("colour", "color"), ("colours", "colors"), ("coloured", "colored"), ("colourful", "colorful"),
    ("favourite", "favorite"), ("favourites", "favorites"), ("behaviour", "behavior"), ("behavioural", "behavioral"),
    ("neighbourhood", "neighborhood"), ("honourable", "honorable"), ("saviour", "savior"), ("savoury", "savory"), ("odour", "odor"),
    ("labourer", "laborer"), ("organise", "organize"), ("organised", "organized"), ("organising", "organizing"),
    ("organisation", "organization"), ("realise", "realize"), ("apologises", "apologizes"), ("recognisable",
    "recognizable"), ("analyse", "analyze"), ("paralysed", "paralyzed"), ("travelled", "traveled"),
    ("travelling", "traveling"), ("traveller", "traveler"), ("cancelled", "canceled"), ("modelling", "modeling"),
    ("labelled", "labeled"), ("marvellous", "marvelous"), ("counsellor", "counselor"), ("signalled", "signaled"),
    ("catalogue", "catalog"), ("dialogues", "dialogs"), ("analogue", "analog"), ("centre", "center"),
    ("centres", "centers"), ("theatre", "theater"), ("kilometres", "kilometers"), ("litre", "liter"),
    ("fibre", "fiber"), ("defence", "defense"), ("licence", "license"), ("offences", "offenses"), ("grey", "gray"),
    ("greyish", "grayish"), ("mum", "mom"), ("mums", "moms"), ("programme", "program"), ("jewellery", "jewelry"),
    ("pyjamas", "pajamas"), ("mould", "mold"), ("mouldy", "moldy"), ("sceptical", "skeptical"), ("ageing", "aging"),
    ("practised", "practiced"), ("practising", "practicing"), ("judgement", "judgment"), ("enrolment", "enrollment"),
    ("fulfil", "fulfill"), ("doughnuts", "donuts"), ("maths", "math"), ("learnt", "learned"), ("plough", "plow"),
]

# Different words that one spelling rule applied blindly would join.
DISTINCT = [
    ("four", "for"), ("tour", "tor"), ("flour", "flor"), ("hour", "hor"), ("your", "yor"), ("floor", "flor"),
    ("humorous", "humourous"), ("filled", "filed"), ("filling", "filing"), ("killed", "kiled"), ("spelling", "speling"),
    ("prize", "prise"), ("size", "sise"), ("seize", "seise"), ("raise", "raize"), ("noise", "noize"),
    ("timber", "timbre"), ("water", "watre"), ("offer", "offre"), ("sense", "sence"), ("fence", "fense"),
    ("tire", "tyre"), ("check", "cheque"), ("draft", "draught"), ("curb", "kerb"), ("story", "storey"),
    ("blog", "blogue"), ("rogue", "rog"), ("tongue", "tong"), ("feeling", "feelling"), ("revealed", "revealled"),
]


@pytest.mark.parametrize("uk,us", REAL_PAIRS)
def test_real_pairs_are_each_others_variants(uk: str, us: str) -> None:
    assert us in spelling.variants(uk)
    assert uk in spelling.variants(us)


@pytest.mark.parametrize("a,b", DISTINCT)
def test_distinct_words_are_kept_apart(a: str, b: str) -> None:
    assert b not in spelling.variants(a)
    assert a not in spelling.variants(b)


_CHUNKS = ["col", "fav", "behavi", "neighb", "trav", "canc", "mod", "el", "our", "or", "is", "iz", "ys", "yz", "ll",
           "l", "ogue", "og", "catal", "anal", "organ", "real", "e", "ed", "es", "ing", "ite", "s", "er", "ation",
           "hood", "ous", "a", "i", "o", "u", "f", "t", "r", "centre", "center", "grey", "gray", "mum", "mom"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_CHUNKS), min_size=1, max_size=5))
def test_variants_are_symmetric_and_never_the_word(chunks: list[str]) -> None:
    word = "".join(chunks)
    for v in spelling.variants(word):
        assert v != word
        assert v.islower() and v.isalpha()
        assert word in spelling.variants(v), (word, v)


def test_variants_refuse_what_is_not_a_str() -> None:
    with pytest.raises(InvalidInput):
        spelling.variants(None)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        spelling.variants(["colour"])  # type: ignore[arg-type]


def test_a_query_word_matches_the_other_conventions_forms() -> None:
    for word, other in [("color", "Colour"), ("favorite", "favourites"), ("organized", "organised"),
                        ("center", "centres"), ("traveling", "travelling"), ("gray", "grey")]:
        assert pattern_holds(word, other), (word, other)


def test_a_british_message_scores_exactly_like_its_american_twin() -> None:
    enc = tokenizer.encoding()
    us = ["My favorite color is teal and I painted the kitchen gray.",
          "We traveled to the theater near the center of town.",
          "The pasta was good and the weather was fine.",
          "I organized my notes about the colors of the neighborhood."]
    uk = ["My favourite colour is teal and I painted the kitchen grey.",
          "We travelled to the theatre near the centre of town.",
          "The pasta was good and the weather was fine.",
          "I organised my notes about the colours of the neighbourhood."]
    # the twins are equally long in cl100k tokens, so BM25's length normalisation treats them alike
    assert [len(enc.encode(t)) for t in us] == [len(enc.encode(t)) for t in uk]
    for q in ("What is Ann's favorite color?", "Where did she travel, the theater in the center?",
              "Who organized the neighborhood colors? gray", "What is Ann's favourite colour? centre theatre"):
        got_us, got_uk = lexical(us, q), lexical(uk, q)
        assert got_us.keys() == got_uk.keys() and got_us, q
        assert all(got_us[r] == pytest.approx(got_uk[r], rel=1e-12) for r in got_us), q


TARGET = "Went with a deep teal colour in the end."
QUESTION = "Which color did Ann choose?"


def test_recall_finds_the_british_message_and_would_miss_it_without_the_variants(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with_variants = recalled(None, spelling, TARGET, QUESTION)
    assert TARGET in with_variants
    without = recalled(monkeypatch, spelling, TARGET, QUESTION)
    assert without and TARGET not in without

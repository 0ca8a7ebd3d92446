"""Chat shorthand (hippo.text.shorthand): the short and familiar forms people type found for the word a question
writes out and back, ambiguous short forms left alone, the relation symmetric, and a recall that finds the message
typed in shorthand only because of it."""

from __future__ import annotations

import pytest

from hippo.base.errors import InvalidInput
from hippo.text import shorthand

from forms import lexical, pattern_holds, recalled

# Pairs as chats type them, written out by hand.
REAL_PAIRS = [
    ("birthday", "bday"), ("birthdays", "bdays"), ("birthday", "b-day"), ("picture", "pic"), ("pictures", "pics"),
    ("video", "vid"), ("conversations", "convos"), ("favorite", "fave"), ("favorites", "favs"),
    ("congratulations", "congrats"), ("university", "uni"), ("universities", "unis"), ("vacation", "vacay"),
    ("tomorrow", "tmrw"), ("tomorrow", "2moro"), ("tonight", "tonite"), ("today", "2day"), ("people", "ppl"),
    ("message", "msg"), ("messages", "msgs"), ("mother", "mom"), ("mothers", "moms"), ("mother", "mum"),
    ("father", "dad"), ("grandmother", "grandma"), ("grandfather", "grandpa"), ("brother", "bro"),
    ("sister", "sis"), ("husband", "hubby"), ("husbands", "hubbies"),
    ("children", "kids"), ("child", "kid"), ("family", "fam"), ("information", "info"), ("christmas", "xmas"),
    ("instagram", "insta"), ("weekend", "wknd"), ("hours", "hrs"), ("minutes", "mins"), ("years", "yrs"),
    ("appointment", "appt"), ("apartment", "apt"), ("professor", "prof"), ("graduation", "grad"),
    ("bicycle", "bike"), ("refrigerator", "fridge"), ("great", "gr8"), ("festival", "fest"), ("festivals", "fests"),
    ("session", "sesh"), ("tickets", "tix"), ("details", "deets"),
]

# Short forms that are also other words, and synonyms that are not forms of one word.
UNJOINED = [
    ("minutes", "min"), ("minimum", "min"), ("year", "yr"), ("your", "yr"), ("second", "sec"), ("hour", "hr"),
    ("problem", "prob"), ("tomorrow", "tmr"),
    ("probably", "prob"), ("doctor", "doc"), ("document", "doc"), ("application", "app"), ("advertisement", "ad"),
    ("biology", "bio"), ("picture", "photo"), ("vacation", "trip"), ("mother", "father"), ("child", "baby"),
]


@pytest.mark.parametrize("full,short", REAL_PAIRS)
def test_real_pairs_are_each_others_variants(full: str, short: str) -> None:
    assert short in shorthand.variants(full)
    assert full in shorthand.variants(short)


@pytest.mark.parametrize("a,b", UNJOINED)
def test_ambiguous_short_forms_and_synonyms_are_not_joined(a: str, b: str) -> None:
    assert b not in shorthand.variants(a)
    assert a not in shorthand.variants(b)


def test_variants_are_symmetric_lower_case_and_never_the_word() -> None:
    words = {w for k in shorthand._TABLE for w in (k, *shorthand._TABLE[k])}
    assert len(words) > 100
    for w in words:
        for v in shorthand.variants(w):
            assert v != w and v == v.lower()
            assert w in shorthand.variants(v), (w, v)
    assert shorthand.variants("sandwich") == ()


def test_variants_refuse_what_is_not_a_str() -> None:
    with pytest.raises(InvalidInput):
        shorthand.variants(None)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        shorthand.variants(["bday"])  # type: ignore[arg-type]


def test_a_query_word_matches_the_short_forms_tokens_and_back() -> None:
    for word, other in [("birthday", "bday"), ("birthday", "b-day"), ("children", "kids"), ("kids", "children"),
                        ("favourite", "faves"), ("fave", "favourite"), ("today", "2day"), ("tomorrow", "tmrw"),
                        ("Mother", "Mom"), ("bday", "birthdays")]:
        assert pattern_holds(word, other), (word, other)


def test_the_short_and_the_full_form_are_one_term() -> None:
    # One document frequency: a message with the short form and one with the full form score alike, and a message
    # holding both counts the word twice, as one term, rather than two rarer terms.
    texts = ["the kids loved the fair", "the children loved the fair", "a quiet day at home", "dinner was late"]
    got = lexical(texts, "What did the children love?")
    assert set(got) == {0, 1}
    assert got[0] == pytest.approx(got[1], rel=1e-12)
    both = lexical(["the kids and the children", "a quiet day at home", "dinner was late"], "children")
    one = lexical(["the kids and the kids", "a quiet day at home", "dinner was late"], "children")
    assert both[0] == pytest.approx(one[0], rel=1e-12)


TARGET = "the kids made me the cutest bday card!!"
QUESTION = "What did Ann's children give her for her birthday?"


def test_recall_finds_the_message_typed_in_shorthand_and_would_miss_it_without(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with_forms = recalled(None, shorthand, TARGET, QUESTION)
    assert TARGET in with_forms
    without = recalled(monkeypatch, shorthand, TARGET, QUESTION)
    assert without and TARGET not in without

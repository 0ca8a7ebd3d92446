"""Places by kind: a query word naming a kind of place ("cities", "countries", "states", "places") also finds the
names of that kind, half an occurrence each."""

from __future__ import annotations

import re

import numpy as np
import pytest

from hippo import Memory
from hippo.base.errors import InvalidInput
from hippo.index import channels
from hippo.text import places
from hippo.text.query import analyze

from bm25ref import bm25


@pytest.mark.parametrize("word, some, none", [
    ("cities", {"Seattle", "Chicago", "Paris", "New York"}, {"Spain", "Ohio", "New York City"}),
    ("city", {"Tokyo"}, {"Japan"}),
    ("countries", {"Spain", "England", "UK", "Japan"}, {"Paris", "Texas"}),
    ("country", {"Sweden"}, set()),
    ("states", {"North Carolina", "Tennessee", "Texas", "Virginia"}, {"Austin", "West Virginia"}),
    ("places", {"Spain", "Texas", "Seattle"}, set()),
    ("locations", {"Chicago", "England"}, set()),
    ("towns", {"Dublin"}, set()),
])
def test_kinds_by_hand(word, some, none):
    got = set(places.names_of_kind(word))
    assert some <= got and not none & got


@pytest.mark.parametrize("word", ["movie", "Seattle", "trip", "statement", "citizen", "placebo"])
def test_other_words_name_no_kind(word):
    assert places.names_of_kind(word) == ()


def test_the_lists_are_names_as_written():
    for names in (places.COUNTRIES, places.STATES, places.CITIES):
        assert len(names) == len(set(names))
        for n in names:
            assert all(w[:1].isupper() for w in n.split() if w not in ("de", "of")), n
    with pytest.raises(InvalidInput, match="word"):
        places.names_of_kind(None)


TEXTS = ["It's Seattle, I'm stoked for my game there next month!", "I was in Chicago, it was awesome!",
         "I love discovering new cities.", "Lunch with the team was good.", "We watched a movie with us and turkey.",
         "Took this pic in New York City last spring."]


def test_a_name_of_the_kind_counts_half_an_occurrence_of_the_word():
    with Memory(None) as mem:
        mem.add_many({"text": t, "speaker": "John"} for t in TEXTS)
        idx = mem.engine.state().index
        got = channels.lexical(idx, analyze("cities"), mem.config)
        # the reference: a textbook BM25 where "cities" counts one and a listed city's name half ("New York City"
        # once, as "New York")
        names = places.names_of_kind("cities")
        assert "New York" in names and "New York City" not in names
        tf = [[len(re.findall(r"\b(?:city|cities)\b", t, re.I))  # the word itself: "New York City" holds "City"
               + channels.SLIP_WEIGHT * sum(bool(re.search(rf"\b{re.escape(n)}\b", t)) for n in names)
               for t in TEXTS]]
        rc = mem.config.retrieval
        want = bm25(tf, idx.doc_lengths().tolist(), rc.bm25_k1, rc.bm25_b)
        assert got.rows.tolist() == sorted(want) == [0, 1, 2, 5]
        assert np.allclose(got.scores, [want[r] for r in got.rows.tolist()], rtol=1e-12, atol=0)


def test_a_name_is_matched_as_written():
    with Memory(None) as mem:
        mem.add_many({"text": t, "speaker": "John"} for t in TEXTS)
        rows = channels.lexical(mem.engine.state().index, analyze("countries"), mem.config).rows.tolist()
        assert rows == []  # "us" and "turkey" in lower case are no countries
        hits = mem.search("Which cities has John been to?", k=4)
        assert {h.text for h in hits[:4]} >= {TEXTS[0], TEXTS[1], TEXTS[5]}


def test_place_names_can_be_switched_off():
    with Memory(None, config={"retrieval": {"places": False}}) as mem:
        mem.add_many({"text": t, "speaker": "John"} for t in TEXTS)
        rows = channels.lexical(mem.engine.state().index, analyze("cities"), mem.config).rows.tolist()
        assert rows == [2, 5]  # "cities", and the "City" of "New York City"
    with pytest.raises(InvalidInput, match="places"):
        Memory(None, config={"retrieval": {"places": "yes"}})

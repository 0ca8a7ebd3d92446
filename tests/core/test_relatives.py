"""Derivational relatives: a query word also finds the words of its family ("adopt" / "adoption"), each occurrence
counting half, as a misspelling's does."""

from __future__ import annotations

import numpy as np
import pytest

from hippo import Memory
from hippo.base.errors import InvalidInput
from hippo.index import channels
from hippo.text import lexicon, relatives, tokenizer
from hippo.text.query import analyze

from bm25ref import bm25


def test_the_shipped_table_is_the_snowball_families_of_the_encoding():
    stemmer = pytest.importorskip("Stemmer")  # PyStemmer (the dev extra): the definition of the families
    stem = stemmer.Stemmer("english").stemWord
    families, where = relatives.table()
    assert list(families) == relatives.build_table()
    # the definition again, by hand: every one-token word after a space, grouped by stem
    words = []
    for tid in range(tokenizer.encoding().n_vocab):
        try:
            b = tokenizer.encoding().decode_single_token_bytes(tid)
        except KeyError:
            continue
        if len(b) > relatives.MIN_LETTERS and b[:1] == b" " and b[1:].isalpha() and b[1:].islower() and b.isascii():
            words.append(b[1:].decode())
    groups: dict[str, set[str]] = {}
    for w in words:
        groups.setdefault(stem(w), set()).add(w)
    assert {frozenset(g) for g in groups.values() if len(g) > 1} == {frozenset(f) for f in families}
    assert all(families[where[w]].count(w) == 1 for w in where)


@pytest.mark.parametrize("word, related", [
    ("adopt", {"adoption"}),
    ("adoption", {"adopt", "adopted", "adopting", "adopts"}),
    ("suggest", {"suggestion", "suggestions", "suggestive"}),
    ("creative", {"creativity", "creatively"}),
    ("research", {"researcher", "researchers"}),
    ("organize", {"organization", "organizer"}),
    ("Happy", {"happiness"}),
    ("perform", {"performance", "performer"}),
])
def test_relatives_by_hand(word, related):
    got = set(lexicon.relative_words(word))
    assert related <= got
    own = {f.lower() for f in lexicon.surface_forms(word)}
    assert not got & own  # the word's own inflections are the word, not its relatives


@pytest.mark.parametrize("word", ["art", "ice", "café", "Москва", "東京", "xqzt", "a1b2"])
def test_short_or_non_ascii_or_unknown_words_have_none(word):
    assert lexicon.relative_words(word) == ()


def test_a_word_missing_from_the_table_finds_its_family_through_an_inflection():
    _families, where = relatives.table()
    assert "organize" in where or "organized" in where
    assert relatives.relatives("organizes", {"organize", "organized"})  # "organizes" itself is no token
    with pytest.raises(InvalidInput, match="word"):
        relatives.relatives(3)


TEXTS = ["We are finally going to adopt a greyhound.", "The adoption papers came through today.",
         "Adoptions take months here.", "Nothing to see in this line at all.", "The garden is green."]


def test_a_relative_counts_half_an_occurrence_of_the_word():
    with Memory(None) as mem:
        mem.add_many({"text": t, "speaker": "Ann"} for t in TEXTS)
        idx = mem.engine.state().index
        q = analyze("adoption")
        got = channels.lexical(idx, q, mem.config)
        # the reference: a textbook BM25 over the messages' words, "adopt" (a relative) counting half
        docs = [[w.strip(".,!?").lower() for w in t.split()] for t in TEXTS]
        tf = [[sum(w in ("adoption", "adoptions") for w in d) + channels.SLIP_WEIGHT * sum(w == "adopt" for w in d)
               for d in docs]]
        rc = mem.config.retrieval
        want = bm25(tf, idx.doc_lengths().tolist(), rc.bm25_k1, rc.bm25_b)
        assert got.rows.tolist() == sorted(want) == [0, 1, 2]
        assert np.allclose(got.scores, [want[r] for r in got.rows.tolist()], rtol=1e-12, atol=0)
        # the word itself first, other things equal
        assert {h.text for h in mem.search("adoption", k=3)[:2]} == {TEXTS[1], TEXTS[2]}
        assert mem.search("adoption", k=3)[2].text == TEXTS[0]


def test_relatives_can_be_switched_off():
    with Memory(None, config={"retrieval": {"relatives": False}}) as mem:
        mem.add_many({"text": t, "speaker": "Ann"} for t in TEXTS)
        assert {h.text for h in mem.search("adoption", k=3)} == {TEXTS[1], TEXTS[2]}
    with pytest.raises(InvalidInput, match="relatives"):
        Memory(None, config={"retrieval": {"relatives": "yes"}})

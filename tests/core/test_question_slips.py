"""A question is typed too: a word of it that no message holds is read as the word it is a slip of, when the
namespace holds that word ("When did we go to the pride fesetival?" finds "the Pride fest"). Checked against a
brute-force list of one-slip spellings and cl100k's own tokens, by hand on the rewritten query, and end to end
against the same question spelled right and with ``retrieval.misspellings`` off."""

from __future__ import annotations

import pytest

from hippo import Memory
from hippo.engine.scope import Ask, Scope, spelled
from hippo.text import lexicon, tokenizer
from hippo.text.query import analyze, respelled


def _one_slip_spellings(word: str) -> set[str]:
    """Every spelling one slip from ``word`` (a letter typed in, left out, replaced, two neighbours swapped), the
    first letter kept: the reference, written out the long way."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    low = word.lower()
    out = set()
    for k in range(1, len(low) + 1):
        out.update(low[:k] + c + low[k:] for c in letters)
        if k < len(low):
            out.add(low[:k] + low[k + 1:])
            out.update(low[:k] + c + low[k + 1:] for c in letters)
        if k + 1 < len(low):
            out.add(low[:k] + low[k + 1] + low[k] + low[k + 2:])
    out.discard(low)
    return out


def _reference(word: str) -> tuple[str, ...]:
    if len(tokenizer.encode(" " + word)) == 1 or not (word.isascii() and word.isalpha() and len(word) >= 5):
        return ()
    enc = tokenizer.encode
    cap = word[0].isupper()
    forms = {w.capitalize() if cap else w for w in _one_slip_spellings(word) if len(w) >= 5}
    return tuple(sorted(f for f in forms if len(enc(" " + f)) == 1))


@pytest.mark.parametrize("word", ["fesetival", "Tennesee", "resturant", "adoptoin", "funraiser", "recieved",
                                  "festival", "Caroline", "qzxvbnm", "dog"])
def test_corrections_are_the_one_slip_words_cl100k_writes_in_one_token(word: str) -> None:
    assert lexicon.corrections(word) == _reference(word)


def test_corrections_by_hand() -> None:
    assert lexicon.corrections("fesetival") == ("festival",)
    assert lexicon.corrections("Tennesee") == ("Tennessee",)
    assert lexicon.corrections("recieved") == ()  # cl100k writes it in one token: no slip is assumed
    assert lexicon.corrections(None) == ()  # type: ignore[arg-type]


def test_respelled_replaces_content_words_in_place_by_hand() -> None:
    q = analyze("When did I go to the pride fesetival with Mel?")
    assert q.keywords == ["go", "pride", "fesetival", "Mel", "i"] and q.supporting == 1
    r = respelled(q, {"fesetival": "festival"})
    assert r.keywords == ["go", "pride", "festival", "Mel", "i"]
    assert r.stems == ["go", "prid", "festival", "mel", "i"]
    assert r.supporting == 1
    assert r.text == "When did I go to the pride festival with Mel?"
    assert [p.term for p in r.patterns] == [p.term for p in analyze(r.text).patterns]
    # a replacement whose stem the query has already is dropped
    q2 = analyze("the festival and the fesetival")
    assert respelled(q2, {"fesetival": "festival"}).keywords == ["festival"]
    assert respelled(q, {}) is q


TEXTS = ["We had a blast last year at the Pride fest, Mel!",
         "The bakery on Main Street sells bread.",
         "My sister loves hiking in the hills.",
         "The festival of lights is in November, they said.",
         "I painted a sunrise over the lake."]


def _mem(**retrieval) -> Memory:
    mem = Memory(None, config={"retrieval": retrieval} if retrieval else None)
    mem.add_many({"text": t, "speaker": "Ann" if k % 2 else "Bo"} for k, t in enumerate(TEXTS))
    return mem


def test_a_slip_in_the_question_finds_what_the_word_it_misspells_finds() -> None:
    mem = _mem()
    right = mem.search("When did we go to the pride festival?", k=3)
    slipped = mem.search("When did we go to the pride fesetival?", k=3)
    assert [h.text for h in slipped] == [h.text for h in right]
    assert [h.score for h in slipped] == pytest.approx([h.score for h in right])
    # "fest" is the festival's chat form
    assert {h.text for h in slipped[:2]} == {TEXTS[0], TEXTS[3]}
    rec = mem.recall("When did we go to the pride fesetival?", budget_tokens=60)
    assert TEXTS[0] in [m.text for m in rec.messages]
    assert rec.query == "When did we go to the pride fesetival?"  # the question as asked
    assert TEXTS[0] in [e["text"] for e in mem.timeline("the fesetival", limit=3)]
    off = _mem(misspellings=False)
    assert TEXTS[0] not in [e["text"] for e in off.timeline("the fesetival", limit=3)]
    assert all("fest," not in h.text for h in off.search("When did we go to the fesetival?", k=3))


def test_a_word_the_namespace_holds_is_never_respelled() -> None:
    mem = _mem()
    mem.add("The fesetival banner was misprinted.", speaker="Ann")
    state = mem.engine.state()
    a = Ask("the fesetival", analyze("the fesetival"), Scope())
    assert spelled([state.index], a) is a
    b = Ask("the zqxwvytr", analyze("the zqxwvytr"), Scope())
    assert spelled([state.index], b) is b  # no word one slip away that the namespace holds


def test_search_many_reads_the_slip_against_every_namespace() -> None:
    a = Memory(None, namespace="a")
    a.add("My sister loves hiking in the hills.", speaker="Bo")
    a.using("b").add("We had a blast last year at the Pride fest!", speaker="Ann")
    hits = a.search_many(["a", "b"], "the fesetival", k=2)
    assert [(h.namespace, h.text) for h in hits] == [("b", "We had a blast last year at the Pride fest!")]
    assert a.search_many(["a", "b"], "the fesetival", k=2, priors=False)[0].namespace == "b"

"""Misspellings: a query word also matches the slips of it a namespace holds (hippo.text.lexicon.one_slip_apart,
NamespaceIndex.slips), checked by hand and against the same conversation spelled correctly (the reference)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from hippo import Memory
from hippo.base.errors import InvalidInput
from hippo.index import channels
from hippo.text import lexicon, textnorm, tokenizer
from hippo.text.query import analyze

from bm25ref import bm25
from tests.upgrades import words_read_again

SPELLED = ["We had dinner at that new restaurant by the harbour.", "The pottery class starts on Monday.",
           "My marathon training starts in October.", "The trial ended on Friday.", "Sounds lovely!"]
SLIPPED = ["We had dinner at that new resturant by the harbour.", "The potery class starts on Monday.",
           "My maraton training starts in October.", "The trail ended on Friday.", "Sounds lovely!"]


def _store(texts, **retrieval) -> Memory:
    mem = Memory(None, config={"retrieval": retrieval} if retrieval else None)
    mem.add_many({"text": t, "speaker": "Ann" if k % 2 else "Bo"} for k, t in enumerate(texts))
    return mem


def _naive_one_slip(word: str) -> set[str]:
    """Every string at Damerau-Levenshtein distance 1 (one adjacent swap) that keeps the first letter."""
    out = set()
    letters = "abcdefghijklmnopqrstuvwxyz"
    for k in range(len(word) + 1):
        for c in letters:
            out.add(word[:k] + c + word[k:])
        if k < len(word):
            out.add(word[:k] + word[k + 1:])
            for c in letters:
                out.add(word[:k] + c + word[k + 1:])
        if k + 1 < len(word):
            out.add(word[:k] + word[k + 1] + word[k] + word[k + 2:])
    return {w for w in out if w and w[0] == word[0] and w != word}


@pytest.mark.parametrize("word", ["paint", "restaurant", "aabba", "hello"])
def test_one_slip_apart_is_exactly_the_spellings_one_slip_away_keeping_the_first_letter(word):
    near = _naive_one_slip(word)
    assert all(lexicon.one_slip_apart(word, w) for w in near)
    assert {"pant", "piant", "paints", "pajnt", "painr"} <= _naive_one_slip("paint")
    rng = np.random.default_rng(len(word))
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    others = {word, word[1:], "x" + word[1:], word + "xy", word[::-1], word[:-2], word[0] + word[2:] + "q"}
    for _ in range(3000):  # random strings near the word: one to three random edits
        w = list(word)
        for _ in range(int(rng.integers(1, 4))):
            k = int(rng.integers(0, len(w) + 1))
            op = int(rng.integers(0, 3))
            if op == 0 and k < len(w):
                del w[k]
            elif op == 1:
                w.insert(k, str(rng.choice(letters)))
            elif k < len(w):
                w[k] = str(rng.choice(letters))
        others.add("".join(w))
    for w in others:
        assert lexicon.one_slip_apart(word, w) == (w in near), w


def _words(idx) -> set[str]:
    with idx._pos_lock:
        buckets, _ = idx._several_token_words()
    out = set()
    for (first, size), bucket in buckets.items():
        if size == 0:  # the stretched words again, under the word they stretch
            assert all(lexicon.squeezed(w) == first and lexicon.is_stretched(w) for w in bucket)
            continue
        if size == -1:  # words with accents, under their letters without them
            assert all(textnorm.fold(w) == first and lexicon.is_accented(w) for w in bucket)
            continue
        if size == -3:  # words with optional marks, under their letters without them, and all of them under ""
            assert all(textnorm.plain(w).lower() == first != w for w in bucket) if first else bucket
            continue
        assert all(w[0] == first and len(w) == size for w in bucket)
        assert all(lexicon.several_tokens(w) for w in bucket)
        out |= bucket
    return out


def test_the_namespace_words_in_several_tokens():
    with _store(SLIPPED) as mem:
        idx = mem.engine.state().index
        words = _words(idx)
        with idx._pos_lock:
            version = idx._several_token_words()[1]
        want = set()  # each word as the message writes it (a leading space unless it opens the message)
        for text in SLIPPED:
            for k, w in enumerate(text.replace(".", " ").replace("!", " ").split()):
                if len(w) >= 4 and w.isalpha() and 2 <= len(tokenizer.encode(w if k == 0 else " " + w)) <= 4:
                    want.add(w.lower())
        assert {"resturant", "potery", "maraton"} <= words
        assert not words & {"trail", "dinner", "harbour", "monday", "october", "friday"}  # one token each
        assert words == want
        mem.add("Relaxed, Caroline said: Resturant?", speaker="Ann")  # " relaxed", " Caroline": one token each
        words = _words(idx)
        with idx._pos_lock:
            version = idx._several_token_words()[1]
        assert "relaxed" not in words and "caroline" not in words and version == 1
        mem.add("Then a long hikking trip.", speaker="Bo")
        grown = _words(idx)
        with idx._pos_lock:
            later = idx._several_token_words()[1]
        assert "hikking" in grown and later == version + 1
        mem.add("Nothing new here.", speaker="Ann")
        with idx._pos_lock:
            assert idx._several_token_words()[1] == later  # no new word: same version


@pytest.mark.parametrize("question", ["Which restaurant by the harbour?", "When does the pottery class start?",
                                      "When does the marathon training start?"])
def test_a_slip_counts_as_half_an_occurrence_of_the_word(question):
    typos = {"resturant", "potery", "maraton"}
    texts = SLIPPED + ["The restaurant on the corner.", "Pottery, again."]
    with _store(texts) as mem:
        idx = mem.engine.state().index
        q = analyze(question)
        got = channels.lexical(idx, q, mem.config)
        # the reference: a textbook BM25 over the messages' words, a word's typo counting half
        docs = [[w.strip(".,!?").lower() for w in t.split()] for t in texts]
        tf = []
        for stem, word in zip(q.stems, q.keywords):
            slips = {w for w in typos if lexicon.one_slip_apart(word.lower(), w)}
            tf.append([sum(textnorm.stem(w) == stem for w in d) + channels.SLIP_WEIGHT * sum(w in slips for w in d)
                       for d in docs])
        rc = mem.config.retrieval
        want = bm25(tf, idx.doc_lengths().tolist(), rc.bm25_k1, rc.bm25_b)
        assert got.rows.tolist() == sorted(want)
        assert np.allclose(got.scores, [want[r] for r in got.rows.tolist()], rtol=1e-12, atol=0)
        # a message that spells the word right scores above one that slips, other things equal
        for word, right, slipped in (("restaurant", 5, 0), ("pottery", 6, 1)):
            one = channels.lexical(idx, analyze(word), mem.config)
            score = dict(zip(one.rows.tolist(), one.scores.tolist()))
            assert score[right] > score[slipped] > 0

def test_real_words_and_short_words_are_not_slips():
    with _store(SLIPPED) as mem:
        idx = mem.engine.state().index
        for question in ("When did the trial end?", "Which class?", "dinnr"):
            q = analyze(question)
            assert all(idx.slips(p, w) is None for p, w in zip(q.patterns, q.keywords))
        assert channels.lexical(idx, analyze("trial"), mem.config).rows.size == 0  # "trail" is a word of its own
        assert not lexicon.one_slip_apart("paint", "pinat")  # two slips


def test_misspellings_can_be_switched_off():
    q = analyze("Which restaurant by the harbour?")
    with _store(SLIPPED, misspellings=False, relatives=False) as mem:
        idx = mem.engine.state().index
        assert all(idx.slips(p, w) is None for p, w in zip(q.patterns, q.keywords))
        assert channels.lexical(idx, analyze("restaurant"), mem.config).rows.size == 0
    with _store(SLIPPED, misspellings=False) as mem:  # the relatives alone: no misspelling among them
        idx = mem.engine.state().index
        for p, w in zip(q.patterns, q.keywords):
            near = idx.slips(p, w)
            rel = lexicon.slips(p.term, (), w.lower(), lexicon.relative_words(w))
            assert near is None or (near.singles.tolist() == rel.singles.tolist() and near.phrases == rel.phrases)
        assert channels.lexical(idx, analyze("restaurant"), mem.config).rows.size == 0
    with pytest.raises(InvalidInput, match="misspellings"):
        Memory(None, config={"retrieval": {"misspellings": "yes"}})


def test_deleting_the_slip_forgets_it():
    with _store(SLIPPED, relatives=False) as mem:  # the misspellings alone ("restaurant" has a relative)
        q = analyze("restaurant")
        idx = mem.engine.state().index
        assert channels.lexical(idx, q, mem.config).rows.tolist() == [0]
        assert idx.slips(q.patterns[0], "restaurant") is not None
        gone = mem.search("harbour dinner", k=1)[0].id
        mem.delete([gone])
        idx = mem.engine.state().index
        assert channels.lexical(idx, q, mem.config).rows.size == 0
        assert idx.slips(q.patterns[0], "restaurant") is None  # nothing kept from before
        assert "resturant" not in _words(idx)


def _filed(idx) -> dict[tuple[str, int], set[str]]:
    with idx._pos_lock:
        return idx._several_token_words()[0]


MIXED = SLIPPED + ["The resturant again, with LeBron and a birthdayyy cake.", "我去了Medellín旅游", "ｉＰｈｏｎｅ１５ is new",
                   "ذَهَبْتُ إِلَى المَدْرَسَةِ صَبَاحًا", "Sıraselviler Caddesi in İstanbul", "Medellín, then the maraton.",
                   "A potery wheel for LeBron."]


@pytest.mark.parametrize("doomed", [[0], [1, 2], [5, 6, 7, 8], [0, 5, 11], list(range(0, 12, 2))])
def test_a_deletion_takes_its_messages_words_off_the_counts(doomed, tmp_path, monkeypatch):
    """The words of several tokens after a deletion are those of a store that never held the deleted messages (the
    reference), found by reading the deleted messages alone (every word run lies inside one message), also after a
    reopen from the snapshot the deletion wrote."""
    from hippo.index import coindex

    path = tmp_path / "m.db"
    with Memory(path) as mem:
        mem.add_many({"text": t, "speaker": "Ann"} for t in MIXED)
        idx = mem.engine.state().index
        _filed(idx)
        lengths = np.diff(idx.ends.view, prepend=0)
        read: list[int] = []
        words_in = coindex.NamespaceIndex._words_in
        monkeypatch.setattr(coindex.NamespaceIndex, "_words_in",
                            lambda self, start, end: read.append(end - start) or words_in(self, start, end))
        mem.delete([int(idx.ids.view[k]) for k in doomed])
        monkeypatch.undo()
        assert 0 < sum(read) <= int(lengths[doomed].sum())
        kept = [t for k, t in enumerate(MIXED) if k not in doomed]
        with _store(kept) as ref:
            want = _filed(ref.engine.state().index)
            want_counts = ref.engine.state().index._word_counts
            assert _filed(mem.engine.state().index) == want
            assert mem.engine.state().index._word_counts == want_counts
    with Memory(path) as mem:
        idx = mem.engine.state().index
        assert idx.words_unread() == 0 and _filed(idx) == want and idx._word_counts == want_counts


def test_a_slip_opening_a_message_and_an_inflection_already_matched():
    with _store(["See you at the harbour", "Resturant was full", "Two greyhounds and one greyhound"]) as mem:
        idx = mem.engine.state().index
        words = _words(idx)
        assert "resturant" in words and "greyhounds" in words  # not glued to the previous message's "harbour"
        assert channels.lexical(idx, analyze("restaurant"), mem.config).rows.tolist() == [1]
        assert idx.slips(lexicon.pattern("greyhound"), "greyhound") is None  # "greyhounds" is its own form


def test_the_slips_of_a_word_are_one_pattern_whatever_its_case():
    with _store(SLIPPED, relatives=False) as mem:
        idx = mem.engine.state().index
        plain = idx.slips(lexicon.pattern("restaurant"), "restaurant")
        assert plain is idx.slips(lexicon.pattern("Restaurant"), "Restaurant")
        slip = lexicon.pattern("resturant")
        assert set(plain.singles.tolist()) == set(slip.singles.tolist()) and set(plain.phrases) == set(slip.phrases)
        assert plain.term == lexicon.pattern("restaurant").term

def test_a_word_asked_in_another_case_first_does_not_change_its_slips():
    """Whether a word is looked for as a slip depends on its case: cl100k writes "Tennessee" in one token and
    "tennessee" in several, so "Tennessee" finds "Tennesee" and "tennessee" (a word of no training text) does not.
    The namespace's answer for one case is not the other's: asking the lower-case word first changes nothing."""
    texts = ["We drove through Tennesee on the way to the festival.", "The food was great.", "My cousin lives in Ohio."]
    assert lexicon.several_tokens("tennessee") and not lexicon.several_tokens("Tennessee")
    with _store(texts) as fresh:
        want = [h.id for h in fresh.search("Tennessee trip", k=3)]
    assert len(want) == 1 and want[0] == 1  # the reference: a namespace asked nothing before
    with _store(texts) as mem:
        idx = mem.engine.state().index
        assert mem.search("tennessee trip", k=3) == []
        assert idx.slips(lexicon.pattern("tennessee"), "tennessee") is None
        assert [h.id for h in mem.search("Tennessee trip", k=3)] == want
        slip = idx.slips(lexicon.pattern("Tennessee"), "Tennessee")
        assert slip is not None and set(lexicon.pattern("Tennesee").phrases) <= set(slip.phrases)


def test_several_tokens_agrees_with_the_encoder():
    for word in ["restaurant", "resturant", "Caroline", "caroline", "recieved", "trail", "Potery", "greyhounds",
                 "marathon", "maraton", "Relaxed", "relaxed", "hikking", "LeBron"]:
        assert lexicon.several_tokens(word) == (len(tokenizer.encode(" " + word)) > 1), word


def test_read_ahead_in_steps_reads_the_same_words():
    with _store(SLIPPED * 3) as mem, _store(SLIPPED * 3) as ref:
        idx = mem.engine.state().index
        steps = 0
        while not idx.read_words(1):  # one message a step
            steps += 1
        assert steps == len(SLIPPED * 3) - 1
        assert _words(idx) == _words(ref.engine.state().index)
        with pytest.raises(Exception, match="max_tokens"):
            idx.read_words(0)
    with Memory(None) as empty:
        assert empty.engine.state().index.read_words(10)


def test_the_words_are_read_in_the_background_after_an_import(monkeypatch):
    from hippo.engine import state as state_mod

    with Memory(None) as short:  # a short tail is left to the question (a few ms)
        short.add_many({"text": t, "speaker": "Ann"} for t in SLIPPED)
        state = short.engine.state()
        assert state.wait_warm(10) and state.index._words is None
        assert state.index.words_unread() == len(state.index.content)
    monkeypatch.setattr(state_mod, "WORDS_LAG", 1)
    with Memory(None) as mem, Memory(None, config={"retrieval": {"misspellings": False}}) as off:
        for m in (mem, off):
            m.add_many({"text": t, "speaker": "Ann"} for t in SLIPPED)
        state = mem.engine.state()
        assert state.wait_warm(10)
        idx = state.index
        assert idx._words is not None and idx.words_unread() == 0  # read without a question
        assert "resturant" in _words(idx)
        state = off.engine.state()
        assert state.wait_warm(10) and state.index._words is None  # switched off: nothing read


def test_codes_one_letter_apart_are_no_slips_of_each_other():
    with _store(["Ticket zqcbc is open.", "Ticket zqcbq is closed.", "Ticket zqcbj waits."]) as mem:
        idx = mem.engine.state().index
        assert "zqcbq" in _words(idx)  # several tokens, as the word asked is too: no word to slip from
        assert idx.slips(lexicon.pattern("zqcbc"), "zqcbc") is None
        assert [h.text for h in mem.search("zqcbc", k=1)] == ["Ticket zqcbc is open."]
        assert channels.lexical(idx, analyze("zqcbc"), mem.config).rows.tolist() == [0]


# -- letters held for emphasis ("birthdayyy") ----------------------------------------------------------------------

def _held_reference(word: str) -> "re.Pattern[str]":
    """The spellings of ``word`` with letters held, as a regular expression: each run of a letter as written or, if
    written once or twice, three times or more."""
    import itertools
    import re

    parts = []
    for c, run in itertools.groupby(word):
        k = len(list(run))
        parts.append(f"(?:{c}{{{k}}}|{c}{{3,}})" if k <= 2 else f"{c}{{{k}}}")
    return re.compile("".join(parts))


@pytest.mark.parametrize("word", ["birthday", "good", "coffee", "love", "pizza", "aab"])
def test_stretched_from_is_exactly_the_word_with_letters_held(word):
    ref = _held_reference(word)
    rng = np.random.default_rng(len(word))
    others = {word, word + word[-1] * 3, word[0] * 4 + word[1:], word[:-1], word + "s", word.upper()}
    for _ in range(3000):  # random strings near the word: letters held, dropped, doubled or replaced
        w = list(word)
        for _ in range(int(rng.integers(1, 3))):
            k = int(rng.integers(0, len(w)))
            op = int(rng.integers(0, 4))
            if op == 0:
                w[k] = w[k] * int(rng.integers(2, 6))
            elif op == 1 and len(w) > 1:
                del w[k]
            elif op == 2:
                w[k] = "x"
            else:
                w.insert(k, w[k])
        others.add("".join(w))
    held = [w for w in others if lexicon.stretched_from(word, w)]
    assert held  # the random edits do hold letters
    for w in others:
        assert lexicon.stretched_from(word, w) == (w != word and ref.fullmatch(w) is not None), w
    assert lexicon.stretched_from("birthday", "birthdayyy") and lexicon.stretched_from("cool", "cooool")
    assert not lexicon.stretched_from("birthday", "birthdayy")  # doubled, not held: a slip of its own


HELD = ["omg my birthdayyyy was amazinggg", "The birthday cake was chocolate.", "The pizzaaa was sooo good",
        "We walked to the park.", "I loooove that song"]


def test_a_held_letter_counts_like_a_slip_and_can_be_switched_off():
    with _store(HELD) as mem:
        idx = mem.engine.state().index
        assert {"birthdayyyy", "pizzaaa", "loooove"} <= _words(idx)
        for question in ("What happened on the birthday?", "Which pizza?", "What song does she love?"):
            q = analyze(question)
            got = channels.lexical(idx, q, mem.config)
            docs = [[w.strip(".,!?").lower() for w in t.split()] for t in HELD]
            tf = [[sum(textnorm.stem(w) == stem for w in d)
                   + channels.SLIP_WEIGHT * sum(lexicon.stretched_from(word.lower(), w) for w in d) for d in docs]
                  for stem, word in zip(q.stems, q.keywords)]
            rc = mem.config.retrieval
            want = bm25(tf, idx.doc_lengths().tolist(), rc.bm25_k1, rc.bm25_b)
            assert got.rows.tolist() == sorted(want), question
            assert np.allclose(got.scores, [want[r] for r in got.rows.tolist()], rtol=1e-12, atol=0)
        assert [h.text for h in mem.search("love", k=1)] == ["I loooove that song"]
    with _store(HELD, misspellings=False) as mem:
        assert channels.lexical(mem.engine.state().index, analyze("pizza"), mem.config).rows.size == 0


def test_a_snapshot_of_words_read_by_an_older_rule_is_read_again(tmp_path, monkeypatch):
    """The words a snapshot holds were read by the rule of the version that saved it: one saved before the words
    written with optional marks were read ("المَدْرَسَةِ", eleven tokens) would hide them for good. Such words are
    read again; the reference is a store that never saved."""
    from hippo.index import coindex

    words_read_again(tmp_path, monkeypatch, ["ذَهَبْتُ إِلَى المَدْرَسَةِ صَبَاحًا", "Nothing to see in this filler message."],
                     "مدرسة", [(coindex, "_WORDS_RULE", 1),
                               (coindex.NamespaceIndex, "_words_in", lambda self, start, end: Counter())])  # older


def test_a_reopened_store_finds_the_words_read_in_its_snapshot(tmp_path):
    """The words of several tokens are saved with the co-index: a reopened store answers a question's misspellings
    without reading its stream again, with the words a fresh read finds (the reference), also after appends since
    the snapshot; after a deletion since, they are read again."""
    path = tmp_path / "m.db"
    with Memory(path) as mem:
        mem.add_many({"text": t, "speaker": "Ann"} for t in SLIPPED)
    with Memory(path) as mem, _store(SLIPPED) as ref:
        idx = mem.engine.state().index
        assert idx._words is not None and idx.words_unread() == 0  # nothing left to read at the first question
        assert _words(idx) == _words(ref.engine.state().index) >= {"resturant", "potery", "maraton"}
        assert [h.text for h in mem.search("restaurant", k=3)] == [h.text for h in ref.search("restaurant", k=3)]
        mem.add("Then a long hikking trip.", speaker="Bo")
        ref.add("Then a long hikking trip.", speaker="Bo")
        assert idx.words_unread() > 0 and _words(idx) == _words(ref.engine.state().index)
    with Memory(path) as mem:
        doomed = mem.search("resturant", k=1)[0].id
    with Memory(path) as writer:
        writer.delete(doomed)  # its words must not come back from a snapshot
    with Memory(path) as mem:
        assert "resturant" not in _words(mem.engine.state().index)
        assert "hikking" in _words(mem.engine.state().index)
    with Memory(path, config={"retrieval": {"misspellings": False}}) as off:
        off.add("A brand new wrod.", speaker="Ann")
    with Memory(path) as mem:  # saved with misspellings off: the words are read at the question, as before
        assert "wrod" in _words(mem.engine.state().index)


def test_an_import_into_memory_reads_its_words_in_the_write(monkeypatch, tmp_path):
    """A store without snapshots reads the words of an import (one write of WORDS_LAG tokens or more) in the write
    (a file store reads them in the snapshot it writes then): the question asked at once finds them read, and
    answers as when it reads them."""
    from hippo.engine import state as state_mod

    monkeypatch.setattr(state_mod, "WORDS_IDLE", 1e9)  # the background reader never gets to them
    texts = [f"{t} Note {k}." for k in range(300) for t in SLIPPED]
    items = [{"text": t, "speaker": "Ann" if k % 2 else "Bo"} for k, t in enumerate(texts)]
    with Memory(None) as mem, Memory(None) as ref:
        mem.add_many(items)  # one write
        for k in range(0, len(items), 100):  # written in parts: each left to the background, then to the question
            ref.add_many(items[k:k + 100])
        idx, ref_idx = mem.engine.state().index, ref.engine.state().index
        assert len(idx.content) >= state_mod.WORDS_LAG
        assert idx.words_unread() == 0 and ref_idx.words_unread() == len(ref_idx.content)
        for q in ("Where did we have dinner, the resturant?", "When does the potery class start?"):
            assert mem.recall(q, budget_tokens=300).text == ref.recall(q, budget_tokens=300).text
        assert ref_idx.words_unread() == 0 and _words(idx) == _words(ref_idx)

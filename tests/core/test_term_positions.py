"""Whole-word occurrences of query terms in the Content DWM, against a reference computed from the plain token list.

The co-index tests whether an occurrence ends a word with its per-position glue flags (kept beside the Content DWM,
extended on append, rebuilt after deletions and after a restart). The reference walks the token ids of every message
in order: an occurrence of a term's tokens is a whole word when the token after it is in another message, past the
end, or does not continue a word, and when it starts a word: it begins a message, its first token has a leading
space or punctuation, or the message's text before it ends in something other than a letter, digit or mark
("brushpaint" holds no "paint"; "😍paint" does, however many tokens the emoji is cut into). A change between a script
written without spaces and another is a word boundary too ("東京paint" holds "paint", "paint東京" too).
"""

from __future__ import annotations

import itertools
import random
import unicodedata

import numpy as np
import pytest

from hippo import Memory
from hippo.text import lexicon, textnorm, tokenizer

WORDS = ["paint", "paintbrush", "brush", "brushes", "Lisbon", "Lisbonite", "cello", "cellos", "tram", "trampoline",
         "ibex", "new", "York", "newer", "🙂", "東京", "naïve", "and", "the", "x", "машину", "машинусь",
         "Lisbon’s", "“paint”", "tram—cello", "ibex😍", "café", "🎉", "❤️", "✨"]


def _texts(rng: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(1, 9))]
        glue = rng.choice([" ", " ", " ", "", ", ", "-"])
        out.append(glue.join(words) + rng.choice(["", ".", "!", " 🙂"]))
    return out


def _reference(messages: list[np.ndarray], pat: lexicon.TermPattern) -> list[int]:
    """Start positions (in the concatenated stream) of whole-word matches of ``pat``; of every match within one
    message for a CJK term (``pat.anywhere``: the script marks no word boundaries)."""
    stream = np.concatenate(messages) if messages else np.zeros(0, np.uint32)
    starts = set(np.cumsum([0] + [m.size for m in messages[:-1]]).tolist()) if messages else set()
    cont = lexicon.continues_word(stream) if stream.size else np.zeros(0, bool)
    msg_end = np.cumsum([m.size for m in messages])
    msg_start = msg_end - np.array([m.size for m in messages], dtype=np.int64)
    enc = tokenizer.encoding()

    def is_word_char(ch: str) -> bool:  # a letter, digit or mark, not an emoji's selector or keycap
        return ch not in "\ufe0e\ufe0f\u20e3" and (ch.isalnum() or unicodedata.category(ch)[0] in "LNM")

    def ends_in_word(p: int) -> bool:
        # the last character of the message's text up to token p: decoded whole, it is a word character; cut by
        # the token's end, it is a word piece if some completion of its bytes is a letter or a mark (completions
        # tried one by one, up to two unknown bytes; more unknown bytes: only the pictograph planes hold none)
        first = int(msg_start[int(np.searchsorted(msg_end, p, side="right"))])
        b = b"".join(enc.decode_single_token_bytes(int(t)) for t in stream[first:p + 1].tolist())
        k = len(b) - 1
        while k > 0 and 0x80 <= b[k] < 0xC0 and len(b) - k < 4:
            k -= 1
        edge = b[k:]
        try:
            return is_word_char(edge.decode("utf-8"))
        except UnicodeDecodeError:
            pass
        n = 2 if 0xC0 <= edge[0] < 0xE0 else 3 if 0xE0 <= edge[0] < 0xF0 else 4 if 0xF0 <= edge[0] < 0xF8 else 0
        missing = n - len(edge)
        if n == 0:
            return True
        if missing > 2:
            return True
        for tail in itertools.product(range(0x80, 0xC0), repeat=missing):
            try:
                ch = (edge + bytes(tail)).decode("utf-8")
            except UnicodeDecodeError:
                continue
            if unicodedata.category(ch)[0] in "LM":
                return True
        return False

    def script_changes(p: int) -> bool:
        # the characters on either side of the joint before token p, within its message, are word characters and
        # one of them is of a script without spaces (textnorm's), the other not; a joint inside a character: no
        row = int(np.searchsorted(msg_end, p, side="right"))
        if p == msg_start[row]:
            return False
        b = [enc.decode_single_token_bytes(int(t)) for t in stream[msg_start[row]:msg_end[row]].tolist()]
        cut = p - int(msg_start[row])
        before, after = b"".join(b[:cut]), b"".join(b[cut:])
        if 0x80 <= after[0] < 0xC0:
            return False
        x, y = before.decode("utf-8")[-1], after.decode("utf-8")[0]
        return is_word_char(x) and is_word_char(y) and textnorm.is_cjk(x) != textnorm.is_cjk(y)

    found = set()
    forms = [(int(t),) for t in pat.singles.tolist()] + [tuple(p) for p in pat.phrases]
    for p in range(stream.size):
        for form in forms:
            q = p + len(form)
            if q > stream.size or tuple(stream[p:q].tolist()) != form:
                continue
            # a match lies within one message
            row = int(np.searchsorted(msg_end, p, side="right"))
            if q > msg_end[row]:
                continue
            starts_word = p in starts or not cont[p] or not ends_in_word(p - 1) or script_changes(p)
            if pat.anywhere or starts_word and (q == stream.size or q in starts or not cont[q] or script_changes(q)):
                found.add(p)
    return sorted(found)


def _check(mem: Memory) -> None:
    state = mem.engine.state()
    idx = state.index
    messages = [idx.tokens_of(r) for r in range(len(idx))]
    stream = idx.content.access_range(0, len(idx.content))
    assert np.array_equal(np.concatenate(messages), stream)
    for word in ("paint", "brush", "Lisbon", "tram", "new York", "cello", "ibex", "東京", "naïve", "x", "машину"):
        pat = lexicon.pattern(word)
        # token counts are kept between questions and extended by appends: still those of the stream
        assert idx.token_counts(pat) == {t: int((stream == t).sum()) for t in pat.tokens}, word
        for t in pat.tokens:  # so are the kept occurrence lists, extended from the tokens appended since
            kept = idx._occurrences(t)
            assert kept is not None and kept[0].tolist() == np.flatnonzero(stream == t).tolist(), word
        got = idx.term_positions(pat).tolist()
        assert got == _reference(messages, pat), word
        for since in idx.starts()[:: max(1, len(idx) // 5)].tolist():  # only the matches from a message on
            assert idx.term_positions(pat, since=since).tolist() == [p for p in got if p >= since], (word, since)
        for _ in range(2):  # computed, then (frequent terms) from the per-term cache
            rows, tf = idx.term_rows(pat)
            want_rows, want_tf = np.unique(idx.rows_of_positions(np.asarray(got, np.int64)), return_counts=True)
            assert rows.tolist() == want_rows.tolist() and tf.tolist() == want_tf.tolist(), word


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_term_positions_match_the_token_stream_through_appends_deletes_and_restarts(tmp_path, seed):
    rng = random.Random(seed)
    path = tmp_path / "words.db"
    with Memory(path) as mem:
        items = mem.add_many([{"text": t} for t in _texts(rng, 60)])
        _check(mem)                               # glue flags built from the Content DWM
        for text in _texts(rng, 25):              # ... then extended by every append
            items.append(mem.add(text))
        _check(mem)
        mem.delete([it.id for it in rng.sample(items, 20)])
        _check(mem)                               # rebuilt after the deletion renumbered positions
    with Memory(path) as again:                   # and after a restart, from the snapshot and the chunks
        _check(again)
        again.add_many([{"text": t} for t in _texts(rng, 10)])
        _check(again)


def test_kept_term_rows_are_extended_message_by_message():
    """A term's kept (rows, occurrences per row) grow with every append and stay those of the whole stream; a new
    message's first word is not joined to the previous message's last."""
    rng = random.Random(5)
    mem = Memory(None)
    idx = mem.engine.state().index
    words = ("paint", "brush", "cello", "東京", "new York", "tram")
    for k, text in enumerate(_texts(rng, 40) + ["paint", "brush", "paint"]):
        mem.add(text)
        messages = [idx.tokens_of(r) for r in range(len(idx))]
        for word in words[k % 2::2]:  # each term asked every second append: extended by one or two messages
            pat = lexicon.pattern(word)
            ref = np.asarray(_reference(messages, pat), dtype=np.int64)
            want_rows, want_tf = np.unique(idx.rows_of_positions(ref), return_counts=True)
            rows, tf = idx.term_rows(pat)
            assert rows.tolist() == want_rows.tolist() and tf.tolist() == want_tf.tolist(), (word, k)


def test_flags_computed_after_positions_alone_equal_those_computed_with_them():
    """A phrase's anchor token is located without its whole-word flags; when a one-token form needs them later
    (after appends extended the kept positions), they are those of a token located with them at once."""
    rng = random.Random(9)
    texts, more = _texts(rng, 50), _texts(rng, 10)
    lazy, eager = Memory(None), Memory(None)
    for mem in (lazy, eager):
        mem.add_many([{"text": t} for t in texts])
    li, ei = lazy.engine.state().index, eager.engine.state().index
    tokens = np.unique(li.content.access_range(0, len(li.content))).tolist()
    for t in tokens:
        li._positions(t)  # positions only
    for mem in (lazy, eager):
        mem.add_many([{"text": t} for t in more])
    for t in tokens:
        got, want = li._occurrences(t), ei._occurrences(t)
        assert got[1] is not None and got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist(), t


def test_tokens_located_together_are_kept_as_located_one_by_one():
    """A new term's tokens are located in one batch, their whole-word flags tested in one pass over all of them:
    the same positions and flags as each token located on its own."""
    rng = random.Random(11)
    texts = _texts(rng, 50)
    together, alone = Memory(None), Memory(None)
    for mem in (together, alone):
        mem.add_many([{"text": t} for t in texts])
    ti, ai = together.engine.state().index, alone.engine.state().index
    stream = ti.content.access_range(0, len(ti.content))
    tokens = np.unique(stream).tolist()
    ti._locate_many(tokens, [int((stream == t).sum()) for t in tokens], len(ti.content), words=True)
    for t in tokens:
        got, want = ti._occurrences(t), ai._occurrences(t)
        assert got[0].tolist() == want[0].tolist() == np.flatnonzero(stream == t).tolist(), t
        assert got[1].tolist() == want[1].tolist(), t


def test_a_word_glued_to_the_next_piece_is_not_the_word():
    mem = Memory(None)
    mem.add_many([{"text": t} for t in ("a paintbrush", "paint", "paint brush", "paintbrushes")])
    idx = mem.engine.state().index
    rows = sorted(set(idx.rows_of_positions(idx.term_positions(lexicon.pattern("paint"))).tolist()))
    texts = [tokenizer.decode(idx.tokens_of(r)) for r in rows]
    assert texts == ["paint", "paint brush"]


def _starts_word(tid: int) -> bool:
    """Reference: decode the token and apply the byte rule; an id that does not decode starts a word."""
    try:
        b = tokenizer.encoding().decode_single_token_bytes(tid)
    except KeyError:
        return True
    return lexicon._bytes_start_word(b)


def test_the_word_start_table_equals_decoding_each_token():
    """The table filled from the encoding's byte table says, for every token id, what decoding that token says."""
    ids = np.arange(tokenizer.vocab_size() + 1)
    table = lexicon._word_start_table()
    assert (table >= 0).sum() > 100_000 - 300  # every ordinary token is known up front
    assert np.array_equal(lexicon.continues_word(ids), np.array([not _starts_word(int(t)) for t in ids]))
    known = table >= 0
    assert np.array_equal(table[known] == 1, np.array([_starts_word(int(t)) for t in ids[known]]))


def test_word_start_and_end_tables_equal_the_per_token_rules():
    """The vectorised tables (built from the encoding's byte table) against the per-token byte rules."""
    enc = tokenizer.encoding()
    start, end = lexicon._word_start_table(), lexicon._word_end_table()
    checked = 0
    for tid in range(start.size):
        try:
            b = enc.decode_single_token_bytes(tid)
        except KeyError:
            continue
        assert start[tid] == (1 if lexicon._bytes_start_word(b) else 0), (tid, b)
        assert end[tid] == (1 if lexicon.last_character_is_word(b) else 0), (tid, b)
        checked += 1
    assert checked > 100_000


def test_term_stats_are_the_counts_and_frequency_of_the_current_stream():
    # kept per pattern until the stream grows or rows are removed; always equal to counts over the stream itself
    mem = Memory(None, namespace="stats")
    pats = [lexicon.pattern(w) for w in ("paint", "brush", "Lisbon", "new York", "東京", "σουβλακι")]

    def anchored(ph: tuple[int, ...], want: dict[int, int]) -> tuple[int, int]:
        # a phrase's rarest token (the first of them) and its offset
        k = min(range(len(ph)), key=lambda j: (want[ph[j]], j))
        return ph[k], k

    def check():
        idx = mem.engine.state().index
        stream = idx.content.access_range(0, len(idx.content))
        for p in pats:
            for _ in range(2):  # the second answer at one length is the kept one
                counts, f = idx.term_stats(p)
                want = {t: int((stream == t).sum()) for t in p.tokens}
                assert counts == want
                # the single tokens' counts, and each rarest phrase piece's once per offset: phrases anchored alike
                # start where its occurrences put them
                assert f == sum(want[t] for t in p.singles.tolist()) + sum(
                    want[t] for t, _ in {anchored(ph, want) for ph in p.phrases})
                assert f >= idx.term_positions(p).size  # a bound on the term's occurrences

    ids = []
    for t in _texts(random.Random(5), 12):
        ids.append(mem.add(t).id)
        check()
    mem.delete(ids[::3])
    check()
    mem.close()


def test_kept_term_statistics_and_rows_hold_no_pattern():
    """A namespace keeps the counts and rows of its questions' terms, not the terms' patterns (about 20 KB each,
    the process's to keep in ``lexicon.pattern``): a pattern the process dropped is freed, however many namespaces
    asked for it. A pattern made again for the same word finds what the first one left, and the answers are those
    of the stream itself."""
    import gc
    import sys
    import weakref

    mem = Memory(None)
    for t in _texts(random.Random(7), 30):
        mem.add(t)
    idx = mem.engine.state().index
    stream = idx.content.access_range(0, len(idx.content))
    for word in ("paint", "new York", "Lisbon’s", "東京", "machinery"):
        forms = lexicon.surface_forms(word)
        pat = lexicon._pattern_of(word, forms, False)  # made anew, as after lexicon.pattern's cache let it go
        phrases = pat.phrases
        held = sys.getrefcount(phrases)
        counts, f = idx.term_stats(pat)
        rows, tf = idx.term_rows(pat)
        assert counts == {t: int((stream == t).sum()) for t in pat.tokens}
        ref = weakref.ref(pat)
        del pat
        gc.collect()
        assert ref() is None, word
        assert sys.getrefcount(phrases) == held - 1, word  # only this test's name for it is left
        again = lexicon._pattern_of(word, forms, False)
        assert idx.term_stats(again) == (counts, f)
        got = idx.term_rows(again)
        assert got[0] is rows and got[1] is tf  # the kept answer
    mem.close()


def test_patterns_hold_one_int_per_token_id():
    """A pattern's phrases (about a hundred for a word) hold one int object per distinct token id, shared with every
    other pattern, instead of the one the encoder made for each occurrence: a process-wide cache of 20,000 words'
    patterns took about 20 KB a word, now about half."""
    words = ("restaurant", "birthday", "Lisbon", "new York", "machinery")
    pats = [lexicon._pattern_of(w, lexicon.surface_forms(w), False) for w in words]
    objects = {id(t) for p in pats for ph in p.phrases for t in ph}
    values = {t for p in pats for ph in p.phrases for t in ph}
    assert len(values) > 50 and len(objects) == len(values)


def test_a_process_keeps_the_patterns_of_its_latest_query_words_only():
    """A server asked questions of ever new words holds the patterns (about 10 KB each) of the last
    ``lexicon.WORDS_KEPT`` words it was asked, not of every word since it started: the patterns of its first
    questions' words are freed once that many others were asked after them."""
    import gc
    import weakref

    enc = tokenizer.encoding()
    words = sorted({w for w in (enc.decode([t]).strip() for t in range(20000, 60000)) if w.isalpha()
                    and w.islower() and len(w) >= 5})[: lexicon.WORDS_KEPT + 400]
    assert len(words) == lexicon.WORDS_KEPT + 400
    mem = Memory(None)
    mem.add("the kestrel hunts over the meadow")
    first, rest = words[:60], words[60:]
    for w in first:
        mem.search(f"what about {w}?", k=1)
    refs = [weakref.ref(lexicon.pattern(w)) for w in first]
    for k in range(0, len(rest), 3):
        mem.search("what about " + " ".join(rest[k:k + 3]) + "?", k=1)
    gc.collect()
    # a few come back as the relatives of later words ("abort" of "abortion") and are among the latest again
    assert len([w for w, r in zip(first, refs) if r() is not None]) <= len(first) // 10
    assert lexicon.pattern.cache_info().currsize <= lexicon.WORDS_KEPT
    mem.close()


def test_a_namespace_keeps_no_pattern_of_its_misspellings_and_relatives():
    """What a namespace keeps of a word's misspellings and relatives is the words found, not their pattern (about
    10 KB): the patterns alive are those lexicon's caches keep, however many namespaces are loaded."""
    import gc

    mem = Memory(None)
    for ns in ("a", "b", "c"):
        view = mem.using(ns)
        view.add("We adopted a greyhound from the rescue in Seattle")
        view.add("The adoption papers were signed at the recieving desk")
        for q in ("Where did the adopton happen?", "Which cities did we visit?", "Who recieved the papers?"):
            assert view.search(q, k=1)
    lexicon.slips.cache_clear()
    lexicon.pattern.cache_clear()
    gc.collect()
    assert [o for o in gc.get_objects() if isinstance(o, lexicon.TermPattern)] == []
    hits = mem.using("b").search("Where did the adopton happen?", k=1)  # asked again: made again, same answer
    assert "adopt" in hits[0].text.lower()
    mem.close()


def test_the_stems_kept_are_of_words_read_not_of_the_forms_a_question_s_words_might_take():
    """A question's word is looked for in its inflections ("quorvexing", "quorvexed", ...), most of them no word;
    their stems were kept with those of the words read (about twenty a new word: 10,000 questions of new words
    filled the 200,000 entries and pushed out the stems of the messages' words), and a long word's stem was kept
    with it however long. Only the stems of the words themselves are kept now, and none of a word past
    :data:`textnorm.STEM_KEPT_CHARS` characters; every stem is the one it was."""
    from hippo.text import textnorm

    mem = Memory(None)
    mem.add("The quorvex pottery class met on Tuesday.")
    mem.search("which countries did the pottery class visit?", k=1)   # the tables read once (places' kinds)
    kept = textnorm._kept_stem.cache_info
    new = [f"zembrudite{k}x" for k in range(30)] + [f"plorrivant{k}y" for k in range(30)]
    before = kept().currsize
    for k in range(0, len(new), 3):
        mem.search("what about " + " ".join(new[k:k + 3]) + "?", k=1)
    # the question's words themselves and the few words of the question and the answer read with them
    assert kept().currsize - before <= len(new) + 10
    long_word = "k7" * 200
    before = kept().currsize
    assert textnorm.stem(long_word) == textnorm.stem_once(long_word) == long_word
    assert mem.search(f"where is {long_word}?", k=1) == []
    assert kept().currsize - before <= 2
    for w in new + ["running", "made", "cities", "Sara's", "colours", long_word, "hopped", "agreed"]:
        assert textnorm.stem(w) == textnorm.stem_once(w)
    mem.close()


def test_a_kept_pattern_holds_one_int_per_token_id_and_its_phrase_table_in_int32():
    """The patterns of the last :data:`lexicon.WORDS_KEPT` words are kept: their token lists made a new int object
    per token id (32 bytes each, where the phrases share one per id) and their phrase tables were int64, together
    a quarter of the memory a new question word keeps (17.5 KB a word, now 13.3 KB)."""
    pat = lexicon.pattern("zembruditeing")
    assert pat.phrases and len(pat.tokens) > 10
    assert all(lexicon._TOKEN_INTS.get(t) is t for t in pat.tokens)
    tokens, lengths, distinct, at = pat.phrase_table
    assert tokens.dtype == at.dtype == distinct.dtype == np.int32
    # the same table as one built from the phrases by hand
    assert [tuple(int(t) for t in row[: n]) for row, n in zip(tokens, lengths)] == list(pat.phrases)
    assert np.array_equal(distinct, sorted({t for ph in pat.phrases for t in ph}))
    assert all(distinct[at[i, j]] == tokens[i, j] for i in range(len(lengths)) for j in range(lengths[i]))


def test_a_phrase_table_is_the_phrases_laid_out_row_by_row():
    """The table is built from the phrases' ids laid end to end in one step: against a row-by-row fill, for
    generated phrases of one to seven tokens (and none)."""
    import random

    rng = random.Random(7)
    for n in (0, 1, 2, 40, 300):
        phrases = tuple(sorted({tuple(rng.randrange(100_000) for _ in range(rng.randint(2, 7))) for _ in range(n)}))
        pat = lexicon.TermPattern("zz", np.zeros(0, dtype=np.uint32), phrases)
        tokens, lengths, distinct, at = pat.phrase_table
        longest = max((len(ph) for ph in phrases), default=0)
        want = np.full((len(phrases), longest), -1, dtype=np.int32)
        for k, ph in enumerate(phrases):
            want[k, : len(ph)] = ph
        assert tokens.dtype == np.int32 and np.array_equal(tokens, want)
        assert lengths.tolist() == [len(ph) for ph in phrases]
        assert distinct.tolist() == sorted({t for ph in phrases for t in ph})
        assert all(distinct[at[i, j]] == tokens[i, j] for i in range(len(phrases)) for j in range(lengths[i]))
        assert (at[tokens < 0] == -1).all()


def test_a_word_s_surface_forms_are_kept_for_its_relatives_and_given_as_a_copy():
    """A new query word's forms are read for its pattern and for its relatives: the second read finds them kept,
    the same set as computed, and a caller changing the set it got changes nothing kept."""
    for word in ("adopt", "Colour", "cafe", "машина", "birthday", "٢٠٢٤", "🏖️", "running"):
        computed = lexicon._forms_of(word)
        got = lexicon.surface_forms(word)
        assert got == computed
        got.add("zzz-not-a-form")
        assert lexicon.surface_forms(word) == computed
    lexicon._kept_forms.cache_clear()
    lexicon.relative_words.cache_clear()
    lexicon.relative_words("adopt")
    hits = lexicon._kept_forms.cache_info().hits
    lexicon.pattern.cache_clear()
    lexicon.pattern("adopt")  # the forms its relatives read
    assert lexicon._kept_forms.cache_info().hits >= hits + 1


def test_a_pattern_is_the_same_with_its_pieces_encoded_from_their_bytes(monkeypatch):
    """A form that is one pre-tokenizer piece is encoded from the bytes its byte-table lookup made: the patterns of
    words of several scripts and cases, and of code-like words, are those the text encoder gives."""
    words = ["running", "Colour", "youtube", "DuplicateKeyError", "resturant", "cafe", "машина", "會議", "🐶",
             "2024", "bday", "naïve", "İzmir", "x", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"]
    assert lexicon._piece_bytes_encoder() is not None  # this tiktoken has the call
    lexicon.pattern.cache_clear()
    fast = [lexicon.pattern(w) for w in words]
    lexicon.pattern.cache_clear()
    monkeypatch.setattr(lexicon, "_piece_bytes_encoder", lambda: None)
    slow = [lexicon.pattern(w) for w in words]
    lexicon.pattern.cache_clear()
    for a, b in zip(fast, slow):
        assert a.term == b.term and a.anywhere == b.anywhere
        assert a.singles.tolist() == b.singles.tolist() and a.phrases == b.phrases

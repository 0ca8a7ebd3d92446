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
from tests.word_shapes import mangle

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

_PIECE = st.tuples(st.sampled_from(_WORDS), st.integers(0, 4)).map(lambda t: mangle(*t))
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



_GATE_WORDS = _WORDS + ["yday", "tmrw", "tomorow", "ago", "this", "past", "on", "in", "since", "during", "morning",
                        "jan", "Sept", "sep", "oct", "I", "I've", "I'd", "we're", "me", "home", "due", "ships",
                        "launches", "meet", "moved", "relocated", "switched", "sold", "started", "quit", "left",
                        "joined", "accepted", "hired", "retrained", "favorite", "favourite", "passed", "died"]
_GATE_TEXT = st.lists(st.tuples(st.tuples(st.sampled_from(_GATE_WORDS), st.integers(0, 4)).map(lambda t: mangle(*t)),
                                st.sampled_from([" ", "", ".", "_", "é", "İ"])),
                      max_size=12).map(lambda parts: "".join(p + sep for p, sep in parts))


@settings(max_examples=3000, deadline=None)
@given(_GATE_TEXT)
def test_gates_on_folded_text_equal_the_case_insensitive_ones(text):
    from hippo.text import attributes

    assert (timeexpr._ANY.search(text) is None) == (timeexpr._ANY_FOLDED.search(textnorm.regex_folded(text)) is None)
    assert (attributes._ANY.search(text) is None) == \
        (attributes._ANY_FOLDED.search(textnorm.regex_folded(text)) is None)


def test_folding_keeps_length_words_and_digits():
    # what makes a case-sensitive search of the folded text find a match where the case-insensitive one does
    w, d = re.compile(r"\w"), re.compile(r"\d")
    for cp in [*range(0xD800), *range(0xE000, 0x10000), 0x1D400, 0x1F600, 0x10400, 0x1E900]:
        c = chr(cp)
        f = textnorm.regex_folded(c)
        assert len(f) == 1, hex(cp)
        assert (w.match(c) is None) == (w.match(f) is None) and (d.match(c) is None) == (d.match(f) is None), hex(cp)
        if f.isascii() and f != c:  # only letters fold onto ASCII: the uppercase ones and the four re.I adds
            assert "A" <= c <= "Z" or c in "\u0130\u0131\u017f\u212a", hex(cp)

# -- the co-index's digest of one appended message ----------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 100_276), min_size=1, max_size=4200))
def test_one_message_digest_equals_the_blocked_sum(ids):
    from hippo.index.coindex import NamespaceIndex

    tokens = np.asarray(ids, dtype=np.uint32)
    one = NamespaceIndex._digests_of(tokens, np.asarray([tokens.size]))
    # two messages take the general path; the first one's digest is the same function of its tokens
    two = NamespaceIndex._digests_of(np.concatenate([tokens, tokens[:1]]), np.asarray([tokens.size, tokens.size + 1]))
    assert one.dtype == np.uint64 and one.shape == (1,)
    assert one[0] == two[0]


# -- near-duplicate facts inside one consolidation batch -----------------------------------------------------------
# The batch loop as it was, one distance per pair of facts (``hamming`` of two codes), the oracle for the
# loop that reads them from one matrix of all pairs.

from hippo.engine.hierarchy.codes import bag_pairs, bag_vectors, hamming, idf_array, sign_many  # noqa: E402
from hippo.engine.hierarchy.state import Semantic  # noqa: E402


def _insert_semantics_per_pair(self, facts: list[tuple]) -> list[int]:
    """Dedup against existing semantics, then add the rest to the kNN graph and the themes in one batch."""
    if not facts:
        return []
    group = np.repeat(np.arange(len(facts)), [np.asarray(f[4]).size for f in facts])
    pg, ps, cnt = bag_pairs(group, np.concatenate([np.asarray(f[4], dtype=np.int64) for f in facts]))
    weights = idf_array(max(1, self.n_docs), self.df.get(ps)) * (1.0 + np.log(cnt))
    codes = sign_many(self.coder, bag_vectors(self.coder, pg, ps, weights, len(facts)))
    if self.external_codes is not None:  # a fact takes the embedding code of the message it comes from
        for j, f in enumerate(facts):
            own = self.message_code(f[2][0]) if f[2] else None
            if own is not None:
                codes[j] = own
    near_d, near_i = self.sem_codes.nearest(codes, 1)
    limit = (1.0 - self.cfg.semantic_dedup) * self.bits / 2.0  # similarity >= dedup <=> distance <= limit
    out: list[int] = []
    new: list[int] = []
    for j, (text, speaker, mids, eid, stems, seq, ts, sal, llm, span) in enumerate(facts):
        sid = -1
        if near_i[j, 0] >= 0 and near_d[j, 0] <= limit:
            sid = int(near_i[j, 0])
        for other in new:  # near-duplicates inside the batch
            if sid < 0 and int(hamming(codes[j], self.sem_codes.codes[other])) <= limit:
                sid = other
        ep = self.episodes.get(eid)
        if sid >= 0:
            s = self.semantics[sid]
            for mid in mids:
                if mid not in s.message_ids:
                    s.message_ids.append(mid)
            if eid not in s.episode_ids:
                s.episode_ids.append(eid)
            self.dedup_merges += 1
        else:
            sid = self.sem_codes.append(codes[j])
            terms = tuple(dict.fromkeys(np.unique(stems).tolist() + self._speaker_stem(speaker)))
            self.semantics[sid] = Semantic(sid, text, speaker, list(dict.fromkeys(mids)), [eid], terms, seq, ts,
                                           float(sal), llm, span=span, unit=self._unit)
            self.created.append(("semantic", sid))
            new.append(sid)
        for mid in mids:
            lst = self.msg_semantics.setdefault(mid, [])
            if sid not in lst:
                lst.append(sid)
        if ep is not None and sid not in ep.semantic_ids:
            ep.semantic_ids.append(sid)
        out.append(sid)
    if new:
        self.sem_graph.insert_many(new)
        self.themes.attach_batch(new)
    return out


_STEM_WORDS = ("apple banana cherry garden painting pottery hiking camping guitar violin museum concert beach "
               "mountain river school adoption support group parade festival market bakery library")


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.integers(0, 8), min_size=1, max_size=6), min_size=1, max_size=40),
       st.integers(0, 3), st.sampled_from([0.2, 0.3, 0.45, 0.6, 0.8]))
def test_batch_dedup_equals_the_per_pair_loop(bags, before, dedup):
    import dataclasses

    from hippo.base.config import HierarchyConfig
    from hippo.engine.hierarchy.state import Hierarchy

    from hippo.text import vocab

    known = vocab.text_stems(_STEM_WORDS)  # stem ids the vocabulary holds

    def fact(k, picks):
        stems = known[np.asarray(picks) % known.size]
        return (f"fact {k}", "Ann", [1000 + k], 1, np.asarray(stems, dtype=np.int64), k, None, 0.5, False, None)

    def make():
        h = Hierarchy(dataclasses.replace(HierarchyConfig(), semantic_dedup=dedup))
        h.df.assign(np.arange(64), np.arange(64) % 7 + 1)
        h.n_docs = 50
        if before:  # semantics of an earlier batch: the nearest-neighbour search finds them first
            h._insert_semantics([fact(-1 - k, bags[k % len(bags)][::-1]) for k in range(before)])
        return h

    h, ref = make(), make()
    ref.msg_semantics = dict(ref.msg_semantics.items())  # the per-pair loop writes a dict of lists
    facts = [fact(k, stems) for k, stems in enumerate(bags)]
    got = h._insert_semantics(facts)
    want = _insert_semantics_per_pair(ref, facts)
    assert got == want
    assert h.sem_codes.n == ref.sem_codes.n
    assert (h.sem_codes.codes[:h.sem_codes.n] == ref.sem_codes.codes[:ref.sem_codes.n]).all()
    assert {k: (v.text, v.message_ids, v.episode_ids, v.terms) for k, v in h.semantics.items()} == \
        {k: (v.text, v.message_ids, v.episode_ids, v.terms) for k, v in ref.semantics.items()}
    assert h.msg_semantics == ref.msg_semantics and h.dedup_merges == ref.dedup_merges


# -- metadata: flat plain values skip the JSON round trip -----------------------------------------------------------

_VALUE = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(-(1 << 70), 1 << 70), st.floats(),
                   st.text(max_size=8), st.text(alphabet=st.characters(max_codepoint=127), max_size=8),
                   st.sampled_from(["\ud800", "a\udfffb", "\x00\n\t\"\\", "é", 10 ** 5000, -0.0, 1e308]),
                   st.lists(st.integers(), max_size=2))


@settings(max_examples=3000, deadline=None)
@given(st.dictionaries(st.one_of(st.text(max_size=6), st.sampled_from(["k", "\ud800", "é"])), _VALUE, max_size=5))
def test_metadata_fast_path_equals_the_json_round_trip(meta):
    import types

    from hippo.base.checks import check_metadata
    from hippo.base.errors import InvalidInput

    def outcome(value):
        try:
            got = check_metadata(value)
        except InvalidInput as exc:
            return ("refused", str(exc).split(":")[0])
        return ("ok", [(k, type(v), repr(v)) for k, v in got.items()])

    # a mapping that is not a dict always takes the round trip
    assert outcome(meta) == outcome(types.MappingProxyType(meta))
    got = check_metadata(meta) if outcome(meta)[0] == "ok" else None
    assert got is None or (got == meta or any(v != v for v in meta.values())) and got is not meta


def test_said_at_row_equals_said_at():
    from hippo import Memory
    from hippo.engine.truth.state import said_at, said_at_row

    with Memory(None) as mem:
        for k in range(12):
            mem.add(f"message {k}", speaker="Ann", timestamp=None if k % 3 == 0 else 1_700_000_000 + 3600 * k)
        idx = mem._ns.state().index
        rows = np.arange(len(idx))
        want = said_at(idx, rows)
        assert [said_at_row(idx, int(r)) for r in rows] == want.tolist()

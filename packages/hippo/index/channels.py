"""Candidate channels and their fusion.

* lexical: BM25 over messages, with term and document frequencies read from Content-DWM counts and occurrence
  positions (no inverted index);
* signature: query keyword signatures searched in the Signature DWM within a Hamming ball (seed 000 §3.3);
* embedding: optional SimHash codes of user embeddings searched by XOR-popcount;

fused by weighted reciprocal rank fusion, RRF(d) = sum_r w_r / (k + rank_r(d)), k = 60 (seed 002 §4.1, Eq. 3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from hippo.base.config import Config
from hippo.index.coindex import NamespaceIndex, Scored, positions
from hippo.native import ri_signatures
from hippo.text import lexicon, textnorm, tokenizer
from hippo.text.names import first_person_uncased, is_nickname_of_name, uncased_name_word
from hippo.text.query import Query


def _idf(n_docs: int, df: float) -> float:
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


@dataclass
class CorpusStats:
    """Collection statistics of several namespaces taken as one corpus, so that channel scores computed in each
    namespace are on one scale (``Memory.search_many``). Built by :func:`corpus_stats`."""

    n_docs: int
    avgdl: float
    term_df: list[float]                       # per query pattern: documents holding the term
    speaker_df: dict[str, float]               # per query stem naming a speaker: that speaker's messages
    signature_total: dict[int, int]            # per query keyword: positions within the Hamming ball


def speaker_names(index: NamespaceIndex) -> dict[str, list[int]]:
    """Query stem -> codes of the speakers it names (:meth:`NamespaceIndex.speaker_stems`)."""
    return index.speaker_stems()


def speakers_named(index: NamespaceIndex, query: Query) -> list[tuple[str, list[int]]]:
    """(query stem, codes of the speakers it names) for each query word that names a speaker: by the name or a word
    of it (:func:`speaker_names`), else, for a capitalised word that is not the question's first, as a nickname of a
    capitalised word of the name (:func:`~hippo.text.names.is_nickname_of_name`: "Mel" names "Melanie Hart",
    "Johnny" names "John")."""
    exact = speaker_names(index)
    out: list[tuple[str, list[int]]] = []
    first = textnorm.words(query.text)[:1]
    for kw, st in zip(query.keywords, query.stems):
        codes = exact.get(st)
        if codes is None and kw[:1].isupper() and [kw] != first:
            codes = [code for code, s in enumerate(index.speakers)
                     if s and is_nickname_of_name(kw, textnorm.words(s))] or None
        if codes is not None:
            out.append((st, codes))
    return out


def names_as_written(query: Query, named: list[tuple[str, list[int]]]) -> list[tuple[str, list[int]]]:
    """The entries of ``named`` (:func:`speakers_named`) whose stem the question writes capitalised somewhere, as a
    name is written: a speaker label the question writes in lower case ("user" in "the user table", the label of a
    chat's roles) is a word there, not a name; "Tim" names Tim in "Which time management technique does Tim use?",
    where one stem stands for both words. None for a question in the first person: its asker is one of the people
    it is about ("What did I tell Sam?", "What did Sam say about my job?"), and which speaker that is, it does not
    say. In Chinese, Japanese, Korean and Thai, which have no capitals, a name is written as any word is: a word of
    those scripts counts as written so, and a question with a first-person word of them is in the first person
    ("张伟喜欢什么运动？" names 张伟; "我跟张伟说了什么？" is asked by one of the two, :mod:`hippo.text.names`)."""
    if query.supporting or not named or first_person_uncased(query.text):
        return []
    capitalised = set()
    for w in textnorm.words(query.text):
        if w[:1].isupper() or uncased_name_word(w):
            low = w.lower().replace("’", "'")  # the stem as the question's analysis takes it
            capitalised.add(textnorm.stem(low.split("'", 1)[0] if "'" in low else low))
    return [(st, codes) for st, codes in named if st in capitalised]


def _not_addressing(index: NamespaceIndex, rows: np.ndarray, tf: np.ndarray, codes: list[int]
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The ``(rows, occurrences)`` of a query word that names the speakers ``codes``, without the messages of the
    other party of a dialogue of two (:meth:`NamespaceIndex.addressees`): there the name addresses that speaker.
    The named speaker's own messages match through the speaker field."""
    to = index.addressees()[rows]
    drop = np.isin(to, codes)
    if not drop.any():
        return rows, tf
    keep = ~drop
    return rows[keep], tf[keep]


# An occurrence of a misspelling counts as this share of an occurrence of the word: a word one slip from the
# question's that cl100k writes in several tokens is as likely a rarer real word as a slip (NamespaceIndex.slips),
# and where the word itself occurs too, the messages that spell it right come first. A derivational relative
# ("adoption" for "adopt": hippo.text.relatives) and the name of a place of the kind a word names ("Seattle" for
# "cities": hippo.text.places) count the same: a related word, not the word.
SLIP_WEIGHT = 0.5


def slip_patterns(index: NamespaceIndex, query: Query) -> list[lexicon.TermPattern | None]:
    """Per query term, the misspellings of it the namespace holds, its derivational relatives and the place names
    of the kind it names (:meth:`NamespaceIndex.slips`), or None; the asker's first-person words have none."""
    content = len(query.patterns) - query.supporting
    return [index.slips(p, w) if i < content else None
            for i, (p, w) in enumerate(zip(query.patterns, query.keywords))]


def _with_slips(index: NamespaceIndex, rows: np.ndarray, tf: np.ndarray, slip: lexicon.TermPattern | None,
                slip_counts: dict[int, int] | None) -> tuple[np.ndarray, np.ndarray]:
    """A term's ``(rows, occurrences)`` plus :data:`SLIP_WEIGHT` per occurrence of its misspellings ``slip``
    (whose token counts are ``slip_counts``)."""
    if slip is None:
        return rows, tf
    srows, stf = index.term_rows(slip, slip_counts)
    if not srows.size:
        return rows, tf
    both = np.union1d(rows, srows)
    out = np.zeros(both.size)
    out[np.searchsorted(both, rows)] += tf
    out[np.searchsorted(both, srows)] += SLIP_WEIGHT * stf
    return both, out


def lexical(index: NamespaceIndex, query: Query, config: Config, *, smooth: bool = False,
            stats: CorpusStats | None = None) -> Scored:
    """BM25 over messages (Robertson & Zaragoza), term statistics from the Content DWM.

    With ``smooth`` (used when building a context), messages also borrow from their conversational neighbours.
    With ``stats``, document frequencies, the document count and the mean length are those of a larger corpus
    this namespace is part of (scores of several namespaces become comparable). A question that names speakers
    (:func:`names_as_written`) does not count their names where the other party of a dialogue of two addresses
    them (``config.retrieval.addressed_names``), and values the other speakers' messages at
    ``config.retrieval.unnamed_speakers`` of their score.
    """
    n_docs = len(index)
    empty = Scored(np.zeros(0, np.int64), np.zeros(0))
    if n_docs == 0 or not query.patterns:
        return empty
    rc = config.retrieval
    lengths = index.doc_lengths()
    avgdl = stats.avgdl if stats is not None else max(1.0, float(lengths.mean()))
    norm = rc.bm25_k1 * (1.0 - rc.bm25_b + rc.bm25_b * lengths / avgdl)
    # What a message lends its neighbours (``smooth``) is its score as standard BM25 normalises length
    # (``neighbor_b``, 0.75): its own length is charged when it is packed (cost per token), but a short neighbour that
    # borrows from it never pays for that length, and a long reply that matches many of a question's words by
    # length alone would otherwise make its request look like the evidence.
    lends = smooth and rc.neighbor_weight > 0 and rc.neighbor_b != rc.bm25_b
    norm_l = rc.bm25_k1 * (1.0 - rc.neighbor_b + rc.neighbor_b * lengths / avgdl) if lends else None
    acc_l = np.zeros(n_docs, dtype=np.float64) if lends else None
    acc = np.zeros(n_docs, dtype=np.float64)

    def score(rows: np.ndarray, tf: np.ndarray | float, idf: float) -> None:
        """Add a term's BM25 part to ``rows``' scores (and to what they lend)."""
        acc[rows] += idf * tf * (rc.bm25_k1 + 1.0) / (tf + norm[rows])
        if acc_l is not None:
            acc_l[rows] += idf * tf * (rc.bm25_k1 + 1.0) / (tf + norm_l[rows])

    touched = np.zeros(n_docs, dtype=bool)
    slips = slip_patterns(index, query)
    # Seed 000 §3.2.2: start from the least frequent keywords; frequent ones are only verified on candidates.
    term_stats = [index.term_stats(p) for p in query.patterns]
    counts = [c for c, _ in term_stats]
    slip_stats = [index.term_stats(sp) if sp is not None else (None, 0) for sp in slips]
    freq = sorted((f + slip_stats[i][1], i) for i, (_, f) in enumerate(term_stats))
    # A name of a speaker, in the other party's messages of a dialogue of two, addresses that speaker: those
    # occurrences are not counted (the word's document frequency still counts them: it is the word's rarity). Not
    # in a question in the first person: "What did I tell Sam?" asks for the asker's own lines to Sam.
    named = speakers_named(index, query)
    written = names_as_written(query, named)
    addressed = dict(written) if rc.addressed_names else {}
    first_supporting = len(query.patterns) - query.supporting
    deferred = []
    enumerated = 0
    full: list[tuple[np.ndarray, np.ndarray]] = []  # content terms enumerated in full
    for f, i in freq:
        if f == 0 or i >= first_supporting:
            continue
        if enumerated + f > rc.enumerate_limit and touched.any():
            deferred.append((f, i))
            continue
        capped = f > rc.enumerate_limit
        if capped:  # a word this frequent is not looked for in its misspellings
            pos = index.term_positions(query.patterns[i], counts[i], rc.enumerate_limit)
            rows, tf = np.unique(index.rows_of_positions(pos), return_counts=True)
        else:
            rows, tf = _with_slips(index, *index.term_rows(query.patterns[i], counts[i]), slips[i],
                                   slip_stats[i][0])
        if rows.size == 0:
            continue
        enumerated += int(np.ceil(tf.sum()))
        if not capped:
            full.append((rows, tf))  # a session where one party names the other is a session with that speaker
        df = rows.size
        if addressed and query.stems[i] in addressed:
            rows, tf = _not_addressing(index, rows, tf, addressed[query.stems[i]])
        # A capped term saw only its newest occurrences: its document frequency is estimated from its count.
        idf = (_idf(stats.n_docs, stats.term_df[i]) if stats is not None
               else _idf(n_docs, min(f, n_docs) if capped else df))
        score(rows, tf, idf)
        touched[rows] = True
    cand = np.flatnonzero(touched)
    # The asker's first-person words count only in messages the question's own words found: whole-word occurrences
    # (cached per token), their document frequency exact.
    for f, i in freq:
        if f == 0 or i < first_supporting or cand.size == 0:
            continue
        if f > rc.enumerate_limit:
            deferred.append((f, i))
            continue
        rows, tf = index.term_rows(query.patterns[i], counts[i])
        if rows.size == 0:
            continue
        idf = _idf(stats.n_docs, stats.term_df[i]) if stats is not None else _idf(n_docs, rows.size)
        hit = touched[rows]
        score(rows[hit], tf[hit], idf)
    for f, i in deferred:
        pat = query.patterns[i]
        if cand.size == 0 or pat.singles.size == 0:
            continue
        starts = index.starts()[cand]
        ends = index.ends.view[cand]
        tf = np.zeros(cand.size, dtype=np.float64)
        for t in pat.singles:
            sym = np.full(cand.size, int(t), dtype=np.uint32)
            tf += index.content.rank_many(sym, ends) - index.content.rank_many(sym, starts)
        idf = _idf(stats.n_docs, stats.term_df[i]) if stats is not None else _idf(n_docs, min(f, n_docs))
        score(cand, tf, idf)
    # Speakers are a field of every message: a query naming a speaker matches that speaker's messages
    # (the same signal a "<speaker>: <text>" rendering gives a text-only BM25).
    for st, codes in named:
        rows = np.flatnonzero(np.isin(index.speaker.view, codes))
        if rows.size == 0:
            continue
        idf = (_idf(stats.n_docs, stats.speaker_df.get(st, rows.size)) if stats is not None
               else _idf(n_docs, rows.size))
        score(rows, 1.0, idf)
        touched[rows] = True
    if smooth and rc.neighbor_weight > 0 and n_docs > 1:
        acc, touched = _smooth_neighbours(index, acc, touched, rc.neighbor_weight, rc.neighbor_span, acc_l)
    rows = np.flatnonzero(touched)
    scores = acc[rows]
    # A question naming speakers is answered by what they said: the other speakers' messages count a share.
    if written and rc.unnamed_speakers < 1.0 and rows.size:
        other = ~np.isin(index.speaker.view[rows], [c for _, codes in written for c in codes])
        if other.any() and not other.all():
            scores[other] *= rc.unnamed_speakers
    return Scored(rows, scores, full)


# Length normalisation of whole sessions: their lengths vary several-fold, unlike turns (Robertson & Zaragoza's
# usual value).
SESSION_B = 0.75


def sessions(index: NamespaceIndex, query: Query, config: Config, lexical_scored: Scored | None = None
             ) -> np.ndarray:
    """BM25 of the question's own words over whole sessions (each session's messages as one document), per unit
    code of :meth:`NamespaceIndex.units` (the sessions, then the sittings of messages without a session id); 0 for
    messages in no unit. The terms are those :func:`lexical` enumerates in full: the asker's first-person words and
    terms past ``enumerate_limit`` occurrences are left out (they occur in nearly every session and carry no idf
    there). ``lexical_scored``, the :func:`lexical` result for the same
    question, saves reading the occurrences again."""
    code, lengths = index.units()
    n_codes = lengths.size
    out = np.zeros(n_codes)
    if len(index) == 0 or not query.patterns or n_codes == 0:
        return out
    rc = config.retrieval
    real = lengths > 0  # not the code of messages without a session id
    n_sess = int(real.sum())
    if n_sess < 2:
        return out
    avg = float(lengths[real].mean())
    norm = rc.bm25_k1 * (1.0 - SESSION_B + SESSION_B * lengths / max(avg, 1.0))
    if lexical_scored is None or lexical_scored.terms is None:
        lexical_scored = lexical(index, query, config)
    for rows, tf_rows in lexical_scored.terms or ():
        if rows.size == 0:
            continue
        tf = np.bincount(code[rows], weights=tf_rows, minlength=n_codes)
        tf[~real] = 0.0
        df = int((tf > 0).sum())
        if df == 0:
            continue
        out += _idf(n_sess, df) * tf * (rc.bm25_k1 + 1.0) / (tf + norm)
    return out


def _spans(lo: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Every index of the ranges ``[lo[k], lo[k] + count[k])``, range after range."""
    return np.repeat(lo, count) + (np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count))


def _smooth_neighbours(index: NamespaceIndex, acc: np.ndarray, touched: np.ndarray, weight: float, span: int,
                       lend: np.ndarray | None = None):
    """Lend each message a share of its best neighbour's score (``lend``, else ``acc``) in the same session or
    sitting (halving per step,
    up to ``span`` turns away): in a dialogue the answer to a question often shares no words with it, while the
    turn just before it does. A turn is what one voice says before another speaks (:meth:`NamespaceIndex.turns`):
    a burst of short messages in a messaging app is one turn, whose messages lend each other as neighbours do (the
    share of the first step: they are one utterance in pieces), and the steps count the turns that take the floor
    (a continuer, "omg" in the middle of the other voice's story, is half a place from the turns on either side:
    :meth:`NamespaceIndex.turns`). Where every message is a turn of its own and there is no continuer (the
    development sets), this is a message's neighbours one and two messages away. Work is proportional to the
    matched turns, not to the namespace."""
    sess = index.units()[0]
    turn, start, place = index.turns()
    n = acc.size
    # Messages in no session or sitting of two voices (:meth:`NamespaceIndex.units`) are not a dialogue: they never
    # lend to each other (each is a turn of its own, in no unit another message shares).
    none_code = index.sessions.index(None) if None in index.sessions else -1
    src = np.flatnonzero(touched)
    src = src[sess[src] != none_code]
    if not src.size:
        return acc, touched
    # each matched turn's best score, and the best of its other messages' (for the message that has the best)
    n_turns = start.size - 1
    lend = acc if lend is None else lend
    t_src, a_src = turn[src], lend[src]
    top1 = np.zeros(n_turns)
    np.maximum.at(top1, t_src, a_src)
    is_top = a_src == top1[t_src]
    ties = np.bincount(t_src[is_top], minlength=n_turns) > 1
    top2 = np.where(ties, top1, 0.0)
    np.maximum.at(top2, t_src[~is_top], a_src[~is_top])
    matched = np.zeros(n_turns, dtype=bool)
    matched[t_src] = True
    tt = np.flatnonzero(matched)
    # what a turn borrows from the turns ``step`` places away in the same unit (a step: one place, or the half place
    # to or from a continuer; ``place`` ascends with the turns, so the turns at a distance are a range)
    tunit = sess[start[:-1]]
    from_nb = np.zeros(n_turns)
    plain = place.size == 0 or place[-1] == n_turns  # no continuer: a turn's place is its number (+1)
    at = place[tt]
    for step in range(1, span + 1):
        w = weight / (2 ** (step - 1))
        if plain:
            for dst in (tt - step, tt + step):
                ok = (dst >= 0) & (dst < n_turns)
                s_ok, d_ok = tt[ok], dst[ok]
                same = tunit[d_ok] == tunit[s_ok]
                np.maximum.at(from_nb, d_ok[same], w * top1[s_ok[same]])
            continue
        near = 0.0 if step == 1 else step - 1.0  # more than this many places away, and at most ``step``
        for lo, hi in ((np.searchsorted(place, at + near, side="right"), np.searchsorted(place, at + step, "right")),
                       (np.searchsorted(place, at - step, side="left"), np.searchsorted(place, at - near, "left"))):
            cnt = hi - lo
            if not cnt.any():
                continue
            lender, dst = np.repeat(tt, cnt), _spans(lo, cnt)
            ok = (dst != lender) & (tunit[dst] == tunit[lender])
            np.maximum.at(from_nb, dst[ok], w * top1[lender[ok]])
    # every message of a turn that borrows: from the turns around it, and from the others of its own turn at the
    # first step's share (the best message's score to the others, the second best's to the best)
    lent = np.flatnonzero((from_nb > 0) | matched)
    size = start[lent + 1] - start[lent]
    if size.size and int(size.max()) == 1:
        rows, of = start[lent], lent
    else:
        rows, of = _spans(start[lent], size), np.repeat(lent, size)
    inside = weight * np.where(lend[rows] == top1[of], top2[of], top1[of])
    best = np.zeros(n, dtype=np.float64)
    best[rows] = np.maximum(from_nb[of], inside)
    return acc + best, touched | (best > 0)


def _keyword_signatures(query: Query, config: Config) -> tuple[np.ndarray, dict[int, int]]:
    """Signatures of the query keywords and, per keyword, the position of its first token."""
    sc = config.signature
    enc = tokenizer.encoding()
    # The query is one segment of the same streaming process used at ingest (seed 000 §3.3).
    pieces, owner = [], []
    for k, w in enumerate(query.keywords):
        ids = enc.encode_ordinary(" " + w)
        pieces.extend(ids)
        owner.extend([k] * len(ids))
    if not pieces:
        return np.zeros(0, np.uint64), {}
    qtok = np.asarray(pieces, dtype=np.uint32)
    qsig = ri_signatures(
        qtok, seed=sc.seed, dim=sc.dim, nnz=sc.nnz, window=sc.window, self_weight=sc.self_weight,
        top_m=sc.top_m, sig_bits=sc.bits, segment_ends=np.asarray([qtok.size], dtype=np.uint64),
    )
    first_of_word: dict[int, int] = {}
    for pos, k in enumerate(owner):
        first_of_word.setdefault(k, pos)
    return qsig, first_of_word


def signature(index: NamespaceIndex, query: Query, config: Config, *, stats: CorpusStats | None = None) -> Scored:
    """Hamming-ball matches of the query keywords' random-indexing signatures in the Signature DWM.

    ``stats`` as in :func:`lexical`: keyword frequencies of a larger corpus."""
    n_docs = len(index)
    empty = Scored(np.zeros(0, np.int64), np.zeros(0))
    if n_docs == 0 or not query.keywords:
        return empty
    sc = config.signature
    qsig, first_of_word = _keyword_signatures(query, config)
    if not first_of_word:
        return empty
    n_tok = len(index.signatures)
    acc = np.zeros(n_docs, dtype=np.float64)
    best = {}
    budget = config.retrieval.enumerate_limit
    for k, pos in first_of_word.items():
        matches = index.signatures.hamming_ball(int(qsig[pos]), sc.radius, 0, n_tok)
        if not matches:
            continue
        total = sum(c for _, c in matches)
        if total > budget:
            continue
        budget -= total
        idf = (_idf(stats.n_docs, min(stats.signature_total.get(k, total), stats.n_docs)) if stats is not None
               else _idf(n_docs, min(total, n_docs)))
        for sym, _count in matches:
            d = bin(int(sym) ^ int(qsig[pos])).count("1")
            weight = idf * (1.0 - d / (sc.radius + 1.0))
            rows = np.unique(index.rows_of_positions(positions(index.signatures, int(sym))))
            for r in rows.tolist():
                key = (k, r)
                if best.get(key, 0.0) < weight:
                    acc[r] += weight - best.get(key, 0.0)
                    best[key] = weight
    rows = np.flatnonzero(acc > 0)
    return Scored(rows, acc[rows])


def corpus_stats(indexes: list[NamespaceIndex], query: Query, config: Config) -> CorpusStats:
    """Statistics of ``indexes`` taken as one corpus, for :func:`lexical` and :func:`signature` with ``stats``.

    Document frequencies follow the single-namespace rules: exact for terms with at most
    ``retrieval.enumerate_limit`` occurrences in a namespace, the occurrence count (capped at the namespace's
    size) above that."""
    rc, sc = config.retrieval, config.signature
    n_docs, total_len = 0, 0.0
    term_df = [0.0] * len(query.patterns)
    speaker_df: dict[str, float] = {}
    sig_total: dict[int, int] = {}
    # the keywords' signature totals are read by the signature channel only: without it the Signature DWM of a long
    # history (seconds to compute) is not built
    qsig, first_of_word = _keyword_signatures(query, config) if query.keywords and rc.weight_signature > 0 \
        else (None, {})
    for index in indexes:
        n = len(index)
        if n == 0:
            continue
        n_docs += n
        total_len += float(index.doc_lengths().sum())
        for i, (pat, slip) in enumerate(zip(query.patterns, slip_patterns(index, query))):
            counts, f = index.term_stats(pat)
            slip_counts, sf = index.term_stats(slip) if slip is not None else (None, 0)
            if f + sf == 0:
                continue
            if f + sf > rc.enumerate_limit:
                term_df[i] += min(f + sf, n)
                continue
            rows = index.term_rows(pat, counts)[0]
            if slip is not None:
                rows = np.union1d(rows, index.term_rows(slip, slip_counts)[0])
            term_df[i] += rows.size
        for st, codes in speakers_named(index, query):
            speaker_df[st] = speaker_df.get(st, 0.0) + float(np.count_nonzero(np.isin(index.speaker.view, codes)))
        n_tok = len(index.signatures) if first_of_word else 0
        for k, pos in first_of_word.items():
            matches = index.signatures.hamming_ball(int(qsig[pos]), sc.radius, 0, n_tok)
            sig_total[k] = sig_total.get(k, 0) + sum(c for _, c in matches)
    avgdl = max(1.0, total_len / n_docs) if n_docs else 1.0
    return CorpusStats(n_docs=n_docs, avgdl=avgdl, term_df=term_df, speaker_df=speaker_df,
                       signature_total=sig_total)


def top(scored: Scored, limit: int) -> np.ndarray:
    """Row indices of the best ``limit`` candidates, best first (ties: earlier message first)."""
    if scored.rows.size == 0:
        return scored.rows
    return _best(scored.rows, scored.scores, limit)[:limit]


# Places one text takes at most in a channel's candidate list (COPY_PLACES best-scored copies): enough for what
# reweights candidates after the channels (the session lift, time and truth, a recall's filter and exclusions) to
# choose among its copies as it did before, few enough that a text written thousands of times leaves the list to
# the others.
COPY_PLACES = 4


def top_texts(scored: Scored, limit: int, index: NamespaceIndex,
              left_out: Callable[[np.ndarray], np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`top` where the copies of a text (:meth:`NamespaceIndex.copy_keys`: the same tokens in the same voice)
    take at most :data:`COPY_PLACES` places, its best-scored ones (ties: the earliest): an agent's status line
    written thousands of times would otherwise fill the list, and every other message would rank past it. The
    copies after those take no place and are dropped; the second array holds the rows kept (best first) whose text
    had such a copy ranking before the first place left out of the list (anywhere, when none is): each stands for
    those copies, as a context's line does (:mod:`hippo.engine.pack`). A text whose kept copies are all
    ``left_out`` (a mask over the rows given: messages a recall will not show, excluded or out of its time scope)
    also keeps its best copy that is not, where it ranks (no place is counted for it), when it ranks before that
    first place left out."""
    rows, scores = scored.rows, scored.scores
    if rows.size == 0:
        return rows, rows
    n = limit
    while True:  # the best n (and those tied with the n-th), n growing until more than ``limit`` places are in them
        best = _best(rows, scores, n)
        _, which, counts = np.unique(index.copy_keys(best), return_inverse=True, return_counts=True)
        if counts.size == best.size and (best.size >= limit or best.size == rows.size):
            # No copies among the best ``limit``: each of them takes a place, and the row after them, at most the
            # second copy of a text, takes the first place left out, so no copy before it was dropped.
            return best[:limit], best[:0]
        grouped = np.argsort(which, kind="stable")  # each text's copies, best first
        starts = np.cumsum(counts) - counts
        occurrence = np.empty(best.size, dtype=np.int64)
        occurrence[grouped] = np.arange(best.size) - np.repeat(starts, counts)
        places = np.flatnonzero(occurrence < COPY_PLACES)
        if places.size > limit or best.size == rows.size:
            break
        n = 2 * best.size
    end = best.size
    if places.size > limit:
        end = int(places[limit])
        places = places[:limit]
        counts = np.bincount(which[:end], minlength=counts.size)
    dropped = counts > COPY_PLACES
    stands = places[dropped[which[places]]]
    if left_out is not None and stands.size:
        out = np.asarray(left_out(best[:end]), dtype=bool)
        shown = np.zeros(counts.size, dtype=bool)
        shown[which[places[~out[places]]]] = True
        lost = np.zeros(counts.size, dtype=bool)
        lost[which[places]] = ~shown[which[places]]  # texts whose every kept copy is left out
        if lost.any():
            extra = np.flatnonzero(~out & lost[which[:end]])
            extra = extra[np.unique(which[extra], return_index=True)[1]]  # each such text's best copy shown
            places = np.union1d(places, extra)
            stands = np.union1d(stands, extra)
    return best[places], best[stands]


def _best(rows: np.ndarray, scores: np.ndarray, n: int) -> np.ndarray:
    """The rows of the ``n`` best scores and of those tied with the ``n``-th, best first, ties in row order."""
    if rows.size > 2 * n:
        # Keep everything tied with the n-th score so the tie-break stays exact.
        kth = np.partition(-scores, n - 1)[n - 1]
        keep = -scores <= kth
        rows, scores = rows[keep], scores[keep]
    return rows[np.lexsort((rows, -scores))]


def rrf(ranked: dict[str, np.ndarray], weights: dict[str, float], k: int) -> tuple[np.ndarray, np.ndarray, dict]:
    """Weighted reciprocal rank fusion (seed 002 Eq. 3); returns rows, fused scores and per-channel scores."""
    fused: dict[int, float] = {}
    per: dict[int, dict[str, float]] = {}
    for name, rows in ranked.items():
        w = weights.get(name, 1.0)
        if w <= 0:
            continue
        for rank, r in enumerate(rows.tolist(), start=1):
            s = w / (k + rank)
            fused[r] = fused.get(r, 0.0) + s
            per.setdefault(r, {})[name] = s
    if not fused:
        return np.zeros(0, np.int64), np.zeros(0), {}
    rows = np.fromiter(fused.keys(), dtype=np.int64, count=len(fused))
    scores = np.fromiter(fused.values(), dtype=np.float64, count=len(fused))
    order = np.lexsort((rows, -scores))
    return rows[order], scores[order], per

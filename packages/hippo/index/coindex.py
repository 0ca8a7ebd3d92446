"""The co-index of one namespace (seed 000 §3.1-3.3).

Two dynamic wavelet matrices over one token stream: the Content DWM holds the cl100k token ids losslessly, the
Signature DWM holds a random-indexing signature per token, and a span table maps each message to its half-open
token range ``[start, end)``. Message text is always reconstructed from the Content DWM.

The signature stream is a pure function of the token stream (signatures never look across a message boundary),
so it is never stored: it is computed the first time a channel reads it (the default ranking does not) and then
follows every append. The span table is saved with the namespace's derived snapshot; the Content stream is read
back from the store's chunks.
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from typing import Iterable, Iterator

import numpy as np

from hippo.base.arrays import GrowArray, RowMap
from hippo.base.config import Config
from hippo.base.errors import CorruptData, OutOfRange
from hippo.base.lru import LRU
from hippo.base.timeutil import is_utc_offset
from hippo.native import ByteTable, DynamicWaveletMatrix, ri_signatures
from hippo.store.base import MessageRow
from hippo.text import lexicon, masking, places, textnorm, tokenizer

ROLES = ("user", "assistant", "system", "tool")
# the role of a person's messages: a person's texts are never near-duplicates (:attr:`NamespaceIndex.near_keys`)
_PERSON = ROLES.index("user")
# the role of a tool's outputs: a text whose only changing fields are durations is a machine output there
_TOOL = ROLES.index("tool")
# the kinds of a message's masked form (``NamespaceIndex._form_kind``) by what :func:`masking.form` says of it
_KINDS = {masking.FORM: 1, masking.MACHINE: 2, masking.TIMED: 3}
# A turn of one message of at most this many cl100k tokens between two turns of another voice can be a continuer
# ("lol", "omg", "wait what", "no way", "❤️"): see NamespaceIndex.turns.
CONTINUER_TOKENS = 3
_POS_CACHE_ENTRIES = 2048   # tokens whose occurrences are kept between questions
_POS_CACHE_MAX = 1 << 16    # tokens more frequent than this are not cached (only their newest ones are read)
_TERM_CACHE_ENTRIES = 4096  # terms whose (rows, occurrences per row) are kept, extended as messages are appended
_TERM_CACHE_ROWS = 1 << 20  # ... holding at most this many rows in all (16 bytes a row)
_STATS_CACHE_TOKENS = 1 << 16  # token counts kept by the terms' statistics in all (a term has 30-60 tokens)
_TEXT_CACHE_CHARS = 1 << 21     # characters of message text kept, most recently read first
_COUNT_CACHE_ENTRIES = 1 << 15  # tokens whose number of occurrences is kept between questions
_COUNT_CACHE_GROWTH = 1 << 16   # tokens appended since, past which the kept counts are dropped instead of extended
# A message's digest (NamespaceIndex.digests) sums its tokens times a fixed odd multiplier per position (mod 2**64,
# the multipliers repeating every 4096 tokens) and mixes in its length: two messages of the same tokens have the
# same digest, two of different tokens almost never do.
_DIGEST_MULTIPLIERS = np.random.default_rng(0x6469676573).integers(1, 1 << 63, size=4096, dtype=np.uint64) | 1
_DIGEST_BLOCK = 1 << 20  # tokens hashed in one numpy pass (bounds the temporary arrays)
# The multipliers as one number: a snapshot's saved digests are used only where they were made with the same ones.
_DIGEST_KEY = int(np.bitwise_xor.reduce(_DIGEST_MULTIPLIERS)) >> 11  # 53 bits: any JSON reader keeps it


def positions(dwm: DynamicWaveletMatrix, symbol: int) -> np.ndarray:
    """Every position of ``symbol`` in ``dwm``, ascending (seed 000 Algorithm 2, select per occurrence)."""
    fn = getattr(dwm, "positions", None)
    if fn is not None:
        return fn(symbol)
    n = dwm.count(symbol, 0, len(dwm))
    return np.fromiter((dwm.select(symbol, k) for k in range(1, n + 1)), dtype=np.int64, count=n)


@dataclass
class Scored:
    rows: np.ndarray    # row indices into the span table
    scores: np.ndarray  # float64, same length, higher is better
    # lexical channel only: (rows, occurrences per row) of each of the question's own words it enumerated in full,
    # for statistics over larger units (hippo.index.channels.sessions) without reading the occurrences again
    terms: list[tuple[np.ndarray, np.ndarray]] | None = None


# the epoch seconds of 1 January of the years 2 and 9998: an event time outside them is no time this library reads
# (a store written before ``metadata["event_time"]`` was checked may hold one in milliseconds)
_EVENT_TIME_RANGE = (datetime(2, 1, 1, tzinfo=timezone.utc).timestamp(),
                     datetime(9998, 1, 1, tzinfo=timezone.utc).timestamp())


def event_offset(metadata: dict | None) -> float:
    """The offset from UTC (seconds east) the caller's event time was given with
    (``metadata["event_time_utc_offset"]``, kept by ``add(..., event_time=...)``), or NaN: unknown, or no event time."""
    md = metadata or {}
    off = md.get("event_time_utc_offset")
    if event_time(md) == event_time(md) and is_utc_offset(off):
        return float(off)
    return math.nan


def written_by_program(metadata: dict | None) -> bool:
    """Whether a message's metadata says a program wrote it, whatever its role: ``metadata["bot"]`` is True (a chat
    app's bot or integration, as the importers of Slack, Discord, Google Chat and Telegram mark it) or
    ``metadata["type"]`` is ``"tool_result"`` (an application that stores its tools' results as the user's messages,
    the entry type :mod:`hippo.engine.hierarchy.decay` reads). Its texts are grouped as a tool's outputs are
    (:attr:`NamespaceIndex.near_keys`)."""
    md = metadata if isinstance(metadata, dict) else {}
    return md.get("bot") is True or md.get("type") == "tool_result"


# Texts the stored metadata (JSON, as json.dumps writes it) of every message :func:`written_by_program` holds: a store
# reads the rows holding one to fill the column of such messages of a span table saved before it was kept
PROGRAM_MARKS = ('"bot"', '"tool_result"')


def written_by_programs(ids: np.ndarray, rows: Iterable[MessageRow]) -> np.ndarray:
    """The column of messages written by a program (:func:`written_by_program`) of the messages ``ids``: True for
    those among ``rows`` (every row whose metadata may say so, :data:`PROGRAM_MARKS`) whose metadata says so."""
    marked = [r.id for r in rows if written_by_program(r.metadata)]
    return np.isin(np.asarray(ids, dtype=np.int64), np.asarray(marked, dtype=np.int64))


def event_time(metadata: dict | None) -> float:
    """The caller's event time of a message (``metadata["event_time"]``, epoch seconds), or NaN (also for a value
    outside the years 2 to 9997)."""
    et = (metadata or {}).get("event_time")
    if isinstance(et, (int, float)) and not isinstance(et, bool) and math.isfinite(et) \
            and _EVENT_TIME_RANGE[0] <= et < _EVENT_TIME_RANGE[1]:
        return float(et)
    return math.nan


# What :meth:`NamespaceIndex._words_in` reads, by number: a snapshot's words read by another rule are read again.
# 2: also the words of five tokens or more beyond ASCII, and the words written with optional marks.
# 3: a word ends where a script written without spaces meets another, and where full-width digits follow full-width
# letters (:func:`hippo.text.lexicon.word_splits`): "Medellín" is a word of "我去了Medellín旅游".
# 4: the words with letters of Latin Extended Additional (Vietnamese: "thoại", "Nẵng") or "đ" are accented words,
# and Vietnamese ones are read from two letters on ("phở").
_WORDS_RULE = 4
# What :meth:`NamespaceIndex._glue_of` computes, by number: a snapshot's glue flags made by another rule are made
# again from the tokens. Bump it with any change to the flags (hippo.text.lexicon's word-start table, the reading of
# a character the encoding cut); tests/core/test_saved_glue.py pins them. They are saved under the words' rule too
# (:func:`_glue_rule`), which a change of :func:`hippo.text.lexicon.word_splits` bumps for the words it splits.
_GLUE_RULE = 1


def _glue_rule() -> list[int]:
    """The rule a snapshot's glue flags are saved under and read back by only when it is the same."""
    return [_GLUE_RULE, _WORDS_RULE]
# The longest run of tokens read as one word beyond ASCII: an Arabic word with its harakat takes two tokens a letter.
_LONGEST_WORD_TOKENS = 64
# The key of every word written with optional marks (:func:`_file_words`): whether the namespace holds any.
_MARKED = ("", -3)


def _file_words(words: dict[tuple[str, int], set[str]], found: Iterable[str]) -> bool:
    """File the words of several tokens ``found`` (:meth:`NamespaceIndex._words_in`) where
    :meth:`NamespaceIndex.slips` looks for them; True when one was new. A lower-case ASCII word under its first letter
    and length; an accented word ("medellín") under its letters without accents only ("medellin", -1), a word in
    mixed case ("LeBron") under its letters in lower case ("lebron", -2); a word written with optional marks
    ("المَدْرَسَةِ": :func:`hippo.text.textnorm.plain`) under the word without them ("المدرسة", -3) and under
    :data:`_MARKED`; a word holding a letter for emphasis ("birthdayyy") also under the word it stretches
    ("birthday", 0)."""
    grew = False
    for w in found:
        if w.isascii():
            key = (w[0], len(w)) if w.islower() else (w.lower(), -2)
        elif lexicon.is_accented(w):
            key = (textnorm.fold(w).lower(), -1)
        else:
            key = (textnorm.plain(w).lower(), -3)
        bucket = words.setdefault(key, set())
        if w not in bucket:
            bucket.add(w)
            grew = True
            if key[1] == -3:
                words.setdefault(_MARKED, set()).add(w)
            if lexicon.is_stretched(w):
                words.setdefault((lexicon.squeezed(w), 0), set()).add(w)
    return grew



def _unfile_words(words: dict[tuple[str, int], set[str]], gone: Iterable[str]) -> None:
    """Take the words ``gone`` out of every bucket :func:`_file_words` put them in (and drop the buckets left empty):
    what remains is what filing the other words alone gives."""
    for w in gone:
        if w.isascii():
            keys = [(w[0], len(w)) if w.islower() else (w.lower(), -2)]
        elif lexicon.is_accented(w):
            keys = [(textnorm.fold(w).lower(), -1)]
        else:
            keys = [(textnorm.plain(w).lower(), -3), _MARKED]
        if lexicon.is_stretched(w):
            keys.append((lexicon.squeezed(w), 0))
        for key in keys:
            bucket = words.get(key)
            if bucket is not None:
                bucket.discard(w)
                if not bucket:
                    del words[key]

class NamespaceIndex:
    def __init__(self, namespace: str, config: Config) -> None:
        self.namespace = namespace
        self.config = config
        self.content = DynamicWaveletMatrix(tokenizer.token_bits())
        self.ids = GrowArray(np.int64)
        self.ends = GrowArray(np.int64)
        self.seqs = GrowArray(np.int64)
        self.ts = GrowArray(np.float64)
        self.speaker = GrowArray(np.int32)
        self.session = GrowArray(np.int32)
        self.role = GrowArray(np.int8)
        self.program = GrowArray(np.bool_, fill=False)  # written by a program (:func:`written_by_program`)
        self.created = GrowArray(np.float64)                    # ingestion time
        self.event_time = GrowArray(np.float64, fill=np.nan)    # metadata["event_time"] given by the caller, or NaN
        self.utc_offset = GrowArray(np.float64, fill=np.nan)    # the timestamp's offset from UTC (s), NaN: unknown
        self.event_offset = GrowArray(np.float64, fill=np.nan)  # event_time's offset from UTC (s), NaN: unknown
        self.speakers: list[str | None] = []
        self._speaker_code: dict[str | None, int] = {}
        self.sessions: list[str | None] = []
        self._session_code: dict[str | None, int] = {}
        self.row_of = RowMap()  # message id -> row
        self._lengths: np.ndarray | None = None
        self._lengths_end = -1
        self._units: tuple[tuple[int, int, int], np.ndarray, np.ndarray] | None = None
        # (unit codes, turn, start, place): see turns()
        self._turns: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        # (unit codes, addressee per row): see addressees()
        self._addressees: tuple[np.ndarray, np.ndarray] | None = None
        # ((layout, speakers known), stem -> speaker codes): see speaker_stems()
        self._speaker_stems: tuple[tuple[int, int], dict[str, list[int]]] | None = None
        self.last_seq = -1
        self.layout = 0  # bumped whenever rows are removed (row numbers change)
        # the caches below are bounded by entries and by what they hold, and read and changed under ``_pos_lock``
        self._pos_cache: LRU[int, tuple[int, int, np.ndarray, np.ndarray | None]] = LRU(_POS_CACHE_ENTRIES)
        self._pos_lock = threading.Lock()
        # pattern.key -> (layout, stream length, rows, tf): see :meth:`term_rows`
        self._term_cache: LRU[bytes, tuple[int, int, np.ndarray, np.ndarray]] = LRU(
            _TERM_CACHE_ENTRIES, _TERM_CACHE_ROWS, lambda got: got[2].size)
        self._text_cache: LRU[int, str] = LRU(None, _TEXT_CACHE_CHARS, len)  # row -> text, see :meth:`texts_of`
        self._counts: dict[int, int] = {}  # token -> occurrences in the stream's first ``_counts_at[1]`` tokens
        self._counts_at = (0, 0)           # (layout, stream length) the kept counts are of
        # pattern.key -> ((layout, stream length), token counts, frequency): see :meth:`term_stats`
        self._stats_cache: LRU[bytes, tuple[tuple[int, int], dict[int, int], int]] = LRU(
            _TERM_CACHE_ENTRIES, _STATS_CACHE_TOKENS, lambda got: len(got[1]))
        # the words written in several tokens: (layout, stream length read, words, version), see :meth:`slips`
        self._words: tuple[int, int, dict[tuple[str, int], set[str]], int] | None = None
        # how many runs of tokens in the words' read part write each of them (None when not known: a snapshot
        # saved without them); a deletion takes its messages' words off these instead of reading the stream again
        self._word_counts: dict[str, int] | None = None
        # word -> (version of ``_words``, the arguments of :func:`lexicon.slips` for it or None), see :meth:`slips`:
        # the words found, not their pattern (about 10 KB, the process's to keep), so that what a namespace keeps is
        # small and the patterns alive are bounded by lexicon's cache however many namespaces are loaded
        self._slips: LRU[str, tuple[int, tuple | None]] = LRU(_TERM_CACHE_ENTRIES)
        self._signatures: DynamicWaveletMatrix | None = None  # see :attr:`signatures`
        self._glue = GrowArray(np.bool_, fill=False)  # see :attr:`glue`
        self._digest = GrowArray(np.uint64)            # see :attr:`digests`
        self._near = GrowArray(np.uint64)              # see :attr:`near_keys`
        # per message, its masked form's key (:func:`masking.form_key`) and kind: 0 no form, 1 a form without a
        # machine field, 2 a machine output, 3 a form whose only masked fields are durations (a machine output's in a
        # tool's voice, else as 1: :meth:`_join`); the forms of machine outputs by voice (:meth:`_voiced`) and how many
        # rows hold each, and the rows of kind 1 whose form no machine output of their voice holds yet
        self._form = GrowArray(np.uint64)
        self._form_kind = GrowArray(np.uint8)
        self._machine_forms: dict[int, int] = {}
        self._waiting: dict[int, list[int]] = {}

    # -- building -------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return self.ids.n

    @property
    def n_tokens(self) -> int:
        return len(self.content)

    def starts(self) -> np.ndarray:
        ends = self.ends.view
        out = np.empty_like(ends)
        if ends.size:
            out[0] = 0
            out[1:] = ends[:-1]
        return out

    def _code(self, table: dict, names: list, value) -> int:
        code = table.get(value)
        if code is None:
            code = table[value] = len(names)
            names.append(value)
        return code

    @property
    def signature_bytes(self) -> int:
        return 0 if self._signatures is None else self._signatures.nbytes

    @property
    def signatures(self) -> DynamicWaveletMatrix:
        """The Signature DWM, computed from the Content DWM when a channel first reads it."""
        sig = self._signatures
        if sig is None:
            sig = DynamicWaveletMatrix(self.config.signature.bits)
            for _, tokens, seg_ends in self._blocks():
                sig.extend(self._signatures_of(tokens, seg_ends))
            self._signatures = sig
        return sig

    def _blocks(self, start: int = 0, end: int | None = None, rows: int = 65536
                ) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """Rows ``[start, end)`` of the Content stream read in blocks of whole messages (one matrix call per block,
        bounded temporary memory): ``(first row, tokens, message ends relative to the block)``."""
        end = len(self) if end is None else end
        for lo in range(start, end, rows):
            hi = min(end, lo + rows)
            first = int(self.ends.a[lo - 1]) if lo > 0 else 0
            yield lo, self.content.access_range(first, int(self.ends.a[hi - 1])), self.ends.a[lo:hi] - first

    @property
    def glue(self) -> np.ndarray:
        """``glue[p]``: the token at ``p`` continues the word of the token before it (no leading space or
        punctuation, ``p`` does not start a message, and it is neither digits after Latin letters nor a change
        between a script written without spaces and another: "iPhone15" is the words "iPhone" and "15", "我买了iPhone"
        holds the word "iPhone", :func:`~hippo.text.lexicon.word_splits`). A bool per position, kept from the
        tokens at hand on append, on a deletion's rebuild and on a load from a snapshot (about 5 ns a token): the
        word-end test of an occurrence is one array read instead of a matrix access and a search among the message
        ends."""
        return self._glue.view

    @staticmethod
    def _glue_of(tokens: np.ndarray, seg_ends: np.ndarray) -> np.ndarray:
        codes = lexicon.glue_codes(tokens)
        flags = codes > 0
        # A token that ends inside its first character (the first byte of "⭐", whose other bytes are the next
        # token's) cannot tell a letter from a symbol alone: the character is completed from the tokens after it
        # in the same message, all at hand here.
        cut = np.flatnonzero(codes == 2)
        if cut.size:
            ends = np.asarray(seg_ends, dtype=np.int64)
            stop = ends[np.minimum(np.searchsorted(ends, cut, side="right"), ends.size - 1)]
            table = tokenizer.token_bytes()
            for p, end in zip(cut.tolist(), stop.tolist()):
                joined = b"".join(table[int(t)] for t in tokens[p:min(end, p + 4)].tolist())
                flags[p] = lexicon.first_character_is_word(joined)
        if flags.size > 1:  # a word ends where scripts change or digits follow letters ("了iPhone", "iPhone15")
            flags[1:] &= ~lexicon.word_splits(tokens)
        starts = np.asarray(seg_ends[:-1], dtype=np.int64)
        flags[starts[starts < flags.size]] = False
        if flags.size:
            flags[0] = False
        return flags

    @property
    def digests(self) -> np.ndarray:
        """A 64-bit digest of each message's tokens (:data:`_DIGEST_MULTIPLIERS`), kept like :attr:`glue`: the
        copies of one text (an agent's repeated tool output, a question asked every morning) share theirs."""
        return self._digest.view

    @staticmethod
    def _digests_of(tokens: np.ndarray, seg_ends: np.ndarray) -> np.ndarray:
        ends = np.asarray(seg_ends, dtype=np.int64)
        if ends.size == 1 and 0 < ends[0] <= 4096 and tokens.size == ends[0]:
            # one message (an add): the same sum as below (uint64, wrapping), without the block bookkeeping
            toks = np.asarray(tokens, dtype=np.uint64)
            total = np.add.reduce((toks + np.uint64(1)) * _DIGEST_MULTIPLIERS[:toks.size], keepdims=True)
            return total ^ (np.asarray([toks.size], dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15))
        lengths = np.diff(ends, prepend=0)
        out = np.zeros(ends.size, dtype=np.uint64)
        lo = 0
        while lo < ends.size:  # whole messages, about _DIGEST_BLOCK tokens at a time
            first = int(ends[lo - 1]) if lo else 0
            hi = max(lo + 1, int(np.searchsorted(ends, first + _DIGEST_BLOCK, side="right")))
            n, starts = lengths[lo:hi], ends[lo:hi] - lengths[lo:hi]
            toks = np.asarray(tokens[first:int(ends[hi - 1])], dtype=np.uint64)
            if toks.size:
                at = np.arange(toks.size, dtype=np.int64) - np.repeat(starts - first, n)
                terms = (toks + np.uint64(1)) * _DIGEST_MULTIPLIERS[at & 4095]  # wraps mod 2**64
                full = n > 0
                out[lo:hi][full] = np.add.reduceat(terms, (starts - first)[full])
            lo = hi
        return out ^ (lengths.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15))

    @property
    def near_keys(self) -> np.ndarray:
        """Per message, the key its near-duplicates share: for a machine output (:mod:`hippo.text.masking`: a
        health check, a progress or log line) a 64-bit hash of its text with the changing fields (times, counters,
        ids) masked, the same for a text of that masked form without a machine field (a request id drawn without a
        letter) while a machine output of that form in its voice is held, for any other text its :attr:`digests`
        (only its exact copies share it). A tool's output whose only masked fields are durations (a test run's
        summary, ``12 passed in 3.41s``) is a machine output; the assistant's or the system's such text is one only
        beside a machine output of its form. A person's message (role ``user``, whoever its speaker) is never a machine
        output nor joins one: what a person says twice with another value ("my new wifi password is xKqPzRtYvWmNbHgF
        now") is two statements, each of which a question may ask for, so its key is its digest. A message a program
        wrote (:func:`written_by_program`: a chat app's bot, which an import gives the role ``user`` as it gives every
        speaker, or a tool's result stored as the user's) is grouped as a tool's output is, whatever its role. Kept like
        :attr:`digests`, and saved with the span table (made again from the tokens for a snapshot without them)."""
        return self._near.view

    def masked_rows(self) -> np.ndarray:
        """Whether each message is a machine output whose near-duplicates are its copies (:attr:`near_keys`)."""
        return self._near.view != self._digest.view

    @staticmethod
    def _forms_of(tokens: np.ndarray, seg_ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The masked forms' keys and kinds (see ``_form``) of consecutive messages ending at ``seg_ends`` in
        ``tokens``. Only a text holding a digit or a small letter before a capital has a form (:func:`masking.form`):
        only the messages with a token holding one, or a token beginning with a capital after one ending with a small
        letter, are decoded and masked."""
        ends = np.asarray(seg_ends, dtype=np.int64)
        forms = np.zeros(ends.size, dtype=np.uint64)
        kinds = np.zeros(ends.size, dtype=np.uint8)
        if ends.size == 0 or tokens.size == 0:
            return forms, kinds
        starts = np.concatenate([[0], ends[:-1]])
        toks = np.asarray(tokens, dtype=np.int64)
        signal, ends_small, starts_capital = _signal_tokens()
        flag = signal[toks]
        if toks.size > 1:
            flag[1:] |= starts_capital[toks[1:]] & ends_small[toks[:-1]]
            flag[starts[starts > 0]] = signal[toks[starts[starts > 0]]]  # no message begins after its neighbour
        flagged = flag.astype(np.int64)
        full = ends > starts
        counts = np.zeros(ends.size, dtype=np.int64)
        counts[full] = np.add.reduceat(flagged, starts[full])
        todo = np.flatnonzero(counts >= 1)
        if todo.size:
            bounds = np.cumsum(ends[todo] - starts[todo])
            picked = np.concatenate([tokens[a:b] for a, b in zip(starts[todo].tolist(), ends[todo].tolist())])
            for k, text in zip(todo.tolist(), _split_text(picked, bounds)):
                got = masking.form_key(text)
                if got is not None:
                    forms[k] = got[0]
                    kinds[k] = _KINDS[got[1]]
        return forms, kinds

    def _voiced(self, rows: np.ndarray) -> np.ndarray:
        """The forms of ``rows`` mixed with their voice (role and speaker), as :meth:`copy_keys` mixes keys."""
        return (np.asarray(self._form.view[rows], dtype=np.uint64)
                ^ (self.role.view[rows].astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15))
                ^ (self.speaker.view[rows].astype(np.int64).astype(np.uint64) * np.uint64(0xC2B2AE3D27D4EB4F)))

    def _join(self, first: int = 0) -> None:
        """:attr:`near_keys` of the rows from ``first`` on (their digests, forms and columns held): a machine
        output's is its form (a tool's output whose only masked fields are durations is one), a text of a machine
        output's form in its voice its form too (and so are those held before that waited for one), any other's its
        digest, and a person's message's (:data:`_PERSON`, but for one a program wrote) too. From 0, every row's is made
        again."""
        n = self.ids.n
        if first == 0:
            self._machine_forms, self._waiting = {}, {}
            self._near = GrowArray.wrap(np.array(self._digest.view, dtype=np.uint64, copy=True))
        elif self._near.n < n:
            self._near.extend(self._digest.view[self._near.n:n])
        roles, kinds = self.role.view[first:n], self._form_kind.view[first:n]
        program = self.program.view[first:n]
        kinds = np.where((roles == _PERSON) & ~program, 0,
                         np.where(kinds == 3, np.where((roles == _TOOL) | program, 2, 1), kinds))
        near, forms = self._near.view, self._form.view
        machine = np.flatnonzero(kinds == 2) + first
        other = np.flatnonzero(kinds == 1) + first
        if machine.size:
            near[machine] = forms[machine]
            for row, vk in zip(machine.tolist(), self._voiced(machine).tolist()):
                held = self._machine_forms.get(vk, 0)
                self._machine_forms[vk] = held + 1
                if not held:
                    for w in self._waiting.pop(vk, ()):
                        near[w] = forms[w]
        if other.size:
            for row, vk in zip(other.tolist(), self._voiced(other).tolist()):
                if vk in self._machine_forms:
                    near[row] = forms[row]
                else:
                    self._waiting.setdefault(vk, []).append(row)

    def rows_of_session(self, session_id: str | None) -> np.ndarray:
        """The rows (ascending) of the messages of ``session_id`` (None: the messages without a session)."""
        code = self._session_code.get(session_id)
        if code is None:
            return np.zeros(0, dtype=np.int64)
        return np.flatnonzero(self.session.view == code)

    def copies_of(self, row: int) -> np.ndarray:
        """The rows that repeat ``row`` in the same voice (role and speaker), ``row`` among them, ascending: its
        tokens (digest and length), or for a machine output its near-duplicates (:attr:`near_keys`: the same text
        once times, counters and ids are masked)."""
        d = self._near.view
        same = d == d[row]
        if d[row] == self._digest.a[row]:  # no machine output: the same tokens
            lengths = self.doc_lengths()
            same &= lengths[:d.size] == lengths[row]
        return np.flatnonzero(same & (self.role.view == self.role.a[row]) & (self.speaker.view == self.speaker.a[row]))

    def copy_keys(self, rows: np.ndarray) -> np.ndarray:
        """Per row of ``rows``, a 64-bit key the copies of its text share: its digest (tokens and length), or for a
        machine output its near-duplicates' key (:attr:`near_keys`), mixed with its voice (role and speaker), as
        :meth:`copies_of` and a context's lines tell copies apart."""
        rows = np.asarray(rows, dtype=np.int64)
        return (np.asarray(self._near.view[rows], dtype=np.uint64)
                ^ (self.role.view[rows].astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15))
                ^ (self.speaker.view[rows].astype(np.int64).astype(np.uint64) * np.uint64(0xC2B2AE3D27D4EB4F)))

    def _signatures_of(self, tokens: np.ndarray, seg_ends: np.ndarray) -> np.ndarray:
        sig = self.config.signature
        return ri_signatures(
            tokens, seed=sig.seed, dim=sig.dim, nnz=sig.nnz, window=sig.window, self_weight=sig.self_weight,
            top_m=sig.top_m, sig_bits=sig.bits, segment_ends=np.asarray(seg_ends, dtype=np.uint64),
        )

    def append(self, rows: list[MessageRow]) -> None:
        if not rows:
            return
        lengths = np.fromiter((r.n_tokens for r in rows), dtype=np.int64, count=len(rows))
        tokens = np.concatenate([r.tokens for r in rows]).astype(np.uint32, copy=False)
        seg_ends = np.cumsum(lengths)
        base = len(self.content)
        self.content.extend(tokens)
        if self._signatures is not None:
            self._signatures.extend(self._signatures_of(tokens, seg_ends))
        self._glue.extend(self._glue_of(tokens, seg_ends))
        first = self.ids.n
        self._digest.extend(self._digests_of(tokens, seg_ends))
        forms, kinds = self._forms_of(tokens, seg_ends)
        self._form.extend(forms)
        self._form_kind.extend(kinds)
        self._append_columns(rows, seg_ends + base)
        self._join(first)

    def _append_columns(self, rows: list[MessageRow], ends: np.ndarray) -> None:
        first_row = self.ids.n
        ids = [r.id for r in rows]
        self.ids.extend(ids)
        self.ends.extend(ends)
        self.seqs.extend([r.seq for r in rows])
        self.ts.extend([math.nan if r.ts is None else r.ts for r in rows])
        self.speaker.extend([self._code(self._speaker_code, self.speakers, r.speaker) for r in rows])
        self.session.extend([self._code(self._session_code, self.sessions, r.session_id) for r in rows])
        self.role.extend([ROLES.index(r.role) if r.role in ROLES else 0 for r in rows])
        self.program.extend([written_by_program(r.metadata) for r in rows])
        self.created.extend([r.created_at for r in rows])
        self.event_time.extend([event_time(r.metadata) for r in rows])
        self.utc_offset.extend([math.nan if r.utc_offset is None else r.utc_offset for r in rows])
        self.event_offset.extend([event_offset(r.metadata) for r in rows])
        self.row_of.append(ids, first_row)
        self.last_seq = max(self.last_seq, rows[-1].seq)

    def update(self, rows: list[MessageRow]) -> list[int]:
        """New metadata of held messages: the columns derived from it; returns the rows whose event time changed. A
        message now marked as written by a program, or no longer, is grouped again (:attr:`near_keys`)."""
        changed = []
        rejoin = False
        for r in rows:
            row = self.row_of.get(r.id)
            if row is None:
                continue
            program = written_by_program(r.metadata)
            if program != bool(self.program.a[row]):
                self.program.a[row] = program
                rejoin = True
            et, off = event_time(r.metadata), event_offset(r.metadata)
            old, old_off = float(self.event_time.a[row]), float(self.event_offset.a[row])
            same = (et == old or (et != et and old != old)) and (off == old_off or (off != off and old_off != old_off))
            if not same:
                self.event_time.a[row] = et
                self.event_offset.a[row] = off
                changed.append(row)
        if rejoin:
            self._join()
        return changed

    def rebuild_without(self, dead_ids) -> np.ndarray | None:
        """Drop messages from every structure: the matrices are rebuilt from the surviving spans. Returns the mask
        of kept rows (over the rows before the call), or None when none of ``dead_ids`` is held."""
        dead_rows = {self.row_of[i] for i in dead_ids if i in self.row_of}
        if not dead_rows:
            return None
        n = self.ids.n
        keep = np.ones(n, dtype=bool)
        keep[list(dead_rows)] = False
        with self._pos_lock:
            words = self._words_without(~keep)
        starts, ends = self.starts(), self.ends.view
        tok_keep = np.repeat(keep, ends - starts)
        tokens = self.content.access_range(0, len(self.content))[tok_keep]
        lengths = (ends - starts)[keep]
        cols = {name: getattr(self, name).view[keep].copy()
                for name in self._COLUMNS}
        if self._signatures is not None:
            sigs = self._signatures.access_range(0, len(self._signatures))[tok_keep]
            self._signatures = DynamicWaveletMatrix(self.config.signature.bits)
            self._signatures.extend(sigs)
        self.content = DynamicWaveletMatrix(tokenizer.token_bits())
        self.content.extend(tokens)
        # a message's glue flags and digest are of its own tokens alone: the survivors keep theirs
        glue, digest = self._glue.view, self._digest.view
        self._glue = GrowArray.wrap(glue[tok_keep].copy() if glue.size == tok_keep.size
                                    else self._glue_of(tokens, np.cumsum(lengths)), fill=False)
        self._digest = GrowArray.wrap(digest[keep].copy() if digest.size == n
                                      else self._digests_of(tokens, np.cumsum(lengths)))
        if self._form.n == n and self._form_kind.n == n:
            forms, kinds = self._form.view[keep].copy(), self._form_kind.view[keep].copy()
        else:
            forms, kinds = self._forms_of(tokens, np.cumsum(lengths))
        self._form, self._form_kind = GrowArray.wrap(forms), GrowArray.wrap(kinds)
        for name, values in cols.items():
            old = getattr(self, name)
            g = GrowArray(values.dtype, max(64, values.size), fill=old.fill)
            g.extend(values)
            setattr(self, name, g)
        self.ends = GrowArray(np.int64, max(64, lengths.size))
        self.ends.extend(np.cumsum(lengths))
        self.row_of = RowMap(self.ids.view)
        with self._pos_lock:
            self._pos_cache.clear()
            self._term_cache.clear()
            self._text_cache.clear()
            self._counts.clear()
            self._stats_cache.clear()
            if words is not None:  # the words of several tokens the other messages write, as a fresh read finds them
                self._words = (self.layout + 1, words[0], words[1], self._words[3] + 1)
                self._word_counts = words[2]
        # names only deleted messages had leave the tables (nothing of a deleted message outlives it)
        for col, names, table in (("speaker", "speakers", "_speaker_code"), ("session", "sessions", "_session_code")):
            codes = getattr(self, col).view
            used = np.unique(codes)
            old = getattr(self, names)
            if used.size != len(old):
                remap = np.full(len(old), -1, dtype=codes.dtype)
                remap[used] = np.arange(used.size, dtype=codes.dtype)
                codes[:] = remap[codes]
                fresh = [old[k] for k in used.tolist()]
                setattr(self, names, fresh)
                setattr(self, table, {v: k for k, v in enumerate(fresh)})
        self._join()  # a text of a machine output's form whose last machine output was deleted is itself again
        self.layout += 1
        return keep

    # -- snapshots ------------------------------------------------------------------------------------------
    _COLUMNS = ("ids", "seqs", "ts", "speaker", "session", "role", "program", "created", "event_time", "utc_offset",
                "event_offset")

    def to_snapshot(self) -> tuple[dict, dict[str, np.ndarray]]:
        """The span table (message lengths and columns, speaker and session names); the Content stream itself
        stays in the store's chunks."""
        arrays = {name: getattr(self, name).view for name in self._COLUMNS}
        arrays["lengths"] = np.diff(self.ends.view, prepend=0)
        meta = {"speakers": self.speakers, "sessions": self.sessions, "last_seq": self.last_seq,
                "n_tokens": self.n_tokens, "near_rule": masking.RULE}
        # the masked forms' keys and kinds of the messages that have one (the near-duplicate keys are made from
        # them and the digests on a load)
        formed = np.flatnonzero(self._form_kind.view)
        arrays["near_rows"] = formed.astype(np.int64)
        arrays["near_keys"] = self._form.view[formed].copy()
        arrays["near_kinds"] = self._form_kind.view[formed].copy()
        # the glue flags (one bit a token) and the digests, which a load would otherwise make again from every token
        arrays["glue"] = np.packbits(self._glue.view)
        arrays["digests"] = self._digest.view.copy()
        meta["glue_rule"] = _glue_rule()
        meta["digest_key"] = _DIGEST_KEY
        # the words of several tokens (:meth:`slips`), read up to the end of the stream first: each snapshot reads
        # only what was appended since the last read, and a restart finds them read
        with self._pos_lock:
            if self.config.retrieval.misspellings:
                self._several_token_words()
            read = self._words_read()
            if read:
                words = sorted({w for bucket in self._words[2].values() for w in bucket})
                meta["words_read"] = read
                meta["words_rule"] = _WORDS_RULE
                arrays["words"] = np.frombuffer("\n".join(words).encode("utf-8"), dtype=np.uint8)
                counts = self._word_counts
                if counts is not None and len(counts) == len(words):
                    arrays["word_counts"] = np.fromiter((counts.get(w, 0) for w in words), dtype=np.int64,
                                                        count=len(words))
        return meta, arrays

    @classmethod
    def from_snapshot(cls, namespace: str, config: Config, meta: dict, arrays: dict[str, np.ndarray],
                      keep: np.ndarray, n_tokens: int, content: DynamicWaveletMatrix,
                      tokens: np.ndarray) -> "NamespaceIndex":
        """The index of a snapshot's rows where ``keep`` is True over ``content``, the Content DWM of exactly their
        ``n_tokens`` tokens in order (what the store holds once the other rows are deleted; it may still be
        filling in another thread: its own lock makes readers wait); ``tokens`` are the same tokens as an array.
        Raises ``ValueError`` on any mismatch."""
        idx = cls(namespace, config)
        lengths = np.asarray(arrays["lengths"], dtype=np.int64)
        n = lengths.size
        if "utc_offset" not in arrays:  # a snapshot written before the offsets were kept: its messages have none
            arrays = {**arrays, "utc_offset": np.full(n, np.nan)}
        if "event_offset" not in arrays:  # written before event_time's offset was kept: the time is read on UTC's
            arrays = {**arrays, "event_offset": np.full(n, np.nan)}
        if "program" not in arrays:  # written before the messages of programs were marked: see written_by_programs
            raise ValueError("span table saved without the column of messages written by programs")
        if keep.size != n or any(arrays[c].shape != (n,) for c in cls._COLUMNS) or (lengths < 0).any():
            raise ValueError("span table columns disagree in length")
        if int(lengths[keep].sum()) != n_tokens:
            raise ValueError(f"span table covers {int(lengths[keep].sum())} tokens, the store holds {n_tokens}")
        idx.speakers = [None if x is None else str(x) for x in meta["speakers"]]
        idx.sessions = [None if x is None else str(x) for x in meta["sessions"]]
        if len(set(idx.speakers)) != len(idx.speakers) or len(set(idx.sessions)) != len(idx.sessions):
            raise ValueError("duplicate speaker or session names")
        idx._speaker_code = {v: k for k, v in enumerate(idx.speakers)}
        idx._session_code = {v: k for k, v in enumerate(idx.sessions)}
        everything = bool(keep.all())
        for name in cls._COLUMNS:
            col = getattr(idx, name)
            values = np.asarray(arrays[name], dtype=col.a.dtype)
            values = np.ascontiguousarray(values if everything else values[keep])
            setattr(idx, name, GrowArray.wrap(values, fill=col.fill))
        if idx.speaker.n and (idx.speaker.view.min() < 0 or idx.speaker.view.max() >= len(idx.speakers)
                              or idx.session.view.min() < 0 or idx.session.view.max() >= len(idx.sessions)
                              or idx.role.view.min() < 0 or idx.role.view.max() >= len(ROLES)):
            raise ValueError("speaker, session or role codes out of range")
        seqs = idx.seqs.view
        if seqs.size > 1 and (np.diff(seqs) <= 0).any():
            raise ValueError("message seqs are not increasing")
        idx.ends = GrowArray.wrap(np.cumsum(lengths if everything else lengths[keep]))
        idx.content = content
        if tokens.size != n_tokens:
            raise ValueError(f"{tokens.size} tokens given for a Content stream of {n_tokens}")
        glue = cls._saved_glue(meta, arrays, n_tokens) if everything else None
        idx._glue = GrowArray.wrap(glue if glue is not None else cls._glue_of(tokens, idx.ends.view), fill=False)
        digests = cls._saved_digests(meta, arrays, keep)
        idx._digest = GrowArray.wrap(digests if digests is not None else cls._digests_of(tokens, idx.ends.view))
        forms = cls._saved_forms(meta, arrays, keep)
        if forms is None:
            forms = cls._forms_of(tokens, idx.ends.view)
        idx._form, idx._form_kind = GrowArray.wrap(forms[0]), GrowArray.wrap(forms[1])
        idx._join()
        idx.row_of = RowMap(idx.ids.view)
        if len(idx.row_of) != idx.ids.n:
            raise ValueError("duplicate message ids")
        idx.last_seq = int(meta["last_seq"])
        read = meta.get("words_read")
        if everything and isinstance(read, int) and 0 < read <= n_tokens and read in idx.ends.view \
                and "words" in arrays and meta.get("words_rule") == _WORDS_RULE:
            # the words of several tokens in the stream's first ``read`` tokens, read by the rule of this version
            text = np.asarray(arrays["words"], dtype=np.uint8).tobytes().decode("utf-8")
            words: dict[tuple[str, int], set[str]] = {}
            listed = text.split("\n") if text else []
            _file_words(words, listed)
            idx._words = (idx.layout, read, words, 0)
            counts = arrays.get("word_counts")
            idx._word_counts = None
            if counts is not None and np.shape(counts) == (len(listed),) and len(set(listed)) == len(listed):
                counts = np.asarray(counts, dtype=np.int64)
                if (counts > 0).all():
                    idx._word_counts = dict(zip(listed, counts.tolist()))
        return idx

    @staticmethod
    def _saved_glue(meta: dict, arrays: dict[str, np.ndarray], n_tokens: int) -> np.ndarray | None:
        """:attr:`glue` of a snapshot's ``n_tokens`` tokens from its saved bits, or None when it has none made by
        this version's rule (then they are made again from the tokens)."""
        bits = arrays.get("glue")
        if meta.get("glue_rule") != _glue_rule() or bits is None:
            return None
        bits = np.asarray(bits)
        if bits.dtype != np.uint8 or bits.shape != ((n_tokens + 7) // 8,):
            raise ValueError("glue flags disagree with the span table")
        return np.unpackbits(bits, count=n_tokens).astype(bool)

    @staticmethod
    def _saved_digests(meta: dict, arrays: dict[str, np.ndarray], keep: np.ndarray) -> np.ndarray | None:
        """:attr:`digests` of the kept rows from a snapshot's saved ones, or None when it has none made with this
        version's multipliers (then they are made again from the tokens)."""
        saved = arrays.get("digests")
        if meta.get("digest_key") != _DIGEST_KEY or saved is None:
            return None
        if np.shape(saved) != keep.shape:
            raise ValueError("digests disagree with the span table")
        saved = np.asarray(saved, dtype=np.uint64)
        return np.array(saved if keep.all() else saved[keep], dtype=np.uint64, copy=True)  # a column of its own

    @staticmethod
    def _saved_forms(meta: dict, arrays: dict[str, np.ndarray], keep: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray] | None:
        """The masked forms' keys and kinds (see ``_form``) of the kept rows from a snapshot's saved ones, or None
        when it has none made by this version's rule (a snapshot written before they were saved, or by another
        rule): then they are made again from the tokens."""
        rows, keys, kinds = arrays.get("near_rows"), arrays.get("near_keys"), arrays.get("near_kinds")
        if meta.get("near_rule") != masking.RULE or rows is None or keys is None or kinds is None:
            return None
        rows = np.asarray(rows, dtype=np.int64)
        kinds = np.asarray(kinds)
        if rows.ndim != 1 or np.shape(keys) != rows.shape or kinds.shape != rows.shape or (rows.size and (
                int(rows.min()) < 0 or int(rows.max()) >= keep.size or (np.diff(rows) <= 0).any()
                or not np.isin(kinds, (1, 2, 3)).all())):
            raise ValueError("near-duplicate keys disagree with the span table")
        n = int(keep.sum())
        forms, out_kinds = np.zeros(n, dtype=np.uint64), np.zeros(n, dtype=np.uint8)
        # row numbers after the deleted rows are dropped
        new_row = np.cumsum(keep) - 1
        alive = keep[rows]
        forms[new_row[rows[alive]]] = np.asarray(keys, dtype=np.uint64)[alive]
        out_kinds[new_row[rows[alive]]] = kinds[alive].astype(np.uint8)
        return forms, out_kinds

    # -- reading --------------------------------------------------------------------------------------------
    def span(self, row: int) -> tuple[int, int]:
        end = int(self.ends.a[row])
        start = int(self.ends.a[row - 1]) if row > 0 else 0
        return start, end

    def tokens_of(self, row: int) -> np.ndarray:
        start, end = self.span(row)
        return self.content.access_range(start, end)

    def text_of(self, row: int) -> str:
        return self.texts_of([row])[0]

    def texts_of(self, rows) -> list[str]:
        """The texts of ``rows`` (in that order). The texts read last are kept (up to ``_TEXT_CACHE_CHARS``
        characters: consecutive contexts and searches return many of the same messages); the others are read from
        the Content DWM in one call and turned into bytes in one more, instead of a matrix read and a tokenizer call
        each. A message's text never changes; removing rows drops what is kept with the other caches."""
        rows = [int(r) for r in rows]
        out: list[str | None] = [None] * len(rows)
        with self._pos_lock:
            cache = self._text_cache
            for k, r in enumerate(rows):
                out[k] = cache.get(r)
        todo = [k for k, t in enumerate(out) if t is None]
        if not todo:
            return out  # type: ignore[return-value]
        want = np.asarray([rows[k] for k in todo], dtype=np.int64)
        if want.size and (int(want.min()) < 0 or int(want.max()) >= len(self)):
            raise IndexError(f"row out of range: {rows}")
        layout = self.layout
        ends = self.ends.view[want]
        starts = np.where(want > 0, self.ends.view[np.maximum(want - 1, 0)], 0)
        texts = _split_text(self.content.access_ranges(starts, ends), np.cumsum(ends - starts))
        with self._pos_lock:
            keep = layout == self.layout
            cache = self._text_cache
            for k, text in zip(todo, texts):
                out[k] = text
                if keep and len(text) <= cache.budget // 16 and rows[k] not in cache:
                    cache.put(rows[k], text)
        return out  # type: ignore[return-value]

    def texts(self, start: int, end: int, chunk: int = 4096) -> "Iterator[tuple[int, str]]":
        """``(row, text)`` for rows ``[start, end)``, reading the Content DWM in large ranges (one call per
        ``chunk`` rows instead of one per message)."""
        for lo, toks, bounds in self._blocks(start, end, chunk):
            for k, text in enumerate(_split_text(toks, bounds)):
                yield lo + k, text

    def rows_opening_with(self, token_ids, after: int = 0) -> np.ndarray:
        """Rows (ascending) whose first token is one of ``token_ids``, among the messages that start at or after
        stream position ``after``. Found from the tokens' occurrences (cached per token), not by reading every
        message."""
        n = len(self)
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        starts = self.starts()
        found = []
        for t in sorted({int(t) for t in token_ids}):
            if self.content.count(t, after, len(self.content)) == 0:
                continue
            # the whole list from the per-token cache, only the new part of the stream once rows were checked
            pos = self._positions(t) if after == 0 else self.content.positions(t, after, len(self.content))
            rows = self.rows_of_positions(pos)
            ok = rows < n
            ok[ok] = starts[rows[ok]] == pos[ok]
            found.append(rows[ok].astype(np.int64))
        return np.unique(np.concatenate(found)) if found else np.zeros(0, dtype=np.int64)

    def rows_of_positions(self, positions: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.ends.view, positions, side="right")

    def doc_lengths(self) -> np.ndarray:
        """Token count of every message (float64), cached until the span table changes."""
        n = self.ids.n
        if self._lengths is None or self._lengths.size != n or self._lengths_end != len(self.content):
            self._lengths = np.diff(self.ends.view, prepend=0).astype(np.float64)
            self._lengths_end = len(self.content)
        return self._lengths

    # -- misspellings (hippo.text.lexicon, "misspellings") --------------------------------------------------
    def slips(self, pat: lexicon.TermPattern, word: str) -> lexicon.TermPattern | None:
        """The misspellings of the query word ``word`` (whose pattern is ``pat``) that this namespace holds, as one
        pattern (:func:`lexicon.slips`): words one slip from it (:func:`lexicon.one_slip_apart`) that the stream
        writes in several tokens (in the case written and in lower case) and that do not fold to its stem, for a
        word that cl100k writes in one token (a word of its training text, in lower case or as asked: two codes one
        letter apart are no slip of each other) and that is :func:`lexicon.is_spellable`; and, for a word of three
        ASCII letters or more, the words of the stream that hold some of its letters for emphasis
        (:func:`lexicon.stretched_from`: "birthdayyy", "loooove"); for one of four or more, the words the stream
        writes with accents in several tokens whose letters without them are the word ("Medellín" for "medellin";
        a word with accents in one token is in the word's own pattern); for any word, the words the stream writes
        with optional marks whose letters without them are one of its forms ("المَدْرَسَةِ" for "مدرسة":
        :func:`lexicon.plain_keys`). With them, the word's derivational
        relatives ("adoption" for "adopt": :func:`lexicon.relative_words`) and, for a word naming a kind of place,
        the names of that kind ("Seattle" for "cities": :func:`hippo.text.places.names_of_kind`), which count as a
        slip does. None when there are none; the misspellings with ``config.retrieval.misspellings`` off, the
        relatives with ``config.retrieval.relatives`` off, the place names with ``config.retrieval.places`` off.
        Kept per word as asked until the namespace holds a new word."""
        rc = self.config.retrieval
        if pat.anywhere:
            return None
        rel = lexicon.relative_words(word) if rc.relatives else ()
        named = places.names_of_kind(word) if rc.places else ()
        low = word.lower()
        # a slip needs a word to slip from: one of cl100k's training text (not a code, "zqcbc"), in lower case or as
        # asked; letters held for emphasis ("birthdayyy") are looked for in any word of three letters or more
        slip = rc.misspellings and lexicon.is_spellable(word) and not (
            lexicon.several_tokens(low) and lexicon.several_tokens(word))
        held = rc.misspellings and len(low) >= 3 and low.isascii() and low.isalpha()
        accents = held and len(low) >= lexicon.ACCENT_MIN_LETTERS  # "medellin" finds "Medellín"
        # a shorter word, Vietnamese ones only: "pho" finds "phở" (lexicon.VIETNAMESE_MIN_LETTERS)
        short = rc.misspellings and lexicon.VIETNAMESE_MIN_LETTERS <= len(low) < lexicon.ACCENT_MIN_LETTERS \
            and low.isascii() and low.isalpha()
        if not rc.misspellings:  # nothing to look for among the namespace's words
            return lexicon.slips(pat.term, (), low, rel, named) if rel or named else None
        with self._pos_lock:
            words, version = self._several_token_words()
            # kept by the word as asked: whether it is looked for as a slip depends on its case ("Tennessee" is one
            # token, "tennessee" several), so the answer for one case is not the other's
            got = self._slips.peek(word)
            if got is not None and got[0] == version:
                self._slips.touch(word)
                return lexicon.slips(*got[1]) if got[1] is not None else None
            near = [w for size in (len(low) - 1, len(low), len(low) + 1) for w in words.get((low[0], size), ())] \
                if slip else []
            long = list(words.get((lexicon.squeezed(low), 0), ())) if held else []
            accented = list(words.get((low, -1), ())) if accents else \
                [w for w in words.get((low, -1), ()) if lexicon.is_vietnamese(w)] if short else []
            cased = list(words.get((low, -2), ())) if held else []  # "LeBron" for "lebron"
            # "المَدْرَسَةِ" for "مدرسة", looked for only where the namespace writes such words at all
            marked = [w for k in lexicon.plain_keys(word) for w in words.get((k, -3), ())] if _MARKED in words else []
        hits = tuple(sorted({w for w in near if lexicon.one_slip_apart(low, w) and textnorm.stem(w) != pat.term}
                            | {w for w in long if lexicon.stretched_from(low, w)} | set(accented) | set(cased)
                            | set(marked)))
        args = (pat.term, hits, low, rel, named) if hits or rel or named else None
        out = lexicon.slips(*args) if args is not None else None
        with self._pos_lock:
            self._slips.put(word, (version, args))
        return out

    def _words_read(self) -> int:
        """Stream tokens whose words are read (0 before the first read and after a deletion). Caller holds
        ``_pos_lock``."""
        got = self._words
        return got[1] if got is not None and got[0] == self.layout else 0

    def words_unread(self) -> int:
        """Stream tokens whose words :meth:`slips` would read first (those appended since the words were read)."""
        with self._pos_lock:
            return len(self.content) - self._words_read()

    def read_words(self, max_tokens: int) -> bool:
        """Read ahead, up to about ``max_tokens`` stream tokens (whole messages, at least one), the words
        :meth:`slips` looks among; True once every message is read. For a background reader: the first question
        then finds them read."""
        if max_tokens < 1:
            raise OutOfRange(f"max_tokens must be >= 1, got {max_tokens}")
        with self._pos_lock:
            at = self._words_read()
            ends = self.ends.view
            if not ends.size:
                return True
            first = int(np.searchsorted(ends, at, side="right"))  # the message that starts at ``at``
            if first < ends.size:
                last = max(first, int(np.searchsorted(ends, at + max_tokens, side="right")) - 1)
                self._several_token_words(int(ends[last]))
            return self._words_read() >= len(self.content)

    def _several_token_words(self, upto: int | None = None) -> tuple[dict[tuple[str, int], set[str]], int]:
        """``(words, version)``: the lowercase words of four or more ASCII letters that the stream writes in two to
        four tokens, by first letter and length (and those with a letter held three times or more also under
        ``(lexicon.squeezed(word), 0)``), the words of four letters or more with accents that fold to ASCII
        letters, two tokens or more, under ``(textnorm.fold(word), -1)`` only, and the words written with optional
        marks under ``(textnorm.plain(word).lower(), -3)`` (:func:`_file_words`); read once and then extended by what
        was appended since, read
        again after a deletion. The version grows with every read that found new words and with every fresh start,
        so an answer kept for an older one is never reused. ``upto`` (a message boundary) reads no further than
        there. Caller holds ``_pos_lock``."""
        n = len(self.content) if upto is None else min(upto, len(self.content))
        got = self._words
        if got is None or got[0] != self.layout:
            got = (self.layout, 0, {}, 0 if got is None else got[3] + 1)
            self._word_counts = {}
        layout, at, words, version = got
        n = max(n, at)
        if at < n:
            found = self._words_in(at, n)
            version += _file_words(words, found)
            if self._word_counts is not None:
                for w, c in found.items():
                    self._word_counts[w] = self._word_counts.get(w, 0) + c
        self._words = (layout, n, words, version)
        return words, version

    def _words_without(self, dead: np.ndarray) -> tuple[int, dict[tuple[str, int], set[str]], dict[str, int]] | None:
        """The words of :meth:`_several_token_words` once the rows where ``dead`` is True are gone, from the counts
        of the words read less those of the dead messages' runs (read alone: every run lies inside one message):
        ``(tokens read, words, counts)``, or None when a fresh read is needed instead (counts not known, or most of
        what was read dies). Caller holds ``_pos_lock``; the rows are still in the index."""
        got, counts = self._words, self._word_counts
        if got is None or got[0] != self.layout or counts is None or not got[1]:
            return None
        at = got[1]
        ends = self.ends.view
        starts = ends - np.diff(ends, prepend=0)
        read = dead & (ends <= at)
        lost = int((ends - starts)[read].sum())
        if 2 * lost > at:
            return None
        gone: Counter[str] = Counter()
        rows = np.flatnonzero(read)
        if rows.size:
            breaks = np.flatnonzero(np.diff(rows) > 1) + 1  # runs of adjacent dead rows: one read each
            for first, last in zip(np.r_[0, breaks].tolist(), np.r_[breaks, rows.size].tolist()):
                gone.update(self._words_in(int(starts[rows[first]]), int(ends[rows[last - 1]])))
        left = dict(counts)
        for w, c in gone.items():
            k = left.get(w, 0) - c
            if k < 0:
                return None  # not what the read counted: read again
            if k:
                left[w] = k
            else:
                del left[w]
        words = {key: set(bucket) for key, bucket in got[2].items()}
        _unfile_words(words, [w for w in gone if w not in left])
        return at - lost, words, left

    def _words_in(self, start: int, end: int) -> Counter[str]:
        """The words of :meth:`_several_token_words` in stream positions ``[start, end)`` (message boundaries):
        runs of two to four tokens that continue each other (beyond ASCII, up to :data:`_LONGEST_WORD_TOKENS`),
        then only the ASCII words that are several tokens also when written after a space (after punctuation, or
        opening a message, "There" is written differently), the accented words and the words written with optional
        marks; each with the number of runs that write it (a second reading's run counted only where it differs
        from the first's), so that the counts of a range are the sums of its messages' counts."""
        toks = self.content.access_range(start, end).astype(np.int64)
        if not toks.size:
            return Counter()
        table = tokenizer.token_bytes()
        begins = ~self.glue[start:end]  # a message's first token begins a word
        begins[0] = True
        readings = [begins]
        wider = lexicon.non_ascii(toks)
        splits = np.flatnonzero(lexicon.letters_meet_digits(toks)) + 1
        splits = splits[wider[splits] | wider[splits - 1]]
        if splits.size:
            # also read as one run what digits after letters split inside a message in full width: "ｉＰｈｏｎｅ１５"
            # is the words "ｉＰｈｏｎｅ" and "１５", and the word "iPhone15" asks for (in ASCII a phrase of its
            # tokens finds it)
            ends = self.ends.view
            opens = ends[(ends > start) & (ends < end)] - start
            joined = begins.copy()
            joined[splits] = False
            joined[opens] = True
            readings.append(joined)
        runs: Counter[bytes] = Counter()
        seen = np.cumsum(readings[0])  # word starts of the first reading up to each position
        for r, begins in enumerate(readings):
            first = np.flatnonzero(begins)
            length = np.diff(np.append(first, toks.size))
            if r:  # a later reading's runs that the first reading also has are counted once
                new = seen[first + length - 1] - seen[first] > 0
                first, length = first[new], length[new]
            # beyond ASCII, words run longer: "Sıraselviler" is six tokens, an Arabic word with its harakat two a
            # letter
            wide = np.add.reduceat(wider.astype(np.int64), first) > 0 if first.size else np.zeros(0, dtype=bool)
            longer = wide & (length > 4) & (length <= _LONGEST_WORD_TOKENS)
            runs.update(b"".join(table[t] for t in toks[f:f + n].tolist())
                        for f, n in zip(first[longer].tolist(), length[longer].tolist()))
            pick = (length >= 2) & (length <= 4)
            first, length = first[pick], length[pick]
            if not first.size:
                continue
            # each distinct run once: a run's first three tokens (ids below 2**17) folded into one 64-bit key and
            # its fourth (or 0) beside it, exact
            key = np.zeros(first.size, dtype=np.uint64)
            for j in range(3):
                ok = length > j
                key[ok] = key[ok] * np.uint64(1 << 17) + toks[first[ok] + j].astype(np.uint64) + np.uint64(1)
            fourth = np.where(length > 3, toks[np.minimum(first + 3, toks.size - 1)] + 1, 0).astype(np.uint64)
            order = np.lexsort((fourth, key))
            key, fourth = key[order], fourth[order]
            heads = np.flatnonzero(np.r_[True, (key[1:] != key[:-1]) | (fourth[1:] != fourth[:-1])])
            times = np.diff(np.append(heads, order.size))
            at = order[heads]
            for f, n, c in zip(first[at].tolist(), length[at].tolist(), times.tolist()):
                runs[b"".join(table[t] for t in toks[f:f + n].tolist())] += c
        joiners = "".join(lexicon.JOINERS)
        out: Counter[str] = Counter()
        for run, times in runs.items():
            text = run.decode("utf-8", "ignore").strip().lstrip(joiners)
            got: set[str] = set()
            if text.isascii():
                if len(text) < lexicon.SPELL_MIN_LETTERS - 1 or not text.isalpha():
                    continue
                if lexicon.several_tokens(text) and lexicon.several_tokens(text.lower()):
                    got.add(text.lower())
                if lexicon.is_mixed_case(text) and lexicon.several_tokens(text):
                    got.add(text)  # mixed case as written ("LeBron"): found from the word in lower case
            elif lexicon.is_accented(text):  # "Medellín", "naïve": found from the letters without accents
                if (len(textnorm.fold(text)) < lexicon.SPELL_MIN_LETTERS - 1 and not lexicon.is_vietnamese(text)) \
                        or not text.isalpha():  # "ﬁle": four; Vietnamese "phở": two
                    continue
                got.add(text.lower())
                # also as written: a capital's lower case is not always a letter of its own (Turkish "İstanbul" is
                # "i" + U+0307 in lower case, which writes no token of the message)
                got.add(text)
            elif textnorm.plain(text) != text and textnorm.words(text) == [text]:
                got.add(text)  # "المَدْرَسَةِ": found from its letters without the marks (textnorm.plain)
            for w in got:
                out[w] += times
        return out

    def units(self) -> tuple[np.ndarray, np.ndarray]:
        """``(code per row, tokens per code)``: the stretches of conversation that retrieval treats as one exchange
        (a question's session lift, the neighbours a message borrows from, the session match of a rule). A message
        with a session id is in its session, under the session's code. Messages without one are grouped into
        *sittings*: consecutive ones (in insertion order) whose times (``timestamp``, else the time they were
        added) are at most ``config.retrieval.sitting_gap_s`` apart (0: no sittings). A sitting where at least two
        voices (speaker x role) take turns is a conversation of its own and gets a code after the sessions'; one
        where a single voice writes (notes, a log) is no exchange and keeps the code of messages without a session
        id, whose tokens count 0 (in no unit). Cached until the span table changes. Read only."""
        lengths = self.doc_lengths()
        key = (self.layout, lengths.size, self._lengths_end)
        got = self._units
        if got is not None and got[0] == key and got[2].size >= len(self.sessions):
            return got[1], got[2]
        codes = self.session.view.astype(np.int32)
        n_codes = len(self.sessions)
        none = self._session_code.get(None)
        gap_s = self.config.retrieval.sitting_gap_s
        if none is not None and gap_s > 0:
            bare = np.flatnonzero(codes == none)
            if bare.size > 1:
                when = self.ts.view[bare]
                when = np.where(np.isfinite(when), when, self.created.view[bare])
                gap = np.abs(np.diff(when))
                sitting = np.concatenate([[0], np.cumsum(~(gap <= gap_s))])  # NaN gaps split too
                voice = self.speaker.view[bare].astype(np.int64) * len(ROLES) + self.role.view[bare]
                base = int(voice.max()) + 1
                pairs = np.unique(sitting * base + voice)  # each (sitting, voice) once
                voices = np.bincount(pairs // base, minlength=int(sitting[-1]) + 1)
                talk = voices[sitting] >= 2
                if talk.any():
                    dense = np.unique(sitting[talk], return_inverse=True)[1]
                    codes[bare[talk]] = n_codes + dense
                    n_codes += int(dense.max()) + 1
        per = np.bincount(codes, weights=lengths, minlength=n_codes)
        if none is not None:
            per[none] = 0.0
        codes.setflags(write=False)
        per.setflags(write=False)
        self._units = (key, codes, per)
        return codes, per

    def turns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(turn per row, first row per turn, place per turn)``: a *turn* is what one voice (speaker x role) says
        before another voice speaks, the consecutive messages of one voice in one unit of :meth:`units` (a burst of
        short messages in a messaging app: "Guess what!" / "I got the job." / "Starting Monday."). Messages in no
        unit are turns of their own. The first-row array ends with the row count.

        A turn's *place* counts the turns that take the floor: it grows by one per turn, except at a continuer, a
        turn of one message of at most :data:`CONTINUER_TOKENS` tokens ("omg", "lol", "wait what", "no way"),
        shorter than the messages on either side of it, between two turns of one other voice in its unit
        (Schegloff's continuers, Yngve's backchannels: the listener's reaction does not take the floor). A
        continuer sits half a place after the turn before it, and the turn after it follows that one directly. No
        two continuers are adjacent (each is shorter than the other). Cached with :meth:`units`. Read only."""
        codes = self.units()[0]
        got = self._turns
        if got is not None and got[0] is codes:
            return got[1], got[2], got[3]
        n = codes.size
        none = self._session_code.get(None)
        voice = self.speaker.view[:n].astype(np.int64) * len(ROLES) + self.role.view[:n]
        new = np.ones(n, dtype=bool)
        if n > 1:
            new[1:] = (codes[1:] != codes[:-1]) | (voice[1:] != voice[:-1])
        if none is not None:
            new |= codes == none
        turn = np.cumsum(new) - 1
        start = np.append(np.flatnonzero(new), n).astype(np.int64)
        n_turns = start.size - 1
        step = np.ones(n_turns)
        if n_turns > 2:
            tok = self.doc_lengths()[:n]
            first, last = start[:-1], start[1:] - 1  # each turn's first and last row
            mid = np.arange(1, n_turns - 1)
            one = first[mid] == last[mid]
            row = first[mid]
            cont = one & (tok[row] <= CONTINUER_TOKENS) & (tok[row] < tok[last[mid - 1]]) \
                & (tok[row] < tok[first[mid + 1]]) & (voice[last[mid - 1]] == voice[first[mid + 1]]) \
                & (codes[last[mid - 1]] == codes[row]) & (codes[row] == codes[first[mid + 1]])
            if none is not None:
                cont &= codes[row] != none
            step[mid[cont]] = 0.5       # half a place after the turn before it
            step[mid[cont] + 1] = 0.5   # and the turn after it a place after that one
        place = np.cumsum(step)
        for a in (turn, start, place):
            a.setflags(write=False)
        self._turns = (codes, turn, start, place)
        return turn, start, place

    def speaker_stems(self) -> dict[str, list[int]]:
        """Stem -> codes of the speakers it names: a speaker's whole name and each word of it of two letters or more,
        so that "Jonathan" names "Jonathan Smith" as a "<speaker>: <text>" line would show it to a text-only BM25
        (contact names of a messaging app are often first and last names; two Smiths are both named by "Smith").
        Cached until a speaker is added or a removal renumbers them. Read only."""
        key = (self.layout, len(self.speakers))
        got = self._speaker_stems
        if got is not None and got[0] == key:
            return got[1]
        by_stem: dict[str, list[int]] = {}
        for code, s in enumerate(self.speakers):
            if not s:
                continue
            words = [w for w in textnorm.words(s) if len(w) > 1]
            for st in dict.fromkeys([textnorm.stem(s.lower()), *(textnorm.stem(w.lower()) for w in words)]):
                by_stem.setdefault(st, []).append(code)
        self._speaker_stems = (key, by_stem)
        return by_stem

    def addressees(self) -> np.ndarray:
        """Per row, the speaker code of the other party of its unit (:meth:`units`) when the unit is a dialogue of
        exactly two speakers, else -1 (a group, one speaker alone, messages in no unit). In a dialogue of two, a
        message that names the other party addresses them ("Thanks, Mel!", "Wow, that looks amazing, Nate!"): the
        name says whom the message is for, not whom it is about. Cached with :meth:`units`. Read only."""
        codes = self.units()[0]
        got = self._addressees
        if got is not None and got[0] is codes:
            return got[1]
        n = codes.size
        out = np.full(n, -1, dtype=np.int64)
        if n:
            # O(rows): a unit's lowest and highest speaker code; it is a dialogue of two when they differ and every
            # message of the unit is by one of them
            spk = self.speaker.view[:n].astype(np.int64)
            unit = codes.astype(np.int64)
            n_units = int(unit.max()) + 1
            lo = np.full(n_units, np.iinfo(np.int64).max, dtype=np.int64)
            hi = np.full(n_units, -1, dtype=np.int64)
            np.minimum.at(lo, unit, spk)
            np.maximum.at(hi, unit, spk)
            third = (spk != lo[unit]) & (spk != hi[unit])
            two = (lo != hi) & (np.bincount(unit[third], minlength=n_units) == 0)
            none = self._session_code.get(None)
            if none is not None and none < n_units:
                two[none] = False
            at = two[unit]
            other = np.where(spk == lo[unit], hi[unit], lo[unit])
            out[at] = other[at]
        out.setflags(write=False)
        self._addressees = (codes, out)
        return out

    # -- term occurrences in the Content DWM ----------------------------------------------------------------
    # Occurrences of a token and whether each ends a word are cached per token: the stream only grows, so a
    # cached list is extended by the occurrences appended since (O(new)), and questions share most tokens
    # ("what", "the", a name). Removing rows renumbers positions: the cache is dropped with the layout.
    def _occurrences(self, symbol: int, n: int | None = None, words: bool = True
                     ) -> tuple[np.ndarray, np.ndarray | None] | None:
        """``(positions, ends_a_word)`` of every occurrence of ``symbol``, ascending; None past the cache's
        size bound (then the caller selects what it needs). ``n`` is the stream's length when the caller read it.
        Without ``words`` the whole-word flags may be None: a phrase's anchor token needs only its positions, and
        the flags of a token that continues a word read the token before each occurrence. They are computed when
        first asked for and kept with the positions."""
        n = len(self.content) if n is None else n
        with self._pos_lock:
            layout = self.layout
            got = self._pos_cache.peek(symbol)
            if got is not None and got[0] == layout:
                self._pos_cache.touch(symbol)
                if got[1] == n and (got[3] is not None or not words):
                    return got[2], got[3]
        if got is not None and got[0] == layout:
            more = self.content.positions(symbol, got[1], n)
            pos = np.concatenate([got[2], more]) if more.size else got[2]
            if got[3] is not None:
                whole = np.concatenate([got[3], self._whole(symbol, more, 1)]) if more.size else got[3]
            else:
                whole = self._whole(symbol, pos, 1) if words else None
        else:
            with self._pos_lock:
                kept = self._counts.get(symbol) if self._counts_at == (layout, n) else None
            if (self.content.count(symbol, 0, n) if kept is None else kept) > _POS_CACHE_MAX:
                return None
            pos = positions(self.content, symbol)
            whole = self._whole(symbol, pos, 1) if words else None
        self._keep(layout, n, [(symbol, pos, whole)])
        return pos, whole

    def _keep(self, layout: int, n: int, entries: list[tuple[int, np.ndarray, np.ndarray | None]]) -> None:
        """Keep each ``(symbol, positions, whole-word flags or None)`` located in a stream of length ``n`` under
        ``layout`` (read-only), the least recently used beyond the bound dropped; nothing if rows were removed since."""
        for _symbol, pos, whole in entries:
            pos.setflags(write=False)
            if whole is not None:
                whole.setflags(write=False)
        with self._pos_lock:
            if layout != self.layout:
                return
            for symbol, pos, whole in entries:
                self._pos_cache.put(symbol, (layout, n, pos, whole))

    def _locate_many(self, symbols: list[int], counts: list[int], n: int, words: bool) -> None:
        """Keep the occurrences of the ``symbols`` not kept yet (:meth:`_occurrences`; ``counts`` their occurrences
        in the stream's first ``n`` tokens), located one by one but, with ``words``, their whole-word flags tested
        in one pass over all of them: a new term brings dozens of tokens (its forms' single tokens, its phrases'
        anchors), and the test's fixed cost was paid per token."""
        with self._pos_lock:
            layout = self.layout
            todo = [s for s, c in dict(zip(symbols, counts)).items() if c <= _POS_CACHE_MAX
                    and ((got := self._pos_cache.peek(s)) is None or got[0] != layout)]
        if len(todo) < 2:
            return
        found = [positions(self.content, s) for s in todo]
        wholes: list[np.ndarray | None] = [None] * len(todo)
        if words:
            sizes = np.fromiter((f.size for f in found), dtype=np.int64, count=len(found))
            flags = self._whole(np.repeat(np.asarray(todo, dtype=np.int64), sizes), np.concatenate(found), 1)
            wholes = np.split(flags, np.cumsum(sizes)[:-1])
        self._keep(layout, n, list(zip(todo, found, wholes)))

    def _positions(self, symbol: int, n: int | None = None) -> np.ndarray:
        got = self._occurrences(int(symbol), n, words=False)
        return got[0] if got is not None else positions(self.content, int(symbol))

    def token_counts(self, pat: lexicon.TermPattern) -> dict[int, int]:
        """Occurrences of every token a term's patterns use. A term's case variants and inflections make dozens of
        tokens, and questions share most of them, so counts are kept between questions: the stream only grows,
        and a kept count is extended by the tokens appended since (read back in one range); the tokens not kept
        yet are counted in one batch over the Content DWM."""
        tokens = pat.tokens
        if not tokens:
            return {}
        n = len(self.content)
        with self._pos_lock:
            counts = self._counts
            layout, at = self._counts_at
            if layout != self.layout or at > n or n - at > _COUNT_CACHE_GROWTH or len(counts) > _COUNT_CACHE_ENTRIES:
                counts.clear()
                at = n
            elif at < n and counts:
                added, per = np.unique(self.content.access_range(at, n), return_counts=True)
                for t, k in zip(added.tolist(), per.tolist()):
                    if t in counts:
                        counts[t] += k
            self._counts_at = (self.layout, n)
            missing = [t for t in tokens if t not in counts]
            if missing:
                got = self.content.count_many(np.asarray(missing, dtype=np.uint32), 0, n).tolist()
                counts.update(zip(missing, got))
            return {t: counts[t] for t in tokens}

    def term_stats(self, pat: lexicon.TermPattern) -> tuple[dict[int, int], int]:
        """``(token_counts(pat), term_frequency(pat))``, kept until the stream grows: the same question asked again
        (a context at another budget, a search then a recall) skips gathering dozens of counts per term. Kept by
        the pattern's contents (:attr:`lexicon.TermPattern.key`), never the pattern itself: patterns are the
        process's to keep (``lexicon.pattern``), and one held here for each of a namespace's last questions' terms
        kept about 20 KB each, per loaded namespace."""
        n = len(self.content)
        key = pat.key
        with self._pos_lock:
            got = self._stats_cache.peek(key)
            if got is not None and got[0] == (self.layout, n):
                self._stats_cache.touch(key)
                return got[1], got[2]
            layout = self.layout
        counts = self.token_counts(pat)
        freq = self.term_frequency(pat, counts)
        with self._pos_lock:
            if layout == self.layout:
                self._stats_cache.put(key, ((layout, n), counts, freq))
        return counts, freq

    def term_frequency(self, pat: lexicon.TermPattern, counts: dict[int, int] | None = None) -> int:
        """Upper bound on the occurrences of a term: the counts of its single tokens, plus those of its phrases'
        rarest pieces, once per piece and offset. The phrases anchored on one token at one offset (the forms of a
        word that share its stem: "σουβλακι", "σουβλακια", "σουβλακιου"...) start where that token's occurrences put
        them, one start each, and a term's occurrences are its distinct starts (:meth:`term_positions`). Counted
        once per phrase, a Greek or Hebrew word's hundred forms made a word of 50 messages seem to occur 58,000
        times in 2,000, past ``enumerate_limit``, and such a word is not looked for in its accented spellings."""
        counts = self.token_counts(pat) if counts is None else counts
        total = sum(counts[t] for t in pat.singles.tolist())
        if pat.phrases:
            cell = self._phrase_counts(pat, counts)
            anchor = cell.argmin(axis=1)
            every = np.arange(anchor.size)
            key = pat.phrase_table[0][every, anchor].astype(np.int64) * (cell.shape[1] + 1) + anchor
            _, first = np.unique(key, return_index=True)
            total += int(cell[every, anchor][first].sum())
        return total

    @staticmethod
    def _phrase_counts(pat: lexicon.TermPattern, counts: dict[int, int]) -> np.ndarray:
        """Per phrase and offset of ``pat.phrase_table``: its token's occurrences (``counts``); padding gets the
        largest int64, so a row minimum is the phrase's rarest token."""
        _tokens, _lengths, distinct, at = pat.phrase_table
        per = np.fromiter((counts[t] for t in distinct.tolist()), dtype=np.int64, count=distinct.size)
        return np.where(at >= 0, per[np.maximum(at, 0)], np.iinfo(np.int64).max)

    def _glued(self, pos: np.ndarray, length: int | np.ndarray) -> np.ndarray:
        """For matches of ``length`` tokens at ``pos``: glued to a following word piece (" paint" + "brush" is
        "paintbrush", not "paint")."""
        glue = self.glue  # a word also ends where its message ends, whatever the next message starts with
        nxt = pos + length
        inside = nxt < glue.size
        glued = np.zeros(pos.size, dtype=bool)
        glued[inside] = glue[nxt[inside]]
        return glued

    def _split_from_previous(self, pos: np.ndarray) -> np.ndarray:
        """For matches at ``pos`` whose first token has no leading space (it continues a word): whether they start a
        word, i.e. begin a message or follow a token that ends in punctuation or space ("i" after " Moch" is the end
        of "Mochi"). For such a token the glue flag is set exactly where it does not begin a message, follow
        letters with its digits or change script (those start a word: :attr:`glue`)."""
        out = np.ones(pos.size, dtype=bool)
        inner = np.flatnonzero(self.glue[pos])
        if inner.size:
            prev = self.content.access_many(pos[inner] - 1)
            word = lexicon.ends_in_word(prev)
            # the last byte of a cut character ("🎉party"): read back to the character's first byte
            for k in np.flatnonzero(word & lexicon.inside_character(prev)).tolist():
                p = int(pos[inner[k]])
                ids = self.content.access_many(np.arange(max(0, p - 4), p, dtype=np.int64))
                word[k] = lexicon.last_character_is_word(b"".join(tokenizer.token_bytes()[int(t)] for t in ids))
            out[inner] = ~word
        return out

    def _whole(self, first_token: int | np.ndarray, pos: np.ndarray, length: int | np.ndarray) -> np.ndarray:
        """Per match of ``length`` tokens at ``pos`` starting with ``first_token``: a whole word (not glued to a
        following word piece, and not the tail of a preceding word). ``first_token`` and ``length`` are one value
        for every match or one per match."""
        whole = ~self._glued(pos, length)
        if pos.size:
            at = np.flatnonzero(whole & lexicon.continues_word(np.atleast_1d(first_token)))
            if at.size:
                whole[at] = self._split_from_previous(pos[at])
        return whole

    def _whole_words(self, pos: np.ndarray, length: int, first_token: int) -> np.ndarray:
        """Keep the matches that are whole words (:meth:`_whole`)."""
        return pos[self._whole(first_token, pos, length)]

    def _newest(self, symbol: int, count: int, keep: int | None, n: int | None = None) -> np.ndarray:
        """Positions of ``symbol``; with ``keep``, only its newest ``keep`` occurrences (start found by select)."""
        if keep is None or count <= keep:
            return self._positions(symbol, n)
        got = self._occurrences(int(symbol), n, words=False)
        if got is not None:
            return got[0][-keep:]
        start = self.content.select(symbol, count - keep + 1)
        return self.content.positions(symbol, start, len(self.content))

    def _newest_words(self, symbol: int, count: int, keep: int | None, n: int | None = None) -> np.ndarray:
        """:meth:`_newest` occurrences that end a word (the same as filtering them with :meth:`_whole_words`)."""
        got = self._occurrences(int(symbol), n)
        if got is None:
            return self._whole_words(self._newest(symbol, count, keep, n), 1, symbol)
        pos, whole = got
        if keep is not None and count > keep:
            pos, whole = pos[-keep:], whole[-keep:]
        return pos[whole]

    def term_rows(self, pat: lexicon.TermPattern, counts: dict[int, int] | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, occurrences per row)`` of a term's whole-word occurrences, rows ascending. The answer is kept
        (a term's postings) and extended by the messages appended since, which are searched alone: a match lies
        within one message and its whole-word test looks no further than that message, so appending never changes
        an earlier message's matches. Questions of one conversation share most of their words ("I", "project",
        a name), and an agent asks between appends."""
        n = len(self.content)
        key = pat.key  # the pattern's contents: an entry keeps no pattern (nor its phrases) alive
        layout = self.layout
        with self._pos_lock:
            got = self._term_cache.peek(key)
            if got is not None and (got[0] != layout or got[1] > n):
                got = None
            if got is not None and got[1] == n:
                self._term_cache.touch(key)
                return got[2], got[3]
        since = 0 if got is None else got[1]
        pos = self.term_positions(pat, counts, since=since)
        rows, tf = np.unique(self.rows_of_positions(pos), return_counts=True)
        if got is not None and rows.size:  # the appended messages' rows all follow the kept ones
            rows, tf = np.concatenate([got[2], rows]), np.concatenate([got[3], tf])
        elif got is not None:
            rows, tf = got[2], got[3]
        rows.setflags(write=False)
        tf.setflags(write=False)
        with self._pos_lock:
            self._term_cache.pop(key)
            if layout == self.layout and rows.size <= self._term_cache.budget // 4:
                self._term_cache.put(key, (layout, n, rows, tf))
        return rows, tf

    def _phrase_positions(self, pat: lexicon.TermPattern, counts: dict[int, int], newest: int | None,
                          n: int, since: int = 0) -> np.ndarray:
        """Start positions of a term's multi-token surface forms (``pat.phrases``) within one message, whole words
        unless ``pat.anywhere``, at or after stream position ``since``. Each phrase is anchored on its rarest token;
        the other offsets of every phrase's candidates are then verified together, in two ``access_many`` calls
        instead of one per phrase and offset (a term has dozens of phrases: its inflections and case variants cut
        into tokens)."""
        table, length, _distinct, _at = pat.phrase_table
        if not length.size:
            return np.zeros(0, dtype=np.int64)
        cell = self._phrase_counts(pat, counts)
        anchor = cell.argmin(axis=1)
        live = np.flatnonzero(cell[np.arange(length.size), anchor] > 0)  # a phrase with an absent token: none
        if not live.size:
            return np.zeros(0, dtype=np.int64)
        offs = anchor[live]
        syms = table[live, offs].tolist()
        cnts = cell[live, offs].tolist()
        occ: dict[int, np.ndarray] = {}  # phrases share anchors (" Work" + "ing", " Work" + "ed")
        self._locate_many(syms, cnts, n, words=False)
        for sym, c in zip(syms, cnts):
            if sym not in occ:
                occ[sym] = self._newest(sym, c, newest, n)
        found = [occ[sym] for sym in syms]
        sizes = np.fromiter((f.size for f in found), dtype=np.int64, count=len(found))
        which = np.repeat(live, sizes)
        pos = np.concatenate(found) - np.repeat(offs, sizes)
        inside = (pos >= since) & (pos + length[which] <= n)
        pos, which = pos[inside], which[inside]
        if not pos.size:
            return pos
        # Two reads of the Content DWM: each candidate's first other offset (most candidates fail there), then all
        # remaining offsets of the survivors together. ``todo``: the (candidate, offset) cells still to check.
        offsets = np.arange(table.shape[1])
        todo = (offsets < length[which][:, None]) & (offsets != anchor[which][:, None])
        off = todo.argmax(axis=1)  # every phrase has two tokens or more: one cell at least
        keep = self.content.access_many(pos + off) == table[which, off]
        todo[np.arange(pos.size), off] = False
        pos, which, todo = pos[keep], which[keep], todo[keep]
        cand, off = np.nonzero(todo)
        if cand.size:
            wrong = self.content.access_many(pos[cand] + off) != table[which[cand], off]
            keep = np.ones(pos.size, dtype=bool)
            keep[cand[wrong]] = False
            pos, which = pos[keep], which[keep]
        if pos.size == 0:
            return pos
        last = pos + length[which] - 1
        same = self.rows_of_positions(pos) == self.rows_of_positions(last)  # a phrase lies within one message
        pos, which = pos[same], which[same]
        if pat.anywhere or pos.size == 0:
            return pos
        return pos[self._whole(table[which, 0], pos, length[which])]

    def term_positions(self, pat: lexicon.TermPattern, counts: dict[int, int] | None = None,
                       newest: int | None = None, since: int = 0) -> np.ndarray:
        """Start positions of whole-word occurrences of a term (seed 000 §3.2.2, select-driven).

        ``newest`` bounds the work for very frequent terms: each token pattern contributes at most its newest
        ``newest`` occurrences (recent memories first), so the cost does not grow with the store. ``since`` (a
        message start) keeps only the occurrences at or after it.
        """
        n = len(self.content)
        counts = self.token_counts(pat) if counts is None else counts
        found: list[np.ndarray] = []
        live = [t for t in pat.singles.tolist() if counts[t]]
        self._locate_many(live, [counts[t] for t in live], n, words=not pat.anywhere)
        for t in pat.singles.tolist():
            if counts[t]:
                got = (self._newest(t, counts[t], newest, n) if pat.anywhere
                       else self._newest_words(t, counts[t], newest, n))
                found.append(got[np.searchsorted(got, since):] if since else got)
        got = self._phrase_positions(pat, counts, newest, n, since)
        if got.size:
            found.append(got)
        if not found:
            return np.zeros(0, dtype=np.int64)
        return np.unique(np.concatenate(found))


@lru_cache(maxsize=1)
def _signal_tokens() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per token id, whether its bytes hold an ASCII digit or a small letter before a capital (what a text with a
    masked form holds: :func:`masking.form`), whether they end with a small letter and whether they begin with a
    capital (the two tokens write a small letter before a capital)."""
    table = tokenizer.token_bytes()
    lengths = np.fromiter((len(t) for t in table), dtype=np.int64, count=len(table))
    data = np.frombuffer(b"".join(table), dtype=np.uint8)
    small = (data >= ord("a")) & (data <= ord("z"))
    capital = (data >= ord("A")) & (data <= ord("Z"))
    hit = ((data >= ord("0")) & (data <= ord("9")))
    first = np.cumsum(lengths) - lengths
    full = lengths > 0
    # a small letter before a capital within the token (not across two tokens: the token's first byte has none)
    pair = np.zeros(data.size, dtype=bool)
    pair[1:] = small[:-1] & capital[1:]
    pair[first[full]] = False
    hit |= pair
    out = np.zeros(len(table), dtype=bool)
    out[full] = np.add.reduceat(hit.astype(np.int64), first[full]) > 0
    ends_small = np.zeros(len(table), dtype=bool)
    starts_capital = np.zeros(len(table), dtype=bool)
    ends_small[full] = small[(first + lengths - 1)[full]]
    starts_capital[full] = capital[first[full]]
    return out, ends_small, starts_capital


@lru_cache(maxsize=1)
def _token_table() -> ByteTable:
    return ByteTable(tokenizer.token_bytes())


def _split_text(tokens: np.ndarray, bounds: np.ndarray) -> list[str]:
    """The texts of consecutive messages whose tokens end at ``bounds`` in ``tokens``: one byte gather for all,
    each message's bytes read as UTF-8 on its own."""
    table = _token_table()
    try:
        data = table.join(tokens)
        cuts = np.concatenate([[0], np.cumsum(table.lengths(tokens), dtype=np.int64)])[np.asarray(bounds, np.int64)]
    except OutOfRange as exc:
        raise CorruptData(f"stored token ids do not decode to text: {exc}") from exc
    out = []
    prev = 0
    view = memoryview(data)
    for b in cuts.tolist():
        try:
            out.append(str(view[prev:b], "utf-8"))
        except UnicodeDecodeError as exc:
            raise CorruptData(f"stored token ids do not decode to text: {exc}") from exc
        prev = b
    return out

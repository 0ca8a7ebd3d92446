"""The sealed-chunk codec shared by every store: a chunk is a serialized static wavelet matrix over the token ids
of a contiguous ``seq`` range (checksummed and validated on load by the C core), deflated: bit-packed symbols of
natural text shrink by about a quarter (2.1 -> 1.6 bytes per token)."""

from __future__ import annotations

import zlib

import numpy as np

from hippo.base.errors import CorruptData
from hippo.native import WaveletMatrix, decode_blob


class ChunkCodec:
    """Encodes token ids into a chunk blob and back; ``bits`` is the symbol width of the token ids."""

    def __init__(self, bits: int) -> None:
        self.bits = bits

    def encode(self, tokens: np.ndarray) -> bytes:
        raw = WaveletMatrix(np.ascontiguousarray(tokens, dtype=np.uint32), self.bits).to_bytes()
        return zlib.compress(raw, 6)

    def decode(self, blob: bytes) -> np.ndarray:
        blob = bytes(blob)
        try:
            inflater = zlib.decompressobj()
            # A serialized matrix never compresses 64-fold; a blob that claims to is hostile or damaged.
            raw = inflater.decompress(blob, 64 * len(blob) + 4096)
        except zlib.error as exc:
            raise CorruptData(f"a sealed chunk is not valid deflate data: {exc}") from exc
        if inflater.unconsumed_tail or not inflater.eof:
            raise CorruptData("a sealed chunk is truncated or inflates beyond any valid size")
        return decode_blob(raw)  # the matrix's symbols, checked and unpacked without building it

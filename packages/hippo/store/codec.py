"""The sealed-chunk codec shared by every store: a chunk is a serialized static wavelet matrix over the token ids of a
contiguous ``seq`` range (checksummed and validated on load by the C core), deflated: bit-packed symbols of natural
text shrink by about a quarter (2.1 -> 1.6 bytes per token), repetitive text by hundreds of times.

A serialized matrix (``core_c/serialize.c``) states its own size in its header:

    magic[8] | u32 version | u32 reserved | u32 bits | u32 pad | u64 n | ceil(n * bits / 64) words | u64 checksum

so the decoder inflates the 32-byte header first and then exactly the number of bytes the header promises, never
more. There is no fixed ratio cap: a chunk of one repeated token ("ha" * 50000, 2000 identical log lines, a CSV of
zeros) deflates several hundred times and is as valid as any other. The only ratio that bounds the data is
deflate's own (at most 1032 output bytes per input byte), which lets a forged header be refused before any
allocation.

The encoder decodes what it wrote before handing it to the store, so a chunk the decoder would refuse is never
committed: the seal fails instead (inside its transaction, leaving the tail rows in place).
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

from hippo.base.errors import CorruptData
from hippo.native import WaveletMatrix, decode_blob

WM_MAGIC = b"HIPPOWM\x00"
HEADER_BYTES = 32   # magic, version, reserved, bits, pad, n
TRAILER_BYTES = 8   # checksum
MAX_DEFLATE_RATIO = 1032  # zlib's documented bound: a deflate stream cannot expand more than this per byte
_LEVEL = 6


def serialized_size(n: int, bits: int) -> int:
    """Exact size of a serialized matrix of ``n`` symbols of ``bits`` bits."""
    return HEADER_BYTES + (n * bits + 63) // 64 * 8 + TRAILER_BYTES


def encode(tokens: np.ndarray, bits: int) -> bytes:
    """The chunk blob of ``tokens``; refuses (``CorruptData``) anything :func:`decode` would not give back."""
    tokens = np.ascontiguousarray(tokens, dtype=np.uint32)
    raw = WaveletMatrix(tokens, bits).to_bytes()
    blob = zlib.compress(raw, _LEVEL)
    back = decode(blob)
    if back.size != tokens.size or not np.array_equal(back, tokens):
        raise CorruptData("a chunk does not decode back to the tokens it was built from; nothing was sealed")
    return blob


def declared_size(head: bytes) -> int:
    """Size of the serialized matrix whose first :data:`HEADER_BYTES` bytes are ``head``."""
    if len(head) < HEADER_BYTES or head[:8] != WM_MAGIC:
        raise CorruptData("a sealed chunk does not start with a wavelet-matrix header")
    bits, pad, n = struct.unpack_from("<IIQ", head, 16)
    if not 1 <= bits <= 32 or pad != 0 or n >= 1 << 40:
        raise CorruptData(f"a sealed chunk declares an impossible shape ({n} symbols of {bits} bits)")
    return serialized_size(n, bits)


def inflate(blob: bytes) -> bytes:
    """The serialized matrix inside a chunk blob, inflated to exactly the size its header declares."""
    blob = bytes(blob)
    inflater = zlib.decompressobj()
    try:
        head = inflater.decompress(blob, HEADER_BYTES)
        size = declared_size(head)
        if size > MAX_DEFLATE_RATIO * len(blob) + HEADER_BYTES:
            raise CorruptData(f"a sealed chunk of {len(blob)} bytes declares {size} bytes, more than deflate "
                              "can hold")
        rest = inflater.decompress(inflater.unconsumed_tail, size - HEADER_BYTES)
        if not inflater.eof:  # the stream may end with the checksum still buffered in the inflater
            rest += inflater.decompress(inflater.unconsumed_tail, size - HEADER_BYTES - len(rest) + 1)
    except zlib.error as exc:
        raise CorruptData(f"a sealed chunk is not valid deflate data: {exc}") from exc
    raw = head + rest
    if len(raw) != size or not inflater.eof or inflater.unconsumed_tail or inflater.unused_data:
        raise CorruptData(f"a sealed chunk inflates to {len(raw)} bytes{'' if inflater.eof else ' or more'}, its "
                          f"header declares {size}")
    return raw


def decode(blob: bytes) -> np.ndarray:
    """Token ids of a chunk blob; ``CorruptData`` on any damage (deflate, size, checksum, structure)."""
    return decode_blob(inflate(blob))  # the matrix's symbols, checked and unpacked without building it


class ChunkCodec:
    """Encodes token ids into a chunk blob and back; ``bits`` is the symbol width of the token ids."""

    def __init__(self, bits: int) -> None:
        self.bits = bits

    def encode(self, tokens: np.ndarray) -> bytes:
        return encode(tokens, self.bits)

    def decode(self, blob: bytes) -> np.ndarray:
        return decode(blob)

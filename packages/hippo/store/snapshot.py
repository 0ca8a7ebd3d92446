"""A small checksummed container for derived state: a JSON header plus raw numpy arrays (never pickle).

Layout: ``MAGIC | u32 version | u32 header length | header JSON | zlib(array bytes...) | u32 CRC32`` where the CRC
covers everything between the magic and itself, and the header lists every array's dtype, shape, offset and
length in the decompressed section and that section's size. Each array is byte-shuffled (all first bytes, then
all second bytes...) before compression: columns of times, counters and constants then shrink several-fold.
Loading validates all of it; a bad blob raises :class:`hippo.base.errors.CorruptData` and the caller rebuilds the
state from the messages.
"""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any

import numpy as np

from hippo.base.errors import CorruptData

MAGIC = b"HIPPO-UNITS\x00"
VERSION = 2
_MAX_RAW = 1 << 34  # refuse to inflate a section declared larger than this
_ALLOWED = {"<i8", "<i4", "<i2", "|i1", "<u8", "<u4", "|u1", "<f8", "<f4", "|b1"}


def dump(meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> bytes:
    entries = []
    blobs = []
    offset = 0
    for name, arr in arrays.items():
        a = np.ascontiguousarray(arr)
        if a.dtype.byteorder == ">":
            a = a.astype(a.dtype.newbyteorder("<"))
        raw = a.tobytes()
        if a.dtype.itemsize > 1 and raw:
            raw = np.frombuffer(raw, dtype=np.uint8).reshape(-1, a.dtype.itemsize).T.tobytes()
        entries.append({"name": name, "dtype": a.dtype.str, "shape": list(a.shape), "offset": offset,
                        "nbytes": len(raw)})
        blobs.append(raw)
        offset += len(raw)
    header = json.dumps({"meta": meta, "arrays": entries, "raw_size": offset}, ensure_ascii=False,
                        separators=(",", ":")).encode()
    body = struct.pack("<II", VERSION, len(header)) + header + zlib.compress(b"".join(blobs), 6)
    return MAGIC + body + struct.pack("<I", zlib.crc32(body) & 0xFFFFFFFF)


def load(blob: bytes) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    blob = bytes(blob)
    if len(blob) < len(MAGIC) + 12 or not blob.startswith(MAGIC):
        raise CorruptData("units snapshot: bad magic or truncated")
    body, crc = blob[len(MAGIC):-4], struct.unpack("<I", blob[-4:])[0]
    if zlib.crc32(body) & 0xFFFFFFFF != crc:
        raise CorruptData("units snapshot: checksum mismatch")
    version, hlen = struct.unpack("<II", body[:8])
    if version != VERSION:
        raise CorruptData(f"units snapshot: version {version} is not supported")
    if 8 + hlen > len(body):
        raise CorruptData("units snapshot: header length out of range")
    try:
        header = json.loads(body[8 : 8 + hlen].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CorruptData(f"units snapshot: bad header: {exc}") from exc
    if not isinstance(header, dict) or not isinstance(header.get("arrays"), list):
        raise CorruptData("units snapshot: bad header")
    raw_size = header.get("raw_size")
    if not isinstance(raw_size, int) or not 0 <= raw_size <= _MAX_RAW:
        raise CorruptData("units snapshot: bad section size")
    try:
        inflater = zlib.decompressobj()
        data = inflater.decompress(body[8 + hlen :], raw_size)
    except zlib.error as exc:
        raise CorruptData(f"units snapshot: bad compressed section: {exc}") from exc
    if len(data) != raw_size or inflater.unconsumed_tail:
        raise CorruptData("units snapshot: compressed section does not match its declared size")
    arrays: dict[str, np.ndarray] = {}
    for e in header["arrays"]:
        try:
            name, dtype, shape, off, nbytes = e["name"], e["dtype"], e["shape"], e["offset"], e["nbytes"]
        except (KeyError, TypeError) as exc:
            raise CorruptData("units snapshot: bad array entry") from exc
        if dtype not in _ALLOWED or not isinstance(shape, list) or not all(isinstance(x, int) and x >= 0
                                                                           for x in shape):
            raise CorruptData(f"units snapshot: array {name!r} has a bad dtype or shape")
        if not (isinstance(off, int) and isinstance(nbytes, int) and 0 <= off and off + nbytes <= len(data)):
            raise CorruptData(f"units snapshot: array {name!r} lies outside the blob")
        dt = np.dtype(dtype)
        if int(np.prod(shape, dtype=np.int64)) * dt.itemsize != nbytes:
            raise CorruptData(f"units snapshot: array {name!r} length does not match its shape")
        chunk = np.frombuffer(data, dtype=np.uint8, count=nbytes, offset=off)
        if dt.itemsize > 1 and nbytes:
            chunk = chunk.reshape(dt.itemsize, -1).T
        arrays[name] = np.ascontiguousarray(chunk).view(dt).reshape(shape).copy()
    meta = header.get("meta")
    if not isinstance(meta, dict):
        raise CorruptData("units snapshot: bad meta")
    return meta, arrays

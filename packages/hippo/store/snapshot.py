"""A small checksummed container for derived state: a JSON header plus raw numpy arrays (never pickle).

Layout: ``MAGIC | u32 version | u32 header length | header JSON | zlib(array bytes...) | u32 CRC32`` where the CRC
covers everything between the magic and itself, and the header lists every array's dtype, shape, offset and
length in the decompressed section and that section's size (an array of one repeated value, marked ``const``, is
stored as that value once; a 64-bit integer array in arithmetic progression, marked ``ramp``, as its first two
values). Each array is byte-shuffled (all first bytes, then
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


def _is_ramp(flat: np.ndarray) -> bool:
    """``flat[i] == flat[0] + i * step`` for all i (64-bit integers, as the loader recomputes them)."""
    with np.errstate(over="ignore"):  # differences wrap as the loader's arithmetic does
        step = flat[1] - flat[0]
        return bool((np.diff(flat) == step).all())


def dump(meta: dict[str, Any], arrays: dict[str, np.ndarray], level: int = 6) -> bytes:
    """The container of ``meta`` (JSON) and ``arrays``; ``level`` is the zlib level (1 writes large snapshots
    several times faster at a slightly larger size)."""
    entries = []
    blobs = []
    offset = 0
    for name, arr in arrays.items():
        a = np.ascontiguousarray(arr)
        if a.dtype.byteorder == ">":
            a = a.astype(a.dtype.newbyteorder("<"))
        entry = {"name": name, "dtype": a.dtype.str, "shape": list(a.shape), "offset": offset}
        flat = a.reshape(-1)
        if flat.size > 1 and (flat.view(np.uint8).reshape(flat.size, -1) == flat[:1].view(np.uint8)).all():
            a, entry["const"] = flat[:1], True  # one value repeated (a column of defaults): stored once
        elif flat.size > 2 and a.dtype.kind in "iu" and a.dtype.itemsize == 8 and _is_ramp(flat):
            a, entry["ramp"] = flat[:2].copy(), True  # first value and step (ids, seqs, slots): stored as two
        raw = a.tobytes()
        if a.dtype.itemsize > 1 and raw:
            raw = np.frombuffer(raw, dtype=np.uint8).reshape(-1, a.dtype.itemsize).T.tobytes()
        entry["nbytes"] = len(raw)
        entries.append(entry)
        blobs.append(raw)
        offset += len(raw)
    header = json.dumps({"meta": meta, "arrays": entries, "raw_size": offset}, ensure_ascii=False,
                        separators=(",", ":")).encode()
    body = struct.pack("<II", VERSION, len(header)) + header + zlib.compress(b"".join(blobs), level)
    return MAGIC + body + struct.pack("<I", zlib.crc32(body) & 0xFFFFFFFF)


def head(blob: bytes) -> bytes:
    """The bytes of a blob up to the end of its JSON header: what tells one saved blob from another when the header
    holds an id of the save (a few hundred bytes where the blob may be megabytes); the whole blob when it is too
    damaged to say where its header ends."""
    blob = bytes(blob)
    start = len(MAGIC) + 8
    if len(blob) >= start + 4 and blob.startswith(MAGIC):
        end = start + struct.unpack("<I", blob[len(MAGIC) + 4: start])[0]
        if end <= len(blob) - 4:
            return blob[:end]
    return blob


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
        count = int(np.prod(shape, dtype=np.int64))
        const, ramp = e.get("const") is True, e.get("ramp") is True
        stored = 1 if const else 2 if ramp else count
        if stored * dt.itemsize != nbytes or (const and count < 1) or (ramp and (count < 2 or dt.kind not in "iu")):
            raise CorruptData(f"units snapshot: array {name!r} length does not match its shape")
        chunk = np.frombuffer(data, dtype=np.uint8, count=nbytes, offset=off)
        if dt.itemsize > 1 and nbytes:
            chunk = chunk.reshape(dt.itemsize, -1).T
        value = np.ascontiguousarray(chunk).view(dt)
        if const:
            arrays[name] = np.full(shape, value[0], dtype=dt)
        elif ramp:
            with np.errstate(over="ignore"):  # wraps like the values did
                step = (value[1] - value[0]).astype(dt)
                arrays[name] = (value[0] + np.arange(count, dtype=dt) * step).astype(dt).reshape(shape)
        else:
            arrays[name] = value.reshape(shape).copy()
    meta = header.get("meta")
    if not isinstance(meta, dict):
        raise CorruptData("units snapshot: bad meta")
    return meta, arrays


class Strings:
    """Builds a table of distinct strings for a snapshot: ``strings(value)`` is the value's index (None: -1);
    :meth:`arrays` stores the table as one UTF-8 blob and its offsets (``<prefix>.blob``, ``<prefix>.ptr``)."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}

    def __call__(self, value: str | None) -> int:
        if value is None:
            return -1
        k = self.index.get(value)
        if k is None:
            k = self.index[value] = len(self.index)
        return k

    def arrays(self, prefix: str = "strings") -> dict[str, np.ndarray]:
        data = [v.encode("utf-8", "surrogatepass") for v in self.index]
        ptr = np.zeros(len(data) + 1, dtype=np.int64)
        np.cumsum([len(b) for b in data], out=ptr[1:])
        return {f"{prefix}.blob": np.frombuffer(b"".join(data), dtype=np.uint8), f"{prefix}.ptr": ptr}


class StringTable:
    """Reads a table written by :class:`Strings`; offsets are checked on construction, so lookups cannot fail
    (an index out of range raises ``ValueError`` when ``check`` is used on the referencing column)."""

    def __init__(self, arrays: dict[str, np.ndarray], prefix: str = "strings") -> None:
        self.blob = bytes(arrays[f"{prefix}.blob"])
        ptr = np.asarray(arrays[f"{prefix}.ptr"], dtype=np.int64)
        if ptr.ndim != 1 or ptr.size < 1 or ptr[0] != 0 or ptr[-1] != len(self.blob) or (np.diff(ptr) < 0).any():
            raise ValueError(f"snapshot: the {prefix} table offsets are inconsistent")
        self.ptr = ptr.tolist()
        self.n = ptr.size - 1

    def check(self, refs: np.ndarray, *, optional: bool = False) -> None:
        """Raise ``ValueError`` unless every index in ``refs`` is in the table (or -1 when ``optional``)."""
        refs = np.asarray(refs)
        if refs.size and (refs.max() >= self.n or refs.min() < (-1 if optional else 0)):
            raise ValueError("snapshot: a string index is out of range")

    def __call__(self, k: int) -> str | None:
        if k < 0:
            return None
        raw = self.blob[self.ptr[k]: self.ptr[k + 1]]
        try:
            return raw.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:  # only a crafted blob (the checksum held) gets here: never fail a lazy read
            return raw.decode("utf-8", "replace")

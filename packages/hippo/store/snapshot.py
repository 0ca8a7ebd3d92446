"""A small checksummed container for derived state: a JSON header plus raw numpy arrays (never pickle).

Layout: ``MAGIC | u32 version | u32 header length | header JSON | zlib(array bytes...) | u32 CRC32`` where the CRC
covers everything between the magic and itself, and the header lists every array's dtype, shape, offset and
length in the decompressed section and that section's size (an array of one repeated value, marked ``const``, is
stored as that value once; a 64-bit integer array in arithmetic progression, marked ``ramp``, as its first two
values). Each array is byte-shuffled (all first bytes, then
all second bytes...) before compression: columns of times, counters and constants then shrink several-fold.
The deflated section is one zlib stream made of pieces deflated each alone (see :func:`dump`), so a rewrite copies the
pieces whose bytes did not change; a blob deflated as a single stream (as written before) reads the same.
:func:`dump_into` writes a blob to a file as it goes (the arrays read, shuffled, summed and deflated a slice at a time;
the header comes first, since the decompressed offsets are known before anything is deflated): a :class:`Blob` holds
it in a temporary file, and the stores write that to their table a chunk at a time, so saving a snapshot never holds
a copy of it, nor of its arrays, in memory. The bytes are those :func:`dump` returns.
Loading validates all of it; a bad blob raises :class:`hippo.base.errors.CorruptData` and the caller rebuilds the
state from the messages.
"""

from __future__ import annotations

import bisect
import io
import json
import struct
import tempfile
import zlib
from typing import Any, BinaryIO, Iterator

import numpy as np

from hippo.base.errors import CorruptData, StoreError

MAGIC = b"HIPPO-UNITS\x00"
VERSION = 2
_MAX_RAW = 1 << 34  # refuse to inflate a section declared larger than this
_ALLOWED = {"<i8", "<i4", "<i2", "|i1", "<u8", "<u4", "|u1", "<f8", "<f4", "|b1"}


#: Bytes of a blob a store writes (or the encoder handles) at a time: a save holds at most a few of these beyond the
#: arrays it saves (:func:`dump_into`, :class:`Blob`).
CHUNK = 1 << 20


def _same(flat: np.ndarray) -> bool:
    """Whether every element of ``flat`` (1-D, contiguous) has the bytes of the first, read a block at a time."""
    first = flat[:1].view(np.uint8)
    rows = flat.view(np.uint8).reshape(flat.size, -1)
    step = max(1, CHUNK // flat.dtype.itemsize)
    return all((rows[s: s + step] == first).all() for s in range(0, flat.size, step))


def _is_ramp(flat: np.ndarray) -> bool:
    """``flat[i] == flat[0] + i * step`` for all i (64-bit integers, as the loader recomputes them)."""
    with np.errstate(over="ignore"):  # differences wrap as the loader's arithmetic does
        step = flat[1] - flat[0]
        block = CHUNK // 8
        return all((np.diff(flat[s: s + block + 1]) == step).all() for s in range(0, flat.size - 1, block))


#: Content-defined cuts of the compressed section (see :func:`dump`): an array of at least ``2 * _CUT_MIN`` elements is
#: cut where a hash of the few elements before a position (eight bytes of them) has its low bits zero, about every
#: ``_CUT_AVG`` elements, never closer than ``_CUT_MIN`` nor further than ``_CUT_MAX``; each of its byte planes is cut
#: at the same elements.
_CUT_AVG = 1 << 15
_CUT_MIN = 1 << 13
_CUT_MAX = 1 << 17
_MIX = np.uint64(0x9E3779B97F4A7C15)


def _cuts(flat: np.ndarray) -> list[int] | None:
    """Element positions (0 < c < n, ascending) where the byte planes of ``flat`` are cut: chosen by the elements
    before them (eight bytes of them), so removing or inserting elements moves the cuts after them with the elements
    and leaves the pieces between them as they were. None when ``flat`` holds too few values to say where (flags,
    defaults)."""
    n = flat.size
    if n < 2 * _CUT_MIN:
        return []
    size = flat.dtype.itemsize
    w = max(1, 8 // size)  # elements in a window of eight bytes
    buf = flat.view(np.uint8)  # the values' bytes, read in place a block of words at a time
    found = []
    mask = np.uint64(_CUT_AVG - 1)
    block = CHUNK // 8
    with np.errstate(over="ignore"):
        for j in range(w):  # the windows starting at elements j, j + w, j + 2w...: one word each, read in place
            count = (n - j) // w
            for i in range(0, count, block):
                key = np.frombuffer(buf, dtype="<u8", count=min(block, count - i), offset=(j + i * w) * size) * _MIX
                found.append(np.flatnonzero((key >> np.uint64(40)) & mask == 0) * w + (j + (i + 1) * w))
    cand = np.sort(np.concatenate(found)).tolist()
    if len(cand) > 4 * n // _CUT_AVG + 16:  # a column of few values: its content says nothing of where to cut
        return None
    out: list[int] = []
    last = 0
    for c in cand + [n]:
        while c - last > _CUT_MAX:
            last += _CUT_MAX
            out.append(last)
        if c - last >= _CUT_MIN and n - c >= _CUT_MIN:
            out.append(c)
            last = c
    return [c for c in out if c < n]


def _adler_combine(first: int, second: int, length: int) -> int:
    """The Adler-32 of two byte strings joined, from the sums of each and the length of the second (zlib's
    ``adler32_combine``)."""
    base = 65521
    rem = length % base
    s1 = first & 0xFFFF
    s2 = (rem * s1) % base
    s1 = (s1 + (second & 0xFFFF) + base - 1) % base
    s2 = (s2 + (first >> 16) + (second >> 16) + base - rem) % base
    return s1 | (s2 << 16)


class Pieces:
    """Where each piece of a blob written by :func:`dump` lies in it, by a digest of the raw bytes it deflates: the
    next dump of the same state copies a piece whose raw bytes did not change from that blob instead of deflating
    them again (see ``reuse`` of :func:`dump`)."""

    __slots__ = ("size", "crc", "where")

    def __init__(self, size: int, crc: int, where: dict[tuple[int, int, int], tuple[int, int]]) -> None:
        self.size, self.crc, self.where = size, crc, where

    def usable(self, blob: bytes | Blob | None) -> bool:
        """Whether ``blob`` is the blob these pieces were recorded for."""
        if blob is None or len(blob) != self.size:
            return False
        tail = blob.read(self.size - 4, self.size) if isinstance(blob, Blob) else blob[-4:]
        return tail == struct.pack("<I", self.crc)


class Blob:
    """A blob written by :func:`dump_into` to a temporary file (held in memory up to a :data:`CHUNK`, an unnamed file
    of the system's temporary directory beyond): a store writes it a :data:`CHUNK` at a time (:meth:`chunks`), so a
    save holds no copy of a large snapshot whole. ``len()`` is its size; :meth:`close` (or the end of the process)
    removes the file."""

    __slots__ = ("file", "size")

    def __init__(self) -> None:
        self.file = tempfile.SpooledTemporaryFile(max_size=CHUNK, prefix="hippo-snapshot-")
        self.size = 0

    @classmethod
    def dump(cls, meta: dict[str, Any], arrays: dict[str, np.ndarray], level: int = 6,
             reuse: tuple[Pieces, bytes | Blob] | None = None, pieces: list[Pieces] | None = None) -> Blob:
        """:func:`dump_into` a new blob."""
        try:
            blob = cls()
        except OSError as exc:
            raise StoreError(f"writing a snapshot to a temporary file: {exc}") from exc
        try:
            blob.size = dump_into(blob.file, meta, arrays, level, reuse, pieces)
        except BaseException as exc:
            blob.close()
            if isinstance(exc, OSError) and not isinstance(exc, StoreError):  # a full disk, a quota
                raise StoreError(f"writing a snapshot to a temporary file: {exc}") from exc
            raise
        return blob

    @classmethod
    def of(cls, data: bytes) -> Blob:
        """A blob of ``data``, written to its file."""
        blob = cls()
        try:
            blob.write(data)
        except BaseException:
            blob.close()
            raise
        return blob

    def write(self, data: bytes) -> None:
        """Append ``data`` (a store copying a blob into this one a chunk at a time)."""
        try:
            self.file.seek(self.size)
            self.file.write(data)
        except OSError as exc:
            raise StoreError(f"writing a snapshot to a temporary file: {exc}") from exc
        self.size += len(data)

    def __len__(self) -> int:
        return self.size

    def read(self, lo: int, hi: int) -> bytes:
        try:
            self.file.seek(lo)
            data = self.file.read(hi - lo)
        except OSError as exc:
            raise StoreError(f"reading a snapshot back from its temporary file: {exc}") from exc
        if len(data) != hi - lo:
            raise StoreError("reading a snapshot back from its temporary file: the file is shorter than written")
        return data

    def chunks(self, size: int | None = None) -> Iterator[bytes]:
        """The blob's bytes from the start, ``size`` (:data:`CHUNK`) at a time (each call starts again from the
        first)."""
        size = size or CHUNK
        for lo in range(0, self.size, size):
            yield self.read(lo, min(lo + size, self.size))

    def __bytes__(self) -> bytes:
        return self.read(0, self.size)

    def close(self) -> None:
        self.file.close()


def _read(blob: bytes | Blob, lo: int, hi: int) -> Iterator[bytes]:
    """Bytes ``lo..hi`` of a blob (in memory or in a file), a :data:`CHUNK` at a time."""
    for at in range(lo, hi, CHUNK):
        end = min(hi, at + CHUNK)
        yield blob.read(at, end) if isinstance(blob, Blob) else blob[at:end]


def _shuffled(flats: list[np.ndarray], starts: list[int], lo: int, hi: int) -> Iterator[bytes]:
    """Bytes ``lo..hi`` of the decompressed section (each array byte-shuffled, the arrays one after the other), read
    from the arrays a slice of at most :data:`CHUNK` bytes at a time."""
    k = bisect.bisect_right(starts, lo) - 1
    pos = lo
    while pos < hi:
        while starts[k + 1] <= pos:
            k += 1
        a = flats[k]
        n, size = a.size, a.dtype.itemsize
        rows = a.view(np.uint8).reshape(n, size)
        plane, first = divmod(pos - starts[k], n)
        end = min(hi, starts[k] + (plane + 1) * n, pos + CHUNK)  # within one byte plane
        yield rows[first: first + end - pos, plane].tobytes()
        pos = end


def dump(meta: dict[str, Any], arrays: dict[str, np.ndarray], level: int = 6,
         reuse: tuple[Pieces, bytes | Blob] | None = None, pieces: list[Pieces] | None = None) -> bytes:
    """The container of ``meta`` (JSON) and ``arrays`` in memory (:func:`dump_into` writes it to a file)."""
    out = io.BytesIO()
    dump_into(out, meta, arrays, level, reuse, pieces)
    return out.getvalue()


def dump_into(out: BinaryIO, meta: dict[str, Any], arrays: dict[str, np.ndarray], level: int = 6,
              reuse: tuple[Pieces, bytes | Blob] | None = None, pieces: list[Pieces] | None = None) -> int:
    """Write the container of ``meta`` (JSON) and ``arrays`` to ``out`` (a binary file, readable and seekable, at
    its start); returns its size. ``level`` is the zlib level (1 writes large snapshots several times faster at a
    slightly larger size).

    The compressed section is one zlib stream, deflated in pieces (cut where :func:`_cuts` says, and at the byte
    planes of the arrays cut), each piece alone and ending on a byte boundary: ``reuse`` (the :class:`Pieces` of an
    earlier blob of the same state and that blob) lets the pieces whose bytes it holds be copied from it, so
    rewriting a large snapshot after a few messages were deleted or appended deflates only what changed around them.
    The :class:`Pieces` of the new blob is appended to ``pieces`` when given.

    The arrays are read, shuffled, summed and deflated a slice of :data:`CHUNK` bytes at a time, and what is
    deflated goes to ``out`` at once: beyond the arrays themselves, a dump holds a few slices, never a copy of the
    arrays or of the blob."""
    entries = []
    stored = []
    for name, arr in arrays.items():
        a = np.ascontiguousarray(arr)
        if a.dtype.byteorder == ">":
            a = a.astype(a.dtype.newbyteorder("<"))
        entry = {"name": name, "dtype": a.dtype.str, "shape": list(a.shape)}
        flat = a.reshape(-1)
        if flat.size > 1 and _same(flat):
            flat, entry["const"] = flat[:1], True  # one value repeated (a column of defaults): stored once
        elif flat.size > 2 and a.dtype.kind in "iu" and a.dtype.itemsize == 8 and _is_ramp(flat):
            flat, entry["ramp"] = flat[:2].copy(), True  # first value and step (ids, seqs, slots): stored as two
        entries.append(entry)
        stored.append(flat)
    # the columns of one table (a value per message, per unit) have one length and lose the same rows: the cuts of
    # the first of them whose values say where to cut serve all of them, flags and defaults included
    by_length: dict[int, list[int]] = {}
    for flat in sorted(stored, key=lambda f: -f.dtype.itemsize):
        if flat.size >= 2 * _CUT_MIN and flat.size not in by_length:
            at = _cuts(flat)
            if at is not None:
                by_length[flat.size] = at
    cuts: list[int] = []
    offset = 0
    for entry, a in zip(entries, stored):
        entry["offset"] = offset
        at = by_length.get(a.size)
        if at:
            n = a.size
            for plane in range(a.dtype.itemsize):
                base = offset + plane * n
                cuts.append(base)
                cuts.extend(base + c for c in at)
        entry["nbytes"] = a.nbytes
        offset += a.nbytes
        if at:
            cuts.append(offset)
    header = json.dumps({"meta": meta, "arrays": entries, "raw_size": offset}, ensure_ascii=False,
                        separators=(",", ":")).encode()
    old, old_blob = reuse if reuse is not None and reuse[0].usable(reuse[1]) else (None, b"")
    bounds = sorted({c for c in cuts if 0 < c < offset} | {0, offset}) if offset else [0]
    starts = np.cumsum([0] + [a.nbytes for a in stored]).tolist()
    crc = 0
    at_byte = 0

    def put(data: bytes) -> None:
        nonlocal crc, at_byte
        out.write(data)
        crc = zlib.crc32(data, crc)
        at_byte += len(data)

    out.write(MAGIC)
    at_byte = len(MAGIC)
    put(struct.pack("<II", VERSION, len(header)) + header + b"\x78\x01")  # a zlib header (deflate, 32K window)
    where: dict[tuple[int, int, int], tuple[int, int]] = {}
    adler = 1
    for lo, hi in zip(bounds, bounds[1:]):
        # a piece is known by its length and two independent sums of it: a piece taken for another by mistake
        # would still fail the stream's own sum when read, never go unnoticed
        c32, sums = 0, 1
        for part in _shuffled(stored, starts, lo, hi):
            c32, sums = zlib.crc32(part, c32), zlib.adler32(part, sums)
        key = (hi - lo, c32, sums)
        adler = _adler_combine(adler, sums, hi - lo)
        mine = where.get(key)
        span = old.where.get(key) if old is not None and mine is None else None
        start = at_byte
        if mine is not None:  # the same bytes earlier in this blob (planes of zeros)
            for lo_z in range(mine[0], mine[1], CHUNK):
                out.seek(lo_z)
                z = out.read(min(CHUNK, mine[1] - lo_z))
                out.seek(at_byte)
                put(z)
        elif span is not None:  # unchanged since the earlier blob
            for z in _read(old_blob, span[0], span[1]):
                put(z)
        else:
            c = zlib.compressobj(level, zlib.DEFLATED, -15)
            for part in _shuffled(stored, starts, lo, hi):
                put(c.compress(part))
            put(c.flush(zlib.Z_SYNC_FLUSH))  # ends on a byte boundary, the stream not closed
        if key not in where:
            where[key] = (start, at_byte)
    put(b"\x03\x00" + struct.pack(">I", adler & 0xFFFFFFFF))  # the last (empty) block, the stream's sum
    crc &= 0xFFFFFFFF
    out.write(struct.pack("<I", crc))
    size = at_byte + 4
    if pieces is not None:
        pieces.append(Pieces(size, crc, where))
    return size


def head(blob: bytes | Blob) -> bytes:
    """The bytes of a blob up to the end of its JSON header: what tells one saved blob from another when the header
    holds an id of the save (a few hundred bytes where the blob may be megabytes); the whole blob when it is too
    damaged to say where its header ends."""
    if isinstance(blob, Blob):  # written by dump_into: its header is whole
        return blob.read(0, len(MAGIC) + 8 + struct.unpack("<I", blob.read(len(MAGIC) + 4, len(MAGIC) + 8))[0])
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

"""Python face of hippo's C core: the only module that calls into ``lib``.

Classes
    :class:`WaveletMatrix`         static wavelet matrix over ``bits``-wide symbols (1..32)
    :class:`DynamicWaveletMatrix`  append-only wavelet matrix; every query sees every append at once
    :class:`BinaryIndex`           packed binary codes (64..1024 bits) with exact Hamming top-k / radius
Functions
    :func:`ri_signatures`          random-indexing token signatures (seed paper §3.3)
    :func:`read_bandwidth`         a plain C read loop, for measuring single-core memory bandwidth
    :func:`active_kernel`, :func:`set_kernel`, :func:`available_kernels`, :func:`force_portable`

Conventions
    * Positions are 0-based and ranges half-open ``[start, end)``; negative positions are out of
      range (no Python-style wrap-around). ``rank(symbol, i)`` counts occurrences in ``[0, i)``;
      ``select(symbol, k)`` takes ``k >= 1``.
    * Arrays: C-contiguous numpy arrays of the native dtype (``uint32`` symbols, ``int64`` positions,
      ``uint8`` codes) pass to C without a copy. Arrays of another *integer* dtype, and lists or
      tuples of ints, are converted (after a range check); anything else (floats, bools, objects,
      wrong number of dimensions, non-contiguous views) raises :class:`~hippo.base.errors.InvalidInput`
      naming the argument.
    * Every failure raises a :class:`~hippo.base.errors.HippoError` subclass naming the argument, and leaves
      the structure exactly as it was.
    * Threads: C calls release the GIL. Each dynamic structure carries a readers-writer lock: queries
      run concurrently, ``append`` / ``extend`` / ``add`` are exclusive.
"""

from __future__ import annotations

import contextlib
import operator
import threading
from collections.abc import Iterator, Sequence
from typing import Any, Union

import numpy as np

from hippo._hippo_c import ffi, lib
from hippo.base.errors import CorruptData, HippoError, InvalidInput, NativeError, OutOfMemory, OutOfRange
from hippo.base.locks import RWLock

__all__ = [
    "WaveletMatrix",
    "DynamicWaveletMatrix",
    "BinaryIndex",
    "ByteTable",
    "ri_signatures",
    "hamming_cross",
    "read_bandwidth",
    "active_kernel",
    "available_kernels",
    "set_kernel",
    "force_portable",
]

ArrayLike = Union[np.ndarray, Sequence[int]]
BytesLike = Union[bytes, bytearray, memoryview]

_METHODS = {"auto": lib.HIPPO_HB_AUTO, "branch": lib.HIPPO_HB_BRANCH, "table": lib.HIPPO_HB_SCAN_TABLE,
            "decode": lib.HIPPO_HB_SCAN_DECODE}
_KERNELS = {"portable": lib.HIPPO_KERNEL_PORTABLE, "avx2": lib.HIPPO_KERNEL_AVX2,
            "avx512_vpopcntdq": lib.HIPPO_KERNEL_AVX512}
_MAX_OUT = 1 << 31  # largest result array (elements) a single call may allocate


# ---------------------------------------------------------------------------------------------- errors


def _error(status: int, what: str) -> HippoError:
    """The one mapping from C status codes to the exception hierarchy."""
    reason = ffi.string(lib.hippo_strerror(status)).decode()
    msg = f"{what}: {reason}"
    if status == lib.HIPPO_ERANGE:
        return OutOfRange(msg)
    if status == lib.HIPPO_EINVAL or status == lib.HIPPO_EEMPTY:
        return InvalidInput(msg)
    if status == lib.HIPPO_ENOMEM:
        return OutOfMemory(msg)
    if status in (lib.HIPPO_ECORRUPT, lib.HIPPO_EVERSION):
        return CorruptData(msg)
    return NativeError(f"{msg} (status {status})")


def _check(status: int, what: str) -> None:
    if status != lib.HIPPO_OK:
        raise _error(status, what)


# ------------------------------------------------------------------------------------------ arguments


def _int(value: Any, name: str) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise InvalidInput(f"{name}: expected an integer, got bool")
    try:
        return operator.index(value)
    except TypeError:
        raise InvalidInput(f"{name}: expected an integer, got {type(value).__name__}") from None


def _symbol(value: Any, bits: int, name: str = "symbol") -> int:
    v = value if type(value) is int else _int(value, name)
    if v < 0 or v >> bits:
        raise InvalidInput(f"{name}: {v} does not fit in {bits} bits")
    return v


def _position(value: Any, n: int, name: str, *, inclusive: bool) -> int:
    """A position in [0, n) (or [0, n] when inclusive)."""
    v = _int(value, name)
    hi = n if inclusive else n - 1
    if v < 0 or v > hi:
        bound = f"[0, {n}]" if inclusive else f"[0, {n})"
        raise OutOfRange(f"{name}: {v} is outside {bound}")
    return v


def _nonneg(value: Any, name: str) -> int:
    """A non-negative int below 2**63 (the upper bound is checked by the C call)."""
    v = value if type(value) is int else _int(value, name)
    if v < 0 or v >= 1 << 63:
        raise OutOfRange(f"{name}: {v} is out of range")
    return v


_tls = threading.local()


def _out(kind: str) -> Any:
    """A per-thread scratch out-parameter (``u32`` or ``u64``): cheaper than ``ffi.new`` per call."""
    try:
        return getattr(_tls, kind)
    except AttributeError:
        buf = ffi.new("uint32_t *" if kind == "u32" else "uint64_t *")
        setattr(_tls, kind, buf)
        return buf


def _range(start: Any, end: Any, n: int) -> tuple[int, int]:
    s = _position(start, n, "start", inclusive=True)
    e = n if end is None else _position(end, n, "end", inclusive=True)
    if s > e:
        raise OutOfRange(f"start: {s} is greater than end {e}")
    return s, e


def _int_array(value: Any, name: str, dtype: type, *, ndim: int = 1) -> np.ndarray:
    """A C-contiguous integer array of `dtype`: zero-copy when it already is one, converted from other
    integer dtypes and from sequences, rejected otherwise."""
    if isinstance(value, np.ndarray):
        arr = value
        if arr.ndim != ndim:
            raise InvalidInput(f"{name}: expected a {ndim}-D array, got shape {arr.shape}")
        if not arr.flags.c_contiguous:
            raise InvalidInput(f"{name}: array must be C-contiguous (use np.ascontiguousarray)")
        if arr.dtype == dtype:
            return arr
        if arr.dtype.kind not in "iu":
            raise InvalidInput(f"{name}: expected an integer array ({np.dtype(dtype).name}), got dtype {arr.dtype}")
    else:
        if isinstance(value, (str, bytes, bytearray, memoryview)) or not hasattr(value, "__len__"):
            raise InvalidInput(f"{name}: expected an array or a sequence of ints, got {type(value).__name__}")
        try:
            arr = np.asarray(value)
        except (ValueError, TypeError) as exc:
            raise InvalidInput(f"{name}: cannot read as an integer array ({exc})") from None
        if arr.size == 0:
            return np.zeros((0,) * ndim, dtype=dtype)
        if arr.ndim != ndim:
            raise InvalidInput(f"{name}: expected a {ndim}-D sequence, got shape {arr.shape}")
        if arr.dtype.kind not in "iu":
            raise InvalidInput(f"{name}: expected integers, got {arr.dtype}")
    info = np.iinfo(dtype)
    if arr.size and (int(arr.min()) < info.min or int(arr.max()) > info.max):
        raise (OutOfRange if dtype == np.int64 else InvalidInput)(
            f"{name}: values must lie in [{info.min}, {info.max}] for {np.dtype(dtype).name}")
    return np.ascontiguousarray(arr, dtype=dtype)


def _symbols(value: Any, bits: int, name: str = "symbols") -> np.ndarray:
    arr = _int_array(value, name, np.uint32)
    if bits < 32 and arr.size and int(arr.max()) >> bits:
        bad = int(np.argmax(arr >> np.uint32(bits) != 0))
        raise InvalidInput(f"{name}[{bad}]: {int(arr[bad])} does not fit in {bits} bits")
    return arr


def _positions(value: Any, n: int, name: str, *, inclusive: bool) -> np.ndarray:
    arr = _int_array(value, name, np.int64)
    if arr.size:
        hi = n if inclusive else n - 1
        bad = (arr < 0) | (arr > hi)
        if bad.any():
            j = int(np.argmax(bad))
            bound = f"[0, {n}]" if inclusive else f"[0, {n})"
            raise OutOfRange(f"{name}[{j}]: {int(arr[j])} is outside {bound}")
    return arr


def _ptr(ctype: str, arr: np.ndarray) -> Any:
    return ffi.from_buffer(ctype, arr, require_writable=False)


def _wptr(ctype: str, arr: np.ndarray) -> Any:
    return ffi.from_buffer(ctype, arr, require_writable=True)


def _blob(data: Any) -> Any:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise InvalidInput(f"data: expected bytes, got {type(data).__name__}")
    if isinstance(data, memoryview) and not data.c_contiguous:
        raise InvalidInput("data: memoryview must be contiguous")
    return data


# ------------------------------------------------------------------------------------------ locking


class _NoLock:
    """Immutable structures need no lock."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


_NO_LOCK = _NoLock()


class _Immutable:
    """Lock of immutable structures: both guards are no-ops."""

    __slots__ = ()

    def read(self) -> _NoLock:
        return _NO_LOCK

    def write(self) -> _NoLock:
        return _NO_LOCK


# -------------------------------------------------------------------------------- wavelet matrices


class _Sequence:
    """Queries shared by the static and the dynamic wavelet matrix (C prefix in ``_c``)."""

    _c: str
    _ptr: Any
    _bits: int
    _lock: Any

    _f: Any  # C functions of the subclass's prefix, resolved once

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        names = ("len", "nbytes", "access", "access_many", "access_range", "access_ranges", "rank", "rank_many",
                 "select", "count", "count_many", "hamming_ball", "serialized_size", "serialize")
        cls._f = type("_CFunctions", (), {n: staticmethod(getattr(lib, cls._c + n)) for n in names})

    def _len(self) -> int:
        return int(self._f.len(self._ptr))

    @property
    def bits(self) -> int:
        """Symbol width in bits (1..32)."""
        return self._bits

    def __len__(self) -> int:
        with self._lock.read():
            return self._len()

    @property
    def nbytes(self) -> int:
        """Heap bytes held by the structure (bit vectors, rank/select directories, tables, buffers)."""
        with self._lock.read():
            return int(self._f.nbytes(self._ptr))

    def _out_of_range(self, name: str, value: int, *, inclusive: bool) -> OutOfRange:
        n = len(self)
        bound = f"[0, {n}]" if inclusive else f"[0, {n})"
        return OutOfRange(f"{name}: {value} is outside {bound}")

    def access(self, i: int) -> int:
        """The symbol at position ``i`` (0 <= i < len). O(bits)."""
        i = _nonneg(i, "i")
        out = _out("u32")
        with self._lock.read():
            st = self._f.access(self._ptr, i, out)
        if st == lib.HIPPO_ERANGE:
            raise self._out_of_range("i", i, inclusive=False)
        _check(st, "i")
        return out[0]

    def access_many(self, positions: ArrayLike) -> np.ndarray:
        """Symbols at ``positions`` (int64 array) as a uint32 array; queries are interleaved in C."""
        with self._lock.read():
            pos = _positions(positions, self._len(), "positions", inclusive=False)
            out = np.empty(pos.size, dtype=np.uint32)
            if pos.size:
                _check(self._f.access_many(self._ptr, _ptr("int64_t[]", pos), pos.size,
                                               _wptr("uint32_t[]", out)), "positions")
            return out

    def access_range(self, start: int = 0, end: int | None = None) -> np.ndarray:
        """Symbols of ``[start, end)`` (``end=None`` means the end) as a uint32 array."""
        with self._lock.read():
            s, e = _range(start, end, self._len())
            out = np.empty(e - s, dtype=np.uint32)
            if e > s:
                _check(self._f.access_range(self._ptr, s, e, _wptr("uint32_t[]", out)), "start/end")
            return out

    def access_ranges(self, starts: ArrayLike, ends: ArrayLike) -> np.ndarray:
        """The symbols of every range ``[starts[j], ends[j])`` one after another, as one uint32 array (one C call
        for many short ranges, such as the messages of a recall context)."""
        with self._lock.read():
            n = self._len()
            s = _positions(starts, n, "starts", inclusive=True)
            e = _positions(ends, n, "ends", inclusive=True)
            if s.size != e.size:
                raise InvalidInput(f"starts and ends must have the same length, got {s.size} and {e.size}")
            if (s > e).any():
                j = int(np.argmax(s > e))
                raise OutOfRange(f"starts[{j}]: {int(s[j])} is greater than ends[{j}] {int(e[j])}")
            out = np.empty(int((e - s).sum()), dtype=np.uint32)
            if s.size:
                _check(self._f.access_ranges(self._ptr, _ptr("uint64_t[]", s.view(np.uint64)),
                                             _ptr("uint64_t[]", e.view(np.uint64)), s.size,
                                             _wptr("uint32_t[]", out)), "starts/ends")
            return out

    def rank(self, symbol: int, i: int) -> int:
        """Occurrences of ``symbol`` in ``[0, i)``, 0 <= i <= len. O(bits)."""
        sym = _symbol(symbol, self._bits)
        i = _nonneg(i, "i")
        out = _out("u64")
        with self._lock.read():
            st = self._f.rank(self._ptr, sym, i, out)
        if st == lib.HIPPO_ERANGE:
            raise self._out_of_range("i", i, inclusive=True)
        _check(st, "i")
        return out[0]

    def rank_many(self, symbols: ArrayLike, positions: ArrayLike) -> np.ndarray:
        """``rank(symbols[j], positions[j])`` for every j, as an int64 array."""
        with self._lock.read():
            sym = _symbols(symbols, self._bits)
            pos = _positions(positions, self._len(), "positions", inclusive=True)
            if sym.size != pos.size:
                raise InvalidInput(f"positions: length {pos.size} differs from symbols length {sym.size}")
            out = np.empty(sym.size, dtype=np.int64)
            if sym.size:
                _check(self._f.rank_many(self._ptr, _ptr("uint32_t[]", sym), _ptr("int64_t[]", pos), sym.size,
                                             _wptr("uint64_t[]", out)), "symbols/positions")
            return out

    def select(self, symbol: int, k: int) -> int:
        """Position of the ``k``-th occurrence (k >= 1) of ``symbol``; OutOfRange past the count."""
        sym = _symbol(symbol, self._bits)
        k = k if type(k) is int else _int(k, "k")
        if k < 1:
            raise OutOfRange(f"k: must be >= 1, got {k}")
        if k >= 1 << 64:
            raise OutOfRange(f"k: symbol {sym} occurs fewer than {k} times")
        out = _out("u64")
        with self._lock.read():
            st = self._f.select(self._ptr, sym, k, out)
        if st == lib.HIPPO_ERANGE:
            raise OutOfRange(f"k: symbol {sym} occurs fewer than {k} times")
        _check(st, "k")
        return out[0]

    def count(self, symbol: int, start: int = 0, end: int | None = None) -> int:
        """Occurrences of ``symbol`` in ``[start, end)``. O(bits) per overlapping segment."""
        sym = _symbol(symbol, self._bits)
        out = _out("u64")
        with self._lock.read():
            s, e = _range(start, end, self._len())
            _check(self._f.count(self._ptr, sym, s, e, out), "start/end")
        return out[0]

    def count_many(self, symbols: ArrayLike, start: int = 0, end: int | None = None) -> np.ndarray:
        """``count(symbols[j], start, end)`` for every j, as an int64 array."""
        with self._lock.read():
            sym = _symbols(symbols, self._bits)
            s, e = _range(start, end, self._len())
            out = np.empty(sym.size, dtype=np.int64)
            if sym.size:
                _check(self._f.count_many(self._ptr, _ptr("uint32_t[]", sym), sym.size, s, e,
                                              _wptr("uint64_t[]", out)), "start/end")
            return out

    def hamming_ball(self, symbol: int, radius: int, start: int = 0, end: int | None = None, *,
                     method: str = "auto") -> list[tuple[int, int]]:
        """Every distinct symbol within Hamming distance ``radius`` of ``symbol`` that occurs in
        ``[start, end)``, with its number of occurrences there, sorted by symbol.

        ``method``: ``"auto"`` (cost model), ``"branch"`` (branch-and-bound over the levels),
        ``"table"`` (scan of the distinct-symbol table, falling back to ``"decode"`` where a segment
        keeps none) or ``"decode"`` (decode the range and XOR-popcount every symbol). All agree.
        """
        if not isinstance(method, str) or method not in _METHODS:
            raise InvalidInput(f"method: expected one of {sorted(_METHODS)}, got {method!r}")
        with self._lock.read():
            sym = _symbol(symbol, self._bits)
            r = _int(radius, "radius")
            if r < 0:
                raise InvalidInput(f"radius: must be >= 0, got {r}")
            r = min(r, self._bits)
            s, e = _range(start, end, self._len())
            cap = 64
            needed = ffi.new("uint64_t *")
            while True:
                syms = np.empty(cap, dtype=np.uint32)
                counts = np.empty(cap, dtype=np.uint64)
                _check(self._f.hamming_ball(self._ptr, sym, r, s, e, _METHODS[method], _wptr("uint32_t[]", syms),
                                                _wptr("uint64_t[]", counts), cap, needed), "hamming_ball")
                if needed[0] <= cap:
                    k = int(needed[0])
                    return list(zip(syms[:k].tolist(), counts[:k].tolist()))
                cap = int(needed[0])

    def to_bytes(self) -> bytes:
        """Versioned, checksummed serialization (magic, version, width, length, packed symbols)."""
        with self._lock.read():
            size = ffi.new("uint64_t *")
            _check(self._f.serialized_size(self._ptr, size), "to_bytes")
            buf = ffi.new("uint8_t[]", int(size[0]))
            written = ffi.new("uint64_t *")
            _check(self._f.serialize(self._ptr, buf, int(size[0]), written), "to_bytes")
            return ffi.buffer(buf, int(written[0]))[:]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(bits={self._bits}, len={len(self)})"

    def __reduce__(self) -> Any:  # no pickle: use to_bytes / from_bytes
        raise TypeError(f"{type(self).__name__} is not picklable; use to_bytes() and from_bytes()")


class WaveletMatrix(_Sequence):
    """Static wavelet matrix over ``bits``-wide symbols (seed paper §3.2; Claude & Navarro 2012).

    ``WaveletMatrix(symbols, bits)`` builds in O(n * bits). Queries: ``access``, ``access_many``,
    ``access_range``, ``rank``, ``rank_many``, ``select``, ``count``, ``count_many``, ``hamming_ball``.
    Space: ~1.16 * n * bits bits (one 64-bit rank header per 448-bit cache line + select samples).
    """

    _c = "hippo_wm_"

    def __init__(self, symbols: ArrayLike, bits: int) -> None:
        b = _int(bits, "bits")
        if not 1 <= b <= 32:
            raise InvalidInput(f"bits: must be in 1..32, got {b}")
        arr = _symbols(symbols, b)
        out = ffi.new("hippo_wm **")
        _check(lib.hippo_wm_build(_ptr("uint32_t[]", arr) if arr.size else ffi.NULL, arr.size, b, out), "symbols")
        self._init(out[0], b)

    def _init(self, ptr: Any, bits: int) -> None:
        self._ptr = ffi.gc(ptr, lib.hippo_wm_free)
        self._bits = bits
        self._lock = _Immutable()

    @classmethod
    def from_bytes(cls, data: BytesLike) -> WaveletMatrix:
        """Load :meth:`to_bytes` output; CorruptData on any truncation, corruption or bad version."""
        blob = _blob(data)
        out = ffi.new("hippo_wm **")
        _check(lib.hippo_wm_deserialize(ffi.from_buffer(blob), len(blob) if not isinstance(blob, memoryview) else blob.nbytes, out), "data")
        self = cls.__new__(cls)
        self._init(out[0], int(lib.hippo_wm_bits(out[0])))
        return self


def decode_blob(data: BytesLike) -> np.ndarray:
    """The symbols of a :meth:`WaveletMatrix.to_bytes` blob as a uint32 array, without building the matrix (the
    blob is validated exactly as :meth:`WaveletMatrix.from_bytes` validates it; CorruptData otherwise)."""
    blob = _blob(data)
    size = len(blob) if not isinstance(blob, memoryview) else blob.nbytes
    n_out, bits_out = ffi.new("uint64_t *"), ffi.new("uint32_t *")
    _check(lib.hippo_wm_decode_blob(ffi.from_buffer(blob), size, ffi.NULL, 0, n_out, bits_out), "data")
    out = np.empty(int(n_out[0]), dtype=np.uint32)
    if out.size:
        _check(lib.hippo_wm_decode_blob(ffi.from_buffer(blob), size, _wptr("uint32_t[]", out), out.size, n_out,
                                        bits_out), "data")
    return out


class DynamicWaveletMatrix(_Sequence):
    """Append-only wavelet matrix (seed paper §3.2.1): every query sees every append immediately.

    Stored as a few static wavelet-matrix segments whose sizes shrink geometrically plus a small raw
    tail (see ``core_c/hippo_core.h``): ``append`` is amortized O(bits * log n), ``extend`` of a large
    array builds one segment directly, ``access`` costs one static access, ``rank``/``count`` one static
    rank per segment. Thread-safe: concurrent queries, exclusive appends.
    """

    _c = "hippo_dwm_"

    def __init__(self, bits: int) -> None:
        b = _int(bits, "bits")
        if not 1 <= b <= 32:
            raise InvalidInput(f"bits: must be in 1..32, got {b}")
        out = ffi.new("hippo_dwm **")
        _check(lib.hippo_dwm_new(b, out), "bits")
        self._init(out[0], b)

    def _init(self, ptr: Any, bits: int) -> None:
        self._ptr = ffi.gc(ptr, lib.hippo_dwm_free)
        self._bits = bits
        self._lock = RWLock()

    def positions(self, symbol: int, start: int = 0, end: int | None = None) -> np.ndarray:
        """Every position of ``symbol`` in ``[start, end)``, ascending, as an int64 array."""
        with self._lock.read():
            sym = _symbol(symbol, self._bits)
            s, e = _range(start, end, self._len())
            fn = lib.hippo_dwm_locate
            needed = ffi.new("uint64_t *")
            _check(fn(self._ptr, sym, s, e, ffi.NULL, 0, needed), "start/end")
            out = np.empty(int(needed[0]), dtype=np.uint64)
            if out.size:
                _check(fn(self._ptr, sym, s, e, _wptr("uint64_t[]", out), out.size, needed), "start/end")
            return out.astype(np.int64)

    def append(self, symbol: int) -> None:
        """Append one symbol (0 <= symbol < 2**bits)."""
        sym = _symbol(symbol, self._bits)
        with self._lock.write():
            _check(lib.hippo_dwm_append(self._ptr, sym), "symbol")

    def extend(self, symbols: ArrayLike) -> None:
        """Append every symbol of ``symbols`` (uint32 array, or ints); all-or-nothing."""
        arr = _symbols(symbols, self._bits)
        if arr.size == 0:
            return
        with self._lock.write():
            _check(lib.hippo_dwm_extend(self._ptr, _ptr("uint32_t[]", arr), arr.size), "symbols")

    @property
    def segments(self) -> int:
        """Number of static segments currently held (the tail buffer is not counted)."""
        with self._lock.read():
            return int(lib.hippo_dwm_segments(self._ptr))

    @property
    def stream_bytes(self) -> int:
        """Bytes of the stored stream only: bit vectors with their rank/select directories + tail."""
        with self._lock.read():
            return int(lib.hippo_dwm_stream_bytes(self._ptr))

    @classmethod
    def from_bytes(cls, data: BytesLike) -> DynamicWaveletMatrix:
        """Load :meth:`to_bytes` output (as one segment); CorruptData on any damage."""
        blob = _blob(data)
        out = ffi.new("hippo_dwm **")
        n = blob.nbytes if isinstance(blob, memoryview) else len(blob)
        _check(lib.hippo_dwm_deserialize(ffi.from_buffer(blob), n, out), "data")
        self = cls.__new__(cls)
        self._init(out[0], int(lib.hippo_dwm_bits(out[0])))
        return self


# ----------------------------------------------------------------------------------- binary codes


class BinaryIndex:
    """Exact Hamming search over packed binary codes of ``bits`` bits (64..1024, multiple of 64).

    Codes are ``uint8`` rows of ``bits // 8`` bytes (byte j holds bits 8j..8j+7, the layout of
    ``np.packbits(..., bitorder="little")`` and of faiss binary codes); ids are insertion order.
    Kernels: AVX-512 VPOPCNTDQ, AVX2 or portable, chosen at run time (see :func:`active_kernel`).
    Thread-safe: concurrent searches, exclusive ``add``.
    """

    def __init__(self, bits: int) -> None:
        b = _int(bits, "bits")
        if not (64 <= b <= 1024 and b % 64 == 0):
            raise InvalidInput(f"bits: must be a multiple of 64 in 64..1024, got {b}")
        out = ffi.new("hippo_bix **")
        _check(lib.hippo_bix_new(b, out), "bits")
        self._init(out[0], b)

    def _init(self, ptr: Any, bits: int) -> None:
        self._ptr = ffi.gc(ptr, lib.hippo_bix_free)
        self._bits = bits
        self._lock = RWLock()

    @property
    def bits(self) -> int:
        return self._bits

    def __len__(self) -> int:
        with self._lock.read():
            return int(lib.hippo_bix_len(self._ptr))

    @property
    def nbytes(self) -> int:
        """Heap bytes held (codes buffer including growth headroom)."""
        with self._lock.read():
            return int(lib.hippo_bix_nbytes(self._ptr))

    def _codes(self, codes: Any, name: str, *, allow_1d: bool) -> np.ndarray:
        nb = self._bits // 8
        if not isinstance(codes, np.ndarray):
            raise InvalidInput(f"{name}: expected a uint8 numpy array of shape (n, {nb})")
        if codes.dtype != np.uint8:
            raise InvalidInput(f"{name}: expected dtype uint8, got {codes.dtype}")
        if codes.ndim == 1 and allow_1d:
            codes = codes.reshape(1, -1) if codes.flags.c_contiguous else codes
        if codes.ndim != 2 or codes.shape[1] != nb:
            raise InvalidInput(f"{name}: expected shape (n, {nb}) for {self._bits}-bit codes, got {codes.shape}")
        if not codes.flags.c_contiguous:
            raise InvalidInput(f"{name}: array must be C-contiguous (use np.ascontiguousarray)")
        return codes

    def add(self, codes: np.ndarray) -> np.ndarray:
        """Append ``codes`` (uint8, shape (n, bits // 8)); returns their ids (int64)."""
        arr = self._codes(codes, "codes", allow_1d=False)
        with self._lock.write():
            first = ffi.new("uint64_t *")
            if arr.shape[0]:
                _check(lib.hippo_bix_add(self._ptr, _ptr("uint8_t[]", arr), arr.shape[0], first), "codes")
            else:
                first[0] = lib.hippo_bix_len(self._ptr)
            return np.arange(int(first[0]), int(first[0]) + arr.shape[0], dtype=np.int64)

    def get(self, ids: ArrayLike) -> np.ndarray:
        """Codes of ``ids`` as a uint8 array of shape (len(ids), bits // 8)."""
        with self._lock.read():
            n = int(lib.hippo_bix_len(self._ptr))
            idx = _positions(ids, n, "ids", inclusive=False)
            out = np.empty((idx.size, self._bits // 8), dtype=np.uint8)
            if idx.size:
                _check(lib.hippo_bix_get(self._ptr, _ptr("int64_t[]", idx), idx.size, _wptr("uint8_t[]", out)), "ids")
            return out

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` nearest codes to each query (uint8, shape (q, bits // 8), or one 1-D query).

        Returns ``(distances int32 (q, m), ids int64 (q, m))`` with ``m = min(k, len(self))``: each row the
        ``m`` nearest codes sorted by (distance, id), ties broken by the lower id. A ``k`` larger than the
        index costs what ``k = len(self)`` costs (no row is padded to ``k``: a huge ``k`` allocated, and wrote,
        12 bytes per unit of ``k``). O(n * bits / 64) per query; batches share each block of the index.
        """
        q = self._codes(queries, "queries", allow_1d=True)
        kk = _int(k, "k")
        if kk < 1:
            raise InvalidInput(f"k: must be >= 1, got {kk}")
        with self._lock.read():
            m = min(kk, int(lib.hippo_bix_len(self._ptr)))  # the index grows only under the write lock
            if q.shape[0] * m > _MAX_OUT:
                raise InvalidInput(f"k: {m} x {q.shape[0]} queries exceeds {_MAX_OUT} results")
            dist = np.empty((q.shape[0], m), dtype=np.int32)
            ids = np.empty((q.shape[0], m), dtype=np.int64)
            if q.shape[0] == 0 or m == 0:
                return dist, ids
            _check(lib.hippo_bix_search(self._ptr, _ptr("uint8_t[]", q), q.shape[0], m, _wptr("int32_t[]", dist),
                                        _wptr("int64_t[]", ids)), "search")
        return dist, ids

    def radius_search(self, query: np.ndarray, radius: int) -> tuple[np.ndarray, np.ndarray]:
        """All codes within Hamming distance ``radius`` of ``query`` (one code, 1-D or shape (1, nb)),
        as ``(distances int32, ids int64)`` sorted by (distance, id)."""
        q = self._codes(query, "query", allow_1d=True)
        if q.shape[0] != 1:
            raise InvalidInput(f"query: expected one code, got {q.shape[0]}")
        r = _int(radius, "radius")
        if r < 0:
            raise InvalidInput(f"radius: must be >= 0, got {r}")
        r = min(r, self._bits)
        needed = ffi.new("uint64_t *")
        cap = 256
        with self._lock.read():
            while True:
                dist = np.empty(cap, dtype=np.int32)
                ids = np.empty(cap, dtype=np.int64)
                _check(lib.hippo_bix_radius(self._ptr, _ptr("uint8_t[]", q), r, _wptr("int32_t[]", dist),
                                            _wptr("int64_t[]", ids), cap, needed), "radius_search")
                if needed[0] <= cap:
                    m = int(needed[0])
                    return dist[:m].copy(), ids[:m].copy()
                cap = int(needed[0])

    def to_bytes(self) -> bytes:
        """Versioned, checksummed serialization of every code."""
        with self._lock.read():
            size = ffi.new("uint64_t *")
            _check(lib.hippo_bix_serialized_size(self._ptr, size), "to_bytes")
            buf = ffi.new("uint8_t[]", int(size[0]))
            written = ffi.new("uint64_t *")
            _check(lib.hippo_bix_serialize(self._ptr, buf, int(size[0]), written), "to_bytes")
            return ffi.buffer(buf, int(written[0]))[:]

    @classmethod
    def from_bytes(cls, data: BytesLike) -> BinaryIndex:
        """Load :meth:`to_bytes` output; CorruptData on any truncation, corruption or bad version."""
        blob = _blob(data)
        n = blob.nbytes if isinstance(blob, memoryview) else len(blob)
        out = ffi.new("hippo_bix **")
        _check(lib.hippo_bix_deserialize(ffi.from_buffer(blob), n, out), "data")
        self = cls.__new__(cls)
        self._init(out[0], int(lib.hippo_bix_bits(out[0])))
        return self

    def __repr__(self) -> str:
        return f"BinaryIndex(bits={self._bits}, len={len(self)})"

    def __reduce__(self) -> Any:
        raise TypeError("BinaryIndex is not picklable; use to_bytes() and from_bytes()")


# ------------------------------------------------------------------------------- random indexing


def ri_signatures(tokens: ArrayLike, *, seed: int = 0, dim: int = 1024, nnz: int = 8, window: int = 2,
                  self_weight: int = 4, top_m: int = 16, sig_bits: int = 32,
                  segment_ends: ArrayLike | None = None) -> np.ndarray:
    """Random-indexing signatures of a token stream (seed paper §3.3), one uint32 per token.

    Position i's context vector is ``self_weight * base(t_i)`` plus the base vectors of the tokens
    within ``window`` on each side (never across a ``segment_ends`` boundary); ``base(t)`` has ``nnz``
    (even) distinct nonzeros in ``[0, dim)``, half +1 and half -1, from splitmix64 hashes of
    ``(seed, t, slot)``. The ``top_m`` components by |value| (ties to the lower index) are kept and
    SimHashed into ``sig_bits`` bits (bits above are 0). Integer arithmetic throughout: results are
    identical on every platform.

    ``segment_ends``: strictly increasing ends of consecutive segments (e.g. messages), the last
    equal to ``len(tokens)``; ``None`` means one segment.
    """
    tok = _int_array(tokens, "tokens", np.uint32)
    params = ffi.new("hippo_ri_params *")
    checks = (("seed", seed, 0, (1 << 64) - 1), ("dim", dim, 2, 65536), ("nnz", nnz, 2, 256),
              ("window", window, 0, 1024), ("self_weight", self_weight, 0, 65536), ("top_m", top_m, 1, 65536),
              ("sig_bits", sig_bits, 1, 32))
    vals: dict[str, int] = {}
    for name, value, lo, hi in checks:
        v = _int(value, name)
        if not lo <= v <= hi:
            raise InvalidInput(f"{name}: must be in {lo}..{hi}, got {v}")
        vals[name] = v
    if vals["nnz"] % 2 or vals["nnz"] > vals["dim"]:
        raise InvalidInput(f"nnz: must be even and <= dim, got {vals['nnz']}")
    if vals["top_m"] > vals["dim"]:
        raise InvalidInput(f"top_m: must be <= dim, got {vals['top_m']}")
    for name, v in vals.items():
        setattr(params, name, v)
    out = np.empty(tok.size, dtype=np.uint32)
    if segment_ends is None:
        ends = np.asarray([tok.size] if tok.size else [], dtype=np.uint64)
    else:
        ends = _int_array(segment_ends, "segment_ends", np.uint64)
        if tok.size == 0 and ends.size == 0:
            return out
        if ends.size == 0 or int(ends[-1]) != tok.size or (ends.size and int(ends[0]) == 0) or \
                (ends.size > 1 and bool(np.any(ends[1:] <= ends[:-1]))):
            raise InvalidInput("segment_ends: must be strictly increasing, start above 0 and end at len(tokens)")
    if tok.size == 0:
        return out
    _check(lib.hippo_ri_signatures_segmented(_ptr("uint32_t[]", tok), tok.size, _ptr("uint64_t[]", ends), ends.size,
                                             params, _wptr("uint32_t[]", out)), "ri_signatures")
    return out


def hamming_cross(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Hamming distances between every code of ``a`` (na, w) and every code of ``b`` (nb, w), packed as uint64
    words (w in 1..16), as an int32 (na, nb) matrix; a single code (w,) gives one row. Uses the same
    runtime-dispatched popcount kernels as :class:`BinaryIndex` (AVX-512 VPOPCNTDQ / AVX2 / portable)."""
    qa = np.asarray(a)
    qb = np.asarray(b)
    for name, arr in (("a", qa), ("b", qb)):
        if arr.dtype != np.uint64:
            raise InvalidInput(f"{name} must be a uint64 array of packed codes, got dtype {arr.dtype}")
        if arr.ndim not in (1, 2):
            raise InvalidInput(f"{name} must be (n, words) or (words,), got shape {arr.shape}")
    qa2 = np.ascontiguousarray(qa.reshape(1, -1) if qa.ndim == 1 else qa)
    qb2 = np.ascontiguousarray(qb.reshape(1, -1) if qb.ndim == 1 else qb)
    words = qa2.shape[1]
    if qb2.shape[1] != words:
        raise InvalidInput(f"a and b must have the same code width, got {words} and {qb2.shape[1]} words")
    if not 1 <= words <= 16:
        raise InvalidInput(f"codes must be 1..16 words (64..1024 bits), got {words}")
    out = np.empty((qa2.shape[0], qb2.shape[0]), dtype=np.int32)
    if out.size:
        _check(lib.hippo_hamming_cross(_ptr("uint64_t[]", qa2), qa2.shape[0], _ptr("uint64_t[]", qb2), qb2.shape[0],
                                       words, _wptr("int32_t[]", out)), "hamming_cross")
    return out[0] if qa.ndim == 1 else out


# ------------------------------------------------------------------------------------ byte tables


class ByteTable:
    """A byte string per id (a tokenizer's vocabulary): :meth:`join` turns an id stream into its bytes in one C
    pass (``hippo_gather_bytes``). Immutable once built; safe to share between threads."""

    __slots__ = ("_table", "_offsets", "_lens", "_n")

    def __init__(self, pieces: Sequence[bytes]) -> None:
        if isinstance(pieces, (str, bytes, bytearray, memoryview)) or not hasattr(pieces, "__len__") or \
                (isinstance(pieces, np.ndarray) and pieces.ndim != 1):
            raise InvalidInput(f"pieces: expected a sequence of bytes, got {type(pieces).__name__}")
        for i, b in enumerate(pieces):
            if not isinstance(b, bytes):
                raise InvalidInput(f"pieces[{i}]: expected bytes, got {type(b).__name__}")
        lens = np.fromiter((len(b) for b in pieces), dtype=np.uint64, count=len(pieces))
        if int(lens.sum()) >= 1 << 32:
            raise InvalidInput("pieces: the table must hold less than 4 GiB")
        self._offsets = np.zeros(len(pieces) + 1, dtype=np.uint32)
        self._offsets[1:] = np.cumsum(lens)
        self._table = np.frombuffer(b"".join(pieces) or b"\0", dtype=np.uint8)
        self._lens = lens
        self._n = len(pieces)

    def __len__(self) -> int:
        return self._n

    def lengths(self, ids: ArrayLike) -> np.ndarray:
        """Byte length of each id's entry (uint64; 0 for an id without one). Ids must be below ``len(self)``."""
        arr = _int_array(ids, "ids", np.uint32)
        if arr.size and int(arr.max()) >= self._n:
            j = int(np.argmax(arr >= self._n))
            raise OutOfRange(f"ids[{j}]: {int(arr[j])} is not below the table's {self._n} entries")
        return self._lens[arr]

    def join(self, ids: ArrayLike) -> bytes:
        """The entries of ``ids`` laid end to end. An id outside the table or without an entry raises
        ``OutOfRange`` naming its index."""
        arr = _int_array(ids, "ids", np.uint32)
        need = _out("u64")
        cap = 8 * arr.size + 16
        while True:
            out = bytearray(cap)
            st = lib.hippo_gather_bytes(_ptr("uint32_t[]", arr), arr.size, _ptr("uint8_t[]", self._table),
                                        _ptr("uint32_t[]", self._offsets), self._n,
                                        ffi.from_buffer("uint8_t[]", out), cap, need)
            if st == lib.HIPPO_ERANGE:
                j = int(need[0])
                raise OutOfRange(f"ids[{j}]: {int(arr[j])} has no entry in the table")
            _check(st, "ids")
            if need[0] <= cap:
                del out[need[0]:]
                return bytes(out)
            cap = int(need[0])


# ------------------------------------------------------------------------------------ blob checksums


def blob_checksum(data: BytesLike) -> int:
    """The 64-bit checksum (``hippo_hash64``, seed 0) that ends every serialized structure, of ``data``."""
    blob = _blob(data)
    n = blob.nbytes if isinstance(blob, memoryview) else len(blob)
    return int(lib.hippo_hash64(ffi.from_buffer(blob) if n else ffi.NULL, n, 0))


def reseal(data: BytesLike) -> bytes:
    """``data`` with its trailing 8-byte checksum recomputed over the bytes before it. For fuzzing: a mutated blob
    then passes the checksum and reaches the structural validation of ``from_bytes`` itself."""
    raw = bytes(_blob(data))
    if len(raw) < 8:
        raise InvalidInput(f"data: a serialized structure ends with an 8-byte checksum, got {len(raw)} bytes")
    return raw[:-8] + blob_checksum(raw[:-8]).to_bytes(8, "little")


# ------------------------------------------------------------------------------------ machine probes


def read_bandwidth(buf: Any) -> int:
    """Read all of ``buf`` (a C-contiguous array or buffer) with the fastest plain C loop and return
    a checksum of it; time the call to measure single-core read bandwidth."""
    if isinstance(buf, np.ndarray) and not buf.flags.c_contiguous:
        raise InvalidInput("buf: array must be C-contiguous")
    try:
        view = memoryview(buf)
    except TypeError:
        raise InvalidInput(f"buf: expected a buffer, got {type(buf).__name__}") from None
    if not view.c_contiguous:
        raise InvalidInput("buf: buffer must be contiguous")
    out = ffi.new("uint64_t *")
    n = view.nbytes
    ptr = ffi.from_buffer(buf, require_writable=False) if n else ffi.NULL
    _check(lib.hippo_read_bandwidth(ptr, n, out), "buf")
    return int(out[0])


def active_kernel() -> str:
    """Popcount kernel in use: ``"avx512_vpopcntdq"``, ``"avx2"`` or ``"portable"``."""
    return ffi.string(lib.hippo_kernel_name(lib.hippo_active_kernel())).decode()


def available_kernels() -> list[str]:
    """Kernels this CPU can run, best last."""
    best = lib.hippo_best_kernel()
    return [name for name, code in sorted(_KERNELS.items(), key=lambda kv: kv[1]) if code <= best]


def set_kernel(name: str) -> None:
    """Switch the popcount kernel for the whole process (tests and benchmarks; not during searches)."""
    if not isinstance(name, str) or name not in _KERNELS:
        raise InvalidInput(f"name: expected one of {sorted(_KERNELS)}, got {name!r}")
    st = lib.hippo_set_kernel(_KERNELS[name])
    if st == lib.HIPPO_EINVAL:
        raise InvalidInput(f"name: this CPU cannot run the {name!r} kernel")
    _check(st, "name")


@contextlib.contextmanager
def force_portable() -> Iterator[None]:
    """Run the enclosed block on the portable kernel (as ``HIPPO_FORCE_PORTABLE=1`` would)."""
    previous = active_kernel()
    set_kernel("portable")
    try:
        yield
    finally:
        set_kernel(previous)

"""Concurrent readers with one writer: every read sees a consistent prefix of the appended stream."""

from __future__ import annotations

import threading

import numpy as np

from hippo import BinaryIndex, DynamicWaveletMatrix


def test_readers_and_writer_on_dynamic_matrix() -> None:
    rng = np.random.default_rng(0)
    data = rng.integers(0, 1 << 9, size=60000).astype(np.uint32)
    d = DynamicWaveletMatrix(9)
    d.extend(data[:1000])
    errors: list[str] = []
    done = threading.Event()

    def writer() -> None:
        i = 1000
        while i < data.size:
            step = int(rng.integers(1, 3000))
            if step < 20:
                for x in data[i : i + step]:
                    d.append(int(x))
            else:
                d.extend(data[i : i + step])
            i += step
        done.set()

    def reader(seed: int) -> None:
        r = np.random.default_rng(seed)
        while not done.is_set() or r.random() < 0.5:
            n = len(d)
            pos = r.integers(0, n, size=64)
            if not np.array_equal(d.access_many(pos), data[pos]):
                errors.append("access_many")
            s = int(data[int(r.integers(0, n))])
            if d.count(s, 0, n) != int(np.count_nonzero(data[:n] == s)):
                errors.append("count")
            if d.rank(s, n) < 1:
                errors.append("rank")
            got = d.access_range(max(0, n - 100), n)
            if not np.array_equal(got, data[max(0, n - 100) : n]):
                errors.append("access_range")

    threads = [threading.Thread(target=reader, args=(k,)) for k in range(3)] + [threading.Thread(target=writer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors[:5]
    assert np.array_equal(d.access_range(), data)


def test_concurrent_search_and_add() -> None:
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 256, (20000, 8), dtype=np.uint8)
    ix = BinaryIndex(64)
    ix.add(codes[:1000])
    errors: list[str] = []
    done = threading.Event()

    def writer() -> None:
        for s in range(1000, 20000, 500):
            ix.add(codes[s : s + 500])
        done.set()

    def reader() -> None:
        while not done.is_set():
            d, i = ix.search(codes[:2], 3)
            if d[0, 0] != 0 or i[0, 0] != 0 or i[1, 0] != 1:
                errors.append(f"{d} {i}")

    threads = [threading.Thread(target=reader) for _ in range(2)] + [threading.Thread(target=writer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors
    assert len(ix) == 20000

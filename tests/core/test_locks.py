"""hippo.base.locks.RWLock: many readers or one writer, waiting writers first, re-entrant writes."""

from __future__ import annotations

import threading

from hippo.base.locks import RWLock


def _start(fn) -> threading.Thread:
    t = threading.Thread(target=fn, daemon=True)
    t.start()
    return t


def test_a_writer_waits_for_every_reader_and_then_runs():
    lock = RWLock()
    order: list[str] = []
    r1, r2 = lock.read(), lock.read()
    r1.__enter__()
    r2.__enter__()
    wrote = threading.Event()

    def writer():
        with lock.write():
            order.append("write")
        wrote.set()

    t = _start(writer)
    assert not wrote.wait(0.2)          # two readers inside
    r1.__exit__(None, None, None)
    assert not wrote.wait(0.2)          # one reader still inside
    order.append("last reader leaves")
    r2.__exit__(None, None, None)
    assert wrote.wait(10)               # the last reader's exit wakes the writer
    t.join(10)
    assert order == ["last reader leaves", "write"]


def test_a_waiting_writer_goes_before_new_readers():
    lock = RWLock()
    order: list[str] = []
    first = lock.read()
    first.__enter__()
    writer_waiting = threading.Event()

    def writer():
        writer_waiting.set()
        with lock.write():
            order.append("write")

    def reader():
        with lock.read():
            order.append("read")

    w = _start(writer)
    writer_waiting.wait(10)
    while not lock._waiting:            # the writer is queued
        threading.Event().wait(0.01)
    r = _start(reader)
    assert not threading.Event().wait(0.1) and order == []
    first.__exit__(None, None, None)
    w.join(10)
    r.join(10)
    assert order == ["write", "read"]


def test_the_writer_reenters_and_reads_under_its_own_write_lock():
    lock = RWLock()
    with lock.write():
        with lock.write():
            with lock.read():
                pass
    done = threading.Event()

    def other():
        with lock.write():
            done.set()

    _start(other).join(10)
    assert done.is_set()                # everything was released

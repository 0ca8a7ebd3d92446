"""Detecting a damaged SQLite write-ahead log before SQLite silently rolls the store back.

SQLite replays a ``-wal`` file up to its first frame whose salt or checksum does not match and ignores everything
after it (https://www.sqlite.org/fileformat2.html#walformat). That is right for a write torn by a crash: the torn
frames belong to a transaction that never committed. It is wrong when a bit flips in the middle of the log: every
transaction committed after the flip vanishes without an error. SQLite cannot tell the two apart because its
checksums are cumulative; nothing in its API reports how many frames recovery dropped.

This module reads the log itself. Each frame's checksum is verified from the checksum *stored* in the frame before
it, so damage to one frame does not hide the frames after it. The log is damaged when SQLite would drop a frame
that verifies on its own, carries the log's salts, belongs to a transaction whose commit frame also verifies, and
holds a page image that differs from the database file (a committed change that recovery would lose; frames that a
checkpoint already copied are not a loss). A damaged header is judged the same way, with the salts of the first
frame and the page size of the database file.

What this cannot see: damage to the commit frame of the last transaction (indistinguishable from a torn write),
and damage inside the database file itself (``PRAGMA integrity_check`` finds structural damage; hippo's own
checksums cover message tokens and chunks).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from hippo.base.errors import CorruptData

WAL_HEADER = 32
FRAME_HEADER = 24
_MAGIC = (0x377F0682, 0x377F0683)
_VERSION = 3007000


@dataclass
class WalReport:
    """What SQLite's recovery would do with a ``-wal`` file."""

    path: str
    exists: bool = False
    header_ok: bool = True
    page_size: int = 0
    frames: int = 0                 # whole frames in the file
    replayed_frames: int = 0        # frames recovery keeps (up to the last commit before any damage)
    first_bad_frame: int | None = None
    lost_commits: int = 0           # committed transactions after the damage that recovery would drop
    lost_pages: list[int] = field(default_factory=list)  # their pages that differ from the database file

    @property
    def damaged(self) -> bool:
        return bool(self.lost_pages)

    def as_dict(self) -> dict:
        return {"path": self.path, "exists": self.exists, "header_ok": self.header_ok, "page_size": self.page_size,
                "frames": self.frames, "replayed_frames": self.replayed_frames,
                "first_bad_frame": self.first_bad_frame, "lost_commits": self.lost_commits,
                "lost_pages": len(self.lost_pages), "damaged": self.damaged}

    def describe(self) -> str:
        where = "its header" if not self.header_ok else f"frame {self.first_bad_frame}"
        return (f"the write-ahead log {self.path!r} is damaged at {where}: opening the store would silently drop "
                f"{self.lost_commits} committed transaction(s) ({len(self.lost_pages)} page(s) not yet in the "
                f"database file)")


# -- SQLite's WAL checksum, vectorized ---------------------------------------------------------------------------
# For 32-bit words x[0..2K): s0 += x[2k] + s1; s1 += x[2k+1] + s0 (mod 2^32). One step is s' = M s + u_k with
# M = [[1, 1], [1, 2]] and u_k = (a, a + b), so over K steps s_K = M^K s_0 + sum_k M^(K-1-k) u_k. The sum does not
# depend on s_0 and is linear in the words: each word has a pair of coefficients (those of M^(K-1-k) applied to
# (a, a + b)), and the sums of every frame of a block are one matrix product. Unsigned 32-bit products and sums wrap
# mod 2^32, the checksum's own arithmetic.
BLOCK_FRAMES = 256  # frames read and verified at a time: memory stays a few blocks' worth, whatever the log's size


def _powers(k: int) -> np.ndarray:
    """M^j mod 2^32 for j in [0, k], as a (k + 1, 2, 2) uint64 array."""
    out = np.empty((k + 1, 2, 2), dtype=np.uint64)
    m = [[1, 0], [0, 1]]
    for j in range(k + 1):
        out[j] = m
        m = [[(m[0][0] + m[1][0]) & 0xFFFFFFFF, (m[0][1] + m[1][1]) & 0xFFFFFFFF],
             [(m[0][0] + 2 * m[1][0]) & 0xFFFFFFFF, (m[0][1] + 2 * m[1][1]) & 0xFFFFFFFF]]
    return out


def _coefficients(powers: np.ndarray, k: int) -> np.ndarray:
    """(2K, 2) uint32: row 2k holds the coefficients of word a_k in (s0, s1), row 2k + 1 those of b_k."""
    p = powers[k - 1::-1] if k else powers[:0]  # M^(K-1-k) for k = 0..K-1
    out = np.empty((2 * k, 2), dtype=np.uint64)
    out[0::2, 0] = p[:, 0, 0] + p[:, 0, 1]  # a_k enters u_k twice: as a and in a + b
    out[0::2, 1] = p[:, 1, 0] + p[:, 1, 1]
    out[1::2, 0] = p[:, 0, 1]
    out[1::2, 1] = p[:, 1, 1]
    return (out & 0xFFFFFFFF).astype(np.uint32)


def checksum_terms(words: np.ndarray, powers: np.ndarray) -> np.ndarray:
    """For each row of 32-bit ``words`` (shape (F, 2K)), ``sum_k M^(K-1-k) u_k`` mod 2^32 as (F, 2) uint32."""
    return np.asarray(words).astype(np.uint32) @ _coefficients(powers, words.shape[1] // 2)


def continue_checksum(start: np.ndarray, terms: np.ndarray, mk: np.ndarray) -> np.ndarray:
    """``M^K start + terms`` mod 2^32 for rows of ``start`` (F, 2), as uint32."""
    return np.asarray(start).astype(np.uint32) @ mk.astype(np.uint32).T + np.asarray(terms).astype(np.uint32)


def reference_checksum(data: bytes, big_endian: bool, s0: int = 0, s1: int = 0) -> tuple[int, int]:
    """The checksum loop exactly as SQLite's ``walChecksumBytes`` runs it (the oracle of the vectorized form)."""
    order = "big" if big_endian else "little"
    for i in range(0, len(data), 8):
        a = int.from_bytes(data[i:i + 4], order)
        b = int.from_bytes(data[i + 4:i + 8], order)
        s0 = (s0 + a + s1) & 0xFFFFFFFF
        s1 = (s1 + b + s0) & 0xFFFFFFFF
    return s0, s1


def _db_page_size(db_path: str) -> int:
    try:
        with open(db_path, "rb") as f:
            head = f.read(100)
    except OSError:
        return 0
    if len(head) < 100 or not head.startswith(b"SQLite format 3\x00"):
        return 0
    size = int.from_bytes(head[16:18], "big")
    return 65536 if size == 1 else size


def _valid_page_size(size: int) -> bool:
    return 512 <= size <= 65536 and size & (size - 1) == 0


def _verify_frames(f, n: int, page_size: int, big: bool, first: tuple[int, int],
                   salts: bytes | None) -> tuple[np.ndarray, np.ndarray]:
    """Read the ``n`` frames after the log's header from ``f`` (positioned there), :data:`BLOCK_FRAMES` at a time:
    ``(headers, own_ok)``, the frame headers as (F, 6) uint32 (page, commit size, salt 1, salt 2, checksum 1,
    checksum 2) and whether each frame verifies from the checksum stored in the frame before it (the first from
    ``first``), carries the salts (``salts``; None: those of the first frame) and names a page. F is below ``n``
    when the file ends sooner (another process truncated it meanwhile)."""
    frame_bytes = FRAME_HEADER + page_size
    k = (8 + page_size) // 8  # word pairs a frame's checksum covers: its first 8 header bytes and its page
    powers = _powers(k)
    coef = _coefficients(powers, k)
    mk = powers[k].astype(np.uint32).T
    word = np.dtype(">u4" if big else "<u4")
    headers, oks = [], []
    prev = np.asarray([first], dtype=np.uint32)
    done = 0
    while done < n:
        wanted = min(BLOCK_FRAMES, n - done)
        raw = f.read(wanted * frame_bytes)
        count = len(raw) // frame_bytes
        if not count:
            break
        frames = np.frombuffer(raw, dtype=np.uint8, count=count * frame_bytes).reshape(count, frame_bytes)
        hdr = frames[:, :FRAME_HEADER].copy().view(">u4").astype(np.uint32)
        if salts is None:
            salts = bytes(frames[0, 8:16])
        # the page's words in the checksum's order (a view where that is the machine's), then its 8 header bytes
        terms = frames[:, FRAME_HEADER:].view(word) @ coef[2:]
        terms += frames[:, :8].copy().view(word).astype(np.uint32) @ coef[:2]
        start = np.concatenate([prev, hdr[:-1, 4:6]])
        sums = start @ mk + terms
        ok = (sums == hdr[:, 4:6]).all(axis=1) & (hdr[:, 0] > 0)
        ok &= (hdr[:, 2] == int.from_bytes(salts[:4], "big")) & (hdr[:, 3] == int.from_bytes(salts[4:], "big"))
        headers.append(hdr)
        oks.append(ok)
        prev = hdr[-1:, 4:6]
        done += count
        if count < wanted:
            break
    if not headers:
        return np.empty((0, 6), dtype=np.uint32), np.empty(0, dtype=bool)
    return np.concatenate(headers), np.concatenate(oks)


def analyze(db_path: str) -> WalReport:
    """Read ``db_path + "-wal"`` and report what recovery would replay and what it would drop. The log is read a
    block of frames at a time (:data:`BLOCK_FRAMES`): memory stays a few blocks' worth, whatever its size."""
    wal_path = os.fspath(db_path) + "-wal"
    rep = WalReport(wal_path)
    try:
        f = open(wal_path, "rb")
    except FileNotFoundError:
        return rep
    with f:
        rep.exists = True
        size = os.fstat(f.fileno()).st_size
        if size <= WAL_HEADER:
            return rep  # empty (or a bare header): nothing to replay, nothing to lose
        data = f.read(WAL_HEADER)
        if len(data) < WAL_HEADER:
            return rep
        magic, version, page_size = (int.from_bytes(data[i:i + 4], "big") for i in (0, 4, 8))
        salts: bytes | None = data[16:24]
        big = magic & 1 == 1
        header_ok = magic in _MAGIC and version == _VERSION and _valid_page_size(page_size) and \
            reference_checksum(data[:24], big) == (int.from_bytes(data[24:28], "big"),
                                                   int.from_bytes(data[28:32], "big"))
        rep.header_ok = header_ok
        if not header_ok:
            # Recovery ignores the whole log; judge its frames with the database's page size and their own salts.
            page_size = _db_page_size(db_path)
            salts = None
            if magic not in _MAGIC:
                big = sys.byteorder == "big"  # SQLite checksums in the machine's native word order
            if not _valid_page_size(page_size):
                return rep
        rep.page_size = page_size
        frame_bytes = FRAME_HEADER + page_size
        n = (size - WAL_HEADER) // frame_bytes
        if n == 0:
            return rep
        first = (int.from_bytes(data[24:28], "big"), int.from_bytes(data[28:32], "big"))
        hdr, own_ok = _verify_frames(f, n, page_size, big, first, salts)
        n = rep.frames = int(own_ok.size)
        if n == 0:
            return rep
        if not header_ok:
            own_ok[0] = False  # its chain starts at the damaged header: nothing to verify it against
        commit = hdr[:, 1] > 0
        # Recovery: the longest prefix of frames that chain from the header, cut back to its last commit.
        prefix = n if header_ok else 0
        if header_ok:
            bad = np.flatnonzero(~own_ok)
            prefix = int(bad[0]) if bad.size else n
        commits_in_prefix = np.flatnonzero(commit[:prefix])
        rep.replayed_frames = int(commits_in_prefix[-1]) + 1 if commits_in_prefix.size else 0
        if prefix == n:
            return rep  # every frame verifies; any after the last commit belong to an unfinished transaction
        rep.first_bad_frame = prefix
        later_commits = np.flatnonzero(commit & own_ok & (np.arange(n) >= prefix))
        if not later_commits.size:
            return rep  # only an unfinished (torn) transaction follows: the normal end of a log after a crash
        rep.lost_commits = int(later_commits.size)
        end = int(later_commits[-1]) + 1
        newest: dict[int, int] = {}
        for i in np.flatnonzero(own_ok[rep.replayed_frames:end]).tolist():
            newest[int(hdr[rep.replayed_frames + i, 0])] = rep.replayed_frames + i
        try:
            with open(db_path, "rb") as db:
                for page, i in sorted(newest.items()):
                    db.seek((page - 1) * page_size)
                    f.seek(WAL_HEADER + i * frame_bytes + FRAME_HEADER)
                    if db.read(page_size) != f.read(page_size):
                        rep.lost_pages.append(page)
        except OSError:
            rep.lost_pages = sorted(newest)
    return rep


class WalDamaged(CorruptData):
    """Opening the store would silently drop committed transactions from a damaged write-ahead log. ``report`` says
    where; ``hippo check --repair`` keeps a copy of the log and accepts the loss."""

    def __init__(self, report: WalReport) -> None:
        super().__init__(f"{report.describe()}; nothing was opened. Run `hippo check --repair --path "
                         f"{report.path[:-4]}` to keep a copy of the log and open the store as of its last intact "
                         "transaction")
        self.report = report


def confirmed_damage(db_path: str, attempts: int = 3, pause_s: float = 0.05) -> WalReport | None:
    """The report of a damaged log, or None. Damage must be seen on every attempt: a writer in another process may be
    appending or checkpointing while the file is read, which can look like damage for an instant."""
    rep = None
    for k in range(attempts):
        rep = analyze(db_path)
        if not rep.damaged:
            return None
        if k + 1 < attempts:
            time.sleep(pause_s)
    return rep


def set_aside(db_path: str) -> str:
    """Copy a damaged ``-wal`` next to the store (``<store>-wal.damaged-<time>``) before recovery discards its tail;
    returns the copy's path. The copy is made with the store's own private permissions."""
    src = os.fspath(db_path) + "-wal"
    dest = f"{src}.damaged-{time.strftime('%Y%m%dT%H%M%S')}"
    fd = os.open(dest, os.O_CREAT | os.O_WRONLY | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "wb") as out, open(src, "rb") as f:
        shutil.copyfileobj(f, out)
        out.flush()
        os.fsync(out.fileno())
    return dest


def accept_loss(db_path: str) -> str:
    """Keep a copy of a damaged ``-wal`` (see :func:`set_aside`), then let SQLite recover the log up to its last
    intact transaction and checkpoint it into the file, so the store opens again. Returns the copy's path."""
    import sqlite3

    copy = set_aside(db_path)
    db = sqlite3.connect(os.fspath(db_path), isolation_level=None)
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        db.close()
    return copy

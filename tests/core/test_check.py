"""``Memory.check`` / ``hippo check [--repair]``, damaged write-ahead logs, and the schema 2 -> 3 upgrade.

Damage is made with a raw SQLite connection (or by editing the files), then the report must name the structure and
the rows; repair must rebuild exactly what is derived and leave the messages as they were.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hippo import Memory
from hippo.cli import main as cli_main
from hippo.base.errors import CorruptData, ReadOnlyError
from hippo.store import wal
from hippo.store.sqlite import SCHEMA_VERSION

HERE = Path(__file__).resolve().parent
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
TEXTS = [f"message {i}: the ferry to the island leaves at {i % 12 + 1} o'clock, café ☕ 東京" for i in range(50)]


def _store(tmp_path: Path, embed=None) -> Path:
    """Sealed chunks, a tail, two namespaces and unit snapshots; written by a process that exits without close so
    the tail stays unsealed."""
    path = tmp_path / "c.db"
    with Memory(path, config={"seal_tokens": 256}, embed=embed) as mem:
        mem.add_many([{"text": t, "speaker": "Ann", "session_id": f"s{i // 10}", "metadata": {"i": i}}
                      for i, t in enumerate(TEXTS[:40])])
        mem.using("beta").add_many([{"text": f"beta {k} gardening"} for k in range(5)])
        mem.recall("ferry island", budget_tokens=300)
        mem.consolidate("deep")
    code = ("import os, sys; from hippo import Memory; m = Memory(sys.argv[1], config={'seal_tokens': 100000}); "
            "m.add_many([{'text': t} for t in sys.argv[2:]]); m._rt.store.checkpoint(); os._exit(0)")
    subprocess.run([sys.executable, "-c", code, str(path), *TEXTS[40:]], check=True, timeout=120, env=ENV)
    return path


def _sql(path: Path, *statements: tuple) -> None:
    db = sqlite3.connect(path)
    for stmt in statements:
        db.execute(*stmt) if isinstance(stmt, tuple) else db.execute(stmt)
    db.commit()
    db.close()


def _sections(report: dict) -> dict[str, list]:
    return {f"{ns}/{name}": sec["damaged"] for ns, secs in report["namespaces"].items() for name, sec in secs.items()
            if sec["damaged"]}


def test_a_clean_store_checks_ok_and_counts_every_structure(tmp_path) -> None:
    path = _store(tmp_path)
    with Memory(path) as mem:
        report = mem.check()
    json.dumps(report)  # JSON-serializable
    assert report["ok"] and report["damaged"] == [] and not report["file"]["damaged"]
    default = report["namespaces"]["default"]
    assert default["messages"]["verified"] == 50
    assert default["tail"]["verified"] == 10
    assert default["chunks"]["verified"] >= 1
    assert default["text"]["verified"] == 50
    assert default["index"]["verified"] == 50
    # the speaker profiles are saved too when their build in the background ended before the writer's last save
    assert {"derived.index", "derived.life"} <= set(default["snapshots"]["verified"]) <= \
        {"derived.index", "derived.life", "derived.profiles"}
    assert report["namespaces"]["beta"]["messages"]["verified"] == 5


DAMAGE = {
    "tail": ("tail", lambda db: db.execute("UPDATE tail SET tokens = ? || substr(tokens, 5) WHERE id = "
                                           "(SELECT MIN(id) FROM tail)", (np.asarray([1820], "<u4").tobytes(),))),
    "chunk blob": ("chunks", lambda db: db.execute("UPDATE chunks SET blob = substr(blob, 1, 20) || x'00' || "
                                                   "substr(blob, 22) WHERE namespace = 'default'")),
    "sealed n_tokens": ("chunks", lambda db: db.executescript(
        "UPDATE messages SET n_tokens = n_tokens + 1 WHERE seq = 3 AND namespace = 'default';"
        "UPDATE messages SET n_tokens = n_tokens - 1 WHERE seq = 4 AND namespace = 'default';")),
    "metadata": ("messages", lambda db: db.execute("UPDATE messages SET metadata = '{broken' WHERE seq = 5")),
    "created_at": ("messages", lambda db: db.execute("UPDATE messages SET created_at = 1e300 WHERE seq = 6")),
    "uncovered": ("messages", lambda db: db.execute("DELETE FROM chunks WHERE namespace = 'beta'")),
}


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_damage_to_data_is_reported_and_never_guessed(tmp_path, kind) -> None:
    path = _store(tmp_path)
    section, damage = DAMAGE[kind]
    db = sqlite3.connect(path)
    damage(db)
    db.commit()
    db.close()
    with Memory(path) as mem:
        report = mem.check()
        assert not report["ok"]
        found = _sections(report)
        ns = "beta" if kind == "uncovered" else "default"
        assert f"{ns}/{section}" in found, found
        assert all(d.get("problem") for d in found[f"{ns}/{section}"])
        repaired = mem.check(repair=True)
        assert not repaired["ok"] and f"{ns}/{section}" in repaired["damaged"]
    db = sqlite3.connect(path)
    damaged_rows = db.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
    db.close()
    assert damaged_rows == 55  # repair deleted nothing


def test_message_ids_name_the_damage(tmp_path) -> None:
    path = _store(tmp_path)
    db = sqlite3.connect(path)
    (mid,) = db.execute("SELECT id FROM messages WHERE seq = 5 AND namespace = 'default'").fetchone()
    (tid,) = db.execute("SELECT MIN(id) FROM tail").fetchone()
    db.execute("UPDATE messages SET metadata = '[1, 2]' WHERE id = ?", (mid,))
    db.execute("UPDATE tail SET checksum = x'0000000000000000' WHERE id = ?", (tid,))
    db.commit()
    db.close()
    with Memory(path) as mem:
        found = _sections(mem.check())
    assert [d["id"] for d in found["default/messages"]] == [mid]
    assert [d["id"] for d in found["default/tail"]] == [tid]


def test_repair_rebuilds_what_is_derived(tmp_path) -> None:
    def embed(texts):
        return np.asarray([[len(t) % 7, t.count("e"), 1.0, t.count(" ")] for t in texts], dtype=np.float32)

    path = _store(tmp_path, embed=embed)
    db = sqlite3.connect(path)
    (code_id,) = db.execute("SELECT MIN(id) FROM codes").fetchone()
    db.executescript(f"""
        UPDATE namespaces SET next_seq = 2 WHERE name = 'default';
        UPDATE units SET payload = x'00112233' WHERE kind = 'derived.life' AND namespace = 'default';
        UPDATE codes SET code = x'0102' WHERE id = {code_id};
        INSERT INTO codes(id, namespace, code) VALUES (999999, 'default', zeroblob(32));
    """)
    db.commit()
    db.close()
    with Memory(path, embed=embed) as mem:
        report = mem.check()
        assert set(report["damaged"]) == {"default/namespace_row", "default/snapshots", "default/codes"}
        assert {d["id"] for d in report["namespaces"]["default"]["codes"]["damaged"]} == {code_id, 999999}
        repaired = mem.check(repair=True)
        assert repaired["ok"], repaired["damaged"]
        for name in ("namespace_row", "snapshots", "codes", "index"):
            assert repaired["namespaces"]["default"][name]["rebuilt"], name
        item = mem.add("a message after the repair")  # next_seq is past every seq again: no collision
        assert item.seq == 50
        assert mem.check()["ok"]
        assert mem.search("ferry island", k=3)
    with Memory(path, embed=embed) as mem:
        assert [it.text for it in mem.list()] == TEXTS + ["a message after the repair"]
        assert mem.check()["ok"]
    db = sqlite3.connect(path)
    assert db.execute("SELECT COUNT(*) FROM codes").fetchone()[0] == 56  # recomputed for every message
    db.close()


@pytest.mark.parametrize("column,value", [("next_seq", "'abc'"), ("generation", "x'00'"), ("next_seq", "-5")])
def test_a_damaged_namespace_row_is_corrupt_data_until_repaired(tmp_path, column, value) -> None:
    path = _store(tmp_path)
    _sql(path, f"UPDATE namespaces SET {column} = {value} WHERE name = 'beta'")
    with Memory(path, namespace="beta") as mem:
        with pytest.raises(CorruptData, match="namespace 'beta'"):
            mem.add("refused: its seq would be a guess")
        report = mem.check()
        assert "beta/namespace_row" in report["damaged"]
        assert mem.check(repair=True)["ok"]
        item = mem.add("stored after the repair")
        assert item.seq == 5 and [it.text for it in mem.list()][-1] == "stored after the repair"


def test_a_drifted_co_index_is_found_and_rebuilt(tmp_path) -> None:
    path = _store(tmp_path)
    with Memory(path) as mem:
        mem.count()
        idx = mem.engine.state().index
        idx.rebuild_without([int(idx.ids.view[7])])  # the process's index loses a message the store has
        report = mem.check()
        assert report["namespaces"]["default"]["index"]["damaged"]
        assert report["namespaces"]["default"]["index"]["rebuilt"]
        assert mem.count() == 50 and [it.text for it in mem.list()] == TEXTS


def test_check_on_a_read_only_store(tmp_path) -> None:
    path = _store(tmp_path)
    with Memory(path, read_only=True) as mem:
        assert mem.check()["ok"]
        with pytest.raises(ReadOnlyError):
            mem.check(repair=True)


def test_cli_check_and_repair(tmp_path, capsys) -> None:
    assert cli_main(["check", "--path", str(tmp_path / "missing.db")]) == 2
    assert "no store at" in capsys.readouterr().err and not (tmp_path / "missing.db").exists()
    path = _store(tmp_path)
    assert cli_main(["check", "--path", str(path)]) == 0
    assert capsys.readouterr().out.strip().endswith("ok")
    _sql(path, "UPDATE namespaces SET next_seq = 1 WHERE name = 'beta'")
    assert cli_main(["check", "--path", str(path), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["damaged"] == ["beta/namespace_row"]
    assert cli_main(["check", "--repair", "--path", str(path)]) == 0
    capsys.readouterr()
    assert cli_main(["check", "--path", str(path)]) == 0
    _sql(path, "UPDATE messages SET metadata = 'x' WHERE seq = 2 AND namespace = 'beta'")
    assert cli_main(["check", "--repair", "--path", str(path)]) == 1  # data damage stays reported
    assert "beta/messages" in capsys.readouterr().out


# ------------------------------------------------------------------------------------------ write-ahead log
def _wal_store(tmp_path: Path, n: int = 30) -> Path:
    """A store whose last ``n`` commits are only in its -wal (a writer killed before any checkpoint)."""
    path = tmp_path / "w.db"
    code = """
import os, sys
from hippo import Memory
m = Memory(sys.argv[1])
m.add("before the log")
m._rt.store.checkpoint()
m._rt.store._db.execute("PRAGMA wal_autocheckpoint=0")
for i in range(int(sys.argv[2])):
    m.add(f"committed message number {i} about the harbor")
os._exit(0)
"""
    subprocess.run([sys.executable, "-c", code, str(path), str(n)], check=True, timeout=120, env=ENV)
    return path


def _flip(path: Path, frame: int, offset: int = 300) -> None:
    log = Path(str(path) + "-wal")
    data = bytearray(log.read_bytes())
    page = int.from_bytes(data[8:12], "big")
    data[wal.WAL_HEADER + frame * (wal.FRAME_HEADER + page) + wal.FRAME_HEADER + offset] ^= 0x20
    log.write_bytes(bytes(data))


def test_vectorized_wal_checksum_matches_the_reference_loop() -> None:
    rng = np.random.default_rng(3)
    for big in (False, True):
        for words in (2, 8, 1026):
            data = rng.integers(0, 256, 4 * words, dtype=np.uint8).tobytes()
            s0, s1 = int(rng.integers(0, 2**32)), int(rng.integers(0, 2**32))
            arr = np.frombuffer(data, dtype=">u4" if big else "<u4").astype(np.uint64).reshape(1, -1)
            powers = wal._powers(words // 2)
            got = wal.continue_checksum(np.asarray([[s0, s1]], dtype=np.uint64),
                                        wal.checksum_terms(arr, powers), powers[words // 2])
            assert tuple(int(x) for x in got[0]) == wal.reference_checksum(data, big, s0, s1)


def test_an_intact_log_verifies_frame_by_frame(tmp_path) -> None:
    path = _wal_store(tmp_path)
    rep = wal.analyze(str(path))
    assert rep.header_ok and rep.frames > 30 and rep.replayed_frames == rep.frames and not rep.damaged
    with Memory(path) as mem:
        assert mem.count() == 31


def test_a_damaged_log_is_refused_and_repair_keeps_a_copy(tmp_path, capsys) -> None:
    path = _wal_store(tmp_path)
    _flip(path, frame=4)
    damaged_log = Path(str(path) + "-wal").read_bytes()
    # what SQLite alone does with it: silently rolls back to before the damage
    probe = tmp_path / "probe.db"
    shutil.copy(path, probe)
    shutil.copy(str(path) + "-wal", str(probe) + "-wal")
    raw = sqlite3.connect(probe)
    silently = raw.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
    raw.close()
    assert silently < 31
    rep = wal.analyze(str(path))
    assert rep.damaged and rep.first_bad_frame == 4 and rep.lost_commits >= 31 - silently - 1
    for ro in (False, True):
        with pytest.raises(CorruptData, match="write-ahead log .* damaged at frame 4"):
            Memory(path, read_only=ro)
    assert Path(str(path) + "-wal").read_bytes() == damaged_log  # refusing touched nothing
    assert cli_main(["check", "--path", str(path)]) == 2
    assert "hippo check --repair" in capsys.readouterr().err
    assert cli_main(["check", "--repair", "--path", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    (copy,) = [p for p in os.listdir(tmp_path) if ".damaged-" in p]
    assert (tmp_path / copy).read_bytes() == damaged_log
    assert report["wal"]["rebuilt"] and copy in report["wal"]["rebuilt"][0]
    with Memory(path) as mem:  # open again, as of the last intact transaction, and consistent
        assert mem.count() == silently
        assert mem.check()["ok"]


def test_a_torn_last_transaction_is_a_normal_crash(tmp_path) -> None:
    """Damage after the last commit frame (a write torn by the crash itself) is what recovery is for."""
    path = _wal_store(tmp_path)
    log = Path(str(path) + "-wal")
    rep = wal.analyze(str(path))
    page = rep.page_size
    data = log.read_bytes()
    # half of one more frame, as a crash in the middle of appending it would leave
    log.write_bytes(data + data[wal.WAL_HEADER:wal.WAL_HEADER + (wal.FRAME_HEADER + page) // 2])
    assert not wal.analyze(str(path)).damaged
    _flip(path, frame=rep.frames - 1)  # the last commit frame itself: indistinguishable from a torn write
    assert not wal.analyze(str(path)).damaged
    with Memory(path) as mem:
        assert mem.count() == 30


def test_damage_to_frames_already_in_the_file_loses_nothing(tmp_path) -> None:
    path = _wal_store(tmp_path)
    log = Path(str(path) + "-wal")
    kept = log.read_bytes()
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every frame copied into the file
    db.close()
    log.write_bytes(kept)  # the log as it was before the checkpoint reset it
    _flip(path, frame=4)
    assert not wal.analyze(str(path)).damaged
    with Memory(path) as mem:
        assert mem.count() == 31


def test_a_damaged_log_header_is_detected(tmp_path) -> None:
    path = _wal_store(tmp_path)
    log = Path(str(path) + "-wal")
    data = bytearray(log.read_bytes())
    data[25] ^= 0x01  # the header's checksum: SQLite would ignore the whole log
    log.write_bytes(bytes(data))
    rep = wal.analyze(str(path))
    assert not rep.header_ok and rep.damaged
    with pytest.raises(CorruptData, match="its header"):
        Memory(path)


def _raw_log(tmp_path: Path, commits: int, rows: int = 4, size: int = 900) -> Path:
    """A SQLite file whose last ``commits`` transactions are only in its -wal: the files are copied while the
    writing connection still holds them (no checkpoint ever ran)."""
    src, path = tmp_path / "src.db", tmp_path / "raw.db"
    db = sqlite3.connect(src, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.execute("CREATE TABLE t (x BLOB)")
    rng = random.Random(5)
    for _ in range(commits):
        db.execute("BEGIN")
        for _ in range(rows):
            db.execute("INSERT INTO t VALUES (?)", (rng.randbytes(size),))
        db.execute("COMMIT")
    shutil.copy(src, path)
    shutil.copy(str(src) + "-wal", str(path) + "-wal")
    db.close()
    return path


def _big_endian(path: Path) -> None:
    """Sign the log again with big-endian checksums (magic 0x377f0683), as a big-endian machine writes it."""
    log = Path(str(path) + "-wal")
    data = bytearray(log.read_bytes())
    page = int.from_bytes(data[8:12], "big")
    data[0:4] = (0x377F0683).to_bytes(4, "big")
    s = wal.reference_checksum(bytes(data[:24]), True)
    data[24:32] = s[0].to_bytes(4, "big") + s[1].to_bytes(4, "big")
    step = wal.FRAME_HEADER + page
    for at in range(wal.WAL_HEADER, len(data) - step + 1, step):
        s = wal.reference_checksum(bytes(data[at:at + 8] + data[at + wal.FRAME_HEADER:at + step]), True, *s)
        data[at + 16:at + 24] = s[0].to_bytes(4, "big") + s[1].to_bytes(4, "big")
    log.write_bytes(bytes(data))


def _reference_analysis(path: Path) -> dict:
    """What recovery keeps and drops, frame by frame with SQLite's checksum loop (the oracle of wal.analyze)."""
    data = Path(str(path) + "-wal").read_bytes()
    magic, version, page = (int.from_bytes(data[i:i + 4], "big") for i in (0, 4, 8))
    big = magic & 1 == 1
    header_ok = magic in (0x377F0682, 0x377F0683) and version == 3007000 and page in {2 ** k for k in range(9, 17)} \
        and wal.reference_checksum(data[:24], big) == (int.from_bytes(data[24:28], "big"),
                                                       int.from_bytes(data[28:32], "big"))
    salts = data[16:24]
    if not header_ok:
        with open(path, "rb") as f:
            page = int.from_bytes(f.read(100)[16:18], "big")
        salts = data[wal.WAL_HEADER + 8:wal.WAL_HEADER + 16]
    step = wal.FRAME_HEADER + page
    frames = [data[at:at + step] for at in range(wal.WAL_HEADER, len(data) - step + 1, step)]
    prev = (int.from_bytes(data[24:28], "big"), int.from_bytes(data[28:32], "big"))
    ok = []
    for fr in frames:
        stored = (int.from_bytes(fr[16:20], "big"), int.from_bytes(fr[20:24], "big"))
        ok.append(wal.reference_checksum(fr[:8] + fr[wal.FRAME_HEADER:], big, *prev) == stored
                  and fr[8:16] == salts and int.from_bytes(fr[:4], "big") > 0)
        prev = stored
    if not header_ok:
        ok[0] = False
    commit = [int.from_bytes(fr[4:8], "big") > 0 for fr in frames]
    prefix = next((i for i, good in enumerate(ok) if not good), len(frames)) if header_ok else 0
    replayed = max((i + 1 for i in range(prefix) if commit[i]), default=0)
    out = {"frames": len(frames), "replayed_frames": replayed, "first_bad_frame": None, "lost_commits": 0,
           "lost_pages": []}
    if prefix == len(frames):
        return out
    out["first_bad_frame"] = prefix
    later = [i for i in range(prefix, len(frames)) if commit[i] and ok[i]]
    out["lost_commits"] = len(later)
    newest = {int.from_bytes(frames[i][:4], "big"): i for i in range(replayed, later[-1] + 1 if later else 0)
              if ok[i]}
    with open(path, "rb") as f:
        for pg, i in sorted(newest.items()):
            f.seek((pg - 1) * page)
            if f.read(page) != frames[i][wal.FRAME_HEADER:]:
                out["lost_pages"].append(pg)
    return out


@pytest.mark.parametrize("big", [False, True])
def test_a_log_read_block_by_block_agrees_with_the_frame_by_frame_oracle(tmp_path, monkeypatch, big) -> None:
    """Damage before, at and after block boundaries (blocks of 3 frames), in little- and big-endian logs."""
    monkeypatch.setattr(wal, "BLOCK_FRAMES", 3, raising=False)
    base = _raw_log(tmp_path, commits=12)
    if big:
        _big_endian(base)
    frames = wal.analyze(str(base)).frames
    assert frames > 12 and _reference_analysis(base)["replayed_frames"] == frames
    cases = [None, 0, 2, 3, 5, 6, frames // 2, frames - 2, frames - 1, "header"]
    seen_damage = False
    for k, where in enumerate(cases):
        path = tmp_path / f"case{k}.db"
        shutil.copy(base, path)
        shutil.copy(str(base) + "-wal", str(path) + "-wal")
        if where == "header":
            log = Path(str(path) + "-wal")
            data = bytearray(log.read_bytes())
            data[25] ^= 0x01
            log.write_bytes(bytes(data))
        elif where is not None:
            _flip(path, frame=where)
        rep = wal.analyze(str(path))
        want = _reference_analysis(path)
        got = {key: getattr(rep, key) for key in want}
        assert got == want, where
        assert rep.header_ok == (where != "header")
        seen_damage |= rep.damaged
    assert seen_damage


def test_reading_a_long_log_holds_a_few_blocks_not_the_log(tmp_path) -> None:
    """Every open reads the -wal; a log of tens of megabytes (a large import, a process killed before its close)
    was read whole, with several 64-bit copies of it, so the open held about nine times the log's size."""
    import tracemalloc

    path = _raw_log(tmp_path, commits=400, rows=10, size=3000)  # about 16 MB of log
    size = os.path.getsize(str(path) + "-wal")
    assert size > 12 * 2 ** 20
    tracemalloc.start()
    try:
        rep = wal.analyze(str(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert rep.frames == (size - wal.WAL_HEADER) // (wal.FRAME_HEADER + rep.page_size) and not rep.damaged
    assert rep.replayed_frames == rep.frames
    assert peak < size / 4  # a few blocks of frames (4 MB here), whatever the log's size


# ------------------------------------------------------------------------------------------ schema upgrade
ALPHA = ([f"Ann said the harbor ferry {i} leaves at nine; café ☕ and 東京 note {i}" for i in range(30)]
         + ["ha" * 300, "the unsealed tail message about the lighthouse", "another tail one, naïve résumé"])
BETA = [f"beta message {k} about gardening and tomatoes" for k in range(5)]


def _v2(tmp_path: Path) -> Path:
    path = tmp_path / "v2.db"
    db = sqlite3.connect(path)
    db.executescript((HERE / "data" / "store_v2.sql").read_text(encoding="utf-8"))
    db.close()
    return path


def test_a_schema_2_store_opens_and_upgrades(tmp_path) -> None:
    path = _v2(tmp_path)
    with Memory(path, namespace="alpha") as mem:
        assert mem._rt.store.version == SCHEMA_VERSION
        assert [it.text for it in mem.list()] == ALPHA
        assert [it.text for it in mem.using("beta").list()] == BETA
        assert mem.check()["ok"]
        mem.add("written after the upgrade")
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    assert db.execute("SELECT COUNT(*) FROM tail WHERE checksum IS NULL").fetchone()[0] == 0
    assert db.execute("SELECT COUNT(*) FROM chunks WHERE checksum IS NULL").fetchone()[0] == 0
    db.close()
    with Memory(path, namespace="alpha") as mem:
        assert [it.text for it in mem.list()] == ALPHA + ["written after the upgrade"]


def test_an_upgraded_store_detects_later_damage(tmp_path) -> None:
    path = _v2(tmp_path)
    Memory(path).close()
    _sql(path, "UPDATE messages SET seq = -1 WHERE seq = 3 AND namespace = 'alpha'",
         "UPDATE messages SET seq = 3 WHERE seq = 4 AND namespace = 'alpha'",
         "UPDATE messages SET seq = 4 WHERE seq = -1 AND namespace = 'alpha'")
    with Memory(path, namespace="alpha") as mem:
        with pytest.raises(CorruptData, match="checksum"):
            mem.list()


def test_an_unknown_schema_version_is_refused(tmp_path) -> None:
    path = _v2(tmp_path)
    _sql(path, f"UPDATE meta SET value = '{SCHEMA_VERSION + 1}' WHERE key = 'schema_version'")
    with pytest.raises(CorruptData, match=f"schema version {SCHEMA_VERSION + 1}"):
        Memory(path)


def test_random_damage_is_caught_by_check_or_by_reads(tmp_path) -> None:
    """Byte edits anywhere in the token and chunk columns: every read of the namespace raises CorruptData or gives
    back exactly the added text, and check agrees with the reads."""
    base = _store(tmp_path)
    rng = random.Random(7)
    for k in range(12):
        path = tmp_path / f"r{k}.db"
        shutil.copy(base, path)
        db = sqlite3.connect(path)
        table, col = rng.choice([("tail", "tokens"), ("chunks", "blob"), ("tail", "checksum"), ("chunks", "checksum")])
        rid, blob = rng.choice(db.execute(f"SELECT id, {col} FROM {table}").fetchall())
        blob = bytearray(blob)
        blob[rng.randrange(len(blob))] ^= 1 << rng.randrange(8)
        db.execute(f"UPDATE {table} SET {col} = ? WHERE id = ?", (bytes(blob), rid))
        db.commit()
        db.close()
        with Memory(path) as mem:
            report = mem.check()
            try:
                texts = [it.text for it in mem.list()] + [it.text for it in mem.using("beta").list()]
            except CorruptData:
                assert not report["ok"]
                continue
            assert texts == TEXTS + [f"beta {k} gardening" for k in range(5)], (table, col)
            assert report["ok"], report["damaged"]


def test_a_namespace_column_that_is_not_text_is_reported_not_raised(tmp_path) -> None:
    path = tmp_path / "names.db"
    with Memory(path) as mem:
        mem.add_many([{"text": f"note {i}"} for i in range(5)])
    db = sqlite3.connect(path)
    db.execute("UPDATE messages SET namespace = CAST(x'64656661756cff' AS TEXT) WHERE id = 3")  # 'defaul' + 0xff
    db.commit()
    db.close()
    with Memory(path) as mem:
        report = mem.check()
    assert not report["ok"] and "file" in report["damaged"]
    assert any("namespaces could not be listed" in d and "not UTF-8" in d for d in report["file"]["damaged"])


def test_repair_of_a_namespace_rebuilt_in_the_background_returns(tmp_path) -> None:
    # a namespace past SYNC_ROWS is rebuilt in a background thread that reads under the handle's lock: repair waits
    # for it without holding that lock (it held it, and waited forever); in a process of its own, so that a repair
    # that never returns fails the test instead of hanging it
    code = ("import sys; from hippo import Memory; from hippo.engine import state; state.SYNC_ROWS = 16; "
            "texts = sys.argv[2:]; m = Memory(sys.argv[1]); "
            "m.add_many([{'text': t, 'speaker': 'Ann', 'session_id': f's{i // 10}'} for i, t in enumerate(texts)]); "
            "r = m.check(repair=True); assert r['ok'], r['damaged']; "
            "assert r['namespaces']['default']['index']['verified'] == len(texts); "
            "assert [it.text for it in m.list()] == texts and m.search('ferry island', k=3); m.close()")
    try:
        subprocess.run([sys.executable, "-c", code, str(tmp_path / "big.db"), *TEXTS], check=True, timeout=120,
                       env=ENV)
    except subprocess.TimeoutExpired:
        pytest.fail("check(repair=True) did not return")

def test_repairs_in_a_loop_let_another_thread_write_and_recall(tmp_path) -> None:
    # one thread repairs again and again; another thread's calls on the same handle go in between its steps (they
    # waited for every repair, and a repair started right after the last one took the lock first: never)
    import threading

    with Memory(tmp_path / "c.db") as mem:
        mem.add_many([{"text": t, "speaker": "Ann", "session_id": f"s{i // 10}"} for i, t in enumerate(TEXTS)])
        started, done = threading.Event(), threading.Event()
        rounds: list[dict] = []

        def repair() -> None:
            while not done.is_set() and len(rounds) < 200:
                rounds.append(mem.check(repair=True))
                started.set()

        t = threading.Thread(target=repair, daemon=True)
        t.start()
        started.wait(120)  # the repairs are running
        added = [mem.add(f"note {k} about the ferry timetable", speaker="Bob").id for k in range(5)]
        recalled = mem.recall("ferry timetable", budget_tokens=400)
        done.set()
        t.join(120)
        assert not t.is_alive()
        assert len(rounds) < 200, "the other thread's calls waited for every repair"
        assert all(r["ok"] for r in rounds)
        assert set(added) <= {m.id for m in recalled.messages} | {m.id for m in mem.list()}
        assert [it.text for it in mem.list()] == TEXTS + [f"note {k} about the ferry timetable" for k in range(5)]
        assert mem.check()["ok"]


def test_a_namespace_another_process_keeps_appending_to_checks_clean(tmp_path, monkeypatch) -> None:
    """Another handle (another process) appends after every read of the rows the check compares with, as a busy
    app server does: the co-index is compared with them all the same (those appends are at its end), the check is
    clean and still finds a co-index that lost a message."""
    from hippo.engine import integrity

    path = _store(tmp_path)
    real = integrity._rows_at
    with Memory(path) as mem, Memory(path) as other:
        added = []

        def rows_then_an_append(store, name):
            got = real(store, name)
            if name == "default":
                added.append(other.add(f"appended while the check ran {len(added)}").id)
            return got

        monkeypatch.setattr(integrity, "_rows_at", rows_then_an_append)
        mem.count()
        report = mem.check()
        assert report["ok"], report["damaged"]
        section = report["namespaces"]["default"]["index"]
        assert section["damaged"] == [] and section["verified"] == 50 + len(added) - 1
        assert [it.text for it in mem.list()] == TEXTS + [f"appended while the check ran {k}"
                                                          for k in range(len(added))]

        idx = mem.engine.state().index
        idx.rebuild_without([int(idx.ids.view[7])])  # the process's co-index loses a message the store has
        section = mem.check()["namespaces"]["default"]["index"]
        assert section["damaged"] and section["rebuilt"]
        assert [it.text for it in mem.list()][:50] == TEXTS

"""``hippo bench reliability``: crash, concurrency and hostile-input campaigns, each reduced to figures.

    hippo bench reliability [--quick] [--kill-points N] [--seed S] [--out bench_results/reliability.json]

* **crash**: a writer process runs a random mix of ``add_many``, ``add``, ``flush`` (sealing), ``delete`` and
  ``forget`` on one store file (small ``seal_tokens``, so automatic sealing and chunk merges happen all the
  time) and is SIGKILLed at a random moment. After every kill the store is reopened and checked against the
  writer's own log: every acknowledged message present and byte-identical (text and fields), no duplicates, no
  message that was never written, an interrupted ``add_many`` / ``delete`` / ``forget`` either complete or
  absent, the co-index agreeing with the store (counts, and every message found by an exact quote through
  ``search``), ``PRAGMA integrity_check`` clean, no exception on open.
* **concurrency**: reader threads against one writer thread, several writer processes plus a reader process
  on one file (bounded waits: ``StoreBusy`` is retried, a hang is a failure), async callers on one event loop;
  the final contents and query results equal those of a serial run.
* **fuzz**: the catalogue of bad inputs (see :data:`HOSTILE_CASES`) through every ``Memory`` entry point, a
  random operation sequence checked against a Python model, byte-level mutations of every serialized form
  (wavelet matrix, dynamic wavelet matrix, binary index, chunk blobs in a store file, export files).

Every campaign counts what it ran and lists each failure; the report's ``failures`` must be zero.
The writer's log is written with one ``os.write`` per line to an ``O_APPEND`` file, so a line is either
entirely there or not at all after a SIGKILL.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from hippo_bench._common import machine_info, markdown_table

# --------------------------------------------------------------------------------------------------- texts

_WORDS = (
    "apple river garden winter coffee train ticket guitar lesson doctor museum piano kitchen bicycle market "
    "island letter mountain planet camera violin window forest harbor castle recipe stadium library ocean "
    "festival painting sister brother neighbour cousin puppy kitten teacher student lawyer pilot dentist "
    "birthday wedding holiday weekend morning evening yesterday tomorrow airport hospital bakery theater "
    "chess tennis soccer marathon yoga pottery knitting climbing sailing hiking camping fishing"
).split()
_EXTRAS = (
    "café", "naïve façade", "東京で会いましょう", "🐍 python", "Ελληνικά γράμματα", "mañana", "tab\there",
    "two\nlines", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "Zürich – Genève", "ﬁnal ligature", "½ cup", "«quoted»", "עברית", "🎉🎉",
)
_MARK_ALPHABET = "bcdfghjkmnpqrstvwxz"


def marker(n: int) -> str:
    """A unique, pronounceable-free word for message ``n`` ("zq" + base-19 digits): rare in any vocabulary."""
    digits = []
    n += 19 * 19
    while n:
        n, r = divmod(n, len(_MARK_ALPHABET))
        digits.append(_MARK_ALPHABET[r])
    return "zq" + "".join(reversed(digits))


def make_text(rng: random.Random, n: int) -> str:
    """A message holding a unique marker word, some common words and sometimes non-ASCII text."""
    words = [rng.choice(_WORDS) for _ in range(rng.randint(3, 14))]
    words.insert(rng.randrange(len(words) + 1), marker(n))
    if rng.random() < 0.35:
        words.insert(rng.randrange(len(words) + 1), rng.choice(_EXTRAS))
    text = " ".join(words)
    return text[0].upper() + text[1:] + rng.choice((".", "!", "?", "", " :)"))


def make_item(rng: random.Random, n: int) -> dict[str, Any]:
    item: dict[str, Any] = {"text": make_text(rng, n), "speaker": rng.choice(("Ann", "Bob", "Chloé", None)),
                            "session_id": f"s{rng.randint(0, 5)}", "metadata": {"n": n, "tag": rng.choice("xyz")}}
    if rng.random() < 0.7:
        item["timestamp"] = 1_600_000_000 + rng.randint(0, 10**8) + rng.choice((0.0, 0.25, 0.5))
    if rng.random() < 0.2:
        item["role"] = "assistant"
    return item


def fields_of(item: Any) -> dict[str, Any]:
    """The comparable fields of a stored ``MemoryItem`` (timestamp as epoch seconds)."""
    return {"text": item.text, "speaker": item.speaker, "role": item.role, "session_id": item.session_id,
            "metadata": dict(item.metadata),
            "timestamp": None if item.timestamp is None else item.timestamp.timestamp()}


def expected_fields(item: dict[str, Any]) -> dict[str, Any]:
    return {"text": item["text"], "speaker": item.get("speaker"), "role": item.get("role", "user"),
            "session_id": item.get("session_id"), "metadata": dict(item.get("metadata") or {}),
            "timestamp": None if item.get("timestamp") is None else float(item["timestamp"])}


@dataclass
class Campaign:
    name: str
    counts: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def add(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    def fail(self, message: str) -> None:
        self.failures.append(message)

    def check(self, ok: bool, message: str) -> bool:
        if not ok:
            self.fail(message)
        return ok

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "counts": dict(self.counts), "failures": list(self.failures),
                "seconds": round(self.seconds, 3)}


# ----------------------------------------------------------------------------------------- crash campaign

CRASH_CONFIG = {"seal_tokens": 160, "busy_timeout_s": 5.0}


def _log(fd: int, record: dict[str, Any]) -> None:
    os.write(fd, (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))


def crash_writer(path: str, log_path: str, seed: int, first_n: int, ready_fd: int | None = None,
                 max_ops: int = 400) -> None:
    """Body of a writer process: a random mix of writes on ``path``, each logged before ("B") and after ("A").

    Never returns normally in the campaign: the parent SIGKILLs it, or it exits after ``max_ops``.
    """
    from hippo import Memory

    rng = random.Random(seed)
    fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    _log(fd, {"op": "open", "seed": seed})
    mem = Memory(path, config=CRASH_CONFIG)
    live = [it.id for it in mem.list()]
    _log(fd, {"op": "ready", "live": len(live)})
    if ready_fd is not None:
        os.write(ready_fd, b"R")
    n = first_n
    for k in range(max_ops):
        r = rng.random()
        if r < 0.55 or not live:
            batch = [make_item(rng, n + j) for j in range(rng.randint(1, 16))]
            n += len(batch)
            _log(fd, {"op": "add_many", "k": k, "items": batch})
            ids = [it.id for it in mem.add_many(batch)]
            live.extend(ids)
            _log(fd, {"ack": k, "ids": ids})
        elif r < 0.65:
            item = make_item(rng, n)
            n += 1
            _log(fd, {"op": "add_many", "k": k, "items": [item]})
            it = mem.add(**item)
            live.append(it.id)
            _log(fd, {"ack": k, "ids": [it.id]})
        elif r < 0.77:
            _log(fd, {"op": "flush", "k": k})
            mem.flush()
            _log(fd, {"ack": k})
        elif r < 0.95:
            dead = rng.sample(live, min(len(live), rng.randint(1, 6)))
            _log(fd, {"op": "delete", "k": k, "ids": dead})
            gone = mem.delete(dead)
            live = [i for i in live if i not in set(dead)]
            _log(fd, {"ack": k, "deleted": gone})
        else:
            tag = rng.choice("xyz")
            session = f"s{rng.randint(0, 5)}"
            _log(fd, {"op": "forget", "k": k, "tag": tag, "session_id": session})
            gone = mem.forget({"tag": tag, "session_id": session})
            _log(fd, {"ack": k, "deleted": gone})
            live = [it.id for it in mem.list()]
    mem.close()
    _log(fd, {"op": "done"})


@dataclass
class _Model:
    """What the store must hold: acknowledged messages by text, plus the one operation in flight (if any)."""

    by_text: dict[str, dict[str, Any]] = field(default_factory=dict)   # text -> expected fields
    id_of: dict[str, int] = field(default_factory=dict)                 # text -> id (once known)
    next_n: int = 0


def _replay(model: _Model, log_path: str, camp: Campaign) -> dict[str, Any] | None:
    """Apply the acknowledged operations of one writer's log; returns the operation in flight, if any."""
    try:
        with open(log_path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:  # killed right after the fork, before it wrote anything
        return {"op": "open", "k": None}
    pending: dict[str, Any] | None = None
    for line in lines:
        rec = json.loads(line)  # a torn line would be a failure of the log itself, not of hippo
        if "ack" in rec:
            assert pending is not None and rec["ack"] == pending["k"], (rec, pending)
            if pending["op"] == "add_many":
                for item, i in zip(pending["items"], rec["ids"]):
                    model.by_text[item["text"]] = expected_fields(item)
                    model.id_of[item["text"]] = i
            elif pending["op"] == "delete":
                dead = set(pending["ids"])
                for text in [t for t, i in model.id_of.items() if i in dead]:
                    model.by_text.pop(text, None)
                    model.id_of.pop(text, None)
            elif pending["op"] == "forget":
                for text in [t for t, fl in model.by_text.items()
                             if fl["metadata"].get("tag") == pending["tag"]
                             and fl["session_id"] == pending["session_id"]]:
                    model.by_text.pop(text, None)
                    model.id_of.pop(text, None)
            camp.add("acknowledged_ops")
            pending = None
        elif rec.get("op") in ("add_many", "delete", "flush", "forget"):
            pending = rec
            if rec["op"] == "add_many":
                model.next_n = max(model.next_n, max(it["metadata"]["n"] for it in rec["items"]) + 1)
        elif rec.get("op") == "open":
            pending = {"op": "open", "k": None}
        elif rec.get("op") in ("ready", "done"):
            pending = None
    return pending


def verify_store(path: str, model: _Model, in_flight: dict[str, Any] | None, camp: Campaign, *,
                 quote_sample: int | None, rng: random.Random, full: bool = False,
                 config: dict[str, Any] | None = None) -> None:
    """Reopen ``path`` and check it against ``model`` (see the module docstring); failures go to ``camp``."""
    from hippo import Memory

    where = f"after kill {camp.counts.get('kill_points', 0)}"
    try:
        mem = Memory(path, config=config or CRASH_CONFIG)
    except Exception as exc:  # noqa: BLE001 - any exception on open is the failure being looked for
        camp.fail(f"{where}: reopening raised {type(exc).__name__}: {exc}")
        return
    try:
        items = mem.list()
        stored: dict[str, Any] = {}
        for it in items:
            if it.text in stored:
                camp.fail(f"{where}: duplicate message {it.text!r} (ids {stored[it.text].id} and {it.id})")
            stored[it.text] = it
        camp.check(len({it.id for it in items}) == len(items), f"{where}: duplicate ids in list()")
        camp.check(mem.count() == len(items), f"{where}: index holds {mem.count()} messages, store {len(items)}")
        # Interrupted operations are all-or-nothing.
        flight_texts: set[str] = set()
        if in_flight and in_flight["op"] == "add_many":
            texts = [it["text"] for it in in_flight["items"]]
            present = [t for t in texts if t in stored]
            camp.check(len(present) in (0, len(texts)),
                       f"{where}: interrupted add_many left {len(present)} of {len(texts)} messages")
            camp.add("interrupted_add_many")
            if len(present) == len(texts):
                camp.add("interrupted_add_many_committed")
                for item in in_flight["items"]:
                    model.by_text[item["text"]] = expected_fields(item)
                    model.id_of[item["text"]] = stored[item["text"]].id
            flight_texts = set(texts)
        elif in_flight and in_flight["op"] in ("delete", "forget"):
            camp.add(f"interrupted_{in_flight['op']}")
            if in_flight["op"] == "delete":
                dead = set(in_flight["ids"])
                victims = [t for t, i in model.id_of.items() if i in dead]
            else:
                victims = [t for t, fl in model.by_text.items() if fl["metadata"].get("tag") == in_flight["tag"]
                           and fl["session_id"] == in_flight["session_id"]]
            still = [t for t in victims if t in stored]
            camp.check(len(still) in (0, len(victims)),
                       f"{where}: interrupted {in_flight['op']} removed {len(victims) - len(still)} of {len(victims)}")
            if not still:
                for t in victims:
                    model.by_text.pop(t, None)
                    model.id_of.pop(t, None)
        elif in_flight:
            camp.add(f"interrupted_{in_flight['op']}")
        # Every acknowledged message is there, byte-identical, with its fields.
        for text, want in model.by_text.items():
            it = stored.get(text)
            if it is None:
                camp.fail(f"{where}: acknowledged message lost: {text!r}")
                continue
            got = fields_of(it)
            if got != want or it.text.encode("utf-8") != text.encode("utf-8"):
                camp.fail(f"{where}: message {it.id} differs: stored {got!r}, written {want!r}")
            if model.id_of.get(text, it.id) != it.id:
                camp.fail(f"{where}: message {text!r} changed id {model.id_of[text]} -> {it.id}")
            camp.add("messages_verified")
        for text in stored:
            if text not in model.by_text and text not in flight_texts:
                camp.fail(f"{where}: message that was never written (or was deleted) is present: {text!r}")
        # The co-index agrees with the store: exact quotes find their message, get() returns it verbatim.
        texts = list(model.by_text)
        if quote_sample is not None and len(texts) > quote_sample:
            texts = rng.sample(texts, quote_sample) + [t for t in flight_texts if t in model.by_text]
        for text in texts:
            it = stored.get(text)
            if it is None:
                continue
            hits = mem.search(text, k=10)
            if not any(h.id == it.id and h.text == text for h in hits):
                camp.fail(f"{where}: exact quote of message {it.id} not found by search: {text!r}")
            camp.add("exact_quote_searches")
        if full:
            # Every message's own rare word finds it, and get() returns it verbatim.
            for text, it in stored.items():
                hits = mem.search(marker(it.metadata["n"]), k=5)
                if not any(h.id == it.id for h in hits):
                    camp.fail(f"{where}: the marker word of message {it.id} does not find it: {text!r}")
                if mem.get(it.id).text != text:
                    camp.fail(f"{where}: get({it.id}) does not return the stored text")
                camp.add("marker_searches")
    except Exception as exc:  # noqa: BLE001
        camp.fail(f"{where}: checking the reopened store raised {type(exc).__name__}: {exc}\n"
                  f"{traceback.format_exc(limit=4)}")
    finally:
        mem.close()
    db = sqlite3.connect(path)
    try:
        ok = db.execute("PRAGMA integrity_check").fetchone()[0]
        camp.check(ok == "ok", f"{where}: PRAGMA integrity_check: {ok}")
        camp.add("integrity_checks")
    finally:
        db.close()


def crash_campaign(workdir: str | os.PathLike, *, kill_points: int = 50, seed: int = 0, max_delay: float = 0.25,
                   rounds_per_store: int = 25, quote_sample: int | None = 40) -> Campaign:
    """SIGKILL a forked writer ``kill_points`` times; verify the store after each kill.

    Must run in a process without other threads (it forks): the CLI and the tests call it in a fresh process.
    """
    camp = Campaign("crash")
    t0 = time.perf_counter()
    rng = random.Random(seed)
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    from hippo.text import tokenizer
    tokenizer.encoding()  # loaded once here, inherited by every forked writer
    model = _Model()
    path = ""
    kills = 0
    attempt = 0
    while kills < kill_points:
        if attempt % rounds_per_store == 0:
            path = str(workdir / f"crash-{attempt // rounds_per_store}.db")
            model = _Model()
        log_path = str(workdir / f"writer-{attempt}.log")
        r_fd, w_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # the writer
            code = 0
            try:
                os.close(r_fd)
                crash_writer(path, log_path, seed * 100_003 + attempt, model.next_n, ready_fd=w_fd)
            except BaseException:  # noqa: BLE001
                traceback.print_exc()
                code = 3
            os._exit(code)
        os.close(w_fd)
        attempt += 1
        # Most kills land while the writer works; some while it opens and replays the store.
        if rng.random() < 0.85:
            _wait_readable(r_fd, 30.0)
        time.sleep(rng.uniform(0.0, max_delay))
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _, status = os.waitpid(pid, 0)
        os.close(r_fd)
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
            kills += 1
            camp.add("kill_points")
        elif os.WEXITSTATUS(status) != 0:
            camp.fail(f"writer {attempt} failed by itself with exit status {os.WEXITSTATUS(status)}")
        else:
            camp.add("writer_runs_completed")
        in_flight = _replay(model, log_path, camp)
        camp.add(f"killed_during_{in_flight['op'] if in_flight else 'idle'}")
        final = kills >= kill_points or attempt % rounds_per_store == 0
        verify_store(path, model, in_flight, camp, quote_sample=quote_sample, rng=rng, full=final)
        if len(camp.failures) > 20:
            camp.fail("stopping early: too many failures")
            break
    camp.seconds = time.perf_counter() - t0
    return camp


def _wait_readable(fd: int, timeout: float) -> None:
    import select

    select.select([fd], [], [], timeout)


# ------------------------------------------------------------------------------------ concurrency campaign

def concurrency_campaign(workdir: str | os.PathLike, *, messages: int = 400, readers: int = 4,
                         processes: int = 3, seed: int = 1, timeout_s: float = 120.0) -> Campaign:
    camp = Campaign("concurrency")
    t0 = time.perf_counter()
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    _threads_vs_serial(workdir / "threads.db", camp, messages=messages, readers=readers, seed=seed)
    _processes(workdir / "procs.db", camp, processes=processes, per_process=max(20, messages // processes),
               seed=seed, timeout_s=timeout_s)
    _async_callers(camp, messages=max(20, messages // 4), seed=seed)
    camp.seconds = time.perf_counter() - t0
    return camp


def _threads_vs_serial(path: Path, camp: Campaign, *, messages: int, readers: int, seed: int) -> None:
    from hippo import HippoError, Memory

    rng = random.Random(seed)
    items = [make_item(rng, k) for k in range(messages)]
    known = {it["text"] for it in items}
    queries = [it["text"] for it in rng.sample(items, min(25, len(items)))]
    queries += [" ".join(rng.sample(_WORDS, 3)) for _ in range(10)]
    cfg = {"seal_tokens": 512}
    done = threading.Event()
    errors: list[str] = []
    ops = [0] * readers

    with Memory(path, config=cfg) as mem:
        def reader(slot: int) -> None:
            r = random.Random(seed * 31 + slot)
            try:
                while not done.is_set():
                    choice = r.random()
                    if choice < 0.5:
                        hits = mem.search(r.choice(queries), k=5)
                        for h in hits:
                            if h.text not in known:
                                errors.append(f"torn read: search returned unknown text {h.text!r}")
                    elif choice < 0.7:
                        rec = mem.recall(r.choice(queries), budget_tokens=300)
                        if any(m.text not in known for m in rec.messages):
                            errors.append("torn read: recall returned a text never written")
                    elif choice < 0.85:
                        listed = mem.list(limit=50, offset=r.randint(0, 50))
                        if any(m.text not in known for m in listed):
                            errors.append("torn read: list returned a text never written")
                    else:
                        n = mem.count()
                        if n:
                            some = mem.list(limit=1, offset=r.randrange(n))
                            for m in some:
                                try:
                                    if mem.get(m.id).text != m.text:
                                        errors.append(f"get({m.id}) differs from list()")
                                except HippoError as exc:
                                    errors.append(f"get({m.id}) raised {exc!r}")
                    ops[slot] += 1
            except Exception as exc:  # noqa: BLE001
                errors.append(f"reader {slot} raised {type(exc).__name__}: {exc}")

        threads = [threading.Thread(target=reader, args=(i,), daemon=True) for i in range(readers)]
        for t in threads:
            t.start()
        try:
            pos = 0
            while pos < len(items):
                step = rng.randint(1, 25)
                mem.add_many(items[pos:pos + step])
                camp.add("concurrent_ops")
                pos += step
                # let the readers interleave with every write, however fast or slow this machine is
                target, deadline = sum(ops) + readers, time.monotonic() + 2.0
                while sum(ops) < target and time.monotonic() < deadline and not errors:
                    time.sleep(0.0005)
                if rng.random() < 0.1:
                    mem.flush()
                    camp.add("concurrent_ops")
        except Exception as exc:  # noqa: BLE001
            errors.append(f"writer raised {type(exc).__name__}: {exc}")
        finally:
            done.set()
            for t in threads:
                t.join(60)
                camp.check(not t.is_alive(), "a reader thread hung")
        camp.add("concurrent_ops", sum(ops))
        for e in errors[:10]:
            camp.fail(f"threads: {e}")
        threaded = [(h.text, round(h.score, 12)) for q in queries for h in mem.search(q, k=5)]
        threaded_list = [fields_of(it) for it in mem.list()]
    with Memory(None, config=cfg) as serial:
        serial.add_many(items)
        want = [(h.text, round(h.score, 12)) for q in queries for h in serial.search(q, k=5)]
        want_list = [fields_of(it) for it in serial.list()]
    camp.check(threaded_list == want_list, "threads: stored messages differ from a serial run")
    camp.check(threaded == want, "threads: search results differ from a serial run")
    camp.add("serial_comparisons", len(queries) + 1)


_PROC_SCRIPT = r"""
import json, random, sys, time
from hippo import Memory, StoreBusy
from hippo_bench.reliability import make_item
path, role, slot, count, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rng = random.Random(seed * 1000 + slot)
busy = ops = 0
while True:
    try:
        mem = Memory(path, config={"busy_timeout_s": 0.5, "seal_tokens": 48})
        break
    except StoreBusy:
        busy += 1
if role == "writer":
    items = [make_item(rng, slot * 1_000_000 + k) for k in range(count)]
    pos = 0
    while pos < len(items):
        step = rng.randint(1, 12)
        try:
            mem.add_many(items[pos:pos + step])
            pos += step
            ops += 1
        except StoreBusy:
            busy += 1
            time.sleep(rng.uniform(0, 0.05))
    mem.close()
else:
    deadline = time.time() + float(count)
    while time.time() < deadline:
        try:
            mem.search("garden coffee " + rng.choice(["apple", "river", "zqbb"]), k=5)
            mem.recall("train ticket", budget_tokens=200)
            ops += 2
        except StoreBusy:
            busy += 1
    mem.close()
print(json.dumps({"ops": ops, "busy": busy}))
"""


def _processes(path: Path, camp: Campaign, *, processes: int, per_process: int, seed: int,
               timeout_s: float) -> None:
    from hippo import Memory

    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    procs = [subprocess.Popen([sys.executable, "-c", _PROC_SCRIPT, str(path), "writer", str(i), str(per_process),
                               str(seed)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for i in range(processes)]
    procs.append(subprocess.Popen([sys.executable, "-c", _PROC_SCRIPT, str(path), "reader", "99", "3", str(seed)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env))
    deadline = time.monotonic() + timeout_s
    for p in procs:
        try:
            out, err = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            camp.fail(f"processes: a process hung past {timeout_s} s (pid {p.pid})")
            continue
        if p.returncode != 0:
            camp.fail(f"processes: a process exited {p.returncode}: {err.strip()[-600:]}")
            continue
        res = json.loads(out.strip().splitlines()[-1])
        camp.add("concurrent_ops", res["ops"])
        camp.add("store_busy_retries", res["busy"])
    expected: dict[str, dict[str, Any]] = {}
    for i in range(processes):
        rng = random.Random(seed * 1000 + i)
        for k in range(per_process):
            it = make_item(rng, i * 1_000_000 + k)
            expected[it["text"]] = expected_fields(it)
    with Memory(path) as mem:
        items = mem.list()
        got = {it.text: fields_of(it) for it in items}
        camp.check(len(items) == len(got), "processes: duplicate messages")
        camp.check(got == expected, f"processes: {len(set(expected) - set(got))} messages lost, "
                                    f"{len(set(got) - set(expected))} unexpected")
        camp.check(mem.count() == len(items), "processes: index count differs from the store")
        for it in items[:: max(1, len(items) // 50)]:
            if not any(h.id == it.id for h in mem.search(it.text, k=5)):
                camp.fail(f"processes: exact quote of {it.id} not found")
            camp.add("messages_verified")


def _async_callers(camp: Campaign, *, messages: int, seed: int) -> None:
    from hippo import Memory

    rng = random.Random(seed + 7)
    items = [make_item(rng, 5_000_000 + k) for k in range(messages)]
    probes = [it["text"] for it in items[:: max(1, messages // 10)]]

    async def main(mem) -> list[Any]:
        adds = [mem.aadd(**it) for it in items]
        reads = [mem.asearch(rng.choice(_WORDS), k=3) for _ in range(messages // 2)]
        reads += [mem.arecall(rng.choice(_WORDS), budget_tokens=100) for _ in range(messages // 4)]
        results = await asyncio.gather(*adds, *reads, return_exceptions=True)
        camp.add("concurrent_ops", len(results))
        return results

    with Memory(None) as mem:
        results = asyncio.run(main(mem))
        for r in results:
            if isinstance(r, BaseException):
                camp.fail(f"async: a call raised {type(r).__name__}: {r}")
        stored = {it.text: fields_of(it) for it in mem.list()}
        camp.check(stored == {it["text"]: expected_fields(it) for it in items}, "async: stored messages differ")
        got = {p: [h.text for h in mem.search(p, k=1)] for p in probes}
    with Memory(None) as serial:
        for it in items:
            serial.add(**it)
        want = {p: [h.text for h in serial.search(p, k=1)] for p in probes}
    camp.check(got == want, "async: exact-quote search differs from a serial run")
    camp.add("serial_comparisons", len(probes))


# ------------------------------------------------------------------------------------- hostile catalogue

@dataclass(frozen=True)
class Case:
    """One bad input through one entry point: ``call(mem, tmp)`` must raise ``error`` naming ``names``."""

    label: str
    call: Callable[[Any, Path], Any]
    error: str           # class name in hippo.base.errors
    names: str           # a word the message must contain (the argument's name)


def _huge_text() -> str:
    return "a" * (10 * 1024 * 1024 + 1)


def _cases() -> list[Case]:
    nan, inf = float("nan"), float("inf")
    C = Case
    out = [
        # text
        C("add text empty", lambda m, t: m.add(""), "InvalidInput", "text"),
        C("add text whitespace", lambda m, t: m.add(" \n\t "), "InvalidInput", "text"),
        C("add text 10 MB", lambda m, t: m.add(_huge_text()), "InvalidInput", "text"),
        C("add text lone surrogate", lambda m, t: m.add("abc \ud800 def"), "InvalidInput", "text"),
        C("add text low surrogate", lambda m, t: m.add("x\udfffy"), "InvalidInput", "text"),
        C("add text NUL", lambda m, t: m.add("a\x00b"), "InvalidInput", "text"),
        C("add text escape", lambda m, t: m.add("\x1b[31mred"), "InvalidInput", "text"),
        C("add text DEL", lambda m, t: m.add("a\x7f"), "InvalidInput", "text"),
        C("add text bytes", lambda m, t: m.add(b"hello"), "InvalidInput", "text"),
        C("add text int", lambda m, t: m.add(42), "InvalidInput", "text"),
        C("add text None", lambda m, t: m.add(None), "InvalidInput", "text"),
        C("add text list", lambda m, t: m.add(["a"]), "InvalidInput", "text"),
        # other add fields
        C("add role unknown", lambda m, t: m.add("hi", role="admin"), "InvalidInput", "role"),
        C("add role int", lambda m, t: m.add("hi", role=3), "InvalidInput", "role"),
        C("add speaker int", lambda m, t: m.add("hi", speaker=5), "InvalidInput", "speaker"),
        C("add speaker surrogate", lambda m, t: m.add("hi", speaker="A\ud800"), "InvalidInput", "speaker"),
        C("add speaker control", lambda m, t: m.add("hi", speaker="A\x00"), "InvalidInput", "speaker"),
        C("add speaker huge", lambda m, t: m.add("hi", speaker="A" * 100_000), "InvalidInput", "speaker"),
        C("add session_id bytes", lambda m, t: m.add("hi", session_id=b"s"), "InvalidInput", "session_id"),
        C("add metadata list", lambda m, t: m.add("hi", metadata=[1]), "InvalidInput", "metadata"),
        C("add metadata NaN", lambda m, t: m.add("hi", metadata={"x": nan}), "InvalidInput", "metadata"),
        C("add metadata object", lambda m, t: m.add("hi", metadata={"x": object()}), "InvalidInput", "metadata"),
        C("add metadata key int", lambda m, t: m.add("hi", metadata={1: "x"}), "InvalidInput", "metadata"),
        C("add metadata surrogate", lambda m, t: m.add("hi", metadata={"x": "\ud800"}), "InvalidInput", "metadata"),
        C("add priority unknown", lambda m, t: m.add("hi", priority="urgent"), "InvalidInput", "priority"),
        # timestamps
        C("add timestamp NaN", lambda m, t: m.add("hi", timestamp=nan), "InvalidInput", "timestamp"),
        C("add timestamp inf", lambda m, t: m.add("hi", timestamp=inf), "InvalidInput", "timestamp"),
        C("add timestamp 1e20", lambda m, t: m.add("hi", timestamp=1e20), "InvalidInput", "timestamp"),
        C("add timestamp -1e18", lambda m, t: m.add("hi", timestamp=-1e18), "InvalidInput", "timestamp"),
        C("add timestamp year 1", lambda m, t: m.add("hi", timestamp=datetime(1, 1, 1)), "InvalidInput",
          "timestamp"),
        C("add timestamp year 9999", lambda m, t: m.add("hi", timestamp="9999-12-31T00:00:00Z"), "InvalidInput",
          "timestamp"),
        C("add timestamp text", lambda m, t: m.add("hi", timestamp="yesterday"), "InvalidInput", "timestamp"),
        C("add timestamp bool", lambda m, t: m.add("hi", timestamp=True), "InvalidInput", "timestamp"),
        C("add timestamp list", lambda m, t: m.add("hi", timestamp=[2020]), "InvalidInput", "timestamp"),
        # add_many
        C("add_many str", lambda m, t: m.add_many("text"), "InvalidInput", "items"),
        C("add_many dict", lambda m, t: m.add_many({"text": "x"}), "InvalidInput", "items"),
        C("add_many int", lambda m, t: m.add_many(5), "InvalidInput", "items"),
        C("add_many item int", lambda m, t: m.add_many([{"text": "ok"}, 5]), "InvalidInput", "items[1]"),
        C("add_many unknown key", lambda m, t: m.add_many([{"text": "ok", "txet": 1}]), "InvalidInput", "items[0]"),
        C("add_many bad second", lambda m, t: m.add_many([{"text": "fine"}, {"text": ""}]), "InvalidInput",
          "items[1]"),
        C("add_many bad timestamp", lambda m, t: m.add_many([{"text": "ok", "timestamp": nan}]), "InvalidInput",
          "timestamp"),
        # search / recall
        C("search query empty", lambda m, t: m.search(""), "InvalidInput", "query"),
        C("search query spaces", lambda m, t: m.search("   "), "InvalidInput", "query"),
        C("search query bytes", lambda m, t: m.search(b"cat"), "InvalidInput", "query"),
        C("search query None", lambda m, t: m.search(None), "InvalidInput", "query"),
        C("search query surrogate", lambda m, t: m.search("cat \udc80"), "InvalidInput", "query"),
        C("search query control", lambda m, t: m.search("cat\x00"), "InvalidInput", "query"),
        C("search query huge", lambda m, t: m.search("cat " * 300_000), "InvalidInput", "query"),
        C("search k 0", lambda m, t: m.search("cat", k=0), "InvalidInput", "k"),
        C("search k negative", lambda m, t: m.search("cat", k=-3), "InvalidInput", "k"),
        C("search k NaN", lambda m, t: m.search("cat", k=nan), "InvalidInput", "k"),
        C("search k float", lambda m, t: m.search("cat", k=2.5), "InvalidInput", "k"),
        C("search k str", lambda m, t: m.search("cat", k="3"), "InvalidInput", "k"),
        C("search k bool", lambda m, t: m.search("cat", k=True), "InvalidInput", "k"),
        C("search filter list", lambda m, t: m.search("cat", filter=["speaker"]), "InvalidInput", "filter"),
        C("search filter operator", lambda m, t: m.search("cat", filter={"speaker": {"$regex": "A"}}),
          "InvalidInput", "filter"),
        C("search filter $in str", lambda m, t: m.search("cat", filter={"speaker": {"$in": "Ann"}}),
          "InvalidInput", "filter"),
        C("search filter NaN", lambda m, t: m.search("cat", filter={"n": nan}), "InvalidInput", "filter"),
        C("search filter key empty", lambda m, t: m.search("cat", filter={"": 1}), "InvalidInput", "filter"),
        C("search filter timestamp", lambda m, t: m.search("cat", filter={"timestamp": {"$gte": "soon"}}),
          "InvalidInput", "timestamp"),
        C("recall budget 0", lambda m, t: m.recall("cat", budget_tokens=0), "InvalidInput", "budget_tokens"),
        C("recall budget negative", lambda m, t: m.recall("cat", budget_tokens=-10), "InvalidInput",
          "budget_tokens"),
        C("recall budget NaN", lambda m, t: m.recall("cat", budget_tokens=nan), "InvalidInput", "budget_tokens"),
        C("recall budget inf", lambda m, t: m.recall("cat", budget_tokens=inf), "InvalidInput", "budget_tokens"),
        C("recall budget str", lambda m, t: m.recall("cat", budget_tokens="100"), "InvalidInput", "budget_tokens"),
        C("recall query empty", lambda m, t: m.recall(""), "InvalidInput", "query"),
        C("recall filter str", lambda m, t: m.recall("cat", filter="speaker=Ann"), "InvalidInput", "filter"),
        # ids
        C("get unknown id", lambda m, t: m.get(10**12), "NotFound", "id"),
        C("get negative id", lambda m, t: m.get(-1), "InvalidInput", "id"),
        C("get id str", lambda m, t: m.get("1"), "InvalidInput", "id"),
        C("get id float", lambda m, t: m.get(1.0), "InvalidInput", "id"),
        C("get id None", lambda m, t: m.get(None), "InvalidInput", "id"),
        C("read unknown id", lambda m, t: m.read(10**12), "NotFound", "id"),
        C("read before negative", lambda m, t: m.read(1, before=-1), "InvalidInput", "before"),
        C("read after str", lambda m, t: m.read(1, after="2"), "InvalidInput", "after"),
        C("delete ids str", lambda m, t: m.delete("1"), "InvalidInput", "ids"),
        C("delete ids None", lambda m, t: m.delete(None), "InvalidInput", "ids"),
        C("delete ids negative", lambda m, t: m.delete([-5]), "InvalidInput", "ids"),
        C("delete ids float", lambda m, t: m.delete([1.5]), "InvalidInput", "ids"),
        C("forget empty filter", lambda m, t: m.forget({}), "InvalidInput", "filter"),
        C("forget None", lambda m, t: m.forget(None), "InvalidInput", "filter"),
        C("forget bad operator", lambda m, t: m.forget({"speaker": {"$like": "A"}}), "InvalidInput", "filter"),
        C("list limit negative", lambda m, t: m.list(limit=-1), "InvalidInput", "limit"),
        C("list offset str", lambda m, t: m.list(offset="0"), "InvalidInput", "offset"),
        C("list filter int", lambda m, t: m.list(filter=3), "InvalidInput", "filter"),
        # namespaces
        C("using empty namespace", lambda m, t: m.using(""), "InvalidInput", "namespace"),
        C("using namespace int", lambda m, t: m.using(7), "InvalidInput", "namespace"),
        C("using namespace control", lambda m, t: m.using("a\nb"), "InvalidInput", "namespace"),
        C("using namespace huge", lambda m, t: m.using("n" * 10_000), "InvalidInput", "namespace"),
        C("delete_namespace None", lambda m, t: m.delete_namespace(None), "InvalidInput", "namespace"),
        C("Memory namespace empty", lambda m, t: _open(None, namespace=" "), "InvalidInput", "namespace"),
        # construction
        C("Memory path int", lambda m, t: _open(12), "InvalidInput", "path"),
        C("Memory path directory", lambda m, t: _open(t), "InvalidInput", "path"),
        C("Memory path missing dir", lambda m, t: _open(t / "no" / "such" / "dir.db"), "StoreError", "path"),
        C("Memory config list", lambda m, t: _open(None, config=[1]), "InvalidInput", "config"),
        C("Memory config unknown", lambda m, t: _open(None, config={"sael_tokens": 1}), "InvalidInput",
          "sael_tokens"),
        C("Memory config seal 0", lambda m, t: _open(None, config={"seal_tokens": 0}), "InvalidInput",
          "seal_tokens"),
        C("Memory config busy NaN", lambda m, t: _open(None, config={"busy_timeout_s": nan}), "InvalidInput",
          "busy_timeout_s"),
        C("Memory config bits 64", lambda m, t: _open(None, config={"signature": {"bits": 64}}), "InvalidInput",
          "bits"),
        C("Memory embed int", lambda m, t: _open(None, embed=5), "InvalidInput", "embed"),
        # corrupt or truncated store files
        C("Memory garbage file", lambda m, t: _open(_garbage(t)), "CorruptData", "store"),
        C("Memory truncated store", lambda m, t: _truncated_store(t), "CorruptData", "store"),
        # export / import
        C("export path int", lambda m, t: m.export(3), "InvalidInput", "path"),
        C("export path missing dir", lambda m, t: m.export(t / "no" / "such" / "x.jsonl"), "StoreError", "path"),
        C("export over the store file", lambda m, t: m.export(m.path), "InvalidInput", "path"),
        C("export over the WAL", lambda m, t: m.export(m.path + "-wal"), "InvalidInput", "path"),
        C("import path missing", lambda m, t: m.import_(t / "missing.jsonl"), "NotFound", "path"),
        C("import path directory", lambda m, t: m.import_(t), "InvalidInput", "path"),
        C("import garbage", lambda m, t: m.import_(_write(t, "g.jsonl", b"\x00\xff garbage")), "CorruptData",
          "path"),
        C("import wrong header", lambda m, t: m.import_(_write(t, "h.jsonl", b'{"format": "other"}\n')),
          "CorruptData", "path"),
        C("import bad version", lambda m, t: m.import_(_write(t, "v.jsonl", _header(99))), "CorruptData", "version"),
        C("import bad message", lambda m, t: m.import_(_write(t, "m.jsonl", _header() + b'{"text": ""}\n')),
          "CorruptData", "text"),
        C("import non-object line", lambda m, t: m.import_(_write(t, "n.jsonl", _header() + b"[1, 2]\n")),
          "CorruptData", "line"),
        C("import deep nesting", lambda m, t: m.import_(_write(t, "d.jsonl", _header() + b"[" * 100_000 + b"\n")),
          "CorruptData", "path"),
        C("import bad metadata", lambda m, t: m.import_(_write(t, "md.jsonl", _header() +
                                                               b'{"text": "ok", "metadata": 5}\n')),
          "CorruptData", "metadata"),
        # closed memory
        C("closed add", lambda m, t: _closed(m).add("hi"), "ClosedError", "closed"),
        C("closed search", lambda m, t: _closed(m).search("hi"), "ClosedError", "closed"),
    ]
    return out


def _open(path, **kwargs):
    from hippo import Memory

    mem = Memory(path, **kwargs)
    mem.close()
    return mem


def _closed(mem):
    """A closed view of ``mem``'s store file (a fresh Memory on the same path, closed)."""
    from hippo import Memory

    other = Memory(mem.path)
    other.close()
    return other


def _write(tmp: Path, name: str, data: bytes) -> Path:
    p = tmp / name
    p.write_bytes(data)
    return p


def _header(version: int = 1) -> bytes:
    return (json.dumps({"format": "hippo-export", "version": version, "namespace": "x"}) + "\n").encode()


def _garbage(tmp: Path) -> Path:
    p = tmp / "garbage.db"
    p.write_bytes(os.urandom(8192))
    return p


def _truncated_store(tmp: Path) -> Path:
    from hippo import Memory

    p = tmp / "truncated.db"
    with Memory(p) as mem:
        mem.add_many([{"text": f"message number {i} " + "filler words " * 40} for i in range(200)])
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 3])
    for suffix in ("-wal", "-shm"):
        Path(str(p) + suffix).unlink(missing_ok=True)
    mem = Memory(p)
    try:
        mem.count()
        mem.list()
    finally:
        mem.close()
    return p


HOSTILE_CASES: list[Case] = _cases()


def snapshot(mem) -> dict[str, list[dict[str, Any]]]:
    """Every namespace's messages, for "the store is unchanged" checks."""
    return {ns: [dict(fields_of(it), id=it.id) for it in mem.using(ns).list()] for ns in mem.namespaces()}


def seed_store(mem) -> None:
    """A few messages in two namespaces, sealed and unsealed, for the hostile catalogue to bounce off."""
    rng = random.Random(5)
    mem.add_many([make_item(rng, k) for k in range(30)])
    mem.flush()
    mem.add_many([make_item(rng, 30 + k) for k in range(5)])
    mem.using("other").add_many([make_item(rng, 100 + k) for k in range(5)])


def run_case(case: Case, mem, tmp: Path) -> str | None:
    """Run one catalogue case; returns a failure description or None."""
    from hippo.base import errors
    want = getattr(errors, case.error)
    try:
        case.call(mem, tmp)
    except want as exc:
        if case.names.lower() not in str(exc).lower():
            return f"{case.label}: {case.error} message does not name {case.names!r}: {exc}"
        return None
    except BaseException as exc:  # noqa: BLE001
        return f"{case.label}: expected {case.error}, got {type(exc).__name__}: {str(exc)[:300]}"
    return f"{case.label}: expected {case.error}, nothing was raised"


# ------------------------------------------------------------------------------------------ fuzz campaign

def mutate(data: bytes, rng: random.Random) -> bytes:
    """One random byte-level mutation: bit flips, byte sets, truncation, extension, splice or zeroing."""
    b = bytearray(data)
    kind = rng.randrange(7)
    if kind == 0 and b:
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
    elif kind == 1 and b:
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] = rng.choice((0, 0xFF, 0x7F, 0x80, rng.randrange(256)))
    elif kind == 2:
        b = b[: rng.randrange(len(b) + 1)]
    elif kind == 3:
        b += bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
    elif kind == 4 and len(b) > 8:
        i, j = sorted(rng.sample(range(len(b)), 2))
        b[i:j] = bytes(rng.randrange(256) for _ in range(rng.randint(0, 16)))
    elif kind == 5 and len(b) > 16:
        # overwrite a length-looking field (a little-endian 64-bit word) with a huge or small value
        i = rng.randrange(0, min(len(b) - 8, 64))
        b[i:i + 8] = rng.choice((2**63 - 1, 2**40, 0, 1, len(b) * 8, 2**32 + 1)).to_bytes(8, "little")
    else:
        i = rng.randrange(len(b) + 1)
        b[i:i + rng.randint(1, 32)] = bytes(rng.randint(1, 32))
    return bytes(b)


def native_blobs(rng: random.Random) -> dict[str, tuple[Callable[[bytes], Any], bytes]]:
    """A valid serialized blob of every native structure, with its loader."""
    import numpy as np

    from hippo import BinaryIndex, DynamicWaveletMatrix, WaveletMatrix

    nrng = np.random.default_rng(rng.randrange(2**32))
    out: dict[str, tuple[Callable[[bytes], Any], bytes]] = {}
    for bits, n in ((1, 70), (7, 600), (17, 3000), (32, 100)):
        sym = nrng.integers(0, 2**bits, n, dtype=np.uint64).astype(np.uint32)
        out[f"WaveletMatrix[{bits}x{n}]"] = (WaveletMatrix.from_bytes, WaveletMatrix(sym, bits).to_bytes())
        d = DynamicWaveletMatrix(bits)
        d.extend(sym)
        out[f"DynamicWaveletMatrix[{bits}x{n}]"] = (DynamicWaveletMatrix.from_bytes, d.to_bytes())
    out["WaveletMatrix[empty]"] = (WaveletMatrix.from_bytes, WaveletMatrix(np.zeros(0, np.uint32), 5).to_bytes())
    for bits, n in ((64, 50), (256, 20)):
        b = BinaryIndex(bits)
        b.add(nrng.integers(0, 256, (n, bits // 8), dtype=np.uint8))
        out[f"BinaryIndex[{bits}x{n}]"] = (BinaryIndex.from_bytes, b.to_bytes())
    return out


def _exercise(obj: Any) -> None:
    """Use a loaded structure end to end: every symbol, rank / select of the last one, or a search."""
    import numpy as np

    from hippo import BinaryIndex

    if isinstance(obj, BinaryIndex):
        if len(obj):
            obj.search(np.zeros((1, obj.bits // 8), dtype=np.uint8), 3)
        return
    n = len(obj)
    sym = obj.access_range(0, n)
    if n:
        c = int(sym[-1])
        k = int(np.count_nonzero(sym == c))
        if obj.rank(c, n) != k or obj.select(c, k) != n - 1:
            raise AssertionError("rank / select disagree with access")


def fuzz_native(camp: Campaign, *, per_blob: int, seed: int) -> None:
    """Mutated blobs must load (when unchanged) or raise a HippoError; loaded structures must answer queries."""
    from hippo import HippoError
    from hippo.native import reseal

    rng = random.Random(seed)
    for name, (load, blob) in native_blobs(rng).items():
        obj = load(blob)
        camp.check(obj.to_bytes() == blob, f"{name}: to_bytes(from_bytes(b)) != b")
        for _ in range(per_blob):
            bad = mutate(blob, rng)
            camp.add("inputs_fuzzed")
            try:
                obj = load(bad)
            except HippoError:
                continue
            except BaseException as exc:  # noqa: BLE001
                camp.fail(f"{name}: a mutated blob raised {type(exc).__name__}: {exc}")
                continue
            if bad != blob:
                camp.fail(f"{name}: a mutated blob ({len(bad)} bytes, original {len(blob)}) was accepted")
        # The same mutations with the checksum recomputed reach the structural validation itself: the blob must be
        # refused, or load into a structure that answers queries and serializes back to what it loaded.
        for _ in range(per_blob):
            bad = mutate(blob, rng)
            if len(bad) < 8:
                continue
            bad = reseal(bad)
            camp.add("inputs_fuzzed")
            camp.add("resealed_inputs_fuzzed")
            try:
                obj = load(bad)
            except HippoError:
                continue
            except BaseException as exc:  # noqa: BLE001
                camp.fail(f"{name}: a resealed mutated blob raised {type(exc).__name__}: {exc}")
                continue
            camp.add("resealed_inputs_accepted")
            try:
                _exercise(obj)
                again = load(obj.to_bytes())
                camp.check(len(again) == len(obj), f"{name}: an accepted resealed blob does not round-trip")
            except BaseException as exc:  # noqa: BLE001
                camp.fail(f"{name}: a structure loaded from a resealed blob failed: {type(exc).__name__}: {exc}")
        for junk in (b"", b"\x00", b"HIPPOWM\x00", b"HIPPODWM", b"HIPPOBIX", os.urandom(37), blob[:8] * 10):
            camp.add("inputs_fuzzed")
            try:
                load(junk)
                camp.fail(f"{name}: junk {junk[:16]!r} was accepted")
            except HippoError:
                pass
            except BaseException as exc:  # noqa: BLE001
                camp.fail(f"{name}: junk raised {type(exc).__name__}: {exc}")


def _reseal_chunk(db: sqlite3.Connection, cid: int, rng: random.Random) -> None:
    """Mutate the serialized matrix inside chunk ``cid`` and recompute every checksum over it (the matrix's own,
    deflate's and the chunk row's), so that only the decoder's structural validation can find the damage."""
    import zlib

    from hippo.native import reseal
    from hippo.store.sqlite import chunk_checksum

    ns, first, last, n_msgs, n_tok, blob = db.execute(
        "SELECT namespace, first_seq, last_seq, n_messages, n_tokens, blob FROM chunks WHERE id = ?", (cid,)).fetchone()
    raw = zlib.decompress(bytes(blob))
    bad = mutate(raw, rng)
    bad = reseal(bad) if len(bad) >= 8 else bad
    new = zlib.compress(bad, 6)
    members = db.execute("SELECT id, seq, n_tokens FROM messages WHERE namespace = ? AND seq BETWEEN ? AND ? AND id NOT IN"
                         " (SELECT id FROM tail WHERE namespace = ?) ORDER BY seq", (ns, first, last, ns)).fetchall()
    db.execute("UPDATE chunks SET blob = ?, checksum = ? WHERE id = ?",
               (new, chunk_checksum(ns, first, last, n_msgs, n_tok, members, new), cid))


def fuzz_store_chunks(workdir: Path, camp: Campaign, *, rounds: int, seed: int) -> None:
    """Corrupt a chunk blob (or a tail row) inside a store file: opening and reading raise CorruptData."""
    from hippo import CorruptData, HippoError, Memory

    rng = random.Random(seed)
    base = workdir / "chunks-base.db"
    # close() seals the tail, so the base store is written by a process that exits without closing.
    code = ("import os, random, sys; from hippo import Memory; from hippo_bench.reliability import make_item; "
            "rng = random.Random(int(sys.argv[2])); mem = Memory(sys.argv[1], config={'seal_tokens': 64}); "
            "mem.add_many([make_item(rng, k) for k in range(120)]); mem.flush(); "
            "mem.add_many([make_item(rng, 1000 + k) for k in range(3)]); os._exit(0)")
    subprocess.run([sys.executable, "-c", code, str(base), str(seed)], check=True, timeout=300)
    db = sqlite3.connect(base)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    chunk_ids = [r[0] for r in db.execute("SELECT id FROM chunks")]
    tail_ids = [r[0] for r in db.execute("SELECT id FROM tail")]
    db.close()
    camp.check(bool(chunk_ids) and bool(tail_ids), "store fuzz: base store has no chunks or no tail")
    data = base.read_bytes()
    for k in range(rounds):
        path = workdir / f"chunks-{k}.db"
        path.write_bytes(data)
        db = sqlite3.connect(path)
        what = rng.random()
        if what < 0.3:
            cid = rng.choice(chunk_ids)
            blob = db.execute("SELECT blob FROM chunks WHERE id = ?", (cid,)).fetchone()[0]
            new = mutate(bytes(blob), rng)
            if new == bytes(blob):
                new = new[:-1]
            db.execute("UPDATE chunks SET blob = ? WHERE id = ?", (new, cid))
        elif what < 0.6:
            # The serialized matrix inside the chunk mutated, its own checksum and the chunk row's recomputed: no
            # checksum stands between the mutation and the decoder.
            _reseal_chunk(db, rng.choice(chunk_ids), rng)
            camp.add("resealed_chunks")
        elif what < 0.75:
            cid = rng.choice(chunk_ids)
            col = rng.choice(("n_tokens", "first_seq", "last_seq"))
            db.execute(f"UPDATE chunks SET {col} = {col} + ? WHERE id = ?", (rng.choice((-1, 1, 1000)), cid))
        elif what < 0.9:
            mid = rng.choice(tail_ids)
            blob = bytes(db.execute("SELECT tokens FROM tail WHERE id = ?", (mid,)).fetchone()[0])
            new = mutate(blob, rng)
            if new == blob:
                new = new + b"\x01"
            db.execute("UPDATE tail SET tokens = ? WHERE id = ?", (new, mid))
        else:
            mid = rng.choice(tail_ids)
            db.execute("UPDATE messages SET metadata = ? WHERE id = ?", (rng.choice(("{", "[1,", "\x00", "")), mid))
        db.commit()
        db.close()
        camp.add("inputs_fuzzed")
        try:
            with Memory(path) as mem:
                items = mem.list()
                for it in items[:: max(1, len(items) // 10)]:
                    mem.search(it.text, k=3)
        except CorruptData:
            camp.add("corrupt_stores_detected")
            continue
        except HippoError as exc:
            camp.fail(f"store fuzz {k}: expected CorruptData, got {type(exc).__name__}: {exc}")
            continue
        except BaseException as exc:  # noqa: BLE001
            camp.fail(f"store fuzz {k}: a corrupted store raised {type(exc).__name__}: {exc}")
            continue
        # Accepted: only possible when the mutation kept the tokens valid (e.g. a tail row token changed into
        # another valid token); the store must then still be self-consistent.
        camp.add("corrupt_stores_accepted_consistent")


def fuzz_exports(workdir: Path, camp: Campaign, *, rounds: int, seed: int) -> None:
    """Mutated export files: import_ adds everything or raises a HippoError, and never half an import."""
    from hippo import HippoError, Memory

    rng = random.Random(seed)
    src = workdir / "export-src.jsonl"
    with Memory(None) as mem:
        mem.add_many([make_item(rng, k) for k in range(25)])
        mem.export(src)
    data = src.read_bytes()
    with Memory(None) as mem:
        for k in range(rounds):
            bad = workdir / "export-bad.jsonl"
            bad.write_bytes(mutate(data, rng))
            before = mem.count()
            camp.add("inputs_fuzzed")
            try:
                added = mem.import_(bad)
            except HippoError:
                camp.check(mem.count() == before, f"export fuzz {k}: a failed import changed the store")
                continue
            except BaseException as exc:  # noqa: BLE001
                camp.fail(f"export fuzz {k}: import raised {type(exc).__name__}: {str(exc)[:200]}")
                continue
            camp.check(mem.count() == before + added, f"export fuzz {k}: import count mismatch")


def fuzz_model(workdir: Path, camp: Campaign, *, steps: int, seed: int) -> None:
    """A random operation sequence on a store file, checked step by step against a Python model."""
    from hippo import Memory, NotFound

    rng = random.Random(seed)
    path = workdir / "model.db"
    cfg = {"seal_tokens": 96}
    mem = Memory(path, config=cfg)
    model: dict[str, dict[int, dict[str, Any]]] = {"default": {}, "b": {}}
    n = 0
    try:
        for step in range(steps):
            ns = rng.choice(("default", "b"))
            view = mem.using(ns)
            op = rng.random()
            camp.add("model_steps")
            if op < 0.35:
                items = [make_item(rng, n + j) for j in range(rng.randint(1, 8))]
                n += len(items)
                for it, got in zip(items, view.add_many(items)):
                    model[ns][got.id] = expected_fields(it)
            elif op < 0.45 and model[ns]:
                victims = rng.sample(sorted(model[ns]), rng.randint(1, min(4, len(model[ns]))))
                other = sorted(model["b" if ns == "default" else "default"])[:2]
                got = view.delete(victims + other)  # ids of the other namespace are not ours to delete
                camp.check(got == len(victims), f"model step {step}: delete returned {got}, expected {len(victims)}")
                for v in victims:
                    del model[ns][v]
            elif op < 0.5:
                tag = rng.choice("xyz")
                want = [i for i, f in model[ns].items() if f["metadata"].get("tag") == tag]
                got = view.forget({"tag": tag})
                camp.check(got == len(want), f"model step {step}: forget removed {got}, expected {len(want)}")
                for i in want:
                    del model[ns][i]
            elif op < 0.6:
                view.flush()
            elif op < 0.65:
                mem.close()
                mem = Memory(path, config=cfg)
            elif op < 0.8 and model[ns]:
                i = rng.choice(sorted(model[ns]))
                text = model[ns][i]["text"]
                hits = view.search(text, k=5)
                camp.check(any(h.id == i and h.text == text for h in hits),
                           f"model step {step}: exact quote of {i} not found")
                try:
                    camp.check(fields_of(view.get(i)) == model[ns][i], f"model step {step}: get({i}) differs")
                except NotFound:
                    camp.fail(f"model step {step}: get({i}) raised NotFound")
            elif op < 0.9:
                got = [(it.id, fields_of(it)) for it in view.list()]
                camp.check(got == sorted(model[ns].items()), f"model step {step}: list() differs from the model")
            else:
                missing = max([0, *model["default"], *model["b"]]) + 1 + rng.randrange(5)
                try:
                    view.get(missing)
                    camp.fail(f"model step {step}: get({missing}) of a missing id returned")
                except NotFound:
                    pass
            if len(camp.failures) > 20:
                break
    finally:
        mem.close()


def fuzz_campaign(workdir: str | os.PathLike, *, per_blob: int = 300, store_rounds: int = 60,
                  export_rounds: int = 200, model_steps: int = 300, seed: int = 2) -> Campaign:
    camp = Campaign("fuzz")
    t0 = time.perf_counter()
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    from hippo import Memory

    # The hostile catalogue, each case against a fresh copy of a seeded store.
    tmp = workdir / "hostile"
    tmp.mkdir(exist_ok=True)
    base = tmp / "base.db"
    with Memory(base) as mem:
        seed_store(mem)
        before = snapshot(mem)
    for case in HOSTILE_CASES:
        camp.add("inputs_fuzzed")
        camp.add("hostile_cases")
        with Memory(base) as mem:
            failure = run_case(case, mem, tmp)
            if failure:
                camp.fail(failure)
            after = snapshot(mem)
        camp.check(after == before, f"{case.label}: the store changed")
    fuzz_native(camp, per_blob=per_blob, seed=seed)
    fuzz_store_chunks(workdir, camp, rounds=store_rounds, seed=seed)
    fuzz_exports(workdir, camp, rounds=export_rounds, seed=seed)
    fuzz_model(workdir, camp, steps=model_steps, seed=seed)
    camp.seconds = time.perf_counter() - t0
    return camp


# ---------------------------------------------------------------------------------------------- the report

PROFILES = {
    "quick": {"kill_points": 50, "messages": 200, "readers": 3, "processes": 2, "per_blob": 60,
              "store_rounds": 20, "export_rounds": 40, "model_steps": 120},
    "long": {"kill_points": 300, "messages": 2000, "readers": 6, "processes": 4, "per_blob": 2000,
             "store_rounds": 300, "export_rounds": 1000, "model_steps": 2000},
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kill-points", type=int, default=None, help="SIGKILLs of the writer (default 300; quick 50)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workdir", default=None, help="where the stores go (default: a temporary directory)")
    p.add_argument("--only", choices=("crash", "concurrency", "fuzz"), action="append",
                   help="run only these campaigns (repeatable)")


def _crash_in_fresh_process(workdir: Path, kill_points: int, seed: int) -> Campaign:
    """The crash campaign forks, so it runs in a fresh single-threaded interpreter."""
    code = ("import json, sys; from hippo_bench.reliability import crash_campaign; "
            "c = crash_campaign(sys.argv[1], kill_points=int(sys.argv[2]), seed=int(sys.argv[3])); "
            "print(json.dumps(c.as_dict()))")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", code, str(workdir), str(kill_points), str(seed)],
                          capture_output=True, text=True, env=env, timeout=3600)
    camp = Campaign("crash")
    if proc.returncode != 0:
        camp.fail(f"the crash campaign process exited {proc.returncode}: {proc.stderr.strip()[-2000:]}")
        return camp
    d = json.loads(proc.stdout.strip().splitlines()[-1])
    camp.counts, camp.failures, camp.seconds = d["counts"], d["failures"], d["seconds"]
    return camp


def run(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    profile = dict(PROFILES["quick" if args.quick else "long"])
    if args.kill_points is not None:
        profile["kill_points"] = args.kill_points
    only = set(args.only or ("crash", "concurrency", "fuzz"))
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="hippo-reliability-", dir=args.workdir) as tmp:
        tmp = Path(tmp)
        campaigns: list[Campaign] = []
        if "crash" in only:
            campaigns.append(_crash_in_fresh_process(tmp / "crash", profile["kill_points"], args.seed))
        if "concurrency" in only:
            campaigns.append(concurrency_campaign(tmp / "concurrency", messages=profile["messages"],
                                                  readers=profile["readers"], processes=profile["processes"],
                                                  seed=args.seed + 1))
        if "fuzz" in only:
            campaigns.append(fuzz_campaign(tmp / "fuzz", per_blob=profile["per_blob"],
                                           store_rounds=profile["store_rounds"],
                                           export_rounds=profile["export_rounds"],
                                           model_steps=profile["model_steps"], seed=args.seed + 2))
    by = {c.name: c for c in campaigns}

    def count(name: str, key: str) -> int:
        return by[name].counts.get(key, 0) if name in by else 0

    failures = sum(len(c.failures) for c in campaigns)
    figures = {
        "kill_points_survived": count("crash", "kill_points") if not by.get("crash", Campaign("")).failures
        else 0,
        "kill_points": count("crash", "kill_points"),
        "messages_verified": count("crash", "messages_verified") + count("concurrency", "messages_verified"),
        "exact_quote_searches": count("crash", "exact_quote_searches"),
        "concurrent_operations": count("concurrency", "concurrent_ops"),
        "store_busy_retries": count("concurrency", "store_busy_retries"),
        "inputs_fuzzed": count("fuzz", "inputs_fuzzed"),
        "hostile_cases": count("fuzz", "hostile_cases"),
        "model_steps": count("fuzz", "model_steps"),
        "failures": failures,
    }
    result = {
        "benchmark": "reliability",
        "profile": "quick" if args.quick else "long",
        "seed": args.seed,
        "figures": figures,
        "campaigns": [c.as_dict() for c in campaigns],
        "seconds": round(time.perf_counter() - started, 2),
        "machine": machine_info(),
        "checks": {"all_passed": failures == 0},
    }
    rows = [[k.replace("_", " "), v] for k, v in figures.items()]
    md = ["## hippo reliability (" + result["profile"] + f" profile, seed {args.seed})", "",
          markdown_table(["figure", "value"], rows), ""]
    for c in campaigns:
        md.append(f"### {c.name} ({c.seconds:.1f} s)")
        md.append(", ".join(f"{k}={v}" for k, v in sorted(c.counts.items())))
        for f in c.failures[:20]:
            md.append(f"- FAILURE: {f}")
        md.append("")
    return result, "\n".join(md)


__all__ = ["HOSTILE_CASES", "Case", "Campaign", "crash_campaign", "concurrency_campaign", "fuzz_campaign",
           "make_item", "make_text", "marker", "mutate", "run", "add_arguments"]

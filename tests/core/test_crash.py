"""Crash safety: a writer SIGKILLed at random points, and a full disk.

The kill campaign lives in :mod:`hippo_bench.reliability` (``hippo bench reliability`` runs a longer one); it
forks writers, so it runs here in a fresh interpreter. After every kill the store is reopened and checked:
every acknowledged message present and byte-identical, no duplicates, interrupted operations all-or-nothing,
the co-index agreeing with the store (exact quotes found by ``search``), ``PRAGMA integrity_check`` clean.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from hippo import Memory

ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")


def _run(code: str, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True,
                          env=ENV, timeout=timeout)


def test_sigkill_at_50_random_points(tmp_path) -> None:
    proc = _run("""
        import json, sys
        from hippo_bench.reliability import crash_campaign
        c = crash_campaign(sys.argv[1], kill_points=50, seed=int(sys.argv[2]), max_delay=0.12,
                           rounds_per_store=10, quote_sample=6)
        print(json.dumps(c.as_dict()))
    """, str(tmp_path), "20251122")
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    counts, failures = result["counts"], result["failures"]
    assert not failures, "\n".join(failures[:20])
    assert counts["kill_points"] >= 50, counts
    assert counts["messages_verified"] > 1000, counts
    assert counts["exact_quote_searches"] > 300, counts
    assert counts["marker_searches"] > 100, counts
    assert counts["integrity_checks"] >= 50, counts
    # the kills landed inside writes, not only between them
    assert counts.get("killed_during_add_many", 0) + counts.get("killed_during_delete", 0) >= 10, counts


def test_interrupted_add_many_is_all_or_nothing(tmp_path) -> None:
    """A writer killed inside one large add_many leaves either every message of the batch or none."""
    path = tmp_path / "batch.db"
    with Memory(path) as mem:
        mem.add_many([{"text": f"committed message {i} about the harbor"} for i in range(20)])
    outcomes = set()
    for delay in (0.0, 0.02, 0.05, 0.1, 0.2, 0.4):
        proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
            import sys
            from hippo import Memory
            m = Memory(sys.argv[1])
            print("ready", flush=True)
            m.add_many([{"text": f"batch {sys.argv[2]} item {i} " + "padding words " * 30} for i in range(3000)])
            print("done", flush=True)
            import time; time.sleep(60)
        """), str(path), str(delay)], stdout=subprocess.PIPE, text=True, env=ENV)
        assert proc.stdout.readline().strip() == "ready"
        import time

        time.sleep(delay)
        proc.kill()
        proc.wait(30)
        with Memory(path) as mem:
            texts = [it.text for it in mem.list()]
            batch = [t for t in texts if t.startswith(f"batch {delay} ")]
            assert len(batch) in (0, 3000), len(batch)
            outcomes.add(len(batch))
            assert sum(t.startswith("committed message") for t in texts) == 20
            assert mem.count() == len(texts)
    assert 0 in outcomes  # at least one kill landed before the commit


_FULL_DISK = """
import json, os, resource, signal, sys
from hippo import Memory, StoreError
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # exceeding the limit makes write() fail with EFBIG
path = sys.argv[1]
acked = []
mem = Memory(path, config={"seal_tokens": 256})
for i in range(40):
    acked.append(mem.add(f"committed before the limit {i} " + "lorem ipsum " * 20).text)
size = sum(os.path.getsize(path + s) for s in ("", "-wal") if os.path.exists(path + s))
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (size + 64 * 1024, hard))
error = None
for i in range(5000):
    try:
        it = mem.add_many([{"text": f"written near the limit {i} {j} " + "dolor sit amet " * 40} for j in range(5)])
        acked.extend(x.text for x in it)
    except StoreError as exc:
        error = f"{type(exc).__name__}: {exc}"
        break
    except BaseException as exc:
        error = f"UNEXPECTED {type(exc).__name__}: {exc}"
        break
# Reads still work after the failed write, and see everything acknowledged.
readable = len(mem.list()) >= len(acked)
resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
after = mem.add("written after space came back").text
acked.append(after)
mem.close()
print(json.dumps({"error": error, "acked": acked, "readable": readable}))
"""


def test_full_disk_fails_cleanly_and_loses_nothing(tmp_path) -> None:
    path = tmp_path / "full.db"
    proc = _run(_FULL_DISK, str(path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["error"] is not None, "the file size limit was never hit"
    assert res["error"].split(":")[0] == "StoreError", res["error"]
    assert res["readable"]
    with Memory(path) as mem:
        texts = [it.text for it in mem.list()]
        assert len(texts) == len(set(texts))
        missing = set(res["acked"]) - set(texts)
        assert not missing, f"{len(missing)} acknowledged messages lost"
        assert set(texts) == set(res["acked"]), "a write that failed left messages behind"
        assert mem.count() == len(texts)
        for t in res["acked"][:: max(1, len(res["acked"]) // 20)]:
            assert any(h.text == t for h in mem.search(t, k=10))


def test_reopen_after_kill_during_open_and_flush(tmp_path) -> None:
    """Kills while a store is being created, opened and flushed never leave it unopenable."""
    path = tmp_path / "open.db"
    import time

    for k, delay in enumerate((0.0, 0.01, 0.03, 0.06, 0.1, 0.2)):
        proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
            import sys
            from hippo import Memory
            m = Memory(sys.argv[1], config={"seal_tokens": 1})
            for i in range(200):
                m.add(f"round {sys.argv[2]} message {i} about a kitten")
                m.flush()
        """), str(path), str(k)], env=ENV)
        time.sleep(0.3 + delay)
        proc.kill()
        proc.wait(30)
        with Memory(path) as mem:
            items = mem.list()
            assert mem.count() == len(items)
            for it in items[-3:]:
                assert any(h.id == it.id for h in mem.search(it.text, k=10))


def test_writer_log_lines_are_atomic(tmp_path) -> None:
    """The campaign's own bookkeeping: a log line is written by one os.write, so it is whole or absent."""
    from hippo_bench.reliability import _log

    p = tmp_path / "log"
    fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    _log(fd, {"op": "add_many", "items": [{"text": "é" * 5000}]})
    os.close(fd)
    assert json.loads(Path(p).read_text(encoding="utf-8"))["items"][0]["text"] == "é" * 5000


def test_bench_reliability_and_soak_commands(tmp_path) -> None:
    out = tmp_path / "rel.json"
    proc = subprocess.run([sys.executable, "-m", "hippo.cli", "bench", "reliability", "--quick", "--only", "crash",
                           "--kill-points", "3", "--out", str(out)], capture_output=True, text=True, env=ENV,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:] + proc.stdout[-2000:]
    res = json.loads(out.read_text(encoding="utf-8"))
    assert res["figures"]["kill_points_survived"] == 3 and res["figures"]["failures"] == 0
    assert "kill points survived" in out.with_suffix(".md").read_text(encoding="utf-8")
    from hippo_bench import main as bench_main

    soak_out = tmp_path / "soak.json"
    assert bench_main(["soak", "--adds", "400", "--batch", "50", "--recall-every", "100", "--flush-every", "200",
                       "--read-seconds", "0.3", "--out", str(soak_out)]) == 0
    soak = json.loads(soak_out.read_text(encoding="utf-8"))
    assert soak["adds"] == 400 and not soak["failures"] and len(soak["windows"]) >= 2

"""A Python workload over the C core built with AddressSanitizer and UndefinedBehaviorSanitizer.

    python tests/c/asan_workload.py [--seconds 20] [--keep DIR]

1. Builds ``hippo._hippo_c`` from ``core_c/*.c`` with ``-fsanitize=address,undefined`` into a temporary copy of
   the ``hippo`` package (the project's own build is untouched).
2. Re-runs itself on that copy with ``LD_PRELOAD`` of the compiler's ``libasan.so`` (CPython itself is not
   instrumented, so the ASan runtime must be loaded first), ``ASAN_OPTIONS=detect_leaks=0`` (CPython keeps
   objects alive at exit on purpose) and ``halt_on_error=1``.
3. The workload drives every native structure against numpy oracles, feeds mutated blobs to every
   ``from_bytes`` (half of them with the checksum recomputed, so the structural decoder itself meets the damage, and
   what it accepts is then used end to end), and runs ``Memory`` (add_many, search, recall, delete, flush, reopen,
   corrupted chunk rows, also with every checksum over the chunk recomputed).

Any sanitizer report ends the process with a non-zero status and the report on stderr. Needs gcc (or clang)
with the sanitizer runtimes, which Debian's gcc ships.
"""

from __future__ import annotations

import argparse
import glob
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAN = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]


def runtime(name: str) -> str:
    cc = os.environ.get("CC", "gcc")
    path = subprocess.run([cc, f"-print-file-name={name}"], capture_output=True, text=True, check=True).stdout.strip()
    if not os.path.isabs(path) or not os.path.exists(path):
        sys.exit(f"{cc} has no {name}: install the compiler's sanitizer runtime")
    return os.path.realpath(path)


def build(dest: str) -> str:
    """Copy the hippo package into ``dest`` and compile an ASan/UBSan ``_hippo_c`` into it."""
    pkg = os.path.join(dest, "hippo")
    shutil.copytree(os.path.join(ROOT, "packages", "hippo"), pkg,
                    ignore=shutil.ignore_patterns("_hippo_c*.so", "_hippo_c.c", "__pycache__"))
    sys.path.insert(0, os.path.join(ROOT, "packages", "hippo"))
    import _build_native as bn  # noqa: E402 - the project's own build description
    from cffi import FFI

    ffi = FFI()
    ffi.cdef(bn._cdef_from_header())
    core = os.path.join(ROOT, "core_c")
    ffi.set_source("hippo._hippo_c", '#include "hippo_core.h"', sources=sorted(glob.glob(os.path.join(core, "*.c"))),
                   include_dirs=[core], extra_compile_args=["-std=c99", "-O1", "-g", *SAN], extra_link_args=SAN)
    build_dir = os.path.join(dest, "build")
    so = ffi.compile(tmpdir=build_dir, verbose=False)
    target = os.path.join(pkg, os.path.basename(so))
    shutil.copyfile(so, target)
    return target


def workload(seconds: float, seed: int) -> dict[str, int]:
    import numpy as np

    import hippo
    from hippo import BinaryIndex, DynamicWaveletMatrix, HippoError, Memory, WaveletMatrix

    assert "asan" in os.path.dirname(hippo.native.__file__) or os.environ.get("HIPPO_ASAN_PKG") in \
        hippo.native.__file__, hippo.native.__file__
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    counts = {"structures": 0, "queries": 0, "blobs": 0, "blobs_accepted": 0, "memory_ops": 0}
    deadline = time.monotonic() + seconds
    from hippo.native import reseal
    from hippo_bench.reliability import _reseal_chunk, make_item, mutate

    while time.monotonic() < deadline:
        # wavelet matrices against numpy, sizes crossing 64-, 512- and segment boundaries
        bits = rng.choice((1, 3, 7, 17, 32))
        n = rng.choice((0, 1, 63, 64, 65, 511, 513, 2047, 2049, 5000))
        sym = nrng.integers(0, 2**bits, n, dtype=np.uint64).astype(np.uint32)
        d = DynamicWaveletMatrix(bits)
        pos = 0
        while pos < n:
            step = rng.randint(1, 700)
            if rng.random() < 0.2:
                for s in sym[pos:pos + step][:50].tolist():
                    d.append(int(s))
                step = min(step, 50)
            else:
                d.extend(sym[pos:pos + step])
            pos += step
        wm = WaveletMatrix(sym, bits)
        for st in (d, wm):
            assert np.array_equal(st.access_range(0, n), sym)
            if n:
                p = nrng.integers(0, n, 64)
                assert np.array_equal(st.access_many(p), sym[p])
                c = int(sym[rng.randrange(n)])
                i = rng.randint(0, n)
                assert st.rank(c, i) == int(np.count_nonzero(sym[:i] == c))
                k = int(np.count_nonzero(sym == c))
                assert st.select(c, k) == int(np.flatnonzero(sym == c)[k - 1])
                st.hamming_ball(c, rng.randint(0, 4), 0, n)
            for bad in (lambda: st.access(n), lambda: st.rank(0, n + 1), lambda: st.select(0, n + 1)):
                try:
                    bad()
                except HippoError:
                    pass
            counts["queries"] += 5
            for k in range(40):
                bad = mutate(st.to_bytes(), rng)
                if k % 2 and len(bad) >= 8:
                    bad = reseal(bad)  # past the checksum: the structural decoder itself is exercised
                try:
                    loaded = type(st).from_bytes(bad)
                except HippoError:
                    pass
                else:
                    m = len(loaded)
                    got = loaded.access_range(0, m)
                    if m:
                        c = int(got[-1])
                        assert loaded.rank(c, m) == int(np.count_nonzero(got == c))
                    counts["blobs_accepted"] += 1
                counts["blobs"] += 1
        counts["structures"] += 2
        # binary codes
        cb = rng.choice((64, 128, 256, 1024))
        b = BinaryIndex(cb)
        m = rng.choice((0, 1, 7, 300))
        codes = nrng.integers(0, 256, (m, cb // 8), dtype=np.uint8)
        if m:
            b.add(codes)
        q = nrng.integers(0, 256, (3, cb // 8), dtype=np.uint8)
        dist, ids = b.search(q, rng.randint(1, 12))
        b.radius_search(q[0], rng.randint(0, cb))
        for k in range(40):
            bad = mutate(b.to_bytes(), rng)
            if k % 2 and len(bad) >= 8:
                bad = reseal(bad)
            try:
                loaded = BinaryIndex.from_bytes(bad)
            except HippoError:
                pass
            else:
                if len(loaded):
                    loaded.search(q[:1], 3)
                counts["blobs_accepted"] += 1
            counts["blobs"] += 1
        # the engine on top
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "m.db")
            with Memory(path, config={"seal_tokens": 64}) as mem:
                got = mem.add_many([make_item(rng, k) for k in range(rng.randint(1, 120))])
                mem.search(got[0].text, k=5)
                mem.recall("garden coffee", budget_tokens=200)
                mem.delete([g.id for g in got[::3]])
                mem.flush()
                counts["memory_ops"] += 5
            with Memory(path) as mem:
                mem.list()
                counts["memory_ops"] += 1
            import sqlite3

            db = sqlite3.connect(path)
            row = db.execute("SELECT id, blob FROM chunks LIMIT 1").fetchone()
            if row and rng.random() < 0.5:
                db.execute("UPDATE chunks SET blob = ? WHERE id = ?", (mutate(bytes(row[1]), rng), row[0]))
                db.commit()
            elif row:
                _reseal_chunk(db, row[0], rng)  # every checksum recomputed: the chunk decoder meets the mutation
                db.commit()
            db.close()
            try:
                with Memory(path) as mem:
                    mem.list()
            except HippoError:
                pass
            counts["memory_ops"] += 1
    return counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", default=None, help="build into this directory and keep it")
    ap.add_argument("--run", default=None, help=argparse.SUPPRESS)  # internal: the instrumented re-run
    args = ap.parse_args()
    if args.run:
        with open("/proc/self/maps", encoding="ascii", errors="replace") as f:
            maps = f.read()
        if "libasan" not in maps:
            sys.exit("the ASan runtime is not loaded: run this script without --run")
        counts = workload(args.seconds, args.seed)
        print("asan workload ok: " + ", ".join(f"{k}={v}" for k, v in counts.items()))
        return 0
    dest = args.keep or tempfile.mkdtemp(prefix="hippo-asan-")
    os.makedirs(dest, exist_ok=True)
    try:
        so = build(dest)
        env = dict(os.environ,
                   LD_PRELOAD=" ".join([runtime("libasan.so"), runtime("libubsan.so")]),
                   ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=0:allocator_may_return_null=1",
                   UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1",
                   PYTHONPATH=os.pathsep.join([dest, ROOT]),
                   HIPPO_ASAN_PKG=dest)
        print(f"built {so}; running the workload for {args.seconds:.0f} s under ASan/UBSan", flush=True)
        return subprocess.run([sys.executable, os.path.abspath(__file__), "--run", "1", "--seconds",
                               str(args.seconds), "--seed", str(args.seed)], env=env).returncode
    finally:
        if not args.keep:
            shutil.rmtree(dest, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

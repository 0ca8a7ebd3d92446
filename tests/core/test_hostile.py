"""Hostile and bad input: the brief's catalogue through every public entry point, a stateful model test, and
byte-level fuzzing of every deserializer.

Every bad input must raise the documented ``HippoError`` subclass with a message that names the argument, and
leave the store exactly as it was. Corrupt bytes must give a ``HippoError`` (``CorruptData`` for stored data),
never a crash, a hang or another exception type.
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import struct
from pathlib import Path

import numpy as np
import pytest
from hippo_bench import reliability as rel
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, invariant, precondition, rule

import hippo
from hippo import (
    BinaryIndex,
    CorruptData,
    DynamicWaveletMatrix,
    HippoError,
    InvalidInput,
    Memory,
    NotFound,
    OutOfRange,
    WaveletMatrix,
)
from hippo.cli import main as cli_main
from tailstore import tail_store

# --------------------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def seeded_store(tmp_path_factory) -> tuple[Path, dict]:
    """A store with sealed and unsealed messages in two namespaces, and its snapshot."""
    path = tmp_path_factory.mktemp("hostile") / "base.db"
    with Memory(path) as mem:
        rel.seed_store(mem)
        snap = rel.snapshot(mem)
    return path, snap


@pytest.fixture()
def store(seeded_store, tmp_path) -> tuple[Path, dict]:
    base, snap = seeded_store
    path = tmp_path / "store.db"
    shutil.copyfile(base, path)
    return path, snap


# ---------------------------------------------------------------------------------- the catalogue: Memory


@pytest.mark.parametrize("case", rel.HOSTILE_CASES, ids=[c.label for c in rel.HOSTILE_CASES])
def test_catalogue_through_memory(case: rel.Case, store, tmp_path) -> None:
    path, snap = store
    with Memory(path) as mem:
        failure = rel.run_case(case, mem, tmp_path)
        assert failure is None, failure
        assert rel.snapshot(mem) == snap, "the store changed"
    with Memory(path) as mem:  # and after reopening
        assert rel.snapshot(mem) == snap


def test_catalogue_covers_the_brief() -> None:
    labels = " ".join(c.label for c in rel.HOSTILE_CASES)
    for needle in ("empty", "whitespace", "10 MB", "surrogate", "NUL", "bytes", "NaN", "negative", "unknown id",
                   "timestamp 1e20", "year 1", "garbage file", "truncated store", "namespace", "closed"):
        assert needle in labels, needle


def test_failed_add_many_is_all_or_nothing(store) -> None:
    path, snap = store
    with Memory(path) as mem:
        items = [{"text": f"fine message {i}"} for i in range(50)] + [{"text": "bad\x00"}]
        with pytest.raises(InvalidInput, match=r"items\[50\]"):
            mem.add_many(items)
        with pytest.raises(InvalidInput):
            mem.add_many(iter([{"text": "ok"}, {"text": "ok", "timestamp": float("nan")}]))
        assert rel.snapshot(mem) == snap


def test_ids_of_another_namespace_are_unknown(store) -> None:
    path, snap = store
    with Memory(path) as mem:
        other_ids = [it.id for it in mem.using("other").list()]
        for i in other_ids:
            with pytest.raises(NotFound, match="id"):
                mem.get(i)
            with pytest.raises(NotFound, match="id"):
                mem.read(i)
        assert mem.delete(other_ids) == 0
        assert rel.snapshot(mem) == snap


# ---------------------------------------------------------------------------------- the catalogue: C core


NATIVE_CASES = [
    ("dwm symbol wider", lambda: DynamicWaveletMatrix(8).append(256), InvalidInput, "symbol"),
    ("dwm symbol negative", lambda: DynamicWaveletMatrix(8).append(-1), InvalidInput, "symbol"),
    ("dwm extend wider", lambda: DynamicWaveletMatrix(4).extend(np.array([1, 16], np.uint32)), InvalidInput,
     "symbols"),
    ("dwm bits 0", lambda: DynamicWaveletMatrix(0), InvalidInput, "bits"),
    ("dwm bits 33", lambda: DynamicWaveletMatrix(33), InvalidInput, "bits"),
    ("wm symbols wider", lambda: WaveletMatrix(np.array([0, 1 << 17], np.uint32), 17), InvalidInput, "symbols"),
    ("access past end", lambda: _wm().access(100), OutOfRange, "i"),
    ("access negative", lambda: _wm().access(-1), OutOfRange, "i"),
    ("access_range past end", lambda: _wm().access_range(0, 101), OutOfRange, "end"),
    ("access_many past end", lambda: _wm().access_many(np.array([0, 100], np.int64)), OutOfRange, "positions"),
    ("rank past end", lambda: _wm().rank(1, 101), OutOfRange, "i"),
    ("rank symbol wider", lambda: _wm().rank(1 << 17, 3), InvalidInput, "symbol"),
    ("select k 0", lambda: _wm().select(1, 0), OutOfRange, "k"),
    ("select k past count", lambda: _wm().select(1, 10**6), OutOfRange, "k"),
    ("count reversed range", lambda: _wm().count(1, 50, 10), OutOfRange, "start"),
    ("hamming radius negative", lambda: _wm().hamming_ball(1, -1), InvalidInput, "radius"),
    ("bix bits 65", lambda: BinaryIndex(65), InvalidInput, "bits"),
    ("bix codes shape", lambda: BinaryIndex(64).add(np.zeros((2, 7), np.uint8)), InvalidInput, "codes"),
    ("bix k 0", lambda: _bix().search(np.zeros((1, 8), np.uint8), 0), InvalidInput, "k"),
    ("bix query shape", lambda: _bix().search(np.zeros((1, 9), np.uint8), 3), InvalidInput, "queries"),
    ("from_bytes str", lambda: WaveletMatrix.from_bytes("HIPPOWM"), InvalidInput, "data"),
    ("from_bytes empty", lambda: DynamicWaveletMatrix.from_bytes(b""), CorruptData, ""),
]


def _wm() -> DynamicWaveletMatrix:
    d = DynamicWaveletMatrix(17)
    d.extend(np.arange(100, dtype=np.uint32) % 7)
    return d


def _bix() -> BinaryIndex:
    b = BinaryIndex(64)
    b.add(np.arange(80, dtype=np.uint8).reshape(10, 8))
    return b


@pytest.mark.parametrize("label,call,error,name", NATIVE_CASES, ids=[c[0] for c in NATIVE_CASES])
def test_catalogue_through_the_c_core(label, call, error, name) -> None:
    with pytest.raises(error) as info:
        call()
    assert name.lower() in str(info.value).lower(), str(info.value)


def test_failed_native_calls_leave_the_structure_intact() -> None:
    d = _wm()
    before = d.to_bytes()
    for call in (lambda: d.append(1 << 17), lambda: d.extend(np.array([1, 2, 1 << 20], np.uint32)),
                 lambda: d.access(len(d)), lambda: d.select(3, 0)):
        with pytest.raises(HippoError):
            call()
    assert d.to_bytes() == before and len(d) == 100


# ------------------------------------------------------------------------------------- the catalogue: CLI


def _cli_cases(tmp: Path, path: Path) -> list[tuple[str, list[str], str]]:
    garbage = tmp / "garbage.db"
    garbage.write_bytes(b"\x13" * 4096)
    bad_jsonl = tmp / "bad.jsonl"
    bad_jsonl.write_text('{"text": "fine"}\n{"text": "   "}\n', encoding="utf-8")
    not_json = tmp / "notjson.jsonl"
    not_json.write_text('{"text": "fine"}\n{oops\n', encoding="utf-8")
    bad_export = tmp / "bad-export.jsonl"
    bad_export.write_bytes(b'{"format": "hippo-export", "version": 1}\n{"text": "x", "timestamp": "later"}\n')
    p = ["--path", str(path)]
    return [
        ("search empty", ["search", "", *p], "query"),
        ("search whitespace", ["search", "  \t", *p], "query"),
        ("search surrogate", ["search", "cat \udcff", *p], "query"),
        ("search control", ["search", "cat\x07", *p], "query"),
        ("search k 0", ["search", "cat", "-k", "0", *p], "-k"),
        ("search k negative", ["search", "cat", "-k", "-4", *p], "-k"),
        ("search k not int", ["search", "cat", "-k", "many", *p], "-k"),
        ("recall budget 0", ["recall", "cat", "--budget", "0", *p], "--budget"),  # the option, not the API name
        ("recall budget negative", ["recall", "cat", "--budget", "-1", *p], "--budget"),
        ("recall budget nan", ["recall", "cat", "--budget", "nan", *p], "--budget"),
        ("namespace empty", ["search", "cat", *p, "-n", ""], "namespace"),
        ("namespace control", ["search", "cat", *p, "-n", "a\x1bb"], "namespace"),
        ("store garbage", ["search", "cat", "--path", str(garbage)], "corrupt"),
        ("store directory", ["stats", "--path", str(tmp)], "directory"),
        ("store missing dir", ["stats", "--path", str(tmp / "no" / "dir.db")], "path"),
        ("ingest missing", ["ingest", str(tmp / "missing.jsonl"), *p], "missing.jsonl"),
        ("ingest empty text", ["ingest", str(bad_jsonl), *p], "text"),
        ("ingest not json", ["ingest", str(not_json), *p], "notjson.jsonl:2"),
        ("import missing", ["import", str(tmp / "missing.jsonl"), *p], "missing.jsonl"),
        ("import garbage", ["import", str(garbage), *p], "garbage.db"),
        ("import bad message", ["import", str(bad_export), *p], "timestamp"),
        ("import directory", ["import", str(tmp), *p], "directory"),
        ("export missing dir", ["export", str(tmp / "no" / "x.jsonl"), *p], "OUT"),  # the positional as --help shows it
    ]


def test_catalogue_through_the_cli(store, tmp_path, capsys) -> None:
    path, snap = store
    failures = []
    for label, argv, name in _cli_cases(tmp_path, path):
        try:
            code = cli_main(argv)
        except SystemExit as exc:  # argparse's own usage errors
            code = exc.code
        except BaseException as exc:  # noqa: BLE001
            failures.append(f"{label}: raised {type(exc).__name__}: {exc}")
            continue
        err = capsys.readouterr().err
        if code != 2:
            failures.append(f"{label}: exit code {code}, expected 2 (stderr: {err.strip()[:200]})")
        elif name.lower() not in err.lower():
            failures.append(f"{label}: error does not name {name!r}: {err.strip()[:300]}")
        elif "Traceback" in err:
            failures.append(f"{label}: printed a traceback")
    assert not failures, "\n".join(failures)
    with Memory(path) as mem:
        assert rel.snapshot(mem) == snap


# -------------------------------------------------------------------------------- the catalogue: adapters


def _adapter_cases(mem: Memory) -> list[tuple[str, object, str]]:
    cases: list[tuple[str, object, str]] = []
    try:
        from langchain_hippo import HippoChatMessageHistory, HippoRetriever, HippoStore
    except ImportError:  # pragma: no cover - the langchain extra is not installed
        pass
    else:
        cases += [
            ("lc retriever k 0", lambda: HippoRetriever(memory=mem, k=0), "k"),
            ("lc retriever k str", lambda: HippoRetriever(memory=mem, k="3"), "k"),
            ("lc retriever memory", lambda: HippoRetriever(memory=object()), "memory"),
            ("lc retriever namespace", lambda: HippoRetriever(memory=mem, namespace=""), "namespace"),
            # any text is a query, as the frameworks' retrievers take it (a blank one finds nothing): only a
            # query that is no text is refused
            ("lc retriever query int", lambda: HippoRetriever(memory=mem).invoke(3), "query"),
            ("lc retriever budget nan", lambda: HippoRetriever(memory=mem).invoke("cat", budget_tokens=float("nan")),
             "budget_tokens"),
            ("lc retriever filter", lambda: HippoRetriever(memory=mem).invoke("cat", filter=[1]), "filter"),
            ("lc store prefix", lambda: HippoStore(mem, prefix="a.b"), "prefix"),
            ("lc history session", lambda: HippoChatMessageHistory(mem, session_id=""), "session_id"),
        ]
    try:
        from llamaindex_hippo.retrievers import HippoRetriever as LIRetriever
    except ImportError:  # pragma: no cover
        pass
    else:
        cases += [
            ("li retriever top_k 0", lambda: LIRetriever(mem, similarity_top_k=0), "similarity_top_k"),
            ("li retriever budget -1", lambda: LIRetriever(mem, budget_tokens=-1), "budget_tokens"),
            ("li retriever mode", lambda: LIRetriever(mem, mode="vector"), "mode"),
            ("li retriever memory", lambda: LIRetriever(None), "memory"),
            ("li retriever query int", lambda: LIRetriever(mem).retrieve(3), "str_or_query_bundle"),
        ]
    return cases


def test_catalogue_through_the_adapters(store) -> None:
    path, snap = store
    with Memory(path) as mem:
        cases = _adapter_cases(mem)
        if not cases:
            pytest.skip("no adapter framework installed")
        failures = []
        for label, call, name in cases:
            try:
                call()
            except HippoError as exc:
                if name.lower() not in str(exc).lower():
                    failures.append(f"{label}: {type(exc).__name__} does not name {name!r}: {exc}")
                continue
            except BaseException as exc:  # noqa: BLE001
                failures.append(f"{label}: expected a HippoError, got {type(exc).__name__}: {str(exc)[:200]}")
                continue
            failures.append(f"{label}: nothing was raised")
        assert not failures, "\n".join(failures)
        assert rel.snapshot(mem) == snap


# --------------------------------------------------------------------------- stateful: Memory vs. a model

_plain = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=0, max_size=12)
_word = st.sampled_from(rel._WORDS)


class MemoryModel(RuleBasedStateMachine):
    """``Memory`` against a dict per namespace: add / add_many / delete / forget / flush / reopen, and reads
    (exact-quote search, get, list, count) that must agree with the model at every step."""

    ids = Bundle("ids")

    @initialize()
    def setup(self) -> None:
        import tempfile

        self.dir = tempfile.mkdtemp(prefix="hippo-model-")
        self.path = Path(self.dir) / "model.db"
        self.cfg = {"seal_tokens": 48}
        self.mem = Memory(self.path, config=self.cfg)
        self.model: dict[str, dict[int, dict]] = {"default": {}, "b": {}}
        self.n = 0

    def teardown(self) -> None:
        self.mem.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def _item(self, words: list[str], noise: str, speaker: str | None, tag: str) -> dict:
        self.n += 1
        text = " ".join([*words, rel.marker(self.n)]) + (" " + noise if noise.strip() else "")
        return {"text": text, "speaker": speaker, "metadata": {"tag": tag}, "session_id": f"s{self.n % 3}"}

    @rule(target=ids, ns=st.sampled_from(["default", "b"]), words=st.lists(_word, min_size=0, max_size=6),
          noise=_plain, speaker=st.sampled_from([None, "Ann", "Bob"]), tag=st.sampled_from("xy"))
    def add(self, ns, words, noise, speaker, tag):
        item = self._item(words, noise, speaker, tag)
        got = self.mem.using(ns).add(**item)
        self.model[ns][got.id] = rel.expected_fields(item)
        return (ns, got.id)

    @rule(ns=st.sampled_from(["default", "b"]),
          batch=st.lists(st.tuples(st.lists(_word, max_size=5), _plain, st.sampled_from("xy")), min_size=0,
                         max_size=6))
    def add_many(self, ns, batch):
        items = [self._item(w, noise, None, tag) for w, noise, tag in batch]
        got = self.mem.using(ns).add_many(items)
        assert len(got) == len(items)
        for it, g in zip(items, got):
            self.model[ns][g.id] = rel.expected_fields(it)

    @rule(ref=ids, via=st.sampled_from(["default", "b"]))
    def delete(self, ref, via):
        ns, i = ref
        n = self.mem.using(via).delete([i])
        expected = 1 if (via == ns and i in self.model[ns]) else 0
        assert n == expected
        if expected:
            del self.model[ns][i]

    @rule(ns=st.sampled_from(["default", "b"]), tag=st.sampled_from("xy"))
    def forget(self, ns, tag):
        want = [i for i, f in self.model[ns].items() if f["metadata"]["tag"] == tag]
        assert self.mem.using(ns).forget({"tag": tag}) == len(want)
        for i in want:
            del self.model[ns][i]

    @rule(ns=st.sampled_from(["default", "b"]))
    def flush(self, ns):
        self.mem.using(ns).flush()

    @rule()
    def reopen(self):
        self.mem.close()
        self.mem = Memory(self.path, config=self.cfg)

    @rule(ref=ids)
    def get(self, ref):
        ns, i = ref
        if i in self.model[ns]:
            assert rel.fields_of(self.mem.using(ns).get(i)) == self.model[ns][i]
        else:
            with pytest.raises(NotFound):
                self.mem.using(ns).get(i)

    @precondition(lambda self: any(self.model.values()))
    @rule(data=st.data())
    def search_exact_quote(self, data):
        ns = data.draw(st.sampled_from([n for n in self.model if self.model[n]]))
        i = data.draw(st.sampled_from(sorted(self.model[ns])))
        text = self.model[ns][i]["text"]
        hits = self.mem.using(ns).search(text, k=10)
        assert any(h.id == i and h.text == text for h in hits), (text, [h.text for h in hits])
        assert all(h.id in self.model[ns] for h in hits)

    @invariant()
    def lists_agree(self):
        if not hasattr(self, "mem"):
            return
        for ns, want in self.model.items():
            view = self.mem.using(ns)
            got = [(it.id, rel.fields_of(it)) for it in view.list()]
            assert got == sorted(want.items())
            assert view.count() == len(want)


MemoryModel.TestCase.settings = settings(max_examples=25, stateful_step_count=25, deadline=None,
                                         suppress_health_check=[HealthCheck.too_slow])
test_memory_against_a_model = MemoryModel.TestCase


# ------------------------------------------------------------------------ byte-level fuzz: deserializers

_BLOBS = rel.native_blobs(random.Random(11))


@pytest.mark.parametrize("name", sorted(_BLOBS))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_deserializers_reject_mutations(name, data) -> None:
    load, blob = _BLOBS[name]
    bad = bytearray(blob)
    kind = data.draw(st.sampled_from(["flip", "truncate", "extend", "splice"]))
    if kind == "flip":
        for pos in data.draw(st.lists(st.integers(0, len(bad) - 1), min_size=1, max_size=4, unique=True)):
            bad[pos] ^= 1 << data.draw(st.integers(0, 7))
    elif kind == "truncate":
        bad = bad[: data.draw(st.integers(0, len(bad) - 1))]
    elif kind == "extend":
        bad += data.draw(st.binary(min_size=1, max_size=64))
    else:
        at = data.draw(st.integers(0, len(bad)))
        bad[at:at + data.draw(st.integers(0, 16))] = data.draw(st.binary(max_size=16))
    if bytes(bad) == blob:
        return
    with pytest.raises(HippoError):
        load(bytes(bad))


@pytest.mark.parametrize("name", sorted(_BLOBS))
def test_deserializers_reject_forged_lengths(name) -> None:
    """A blob whose header claims a huge length (with the checksum left as is) must fail before allocating."""
    load, blob = _BLOBS[name]
    for offset in range(8, min(len(blob) - 8, 48), 4):
        for value in (2**63 - 1, 2**40, 2**32 + 7):
            bad = bytearray(blob)
            bad[offset:offset + 8] = struct.pack("<Q", value)
            if bytes(bad) == blob:
                continue
            with pytest.raises(HippoError):
                load(bytes(bad))


def test_fuzz_campaign_native_and_exports(tmp_path) -> None:
    camp = rel.Campaign("fuzz")
    rel.fuzz_native(camp, per_blob=40, seed=3)
    rel.fuzz_exports(tmp_path, camp, rounds=60, seed=3)
    assert not camp.failures, "\n".join(camp.failures)
    assert camp.counts["inputs_fuzzed"] > 500
    # resealed mutations reach the decoders: some change only the payload and load as valid structures
    assert camp.counts["resealed_inputs_fuzzed"] > 300
    assert camp.counts.get("resealed_inputs_accepted", 0) > 0


def test_fuzz_campaign_store_chunks(tmp_path) -> None:
    camp = rel.Campaign("fuzz")
    rel.fuzz_store_chunks(tmp_path, camp, rounds=30, seed=4)
    assert not camp.failures, "\n".join(camp.failures)
    assert camp.counts.get("corrupt_stores_detected", 0) >= 20
    assert camp.counts.get("resealed_chunks", 0) >= 5  # mutations that only the chunk decoder can find


def test_fuzz_campaign_model(tmp_path) -> None:
    camp = rel.Campaign("fuzz")
    rel.fuzz_model(tmp_path, camp, steps=150, seed=5)
    assert not camp.failures, "\n".join(camp.failures)


# ------------------------------------------------------------------- corrupt store files: regressions




@pytest.mark.parametrize("tokens", [[0xFFFFFFFF], [1 << 17], [100_300], [94, 94], [55, 2**31]],
                         ids=["u32max", "wider than 17 bits", "past the vocabulary", "invalid utf-8", "mixed"])
def test_corrupt_tail_tokens_raise_corrupt_data(tmp_path, tokens) -> None:
    path, mid = tail_store(tmp_path)
    db = sqlite3.connect(path)
    db.execute("UPDATE tail SET tokens = ? WHERE id = ?", (np.asarray(tokens, "<u4").tobytes(), mid))
    db.execute("UPDATE messages SET n_tokens = ? WHERE id = ?", (len(tokens), mid))
    db.commit()
    db.close()
    with Memory(path) as mem:
        with pytest.raises(CorruptData):
            mem.count()
            mem.get(mid)
            mem.list()
            mem.search("unsealed tail message garden", k=50)


@pytest.mark.parametrize("how", ["flip", "truncate", "empty", "foreign"])
def test_corrupt_chunk_blob_raises_corrupt_data(tmp_path, how) -> None:
    path, _ = tail_store(tmp_path)
    db = sqlite3.connect(path)
    cid, blob = db.execute("SELECT id, blob FROM chunks ORDER BY id LIMIT 1").fetchone()
    blob = bytearray(blob)
    if how == "flip":
        blob[len(blob) // 2] ^= 0x10
    elif how == "truncate":
        blob = blob[: len(blob) // 2]
    elif how == "empty":
        blob = bytearray()
    else:
        blob = bytearray(BinaryIndex(64).to_bytes())
    db.execute("UPDATE chunks SET blob = ? WHERE id = ?", (bytes(blob), cid))
    db.commit()
    db.close()
    with Memory(path) as mem:  # opening is fine; the first read of the namespace finds the damage
        with pytest.raises(CorruptData):
            mem.search("garden", k=3)
        with pytest.raises(CorruptData):
            mem.list()


def test_unsupported_schema_version_is_corrupt_data(tmp_path) -> None:
    path = tmp_path / "v.db"
    Memory(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    with pytest.raises(CorruptData, match="schema"):
        Memory(path)


def test_export_import_roundtrip_survives_hostile_text(tmp_path) -> None:
    texts = ["emoji 🐍🎉 and CJK 東京", "tabs\tand\nnewlines\r\n", "RTL עברית", "ﬁ ligature ½", "a" * 5000,
             "\u200b zero width \ufeff bom", "quotes \" ' \\ backslash", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝔱𝔢𝔵𝔱"]
    with Memory(None) as mem:
        mem.add_many([{"text": t, "metadata": {"k": t[:10]}} for t in texts])
        n = mem.export(tmp_path / "x.jsonl")
    with Memory(None) as mem:
        assert mem.import_(tmp_path / "x.jsonl") == n == len(texts)
        assert [it.text for it in mem.list()] == texts
    assert json.loads((tmp_path / "x.jsonl").read_text(encoding="utf-8").splitlines()[0])["format"] == "hippo-export"


def test_no_pickle_of_native_structures() -> None:
    import pickle

    for obj in (_wm(), _bix(), WaveletMatrix(np.arange(5, dtype=np.uint32), 3)):
        with pytest.raises(Exception):
            pickle.dumps(obj)


def test_public_errors_inherit_builtins() -> None:
    assert issubclass(hippo.InvalidInput, ValueError)
    assert issubclass(hippo.NotFound, KeyError)
    assert issubclass(hippo.StoreBusy, TimeoutError) and issubclass(hippo.StoreBusy, hippo.StoreError)
    assert issubclass(hippo.CorruptData, HippoError)


# ------------------------------------------------------------- file-system errors name the path argument


def test_store_path_os_errors_are_store_errors(tmp_path) -> None:
    with pytest.raises(hippo.StoreError, match="path"):
        Memory(tmp_path / "missing" / "dir" / "x.db")
    with pytest.raises(InvalidInput, match="directory"):
        Memory(tmp_path)


def test_export_and_import_file_errors(tmp_path) -> None:
    path = tmp_path / "s.db"
    with Memory(path) as mem:
        mem.add("one message worth keeping")
        with pytest.raises(hippo.StoreError, match="path"):
            mem.export(tmp_path / "missing" / "x.jsonl")
        for target in (path, str(path) + "-wal"):
            with pytest.raises(InvalidInput, match="store file itself"):
                mem.export(target)
        with pytest.raises(InvalidInput, match="directory"):
            mem.import_(tmp_path)
        deep = tmp_path / "deep.jsonl"
        deep.write_bytes(b'{"format": "hippo-export", "version": 1}\n' + b"[" * 200_000 + b"\n")
        with pytest.raises(CorruptData, match="path"):
            mem.import_(deep)
        wrong = tmp_path / "wrong.jsonl"
        wrong.write_text('{"format": "csv"}\n', encoding="utf-8")
        with pytest.raises(CorruptData, match="path"):
            mem.import_(wrong)
        assert [it.text for it in mem.list()] == ["one message worth keeping"]
    with Memory(path) as mem:
        assert mem.count() == 1


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="named pipes")
def test_import_refuses_a_pipe_or_a_device(tmp_path) -> None:
    """A named pipe blocked the open until something wrote to it (a hang), and a device such as /dev/zero was read
    as one line without end (memory without bound); like export, import reads regular files only."""
    import os

    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    held = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # a writer holds it: an open for reading does not block
    try:
        os.write(held, b"not an export\n")  # read whole, this first line would already be refused
        with Memory(None) as mem:
            with pytest.raises(InvalidInput, match="pipe.jsonl.*not a regular file"):
                mem.import_(fifo)
            if os.path.exists("/dev/null"):
                with pytest.raises(InvalidInput, match="not a regular file"):
                    mem.import_("/dev/null")
            assert mem.count() == 0
    finally:
        os.close(held)


def test_export_file_is_private_even_over_a_planted_file(tmp_path) -> None:
    import os

    out = tmp_path / "x.jsonl"
    planted = tmp_path / "x.jsonl.tmp"
    planted.write_text("", encoding="utf-8")
    planted.chmod(0o666)
    with Memory(None) as mem:
        mem.add("a private note")
        mem.export(out)
    assert out.stat().st_mode & 0o777 == 0o600
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("untouched", encoding="utf-8")
    os.unlink(planted) if planted.exists() else None
    os.symlink(elsewhere, planted)
    with Memory(None) as mem:
        mem.add("a private note")
        assert mem.export(out) == 1  # written to a file of its own, never through the planted link
    assert elsewhere.read_text(encoding="utf-8") == "untouched" and planted.is_symlink()
    assert out.stat().st_mode & 0o777 == 0o600 and "a private note" in out.read_text(encoding="utf-8")


def test_words_next_to_emoji_and_cjk_are_found() -> None:
    """A word followed by a space and a multi-byte character (emoji, CJK, Hebrew) is still a whole word."""
    texts = ["What a party 🎉 that was", "We met in Kyoto 東京 last spring", "the lesson עברית went well",
             "a quiet harbor Ελληνικά view"]
    with Memory(None) as mem:
        got = mem.add_many([{"text": t} for t in texts])
        mem.add_many([{"text": f"unrelated filler message {i}"} for i in range(20)])
        for word, item in zip(("party", "Kyoto", "lesson", "harbor"), got):
            hits = mem.search(word, k=3)
            assert hits and hits[0].id == item.id, (word, [h.text for h in hits])

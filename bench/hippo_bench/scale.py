"""How hippo.Memory scales with the size of the stored stream.

A deterministic generator writes a multi-session conversation between a pool of speakers: sessions pick a
few topics, topic words come from a pseudo-word vocabulary with Zipf frequencies, and sentences are filled
templates. Spread evenly through the stream are planted "needle" facts built from the same common
vocabulary (so their words also occur elsewhere; only the combination is unique), each with a question whose
answer we know. For every size (1e5, 1e6, 1e7 tokens by default), each step in a fresh process:

* the live process ingests the stream into a temporary SQLite store with ``add_many`` in batches, asks the needle
  questions and closes: ingest tokens/s; recall and search latency p50 / p95; needle hit rate (the needle message
  verbatim in ``recall(question).text``) at the recall budget; store bytes per token (file + WAL after
  ``close()``); peak RSS (``ru_maxrss``) and RSS while live;
* a restart: another process opens the store and recalls at once (open time, first and second recall, RSS);
* the peer at the same size: bm25s (English stopwords, Snowball stemmer) over ``"<speaker>: <text>"`` turns,
  index build time and top-10 query latency over the same questions, peak RSS;
* two processes adding single messages to the store in turns, each catching up with the other's add, against one
  process alone: add latency p50 / p95;

plus a short-messages scenario (``--short-messages``: many one-line messages, then a restart: first recall and
RSS after it against the live process's RSS), and a log-log PNG of recall latency against stream size.
"""

from __future__ import annotations

import argparse
import bisect
import concurrent.futures
import itertools
import json
import math
import multiprocessing
import os
import random
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from hippo_bench._common import (
    cl100k_encoder,
    fmt_num,
    machine_info,
    markdown_table,
    percentile,
    require,
)
from hippo.cli import progress

DEFAULT_SIZES = (100_000, 1_000_000, 10_000_000)
QUICK_SIZES = (10_000, 100_000)

# ----------------------------------------------------------------------------------------- generator

_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"
_ADJECTIVES = (
    "new old quiet busy strange lovely tricky huge tiny bright dark cheap expensive simple messy fresh "
    "warm cold early late noisy calm weird perfect broken shiny slow quick"
).split()
_KIN = "sister brother cousin aunt uncle neighbour friend colleague grandmother grandfather".split()
_MONTHS = "January February March April May June July August September October November December".split()
_DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()

_SENTENCES = (
    "I spent the weekend working on the {noun} with {person}.",
    "Did you ever try the {adj} {noun} near {place}?",
    "We talked about {noun} and {noun2} for hours.",
    "{person} said the {noun} was {adj} this time.",
    "I'm thinking of getting a {adj} {noun} before {day}.",
    "That reminds me of the {noun} we saw in {place}.",
    "Honestly the {noun} has been {adj} lately, so I switched to {noun2}.",
    "Let me know if you need help with the {noun}.",
    "My {kin} keeps asking about the {noun} in {place}.",
    "The {noun} at work is {adj} again, and the {noun2} is not helping.",
    "Yes, exactly!",
    "Haha, that sounds like {person}.",
    "How did the {noun} go on {day}?",
    "I finally finished the {noun}; next up is the {noun2}.",
    "We might drive to {place} to look at a {adj} {noun}.",
    "Thanks, I really appreciate it.",
)

# (fact, question, answer): the fact is said by a speaker; the question is asked later. Slots come from the
# common vocabulary, so every word also occurs in ordinary turns; only the combination is unique.
_NEEDLES = (
    ("My {kin} {person} finally bought a {noun} at the {place} market for {amount} dollars.",
     "How much did {person} pay for the {noun} at the {place} market?", "{amount} dollars"),
    ("Remember that the spare key for the {noun} in {place} is hidden under the {noun2}.",
     "Where is the spare key for the {noun} in {place} hidden?", "under the {noun2}"),
    ("{person} is moving to {place} in {month} to start a job as a {noun} designer.",
     "When is {person} moving to {place} for the {noun} designer job?", "in {month}"),
    ("The password for the {noun} club wifi in {place} is {code}.",
     "What is the password for the {noun} club wifi in {place}?", "{code}"),
    ("{person}'s favourite {noun} recipe uses {noun2} and a pinch of {noun3}.",
     "What does {person}'s favourite {noun} recipe use?", "{noun2} and a pinch of {noun3}"),
    ("Our {noun} appointment with {person} got moved to {day} the {dom}th at {hour} o'clock.",
     "When is the {noun} appointment with {person}?", "{day} the {dom}th"),
)


@dataclass(frozen=True)
class Needle:
    question: str
    text: str  # the planted message, verbatim
    answer: str
    position: int  # index of the message in the stream


@dataclass
class Stream:
    """The generated messages (``add_many`` dicts) and the needles planted in them."""

    items: list[dict[str, Any]]
    tokens: int
    sessions: int
    needles: list[Needle] = field(default_factory=list)


class SyntheticConversation:
    """Deterministic multi-session conversation generator (same seed, same stream, on every platform)."""

    def __init__(self, seed: int = 7, *, n_nouns: int = 20_000, n_people: int = 200, n_places: int = 400,
                 n_speakers: int = 24, zipf_s: float = 1.05) -> None:
        self.rng = random.Random(seed)
        words = self._pseudo_words(n_nouns + n_people + n_places)
        self.nouns = words[:n_nouns]
        self.people = [w.capitalize() for w in words[n_nouns : n_nouns + n_people]]
        self.places = [w.capitalize() for w in words[n_nouns + n_people :]]
        self.speakers = self.people[:n_speakers]
        weights = [1.0 / (r ** zipf_s) for r in range(1, n_nouns + 1)]
        self._noun_cum = list(itertools.accumulate(weights))
        pw = [1.0 / r for r in range(1, n_people + 1)]
        self._person_cum = list(itertools.accumulate(pw))
        lw = [1.0 / r for r in range(1, n_places + 1)]
        self._place_cum = list(itertools.accumulate(lw))

    def _pseudo_words(self, n: int) -> list[str]:
        syll = [c + v for c in _CONSONANTS for v in _VOWELS]
        seen: set[str] = set()
        out: list[str] = []
        while len(out) < n:
            w = "".join(self.rng.choice(syll) for _ in range(self.rng.choice((2, 2, 3, 3, 4))))
            if w not in seen:
                seen.add(w)
                out.append(w)
        return out

    def _zipf(self, items: list[str], cum: list[float]) -> str:
        return items[bisect.bisect_left(cum, self.rng.random() * cum[-1])]

    def _slots(self, topic: list[str]) -> dict[str, str]:
        r = self.rng

        def noun() -> str:
            # Half of a session's nouns come from its topics, the rest from the whole Zipf vocabulary.
            return r.choice(topic) if r.random() < 0.5 else self._zipf(self.nouns, self._noun_cum)

        return {
            "noun": noun(), "noun2": noun(), "noun3": noun(),
            "adj": r.choice(_ADJECTIVES), "kin": r.choice(_KIN), "day": r.choice(_DAYS),
            "month": r.choice(_MONTHS),
            "person": self._zipf(self.people, self._person_cum),
            "place": self._zipf(self.places, self._place_cum),
        }

    def _needle(self, topic: list[str]) -> tuple[str, str, str]:
        r = self.rng
        slots = self._slots(topic)
        slots.update(amount=str(r.randint(12, 9_999)), dom=str(r.randint(4, 28)), hour=str(r.randint(1, 12)),
                     code=f"{r.choice(self.nouns)}-{r.randint(100, 999)}")
        fact, question, answer = r.choice(_NEEDLES)
        text = fact.format(**slots)
        return text[0].upper() + text[1:], question.format(**slots), answer.format(**slots)

    def generate(self, target_tokens: int, *, n_needles: int = 100, encoder: Any = None) -> Stream:
        """Messages until their text holds ``target_tokens`` cl100k tokens, with ``n_needles`` facts planted
        at evenly spaced token offsets."""
        enc = encoder or cl100k_encoder()
        r = self.rng
        items: list[dict[str, Any]] = []
        needles: list[Needle] = []
        marks = [int((j + 0.5) * target_tokens / n_needles) for j in range(n_needles)] if n_needles else []
        next_mark = 0
        tokens = 0
        session = 0
        clock = datetime(2022, 1, 3, 9, 0)
        while tokens < target_tokens:
            session += 1
            a, b = r.sample(self.speakers, 2)
            topic = [self._zipf(self.nouns, self._noun_cum) for _ in range(6)]
            clock += timedelta(hours=r.randint(6, 60))
            turns = r.randint(8, 40)
            texts: list[str] = []
            plants: list[int] = []
            for t in range(turns):
                if next_mark < len(marks) and tokens + sum(len(x) for x in texts) // 4 >= marks[next_mark]:
                    text, question, answer = self._needle(topic)
                    plants.append(len(texts))
                    needles.append(Needle(question, text, answer, len(items) + len(texts)))
                    next_mark += 1
                else:
                    text = " ".join(r.choice(_SENTENCES).format(**self._slots(topic))
                                    for _ in range(r.choice((1, 1, 2, 2, 3))))
                texts.append(text)
            counts = [len(x) for x in enc.encode_ordinary_batch(texts)]
            for t, (text, n_tok) in enumerate(zip(texts, counts)):
                if tokens >= target_tokens:
                    break
                items.append({
                    "text": text,
                    "speaker": a if t % 2 == 0 else b,
                    "timestamp": clock + timedelta(seconds=30 * t),
                    "session_id": f"session_{session}",
                    "metadata": {"turn": t},
                })
                tokens += n_tok
        kept = [nd for nd in needles if nd.position < len(items)]
        return Stream(items, tokens, session, kept)


# --------------------------------------------------------------------------------------------- run
#
# Every measurement runs in a fresh process (spawned), so peak RSS and the cost of a restart are those of that step
# alone: ingest and queries (the live process), a reopen and first recall (a restart), bm25s over the same turns
# (the peer), two processes adding in turns to the same store (and one process alone, the baseline), and the
# short-messages scenario (many one-line messages: the per-message costs of a restart).


def _file_bytes(path: Path) -> int:
    total = 0
    for suffix in ("", "-wal", "-shm", "-journal"):
        p = Path(str(path) + suffix)
        if p.exists():
            total += p.stat().st_size
    return total


def _peak_rss_bytes() -> int | None:
    try:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(peak) * (1 if os.uname().sysname == "Darwin" else 1024)
    except (ImportError, AttributeError, OSError):
        return None


def _rss_mb() -> float:
    psutil = require("psutil", "measuring memory use")
    return psutil.Process().memory_info().rss / 2**20


def _stream_file(tmp: Path, target_tokens: int) -> Path:
    return tmp / f"stream-{target_tokens}.json"


def run_ingest(target_tokens: int, path: str, options: dict[str, Any]) -> dict[str, Any]:
    """The live process: generate, ingest with ``add_many`` in batches, ask the needle questions, close. The
    stream is written next to the store for the other steps."""
    psutil = require("psutil", "measuring memory use")
    from hippo import Memory

    proc = psutil.Process()
    encoder = cl100k_encoder()
    n_needles = int(options.get("needles") or min(100, max(5, target_tokens // 1000)))
    t0 = time.perf_counter()
    stream = SyntheticConversation(options.get("seed", 7)).generate(target_tokens, n_needles=n_needles,
                                                                    encoder=encoder)
    gen_seconds = time.perf_counter() - t0
    _stream_file(Path(path).parent, target_tokens).write_text(json.dumps({
        "turns": [[it["speaker"], it["text"]] for it in stream.items],
        "needles": [[nd.question, nd.text, nd.answer] for nd in stream.needles]}), encoding="utf-8")
    budget = int(options.get("budget", 1000))
    batch = int(options.get("batch", 1000))
    rss_before = proc.memory_info().rss
    rss_samples = [rss_before]
    mem = Memory(path, namespace="scale")
    t0 = time.perf_counter()
    bar = progress.start(len(stream.items), f"scale {target_tokens:.0e} tokens: ingest")
    for s in range(0, len(stream.items), batch):
        mem.add_many(stream.items[s: s + batch])
        rss_samples.append(proc.memory_info().rss)
        bar.update(len(stream.items[s: s + batch]))
    bar.close()
    ingest_seconds = time.perf_counter() - t0
    # The first half of the questions meets a process still building what it derives on first use (the speaker
    # profiles, in the background); the second half, asked once that finished, is the steady state reported.
    half = len(stream.needles) // 2 if len(stream.needles) > 1 else 0
    cold_lat: list[float] = []
    recall_lat: list[float] = []
    search_lat: list[float] = []
    hits = answers = 0
    recall_tokens: list[int] = []
    settle_seconds = 0.0
    for k, nd in enumerate(stream.needles):
        if k == half:
            t1 = time.perf_counter()
            getattr(mem.engine.state(), "wait_warm", lambda: True)()
            settle_seconds = time.perf_counter() - t1
        t1 = time.perf_counter()
        rec = mem.recall(nd.question, budget_tokens=budget)
        (cold_lat if k < half else recall_lat).append(time.perf_counter() - t1)
        hits += nd.text in rec.text
        answers += bool(nd.answer) and nd.answer in rec.text
        recall_tokens.append(int(getattr(rec, "tokens", 0) or 0))
        t1 = time.perf_counter()
        mem.search(nd.question, k=10)
        if k >= half:
            search_lat.append(time.perf_counter() - t1)
    rss_live = proc.memory_info().rss
    rss_samples.append(rss_live)
    try:
        stats = {k: v for k, v in mem.stats().items() if isinstance(v, (int, float, str, bool))}
    except Exception as exc:  # informative only
        stats = {"error": f"{type(exc).__name__}: {exc}"}
    t1 = time.perf_counter()
    mem.close()
    close_seconds = time.perf_counter() - t1
    store_bytes = _file_bytes(Path(path))
    ms = [x * 1e3 for x in recall_lat]
    sms = [x * 1e3 for x in search_lat]
    n_q = len(stream.needles)
    peak = _peak_rss_bytes() or max(rss_samples)
    return {
        "target_tokens": target_tokens,
        "tokens": stream.tokens,
        "messages": len(stream.items),
        "sessions": stream.sessions,
        "generate_seconds": gen_seconds,
        "ingest_seconds": ingest_seconds,
        "ingest_tokens_per_s": stream.tokens / ingest_seconds if ingest_seconds > 0 else math.nan,
        "ingest_messages_per_s": len(stream.items) / ingest_seconds if ingest_seconds > 0 else math.nan,
        "batch": batch,
        "budget": budget,
        "queries": n_q,
        "recall_ms": {"p50": percentile(ms, 50), "p95": percentile(ms, 95),
                      "mean": sum(ms) / len(ms) if ms else math.nan, "queries": len(ms)},
        "recall_first_half_ms": {"p50": percentile([x * 1e3 for x in cold_lat], 50),
                                 "p95": percentile([x * 1e3 for x in cold_lat], 95), "queries": len(cold_lat)},
        "settle_seconds": settle_seconds,
        "search_ms": {"p50": percentile(sms, 50), "p95": percentile(sms, 95)},
        "recall_mean_tokens": sum(recall_tokens) / len(recall_tokens) if recall_tokens else math.nan,
        "needle_hit_rate": hits / n_q if n_q else math.nan,
        "needle_answer_rate": answers / n_q if n_q else math.nan,
        "store_bytes": store_bytes,
        "bytes_per_token": store_bytes / stream.tokens if stream.tokens else math.nan,
        "close_seconds": close_seconds,
        "rss_before_mb": rss_before / 2**20,
        "rss_live_mb": rss_live / 2**20,
        "rss_max_sampled_mb": max(rss_samples) / 2**20,
        "peak_rss_mb": peak / 2**20,
        # The generated stream itself is held in memory before ingest starts; the growth is the engine's.
        "peak_rss_growth_mb": (peak - rss_before) / 2**20,
        "stats": stats,
    }


def run_reopen(path: str, question: str, needle: str, budget: int, namespace: str = "scale") -> dict[str, Any]:
    """A restart: a fresh process imports hippo and loads the tokenizer (timed apart: it does not depend on the
    store), opens the store and asks one question at once (the derived state comes from the store's snapshots),
    then a second one; RSS is taken after the first recall."""
    t0 = time.perf_counter()
    from hippo import Memory
    from hippo.text import tokenizer

    tokenizer.encoding()  # library start-up (the cl100k tables), the same for every store: reported apart
    startup_s = time.perf_counter() - t0
    rss0 = _rss_mb()
    t0 = time.perf_counter()
    mem = Memory(path, namespace=namespace)
    open_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    rec = mem.recall(question, budget_tokens=budget)
    first_s = time.perf_counter() - t0
    rss_after = _rss_mb()
    t0 = time.perf_counter()
    mem.recall(question, budget_tokens=budget)
    second_s = time.perf_counter() - t0
    state = mem.engine.state()
    t0 = time.perf_counter()
    getattr(state, "wait_warm", lambda: True)()  # followers rebuilt in the background (none when snapshots load)
    warm_s = time.perf_counter() - t0
    mem.close()
    return {"startup_seconds": startup_s, "open_seconds": open_s, "first_recall_seconds": first_s,
            "second_recall_seconds": second_s,
            "first_recall_hit": bool(needle) and needle in rec.text, "first_recall_units": len(rec.units),
            "background_catch_up_seconds": warm_s, "rss_start_mb": rss0, "rss_after_first_recall_mb": rss_after,
            "peak_rss_mb": (_peak_rss_bytes() or 0) / 2**20}


def run_maintenance(path: str, namespace: str = "scale") -> dict[str, Any]:
    """The cost of forgetting and of a deep consolidation on the grown store, in a fresh process that has opened
    it and searched once: three deletions of one message each (median), one deletion of 1% of the messages in
    one call, then ``consolidate("deep")``; wall-clock seconds."""
    from hippo import Memory

    mem = Memory(path, namespace=namespace)
    mem.search("anything", k=1)
    n = mem.count()
    ids = [it.id for it in mem.list(limit=max(4, n // 100 + 3), offset=n // 3)]
    one = []
    for i in ids[:3]:
        t0 = time.perf_counter()
        mem.delete([i])
        one.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    many = mem.delete(ids[3:])
    many_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    mem.consolidate("deep")
    deep_s = time.perf_counter() - t0
    mem.close()
    return {"delete_one_seconds": sorted(one)[len(one) // 2] if one else math.nan, "delete_many": many,
            "delete_many_seconds": many_s, "deep_seconds": deep_s}


def run_bm25s(stream_path: str, budget: int) -> dict[str, Any]:
    """The peer at the same size: bm25s (English stopwords, Snowball stemmer) over ``"<speaker>: <text>"``
    turns: index build time, top-10 query latency over the needle questions, peak RSS."""
    bm25s = require("bm25s", "the bm25s peer")
    stemmer_mod = require("Stemmer", "the bm25s peer's English stemmer (PyStemmer)")
    import numpy as np

    data = json.loads(Path(stream_path).read_text(encoding="utf-8"))
    docs = [f"{sp}: {text}" for sp, text in data["turns"]]
    rss0 = _rss_mb()
    stemmer = stemmer_mod.Stemmer("english")
    t0 = time.perf_counter()
    corpus = bm25s.tokenize(docs, stopwords="en", stemmer=stemmer, show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)
    build = time.perf_counter() - t0
    lat, hits = [], 0
    for question, needle, _ in data["needles"]:
        t0 = time.perf_counter()
        q = bm25s.tokenize([question], stopwords="en", stemmer=stemmer, show_progress=False, return_ids=False)[0]
        scores = np.asarray(retriever.get_scores(q), dtype=np.float64)
        top = np.argsort(-scores, kind="stable")[:10]
        lat.append((time.perf_counter() - t0) * 1e3)
        hits += any(needle in docs[i] for i in top.tolist())
    n = len(data["needles"])
    return {"build_seconds": build, "query_ms": {"p50": percentile(lat, 50), "p95": percentile(lat, 95)},
            "top10_hit_rate": hits / n if n else math.nan, "rss_start_mb": rss0,
            "peak_rss_mb": (_peak_rss_bytes() or 0) / 2**20}


def _alternate(path: str, texts: list[str], me: int, turns: Any, results: Any) -> None:
    """One of two processes adding in turns: wait for my turn, add one message, hand the turn over."""
    from hippo import Memory

    mem = Memory(path, namespace="scale")
    mem.count()  # loaded before the clock starts
    lat = []
    for text in texts:
        turns[me].wait()
        turns[me].clear()
        t0 = time.perf_counter()
        mem.add(text, speaker=f"writer{me}")
        lat.append((time.perf_counter() - t0) * 1e3)
        turns[1 - me].set()
    mem.close()
    results.put((me, lat))


def run_alternating(path: str, adds: int, seed: int) -> dict[str, Any]:
    """Add latency with two processes writing the store in turns (each catches up with the other's add first),
    and with one process alone (the baseline), ``adds`` messages each way."""
    from hippo import Memory

    texts = [it["text"] for it in SyntheticConversation(seed + 1).generate(adds * 30, n_needles=0).items]
    texts = (texts * (2 * adds // max(1, len(texts)) + 2))[: 2 * adds]
    half = adds // 2
    ctx = multiprocessing.get_context("spawn")
    turns, results = [ctx.Event(), ctx.Event()], ctx.Queue()
    procs = [ctx.Process(target=_alternate, args=(path, texts[me: 2 * half: 2], me, turns, results))
             for me in (0, 1)]
    for pr in procs:
        pr.start()
    turns[0].set()
    got = dict(results.get(timeout=3600) for _ in procs)
    for pr in procs:
        pr.join(600)
    two = got[0] + got[1]
    mem = Memory(path, namespace="scale")
    mem.count()
    one = []
    for text in texts[: 2 * half]:
        t0 = time.perf_counter()
        mem.add(text, speaker="writer")
        one.append((time.perf_counter() - t0) * 1e3)
    mem.close()
    return {"adds": len(two), "two_processes_ms": {"p50": percentile(two, 50), "p95": percentile(two, 95)},
            "one_process_ms": {"p50": percentile(one, 50), "p95": percentile(one, 95)}}


_SHORT = ("ok", "yes, sure", "thanks!", "see you at {h}", "got it", "on my way", "call {p} later", "lunch at {h}?",
          "{p} says hi", "done", "sounds good", "ping me", "back in {h} min", "meeting moved", "{p} is here")


def run_short_ingest(path: str, messages: int, batch: int, seed: int) -> dict[str, Any]:
    """The short-messages scenario, live process: ``messages`` one-line messages, then one recall; RSS before the
    restart is taken here."""
    from hippo import Memory

    rng = random.Random(seed)
    people = [w.capitalize() for w in SyntheticConversation(seed)._pseudo_words(40)]
    mem = Memory(path, namespace="short")
    t0 = time.perf_counter()
    bar = progress.start(messages, f"short messages {messages:,}: ingest")
    for s in range(0, messages, batch):
        n = min(batch, messages - s)
        mem.add_many([{"text": rng.choice(_SHORT).format(h=rng.randint(1, 12), p=rng.choice(people)) + f" #{s + k}",
                       "speaker": people[(s + k) % 7], "session_id": f"d{(s + k) // 200}"} for k in range(n)])
        bar.update(n)
    bar.close()
    ingest = time.perf_counter() - t0
    question = f"when is lunch with {people[3]}?"
    mem.recall(question, budget_tokens=500)
    rss_live = _rss_mb()
    t0 = time.perf_counter()
    mem.close()
    return {"messages": messages, "ingest_seconds": ingest, "rss_live_mb": rss_live, "question": question,
            "close_seconds": time.perf_counter() - t0, "store_bytes": _file_bytes(Path(path)),
            "peak_rss_mb": (_peak_rss_bytes() or 0) / 2**20}


def _in_child(fn: Any, *args: Any) -> Any:
    # A fresh interpreter per step: peak RSS and the cost of a restart then belong to that step alone.
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
        return pool.submit(fn, *args).result()


def run_size(target_tokens: int, options: dict[str, Any], call: Any = None) -> dict[str, Any]:
    """Every row of the table for one stream size (each step in a fresh process unless ``call`` says otherwise)."""
    call = call or _in_child
    with tempfile.TemporaryDirectory(prefix="hippo-scale-", dir=options.get("tmpdir")) as tmp:
        path = str(Path(tmp) / "scale.db")
        r = call(run_ingest, target_tokens, path, options)
        stream = _stream_file(Path(tmp), target_tokens)
        data = json.loads(stream.read_text(encoding="utf-8"))
        if data["needles"] and options.get("reopen", True):
            q, needle, _ = data["needles"][0]
            r["reopen"] = call(run_reopen, path, q, needle, r["budget"])
        else:
            r["reopen"] = {}
        if options.get("peer", True):
            r["bm25s"] = call(run_bm25s, str(stream), r["budget"])
        adds = int(options.get("alternating", 0))
        if adds > 1:
            r["alternating"] = run_alternating(path, adds, options.get("seed", 7))
        if options.get("maintenance", True):
            r["maintenance"] = call(run_maintenance, path)
    return r


def run_short(options: dict[str, Any], call: Any = None) -> dict[str, Any]:
    call = call or _in_child
    with tempfile.TemporaryDirectory(prefix="hippo-short-", dir=options.get("tmpdir")) as tmp:
        path = str(Path(tmp) / "short.db")
        live = call(run_short_ingest, path, int(options["short_messages"]), int(options.get("batch", 1000)),
                    options.get("seed", 7))
        again = call(run_reopen, path, live["question"], "", 500, "short")
    live["reopen"] = again
    live["rss_ratio"] = again["rss_after_first_recall_mb"] / live["rss_live_mb"] if live["rss_live_mb"] else math.nan
    return live


def growth_exponent(sizes: list[float], values: list[float]) -> float:
    """Least-squares slope of log(value) on log(size): 1 is linear growth, below 1 sublinear."""
    pts = [(math.log(s), math.log(v)) for s, v in zip(sizes, values) if s > 0 and v and v > 0]
    if len(pts) < 2:
        return math.nan
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    den = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / den if den else math.nan


def plot_latency(results: list[dict[str, Any]], path: Path) -> Path:
    matplotlib = require("matplotlib", "the latency plot")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [r["tokens"] for r in results]
    fig, ax = plt.subplots(figsize=(6, 4), dpi=120)
    ax.loglog(xs, [r["recall_ms"]["p50"] for r in results], "o-", label="recall p50")
    ax.loglog(xs, [r["recall_ms"]["p95"] for r in results], "s--", label="recall p95")
    ax.loglog(xs, [r["search_ms"]["p50"] for r in results], "^:", label="search p50")
    ax.set_xlabel("stored tokens (cl100k)")
    ax.set_ylabel("latency (ms)")
    ax.set_title("hippo.Memory latency vs stream size")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def render_markdown(result: dict[str, Any]) -> str:
    rows = []
    for r in result["results"]:
        ro, bm, alt, mt = r.get("reopen", {}), r.get("bm25s", {}), r.get("alternating", {}), r.get("maintenance", {})
        rows.append([
            f"{r['tokens']:,}", f"{r['messages']:,}", f"{r['ingest_tokens_per_s']:,.0f}",
            fmt_num(ro.get("open_seconds"), 3), fmt_num(ro.get("first_recall_seconds"), 3),
            f"{fmt_num(r['recall_ms']['p50'], 1)} / {fmt_num(r['recall_ms']['p95'], 1)}",
            f"{fmt_num(bm.get('query_ms', {}).get('p50'), 1)} / {fmt_num(bm.get('query_ms', {}).get('p95'), 1)}",
            fmt_num(bm.get("build_seconds"), 2),
            f"{fmt_num(alt.get('one_process_ms', {}).get('p50'), 2)}",
            f"{fmt_num(alt.get('two_processes_ms', {}).get('p50'), 2)} / "
            f"{fmt_num(alt.get('two_processes_ms', {}).get('p95'), 2)}",
            f"{fmt_num(mt.get('delete_one_seconds'), 3)} / {fmt_num(mt.get('delete_many_seconds'), 3)}",
            fmt_num(mt.get("deep_seconds"), 3),
            f"{r['needle_hit_rate']:.2f} ({r['queries']})", fmt_num(r["bytes_per_token"], 2),
            f"{fmt_num(r['peak_rss_mb'], 0)} / {fmt_num(ro.get('peak_rss_mb'), 0)} / {fmt_num(bm.get('peak_rss_mb'), 0)}",
        ])
    table = markdown_table(
        ["tokens", "messages", "ingest tok/s", "reopen s", "1st recall after reopen s", "recall p50 / p95 ms",
         "bm25s query p50 / p95 ms", "bm25s build s", "add, 1 process, p50 ms", "add, 2 processes, p50 / p95 ms",
         "delete 1 id / 1% s", "deep consolidate s", f"needle hits @{result['budget']}", "store bytes/token",
         "peak RSS MB: live / restarted / bm25s"], rows)
    lines = ["## hippo bench scale", "",
             "Synthetic multi-session stream (Zipf pseudo-word topics, templated sentences, planted needle facts); "
             f"add_many in batches of {result['batch']}; every step in a fresh process on one temporary SQLite file "
             "per size: ingest and the needle questions (the live process; recall latency over the second half of "
             "the questions, once what the first half started building in the background is done), a reopen and "
             "its first recall (a restart; the tokenizer's start-up is timed apart), bm25s over the same turns "
             "(index build and top-10 queries), two processes adding in turns and one process alone, then (a fresh "
             "process) deleting one message three times (median), 1% of them in one call, and a deep "
             "consolidation.", "", table,
             ""]
    short = result.get("short")
    if short:
        ro = short["reopen"]
        lines += ["### Restart after many short messages", "", markdown_table(
            ["messages", "ingest s", "reopen s", "1st recall s", "RSS live MB", "RSS after 1st recall MB",
             "ratio", "store MB"],
            [[f"{short['messages']:,}", fmt_num(short["ingest_seconds"], 1), fmt_num(ro["open_seconds"], 3),
              fmt_num(ro["first_recall_seconds"], 3), fmt_num(short["rss_live_mb"], 0),
              fmt_num(ro["rss_after_first_recall_mb"], 0), fmt_num(short["rss_ratio"], 2),
              fmt_num(short["store_bytes"] / 2**20, 1)]]), ""]
    g = result.get("recall_p50_growth_exponent")
    if g is not None and not math.isnan(g):
        lines.append(f"Recall p50 grows as size^{g:.2f} over this range (1.0 = linear).")
    if result.get("plot"):
        lines.append(f"Plot: {result['plot']}")
    return "\n".join(lines) + "\n"


def _parse_sizes(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        part = part.strip()
        if part:
            v = int(float(part))
            if v <= 0:
                raise SystemExit(f"--sizes: {part!r} is not a positive number of tokens")
            out.append(v)
    if not out:
        raise SystemExit("--sizes needs at least one size, e.g. 1e5,1e6")
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sizes", default=None, help="comma-separated token counts (default 1e5,1e6,1e7; --quick 1e4,1e5)")
    p.add_argument("--batch", type=int, default=1000, help="messages per add_many call (default 1000)")
    p.add_argument("--budget", type=int, default=1000, help="recall budget in tokens (default 1000)")
    p.add_argument("--needles", type=int, default=None, help="needle questions per size (default min(100, tokens/1000))")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--alternating", type=int, default=None,
                   help="adds by two processes in turns (and by one alone) per size (default 20000; --quick 200)")
    p.add_argument("--short-messages", type=int, default=None,
                   help="messages of the short-messages restart scenario (default 1000000; --quick 5000; 0: skip)")
    p.add_argument("--no-peer", action="store_true", help="skip the bm25s peer")
    p.add_argument("--in-process", action="store_true", help="run every step in this process (RSS then accumulates)")
    p.add_argument("--no-reopen", action="store_true", help="skip the reopen measurement")
    p.add_argument("--no-maintenance", action="store_true",
                   help="skip the deletions and the deep consolidation measured on each grown store")
    p.add_argument("--tmpdir", default=None, help="directory for the temporary store files")


def _here(fn: Any, *args: Any) -> Any:
    return fn(*args)


def run(args: argparse.Namespace, out: Path | None = None) -> tuple[dict[str, Any], str]:
    require("psutil", "measuring memory use")
    sizes = _parse_sizes(args.sizes) if args.sizes else list(QUICK_SIZES if args.quick else DEFAULT_SIZES)
    if args.batch < 1 or args.budget < 1:
        raise SystemExit("--batch and --budget must be positive")
    alternating = args.alternating if args.alternating is not None else (200 if args.quick else 20_000)
    short = args.short_messages if args.short_messages is not None else (5_000 if args.quick else 1_000_000)
    if alternating < 0 or short < 0:
        raise SystemExit("--alternating and --short-messages must be >= 0")
    if not args.no_peer:
        require("bm25s", "the bm25s peer")
        require("Stemmer", "the bm25s peer's English stemmer (PyStemmer)")
    options = {"batch": args.batch, "budget": args.budget, "needles": args.needles, "seed": args.seed,
               "reopen": not args.no_reopen, "tmpdir": args.tmpdir, "alternating": alternating,
               "peer": not args.no_peer, "short_messages": short, "maintenance": not args.no_maintenance}
    call = _here if args.in_process else None
    results = []
    for size in sizes:
        r = run_size(size, options, call)
        ro = r.get("reopen", {})
        print(f"scale {size:,} tokens: ingest {r['ingest_tokens_per_s']:,.0f} tok/s, recall p50 "
              f"{r['recall_ms']['p50']:.2f} ms, first recall after reopen "
              f"{fmt_num(ro.get('first_recall_seconds'), 3)} s, needles {r['needle_hit_rate']:.2f}", flush=True)
        results.append(r)
    result: dict[str, Any] = {
        "benchmark": "scale",
        "sizes": sizes,
        "batch": args.batch,
        "budget": args.budget,
        "results": results,
        "recall_p50_growth_exponent": growth_exponent([r["tokens"] for r in results],
                                                      [r["recall_ms"]["p50"] for r in results]),
        "machine": machine_info(),
    }
    if short:
        result["short"] = run_short(options, call)
    if out is not None:
        result["plot"] = str(plot_latency(results, Path(out).with_suffix(".png")))
    return result, render_markdown(result)

"""``hippo demo``: a sample conversation stored offline and questions answered from memory."""

from __future__ import annotations

import json
import time
from importlib import resources

from hippo.cli._common import positive_int

__all__ = ["add_parsers", "cmd_demo"]

DEMO_QUESTIONS = [
    "When is Maya moving into the Porto flat, and who are the movers?",
    "Who is Maya's team lead now?",
    "When did the billing migration actually go live?",
    "Who can repair the oak table?",
    "What kind of dog does Maya want to adopt, and from where?",
    "How long is Maya's Duolingo streak?",
]


def cmd_demo(args) -> int:
    from hippo import Memory, count_tokens

    with resources.files("hippo").joinpath("data/demo_conversation.jsonl").open(encoding="utf-8") as f:
        items = [json.loads(line) for line in f if line.strip()]
    print("hippo demo: a four-session conversation, stored offline with zero LLM calls\n")
    with Memory(None, namespace="demo") as mem:
        t = time.perf_counter()
        mem.add_many(items)
        ingest_ms = (time.perf_counter() - t) * 1e3
        st = mem.stats()
        print(f"ingested {st['messages']} messages / {st['tokens']} tokens in {ingest_ms:.1f} ms "
              f"(content DWM {st['content_dwm_bytes']} B)\n")  # the Signature DWM: built when a channel reads it
        for q in DEMO_QUESTIONS:
            r = mem.recall(q, budget_tokens=args.budget)
            print(f"Q: {q}")
            print("   " + r.text.replace("\n", "\n   "))
            print(f"   -- {r.tokens} tokens (budget {args.budget}), {len(r.messages)} messages, "
                  f"{r.timings['total_ms']:.2f} ms\n")
        hits = mem.search("greyhound rescue", k=3)
        print("search('greyhound rescue'):")
        for h in hits:
            print(f"   {h.score:.4f}  {h.speaker}: {h.text}")
        assert count_tokens(r.text) <= args.budget
    return 0


def add_parsers(sub) -> None:
    d = sub.add_parser("demo", help="ingest a sample conversation and answer questions from memory")
    d.add_argument("--budget", type=positive_int, default=160, help="cl100k tokens per answer (default 160)")
    d.set_defaults(func=cmd_demo)

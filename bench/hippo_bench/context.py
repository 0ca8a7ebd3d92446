"""``hippo bench context``: the context lifecycle of an agent session with and without ``HippoContextMiddleware``.

A scripted agent session (:func:`make_session`, deterministic from ``--seed``) alternates task turns, in which the
agent calls a tool that returns a large JSON API response, an HTML page snapshot, a service log, a config file or
an error dump, with later questions that need one specific value from an earlier output. The same session runs
twice through LangChain's ``create_agent`` with a scripted model (:class:`ScriptedModel`): once sending everything,
once through the middleware. The scripted model answers a question directly when the needed value is somewhere in
the messages it was sent (verbatim or in an entry's key data), otherwise it calls ``memory_expand`` on the entry
whose source is the tool call that produced the value, and answers if the expanded text holds it.

Reported: cl100k tokens sent per model call with and without hippo (and their ratio over the session), the
compression ratio of the index entries (content tokens / rendered entry tokens), the share of questions whose
value reached the model (directly, or through ``memory_expand``), and the middleware's overhead per turn with 100
indexed entries (compaction only, the entries already indexed) plus the one-off cost of indexing an output.

Of the questions, one in seven asks for a field of one record deep in a JSON list (an id a generic extractor does
not surface); the others ask for values an offline extractor does surface (top-level ids and counts, element refs,
the first error line, leading config keys, the exception of an error dump).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from hippo_bench._common import MissingDependency, machine_info


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=int, default=0, help="seed of the scripted session")
    p.add_argument("--turns", type=int, default=None, help="user turns of the session (default 56; quick 42)")
    p.add_argument("--overhead-entries", type=int, default=100, help="indexed entries for the overhead measurement")
    p.add_argument("--overhead-turns", type=int, default=None, help="turns timed (default 60; quick 15)")


# -- the scripted session ---------------------------------------------------------------------------------------
@dataclass
class Turn:
    """One user turn: a task (the agent calls ``tool`` with ``args`` and gets ``output``) or a question."""

    index: int
    text: str
    kind: str                      # "task" or "question"
    tool: str = ""
    args: dict = field(default_factory=dict)
    output: str = ""
    value: str = ""                # questions: the value the answer needs
    cue: str = ""                  # questions: what the model asks memory_expand for
    source_turn: int = -1          # questions: the task turn whose output holds the value
    deep: bool = False             # questions: the value sits deep in a record list

    @property
    def call_id(self) -> str:
        return f"call_{self.index}"


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def _orders(rng: random.Random, page: int, n: int) -> tuple[str, dict]:
    rid = f"req-{_hex(rng, 10)}"
    orders = [{"id": f"ORD-{page:02d}{i:03d}", "customer": rng.choice(["Acme", "Globex", "Initech", "Umbrella",
                                                                       "Hooli", "Stark"]) + f" #{rng.randint(1, 999)}",
               "total": round(rng.uniform(5, 900), 2), "currency": "EUR",
               "status": rng.choice(["paid", "shipped", "refunded", "pending"]),
               "items": [{"sku": f"SKU-{rng.randint(1000, 9999)}", "qty": rng.randint(1, 5)}
                         for _ in range(rng.randint(1, 3))]} for i in range(n)]
    total = rng.randint(n * page + 400, n * page + 9000)
    data = {"status": "ok", "request_id": rid, "page": page, "total_count": total, "orders": orders}
    return json.dumps(data, indent=2), {"request_id": rid, "total_count": str(total), "orders": orders}


def _snapshot(rng: random.Random, name: str, n: int) -> tuple[str, dict]:
    submit = f"e{rng.randint(300, 2000)}"
    rows = []
    for i in range(n):
        rows.append(f'<div ref="e{1000 + i}" role="row"><span class="cell">{rng.choice(["alice", "bob", "carol"])}'
                    f'{i}@{name}.io</span><span class="cell">{rng.randint(1, 500)} sessions</span></div>')
    at = rng.randint(len(rows) // 3, len(rows) - 1)
    rows.insert(at, f'<button ref="{submit}" type="submit">Submit</button>')
    html = (f"<html><head><title>{name.title()} dashboard</title></head><body>"
            f'<nav ref="e3" role="navigation">Main</nav><h1>{name.title()} users</h1>'
            f'<input ref="e45" name="search" placeholder="Search users">\n' + "\n".join(rows) + "\n</body></html>")
    return html, {"submit": submit}


def _log(rng: random.Random, service: str, n: int) -> tuple[str, dict]:
    code = f"E{rng.randint(1000, 9999)}"
    lines = []
    first_error = rng.randint(n // 4, n // 2)
    for i in range(n):
        ts = f"2025-03-{1 + i // 400:02d} {8 + (i // 60) % 12:02d}:{i % 60:02d}:{rng.randint(0, 59):02d}"
        if i == first_error:
            lines.append(f"{ts} ERROR {service}: upstream call failed code={code} trace={_hex(rng, 16)}")
        elif i > first_error and rng.random() < 0.01:
            lines.append(f"{ts} ERROR {service}: retry failed code=E{rng.randint(1000, 9999)}")
        elif rng.random() < 0.05:
            lines.append(f"{ts} WARN {service}: slow response {rng.randint(500, 3000)}ms")
        else:
            lines.append(f"{ts} INFO {service}: GET /api/v1/items/{rng.randint(1, 99999)} 200 "
                         f"{rng.randint(2, 90)}ms user={_hex(rng, 6)}")
    return "\n".join(lines), {"code": code}


def _config(rng: random.Random, name: str, n: int) -> tuple[str, dict]:
    version = f"{rng.randint(1, 9)}.{rng.randint(0, 40)}.{rng.randint(0, 9)}"
    region = rng.choice(["eu-west-1", "us-east-2", "ap-south-1"])
    lines = [f"# {name} service configuration", f"service: {name}", f"version: {version}", f"region: {region}",
             f"replicas: {rng.randint(2, 12)}"]
    for i in range(n):
        lines.append(f"feature_{i:03d}_{_hex(rng, 4)}: {rng.choice(['on', 'off', 'canary'])}  "
                     f"# rollout note {rng.randint(1, 99)}: {' '.join(rng.choice(['fast', 'safe', 'beta', 'legacy', 'cache']) for _ in range(8))}")
    return "\n".join(lines), {"version": version, "region": region}


def _traceback(rng: random.Random, n: int) -> tuple[str, dict]:
    msg = f"IntegrityError: duplicate key value violates unique constraint \"users_{_hex(rng, 6)}_key\""
    frames = []
    for i in range(n):
        frames.append(f'  File "/srv/app/{rng.choice(["api", "db", "core", "jobs"])}/module_{i}.py", '
                      f"line {rng.randint(10, 900)}, in handler_{_hex(rng, 4)}\n"
                      f"    result = session.execute(stmt_{i}, params={{'id': {rng.randint(1, 99999)}}})")
    return "Traceback (most recent call last):\n" + "\n".join(frames) + f"\n{msg}\n", {"error": msg}


def make_session(seed: int = 0, turns: int = 56, scale: float = 1.0) -> list[Turn]:
    """A deterministic session of ``turns`` user turns: tasks with large outputs, then questions about them."""
    if turns < 14:
        raise ValueError("a session needs at least 14 turns")
    rng = random.Random(seed)
    out: list[Turn] = []
    tasks: list[tuple[Turn, dict]] = []
    kinds = ["orders", "snapshot", "log", "config", "orders", "snapshot", "log", "traceback"]
    n_questions = turns // 4
    question_at = set(rng.sample(range(8, turns), n_questions))
    asked: list[tuple[int, str]] = []
    k = 0
    for i in range(turns):
        if i in question_at and tasks:
            t, facts = _question(rng, i, tasks, asked, deep=len([q for q in out if q.kind == "question"]) % 7 == 3)
            out.append(t)
            continue
        kind = kinds[k % len(kinds)]
        k += 1
        if kind == "orders":
            text, facts = _orders(rng, k, int(rng.randint(25, 60) * scale))
            t = Turn(i, f"Fetch page {k} of the orders.", "task", "get_orders", {"page": k}, text)
        elif kind == "snapshot":
            name = rng.choice(["crabot", "billing", "atlas", "nimbus"]) + str(k)
            text, facts = _snapshot(rng, name, int(rng.randint(80, 200) * scale))
            t = Turn(i, f"Open the {name} dashboard.", "task", "browser_snapshot", {"url": f"https://{name}.io"}, text)
        elif kind == "log":
            service = rng.choice(["checkout", "search", "auth", "payments"]) + str(k)
            text, facts = _log(rng, service, int(rng.randint(150, 400) * scale))
            t = Turn(i, f"Show me the {service} logs.", "task", "read_logs", {"service": service}, text)
        elif kind == "config":
            name = rng.choice(["gateway", "ledger", "notifier"]) + str(k)
            text, facts = _config(rng, name, int(rng.randint(60, 140) * scale))
            t = Turn(i, f"Read the {name} config file.", "task", "read_file", {"path": f"/etc/{name}.yaml"}, text)
        else:
            text, facts = _traceback(rng, int(rng.randint(20, 50) * scale))
            t = Turn(i, f"Run the test suite (round {k}).", "task", "run_tests", {"round": k}, text)
        t.args = {"request": t.text}
        out.append(t)
        tasks.append((t, facts))
    return out


def _question(rng: random.Random, i: int, tasks: list, asked: list, deep: bool) -> tuple[Turn, dict]:
    pool = [(t, f) for t, f in tasks if t.index < i - 1]
    if deep:
        pool = [(t, f) for t, f in pool if t.tool == "get_orders"] or pool
    for _ in range(50):
        t, facts = rng.choice(pool)
        if (t.index, str(deep)) not in asked:
            break
    asked.append((t.index, str(deep)))
    q = Turn(i, "", "question", source_turn=t.index)
    if t.tool == "get_orders" and deep:
        o = rng.choice(facts["orders"][len(facts["orders"]) // 3:])
        q.text, q.value, q.cue, q.deep = (f"What was the total of order {o['id']} (turn {t.index})?",
                                          str(o["total"]), o["id"], True)
    elif t.tool == "get_orders":
        if rng.random() < 0.5:
            q.text, q.value, q.cue = (f"Which request id did the orders call of turn {t.index} return?",
                                      facts["request_id"], "request_id")
        else:
            q.text, q.value, q.cue = (f"How many orders in total did turn {t.index} report?",
                                      facts["total_count"], "total_count")
    elif t.tool == "browser_snapshot":
        q.text, q.value, q.cue = f"Which ref is the Submit button of the page from turn {t.index}?", \
            facts["submit"], "Submit"
    elif t.tool == "read_logs":
        q.text, q.value, q.cue = f"What error code did the first error in the turn {t.index} logs have?", \
            facts["code"], "ERROR"
    elif t.tool == "read_file":
        key = rng.choice(["version", "region"])
        q.text, q.value, q.cue = f"What {key} does the config read in turn {t.index} set?", facts[key], key
    else:
        q.text, q.value, q.cue = f"Which exception ended the test run of turn {t.index}?", facts["error"], "Error"
    return q, facts


# -- the scripted model -----------------------------------------------------------------------------------------
def _langchain():
    try:
        from langchain.agents import create_agent
        from langchain_core.language_models.chat_models import BaseChatModel
        from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
        from langchain_core.outputs import ChatGeneration, ChatResult
        from langchain_core.tools import StructuredTool
        from langgraph.checkpoint.memory import InMemorySaver
    except ImportError as exc:  # pragma: no cover - the langchain extra
        raise MissingDependency(f"the context benchmark needs the langchain extra: {exc}") from exc
    return create_agent, BaseChatModel, AIMessage, HumanMessage, ToolMessage, ChatGeneration, ChatResult, \
        StructuredTool, InMemorySaver


def message_tokens(message: Any, cache: dict) -> int:
    """cl100k tokens of one message as a chat API receives it: text, tool calls, and 4 tokens of framing."""
    from hippo.text.tokenizer import count_tokens

    calls = json.dumps(getattr(message, "tool_calls", None) or [], sort_keys=True)
    key = (message.type, message.text, calls)
    n = cache.get(key)
    if n is None:
        n = cache[key] = count_tokens(message.text or " ") + (count_tokens(calls) if calls != "[]" else 0) + 4
    return n


_ENTRY_HEAD = re.compile(r"\[context_index: (ctx_\d+)\][^\n]*ref=(call_\d+)\b")


def build_model(session: list[Turn]):
    """A chat model that plays ``session``: tool calls for tasks, answers (or ``memory_expand``) for questions.

    ``model.log`` records one dict per call: tokens sent, and for answers how the value was reached."""
    _, BaseChatModel, AIMessage, HumanMessage, ToolMessage, ChatGeneration, ChatResult, _, _ = _langchain()
    by_text = {t.text: t for t in session}

    class ScriptedModel(BaseChatModel):
        log: list = []
        token_cache: dict = {}

        @property
        def _llm_type(self) -> str:
            return "hippo-scripted"

        def bind_tools(self, tools: Any, **kwargs: Any) -> "ScriptedModel":
            return self

        def _generate(self, messages, stop=None, run_manager=None, **kwargs):
            sent = sum(message_tokens(m, self.token_cache) for m in messages)
            reply, outcome = self._reply(messages)
            self.log.append({"tokens": sent, "messages": len(messages), **outcome})
            return ChatResult(generations=[ChatGeneration(message=reply)])

        def _question(self, messages) -> Turn | None:
            for m in reversed(messages):
                if isinstance(m, HumanMessage):
                    return by_text.get(m.text)
            return None

        def _reply(self, messages):
            last = messages[-1]
            turn = self._question(messages)
            if isinstance(last, HumanMessage):
                if turn.kind == "task":
                    return AIMessage(content="", tool_calls=[{"name": turn.tool, "args": turn.args,
                                                              "id": turn.call_id}]), {}
                context = "\n".join(m.text for m in messages[:-1])
                if turn.value in context:
                    return AIMessage(content=f"ANSWER {turn.value}"), {"question": turn.index, "reached": "direct"}
                source = f"call_{turn.source_turn}"
                entry = next((m.group(1) for m in _ENTRY_HEAD.finditer(context) if m.group(2) == source), None)
                if entry is None:
                    return AIMessage(content="UNKNOWN"), {"question": turn.index, "reached": "no"}
                return AIMessage(content="", tool_calls=[{"name": "memory_expand", "id": f"x_{turn.index}",
                                                          "args": {"entry_id": entry, "query": turn.cue}}]), {}
            if isinstance(last, ToolMessage) and last.name == "memory_expand":
                ok = turn.value in last.text
                return AIMessage(content=f"ANSWER {turn.value}" if ok else "UNKNOWN"), \
                    {"question": turn.index, "reached": "expand" if ok else "no"}
            return AIMessage(content=f"Done: {last.name} returned {len(last.text)} characters."), {}

    return ScriptedModel(log=[], token_cache={})


def task_tools(session: list[Turn]) -> list:
    *_, StructuredTool, _ = _langchain()
    outputs: dict[str, dict[str, str]] = {}
    for t in session:
        if t.kind == "task":
            outputs.setdefault(t.tool, {})[t.text] = t.output
    tools = []
    for name, table in outputs.items():
        def fn(request: str, _table=table) -> str:
            return _table[request]
        tools.append(StructuredTool.from_function(func=fn, name=name, description=f"The {name} tool."))
    return tools


def run_session(session: list[Turn], middleware: Any = None, thread: str = "bench") -> list[dict]:
    """Play ``session`` through ``create_agent``; returns the model's call log."""
    create_agent, *_, InMemorySaver = _langchain()
    model = build_model(session)
    agent = create_agent(model, tools=task_tools(session), system_prompt="You are an operations assistant.",
                         middleware=[middleware] if middleware is not None else [], checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": thread}, "recursion_limit": 50}
    for t in session:
        agent.invoke({"messages": [{"role": "user", "content": t.text}]}, cfg)
    return model.log


# -- overhead at N indexed entries ------------------------------------------------------------------------------
def measure_overhead(n_entries: int, turns: int, seed: int = 1) -> dict[str, Any]:
    """Compaction time per turn with ``n_entries`` indexed tool outputs in the thread (steady state), and the
    one-off cost of indexing one output."""
    _, _, AIMessage, HumanMessage, ToolMessage, *_ = _langchain()
    import hippo
    from langchain_hippo.context import HippoContextMiddleware

    rng = random.Random(seed)
    mem = hippo.Memory(None)
    mw = HippoContextMiddleware(mem)
    view = mem.using("context.overhead")
    messages: list = []
    for i in range(n_entries):
        text, _ = _orders(rng, i, 30) if i % 2 == 0 else _log(rng, f"svc{i}", 200)
        messages += [HumanMessage(f"task {i}", id=f"h{i}"),
                     AIMessage("", tool_calls=[{"name": "tool", "args": {}, "id": f"c{i}"}], id=f"a{i}"),
                     ToolMessage(text, tool_call_id=f"c{i}", name="tool", id=f"t{i}"),
                     AIMessage(f"done {i}", id=f"d{i}")]
    messages.append(HumanMessage("next", id="h-next"))
    t0 = time.perf_counter()
    mw.compact(messages, view)
    index_s = time.perf_counter() - t0
    n_indexed = len(view.entries())
    times = []
    for k in range(turns):
        messages += [AIMessage(f"reply {k}", id=f"r{k}"), HumanMessage(f"question {k}", id=f"q{k}")]
        t = time.perf_counter()
        out = mw.compact(messages, view)
        times.append((time.perf_counter() - t) * 1e3)
    replaced = sum(1 for a, b in zip(messages, out) if a is not b)
    mem.close()
    times.sort()
    return {"entries": n_indexed, "messages": len(messages), "replaced_per_turn": replaced,
            "turns_timed": turns, "compact_ms_mean": statistics.fmean(times),
            "compact_ms_p50": times[len(times) // 2], "compact_ms_p95": times[min(len(times) - 1,
                                                                                   int(0.95 * len(times)))],
            "index_ms_per_entry": index_s * 1e3 / max(1, n_indexed)}


# -- the benchmark ----------------------------------------------------------------------------------------------
def evaluate(session: list[Turn]) -> dict[str, Any]:
    """Both runs of ``session`` and the session-level figures (used by ``run`` and the tests)."""
    import hippo
    from hippo.text.tokenizer import count_tokens
    from langchain_hippo.context import HippoContextMiddleware

    base = run_session(session)
    mem = hippo.Memory(None)
    try:
        log = run_session(session, HippoContextMiddleware(mem))
        entries = mem.using("context.bench").entries()
        ratios = [e.n_tokens / max(1, count_tokens(e.render())) for e in entries]
        by_format: dict[str, list[float]] = {}
        for e, r in zip(entries, ratios):
            by_format.setdefault(e.format, []).append(r)
    finally:
        mem.close()
    questions = [t for t in session if t.kind == "question"]
    reached = {d["question"]: d["reached"] for d in log if "question" in d}
    base_reached = {d["question"]: d["reached"] for d in base if "question" in d}
    n_q = len(questions)
    direct = sum(1 for q in questions if reached.get(q.index) == "direct")
    expand = sum(1 for q in questions if reached.get(q.index) == "expand")
    sent_hippo = sum(d["tokens"] for d in log)
    sent_base = sum(d["tokens"] for d in base)
    return {
        "turns": len(session), "tasks": len(session) - n_q, "questions": n_q,
        "deep_questions": sum(q.deep for q in questions),
        "output_tokens": [count_tokens(t.output) for t in session if t.kind == "task"],
        "model_calls": {"baseline": len(base), "hippo": len(log)},
        "tokens_per_call": {"baseline": [d["tokens"] for d in base], "hippo": [d["tokens"] for d in log]},
        "tokens_sent": {"baseline": sent_base, "hippo": sent_hippo, "ratio": sent_base / max(1, sent_hippo)},
        "reachable_share": (direct + expand) / n_q, "direct_share": direct / n_q, "expand_share": expand / n_q,
        "baseline_reachable_share": sum(1 for v in base_reached.values() if v == "direct") / n_q,
        "unreached": [q.text for q in questions if reached.get(q.index) not in ("direct", "expand")],
        "entries": len(entries),
        "compression": {"mean": statistics.fmean(ratios) if ratios else 0.0, "min": min(ratios, default=0.0),
                        "max": max(ratios, default=0.0),
                        "by_format": {k: round(statistics.fmean(v), 1) for k, v in sorted(by_format.items())}},
    }


def run(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    turns = args.turns or (42 if args.quick else 56)
    overhead_turns = args.overhead_turns or (15 if args.quick else 60)
    session = make_session(args.seed, turns)
    t0 = time.perf_counter()
    res = evaluate(session)
    res["session_seconds"] = round(time.perf_counter() - t0, 2)
    res["overhead"] = measure_overhead(args.overhead_entries, overhead_turns)
    ts = res["tokens_sent"]
    targets = {
        "tokens_5x_lower": ts["ratio"] >= 5.0,
        "all_values_reachable": res["reachable_share"] == 1.0,
        "90pct_without_expand": res["direct_share"] >= 0.9,
        "overhead_under_5ms": res["overhead"]["compact_ms_mean"] < 5.0,
    }
    res.update(benchmark="context", seed=args.seed, machine=machine_info(), targets=targets)
    oh = res["overhead"]
    calls_b, calls_h = res["tokens_per_call"]["baseline"], res["tokens_per_call"]["hippo"]
    md = [
        f"## hippo bench context (seed {args.seed}, {res['turns']} user turns: {res['tasks']} tool tasks, "
        f"{res['questions']} questions)",
        "",
        "| measure | without hippo | with HippoContextMiddleware |",
        "|---|---|---|",
        f"| model calls | {res['model_calls']['baseline']} | {res['model_calls']['hippo']} |",
        f"| tokens sent over the session | {ts['baseline']:,} | {ts['hippo']:,} ({ts['ratio']:.1f}x fewer) |",
        f"| tokens of the last call | {calls_b[-1]:,} | {calls_h[-1]:,} |",
        f"| questions whose value reached the model | {res['baseline_reachable_share']:.0%} | "
        f"{res['reachable_share']:.0%} ({res['direct_share']:.0%} directly, {res['expand_share']:.0%} via "
        f"memory_expand) |",
        "",
        f"Index entries: {res['entries']}, compression (content tokens / entry tokens) mean "
        f"{res['compression']['mean']:.1f}x, min {res['compression']['min']:.1f}x, max "
        f"{res['compression']['max']:.1f}x; by format "
        + ", ".join(f"{k} {v}x" for k, v in res["compression"]["by_format"].items()) + ".",
        f"Tool outputs: {min(res['output_tokens']):,}-{max(res['output_tokens']):,} tokens "
        f"(mean {statistics.fmean(res['output_tokens']):,.0f}).",
        "",
        f"Middleware overhead with {oh['entries']} indexed entries ({oh['messages']} messages, "
        f"{oh['replaced_per_turn']} replaced per call): compaction {oh['compact_ms_mean']:.2f} ms per turn "
        f"(p50 {oh['compact_ms_p50']:.2f}, p95 {oh['compact_ms_p95']:.2f}); indexing a new output "
        f"{oh['index_ms_per_entry']:.1f} ms once.",
        "",
        "Targets: " + ", ".join(f"{k} {'met' if v else 'NOT met'}" for k, v in targets.items()) + ".",
    ]
    if res["unreached"]:
        md.append("Unreached: " + "; ".join(res["unreached"]))
    return res, "\n".join(md)


__all__ = ["Turn", "make_session", "build_model", "run_session", "evaluate", "measure_overhead", "add_arguments",
           "run"]

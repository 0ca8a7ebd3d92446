"""Agentic recall (seed 003 §3.4): an OpenAI-compatible model drives hippo's memory tools.

The loop follows Algorithm 3 of seed 003 (App. A): the model receives the query and the topic catalog
(``LibrarySummaries``), then, round after round, either calls tools or stops with the evidence it selected
(``MaterializeSelections``). The tools are hippo's own read paths, each scoped to this ``Memory``'s namespace:

========================  ==============================================================================
``search(query, k)``      fused lexical / signature / embedding ranking (:meth:`Memory.search`)
``grep(pattern)``         a regular expression over the reconstructed message texts, bounded in pattern
                          length, scanned characters and time (catastrophic patterns time out)
``list_topics()``         the topic catalog (:meth:`Memory.topics`)
``read_topic(topic_id)``  one topic document (:meth:`Memory.topic`), entries annotated with message ids
``read(message_id)``      a message with its neighbours in the session (:meth:`Memory.read`)
``answer(message_ids)``   stop, citing the evidence messages (``done`` is accepted as an alias)
========================  ==============================================================================

The per-step prompt is Prompt E of seed 003 (App. A.1), adapted to these tools. Tool calling uses the OpenAI
``tools=[...]`` protocol; an endpoint that answers in plain text is read with Prompt E's JSON action protocol, and
an endpoint that rejects ``tools`` altogether (HTTP 400 on the first request) is driven with that protocol alone.
The loop is bounded in rounds (``max_rounds``), in calls per round, in tokens per tool result and in total prompt
tokens (older tool results are elided first). When the model selects no usable evidence (it never answers, its
calls are malformed, its ids are unknown, or the endpoint fails after the retries of :mod:`hippo.engine.llm`), the
seed's lexical fallback runs as a recall guard (Algorithm 3, lines 13-16): hippo's own :meth:`Memory.recall`.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any, Callable

from hippo.base.checks import check_int
from hippo.base.errors import HippoError, InvalidInput, LLMError, NotFound
from hippo.base.timeutil import fmt_datetime
from hippo.base.types import MemoryItem, Recall
from hippo.engine import pack
from hippo.engine.items import items as items_of
from hippo.engine.llm import LLM, _status, as_llm, parse_json
from hippo.engine.namespace import Namespace
from hippo.engine.scope import scope_of
from hippo.store.filters import compile_filter
from hippo.text import tokenizer

# Bounds of one agentic recall. Module-level so deployments can tune them; every one is enforced.
MAX_ROUNDS_LIMIT = 50          # upper bound accepted for ``max_rounds``
ROUND_COMPLETION_TOKENS = 512  # completion tokens asked per round
PROMPT_BUDGET_TOKENS = 12_000  # whole prompt (system, query, catalog, every tool turn); older results elided
TOOL_RESULT_TOKENS = 1_000     # one tool result as the model sees it
MESSAGE_TOKENS = 200           # one message line inside a tool result
QUERY_TOKENS = 1_000           # the query as quoted in the prompt
CATALOG_TOKENS = 800           # the topic catalog in the first prompt
CALLS_PER_ROUND = 4            # tool calls executed per round; further calls get an error result
MAX_STRIKES = 3                # consecutive rounds without one usable action end the loop
MAX_EVIDENCE = 200             # message ids taken from one answer
SEARCH_MAX_K = 20
READ_MAX_SIDE = 10
GREP_MAX_PATTERN = 200         # characters of a grep pattern
GREP_MAX_MATCHES = 20
GREP_MAX_CHARS = 2_000_000     # characters scanned by one grep call
GREP_MESSAGE_CHARS = 100_000   # characters scanned per message
GREP_TIME_S = 0.25             # wall-clock bound of one grep call (the regex engine's own timeout)

# Prompt E of seed 003 (App. A.1), adapted: documents are messages and topic documents, "bounded line ranges"
# are neighbours of a message in its session, and the JSON action protocol is kept for endpoints without tools.
PROMPT_E = """You are a memory-search agent. You will receive: 1. a user query 2. the topic list as (id, summary) \
pairs. Iteratively inspect the memory before stopping. You may either:
- call tools to search the messages (search), match an exact pattern (grep), browse the topic ids (list_topics), \
inspect a single topic document (read_topic), or read a bounded range of messages around one message (read)
- or finish once you have enough evidence, by calling answer with the ids of the messages that support the answer.
Prefer using broad lexical search and exact-pattern search early, then use document-local inspection (read, \
read_topic) to verify hits and expand context. For aggregation queries, continue until the main matching evidence \
is covered. For update or temporal questions, pay attention to seq, time, and source fields.
Messages are shown as "[id=<id>] <time> <speaker>: <text>" and topic entries as "<id=…, seq=…, time=…, source=…>". \
Cite only message ids you have seen in tool results. You have at most {rounds} round(s).
If you cannot call tools, return JSON only: {{"done": boolean, "tool_calls": [{{"name": string, "arguments": \
object}}], "relevant_snippets": [{{"message_id": int, "before": int, "after": int}}], "relevant_messages": \
[int, ...]}}"""

FINAL_ROUND = ("This is your last round: call answer now with the ids of the messages that support the answer "
               "(or return the JSON with done=true).")
CORRECTION = ("Your last reply was neither a tool call nor the JSON action object. Call a tool, or return JSON "
              "only: {\"done\": boolean, \"tool_calls\": [...], \"relevant_snippets\": [...], "
              "\"relevant_messages\": [...]}.")
ELIDED = "[earlier tool result elided to stay within the prompt budget]"


def _fn(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties, "required": required, "additionalProperties": False}}}


_INT_ID = {"type": "integer", "description": "a message id as shown in [id=…]"}
TOOLS: dict[str, dict[str, Any]] = {
    "search": _fn("search", "Broad lexical search over all messages; best matches first.", {
        "query": {"type": "string", "description": "keywords or a question"},
        "k": {"type": "integer", "minimum": 1, "maximum": SEARCH_MAX_K, "default": 8}}, ["query"]),
    "grep": _fn("grep", "Exact-pattern search: a regular expression over message texts, oldest first.", {
        "pattern": {"type": "string", "maxLength": GREP_MAX_PATTERN},
        "ignore_case": {"type": "boolean", "default": True},
        "limit": {"type": "integer", "minimum": 1, "maximum": GREP_MAX_MATCHES, "default": 10}}, ["pattern"]),
    "list_topics": _fn("list_topics", "The topic documents: id, size, time span and summary.", {}, []),
    "read_topic": _fn("read_topic", "One topic document; each entry is tagged with its message id.", {
        "topic_id": {"type": ["integer", "string"], "description": "a topic id, or \"current\""}}, ["topic_id"]),
    "read": _fn("read", "A message with up to `before` / `after` neighbours from the same session.", {
        "message_id": _INT_ID,
        "before": {"type": "integer", "minimum": 0, "maximum": READ_MAX_SIDE, "default": 2},
        "after": {"type": "integer", "minimum": 0, "maximum": READ_MAX_SIDE, "default": 2}}, ["message_id"]),
    "answer": _fn("answer", "Stop searching and cite the evidence: the messages that support the answer.", {
        "message_ids": {"type": "array", "items": _INT_ID},
        "snippets": {"type": "array", "description": "messages to include with neighbours", "items": {
            "type": "object", "properties": {"message_id": _INT_ID, "before": {"type": "integer"},
                                             "after": {"type": "integer"}}, "required": ["message_id"]}}},
        ["message_ids"]),
}
TOPIC_TOOLS = ("list_topics", "read_topic")
ANSWER_NAMES = ("answer", "done")


class ToolFailure(Exception):
    """A tool call the model got wrong; its message goes back to the model as the tool result."""


# -- text helpers ---------------------------------------------------------------------------------------------
def _clip_tokens(text: str, limit: int) -> str:
    ids = tokenizer.encoding().encode_ordinary(text)
    if len(ids) <= limit:
        return text
    head = tokenizer.decode_span(ids[:limit])
    return f"{head} …[{len(ids) - limit} more tokens]"


def _clip_result(text: str, limit: int = TOOL_RESULT_TOKENS) -> str:
    """Whole lines while they fit, then a note saying how many lines were cut."""
    if tokenizer.count_tokens(text) <= limit:
        return text
    lines = text.split("\n")
    kept: list[str] = []
    used = 0
    for line in lines:
        cost = tokenizer.count_tokens(line) + 1
        if used + cost > limit - 24:
            break
        kept.append(line)
        used += cost
    if not kept:  # one oversized line
        return _clip_tokens(lines[0], limit - 24) + f"\n[… {len(lines) - 1} more line(s) cut]"
    return "\n".join(kept) + f"\n[… {len(lines) - len(kept)} more line(s) cut to fit the tool-result budget]"


def _line(item: MemoryItem, text: str | None = None) -> str:
    when = fmt_datetime(item.timestamp.timestamp()) if item.timestamp is not None else "undated"
    who = pack.voice(item.speaker or item.role)
    return f"[id={item.id}] {when} {who}: {_clip_tokens(' '.join((text or item.text).split()), MESSAGE_TOKENS)}"


def _prompt_tokens(messages: list[dict[str, Any]]) -> int:
    total = 3
    for m in messages:
        total += 4 + tokenizer.count_tokens(m.get("content") or "")
        for c in m.get("tool_calls") or ():
            total += 4 + tokenizer.count_tokens(c["function"]["name"]) + tokenizer.count_tokens(
                c["function"]["arguments"])
    return total


def _int(value: Any, name: str, *, lo: int | None = None, hi: int | None = None, default: int | None = None) -> int:
    """An integer argument as models send them (int or numeric string), clamped to [lo, hi]."""
    if value is None and default is not None:
        return default
    digits = value.strip().lstrip("-") if isinstance(value, str) else ""
    if digits.isascii() and digits.isdigit():  # "²" is a digit to str.isdigit(), and no number to int()
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolFailure(f"{name} must be an integer, got {value!r}")
    if lo is not None:
        value = max(lo, value)
    if hi is not None:
        value = min(hi, value)
    return value


def _topic_lines(topics: list[dict[str, Any]]) -> str:
    lines = []
    for t in topics:
        span = f"{t.get('first_time') or 'undated'} – {t.get('last_time') or 'undated'}"
        lines.append(f"topic {t['id']} ({t.get('n_messages', t.get('size', 0))} messages, {span}): "
                     f"{' '.join(str(t.get('summary', '')).split())}")
    return "\n".join(lines)


_SEQ_RE = re.compile(r"<seq=(\d+),")


class _Agent:
    """One agentic recall: the tools bound to a ``Memory`` view, the conversation, the trace."""

    def __init__(self, ns: Namespace, query: str, filter: dict[str, Any] | None, client: LLM,
                 max_rounds: int, asked_at: Any = None) -> None:
        self.ns = ns
        self.query = query
        self.asked_at = asked_at  # validated by the caller (scope_of)
        self.filter = filter
        self.pred = compile_filter(filter)
        self.client = client
        self.max_rounds = max_rounds
        self.trace: list[dict[str, Any]] = []
        self.seen: set[int] = set()
        self._last_ids: list[int] = []
        self.timings: dict[str, float] = {"rounds": 0.0, "llm_ms": 0.0, "tools_ms": 0.0, "prompt_tokens_max": 0.0}
        self.tool_names = [n for n in TOOLS if not (filter is not None and n in TOPIC_TOOLS)]
        self.handlers: dict[str, Callable[[dict[str, Any]], str]] = {
            "search": self._search, "grep": self._grep, "list_topics": self._list_topics,
            "read_topic": self._read_topic, "read": self._read}

    # -- tools ----------------------------------------------------------------------------------------------
    def _allowed(self, ids: list[int]) -> set[int]:
        """Ids of this namespace that pass the filter."""
        ns = self.ns
        idx = ns.state().index
        with ns.rt.lock.read():
            here = [i for i in ids if i in idx.row_of]
            if self.pred is None:
                return set(here)
            rows = ns.rt.store.rows(ns.name, here)
        return {i for i in here if i in rows and self.pred(rows[i])}

    def _search(self, args: dict[str, Any]) -> str:
        q = args.get("query")
        if not isinstance(q, str) or not q.strip():
            raise ToolFailure("query must be a non-empty string")
        k = _int(args.get("k"), "k", lo=1, hi=SEARCH_MAX_K, default=8)
        hits = self.ns.search(q, k, self.pred, scope_of(self.ns.config, q, asked_at=self.asked_at))
        self._surface([h.id for h in hits])
        if not hits:
            return "no matching messages"
        return "\n".join(_line(h) for h in hits)

    def _grep(self, args: dict[str, Any]) -> str:
        import regex  # a dependency of tiktoken; unlike re, it can bound a match in time

        pattern = args.get("pattern")
        if not isinstance(pattern, str) or not pattern:
            raise ToolFailure("pattern must be a non-empty string")
        if len(pattern) > GREP_MAX_PATTERN:
            raise ToolFailure(f"pattern is {len(pattern)} characters long; the limit is {GREP_MAX_PATTERN}")
        ignore_case = args.get("ignore_case", True)
        if not isinstance(ignore_case, bool):
            raise ToolFailure(f"ignore_case must be a boolean, got {ignore_case!r}")
        limit = _int(args.get("limit"), "limit", lo=1, hi=GREP_MAX_MATCHES, default=10)
        try:
            rx = regex.compile(pattern, regex.IGNORECASE if ignore_case else 0)
        except (regex.error, OverflowError, RecursionError, ValueError) as exc:
            raise ToolFailure(f"pattern is not a valid regular expression: {exc}") from None
        ns = self.ns
        state = ns.state()
        idx = state.index
        deadline = time.monotonic() + GREP_TIME_S
        found: list[tuple[int, int, str, Any]] = []
        scanned = chars = 0
        stop = ""
        with ns.rt.lock.read():
            total = len(idx)
            if self.pred is None:
                candidates = ((int(i), pos) for pos, i in enumerate(idx.ids.view.tolist()))
            else:
                candidates = ((r.id, idx.row_of.get(r.id)) for r in ns.rt.store.scan(ns.name)
                              if self.pred(r))
            for mid, pos in candidates:
                if pos is None:
                    continue
                if len(found) >= limit:
                    stop = f"stopped at {limit} match(es)"
                    break
                text = idx.text_of(pos)[:GREP_MESSAGE_CHARS]
                if chars + len(text) > GREP_MAX_CHARS:
                    stop = f"size bound reached ({GREP_MAX_CHARS} characters scanned)"
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    stop = f"time bound reached ({GREP_TIME_S:g} s)"
                    break
                try:
                    m = rx.search(text, timeout=remaining)
                except TimeoutError:
                    stop = f"time bound reached ({GREP_TIME_S:g} s): the pattern backtracks too much"
                    break
                chars += len(text)
                scanned += 1
                if m is not None:
                    found.append((mid, pos, text, m))
            items = {it.id: it for it in items_of(state, [f[0] for f in found])}
        self._surface(list(items))
        lines = []
        for mid, _, text, m in found:
            it = items.get(mid)
            if it is None:
                continue
            if len(text) > 1200:  # a window around the match of a long message
                lo, hi = max(0, m.start() - 400), min(len(text), m.end() + 400)
                text = ("…" if lo else "") + text[lo:hi] + ("…" if hi < len(text) else "")
            lines.append(_line(it, text))
        head = f"{len(lines)} match(es) in {scanned} of {total} message(s) scanned"
        return "\n".join([head + (f"; {stop}" if stop else "")] + lines)

    def _list_topics(self, args: dict[str, Any]) -> str:
        if self.filter is not None:
            raise ToolFailure("topic documents are not available when recall is filtered")
        topics = self.ns.topics()
        return _topic_lines(topics) if topics else "no topic documents (nothing consolidated yet)"

    def _read_topic(self, args: dict[str, Any]) -> str:
        if self.filter is not None:
            raise ToolFailure("topic documents are not available when recall is filtered")
        tid = args.get("topic_id")
        if isinstance(tid, float) and tid.is_integer():
            tid = int(tid)
        doc = self.ns.topic(tid)
        ns = self.ns
        idx = ns.state().index
        with ns.rt.lock.read():
            by_seq = dict(zip(idx.seqs.view.tolist(), idx.ids.view.tolist()))
        shown: list[int] = []

        def tag(m: re.Match) -> str:
            mid = by_seq.get(int(m.group(1)))
            if mid is None:
                return m.group(0)
            shown.append(int(mid))
            return f"<id={mid}, seq={m.group(1)},"

        doc = _SEQ_RE.sub(tag, doc)
        self._surface(shown)
        return doc

    def _read(self, args: dict[str, Any]) -> str:
        mid = _int(args.get("message_id"), "message_id")
        before = _int(args.get("before"), "before", lo=0, hi=READ_MAX_SIDE, default=2)
        after = _int(args.get("after"), "after", lo=0, hi=READ_MAX_SIDE, default=2)
        items = self._read_items(mid, before, after)
        self._surface([it.id for it in items])
        return "\n".join(_line(it) for it in items)

    def _read_items(self, mid: int, before: int, after: int) -> list[MemoryItem]:
        items = self.ns.read(mid, before, after)
        allowed = self._allowed([it.id for it in items])
        if mid not in allowed:
            raise NotFound(f"id {mid} is not a message of namespace {self.ns.name!r}")
        return [it for it in items if it.id in allowed]

    def _surface(self, ids: list[int]) -> None:
        self.seen.update(int(i) for i in ids)
        self._last_ids = [int(i) for i in ids]

    # -- evidence (Algorithm 3, MaterializeSelections) -------------------------------------------------------
    def materialize(self, message_ids: Any, snippets: Any) -> tuple[list[int], list[Any]]:
        """Cited ids in citation order, then each snippet's message and its neighbours; unknown ids, ids of other
        namespaces and ids outside the filter are dropped (and returned as such)."""
        wanted: list[int] = []
        dropped: list[Any] = []
        for raw in (message_ids if isinstance(message_ids, list) else [] if message_ids is None else [message_ids]):
            try:
                wanted.append(_int(raw, "message_id"))
            except ToolFailure:
                dropped.append(raw)
        allowed = self._allowed(wanted)
        out: list[int] = []
        for i in wanted:
            if i in allowed:
                if i not in out:
                    out.append(i)
            else:
                dropped.append(i)
        for snip in snippets if isinstance(snippets, list) else []:
            if not isinstance(snip, dict):
                dropped.append(snip)
                continue
            try:
                mid = _int(snip.get("message_id", snip.get("id")), "message_id")
                before = _int(snip.get("before"), "before", lo=0, hi=READ_MAX_SIDE, default=1)
                after = _int(snip.get("after"), "after", lo=0, hi=READ_MAX_SIDE, default=1)
                items = self._read_items(mid, before, after)
            except (ToolFailure, HippoError):
                dropped.append(snip.get("message_id", snip))
                continue
            for i in [mid] + [it.id for it in items]:  # the cited message ranks before its neighbours
                if i not in out:
                    out.append(i)
        return out[:MAX_EVIDENCE], dropped

    # -- the loop (Algorithm 3) ------------------------------------------------------------------------------
    def _catalog(self) -> str:
        if self.filter is not None:
            return "(topic documents are not available: this recall is filtered; use search, grep and read)"
        try:
            topics = self.ns.topics()
        except HippoError:
            topics = []
        if not topics:
            return "(no topic documents yet; use search, grep and read)"
        return _clip_result(_topic_lines(topics), CATALOG_TOKENS)

    def run_tool(self, rnd: int, name: str, raw_args: Any) -> tuple[str, bool]:
        """Execute one call; returns the text for the model and whether the call was usable."""
        entry: dict[str, Any] = {"round": rnd, "tool": name, "arguments": raw_args}
        self.trace.append(entry)
        self._last_ids = []
        t = time.perf_counter()
        try:
            args = self._args(raw_args)
            entry["arguments"] = args
            if name not in self.handlers:  # topic tools explain themselves when a filter hides them
                raise ToolFailure(f"unknown tool {name!r}; available: {', '.join(self.tool_names)}")
            text = _clip_result(self.handlers[name](args))
            entry.update(status="ok", ids=list(self._last_ids))
            ok = True
        except (ToolFailure, HippoError) as exc:
            text = f"error: {exc}"
            entry.update(status="error", error=str(exc))
            ok = False
        self.timings["tools_ms"] += (time.perf_counter() - t) * 1e3
        entry["result_tokens"] = tokenizer.count_tokens(text)
        return text, ok

    @staticmethod
    def _args(raw: Any) -> dict[str, Any]:
        if raw is None or raw == "":
            return {}
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise ToolFailure(f"arguments are not valid JSON ({exc.msg} at char {exc.pos})") from None
            except (ValueError, RecursionError) as exc:  # nested past the parser's depth, an integer past its digits
                raise ToolFailure(f"arguments are JSON that cannot be read ({type(exc).__name__})") from None
        if not isinstance(raw, dict):
            raise ToolFailure(f"arguments must be a JSON object, got {type(raw).__name__}")
        return raw

    def answer(self, rnd: int, name: str, raw_args: Any) -> list[int] | None:
        entry: dict[str, Any] = {"round": rnd, "tool": name, "arguments": raw_args}
        self.trace.append(entry)
        try:
            args = self._args(raw_args)
        except ToolFailure as exc:
            entry.update(status="error", error=str(exc))
            return None
        entry["arguments"] = args
        ids = args.get("message_ids", args.get("relevant_messages", args.get("relevant_docs")))
        snippets = args.get("snippets", args.get("relevant_snippets"))
        chosen, dropped = self.materialize(ids, snippets)
        entry.update(status="ok" if chosen else "error", ids=chosen)
        if dropped:
            entry["dropped"] = dropped
        unseen = [i for i in chosen if i not in self.seen]
        if unseen:
            entry["unseen"] = unseen
        if not chosen:
            entry["error"] = "no usable evidence cited"
        return chosen

    def _fit(self, history: list[dict[str, Any]], reserve: int = 0) -> int:
        """Elide the oldest tool results (then the oldest call arguments) until the prompt, plus ``reserve``
        tokens still to be added, fits its budget. Returns the tokens the prompt will use."""
        budget = PROMPT_BUDGET_TOKENS - reserve
        used = _prompt_tokens(history)
        for stage in ("results", "arguments"):
            for m in history[2:]:
                if used <= budget:
                    return used + reserve
                if stage == "results" and m["role"] in ("tool", "user") and m.get("content") not in (ELIDED, None):
                    m["content"] = ELIDED
                elif stage == "arguments" and m.get("tool_calls"):
                    for c in m["tool_calls"]:
                        c["function"]["arguments"] = "{}"
                else:
                    continue
                used = _prompt_tokens(history)
        return used + reserve

    def run(self) -> list[int] | None:
        tools = [TOOLS[n] for n in self.tool_names]
        query = _clip_tokens(self.query, QUERY_TOKENS)
        history: list[dict[str, Any]] = [
            {"role": "system", "content": PROMPT_E.format(rounds=self.max_rounds)},
            {"role": "user", "content": f"Query: {query}\n\nTopic documents (id, summary):\n{self._catalog()}"}]
        json_only = False
        strikes = 0
        rnd = 0
        while rnd < self.max_rounds:
            rnd += 1
            final = [{"role": "user", "content": FINAL_ROUND}] if rnd == self.max_rounds else []
            used = self._fit(history, _prompt_tokens(final) - 3 if final else 0)
            if used > PROMPT_BUDGET_TOKENS:
                self.trace.append({"round": rnd, "event": "prompt_budget", "prompt_tokens": used,
                                   "error": f"the prompt needs {used} tokens; the budget is {PROMPT_BUDGET_TOKENS}"})
                return None
            msgs = history + final
            self.timings["prompt_tokens_max"] = max(self.timings["prompt_tokens_max"], float(used))
            t = time.perf_counter()
            try:
                if json_only:
                    text, calls = self.client.chat(msgs, max_tokens=ROUND_COMPLETION_TOKENS).text, []
                else:
                    res = self.client.chat_tools(msgs, tools, max_tokens=ROUND_COMPLETION_TOKENS)
                    text, calls = res.text, res.tool_calls
            except LLMError as exc:
                self.timings["llm_ms"] += (time.perf_counter() - t) * 1e3
                if not json_only and len(history) == 2 and _status(exc.__cause__) == 400:
                    # The endpoint rejects tool definitions: drive it with Prompt E's JSON protocol instead.
                    json_only = True
                    self.trace.append({"round": rnd, "event": "json_protocol", "error": str(exc)})
                    rnd -= 1
                    continue
                self.trace.append({"round": rnd, "event": "llm_error", "error": str(exc)})
                return None
            self.timings["llm_ms"] += (time.perf_counter() - t) * 1e3
            self.timings["rounds"] = float(rnd)
            if calls:
                history.append({"role": "assistant", "content": text or None, "tool_calls": [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                    for c in calls]})
                usable, evidence = False, None
                for k, c in enumerate(calls):
                    if c.name in ANSWER_NAMES and k < CALLS_PER_ROUND:
                        got = self.answer(rnd, c.name, c.arguments)
                        evidence = evidence or got
                        result, ok = ("ok" if got else "error: no usable evidence cited"), bool(got)
                    elif k >= CALLS_PER_ROUND:
                        self.trace.append({"round": rnd, "tool": c.name, "arguments": c.arguments, "status": "error",
                                           "error": f"more than {CALLS_PER_ROUND} calls in one round"})
                        result, ok = f"error: not executed (at most {CALLS_PER_ROUND} calls per round)", False
                    else:
                        result, ok = self.run_tool(rnd, c.name, c.arguments)
                    usable = usable or ok
                    history.append({"role": "tool", "tool_call_id": c.id, "content": result})
                if evidence:
                    return evidence
            else:
                usable, evidence = self._json_round(rnd, text, history)
                if evidence:
                    return evidence
                if evidence is not None:  # done=true with nothing usable: the model has stopped
                    return None
            strikes = 0 if usable else strikes + 1
            if strikes >= MAX_STRIKES:
                self.trace.append({"round": rnd, "event": "no_progress",
                                   "error": f"{MAX_STRIKES} consecutive rounds without a usable action"})
                return None
        self.trace.append({"round": rnd, "event": "round_limit", "error": f"no answer in {self.max_rounds} round(s)"})
        return None

    def _json_round(self, rnd: int, text: str, history: list[dict[str, Any]]) -> tuple[bool, list[int] | None]:
        """A plain-text turn read as Prompt E's JSON action: (usable, evidence or None when not done)."""
        history.append({"role": "assistant", "content": text})
        try:
            action = parse_json(text)
            if not isinstance(action, dict):
                raise LLMError(f"the action is a JSON {type(action).__name__}, not an object")
        except LLMError as exc:
            self.trace.append({"round": rnd, "event": "malformed", "error": str(exc)})
            history.append({"role": "user", "content": CORRECTION})
            return False, None
        if action.get("done") is True or (action.get("done") is None and not action.get("tool_calls")):
            return True, self.answer(rnd, "done", action)
        calls = action.get("tool_calls")
        if not isinstance(calls, list) or not calls:
            self.trace.append({"round": rnd, "event": "malformed", "error": "done is false but tool_calls is empty"})
            history.append({"role": "user", "content": CORRECTION})
            return False, None
        results, usable = [], False
        for k, call in enumerate(calls):
            name = call.get("name") if isinstance(call, dict) else None
            args = call.get("arguments", {}) if isinstance(call, dict) else None
            if k >= CALLS_PER_ROUND:
                result = f"error: not executed (at most {CALLS_PER_ROUND} calls per round)"
                self.trace.append({"round": rnd, "tool": name, "arguments": args, "status": "error",
                                   "error": f"more than {CALLS_PER_ROUND} calls in one round"})
            elif not isinstance(name, str) or name in ANSWER_NAMES:
                result = "error: each tool call needs a tool name; finish with done=true instead of calling answer"
                self.trace.append({"round": rnd, "tool": name, "arguments": args, "status": "error",
                                   "error": "malformed tool call"})
            else:
                result, ok = self.run_tool(rnd, name, args)
                usable = usable or ok
            results.append(f"## {name}({json.dumps(args, default=str)[:200]})\n{result}")
        history.append({"role": "user", "content": "Tool results:\n\n" + "\n\n".join(results)})
        return usable, None


def agentic_recall(ns: Namespace, query: str, *, llm: Any = None, max_rounds: int = 7, budget_tokens: int = 2000,
                   filter: dict[str, Any] | None = None, asked_at: Any = None) -> Recall:
    """Recall driven by an LLM agent over hippo's memory tools (seed 003 §3.4, Algorithm 3, Prompt E); see
    :meth:`hippo.Memory.agentic_recall`. ``query`` has been validated by the caller."""
    budget_tokens = check_int(budget_tokens, "budget_tokens", minimum=1)
    max_rounds = check_int(max_rounds, "max_rounds", minimum=1, maximum=MAX_ROUNDS_LIMIT)
    pred = compile_filter(filter)  # validate before any LLM call
    scope = scope_of(ns.config, query, asked_at=asked_at)
    source = llm if llm is not None else ns.rt.llm
    if source is None:
        raise InvalidInput("llm: agentic_recall needs an OpenAI-compatible LLM; pass llm=... or configure "
                           "Memory(llm=...) (offline recall is Memory.recall)")
    client = as_llm(source)
    t0 = time.perf_counter()
    agent = _Agent(ns, query, filter, client, max_rounds, asked_at)
    evidence = agent.run()
    if evidence:
        t = time.perf_counter()
        out = ns.pack_ids(query, evidence, budget_tokens, agent.pred)
        out.timings = {"pack_ms": (time.perf_counter() - t) * 1e3}
    else:
        # Algorithm 3, lines 13-16: no evidence from the agent -> the lexical fallback as a recall guard.
        out = ns.recall(query, budget_tokens, pred, scope, False)
        agent.trace.append({"event": "fallback", "round": int(agent.timings["rounds"]),
                            "reason": next((e.get("event") or "no usable evidence" for e in reversed(agent.trace)
                                            if "event" in e), "no usable evidence"), "recall": "lexical"})
    out.trace = agent.trace
    out.timings.update(agent.timings)
    out.timings["agentic_ms"] = (time.perf_counter() - t0) * 1e3
    return out

"""Context compaction for an agent's live context window (seed 004, hippocampus.md), framework-neutral.

The LangChain middleware and the LlamaIndex memory hooks translate their message types into
:class:`ContextMessage` and ask a :class:`ContextCompactor` what to send the model instead: large tool outputs and
error dumps that the index policies select (seed 004 §6.1, :meth:`hippo.Memory.wants_index`), user instructions,
and, where enabled, old turns whose strength decayed (§8.1) are stored as index entries
(:meth:`hippo.Memory.index_entry`) and replaced by the entries' compact blocks (§1.4); an identifier the latest user
message names brings the lines around it along (§7.1, direct reference). Messages of the latest
``keep_recent_turns`` user turns, system messages and critical entries stay verbatim, and a block replaces a
message only when it is shorter. The caller's conversation is never changed: compaction returns replacement texts.

A message's turn is the number of user messages up to and including it; entries' decay clocks count these turns.
Entries of one conversation live in one namespace (the adapters choose it: ``"context.<thread or session id>"``).
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from hippo.base.checks import check_bool, check_int, check_iterable, check_number, is_one_of
from hippo.base.errors import HippoError, InvalidInput
from hippo.base.policies import compile_policies
from hippo.engine.hierarchy.decay import closed_form
from hippo.memory import Memory
from hippo.text.extract import looks_like_error
from hippo.text.tokenizer import count_tokens

log = logging.getLogger("hippo.compaction")

#: The name of the pattern-completion tool (``memory_expand(entry_id, query)``) the adapters give the model.
EXPAND_TOOL = "memory_expand"
ROLES = ("user", "assistant", "system", "tool")


@dataclass(frozen=True)
class ContextMessage:
    """One message of a context window, as compaction sees it.

    ``key`` identifies the message across calls (a message id, a tool call id, or :func:`content_key`); ``role``
    is one of ``user``, ``assistant``, ``system``, ``tool``; ``tool`` names the tool of a tool result, ``call_id``
    its call, ``error`` says the framework marked it as failed, and ``query`` is the query a ``memory_expand``
    result was asked for (it is named in the note that replaces an old one)."""

    key: str
    role: str
    text: str
    tool: str | None = None
    call_id: str | None = None
    error: bool = False
    query: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.key, str) or not self.key:
            raise InvalidInput(f"ContextMessage.key must be a non-empty str, got {self.key!r}")
        if not is_one_of(self.role, ROLES):
            raise InvalidInput(f"ContextMessage.role must be one of {ROLES}, got {self.role!r}")
        if not isinstance(self.text, str):
            raise InvalidInput(f"ContextMessage.text must be a str, got {type(self.text).__name__}")
        for name in ("tool", "call_id", "query"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                raise InvalidInput(f"ContextMessage.{name} must be a str or None, got {getattr(self, name)!r}")
        if not isinstance(self.error, bool):
            raise InvalidInput(f"ContextMessage.error must be a bool, got {self.error!r}")


def content_key(role: str, text: str) -> str:
    """A stable key for a message without an id: a hash of its role and text."""
    return "sha:" + hashlib.sha1(f"{role}\x00{text}".encode("utf-8", "surrogatepass")).hexdigest()


def turns_of(messages: list[ContextMessage]) -> list[int]:
    """The user turn of each message (1 for the first user message and what follows it, 0 before it)."""
    out, n = [], 0
    for m in messages:
        if m.role == "user":
            n += 1
        out.append(n)
    return out


#: How many conversations (namespaces) a compactor remembers its decisions for, the least recently compacted
#: forgotten first. A forgotten conversation finds its entries again in the store (``source.message_key``) and decides
#: the rest again, so it never indexes a message twice; without a bound, a server's compactor kept every thread it
#: ever served.
MAX_CONVERSATIONS = 1024


class _Conversation:
    """What a compactor knows about one namespace: which messages it indexed or decided to keep."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.loaded = False
        self.entry_of: dict[str, str] = {}   # message key -> entry id
        self.keep: set[str] = set()          # message keys the policies left verbatim
        self.tokens: dict[str, int] = {}     # message key -> cl100k tokens of its text
        self.plain: set[str] = set()         # turns the policies do not index by content


class ContextCompactor:
    """The compaction policy over one :class:`hippo.Memory` (entries go to namespaces of its store).

    Args:
        memory: the memory holding the entries.
        keep_recent_turns: user turns (the latest first) whose messages are always sent verbatim.
        index_roles: the roles whose messages may become entries (tool results by the policies; user and
            assistant turns by the policies, e.g. instructions, and by decay when ``index_turns``).
        index_turns: also replace old user / assistant turns whose strength (seed 004 §8.1, the ``message`` rate)
            fell below ``turn_threshold`` (otherwise only what the policies select is indexed).
        turn_threshold: see ``index_turns``.
        min_turn_tokens: shorter turns are never replaced (an entry would not be smaller).
        policies: extra index policies (``hippo.engine.entries.DEFAULT_INDEX_POLICIES`` format), evaluated after
            the defaults and ``config.decay.policies``.
        cue_tokens: token budget of the lines an identifier of the latest user message brings along (0: off).
        context_lines: lines shown around each line that matches a cue or an expand query.
    """

    def __init__(self, memory: Memory, *, keep_recent_turns: int = 1,
                 index_roles: Iterable[str] = ("user", "assistant", "tool"), index_turns: bool = True,
                 turn_threshold: float = 0.75, min_turn_tokens: int = 200,
                 policies: Iterable[Mapping[str, Any]] | None = None, cue_tokens: int = 200,
                 context_lines: int = 3) -> None:
        if not isinstance(memory, Memory):
            raise InvalidInput(f"memory must be a hippo.Memory, got {type(memory).__name__}")
        self.memory = memory
        self.keep_recent_turns = check_int(keep_recent_turns, "keep_recent_turns", minimum=1)
        check_iterable(index_roles, "index_roles", "a list of 'user', 'assistant' or 'tool'")
        roles = tuple(index_roles)  # read once: a generator is checked and kept alike
        if not all(isinstance(r, str) and is_one_of(r, ("user", "assistant", "tool")) for r in roles):
            raise InvalidInput(f"index_roles must hold 'user', 'assistant' or 'tool', got {roles!r}")
        self.index_roles = frozenset(roles)
        self.index_turns = check_bool(index_turns, "index_turns")
        self.turn_threshold = check_number(turn_threshold, "turn_threshold")
        self.min_turn_tokens = check_int(min_turn_tokens, "min_turn_tokens", minimum=1)
        if policies is not None:
            check_iterable(policies, "policies", "a list of {'match': ..., 'action': ...} dicts or None")
        self.policies = list(policies) if policies is not None else None
        if self.policies:
            compile_policies(self.policies)  # fail now, not at the first tool output
        self.cue_tokens = check_int(cue_tokens, "cue_tokens")
        self.context_lines = check_int(context_lines, "context_lines")
        self._conversations: OrderedDict[str, _Conversation] = OrderedDict()  # least recently used first
        self._lock = threading.Lock()

    # -- state ----------------------------------------------------------------------------------------------
    def _conversation(self, view: Memory) -> _Conversation:
        with self._lock:
            conv = self._conversations.get(view.namespace)
            if conv is None:
                conv = self._conversations[view.namespace] = _Conversation()
                while len(self._conversations) > MAX_CONVERSATIONS:  # a server's threads come and go
                    self._conversations.popitem(last=False)
            else:
                self._conversations.move_to_end(view.namespace)
        if not conv.loaded:
            with conv.lock:
                if not conv.loaded:
                    for e in view.entries():  # entries indexed by an earlier process
                        mk = e.source.get("message_key")
                        if isinstance(mk, str):
                            conv.entry_of[mk] = e.id
                    conv.loaded = True
        return conv

    def _tokens(self, conv: _Conversation, m: ContextMessage) -> int:
        n = conv.tokens.get(m.key)
        if n is None:
            n = conv.tokens[m.key] = count_tokens(m.text) if m.text else 0
        return n

    # -- deciding -------------------------------------------------------------------------------------------
    def _decide(self, view: Memory, conv: _Conversation, m: ContextMessage, turn: int, age: int) -> str | None:
        """The entry id standing for ``m`` (indexing it now if the policies say so), or None."""
        got = conv.entry_of.get(m.key)
        if got is not None or m.key in conv.keep:
            return got
        try:
            return self._index(view, conv, m, turn, age)
        except InvalidInput as exc:
            # content hippo cannot store losslessly (control characters, lone surrogates): sent verbatim
            log.warning("message %s stays verbatim: %s", m.key, exc)
            conv.keep.add(m.key)
            return None

    def _index(self, view: Memory, conv: _Conversation, m: ContextMessage, turn: int, age: int) -> str | None:
        if not m.text.strip() or m.role not in self.index_roles:
            conv.keep.add(m.key)
            return None
        n = self._tokens(conv, m)
        if m.role == "tool":
            if m.tool == EXPAND_TOOL:
                conv.keep.add(m.key)
                return None
            error = m.error or looks_like_error(m.text)
            source = {"type": "error" if error else (m.tool or "tool"), "tool": m.tool, "ref": m.call_id,
                      "message_key": m.key, "retrievable": True}
            if not view.wants_index(m.text, type="tool_result", role="tool", source=source, n_tokens=n,
                                    policies=self.policies):
                conv.keep.add(m.key)
                return None
            entry = view.index_entry(m.text, type="tool_result", role="tool", source=source, turn=turn,
                                     policies=self.policies)
        elif m.role in ("user", "assistant"):
            source = {"type": f"turn.{m.role}", "ref": m.call_id, "message_key": m.key, "retrievable": True}
            if m.key not in conv.plain:
                # user instructions are indexed at once (policy: high priority, persist-worthy); such an entry
                # replaces the message only if it is ever shorter than the message
                if view.wants_index(m.text, type="message", role=m.role, source=source, n_tokens=n,
                                    policies=self.policies):
                    entry = view.index_entry(m.text, type="message", role=m.role, source=source, turn=turn,
                                             policies=self.policies)
                    conv.entry_of[m.key] = entry.id
                    return entry.id
                conv.plain.add(m.key)
            if not self.index_turns or n < self.min_turn_tokens:
                conv.keep.add(m.key)  # never worth an entry: short turns stay verbatim
                return None
            if closed_form(view.config.decay.rates["message"], age) >= self.turn_threshold:
                return None  # not decayed yet (seed 004 §8.1, message rate): decided again at a later turn
            entry = view.index_entry(m.text, type="message", role=m.role, source=source, turn=turn,
                                     policies=self.policies)
        else:
            conv.keep.add(m.key)
            return None
        conv.entry_of[m.key] = entry.id
        return entry.id

    def index(self, namespace: str, m: ContextMessage, turn: int | None = None) -> str | None:
        """Index one message now when the policies select it, or when it is a turn of at least
        ``min_turn_tokens`` (it left the short-term window); returns the entry id or None."""
        if not isinstance(m, ContextMessage):
            raise InvalidInput(f"m must be a ContextMessage, got {type(m).__name__}")
        if turn is not None:
            check_int(turn, "turn")  # refused here, not taken for content that cannot be stored below
        view = self.memory.using(namespace)
        conv = self._conversation(view)
        with conv.lock:
            got = conv.entry_of.get(m.key)
            if got is not None:
                return got
            try:
                if not m.text.strip() or m.role not in ("user", "assistant", "tool") or m.tool == EXPAND_TOOL:
                    return None
                n = self._tokens(conv, m)
                kind = "tool_result" if m.role == "tool" else "message"
                error = kind == "tool_result" and (m.error or looks_like_error(m.text))
                source = {"type": "error" if error else (m.tool or "tool") if kind == "tool_result"
                          else f"turn.{m.role}", "ref": m.call_id, "message_key": m.key, "retrievable": True}
                if not view.wants_index(m.text, type=kind, role=m.role, source=source, n_tokens=n,
                                        policies=self.policies) \
                        and not (kind == "message" and n >= self.min_turn_tokens):
                    return None
                entry = view.index_entry(m.text, type=kind, role=m.role, source=source, turn=turn,
                                         policies=self.policies)
            except InvalidInput as exc:
                log.warning("message %s stays verbatim: %s", m.key, exc)
                return None
            conv.entry_of[m.key] = entry.id
            return entry.id

    # -- compacting -----------------------------------------------------------------------------------------
    def compact(self, messages: list[ContextMessage], namespace: str, *, index_recent: bool = False
                ) -> list[str | None]:
        """For each message, the text to send instead of it (an entry's block, or a note for an old expand
        result), or None to send it as it is. With ``index_recent`` the policies also index the messages of
        the recent turns (they still stay verbatim), so an instruction of the last turn is not missed."""
        check_iterable(messages, "messages", "a list of ContextMessage objects")
        check_bool(index_recent, "index_recent")
        messages = list(messages)
        for m in messages:
            if not isinstance(m, ContextMessage):
                raise InvalidInput(f"messages must hold ContextMessage objects, got {type(m).__name__}")
            if m.role not in ROLES:
                raise InvalidInput(f"role must be one of {ROLES}, got {m.role!r}")
        view = self.memory.using(namespace)
        conv = self._conversation(view)
        turns = turns_of(messages)
        current = turns[-1] if turns else 0
        out: list[str | None] = [None] * len(messages)
        if current <= self.keep_recent_turns - 1 and not index_recent:
            return out
        plan: list[tuple[int, str]] = []
        with conv.lock:
            for i, m in enumerate(messages):
                age = current - turns[i]
                if m.role == "system":
                    continue
                if age < self.keep_recent_turns:
                    if index_recent and m.tool != EXPAND_TOOL:
                        self._decide(view, conv, m, turns[i], age)
                    continue
                if m.role == "tool" and m.tool == EXPAND_TOOL:
                    plan.append((i, ""))
                    continue
                eid = self._decide(view, conv, m, turns[i], age)
                if eid is not None:
                    plan.append((i, eid))
        if not plan:
            return out
        blocks = view.entry_blocks([eid for _, eid in plan if eid], turn=current)
        blocks.update(self._cued(view, messages, blocks, current))
        for i, eid in plan:
            if not eid:
                q = messages[i].query
                out[i] = (f"[memory_expand result of an earlier turn{f' for {q!r}' if q else ''} removed from "
                          "context; call memory_expand again to re-read it]")
                continue
            block = blocks.get(eid)
            if block is not None and len(block) < len(messages[i].text):
                out[i] = block  # a critical entry (None) or one not smaller than its message stays verbatim
        return out

    def _cued(self, view: Memory, messages: list[ContextMessage], blocks: dict[str, str | None], turn: int
              ) -> dict[str, str]:
        """Blocks extended with the lines an identifier of the latest user message points to (pattern
        completion on a direct reference, seed 004 §7.1), for entries whose block does not already show it."""
        if not self.cue_tokens:
            return {}
        ask = next((m.text for m in reversed(messages) if m.role == "user"), "")
        if not ask.strip():
            return {}
        try:
            return view.blocks_on_cue(ask, blocks, max_tokens=self.cue_tokens, context_lines=self.context_lines,
                                      turn=turn)
        except HippoError:
            return {}

    # -- expanding ------------------------------------------------------------------------------------------
    def expand(self, namespace: str, entry_id: str, query: str | None = None, *, max_tokens: int = 1500) -> str:
        """Pattern completion (seed 004 §7): the stored content behind ``entry_id``, or with ``query`` the
        numbered lines around the lines that match it, within ``max_tokens``. A blank ``query`` is no query: a model
        fills an optional argument with ``""`` as often as it leaves it out."""
        if not isinstance(entry_id, str):
            raise InvalidInput(f"entry_id must be a str, got {type(entry_id).__name__}")
        if isinstance(query, str) and not query.strip():
            query = None
        got = self.memory.using(namespace).complete(entry_id.strip(), query, max_tokens=max_tokens,
                                                    context_lines=self.context_lines)
        return got.text


__all__ = ["ContextCompactor", "ContextMessage", "EXPAND_TOOL", "content_key", "turns_of"]

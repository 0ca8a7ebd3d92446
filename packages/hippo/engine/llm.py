"""Optional LLM booster: an OpenAI-compatible chat endpoint for query keywords, episode summaries and facts.

Never needed: every caller has an offline path and falls back to it when the endpoint fails. Requests go through
the ``openai`` client (any OpenAI-compatible server: vLLM, llama.cpp, Ollama, LM Studio...) with its own retries
switched off; :mod:`tenacity` retries rate limits (429), server errors (5xx), dropped connections and timeouts with
exponential backoff, and anything else fails at once. Every failure surfaces as :class:`hippo.base.errors.LLMError`
naming the endpoint and the cause; an answer that is not the JSON asked for is an ``LLMError`` too.

``Memory(..., llm=...)`` accepts an :class:`LLM`, an ``openai.OpenAI`` client (or anything with
``.chat.completions.create``), or a dict of :class:`LLM` settings (``base_url``, ``api_key``, ``model``, ...).
"""

from __future__ import annotations

import inspect
import json
import math
import re
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from hippo.base.errors import InvalidInput, LLMError
from hippo.base.locks import ForkSafeLock
from hippo.text import tokenizer

DEFAULT_MODEL = "gpt-4o-mini"

KEYWORDS_PROMPT = (
    "Extract the search keywords of the user's question for a keyword search over a conversation history: the "
    "names, things, places, activities and events it asks about, plus close synonyms that the history might use "
    "instead. Leave out question words and filler. Answer only with JSON: {\"keywords\": [\"...\", ...]}."
)
SUMMARY_PROMPT = (
    "Summarize this excerpt of a conversation in one or two sentences of at most {words} words. Keep names, "
    "dates, numbers and decisions. Answer only with JSON: {{\"summary\": \"...\"}}."
)
FACTS_PROMPT = (
    "List the lasting facts stated in this excerpt of a conversation (who did, has, likes, plans or decided what, "
    "with dates and numbers), each as one short self-contained sentence naming the person, with the ids of the "
    "messages it comes from. Skip greetings and small talk. Answer only with JSON: "
    "{\"facts\": [{\"fact\": \"...\", \"sources\": [id, ...]}, ...]}."
)


@dataclass
class ChatResult:
    text: str
    logprobs: list[list[float]] | None = None  # per generated token: log-probabilities of the top alternatives


@dataclass
class ToolCall:
    """One function call requested by the model; ``arguments`` is the raw JSON text it sent (maybe malformed)."""

    id: str
    name: str
    arguments: str


@dataclass
class ToolChatResult:
    """An assistant turn of a tool-calling chat: plain ``text``, ``tool_calls``, or both."""

    text: str
    tool_calls: list[ToolCall]
    finish_reason: str | None = None


def _status(exc: BaseException) -> int | None:
    return getattr(exc, "status_code", None) or getattr(getattr(exc, "response", None), "status_code", None)


def _retryable(exc: BaseException) -> bool:
    import openai

    if isinstance(exc, (openai.APIConnectionError, openai.APITimeoutError, openai.RateLimitError,
                        openai.InternalServerError)):
        return True
    status = _status(exc)
    return isinstance(exc, openai.APIStatusError) and status is not None and (status == 429 or status >= 500)


def _storable(text: str) -> bool:
    """Whether a model's ``text`` passes the check every stored text passes (:func:`hippo.text.tokenizer.check_text`:
    not blank, no lone surrogate, no control character); JSON can spell any of these ("\\ud800", "\\u0000")."""
    try:
        tokenizer.check_text(text, "LLM text")
    except InvalidInput:
        return False
    return True


def _message_id(value: Any) -> int | None:
    """A message id as a model writes one: an int, or a string of ASCII digits; None for anything else (a bool, a
    float, "²", a number past 64 bits)."""
    if isinstance(value, str):
        value = value.strip()
        if not (value.isascii() and value.isdigit() and len(value) <= 19):
            return None
        return int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


_FENCE_RE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)


def parse_json(text: str) -> Any:
    """JSON from a model answer (tolerating a Markdown code fence); ``LLMError`` when it is not JSON."""
    if not isinstance(text, str) or not text.strip():
        raise LLMError("LLM answered an empty message where JSON was expected")
    m = _FENCE_RE.match(text)
    body = m.group(1) if m else text.strip()
    try:
        return json.loads(body)
    except json.JSONDecodeError as exc:
        raise LLMError(f"LLM answered malformed JSON ({exc.msg} at char {exc.pos}): {body[:120]!r}") from exc
    except (ValueError, RecursionError) as exc:  # nested past the parser's depth, an integer past Python's digits
        raise LLMError(f"LLM answered JSON that cannot be read ({type(exc).__name__}): {body[:120]!r}") from exc


class LLM:
    """A chat-completions endpoint with retries, timeouts and typed failures."""

    def __init__(self, client: Any = None, *, model: str = DEFAULT_MODEL, base_url: str | None = None,
                 api_key: str | None = None, timeout: float = 30.0, max_retries: int = 3,
                 backoff_s: float = 0.5, max_backoff_s: float = 8.0, temperature: float = 0.0) -> None:
        if not isinstance(model, str) or not model:
            raise InvalidInput("model must be a non-empty str")
        for name, v in (("timeout", timeout), ("backoff_s", backoff_s), ("max_backoff_s", max_backoff_s)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise InvalidInput(f"{name} must be a finite number >= 0, got {v!r}")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise InvalidInput(f"max_retries must be an int >= 0, got {max_retries!r}")
        if client is None:
            try:
                import openai
            except ImportError as exc:  # pragma: no cover - openai is an optional extra
                raise LLMError("the LLM path needs the 'openai' package (pip install 'hippo-memory[openai]')") from exc
            client = openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout,
                                   max_retries=0)
        elif not hasattr(getattr(getattr(client, "chat", None), "completions", None), "create"):
            raise InvalidInput("client must be an OpenAI-compatible client with chat.completions.create")
        else:
            with_options = getattr(client, "with_options", None)
            if callable(with_options):  # our retries, our timeout
                client = with_options(max_retries=0, timeout=timeout)
        self.client = client
        self.model = model
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.backoff_s = float(backoff_s)
        self.max_backoff_s = float(max_backoff_s)
        self.temperature = float(temperature)
        self.calls = 0

    @property
    def endpoint(self) -> str:
        return str(getattr(self.client, "base_url", "an OpenAI-compatible endpoint"))

    def __repr__(self) -> str:
        return f"LLM(model={self.model!r}, endpoint={self.endpoint!r})"

    # -- transport ------------------------------------------------------------------------------------------
    def chat(self, messages: Sequence[dict[str, str]], *, max_tokens: int = 512, json_mode: bool = False,
             logprobs: bool = False) -> ChatResult:
        """One chat completion, retried on 429 / 5xx / connection errors / timeouts."""
        kwargs: dict[str, Any] = {"model": self.model, "messages": list(messages), "max_tokens": max_tokens,
                                  "temperature": self.temperature, "timeout": self.timeout}
        if json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        if logprobs:
            kwargs["logprobs"] = True
            kwargs["top_logprobs"] = 5
        resp = self._complete(kwargs)
        try:
            choice = resp.choices[0]
            text = choice.message.content or ""
        except (AttributeError, IndexError, TypeError) as exc:
            raise LLMError(f"LLM at {self.endpoint} answered without a message: {exc}") from exc
        lp = None
        content = getattr(getattr(choice, "logprobs", None), "content", None)
        if content:
            lp = [[t.logprob for t in (tok.top_logprobs or [])] or [tok.logprob] for tok in content]
        return ChatResult(text, lp)

    def _complete(self, kwargs: dict[str, Any]) -> Any:
        """``chat.completions.create`` with the retry policy; every failure becomes one ``LLMError``."""
        retrying = Retrying(stop=stop_after_attempt(self.max_retries + 1),
                            wait=wait_exponential(multiplier=self.backoff_s, max=self.max_backoff_s),
                            retry=retry_if_exception(_retryable), reraise=True)
        try:
            return retrying(self._create, kwargs)
        except LLMError:
            raise
        except Exception as exc:  # noqa: BLE001 - every transport failure becomes one typed error
            status = _status(exc)
            what = f"HTTP {status}" if status else type(exc).__name__
            tries = self.max_retries + 1 if _retryable(exc) else 1
            raise LLMError(f"LLM request to {self.endpoint} failed after {tries} attempt(s): {what}: {exc}") from exc

    def _create(self, kwargs: dict[str, Any]) -> Any:
        self.calls += 1
        return self.client.chat.completions.create(**kwargs)

    def chat_tools(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]], *,
                   max_tokens: int = 512, tool_choice: str | dict[str, Any] = "auto") -> ToolChatResult:
        """One tool-calling chat completion (OpenAI ``tools=[...]``), with the same retries and errors as
        :meth:`chat`. ``messages`` may hold assistant turns with ``tool_calls`` and ``role="tool"`` results.
        An endpoint that answers in plain text instead of calling a tool yields ``text`` and no ``tool_calls``;
        an HTTP error (for example 400 from a server without tool support) is an ``LLMError`` whose
        ``__cause__`` carries the status."""
        if not tools:
            raise InvalidInput("tools must be a non-empty sequence of OpenAI tool definitions")
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise InvalidInput(f"max_tokens must be an int >= 1, got {max_tokens!r}")
        kwargs: dict[str, Any] = {"model": self.model, "messages": list(messages), "tools": list(tools),
                                  "tool_choice": tool_choice, "max_tokens": max_tokens,
                                  "temperature": self.temperature, "timeout": self.timeout}
        resp = self._complete(kwargs)
        if inspect.isawaitable(resp):
            close = getattr(resp, "close", None)
            if callable(close):
                close()  # never awaited: an async client cannot serve this synchronous call
            raise LLMError("the LLM client is asynchronous (e.g. openai.AsyncOpenAI); pass a synchronous "
                           "OpenAI-compatible client")
        try:
            choice = resp.choices[0]
            msg = choice.message
            text = msg.content or ""
            raw_calls = list(getattr(msg, "tool_calls", None) or [])
        except (AttributeError, IndexError, TypeError) as exc:
            raise LLMError(f"LLM at {self.endpoint} answered without a message: {exc}") from exc
        calls: list[ToolCall] = []
        for k, c in enumerate(raw_calls):
            fn = getattr(c, "function", None)
            name = getattr(fn, "name", None)
            args = getattr(fn, "arguments", None)
            calls.append(ToolCall(id=str(getattr(c, "id", None) or f"call_{k}"),
                                  name=name if isinstance(name, str) else "",
                                  arguments=args if isinstance(args, str) else json.dumps(args)))
        return ToolChatResult(text, calls, getattr(choice, "finish_reason", None))

    def json(self, system: str, user: str, *, max_tokens: int = 512) -> Any:
        res = self.chat([{"role": "system", "content": system}, {"role": "user", "content": user}],
                        max_tokens=max_tokens, json_mode=True)
        return parse_json(res.text)

    # -- tasks ----------------------------------------------------------------------------------------------
    def keywords(self, query: str) -> list[str]:
        """Search keywords of a question (single words, in order, de-duplicated)."""
        data = self.json(KEYWORDS_PROMPT, query, max_tokens=128)
        words = data.get("keywords") if isinstance(data, dict) else data
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise LLMError(f"LLM keywords answer is not a list of strings: {str(data)[:120]!r}")
        from hippo.text import textnorm
        out: list[str] = []
        for phrase in words:
            for w in textnorm.words(phrase):
                if w.lower() not in textnorm.STOPWORDS and w not in out:
                    out.append(w)
        if not out:
            raise LLMError("LLM returned no usable keywords")
        return out[:24]

    def summarize(self, lines: Iterable[str], *, words: int = 40) -> str:
        data = self.json(SUMMARY_PROMPT.format(words=words), "\n".join(lines), max_tokens=4 * words + 32)
        summary = data.get("summary") if isinstance(data, dict) else None
        if not isinstance(summary, str) or not summary.strip():
            raise LLMError(f"LLM summary answer has no 'summary' string: {str(data)[:120]!r}")
        summary = " ".join(summary.split())
        if not _storable(summary):
            raise LLMError(f"LLM summary holds text that cannot be stored losslessly: {summary[:120]!r}")
        return summary

    def facts(self, messages: Sequence[tuple[int, str | None, str]]) -> list[tuple[str, list[int]]]:
        """Facts with provenance; sources outside ``messages`` are dropped, facts without sources skipped."""
        valid = {mid for mid, _, _ in messages}
        user = "\n".join(f"[{mid}] {sp or 'unknown'}: {text}" for mid, sp, text in messages)
        data = self.json(FACTS_PROMPT, user, max_tokens=1024)
        items = data.get("facts") if isinstance(data, dict) else data
        if not isinstance(items, list):
            raise LLMError(f"LLM facts answer has no 'facts' list: {str(data)[:120]!r}")
        out = []
        for it in items:
            if not isinstance(it, dict) or not isinstance(it.get("fact"), str) or not _storable(it["fact"]):
                continue
            sources = it.get("sources")
            if not isinstance(sources, list):
                continue
            src = [i for i in map(_message_id, sources) if i in valid]
            if src:
                out.append((" ".join(it["fact"].split()), list(dict.fromkeys(src))))
        return out

    def uncertainty(self, question: str, context: str, *, max_tokens: int = 24) -> float:
        """Mean token entropy (nats) of a short answer to ``question`` given ``context``, from logprobs: the
        reader's uncertainty used by Stage II with an LLM. Needs an endpoint that returns logprobs."""
        res = self.chat([{"role": "system", "content": "Answer briefly from the context."},
                         {"role": "user", "content": f"Context:\n{context}\n\nQuestion: {question}"}],
                        max_tokens=max_tokens, logprobs=True)
        if not res.logprobs:
            raise LLMError("LLM endpoint returned no logprobs")
        ents = []
        for alts in res.logprobs:
            if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and -math.inf <= x <= 0 for x in alts):
                raise LLMError(f"LLM endpoint returned values that are no log-probabilities: {alts[:5]!r}")
            ps = [math.exp(x) for x in alts]
            total = sum(ps)
            if total <= 0:
                continue
            ents.append(-sum(p / total * math.log(p / total) for p in ps if p > 0))
        return sum(ents) / len(ents) if ents else 0.0


_wrapped: "weakref.WeakKeyDictionary[Any, LLM]" = weakref.WeakKeyDictionary()
# Settings dicts (not weak-referenceable) by their items, and clients that cannot be weakly referenced by identity
# (the entry holds the client, so its id names it): the latest _KEPT of them. A dict built for each handle or each
# call ({"base_url": ...} written in the call) reuses the client made for equal settings instead of keeping one more
# client, with its connection pool, for every dict the process ever passed.
_KEPT = 32
_kept: "OrderedDict[tuple, tuple[Any, LLM]]" = OrderedDict()
_lock = ForkSafeLock()


def _settings_key(obj: dict) -> tuple | None:
    """A dict of settings as a key: its items (None when a value is not hashable: such a dict is not kept)."""
    try:
        key = ("settings", tuple(sorted(obj.items())))
        hash(key)
    except TypeError:
        return None
    return key


def _keep(key: tuple, obj: Any, llm: LLM) -> None:
    _kept[key] = (obj, llm)
    _kept.move_to_end(key)
    while len(_kept) > _KEPT:
        _kept.popitem(last=False)


def as_llm(obj: Any) -> LLM | None:
    """Normalize ``Memory(llm=...)``: None, an :class:`LLM`, an OpenAI-compatible client or a settings dict. The same
    client, or a dict of the same settings, gives the same :class:`LLM`."""
    if obj is None or isinstance(obj, LLM):
        return obj
    with _lock:
        if isinstance(obj, dict):
            key = _settings_key(obj)
            hit = _kept.get(key) if key is not None else None
            if hit is not None:
                _kept.move_to_end(key)
                return hit[1]
            try:
                llm = LLM(**obj)
            except TypeError as exc:
                raise InvalidInput(f"llm settings: {exc}") from exc
            if key is not None:
                _keep(key, None, llm)
            return llm
        try:
            got = _wrapped.get(obj)
        except TypeError:  # not weak-referenceable: kept by identity, the entry holding it
            hit = _kept.get(("client", id(obj)))
            got = hit[1] if hit is not None and hit[0] is obj else None
        if got is not None:
            return got
        if isinstance(obj, str):
            raise InvalidInput("llm must be an LLM, an OpenAI-compatible client or a dict of settings, not a str "
                               "(use llm={'base_url': ...})")
        llm = LLM(obj)
        try:
            _wrapped[obj] = llm
        except TypeError:
            _keep(("client", id(obj)), obj, llm)
        return llm

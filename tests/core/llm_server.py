"""A tiny OpenAI-compatible chat-completions server on 127.0.0.1, for testing hippo's LLM path offline.

Real HTTP, real ``openai`` client: tests queue scripted answers (status codes, delays, malformed bodies) and read
back the requests the server received. Requests that offer ``tools`` are answered first from a queue of their own
(``push_tool_calls`` / ``push_agent``), so a scripted agent is not disturbed by other LLM tasks that run meanwhile. Without a scripted answer the server answers like a very literal model:
keywords are the question's longer words, summaries echo the first line, facts restate each message.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

import pytest


@dataclass
class Scripted:
    status: int = 200
    content: str | None = None      # assistant message content
    raw: bytes | None = None        # a raw HTTP body instead of a completion
    delay: float = 0.0
    logprobs: list[list[float]] | None = None
    tool_calls: list[dict[str, Any]] | None = None  # [{"name": ..., "arguments": dict or raw str, "id"?: ...}]


def _tool_calls(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for k, c in enumerate(calls):
        args = c.get("arguments", {})
        out.append({"id": c.get("id", f"call_{k}"), "type": "function",
                    "function": {"name": c["name"], "arguments": args if isinstance(args, str) else json.dumps(args)}})
    return out


def completion(content: str | None, logprobs: list[list[float]] | None = None,
               tool_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    lp = None
    if logprobs is not None:
        lp = {"content": [{"token": f"t{i}", "logprob": alts[0], "bytes": None,
                           "top_logprobs": [{"token": f"a{j}", "logprob": x, "bytes": None}
                                            for j, x in enumerate(alts)]}
                          for i, alts in enumerate(logprobs)]}
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "test-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content,
                                                 **({"tool_calls": _tool_calls(tool_calls)} if tool_calls else {})},
                         "finish_reason": "tool_calls" if tool_calls else "stop", "logprobs": lp}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def literal_model(request: dict[str, Any]) -> str:
    """Default answers, chosen by the system prompt of hippo's tasks."""
    msgs = request.get("messages", [])
    system = next((m["content"] for m in msgs if m.get("role") == "system"), "")
    user = next((m["content"] for m in msgs if m.get("role") == "user"), "")
    if "keywords" in system.lower():
        words = [w for w in re.findall(r"[A-Za-z]+", user) if len(w) > 3 and w.lower() not in ("what", "when",
                                                                                              "where", "which")]
        return json.dumps({"keywords": words})
    if "summarize" in system.lower():
        return json.dumps({"summary": "Summary: " + user.splitlines()[0][:80]})
    if "facts" in system.lower():
        facts = []
        for line in user.splitlines():
            m = re.match(r"\[(\d+)\] ([^:]+): (.*)", line)
            if m:
                facts.append({"fact": f"{m.group(2)} said: {m.group(3)[:60]}", "sources": [int(m.group(1))]})
        return json.dumps({"facts": facts})
    return "ok"


class FakeOpenAI:
    def __init__(self) -> None:
        self.queue: deque[Scripted] = deque()
        self.agent_queue: deque[Scripted] = deque()  # served only to requests that offer tools
        self.requests: list[dict[str, Any]] = []
        self.responder: Callable[[dict[str, Any]], str] = literal_model
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append({"path": self.path, "body": body})
                    if body.get("tools") and server.agent_queue:
                        step = server.agent_queue.popleft()
                    else:
                        step = server.queue.popleft() if server.queue else None
                if step is None:
                    step = Scripted(content=server.responder(body))
                if step.delay:
                    time.sleep(step.delay)
                if step.raw is not None:
                    payload = step.raw
                elif step.status >= 400:
                    payload = json.dumps({"error": {"message": f"scripted {step.status}", "type": "test"}}).encode()
                else:
                    content = step.content if step.content is not None or step.tool_calls else ""
                    payload = json.dumps(completion(content, step.logprobs, step.tool_calls)).encode()
                try:
                    self.send_response(step.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout tests)
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def push(self, **kwargs: Any) -> None:
        self.queue.append(Scripted(**kwargs))

    def push_tool_calls(self, *calls: dict[str, Any], content: str | None = None) -> None:
        """Script one assistant turn that calls tools, e.g. ``push_tool_calls({"name": "search",
        "arguments": {"query": "boots"}})``; ``arguments`` may be a raw string to send malformed JSON."""
        self.agent_queue.append(Scripted(content=content, tool_calls=list(calls)))

    def push_agent(self, **kwargs: Any) -> None:
        """Script any answer (plain text, status code, delay...) for the next request that offers tools."""
        self.agent_queue.append(Scripted(**kwargs))

    def tool_requests(self) -> list[dict[str, Any]]:
        """Bodies of the requests that offered tools, in arrival order."""
        return [r["body"] for r in self.requests if r["body"].get("tools")]

    def calls(self) -> int:
        return len(self.requests)

    def start(self) -> "FakeOpenAI":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def llm_server():
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()

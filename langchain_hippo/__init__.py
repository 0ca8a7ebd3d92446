"""LangChain / LangGraph adapters for hippo.

======================================  =====================================================  ================
name                                    what                                                   needs
======================================  =====================================================  ================
``HippoRetriever``                      ``BaseRetriever`` over ``Memory.search`` / ``recall``   langchain-core
``HippoStore``                          LangGraph ``BaseStore`` (``create_agent(store=...)``)   langgraph
``HippoMemoryMiddleware``               recall before / remember after each model call         langchain
``HippoContextMiddleware``              index large tool outputs, send entries, memory_expand  langchain
``make_memory_tools``                   ``memory_search`` / ``read`` / ``topics`` / ``topic``   langchain-core
``HippoChatMessageHistory``             ``BaseChatMessageHistory`` per session                 langchain-core
``HippoMemory``                         ``langchain_classic`` ``BaseMemory``                   langchain-classic
======================================  =====================================================  ================

Names are imported lazily, so using one adapter needs only its own framework package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_hippo.chat_history import HippoChatMessageHistory
    from langchain_hippo.classic import HippoMemory
    from langchain_hippo.context import HippoContextMiddleware
    from langchain_hippo.middleware import HippoMemoryMiddleware
    from langchain_hippo.retrievers import HippoRetriever
    from langchain_hippo.store import HippoStore
    from langchain_hippo.tools import make_memory_tools

_EXPORTS = {
    "HippoRetriever": "langchain_hippo.retrievers",
    "HippoStore": "langchain_hippo.store",
    "HippoMemoryMiddleware": "langchain_hippo.middleware",
    "HippoContextMiddleware": "langchain_hippo.context",
    "make_memory_tools": "langchain_hippo.tools",
    "HippoChatMessageHistory": "langchain_hippo.chat_history",
    "HippoMemory": "langchain_hippo.classic",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'langchain_hippo' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])

"""LlamaIndex adapters for hippo.

* ``HippoRetriever``: ``BaseRetriever`` over ``Memory.search`` / ``Memory.recall`` (``NodeWithScore`` of
  ``TextNode``), usable in ``RetrieverQueryEngine`` and chat engines.
* ``HippoDecayPostprocessor``: re-weights nodes by hippo strength and reinforces what it returns.
* ``HippoContextPostprocessor``: expands nodes to their neighbours / episode within a token budget.
* ``HippoMemoryBlock``: long-term memory block for ``llama_index.core.memory.Memory``.
* ``HippoContextBlock`` / ``HippoContextMemory`` / ``compact_chat_history`` / ``make_expand_tool``: index entries
  of large tool outputs instead of the outputs themselves (seed 004 context lifecycle).
"""

from __future__ import annotations

from llamaindex_hippo.context import HippoContextBlock, HippoContextMemory, compact_chat_history, make_expand_tool
from llamaindex_hippo.memory_blocks import HippoMemoryBlock
from llamaindex_hippo.postprocessors import HippoContextPostprocessor, HippoDecayPostprocessor
from llamaindex_hippo.retrievers import HippoRetriever, to_hippo_filter

__all__ = [
    "HippoRetriever",
    "HippoDecayPostprocessor",
    "HippoContextPostprocessor",
    "HippoMemoryBlock",
    "HippoContextBlock",
    "HippoContextMemory",
    "compact_chat_history",
    "make_expand_tool",
    "to_hippo_filter",
]

"""LlamaIndex adapters for hippo.

* ``HippoRetriever``: ``BaseRetriever`` over ``Memory.search`` / ``Memory.recall`` (``NodeWithScore`` of
  ``TextNode``), usable in ``RetrieverQueryEngine`` and chat engines.
* ``HippoDecayPostprocessor``: re-weights nodes by hippo strength and reinforces what it returns.
* ``HippoContextPostprocessor``: expands nodes to their neighbours / episode within a token budget.
* ``HippoMemoryBlock``: long-term memory block for ``llama_index.core.memory.Memory``.
"""

from __future__ import annotations

from llamaindex_hippo.memory_blocks import HippoMemoryBlock
from llamaindex_hippo.postprocessors import HippoContextPostprocessor, HippoDecayPostprocessor
from llamaindex_hippo.retrievers import HippoRetriever, to_hippo_filter

__all__ = [
    "HippoRetriever",
    "HippoDecayPostprocessor",
    "HippoContextPostprocessor",
    "HippoMemoryBlock",
    "to_hippo_filter",
]

"""LlamaIndex node postprocessors backed by hippo.

* ``HippoDecayPostprocessor`` re-weights nodes by hippo strength (seed 004 §8: power-law decay since the
  last access, priority and reinforcement; recency is part of it) and reinforces what it returns, so what
  keeps being useful stays strong.
* ``HippoContextPostprocessor`` expands each node to the conversation around it (its neighbours, or its
  episode) within a token budget.

Nodes not made from hippo messages (no ``hippo:<namespace>:<id>`` node id or ``id`` / ``namespace``
metadata) pass through unchanged. A node whose message is no longer in the memory (deleted or forgotten after the
node was retrieved) is dropped: its text is what the deletion removed.
"""

from __future__ import annotations

from typing import Any, Literal

from llama_index.core.bridge.pydantic import ConfigDict, Field
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from hippo import InvalidInput, NotFound, count_tokens
from llamaindex_hippo._common import (
    HIDDEN_KEYS,
    ValidatedInit,
    acall,
    check_memory,
    check_nodes,
    check_non_negative_int,
    check_positive_int,
    hippo_ref,
    item_metadata,
    render_item,
)


def _group(nodes: list[NodeWithScore]) -> dict[str, list[int]]:
    by_ns: dict[str, list[int]] = {}
    for n in nodes:
        ref = hippo_ref(n.node)
        if ref is not None:
            by_ns.setdefault(ref[0], []).append(ref[1])
    return by_ns


class HippoDecayPostprocessor(ValidatedInit, BaseNodePostprocessor):
    """Multiply each node's score by hippo's current strength of its message; keep the ``top_n`` best.

    Needs a hippo with decay (``Memory.strength(ids) -> {id: strength in [0, 1]}``, and ``Memory.reinforce(ids)``
    when ``reinforce=True``). Nodes without a score count as score 1; nodes of other sources keep their score; a
    node whose message the memory no longer has is dropped.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Any = Field(description="The hippo.Memory the nodes came from.")
    top_n: int | None = Field(default=None, description="Keep at most this many nodes (None: all).")
    reinforce: bool = Field(default=True, description="Reinforce the messages of the returned nodes.")

    def model_post_init(self, context: Any, /) -> None:
        check_memory(self.memory)
        check_positive_int(self.top_n, "top_n", allow_none=True)
        missing = [m for m in ("strength", *(("reinforce",) if self.reinforce else ())) if
                   not callable(getattr(self.memory, m, None))]
        if missing:
            raise InvalidInput(f"memory: this hippo version has no Memory.{'/'.join(missing)}(); "
                               "HippoDecayPostprocessor needs hippo's decay")

    @classmethod
    def class_name(cls) -> str:
        return "HippoDecayPostprocessor"

    def _reweight(self, nodes: list[NodeWithScore], strengths: dict[tuple[str, int], float]) -> list[NodeWithScore]:
        out = []
        for n in nodes:
            ref = hippo_ref(n.node)
            if ref is not None and ref not in strengths:
                continue  # deleted since it was retrieved: no strength, and its text must not come back
            weight = strengths[ref] if ref is not None else 1.0
            base = n.score if n.score is not None else 1.0
            out.append(NodeWithScore(node=n.node, score=float(base) * float(weight)))
        out.sort(key=lambda n: -(n.score or 0.0))
        return out[: self.top_n] if self.top_n is not None else out

    def _postprocess_nodes(self, nodes: list[NodeWithScore],
                           query_bundle: QueryBundle | None = None) -> list[NodeWithScore]:
        nodes = check_nodes(nodes)
        strengths: dict[tuple[str, int], float] = {}
        for ns, ids in _group(nodes).items():
            for mid, s in self.memory.using(ns).strength(ids).items():
                strengths[(ns, int(mid))] = s
        kept = self._reweight(nodes, strengths)
        if self.reinforce:
            for ns, ids in _group(kept).items():
                self.memory.using(ns).reinforce(ids)
        return kept

    async def _apostprocess_nodes(self, nodes: list[NodeWithScore],
                                  query_bundle: QueryBundle | None = None) -> list[NodeWithScore]:
        nodes = check_nodes(nodes)
        strengths: dict[tuple[str, int], float] = {}
        for ns, ids in _group(nodes).items():
            for mid, s in (await acall(self.memory.using(ns), "strength", ids)).items():
                strengths[(ns, int(mid))] = s
        kept = self._reweight(nodes, strengths)
        if self.reinforce:
            for ns, ids in _group(kept).items():
                await acall(self.memory.using(ns), "reinforce", ids)
        return kept


class HippoContextPostprocessor(ValidatedInit, BaseNodePostprocessor):
    """Replace each hippo node by the conversation around it, within ``budget_tokens``.

    ``expand="neighbours"`` reads ``before`` / ``after`` messages around the node's message
    (``Memory.read``); ``expand="episode"`` takes the whole episode (``Memory.episode``, from hippo's
    hierarchy). Windows never repeat a message already shown by a better-ranked node. When a window does not
    fit the budget the node is kept as its message alone if that fits, and dropped otherwise; a node whose message
    the memory no longer has is dropped. The budget counts the cl100k tokens of the text of every node this
    postprocessor builds, each line's ``[date] speaker:`` header and the line breaks included (``hippo.count_tokens``
    of ``node.get_content()``); nodes of other sources and hierarchy units pass through uncounted.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Any = Field(description="The hippo.Memory the nodes came from.")
    before: int = Field(default=2, description="Messages before the node's message.")
    after: int = Field(default=2, description="Messages after the node's message.")
    budget_tokens: int = Field(default=1000, description="Token budget of the text of the nodes it expands.")
    expand: Literal["neighbours", "episode"] = Field(default="neighbours")

    def model_post_init(self, context: Any, /) -> None:
        check_memory(self.memory)
        check_non_negative_int(self.before, "before")
        check_non_negative_int(self.after, "after")
        check_positive_int(self.budget_tokens, "budget_tokens")
        if self.expand not in ("neighbours", "episode"):
            raise InvalidInput(f"expand must be 'neighbours' or 'episode', got {self.expand!r}")
        if self.expand == "episode" and not callable(getattr(self.memory, "episode", None)):
            raise InvalidInput("expand='episode' needs a hippo version with Memory.episode(message_id)")
        # without the hierarchy Memory.episode raises NotFound for every message, which reads as "deleted since it
        # was retrieved" and would drop every node
        hierarchy = getattr(getattr(self.memory, "config", None), "hierarchy", None)
        if self.expand == "episode" and not getattr(hierarchy, "enabled", True):
            raise InvalidInput("expand='episode' needs the memory's hierarchy (config.hierarchy.enabled=True); "
                               "use expand='neighbours'")

    @classmethod
    def class_name(cls) -> str:
        return "HippoContextPostprocessor"

    def _window_call(self, mid: int) -> tuple[str, tuple, dict]:
        if self.expand == "episode":
            return "episode", (mid,), {}
        return "read", (mid,), {"before": self.before, "after": self.after}

    def _assemble(self, nodes: list[NodeWithScore], windows: list[list[Any] | None]) -> list[NodeWithScore]:
        out: list[NodeWithScore] = []
        shown: set[tuple[str, int]] = set()
        used = 0
        for n, window in zip(nodes, windows, strict=True):
            ref = hippo_ref(n.node)
            if ref is None or window is None:
                out.append(n)
                continue
            fresh = [i for i in window if (i.namespace, i.id) not in shown]
            if not any(i.id == ref[1] for i in fresh):
                continue  # already shown inside a better-ranked window
            # the budget counts the text the node will carry (each line's "[date] speaker:" header and the line
            # breaks too), as hippo counts tokens, not only the messages' own tokens
            text = "\n".join(render_item(i) for i in fresh)
            size = count_tokens(text)
            if used + size > self.budget_tokens:
                fresh = [i for i in fresh if i.id == ref[1]]
                text = "\n".join(render_item(i) for i in fresh)
                size = count_tokens(text)
                if used + size > self.budget_tokens:
                    continue
            used += size
            shown.update((i.namespace, i.id) for i in fresh)
            center = next(i for i in fresh if i.id == ref[1])
            md = dict(n.node.metadata) if n.node.metadata else item_metadata(center)
            md["message_ids"] = [i.id for i in fresh]
            node = TextNode(
                id_=n.node.node_id,
                text=text,
                metadata=md,
                excluded_llm_metadata_keys=list(HIDDEN_KEYS),
                excluded_embed_metadata_keys=list(HIDDEN_KEYS),
            )
            out.append(NodeWithScore(node=node, score=n.score))
        return out

    def _postprocess_nodes(self, nodes: list[NodeWithScore],
                           query_bundle: QueryBundle | None = None) -> list[NodeWithScore]:
        nodes = check_nodes(nodes)
        windows = []
        for n in nodes:
            ref = hippo_ref(n.node)
            if ref is None:
                windows.append(None)
                continue
            name, args, kwargs = self._window_call(ref[1])
            try:
                windows.append(getattr(self.memory.using(ref[0]), name)(*args, **kwargs))
            except NotFound:  # deleted since it was retrieved: an empty window drops the node
                windows.append([])
        return self._assemble(nodes, windows)

    async def _apostprocess_nodes(self, nodes: list[NodeWithScore],
                                  query_bundle: QueryBundle | None = None) -> list[NodeWithScore]:
        nodes = check_nodes(nodes)
        windows = []
        for n in nodes:
            ref = hippo_ref(n.node)
            if ref is None:
                windows.append(None)
                continue
            name, args, kwargs = self._window_call(ref[1])
            try:
                windows.append(await acall(self.memory.using(ref[0]), name, *args, **kwargs))
            except NotFound:
                windows.append([])
        return self._assemble(nodes, windows)


__all__ = ["HippoDecayPostprocessor", "HippoContextPostprocessor"]

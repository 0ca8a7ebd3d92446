"""``HippoRetriever``: a LlamaIndex ``BaseRetriever`` over a ``hippo.Memory``."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any, Literal

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.core.vector_stores.types import FilterCondition, FilterOperator, MetadataFilters

from hippo import (MAX_QUERY_CHARS, HippoError, InvalidInput, LLMError, fitting_units, jsonable, storable,
                   time_zone)
from llamaindex_hippo._common import (
    DEFAULT_BUDGET_TOKENS,
    HIDDEN_KEYS,
    acall,
    check_filter,
    check_memory,
    check_namespace,
    check_positive_int,
    item_metadata,
    node_id,
    with_embed_model,
)

_OPERATORS = {
    FilterOperator.EQ: "$eq",
    FilterOperator.NE: "$ne",
    FilterOperator.GT: "$gt",
    FilterOperator.GTE: "$gte",
    FilterOperator.LT: "$lt",
    FilterOperator.LTE: "$lte",
    FilterOperator.IN: "$in",
    FilterOperator.NIN: "$nin",
}


def to_hippo_filter(filters: MetadataFilters | dict[str, Any] | None) -> dict[str, Any] | None:
    """LlamaIndex ``MetadataFilters`` as a hippo filter dict, with the meaning LlamaIndex's own filter function
    (``build_metadata_filter_fn``) gives them: ``AND`` (every filter holds), ``OR`` (at least one), ``NOT`` (none
    holds), nested ``MetadataFilters`` at any depth, the operators ==, !=, >, >=, <, <=, in, nin and is_empty
    (the key is missing, null, "" or []); an empty list of filters holds for every message.

    A dict is taken to be a hippo filter already. The operators any, all, contains, text_match and
    text_match_insensitive raise InvalidInput, and so does a filter on ``namespace``, ``seq`` or ``level``, which
    hippo writes into each node but cannot filter messages by. Conditions of an AND on one key are merged
    (``{"n": {"$gt": 1, "$lt": 5}}``); one that repeats an operator of its key (``n > 5 AND n > 1``) goes into
    ``"$and"``, so every condition holds.
    """
    if filters is None or isinstance(filters, dict):
        return check_filter(filters, "filters")
    out = _translate(filters)
    return {} if out is None else out


#: node metadata keys hippo sets that are no field of a message filter (``id``, ``speaker``, ``role``,
#: ``session_id`` and ``timestamp`` are)
NODE_FIELDS = ("namespace", "seq", "level")

#: the fields of a message filter whose operands are times (a datetime, epoch seconds or ISO-8601 text)
TIME_FIELDS = ("timestamp", "created_at")

#: a filter no message satisfies (every message has an id): what NOT makes of a filter that always holds
_NEVER: dict[str, Any] = {"id": {"$exists": False}}


def _translate(filters: Any) -> dict[str, Any] | None:
    """The hippo filter of ``filters`` (a ``MetadataFilters``), None when it holds for every message."""
    if not isinstance(filters, MetadataFilters):
        raise InvalidInput("filters must be MetadataFilters, a hippo filter dict or None, "
                           f"got {type(filters).__name__}")
    condition = filters.condition if filters.condition is not None else FilterCondition.AND
    if condition not in (FilterCondition.AND, FilterCondition.OR, FilterCondition.NOT):
        raise InvalidInput(f"filters: unknown condition {condition!r}")
    simple: list[tuple[str, str, Any]] = []  # key, hippo operator, operand
    nested: list[dict[str, Any]] = []
    always = False  # a nested filter holding for every message
    for f in filters.filters:
        if isinstance(f, MetadataFilters):
            sub = _translate(f)
            if sub is None:
                always = True
            else:
                nested.append(sub)
            continue
        op = getattr(f, "operator", FilterOperator.EQ)
        if f.key in NODE_FIELDS:
            raise InvalidInput(f"filters: {f.key!r} is a field hippo writes into each node (item_metadata), not one "
                               "of a message: a filter on it would test the message's own metadata and silently "
                               "match nothing; a retriever reads the namespace it was made with")
        if op == FilterOperator.IS_EMPTY:  # as build_metadata_filter_fn: missing, None, "" or []
            # a time field holds a time or nothing (its operands must be times: "" and [] are refused)
            empty = [None] if f.key in TIME_FIELDS else [None, "", []]
            nested.append({"$or": [{f.key: {"$exists": False}}, {f.key: {"$in": empty}}]})
        elif op in _OPERATORS:
            simple.append((f.key, _OPERATORS[op], f.value))
        else:
            raise InvalidInput(f"filters: operator {op!r} on {f.key!r} is not supported; expected one of "
                               f"{[o.value for o in (*_OPERATORS, FilterOperator.IS_EMPTY)]}")
    if not simple and not nested:  # no filters (holds, as in LlamaIndex), or only ones that always hold
        return _NEVER if always and condition == FilterCondition.NOT else None
    if condition == FilterCondition.AND:
        return _all_of(simple, nested)
    parts = [{key: {op: value}} for key, op, value in simple] + nested
    if condition == FilterCondition.OR:
        return None if always else {"$or": parts}
    return _NEVER if always else {"$not": {"$or": parts}}  # NOT: none of the filters holds


def _all_of(simple: list[tuple[str, str, Any]], nested: list[dict[str, Any]]) -> dict[str, Any]:
    """Every condition and every nested filter holds: the conditions merged per key, an operator repeated on its key
    and the nested filters in ``"$and"``."""
    out: dict[str, Any] = {}
    rest: list[dict[str, Any]] = []
    for key, op, value in simple:
        if op in out.setdefault(key, {}):
            rest.append({key: {op: value}})
        else:
            out[key][op] = value
    rest.extend(nested)
    if rest:
        out["$and"] = rest
    return out


class HippoRetriever(BaseRetriever):
    """Retrieve hippo memories as LlamaIndex nodes; works inside ``RetrieverQueryEngine`` and chat engines.

    ``mode="search"`` returns the top ``similarity_top_k`` messages of ``Memory.search`` as
    ``NodeWithScore(TextNode)`` (score = hippo's fused score), with ``budget_tokens`` only as many of the best as
    fit it together (none when the best alone is larger); ``mode="recall"`` returns the messages
    ``Memory.recall`` put into its ``budget_tokens`` context, after the hierarchy units that fit in what the
    context leaves of the budget (``hippo.fitting_units``): the nodes together stay within it. Node metadata: ``speaker``,
    ``timestamp``, ``session_id`` (shown to the LLM) and ``id``, ``namespace``, ``seq``, ``level``, ``role``
    (hidden from the LLM and embeddings), plus the message's own metadata. Node ids are
    ``"hippo:<namespace>:<message id>"`` for messages and ``"hippo:<namespace>:<level>:<unit id>"`` for the
    hierarchy units of ``mode="recall"`` (``:`` and ``%`` in a namespace %-escaped), so hippo's postprocessors
    find every message node's memory and pass units through.

    ``filters`` takes LlamaIndex ``MetadataFilters`` (AND, OR, NOT and nested filters of ==, !=, >, >=, <, <=, in,
    nin, is_empty; see :func:`to_hippo_filter`) or a hippo filter.

    ``embed_model`` (a LlamaIndex ``BaseEmbedding``) becomes hippo's embedding channel, fused with its lexical
    and signature channels: the memory's own when it was opened with that model, else the same file opened a
    second time with it (``Memory.with_embedding``; ``close()`` closes that handle). An in-memory
    ``hippo.Memory(None)`` has to be created with ``embed=embed_model`` instead.

    The query is read as ``VectorIndexRetriever`` reads it: the lexical and signature channels search
    ``query_str``; the embedding channel searches ``QueryBundle.embedding`` when given, else the model's aggregate
    of the query embeddings of ``custom_embedding_strs`` (where HyDE puts its hypothetical answer), else the
    embedding of ``query_str``. Without an embedding channel only ``query_str`` is read.

    ``similarity_top_k``, ``budget_tokens``, ``filters``, ``mode`` and ``timezone`` may be set between queries (a
    server reusing one retriever per request): a value is checked as the constructor checks it and the next query
    reads it.

    A question's "yesterday" or "last week" counts from when it is asked: with ``timezone`` (the user's: an IANA name
    such as ``"America/New_York"``, an offset from UTC such as ``"+05:30"``, or a ``tzinfo``) now on its calendar, as
    a live chat engine asks; without it (the default) from when the latest message stored was said, as for a history
    read after the fact. ``Memory.search`` / ``recall`` take ``asked_at`` for any other time.
    """

    def __init__(
        self,
        memory: Any,
        *,
        namespace: str | None = None,
        similarity_top_k: int = 5,
        budget_tokens: int | None = None,
        filters: MetadataFilters | dict[str, Any] | None = None,
        mode: Literal["search", "recall"] = "search",
        embed_model: Any = None,
        timezone: Any = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        check_memory(memory)
        self.timezone = timezone
        self.namespace = check_namespace(namespace)
        self.similarity_top_k = similarity_top_k
        self.budget_tokens = budget_tokens
        self.filters = filters
        self.mode = mode
        self.embed_model = embed_model
        self.memory, self._owns_memory = with_embed_model(memory, embed_model)
        self._target = self.memory.using(namespace) if namespace is not None else self.memory
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    # -- settings a caller may change between queries (as ``VectorIndexRetriever.similarity_top_k``), checked as the
    # constructor checks them and read by the next query

    @property
    def similarity_top_k(self) -> int:
        return self._similarity_top_k

    @similarity_top_k.setter
    def similarity_top_k(self, value: int) -> None:
        self._similarity_top_k = check_positive_int(value, "similarity_top_k")

    @property
    def budget_tokens(self) -> int | None:
        return self._budget_tokens

    @budget_tokens.setter
    def budget_tokens(self, value: int | None) -> None:
        self._budget_tokens = check_positive_int(value, "budget_tokens", allow_none=True)

    @property
    def filters(self) -> MetadataFilters | dict[str, Any] | None:
        return self._filters

    @filters.setter
    def filters(self, value: MetadataFilters | dict[str, Any] | None) -> None:
        self._filter = to_hippo_filter(value)
        self._filters = value

    @property
    def mode(self) -> str:
        return self._mode

    @mode.setter
    def mode(self, value: str) -> None:
        if not (isinstance(value, str) and value in ("search", "recall")):
            raise InvalidInput(f"mode must be 'search' or 'recall', got {value!r}")
        self._mode = value

    @property
    def timezone(self) -> Any:
        return self._timezone

    @timezone.setter
    def timezone(self, value: Any) -> None:
        self._zone = time_zone(value, "timezone")
        self._timezone = value

    def close(self) -> None:
        """Close the memory handle this retriever opened for its ``embed_model`` (nothing otherwise)."""
        if self._owns_memory:
            self.memory.close()
            self._owns_memory = False

    # -- translation ---------------------------------------------------------------------------------------

    @staticmethod
    def _node(item: Any, *, level: str | None = None) -> TextNode:
        return TextNode(
            id_=node_id(item.namespace, item.id),
            text=item.text,
            metadata=item_metadata(item, level=level),
            excluded_llm_metadata_keys=list(HIDDEN_KEYS),
            excluded_embed_metadata_keys=list(HIDDEN_KEYS),
        )

    def _from_hits(self, hits: list[Any]) -> list[NodeWithScore]:
        out: list[NodeWithScore] = []
        used = 0
        for hit in hits:
            size = int(getattr(hit, "n_tokens", 0) or 0)
            if self.budget_tokens is not None and used + size > self.budget_tokens:  # the first hit too
                break
            used += size
            out.append(NodeWithScore(node=self._node(hit), score=float(hit.score)))
        return out

    def _from_recall(self, recall: Any) -> list[NodeWithScore]:
        out = []
        for unit in fitting_units(recall):  # unit texts are no part of the context: only in what it leaves
            md = {str(k): jsonable(v) for k, v in unit.items() if k != "text"}
            md.setdefault("level", "unit")
            md.setdefault("namespace", self._target.namespace)
            out.append(NodeWithScore(
                node=TextNode(id_=node_id(self._target.namespace, unit.get("id"), level=str(md["level"])),
                              text=str(unit.get("text", "")), metadata=md,
                              excluded_llm_metadata_keys=list(HIDDEN_KEYS),
                              excluded_embed_metadata_keys=list(HIDDEN_KEYS)),
                score=md.get("score") if isinstance(md.get("score"), (int, float)) else None))
        for item in recall.messages:
            node = self._node(item, level="message")
            if item.id in recall.repeats:  # the node stands for copies of its text: how many times it was written
                node.metadata["times"] = recall.repeats[item.id]
            out.append(NodeWithScore(node=node, score=None))
        return out

    # -- the embedding channel's query ---------------------------------------------------------------------

    def _embedding_strs(self, query_bundle: QueryBundle) -> list[str] | None:
        """The texts to embed for the embedding channel, when they differ from ``query_str`` (which hippo embeds
        itself): ``QueryBundle.custom_embedding_strs``, where HyDE and other transforms put a hypothetical answer
        while ``query_str`` stays the question. None without an embedding channel (hippo then searches the words of
        ``query_str`` alone, as LlamaIndex's text-search retrievers do) or without custom strings."""
        if self.memory.embedding is None or query_bundle.embedding is not None:
            return None
        strs = query_bundle.custom_embedding_strs
        return list(strs) if strs else None

    def _query_embedding(self, query_bundle: QueryBundle) -> Any:
        """The embedding channel's query vector as ``VectorIndexRetriever`` makes it: ``QueryBundle.embedding``
        when given, else the embed model's aggregate (mean) of the query embeddings of the custom strings; None
        when hippo should embed ``query_str`` (or has no embedding channel)."""
        if self.memory.embedding is None:
            return None
        if query_bundle.embedding is not None:
            return query_bundle.embedding
        strs = self._embedding_strs(query_bundle)
        if strs is None:
            return None
        model = self.memory.embedding  # the retriever's embed_model, or the memory's own
        try:
            if callable(getattr(model, "get_agg_embedding_from_queries", None)):
                return model.get_agg_embedding_from_queries(strs)
            return _mean(_query_vectors(model, strs))
        except HippoError:
            raise
        except Exception as exc:  # noqa: BLE001 - the user's model may fail in any way; callers see hippo's type
            raise LLMError(f"the embed model failed on custom_embedding_strs: {type(exc).__name__}: {exc}") from exc

    async def _aquery_embedding(self, query_bundle: QueryBundle) -> Any:
        strs = self._embedding_strs(query_bundle)
        model = self.memory.embedding  # the retriever's embed_model, or the memory's own
        if strs is None or not callable(getattr(model, "aget_agg_embedding_from_queries", None)):
            return await asyncio.to_thread(self._query_embedding, query_bundle)
        try:
            return await model.aget_agg_embedding_from_queries(strs)
        except HippoError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise LLMError(f"the embed model failed on custom_embedding_strs: {type(exc).__name__}: {exc}") from exc

    # -- BaseRetriever -------------------------------------------------------------------------------------

    @staticmethod
    def _check_query(value: Any) -> None:
        # BaseRetriever builds a pydantic event from the query before it reaches _retrieve: anything else than a
        # string or a QueryBundle failed there with pydantic's ValidationError, not hippo's error naming it
        if not isinstance(value, (str, QueryBundle)):
            raise InvalidInput(f"str_or_query_bundle must be a string or a QueryBundle, got {type(value).__name__}")

    def retrieve(self, str_or_query_bundle: Any) -> list[NodeWithScore]:
        self._check_query(str_or_query_bundle)
        return super().retrieve(str_or_query_bundle)

    async def aretrieve(self, str_or_query_bundle: Any) -> list[NodeWithScore]:
        self._check_query(str_or_query_bundle)
        return await super().aretrieve(str_or_query_bundle)

    @staticmethod
    def _asked(query_bundle: QueryBundle) -> str:
        """``query_str`` as hippo can ask it (:func:`hippo.storable`, the end of an over-long paste): any text, as
        LlamaIndex's retrievers take it; blank when nothing is left to ask."""
        return storable(query_bundle.query_str or "", -MAX_QUERY_CHARS)

    def _when(self) -> datetime | None:
        """When the question is asked: now on the calendar of ``timezone``, or None (as of the latest message)."""
        return datetime.now(self._zone) if self._zone is not None else None

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        query = self._asked(query_bundle)
        if not query.strip():
            return []  # nothing asked (a blank query, as a model may send it): nothing found
        vector = self._query_embedding(query_bundle)
        if self.mode == "recall":
            return self._from_recall(self._target.recall(
                query, budget_tokens=self.budget_tokens or DEFAULT_BUDGET_TOKENS, filter=self._filter,
                query_embedding=vector, asked_at=self._when()))
        return self._from_hits(self._target.search(query, k=self.similarity_top_k, filter=self._filter,
                                                   query_embedding=vector, asked_at=self._when()))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        query = self._asked(query_bundle)
        if not query.strip():
            return []
        vector = await self._aquery_embedding(query_bundle)
        if self.mode == "recall":
            recall = await acall(self._target, "recall", query,
                                 budget_tokens=self.budget_tokens or DEFAULT_BUDGET_TOKENS, filter=self._filter,
                                 query_embedding=vector, asked_at=self._when())
            return self._from_recall(recall)
        hits = await acall(self._target, "search", query, k=self.similarity_top_k, filter=self._filter,
                           query_embedding=vector, asked_at=self._when())
        return self._from_hits(hits)


def _query_vectors(model: Any, texts: list[str]) -> list[Any]:
    """Query embeddings of ``texts`` by an embedding that is not a LlamaIndex ``BaseEmbedding`` (a LangChain
    ``Embeddings``, or a function ``texts -> vectors``), as hippo embeds a query with it."""
    if callable(getattr(model, "embed_query", None)):
        return [model.embed_query(t) for t in texts]
    return list(model(texts))


def _mean(vectors: list[Any]) -> list[float]:
    """The component-wise mean of ``vectors`` (LlamaIndex's ``mean_agg``)."""
    return [sum(column) / len(vectors) for column in zip(*vectors, strict=True)]

__all__ = ["HippoRetriever", "to_hippo_filter"]

"""``HippoRetriever``: a LangChain ``BaseRetriever`` over a ``hippo.Memory``."""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig
from pydantic import ConfigDict, StrictInt, ValidationError

from hippo import InvalidInput, fitting_units, message_time, time_zone
from langchain_hippo._common import (
    DEFAULT_BUDGET_TOKENS,
    acall,
    check_filter,
    check_key,
    check_memory,
    check_namespace,
    check_positive_int,
    item_metadata,
    query_text,
    raise_invalid_from_validation,
    run_time_zone,
    unit_metadata,
)
from langchain_hippo._messages import now_in

_MODES = ("search", "recall")
#: the keyword a run's own time zone (its value, where it came from) reaches ``_get_relevant_documents`` by
_RUN_ZONE = "_hippo_run_timezone"


class HippoRetriever(BaseRetriever):
    """Retrieve memories from a ``hippo.Memory`` as LangChain ``Document`` objects.

    ``mode="search"`` (default) returns the top ``k`` messages of ``Memory.search``; each ``Document`` has the
    message text as ``page_content`` and metadata ``id``, ``speaker``, ``role``, ``timestamp`` (ISO-8601),
    ``session_id``, ``namespace``, ``seq``, ``score`` and ``level`` plus the message's own metadata. When
    ``budget_tokens`` is set, results stop before their summed token count would exceed it (none when the best
    message alone is larger, as ``Memory.recall`` gives an empty context for a budget too small for any message).

    ``mode="recall"`` returns the verbatim messages ``Memory.recall`` put into its budgeted context, in context
    order, after the hierarchical units (episodes, semantics, themes; ``level`` says which) that fit in what the
    context leaves of the budget (``hippo.fitting_units``): the documents together stay within ``budget_tokens``.
    ``k`` does not apply there; the budget does.

    When the question is asked (its "yesterday", "last week" count from it): without ``timezone``, as of the latest
    message stored (a history read after the fact); with ``timezone`` (the user's: an IANA name such as
    ``"America/New_York"``, an offset from UTC such as ``"+05:30"``, or a ``tzinfo``), now on its calendar (a live
    conversation, whose next turn may come days after the last one stored). A call's own ``asked_at`` (a datetime,
    epoch seconds or ISO-8601 text; one that carries no calendar but UTC's is put on ``timezone``'s) takes precedence.

    One retriever may serve users in several zones (a chain or a retriever tool in a server): a run's own zone, under
    ``timezone_key`` (``"timezone"``) in its ``config["configurable"]`` or its LangGraph runtime context, takes
    precedence over ``timezone``, as ``HippoMemoryMiddleware`` reads it: ``chain.invoke("q", {"configurable":
    {"timezone": "America/New_York"}})``, ``agent.invoke(..., context={"timezone": ...})``. A call's ``timezone``
    keyword comes first.

    ``k``, ``budget_tokens``, ``filter``, ``mode`` and ``timezone`` are fields and can be overridden per call, and
    ``asked_at`` given: ``retriever.invoke("query", k=3, asked_at="2025-04-15T09:00:00-04:00")``. The query is any
    text, asked as hippo can take it (``hippo.storable``); one with nothing left to ask finds nothing.

    Example:
        >>> retriever = HippoRetriever(memory=hippo.Memory(None), k=4)
        >>> docs = retriever.invoke("where did Ann travel?")
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Any
    """The ``hippo.Memory`` to read from."""
    namespace: str | None = None
    """Read this namespace of ``memory`` instead of the memory's own."""
    k: StrictInt = 4
    """Number of messages returned in ``search`` mode."""
    budget_tokens: StrictInt | None = None
    """Token budget: caps the summed size of ``search`` results; the recall budget in ``recall`` mode
    (default 2000)."""
    filter: dict[str, Any] | None = None
    """hippo filter, e.g. ``{"speaker": "Ann", "timestamp": {"$gte": "2024-01-01"}}``."""
    mode: Literal["search", "recall"] = "search"
    timezone: Any = None
    """The user's time zone: questions are asked now on its calendar (None: as of the latest message stored)."""
    timezone_key: str = "timezone"
    """The name a run's own time zone is looked up by in its LangGraph runtime context and ``configurable``."""

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise_invalid_from_validation(type(self).__name__, exc)

    def model_post_init(self, context: Any, /) -> None:
        check_memory(self.memory)
        check_namespace(self.namespace)
        self._check(self.k, self.budget_tokens, self.filter, self.mode)
        time_zone(self.timezone, "timezone")
        check_key(self.timezone_key, "timezone_key")

    # -- argument handling ---------------------------------------------------------------------------------

    @staticmethod
    def _check(k: Any, budget_tokens: Any, filter: Any, mode: Any) -> None:
        check_positive_int(k, "k")
        check_positive_int(budget_tokens, "budget_tokens", allow_none=True)
        check_filter(filter)
        if mode not in _MODES:
            raise InvalidInput(f"mode must be one of {_MODES}, got {mode!r}")

    def _resolve(self, query: str, kwargs: dict[str, Any]) -> tuple[str, int, int | None, dict | None, str, Any]:
        """The question as hippo can ask it (:func:`query_text`: any text, as the reference retrievers take it; blank
        when nothing is left to ask), the call's arguments and when the question is asked (None: as of the latest
        message stored)."""
        kwargs.pop("verbose", None)  # BaseRetriever.invoke reads it but leaves it in the kwargs
        run_zone = kwargs.pop(_RUN_ZONE, None)
        unknown = set(kwargs) - {"k", "budget_tokens", "filter", "mode", "timezone", "asked_at"}
        if unknown:
            raise InvalidInput(f"unexpected keyword argument(s) {sorted(unknown)}; "
                               "expected k, budget_tokens, filter, mode, timezone or asked_at")
        if not isinstance(query, str):
            raise InvalidInput(f"query must be a string, got {type(query).__name__}")
        k = kwargs.get("k", self.k)
        budget = kwargs.get("budget_tokens", self.budget_tokens)
        flt = kwargs.get("filter", self.filter)
        mode = kwargs.get("mode", self.mode)
        self._check(k, budget, flt, mode)
        if "timezone" in kwargs:
            zone = time_zone(kwargs["timezone"], "timezone")
        elif run_zone is not None:
            zone = time_zone(*run_zone)
        else:
            zone = time_zone(self.timezone, "timezone")
        return query_text(query), k, budget, flt, mode, self._asked(kwargs.get("asked_at"), zone)

    def _asked(self, asked_at: Any, zone: Any) -> Any:
        """When the question is asked: ``asked_at`` as given (a time that carries no calendar but UTC's put on
        ``zone``'s; ``InvalidInput`` naming ``asked_at`` for one hippo cannot read), else now on ``zone``'s calendar,
        else None (as of the latest message stored)."""
        if asked_at is not None:
            return message_time(asked_at, "asked_at", getattr(self.memory, "config", None), zone)
        return now_in(zone) if zone is not None else None

    def _with_run_zone(self, config: RunnableConfig | None, kwargs: dict[str, Any]) -> dict[str, Any]:
        """``kwargs`` with the run's own time zone and where it came from (:func:`run_time_zone`), when the run gives
        one and the call gives no ``timezone``."""
        if "timezone" in kwargs:
            return kwargs
        given = run_time_zone(config, self.timezone_key)
        return kwargs if given is None else {**kwargs, _RUN_ZONE: given}

    def invoke(self, input: str, config: RunnableConfig | None = None, **kwargs: Any) -> list[Document]:
        return super().invoke(input, config, **self._with_run_zone(config, kwargs))

    async def ainvoke(self, input: str, config: RunnableConfig | None = None, **kwargs: Any) -> list[Document]:
        return await super().ainvoke(input, config, **self._with_run_zone(config, kwargs))

    def _target(self) -> Any:
        return self.memory.using(self.namespace) if self.namespace is not None else self.memory

    # -- translation ---------------------------------------------------------------------------------------

    @staticmethod
    def _hits_to_documents(hits: list[Any], budget: int | None) -> list[Document]:
        docs: list[Document] = []
        used = 0
        for hit in hits:
            size = int(getattr(hit, "n_tokens", 0) or 0)
            if budget is not None and used + size > budget:  # the first hit too: a budget is a bound
                break
            used += size
            docs.append(Document(page_content=hit.text, metadata=item_metadata(hit), id=str(hit.id)))
        return docs

    @staticmethod
    def _recall_to_documents(recall: Any, namespace: str) -> list[Document]:
        docs = [
            Document(page_content=str(unit.get("text", "")), metadata=unit_metadata(unit, namespace=namespace))
            for unit in fitting_units(recall)  # unit texts are no part of the context: only in what it leaves
        ]
        for item in recall.messages:
            md = item_metadata(item, level="message")
            if item.id in recall.repeats:  # the document stands for copies of its text: how many times it was written
                md["times"] = recall.repeats[item.id]
            docs.append(Document(page_content=item.text, metadata=md, id=str(item.id)))
        return docs

    # -- BaseRetriever -------------------------------------------------------------------------------------

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        query, k, budget, flt, mode, asked = self._resolve(query, kwargs)
        if not query.strip():
            return []  # nothing asked (a blank query, as a model may send it): nothing found, and the agent goes on
        target = self._target()
        if mode == "recall":
            recall = target.recall(query, budget_tokens=budget or DEFAULT_BUDGET_TOKENS, filter=flt, asked_at=asked)
            return self._recall_to_documents(recall, target.namespace)
        return self._hits_to_documents(target.search(query, k=k, filter=flt, asked_at=asked), budget)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        query, k, budget, flt, mode, asked = self._resolve(query, kwargs)
        if not query.strip():
            return []
        target = self._target()
        if mode == "recall":
            recall = await acall(target, "recall", query, budget_tokens=budget or DEFAULT_BUDGET_TOKENS,
                                 filter=flt, asked_at=asked)
            return self._recall_to_documents(recall, target.namespace)
        hits = await acall(target, "search", query, k=k, filter=flt, asked_at=asked)
        return self._hits_to_documents(hits, budget)


__all__ = ["HippoRetriever"]

"""``GatedMem0`` / ``AsyncGatedMem0``: mem0's own surface, with ``search`` gated and judged."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Unpack

from ...policy import Recall
from .._foreign import NO_BUDGET, FrameworkGate, GateKeywords, at_most, kept_in_order, scoped
from .searcher import Mem0Searcher, _Ask, _check_ids, _check_memory, _is_async, _Scope

#: policy options the gate sets itself (mem0's call says how many memories come back, and the
#: caller reads them all: no context budget)
_GATE_OWNS: dict[str, Any] = {"top_k": 10, "gated_top_k": None, **NO_BUDGET}

# ---- the drop-in ---------------------------------------------------------------------------------


class _Gate(FrameworkGate):
    """What :class:`GatedMem0` and :class:`AsyncGatedMem0` share: the policy and the scoping."""

    _what = "GatedMem0"
    #: whether the memory this gate wraps is async (``AsyncMemory``, ``AsyncMemoryClient``)
    _async = False

    _owned = _GATE_OWNS
    _why = ": mem0's own top_k says how many memories are judged, and every kept one comes back"

    def __init__(
        self, memory: Any, *, actor_field: str = "user_id", local: bool = False, **gate: Unpack[GateKeywords]
    ) -> None:
        _check_memory(memory, self._what)
        if _is_async(memory) != self._async:
            wants, found, other = ("an async", "synchronous", "GatedMem0")
            if not self._async:
                wants, found, other = ("a synchronous", "async", "AsyncGatedMem0")
            raise TypeError(
                f"{self._what} wraps {wants} mem0 memory; {type(memory).__name__} is {found}: use {other}"
            )
        self._configure(**gate)
        self.memory = memory
        self._searcher = Mem0Searcher(
            memory, embedder=self._embedder, actor_field=actor_field, local=local, stats=self.stats
        )
        # one namespace, named after the memory's type: what traces and the decision log show
        self.policy = self._policy_over(self._searcher, [type(memory).__name__])

    @property
    def searcher(self) -> Mem0Searcher:
        """The seam the policy searches mem0 through."""
        return self._searcher

    def __getattr__(self, name: str) -> Any:
        # only called for names this object lacks: get, update, history, delete_all, reset, ...
        if name in ("memory", "policy", "_searcher", "stats"):
            raise AttributeError(name)
        return getattr(self.memory, name)

    def _ask(self, query: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> _Ask | None:
        """The call to gate, or None when it goes straight to mem0 (transparent, or a query or
        ``top_k`` mem0 itself will refuse or answer with nothing)."""
        if self.policy is None or not isinstance(query, str) or not query.strip():
            return None
        _check_ids(kwargs)
        options = args[0] if args else kwargs.get("options")  # the platform's SearchMemoryOptions
        filters = kwargs.get("filters")
        if filters is None and options is not None:
            filters = getattr(options, "filters", None)
        top_k = self._top_k(args, kwargs)
        if top_k is not None and (not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1):
            return None
        return _Ask(query, args, dict(kwargs), _Scope.of(filters, self._searcher.actor_field))

    @staticmethod
    def _top_k(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
        if "top_k" in kwargs:
            return kwargs["top_k"]
        options = args[0] if args else kwargs.get("options")
        return getattr(options, "top_k", None) if options is not None else None

    def _turn(self, ask: _Ask) -> dict[str, Any]:
        top_k = self._top_k(ask.args, ask.kwargs)
        session = ask.scope.ids.get("run_id") if ask.scope.actor_key != "run_id" else None
        return {
            "actor_id": ask.scope.actor,
            "session_id": session,
            "top_k": top_k,
            "max_records": at_most(self.options.limits.max_records, top_k),
        }

    def _answer(self, recall: Recall, ask: _Ask) -> Any:
        self.last_recall = recall
        kept = kept_in_order(recall, ask.found)
        response = ask.response
        if isinstance(response, Mapping):
            return {**response, "results": kept}
        if isinstance(response, list):
            return kept
        return {"results": kept}  # the gate closed (mem0 not called) or mem0 failed


class GatedMem0(_Gate):
    """mem0's ``Memory`` / ``MemoryClient`` with a gate and a judge in front of ``search``.

    The keywords every gate takes (:class:`~recallwise.integrations._foreign.GateKeywords`):
    ``decider``, ``options``, ``embedder`` (default: the memory's :class:`RecallwiseEmbedding`
    when it has one, else the offline MiniLM), ``stats``, ``log``. At most
    ``min(options.limits.max_records, top_k)`` memories come back; the gate sets how deep it
    searches (mem0's ``top_k``) and the context budget itself. Its own:

    * ``actor_field`` -- which of the filter's ids is the actor decisions are counted and cached
      for when it names several (default ``"user_id"``);
    * ``local`` -- True when mem0 answers in-process in microseconds (no deadline thread).
    """

    def search(self, query: Any, *args: Any, **kwargs: Any) -> Any:
        """mem0's ``search``, gated and judged: ``{"results": [the kept items]}`` (see the module)."""
        ask = self._ask(query, args, kwargs)
        if ask is None:
            return self.memory.search(query, *args, **kwargs)
        assert self.policy is not None
        recall = self.policy.recall(query, extensions=scoped(self._searcher, ask), **self._turn(ask))
        return self._answer(recall, ask)

    def add(self, *args: Any, **kwargs: Any) -> Any:
        """mem0's ``add``, unchanged."""
        return self.memory.add(*args, **kwargs)

    def get_all(self, *args: Any, **kwargs: Any) -> Any:
        """mem0's ``get_all``, unchanged (a listing is never gated)."""
        return self.memory.get_all(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        """mem0's ``delete``, unchanged."""
        return self.memory.delete(*args, **kwargs)


class AsyncGatedMem0(_Gate):
    """:class:`GatedMem0` for mem0's ``AsyncMemory`` / ``AsyncMemoryClient``: the same keyword
    arguments; ``await memory.search(...)`` gates and judges, everything else is awaited as is."""

    _what = "AsyncGatedMem0"
    _async = True

    async def search(self, query: Any, *args: Any, **kwargs: Any) -> Any:
        """mem0's ``search``, gated and judged (see :meth:`GatedMem0.search`)."""
        ask = self._ask(query, args, kwargs)
        if ask is None:
            return await self.memory.search(query, *args, **kwargs)
        assert self.policy is not None
        recall = await self.policy.arecall(query, extensions=scoped(self._searcher, ask), **self._turn(ask))
        return self._answer(recall, ask)

    async def add(self, *args: Any, **kwargs: Any) -> Any:
        """mem0's ``add``, unchanged."""
        return await self.memory.add(*args, **kwargs)

    async def get_all(self, *args: Any, **kwargs: Any) -> Any:
        """mem0's ``get_all``, unchanged (a listing is never gated)."""
        return await self.memory.get_all(*args, **kwargs)

    async def delete(self, *args: Any, **kwargs: Any) -> Any:
        """mem0's ``delete``, unchanged."""
        return await self.memory.delete(*args, **kwargs)

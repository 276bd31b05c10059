"""``GatedMem0`` / ``AsyncGatedMem0``: mem0's own surface, with ``search`` gated and judged."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...deciders import Decider, default_decider
from ...embeddings import Embedder
from ...policy import Recall, RecallOptions, RecallPolicy, RecallStats
from .._foreign import NO_BUDGET, Keep, at_most, foreign_policy, gate_options, kept_in_order, scoped
from .searcher import Mem0Searcher, _Ask, _check_ids, _check_memory, _is_async, _Scope

_DEFAULT: Any = object()

#: policy options the gate sets itself (mem0's call says how many memories come back, and the
#: caller reads them all: no context budget)
_GATE_OWNS: dict[str, Any] = {"top_k": 10, "gated_top_k": None, **NO_BUDGET}

# ---- the drop-in ---------------------------------------------------------------------------------


class _Gate:
    """What :class:`GatedMem0` and :class:`AsyncGatedMem0` share: the policy and the scoping."""

    _what = "GatedMem0"

    def __init__(
        self,
        memory: Any,
        *,
        decider: Decider | Any | None = _DEFAULT,
        options: RecallOptions | None = None,
        keep: Keep | None = None,
        max_records: int | None = None,
        thresholds: Mapping[str, float] | None = None,
        embedder: Embedder | None = None,
        actor_field: str = "user_id",
        local: bool = False,
        stats: RecallStats | None = None,
        log: Any = None,
        **policy_options: Any,
    ) -> None:
        _check_memory(memory, self._what)
        #: what the gate's policy runs with (``options`` and the shorthand keywords)
        self.options = gate_options(
            self._what,
            options,
            given={"keep": keep, "max_records": max_records, **policy_options},
            owned=_GATE_OWNS,
            thresholds=thresholds,
            why=": mem0's own top_k says how many memories are judged, and every kept one comes back",
            stacklevel=4,
        )
        self.memory = memory
        self.decider: Decider | None = default_decider() if decider is _DEFAULT else decider
        self.max_records = self.options.limits.max_records
        self.last_recall: Recall | None = None
        self._stats = stats if stats is not None else RecallStats()
        self._searcher = Mem0Searcher(
            memory, embedder=embedder, actor_field=actor_field, local=local, stats=self._stats
        )
        #: the policy deciding the gated searches (None when ``decider=None``: transparent)
        self.policy: RecallPolicy | None = None
        if self.decider is not None:
            # one namespace, named after the memory's type: what traces and the decision log show
            self.policy = foreign_policy(
                self._searcher,
                self.decider,
                type(memory).__name__,
                options=self.options,
                stats=self._stats,
                log=log,
            )
        else:
            self._stats.decider = None

    @property
    def stats(self) -> RecallStats:
        """Counters of the gated searches; ``.report()`` puts errors first."""
        return self._stats

    @property
    def searcher(self) -> Mem0Searcher:
        """The seam the policy searches mem0 through."""
        return self._searcher

    def __getattr__(self, name: str) -> Any:
        # only called for names this object lacks: get, update, history, delete_all, reset, ...
        if name in ("memory", "policy", "_searcher", "_stats"):
            raise AttributeError(name)
        return getattr(self.memory, name)

    def close(self) -> None:
        """Release the gate's worker threads (the memory is the caller's)."""
        if self.policy is not None:
            self.policy.close()

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
            "max_records": at_most(self.max_records, top_k),
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

    Keyword arguments:

    * ``decider`` -- the decision backend; left out = the offline embedded one; ``None`` =
      transparent (every call goes straight to mem0);
    * ``options`` -- a :class:`~recallwise.RecallOptions`, as a policy takes (thresholds, keep
      rule, timeouts, ...); ``keep``, ``max_records`` and any other flat option name are
      shorthand for its fields. At most ``min(max_records, top_k)`` memories come back; the
      gate sets how deep it searches (mem0's ``top_k``) and the context budget itself;
    * ``thresholds`` -- deprecated: ``options=RecallOptions(thresholds=ThresholdOptions(...))``;
    * ``embedder`` -- recallwise's embedder for the query and the memories' text (default: the
      memory's :class:`RecallwiseEmbedding` when it has one, else the offline MiniLM);
    * ``actor_field`` -- which of the filter's ids is the actor decisions are counted and cached
      for when it names several (default ``"user_id"``);
    * ``local`` -- True when mem0 answers in-process in microseconds (no deadline thread);
    * ``stats``, ``log`` -- a :class:`~recallwise.RecallStats` to count into, the opt-in
      decision log (a path), as ``RecallPolicy(log=...)``;

    :attr:`last_recall` holds the most recent gated decision (trace included).
    """

    def __init__(self, memory: Any, **kwargs: Any) -> None:
        if _is_async(memory):
            raise TypeError(
                f"GatedMem0 wraps a synchronous mem0 memory; {type(memory).__name__} is async: "
                "use AsyncGatedMem0"
            )
        super().__init__(memory, **kwargs)

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

    def __init__(self, memory: Any, **kwargs: Any) -> None:
        _check_memory(memory, self._what)
        if not _is_async(memory):
            raise TypeError(
                f"AsyncGatedMem0 wraps an async mem0 memory; {type(memory).__name__} is synchronous: "
                "use GatedMem0"
            )
        super().__init__(memory, **kwargs)

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

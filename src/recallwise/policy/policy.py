"""RecallPolicy: conducts one turn through the stages, gate -> route -> search -> judge ->
(conversation re-scoring) -> keep -> pack."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ..deciders import BaseDecider, Decider, as_decider, default_decider
from ..deciders.base import call_if_present
from ..deciders.questions import Question
from ..english import english_dictionary
from ..errors import UsageError, error_kind
from ..records import SearchHit, resolve_namespace
from ..stores.base import Searcher
from . import stages
from .breaker import CircuitBreaker
from .cache import DecisionCache
from .config import ConfigPath, config_from_env, configured_decider, read_config
from .follow_up import (
    FollowUpHead,
    FollowUpMemory,
    is_social,
    read_follow_up_head,
    shipped_follow_up_head,
)
from .guarded import Guard, GuardedDecider, GuardedSearcher, _Executor
from .log import DecisionLog, open_log
from .namespaces import DEFAULT_NAMESPACES, namespace_templates
from .options import RecallOptions, check_option, with_shorthand
from .stats import RecallStats
from .telemetry import Telemetry
from .thresholds import Thresholds
from .trace import Trace
from .turn import KeptRecord, Recall, Turn, TurnRequest, message_text
from .wording import FOLLOW_UP, GATE, ROUTE, follow_up_question, gate_question, route_question

__all__ = ["KeptRecord", "Recall", "RecallOptions", "RecallPolicy", "message_text"]

_DEFAULT: Any = object()
#: the namespaces of a :meth:`RecallPolicy.judge` turn: none (it searches nothing; a caller's empty
#: list is still refused by the namespace check)
_NO_SEARCH: Any = object()


class RecallPolicy:
    """Decides, per user turn, whether to retrieve, where, and which records to inject.

    ``searcher`` is any :class:`~recallwise.stores.Searcher` (every recallwise store is one).
    ``decider=None`` is the stock behaviour exactly (the control arm): always retrieve,
    ``top_k`` per namespace, keep every record scoring at least ``relevance_score``. Leaving
    ``decider`` out uses the offline embedded decider.

    ``namespaces`` are templates (``"/facts/{actorId}"``); pass a dict of template ->
    description to let the decider route between them.

    With the embedded decider, each namespace is searched 30 deep (``gated_top_k``) and the
    judge chooses. For episodic memories (``**EPISODIC_OPTIONS``, off by default), the judge's
    answers are re-scored by conversation session (``conversation_rescore``) and the count kept
    adapts to how clearly the best records stand out (``adaptive_budget``, at most 5); the
    trace's notes say what both did. All three were fitted on LoCoMo dev.

    Options are one :class:`RecallOptions` (``options=``, nested by stage; ``policy.options`` reads
    them back). Flat keywords (``top_k=5, gate_threshold=0.6``) are shorthand for one of its fields
    each, applied on top of ``options`` (:data:`~recallwise.policy.options.FLAT_NAMES`). With an
    OpenTelemetry SDK configured, each turn is a ``recallwise.recall`` span and the counters are
    metrics (:mod:`recallwise.policy.telemetry`); ``trace_content=True`` adds the message text. A remote
    decider or store (``local = False``) is called under ``decider_timeout_s`` /
    ``store_timeout_s``; after ``breaker_threshold`` consecutive failing calls its circuit
    opens and it is not called for ``breaker_cooldown_s`` (a decider; the turn fails open) or
    ``store_breaker_cooldown_s`` (a store; the turn injects nothing), and the trace and ``stats``
    say so.
    """

    def __init__(
        self,
        store: Searcher,
        decider: Decider | BaseDecider | Any | None = _DEFAULT,
        namespaces: str | Sequence[str] | Mapping[str, str] = DEFAULT_NAMESPACES,
        *,
        options: RecallOptions | None = None,
        stats: RecallStats | None = None,
        log: DecisionLog | str | os.PathLike[str] | None = None,
        trace_content: bool | None = None,
        follow_up_head: FollowUpHead | str | os.PathLike[str] | None = _DEFAULT,
        _config: Any = None,
        **shorthand: Any,
    ) -> None:
        self.options = with_shorthand(options, shorthand)
        self.store = store
        chosen = default_decider() if decider is _DEFAULT else decider
        self.decider: BaseDecider | None = None if chosen is None else as_decider(chosen)
        configs = [_config, config_from_env() if self.decider is not None else None]
        if self.decider is not None:
            # learned heads a fitted config names replace the shipped ones (policy.config)
            self.decider = configured_decider(self.decider, configs)
            without_table = getattr(self.decider, "without_domain_table", None)
            if not self.options.keep.judge_domains and callable(without_table):
                self.decider = without_table()  # episodic memories: the embedded judge's option
        heads_in_use = getattr(self.decider, "heads_in_use", None)
        #: the learned heads answering this policy's gate, judge and follow-ups: role -> where they
        #: came from
        self.heads: dict[str, str] = heads_in_use() if callable(heads_in_use) else {}
        #: the head deciding follow-ups on the pair (policy/follow_up.py), None where it does not
        #: apply (another backend, or an embedding space it has no weights for)
        self.follow_up_head = self._follow_up_head(follow_up_head, store)
        if self.follow_up_head is not None:
            self.heads["follow_up"] = self.follow_up_head.describe()
        self.namespaces = namespace_templates(namespaces, "namespaces")
        self.descriptions: dict[str, str] = (
            {k: v for k, v in namespaces.items() if v} if isinstance(namespaces, Mapping) else {}
        )
        self.stats = stats or RecallStats()
        backend = self.decider.name if self.decider is not None else None
        self.stats.decider = backend
        self.stats.heads.update(self.heads)
        head_thresholds = getattr(self.decider, "head_thresholds", None)
        measured = dict(head_thresholds()) if callable(head_thresholds) else {}
        if self.follow_up_head is not None and self.follow_up_head.threshold is not None:
            measured["follow_up"] = self.follow_up_head.threshold
        resolved = Thresholds.resolve(backend, self.options.thresholds.given(), configs, measured or None)
        self.thresholds: dict[str, float] = resolved.values
        #: where each threshold came from: "argument", "config PATH" or "default"
        self.threshold_sources: dict[str, str] = resolved.sources
        self.stats.unmeasured_thresholds.extend(resolved.unmeasured)
        #: records searched per namespace each turn (the gated arm: ``SearchOptions.gated_top_k``)
        self.search_depth = self.options.search.depth(backend)
        self._executor = _Executor()
        o = self.options.reliability
        self.breaker = CircuitBreaker(o.breaker_threshold, o.breaker_cooldown_s)
        # The same rule for a remote store: a dead database would otherwise cost every turn
        # ``store_timeout_s`` while its connection pool retries (a shorter cool-down: see
        # ReliabilityOptions).
        self.store_breaker = CircuitBreaker(o.breaker_threshold, o.store_breaker_cooldown_s)
        self.searcher = GuardedSearcher(
            store,
            Guard(
                "store",
                name=str(getattr(store, "url", type(store).__name__)),
                local=bool(store.local),
                timeout_s=o.store_timeout_s,
                breaker=self.store_breaker,
                stats=self.stats,
                executor=self._executor,
            ),
        )
        self.guarded_decider: GuardedDecider | None = None
        if self.decider is not None:
            self.guarded_decider = GuardedDecider(
                self.decider,
                Guard(
                    "decider",
                    name=self.decider.name,
                    local=self.decider.capabilities.local,
                    timeout_s=o.decider_timeout_s,
                    breaker=self.breaker,
                    stats=self.stats,
                    executor=self._executor,
                ),
            )
        #: spans and metrics for OpenTelemetry (a no-op unless the application configured an SDK);
        #: ``trace_content`` (or RECALLWISE_TRACE_CONTENT=1) adds the message and kept record ids
        self.telemetry = Telemetry(self.stats, decider=backend, trace_content=trace_content)
        #: the opt-in decision log (``log=`` or ``RECALLWISE_LOG``); None when off
        self.log = open_log(log)
        self._owns_log = self.log is not None and not isinstance(log, DecisionLog)
        # Repeated messages within a session ("ok", "thanks", a retried turn) reuse the query
        # embedding and the gate's answers: bounded LRU, counted in stats.cache_hits/misses.
        self._cache = DecisionCache(self.options.cache_size, self.stats)
        # "continue" after a turn that retrieved retrieves too (policy/follow_up.py): only where
        # the follow-up threshold was measured, fitted or given for this decider
        follow_up = self.options.follow_up
        self.follow_ups = FollowUpMemory(
            follow_up.conversations if "follow_up" in self.thresholds else 0, follow_up.ttl_s
        )
        #: the modes this policy switched on by itself (no option asked for them), said in
        #: ``stats.report()``: a reader of the figures knows what produced them
        self.default_modes: list[str] = self._default_modes()
        for mode in self.default_modes:
            if mode not in self.stats.default_modes:  # stats may be shared by several policies
                self.stats.default_modes.append(mode)

    def _follow_up_head(self, given: Any, store: Searcher) -> FollowUpHead | None:
        """The follow-up head: the one given (a head or its file), else the shipped one, when the
        decider is the embedded one and the store's embedder is the head's space."""
        if self.decider is None or given is None:
            return None
        if given is _DEFAULT:
            if self.decider.name != "embedded":
                return None
            head = shipped_follow_up_head()
        elif isinstance(given, FollowUpHead):
            head = given
        else:
            head = read_follow_up_head(given)
        embedder = getattr(getattr(store, "embedder", None), "name", None)
        if head is None or head.embedder != embedder:
            if given is not _DEFAULT and head is not None:
                raise UsageError(
                    f"{head.origin}: the follow-up head is for {head.embedder} vectors; the store's "
                    f"embedder is {embedder}"
                )
            return None
        return head

    def _default_modes(self) -> list[str]:
        if self.decider is None:
            return []
        search, modes = self.options.search, []
        # an opt-in threshold in use without an argument is a measured default or a fitted config
        sources = {k: "measured default" if v == "default" else v for k, v in self.threshold_sources.items()}
        if search.gated_top_k is None and self.search_depth != search.top_k:
            modes.append(f"search depth {self.search_depth} per namespace (fitted for {self.decider.name})")
        if search.mode == "hybrid":
            modes.append("hybrid search (dense + full text)")
        named = self.thresholds.get("gate_named")
        if named is not None and sources.get("gate_named") != "argument" and self.searcher.has_mentions:
            modes.append(f"store-aware gate down to {named:g} ({sources['gate_named']})")
        by_domain = self.thresholds.get("gate_domain")
        if by_domain is not None and sources.get("gate_domain") != "argument":
            modes.append(
                f"profile-aware gate down to {by_domain:g} ({sources['gate_domain']})"
                if self.searcher.has_profile
                else "no per-actor profile from this store: the gate opens on no life domain"
            )
        if self.follow_ups.enabled and sources.get("follow_up") != "argument":
            how = "on the pair, " if self.follow_up_head is not None else ""
            modes.append(
                f"follow-ups ({how}threshold {self.thresholds['follow_up']:g}, {sources['follow_up']})"
            )
        return modes

    @classmethod
    def from_config(
        cls,
        path: ConfigPath,
        store: Searcher,
        decider: Decider | BaseDecider | Any | None = _DEFAULT,
        **keywords: Any,
    ) -> RecallPolicy:
        """A policy using the thresholds ``recallwise tune ... --write-config`` fitted for its decider.

        ``keywords`` are the policy's own (``options=``, ``namespaces=``, shorthand); thresholds
        given there still win. A role the file holds no fit for (for this
        decider's backend) falls back to ``RECALLWISE_CONFIG``, then to the backend's default,
        which ``stats.report()`` lists as unmeasured when it was never measured.
        """
        return cls(store, decider, _config=read_config(path), **keywords)

    # ---- one turn ---------------------------------------------------------------------------------
    def recall(
        self,
        message: Any,
        *,
        actor_id: str,
        session_id: str | None = None,
        namespaces: Sequence[str] | None = None,
        top_k: int | None = None,
        max_records: int | None = None,
        extensions: Mapping[str, Any] | None = None,
    ) -> Recall:
        """Decide and retrieve for one user message; returns the context block to inject.

        For this turn only: ``namespaces`` replaces the policy's namespaces, ``top_k`` the records
        searched per namespace, ``max_records`` the most records kept (a caller that returns a
        page, like a framework's search, asks for its page size), and ``extensions`` goes with
        every search (:attr:`~recallwise.stores.base.SearchRequest.extensions`).
        """
        turn = self._start(message, actor_id, session_id, namespaces, top_k, max_records, extensions)
        if not turn.ended and self._decide(turn):
            stages.search(turn, self.searcher, turn.top_k, self._mode, self.stats)
            self._judge_and_keep(turn)
        return self._finish(turn)

    def judge(
        self,
        message: Any,
        hits: Sequence[tuple[str, SearchHit]],
        *,
        actor_id: str,
        max_records: int | None = None,
        gate: bool = False,
    ) -> Recall:
        """Judge records that came from elsewhere (a foreign memory's search) for one message.

        No search: ``hits`` (``(namespace, hit)`` pairs) are the candidates, judged and kept
        exactly as :meth:`recall` judges its own search's (the stock arm keeps those above the
        score floor). ``gate=True`` asks the gate first, as :meth:`recall` does: a message that
        needs no memory keeps nothing. Fails open like :meth:`recall`: a failing judge keeps them all.
        """
        turn = self._start(message, actor_id, None, _NO_SEARCH, None, max_records)
        if not turn.ended:
            if gate and not self._decide(turn):
                return self._finish(turn)
            turn.hits = list(hits)
            self.stats.add(records_returned=len(turn.hits))
            if self.guarded_decider is not None and not turn.state:
                turn.state = stages.state_for(turn.text, self.options.limits, turn)
            self._judge_and_keep(turn)
        return self._finish(turn)

    async def arecall(
        self,
        message: Any,
        *,
        actor_id: str,
        session_id: str | None = None,
        namespaces: Sequence[str] | None = None,
        top_k: int | None = None,
        max_records: int | None = None,
        extensions: Mapping[str, Any] | None = None,
    ) -> Recall:
        """:meth:`recall` for asyncio agents: the event loop never waits on a backend.

        A natively async memory (one with ``asearch``) is awaited; a remote decider and remote
        sync calls run in worker threads; in-process work (the embedded decider, a local store)
        is called directly. Safe to await concurrently.
        """
        turn = await asyncio.to_thread(
            self._start, message, actor_id, session_id, namespaces, top_k, max_records, extensions
        )
        if not turn.ended:
            local = self.decider is None or self.decider.capabilities.local
            gate_open = self._decide(turn) if local else await asyncio.to_thread(self._decide, turn)
            if gate_open:
                await stages.asearch(turn, self.searcher, turn.top_k, self._mode, self.stats)
                if local:
                    self._judge_and_keep(turn)
                else:
                    await asyncio.to_thread(self._judge_and_keep, turn)
        return self._finish(turn)

    @property
    def _mode(self) -> Literal["dense", "hybrid"]:
        # The stock arm searches as upstream does: dense only.
        return "dense" if self.decider is None else self.options.search.mode

    def _start(
        self,
        message: Any,
        actor_id: str,
        session_id: str | None,
        namespaces: Sequence[str] | None,
        top_k: int | None = None,
        max_records: int | None = None,
        extensions: Mapping[str, Any] | None = None,
    ) -> Turn:
        """The turn's text, namespaces and query vector (``ended`` when there is nothing to decide)."""
        if top_k is not None:
            check_option("top_k", top_k)
        if max_records is not None:
            check_option("max_records", max_records)
        if namespaces is _NO_SEARCH:
            templates: list[str] = []
        else:
            templates = namespace_templates(namespaces) if namespaces is not None else list(self.namespaces)
        resolved = [resolve_namespace(t, actor_id=actor_id, session_id=session_id) for t in templates]
        self.stats.add(turns=1)
        text = message_text(message)
        request = TurnRequest(
            text,
            actor_id,
            session_id,
            # the gated arm searches deeper than it keeps (the judge chooses); a turn's own top_k wins
            top_k=top_k if top_k is not None else self.search_depth,
            max_records=max_records if max_records is not None else self.options.limits.max_records,
            extensions=extensions if extensions is not None else {},
            conversation=(actor_id, session_id, tuple(resolved)),
        )
        turn = Turn(request, Trace(gated=self.decider is not None), resolved, templates, text)
        turn.trace.message_chars = len(text)
        if not text.strip():
            turn.trace.skipped = "no text in the message"
            turn.ended = True
            return turn
        self.stats.add(baseline_retrievals=1)
        turn.prior = self.follow_ups.prior(turn.conversation)
        turn.previous = self.follow_ups.previous(turn.conversation)
        cached = self._cache.get(turn.cache_key)
        if cached is not None:
            turn.vector, turn.gate_answers = cached
            turn.embedder_name = getattr(self.store.embedder, "name", None)
            turn.trace.cache_hit = True
        elif not stages.embed(turn, self.store.embedder, self.stats):
            turn.ended = True
            return turn
        turn.trace.timings_ms["embed"] = turn.elapsed_ms()
        if self.decider is None:
            self._cache.put(turn.cache_key, turn.vector, None)
        return turn

    def _decide(self, turn: Turn) -> bool:
        """The gate (and route): True when the turn retrieves. The stock arm always does."""
        if self.guarded_decider is None:
            return True
        turn.state = stages.state_for(turn.text, self.options.limits, turn)
        if turn.gate_answers is None:
            questions = self.gate_questions(follow_up=turn.prior is not None and self.follow_up_head is None)
            stages.ask_gate(turn, self.guarded_decider, questions, self.stats)
            if turn.gate_usage.get("gate_head"):
                turn.trace.heads["gate"] = self.heads.get("gate", "")
            if turn.gate_answers is not None:
                # Only answers that came back are cached: a failure is retried next time.
                self._cache.put(turn.cache_key, turn.vector, turn.gate_answers)
        is_open = stages.open_gate(
            turn,
            self.thresholds["gate"],
            self.thresholds.get("gate_named"),  # opt-in: absent unless measured, fitted or given
            self.searcher,
            self.thresholds.get("gate_domain"),  # the same, for the per-actor profile's domains
            self.stats,
        )
        if self.routes:
            stages.route(turn, self.thresholds["route"])
        is_open = self._follow_up(turn, is_open)
        self.stats.add(**({"gate_opened": 1} if is_open else {"gate_closed": 1}))
        return is_open

    def _follow_up(self, turn: Turn, is_open: bool) -> bool:
        """Follow-ups, after the gate (:mod:`~recallwise.policy.follow_up`): a message the gate closed
        on that carries on the conversation's request searches with it; any other message ends the
        chain, and a message the gate opened on becomes the request. True when the turn retrieves."""
        if not self.follow_ups.enabled:
            return is_open
        key, own, vector, gate_p = turn.conversation, turn.text, turn.vector, turn.trace.gate_p
        answer: float | None = None
        if turn.prior is not None and is_social(own):
            answer = 0.0  # a greeting, thanks or goodbye carries no request on, whatever is asked
            turn.trace.notes.append("follow-up: a greeting, thanks or goodbye carries no request on")
        elif turn.prior is not None:
            if self.follow_up_head is not None:
                answer = stages.follow_up_by_pair(turn, self.follow_up_head)
                if answer is not None:
                    turn.trace.heads["follow_up"] = self.heads["follow_up"]
            else:  # asked in the gate's call
                asked = turn.gate_answers.get(FOLLOW_UP) if turn.gate_answers is not None else None
                answer = asked if isinstance(asked, float) else None
        if answer is not None:
            turn.trace.follow_up_p = answer  # asked (or answered by the head): the trace says so
        # a message the gate opened on is a request of its own: searched alone, it starts a new chain
        follows = not is_open and stages.follow_up(
            turn, answer, self.thresholds["follow_up"], self.store.embedder, self.stats
        )
        if follows:  # the judge reads both messages too
            turn.state = stages.state_for(turn.text, self.options.limits, turn)
        else:
            self.follow_ups.end_chain(key)  # a chain never outlives its request
            if is_open and gate_p is not None:  # not when the gate only failed open
                self.follow_ups.remember(key, own, vector=vector, gate_p=gate_p)
        self.follow_ups.note(key, own, vector=vector, gate_p=gate_p)
        return is_open or follows

    def _judge_and_keep(self, turn: Turn) -> None:
        if not turn.hits:
            return
        candidates = stages.candidates_of(turn)
        if self.guarded_decider is None:
            stages.keep_above_floor(turn, candidates, self.options.keep.relevance_score)
            return
        o = self.options.keep
        judged = stages.judge(turn, self.guarded_decider, self.store.embedder, candidates, o.by_gate)
        if judged and turn.judge_usage.get("judge_head"):
            turn.trace.heads["judge"] = self.heads.get("judge", "")
        # a judge that read the turn's need for memory has it in its p already
        multiply = o.by_gate and not turn.judge_usage.get("judge_need")
        budget: int | None = None
        # Episodic memories (opt-in): re-score by session, keep by the adaptive budget (both
        # fitted for the embedded decider's log-odds; another judge's answers are left alone).
        scores = None
        if judged and (o.conversation_rescore is not None or o.adaptive_budget is not None):
            scores = stages.fitted_log_odds(turn, candidates, self.guarded_decider.name)
        if scores is not None:
            if o.conversation_rescore is not None:
                scores = stages.rescore_conversation(turn, candidates, scores, o.conversation_rescore)
            if o.adaptive_budget is not None:
                budget = stages.adaptive_keep_count(turn, scores, o.adaptive_budget)

        def rule() -> str:
            return stages.apply_keep_rule(
                candidates,
                o.rule,
                self.thresholds["judge"],
                self.thresholds["judge_relative"],
                turn.max_records,
                budget,
                stages.need_of(turn) if multiply else 1.0,
            )

        stages.keep_judged(turn, candidates, judged, rule)

    def _finish(self, turn: Turn) -> Recall:
        searched = bool(turn.trace.candidates) or (self.decider is None and not turn.ended)
        recall = (
            stages.pack(turn, self.options.limits, self.stats) if searched else Recall("", [], turn.trace)
        )
        recall.trace.timings_ms["total"] = turn.elapsed_ms()
        self.telemetry.emit(
            recall.trace,
            started_ns=turn.started_ns,
            ended_ns=time.time_ns(),
            kept_ids=[k.record.id for k in recall.records],
            # the user's own message (a follow-up turn searched it with the request before it)
            message=turn.request.message,
        )
        if self.log is not None:
            started = time.perf_counter()
            try:
                self.log.write(
                    recall.trace,
                    actor_id=turn.actor_id,
                    session_id=turn.session_id,
                    decider=self.stats.decider or "none",
                    message=turn.request.message,
                    **self._stock_tokens(turn),
                    on_error=self._log_failed,
                )
            except Exception as exc:  # the log is for looking back; it must not fail the turn
                self.stats.error("log", error_kind(exc))
                recall.trace.errors.append(f"log: {type(exc).__name__}: {exc}")
            # what logging added to the turn, after its total was taken (the logged row lacks it)
            recall.trace.timings_ms["log"] = (time.perf_counter() - started) * 1000.0
        return recall

    def _log_failed(self, exc: Exception) -> None:
        """A row the log's thread could not write: counted, as a failed write on the turn's own."""
        self.stats.error("log", error_kind(exc))

    def _stock_tokens(self, turn: Turn) -> dict[str, Any]:
        """What the stock arm would have injected, for the log: this turn's own figure on the
        stock arm, else a count the log takes off the turn's thread."""
        if not turn.trace.gated:
            return {"stock_tokens": turn.trace.context_tokens}
        o = self.options
        later = stages.stock_tokens_later(turn, self.store, o.search.top_k, o.keep.relevance_score, o.limits)
        return {"stock_later": later}

    # ---- the rest ---------------------------------------------------------------------------------
    def gate_questions(self, *, follow_up: bool = False) -> dict[str, Question]:
        """What the gate call asks: the gate, the route when two or more namespaces are described,
        and whether the message follows up the conversation's last request (``follow_up``)."""
        questions: dict[str, Question] = {GATE: gate_question()}
        if self.routes:
            questions[ROUTE] = self._route_question()
        if follow_up:
            questions[FOLLOW_UP] = follow_up_question()
        return questions

    def _route_question(self) -> Question:
        """The route question over this policy's descriptions: one object while they stay the same
        (a new one each turn was validated and its options' texts written anew every turn)."""
        cached: Question | None = self.__dict__.get("_route")
        if cached is None or cached.criteria != self.descriptions:
            cached = route_question(self.descriptions)
            self.__dict__["_route"] = cached
        return cached

    @property
    def routes(self) -> bool:
        """Whether the gate's call also asks the route: two or more described namespaces and a
        route threshold that was given or fitted (no default was ever measured, so the route is off
        by default: an unmeasured route must not hide a namespace whose records the judge keeps)."""
        return len(self.descriptions) >= 2 and "route" in self.thresholds

    def warm_up(self) -> None:
        """Load the embedding model and the decider's cached wordings now, at start-up, rather
        than on the first user turn (loading the default model takes ~0.35 s), and the English
        dictionary the gate's name look-up reads (~0.3 s), and what the store loads on its first
        write (the SQLite store's life-domain prototypes, embedded once: ~1 s of CPU that the first
        write paid in a request thread, the other first writes waiting for it)."""
        self.store.embedder.embed(["warm-up"])
        english_dictionary()
        call_if_present(self.store, "warm_up")
        if self.decider is not None:
            self.decider.warm_up(
                self.gate_questions(follow_up=self.follow_ups.enabled and self.follow_up_head is None)
            )

    def forget_actor(self, actor_id: str) -> dict[str, int]:
        """Forget a user, in one call: every record and event of ``actor_id`` in the store, every
        turn of theirs in the decision log (their messages, their records' texts) with the labels
        given to those turns (what a refit of the gate or judge reads), and the conversation the
        follow-up question remembers. Returns what was deleted: ``records``, ``events``,
        ``decisions`` (logged turns) and ``labels``. A store that cannot forget an actor is a
        :class:`UsageError`, and nothing is deleted."""
        forget = getattr(self.store, "forget_actor", None)
        if forget is None:
            raise UsageError(f"{type(self.store).__name__} cannot forget an actor")
        counts = dict(forget(actor_id))
        logged = self.log.forget(actor_id) if self.log is not None else None
        self.follow_ups.forget_actor(actor_id)
        return {
            "records": int(counts.get("records", 0)),
            "events": int(counts.get("events", 0)),
            "decisions": logged.turns if logged is not None else 0,
            "labels": logged.labels if logged is not None else 0,
        }

    @property
    def _pool(self) -> Any:
        """The worker pool remote calls run in (None until the first one)."""
        return self._executor.started

    def close(self) -> None:
        self._executor.shutdown()
        if self.log is not None and self._owns_log:
            self.log.close()

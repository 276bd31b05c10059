"""The stages of one turn, as plain functions over a :class:`Turn`.

embed -> gate (+ route, same decider call) -> search -> judge -> (episodic re-scoring) -> keep
-> pack. Each stage reads what it needs from the turn and the arguments it is given, records
what it did in
``turn.trace`` and the counters, and never raises for a backend's failure: a decider that fails
fails open (retrieve, keep everything), a search that fails injects nothing. Both say so in the
trace and in ``stats``. :class:`~recallwise.policy.RecallPolicy` conducts them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..deciders import Decision, DecisionHints
from ..deciders.questions import MAX_QUESTIONS, ChoiceAnswer, Question
from ..embeddings import Embedder
from ..errors import DeciderError, error_kind
from ..records import SearchHit, render_text
from ..stores.base import SearchMode, SearchRequest
from ..stores.profile import ActorProfile
from .budget import AdaptiveBudget, keep_count
from .conversation import (
    ConversationWeights,
    conversational,
    log_odds,
    probability,
    rescore_by_conversation,
    session_of,
    unfitted_reason,
)
from .follow_up import FollowUpHead, follow_up_text, pair_features
from .guarded import CircuitOpen, GuardedDecider, GuardedSearcher, SearchOutcome
from .names import name_terms, proper_names
from .options import KeepRule, LimitOptions
from .pack import count_tokens, pack_context
from .stats import RecallStats
from .trace import Candidate, StageSpan
from .turn import KeptRecord, Recall, Turn
from .wording import GATE, ROUTE, judge_question

__all__ = [
    "KeepRule",
    "LimitOptions",
    "actor_profile",
    "adaptive_keep_count",
    "apply_keep_rule",
    "ask_gate",
    "domain_in_profile",
    "embed",
    "fitted_log_odds",
    "follow_up",
    "gate_need",
    "judge",
    "keep_above_floor",
    "open_gate",
    "pack",
    "rescore_conversation",
    "route",
    "search",
    "stock_tokens_later",
    "stock_tokens_of",
]


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


class BadVector(ValueError):
    """The embedder returned something that is not a usable query vector."""

    kind = "bad_vector"


# ---- embed ---------------------------------------------------------------------------------
def embed(turn: Turn, embedder: Embedder, stats: RecallStats) -> bool:
    """The turn's one query embedding; False (counted, traced) when the embedder failed."""
    try:
        vector = np.asarray(embedder.embed([turn.text])[0], dtype=np.float32)
        dimension = embedder.dimension
        if vector.shape != (dimension,):
            raise BadVector(f"embedder returned shape {vector.shape}, expected ({dimension},)")
        if not np.isfinite(vector).all():
            raise BadVector(f"embedder returned a vector of shape {vector.shape} with non-finite values")
    except Exception as exc:  # no vector: no search can run; inject nothing, say why
        stats.error("embedder", error_kind(exc))
        turn.trace.error_kinds.append(f"embedder:{error_kind(exc)}")
        turn.trace.errors.append(f"embedder: {type(exc).__name__}: {exc}")
        return False
    turn.vector = vector
    turn.embedder_name = getattr(embedder, "name", None)
    return True


def state_for(text: str, limits: LimitOptions, turn: Turn) -> str:
    """The message as the decider sees it: cut to ``max_state_chars``, said in the trace."""
    if len(text) > limits.max_state_chars:
        turn.trace.notes.append(
            f"message truncated from {len(text)} to {limits.max_state_chars} chars for the decider"
        )
        return text[: limits.max_state_chars]
    return text


# ---- asking the decider ----------------------------------------------------------------------
def _ask(
    turn: Turn, decider: GuardedDecider, questions: dict[str, Question], hints: DecisionHints, stage: str
) -> Decision | None:
    """One guarded decider call; None (traced) when it failed or was skipped."""
    started = time.perf_counter()
    try:
        decision = decider.decide(turn.state, questions, hints)
    except CircuitOpen as exc:  # no call was made, so none is timed
        turn.decider_failed = True
        turn.trace.error_kinds.append(f"decider:{exc.kind}")
        turn.trace.errors.append(f"{stage}: {exc}")
        turn.trace.notes.append(f"{stage}: decider skipped (circuit open), failing open")
        return None
    except DeciderError as exc:
        turn.trace.timings_ms[stage] = turn.trace.timings_ms.get(stage, 0.0) + _ms(started)
        turn.decider_failed = True
        turn.trace.error_kinds.append(f"decider:{error_kind(exc)}")
        turn.trace.errors.append(f"{stage}: {exc}")
        return None
    turn.trace.timings_ms[stage] = turn.trace.timings_ms.get(stage, 0.0) + _ms(started)
    # A backend that had to cut the state says so; the trace must show it, never silently.
    turn.trace.notes.extend(f"{stage}: {w}" for w in decision.warnings)
    return decision


def ask_gate(turn: Turn, decider: GuardedDecider, questions: dict[str, Question], stats: RecallStats) -> None:
    """Ask the gate (and the route, in the same call) unless the decision cache answered."""
    if turn.gate_answers is not None:
        return
    started = time.time_ns()
    hints = DecisionHints(state_vector=turn.vector, embedder_name=turn.embedder_name)
    decision = _ask(turn, decider, questions, hints, "gate")
    turn.gate_answers = decision.answers if decision is not None else None
    turn.gate_usage = dict(decision.usage) if decision is not None else {}
    turn.trace.stages.append(
        StageSpan("recallwise.gate", started, time.time_ns(), {"recallwise.questions": len(questions)})
    )
    stats.add(gate_calls=1)


# ---- gate and route --------------------------------------------------------------------------
def open_gate(
    turn: Turn,
    threshold: float,
    named_threshold: float | None,
    searcher: GuardedSearcher,
    domain_threshold: float | None = None,
    stats: RecallStats | None = None,
) -> bool:
    """Whether this turn retrieves on the gate's answer, the store-aware gate included (a name
    the actor's memory holds, down to ``named_threshold``; a life domain the actor's records
    touch, down to ``domain_threshold``); a gate that gave no answer fails open."""
    trace = turn.trace
    trace.gate_threshold = threshold
    answers = turn.gate_answers
    if answers is None:  # fail open: retrieve as stock would
        trace.gate_open = True
        trace.notes.append("gate failed open after a decider error")
        return True
    gate_p = answers[GATE]
    assert isinstance(gate_p, float)
    trace.gate_p = gate_p
    if gate_p >= threshold:
        trace.gate_open = True
        return True
    lowest = min((t for t in (named_threshold, domain_threshold) if t is not None), default=None)
    if lowest is None or gate_p < lowest:
        trace.gate_open = False
        return False
    profile = actor_profile(turn, searcher, stats)
    trace.gate_open = named_in_store(turn, gate_p, named_threshold, searcher, profile) or domain_in_profile(
        turn, gate_p, domain_threshold, searcher, profile
    )
    return bool(trace.gate_open)


def actor_profile(turn: Turn, searcher: GuardedSearcher, stats: RecallStats | None) -> ActorProfile | None:
    """The store's per-actor profile (in-process: no round trip); None, said in the trace and
    counted (``stats.profile_fallbacks``), when the store keeps none or could not read it."""
    if searcher.has_profile:
        started = time.perf_counter()
        try:
            profile: ActorProfile = searcher.inner.actor_profile(turn.actor_id)  # type: ignore[attr-defined]
        except Exception as exc:  # the gate goes on as for a store without one
            turn.trace.error_kinds.append(f"store:{error_kind(exc)}")
            turn.trace.errors.append(f"store profile: {type(exc).__name__}: {exc}")
        else:
            turn.trace.profile = "profile"
            turn.trace.timings_ms["profile"] = _ms(started)
            return profile
    turn.trace.profile = "search"
    turn.trace.notes.append(
        "no per-actor profile from this store: names looked up in the store, no life domains"
    )
    if stats is not None:
        stats.add(profile_fallbacks=1)
    return None


def domain_in_profile(
    turn: Turn,
    gate_p: float,
    domain_threshold: float | None,
    searcher: GuardedSearcher,
    profile: ActorProfile | None,
) -> bool:
    """The profile-aware gate: open below the gate threshold, down to ``domain_threshold``, when
    the message is in a life domain some of this actor's records (in the turn's namespaces) fall
    in: "Which online courses would you suggest for picking up statistics?" with a preference
    for self-paced learning stored."""
    if domain_threshold is None or gate_p < domain_threshold or profile is None or turn.vector is None:
        return False
    domain = searcher.inner.domain_of(turn.vector)  # type: ignore[attr-defined]
    turn.trace.profile_domain = domain
    held = profile.records_in(turn.namespaces, domain)
    if not held:
        return False
    turn.trace.notes.append(
        f"gate opened: {held} of the actor's records are about {domain}, as the message is "
        f"(p {gate_p:.2f} >= {domain_threshold:.3g})"
    )
    return True


def follow_up_by_pair(turn: Turn, head: FollowUpHead) -> float | None:
    """The follow-up head's p that this message carries on the conversation's request, from the
    pair (the previous message and this one: :func:`~recallwise.policy.follow_up.pair_features`);
    None without a request or a query vector. Traced as ``follow_up_p``."""
    prior = turn.prior
    if prior is None or turn.vector is None:
        return None
    started = time.perf_counter()
    features = pair_features(
        turn.request.message, turn.vector, turn.previous or prior, prior, turn.trace.gate_p
    )
    p = head.probability(features)
    turn.trace.timings_ms["follow_up"] = _ms(started)
    turn.trace.follow_up_p = p
    return p


def follow_up(
    turn: Turn, answer: float | None, threshold: float, embedder: Embedder, stats: RecallStats
) -> bool:
    """The turn carries on the conversation's request: it then searches and judges both messages
    together (re-embedded), whether or not the gate opened on it alone. False when there is no
    request or answer, the answer is below ``threshold``, or the new embedding failed (counted,
    traced)."""
    prior = turn.prior
    if prior is None or answer is None:
        return False
    turn.trace.follow_up_p = answer
    if answer < threshold:
        return False
    own = turn.text
    turn.text = follow_up_text(prior.text, own)
    if not embed(turn, embedder, stats):
        turn.text = own
        return False
    was_open = bool(turn.trace.gate_open)
    turn.follow_up = True
    turn.trace.follow_up = True
    turn.trace.gate_open = True
    turn.trace.notes.append(
        f"{'searched' if was_open else 'gate opened'}: a follow-up (p {answer:.2f} >= {threshold:.3g}) "
        "of the conversation's request; searched and judged as both messages"
    )
    stats.add(follow_ups=1)
    return True


def named_in_store(
    turn: Turn,
    gate_p: float,
    named_threshold: float | None,
    searcher: GuardedSearcher,
    profile: ActorProfile | None = None,
) -> bool:
    """The store-aware gate: open below the gate threshold, down to ``named_threshold``, when the
    message names something (a person, place, thing) that this actor's memory mentions. With the
    store's profile (in-process), only names that are not also English words count
    (:func:`~recallwise.policy.names.proper_names`); without one, every name-like word is looked
    up in the store (a round trip)."""
    if named_threshold is None or gate_p < named_threshold:
        return False
    terms = name_terms(turn.text)
    if profile is not None:
        terms = proper_names(terms)
        found = profile.mentions(turn.namespaces, terms) if terms else set()
    else:
        if not terms or not searcher.has_mentions:
            return False
        started = time.perf_counter()
        try:
            found = searcher.mentions(turn.namespaces, terms, actor_id=turn.actor_id)
        except CircuitOpen:  # the gate goes without the signal
            turn.trace.notes.append("store circuit open: names not looked up")
            return False
        except Exception as exc:  # counted by the guard; the gate stays as the decider left it
            turn.trace.error_kinds.append(f"store:{error_kind(exc)}")
            turn.trace.errors.append(f"store mentions: {type(exc).__name__}: {exc}")
            return False
        finally:
            turn.trace.timings_ms["names"] = _ms(started)
    if not found:
        return False
    turn.trace.names_in_store = [t for t in terms if t in found]
    turn.trace.notes.append(
        f"gate opened: the memory mentions {', '.join(turn.trace.names_in_store)} "
        f"(p {gate_p:.2f} >= {named_threshold:.3g})"
    )
    return True


def route(turn: Turn, threshold: float) -> None:
    """Keep the namespaces the route gives at least ``threshold``; all of them when it is unsure
    (and when the gate call asked no route, or failed)."""
    answer = turn.gate_answers.get(ROUTE) if turn.gate_answers is not None else None
    if not isinstance(answer, ChoiceAnswer):
        return
    turn.trace.route = dict(answer.probabilities)
    chosen = [
        ns
        for template, ns in zip(turn.templates, turn.namespaces, strict=True)
        if answer.probabilities.get(template, 0.0) >= threshold
    ]
    if not chosen:
        turn.trace.notes.append("route unsure: searching every namespace")
        return
    kept = set(chosen)
    pairs = [(t, ns) for t, ns in zip(turn.templates, turn.namespaces, strict=True) if ns in kept]
    turn.templates, turn.namespaces = [t for t, _ in pairs], [ns for _, ns in pairs]


# ---- search ----------------------------------------------------------------------------------
def search_request(turn: Turn, top_k: int, mode: SearchMode) -> SearchRequest:
    """The turn's search, for its first namespace (the fan-out sends it to each)."""
    assert turn.vector is not None, "search needs the turn's embedding"
    return SearchRequest(
        turn.namespaces[0] if turn.namespaces else "",
        turn.vector,
        top_k,
        actor_id=turn.actor_id,
        text=turn.text,
        mode=mode,
        extensions=turn.extensions,
    )


def take_hits(
    turn: Turn, outcomes: Sequence[SearchOutcome] | None, started: float, stats: RecallStats
) -> None:
    """Record a search's outcomes: any failed namespace means nothing is injected this turn."""
    trace = turn.trace
    trace.namespaces_searched = list(turn.namespaces)
    trace.searched_templates = list(turn.templates)
    if outcomes is None:  # the circuit was open: nothing was searched, so nothing is timed
        trace.error_kinds.append("store:circuit_open")
        trace.notes.append("store error: nothing injected this turn")
        return
    elapsed = _ms(started)
    trace.timings_ms["search"] = elapsed
    stats.add(retrievals=1, memory_ms=elapsed)
    failed = False
    hits: list[tuple[str, SearchHit]] = []
    template_of = dict(zip(turn.namespaces, turn.templates, strict=True))
    for outcome in outcomes:
        ns, result = outcome.namespace, outcome.result
        attributes: dict[str, Any] = {
            "db.operation.name": "search",
            "recallwise.namespace": template_of.get(ns, ""),
        }
        if isinstance(result, Exception):
            failed = True
            kind = error_kind(result)
            trace.error_kinds.append(f"store:{kind}")
            attributes["error.type"] = kind
            trace.errors.append(f"store search {ns}: {type(result).__name__}: {result}")
        else:
            attributes["recallwise.records.retrieved"] = len(result)
            hits.extend((ns, hit) for hit in result)
        trace.stages.append(StageSpan("recallwise.search", outcome.started_ns, outcome.ended_ns, attributes))
    if failed:
        trace.notes.append("store error: nothing injected this turn")
        return
    turn.hits = hits
    stats.add(records_returned=len(hits))


def search(turn: Turn, searcher: GuardedSearcher, top_k: int, mode: SearchMode, stats: RecallStats) -> None:
    """Search every namespace of the turn (sync); see :func:`take_hits`."""
    started = time.perf_counter()
    outcomes: list[SearchOutcome] | None
    try:
        outcomes = searcher.search_all(search_request(turn, top_k, mode), turn.namespaces)
    except CircuitOpen as exc:  # counted by the guard
        turn.trace.errors.append(f"store: {exc}")
        outcomes = None
    take_hits(turn, outcomes, started, stats)


async def asearch(
    turn: Turn, searcher: GuardedSearcher, top_k: int, mode: SearchMode, stats: RecallStats
) -> None:
    """:func:`search` for an event loop."""
    started = time.perf_counter()
    outcomes: list[SearchOutcome] | None
    try:
        outcomes = await searcher.asearch_all(search_request(turn, top_k, mode), turn.namespaces)
    except CircuitOpen as exc:
        turn.trace.errors.append(f"store: {exc}")
        outcomes = None
    take_hits(turn, outcomes, started, stats)


# ---- judge and keep --------------------------------------------------------------------------
def candidates_of(turn: Turn) -> list[Candidate]:
    """Every hit as a trace candidate, rendered to the one prose style."""
    out = [
        Candidate(id=hit.record.id, namespace=ns, text=render_text(hit.record.text), score=hit.score)
        for ns, hit in turn.hits
    ]
    turn.trace.candidates.extend(out)
    return out


def judge(
    turn: Turn,
    decider: GuardedDecider,
    embedder: Embedder,
    candidates: list[Candidate],
    by_gate: bool = True,
) -> bool:
    """Ask the judge about every candidate (one call per MAX_QUESTIONS of them); False when it
    failed (keep all). ``by_gate``: the judge is told the turn's need for memory
    (:func:`gate_need`), which a judge head reading it turns into "nothing belongs"."""
    if turn.decider_failed:
        # One failure per turn at most: a decider that just timed out or answered garbage
        # would most likely do it again, doubling the turn's worst case for nothing.
        turn.trace.notes.append("judge: not asked, the decider failed at the gate this turn")
        return False
    questions = {f"r{i}": judge_question(c.text) for i, c in enumerate(candidates)}
    hints = DecisionHints(
        state_vector=turn.vector, embedder_name=turn.embedder_name, need=gate_need(turn) if by_gate else None
    )
    missing: list[int] = []
    for i, (_, hit) in enumerate(turn.hits):
        if hit.record.embedding is not None:
            hints.subject_vectors[f"r{i}"] = np.asarray(hit.record.embedding, dtype=np.float32)
        else:
            missing.append(i)
        hints.subject_scores[f"r{i}"] = hit.score
        if hit.lexical is not None:
            hints.subject_lexical[f"r{i}"] = hit.lexical
    if missing and decider.inner.capabilities.uses_hints:
        # A foreign memory may return no vectors: embed those records in one batch, locally.
        try:
            vectors = embedder.embed([candidates[i].text for i in missing])
            for i, vector in zip(missing, vectors, strict=True):
                hints.subject_vectors[f"r{i}"] = np.asarray(vector, dtype=np.float32)
        except Exception as exc:  # the decider embeds them itself then
            turn.trace.notes.append(f"judge: records not embedded here ({type(exc).__name__})")
    turn.judged_vectors = [hints.subject_vectors.get(f"r{i}") for i in range(len(candidates))]
    started = time.time_ns()
    # One call holds at most MAX_QUESTIONS (the decision wire format's limit): a deep search
    # over several namespaces is judged in as many calls as it takes, and fails open as a whole.
    names = list(questions)
    answers: dict[str, Any] = {}
    usage: dict[str, float] = {}
    for start in range(0, len(names), MAX_QUESTIONS):
        part = {n: questions[n] for n in names[start : start + MAX_QUESTIONS]}
        decision = _ask(turn, decider, part, hints, "judge")
        if decision is None:
            break
        answers.update(decision.answers)
        for key, value in decision.usage.items():
            usage[key] = usage.get(key, 0) + value
    turn.trace.stages.append(
        StageSpan("recallwise.judge", started, time.time_ns(), {"recallwise.records.judged": len(questions)})
    )
    if len(answers) < len(names):
        return False
    turn.judge_usage = usage
    for i, c in enumerate(candidates):
        p = answers[f"r{i}"]
        c.judge_p = float(p) if isinstance(p, float) else None
    return True


# ---- episodic memories: re-scoring and the adaptive budget (between judge and keep) ----------
def fitted_log_odds(turn: Turn, candidates: list[Candidate], decider: str | None) -> np.ndarray | None:
    """The judge's log-odds of the turn's candidates when the conversation re-scoring and the
    adaptive budget were fitted for this judge (the embedded decider, in its default English
    model's space); None otherwise, said in the trace."""
    if not candidates or any(c.judge_p is None for c in candidates):
        return None
    reason = unfitted_reason(decider, turn.embedder_name, turn.judge_usage.get("multilingual_judged", 0))
    if reason is None and any(v is None for v in turn.judged_vectors):
        reason = "some records had no vector to compare"
    if reason is not None:
        turn.trace.notes.append(f"conversation re-scoring and adaptive budget not applied: {reason}")
        return None
    return log_odds([c.judge_p or 0.0 for c in candidates])


def rescore_conversation(
    turn: Turn, candidates: list[Candidate], scores: np.ndarray, weights: ConversationWeights
) -> np.ndarray:
    """Re-score the judged candidates by the sessions they came from
    (:mod:`recallwise.policy.conversation`) and write the re-scored probability back as each
    candidate's ``judge_p``; returns the new log-odds. Records from fewer than two sessions are
    left as the judge said."""
    sessions = [session_of(hit.record.metadata) for _, hit in turn.hits]
    if not conversational(sessions):
        turn.trace.notes.append(
            "conversation re-scoring: the records come from fewer than 2 sessions, unchanged"
        )
        return scores
    started = time.perf_counter()
    vectors = np.stack([np.asarray(v, dtype=np.float64) for v in turn.judged_vectors if v is not None])
    rescored = rescore_by_conversation(
        scores, vectors, sessions, centre_weight=weights.centre, session_weight=weights.session
    )
    for c, p in zip(candidates, probability(rescored), strict=True):
        c.judge_p = float(p)
    before, after = int(np.argmax(scores)), int(np.argmax(rescored))
    turn.trace.notes.append(
        f"conversation re-scoring: {len(candidates)} records from "
        f"{len({s for s in sessions if s is not None})} sessions, judge_p re-scored (pool centrality "
        f"x{weights.centre:.3g}, session support x{weights.session:.3g}); best record "
        + ("unchanged" if before == after else f"now {candidates[after].id} (was {candidates[before].id})")
    )
    turn.trace.timings_ms["rescore"] = _ms(started)
    return rescored


def adaptive_keep_count(turn: Turn, scores: np.ndarray, budget: AdaptiveBudget) -> int:
    """How many records the adaptive budget keeps this turn (said in the trace)."""
    count = keep_count(scores, budget)
    turn.trace.notes.append(f"adaptive keep budget: {count} of {len(scores)} ({budget.describe()})")
    return count


def gate_need(turn: Turn) -> float | None:
    """The turn's need for memory as the gate said it, for a judge that reads it: the gate's p
    when the gate opened on it, and when a name in the store opened it below the threshold (a
    general question that shares a word with a record, "How do I install Go on Ubuntu?", is no
    more a request for memory for it); None when a follow-up opened the turn (it carries on a
    request that needed memory), the gate failed or none was asked."""
    trace = turn.trace
    p, threshold = trace.gate_p, trace.gate_threshold
    if p is None or threshold is None or turn.follow_up:
        return None
    if p < threshold and not trace.names_in_store:
        return None
    return min(1.0, float(p))


def need_of(turn: Turn) -> float:
    """The turn's need for memory the keep rule multiplies a judge's p by
    (``KeepOptions.by_gate``, a judge that does not read the need itself): the gate's p when the
    gate opened on it, else 1 (opened by a name in the store, a follow-up, a failed gate, no
    gate: the fifth round's rule, which that judge's threshold was chosen with)."""
    trace = turn.trace
    p, threshold = trace.gate_p, trace.gate_threshold
    if p is None or threshold is None or p < threshold or turn.follow_up:
        return 1.0
    return min(1.0, float(p))


def apply_keep_rule(
    candidates: list[Candidate],
    rule: KeepRule,
    absolute: float,
    delta: float,
    max_records: int | None,
    budget: int | None = None,
    need: float = 1.0,
) -> str:
    """Mark candidates kept or dropped (with the reason); returns the rule as text.

    ``budget``: the adaptive keep budget's count this turn (:func:`adaptive_keep_count`), kept
    after the thresholds and under ``max_records``. ``need``: the turn's need for memory
    (:func:`need_of`); the absolute threshold reads p x need.
    """
    probs = [c.judge_p for c in candidates if c.judge_p is not None]
    best = max(probs) if probs else 0.0
    rules = []
    if rule in ("absolute", "both"):
        rules.append(
            f"p >= {absolute:.3g}" if need >= 1.0 else f"p x the gate's {need:.2f} >= {absolute:.3g}"
        )
    if rule in ("relative", "both") and delta < 1.0:  # a delta of 1 keeps every record: off
        rules.append(f"p >= best - {delta:.3g}")
    if budget is not None:
        rules.append(f"the best {budget} (adaptive budget)")
    order = sorted(range(len(candidates)), key=lambda i: -(candidates[i].judge_p or 0.0))
    kept = 0
    for i in order:
        c = candidates[i]
        p = c.judge_p if c.judge_p is not None else 0.0
        if rule in ("absolute", "both") and p * need < absolute:
            c.reason = (
                f"p {p:.2f} < {absolute:.3g}" if need >= 1.0 else f"p {p:.2f} x {need:.2f} < {absolute:.3g}"
            )
        elif rule in ("relative", "both") and p < best - delta:
            c.reason = f"p {p:.2f} < best {best:.2f} - {delta:.3g}"
        elif max_records is not None and kept >= max_records:
            c.reason = f"over max_records {max_records}"
        elif budget is not None and kept >= budget:
            c.reason = f"over the adaptive keep budget {budget}"
        else:
            c.kept, c.reason = True, f"p {p:.2f} kept"
            kept += 1
    return " and ".join(rules)


def keep_judged(turn: Turn, candidates: list[Candidate], judged: bool, keep_rule: Callable[[], str]) -> None:
    """The kept records, best first: by the keep rule, or all of them when the judge failed open."""
    if not judged:
        for c in candidates:
            c.kept, c.reason = True, "judge failed open"
        turn.trace.keep_rule = "fail open: keep all"
    else:
        turn.trace.keep_rule = keep_rule()
    pairs = [(c, hit) for c, (_, hit) in zip(candidates, turn.hits, strict=True) if c.kept]
    pairs.sort(key=lambda pair: -(pair[0].judge_p if pair[0].judge_p is not None else pair[1].score))
    turn.kept = [KeptRecord(hit.record, c.text, c.namespace, hit.score, c.judge_p) for c, hit in pairs]


def stock_tokens_of(hits: Sequence[SearchHit], floor: float, limits: LimitOptions) -> int:
    """Tokens the stock arm injects for ``hits`` (in the store's order): those scoring at least
    ``floor``, packed as :func:`pack` packs."""
    texts = [render_text(hit.record.text) for hit in hits if hit.score >= floor]
    context, _ = pack_context(
        texts, max_record_chars=limits.max_record_chars, max_context_chars=limits.max_context_chars
    )
    return count_tokens(context)


def stock_tokens_later(
    turn: Turn, store: Any, top_k: int, floor: float, limits: LimitOptions
) -> Callable[[], int] | None:
    """What the stock arm would have injected this turn, as a count to take later (the decision
    log takes it off the turn's thread). From the turn's own search when it tells: every
    namespace of the policy searched at least ``top_k`` deep (the first ``top_k`` hits of each by
    score are then the stock arm's, unless a hybrid search's lexical ranking pushed one out of the
    deeper gated search: rare, and only ever an undercount). Otherwise (a closed gate, a route,
    a store error) the stock arm's own search: every namespace, dense, ``top_k`` deep, with the
    turn's query vector (no second embedding). None when the turn has no such search (no text,
    a follow-up, a :meth:`~recallwise.RecallPolicy.judge` of foreign hits)."""
    trace, every = turn.trace, turn.conversation[2]
    if turn.vector is None or turn.follow_up or not every:
        return None
    if (
        set(trace.namespaces_searched) == set(every)
        and turn.top_k >= top_k
        and not any(kind.startswith("store:") for kind in trace.error_kinds)
    ):
        own: list[SearchHit] = []
        for namespace in every:
            found = sorted((hit for ns, hit in turn.hits if ns == namespace), key=lambda hit: -hit.score)
            own.extend(found[:top_k])
        return lambda: stock_tokens_of(own, floor, limits)
    request = SearchRequest(
        every[0],
        turn.vector,
        top_k,
        actor_id=turn.actor_id,
        text=turn.request.message,
        mode="dense",
        extensions=turn.extensions,
    )

    def searched() -> int:
        hits: list[SearchHit] = []
        for namespace in every:
            hits.extend(store.search(replace(request, namespace=namespace)))
        return stock_tokens_of(hits, floor, limits)

    return searched


def keep_above_floor(turn: Turn, candidates: list[Candidate], floor: float) -> None:
    """The stock rule: keep every record scoring at least ``floor``, in the store's order."""
    for c, (ns, hit) in zip(candidates, turn.hits, strict=True):
        if hit.score >= floor:
            c.kept, c.reason = True, f"score >= {floor}"
            turn.kept.append(KeptRecord(hit.record, c.text, ns, hit.score, None))
        else:
            c.reason = f"score < {floor}"
    turn.trace.keep_rule = f"stock: score >= {floor}"


# ---- pack ------------------------------------------------------------------------------------
def pack(turn: Turn, limits: LimitOptions, stats: RecallStats) -> Recall:
    """The kept records as one escaped, deduplicated context block within the size budget."""
    kept, trace = turn.kept, turn.trace
    context, included = pack_context(
        [k.text for k in kept],
        max_record_chars=limits.max_record_chars,
        max_context_chars=limits.max_context_chars,
    )
    if len(included) < len(kept):
        trace.notes.append(
            f"{len(kept) - len(included)} kept record(s) left out as duplicates or by the size budget"
        )
        packed_ids = {kept[i].record.id for i in included}
        for c in trace.candidates:
            if c.kept and c.id not in packed_ids:
                c.kept, c.reason = False, c.reason + "; left out by the budget or as a duplicate"
    tokens = count_tokens(context)
    trace.context_tokens = tokens
    stats.add(
        records_injected=len(included),
        records_dropped=len(trace.candidates) - len(included),
        context_chars=len(context),
        context_tokens=tokens,
    )
    return Recall(context, [kept[i] for i in included], trace)

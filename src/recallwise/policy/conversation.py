"""Conversation structure: re-scoring judged candidates by the sessions they came from.

Memories extracted from conversations carry the session they came from (recallwise's
extraction writes ``metadata["session_id"]``; the LoCoMo benchmark's records carry
``metadata["session"]``). Two terms use it, after the judge has scored every candidate of a
turn and before the keep rule, over judge log-odds (``log(p / (1 - p))``):

- **session support**: a question is usually about one event, told in one session, so each
  candidate is lifted towards the best score of its own session (:func:`session_support`);
- **pool centrality**: among the records one search returned from a conversation, the ones
  closest to their common centre say what all of them say ("Jon loves dance", beside the records
  about one dance competition); the question usually asks about something more particular
  (:func:`pool_centrality`).

Both are applied only when the candidates come from at least two sessions
(:func:`rescore_by_conversation`), and only when the policy is told its memories are episodic
(``KeepOptions.conversation_rescore``, off by default). Both premises hold for event logs
(LoCoMo's observations: what happened in each session) and fail for a persona's durable facts
and preferences, even when those were told over several conversations: "What should I have for
dinner?" needs the vegetarian record from one session and the peanut allergy from another.
Measured with ``recallwise demo`` (its memories come from five conversations): with re-scoring
on, the flight turn loses YVR and the dinner turn the vegetarian and peanut-allergy records.
Measured the other way, the
centrality term inside the judge for every set lowered the judge's mean per-query AUC on
recallwise's own held-out cases from 0.971 to 0.954 (seed 0.975 -> 0.950).

The weights are in the embedded decider's judge log-odds, with the default English model
(``minilm-l6``): :func:`unfitted_reason` says when a turn's judge is another one, and the policy
then leaves the judge's answers as they are (and says so in the trace). Fitted on LoCoMo's dev
split by ``recallwise tune keep --locomo DIR --split dev`` (:data:`CONVERSATION_WEIGHTS`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "CONVERSATION_WEIGHTS",
    "FITTED_DECIDER",
    "FITTED_EMBEDDERS",
    "SESSION_KEYS",
    "ConversationWeights",
    "conversational",
    "log_odds",
    "pool_centrality",
    "probability",
    "rescore_by_conversation",
    "session_of",
    "session_support",
    "unfitted_reason",
]

#: metadata keys read as a record's session, first found wins
SESSION_KEYS: tuple[str, ...] = ("session_id", "session")


@dataclass(frozen=True)
class ConversationWeights:
    """How strongly the two terms re-score a conversational turn's judged records."""

    #: pool centrality, in judge log-odds per unit of cosine to the candidates' centre
    centre: float
    #: session support, in log-odds per log-odds (1.0: a record is lifted all the way to its
    #: session's best, minus how far that session's best is below the turn's best)
    session: float

    def __post_init__(self) -> None:
        if self.centre < 0 or self.session < 0:
            raise ValueError(f"conversation weights must be >= 0, got {self.centre}, {self.session}")


#: The backend and query embedders the weights (and the keep budget) were fitted for: the
#: embedded decider judging in the space of the default English model.
FITTED_DECIDER = "embedded"
FITTED_EMBEDDERS: frozenset[str] = frozenset({"minilm-l6"})

#: Fitted on LoCoMo dev (5 conversations, 630 questions; never on test) by
#: ``recallwise tune keep --locomo DIR --split dev --depths 30`` at the shipped search depth 30
#: (``policy.budget.GATED_TOP_K``), on a 7 x 7 grid, in the log-odds of the shipped judge head
#: (``data/heads/judge.npz``, refitted 2026-12-06), with the judge reading no life domains
#: (``EPISODIC_OPTIONS``' ``judge_domains``): centre 0.75 in the judge's score units (times the
#: head's 15.84 log-odds per unit of score = 11.881 log-odds), session 1.0 -- the same choice,
#: in score units, as with the first judge head (14.4 log-odds a unit) and before any head.
#: Evidence recall at <= 5 records through the policy: 0.6944 (judge alone) -> 0.7435
#: (re-scored); 0.7435 with each dev conversation held out in turn. Multi-hop 0.4158 -> 0.4493
#: (BENCHMARKS.md). With the first judge head: 0.6926 -> 0.7366. Refit these after refitting
#: the judge head: they are in its log-odds. Not refitted for the sixth-round head (issue 49: the
#: judge reads the turn's need; 19.61 log-odds a unit of score), for lack of time: the same
#: 11.881 log-odds are 0.606 of its score units. LoCoMo test with them and that head: 0.704 at 4.37
#: records a question (BENCHMARKS.md).
CONVERSATION_WEIGHTS = ConversationWeights(centre=0.75 * 15.8415, session=1.0)

# log-odds are bounded so that a probability of exactly 0 or 1 stays finite and ordered
_EPS = 1e-15


def session_of(metadata: Mapping[str, Any] | None) -> str | None:
    """The session a record came from, as a string, or None when its metadata names none."""
    if not metadata:
        return None
    for key in SESSION_KEYS:
        value = metadata.get(key)
        if value is not None and value != "":
            return str(value)
    return None


def conversational(sessions: Sequence[str | None]) -> bool:
    """True when the records come from at least two distinct sessions: memories of conversations,
    which re-scoring and the adaptive keep budget are for (a persona's facts carry no session)."""
    return len({s for s in sessions if s is not None}) >= 2


def unfitted_reason(decider: str | None, embedder: str | None, multilingual_judged: float = 0) -> str | None:
    """None when the conversation weights and the keep budget were fitted for this turn's judge;
    otherwise why not, for the trace.

    ``decider`` is the backend's name, ``embedder`` the name of the model that made the query
    and record vectors, ``multilingual_judged`` how many records the embedded decider judged with
    its multilingual model (its judge log-odds there have another scale).
    """
    if decider != FITTED_DECIDER:
        return f"fitted for the {FITTED_DECIDER} decider's log-odds, not {decider}'s"
    if embedder not in FITTED_EMBEDDERS:
        return f"fitted with the {', '.join(sorted(FITTED_EMBEDDERS))} embedder, not {embedder}"
    if multilingual_judged:
        return "the records were judged with the multilingual model; fitted on English conversations"
    return None


def log_odds(probabilities: Sequence[float] | np.ndarray) -> np.ndarray:
    """``log(p / (1 - p))``, with ``p`` clipped into ``[1e-15, 1 - 1e-15]``."""
    p = np.clip(np.asarray(probabilities, dtype=np.float64), _EPS, 1.0 - _EPS)
    return np.asarray(np.log(p) - np.log1p(-p))


def probability(log_odds_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """The inverse of :func:`log_odds`."""
    x = np.asarray(log_odds_values, dtype=np.float64)
    return np.asarray(1.0 / (1.0 + np.exp(-x)))


def session_support(
    scores: Sequence[float] | np.ndarray,
    sessions: Sequence[str | None],
    weight: float = CONVERSATION_WEIGHTS.session,
) -> np.ndarray:
    """Each score plus ``weight * (best score in its session - best score overall)``.

    ``sessions[i]`` is candidate ``i``'s session or None; a candidate without one is a session
    of its own. The best candidate's score never changes, so the term only lowers records, and
    lowers most those whose whole session is far from the best.
    """
    values = np.asarray(scores, dtype=np.float64)
    if len(sessions) != len(values):
        raise ValueError(f"{len(values)} scores but {len(sessions)} sessions")
    if not len(values) or not weight:
        return values.copy()
    best_by_session: dict[str, float] = {}
    for value, session in zip(values, sessions, strict=True):
        if session is not None:
            best_by_session[session] = max(best_by_session.get(session, -np.inf), float(value))
    own_best = np.array(
        [best_by_session[s] if s is not None else float(v) for v, s in zip(values, sessions, strict=True)]
    )
    return np.asarray(values + weight * (own_best - values.max()))


def pool_centrality(vectors: np.ndarray) -> np.ndarray:
    """Each row's cosine to the normalised mean of all rows, minus the mean of those cosines.

    Zero on average over the set and zero for a set of one, so subtracting it reorders a set
    without moving its level (an absolute keep threshold sees the same average).
    """
    if len(vectors) < 2:
        return np.zeros(len(vectors), dtype=np.float64)
    rows = np.asarray(vectors, dtype=np.float64)
    centre = rows.mean(axis=0)
    norm = float(np.linalg.norm(centre))
    if norm == 0.0:
        return np.zeros(len(rows), dtype=np.float64)
    closeness = rows @ (centre / norm)
    return np.asarray(closeness - closeness.mean())


def rescore_by_conversation(
    scores: Sequence[float] | np.ndarray,
    vectors: np.ndarray,
    sessions: Sequence[str | None],
    *,
    centre_weight: float = CONVERSATION_WEIGHTS.centre,
    session_weight: float = CONVERSATION_WEIGHTS.session,
) -> np.ndarray:
    """Judge log-odds re-scored by pool centrality then session support; unchanged unless the
    candidates come from at least two distinct sessions.

    ``vectors[i]`` is candidate ``i``'s embedding (unit rows), ``sessions[i]`` its session.
    """
    values = np.asarray(scores, dtype=np.float64)
    if len(vectors) != len(values) or len(sessions) != len(values):
        raise ValueError(f"{len(values)} scores, {len(vectors)} vectors, {len(sessions)} sessions")
    if not conversational(sessions):
        return values.copy()
    centred = values - centre_weight * pool_centrality(vectors)
    return session_support(centred, sessions, session_weight)

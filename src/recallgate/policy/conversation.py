"""Conversation structure: re-scoring judged candidates by the sessions they came from.

Memories extracted from conversations carry the session they came from (recallgate's
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
(:func:`rescore_by_conversation`): on memories without sessions (a persona's preferences and
facts) nothing changes. Measured the other way, the centrality term inside the judge for every
set lowered the judge's mean per-query AUC on recallgate's own held-out cases from 0.971 to 0.954
(seed 0.975 -> 0.950): it belongs to conversational memories, where a search returns many
records about the same people.

The weights were fitted for the embedded decider's log-odds on LoCoMo's dev split with
``python -m recallgate.tuning.locomo_rank --locomo DIR --split dev`` (BENCHMARKS.md): evidence
recall at 5 records 0.699 (judge alone, 30 candidates per namespace) -> 0.7201 (session support)
-> 0.7449 (both); the same pair was chosen with each dev conversation held out in turn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "CENTRE_WEIGHT",
    "SESSION_KEYS",
    "SESSION_WEIGHT",
    "log_odds",
    "pool_centrality",
    "probability",
    "rescore_by_conversation",
    "session_of",
    "session_support",
]

#: metadata keys read as a record's session, first found wins
SESSION_KEYS: tuple[str, ...] = ("session_id", "session")

#: Session support, in log-odds per log-odds (fitted on LoCoMo dev, see the module docs).
SESSION_WEIGHT = 1.0

#: Pool centrality, in the embedded judge's log-odds per unit of cosine: 0.75 in its debiased
#: cosine units times its logistic scale 24.5 (fitted on LoCoMo dev, see the module docs).
CENTRE_WEIGHT = 0.75 * 24.5

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
    weight: float = SESSION_WEIGHT,
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
    centre_weight: float = CENTRE_WEIGHT,
    session_weight: float = SESSION_WEIGHT,
) -> np.ndarray:
    """Judge log-odds re-scored by pool centrality then session support; unchanged unless the
    candidates come from at least two distinct sessions.

    ``vectors[i]`` is candidate ``i``'s embedding (unit rows), ``sessions[i]`` its session.
    """
    values = np.asarray(scores, dtype=np.float64)
    if len(vectors) != len(values) or len(sessions) != len(values):
        raise ValueError(f"{len(values)} scores, {len(vectors)} vectors, {len(sessions)} sessions")
    if len({s for s in sessions if s is not None}) < 2:
        return values.copy()
    centred = values - centre_weight * pool_centrality(vectors)
    return session_support(centred, sessions, session_weight)

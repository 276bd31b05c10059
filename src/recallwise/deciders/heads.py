"""Learned heads: the calibrated models the embedded decider answers the gate and judge with.

A head is a small model over what the turn already computed, calibrated so that its output is a
probability a user can pick a threshold by:

- the **gate** head reads the message's embedding: p = P(answering this message well needs
  something stored about the user). A logistic regression (a dot product), or, fitted on 2,000
  labelled turns or more, a perceptron with one hidden layer (the shipped one: the average of
  three seeded perceptrons, stored as one);
- the **judge** head reads a few features of each (message, record) pair (:data:`JUDGE_FEATURES`),
  a logistic regression: p = P(this record belongs in the prompt for this message).

Weights depend on the embedding space, so a head holds one set per embedding model
(``minilm-l6`` for English, ``use-multilingual-v3`` for the other languages); a space the head
has no weights for is answered as before (the example vote, the debiased-similarity logistic).
Calibration (Platt scaling on a held-out split) is folded into the output weights: at run time a
head is ``sigmoid(w . x + b)``, ``x`` the features or the hidden layer's ``tanh``.

A head file is a small ``.npz`` (no pickles): ``meta`` is a JSON text (format, role, features,
spaces, the judge's life domains, provenance: data, counts, date, the fit command and its
figures), ``w<i>`` / ``b<i>`` are the output weights of the i-th space and ``h<i>`` / ``c<i>``
its hidden layer, when it has one. The shipped heads are package data
(``recallwise/data/heads``, with their datasheet); ``recallwise tune gate|judge --fit`` writes
new ones.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ..errors import UsageError
from ..text import read_user_bytes

__all__ = [
    "GATE_FEATURES",
    "HEAD_FORMAT",
    "HEAD_ROLES",
    "JUDGE_DOMAINS_FROM",
    "JUDGE_FEATURES",
    "JUDGE_READS",
    "NEED_RANGE",
    "Head",
    "HeadRole",
    "SpaceWeights",
    "file_sha256",
    "judge_width",
    "need_feature",
    "read_head",
    "shipped_head",
    "write_head",
]

HEAD_FORMAT = "recallwise-head/1"
HeadRole = Literal["gate", "judge"]
HEAD_ROLES: tuple[HeadRole, ...] = ("gate", "judge")

#: What the gate head reads: the message's embedding, then the nearest-example vote of the gate
#: question's labelled examples (mean similarity to the 3 nearest positive examples minus that to
#: the 3 nearest negative ones: the vote the embedded decider answered the gate with before it had
#: a head, and what carries the hand-written examples' kinds of request into the head).
GATE_FEATURES: tuple[str, ...] = ("embedding", "examples")

#: What the judge head reads about each record of a turn, in this order:
#:
#: - ``score``: the embedded judge's ranking score: similarity of message and record, minus the
#:   record's typical similarity to unrelated messages (a record close to every message is not
#:   evidence for this one), plus how well it fits the life domains the message is about, plus a
#:   little of the hybrid search's full-text score;
#: - ``gap``: the score minus the best record's of this turn (0 for the best);
#: - ``need``: the turn's need for memory, the log-odds of the gate's p (:data:`NEED_RANGE`; a turn
#:   something else opened, a follow-up or a name in the store, reads the top of the range). It is
#:   what lets the judge say "nothing belongs": a general request the gate opened on at a low p
#:   has records that score as well as a request's, and none of them belongs;
#: - ``domains``: which life domains bear on which (D x D numbers, D = the domain bank's size,
#:   ``recallwise/data/domains.json``): the message's distribution over the life domains times
#:   the record's affinity to each domain (relative to its mean affinity), one product per pair.
#:   Its weights are a learned table of which records bear on which requests: an allergy on a
#:   restaurant booking, a seat preference on a flight, not the reverse.
#:
#: The head maps them to a calibrated probability, P(this record belongs) for this pair, on its
#: own: the gap makes the count kept follow the evidence (a record far behind a clear best is
#: unlikely to belong, one level with several others likely), the need makes it 0 where nothing
#: belongs.
JUDGE_FEATURES: tuple[str, ...] = ("score", "gap", "need", "domains")
#: Where the ``domains`` block starts. A judge head fitted without it (``tune judge`` unless
#: ``--domain-table``; the shipped one) reads the features before it: score, gap and need.
JUDGE_DOMAINS_FROM = JUDGE_FEATURES.index("domains")
#: the judge heads this recallwise reads: the features above, without the ``domains`` block, and
#: the fifth round's (score and gap: heads fitted before the ``need`` feature)
JUDGE_READS: tuple[tuple[str, ...], ...] = (
    JUDGE_FEATURES,
    JUDGE_FEATURES[:JUDGE_DOMAINS_FROM],
    ("score", "gap"),
)
#: the gate's p the ``need`` feature is clipped to before its log-odds; a turn the gate did not
#: open on its own (a follow-up, a name in the store, no gate asked) reads the top
NEED_RANGE = (0.01, 0.99)


def judge_width(domains: int, need: bool = True) -> int:
    """How many numbers the judge head reads per record with a bank of ``domains`` life domains
    (0: a head without the ``domains`` block), with the ``need`` feature or without it."""
    return JUDGE_DOMAINS_FROM - (0 if need else 1) + domains * domains


def need_feature(need: float | None) -> float:
    """The ``need`` feature of a turn whose gate answered ``need`` (None: it was opened otherwise)."""
    low, high = NEED_RANGE
    p = high if need is None else min(high, max(low, float(need)))
    return float(np.log(p / (1.0 - p)))


@dataclass(frozen=True)
class SpaceWeights:
    """A head's weights for one embedding space.

    A logistic head: ``logits(x) = x @ weights + bias``. A head with a hidden layer (a small
    multi-layer perceptron, ``hidden`` of shape inputs x units, stored and held as float32):
    ``logits(x) = tanh(x @ hidden + hidden_bias) @ weights + bias``, the product ``x @ hidden``
    taken in float32 (the stored precision; the rest in float64).
    """

    embedder: str
    weights: np.ndarray
    bias: float
    #: labelled examples these weights were fitted on (before calibration)
    n: int = 0
    hidden: np.ndarray | None = None
    hidden_bias: np.ndarray | None = None

    def __post_init__(self) -> None:
        # held in float32, as it is stored (and fitted: tuning.gate_head): a gate turn reads it
        # from memory that other work has evicted, and half the bytes are half that wait
        if self.hidden is not None:
            hidden = np.ascontiguousarray(self.hidden, dtype=np.float32)
            hidden.flags.writeable = False
            object.__setattr__(self, "hidden", hidden)

    @property
    def inputs(self) -> int:
        """How many numbers the head reads."""
        return int(self.hidden.shape[0] if self.hidden is not None else self.weights.shape[0])

    def logits(self, x: np.ndarray) -> np.ndarray:
        if self.hidden is not None:
            # the product in float32 (the embedding's own precision), the rest in float64
            units = np.asarray(x, dtype=np.float32) @ self.hidden
            z = np.tanh(units.astype(np.float64) + self.hidden_bias)
        else:
            z = np.asarray(x, dtype=np.float64)
        return np.asarray(z @ self.weights + self.bias)

    def probability(self, x: np.ndarray) -> float:
        z = float(self.logits(x))
        return float(1.0 / (1.0 + np.exp(-z)))


@dataclass(frozen=True)
class Head:
    """A learned, calibrated gate or judge head (see the module docs)."""

    role: HeadRole
    spaces: Mapping[str, SpaceWeights]
    #: what the head reads (:data:`GATE_FEATURES`, :data:`JUDGE_FEATURES`)
    features: tuple[str, ...] = ()
    #: where the weights came from: data, its sha256, counts, date, the fit command and its figures
    provenance: Mapping[str, Any] = field(default_factory=dict)
    #: where this head was loaded from: "shipped", a config (``config PATH``), a file or "argument"
    origin: str = "argument"
    #: the life domains a judge head's ``domains`` weights are for, by name, in order (empty for a
    #: gate head): the bank it was fitted with (``recallwise/data/domains.json``)
    domains: tuple[str, ...] = ()

    def for_space(self, embedder: str | None) -> SpaceWeights | None:
        """The weights for vectors made by ``embedder`` (None when the head has none)."""
        return self.spaces.get(embedder or "")

    def with_origin(self, origin: str) -> Head:
        return replace(self, origin=origin)

    @property
    def thresholds(self) -> dict[str, float]:
        """The thresholds measured with this head when it was fitted (``provenance["thresholds"]``):
        ``{"gate": p}`` for a gate head, ``{"judge": p, "judge_relative": d}`` for a judge head."""
        found = self.provenance.get("thresholds") or {}
        return {str(k): float(v) for k, v in found.items() if isinstance(v, (int, float))}

    def describe(self) -> str:
        """One line for ``stats.report()`` and the trace: where it came from, spaces, size, date."""
        p = self.provenance
        parts = [f"{self.role} head: {self.origin}", "+".join(self.spaces)]
        if p.get("n"):
            parts.append(f"n={p['n']}")
        if p.get("date"):
            parts.append(str(p["date"]))
        return ", ".join(parts)

    def check_dimension(self, embedder: str, dimension: int, where: str = "") -> None:
        """A :class:`UsageError` when this head's weights for ``embedder`` do not fit its vectors."""
        weights = self.for_space(embedder)
        if weights is None or self.role != "gate":
            return
        if weights.inputs != dimension + 1:
            raise UsageError(
                f"{where or self.origin}: the gate head's {embedder} weights read "
                f"{weights.inputs - 1} dimensions; the embedder makes {dimension}"
            )

    @property
    def reads_domains(self) -> bool:
        """Whether this judge head reads the life-domain table (the ``domains`` features)."""
        return "domains" in self.features

    @property
    def reads_need(self) -> bool:
        """Whether this judge head reads the turn's need for memory (the ``need`` feature)."""
        return "need" in self.features

    def check_domains(self, domains: tuple[str, ...], where: str = "") -> None:
        """A :class:`UsageError` when this judge head was fitted with another life-domain bank."""
        if self.role == "judge" and self.reads_domains and self.domains != tuple(domains):
            raise UsageError(
                f"{where or self.origin}: the judge head was fitted with {len(self.domains)} life "
                f"domains ({', '.join(self.domains[:4])}, ...); this recallwise has {len(domains)} "
                f"({', '.join(domains[:4])}, ...): refit it with `recallwise tune judge --fit`"
            )


def file_sha256(path: str | os.PathLike[str]) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def write_head(head: Head, path: str | os.PathLike[str]) -> Path:
    """Write ``head`` to ``path`` (``.npz``), atomically; returns the path."""
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{path}: is a directory, expected a head file path (.npz)")
    meta = {
        "format": HEAD_FORMAT,
        "role": head.role,
        "features": list(head.features),
        "spaces": [{"embedder": name, "n": w.n} for name, w in head.spaces.items()],
        "provenance": dict(head.provenance),
        "domains": list(head.domains),
    }
    arrays: dict[str, np.ndarray] = {"meta": np.array(json.dumps(meta, ensure_ascii=False, sort_keys=True))}
    for i, weights in enumerate(head.spaces.values()):
        arrays[f"w{i}"] = np.asarray(weights.weights, dtype=np.float64)
        arrays[f"b{i}"] = np.array(float(weights.bias))
        if weights.hidden is not None and weights.hidden_bias is not None:
            arrays[f"h{i}"] = np.asarray(weights.hidden, dtype=np.float32)
            arrays[f"c{i}"] = np.asarray(weights.hidden_bias, dtype=np.float64)
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = target.with_name(f".{target.name}.tmp.npz")
    with scratch.open("wb") as handle:
        np.savez_compressed(handle, **arrays)  # type: ignore[arg-type]
    os.replace(scratch, target)
    return target


def read_head(
    path: str | os.PathLike[str], role: HeadRole | None = None, *, origin: str | None = None
) -> Head:
    """Read a head file; a missing, malformed or wrong-role file is a :class:`UsageError` naming it."""
    where = str(path)
    data = read_user_bytes(path, "a head file (.npz)", "head file")
    return _parse(io.BytesIO(data), where, role, origin or where)


def _parse(handle: Any, where: str, role: HeadRole | None, origin: str) -> Head:
    try:
        with np.load(handle, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}
    except (ValueError, OSError, EOFError) as exc:
        raise UsageError(f"{where}: not a recallwise head file (.npz): {exc}") from None
    try:
        meta = json.loads(str(arrays["meta"]))
    except (KeyError, ValueError):
        raise UsageError(f"{where}: not a recallwise head file (no readable 'meta')") from None
    if not isinstance(meta, dict) or meta.get("format") != HEAD_FORMAT:
        raise UsageError(f"{where}: not a recallwise head file (expected format {HEAD_FORMAT!r})")
    found = meta.get("role")
    if found not in HEAD_ROLES:
        raise UsageError(f"{where}: unknown head role {found!r}; known: {', '.join(HEAD_ROLES)}")
    if role is not None and found != role:
        raise UsageError(f"{where}: is a {found} head, not a {role} head")
    features = tuple(str(f) for f in meta.get("features") or ())
    expected = (GATE_FEATURES,) if found == "gate" else JUDGE_READS
    if features not in expected:
        raise UsageError(
            f"{where}: the {found} head reads {list(features)}; this recallwise computes "
            f"{list(expected[0])}: refit it with `recallwise tune {found} --fit`"
        )
    domains = tuple(str(d) for d in meta.get("domains") or ())
    table = found == "judge" and "domains" in features
    if table and not domains:
        raise UsageError(
            f"{where}: the judge head names no life domains: refit it with `recallwise tune judge --fit`"
        )
    spaces: dict[str, SpaceWeights] = {}
    for i, space in enumerate(meta.get("spaces") or ()):
        try:
            weights = np.asarray(arrays[f"w{i}"], dtype=np.float64)
            bias = float(arrays[f"b{i}"])
            name = str(space["embedder"])
        except (KeyError, TypeError, ValueError):
            raise UsageError(f"{where}: space {i} has no weights") from None
        if weights.ndim != 1 or not np.isfinite(weights).all() or not np.isfinite(bias):
            raise UsageError(f"{where}: space {name!r} has malformed weights")
        hidden, hidden_bias = arrays.get(f"h{i}"), arrays.get(f"c{i}")
        if (hidden is None) != (hidden_bias is None):
            raise UsageError(f"{where}: space {name!r} has half a hidden layer")
        if hidden is not None and hidden_bias is not None:
            hidden = np.asarray(hidden, dtype=np.float32)
            hidden_bias = np.asarray(hidden_bias, dtype=np.float64)
            units = weights.shape[0]
            if (
                found != "gate"
                or hidden.ndim != 2
                or hidden.shape[1] != units
                or hidden_bias.shape != (units,)
                or not np.isfinite(hidden).all()
                or not np.isfinite(hidden_bias).all()
            ):
                raise UsageError(f"{where}: space {name!r} has a malformed hidden layer")
        width = judge_width(len(domains) if table else 0, "need" in features)
        if found == "judge" and weights.shape != (width,):
            raise UsageError(
                f"{where}: space {name!r} has {weights.shape[0]} judge weights; it reads {list(features)}"
                + (f" of {len(domains)} life domains" if table else "")
                + f": {width}"
            )
        spaces[name] = SpaceWeights(name, weights, bias, int(space.get("n") or 0), hidden, hidden_bias)
    if not spaces:
        raise UsageError(f"{where}: the head has no weights")
    return Head(found, spaces, features, dict(meta.get("provenance") or {}), origin, domains)


@cache
def shipped_head(role: HeadRole) -> Head | None:
    """The head shipped in the wheel for ``role`` (package data ``recallwise/data/heads``)."""
    resource = resources.files("recallwise.data.heads").joinpath(f"{role}.npz")
    if not resource.is_file():
        return None
    with resource.open("rb") as handle:
        return _parse(handle, f"recallwise/data/heads/{role}.npz", role, "shipped")

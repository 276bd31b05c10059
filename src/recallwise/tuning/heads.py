"""Fitting the learned gate and judge heads on labelled turns (``recallwise tune gate|judge --fit``):
what both fits share.

Both heads are fitted in numpy (so the default install can refit them) and then calibrated by
Platt scaling, whose two numbers are folded into the output weights
(:mod:`recallwise.deciders.heads`). The work is split by job:

- :mod:`.fitting`: the numerical part (logistic regression, perceptrons, Platt scaling, folds);
- :mod:`.gate_head`: the **gate** head on the message's embedding, one set of weights per embedding
  space the embedded decider answers in: the English model's on the English turns, the
  multilingual model's on every turn (its space is shared by its 16 languages);
- :mod:`.judge_head`: the **judge** head on the judge's features of every record the policy's search
  returns for the turn, and its keep rule;
- this module: what a fit returns (:class:`HeadFit`) and the helpers both fits use (the decider and
  its spaces, embeddings cached per space, counts and digests for the provenance).

The logistic L2 strength is chosen by cross-validated log loss on the fit data. Calibration is on
the ``calibration`` turns when given (a held-out split), otherwise on out-of-fold predictions (each
turn predicted by a model fitted without it). ``HeadFit.before`` is the current decider (its
shipped or given heads) on the turns the fit is graded on, ``HeadFit.after`` the new head on the
same turns: out of fold, or the calibration turns.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..deciders.embedded import EmbeddedDecider, Space
from ..deciders.heads import Head, HeadRole, write_head
from ..embeddings import Embedder
from ..embeddings.language import guess_language
from ..errors import UsageError
from .labelled import LabelledTurn

__all__ = [
    "MIN_JUDGE_TURNS",
    "MIN_PER_CLASS",
    "MIN_TURNS",
    "HeadFit",
    "Progress",
    "Vectors",
    "counts",
    "decider_for",
    "digest",
    "no_text",
    "policy_thresholds",
    "space_name",
    "spaces_of",
]

Progress = Callable[[int], None]

#: the fewest labelled turns a gate head is fitted on, and the fewest of each class
MIN_TURNS = 20
MIN_PER_CLASS = 5
#: the fewest turns with labelled records a judge head is fitted on
MIN_JUDGE_TURNS = 10


# ---- what a fit returns -----------------------------------------------------------------------


@dataclass
class HeadFit:
    """A fitted, calibrated head and the figures before and after it, on the same turns.

    ``before`` / ``after`` hold the same keys: ``n``, ``accuracy``, ``auc``, ``ece`` (and more:
    the gate's open and closed rates; the judge's ``records_kept_per_request`` and ``right_kept``).
    """

    role: HeadRole
    head: Head
    before: dict[str, Any]
    after: dict[str, Any]
    #: what ``after`` was measured on: "out of fold" or "calibration turns"
    graded_on: str
    notes: list[str] = field(default_factory=list)
    #: the reliability table of ``after`` (per bin of p: n, mean p, observed rate)
    reliability: list[dict[str, float]] = field(default_factory=list)

    def write(self, path: str | Path) -> Path:
        """Write the head (``.npz``); the file then loads with ``read_head`` or from a config."""
        return write_head(self.head, path)

    def as_dict(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "spaces": {
                name: {"n": w.n, "l2": self.head.provenance.get("fit", {}).get(name, {}).get("l2")}
                for name, w in self.head.spaces.items()
            },
            "graded_on": self.graded_on,
            "before": self.before,
            "after": self.after,
            "reliability": self.reliability,
            "notes": self.notes,
            "provenance": dict(self.head.provenance),
        }


# ---- shared helpers ---------------------------------------------------------------------------


def decider_for(embedder: Embedder | None, current: EmbeddedDecider | None) -> EmbeddedDecider:
    if current is not None:
        if embedder is not None and current.embedder.name != embedder.name:
            raise UsageError(
                f"the current decider embeds with {current.embedder.name}, the fit with {embedder.name}"
            )
        return current
    return EmbeddedDecider(embedder)


def spaces_of(decider: EmbeddedDecider) -> list[Space]:
    return ["primary", "multilingual"] if decider.multilingual_decider() is not None else ["primary"]


def space_name(decider: EmbeddedDecider, space: Space) -> str:
    return str(decider.space_decider(space).embedder.name)


class Vectors:
    """Embeddings of texts in each space, embedded once, in batches."""

    def __init__(self, decider: EmbeddedDecider, progress: Progress | None = None) -> None:
        self.decider = decider
        self.progress = progress
        self._cache: dict[Space, dict[str, np.ndarray]] = {"primary": {}, "multilingual": {}}

    def __call__(self, space: Space, texts: Sequence[str]) -> np.ndarray:
        cache = self._cache[space]
        missing = [t for t in dict.fromkeys(texts) if t not in cache]
        embedder = self.decider.space_decider(space).embedder
        for start in range(0, len(missing), 64):
            batch = missing[start : start + 64]
            for text, vector in zip(batch, embedder.embed(batch), strict=True):
                cache[text] = np.asarray(vector, dtype=np.float32)
            if self.progress is not None:
                self.progress(len(batch))
        if not texts:
            return np.zeros((0, embedder.dimension), dtype=np.float32)
        return np.stack([cache[t] for t in texts])


def digest(turns: Iterable[LabelledTurn]) -> str:
    h = hashlib.sha256()
    for t in turns:
        h.update(repr(t.as_dict()).encode("utf-8"))
    return h.hexdigest()


def counts(turns: Sequence[LabelledTurn], gate: bool) -> dict[str, Any]:
    by_lang: dict[str, dict[str, int]] = {}
    by_source: dict[str, int] = {}
    for t in turns:
        lang = t.lang or ("en" if guess_language(t.text or "").kind in ("english", "none") else "other")
        key = "true" if (t.label if gate else t.relevant) else "false"
        by_lang.setdefault(lang, {"true": 0, "false": 0})[key] += 1
        by_source[t.source or "-"] = by_source.get(t.source or "-", 0) + 1
    return {"by_lang": dict(sorted(by_lang.items())), "by_source": dict(sorted(by_source.items()))}


def no_text(turn: LabelledTurn) -> UsageError:
    return UsageError(
        f"{turn.where}: no text (a label from the decision log: take texts from it with "
        "--from-log LOG.db --labels LABELS)"
    )


def policy_thresholds(decider: EmbeddedDecider) -> dict[str, float]:
    """The thresholds a default policy over ``decider`` uses (its heads' operating points)."""
    from ..policy.thresholds import Thresholds

    return dict(Thresholds.resolve("embedded", head=decider.head_thresholds()).values)

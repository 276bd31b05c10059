"""``sparrow``: sparrow-decider in-process (``pip install 'recallwise[sparrow]'``).

sparrow-decider ships its few-MB decision models inside the wheel and runs on numpy only,
so a call costs about a millisecond and needs no network. It speaks the systemone shape
itself; this backend validates the request first, reads the answers through the same code
as the ``systemone`` HTTP backend (so a local ``sparrow-decider serve`` behind ``systemone``
gives the same answers), and reports a state longer than the model reads.

Options: ``model`` (``RECALLWISE_SPARROW_MODEL``; a bundled model name such as
``nano-robot`` or a ``.sparrow`` file; default: sparrow's own default model).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..errors import DeciderError, UsageError
from ..extras import require_extra
from .base import BaseDecider, Capabilities, DecisionHints, Reply
from .questions import Question
from .wire import answers_from_body

__all__ = ["SparrowDecider"]


def _import_sparrow() -> Any:
    require_extra("sparrow", "the sparrow decider")
    import sparrow_decider

    return sparrow_decider


class SparrowDecider(BaseDecider):
    """sparrow-decider's model, loaded once, answering in-process."""

    name = "sparrow"
    #: in-process (about a millisecond): the policy calls it directly, without a timeout thread
    capabilities = Capabilities(local=True)

    def __init__(self, model: str | None = None) -> None:
        sparrow = _import_sparrow()
        model = model or os.environ.get("RECALLWISE_SPARROW_MODEL") or None
        try:
            self._model = sparrow.Decider.load(model)
        except FileNotFoundError as exc:
            raise UsageError(f"sparrow: {exc}") from exc
        self.model = str(self._model.name)
        self.version = str(getattr(sparrow, "__version__", "?"))

    def _tokenizer_limit(self) -> tuple[Any, int] | None:
        """The model's tokenizer and how many state tokens it reads (None if unknown)."""
        static = getattr(self._model, "static", None)
        if static is not None and hasattr(static, "tok"):
            return static.tok, int(static.max_len)
        tok = getattr(self._model, "tok", None)
        if tok is not None:
            return tok, int(getattr(self._model, "max_len", 512))
        return None

    def _limit_state(self, state: str, warnings: list[str]) -> str:
        """Warn when the model will read only part of the state (sparrow cuts it silently)."""
        state = super()._limit_state(state, warnings)  # a character limit, when one is set
        found = self._tokenizer_limit()
        if found is None:
            return state
        tok, limit = found
        try:
            # The static models' WordPiece stops at its max_len argument: one past the limit tells.
            static = getattr(self._model, "static", None) is not None
            ids = tok.encode(state, limit + 1) if static else tok.encode(state)
        except Exception:  # an unknown tokenizer API: say nothing rather than guess
            return state
        if len(ids) > limit:
            size = f"more than {limit}" if static else str(len(ids))
            warnings.append(
                f"state is {size} tokens; sparrow model {self.model} reads at most {limit} "
                "(the model cuts the rest)"
            )
        return state

    def _answer(self, state: str, questions: Mapping[str, Question], hints: DecisionHints) -> Reply:
        wire = {name: q.to_wire() for name, q in questions.items()}
        try:
            raw = self._model.ask(state, wire)
        except (ValueError, KeyError, TypeError) as exc:  # sparrow refusing a question it cannot read
            error = DeciderError(f"sparrow: {type(exc).__name__}: {exc}")
            error.kind = "bad_request"
            raise error from exc
        return Reply(answers_from_body(self.name, questions, {"answers": raw}))

    def __repr__(self) -> str:
        return f"SparrowDecider(model={self.model!r})"

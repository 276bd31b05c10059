"""The systemone wire shape shared by sparrow-decider, strands-decider, opendecider and Jev.

Request: ``{"state", "model"?, "questions": {name: {type, instructions, criteria}}}``.
Answer: ``{"answers": {name: answer}, "usage": {...}, "latency_ms"?}`` where a score answer
carries ``score`` as the *expected level* (a float), ``legend`` as ``{index: text}`` and
``probabilities`` keyed by level index. :func:`answers_from_body` turns that into
recallwise's answers (a score answer's ``score`` becomes the most probable level) and
validates them with :func:`~recallwise.deciders.questions.parse_answers`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import DeciderBadResponse
from ..http import backend_error, error_from_body
from .questions import Answer, ChoiceAnswer, Question, ScoreAnswer, parse_answers

__all__ = ["answers_from_body", "answers_to_wire", "normalise_answers", "systemone_request"]


def systemone_request(
    state: str, questions: Mapping[str, Question], *, model: str | None = None
) -> dict[str, Any]:
    """The request body for one state and its questions."""
    body: dict[str, Any] = {"state": state, "questions": {n: q.to_wire() for n, q in questions.items()}}
    if model:
        body["model"] = model
    return body


def _score_levels(backend: str, name: str, question: Question, raw: Mapping[str, Any]) -> list[Any]:
    """A score answer's probabilities as a list in level order, whatever they were keyed by."""
    levels = question.options
    probs = raw.get("probabilities")
    if isinstance(probs, list):
        return probs
    if not isinstance(probs, Mapping):
        raise backend_error(
            DeciderBadResponse,
            f"{backend}: answer {name!r}: a score answer needs probabilities, got {probs!r}",
            backend_kind="bad_answer",
        )
    out = []
    for i, level in enumerate(levels):
        if str(i) in probs:
            out.append(probs[str(i)])
        elif level in probs:
            out.append(probs[level])
        else:
            raise backend_error(
                DeciderBadResponse,
                f"{backend}: answer {name!r}: no probability for level {i} ({level!r}) in {dict(probs)}",
                backend_kind="bad_answer",
            )
    return out


def normalise_answers(backend: str, questions: Mapping[str, Question], raw: Any) -> dict[str, Any]:
    """Systemone answers in the shape :func:`parse_answers` reads.

    A score answer's ``score`` is the expected level on the wire (``1.24``); recallwise's
    :class:`ScoreAnswer` holds the most probable level instead, with the full distribution
    (the expectation is ``ScoreAnswer.expected``).
    """
    if not isinstance(raw, Mapping):
        raise backend_error(
            DeciderBadResponse,
            f"{backend}: 'answers' must be an object keyed by question, got {type(raw).__name__}",
            backend_kind="bad_answer",
        )
    out: dict[str, Any] = dict(raw)
    for name, question in questions.items():
        answer = raw.get(name)
        if question.type != "score" or not isinstance(answer, Mapping):
            continue
        probs = _score_levels(backend, name, question, answer)
        fixed = dict(answer)
        fixed["probabilities"] = probs
        try:
            fixed["score"] = max(range(len(probs)), key=lambda i: float(probs[i]))
        except (TypeError, ValueError):
            fixed.pop("score", None)  # parse_answers names the bad probability
        fixed["legend"] = question.options
        out[name] = fixed
    return out


def answers_from_body(backend: str, questions: Mapping[str, Question], body: Any) -> dict[str, Answer]:
    """Validated answers from a systemone response body (HTTP 200)."""
    if not isinstance(body, Mapping):
        raise backend_error(
            DeciderBadResponse,
            f"{backend}: expected a JSON object with 'answers', got {type(body).__name__}",
            backend_kind="bad_answer",
        )
    if "answers" not in body:
        if "error" in body or "detail" in body:
            # Some servers report a refused request in a 200 body.
            raise error_from_body(backend, 0, body)
        raise backend_error(
            DeciderBadResponse,
            f"{backend}: no 'answers' in the response (keys: {', '.join(map(str, body)) or 'none'})",
            backend_kind="bad_answer",
        )
    raw = normalise_answers(backend, questions, body["answers"])
    try:
        return parse_answers(questions, raw)
    except DeciderBadResponse as exc:
        raise backend_error(DeciderBadResponse, f"{backend}: {exc}", backend_kind="bad_answer") from exc


def answers_to_wire(answers: Mapping[str, Answer]) -> dict[str, Any]:
    """Answers as systemone-shaped JSON (what ``recallwise ask --json`` prints)."""
    out: dict[str, Any] = {}
    for name, answer in answers.items():
        if isinstance(answer, (ChoiceAnswer, ScoreAnswer)):
            out[name] = answer.to_wire()
        else:
            out[name] = {"type": "noul", "noul": float(answer)}
    return out

"""The typed-question contract ("system one" shape) shared by every decision backend.

A request is ``{state, questions: {name: {type, instructions, criteria, examples?}}}``; an
answer is ``{name: answer}`` where a ``noul`` answer is a probability in [0, 1], a ``choice``
answer a :class:`ChoiceAnswer` and a ``score`` answer a :class:`ScoreAnswer`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

from ..errors import DeciderBadResponse, QuestionError

__all__ = [
    "MAX_QUESTIONS",
    "Answer",
    "ChoiceAnswer",
    "Example",
    "Question",
    "ScoreAnswer",
    "as_question",
    "parse_answers",
    "validate_request",
]

QuestionType = Literal["noul", "choice", "score"]
MAX_QUESTIONS = 64
MAX_CHOICES = 255
MAX_LEVELS = 10


@dataclass(frozen=True)
class Example:
    """A labelled example state for a question (``label``: bool for noul, option name otherwise)."""

    state: str
    label: bool | str


@dataclass(frozen=True)
class Question:
    """One typed question about a state.

    ``subject`` is the text the question is about when it is not the state itself (the judge
    asks one question per memory record). Wire backends splice it into the instructions;
    the embedded decider compares it with the state directly.

    ``role`` says which of the policy's questions this is (``"gate"``, ``"judge"``): a backend
    with a learned head for that role and the turn's embedding space may answer with it (the
    embedded decider does, :mod:`recallwise.deciders.heads`). It never goes on the wire.
    """

    type: QuestionType
    instructions: str
    criteria: Mapping[str, str] | tuple[str, ...] | None = None
    examples: tuple[Example, ...] = ()
    subject: str | None = field(default=None, compare=False)
    role: str | None = None

    def to_wire(self, *, with_examples: bool = False) -> dict[str, Any]:
        """The question as the systemone JSON object."""
        instructions = self.instructions
        if self.subject is not None:
            instructions = f"{instructions}\nMemory: {self.subject}"
        wire: dict[str, Any] = {"type": self.type, "instructions": instructions}
        if self.criteria is not None:
            wire["criteria"] = (
                list(self.criteria) if isinstance(self.criteria, tuple) else dict(self.criteria)
            )
        if with_examples and self.examples:
            wire["examples"] = [{"state": e.state, "label": e.label} for e in self.examples]
        return wire

    @property
    def options(self) -> list[str]:
        """Option names of a choice question, level texts of a score question."""
        if self.type == "choice" and isinstance(self.criteria, Mapping):
            return [str(k) for k in self.criteria]
        if self.type == "score" and self.criteria is not None:
            return [str(v) for v in self.criteria]
        return []


@dataclass
class ChoiceAnswer:
    choice: str
    probabilities: dict[str, float]
    confidence: float

    def to_wire(self) -> dict[str, Any]:
        """The answer as the systemone JSON object: its type, then its fields."""
        return {"type": "choice", **vars(self)}


@dataclass
class ScoreAnswer:
    score: int
    legend: list[str]
    probabilities: list[float]
    confidence: float

    @property
    def expected(self) -> float:
        """The probability-weighted level, scaled to [0, 1]."""
        if len(self.probabilities) < 2:
            return 0.0
        n = len(self.probabilities) - 1
        return float(sum(i * p for i, p in enumerate(self.probabilities)) / n)

    def to_wire(self) -> dict[str, Any]:
        """The answer as the systemone JSON object: its type, then its fields."""
        return {"type": "score", **vars(self)}


Answer: TypeAlias = float | ChoiceAnswer | ScoreAnswer


# ---- building and validating requests ------------------------------------------------


def as_question(name: str, spec: Question | Mapping[str, Any]) -> Question:
    """Build a :class:`Question` from a wire dict (or pass one through), validating it."""
    if isinstance(spec, Question):
        question = spec
    else:
        if not isinstance(spec, Mapping):
            raise QuestionError(f"question {name!r}: expected an object, got {type(spec).__name__}")
        kind = spec.get("type", "noul")
        criteria = spec.get("criteria")
        if isinstance(criteria, list):
            criteria = tuple(criteria)
        examples = tuple(
            e if isinstance(e, Example) else Example(str(e["state"]), e["label"])
            for e in spec.get("examples") or ()
        )
        question = Question(
            type=kind,
            instructions=spec.get("instructions", ""),
            criteria=criteria,
            examples=examples,
            subject=spec.get("subject"),
        )
    if not _known_valid(question):
        _validate_question(name, question)
        _remember_valid(question)
    return question


#: id(criteria) -> (type, instructions, criteria) of questions already found valid. A judge asks
#: one wording (one criteria object) about every record of a turn: validating 60 alike questions
#: was a fifth of the judge's time. The criteria object is held, so its id cannot be reused.
_VALID: dict[int, tuple[str, str, object]] = {}


def _known_valid(q: Question) -> bool:
    seen = _VALID.get(id(q.criteria))
    return seen is not None and seen[2] is q.criteria and seen[0] == q.type and seen[1] == q.instructions


def _remember_valid(q: Question) -> None:
    # only criteria nobody can change afterwards (a tuple, a read-only mapping) are remembered
    if isinstance(q.criteria, (tuple, MappingProxyType)) and len(_VALID) < 1024:
        _VALID[id(q.criteria)] = (q.type, q.instructions, q.criteria)


def _validate_question(name: str, q: Question) -> None:
    if q.type not in ("noul", "choice", "score"):
        raise QuestionError(f"question {name!r}: unknown type {q.type!r} (noul, choice or score)")
    if not isinstance(q.instructions, str):
        raise QuestionError(f"question {name!r}: instructions must be a string")
    criteria = q.criteria
    if q.type == "noul":
        if criteria is None:
            return
        if not isinstance(criteria, Mapping) or not criteria.keys() <= {"true", "false"}:
            raise QuestionError(f"question {name!r}: noul criteria must be {{'true': str, 'false': str}}")
        if not all(isinstance(v, str) for v in criteria.values()):
            raise QuestionError(f"question {name!r}: criteria values must be strings")
    elif q.type == "choice":
        if not isinstance(criteria, Mapping):
            raise QuestionError(f"question {name!r}: a choice needs criteria {{option: description}}")
        if not 2 <= len(criteria) <= MAX_CHOICES:
            raise QuestionError(
                f"question {name!r}: a choice needs 2 to {MAX_CHOICES} options, got {len(criteria)}"
            )
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in criteria.items()):
            raise QuestionError(f"question {name!r}: choice options and descriptions must be strings")
    else:
        if not isinstance(criteria, tuple):
            raise QuestionError(f"question {name!r}: a score needs criteria: a list of levels")
        if not 2 <= len(criteria) <= MAX_LEVELS:
            raise QuestionError(
                f"question {name!r}: a score needs 2 to {MAX_LEVELS} levels, got {len(criteria)}"
            )
        if not all(isinstance(v, str) for v in criteria):
            raise QuestionError(f"question {name!r}: score levels must be strings")


def validate_request(
    state: Any, questions: Mapping[str, Question | Mapping[str, Any]]
) -> dict[str, Question]:
    """Check a whole request before any network call; returns the parsed questions."""
    if not isinstance(state, str) or not state.strip():
        raise QuestionError("the state is empty: there is nothing to decide about")
    if not isinstance(questions, Mapping) or not questions:
        raise QuestionError("no questions asked")
    if len(questions) > MAX_QUESTIONS:
        raise QuestionError(f"{len(questions)} questions in one call; at most {MAX_QUESTIONS}")
    out: dict[str, Question] = {}
    for name, spec in questions.items():
        key = name if type(name) is str else str(name)
        # a question already found valid (the judge's 60 alike ones) without a call for each
        if type(spec) is Question and _known_valid(spec):
            out[key] = spec
        else:
            out[key] = as_question(key, spec)
    return out


# ---- parsing answers -----------------------------------------------------------------


def _probability(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DeciderBadResponse(f"{where}: expected a probability, got {value!r}")
    try:
        p = float(value)
    except OverflowError:
        raise DeciderBadResponse(f"{where}: probability {value!r} is outside [0, 1]") from None
    if not math.isfinite(p) or p < 0.0 or p > 1.0:
        raise DeciderBadResponse(f"{where}: probability {p!r} is outside [0, 1]")
    return p


def _parse_one(name: str, question: Question, raw: Any) -> Answer:
    if question.type == "noul":
        if isinstance(raw, Mapping):
            for key in ("noul", "probability", "p", "value"):
                if key in raw:
                    return _probability(raw[key], f"answer {name!r}")
            raise DeciderBadResponse(f"answer {name!r}: no 'noul' probability in {raw!r}")
        return _probability(raw, f"answer {name!r}")
    if not isinstance(raw, Mapping):
        raise DeciderBadResponse(f"answer {name!r}: a {question.type} answer must be an object, got {raw!r}")
    if isinstance(raw, (ChoiceAnswer, ScoreAnswer)):  # pragma: no cover - dataclasses are not Mappings
        return raw
    options = question.options
    if question.type == "choice":
        probs_raw = raw.get("probabilities")
        if isinstance(probs_raw, list) and len(probs_raw) == len(options):
            probs_raw = dict(zip(options, probs_raw, strict=True))
        if not isinstance(probs_raw, Mapping):
            raise DeciderBadResponse(f"answer {name!r}: choice answer has no probabilities")
        probs = {str(k): _probability(v, f"answer {name!r}[{k}]") for k, v in probs_raw.items()}
        unknown = set(probs) - set(options)
        if unknown:
            raise DeciderBadResponse(f"answer {name!r}: unknown options {sorted(unknown)}")
        choice = raw.get("choice")
        if choice is None and probs:
            choice = max(probs, key=lambda k: probs[k])
        if choice not in options:
            raise DeciderBadResponse(f"answer {name!r}: choice {choice!r} is not one of {options}")
        confidence = raw.get("confidence", probs.get(str(choice), 0.0))
        return ChoiceAnswer(str(choice), probs, _probability(confidence, f"answer {name!r} confidence"))
    # score
    probs_list = raw.get("probabilities")
    if isinstance(probs_list, Mapping):
        probs_list = [probs_list.get(str(i), probs_list.get(level, 0.0)) for i, level in enumerate(options)]
    if not isinstance(probs_list, list) or len(probs_list) != len(options):
        raise DeciderBadResponse(f"answer {name!r}: score answer needs {len(options)} probabilities")
    levels = [_probability(v, f"answer {name!r}[{i}]") for i, v in enumerate(probs_list)]
    score = raw.get("score", max(range(len(levels)), key=lambda i: levels[i]))
    if isinstance(score, bool) or not isinstance(score, int) or not 0 <= score < len(options):
        raise DeciderBadResponse(f"answer {name!r}: score {score!r} is not a level index")
    legend = raw.get("legend", options)
    confidence = raw.get("confidence", levels[score])
    return ScoreAnswer(
        score,
        [str(x) for x in legend] if isinstance(legend, list) else options,
        levels,
        _probability(confidence, f"answer {name!r} confidence"),
    )


def parse_answers(questions: Mapping[str, Question], raw: Any) -> dict[str, Answer]:
    """Validate a backend's answers: every question answered, probabilities in [0, 1].

    A missing answer is an error (never silently 1.0). Accepts plain floats for noul
    answers and the systemone answer objects (``{"type": "noul", "noul": 0.8}``).
    """
    if isinstance(raw, Mapping) and "answers" in raw and isinstance(raw["answers"], Mapping):
        raw = raw["answers"]
    if not isinstance(raw, Mapping):
        raise DeciderBadResponse(f"answers must be an object keyed by question, got {type(raw).__name__}")
    missing = [name for name in questions if name not in raw]
    if missing:
        raise DeciderBadResponse(f"no answer for question(s) {', '.join(map(repr, missing))}")
    out: dict[str, Answer] = {}
    for name, question in questions.items():
        value = raw[name]
        if type(value) is float and 0.0 <= value <= 1.0 and question.type == "noul":
            # the common case (an in-process judge's probabilities), already valid: no NaN or
            # bool passes this test; a judge of 60 records a turn spends its time here otherwise
            out[name] = value
            continue
        if isinstance(value, ChoiceAnswer) and question.type == "choice":
            # An answer object from an in-process backend gets the same checks as wire JSON.
            value = {
                "choice": value.choice,
                "probabilities": value.probabilities,
                "confidence": value.confidence,
            }
        elif isinstance(value, ScoreAnswer) and question.type == "score":
            value = {
                "score": value.score,
                "legend": value.legend,
                "probabilities": value.probabilities,
                "confidence": value.confidence,
            }
        elif isinstance(value, (ChoiceAnswer, ScoreAnswer)):
            raise DeciderBadResponse(
                f"answer {name!r}: a {type(value).__name__} cannot answer a {question.type} question"
            )
        out[name] = _parse_one(name, question, value)
    return out

"""Candidate question wordings to compare, and how one answer becomes one score.

A candidate is a named question plus how to read its answer as "how strongly does this say
yes": a noul answer is its probability, a score answer its expected level scaled to [0, 1],
a choice answer the probability of its ``positive`` options. An ``inverted`` wording asks
the opposite question ("could this be answered without knowing the user?") and is flipped
(1 - score) before anything is measured, so every figure reads the same way.

Candidate files are YAML or JSON: a mapping of name -> question spec, optionally under a
top-level ``candidates`` key::

    shipped:
      use: shipped              # the question recallwise ships for this role
    plain:
      type: noul
      instructions: Does answering this need anything stored about the user?
    inverted:
      type: noul
      instructions: Could this be answered well without knowing anything about the user?
      inverted: true
    graded:
      type: score
      instructions: How much does answering this depend on the user's own life?
      criteria: [not at all, a little, a lot]
      threshold: 0.5            # the configured threshold for this wording (default 0.5)
      default: true             # the candidate reported as "default" (default: the first)

``examples`` is a list of ``{state, label}`` (or ``{text, label}``), or ``shipped`` for the
shipped gate examples.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import yaml

from ..deciders.questions import Answer, ChoiceAnswer, Example, Question, ScoreAnswer, as_question
from ..errors import QuestionError, UsageError
from ..policy.wording import (
    FOLLOW_UP_CRITERIA,
    FOLLOW_UP_INSTRUCTIONS,
    GATE_CRITERIA,
    GATE_INSTRUCTIONS,
    JUDGE_CRITERIA,
    JUDGE_INSTRUCTIONS,
    follow_up_question,
    gate_examples,
    gate_question,
    judge_question,
)
from ..text import json_failure, loads_json_file, read_user_file

__all__ = [
    "Role",
    "WordingCandidate",
    "default_candidates",
    "load_candidates",
    "parse_candidates",
]

#: what a wording is measured for: the gate, the judge, or the follow-up question (measured as
#: the gate is, on labelled messages)
Role = Literal["gate", "judge", "follow_up"]
_SPEC_KEYS = {
    "type",
    "instructions",
    "criteria",
    "examples",
    "inverted",
    "positive",
    "threshold",
    "default",
    "description",
    "use",
}


@dataclass(frozen=True)
class WordingCandidate:
    """A named wording to measure (a judged record in a trace is :class:`recallwise.policy.trace.Candidate`).

    For the judge role ``question`` is a template without a subject.
    """

    name: str
    question: Question
    description: str = ""
    inverted: bool = False
    #: choice questions: the options that mean "yes"
    positive: tuple[str, ...] = ()
    #: the configured threshold of this wording (on the flipped scale when inverted)
    threshold: float | None = None

    def about(self, subject: str) -> Question:
        """The judge question about one record."""
        return replace(self.question, subject=subject)

    def score(self, answer: Answer) -> float:
        """The answer as one number in [0, 1], higher meaning "yes" (flipped when inverted)."""
        if isinstance(answer, ChoiceAnswer):
            value = sum(answer.probabilities.get(option, 0.0) for option in self.positive)
        elif isinstance(answer, ScoreAnswer):
            value = answer.expected
        else:
            value = float(answer)
        value = min(max(value, 0.0), 1.0)
        return 1.0 - value if self.inverted else value

    def is_shipped(self, role: Role) -> bool:
        """Whether this is exactly the question the policy asks for ``role``."""
        return self.question == shipped_question(role) and not self.inverted

    def summary(self) -> str:
        """A one-line description of the wording's shape."""
        q = self.question
        parts: list[str] = [q.type]
        if q.criteria is not None:
            parts.append(f"{len(q.criteria)} criteria" if q.type != "noul" else "criteria")
        if q.examples:
            parts.append(f"{len(q.examples)} examples")
        if self.inverted:
            parts.append("inverted")
        return ", ".join(parts)


# ---- the built-in candidates ------------------------------------------------------------

_GATE_INVERTED = (
    "Could this message be answered just as well without knowing anything about the user or their life?"
)
_GATE_INVERTED_CRITERIA = {
    "true": "Small talk, thanks, an acknowledgement, arithmetic, a definition, general knowledge, "
    "or a task fully described by the message itself.",
    "false": "A recommendation, plan or action for this user, or something about the people, "
    "places and events in their own life.",
}
_GATE_GRADED = "How much does a good answer to this message depend on what is known about this user?"
_GATE_LEVELS = (
    "not at all: general knowledge, small talk or a self-contained task",
    "slightly: a general request a user's tastes might colour",
    "a fair amount: a recommendation or plan that should suit this user",
    "entirely: about this user's own preferences, people, plans or past",
)
_JUDGE_INVERTED = (
    "Is this stored memory about the user irrelevant to their message, so that including it "
    "would only add noise?"
)
_JUDGE_INVERTED_CRITERIA = {"true": JUDGE_CRITERIA["false"], "false": JUDGE_CRITERIA["true"]}
_JUDGE_GRADED = "How useful is this stored memory about the user for answering their message?"
_JUDGE_LEVELS = (
    "useless: about an unrelated part of their life",
    "marginal: loosely related background",
    "useful: bears on what the message asks",
    "essential: the answer should be shaped by it",
)


def shipped_question(role: Role) -> Question:
    """The question the policy asks for ``role`` (the judge's without a subject)."""
    if role == "gate":
        return gate_question()
    if role == "follow_up":
        return follow_up_question()
    return judge_question("")


def default_candidates(role: Role) -> list[WordingCandidate]:
    """The shipped wording first, then contrasting ones: plain, criteria, inverted, graded."""
    if role == "follow_up":
        return [
            WordingCandidate(
                "shipped",
                follow_up_question(),
                "the shipped follow-up question: instructions, true/false criteria and labelled examples",
            ),
            *_taken_apart(FOLLOW_UP_INSTRUCTIONS, FOLLOW_UP_CRITERIA),
        ]
    if role == "gate":
        return [
            WordingCandidate(
                "shipped",
                gate_question(),
                "the shipped gate question: instructions, true/false criteria and labelled examples",
            ),
            *_taken_apart(GATE_INSTRUCTIONS, GATE_CRITERIA),
            *_contrasts(
                Question("noul", _GATE_INVERTED, _GATE_INVERTED_CRITERIA),
                "answerable without the user?",
                Question("score", _GATE_GRADED, _GATE_LEVELS),
                "score",
            ),
        ]
    return [
        WordingCandidate(
            "shipped", judge_question(""), "the shipped judge question: instructions and criteria"
        ),
        *_taken_apart(JUDGE_INSTRUCTIONS),
        *_contrasts(
            Question("noul", _JUDGE_INVERTED, _JUDGE_INVERTED_CRITERIA),
            "is the memory irrelevant?",
            Question("score", _JUDGE_GRADED, _JUDGE_LEVELS),
            "usefulness score",
        ),
    ]


def _taken_apart(instructions: str, criteria: Mapping[str, str] | None = None) -> list[WordingCandidate]:
    """The shipped wording without its parts: its instructions alone, and with its criteria (when
    it has criteria of its own) but no examples."""
    plain = WordingCandidate("plain", Question("noul", instructions), "the shipped instructions alone")
    if criteria is None:
        return [plain]
    with_criteria = WordingCandidate(
        "criteria",
        Question("noul", instructions, criteria),
        "the shipped instructions and criteria, no examples",
    )
    return [plain, with_criteria]


def _contrasts(opposite: Question, asks: str, graded: Question, score: str) -> list[WordingCandidate]:
    """The other ways of asking: the ``opposite`` question (it ``asks``), its answer flipped, and a
    four-level ``score``."""
    return [
        WordingCandidate("inverted", opposite, f"the opposite question ({asks}), flipped", inverted=True),
        WordingCandidate("graded", graded, f"a four-level {score}; its expected level is the score"),
    ]


# ---- candidate files ------------------------------------------------------------------


def load_candidates(path: str | Path, role: Role) -> tuple[list[WordingCandidate], str]:
    """Read a YAML or JSON candidate file: (candidates, name of the default candidate)."""
    where = str(path)
    text = read_user_file(path, "candidate file")
    if where.endswith(".json"):
        document = loads_json_file(text, where)
    else:
        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = f" line {mark.line + 1}" if mark is not None else ""
            problem = getattr(exc, "problem", None) or "invalid YAML"
            raise UsageError(f"{where}{line}: not valid YAML or JSON ({problem})") from None
        except RecursionError as exc:  # PyYAML's composer recurses once per nesting level
            deepest, problem = json_failure(text, exc)
            at = f"{where} line {deepest}" if deepest is not None else where
            raise UsageError(f"{at}: not valid YAML or JSON ({problem})") from None
    return parse_candidates(document, role, where)


def parse_candidates(
    document: Any, role: Role, where: str = "<candidates>"
) -> tuple[list[WordingCandidate], str]:
    """Validate parsed candidate specs; every problem names ``where`` and the candidate."""
    if isinstance(document, Mapping) and set(document) == {"candidates"}:
        document = document["candidates"]
    if isinstance(document, Sequence) and not isinstance(document, str):
        entries: list[tuple[str, Any]] = []
        for i, item in enumerate(document):
            if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
                raise UsageError(f"{where}: candidate #{i + 1} needs a 'name'")
            entries.append((item["name"], {k: v for k, v in item.items() if k != "name"}))
    elif isinstance(document, Mapping):
        entries = [(str(k), v) for k, v in document.items()]
    else:
        raise UsageError(f"{where}: expected a mapping of candidate name -> question")
    if not entries:
        raise UsageError(f"{where}: no candidates")
    candidates: list[WordingCandidate] = []
    defaults: list[str] = []
    seen: set[str] = set()
    for name, spec in entries:
        if name in seen:
            raise UsageError(f"{where}: candidate {name!r} is defined twice")
        seen.add(name)
        candidate, is_default = _parse_one(name, spec, role, f"{where}: candidate {name!r}")
        candidates.append(candidate)
        if is_default:
            defaults.append(name)
    if len(defaults) > 1:
        raise UsageError(f"{where}: more than one default candidate ({', '.join(defaults)})")
    return candidates, defaults[0] if defaults else candidates[0].name


def _parse_one(name: str, spec: Any, role: Role, where: str) -> tuple[WordingCandidate, bool]:
    if not isinstance(spec, Mapping):
        raise UsageError(f"{where}: expected a question object")
    unknown = sorted(set(map(str, spec)) - _SPEC_KEYS)
    if unknown:
        raise UsageError(
            f"{where}: unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(_SPEC_KEYS))}"
        )
    is_default = _flag(spec, "default", where)
    inverted = _flag(spec, "inverted", where)
    threshold = spec.get("threshold")
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))):
        raise UsageError(f"{where}: 'threshold' must be a number, got {threshold!r}")
    description = str(spec.get("description", ""))
    if "use" in spec:
        if spec["use"] != "shipped":
            raise UsageError(f"{where}: 'use' can only be 'shipped', got {spec['use']!r}")
        extra = sorted(set(spec) & {"type", "instructions", "criteria", "examples", "positive"})
        if extra:
            raise UsageError(f"{where}: 'use: shipped' takes no {', '.join(extra)}")
        question = shipped_question(role)
        shipped = WordingCandidate(
            name, question, description or f"the shipped {role} question", inverted, (), threshold
        )
        return shipped, is_default
    if "instructions" not in spec:
        raise UsageError(f"{where}: missing 'instructions'")
    criteria = spec.get("criteria")
    if isinstance(criteria, Mapping):
        # YAML reads an unquoted `true:` key as a boolean.
        criteria = {(str(k).lower() if isinstance(k, bool) else str(k)): v for k, v in criteria.items()}
    examples = _examples(spec.get("examples"), where)
    wire = {"type": spec.get("type", "noul"), "instructions": spec["instructions"], "criteria": criteria}
    try:
        question = as_question(name, wire)
    except QuestionError as exc:
        raise UsageError(f"{where}: {exc}") from None
    question = replace(question, examples=examples)
    if examples and question.type != "noul":
        raise UsageError(f"{where}: examples are only supported on noul questions")
    positive: tuple[str, ...] = ()
    if question.type == "choice":
        raw = spec.get("positive")
        if isinstance(raw, str):
            raw = [raw]
        if not raw or not isinstance(raw, list):
            raise UsageError(f"{where}: a choice candidate needs 'positive': the option(s) that mean yes")
        missing = [str(p) for p in raw if str(p) not in question.options]
        if missing:
            raise UsageError(f"{where}: positive option(s) {missing} are not among {question.options}")
        positive = tuple(str(p) for p in raw)
    elif "positive" in spec:
        raise UsageError(f"{where}: 'positive' only applies to choice questions")
    candidate = WordingCandidate(
        name, question, description, inverted, positive, float(threshold) if threshold is not None else None
    )
    return candidate, is_default


def _flag(spec: Mapping[str, Any], key: str, where: str) -> bool:
    value = spec.get(key, False)
    if not isinstance(value, bool):
        raise UsageError(f"{where}: {key!r} must be true or false, got {value!r}")
    return value


def _examples(raw: Any, where: str) -> tuple[Example, ...]:
    if raw is None:
        return ()
    if raw == "shipped":
        return gate_examples()
    if not isinstance(raw, list):
        raise UsageError(f"{where}: 'examples' must be a list of {{state, label}} or 'shipped'")
    out = []
    for i, item in enumerate(raw):
        if not isinstance(item, Mapping):
            raise UsageError(f"{where}: example #{i + 1} must be an object {{state, label}}")
        state = item.get("state", item.get("text"))
        label = item.get("label")
        if not isinstance(state, str) or not state.strip():
            raise UsageError(f"{where}: example #{i + 1} needs a non-empty 'state'")
        if not isinstance(label, (bool, str)):
            raise UsageError(f"{where}: example #{i + 1}: 'label' must be true/false or an option name")
        out.append(Example(state, label))
    return tuple(out)

"""The questions recallwise asks: the shipped gate, judge and route wordings.

Wording is most of a question's quality; ``recallwise tune`` compares these with
alternatives on labelled data. Question names here are the keys thresholds are stored under.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from types import MappingProxyType

from ..deciders.questions import Example, Question

__all__ = [
    "FOLLOW_UP",
    "GATE",
    "JUDGE",
    "ROUTE",
    "follow_up_examples",
    "follow_up_question",
    "gate_examples",
    "gate_question",
    "judge_question",
    "route_question",
]

#: Question names used in the one decider call per stage.
GATE = "gate"
ROUTE = "route"
JUDGE = "judge"
#: Asked in the gate's call when the conversation's previous turn retrieved (see
#: :mod:`recallwise.policy.follow_up`).
FOLLOW_UP = "follow_up"

GATE_INSTRUCTIONS = (
    "Would answering this message well depend on something stored about the user or the people "
    "and events in their life (a preference, a personal fact, a past conversation)?"
)
GATE_CRITERIA: Mapping[str, str] = MappingProxyType(
    {
        "true": "The message asks for something personal: a recommendation, plan or action for this "
        "user, or about people, places and events in their own life and past conversations.",
        "false": "The message is small talk, thanks, an acknowledgement, arithmetic, a definition, "
        "general knowledge or a task fully described by the message itself.",
    }
)
JUDGE_INSTRUCTIONS = (
    "Is this stored memory about the user useful for answering their message? A memory about an "
    "unrelated part of their life is not."
)
JUDGE_CRITERIA: Mapping[str, str] = MappingProxyType(
    {
        "true": "The memory bears directly on what the message asks for.",
        "false": "The memory is about something else; including it would only add noise.",
    }
)
ROUTE_INSTRUCTIONS = "Which memory collection is most likely to hold what this message needs?"
FOLLOW_UP_INSTRUCTIONS = (
    "Does this message carry on the user's previous request (go on with it, change or narrow it, "
    "or ask about someone or something it mentioned) rather than close the conversation or ask "
    "something new and complete in itself?"
)
FOLLOW_UP_CRITERIA: Mapping[str, str] = MappingProxyType(
    {
        "true": "A continuation or a reference back: 'continue', 'do that', 'what about tomorrow?', "
        "'cheaper ones?', 'and for her?'.",
        "false": "Thanks, goodbye, a greeting, small talk, or a question or task that is complete "
        "without the previous turn.",
    }
)


def _examples(resource: str) -> tuple[Example, ...]:
    text = resources.files("recallwise.data").joinpath(resource).read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    return tuple(Example(r["text"], bool(r["label"])) for r in rows)


@lru_cache(maxsize=1)
def gate_examples() -> tuple[Example, ...]:
    """The shipped gate examples (package data ``gate_examples.jsonl``, written for recallwise)."""
    return _examples("gate_examples.jsonl")


@lru_cache(maxsize=1)
def follow_up_examples() -> tuple[Example, ...]:
    """The shipped follow-up examples (package data ``follow_up_examples.jsonl``, written for
    recallwise; the dev and held-out sets it was measured on are other messages, in
    ``data/dev`` and ``data/heldout``)."""
    return _examples("follow_up_examples.jsonl")


@lru_cache(maxsize=1)
def follow_up_question() -> Question:
    """Does this message carry on the previous request? Criteria plus labelled examples."""
    return Question("noul", FOLLOW_UP_INSTRUCTIONS, FOLLOW_UP_CRITERIA, follow_up_examples())


@lru_cache(maxsize=1)
def gate_question() -> Question:
    """The shipped gate question: criteria plus labelled examples (answered by the learned gate
    head where the decider has one for the turn's embedding space)."""
    return Question("noul", GATE_INSTRUCTIONS, GATE_CRITERIA, gate_examples(), role=GATE)


@lru_cache(maxsize=16384)
def judge_question(subject: str) -> Question:
    """The judge question about one rendered memory record (a frozen question, kept per record)."""
    return Question("noul", JUDGE_INSTRUCTIONS, JUDGE_CRITERIA, subject=subject, role=JUDGE)


def route_question(descriptions: Mapping[str, str]) -> Question:
    """A choice over namespaces (keyed by template, described in a few words). Its criteria are
    read-only, so a decider may keep what it derives from them (validated once, the options' texts
    embedded and stacked once) for as long as a policy asks this same question."""
    return Question("choice", ROUTE_INSTRUCTIONS, MappingProxyType(dict(descriptions)))

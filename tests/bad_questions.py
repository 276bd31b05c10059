"""Question requests that break the wire contract, each with what the refusal says (a regular
expression): one table for :func:`recallwise.deciders.validate_request` (test_questions) and for
every decider's ``ask`` (test_deciders_contract), which refuses them the same way before any call."""

from __future__ import annotations

from typing import Any

NOUL = {"type": "noul", "instructions": "Is it?"}

BAD_REQUESTS: list[tuple[str, dict[str, Any], str]] = [
    ("", {"q": NOUL}, "state is empty"),
    ("   ", {"q": NOUL}, "state is empty"),
    ("s", {}, "no questions"),
    ("s", {f"q{i}": NOUL for i in range(65)}, "65 questions.*at most 64"),
    ("s", {"c": {"type": "choice", "instructions": "x", "criteria": {"a": "A"}}}, "'c'.*2 to 255"),
    (
        "s",
        {"c": {"type": "choice", "instructions": "x", "criteria": {str(i): "" for i in range(256)}}},
        "'c'.*2 to 255",
    ),
    (
        "s",
        {"l": {"type": "score", "instructions": "x", "criteria": [str(i) for i in range(11)]}},
        "'l'.*2 to 10",
    ),
    ("s", {"w": {"type": "maybe", "instructions": "x"}}, "'w'.*unknown type"),
    ("s", {"r": {"type": "ranking", "instructions": "x"}}, "'r'.*unknown type"),
    (
        "s",
        {"n": {"type": "noul", "instructions": "x", "criteria": {"true": 1, "false": "no"}}},
        "'n'.*strings",
    ),
]

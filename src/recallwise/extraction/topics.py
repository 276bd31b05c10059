"""Step 5 of the rules: the topic of a preference, from the words of its own clause.

A preference record is filed under a context ("Booking flights", "Choosing music, films, shows or
books") with AgentCore's ``categories``. The topic is the category (``categories.json``) whose
keywords the *clause* mentions most; only a clause with no topic word of its own borrows one
from its sentence ("I always book an aisle seat, I hate climbing over people"). Other
sentences of the message are never read: a coffee word two sentences back does not make
"I'm always looking to improve my technique" a coffee preference.

A topic is given only where the words decide it, else none (the preference stays a fact): a
category's *weak* words ("allergic", "sensitive", "water") count only when no category's own
keyword is there ("allergic to peanuts" is food, "allergic to wool" health, "water sports"
fitness, not drinks), and two categories that the words match equally file it under neither.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

__all__ = ["Topic", "topic_key", "topic_of"]


@dataclass(frozen=True)
class Topic:
    """One preference topic: its name, the AgentCore context and categories, its keywords."""

    name: str
    context: str
    categories: tuple[str, ...]
    pattern: re.Pattern[str]
    weak: re.Pattern[str] | None = None


@lru_cache(maxsize=1)
def _topics() -> tuple[Topic, ...]:
    raw = resources.files("recallwise.extraction").joinpath("categories.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(raw)
    out = []
    for entry in data["categories"]:
        weak = entry.get("weak") or []
        out.append(
            Topic(
                entry["name"],
                entry["context"],
                tuple(entry["categories"]),
                _words(entry["keywords"]),
                _words(weak) if weak else None,
            )
        )
    return tuple(out)


def _words(words: list[str]) -> re.Pattern[str]:
    longest_first = sorted(words, key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(re.escape(w) for w in longest_first) + r")\b", re.IGNORECASE)


def _decided(text: str) -> tuple[bool, Topic | None]:
    """(whether ``text`` has topic words at all, the topic they decide or None on a tie)."""
    for weak in (False, True):
        scores: list[tuple[int, Topic]] = []
        for topic in _topics():
            pattern = topic.weak if weak else topic.pattern
            if pattern is not None:
                # characters matched, so "team sports" (fitness) outweighs "team" (work)
                hits = sum(len(m) for m in pattern.findall(text))
                if hits:
                    scores.append((hits, topic))
        if scores:
            scores.sort(key=lambda pair: -pair[0])
            tied = len(scores) > 1 and scores[1][0] == scores[0][0]
            return True, None if tied else scores[0][1]
    return False, None


# "prefers tea over coffee": what comes after is the alternative not chosen, not the topic
_ALTERNATIVE = re.compile(r"\s+(?:over|rather than|instead of|more than|than)\s+.*$", re.IGNORECASE)


def topic_of(clause: str, sentence: str = "") -> Topic | None:
    """The topic ``clause`` mentions most (by characters of keywords matched), else the one its
    ``sentence`` mentions most; None when neither has topic words or two topics tie. The
    alternative a preference is chosen over ("tea *over coffee*") counts only when nothing before
    it names a topic."""
    for text in (clause, sentence):
        chosen = _ALTERNATIVE.sub("", text)
        found, topic = _decided(chosen) if chosen != text else (False, None)
        if not found:
            found, topic = _decided(text)
        if found:
            return topic
    return None


def topic_key(wording: str, topic: Topic) -> str:
    """What a preference is about: the topic words it mentions (a restatement replaces it)."""
    found = sorted({m.lower() for m in topic.pattern.findall(wording)})
    return "+".join(found) if found else wording.lower()

"""Step 5 of the rules: the topic of a preference, from the words of its own clause.

A preference record is filed under a context ("Booking flights", "Choosing music, films, shows or
books") with AgentCore's ``categories``. The topic is the category (``categories.json``) whose
keywords the *clause* mentions most; only a clause with no topic word of its own borrows one
from its sentence ("I always book an aisle seat, I hate climbing over people"). Other
sentences of the message are never read: a coffee word two sentences back does not make
"I'm always looking to improve my technique" a coffee preference.
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


@lru_cache(maxsize=1)
def _topics() -> tuple[Topic, ...]:
    raw = resources.files("recallwise.extraction").joinpath("categories.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(raw)
    out = []
    for entry in data["categories"]:
        words = sorted(entry["keywords"], key=len, reverse=True)
        pattern = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words) + r")\b", re.IGNORECASE)
        out.append(Topic(entry["name"], entry["context"], tuple(entry["categories"]), pattern))
    return tuple(out)


def topic_of(clause: str, sentence: str = "") -> Topic | None:
    """The topic ``clause`` mentions most (by characters of keywords matched), else the one its
    ``sentence`` mentions most, else None."""
    for text in (clause, sentence):
        best, best_hits = None, 0
        for topic in _topics():
            # characters matched, so "team sports" (fitness) outweighs "team" (work)
            hits = sum(len(m) for m in topic.pattern.findall(text))
            if hits > best_hits:
                best, best_hits = topic, hits
        if best is not None:
            return best
    return None


def topic_key(wording: str, topic: Topic) -> str:
    """What a preference is about: the topic words it mentions (a restatement replaces it)."""
    found = sorted({m.lower() for m in topic.pattern.findall(wording)})
    return "+".join(found) if found else wording.lower()

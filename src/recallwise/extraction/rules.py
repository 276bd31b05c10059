"""The offline default extractor: what the user said about themselves -> facts and preferences.

No model. A user message goes through named steps, each its own module and tested on its own:

1. **split** (:mod:`.clauses`): sentences (``sentencex``), then clauses at conjunctions and
   commas that start a new statement about the user, so ``"..., but I tend to avoid gore"`` is
   a clause of its own;
2. **rewrite** (:mod:`.person`): the clause in the third person, the verb conjugated from a
   table (``"I tend to"`` -> ``"The user tends to"``, ``"I haven't"`` -> ``"The user hasn't"``)
   and every first-person form replaced (``"our office"`` -> ``"their office"``);
3. **keep or drop** (:mod:`.keep`): lasting facts and preferences about the user and their
   people are kept; questions, reactions to the assistant, requests and plans for this
   conversation, moods of the moment and clauses that say nothing alone are dropped;
4. **preferences** (:func:`.keep.is_preference`): a kept clause that states a preference also
   becomes a preference record, filed under
5. **its topic** (:mod:`.topics`), read from the clause's own words (then its sentence's).

``"I'm vegetarian"`` -> ``"The user is vegetarian."``; ``"I always book an aisle seat"`` ->
``"The user always books an aisle seat."`` and the preference ``{"context": "Booking flights",
"preference": "Always books an aisle seat", ...}``; ``"my favourite cuisine is Vietnamese"`` ->
``"The user's favourite cuisine is Vietnamese."``; a verbless standing request (``"Still water
only, please."``) -> a preference only.

Anything subtler (facts spread over turns, facts stated about the user by others, negated
updates) needs the LLM extractor (:mod:`recallwise.extraction.llm`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..records import Event
from .base import PREFERENCE, SEMANTIC, ExtractedMemory
from .clauses import Clause, clauses, sentences, strip_discourse
from .keep import Verdict, is_preference, judge
from .person import Statement, clean, rewrite, swap_pronouns
from .topics import Topic, topic_key, topic_of

__all__ = ["ClauseTrace", "RuleExtractor", "third_person"]

# "X only, please" / "no X, please" / "please X": a standing request with no first person.
_VERBLESS_REQUEST = re.compile(r"^(?:please\s+(?P<a>.+)|(?P<b>(?:no|only)\s+.+?)|(?P<c>.+?\s+only))$", re.I)
# Single-valued relations: a later statement of the same relation replaces the earlier one.
_RELATION_KEYS = [
    (re.compile(r"^(?:lives?|live|living) in\b", re.I), "home city"),
    (re.compile(r"^(?:moved|have moved|has moved|just moved) to\b", re.I), "home city"),
    (re.compile(r"^(?:works?|work) (?:at|for)\b", re.I), "employer"),
    (re.compile(r"^is (?:\d+|[a-z-]+) years old\b", re.I), "age"),
    (re.compile(r"^is called\b|^name is\b", re.I), "name"),
]
#: an aside kept with the fact before it: short, and not a statement of its own
_ASIDE_WORDS = 6


@dataclass(frozen=True)
class ClauseTrace:
    """What the steps made of one clause (:meth:`RuleExtractor.explain`)."""

    clause: str
    statement: str | None
    verdict: Verdict
    preference: bool = False
    topic: str | None = None


class RuleExtractor:
    """Offline extraction from what the user says about themselves (the default; needs no model).

    Only the user's turns are read. Each kept clause becomes one semantic memory; a clause that
    states a preference about a known topic also becomes a preference memory under that topic.
    """

    name = "rules"

    def extract(self, events: Sequence[Event]) -> list[ExtractedMemory]:
        memories: list[ExtractedMemory] = []
        for event in events:
            if event.role.lower() != "user" or not event.text.strip():
                continue
            for memory in self.message(event.text, [event.id]):
                memory.session_id = event.session_id
                memories.append(memory)
        return memories

    def explain(self, text: str) -> list[ClauseTrace]:
        """Each clause of one user message with what every step made of it (for debugging rules)."""
        out: list[ClauseTrace] = []
        for sentence in sentences(text):
            for clause in clauses(sentence):
                statement = rewrite(clause.text)
                verdict = judge(clause, statement)
                preference = bool(statement and verdict.keep and is_preference(statement))
                topic = topic_of(clause.text, sentence) if preference else None
                out.append(
                    ClauseTrace(
                        clause.text,
                        statement.sentence if statement else None,
                        verdict,
                        preference,
                        topic.name if topic else None,
                    )
                )
        return out

    def message(self, text: str, source: Sequence[str] = ()) -> list[ExtractedMemory]:
        """The memories one user message yields: its facts, then its preferences."""
        facts: list[ExtractedMemory] = []
        preferences: list[ExtractedMemory] = []
        for sentence in sentences(text):
            parts = clauses(sentence)
            last: tuple[Statement, ExtractedMemory, ExtractedMemory | None] | None = None
            for clause in parts:
                statement = rewrite(clause.text)
                verdict = judge(clause, statement)
                if not verdict.keep or statement is None:
                    aside = self._aside(clause, statement, last)
                    if aside is not None and last is not None:
                        last = aside
                    elif len(parts) == 1 and statement is None and not clause.question:
                        preferences.extend(self._standing_request(clause, source))
                    continue
                fact = ExtractedMemory(
                    SEMANTIC,
                    statement.sentence,
                    key=self._fact_key(statement, clause),
                    source_event_ids=list(source),
                )
                facts.append(fact)
                preference = self._preference(statement, clause, source)
                if preference is not None:
                    preferences.append(preference)
                last = (statement, fact, preference)
        return _unique([*facts, *preferences])

    @staticmethod
    def _aside(
        clause: Clause,
        statement: Statement | None,
        last: tuple[Statement, ExtractedMemory, ExtractedMemory | None] | None,
    ) -> tuple[Statement, ExtractedMemory, ExtractedMemory | None] | None:
        """ "... allergic to peanuts -- that one's serious": the aside stays with its fact."""
        if clause.kind != "aside" or last is None or clause.question:
            return None
        aside = swap_pronouns(clean(clause.text))
        if not aside or len(aside.split()) > _ASIDE_WORDS or (statement is not None and statement.about_user):
            return None
        if re.search(r"\b(?:you|your)\b", aside, re.I):
            return None
        previous, fact, preference = last
        extended = Statement(
            previous.subject, f"{previous.predicate} ({aside})", previous.lead, previous.slot, previous.value
        )
        fact.text = extended.sentence
        if preference is not None:
            preference.text = f"{preference.text} ({aside})"
        return extended, fact, preference

    def _preference(
        self, statement: Statement, clause: Clause, source: Sequence[str]
    ) -> ExtractedMemory | None:
        if not statement.about_user or not is_preference(statement):
            return None
        topic = topic_of(clause.text, clause.sentence)
        if topic is None:
            return None  # a preference about no known topic stays a fact only
        if statement.slot:
            wording = f"{statement.slot[:1].upper()}{statement.slot[1:]} is {statement.value}"
        elif statement.subject == "The user":
            wording = f"{statement.predicate[:1].upper()}{statement.predicate[1:]}"
        else:  # "The user's daughter is allergic to dairy": the preference names whose it is
            wording = statement.sentence.rstrip(".")
        if statement.lead:
            wording = f"{wording} ({statement.lead[:1].lower()}{statement.lead[1:]})"
        return self._preference_memory(wording, statement.slot, topic, source)

    def _standing_request(self, clause: Clause, source: Sequence[str]) -> list[ExtractedMemory]:
        text = strip_discourse(clean(clause.text))
        request = _VERBLESS_REQUEST.match(text)
        topic = topic_of(text) if request else None
        if request is None or topic is None:
            return []
        wording = next(g for g in request.groups() if g)
        return [self._preference_memory(wording[:1].upper() + wording[1:], None, topic, source)]

    @staticmethod
    def _preference_memory(
        wording: str, slot: str | None, topic: Topic, source: Sequence[str]
    ) -> ExtractedMemory:
        return ExtractedMemory(
            PREFERENCE,
            wording,
            key=f"{topic.name}:{slot or topic_key(wording, topic)}",
            context=topic.context,
            categories=list(topic.categories),
            source_event_ids=list(source),
        )

    @staticmethod
    def _fact_key(statement: Statement, clause: Clause) -> str | None:
        if statement.slot:
            # "go-to" alone is ambiguous (go-to drink, go-to restaurant): qualify it by topic
            topic = topic_of(clause.text, clause.sentence)
            return f"{statement.slot} ({topic.name})" if topic else statement.slot
        if statement.subject != "The user":
            return None
        for pattern, key in _RELATION_KEYS:
            if pattern.match(statement.predicate):
                return key
        return None


def _unique(memories: list[ExtractedMemory]) -> list[ExtractedMemory]:
    """One memory per (kind, context, text): a message that says a thing twice yields it once."""
    seen: set[tuple[str, str, str]] = set()
    out = []
    for memory in memories:
        marker = (memory.kind, (memory.context or "").lower(), memory.text.lower().rstrip("."))
        if marker not in seen:
            seen.add(marker)
            out.append(memory)
    return out


def third_person(text: str) -> list[str]:
    """The facts the rules find in one user message, as third-person sentences.

    >>> third_person("I'm vegetarian, and I always book an aisle seat.")
    ['The user is vegetarian.', 'The user always books an aisle seat.']
    """
    return [m.text for m in RuleExtractor().message(text) if m.kind == SEMANTIC]
